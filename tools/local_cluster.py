"""Local clusters for tests and benchmarks: one child process per task on
free loopback ports, `weft server` or TensorFlow's tf.distribute.Server,
started, awaited, and stopped by pid (also when the caller fails).

    cluster = Cluster(weft, work_dir, {"ps": 1, "worker": 2})
    try:
        tf.compat.v1.Session(cluster.target())  # worker 0's master
    finally:
        cluster.close()
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

def free_port(host="127.0.0.1", held=None):
    """A free port on `host`. With `held` (a list), the socket stays bound
    and goes there, for the caller to close once all its ports are picked:
    one bound and closed at a time, the kernel may give the same port twice."""
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    if held is None:
        s.close()
    else:
        held.append(s)
    return port


# A TensorFlow task: tf.distribute.Server for (cluster JSON, job, index).
TF_SERVER = """
import json, sys
import tensorflow as tf
cluster = tf.train.ClusterSpec(json.loads(sys.argv[1]))
server = tf.distribute.Server(cluster, job_name=sys.argv[2],
                              task_index=int(sys.argv[3]), start=True)
print("serving", flush=True)
server.join()
"""


class Cluster:
    """One child process per task: `weft server`, or a TensorFlow server for
    the jobs in `tf_jobs`; killed by pid on exit.

    distinct_hosts: every task on its own loopback address (127.0.0.2,
    127.0.0.3, ...), as if each ran on a host of its own."""

    def __init__(self, weft, work_dir, jobs, tf_jobs=(), name="weft",
                 server_flags=(), distinct_hosts=False):
        self.weft = weft
        self.work_dir = work_dir
        self.tf_jobs = tf_jobs
        self.server_flags = server_flags
        self.addresses = {}
        n = 0
        held = []
        for job, count in jobs.items():
            self.addresses[job] = []
            for _ in range(count):
                host = f"127.0.0.{n + 2}" if distinct_hosts else "127.0.0.1"
                self.addresses[job].append(f"{host}:{free_port(host, held)}")
                n += 1
        for s in held:
            s.close()
        self.spec = ";".join(f"{job}={','.join(addrs)}"
                             for job, addrs in self.addresses.items())
        self.name = name
        self.procs = {}
        for job, addrs in self.addresses.items():
            for i, _ in enumerate(addrs):
                self._start(job, i)
        for job, addrs in self.addresses.items():
            for i, _ in enumerate(addrs):
                self._await(job, i)

    def _start(self, job, i, mode="w"):
        log = open(self.log_path(job, i), mode)
        if job in self.tf_jobs:
            cmd = [sys.executable, "-c", TF_SERVER,
                   json.dumps(self.addresses), job, str(i)]
        else:
            cmd = [self.weft, "server", "--cluster", self.spec, "--job", job,
                   "--task", str(i), "--wait-for-tasks-s", "60",
                   *self.server_flags]
        self.procs[(job, i)] = (subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT), log)

    def _await(self, job, i, after=0):
        deadline = time.time() + 120  # TensorFlow takes a while to import
        proc, _ = self.procs[(job, i)]
        while "serving" not in self.log(job, i)[after:]:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"task {job}:{i} did not start:\n"
                                   + self.log(job, i))
            time.sleep(0.05)

    def restart(self, job, i):
        """Starts task (job, i) again on its address, after it has ended
        (kill first); its log goes on in the same file."""
        proc, log = self.procs[(job, i)]
        if proc.poll() is None:
            raise RuntimeError(f"task {job}:{i} is still running")
        log.close()
        after = len(self.log(job, i))
        self._start(job, i, mode="a")
        self._await(job, i, after)

    def log_path(self, job, i):
        return os.path.join(self.work_dir, f"{self.name}-{job}{i}.log")

    def log(self, job, i):
        with open(self.log_path(job, i)) as f:
            return f.read()

    def target(self, job="worker", i=0):
        return "grpc://" + self.addresses[job][i]

    def kill(self, job, i, sig=signal.SIGKILL):
        proc, _ = self.procs[(job, i)]
        proc.send_signal(sig)
        proc.wait(timeout=30)

    def close(self):
        for (job, i), (proc, log) in self.procs.items():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for (job, i), (proc, log) in self.procs.items():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
