"""`weft server` under peers that start large gRPC messages and never finish
them. Each such stream makes gRPC buffer what it has received; without a
bound, a few peers pin as much memory as they like. A server's
--rpc-memory-mb (gRPC's ResourceQuota) bounds it: past it gRPC stops
granting flow-control window and drops streams, and the server goes on
serving other clients.

The peer speaks HTTP/2 itself (frames written here, HPACK literals): 4
connections x 2 streams, each announcing a 150 MiB RunGraphRequest and
sending whatever the server's windows allow, for 10 s.
  - With --rpc-memory-mb 64 the server's resident memory grows by less than
    200 MiB, and a client is served afterwards.
  - With --rpc-memory-mb 4096 (the control) it grows by more than 500 MiB:
    the flood does pin memory where the quota allows, so the first check
    measures the bound, not an idle peer.

usage: rpc_memory_test.py PATH_TO_WEFT PATH_TO_LINEAR_REGRESSION_PBTXT
"""
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop"))
from tf_compare import check, summary_exit_code  # noqa: E402

WEFT = os.path.abspath(sys.argv[1])
EXAMPLE = os.path.abspath(sys.argv[2])
MiB = 1 << 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- A minimal HTTP/2 peer -------------------------------------------------
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8


def frame(kind, flags, stream, payload):
    return (struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) +
            struct.pack(">I", stream) + payload)


def literal(name, value):
    """An HPACK literal header field without indexing (no Huffman)."""
    return (b"\x00" + bytes([len(name)]) + name.encode() +
            bytes([len(value)]) + value.encode())


class Peer:
    """One connection whose streams each announce a `declared`-byte gRPC
    message and send all but its end, as fast as flow control lets them."""

    def __init__(self, address, streams, declared):
        host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.sock.setblocking(False)
        self.declared = declared
        self.initial = 65535
        self.conn_window = 65535
        self.window, self.sent = {}, {}
        self.inbox = b""
        self.closed = False
        headers = b"".join(literal(n, v) for n, v in [
            (":method", "POST"), (":scheme", "http"),
            (":path", "/tensorflow.WorkerService/RunGraph"),
            (":authority", address), ("content-type", "application/grpc"),
            ("te", "trailers")])
        self.outbox = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0, b"")
        for k in range(streams):
            stream = 1 + 2 * k
            self.outbox += frame(HEADERS, 0x4, stream, headers)  # END_HEADERS
            self.window[stream] = self.initial
            self.sent[stream] = 0

    def read(self):
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return
        self.inbox += data
        while len(self.inbox) >= 9:
            n = struct.unpack(">I", b"\x00" + self.inbox[:3])[0]
            if len(self.inbox) < 9 + n:
                return
            kind, flags = self.inbox[3], self.inbox[4]
            stream = struct.unpack(">I", self.inbox[5:9])[0] & 0x7FFFFFFF
            body, self.inbox = self.inbox[9:9 + n], self.inbox[9 + n:]
            if kind == SETTINGS and not flags & 1:
                for i in range(0, len(body), 6):
                    ident, value = struct.unpack(">HI", body[i:i + 6])
                    if ident == 4:  # SETTINGS_INITIAL_WINDOW_SIZE
                        for s in self.window:
                            self.window[s] += value - self.initial
                        self.initial = value
                self.outbox += frame(SETTINGS, 1, 0, b"")
            elif kind == PING and not flags & 1:
                self.outbox += frame(PING, 1, 0, body)
            elif kind == WINDOW_UPDATE:
                grant = struct.unpack(">I", body)[0] & 0x7FFFFFFF
                if stream == 0:
                    self.conn_window += grant
                elif stream in self.window:
                    self.window[stream] += grant
            elif kind == RST_STREAM:
                self.window.pop(stream, None)
            elif kind == GOAWAY:
                self.closed = True

    def write(self):
        for stream in list(self.window):
            while (self.conn_window > 0 and self.window[stream] > 0 and
                   len(self.outbox) < MiB):
                size = min(16384, self.conn_window, self.window[stream])
                body = b"" if self.sent[stream] else b"\x00" + struct.pack(">I", self.declared)
                body += b"\x01" * (size - len(body))
                if self.sent[stream] + len(body) >= self.declared:
                    break  # never the message's last byte
                self.outbox += frame(DATA, 0, stream, body)
                self.sent[stream] += len(body)
                self.window[stream] -= len(body)
                self.conn_window -= len(body)
        if self.outbox:
            try:
                self.outbox = self.outbox[self.sock.send(self.outbox):]
            except BlockingIOError:
                pass
            except OSError:
                self.closed = True


def trickle(address, connections, streams, declared, seconds):
    """Runs the peers for `seconds`; returns the bytes they sent."""
    peers = [Peer(address, streams, declared) for _ in range(connections)]
    end = time.time() + seconds
    try:
        while time.time() < end:
            live = [p for p in peers if not p.closed]
            if not live:
                break
            select.select([p.sock for p in live],
                          [p.sock for p in live if p.outbox], [], 0.05)
            for p in live:
                p.read()
                p.write()
        return sum(sum(p.sent.values()) for p in peers)
    finally:
        for p in peers:
            p.sock.close()


# --- The server under test ---------------------------------------------------
class Server:
    def __init__(self, rpc_memory_mb):
        self.address = f"127.0.0.1:{free_port()}"
        self.log = tempfile.NamedTemporaryFile("w+", prefix="weft_rpc_memory_",
                                               suffix=".log")
        self.proc = subprocess.Popen(
            [WEFT, "server", "--cluster", f"worker={self.address}", "--job",
             "worker", "--task", "0", "--no-local-socket", "--max-message-mb",
             "512", "--rpc-memory-mb", str(rpc_memory_mb)],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline and "serving" not in self.text():
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
        return 0

    def peak_growth_under(self, flood):
        """Runs flood() while sampling the server's resident memory; the
        largest growth over its start, in MiB, and flood()'s result."""
        base = self.rss_mib()
        peak = [base]
        done = threading.Event()

        def sample():
            while not done.is_set() and self.proc.poll() is None:
                peak[0] = max(peak[0], self.rss_mib())
                time.sleep(0.05)
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            result = flood()
        finally:
            done.set()
            sampler.join(timeout=10)
        return peak[0] - base, result

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def submit(address):
    return subprocess.run(
        [WEFT, "submit", "--target", f"grpc://{address}", "--graph", EXAMPLE,
         "--init", "init", "--fetch", "w", "--call-timeout-s", "30"],
        capture_output=True, text=True, timeout=90)


def flood(address):
    return lambda: trickle(address, connections=4, streams=2,
                           declared=150 * MiB, seconds=10)


def test_the_quota_bounds_what_peers_pin():
    server = Server(64)
    try:
        check("a server with --rpc-memory-mb 64 starts", "serving" in server.text(),
              server.text()[-800:])
        growth, sent = server.peak_growth_under(flood(server.address))
        check(f"8 streams that never finish a 150 MiB message ({sent // MiB} MiB "
              f"sent) grow the server by {growth} MiB, less than 200",
              server.proc.poll() is None and growth < 200, server.text()[-800:])
        after = submit(server.address)
        check("a client is served afterwards", after.returncode == 0,
              f"rc {after.returncode}: {after.stderr[-800:]}")
    finally:
        server.close()


def test_without_the_bound_the_flood_pins_memory():
    server = Server(4096)
    try:
        growth, sent = server.peak_growth_under(flood(server.address))
        check(f"control: with --rpc-memory-mb 4096 the same flood ({sent // MiB} "
              f"MiB sent) grows the server by {growth} MiB, more than 500",
              growth > 500, server.text()[-800:])
    finally:
        server.close()


def main():
    test_the_quota_bounds_what_peers_pin()
    test_without_the_bound_the_flood_pins_memory()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
