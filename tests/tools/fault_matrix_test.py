"""Every fault of the matrix in doc/faults.md: kill -9 or SIGSTOP (never
continued) of the chief, a non-chief worker or the ps, in between-graph
async, sync without and with a backup worker, and all-reduce training.

What must hold in every case, whatever the mode:
  * no hang: every surviving process exits within a bound;
  * no false success: a worker that exits 0 printed a done line for the
    whole job, and only jobs that can finish without the victim (a
    non-chief lost in async, or in sync with a backup worker) may succeed;
  * a survivor that fails names the victim by its address.
The jobs that can finish must finish: the survivors exit 0.

Usage: fault_matrix_test.py WEFT (the between-graph test's helpers)."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import between_graph_cli_test as b  # noqa: E402  (reads sys.argv[1])

T = 5    # --step-timeout-s
W = 10   # --wait-for-chief-s
P = 10   # --wait-for-tasks-s

# mode -> (workers, extra flags, whether losing a non-chief still finishes)
MODES = {
    "between-async": (2, (), True),
    "between-sync": (2, (), False),
    "between-sync-backup": (3, ("--replicas-to-aggregate", "2"), True),
    "allreduce": (2, (), False),
}


def run_case(mode, victim, fault):
    workers, extra, survives_non_chief = MODES[mode]
    real_mode = "between-sync" if mode.startswith("between-sync") else mode
    ring = mode == "allreduce"
    if ring:
        spec = b.ring_cluster(workers)
        addrs = spec.split("worker=")[1].split(",")
        ps_addr = None
    else:
        spec, ps_addrs = b.cluster(1, workers)
        addrs = spec.split("worker=")[1].split(",")
        ps_addr = ps_addrs[0]
    name = f"{mode}-{victim}-{fault}"
    ps = [] if ring else b.start_ps(spec, 1)
    w = {}
    try:
        # Long enough that no job ends before the fault is noticed, short
        # enough that those that survive it end soon.
        steps = 1500
        args = ("--step-timeout-s", str(T), "--wait-for-chief-s", str(W),
                "--wait-for-tasks-s", str(P), "--log-every", "100", *extra)
        for i in reversed(range(workers)):
            w[i] = b.start(f"{name}-w{i}",
                           b.worker_args(spec, i, steps, *args, mode=real_mode))
            if ring:
                time.sleep(0.3)
        started = b.wait_for_line(w[0][1], r"^step +\d+/")
        if victim == "ps":
            target, victim_addr = ps[0][0], ps_addr
        else:
            index = 0 if victim == "chief" else 1
            target, victim_addr = w[index][0], addrs[index]
            del w[index]
        os.kill(target.pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        t = time.time()
        outs = {i: b.finish(p, timeout=120) for i, p in w.items()}
        took = time.time() - t
        may_finish = victim == "non-chief" and survives_non_chief
        hung = [i for i, (rc, _) in outs.items() if rc in (-9, None)]
        b.check(f"{name}: the chief trains before the fault", started)
        b.check(f"{name}: every survivor exits (no hang), within {took:.0f}s",
                not hung and took < 110,
                f"killed at the bound: workers {hung}")
        for i, (rc, out) in outs.items():
            done = b.done_line(out) or b.sync_done(out)
            if may_finish:
                b.check(f"{name}: worker {i} finishes the job and exits 0",
                        rc == 0 and done, out[-900:])
            else:
                b.check(f"{name}: worker {i} fails (the job cannot finish) "
                        f"naming the victim's address {victim_addr}",
                        rc not in (0, None) and victim_addr in out, out[-900:])
    finally:
        procs = list(w.values()) + ps
        if victim != "ps" and fault == "stop":
            procs.append((target, None))
        for p, _ in procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
        b.stop([(p, log) for p, log in procs])


def main():
    only = sys.argv[2:]  # optional case-name prefixes
    try:
        for mode in MODES:
            for victim in ("chief", "non-chief", "ps"):
                if victim == "ps" and mode == "allreduce":
                    continue  # no ps in an all-reduce ring
                for fault in ("kill", "stop"):
                    name = f"{mode}-{victim}-{fault}"
                    if only and not any(name.startswith(o) for o in only):
                        continue
                    try:
                        run_case(mode, victim, fault)
                    except Exception as e:  # noqa: BLE001 - a failure
                        b.check(f"{name} ran to the end", False,
                                f"{type(e).__name__}: {e}")
    finally:
        b.stop(b.children)
    print(f"{b.results['passed']} passed, {b.results['failed']} failed")
    return 1 if b.results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
