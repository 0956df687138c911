"""Conformance: TensorFlow v1 control flow, run by `weft run`.

TensorFlow 2.21 with v1 control flow (tf.compat.v1.disable_control_flow_v2,
so graphs use Switch/Merge/Enter/Exit/NextIteration/LoopCond) builds each
graph: a cond, while loops (a counter sum, power iteration, nested loops, a
loop with a cond inside, a loop inside an untaken cond branch, a long loop)
and gradients through a cond and through while loops (which add the
StackV2 family and ControlTrigger). Each graph is written as a GraphDef
into TEST_TMPDIR with TensorFlow's own outputs; the weft CLI runs it with
the same feeds and every fetched tensor is compared: float32 to 1e-4
relative, integers and bools exactly.

usage: control_flow_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

# tf_compare.py comes from //tests/interop, next to this file in runfiles.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, compare_fetches, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("control_flow")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
tf1.disable_control_flow_v2()

V1_LOOP_OPS = {"Enter", "Exit", "NextIteration", "LoopCond", "Merge", "Switch"}


def tensor(graph, name):
    return graph.get_tensor_by_name(name if ":" in name else name + ":0")


def compare(case, graph, fetches, feeds=(), init=(), want_ops=(), rtol=1e-4, atol=1e-5):
    """Writes `graph`, runs it in TensorFlow and in weft, compares fetches."""
    missing = set(want_ops) - {n.op for n in graph.as_graph_def().node}
    if missing:
        check(f"{case}/uses_v1_ops", False, f"graph lacks {sorted(missing)}")
        return
    tf1.train.write_graph(graph.as_graph_def(), WORK, case + ".pb", as_text=False)
    with tf1.Session(graph=graph) as sess:
        for i in init:
            sess.run(graph.get_operation_by_name(i))
        ref = sess.run([tensor(graph, f) for f in fetches],
                       {tensor(graph, n): v for n, v in feeds})
    proc = run_weft(WEFT, os.path.join(WORK, case + ".pb"), fetches, feeds, init=init)
    compare_fetches(case, proc, fetches, ref, rtol, atol)


rng = np.random.RandomState(0)
f32 = np.float32

# --- cond: both branches, and the gradient through it.
g = tf1.Graph()
with g.as_default():
    pred = tf1.placeholder(tf.bool, [], name="pred")
    x = tf1.placeholder(tf.float32, [3], name="x")
    out = tf1.cond(pred, lambda: tf.tanh(x) * 2.0, lambda: x * x - 1.0, name="cond")
    tf.identity(out, name="out")
    tf.identity(tf.gradients(tf.reduce_sum(out), x)[0], name="dx")
xv = rng.randn(3).astype(f32)
for p in (True, False):
    compare(f"control_flow_cond_{str(p).lower()}", g, ["out", "dx"],
            feeds=[("pred", np.array(p)), ("x", xv)], want_ops=["Switch", "Merge"])

# --- while_loop: counter and running sum, loop count fed.
g = tf1.Graph()
with g.as_default():
    n = tf1.placeholder(tf.int32, [], name="n")
    x = tf1.placeholder(tf.float32, [4], name="x")
    i, acc = tf1.while_loop(lambda i, a: i < n,
                            lambda i, a: (i + 1, a + x * tf.cast(i, tf.float32)),
                            [tf.constant(0), tf.zeros([4])])
    tf.identity(i, name="i_out")
    tf.identity(acc, name="acc_out")
for nv in (0, 1, 7):
    compare(f"control_flow_while_sum_n{nv}", g, ["i_out", "acc_out"],
            feeds=[("n", np.array(nv, np.int32)), ("x", rng.randn(4).astype(f32))],
            want_ops=V1_LOOP_OPS)

# --- while_loop: power iteration (MatMul, norm) with parallel_iterations=1.
g = tf1.Graph()
with g.as_default():
    a = tf1.placeholder(tf.float32, [5, 5], name="a")
    v0 = tf.ones([5, 1]) / np.sqrt(5.0)

    def power_step(k, v):
        w = tf.matmul(a, v)
        return k + 1, w / tf.norm(w)
    _, v = tf1.while_loop(lambda k, v: k < 30, power_step, [0, v0], parallel_iterations=1)
    tf.identity(v, name="v")
    tf.identity(tf.reduce_sum(v * tf.matmul(a, v)), name="eig")
m = rng.randn(5, 5).astype(f32)
compare("control_flow_while_power", g, ["v", "eig"], feeds=[("a", m @ m.T)],
        want_ops=V1_LOOP_OPS)

# --- nested while_loop: the inner loop's trip count depends on the outer.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [3], name="x")

    def outer(i, acc):
        def inner(j, b):
            return j + 1, b + x * tf.cast(i * 10 + j, tf.float32)
        j, b = tf1.while_loop(lambda j, b: j < i, inner, [0, acc])
        return i + 1, b + tf.cast(j, tf.float32)
    i, r = tf1.while_loop(lambda i, a: i < 5, outer, [0, tf.zeros([3])])
    tf.identity(i, name="i_out")
    tf.identity(r, name="r")
    tf.identity(tf.gradients(tf.reduce_sum(r * r), x)[0], name="dx")
compare("control_flow_while_nested", g, ["i_out", "r", "dx"],
        feeds=[("x", rng.randn(3).astype(f32))], want_ops=V1_LOOP_OPS | {"StackV2"})

# --- a cond inside the loop body: the untaken branch is dead per iteration.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [2], name="x")

    def body(i, a):
        a = tf1.cond(tf.equal(i % 3, 0), lambda: a * 2.0, lambda: a - x)
        return i + 1, a
    _, r = tf1.while_loop(lambda i, a: i < 10, body, [0, x])
    tf.identity(r, name="r")
    tf.identity(tf.gradients(tf.reduce_sum(r), x)[0], name="dx")
compare("control_flow_while_cond_inside", g, ["r", "dx"],
        feeds=[("x", rng.randn(2).astype(f32))], want_ops=V1_LOOP_OPS)

# --- a loop inside the untaken branch of a cond: the whole frame is dead.
g = tf1.Graph()
with g.as_default():
    pred = tf1.placeholder(tf.bool, [], name="pred")
    x = tf1.placeholder(tf.float32, [2], name="x")

    def looped():
        return tf1.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 1.5), [0, x])[1]
    r = tf1.cond(pred, looped, lambda: x + 100.0)
    tf.identity(r, name="r")
for p in (True, False):
    compare(f"control_flow_loop_in_cond_{str(p).lower()}", g, ["r"],
            feeds=[("pred", np.array(p)), ("x", rng.randn(2).astype(f32))],
            want_ops=V1_LOOP_OPS)

# --- gradient through a loop, wrt a fed input and a (ref) variable.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [3], name="x")
    w = tf1.Variable(rng.randn(3).astype(f32), name="w", use_resource=False)
    _, r = tf1.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.tanh(a * w) + x),
                          [0, x])
    tf.identity(r, name="r")
    dw, dx = tf.gradients(tf.reduce_sum(r * r), [w, x])
    tf.identity(dw, name="dw")
    tf.identity(dx, name="dx")
compare("control_flow_while_grad", g, ["r", "dw", "dx"], init=["w/Assign"],
        feeds=[("x", rng.randn(3).astype(f32))],
        want_ops=V1_LOOP_OPS | {"StackV2", "StackPushV2", "StackPopV2", "ControlTrigger"})

# --- a long loop (many iterations through the recycled frame state).
g = tf1.Graph()
with g.as_default():
    n = tf1.placeholder(tf.int32, [], name="n")
    i, s = tf1.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * i),
                          [tf.constant(0), tf.constant(0)], parallel_iterations=32)
    tf.identity(i, name="i_out")
    tf.identity(s, name="s_out")
compare("control_flow_while_long", g, ["i_out", "s_out"],
        feeds=[("n", np.array(5000, np.int32))], want_ops=V1_LOOP_OPS)

sys.exit(summary_exit_code())
