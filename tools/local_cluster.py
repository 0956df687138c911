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

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    the jobs in `tf_jobs`; killed by pid on exit."""

    def __init__(self, weft, work_dir, jobs, tf_jobs=(), name="weft",
                 server_flags=()):
        self.work_dir = work_dir
        self.addresses = {job: [f"127.0.0.1:{free_port()}" for _ in range(n)]
                          for job, n in jobs.items()}
        self.spec = ";".join(f"{job}={','.join(addrs)}"
                             for job, addrs in self.addresses.items())
        spec_json = json.dumps(self.addresses)
        self.name = name
        self.procs = {}
        for job, addrs in self.addresses.items():
            for i, _ in enumerate(addrs):
                log = open(self.log_path(job, i), "w")
                if job in tf_jobs:
                    cmd = [sys.executable, "-c", TF_SERVER, spec_json, job, str(i)]
                else:
                    cmd = [weft, "server", "--cluster", self.spec, "--job", job,
                           "--task", str(i), "--wait-for-tasks-s", "60",
                           *server_flags]
                self.procs[(job, i)] = (subprocess.Popen(
                    cmd, stdout=log, stderr=subprocess.STDOUT), log)
        deadline = time.time() + 120  # TensorFlow takes a while to import
        for (job, i), (proc, _) in self.procs.items():
            while "serving" not in self.log(job, i):
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"task {job}:{i} did not start:\n"
                                       + self.log(job, i))
                time.sleep(0.05)

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
