"""Conformance: TensorFlow 1.x ref-variable and random programs, run by
`weft run` against TensorFlow 2.21 on the same GraphDef.

Each graph holds a ref variable (tf.compat.v1.Variable, use_resource=False)
or a resource variable, and one of the ops TF1 programs apply to it: the
Scatter* family (ref and resource), embedding_lookup (ResourceGather),
count_up_to, is_variable_initialized (before and after the init op); and
an integer random_uniform with graph and op seeds, whose numbers must match
bit for bit. Every fetched tensor is compared: floats to 1e-6 relative,
integers and bools exactly.

usage: state_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

# tf_compare.py comes from //tests/interop, next to this file in runfiles.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("state_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()



def compare(case, graph, fetches, init=(), steps=1, rtol=1e-6, atol=1e-6):
    """Runs `graph` in TensorFlow (init once, then `steps` runs of the
    fetches; the last run's values) and in weft, and compares them."""
    compare_tf1_graph(WEFT, WORK, case, graph, fetches, init, steps, rtol, atol)


# --- Scatter*: one op a graph (several in one step would race).
VALUE = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
INDICES = [2, 0, 2]  # row 2 twice
UPDATES = np.array([[1, 1], [2, 2], [3, 3]], np.float32)
SCATTERS = [("update", tf1.scatter_update), ("add", tf1.scatter_add),
            ("sub", tf1.scatter_sub), ("mul", tf1.scatter_mul),
            ("div", tf1.scatter_div), ("min", tf1.scatter_min),
            ("max", tf1.scatter_max)]
for name, fn in SCATTERS:
    g = tf1.Graph()
    with g.as_default():
        v = tf1.Variable(VALUE, name="v", use_resource=False)
        init = tf1.global_variables_initializer()
        tf1.identity(fn(v, tf1.constant(INDICES), tf1.constant(UPDATES)), name="out")
    # scatter_update with a repeated index keeps the last, as TensorFlow.
    compare(f"scatter_{name}", g, ["out"], init=[init.name])

# --- The same on a resource variable (ResourceScatter*), read back whole,
# and an embedding lookup (ResourceGather) of the result.
for name, fn in SCATTERS:
    g = tf1.Graph()
    with g.as_default():
        v = tf1.Variable(VALUE, name="v", use_resource=True)
        init = tf1.global_variables_initializer()
        with tf1.control_dependencies([fn(v, tf1.constant(INDICES), tf1.constant(UPDATES))]):
            tf1.identity(v.read_value(), name="out")
        tf1.identity(tf.nn.embedding_lookup(v, tf1.constant([[2, 0], [1, 1]])), name="rows")
    compare(f"resource_scatter_{name}", g, ["out"], init=[init.name], steps=2)
    compare(f"resource_gather_{name}", g, ["rows"], init=[init.name])

# --- The N-d forms: scatter_nd_* on ref and resource variables (element and
# row indices, one named twice), gather_nd from a resource variable, and the
# functional ops (gather_nd, scatter_nd, tensor_scatter_nd_*).
ND_INDICES = [[2, 1], [0, 0], [2, 1]]
ND_UPDATES = np.array([1.5, -2.0, 4.0], np.float32)
for name, fn in [("update", tf1.scatter_nd_update), ("add", tf1.scatter_nd_add),
                 ("sub", tf1.scatter_nd_sub)]:
    for resource in (False, True):
        g = tf1.Graph()
        with g.as_default():
            v = tf1.Variable(VALUE, name="v", use_resource=resource)
            init = tf1.global_variables_initializer()
            op = fn(v, tf1.constant(ND_INDICES), tf1.constant(ND_UPDATES))
            with tf1.control_dependencies([op]):
                tf1.identity(v.read_value(), name="out")
            if resource:
                tf1.identity(tf.gather_nd(v, [[1], [2]]), name="rows")
        kind = "resource" if resource else "ref"
        compare(f"scatter_nd_{name}_{kind}", g, ["out"], init=[init.name], steps=2)
        if resource:
            compare(f"resource_gather_nd_{name}", g, ["rows"], init=[init.name])
g = tf1.Graph()
with g.as_default():
    t = tf1.constant(VALUE)
    rows = tf1.constant([[2], [0], [2]])
    tf1.identity(tf.gather_nd(t, ND_INDICES), name="gather_nd")
    tf1.identity(tf.gather_nd(t, rows), name="gather_nd_rows")
    tf1.identity(tf.scatter_nd(rows, UPDATES, [4, 2]), name="scatter_nd")
    for name in ("update", "add", "sub", "min", "max"):
        fn = getattr(tf, f"tensor_scatter_nd_{name}")
        tf1.identity(fn(t, rows, UPDATES), name=f"tensor_scatter_{name}")
compare("nd_functional", g, ["gather_nd", "gather_nd_rows", "scatter_nd"] +
        [f"tensor_scatter_{n}" for n in ("update", "add", "sub", "min", "max")])

# --- Sparse momentum: TF1's MomentumOptimizer on an embedding lookup (an
# IndexedSlices gradient, a row twice) applies (Resource)SparseApplyMomentum;
# three steps in, with and without Nesterov.
for resource in (False, True):
    for nesterov in (False, True):
        g = tf1.Graph()
        with g.as_default():
            emb = tf1.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10,
                               name="emb", use_resource=resource)
            rows = tf.nn.embedding_lookup(emb, tf1.constant([3, 1, 3]))
            loss = tf1.reduce_sum(rows * rows)
            opt = tf1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=nesterov)
            train = opt.minimize(loss)
            init = tf1.global_variables_initializer()
            with tf1.control_dependencies([train]):
                tf1.identity(emb.read_value(), name="after")
        kind = ("resource" if resource else "ref") + ("_nesterov" if nesterov else "")
        compare(f"sparse_momentum_{kind}", g, ["after"], init=[init.name], steps=3)

# --- count_up_to: the value before, three steps in.
g = tf1.Graph()
with g.as_default():
    c = tf1.Variable(np.int64(0), name="c", use_resource=False)
    init = tf1.global_variables_initializer()
    tf1.identity(tf1.count_up_to(c, 5), name="count")
compare("count_up_to", g, ["count"], init=[init.name], steps=3)

# --- is_variable_initialized, before and after the init op.
g = tf1.Graph()
with g.as_default():
    v = tf1.Variable([1.0, 2.0], name="v", use_resource=False)
    init = tf1.global_variables_initializer()
    tf1.identity(tf1.is_variable_initialized(v), name="ready")
compare("is_variable_initialized_before", g, ["ready"])
compare("is_variable_initialized_after", g, ["ready"], init=[init.name])

# --- Integer random_uniform with graph and op seeds: TensorFlow's numbers,
# two steps in (the stream goes on).
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(3)
    tf1.identity(tf1.random.uniform([6], -7, 100, dtype=tf.int32, seed=11), name="i32")
    tf1.identity(tf1.random.uniform([4], -(1 << 40), 1 << 41, dtype=tf.int64), name="i64")
compare("random_uniform_int", g, ["i32", "i64"], steps=2)

# --- A ref variable's read aliases its buffer: a `v/read` used after an
# in-place update in the same step sees the update, whichever ran first
# (SyncReplicasOptimizer fills its token queue so from `global_step/read`).
# (A resource variable's read races with the update there: not compared.)
g = tf1.Graph()
with g.as_default():
    step = tf1.Variable(0, name="step", use_resource=False, dtype=tf.int64)
    w = tf1.Variable([1.0, 2.0], name="w", use_resource=False)
    init = tf1.global_variables_initializer()
    read = step.value()   # the Identity made with the variable
    w_read = w.value()
    bump = tf1.assign_add(step, 1)
    sgd = tf1.train.GradientDescentOptimizer(0.5).apply_gradients(
        [(tf1.constant([1.0, 1.0]), w)])
    with tf1.control_dependencies([bump, sgd]):
        tf1.identity(tf1.fill([3], read), name="tokens")
        tf1.identity(w_read * 1.0, name="w_after")
compare("ref_read_after_update", g, ["tokens", "w_after"], init=[init.name], steps=2)

sys.exit(summary_exit_code())
