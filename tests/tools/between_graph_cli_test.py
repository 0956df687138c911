"""weft train --mode between-async as a user runs it: ps tasks from
`weft server`, every worker a `weft train` process serving its own task, on
loopback with free ports; every child killed by pid at the end.

  - 1 ps + 2 workers on the digits data (synthetic where tools/setup.sh has
    not exported them): both finish, their steps make up the global steps,
    and the accuracy is within 2 points of one process training on the same
    number of examples;
  - a worker started before the chief says what it waits for; one without
    a chief gives up after --wait-for-chief-s naming the chief and the ps;
  - a chief started again on the trained ps joins the job where it stands;
  - async with checkpoints: a killed ps started again is waited for, the
    chief restores the newest checkpoint and both workers train on;
  - 2 ps tasks (greedy by bytes) train as well;
  - between-sync (SyncReplicasOptimizer): 2 workers each compute one
    gradient per global step; a killed worker stops the job with an error
    naming it (task and address) within the step timeout, and with a backup
    worker (--replicas-to-aggregate 2 of 3) the others train on, the
    chief's progress line naming the dead one as behind; a killed ps stops
    every worker, naming it; a sync job resumes from its checkpoint;
  - allreduce (no ps): 3 workers, started one by one, each wait for the
    ring, train every global step together and learn as much as one process
    on as many examples; a killed worker stops the others at once, naming
    it; the chief's checkpoint resumes a new ring, the other worker taking
    the chief's variables and global step;
  - hybrid: allreduce with each worker's layers over two CPU devices of its
    own, which its first step reports;
  - usage errors for flags that do not go together.

usage: between_graph_cli_test.py PATH_TO_WEFT
"""
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_between_")
results = {"passed": 0, "failed": 0}
children = []

# The digits data set, where tools/setup.sh exported it (Bazel points HOME
# at a scratch folder, so the user's home comes from the password database).
DIGITS = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache/weft/data")
DATA = "digits" if os.path.exists(os.path.join(DIGITS, "digits.bin")) else "synthetic"
ENV = dict(os.environ, WEFT_DATA_DIR=DIGITS)


def check(case, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(f"PASS {case}" if ok else f"FAIL {case}: {detail}")


def free_addresses(n):
    """n distinct free loopback addresses: every socket stays bound until
    all are picked (one bound and closed at a time, the kernel may hand out
    the same port twice, and the spec then names one address twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    finally:
        for s in socks:
            s.close()


def cluster(ps, workers):
    addrs = free_addresses(ps + workers)
    ps_addrs, w_addrs = addrs[:ps], addrs[ps:]
    return f"ps={','.join(ps_addrs)};worker={','.join(w_addrs)}", ps_addrs


def start(name, args):
    log = open(os.path.join(WORK, name + ".log"), "w+")
    p = subprocess.Popen([WEFT, *args], stdout=log, stderr=subprocess.STDOUT, env=ENV)
    children.append((p, log))
    return p, log


def start_ps(spec, n):
    # The checkpoints' SaveV2 runs on the ps, so its files must be allowed.
    return [start(f"ps{i}", ["server", "--cluster", spec, "--job", "ps",
                             "--task", str(i), "--file-root", WORK])
            for i in range(n)]


def worker_args(spec, task, steps, *extra, mode="between-async"):
    return ["train", "--model", "mlp", "--data", DATA, "--mode", mode,
            "--cluster", spec, "--job", "worker", "--task", str(task),
            "--steps", str(steps), *extra]


def finish(proc_log, timeout=180):
    proc, log = proc_log
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.seek(0)
    return proc.returncode, log.read()


def stop(procs):
    for p, _ in procs:
        if p.poll() is None:
            p.terminate()
    for p, _ in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def single_accuracy(steps, *extra):
    """The accuracy one `weft train` process reaches in `steps` steps (None
    when it reports none), and its output."""
    r = subprocess.run([WEFT, "train", "--model", "mlp", "--data", DATA,
                        "--steps", str(steps), *extra],
                       capture_output=True, text=True, env=ENV, timeout=180)
    m = re.search(r"^done: steps \d+  final loss ([0-9.]+)  accuracy ([0-9.]+)",
                  r.stdout, re.M)
    return (float(m.group(2)) if m else None), r.stdout


def done_line(out):
    m = re.search(r"^done: /job:worker/task:\d+ ran (\d+) of the (\d+) global "
                  r"steps; final loss ([0-9.]+)  accuracy ([0-9.]+)", out, re.M)
    return (int(m.group(1)), float(m.group(3)), float(m.group(4))) if m else None


def test_async_training(steps=1000):
    spec, ps_addrs = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        w1 = start("w1", worker_args(spec, 1, steps))
        time.sleep(1.5)  # worker 1 first: it waits for the chief
        w0 = start("w0", worker_args(spec, 0, steps))
        (rc0, out0), (rc1, out1) = finish(w0), finish(w1)
        check("two between-async workers finish", rc0 == 0 and rc1 == 0,
              f"rc {rc0} {rc1}\n{out0[-1500:]}\n{out1[-1500:]}")
        check("the worker started first waits for the chief, saying so",
              "waiting for the chief (/job:worker/task:0) to initialise the "
              f"variables on /job:ps/task:0 ({ps_addrs[0]})" in out1, out1[-800:])
        check("the chief initialises the variables on the ps",
              f"initialised 7 variables on /job:ps/task:0 ({ps_addrs[0]})" in out0,
              out0[-800:])
        d0, d1 = done_line(out0), done_line(out1)
        check("each worker's steps count towards the shared global step",
              d0 and d1 and d0[0] > 0 and d1[0] > 0
              and steps <= d0[0] + d1[0] <= steps + 2, f"{d0} {d1}")
        one, single_out = single_accuracy(steps)
        if d0 and d1 and one is not None:
            between = (d0[2] + d1[2]) / 2
            check(f"async accuracy ({between:.3f}) within 2 points of one "
                  f"process on as many examples ({one:.3f}, {DATA})",
                  between >= one - 0.02, f"{between} vs {one}")
        else:
            check("async and single-process runs report accuracy", False,
                  f"{d0} {d1} {single_out[-500:]}")

        # A chief started again joins the running job: variables kept, the
        # global step goes on from where it is.
        again = finish(start("w0_again", worker_args(spec, 0, steps + 50)))
        first = re.search(r"^step +(\d+)/", again[1], re.M)
        check("a restarted chief joins the job where it stands",
              again[0] == 0 and "are initialised already: joining the running job"
              in again[1] and first and int(first.group(1)) > steps,
              again[1][-800:])
    finally:
        stop(ps)


def test_no_chief_is_named():
    spec, ps_addrs = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        t = time.time()
        rc, out = finish(start("lonely", worker_args(spec, 1, 10,
                                                    "--wait-for-chief-s", "2")))
        check("a worker without a chief gives up after --wait-for-chief-s, "
              "naming the chief and the ps",
              rc != 0 and time.time() - t < 60 and "DEADLINE_EXCEEDED" in out
              and "/job:worker/task:0" in out and ps_addrs[0] in out
              and "--wait-for-chief-s" in out, out[-800:])
    finally:
        stop(ps)


def test_ps_restart_resumes(mode="between-async", steps=4000):
    # With checkpoints: a ps killed and started again (empty) on the same
    # address is waited for; the chief restores the newest checkpoint and
    # both workers train on to the end (sync: with the accumulators, local
    # steps and tokens set up anew, and the chief's update loop restarted).
    ckpt = os.path.join(WORK, f"restart_ckpt_{mode}")
    spec, ps_addrs = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        args = ("--checkpoint-dir", ckpt, "--checkpoint-every", "300",
                "--log-every", "500")
        w = [start(f"pr{i}_{mode}", worker_args(spec, i, steps, *args, mode=mode))
             for i in (1, 0)]
        saved = wait_for_line(w[1][1], r"saved \S+/model-\d+")
        ps[0][0].kill()
        ps[0][0].wait()
        time.sleep(1.5)  # the workers find it gone
        ps += start_ps(spec, 1)
        outs = [finish(p) for p in w]
        again = [re.search(r"training again from global step (\d+)", o) for _, o in outs]
        done = done_line if mode == "between-async" else sync_done
        check(f"{mode}: a killed ps started again: the workers wait for it, "
              "the chief restores the newest checkpoint, both train to the end",
              saved and all(rc == 0 for rc, _ in outs)
              and all(f"to answer, then resuming from the newest checkpoint in {ckpt}" in o
                      for _, o in outs)
              and re.search(rf"restored 7 variables on /job:ps/task:0 \({ps_addrs[0]}\) "
                            rf"from {ckpt}/model-\d+", outs[1][1])
              and all(a and int(a.group(1)) >= 300 for a in again)
              and all(done(o) for _, o in outs),
              "\n".join(o[-1200:] for _, o in outs))
    finally:
        stop(ps)


def test_sync_ps_restart_resumes():
    test_ps_restart_resumes("between-sync", 1500)


def test_two_ps_tasks():
    spec, _ = cluster(2, 2)
    ps = start_ps(spec, 2)
    try:
        logdir = os.path.join(WORK, "tb")
        w = [start(f"g{i}", worker_args(spec, i, 100, "--ps-strategy", "greedy-bytes",
                                       "--logdir", logdir))
             for i in range(2)]
        outs = [finish(p) for p in w]
        d = [done_line(o) for _, o in outs]
        check("2 ps tasks, greedy-bytes: both workers finish and learn",
              all(rc == 0 for rc, _ in outs) and all(x and x[1] < 2.0 for x in d),
              "\n".join(o[-600:] for _, o in outs))
        events = [f for f in os.listdir(logdir) if "tfevents" in f] \
            if os.path.isdir(logdir) else []
        check("the chief (only) writes TensorBoard events with --logdir",
              len(events) == 1 and "TensorBoard events:" in outs[0][1]
              and "TensorBoard events:" not in outs[1][1], str(events))
    finally:
        stop(ps)


def test_checkpoints_resume_a_new_cluster():
    ckpt = os.path.join(WORK, "ckpt")
    spec, ps_addrs = cluster(2, 2)
    ps = start_ps(spec, 2)
    try:
        w = [start(f"c{i}", worker_args(spec, i, 200, "--checkpoint-dir", ckpt,
                                       "--checkpoint-every", "100"))
             for i in range(2)]
        outs = [finish(p) for p in w]
        check("training with --checkpoint-dir finishes",
              all(rc == 0 for rc, _ in outs), outs[0][1][-800:])
        saved = re.findall(r"saved (\S+/model-(\d+)) \(2 shards\)", outs[0][1])
        state = open(os.path.join(ckpt, "checkpoint")).read() \
            if os.path.exists(os.path.join(ckpt, "checkpoint")) else ""
        last = saved[-1][0] if saved else None
        check("the chief saved every 100 global steps and at the end, 2 ps "
              "shards merged into one checkpoint named by DIR/checkpoint",
              len(saved) >= 2 and os.path.exists(last + ".index")
              and os.path.exists(last + ".data-00001-of-00002")
              and f'model_checkpoint_path: "{os.path.basename(last)}"' in state
              and not any("_temp" in f for f in os.listdir(ckpt)),
              f"{saved} {state!r} {os.listdir(ckpt)}")
        final = done_line(outs[0][1])
        try:
            import tensorflow as tf  # the test peer, where it is installed
            held = [int(tf.train.load_checkpoint(p).get_tensor("global_step"))
                    for p, _ in saved]
            check("each async checkpoint is named by the global step it holds",
                  held == [int(n) for _, n in saved], f"{saved} hold {held}")
        except ImportError:
            print("note: TensorFlow is not installed: not checked: checkpoint names "
                  "against the steps they hold")
    finally:
        stop(ps)
    # A new cluster (fresh ps tasks: no variables) resumes from it.
    spec, _ = cluster(2, 2)
    ps = start_ps(spec, 2)
    try:
        w = [start(f"r{i}", worker_args(spec, i, 260, "--checkpoint-dir", ckpt))
             for i in range(2)]
        outs = [finish(p) for p in w]
        first = re.search(r"^step +(\d+)/260  loss ([0-9.]+)", outs[0][1], re.M)
        check("a new cluster resumes from the newest checkpoint: the global "
              "step goes on and the loss is where it was",
              all(rc == 0 for rc, _ in outs) and last is not None
              and f"from {last}" in outs[0][1] and first
              and int(first.group(1)) > int(saved[-1][1]) and final
              and float(first.group(2)) < max(3 * final[1], 0.5),
              f"{final} {outs[0][1][-900:]}")
    finally:
        stop(ps)


def sync_done(out):
    m = re.search(r"^done: /job:worker/task:\d+ computed (\d+) gradients for the "
                  r"(\d+) global steps; final loss ([0-9.]+)", out, re.M)
    return (int(m.group(1)), int(m.group(2)), float(m.group(3))) if m else None


def wait_for_line(log, pattern, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        log.seek(0)
        if re.search(pattern, log.read(), re.M):
            return True
        time.sleep(0.2)
    return False


def test_sync_training(steps=300):
    spec, _ = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        w = [start(f"s{i}", worker_args(spec, i, steps, mode="between-sync"))
             for i in (1, 0)]
        outs = [finish(p) for p in w]
        d = [sync_done(o) for _, o in outs]
        check("two between-sync workers finish, each computing one gradient "
              "per global step, and learn",
              all(rc == 0 for rc, _ in outs) and all(x and x[0] == steps
                                                     and x[2] < 1.0 for x in d),
              "\n".join(o[-600:] for _, o in outs))
        check("the chief says it aggregates 2 of 2 gradients per step",
              "between-graph (sync, 2 of 2 gradients per step)" in outs[1][1],
              outs[1][1][-600:])
    finally:
        stop(ps)


def test_sync_checkpoints_resume():
    ckpt = os.path.join(WORK, "sync_ckpt")
    spec, _ = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        w = [start(f"sc{i}", worker_args(spec, i, 100, "--checkpoint-dir", ckpt,
                                        mode="between-sync")) for i in (1, 0)]
        outs = [finish(p) for p in w]
        saved = re.findall(r"saved (\S+/model-100) \((\d+) shards?\)", outs[1][1])
        check("sync training saves a checkpoint of the ps variables only (the "
              "workers' local steps are not saved: one shard for one ps)",
              all(rc == 0 for rc, _ in outs) and saved and saved[0][1] == "1",
              outs[1][1][-800:])
    finally:
        stop(ps)
    spec, _ = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        w = [start(f"sr{i}", worker_args(spec, i, 150, "--checkpoint-dir", ckpt,
                                        mode="between-sync")) for i in (1, 0)]
        outs = [finish(p) for p in w]
        d = [sync_done(o) for _, o in outs]
        first = re.search(r"^step +(\d+)/150", outs[1][1], re.M)
        check("a new sync cluster resumes from the checkpoint: every worker "
              "computes the remaining 50 steps' gradients",
              all(rc == 0 for rc, _ in outs) and "restored" in outs[1][1]
              and first and int(first.group(1)) > 100
              and all(x and x[0] == 50 for x in d),
              "\n".join(o[-700:] for _, o in outs))
    finally:
        stop(ps)


def test_sync_dead_worker():
    # No backup: the job stops, naming the dead worker.
    spec, _ = cluster(1, 2)
    addr1 = spec.split("worker=")[1].split(",")[1]
    ps = start_ps(spec, 1)
    try:
        args = ("--step-timeout-s", "3", "--log-every", "50")
        w1 = start("d1", worker_args(spec, 1, 1000000, *args, mode="between-sync"))
        w0 = start("d0", worker_args(spec, 0, 1000000, *args, mode="between-sync"))
        started = wait_for_line(w0[1], r"^step +\d+/")
        w1[0].kill()
        w1[0].wait()
        t = time.time()
        rc, out = finish(w0, timeout=60)
        check("sync without a backup: a killed worker fails the chief's step "
              "within the timeout, naming the worker and its address",
              started and rc != 0 and time.time() - t < 40
              and f"/job:worker/task:1 ({addr1})" in out and "restart it" in out
              and "--replicas-to-aggregate" in out, out[-1200:])
    finally:
        stop(ps)
    # A dead ps: every worker stops, naming it and its address.
    spec, ps_addrs = cluster(1, 2)
    ps = start_ps(spec, 1)
    try:
        args = ("--step-timeout-s", "5", "--log-every", "50")
        w = [start(f"p{i}", worker_args(spec, i, 1000000, *args, mode="between-sync"))
             for i in (1, 0)]
        started = wait_for_line(w[1][1], r"^step +\d+/")
        ps[0][0].kill()
        ps[0][0].wait()
        t = time.time()
        outs = [finish(p, timeout=60) for p in w]
        check("sync: a killed ps stops every worker within the timeout, naming "
              "the ps and its address",
              started and time.time() - t < 40
              and all(rc != 0 and f"/job:ps/replica:0/task:0 at {ps_addrs[0]}" in o
                      for rc, o in outs),
              "\n".join(o[-700:] for _, o in outs))
    finally:
        stop(ps)
    # A backup worker: 2 of 3 gradients per step; one dies, two train on.
    spec, _ = cluster(1, 3)
    ps = start_ps(spec, 1)
    try:
        args = ("--step-timeout-s", "10", "--replicas-to-aggregate", "2")
        w = [start(f"b{i}", worker_args(spec, i, 1500, *args, mode="between-sync"))
             for i in (2, 1, 0)]
        started = wait_for_line(w[2][1], r"^step +\d+/")
        w[0][0].kill()
        w[0][0].wait()
        outs = [finish(p) for p in w[1:]]
        check("sync with a backup worker: the others finish after one is killed",
              started and all(rc == 0 for rc, _ in outs)
              and all(sync_done(o) for _, o in outs),
              "\n".join(o[-800:] for _, o in outs))
        # The chief's progress lines name the dead worker as behind; by the
        # last line the live one has kept up.
        lines = [l for l in outs[1][1].splitlines() if l.startswith("step ")]
        named = [l for l in lines if re.search(r"behind: .*/job:worker/task:2 \(", l)]
        check("the chief's progress line names the killed worker as behind",
              named and lines and "task:1 (" not in lines[-1], "\n".join(lines))
    finally:
        stop(ps)


def ring_cluster(workers):
    return "worker=" + ",".join(free_addresses(workers))


def stop_all(procs):
    """stop(), after continuing any that is stopped (SIGTERM waits else)."""
    for p, _ in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
    stop(procs)


def pause_a_sync_worker(name, paused_s):
    """Two sync workers without a backup (step timeout 3 s): worker 1 is
    stopped once the chief trains, and continued after `paused_s` (never
    when None). Returns (started, chief rc, chief output, worker 1 address,
    seconds from the stop to the chief's exit)."""
    spec, _ = cluster(1, 2)
    addr1 = spec.split("worker=")[1].split(",")[1]
    ps = start_ps(spec, 1)
    w = []
    try:
        args = ("--step-timeout-s", "3", "--log-every", "50")
        w = [start(f"{name}{i}", worker_args(spec, i, 1000000, *args, mode="between-sync"))
             for i in (1, 0)]
        started = wait_for_line(w[1][1], r"^step +\d+/")
        time.sleep(2)  # a few readings of the workers' counts
        os.kill(w[0][0].pid, signal.SIGSTOP)
        t = time.time()
        if paused_s is not None:
            time.sleep(paused_s)
            os.kill(w[0][0].pid, signal.SIGCONT)
        rc, out = finish(w[1], timeout=60)
        return started, rc, out, addr1, time.time() - t
    finally:
        stop_all(w + ps)


def test_sync_stopped_worker():
    """SIGSTOP of a sync worker: without backup workers the chief's step
    fails within its timeout naming the stopped worker and its address,
    also when the worker resumes while the chief asks who answers; with a
    backup worker the others train on to the end."""
    started, rc, out, addr1, took = pause_a_sync_worker("st", None)
    check("sync without a backup: a stopped worker fails the chief's step "
          "within the timeout, naming the worker and its address",
          started and rc != 0 and took < 40
          and f"/job:worker/task:1 ({addr1})" in out, out[-1200:])
    # Paused past the chief's timeout, resumed while the chief probes the
    # tasks (the probe waits 3 s): every task answers by then, and the
    # counts from before the failure still name the worker.
    started, rc, out, addr1, _ = pause_a_sync_worker("sr", 4.5)
    check("sync: a worker paused past the timeout and resumed before the "
          "chief's diagnosis is still named, with its address",
          started and rc != 0
          and f"it waited for [/job:worker/task:1 ({addr1})" in out
          and "answers again now" in out, out[-1200:])
    spec, _ = cluster(1, 3)
    ps = start_ps(spec, 1)
    w = []
    try:
        args = ("--step-timeout-s", "10", "--replicas-to-aggregate", "2")
        w = [start(f"sb{i}", worker_args(spec, i, 1500, *args, mode="between-sync"))
             for i in (2, 1, 0)]
        started = wait_for_line(w[2][1], r"^step +\d+/")
        os.kill(w[0][0].pid, signal.SIGSTOP)
        time.sleep(5)
        os.kill(w[0][0].pid, signal.SIGCONT)
        outs = [finish(p) for p in w]
        check("sync with a backup worker: the others train on to the end "
              "while one is stopped for 5 s",
              started and all(rc == 0 for rc, _ in outs[1:])
              and all(sync_done(o) for _, o in outs[1:]),
              "\n".join(o[-800:] for _, o in outs))
    finally:
        stop_all(w + ps)


def test_allreduce_training(steps=300):
    spec = ring_cluster(3)
    w = []
    for i in (2, 1, 0):
        w.append(start(f"r{i}", worker_args(spec, i, steps, mode="allreduce")))
        time.sleep(3 if i == 2 else 0.5)  # worker 2 waits, saying so
    outs = [finish(p) for p in w]
    d = [done_line(o) for _, o in outs]
    check("three allreduce workers finish, every one running every global step",
          all(rc == 0 for rc, _ in outs) and all(x and x[0] == steps for x in d),
          "\n".join(o[-800:] for _, o in outs))
    check("a worker started before the others says it waits for the ring",
          "waiting for the other workers of the all-reduce ring" in outs[0][1],
          outs[0][1][-600:])
    check("the chief says the gradients are averaged over a ring of 3",
          "allreduce: gradients averaged over a ring of 3 workers" in outs[2][1],
          outs[2][1][-600:])
    one, single_out = single_accuracy(steps, "--batch", "96")
    if all(d) and one is not None:
        ring = sum(x[2] for x in d) / 3
        check(f"allreduce accuracy ({ring:.3f}) within 2 points of one process "
              f"with the same global batch ({one:.3f}, {DATA})",
              ring >= one - 0.02, f"{ring} vs {one}")
    else:
        check("allreduce and single-process runs report accuracy", False,
              f"{d} {single_out[-500:]}")


def test_allreduce_dead_worker():
    spec = ring_cluster(2)
    addr0 = spec.split("=")[1].split(",")[0]
    args = ("--step-timeout-s", "10", "--log-every", "200")
    w0 = start("a0", worker_args(spec, 0, 10000000, *args, mode="allreduce"))
    w1 = start("a1", worker_args(spec, 1, 10000000, *args, mode="allreduce"))
    started = wait_for_line(w1[1], r"^step +\d+/")
    w0[0].kill()
    w0[0].wait()
    t = time.time()
    rc, out = finish(w1, timeout=60)
    check("allreduce: a killed worker stops the other within its step "
          "timeout, naming the worker and its address",
          started and rc != 0 and time.time() - t < 15
          and "receiving from rank 0" in out
          and f"/job:worker/replica:0/task:0 at {addr0}" in out, out[-1200:])


def test_hybrid_training(steps=200):
    spec = ring_cluster(2)
    w = [start(f"h{i}", worker_args(spec, i, steps, mode="hybrid")) for i in (1, 0)]
    outs = [finish(p) for p in w]
    d = [done_line(o) for _, o in outs]
    check("two hybrid workers finish, every one running every global step",
          all(rc == 0 for rc, _ in outs) and all(x and x[0] == steps for x in d),
          "\n".join(o[-800:] for _, o in outs))
    check("each hybrid worker runs its step on two CPU devices of its own task",
          all(re.search(rf"a step runs on /job:worker/replica:0/task:{i}/device:CPU:0 "
                        rf"\(\d+ nodes\), /job:worker/replica:0/task:{i}/device:CPU:1 "
                        r"\(\d+ nodes\)", o)
              for i, (_, o) in zip((1, 0), outs)),
          "\n".join(o[-800:] for _, o in outs))


def test_allreduce_checkpoints_resume():
    ckpt = os.path.join(WORK, "ring_ckpt")
    spec = ring_cluster(2)
    w = [start(f"rc{i}", worker_args(spec, i, 100, "--checkpoint-dir", ckpt,
                                    mode="allreduce")) for i in (1, 0)]
    outs = [finish(p) for p in w]
    check("allreduce: the chief saves its copy (one shard) at the end",
          all(rc == 0 for rc, _ in outs)
          and re.search(r"saved \S+/model-100 \(1 shard\)", outs[1][1])
          and "saved" not in outs[0][1], "\n".join(o[-700:] for _, o in outs))
    # A new ring: the chief restores, the other takes the chief's variables
    # and global step over the ring (its own checkpoint-less start would
    # number its all-reduces from 0 and never meet the chief's).
    spec = ring_cluster(2)
    w = [start(f"rr{i}", worker_args(spec, i, 150, "--checkpoint-dir", ckpt,
                                    "--log-every", "10", mode="allreduce"))
         for i in (1, 0)]
    outs = [finish(p) for p in w]
    d = [done_line(o) for _, o in outs]
    first = [re.search(r"^step +(\d+)/150", o, re.M) for _, o in outs]
    check("a new allreduce ring resumes from the chief's checkpoint: both "
          "workers run the remaining 50 steps, from step 100 on",
          all(rc == 0 for rc, _ in outs)
          and "restored from" in outs[1][1]
          and "variables set to the chief's" in outs[0][1]
          and all(f and 100 < int(f.group(1)) <= 110 for f in first)
          and all(x and x[0] == 50 for x in d),
          "\n".join(o[-700:] for _, o in outs))


def test_async_chief_killed_is_no_success():
    """kill -9 of the async chief mid-run: the other worker does not train
    on to a false success; it stops, naming the chief, within
    --wait-for-chief-s of the chief's last step."""
    spec, _ = cluster(1, 2)
    ps = start_ps(spec, 1)
    ckpt = os.path.join(WORK, "dead_chief_ckpt")
    w0 = None
    try:
        args = ("--checkpoint-dir", ckpt, "--checkpoint-every", "2000",
                "--wait-for-chief-s", "5")
        w0 = start("dc0", worker_args(spec, 0, 200000, *args))
        w1 = start("dc1", worker_args(spec, 1, 200000, *args))
        ok = wait_for_line(w1[1], r"^training ", timeout=90)
        time.sleep(2)  # both train
        w0[0].send_signal(signal.SIGKILL)
        t = time.time()
        rc, out = finish(w1, timeout=120)
        took = time.time() - t
        check("a worker whose async chief was killed stops (exit code, no "
              "'done'), naming the chief, within --wait-for-chief-s and a "
              "check's period",
              ok and rc != 0 and "done:" not in out
              and "the chief (/job:worker/task:0" in out and took < 40,
              f"rc {rc} after {took:.1f}s\n{out[-1200:]}")
    finally:
        if w0 is not None:
            finish(w0, timeout=5)
        stop(ps)


def test_non_finite_loss_stops_training():
    """A learning rate that makes the loss overflow: the worker stops at the
    first non-finite loss, saying which step and what holds the values,
    instead of training on nan; --no-check-numerics trains on."""
    spec, _ = cluster(1, 1)
    ps = start_ps(spec, 1)
    try:
        rc, out = finish(start("nan0", worker_args(spec, 0, 200, "--lr", "1e30")))
        check("a non-finite loss stops between-graph training (exit code, "
              "step, the way out)",
              rc != 0 and re.search(r"the loss is (nan|inf|-inf) at global step \d+",
                                    out) is not None
              and "--no-check-numerics" in out and "done:" not in out,
              f"rc {rc}\n{out[-1500:]}")
        check("the error says which variables hold non-finite values, or that "
              "none does",
              "variables holding non-finite values: " in out
              or "every variable is finite" in out, out[-1500:])
        rc, out = finish(start("nan1", worker_args(spec, 0, 400, "--lr", "1e30",
                                                   "--no-check-numerics")))
        check("--no-check-numerics trains on through a non-finite loss",
              rc == 0 and "done:" in out, f"rc {rc}\n{out[-1500:]}")
    finally:
        stop(ps)


def test_usage_errors():
    spec, _ = cluster(1, 1)
    cases = [
        ("--devices with between-async",
         worker_args(spec, 0, 1, "--devices", "cpu:0"), "leave out --devices"),
        ("--target with between-async",
         worker_args(spec, 0, 1, "--target", "grpc://127.0.0.1:1"), "not --target"),
        ("--cluster without between-async",
         ["train", "--model", "mlp", "--cluster", spec, "--job", "worker",
          "--task", "0"], "--cluster goes with --mode between-async"),
        ("a ps task given to weft train",
         ["train", "--model", "mlp", "--mode", "between-async", "--cluster", spec,
          "--job", "ps", "--task", "0"], "runs a worker task, not /job:ps/task:0"),
        ("an unknown ps strategy",
         worker_args(spec, 0, 1, "--ps-strategy", "random"), "unknown ps strategy"),
        ("--replicas-to-aggregate without between-sync",
         worker_args(spec, 0, 1, "--replicas-to-aggregate", "1"),
         "--replicas-to-aggregate goes with --mode between-sync"),
        ("a ps strategy with allreduce",
         worker_args(spec, 0, 1, "--ps-strategy", "greedy-bytes", mode="allreduce"),
         "--ps-strategy does not apply"),
        ("hybrid over another task's device",
         worker_args(spec, 0, 1, "--devices", "/job:worker/task:1/cpu:0,cpu:1",
                     mode="hybrid"), "without a job or task"),
        ("hybrid over one device",
         worker_args(spec, 0, 1, "--devices", "cpu:0", mode="hybrid"),
         "needs 2 or more --devices"),
        ("more gradients to aggregate than workers",
         worker_args(spec, 0, 1, "--replicas-to-aggregate", "2",
                     mode="between-sync"), "is more than the 1 workers"),
    ]
    for name, args, want in cases:
        r = subprocess.run([WEFT, *args], capture_output=True, text=True, timeout=60)
        check(f"usage error: {name}", r.returncode != 0 and want in r.stderr,
              f"rc {r.returncode}: {r.stderr[-400:]}")


def main():
    try:
        for test in (test_usage_errors, test_no_chief_is_named,
                     test_async_training, test_sync_training,
                     test_sync_checkpoints_resume,
                     test_sync_dead_worker, test_sync_stopped_worker,
                     test_allreduce_training,
                     test_allreduce_dead_worker, test_allreduce_checkpoints_resume,
                     test_hybrid_training,
                     test_two_ps_tasks, test_ps_restart_resumes,
                     test_sync_ps_restart_resumes,
                     test_non_finite_loss_stops_training,
                     test_async_chief_killed_is_no_success,
                     test_checkpoints_resume_a_new_cluster):
            try:
                test()
            except Exception as e:  # noqa: BLE001 - reported as a failure
                check(f"{test.__name__} ran to the end", False,
                      f"{type(e).__name__}: {e}")
    finally:
        stop(children)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
