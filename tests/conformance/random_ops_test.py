"""Conformance: TensorFlow's random ops in TF1 programs, run by `weft run`
against TensorFlow 2.21 on the same GraphDef, bit for bit.

The stateless family (tf.random.stateless_* in every dtype, their V1 ops
through tf.raw_ops, the key/counter ops, a Keras initializer and a
stateless dropout mask) the stateful shuffle (tf.random.shuffle with graph
and op seeds, two steps in: the stream goes on), and tf.random.categorical
and its stateless form.

usage: random_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("random_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()



def exact(case, graph, fetches, init=(), steps=1):
    """The last of `steps` runs of `fetches`, in TensorFlow and in weft:
    equal bit for bit."""
    compare_tf1_graph(WEFT, WORK, case, graph, fetches, init, steps, 0.0, 0.0)


# --- tf.random.stateless_*: V2 ops behind StatelessRandomGetKeyCounter.
for seed in ([1, 2], [-7, 123456], [0, 0]):
    g = tf1.Graph()
    with g.as_default():
        s = tf1.constant(seed, tf.int64)
        fetches = []
        for dt in (tf.float32, tf.float64):
            n = dt.name
            tf1.identity(tf.random.stateless_uniform([5, 3], s, dtype=dt), name=f"u_{n}")
            tf1.identity(tf.random.stateless_normal([7], s, dtype=dt), name=f"n_{n}")
            tf1.identity(tf.random.stateless_truncated_normal([2, 9], s, dtype=dt), name=f"t_{n}")
            fetches += [f"u_{n}", f"n_{n}", f"t_{n}"]
        # 16-bit floats through the raw V2 ops (tf.random.* scales them with
        # half arithmetic, a separate op family).
        key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=s)
        for dt in (tf.float16, tf.bfloat16):
            for op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2",
                       "StatelessTruncatedNormalV2"):
                name = f"{op}_{dt.name}"
                tf1.identity(tf.cast(getattr(tf.raw_ops, op)(
                    shape=[3, 5], key=key, counter=counter, alg=1, dtype=dt), tf.float32), name=name)
                fetches.append(name)
        tf1.identity(tf.random.stateless_uniform([6], s, minval=-5, maxval=1000, dtype=tf.int32), name="i32")
        tf1.identity(tf.random.stateless_uniform([6], s, minval=-(1 << 40), maxval=1 << 41, dtype=tf.int64), name="i64")
        tf1.identity(tf.random.stateless_uniform([6], s, minval=None, maxval=None, dtype=tf.int64), name="full")
        tf1.identity(tf.random.stateless_uniform([3], s, minval=2.0, maxval=5.0), name="scaled")
        fetches += ["i32", "i64", "full", "scaled"]
    exact(f"stateless_v2_{seed[0]}_{seed[1]}", g, fetches)

# --- The V1 ops (a seed input), and the key/counter/alg ops themselves.
g = tf1.Graph()
with g.as_default():
    s32 = tf1.constant([3, -4], tf.int32)
    tf1.identity(tf.raw_ops.StatelessRandomUniform(shape=[4, 4], seed=s32), name="v1_uniform")
    tf1.identity(tf.raw_ops.StatelessRandomNormal(shape=[9], seed=s32, dtype=tf.float64), name="v1_normal")
    tf1.identity(tf.raw_ops.StatelessTruncatedNormal(shape=[9], seed=s32), name="v1_truncated")
    tf1.identity(tf.raw_ops.StatelessRandomUniformInt(
        shape=[8], seed=s32, minval=tf1.constant(-3), maxval=tf1.constant(3)), name="v1_int")
    tf1.identity(tf.raw_ops.StatelessRandomUniformFullInt(shape=[4], seed=s32, dtype=tf.int32), name="v1_full")
    key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=s32)
    tf1.identity(key, name="key")
    tf1.identity(counter, name="counter")
    tf1.identity(alg, name="alg")
    tf1.identity(tf.raw_ops.StatelessRandomGetAlg(), name="get_alg")
exact("stateless_v1", g, ["v1_uniform", "v1_normal", "v1_truncated", "v1_int", "v1_full",
                          "key", "counter", "alg", "get_alg"])

# --- A Keras initializer (as a layer's kernel is initialized) into a
# variable, and a stateless dropout mask applied to it.
g = tf1.Graph()
with g.as_default():
    init_value = tf.keras.initializers.GlorotUniform(seed=42)((16, 8))
    w = tf1.Variable(init_value, name="w")
    init = tf1.global_variables_initializer()
    mask = tf.random.stateless_uniform([16, 8], seed=[7, 8]) >= 0.5
    tf1.identity(tf.where(mask, w * 2.0, tf.zeros_like(w)), name="dropped")
    tf1.identity(tf.keras.initializers.HeNormal(seed=5)((4, 3)), name="he")
exact("keras_initializers", g, ["dropped", "he"], init=[init.name])

# --- tf.random.shuffle with graph and op seeds: vectors and matrices (rows
# move whole), two steps in.
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(9)
    tf1.identity(tf.random.shuffle(tf.range(100), seed=4), name="vector")
    tf1.identity(tf.random.shuffle(tf.reshape(tf.range(30.0), [10, 3]), seed=5), name="rows")
    tf1.identity(tf.random.shuffle(tf.constant(["a", "b", "c", "d", "e"]), seed=6), name="strings")
exact("random_shuffle", g, ["vector", "rows", "strings"], steps=2)

# --- tf.random.categorical (Multinomial) with graph and op seeds, two steps
# in, and tf.random.stateless_categorical: the same classes as TensorFlow.
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(11)
    logits = tf1.constant([[0.0, 1.0, 2.0, -1.0], [3.0, 0.5, float("-inf"), 0.0],
                           [0.1, 0.2, 0.3, 0.4]])
    tf1.identity(tf.random.categorical(logits, 7, seed=3), name="cat")
    tf1.identity(tf.random.categorical(tf.cast(logits, tf.float64), 5, seed=4,
                                       dtype=tf.int32), name="cat_f64")
    tf1.identity(tf.random.stateless_categorical(logits, 9, seed=[5, 6]),
                 name="stateless_cat")
exact("categorical", g, ["cat", "cat_f64", "stateless_cat"],
      steps=2)

# --- tf.random.gamma: TensorFlow's samples for alphas below, at and above
# one, float and double, [samples] + alpha.shape, two steps in.
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(21)
    alpha = tf1.constant([[0.3, 1.0], [2.5, 40.0]])
    tf1.identity(tf.random.gamma([5], alpha, seed=2), name="gamma")
    tf1.identity(tf.random.gamma([3, 2], tf.cast(alpha, tf.float64), dtype=tf.float64, seed=9),
                 name="gamma_f64")
    tf1.identity(tf.random.gamma([7], 0.05, beta=2.0, seed=4), name="gamma_beta")
    tf1.identity(tf.raw_ops.RandomGamma(shape=[4], alpha=tf1.constant([0.5, 1.0, 3.0], tf.float16),
                                        seed=5, seed2=6), name="gamma_f16")
    # tf.random.gamma broadcasts alpha and beta with BroadcastArgs.
    tf1.identity(tf.raw_ops.BroadcastArgs(s0=[2, 1, 3], s1=[4, 1]), name="bcast")
exact("gamma", g, ["gamma", "gamma_f64", "gamma_beta", "gamma_f16", "bcast"], steps=2)

# --- tf.random.poisson (RandomPoissonV2; TensorFlow no longer builds the V1
# op, which shares the kernel): rates below 10
# (Knuth's) and from 10 (Hormann's), int and float outputs, two steps in.
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(33)
    lam = tf1.constant([[0.5, 3.0, 9.9], [10.0, 42.0, 1500.0]])
    tf1.identity(tf.random.poisson([4], lam, seed=7), name="poisson")
    tf1.identity(tf.random.poisson([2, 3], lam, dtype=tf.int64, seed=8), name="poisson_i64")
    tf1.identity(tf.random.poisson([3], tf.cast(lam, tf.float64), dtype=tf.int32, seed=9),
                 name="poisson_i32")
exact("poisson", g, ["poisson", "poisson_i64", "poisson_i32"], steps=2)

sys.exit(summary_exit_code())
