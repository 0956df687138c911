"""End-to-end: graphs written by real TensorFlow 2.21, run by `weft run`.

Each case builds a graph with tf.compat.v1, writes it as a binary .pb (and
some as text .pbtxt), computes reference fetches with a TensorFlow session,
then runs the weft CLI on the file with the same feeds and compares every
fetched tensor (float32 to 1e-5 relative, integers and bools exactly).
A few broken cases check weft's error line and exit code.

usage: tf_reference_test.py PATH_TO_WEFT
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
from tf_compare import check, compare_fetches, summary_exit_code  # noqa: E402
from tf_compare import run_weft as run_weft_at  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_interop_")


def run_weft(path, fetches, feeds=(), targets=(), init=(), steps=1):
    return run_weft_at(WEFT, path, fetches, feeds, targets, init, steps)


def write_graph(graph, name, text=False):
    path = os.path.join(WORK, name + (".pbtxt" if text else ".pb"))
    tf1.train.write_graph(graph.as_graph_def(), WORK, os.path.basename(path), as_text=text)
    return path


def compare(case, graph, fetches, feeds=(), targets=(), init=(), steps=1,
            text=False, rtol=1e-5, atol=1e-6):
    """Runs the graph in TF and in weft; compares the fetches."""
    path = write_graph(graph, case, text)
    with tf1.Session(graph=graph) as sess:
        feed_dict = {graph.get_tensor_by_name(n if ":" in n else n + ":0"): v for n, v in feeds}
        for i in init:
            sess.run(graph.get_operation_by_name(i))
        for _ in range(steps):
            ref = sess.run([graph.get_tensor_by_name(f if ":" in f else f + ":0") for f in fetches]
                           + [graph.get_operation_by_name(t) for t in targets], feed_dict)
        ref = ref[:len(fetches)]
    proc = run_weft(path, fetches, feeds, targets, init, steps)
    compare_fetches(case, proc, fetches, ref, rtol, atol)


def expect_error(case, path, fetches, feeds=(), code="INVALID_ARGUMENT", mention=""):
    proc = run_weft(path, fetches, feeds)
    line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    ok = (proc.returncode == 1 and line.startswith(f"error: {code}:" if code else "error: ")
          and mention in line)
    check(case, ok, f"exit {proc.returncode}, stderr {proc.stderr.strip()!r}")


rng = np.random.RandomState(0)

# --- MLP forward pass: MatMul, BiasAdd, Relu, Softmax, ArgMax, with feeds.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [None, 16], name="x")
    w1 = tf.constant(rng.randn(16, 32).astype(np.float32), name="w1")
    b1 = tf.constant(rng.randn(32).astype(np.float32), name="b1")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1), name="h")
    w2 = tf.constant(rng.randn(32, 10).astype(np.float32), name="w2")
    logits = tf.matmul(h, w2, name="logits")
    tf.nn.softmax(logits, name="probs")
    tf.argmax(logits, axis=1, name="cls")
    tf.matmul(x, w1, transpose_a=False, name="mm_plain")
    tf.matmul(w1, x, transpose_a=True, transpose_b=True, name="mm_tt")
xv = rng.randn(8, 16).astype(np.float32)
compare("mlp_forward", g, ["h", "probs", "cls", "mm_tt"], feeds=[("x", xv)])
compare("mlp_forward_text", g, ["probs", "cls"], feeds=[("x", xv)], text=True)

# --- Element-wise math with broadcasting.
g = tf1.Graph()
with g.as_default():
    a = tf1.placeholder(tf.float32, [3, 1], name="a")
    b = tf1.placeholder(tf.float32, [1, 4], name="b")
    tf.add(a, b, name="add")
    tf.raw_ops.AddV2(x=a, y=b, name="addv2")
    tf.subtract(a, b, name="sub")
    tf.multiply(a, b, name="mul")
    tf.realdiv(a, b, name="realdiv")
    tf.maximum(a, b, name="max")
    tf.minimum(a, b, name="min")
    tf.pow(tf.abs(a) + 1.0, b, name="pow")
    tf.sqrt(tf.abs(b) + 1.0, name="sqrt")
    tf.math.rsqrt(tf.abs(b) + 1.0, name="rsqrt")
    tf.exp(a, name="exp")
    tf.math.log(tf.abs(a) + 1.0, name="log")
    tf.tanh(b, name="tanh")
    tf.sigmoid(b, name="sigmoid")
    tf.square(a, name="square")
    tf.negative(b, name="neg")
    tf.add_n([a, a, a], name="addn")
    tf.equal(a, b, name="eq")
    tf.greater(a, b, name="gt")
    tf.less(a, b, name="lt")
    tf.stop_gradient(a, name="stopgrad")
    tf.cast(a * 10.0, tf.int32, name="cast")
av = rng.randn(3, 1).astype(np.float32)
bv = np.array([[av[0, 0], 0.5, -1.0, 2.0]], dtype=np.float32)
compare("elementwise", g, ["add", "addv2", "sub", "mul", "realdiv", "max", "min", "pow",
                           "sqrt", "rsqrt", "exp", "log", "tanh", "sigmoid", "square",
                           "neg", "addn", "eq", "gt", "lt", "stopgrad", "cast"],
        feeds=[("a", av), ("b", bv)])

# --- Integer division semantics.
g = tf1.Graph()
with g.as_default():
    p = tf1.placeholder(tf.int32, [4], name="p")
    q = tf.constant([3, -3, 2, -2], name="q")
    tf.math.floordiv(p, q, name="floordiv")
    tf.raw_ops.Div(x=p, y=q, name="div")
    tf.add(p, q, name="iadd")
compare("int_math", g, ["floordiv", "div", "iadd"], feeds=[("p", np.array([7, 7, -7, -7], np.int32))])

# --- Reductions.
g = tf1.Graph()
with g.as_default():
    r = tf1.placeholder(tf.float32, [2, 3, 4], name="r")
    tf.reduce_sum(r, axis=[0, 2], name="sum02")
    tf.reduce_mean(r, axis=1, keepdims=True, name="mean1k")
    tf.reduce_max(r, axis=-1, name="maxlast")
    tf.reduce_prod(r, axis=[1], name="prod1")
    tf.reduce_sum(r, name="sumall")
    tf.argmax(r, axis=2, name="argmax2")
compare("reductions", g, ["sum02", "mean1k", "maxlast", "prod1", "sumall", "argmax2"],
        feeds=[("r", rng.randn(2, 3, 4).astype(np.float32))])

# --- Array ops.
g = tf1.Graph()
with g.as_default():
    s = tf1.placeholder(tf.float32, [2, 3], name="s")
    tf.reshape(s, [3, -1], name="reshape")
    tf.shape(s, name="shape")
    tf.size(s, name="size")
    tf.rank(s, name="rank")
    tf.fill([2, 2], 7.0, name="fill")
    tf.zeros_like(s, name="zeros")
    tf.ones_like(s, name="ones")
    e = tf.expand_dims(s, 1, name="expand")
    tf.squeeze(e, axis=[1], name="squeeze")
    tf.transpose(s, name="transpose")
    tf.concat([s, s * 2.0], axis=1, name="concat")
    tf.stack([s, s], axis=0, name="pack")
    tf.tile(s, [2, 2], name="tile")
    tf.identity(s, name="ident")
    tf.identity_n([s, s], name="identn")
    tf1.placeholder_with_default(tf.constant([1.0, 2.0]), [2], name="pwd")
compare("array_ops", g, ["reshape", "shape", "size", "rank", "fill", "zeros", "ones",
                         "expand", "squeeze", "transpose", "concat", "pack", "tile",
                         "ident", "identn:1", "pwd"],
        feeds=[("s", rng.randn(2, 3).astype(np.float32))])

# --- Sparse softmax cross-entropy (forward: loss and backprop).
g = tf1.Graph()
with g.as_default():
    lg = tf1.placeholder(tf.float32, [4, 5], name="lg")
    lb = tf1.placeholder(tf.int64, [4], name="lb")
    tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=lg, labels=lb, name="xent")
compare("sparse_xent", g, ["xent:0", "xent:1"],
        feeds=[("lg", rng.randn(4, 5).astype(np.float32)), ("lb", np.array([0, 4, 2, 1], np.int64))])

# --- Training with legacy ref variables (VariableV2, Assign, ApplyGradientDescent).
tf1.disable_resource_variables()
g = tf1.Graph()
with g.as_default():
    w = tf1.Variable(rng.randn(3, 1).astype(np.float32), name="w")
    xs = tf.constant(rng.randn(16, 3).astype(np.float32))
    ys = tf.constant(rng.randn(16, 1).astype(np.float32))
    err = tf.matmul(xs, w) - ys
    loss = tf.reduce_mean(tf.square(err), name="loss")
    grad = tf.matmul(xs, err, transpose_a=True) * (2.0 / 16)
    upd = tf.raw_ops.ApplyGradientDescent(var=w._ref(), alpha=0.05, delta=grad, name="update")
    tf.raw_ops.AssignAdd(ref=w._ref(), value=tf.zeros([3, 1]), name="noop_add")
    tf.group(upd, name="train")
    init_name = tf1.global_variables_initializer().name
compare("ref_variables_sgd", g, ["update"], targets=["train"], init=[init_name], steps=25)
tf1.enable_resource_variables()

# --- Training with resource variables.
g = tf1.Graph()
with g.as_default():
    v = tf1.get_variable("v", initializer=rng.randn(3, 1).astype(np.float32), use_resource=True)
    xs = tf.constant(rng.randn(16, 3).astype(np.float32))
    ys = tf.constant(rng.randn(16, 1).astype(np.float32))
    err = tf.matmul(xs, v.read_value()) - ys
    grad = tf.matmul(xs, err, transpose_a=True) * (2.0 / 16)
    upd = tf.raw_ops.ResourceApplyGradientDescent(var=v.handle, alpha=0.05, delta=grad, name="update")
    with tf.control_dependencies([upd]):
        tf.identity(tf.raw_ops.ReadVariableOp(resource=v.handle, dtype=tf.float32), name="after")
    tf.raw_ops.VarIsInitializedOp(resource=v.handle, name="is_init")
    init_name = tf1.global_variables_initializer().name
compare("resource_variables_sgd", g, ["after", "is_init"], init=[init_name], steps=25)

# --- v1 conditional (Switch/Merge).
tf1.disable_control_flow_v2()
g = tf1.Graph()
with g.as_default():
    pred = tf1.placeholder(tf.bool, [], name="pred")
    c = tf1.placeholder(tf.float32, [2], name="c")
    tf1.cond(pred, lambda: c * 2.0, lambda: c - 1.0, name="cond")
compare("cond_true", g, ["cond/Merge"], feeds=[("pred", np.array(True)), ("c", np.array([1.0, 2.0], np.float32))])
compare("cond_false", g, ["cond/Merge"], feeds=[("pred", np.array(False)), ("c", np.array([1.0, 2.0], np.float32))])

# --- Errors: wrong feed dtype, missing feed, malformed file.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [None, 2], name="x")
    tf.identity(x * 2.0, name="y")
path = write_graph(g, "errors")
proc = run_weft(path, ["y"])
check("missing_feed", proc.returncode == 1 and "x" in proc.stderr and proc.stderr.startswith("error: "),
      proc.stderr)
expect_error("feed_wrong_dtype", path, ["y"], feeds=[("x", np.array([[1, 2]], np.int32))], mention="x")
expect_error("feed_wrong_shape", path, ["y"], feeds=[("x", np.array([1.0, 2.0, 3.0], np.float32))], mention="x")
expect_error("unknown_fetch", path, ["nope"], code="", mention="nope")
bad = os.path.join(WORK, "truncated.pb")
with open(path, "rb") as f:
    data = f.read()
with open(bad, "wb") as f:
    f.write(data[: len(data) // 2])
proc = run_weft(bad, ["y"])
check("truncated_file", proc.returncode == 1 and proc.stderr.startswith("error: "), proc.stderr)

sys.exit(summary_exit_code())
