"""Conformance: the volumetric convolution and pools, LRN and the arg max
pools, run by `weft run` against TensorFlow 2.21 on the same GraphDef.

Built with tf.raw_ops in tf.compat.v1 graph mode:
  - Conv3D, Conv3DBackpropInputV2 (int32 and int64 input_sizes) and
    Conv3DBackpropFilterV2 (float, double, half), SAME and VALID, strides
    1-3 per dim, batch > 1, odd sizes, 1x1x1 filters, windows as large as
    the input; tf.gradients through Conv3D. Dilations: TensorFlow's Eigen
    CPU kernel refuses them, so a dilated case is compared with the same
    convolution by a filter with zeros between its taps (the filter
    gradient: that one's taps at the dilated positions);
  - MaxPool3D, AvgPool3D (float; TensorFlow's CPU has no half), MaxPool3DGrad (ties: every equal
    entry gets the gradient), AvgPool3DGrad, MaxPool3DGradGrad, and
    tf.gradients through the pools;
  - LRN and LRNGrad (float, half) with several depth_radius / bias / alpha /
    beta (beta 0.5 and 1 are TensorFlow's special cases), a radius past the
    depth, tf.gradients through LRN;
  - MaxPoolWithArgmax (float, double, half, int32, uint8; Targmax int64 and
    int32; include_batch_in_index both ways; ties and -inf; NaN first and
    later in a window), MaxPoolGradWithArgmax, tf.gradients through it;
  - a small Keras model: Conv3D + MaxPooling3D + AveragePooling3D + Dense,
    inference.

Tolerances: float rtol 1e-5 with atol 1e-5 times the values' scale (the
convolutions sum in another order than Eigen's contraction; the pools and
arg max pools exactly), double 1e-12; half: TensorFlow computes the
convolutions and LRN in half arithmetic step by step, Weft in float rounded
once, so 1e-2 relative (of the output's scale).

TensorFlow runs with TF_ENABLE_ONEDNN_OPTS=0 so that its reference (Eigen)
CPU kernels answer.

usage: nn3d_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # TensorFlow's Eigen kernels
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, decode, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("nn3d")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

rng = np.random.RandomState(7)

# (rtol, atol relative to max |want|) per dtype; `exact` cases use 0.
TOL = {np.float32: (1e-5, 1e-5), np.float64: (1e-12, 1e-12), np.float16: (1e-2, 1e-2)}


def close(have, want, rtol, atol_scale):
    if have.shape != want.shape:
        return False, f"shape {have.shape} != TF {want.shape}"
    if want.size == 0:
        return True, ""
    if want.dtype.kind not in "fc":
        return bool(np.array_equal(have, want.astype(have.dtype))), f"{have.ravel()[:8]} != TF {want.ravel()[:8]}"
    h = have.astype(np.float64)
    w = want.astype(np.float64)
    finite = np.isfinite(w)
    scale = np.max(np.abs(w[finite])) if finite.any() else 0.0
    ok = np.allclose(h, w, rtol=rtol, atol=atol_scale * scale, equal_nan=True)
    ok = ok and np.array_equal(np.isnan(h), np.isnan(w))
    diff = np.nanmax(np.abs(h - w)) if finite.any() else 0
    return bool(ok), f"max abs diff {diff} (scale {scale})"


def run_case(case, graph, fetches, ref=None, exact=False, weft_graph=None):
    """Runs `fetches` (names) with weft on `weft_graph` (default `graph`) and
    compares with TensorFlow's values of them in `graph` (or `ref`)."""
    g = weft_graph or graph
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    if ref is None:
        with tf1.Session(graph=graph) as sess:
            ref = sess.run([graph.get_tensor_by_name(n + ":0") for n in fetches])
    proc = run_weft(WEFT, path, fetches)
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return
    got = json.loads(proc.stdout)["fetches"]
    for name, want in zip(fetches, ref):
        want = np.asarray(want)
        have = decode(got[name])
        rtol, atol = (0.0, 0.0) if exact else TOL.get(want.dtype.type, (0.0, 0.0))
        ok, detail = close(have, want, rtol, atol)
        check(f"{case}/{name}", ok, detail)


def out(t, name):
    return tf1.identity(t, name=name)


def randn(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


# --- Conv3D and its backprops.
CONV_CASES = [
    # input NDHWC, filter, strides (d, h, w), padding
    ((1, 4, 5, 6, 2), (3, 3, 3, 2, 3), (1, 1, 1), "SAME"),
    ((2, 5, 6, 7, 3), (3, 2, 3, 3, 4), (1, 1, 1), "VALID"),
    ((2, 7, 6, 9, 2), (3, 3, 3, 2, 5), (2, 2, 2), "SAME"),
    ((2, 7, 6, 9, 2), (3, 3, 3, 2, 5), (2, 3, 2), "VALID"),
    ((1, 5, 5, 5, 4), (1, 1, 1, 4, 3), (1, 1, 1), "SAME"),
    ((3, 4, 4, 4, 2), (1, 1, 1, 2, 2), (2, 1, 3), "VALID"),
    ((1, 3, 4, 5, 2), (3, 4, 5, 2, 2), (1, 1, 1), "VALID"),
    ((1, 3, 4, 5, 2), (4, 5, 6, 2, 2), (3, 2, 1), "SAME"),
    ((1, 8, 8, 8, 8), (3, 3, 3, 8, 16), (1, 1, 1), "SAME"),
]


def conv_case(xs, fs, st, pad, dtype, tag):
    g = tf1.Graph()
    strides = [1, *st, 1]
    with g.as_default():
        x = tf1.constant(randn(xs, dtype))
        w = tf1.constant(randn(fs, dtype))
        y = tf.raw_ops.Conv3D(input=x, filter=w, strides=strides, padding=pad)
        dy = tf1.constant(randn(tuple(y.shape.as_list()), dtype))
        fetches = [out(y, "y")]
        for ts in (np.int32, np.int64):
            fetches.append(out(tf.raw_ops.Conv3DBackpropInputV2(
                input_sizes=tf1.constant(np.array(xs, ts)), filter=w, out_backprop=dy,
                strides=strides, padding=pad), f"dx_{np.dtype(ts).name}"))
        fetches.append(out(tf.raw_ops.Conv3DBackpropFilterV2(
            input=x, filter_sizes=tf1.constant(np.array(fs, np.int32)), out_backprop=dy,
            strides=strides, padding=pad), "dw"))
        if dtype != np.float16:
            gx, gw = tf1.gradients(tf.reduce_sum(y * y), [x, w])
            fetches += [out(gx, "grad_x"), out(gw, "grad_w")]
    run_case(f"Conv3D_{tag}_{np.dtype(dtype).name}", g, [f.op.name for f in fetches])


for i, (xs, fs, st, pad) in enumerate(CONV_CASES):
    conv_case(xs, fs, st, pad, np.float32, i)
    if i in (0, 2, 3):
        conv_case(xs, fs, st, pad, np.float64, i)
        conv_case(xs, fs, st, pad, np.float16, i)


def dilated_filter(w, dil):
    kd, kh, kw, ci, co = w.shape
    big = np.zeros(((kd - 1) * dil[0] + 1, (kh - 1) * dil[1] + 1, (kw - 1) * dil[2] + 1, ci, co),
                   w.dtype)
    big[::dil[0], ::dil[1], ::dil[2]] = w
    return big


def dilation_case(xs, fs, st, dil, pad, tag):
    xv, wv = randn(xs, np.float32), randn(fs, np.float32)
    strides = [1, *st, 1]
    ref_g = tf1.Graph()
    with ref_g.as_default():
        big = dilated_filter(wv, dil)
        y = tf.raw_ops.Conv3D(input=xv, filter=big, strides=strides, padding=pad)
        dyv = randn(tuple(y.shape.as_list()), np.float32)
        dx = tf.raw_ops.Conv3DBackpropInputV2(input_sizes=np.array(xs, np.int32), filter=big,
                                              out_backprop=dyv, strides=strides, padding=pad)
        dw = tf.raw_ops.Conv3DBackpropFilterV2(input=xv, filter_sizes=np.array(big.shape, np.int32),
                                               out_backprop=dyv, strides=strides, padding=pad)
        with tf1.Session(graph=ref_g) as sess:
            ry, rdx, rdw = sess.run([y, dx, dw])
    rdw = rdw[::dil[0], ::dil[1], ::dil[2]]
    g = tf1.Graph()
    dilations = [1, *dil, 1]
    with g.as_default():
        x, w, dy = tf1.constant(xv), tf1.constant(wv), tf1.constant(dyv)
        out(tf.raw_ops.Conv3D(input=x, filter=w, strides=strides, padding=pad,
                              dilations=dilations), "y")
        out(tf.raw_ops.Conv3DBackpropInputV2(input_sizes=np.array(xs, np.int32), filter=w,
                                             out_backprop=dy, strides=strides, padding=pad,
                                             dilations=dilations), "dx")
        out(tf.raw_ops.Conv3DBackpropFilterV2(input=x, filter_sizes=np.array(fs, np.int32),
                                              out_backprop=dy, strides=strides, padding=pad,
                                              dilations=dilations), "dw")
    run_case(f"Conv3D_dilated_{tag}", g, ["y", "dx", "dw"], ref=[ry, rdx, rdw])


dilation_case((2, 7, 8, 9, 2), (2, 3, 2, 2, 3), (1, 1, 1), (2, 1, 3), "SAME", 0)
dilation_case((1, 9, 8, 9, 3), (3, 2, 2, 3, 2), (2, 1, 2), (2, 3, 2), "VALID", 1)
dilation_case((1, 6, 7, 8, 2), (2, 2, 2, 2, 2), (1, 2, 1), (3, 2, 2), "SAME", 2)

# --- The 3-D pools.
POOL_CASES = [
    ((1, 4, 5, 6, 2), (2, 2, 2), (2, 2, 2), "SAME"),
    ((2, 5, 6, 7, 3), (3, 3, 3), (1, 1, 1), "SAME"),
    ((2, 5, 6, 7, 3), (3, 2, 3), (2, 1, 2), "VALID"),
    ((1, 3, 3, 3, 1), (3, 3, 3), (3, 3, 3), "VALID"),
    ((2, 7, 4, 5, 2), (2, 3, 1), (3, 2, 1), "SAME"),
]


def pool_case(xs, k, st, pad, dtype, tag, ties=False):
    g = tf1.Graph()
    attrs = dict(ksize=[1, *k, 1], strides=[1, *st, 1], padding=pad)
    with g.as_default():
        xv = randn(xs, dtype)
        if ties:  # few distinct values: windows with several maxima
            xv = rng.randint(0, 3, xs).astype(dtype)
        x = tf1.constant(xv)
        fetches = []
        mx = tf.raw_ops.MaxPool3D(input=x, **attrs)
        av = tf.raw_ops.AvgPool3D(input=x, **attrs)
        fetches += [out(mx, "max"), out(av, "avg")]
        dy = tf1.constant(randn(tuple(mx.shape.as_list()), dtype))
        fetches.append(out(tf.raw_ops.MaxPool3DGrad(orig_input=x, orig_output=mx, grad=dy,
                                                    **attrs), "max_grad"))
        fetches.append(out(tf.raw_ops.AvgPool3DGrad(
            orig_input_shape=np.array(xs, np.int32), grad=dy, **attrs), "avg_grad"))
        gg = tf1.constant(randn(xs, dtype))
        fetches.append(out(tf.raw_ops.MaxPool3DGradGrad(orig_input=x, orig_output=mx, grad=gg,
                                                        **attrs), "max_grad_grad"))
        if dtype == np.float32:
            gx = tf1.gradients(tf.reduce_sum(mx * mx) + tf.reduce_sum(av * av), x)[0]
            fetches.append(out(gx, "grad_x"))
    run_case(f"Pool3D_{tag}{'_ties' if ties else ''}_{np.dtype(dtype).name}", g,
             [f.op.name for f in fetches])


for i, (xs, k, st, pad) in enumerate(POOL_CASES):
    pool_case(xs, k, st, pad, np.float32, i)
    if i < 3:
        pool_case(xs, k, st, pad, np.float32, i, ties=True)

# --- LRN.
LRN_CASES = [
    ((2, 3, 4, 7), 2, 1.0, 1.0, 0.5),
    ((1, 2, 3, 9), 5, 2.0, 0.1, 0.75),
    ((2, 2, 2, 5), 1, 0.5, 0.3, 1.0),
    ((1, 3, 2, 4), 7, 1.5, 1e-3, 0.25),
    ((1, 1, 1, 16), 0, 1.0, 2.0, 0.6),
]


def lrn_case(shape, radius, bias, alpha, beta, dtype, tag):
    g = tf1.Graph()
    attrs = dict(depth_radius=radius, bias=bias, alpha=alpha, beta=beta)
    with g.as_default():
        x = tf1.constant(randn(shape, dtype) * 2)
        y = tf.raw_ops.LRN(input=x, **attrs)
        dy = tf1.constant(randn(shape, dtype))
        fetches = [out(y, "y"),
                   out(tf.raw_ops.LRNGrad(input_grads=dy, input_image=x, output_image=y, **attrs),
                       "dx")]
        if dtype == np.float32:
            fetches.append(out(tf1.gradients(tf.reduce_sum(y * dy), x)[0], "grad_x"))
    run_case(f"LRN_{tag}_{np.dtype(dtype).name}", g, [f.op.name for f in fetches])


for i, c in enumerate(LRN_CASES):
    lrn_case(*c, np.float32, i)
    if i < 2:
        lrn_case(*c, np.float16, i)

# --- MaxPoolWithArgmax.
ARGMAX_CASES = [
    ((1, 4, 5, 2), (2, 2), (2, 2), "SAME"),
    ((2, 5, 7, 3), (3, 3), (1, 1), "SAME"),
    ((2, 6, 5, 2), (3, 2), (2, 1), "VALID"),
    ((3, 3, 3, 1), (3, 3), (3, 3), "VALID"),
]


def argmax_case(xs, k, st, pad, dtype, tag, special=False):
    g = tf1.Graph()
    attrs = dict(ksize=[1, *k, 1], strides=[1, *st, 1], padding=pad)
    with g.as_default():
        if np.dtype(dtype).kind in "iu":
            xv = rng.randint(0, 4, xs).astype(dtype)  # ties
        else:
            xv = randn(xs, dtype)
            if special:
                xv.ravel()[::5] = -np.inf
                xv.ravel()[3::7] = xv.ravel()[4::7][:len(xv.ravel()[3::7])]  # ties
                xv.ravel()[::11] = np.nan
        x = tf1.constant(xv)
        fetches = []
        for targ in (tf.int64, tf.int32):
            for incl in (False, True):
                y, am = tf.raw_ops.MaxPoolWithArgmax(input=x, Targmax=targ,
                                                     include_batch_in_index=incl, **attrs)
                sfx = f"{targ.name}_{int(incl)}"
                fetches += [out(y, f"y_{sfx}"), out(am, f"argmax_{sfx}")]
                if targ == tf.int64 and not special:
                    dy = tf1.constant(
                        (randn(tuple(y.shape.as_list()), np.float32) * 4).astype(dtype))
                    fetches.append(out(tf.raw_ops.MaxPoolGradWithArgmax(
                        input=x, grad=dy, argmax=am, include_batch_in_index=incl, **attrs),
                        f"dx_{sfx}"))
        if dtype == np.float32 and not special:
            y, _ = tf.raw_ops.MaxPoolWithArgmax(input=x, **attrs)
            fetches.append(out(tf1.gradients(tf.reduce_sum(y * y), x)[0], "grad_x"))
    run_case(f"MaxPoolWithArgmax_{tag}{'_special' if special else ''}_{np.dtype(dtype).name}",
             g, [f.op.name for f in fetches], exact=np.dtype(dtype).kind in "iu")


for i, (xs, k, st, pad) in enumerate(ARGMAX_CASES):
    argmax_case(xs, k, st, pad, np.float32, i)
    argmax_case(xs, k, st, pad, np.float32, i, special=True)
    if i < 2:
        for dt in (np.float64, np.float16, np.int32, np.uint8):
            argmax_case(xs, k, st, pad, dt, i)

# --- A Keras model: Conv3D + MaxPooling3D + AveragePooling3D, inference.
def keras_case():
    g = tf1.Graph()
    with g.as_default():
        tf1.set_random_seed(3)
        inp = tf1.constant(randn((2, 8, 9, 10, 3), np.float32))
        model = tf.keras.Sequential([
            tf.keras.layers.Conv3D(8, 3, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling3D(2),
            tf.keras.layers.Conv3D(6, (2, 3, 2), strides=(1, 2, 1), padding="valid"),
            tf.keras.layers.AveragePooling3D((2, 1, 2), padding="same"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(4),
        ])
        y = out(model(inp), "keras_y")
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            ref = sess.run([y])
            # Freeze the variables into constants for weft.
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["keras_y"])
    fg = tf1.Graph()
    with fg.as_default():
        tf1.import_graph_def(frozen, name="")
    run_case("Keras_Conv3D_pools", None, ["keras_y"], ref=ref, weft_graph=fg)


keras_case()

sys.exit(summary_exit_code())
