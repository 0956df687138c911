"""Conformance: element-wise ops on the dtypes beyond float, double, int32
and int64 that TensorFlow's CPU kernels take (int8, int16, uint8, uint16,
uint32, uint64), with broadcasting, against TensorFlow 2.21 running the same
GraphDef, bit for bit: wrapping sums and products, truncating and flooring
division, powers, comparisons, Square/Neg/Abs/Sign, AddN, ClipByValue,
Relu and Relu6 with their gradients;
Where on those types, half and bfloat16; element-wise math on bfloat16
and the ops half and bfloat16 run through their float kernels.
Each op is tried on exactly the types TensorFlow registers it for.

usage: dtype_cwise_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, decode, run_tf1_and_weft, run_weft  # noqa: E402
from tf_compare import summary_exit_code, weft_fetches  # noqa: E402

np, tf, WEFT, WORK = start_conformance("dtype_cwise")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops
rng = np.random.RandomState(9)

SIGNED = ["int8", "int16"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]

# op name -> (builder, the types it is tried on)
BINARY = {
    "add": (lambda x, y, n: raw.Add(x=x, y=y, name=n), SIGNED + ["uint8"]),
    "addv2": (lambda x, y, n: raw.AddV2(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "sub": (lambda x, y, n: raw.Sub(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "mul": (lambda x, y, n: raw.Mul(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "div": (lambda x, y, n: raw.Div(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "floordiv": (lambda x, y, n: raw.FloorDiv(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "floormod": (lambda x, y, n: raw.FloorMod(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "maximum": (lambda x, y, n: raw.Maximum(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "minimum": (lambda x, y, n: raw.Minimum(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "greater": (lambda x, y, n: raw.Greater(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "less_equal": (lambda x, y, n: raw.LessEqual(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "equal": (lambda x, y, n: raw.Equal(x=x, y=y, name=n), SIGNED + UNSIGNED),
    "not_equal": (lambda x, y, n: raw.NotEqual(x=x, y=y, name=n), SIGNED + UNSIGNED),
}
UNARY = {
    "square": (lambda x, n: raw.Square(x=x, name=n), SIGNED + UNSIGNED),
    "neg": (lambda x, n: raw.Neg(x=x, name=n), SIGNED),
    "abs": (lambda x, n: raw.Abs(x=x, name=n), SIGNED),
    "sign": (lambda x, n: raw.Sign(x=x, name=n), SIGNED),
}


def sample(dtype, shape, nonzero=False):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
    v = rng.randint(lo, hi, size=shape, dtype=np.int64)
    v.ravel()[:3] = [lo, hi, 0][: v.size]  # the extremes wrap
    if nonzero:
        v[v == 0] = 1
    return v.astype(dtype)


def run_case(dtype):
    g = tf1.Graph()
    fetches = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.constant(sample(dtype, (3, 5)))
        y = tf1.constant(sample(dtype, (3, 5), nonzero=True))
        row = tf1.constant(sample(dtype, (1, 5), nonzero=True))
        for name, (fn, types) in BINARY.items():
            if dtype in types:
                fn(x, y, f"{name}")
                fn(x, row, f"{name}_bcast")
                fetches += [name, f"{name}_bcast"]
        for name, (fn, types) in UNARY.items():
            if dtype in types:
                fn(x, name)
                fetches.append(name)
        # Relu and Relu6 with their gradients (TensorFlow's OpDefs take every
        # real type for these, not for the other activations).
        raw.Relu(features=x, name="relu")
        raw.Relu6(features=y, name="relu6")
        raw.ReluGrad(gradients=y, features=x, name="relu_grad")
        raw.Relu6Grad(gradients=x, features=y, name="relu6_grad")
        fetches += ["relu", "relu6", "relu_grad", "relu6_grad"]
        if dtype in SIGNED:
            exps = tf1.constant(rng.randint(0, 9, size=(3, 5)).astype(dtype))
            raw.Pow(x=x, y=exps, name="pow")
            fetches.append("pow")
        raw.AddN(inputs=[x, y, x], name="addn")
        fetches.append("addn")
        if dtype in SIGNED + ["uint8", "uint16"]:
            lo, hi = np.sort(sample(dtype, (2,)))
            raw.ClipByValue(t=x, clip_value_min=tf1.constant(lo), clip_value_max=tf1.constant(hi),
                            name="clip")
            fetches.append("clip")
    ref, proc = run_tf1_and_weft(WEFT, WORK, dtype, g, fetches)
    got = weft_fetches(dtype, proc)
    if got is None:
        return
    for name, want in zip(fetches, ref):
        have = decode(got[name])
        want = np.asarray(want)
        check(f"{dtype}/{name}", have.shape == want.shape and np.array_equal(have, want),
              f"{have.ravel()[:6]} != TF {want.ravel()[:6]}")


def division_by_zero(dtype):
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        raw.FloorDiv(x=tf1.constant(np.array([1, 2], dtype)),
                     y=tf1.constant(np.array([1, 0], dtype)), name="z")
    path = os.path.join(WORK, f"zero_{dtype}.pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    proc = run_weft(WEFT, path, ["z"])
    check(f"{dtype}/division_by_zero", proc.returncode != 0 and
          "Integer division by zero" in proc.stderr, clip(proc.stderr))


def where_case():
    """Where (the coordinates of the nonzero elements) on the integer types
    against TensorFlow, and on half and bfloat16 (which TensorFlow's CPU
    kernel refuses: "No WhereOp available for float16/half type on CPU")
    against NumPy's argwhere: -0 is zero, NaN is not."""
    g = tf1.Graph()
    fetches, numpy_ref = [], {}
    with g.as_default(), tf1.device("/cpu:0"):
        for dtype in SIGNED + UNSIGNED + ["half", "bfloat16"]:
            if dtype in ("half", "bfloat16"):
                v = np.array([[0, -0.0, 1e-3], [np.nan, 0, -2], [0, 0, 0]], np.float32)
                x = tf.cast(tf1.constant(v), tf.as_dtype(dtype))
                numpy_ref[f"where_{dtype}"] = np.argwhere(v != 0)
            else:
                x = tf1.constant(np.array([[0, 1, 0], [3, 0, 0], [0, 0, 7]], dtype))
            tf.where(x, name=f"where_{dtype}")
            fetches.append(f"where_{dtype}")
    tf_fetches = [f for f in fetches if f not in numpy_ref]
    ref, _ = run_tf1_and_weft(WEFT, WORK, "where_tf", g, tf_fetches)
    want_by_name = dict(zip(tf_fetches, ref), **numpy_ref)
    got = weft_fetches("where", run_weft(WEFT, os.path.join(WORK, "where_tf.pb"), fetches))
    if got is None:
        return
    for name in fetches:
        have, want = decode(got[name]), np.asarray(want_by_name[name])
        check(name, have.shape == want.shape and np.array_equal(have, want),
              f"{have.tolist()} != {want.tolist()}")


def narrow_float_case(dtype):
    """Element-wise math on bfloat16 (and the ops both narrow types run
    through their float kernels: ClipByValue, DivNoNan, Einsum, Range,
    ListDiff) against TensorFlow: within one unit in the last
    place of the type (TensorFlow rounds inside some multi-step ops,
    Weft once), comparisons and predicates exactly."""
    tdt = tf.as_dtype(dtype)
    g = tf1.Graph()
    fetches = []
    with g.as_default(), tf1.device("/cpu:0"):
        def narrow(values):
            return tf.cast(tf1.constant(np.asarray(values, np.float32)), tdt)
        x = narrow(rng.uniform(-3, 3, (4, 5)))
        y = narrow(rng.uniform(0.5, 2, (4, 5)) * rng.choice([-1, 1], (4, 5)))
        p = narrow(rng.uniform(0.1, 3, (4, 5)))
        u = narrow(rng.uniform(-0.9, 0.9, (4, 5)))
        special = narrow([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0])
        ops = {}
        if dtype == "bfloat16":
            for op in ("Abs", "Neg", "Sign", "Square", "Exp", "Expm1", "Floor", "Ceil",
                       "Round", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Erf", "Erfc",
                       "Atan", "Sinh", "Cosh", "Asinh"):
                ops[op] = getattr(raw, op)(x=x)
            for op in ("Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal"):
                ops[op] = getattr(raw, op)(x=p)
            ops["Acosh"] = raw.Acosh(x=p + tf.cast(1, tdt))
            for op in ("Asin", "Acos", "Atanh"):
                ops[op] = getattr(raw, op)(x=u)
            for op in ("IsFinite", "IsInf", "IsNan"):
                ops[op] = getattr(raw, op)(x=special)
            for op in ("Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum",
                       "FloorMod", "TruncateDiv", "Atan2", "SquaredDifference", "Xdivy",
                       "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"):
                ops[op] = getattr(raw, op)(x=x, y=y)
            ops["FloorDiv"] = raw.FloorDiv(x=x, y=y)
            ops["Pow"] = raw.Pow(x=p, y=y)
            ops["Xlogy"] = raw.Xlogy(x=x, y=p)
            ops["Xlog1py"] = raw.Xlog1py(x=x, y=p)
            ops["AddV2_bcast"] = raw.AddV2(x=x, y=y[0])
            t = tf.tanh(u)
            ops["TanhGrad"] = raw.TanhGrad(y=t, dy=x)
            ops["SigmoidGrad"] = raw.SigmoidGrad(y=tf.sigmoid(u), dy=x)
            ops["SqrtGrad"] = raw.SqrtGrad(y=p, dy=x)
            ops["RsqrtGrad"] = raw.RsqrtGrad(y=p, dy=x)
            ops["ReciprocalGrad"] = raw.ReciprocalGrad(y=p, dy=x)
        ops["ClipByValue"] = raw.ClipByValue(t=x, clip_value_min=narrow(-1.5),
                                             clip_value_max=narrow(2.0))
        ops["DivNoNan"] = raw.DivNoNan(x=x, y=y * narrow(np.eye(4, 5)))
        ops["Einsum"] = raw.Einsum(inputs=[x, tf.transpose(y)], equation="ij,jk->ik")
        if dtype == "bfloat16":  # TensorFlow's shape function refuses half
            ops["Range"] = raw.Range(start=narrow(0.5), limit=narrow(4.0), delta=narrow(0.75))
        ops["ListDiff"] = raw.ListDiff(x=narrow([1, 2, 3, 4, 2]), y=narrow([2, 5]))[0]
        for name, t in ops.items():
            tf.identity(t, name=f"{dtype}_{name}")
            fetches.append(f"{dtype}_{name}")
    ref, proc = run_tf1_and_weft(WEFT, WORK, f"narrow_{dtype}", g, fetches)
    got = weft_fetches(f"narrow_{dtype}", proc)
    if got is None:
        return
    ulp = {"bfloat16": 2.0 ** -7, "half": 2.0 ** -10}[dtype]
    for name, want in zip(fetches, ref):
        have = decode(got[name])
        want = np.asarray(want)
        if want.dtype == bool:
            ok = np.array_equal(have, want)
        elif name.endswith("_Einsum"):
            # TensorFlow sums the products in the narrow type, Weft in float
            # (rounding once): a few units of the largest value apart.
            have, want = have.astype(np.float64), want.astype(np.float64)
            ok = np.allclose(have, want, rtol=0, atol=8 * ulp * np.max(np.abs(want)))
        else:
            have, want = have.astype(np.float64), want.astype(np.float64)
            ok = have.shape == want.shape and np.allclose(
                have, want, rtol=ulp, atol=ulp * 1e-2, equal_nan=True)
        check(name, ok, f"{have.ravel()[:6]} != TF {want.ravel()[:6]}")


for t in SIGNED + UNSIGNED:
    run_case(t)
    division_by_zero(t)
where_case()
narrow_float_case("bfloat16")
narrow_float_case("half")
sys.exit(summary_exit_code())
