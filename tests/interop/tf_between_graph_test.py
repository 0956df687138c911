"""Between-graph replication written with TensorFlow's Python API, run on
Weft servers: the workers' graphs placed by tf.compat.v1.train.
replica_device_setter, trained under MonitoredTrainingSession (chief and
non-chief, asynchronous), give the numbers the same program gives on a
TensorFlow cluster of the same shape (1 ps + 2 workers).

The workers take turns (worker 0 trains, then worker 1) so the run is
deterministic and comparable; each uses its own session and its own task's
master, as separate worker processes would. Synchronous training
(SyncReplicasOptimizer) needs TensorFlow 2.x functions and lands with them.

usage: tf_between_graph_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys
import tempfile

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


def worker_graph(cluster, task):
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
            train = tf1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=step)
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
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
