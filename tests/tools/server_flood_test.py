"""`weft server` under connection floods. Past 128 connections from one
address, and past its open-file limit less a reserve, a server refuses new
connections (saying so on stderr) and goes on serving other clients; where
a burst still exhausts its descriptors, so that gRPC's listener gives the
port up, the server exits with status 1 saying why, so that a supervisor
starts it again. It never stays up deaf.

usage: server_flood_test.py PATH_TO_WEFT PATH_TO_LINEAR_REGRESSION_PBTXT
"""
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop"))
from tf_compare import check, summary_exit_code  # noqa: E402

WEFT = os.path.abspath(sys.argv[1])
EXAMPLE = os.path.abspath(sys.argv[2])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def submit(address, timeout_s=30):
    return subprocess.run(
        [WEFT, "submit", "--target", f"grpc://{address}", "--graph", EXAMPLE,
         "--init", "init", "--fetch", "w", "--call-timeout-s", str(timeout_s)],
        capture_output=True, text=True, timeout=timeout_s + 60)


class Server:
    """`weft server` with an open-file limit of `files` (soft and hard)."""

    def __init__(self, files):
        self.address = f"127.0.0.1:{free_port()}"
        self.log = tempfile.NamedTemporaryFile("w+", prefix="weft_flood_",
                                               suffix=".log")
        limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
        self.proc = subprocess.Popen(
            [WEFT, "server", "--cluster", f"worker={self.address}", "--job",
             "worker", "--task", "0", "--no-local-socket"],
            stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=limit)
        deadline = time.time() + 60
        while time.time() < deadline and "serving" not in self.text():
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.held = []

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def flood(self, sources, per_source):
        host, port = self.address.split(":")
        for source in sources:
            for _ in range(per_source):
                s = socket.socket()
                s.settimeout(5)
                try:
                    s.bind((source, 0))
                    s.connect((host, int(port)))
                except OSError:
                    s.close()
                    continue
                self.held.append(s)
        time.sleep(2)  # the server takes them up

    def close(self):
        for s in self.held:
            s.close()
        self.held = []
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def test_a_flood_from_one_address_is_capped():
    server = Server(8192)
    try:
        first = submit(server.address)
        check("the server serves before the flood", first.returncode == 0,
              first.stderr[-800:])
        server.flood(["127.0.0.2"], 2500)
        during = submit(server.address)
        check(f"with {len(server.held)} connections from 127.0.0.2 held open, "
              "a client at 127.0.0.1 is served",
              server.proc.poll() is None and during.returncode == 0,
              f"rc {during.returncode}: {during.stderr[-800:]}\n{server.text()[-800:]}")
        check("the server says it refuses connections past an address's share",
              "refusing new connections: 127.0.0.2 holds 128" in server.text(),
              server.text()[-800:])
        server.flood([f"127.0.0.{i}" for i in range(3, 13)], 120)
        again = submit(server.address)
        check(f"and with {len(server.held)} from 11 addresses, still",
              server.proc.poll() is None and again.returncode == 0,
              f"rc {again.returncode}: {again.stderr[-800:]}\n{server.text()[-800:]}")
    finally:
        server.close()


def test_a_server_whose_listener_fails_exits():
    # 1,024 descriptors: a burst of 1,500 connections takes them all before
    # gRPC has closed the refused ones, and gRPC's listener gives up.
    server = Server(1024)
    try:
        server.flood(["127.0.0.2"] + [f"127.0.0.{i}" for i in range(3, 13)], 140)
        deadline = time.time() + 15
        while time.time() < deadline and server.proc.poll() is None:
            if submit(server.address, 5).returncode == 0:
                break
        rc = server.proc.poll()
        text = server.text()
        check("a server flooded past its open-file limit either serves on or "
              "exits with status 1 saying its listener stopped, never up and deaf",
              (rc is None and submit(server.address).returncode == 0)
              or (rc == 1 and "stopped accepting connections" in text),
              f"rc {rc}\n{text[-1000:]}")
    finally:
        server.close()


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4000:
        print(f"SKIPPED: this process may open {hard} files, too few to flood")
        return summary_exit_code()
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    test_a_flood_from_one_address_is_capped()
    test_a_server_whose_listener_fails_exits()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
