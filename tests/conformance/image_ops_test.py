"""Conformance: the image ops of ops/image_ops.cc, run by `weft run`
against TensorFlow 2.21 on the same GraphDef (tf.compat.v1 graph mode,
tf.raw_ops and the tf.image wrappers that build them):
  - RGBToHSV / HSVToRGB (float, double, half; bfloat16 through a cast),
    with grey pixels, zeros, negative and >1 values, inf;
  - AdjustHue, AdjustSaturation (float), AdjustContrastv2 (float, rank 3
    to 5); empty images (TensorFlow 2.21 refuses to build the deprecated
    AdjustContrast, so its v1 kernel is checked in tests/ops only);
  - DrawBoundingBoxes / V2 (float, half; 1, 3 and 4 channels; default and
    given colours; boxes inverted, partly and wholly outside);
  - NonMaxSuppression, V2 to V5 (float and half; score thresholds, padding,
    soft-NMS sigma and selected_scores), WithOverlaps and
    CombinedNonMaxSuppression (shared and per-class boxes, pad_per_class,
    clip_boxes);
  - CropAndResize (every integer and float type; bilinear, nearest,
    extrapolation, one-pixel crops, flipped and outside boxes),
    CropAndResizeGradImage (float, half, double) and CropAndResizeGradBoxes;
  - the tf.image wrappers: rgb_to_hsv, hsv_to_rgb, adjust_hue,
    adjust_saturation, adjust_contrast, draw_bounding_boxes,
    non_max_suppression (+ _with_scores, _overlaps),
    combined_non_max_suppression, crop_and_resize, resize (area, bicubic,
    lanczos3/5, gaussian, mitchellcubic; with and without antialias),
    extract_patches;
  - ResizeArea and ResizeBicubic (float, double, half, uint8, int16, int32;
    every align_corners / half_pixel_centers pair), ResizeBicubicGrad
    (float, double), ScaleAndTranslate (every kernel, antialias on and off,
    translations) and ScaleAndTranslateGrad;
  - ExtractImagePatches (float, half, double, integers; VALID and SAME,
    strides, rates, a window the size of the image);
  - tf.gradients through CropAndResize (image and boxes), ResizeBicubic,
    ScaleAndTranslate and extract_patches (Weft's builder-free gradients
    are TensorFlow's graph run by Weft).

Tolerances: the colour-space ops, hue, saturation, crops and suppressions
do TensorFlow's arithmetic in its order: float to 2 ulps, half/bfloat16 to
1 ulp (integers and selected indices exactly). The contrast ops' means sum
in double where TensorFlow's Eigen reduction sums in float: to 1e-5
relative and absolute. The boxes' gradient sums per box in TensorFlow's
order too (2 ulps, 1e-6 absolute near 0). The resamplings sum their taps in
TensorFlow's order (4 ulps, 1e-5 absolute where sums cancel); patches are
copies (exact).

TensorFlow runs with TF_ENABLE_ONEDNN_OPTS=0 (its reference CPU kernels).

usage: image_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, decode, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("image_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops

rng = np.random.RandomState(23)


def ordered_bits(a):
    """Bit patterns of a float array, ordered like the values."""
    a = np.asarray(a)
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    b = a.view(ints).astype(np.int64)
    top = -(1 << (8 * a.dtype.itemsize - 1))
    return np.where(b < 0, top - b, b)


def ulp_close(have, want, ulps, atol):
    if have.shape != want.shape:
        return False, f"shape {have.shape} != TF {want.shape}"
    if want.size == 0:
        return True, ""
    have = have.astype(want.dtype)
    nan = np.isnan(have.astype(np.float64)) & np.isnan(want.astype(np.float64))
    near = np.abs(have.astype(np.float64) - want.astype(np.float64)) <= atol
    same = have.astype(np.float64) == want.astype(np.float64)  # inf == inf, 0 == -0
    apart = np.abs(ordered_bits(have) - ordered_bits(want)) <= ulps
    ok = nan | near | same | apart
    bad = np.argwhere(~ok)
    detail = "" if ok.all() else (
        f"{len(bad)} differ, first at {tuple(bad[0])}: {have[tuple(bad[0])]} vs TF "
        f"{want[tuple(bad[0])]}")
    return bool(ok.all()), detail


def run_case(case, graph, fetches, ulps=2, atol=0.0):
    """Runs `fetches` (tensors named through tf.identity) in TensorFlow and
    with weft on the same GraphDef; floats to `ulps` (half: 1) or atol,
    the rest exactly."""
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    names = [t.name[:-2] for t in fetches]
    with tf1.Session(graph=graph) as sess:
        ref = sess.run(fetches)
    proc = run_weft(WEFT, path, names)
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return
    got = json.loads(proc.stdout)["fetches"]
    for name, want in zip(names, ref):
        want = np.asarray(want)
        have = decode(got[name])
        if want.dtype.kind == "f":
            ok, detail = ulp_close(have, want, 1 if want.dtype == np.float16 else ulps, atol)
        else:
            ok = have.shape == want.shape and np.array_equal(have, want.astype(have.dtype))
            detail = f"{have.reshape(-1)[:20]} != TF {want.reshape(-1)[:20]}"
        check(f"{case}/{name}", ok, detail)


def out(t, name):
    return tf1.identity(t, name=name)


def const(v):
    return tf1.constant(v)


# ---- Colour spaces.
def color_pixels(dtype, n=60):
    base = rng.uniform(0, 1, (n, 3))
    extra = np.array([[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [1, 0, 0], [0, 1, 0],
                      [0, 0, 1], [0.2, 0.2, 0.7], [0.7, 0.2, 0.2], [0.2, 0.7, 0.7],
                      [-0.5, 0.25, 2.0], [3.0, -1.0, 0.5], [1e-8, 0, 0],
                      [0.3, 0.3, 0.30001], [np.inf, 0.5, 0.2], [0.9, 0.9, 0.1]])
    return np.concatenate([base, extra]).reshape(1, -1, 5, 3).astype(dtype)


def colorspace_case(dtype):
    g = tf1.Graph()
    with g.as_default():
        img = color_pixels(np.float32 if dtype == tf.bfloat16 else dtype)
        x = tf.cast(const(img), dtype) if dtype == tf.bfloat16 else const(img)
        hsv = raw.RGBToHSV(images=x)
        hsv_in = np.concatenate([rng.uniform(0, 1, (40, 3)),
                                 [[0, 0, 0], [1, 1, 1], [0.999, 1, 1], [0.5, 0, 1],
                                  [1 / 6, 1, 0.5], [0.75, 0.5, 2.0], [1.2, 0.5, 0.5],
                                  [-0.1, 0.5, 0.5], [0.3, 1.5, 0.7], [0.0, 0.0, -1.0]]])
        hsv_in = hsv_in.reshape(2, 5, 5, 3).astype(np.float32 if dtype == tf.bfloat16 else dtype)
        y = tf.cast(const(hsv_in), dtype) if dtype == tf.bfloat16 else const(hsv_in)
        rgb = raw.HSVToRGB(images=y)
        if dtype == tf.bfloat16:  # compared as float32: exact widening
            hsv, rgb = tf.cast(hsv, tf.float32), tf.cast(rgb, tf.float32)
        fetches = [out(hsv, "hsv"), out(rgb, "rgb")]
    # bfloat16 values widen exactly: 1 bfloat16 ulp is 2^16 float ulps.
    run_case(f"colorspace_{np.dtype(dtype.as_numpy_dtype if dtype == tf.bfloat16 else dtype).name}"
             if dtype != tf.bfloat16 else "colorspace_bfloat16", g, fetches,
             ulps=(1 << 16) if dtype == tf.bfloat16 else 2)


for dt in (np.float32, np.float64, np.float16, tf.bfloat16):
    colorspace_case(dt)

# Rank 1 and 2: one pixel, a row of pixels.
g = tf1.Graph()
with g.as_default():
    fetches = [out(raw.RGBToHSV(images=const(np.array([0.2, 0.7, 0.4], np.float32))),
                   "hsv_pixel"),
               out(raw.HSVToRGB(images=const(rng.uniform(0, 1, (4, 3)).astype(np.float32))),
                   "rgb_row")]
run_case("colorspace_rank_1_and_2", g, fetches)

# Hue and saturation (float; TensorFlow's CPU kernels are float only).
g = tf1.Graph()
with g.as_default():
    img = const(color_pixels(np.float32))
    fetches = []
    for k, d in enumerate((-1.0, -0.3, 0.0, 0.25, 0.5, 0.9, 1.0)):
        fetches.append(out(raw.AdjustHue(images=img, delta=d), f"hue{k}"))
    for k, s in enumerate((0.0, 0.5, 1.0, 2.5, 100.0)):
        fetches.append(out(raw.AdjustSaturation(images=img, scale=s), f"sat{k}"))
    big = const(rng.uniform(0, 1, (2, 3, 17, 19, 3)).astype(np.float32))
    fetches.append(out(raw.AdjustHue(images=big, delta=0.4), "hue_rank5"))
    fetches.append(out(raw.AdjustSaturation(images=big, scale=1.7), "sat_rank5"))
    empty = const(np.zeros((0, 4, 3), np.float32))
    fetches.append(out(raw.AdjustHue(images=empty, delta=0.1), "hue_empty"))
run_case("hue_saturation", g, fetches)

# Contrast.
g = tf1.Graph()
with g.as_default():
    fetches = []
    for k, shape in enumerate(((7, 9, 3), (2, 8, 6, 4), (2, 2, 5, 3, 1), (1, 1, 2))):
        x = const(rng.uniform(-2, 5, shape).astype(np.float32))
        for j, f in enumerate((0.0, 0.5, 1.0, 2.3, -1.0)):
            fetches.append(out(raw.AdjustContrastv2(images=x, contrast_factor=f), f"v2_{k}_{j}"))
    fetches.append(out(raw.AdjustContrastv2(images=const(np.zeros((0, 3, 3), np.float32)),
                                            contrast_factor=2.0), "v2_empty"))
run_case("contrast", g, fetches, ulps=2, atol=1e-5)


# ---- Drawing boxes.
def draw_case(dtype, depth):
    g = tf1.Graph()
    with g.as_default():
        img = const(rng.uniform(0, 1, (2, 9, 11, depth)).astype(dtype))
        boxes = const(np.array([
            [[0.1, 0.1, 0.5, 0.6], [0.3, 0.2, 0.9, 0.95], [0.7, 0.7, 0.2, 0.9],
             [-0.5, -0.2, 0.5, 0.4], [0.6, 0.5, 1.5, 1.3], [1.2, 1.2, 1.5, 1.5],
             [0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5]] + [[0.2, 0.1 * i, 0.8, 0.1 * i + 0.05]
                                                         for i in range(5)],
            [[0.25, 0.25, 0.75, 0.75]] * 13], np.float32))
        colors = const(rng.uniform(0, 1, (3, depth + 1)).astype(np.float32))
        fetches = [out(raw.DrawBoundingBoxes(images=img, boxes=boxes), "v1"),
                   out(raw.DrawBoundingBoxesV2(images=img, boxes=boxes, colors=colors), "v2"),
                   out(raw.DrawBoundingBoxesV2(images=img, boxes=boxes,
                                               colors=const(np.zeros((0, depth), np.float32))),
                       "v2_default"),
                   out(tf.image.draw_bounding_boxes(img, boxes, colors), "wrapper")]
    run_case(f"draw_{np.dtype(dtype).name}_{depth}", g, fetches, ulps=0)


for dt in (np.float32, np.float16):
    for depth in (1, 3, 4):
        draw_case(dt, depth)


# ---- Non-max suppression.
def random_boxes(n, spread=1.0):
    y = rng.uniform(0, spread, n)
    x = rng.uniform(0, spread, n)
    h = rng.uniform(0.05, 0.4, n)
    w = rng.uniform(0.05, 0.4, n)
    b = np.stack([y, x, y + h, x + w], 1)
    flip = rng.rand(n) < 0.3
    b[flip] = b[flip][:, [2, 3, 0, 1]]  # corners in either order
    return b.astype(np.float32)


def nms_case(dtype, n, tag):
    g = tf1.Graph()
    with g.as_default():
        bv = random_boxes(n)
        sv = rng.uniform(0, 1, n).astype(np.float32)
        sv[::7] = sv[0]  # ties: lower index first
        boxes, scores = const(bv.astype(dtype)), const(sv.astype(dtype))
        fetches = []
        if dtype == np.float32:
            fetches.append(out(raw.NonMaxSuppression(boxes=boxes, scores=scores,
                                                     max_output_size=10, iou_threshold=0.3), "v1"))
        for k, iou in enumerate((0.0, 0.3, 0.7, 1.0)):
            t = const(np.array(iou, dtype))
            fetches.append(out(raw.NonMaxSuppressionV2(boxes=boxes, scores=scores,
                                                       max_output_size=n, iou_threshold=t),
                               f"v2_{k}"))
            st = const(np.array(0.4, dtype))
            fetches.append(out(raw.NonMaxSuppressionV3(boxes=boxes, scores=scores,
                                                       max_output_size=7, iou_threshold=t,
                                                       score_threshold=st), f"v3_{k}"))
            for pad in (False, True):
                r = raw.NonMaxSuppressionV4(boxes=boxes, scores=scores, max_output_size=12,
                                            iou_threshold=t, score_threshold=st,
                                            pad_to_max_output_size=pad)
                fetches += [out(r[0], f"v4_{k}_{int(pad)}"), out(r[1], f"v4n_{k}_{int(pad)}")]
        for k, (sigma, st) in enumerate(((0.0, 0.1), (0.5, 0.0), (0.2, 0.3), (1.0, -1.0))):
            r = raw.NonMaxSuppressionV5(boxes=boxes, scores=scores, max_output_size=n,
                                        iou_threshold=const(np.array(0.5, dtype)),
                                        score_threshold=const(np.array(st, dtype)),
                                        soft_nms_sigma=const(np.array(sigma, dtype)),
                                        pad_to_max_output_size=(k % 2 == 1))
            fetches += [out(r[0], f"v5i_{k}"), out(r[1], f"v5s_{k}"), out(r[2], f"v5n_{k}")]
        zero = raw.NonMaxSuppressionV3(boxes=boxes, scores=scores, max_output_size=0,
                                       iou_threshold=const(np.array(0.5, dtype)),
                                       score_threshold=const(np.array(0.0, dtype)))
        fetches.append(out(zero, "max0"))
    run_case(f"nms_{np.dtype(dtype).name}_{tag}", g, fetches)


for dt in (np.float32, np.float16):
    nms_case(dt, 40, "40")
    nms_case(dt, 1, "1")

g = tf1.Graph()
with g.as_default():
    empty = raw.NonMaxSuppressionV3(boxes=const(np.zeros((0, 4), np.float32)),
                                    scores=const(np.zeros(0, np.float32)), max_output_size=5,
                                    iou_threshold=0.5, score_threshold=0.0)
    ov = rng.uniform(0, 1, (30, 30)).astype(np.float32)
    ov = (ov + ov.T) / 2
    r_ov = raw.NonMaxSuppressionWithOverlaps(overlaps=const(ov),
                                             scores=const(rng.uniform(0, 1, 30).astype(np.float32)),
                                             max_output_size=10, overlap_threshold=0.6,
                                             score_threshold=0.2)
    fetches = [out(empty, "empty"), out(r_ov, "overlaps")]
run_case("nms_misc", g, fetches)


def combined_case(q, classes, pad, clip_boxes, tag):
    g = tf1.Graph()
    with g.as_default():
        batch, n = 3, 25
        bv = np.stack([random_boxes(n * q, spread=1.2).reshape(n, q, 4) for _ in range(batch)])
        sv = rng.uniform(0, 1, (batch, n, classes)).astype(np.float32)
        r = raw.CombinedNonMaxSuppression(boxes=const(bv), scores=const(sv),
                                          max_output_size_per_class=4, max_total_size=9,
                                          iou_threshold=0.4, score_threshold=0.2,
                                          pad_per_class=pad, clip_boxes=clip_boxes)
        fetches = [out(r[i], f"c{i}") for i in range(4)]
        big = raw.CombinedNonMaxSuppression(boxes=const(bv), scores=const(sv),
                                            max_output_size_per_class=100, max_total_size=200,
                                            iou_threshold=0.6, score_threshold=0.0,
                                            pad_per_class=pad, clip_boxes=clip_boxes)
        fetches += [out(big[i], f"big{i}") for i in range(4)]
    run_case(f"combined_nms_{tag}", g, fetches)


combined_case(1, 4, False, True, "shared")
combined_case(4, 4, False, False, "per_class")
combined_case(1, 3, True, True, "pad_per_class")


# ---- Crop and resize.
def crop_boxes():
    return np.array([[0.1, 0.2, 0.7, 0.9], [0.0, 0.0, 1.0, 1.0], [0.8, 0.7, 0.2, 0.1],
                     [-0.3, -0.2, 1.2, 1.4], [0.5, 0.5, 0.5, 0.5], [0.25, 0.1, 0.3, 0.95],
                     [1.1, 0.2, 1.5, 0.6]], np.float32)


def crop_case(dtype):
    g = tf1.Graph()
    with g.as_default():
        kind = np.dtype(dtype).kind
        iv = (rng.randint(0, 100, (2, 9, 11, 3)) if kind in "iu"
              else rng.standard_normal((2, 9, 11, 3)) * 4).astype(dtype)
        img = const(iv)
        boxes = const(crop_boxes())
        ind = const(np.array([0, 1, 1, 0, 1, 0, 1], np.int32))
        fetches = []
        for k, size in enumerate(((5, 4), (1, 1), (1, 6), (13, 17))):
            for method in ("bilinear", "nearest"):
                for ext in (0.0, -3.5):
                    r = raw.CropAndResize(image=img, boxes=boxes, box_ind=ind,
                                          crop_size=np.array(size, np.int32), method=method,
                                          extrapolation_value=ext)
                    fetches.append(out(r, f"crop_{k}_{method}_{int(ext != 0)}"))
        grads = const(rng.standard_normal((7, 5, 4, 3)).astype(np.float32))
        fetches.append(out(raw.CropAndResizeGradBoxes(grads=grads, image=img, boxes=boxes,
                                                      box_ind=ind), "grad_boxes"))
        grads1 = const(rng.standard_normal((7, 1, 1, 3)).astype(np.float32))
        fetches.append(out(raw.CropAndResizeGradBoxes(grads=grads1, image=img, boxes=boxes,
                                                      box_ind=ind), "grad_boxes_1x1"))
        if dtype in (np.float32, np.float16, np.float64):
            for method in ("bilinear", "nearest"):
                for k, gr in enumerate((grads, grads1)):
                    r = raw.CropAndResizeGradImage(grads=gr, boxes=boxes, box_ind=ind,
                                                   image_size=np.array([2, 9, 11, 3], np.int32),
                                                   T=dtype, method=method)
                    fetches.append(out(r, f"grad_image_{method}_{k}"))
    run_case(f"crop_and_resize_{np.dtype(dtype).name}", g, fetches, ulps=2, atol=1e-6)


for dt in (np.float32, np.float16, np.float64, np.uint8, np.uint16, np.int8, np.int16,
           np.int32, np.int64):
    crop_case(dt)


# ---- The tf.image wrappers.
g = tf1.Graph()
with g.as_default():
    img = const(rng.uniform(0, 1, (2, 6, 7, 3)).astype(np.float32))
    bv = random_boxes(20)
    sv = rng.uniform(0, 1, 20).astype(np.float32)
    sel, sel_scores = tf.image.non_max_suppression_with_scores(bv, sv, 8, 0.5, 0.1, 0.3)
    ov = rng.uniform(0, 1, (20, 20)).astype(np.float32)
    comb = tf.image.combined_non_max_suppression(
        rng.uniform(0, 1, (2, 10, 1, 4)).astype(np.float32),
        rng.uniform(0, 1, (2, 10, 3)).astype(np.float32), 3, 5)
    fetches = [
        out(tf.image.rgb_to_hsv(img), "rgb_to_hsv"),
        out(tf.image.hsv_to_rgb(img), "hsv_to_rgb"),
        out(tf.image.adjust_hue(img, 0.2), "adjust_hue"),
        out(tf.image.adjust_saturation(img, 1.8), "adjust_saturation"),
        out(tf.image.adjust_contrast(img, 1.4), "adjust_contrast"),
        out(tf.image.non_max_suppression(bv, sv, 10, 0.4), "nms"),
        out(sel, "nms_scores_i"), out(sel_scores, "nms_scores_s"),
        out(tf.image.non_max_suppression_overlaps(ov, sv, 6, 0.5), "nms_overlaps"),
        out(comb.nmsed_boxes, "comb_boxes"), out(comb.nmsed_scores, "comb_scores"),
        out(comb.nmsed_classes, "comb_classes"), out(comb.valid_detections, "comb_valid"),
        out(tf.image.crop_and_resize(img, crop_boxes()[:3], [0, 1, 1], [4, 5]), "crop"),
    ]
run_case("tf_image_wrappers", g, fetches, ulps=2, atol=1e-5)


# ---- Area and bicubic resizes, scale and translate.
RESIZE_CASES = [((1, 4, 4, 3), (7, 9)), ((2, 9, 11, 3), (4, 5)), ((2, 5, 5, 1), (5, 5)),
                ((3, 1, 1, 2), (3, 4)), ((1, 6, 3, 5), (13, 2)), ((1, 7, 10, 2), (3, 7))]


def image(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.randint(0, 120, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def resample_case(dtype):
    g = tf1.Graph()
    with g.as_default():
        fetches = []
        for k, (shape, size) in enumerate(RESIZE_CASES):
            img = const(image(shape, dtype))
            sz = const(np.array(size, np.int32))
            for align in (False, True):
                fetches.append(out(raw.ResizeArea(images=img, size=sz, align_corners=align),
                                   f"area{k}_{int(align)}"))
            for align, half in ((False, False), (True, False), (False, True)):
                fetches.append(out(raw.ResizeBicubic(images=img, size=sz, align_corners=align,
                                                     half_pixel_centers=half),
                                   f"bicubic{k}_{int(align)}{int(half)}"))
            for kernel in ("lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                           "keyscubic", "mitchellcubic"):
                for anti in (True, False):
                    st = raw.ScaleAndTranslate(
                        images=img, size=sz,
                        scale=const(np.array([size[0] / shape[1], size[1] / shape[2] * 0.9],
                                             np.float32)),
                        translation=const(np.array([0.25, -0.5], np.float32)),
                        kernel_type=kernel, antialias=anti)
                    fetches.append(out(st, f"st{k}_{kernel}_{int(anti)}"))
    run_case(f"resample_{np.dtype(dtype).name}", g, fetches, ulps=4, atol=1e-5)


for dt in (np.float32, np.float64, np.float16, np.uint8, np.int32, np.int16):
    resample_case(dt)

g = tf1.Graph()
with g.as_default():
    fetches = []
    for k, (shape, size) in enumerate(RESIZE_CASES):
        grads = const(rng.standard_normal((shape[0],) + size + (shape[3],)).astype(np.float32))
        for dt in (np.float32, np.float64):
            orig = const(image(shape, dt))
            for align, half in ((False, False), (True, False), (False, True)):
                fetches.append(out(raw.ResizeBicubicGrad(grads=grads, original_image=orig,
                                                         align_corners=align,
                                                         half_pixel_centers=half),
                                   f"bicubic_grad{k}_{np.dtype(dt).name}_{int(align)}{int(half)}"))
        orig = const(image(shape, np.float32))
        for kernel in ("lanczos3", "triangle", "keyscubic", "box"):
            for anti in (True, False):
                r = raw.ScaleAndTranslateGrad(
                    grads=grads, original_image=orig,
                    scale=const(np.array([size[0] / shape[1], size[1] / shape[2]], np.float32)),
                    translation=const(np.array([0.5, 0.0], np.float32)), kernel_type=kernel,
                    antialias=anti)
                fetches.append(out(r, f"st_grad{k}_{kernel}_{int(anti)}"))
run_case("resample_grads", g, fetches, ulps=4, atol=1e-5)


# ---- Image patches.
def patches_case(dtype):
    g = tf1.Graph()
    with g.as_default():
        img = const(image((2, 7, 9, 3), dtype))
        fetches = []
        for k, (ks, st, rt) in enumerate((((1, 1), (1, 1), (1, 1)), ((2, 3), (1, 1), (1, 1)),
                                          ((3, 3), (2, 3), (1, 1)), ((2, 2), (1, 2), (2, 3)),
                                          ((7, 9), (1, 1), (1, 1)), ((4, 4), (3, 3), (2, 2)))):
            for pad in ("VALID", "SAME"):
                p = raw.ExtractImagePatches(images=img, ksizes=[1, ks[0], ks[1], 1],
                                            strides=[1, st[0], st[1], 1],
                                            rates=[1, rt[0], rt[1], 1], padding=pad)
                fetches.append(out(p, f"p{k}_{pad}"))
    run_case(f"patches_{np.dtype(dtype).name}", g, fetches, ulps=0)


for dt in (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.uint16):
    patches_case(dt)


# ---- tf.gradients through the differentiable image ops.
g = tf1.Graph()
with g.as_default():
    x = const(image((2, 6, 7, 3), np.float32))
    bx = const(crop_boxes()[:4])
    ind = const(np.array([0, 1, 0, 1], np.int32))
    fetches = []
    for method in ("bilinear", "nearest"):
        y = raw.CropAndResize(image=x, boxes=bx, box_ind=ind, crop_size=[4, 5], method=method)
        w = const(rng.standard_normal((4, 4, 5, 3)).astype(np.float32))
        dx, db = tf1.gradients(tf.reduce_sum(y * w), [x, bx])
        fetches += [out(dx, f"d_crop_image_{method}"), out(db, f"d_crop_boxes_{method}")]
    for align, half in ((False, False), (True, False), (False, True)):
        y = raw.ResizeBicubic(images=x, size=[9, 4], align_corners=align, half_pixel_centers=half)
        w = const(rng.standard_normal((2, 9, 4, 3)).astype(np.float32))
        (dx,) = tf1.gradients(tf.reduce_sum(y * w), [x])
        fetches.append(out(dx, f"d_bicubic_{int(align)}{int(half)}"))
    y = raw.ScaleAndTranslate(images=x, size=[4, 9], scale=[0.7, 1.4], translation=[0.3, -0.2],
                              kernel_type="lanczos3", antialias=True)
    w = const(rng.standard_normal((2, 4, 9, 3)).astype(np.float32))
    (dx,) = tf1.gradients(tf.reduce_sum(y * w), [x])
    fetches.append(out(dx, "d_scale_translate"))
    for pad in ("VALID", "SAME"):
        y = tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], pad)
        w = const(rng.standard_normal(y.shape.as_list()).astype(np.float32))
        (dx,) = tf1.gradients(tf.reduce_sum(y * w), [x])
        fetches.append(out(dx, f"d_patches_{pad}"))
run_case("gradients", g, fetches, ulps=4, atol=1e-5)

# tf.image.resize's area, bicubic and kernel methods (ResizeArea,
# ResizeBicubic, ScaleAndTranslate with antialias).
g = tf1.Graph()
with g.as_default():
    x = const(image((2, 12, 10, 3), np.float32))
    fetches = []
    for method in ("area", "bicubic", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        for anti in (False, True):
            for size in ((5, 7), (17, 13)):
                y = tf.image.resize(x, size, method=method, antialias=anti)
                fetches.append(out(y, f"resize_{method}_{int(anti)}_{size[0]}"))
    fetches.append(out(tf.image.extract_patches(x, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                                "SAME"), "extract_patches"))
run_case("tf_image_resize", g, fetches, ulps=4, atol=1e-5)

sys.exit(summary_exit_code())
