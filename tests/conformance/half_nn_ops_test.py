"""Conformance: the nn ops of mixed-precision Keras models on float16 and
bfloat16, run by `weft run` against TensorFlow 2.21 on the same GraphDef:
BiasAdd and BiasAddGrad (NHWC and NCHW), the activations and their
gradients, Softmax, LogSoftmax, both softmax cross-entropies, L2Loss, max
and average pooling with their gradients, MatMul, BatchMatMulV2/V3, Conv2D,
DepthwiseConv2dNative and their backprops, _FusedConv2D, _FusedMatMul and
AddN; and BiasAdd and BiasAddGrad on int8, int16, uint8, uint16, uint32 and
uint64, exactly.
Weft computes these in float and rounds each output once; TensorFlow's
Eigen::half / bfloat16 kernels may round intermediate results too, so
outputs (widened to float32 in the graph) agree to a few units in the last
place: float16 to 4e-3 and bfloat16 to 3e-2, relative and absolute.

usage: half_nn_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, compare_fetches, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("half_nn_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops
rng = np.random.RandomState(5)
TOL = {tf.float16: 4e-3, tf.bfloat16: 3e-2}


def const(shape, dtype, scale=1.0):
    return tf1.constant(rng.randn(*shape).astype(np.float32) * scale, dtype=dtype)


def compare(case, graph, reference, fetches, tol, scaled=()):
    """Runs `graph` with `weft run` and `reference` (the same graph, or one
    TensorFlow can run) in TensorFlow; compares the fetches to `tol`,
    relative and absolute. A fetch in `scaled` is a long sum (a filter
    gradient) that TensorFlow accumulates in the narrow type: its absolute
    tolerance is `tol` times the largest value."""
    with tf1.Session(graph=reference) as sess:
        want = sess.run([f + ":0" for f in fetches])
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    proc = run_weft(WEFT, path, fetches)
    for name, ref in zip(fetches, want):
        atol = tol * np.max(np.abs(ref)) if name in scaled else tol
        compare_fetches(case, proc, [name], [ref], tol, atol)


def run(case, dtype, build):
    """build(dtype) -> {name: tensor}; each output is compared widened to
    float32 (integers as they are)."""
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        outs = build(dtype)
        for name, t in outs.items():
            if t.dtype in (tf.float16, tf.bfloat16):
                t = tf.cast(t, tf.float32)
            tf1.identity(t, name="out_" + name)
    fetches = ["out_" + n for n in outs]
    compare(f"{case}_{dtype.name}", g, g, fetches, TOL[dtype],
            [f for f in fetches if "_filter_" in f])


def bias(dt):
    v = const([2, 3, 4, 5], dt)
    vc = const([2, 5, 3, 4], dt)
    b = const([5], dt)
    return {"nhwc": raw.BiasAdd(value=v, bias=b),
            "nchw": raw.BiasAdd(value=vc, bias=b, data_format="NCHW"),
            "vec2d": raw.BiasAdd(value=const([6, 5], dt), bias=b),
            "grad_nhwc": raw.BiasAddGrad(out_backprop=v),
            "grad_nchw": raw.BiasAddGrad(out_backprop=vc, data_format="NCHW")}


def activation_inputs(dt):
    x = np.concatenate([np.linspace(-8, 8, 33), [0.0, 6.0, -6.0, 5.99, 20.0, -20.0, 1e-3],
                        rng.randn(8) * 3]).astype(np.float32)
    return tf1.constant(x, dtype=dt), const([x.size], dt)


def activations(dt):
    x, g = activation_inputs(dt)
    return {"relu": raw.Relu(features=x), "relu6": raw.Relu6(features=x),
            "elu": raw.Elu(features=x), "selu": raw.Selu(features=x),
            "leaky": raw.LeakyRelu(features=x, alpha=0.3),
            "softplus": raw.Softplus(features=x), "softsign": raw.Softsign(features=x)}


def activation_grads(dt):
    x, g = activation_inputs(dt)
    return {"relu": raw.ReluGrad(gradients=g, features=x),
            "relu6": raw.Relu6Grad(gradients=g, features=x),
            "elu": raw.EluGrad(gradients=g, outputs=raw.Elu(features=x)),
            "selu": raw.SeluGrad(gradients=g, outputs=raw.Selu(features=x)),
            "leaky": raw.LeakyReluGrad(gradients=g, features=x, alpha=0.3),
            "softplus": raw.SoftplusGrad(gradients=g, features=x),
            "softsign": raw.SoftsignGrad(gradients=g, features=x)}


def softmax(dt):
    logits = const([4, 7], dt, 3.0)
    labels = tf.cast(tf.nn.softmax(const([4, 7], tf.float32)), dt)
    loss, backprop = raw.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
    out = {"softmax": raw.Softmax(logits=logits), "log_softmax": raw.LogSoftmax(logits=logits),
           "l2loss": raw.L2Loss(t=logits), "xent_loss": loss, "xent_backprop": backprop}
    for ltype in (np.int32, np.int64):
        labels = tf1.constant(np.array([0, 6, 3, 1], ltype))
        loss, backprop = raw.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
        out[f"sparse_{ltype.__name__}_loss"] = loss
        out[f"sparse_{ltype.__name__}_backprop"] = backprop
    return out


def pooling(dt):
    x = const([2, 7, 6, 3], dt)
    out = {}
    for padding, k, s in (("VALID", 2, 2), ("SAME", 3, 2)):
        ksize, strides = [1, k, k, 1], [1, s, s, 1]
        mp = raw.MaxPool(input=x, ksize=ksize, strides=strides, padding=padding)
        ap = raw.AvgPool(value=x, ksize=ksize, strides=strides, padding=padding)
        g = const(mp.shape.as_list(), dt)
        out[f"max_{padding}"] = mp
        out[f"max_v2_{padding}"] = raw.MaxPoolV2(input=x, ksize=ksize, strides=strides,
                                                 padding=padding)
        out[f"max_grad_{padding}"] = raw.MaxPoolGrad(orig_input=x, orig_output=mp, grad=g,
                                                     ksize=ksize, strides=strides,
                                                     padding=padding)
        out[f"max_grad_v2_{padding}"] = raw.MaxPoolGradV2(orig_input=x, orig_output=mp,
                                                          grad=g, ksize=ksize,
                                                          strides=strides, padding=padding)
        out[f"max_grad_grad_{padding}"] = raw.MaxPoolGradGrad(
            orig_input=x, orig_output=mp, grad=const([2, 7, 6, 3], dt), ksize=ksize,
            strides=strides, padding=padding)
        out[f"max_grad_grad_v2_{padding}"] = raw.MaxPoolGradGradV2(
            orig_input=x, orig_output=mp, grad=const([2, 7, 6, 3], dt), ksize=ksize,
            strides=strides, padding=padding)
        out[f"avg_{padding}"] = ap
        out[f"avg_grad_{padding}"] = raw.AvgPoolGrad(orig_input_shape=[2, 7, 6, 3], grad=g,
                                                     ksize=ksize, strides=strides,
                                                     padding=padding)
    return out


def matmuls(dt):
    a, b = const([5, 7], dt), const([7, 4], dt)
    out = {"plain": raw.MatMul(a=a, b=b),
           "transposed": raw.MatMul(a=const([7, 5], dt), b=const([4, 7], dt),
                                    transpose_a=True, transpose_b=True),
           "batch_v2": raw.BatchMatMulV2(x=const([2, 1, 3, 6], dt), y=const([3, 6, 2], dt)),
           "batch_v2_adj": raw.BatchMatMulV2(x=const([3, 6, 3], dt), y=const([3, 2, 6], dt),
                                             adj_x=True, adj_y=True)}
    if dt == tf.bfloat16:  # TensorFlow has no float16 BatchMatMulV3
        out["batch_v3"] = raw.BatchMatMulV3(x=const([2, 3, 6], dt), y=const([2, 6, 4], dt),
                                            Tout=dt)
    return out


def convs(dt):
    x = const([2, 7, 6, 4], dt)
    out = {}
    for padding, s in (("SAME", 1), ("VALID", 2)):
        strides = [1, s, s, 1]
        for name, forward, backprop_input, backprop_filter, filter_shape in (
                ("conv", raw.Conv2D, raw.Conv2DBackpropInput, raw.Conv2DBackpropFilter,
                 [3, 3, 4, 5]),
                ("depthwise", raw.DepthwiseConv2dNative,
                 raw.DepthwiseConv2dNativeBackpropInput,
                 raw.DepthwiseConv2dNativeBackpropFilter, [3, 3, 4, 2])):
            w = const(filter_shape, dt, 0.5)
            y = forward(input=x, filter=w, strides=strides, padding=padding)
            g = const(y.shape.as_list(), dt)
            out[f"{name}_{padding}"] = y
            out[f"{name}_input_{padding}"] = backprop_input(
                input_sizes=[2, 7, 6, 4], filter=w, out_backprop=g, strides=strides,
                padding=padding)
            out[f"{name}_filter_{padding}"] = backprop_filter(
                input=x, filter_sizes=filter_shape, out_backprop=g, strides=strides,
                padding=padding)
    return out


def addn(dt):
    return {"addn": raw.AddN(inputs=[const([3, 4], dt) for _ in range(3)]),
            "addn_one": raw.AddN(inputs=[const([5], dt)])}


for dtype in (tf.float16, tf.bfloat16):
    run("bias", dtype, bias)
    run("addn", dtype, addn)
    run("activations", dtype, activations)
    run("activation_grads", dtype, activation_grads)
    run("softmax_losses", dtype, softmax)
    run("pooling", dtype, pooling)
    run("matmul", dtype, matmuls)
    run("conv", dtype, convs)


def fused(dt, op, activation):
    """_FusedConv2D / _FusedMatMul as grappler writes it, with a BiasAdd (and
    an activation) epilogue, and the unfused graph as the reference
    (TensorFlow's fused kernel rejects float16 when it runs)."""
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        if op == "_FusedConv2D":
            main = raw.Conv2D(input=const([2, 6, 5, 3], dt), filter=const([3, 3, 3, 4], dt, 0.5),
                              strides=[1, 1, 1, 1], padding="SAME", name="main")
        else:
            main = raw.MatMul(a=const([5, 6], dt), b=const([6, 4], dt), name="main")
        y = raw.BiasAdd(value=main, bias=const([4], dt), name="bias")
        if activation:
            y = getattr(raw, activation)(features=y)
        tf1.identity(tf.cast(y, tf.float32), name="out")
    gd = g.as_graph_def()
    by_name = {n.name: n for n in gd.node}
    node = by_name["main"]
    node.op = op
    for attr in ("grad_a", "grad_b"):  # MatMul's, not _FusedMatMul's
        node.attr.pop(attr, None)
    node.input.append(by_name["bias"].input[1])
    node.attr["num_args"].i = 1
    if op == "_FusedConv2D":
        node.attr["TArgs"].list.type.append(dt.as_datatype_enum)
    fused_ops = ["BiasAdd"] + ([activation] if activation else [])
    node.attr["fused_ops"].list.s.extend([f.encode() for f in fused_ops])
    node.attr["epsilon"].f = 0.0
    node.attr["leakyrelu_alpha"].f = 0.2
    # The fused node's output goes where the epilogue's last op's went.
    last = [n for n in gd.node if n.name == "out"][0].input[0]
    cast = [n for n in gd.node if n.name == last][0]
    source = cast.input[0]
    cast.input[0] = "main"
    keep = [n for n in gd.node if n.name not in ("bias", source)]
    del gd.node[:]
    gd.node.extend(keep)
    weft_graph = tf1.Graph()
    with weft_graph.as_default():
        tf1.import_graph_def(gd, name="")
    return weft_graph, g


for dtype in (tf.float16, tf.bfloat16):
    for op in ("_FusedConv2D", "_FusedMatMul"):
        if op == "_FusedConv2D" and dtype == tf.bfloat16:
            continue  # _FusedConv2D's T has no bfloat16
        for act in (None, "Relu"):
            weft_graph, reference = fused(dtype, op, act)
            compare(f"{op}_{act or 'bias'}_{dtype.name}", weft_graph, reference, ["out"],
                    TOL[dtype])



# The float kernel's errors are the node's, as on float: a bias of the wrong
# length.
g = tf1.Graph()
with g.as_default(), tf1.device("/cpu:0"):
    bad = raw.BiasAdd(value=tf1.placeholder(tf.float16, [None, None], name="value"),
                      bias=tf1.placeholder(tf.float16, [None], name="bias"), name="bad_bias")
path = os.path.join(WORK, "bad_bias.pb")
with open(path, "wb") as f:
    f.write(g.as_graph_def().SerializeToString())
proc = run_weft(WEFT, path, ["bad_bias"], feeds=[("value", np.ones([2, 5], np.float16)),
                                                 ("bias", np.ones([4], np.float16))])
check("errors/half_bias_of_the_wrong_length", proc.returncode != 0
      and "INVALID_ARGUMENT" in proc.stderr and "bad_bias" in proc.stderr
      and "Must provide as many biases" in proc.stderr, proc.stderr[-800:])


def int_bias(np_type):
    """BiasAdd and BiasAddGrad on the small and unsigned integer types,
    exactly: values near the type's limits, so sums and adds wrap."""
    info = np.iinfo(np_type)
    lo, hi = max(int(info.min), -(1 << 40)), min(int(info.max), 1 << 40)

    def values(shape):
        return tf1.constant(rng.randint(lo, hi, size=shape, dtype=np.int64).astype(np_type))

    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        v, vc, b = values([2, 3, 4, 5]), values([2, 5, 3, 4]), values([5])
        outs = {"nhwc": raw.BiasAdd(value=v, bias=b),
                "nchw": raw.BiasAdd(value=vc, bias=b, data_format="NCHW"),
                "grad_nhwc": raw.BiasAddGrad(out_backprop=v),
                "grad_nchw": raw.BiasAddGrad(out_backprop=vc, data_format="NCHW")}
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
    compare(f"bias_{np_type.__name__}", g, g, ["out_" + n for n in outs], 0.0)


for np_type in (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64):
    int_bias(np_type)

sys.exit(summary_exit_code())
