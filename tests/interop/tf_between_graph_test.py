"""Between-graph replication written with TensorFlow's Python API, run on
Weft servers: the workers' graphs placed by tf.compat.v1.train.
replica_device_setter, trained under MonitoredTrainingSession (chief and
non-chief, asynchronous), give the numbers the same program gives on a
TensorFlow cluster of the same shape (1 ps + 2 workers).

The workers take turns (worker 0 trains, then worker 1) so the run is
deterministic and comparable; each uses its own session and its own task's
master, as separate worker processes would.

Synchronous training: SyncReplicasOptimizer (2 of 2 gradients per step)
under MonitoredTrainingSession with its session-run hook and a
StopAtStepHook, both workers at once (threads of this client, each with its
own session). Which worker's gradients make up a step is a race, so both
train on the same batch: whoever computes them, every step applies the
gradient at that step's weights, and the final weights are deterministic.
TensorFlow 2.21 builds this graph with resource accumulators, a token
queue, a global step read through the chief's queue runner, and readiness
checks placed on the worker that read ps variables.

usage: tf_between_graph_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys
import tempfile
import threading

try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from tf_compare import check, summary_exit_code  # noqa: E402
import local_cluster  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_between_tf_")


def worker_graph(cluster, task, sync=False):
    """Worker `task`'s graph; with sync, SyncReplicasOptimizer (2 of 2) wraps
    the optimizer, and the graph's `opt` makes its session-run hook."""
    g = tf1.Graph()
    with g.as_default():
        setter = tf1.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster)
        with tf1.device(setter):
            rng = np.random.RandomState(0)
            x = tf1.placeholder(tf.float32, [None, 4])
            y = tf1.placeholder(tf.float32, [None, 1])
            w = tf1.Variable(rng.randn(4, 1).astype(np.float32), name="w")
            b = tf1.Variable(np.zeros(1, np.float32), name="b")
            loss = tf1.reduce_mean(tf1.square(tf1.matmul(x, w) + b - y))
            step = tf1.train.get_or_create_global_step()
            g.opt = tf1.train.GradientDescentOptimizer(0.1)
            if sync:
                g.opt = tf1.train.SyncReplicasOptimizer(
                    g.opt, replicas_to_aggregate=2, total_num_replicas=2)
            train = g.opt.minimize(loss, global_step=step)
    return g, x, y, loss, train, w, step


def run(kind):
    c = local_cluster.Cluster(WEFT, WORK, {"ps": 1, "worker": 2}, name=kind,
                              tf_jobs=() if kind == "weft" else ("ps", "worker"))
    try:
        cluster = tf.train.ClusterSpec(c.addresses)
        losses, final = [], None
        rng = np.random.RandomState(1)
        for task in (0, 1):
            g, x, y, loss, train, w, step = worker_graph(cluster, task)
            with g.as_default():
                config = tf1.ConfigProto(
                    device_filters=["/job:ps", f"/job:worker/task:{task}"])
                with tf1.train.MonitoredTrainingSession(
                        master=c.target("worker", task), is_chief=task == 0,
                        config=config) as sess:
                    for _ in range(8):
                        xv = rng.randn(8, 4).astype(np.float32)
                        l, _ = sess.run([loss, train],
                                        {x: xv, y: xv.sum(1, keepdims=True)})
                        losses.append(float(l))
                    final = sess.run([w, step])
        return losses, final
    finally:
        c.close()


def sync_run(kind, steps=6):
    """Final (w, global step) and per-worker (status, runs) of a sync job."""
    c = local_cluster.Cluster(WEFT, WORK, {"ps": 1, "worker": 2}, name=kind + "-sync",
                              tf_jobs=() if kind == "weft" else ("ps", "worker"))
    # The chief starts training once worker 1's session is up (else the chief
    # may finish alone while worker 1 waits out its 30 s readiness poll).
    ready = [threading.Event(), threading.Event()]
    status = {}

    def work(task):
        g, x, y, _, train, _, _ = worker_graph(cluster, task, sync=True)
        # One batch for every step of both workers.
        xv = np.random.RandomState(0).randn(8, 4).astype(np.float32)
        feed = {x: xv, y: xv.sum(1, keepdims=True)}
        with g.as_default():
            hooks = [g.opt.make_session_run_hook(task == 0),
                     tf1.train.StopAtStepHook(last_step=steps)]
            config = tf1.ConfigProto(
                device_filters=["/job:ps", f"/job:worker/task:{task}"])
            try:
                if task == 1 and not ready[0].wait(60):
                    raise RuntimeError("the chief's session did not start in 60 s")
                with tf1.train.MonitoredTrainingSession(
                        master=c.target("worker", task), is_chief=task == 0,
                        hooks=hooks, config=config, stop_grace_period_secs=5) as sess:
                    ready[task].set()
                    if task == 0 and not ready[1].wait(60):
                        raise RuntimeError("worker 1's session did not start in 60 s")
                    runs = 0
                    while not sess.should_stop():
                        sess.run(train, feed)
                        runs += 1
                status[task] = ("ok", runs)
            except Exception as e:  # noqa: BLE001 - reported by the caller
                ready[task].set()
                status[task] = ("error", f"{type(e).__name__}: {e}"[:1500])

    try:
        cluster = tf.train.ClusterSpec(c.addresses)
        threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        if any(t.is_alive() for t in threads):
            return None, None, {"hung": "a worker still runs after 120 s"}
        # The ps variables, read by a session of their own.
        g = tf1.Graph()
        with g.as_default(), tf1.device("/job:ps/task:0"):
            w = tf1.Variable(np.zeros((4, 1), np.float32), name="w")
            gs = tf1.Variable(0, dtype=tf.int64, name="global_step")
            with tf1.Session(c.target("worker", 0)) as sess:
                w_value, step_value = sess.run([w, gs])
        return w_value, step_value, status
    finally:
        c.close()


def main():
    try:
        weft_losses, (weft_w, weft_step) = run("weft")
        tf_losses, (tf_w, tf_step) = run("tf")
        check("MonitoredTrainingSession with replica_device_setter, chief then "
              "non-chief worker: Weft servers give TensorFlow's losses",
              np.allclose(weft_losses, tf_losses, rtol=1e-4),
              f"{weft_losses}\nvs {tf_losses}")
        check("the ps variables and the global step end as on TensorFlow",
              np.allclose(weft_w, tf_w, rtol=1e-4) and weft_step == tf_step == 16,
              f"{weft_w.ravel()} step {weft_step} vs {tf_w.ravel()} step {tf_step}")
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("between-graph interop ran to the end", False, f"{type(e).__name__}: {e}")
    try:
        weft_w, weft_step, weft_status = sync_run("weft")
        tf_w, tf_step, tf_status = sync_run("tf")
        check("SyncReplicasOptimizer under MonitoredTrainingSession: both workers "
              "train on Weft servers and stop at the last step",
              set(weft_status) == {0, 1}
              and all(v[0] == "ok" and v[1] >= 1 for v in weft_status.values()),
              f"{weft_status}")
        check("the same program on TensorFlow servers ran too (the reference)",
              set(tf_status) == {0, 1} and all(v[0] == "ok" for v in tf_status.values()),
              f"{tf_status}")
        check("sync: the ps weights and the global step end as on TensorFlow",
              weft_w is not None and tf_w is not None
              and np.allclose(weft_w, tf_w, rtol=1e-4) and weft_step == tf_step == 6,
              f"{None if weft_w is None else weft_w.ravel()} step {weft_step} vs "
              f"{None if tf_w is None else tf_w.ravel()} step {tf_step}")
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("sync between-graph interop ran to the end", False,
              f"{type(e).__name__}: {e}")
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
