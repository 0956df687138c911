"""Conformance: _FusedConv2D and _FusedMatMul as TensorFlow's grappler
writes them. Each case builds a TF1 graph (Conv2D or MatMul followed by
BiasAdd, FusedBatchNorm, an added tensor and an activation), lets
TensorFlow 2.21's remapper fuse it (tf_optimizer.OptimizeGraph, the
"remap" optimizer, the nodes on /cpu:0), checks that the fused op is in the
optimized graph, and runs the optimized GraphDef with `weft run` against
TensorFlow running the original: float32 to 1e-4 relative and absolute
(the remapper fuses float32 only). Also: unsupported fused_ops and a wrong bias shape are
INVALID_ARGUMENT errors naming the attr or arg.

usage: remapper_fused_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, compare_fetches, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("remapper_fused")

from tensorflow.core.protobuf import config_pb2  # noqa: E402
from tensorflow.python.grappler import tf_optimizer  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
rng = np.random.RandomState(11)


def remapped(graph, fetches):
    """The graph after grappler's remapper alone."""
    meta = tf1.train.export_meta_graph(graph=graph)
    for name in fetches:
        meta.collection_def["train_op"].node_list.value.append(name)
    config = config_pb2.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.min_graph_nodes = -1
    rewrite.optimizers[:] = ["remap"]
    return tf_optimizer.OptimizeGraph(config, meta)


def activation(name):
    return {"none": tf.identity, "relu": tf.nn.relu, "relu6": tf.nn.relu6,
            "elu": tf.nn.elu,
            "leaky": lambda t, name: tf.nn.leaky_relu(t, alpha=0.3, name=name),
            "tanh": tf.tanh, "sigmoid": tf.sigmoid}[name]


def conv_case(act, epilogue, dtype, stride, padding):
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.placeholder(dtype, [2, 9, 8, 6], name="x")
        w = tf1.constant(rng.randn(3, 3, 6, 12).astype(dtype) * 0.3)
        conv = tf.nn.conv2d(x, w, stride, padding)
        if epilogue == "batchnorm":
            s, o, m = (tf1.constant(rng.randn(12).astype(dtype)) for _ in range(3))
            v = tf1.constant(rng.rand(12).astype(dtype) + 0.5)
            y, _, _ = tf1.nn.fused_batch_norm(conv, s, o, m, v, epsilon=0.001,
                                              is_training=False)
        else:
            y = tf.nn.bias_add(conv, tf1.constant(rng.randn(12).astype(dtype)))
            if epilogue == "add":
                side = tf1.placeholder(dtype, y.shape, name="side")
                y = tf.add(y, side)
        activation(act)(y, name="out") if act != "none" else tf.identity(y, name="out")
    feeds = {"x": rng.randn(2, 9, 8, 6).astype(dtype)}
    if epilogue == "add":
        feeds["side"] = rng.randn(*g.get_tensor_by_name("side:0").shape.as_list()).astype(dtype)
    return g, feeds


def matmul_case(act, epilogue, dtype, transpose_b):
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        a = tf1.placeholder(dtype, [5, 7], name="x")
        b = tf1.constant(rng.randn(*((9, 7) if transpose_b else (7, 9))).astype(dtype))
        y = tf.nn.bias_add(tf.matmul(a, b, transpose_b=transpose_b),
                           tf1.constant(rng.randn(9).astype(dtype)))
        if epilogue == "add":
            y = tf.add(y, tf1.placeholder(dtype, [5, 9], name="side"))
        activation(act)(y, name="out") if act != "none" else tf.identity(y, name="out")
    feeds = {"x": rng.randn(5, 7).astype(dtype)}
    if epilogue == "add":
        feeds["side"] = rng.randn(5, 9).astype(dtype)
    return g, feeds


def run_case(case, graph, feeds, fused_op, tol):
    optimized = remapped(graph, ["out"])
    fused = [n for n in optimized.node if n.op == fused_op]
    check(f"{case}/tensorflow_fuses_it", len(fused) == 1,
          str(sorted({n.op for n in optimized.node})))
    with tf1.Session(graph=graph) as sess:
        want = sess.run("out:0", {f"{k}:0": v for k, v in feeds.items()})
    path = os.path.join(WORK, case.replace("/", "_") + ".pb")
    with open(path, "wb") as f:
        f.write(optimized.SerializeToString())
    proc = run_weft(WEFT, path, ["out"], feeds=list(feeds.items()))
    compare_fetches(case, proc, ["out"], [want], rtol=tol, atol=tol)


for act in ("none", "relu", "relu6", "elu", "leaky"):
    for epilogue in ("bias", "batchnorm", "add"):
        if epilogue == "add" and act not in ("none", "relu"):
            continue  # what the remapper fuses after an Add
        g, feeds = conv_case(act, epilogue, np.float32, 1, "SAME")
        run_case(f"conv/{epilogue}/{act}", g, feeds, "_FusedConv2D", 1e-4)
g, feeds = conv_case("relu", "bias", np.float32, 2, "VALID")
run_case("conv/bias/relu/stride2_valid", g, feeds, "_FusedConv2D", 1e-4)
for act in ("none", "relu", "relu6", "elu", "leaky", "tanh", "sigmoid"):
    g, feeds = matmul_case(act, "bias", np.float32, transpose_b=False)
    run_case(f"matmul/bias/{act}", g, feeds, "_FusedMatMul", 1e-4)
g, feeds = matmul_case("relu", "bias", np.float32, transpose_b=True)
run_case("matmul/bias/relu/transpose_b", g, feeds, "_FusedMatMul", 1e-4)

# Errors: a fused_ops sequence Weft does not run, and a bias of the wrong
# length, each INVALID_ARGUMENT naming what is wrong.
g, feeds = matmul_case("relu", "bias", np.float32, transpose_b=False)
optimized = remapped(g, ["out"])
fused = [n for n in optimized.node if n.op == "_FusedMatMul"][0]
bad = type(optimized)()
bad.CopyFrom(optimized)
node = [n for n in bad.node if n.name == fused.name][0]
node.attr["fused_ops"].list.s[:] = [b"BiasAdd", b"Softmax"]
path = os.path.join(WORK, "bad_fused_ops.pb")
with open(path, "wb") as f:
    f.write(bad.SerializeToString())
proc = run_weft(WEFT, path, ["out"], feeds=list(feeds.items()))
check("errors/unsupported_fused_ops", proc.returncode != 0 and "fused_ops [BiasAdd, Softmax]"
      in proc.stderr and "INVALID_ARGUMENT" in proc.stderr, proc.stderr[-800:])
bias_input = [n for n in optimized.node if n.name == fused.input[2].split(":")[0]][0]
bad.CopyFrom(optimized)
short = [n for n in bad.node if n.name == bias_input.name][0]
short.attr["value"].tensor.CopyFrom(tf1.make_tensor_proto(np.ones(4, np.float32)))
with open(path, "wb") as f:
    f.write(bad.SerializeToString())
proc = run_weft(WEFT, path, ["out"], feeds=list(feeds.items()))
check("errors/bias_of_the_wrong_length", proc.returncode != 0 and "bias must be a vector"
      in proc.stderr, proc.stderr[-800:])

sys.exit(summary_exit_code())
