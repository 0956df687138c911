"""Conformance: the fused batch norms and the image resizes, run by
`weft run` against TensorFlow 2.21 on the same GraphDef.

Built with tf.raw_ops in tf.compat.v1 graph mode:
  - FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3 (float; half for
    V2/V3), NHWC and NCHW (V3 also NDHWC and NCDHW), training with empty
    mean/variance, training with exponential_avg_factor 0.3 (running
    averages blended), inference, one element a channel (Bessel's n - 1 is
    0), an empty x (NaN statistics); every output but the reserve spaces of
    inference, which TensorFlow's CPU kernel leaves unwritten;
  - FusedBatchNormGrad/V2/V3 directly (training from saved statistics,
    inference from population statistics) and tf.gradients through the
    forward ops (the inference gradient of NCHW goes through transposes);
  - ResizeBilinear (float, half, double, uint8, int32 images), and
    ResizeNearestNeighbor (float, half, int32, uint8, int64) with every
    allowed align_corners / half_pixel_centers pair, up- and down-scaling,
    odd sizes, batch > 1, same-size resizes; ResizeBilinearGrad (float,
    double, half), ResizeNearestNeighborGrad (float, half, int32; also both
    attrs true, which TensorFlow allows there) and tf.gradients through both.

Tolerances: float32 rtol 1e-5 (atol 1e-5 for values that cancel to ~0):
Weft sums the per-channel statistics in double where TensorFlow's Eigen
reductions sum in float in their own order, so the last bits differ; the
resizes do TensorFlow's float arithmetic in its order (rtol 1e-6). Half
outputs: equal or 1 ulp apart, since both compute in float and round once
to half but the float values may differ in their last bits (see above),
which can move a rounding by one half ulp step; near 0, where a half ulp is
finer than float's error on the cancelling terms, 1e-5 absolute. Integer
outputs exactly.

TensorFlow runs with TF_ENABLE_ONEDNN_OPTS=0 so that its reference (Eigen)
CPU kernels answer: oneDNN's rewrite of these ops has other reserve-space
shapes and its own arithmetic.

usage: nn_norm_resize_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # TensorFlow's Eigen kernels
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, compare_fetches, decode, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("nn_norm_resize")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

rng = np.random.RandomState(11)


def half_close(have, want):
    """Equal, 1 ulp apart, or within 1e-5 (values cancelling to ~0)."""
    if have.shape != want.shape:
        return False
    h = have.astype(np.float16).view(np.int16).astype(np.int32)
    w = want.astype(np.float16).view(np.int16).astype(np.int32)
    # Order the bit patterns monotonically (sign-magnitude to two's complement).
    h = np.where(h < 0, -32768 - h, h)
    w = np.where(w < 0, -32768 - w, w)
    both_nan = np.isnan(have.astype(np.float32)) & np.isnan(want.astype(np.float32))
    near = np.abs(have.astype(np.float64) - want.astype(np.float64)) <= 1e-5
    return bool(np.all((np.abs(h - w) <= 1) | both_nan | near))


def run_case(case, graph, fetches, rtol, atol=0.0):
    """Runs `fetches` in TensorFlow and with weft on the same GraphDef and
    compares each: float to rtol/atol, half to 1 ulp, others exactly."""
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    names = [t.name[:-2] if t.name.endswith(":0") else None for t in fetches]
    assert all(names), "fetch outputs through tf.identity"
    with tf1.Session(graph=graph) as sess:
        ref = sess.run(fetches)
    proc = run_weft(WEFT, path, names)
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return
    # Half outputs to 1 ulp here; the others by the shared comparison.
    rest = [(n, w) for n, w in zip(names, ref) if np.asarray(w).dtype != np.float16]
    got = json.loads(proc.stdout)["fetches"]
    for name, want in zip(names, ref):
        if np.asarray(want).dtype == np.float16:
            have = decode(got[name])
            check(f"{case}/{name}", half_close(have, want),
                  f"max diff {np.max(np.abs(have.astype(np.float64) - want)) if want.size else 0}")
    if rest:
        compare_fetches(case, proc, [n for n, _ in rest], [w for _, w in rest], rtol, atol)


def out(t, name):
    return tf1.identity(t, name=name)


def channels_of(shape, fmt):
    return shape[1] if fmt in ("NCHW", "NCDHW") else shape[-1]


# --- Forward batch norms.
BN_SHAPES = {
    "NHWC": [(2, 5, 7, 3), (1, 1, 1, 4), (3, 9, 11, 16)],
    "NCHW": [(2, 3, 5, 7), (1, 4, 1, 1), (2, 16, 9, 11)],
    "NDHWC": [(2, 3, 4, 5, 6)],
    "NCDHW": [(2, 6, 3, 4, 5)],
}


def bn_forward_case(op, fmt, shape, dtype):
    g = tf1.Graph()
    fetches = []
    c = channels_of(shape, fmt)
    with g.as_default():
        xv = (rng.standard_normal(shape) * 3 + 1.5).astype(dtype)
        x = tf1.constant(xv)
        scale = tf1.constant(rng.uniform(0.5, 2, c).astype(np.float32))
        offset = tf1.constant(rng.uniform(-1, 1, c).astype(np.float32))
        mean = tf1.constant(rng.uniform(-1, 1, c).astype(np.float32))
        var = tf1.constant(rng.uniform(0.5, 3, c).astype(np.float32))
        empty = tf1.constant(np.zeros(0, np.float32))
        fn = getattr(tf.raw_ops, op)
        modes = [("train", True, 1.0, empty), ("ema", True, 0.3, None), ("infer", False, 1.0, None)]
        for tag, training, factor, stats in modes:
            kw = dict(x=x, scale=scale, offset=offset,
                      mean=stats if stats is not None else mean,
                      variance=stats if stats is not None else var,
                      epsilon=0.001, data_format=fmt, is_training=training)
            if op != "FusedBatchNorm" or factor != 1.0:
                kw["exponential_avg_factor"] = factor
            res = fn(**kw)
            keep = [0, 1, 2] + ([3, 4] if training else [])
            if op == "FusedBatchNormV3":
                keep.append(5)
            for i in keep:
                fetches.append(out(res[i], f"{tag}_{i}"))
    run_case(f"{op}_{fmt}_{'x'.join(map(str, shape))}_{np.dtype(dtype).name}",
             g, fetches, 1e-5, 1e-5)


for op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    for fmt, shapes in BN_SHAPES.items():
        if fmt.startswith("ND") or fmt.startswith("NCD"):
            if op != "FusedBatchNormV3":
                continue
        for shape in shapes:
            bn_forward_case(op, fmt, shape, np.float32)
    if op != "FusedBatchNorm":
        bn_forward_case(op, "NHWC", (2, 5, 7, 3), np.float16)
        bn_forward_case(op, "NCHW", (2, 3, 5, 7), np.float16)

# An empty x: NaN batch statistics.
g = tf1.Graph()
with g.as_default():
    res = tf.raw_ops.FusedBatchNormV3(
        x=tf1.constant(np.zeros((0, 2, 2, 3), np.float32)),
        scale=tf1.constant(np.ones(3, np.float32)), offset=tf1.constant(np.zeros(3, np.float32)),
        mean=tf1.constant(np.zeros(0, np.float32)), variance=tf1.constant(np.zeros(0, np.float32)),
        is_training=True)
    empty_fetches = [out(res[i], f"empty_{i}") for i in (0, 1, 2, 5)]
run_case("FusedBatchNormV3_empty", g, empty_fetches, 1e-5)


# --- The gradient ops, directly.
def bn_grad_case(op, fmt, shape, training, dtype):
    g = tf1.Graph()
    c = channels_of(shape, fmt)
    with g.as_default():
        dy = tf1.constant(rng.standard_normal(shape).astype(dtype))
        x = tf1.constant((rng.standard_normal(shape) * 2 + 0.5).astype(dtype))
        scale = tf1.constant(rng.uniform(0.5, 2, c).astype(np.float32))
        if training:  # the forward op's saved statistics
            fwd = tf.raw_ops.FusedBatchNormV3(
                x=x, scale=scale, offset=tf1.constant(np.zeros(c, np.float32)),
                mean=tf1.constant(np.zeros(0, np.float32)),
                variance=tf1.constant(np.zeros(0, np.float32)),
                data_format=fmt, is_training=True)
            rs1, rs2, rs3 = fwd[3], fwd[4], fwd[5]
        else:
            rs1 = tf1.constant(rng.uniform(-1, 1, c).astype(np.float32))
            rs2 = tf1.constant(rng.uniform(0.5, 3, c).astype(np.float32))
            rs3 = tf1.constant(np.zeros(0, np.float32))
        kw = dict(y_backprop=dy, x=x, scale=scale, reserve_space_1=rs1,
                  reserve_space_2=rs2, epsilon=0.001, data_format=fmt,
                  is_training=training)
        if op == "FusedBatchNormGradV3":
            kw["reserve_space_3"] = rs3
        res = getattr(tf.raw_ops, op)(**kw)
        fetches = [out(res[i], f"grad_{i}") for i in range(5)]
    mode = "train" if training else "infer"
    run_case(f"{op}_{fmt}_{mode}_{np.dtype(dtype).name}", g, fetches, 1e-5, 1e-5)


for op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    for training in (True, False):
        for fmt, shape in (("NHWC", (2, 5, 7, 3)), ("NCHW", (2, 3, 5, 7)),
                           ("NDHWC", (2, 3, 4, 5, 6)), ("NCDHW", (2, 6, 3, 4, 5))):
            if fmt.startswith("NCD") or fmt.startswith("ND"):
                if op != "FusedBatchNormGradV3":
                    continue
            if not training and fmt in ("NCHW", "NCDHW"):
                continue  # TensorFlow's CPU kernel: NHWC only for inference
            bn_grad_case(op, fmt, shape, training, np.float32)
        if op != "FusedBatchNormGrad":
            bn_grad_case(op, "NHWC", (2, 5, 7, 3), training, np.float16)


# --- tf.gradients through the forward ops.
def bn_gradients_case(op, fmt, shape, training):
    g = tf1.Graph()
    c = channels_of(shape, fmt)
    with g.as_default():
        x = tf1.constant((rng.standard_normal(shape) * 2 + 1).astype(np.float32))
        w = tf1.constant(rng.standard_normal(shape).astype(np.float32))
        scale = tf1.constant(rng.uniform(0.5, 2, c).astype(np.float32))
        offset = tf1.constant(rng.uniform(-1, 1, c).astype(np.float32))
        if training:
            mean = var = tf1.constant(np.zeros(0, np.float32))
        else:
            mean = tf1.constant(rng.uniform(-1, 1, c).astype(np.float32))
            var = tf1.constant(rng.uniform(0.5, 3, c).astype(np.float32))
        y = getattr(tf.raw_ops, op)(x=x, scale=scale, offset=offset, mean=mean,
                                    variance=var, epsilon=0.001, data_format=fmt,
                                    is_training=training)[0]
        loss = tf.reduce_sum(y * w)
        grads = tf1.gradients(loss, [x, scale, offset])
        fetches = [out(t, f"d{i}") for i, t in enumerate(grads)]
    mode = "train" if training else "infer"
    run_case(f"gradients_{op}_{fmt}_{mode}", g, fetches, 1e-5, 1e-5)


for op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    for fmt, shape in (("NHWC", (2, 4, 5, 3)), ("NCHW", (2, 3, 4, 5))):
        for training in (True, False):
            bn_gradients_case(op, fmt, shape, training)
bn_gradients_case("FusedBatchNormV3", "NCDHW", (2, 3, 2, 3, 4), False)


# --- Resizes.
ATTRS = [(False, False), (True, False), (False, True)]
RESIZE_CASES = [((1, 4, 4, 3), (7, 9)), ((2, 9, 11, 3), (4, 5)), ((2, 5, 5, 1), (5, 5)),
                ((3, 1, 1, 2), (3, 4)), ((1, 6, 3, 5), (13, 2))]


def image(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.randint(0, 120, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def resize_forward_case(op, dtype, rtol):
    g = tf1.Graph()
    fetches = []
    with g.as_default():
        for k, (shape, size) in enumerate(RESIZE_CASES):
            img = tf1.constant(image(shape, dtype))
            for align, half in ATTRS:
                r = getattr(tf.raw_ops, op)(images=img, size=tf1.constant(np.array(size, np.int32)),
                                            align_corners=align, half_pixel_centers=half)
                fetches.append(out(r, f"r{k}_{int(align)}{int(half)}"))
    run_case(f"{op}_{np.dtype(dtype).name}", g, fetches, rtol, rtol)


for dtype in (np.float32, np.float16, np.float64, np.uint8, np.int32):
    resize_forward_case("ResizeBilinear", dtype, 1e-6)
for dtype in (np.float32, np.float16, np.int32, np.uint8, np.int64):
    resize_forward_case("ResizeNearestNeighbor", dtype, 0.0)


def resize_grad_case(op, dtype, rtol):
    g = tf1.Graph()
    fetches = []
    attrs = ATTRS + ([(True, True)] if op == "ResizeNearestNeighborGrad" else [])
    with g.as_default():
        for k, (shape, size) in enumerate(RESIZE_CASES):
            grad_shape = (shape[0],) + size + (shape[3],)
            for align, half in attrs:
                if op == "ResizeBilinearGrad":
                    grads = tf1.constant(rng.standard_normal(grad_shape).astype(np.float32))
                    r = tf.raw_ops.ResizeBilinearGrad(
                        grads=grads, original_image=tf1.constant(image(shape, dtype)),
                        align_corners=align, half_pixel_centers=half)
                else:
                    grads = tf1.constant(image(grad_shape, dtype))
                    r = tf.raw_ops.ResizeNearestNeighborGrad(
                        grads=grads, size=tf1.constant(np.array(shape[1:3], np.int32)),
                        align_corners=align, half_pixel_centers=half)
                fetches.append(out(r, f"g{k}_{int(align)}{int(half)}"))
    run_case(f"{op}_{np.dtype(dtype).name}", g, fetches, rtol, rtol)


for dtype in (np.float32, np.float64, np.float16):
    resize_grad_case("ResizeBilinearGrad", dtype, 1e-6)
for dtype in (np.float32, np.float16, np.int32):
    resize_grad_case("ResizeNearestNeighborGrad", dtype, 1e-6)

# tf.gradients through the resizes.
g = tf1.Graph()
with g.as_default():
    fetches = []
    for k, (shape, size) in enumerate(RESIZE_CASES):
        x = tf1.constant(image(shape, np.float32))
        for align, half in ATTRS:
            for op in ("ResizeBilinear", "ResizeNearestNeighbor"):
                y = getattr(tf.raw_ops, op)(images=x, size=tf1.constant(np.array(size, np.int32)),
                                            align_corners=align, half_pixel_centers=half)
                w = tf1.constant(rng.standard_normal((shape[0],) + size + (shape[3],)).astype(np.float32))
                (dx,) = tf1.gradients(tf.reduce_sum(y * w), [x])
                fetches.append(out(dx, f"d_{op}_{k}_{int(align)}{int(half)}"))
run_case("gradients_resize", g, fetches, 1e-6, 1e-6)

sys.exit(summary_exit_code())
