"""`weft launch`: a local cluster started, reported, and stopped by Ctrl-C;
a task that dies stops the rest and is named with its exit status and log;
`weft train --target` (in-graph and model-parallel over task devices) and
`weft submit` on the cluster give the local runs' numbers; misuse is a
usage error.

usage: launch_cli_test.py PATH_TO_WEFT PATH_TO_LINEAR_REGRESSION_PBTXT
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop"))
from tf_compare import check, summary_exit_code  # noqa: E402

WEFT = os.path.abspath(sys.argv[1])
EXAMPLE = os.path.abspath(sys.argv[2])  # tools/examples/linear_regression.pbtxt
LINE = re.compile(r"^\s+(\w+)\s+task (\d+)\s+(\S+)\s+pid (\d+)\s+log (\S+)$")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not alive for our purpose.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def start(args, log_dir=None):
    log_dir = log_dir or tempfile.mkdtemp(prefix="weft_launch_")
    proc = subprocess.Popen([WEFT, "launch", *args, "--log-dir", log_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tasks = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = LINE.match(line.rstrip("\n"))
        if m:
            tasks.append({"job": m[1], "task": int(m[2]), "address": m[3],
                          "pid": int(m[4]), "log": m[5]})
        if "serving" in line:
            return proc, tasks, line
    return proc, tasks, ""


def stop(proc, tasks):
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    for t in tasks:
        if alive(t["pid"]):
            os.kill(t["pid"], signal.SIGKILL)


def test_ctrl_c_stops_every_task():
    proc, tasks, ready = start(["--ps", "1", "--workers", "2"])
    try:
        check("launch prints one line per task",
              sorted((t["job"], t["task"]) for t in tasks)
              == [("ps", 0), ("worker", 0), ("worker", 1)], str(tasks))
        worker0 = next(t for t in tasks if t["job"] == "worker" and t["task"] == 0)
        check("launch names the chief's address for clients",
              f"grpc://{worker0['address']}" in ready, ready)
        check("every task's log says it serves",
              all("serving" in open(t["log"]).read() for t in tasks))
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=60)
        check("Ctrl-C: launch exits 0", rc == 0, f"rc={rc}")
        check("Ctrl-C: no task is left running",
              not any(alive(t["pid"]) for t in tasks),
              str([t["pid"] for t in tasks if alive(t["pid"])]))
    finally:
        stop(proc, tasks)


def test_a_dead_task_stops_the_rest():
    proc, tasks, _ = start(["--workers", "2"])
    try:
        victim = next(t for t in tasks if t["task"] == 1)
        os.kill(victim["pid"], signal.SIGKILL)
        rc = proc.wait(timeout=60)
        err = proc.stderr.read()
        check("a dead task: launch exits 1", rc == 1, f"rc={rc}")
        check("a dead task is named with its address, signal and log",
              "/job:worker/task:1" in err and victim["address"] in err
              and "signal 9" in err and victim["log"] in err, err)
        check("a dead task: the others are stopped",
              not any(alive(t["pid"]) for t in tasks))
    finally:
        stop(proc, tasks)


def final_line(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("done:")]
    # The numbers, without the throughput and wall time that follow them.
    return lines[-1].split("(means")[0] if lines else proc.stdout + proc.stderr


def test_training_and_submitting_on_the_cluster_match_local_runs():
    proc, tasks, ready = start(["--ps", "1", "--workers", "2"])
    try:
        target = re.search(r"grpc://\S+", ready)[0].rstrip(";")
        run = lambda args: subprocess.run([WEFT, *args], capture_output=True,
                                          text=True, timeout=300)
        for mode, cluster_devices, local_devices in [
                ("in-graph", ["--devices", "/job:worker/task:0,/job:worker/task:1",
                              "--param-device", "/job:ps/task:0"],
                 ["--devices", "/cpu:0,/cpu:1", "--param-device", "/cpu:0"]),
                ("model-parallel", ["--devices", "/job:worker/task:0,/job:worker/task:1"],
                 ["--devices", "/cpu:0,/cpu:1"])]:
            base = ["train", "--model", "mlp", "--steps", "20", "--mode", mode]
            remote = run(base + cluster_devices + ["--target", target])
            local = run(base + local_devices)
            check(f"weft train --mode {mode} across tasks: the local run's losses",
                  remote.returncode == 0 and final_line(remote) == final_line(local),
                  f"{final_line(remote)!r} vs {final_line(local)!r} "
                  f"(rc {remote.returncode}; stderr: {remote.stderr[-2000:]})")
        graph = EXAMPLE
        flags = ["--graph", graph, "--init", "init", "--steps", "50",
                 "--fetch", "w", "--fetch", "b"]
        remote = run(["submit", "--target", target, "--target-node", "train", *flags])
        local = run(["run", "--target", "train", *flags])
        check("weft submit prints what weft run prints",
              remote.returncode == 0 and remote.stdout == local.stdout,
              f"{remote.stdout}{remote.stderr} vs {local.stdout}")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        stop(proc, tasks)


def test_submit_to_a_master_that_stopped_answering():
    """A master that is alive but does not answer (SIGSTOP): weft submit
    says every 10 s what it waits for, and gives up after --call-timeout-s
    naming the master, instead of waiting silently for ever. The log
    directory given to launch need not exist."""
    log_dir = os.path.join(tempfile.mkdtemp(prefix="weft_launch_"), "new", "logs")
    proc, tasks, ready = start(["--workers", "1"], log_dir)
    try:
        check("launch makes a --log-dir that does not exist",
              len(tasks) == 1 and os.path.isdir(log_dir), f"{tasks} {ready}")
        if not tasks:
            return
        os.kill(tasks[0]["pid"], signal.SIGSTOP)
        t = time.time()
        p = subprocess.run([WEFT, "submit", "--target", f"grpc://{tasks[0]['address']}",
                            "--graph", EXAMPLE, "--fetch", "w", "--call-timeout-s", "12"],
                           capture_output=True, text=True, timeout=120)
        took = time.time() - t
        check("weft submit reports its wait on a master that does not answer",
              "still waiting for CreateSession" in p.stderr
              and tasks[0]["address"] in p.stderr, p.stderr[-1500:])
        check("... and gives up after --call-timeout-s, non-zero, naming the master",
              p.returncode != 0 and 11 <= took < 60
              and "got no answer in time" in p.stderr, f"rc {p.returncode} "
              f"after {took:.1f}s: {p.stderr[-1500:]}")
        os.kill(tasks[0]["pid"], signal.SIGCONT)
    finally:
        for task in tasks:
            if alive(task["pid"]):
                os.kill(task["pid"], signal.SIGCONT)
        stop(proc, tasks)


def test_misuse_is_a_usage_error():
    for args, mention in [(["--ps", "1"], "--cluster"),
                          (["--cluster", "worker=127.0.0.1:1", "--workers", "1"], "not both"),
                          (["--cluster", "worker=127.0.0.1"], "worker")]:
        p = subprocess.run([WEFT, "launch", *args], capture_output=True, text=True,
                           timeout=60)
        check(f"launch {' '.join(args)}: usage error mentioning {mention!r}",
              p.returncode == 2 and mention in p.stderr, f"rc={p.returncode} {p.stderr}")


def main():
    test_ctrl_c_stops_every_task()
    test_a_dead_task_stops_the_rest()
    test_training_and_submitting_on_the_cluster_match_local_runs()
    test_submit_to_a_master_that_stopped_answering()
    test_misuse_is_a_usage_error()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
