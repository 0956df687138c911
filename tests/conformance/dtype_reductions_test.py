"""Conformance: Sum, Mean, Prod, Max, Min, ArgMax and ArgMin on every real
dtype TensorFlow's CPU kernels take (half, bfloat16, float, double, the
signed and unsigned integers, and bool for the arg ops), over single axes,
axis pairs, all axes and keep_dims, and the sorted, unsorted and sparse
segment reductions on them, against TensorFlow 2.21 running the same
GraphDef.

Integers must match exactly: Sum and Prod wrap as TensorFlow's do, and Mean
of the types narrower than 64 bits is taken in int64 / uint64 (the mean of
int8 [100, 100, 100] is 100). Half and bfloat16 are folded in float by Weft;
TensorFlow folds some axes in the narrow type itself, so they are compared to
a few units in the last place of the type. Edge cases: a half mean whose sum
overflows is inf, the sum of 10000 half ones along the last axis is 10000,
empty reductions give each op's identity.

usage: dtype_reductions_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, decode, run_tf1_and_weft, summary_exit_code  # noqa: E402
from tf_compare import weft_fetches  # noqa: E402

np, tf, WEFT, WORK = start_conformance("dtype_reductions")
tf1 = tf.compat.v1
raw = tf.raw_ops
tf1.disable_eager_execution()
rng = np.random.RandomState(5)

# Relative tolerance per float type: a few units in its last place (the
# order of the additions differs).
RTOL = {"half": 4e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}
NARROW = ("half", "bfloat16")
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def sample(dtype, shape, near_one=False):
    """Values spread over the type's range: integer sums and products wrap."""
    if dtype == "bool":
        return rng.rand(*shape) > 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
        return rng.randint(lo, hi, size=shape, dtype=np.int64).astype(dtype)
    if near_one:
        return (rng.rand(*shape) + 0.5).astype(np.float32)
    return (rng.randn(*shape) * 4).astype(np.float32)


def constant(dtype, values):
    tf_dtype = tf.as_dtype(dtype)
    return tf1.constant(values, dtype=tf_dtype) if dtype not in NARROW \
        else tf.cast(tf1.constant(values, tf.float32), tf_dtype)


def compare(case, graph, fetches, dtype):
    ref, proc = run_tf1_and_weft(WEFT, WORK, case, graph, fetches)
    got = weft_fetches(case, proc)
    if got is None:
        return
    for name, want in zip(fetches, ref):
        have = decode(got[name])
        want = np.asarray(want)
        if have.dtype.kind == "f":
            have, want = have.astype(np.float64), want.astype(np.float64)
        if have.shape != want.shape:
            check(f"{case}/{name}", False, f"shape {have.shape} != TF {want.shape}")
        elif dtype in RTOL and not name.startswith("arg"):
            scale = np.max(np.abs(want[np.isfinite(want)]), initial=1.0)
            ok = np.allclose(have, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale * 0.05,
                             equal_nan=True)
            check(f"{case}/{name}", ok, f"{have.ravel()[:6]} != TF {want.ravel()[:6]}")
        else:
            ok = np.array_equal(have, want, equal_nan=have.dtype.kind == "f")
            check(f"{case}/{name}", ok, f"{have.ravel()[:6]} != TF {want.ravel()[:6]}")


AXES = {"all": None, "a0": 0, "a1": 1, "a2": 2, "a02": [0, 2], "am1": -1}


def reduction_case(dtype):
    g = tf1.Graph()
    fetches = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = constant(dtype, sample(dtype, (3, 5, 7)))
        p = constant(dtype, sample(dtype, (2, 3, 4), near_one=True))
        for tag, axis in AXES.items():
            for keep in (False, True):
                suffix = f"{tag}{'_k' if keep else ''}"
                for op, fn in (("sum", tf.reduce_sum), ("mean", tf.reduce_mean),
                               ("max", tf.reduce_max), ("min", tf.reduce_min)):
                    fn(x, axis=axis, keepdims=keep, name=f"{op}_{suffix}")
                    fetches.append(f"{op}_{suffix}")
                if tag in ("all", "a1", "a02"):
                    tf.reduce_prod(p if dtype in RTOL else x, axis=axis, keepdims=keep,
                                   name=f"prod_{suffix}")
                    fetches.append(f"prod_{suffix}")
        # Empty reductions: each op's identity (0, NaN or 0, 1, lowest, highest).
        e = constant(dtype, np.zeros((2, 0), dtype=np.float32 if dtype in NARROW else dtype))
        for op, fn in (("sum", tf.reduce_sum), ("mean", tf.reduce_mean),
                       ("prod", tf.reduce_prod), ("max", tf.reduce_max),
                       ("min", tf.reduce_min)):
            fn(e, axis=1, name=f"{op}_empty")
            fetches.append(f"{op}_empty")
    compare(f"reduce_{dtype}", g, fetches, dtype)


def arg_case(dtype):
    g = tf1.Graph()
    fetches = []
    with g.as_default(), tf1.device("/cpu:0"):
        values = sample(dtype, (4, 6, 5))
        if dtype in RTOL:  # ties, which go to the first index
            values = np.round(values)
        x = constant(dtype, values)
        for axis in (0, 1, 2, -1):
            for out in (tf.int16, tf.uint16, tf.int32, tf.int64):
                name = f"argmax_{axis}_{out.name}".replace("-", "m")
                tf.math.argmax(x, axis=axis, output_type=out, name=name)
                fetches.append(name)
            for out in (tf.int32, tf.int64):
                name = f"argmin_{axis}_{out.name}".replace("-", "m")
                tf.math.argmin(x, axis=axis, output_type=out, name=name)
                fetches.append(name)
    compare(f"arg_{dtype}", g, fetches, dtype)


def segment_case(dtype):
    """Sorted, unsorted (int16, int32 and int64 ids) and sparse segment
    reductions."""
    g = tf1.Graph()
    fetches = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = constant(dtype, sample(dtype, (6, 4), near_one=dtype in RTOL))
        sorted_ids = tf1.constant(np.array([0, 0, 1, 3, 3, 3], np.int32))
        for op in ("Sum", "Mean", "Prod", "Min", "Max"):
            getattr(raw, f"Segment{op}")(data=x, segment_ids=sorted_ids, name=f"seg{op}")
            fetches.append(f"seg{op}")
        for ids_type in (np.int16, np.int32, np.int64):
            ids = tf1.constant(np.array([4, 0, 2, 0, 4, 1], ids_type))
            # TensorFlow's OpDefs take int16 ids for UnsortedSegmentSum only.
            for op in ("Sum",) if ids_type == np.int16 else ("Sum", "Prod", "Min", "Max"):
                name = f"unsorted{op}_{np.dtype(ids_type).name}"
                getattr(raw, f"UnsortedSegment{op}")(data=x, segment_ids=ids,
                                                     num_segments=5, name=name)
                fetches.append(name)
        idx = tf1.constant(np.array([0, 2, 5, 1], np.int32))
        seg = tf1.constant(np.array([0, 0, 1, 2], np.int32))
        ops = ("Sum", "Mean", "SqrtN") if dtype in RTOL else ("Sum",)
        for op in ops:
            getattr(raw, f"SparseSegment{op}")(data=x, indices=idx, segment_ids=seg,
                                               name=f"sparse{op}")
            fetches.append(f"sparse{op}")
            if dtype in RTOL:  # the gradients, back to the 6 data rows
                gy = constant(dtype, sample(dtype, (3, 4), near_one=True))
                getattr(raw, f"SparseSegment{op}Grad")(grad=gy, indices=idx, segment_ids=seg,
                                                      output_dim0=6, name=f"sparse{op}Grad")
                fetches.append(f"sparse{op}Grad")
    compare(f"segment_{dtype}", g, fetches, dtype)


def edge_cases():
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        tf.reduce_mean(tf1.constant(np.array([100, 100, 100], np.int8)), name="mean_int8_wide")
        tf.reduce_mean(tf1.constant(np.array([2 ** 30] * 3, np.int32)), name="mean_int32_wide")
        tf.reduce_mean(tf1.constant(np.array([200, 200], np.uint8)), name="mean_uint8_wide")
        tf.reduce_sum(tf1.constant(np.array([100, 100, 100], np.int8)), name="sum_int8_wraps")
        tf.reduce_prod(tf1.constant(np.array([65535, 65535], np.uint16)), name="prod_uint16_wraps")
        tf.reduce_mean(tf1.constant(np.array([60000, 60000], np.float16)), name="mean_half_inf")
        tf.reduce_sum(tf1.constant(np.ones([2, 10000], np.float16)), axis=1, name="sum_half_long")
    fetches = ["mean_int8_wide", "mean_int32_wide", "mean_uint8_wide", "sum_int8_wraps",
               "prod_uint16_wraps", "mean_half_inf", "sum_half_long"]
    compare("edges", g, fetches, "exact")


for t in ["half", "bfloat16", "float32", "float64"] + INTS:
    reduction_case(t)
for t in ["half", "bfloat16", "float32", "float64", "bool"] + INTS:
    arg_case(t)
for t in ["half", "bfloat16", "float32"] + INTS:
    segment_case(t)
edge_cases()
sys.exit(summary_exit_code())
