"""Conformance: ParameterizedTruncatedNormal, its stateless form and
RandomGammaGrad in TF1 programs, run by `weft run` against TensorFlow 2.21
on the same GraphDef, bit for bit.

The truncated normals cover the three samplers TensorFlow picks between
(normal rejection, uniform rejection, exponential rejection in a far tail),
one-sided bounds on either side, bounds below the mean, per-batch
parameter vectors mixing the samplers, broadcast parameters of the stateless
form, half, float and double, empty outputs, and a second step of the
stateful op (its stream goes on). TensorFlow runs with one intra-op thread:
its threaded runs start each shard at its own place in the stream, so only
its one-thread numbers are machine-independent, and those are Weft's.

usage: random_param_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_fetches, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("random_param")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

INF = float("inf")


def compare(case, graph, fetches, steps=1, rtol=0.0, atol=0.0):
    """The last of `steps` runs of `fetches` in TensorFlow (one intra-op
    thread) and in weft: equal bit for bit unless told otherwise."""
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf1.Session(graph=graph, config=config) as sess:
        for _ in range(steps):
            ref = sess.run([graph.get_tensor_by_name(f + ":0") for f in fetches])
    compare_fetches(case, run_weft(WEFT, path, fetches, steps=steps), fetches, ref, rtol, atol)


# (mean, stddev, minval, maxval): normal rejection, uniform rejection
# (narrow and wide-ish), exponential rejection (far tails, one-sided on
# either side), bounds below the mean, both bounds far out.
SCALAR_CASES = [
    (0.0, 1.0, -2.0, 2.0), (0.0, 1.0, -1.0, 1.0), (1.0, 0.1, 0.95, 1.5),
    (0.0, 1.0, 0.5, 0.6), (0.0, 1.0, 3.0, INF), (0.0, 1.0, -INF, -3.0),
    (5.0, 2.0, -INF, 4.0), (0.0, 1.0, 10.0, 12.0), (0.0, 1.0, -10.0, 10.0),
    (-3.0, 0.5, -INF, 100.0), (0.0, 1.0, -0.0, 0.25),
    (2.0, 3.0, -1.0, INF), (0.0, 1e-3, 1e-2, 2e-2), (100.0, 30.0, 0.0, 50.0),
]

for dt in (tf.float32, tf.float64, tf.float16):
    g = tf1.Graph()
    with g.as_default():
        fetches = []
        for i, (m, s, lo, hi) in enumerate(SCALAR_CASES):
            c = lambda v: tf1.constant(v, dt)  # noqa: E731
            name = f"ptn_{i}"
            out = tf.raw_ops.ParameterizedTruncatedNormal(
                shape=[3, 70] if i % 2 else [257], means=c(m), stdevs=c(s), minvals=c(lo),
                maxvals=c(hi), seed=7 + i, seed2=11)
            tf1.identity(tf.cast(out, tf.float64), name=name)
            fetches.append(name)
            sname = f"sptn_{i}"
            out = tf.raw_ops.StatelessParameterizedTruncatedNormal(
                shape=[5, 41], seed=tf1.constant([i, -3], tf.int64), means=c(m), stddevs=c(s),
                minvals=c(lo), maxvals=c(hi))
            tf1.identity(tf.cast(out, tf.float64), name=sname)
            fetches.append(sname)
    compare(f"scalar_params_{dt.name}", g, fetches)

# Per-batch parameter vectors (shape[0] batches), mixing the samplers; the
# stateful op twice (the second step's numbers).
for dt in (tf.float32, tf.float64, tf.float16):
    g = tf1.Graph()
    with g.as_default():
        means = tf1.constant([0.0, 1.0, -2.0, 0.0, 3.0], dt)
        stds = tf1.constant([1.0, 0.5, 2.0, 1.0, 0.25], dt)
        mins = tf1.constant([-2.0, 1.2, -INF, 2.5, 2.9], dt)
        maxs = tf1.constant([2.0, INF, -1.0, 2.6, 3.1], dt)
        tf1.identity(tf.cast(tf.raw_ops.ParameterizedTruncatedNormal(
            shape=[5, 3, 7], means=means, stdevs=stds, minvals=mins, maxvals=maxs,
            seed=1, seed2=2), tf.float64), name="vec")
        tf1.identity(tf.cast(tf.raw_ops.ParameterizedTruncatedNormal(
            shape=tf1.constant([5, 9], tf.int64), means=tf1.constant([0.5], dt), stdevs=stds,
            minvals=tf1.constant(0.0, dt), maxvals=tf1.constant([2.0, INF, 1.0, 2.6, 0.01], dt),
            seed=3, seed2=4), tf.float64), name="mixed")
        tf1.identity(tf.cast(tf.raw_ops.ParameterizedTruncatedNormal(
            shape=[0, 4], means=means[:0], stdevs=stds[:1], minvals=mins[0], maxvals=maxs[0],
            seed=1, seed2=2), tf.float64), name="empty")
    compare(f"vector_params_{dt.name}_step2", g, ["vec", "mixed", "empty"], steps=2)

# The stateless form with broadcast parameters: [3, 1] x [4] -> batches
# [3, 4], samples in front; int32 and int64 seeds and shapes.
for dt in (tf.float32, tf.float64, tf.float16):
    g = tf1.Graph()
    with g.as_default():
        c = lambda v: tf1.constant(v, dt)  # noqa: E731
        means = c([[0.0], [1.0], [-4.0]])
        stds = c([1.0, 2.0, 0.5, 3.0])
        mins = c(-1.5)
        maxs = c([[INF], [2.0], [3.0]])
        tf1.identity(tf.cast(tf.raw_ops.StatelessParameterizedTruncatedNormal(
            shape=tf1.constant([6, 3, 4], tf.int32), seed=tf1.constant([17, 23], tf.int32),
            means=means, stddevs=stds, minvals=mins, maxvals=maxs), tf.float64), name="bcast")
        tf1.identity(tf.cast(tf.raw_ops.StatelessParameterizedTruncatedNormal(
            shape=tf1.constant([2, 5, 3, 4], tf.int64), seed=tf1.constant([-1, 1 << 40], tf.int64),
            means=means, stddevs=stds, minvals=mins, maxvals=maxs), tf.float64), name="bcast2")
        tf1.identity(tf.cast(tf.raw_ops.StatelessParameterizedTruncatedNormal(
            shape=[0, 3, 4], seed=tf1.constant([1, 2], tf.int64),
            means=means, stddevs=stds, minvals=mins, maxvals=maxs), tf.float64), name="empty")
    compare(f"stateless_broadcast_{dt.name}", g, ["bcast", "bcast2", "empty"])

# RandomGammaGrad: d sample / d alpha, broadcasting alpha [4, 1] against
# samples [6], over small, unit and large alphas and samples (and 0).
for dt in (tf.float32, tf.float64):
    g = tf1.Graph()
    with g.as_default():
        alpha = tf1.constant([[0.1], [1.0], [3.5], [250.0]], dt)
        sample = tf1.constant([1e-6, 0.05, 0.7, 1.0, 4.2, 300.0], dt)
        tf1.identity(tf.raw_ops.RandomGammaGrad(alpha=alpha, sample=sample), name="grad")
        tf1.identity(tf.raw_ops.RandomGammaGrad(alpha=tf1.constant(2.0, dt),
                                                sample=tf1.constant(0.0, dt)), name="zero")
    compare(f"random_gamma_grad_{dt.name}", g, ["grad", "zero"])

sys.exit(summary_exit_code())
