"""Conformance: the ops Keras models need beyond the basics, run by
`weft run` against TensorFlow 2.21 on the same GraphDef.

- DepthwiseConv2dNative and both backprops (MobileNet, EfficientNet,
  SeparableConv2D): strides, SAME/VALID/EXPLICIT padding, dilations, channel
  multipliers 1 and 3, odd sizes, float32 and float64; and tf.gradients
  through depthwise convolutions.
- Einsum as Keras' EinsumDense and MultiHeadAttention write it, and the
  equation forms TensorFlow accepts (batch labels, contractions, outer
  products, transposes, summed-out labels, ellipses with broadcasting,
  diagonals, one operand).
- VariableShape of a resource variable (LSTM and GRU training graphs).

float32 results are compared to rtol 2e-5 (the sums run in a different
order from TensorFlow's kernels); float64 to 1e-12; integers exactly.

usage: model_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import (check, compare_fetches, compare_tf1_graph, run_weft,  # noqa: E402
                        summary_exit_code)

np, tf, WEFT, WORK = start_conformance("model_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

rng = np.random.RandomState(7)


def tol(dtype):
    return (1e-12, 1e-12) if dtype == np.float64 else (2e-5, 2e-5)


# ---- DepthwiseConv2dNative ---------------------------------------------------
DEPTHWISE_CASES = [
    # name, input NHWC, filter [kh, kw, c, m], strides, padding, dilations
    ("k3_same", (2, 7, 9, 4), (3, 3, 4, 1), 1, "SAME", 1),
    ("k3_s2_same", (1, 8, 7, 5), (3, 3, 5, 1), 2, "SAME", 1),
    ("k5_valid_mult3", (2, 9, 8, 3), (5, 3, 3, 3), 1, "VALID", 1),
    ("k3_s2_valid_mult2", (3, 11, 10, 6), (3, 3, 6, 2), 2, "VALID", 1),
    ("dilated", (1, 12, 11, 4), (3, 3, 4, 1), 1, "SAME", 2),
    ("explicit", (2, 6, 7, 3), (3, 2, 3, 2), 1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1),
    ("wide_channels", (1, 5, 5, 40), (3, 3, 40, 1), 1, "SAME", 1),
]

def depthwise_graph(x_value, f_value, w_value, stride, padding, dil, raw):
    """y = depthwise_conv(x, f), and the gradients of sum(y * w). `raw`: the
    op itself (its gradients are the backprop ops); else tf.nn's wrapper,
    which TensorFlow runs dilated convolutions through (SpaceToBatchND), as
    its own backprop kernels ignore dilations."""
    g = tf1.Graph()
    with g.as_default():
        x = tf1.constant(x_value, name="x")
        f = tf1.constant(f_value, name="f")
        explicit = []
        if not isinstance(padding, str):
            explicit = [p for pair in padding for p in pair]
        if raw:
            y = tf.raw_ops.DepthwiseConv2dNative(
                input=x, filter=f, strides=[1, stride, stride, 1],
                padding="EXPLICIT" if explicit else padding,
                explicit_paddings=explicit, dilations=[1, dil, dil, 1], name="y")
        else:
            y = tf1.identity(tf.nn.depthwise_conv2d(
                x, f, [1, stride, stride, 1], padding, dilations=[dil, dil]), name="y")
        w = tf1.constant(w_value, dtype=y.dtype)
        gx, gf = tf1.gradients(tf1.reduce_sum(y * w), [x, f])
        tf1.identity(gx, name="gx")
        tf1.identity(gf, name="gf")
    return g


for dtype in (np.float32, np.float64):
    rtol, atol = tol(dtype)
    for name, xs, fs, stride, padding, dil in DEPTHWISE_CASES:
        case = f"depthwise_{name}_{np.dtype(dtype).name}"
        x_value = rng.uniform(-1, 1, xs).astype(dtype)
        f_value = rng.uniform(-1, 1, fs).astype(dtype)
        y_shape = depthwise_graph(x_value, f_value, 1.0, stride, padding, dil,
                                  raw=True).get_tensor_by_name("y:0").shape
        # A loss that weighs every output differently, so the backprops'
        # inputs are not uniform.
        w_value = rng.uniform(-1, 1, y_shape.as_list()).astype(dtype)
        g = depthwise_graph(x_value, f_value, w_value, stride, padding, dil, raw=True)
        ops = {n.op for n in g.as_graph_def().node}
        check(f"{case}/graph_has_backprops",
              {"DepthwiseConv2dNativeBackpropInput",
               "DepthwiseConv2dNativeBackpropFilter"} <= ops, sorted(ops))
        if dil == 1:
            compare_tf1_graph(WEFT, WORK, case, g, ["y", "gx", "gf"], rtol=rtol, atol=atol)
            continue
        # Dilated: TensorFlow's reference comes from tf.nn's graph.
        ref_graph = depthwise_graph(x_value, f_value, w_value, stride, padding,
                                    dil, raw=False)
        with tf1.Session(graph=ref_graph) as sess:
            ref = sess.run(["y:0", "gx:0", "gf:0"])
        path = os.path.join(WORK, case + ".pb")
        with open(path, "wb") as fh:
            fh.write(g.as_graph_def().SerializeToString())
        compare_fetches(case, run_weft(WEFT, path, ["y", "gx", "gf"]),
                        ["y", "gx", "gf"], ref, rtol, atol)

# Errors are values: a filter whose depth is not the input's.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [1, 4, 4, 3], name="x")
    f = tf1.placeholder(tf.float32, [2, 2, None, 1], name="f")
    tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, strides=[1, 1, 1, 1],
                                     padding="SAME", name="y")
path = os.path.join(WORK, "depthwise_bad.pb")
with open(path, "wb") as fh:
    fh.write(g.as_graph_def().SerializeToString())
proc = run_weft(WEFT, path, ["y"], feeds=[("x", np.zeros((1, 4, 4, 3), np.float32)),
                                          ("f", np.zeros((2, 2, 2, 1), np.float32))])
check("depthwise_bad_filter_depth", proc.returncode != 0 and "same depth" in proc.stderr,
      f"rc={proc.returncode} stderr={proc.stderr[-500:]}")

# ---- Einsum ------------------------------------------------------------------
EINSUM_CASES = [
    # equation, operand shapes
    ("abc,cd->abd", [(2, 5, 6), (6, 7)]),          # EinsumDense
    ("abc,cde->abde", [(2, 5, 6), (6, 3, 4)]),     # attention projections
    ("aecd,abcd->acbe", [(2, 5, 3, 4), (2, 6, 3, 4)]),  # attention scores
    ("acbe,aecd->abcd", [(2, 3, 6, 5), (2, 5, 3, 4)]),  # attention output
    ("abcd,cde->abe", [(2, 6, 3, 4), (3, 4, 5)]),  # output projection
    ("ij,jk->ik", [(4, 5), (5, 3)]),
    ("ij,kj->ik", [(4, 5), (3, 5)]),
    ("ji,jk->ik", [(5, 4), (5, 3)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("i,j->ij", [(4,), (5,)]),                     # outer product
    ("i,i->", [(6,), (6,)]),                       # dot
    ("ij->ji", [(3, 4)]),                          # transpose
    ("ij->", [(3, 4)]),                            # sum
    ("ijk->ki", [(3, 4, 5)]),                      # sum and transpose
    ("ii->i", [(4, 4)]),                           # diagonal
    ("ii->", [(4, 4)]),                            # trace
    ("bii->b", [(2, 3, 3)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("abc,abd->cd", [(2, 3, 4), (2, 3, 5)]),       # batch dims summed over
    ("ijk,jl->il", [(3, 4, 5), (4, 6)]),           # k summed out first
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 6)]),  # broadcast batch
    ("...ij,jk->...ik", [(2, 3, 4, 5), (5, 6)]),
    ("bi,...i->b...", [(3, 4), (2, 4)]),
    ("ab,b->a", [(0, 3), (3,)]),                   # empty
    ("ab,bc->ac", [(2, 0), (0, 3)]),               # empty contraction
]
for dtype in (np.float32, np.float64):
    rtol, atol = tol(dtype)
    for idx, (eq, shapes) in enumerate(EINSUM_CASES):
        case = f"einsum_{idx}_{np.dtype(dtype).name}"
        g = tf1.Graph()
        with g.as_default():
            operands = [tf1.constant(rng.uniform(-1, 1, s).astype(dtype)) for s in shapes]
            tf.raw_ops.Einsum(inputs=operands, equation=eq, name="y")
        compare_tf1_graph(WEFT, WORK, case, g, ["y"], rtol=rtol, atol=atol)

# Gradients through Einsum are Einsums (TensorFlow writes them so).
g = tf1.Graph()
with g.as_default():
    a = tf1.constant(rng.uniform(-1, 1, (2, 5, 3, 4)).astype(np.float32))
    b = tf1.constant(rng.uniform(-1, 1, (2, 6, 3, 4)).astype(np.float32))
    s = tf.einsum("aecd,abcd->acbe", a, b)
    ga, gb = tf1.gradients(tf1.reduce_sum(tf1.tanh(s) * s), [a, b])
    tf1.identity(s, name="s")
    tf1.identity(ga, name="ga")
    tf1.identity(gb, name="gb")
compare_tf1_graph(WEFT, WORK, "einsum_gradients", g, ["s", "ga", "gb"], rtol=2e-5, atol=2e-5)

# A label whose sizes disagree is an error naming the equation.
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, None, name="x")
    tf.raw_ops.Einsum(inputs=[x, x], equation="ij,jk->ik", name="y")
path = os.path.join(WORK, "einsum_bad.pb")
with open(path, "wb") as fh:
    fh.write(g.as_graph_def().SerializeToString())
proc = run_weft(WEFT, path, ["y"], feeds=[("x", np.zeros((2, 3), np.float32))])
check("einsum_bad_sizes", proc.returncode != 0 and "ij,jk->ik" in proc.stderr,
      f"rc={proc.returncode} stderr={proc.stderr[-500:]}")

# ---- VariableShape ------------------------------------------------------------
for out_type in (tf.int32, tf.int64):
    g = tf1.Graph()
    with g.as_default():
        v = tf1.get_variable("v", initializer=np.zeros((3, 5, 2), np.float32),
                             use_resource=True)
        tf.raw_ops.VariableShape(input=v.handle, out_type=out_type, name="shape")
        tf1.variables_initializer([v], name="init")
    compare_tf1_graph(WEFT, WORK, f"variable_shape_{out_type.name}", g, ["shape"],
                      init=["init"])

sys.exit(summary_exit_code())
