"""Conformance: TensorFlow's element-wise math ops run by `weft run` against
TensorFlow 2.21 on the same GraphDefs: the trigonometric and hyperbolic
functions, Erf/Erfc/Erfinv/Ndtri, Lgamma/Digamma/Polygamma, Expm1/Log1p,
Rint, IsFinite/IsNan/IsInf, the older unary ops on float16, Atan2, Xdivy,
Xlogy, Xlog1py, TruncateDiv/TruncateMod, Igamma/Igammac, the *Grad ops
(float16, and every float type where dy is 0), and the integer ops (Invert, PopulationCount, the bitwise ops and
shifts, TruncateDiv/TruncateMod). Inputs cover the domain edges: |x| > 1 for
Asin/Atanh, poles of Lgamma/Digamma, -1 for Log1p, 0/0 for Xdivy, +-0, inf,
NaN, subnormals and large arguments for Sin/Cos; binary ops broadcast a
column against a row, so every pair of edge values meets.

Tolerances:
- float16: bit for bit (after NaN matching). Both compute the function in
  float and round once (or at the same intermediate steps), and a float
  result's few-ulp difference almost never crosses a half rounding boundary.
- bool, integer results and rounding (Rint, Round, Floor, Ceil, Sign, Neg,
  Abs, TruncateDiv, TruncateMod, IsFinite, IsNan, IsInf): exact.
- float32/float64 transcendental functions: 4 ulps, or an absolute
  difference of 4 machine epsilons for results near 0 (where ulps shrink
  without bound). TensorFlow builds Eigen from its own newer snapshot, whose
  vectorised float functions (sin, log, erf, ...) are polynomial
  approximations that may differ from this Eigen 3.4's by an ulp or two,
  and doubles go through libm in one and Eigen's polynomials in the other.
  Lgamma and Digamma near their roots and Igamma where it is tiny lose
  relative accuracy in both, hence the absolute clause.
Infinities must agree in sign, NaN positions exactly.

Known differences, left out of the comparison:
- TensorFlow runs its CPU kernels with subnormals flushed to zero (FTZ/DAZ),
  Weft does not, so Digamma, Ndtri, Erfinv and Polygamma of a subnormal
  input differ (TensorFlow's value is the function at +-0). Lgamma of a
  subnormal is checked against the true -log|x| instead, and the float16
  gradient ops get inputs without subnormals.
- float64 Erf of +-inf and of the largest doubles is NaN in TensorFlow's
  newer Eigen; Weft's +-1 is checked against the true value.
- float16 Sigmoid, SigmoidGrad, SqrtGrad and RsqrtGrad are within 1 half
  ulp: TensorFlow's half forms of these (a rational approximation, another
  grouping of the products) were not pinned down.

usage: math_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, decode, run_weft, summary_exit_code  # noqa: E402
from tf_compare import nonfinite_agree, ordered  # noqa: E402

np, tf, WEFT, WORK = start_conformance("math_ops")
import json  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

ULPS = 4

FLOAT_TYPES = [np.float32, np.float64, np.float16]

UNARY = ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
         "Acosh", "Atanh", "Erf", "Erfc", "Erfinv", "Ndtri", "Lgamma",
         "Digamma", "Expm1", "Log1p", "Rint", "IsFinite", "IsNan", "IsInf"]
NO_HALF = {"Erfinv", "Ndtri", "Rint"}  # TensorFlow has no CPU half kernel
OLD_UNARY_HALF = ["Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log",
                  "Tanh", "Sigmoid", "Reciprocal", "Floor", "Ceil", "Round",
                  "Sign"]
EXACT = {"Rint", "Round", "Floor", "Ceil", "Sign", "Neg", "Abs",
         "TruncateDiv", "TruncateMod", "Square"}
BINARY = ["Atan2", "Xdivy", "Xlogy", "Xlog1py", "TruncateDiv", "TruncateMod",
          "Igamma", "Igammac", "Polygamma"]
BINARY_HALF = ["Atan2", "Xdivy", "Xlogy", "Xlog1py", "TruncateDiv"]
GRADS_HALF = ["TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad",
              "ReciprocalGrad"]


def unary_values(dtype):
    info = np.finfo(dtype)
    edges = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 2.5,
             -2.5, 3.0, -3.0, 0.25, 0.75, -0.75, 0.999, -0.999, 1.001,
             -1.001, 1e-3, -1e-3, 1e-6, 10.0, -10.0, 30.0, 88.7, -88.7, 100.0,
             -100.0, 1000.5, 1e4, -1e4, 1e6, 1e10, -1e10, 1e20, 710.0,
             float(info.max), -float(info.max), float(info.tiny),
             float(info.tiny) / 4, -float(info.tiny) / 8, np.inf, -np.inf,
             np.nan, np.pi, -np.pi, np.pi / 2, 1.4616321, 0.0001, 12345.678,
             -4.5, -7.0, 171.5, 5e-324]
    rng = np.random.RandomState(11)
    rand = np.concatenate([rng.uniform(-5, 5, 40), rng.uniform(-1, 1, 20),
                           np.exp(rng.uniform(-20, 20, 20))])
    with np.errstate(over="ignore", under="ignore"):
        return np.concatenate([edges, rand]).astype(dtype)


def binary_values(dtype):
    x = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.5, 7.0, 1e-3, 30.0,
                  1e4, np.inf, -np.inf, np.nan, 3.0, 0.25], dtype)
    y = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, 10.0, 1e-4, 100.0,
                  np.inf, -np.inf, np.nan, 3.0, -7.0, 1e3, -2.0], dtype)
    return x.reshape(-1, 1), y  # [16, 1] against [17]: broadcast [16, 17]


def compare(case, have, want, exact, half_ulps=0):
    want = np.asarray(want)
    if have.shape != want.shape:
        check(case, False, f"shape {have.shape} != TF {want.shape}")
        return
    if want.dtype.kind != "f":
        bad = have != want.astype(have.dtype)
        check(case, not bad.any(), f"{have[bad][:5]} != TF {want[bad][:5]}")
        return
    have = have.astype(want.dtype)
    ok, finite = nonfinite_agree(have, want)
    with np.errstate(over="ignore", invalid="ignore"):
        if exact or (want.dtype == np.float16 and half_ulps == 0):
            ok &= ~finite | (have == want)
        elif want.dtype == np.float16:
            ulps = np.abs(ordered(have) - ordered(want))
            ok &= ~finite | (ulps <= half_ulps)
        else:
            ulps = np.abs(ordered(have).astype(np.float64) - ordered(want).astype(np.float64))
            near = np.abs(have.astype(np.float64) - want.astype(np.float64)) <= \
                ULPS * np.finfo(want.dtype).eps
            ok &= ~finite | (ulps <= ULPS) | near
    bad = ~ok
    check(case, not bad.any(),
          f"{int(bad.sum())} differ; weft {have[bad][:4]} vs TF {want[bad][:4]}")


def run_and_compare(case, graph, outs, exact_ops):
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    names = ["out_" + n for n in outs]
    with tf1.Session(graph=graph) as sess:
        ref = sess.run([graph.get_tensor_by_name(n + ":0") for n in names])
    proc = run_weft(WEFT, path, names)
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return
    got = json.loads(proc.stdout)["fetches"]
    for op, name, want in zip(outs, names, ref):
        have = decode(got[name])
        known = KNOWN.get((case, op))
        if known is not None:
            u = unary_values(np.dtype(case).type)
            mask, truth = known(u)
            mask = np.broadcast_to(mask, have.shape)
            if truth is not None:
                with np.errstate(all="ignore"):
                    close = np.allclose(have[mask], truth[mask], rtol=1e-6,
                                        equal_nan=True)
                check(f"{case}/{op}/true_values_where_tf_differs", close,
                      f"weft {have[mask]} vs {truth[mask]}")
            have, want = have[~mask], np.asarray(want)[~mask]
        compare(f"{case}/{op}", have, want, op.split("_")[0] in exact_ops,
                HALF_ULPS.get(op, 0) if case == "float16" else 0)


def lgamma_of_subnormals(u):
    with np.errstate(all="ignore"):
        return subnormal(u), -np.log(np.abs(u.astype(np.float64)))


def subnormal(u):
    return (u != 0) & (np.abs(u) < np.finfo(u.dtype).tiny)


KNOWN = {
    ("float64", "Erf"): lambda u: (np.abs(u) > 1e300, np.sign(u)),
    ("float32", "Lgamma"): lgamma_of_subnormals,
    ("float64", "Lgamma"): lgamma_of_subnormals,
}
for _dt in ("float32", "float64", "float16"):
    for _op in ("Digamma", "Ndtri", "Erfinv", "Polygamma_orders"):
        KNOWN[(_dt, _op)] = lambda u: (subnormal(u), None)
HALF_ULPS = {"Sigmoid": 1, "SigmoidGrad": 1, "SqrtGrad": 1, "RsqrtGrad": 1}


def float_graph(dtype):
    half = dtype == np.float16
    g = tf1.Graph()
    outs = {}
    with g.as_default():
        u = tf1.constant(unary_values(dtype))
        for op in UNARY + (OLD_UNARY_HALF if half else []):
            if half and op in NO_HALF:
                continue
            outs[op] = getattr(tf.raw_ops, op)(x=u)
        xv, yv = binary_values(dtype)
        x, y = tf1.constant(xv), tf1.constant(yv)
        for op in (BINARY_HALF if half else BINARY):
            args = {"Atan2": dict(y=x, x=y), "Igamma": dict(a=x, x=y),
                    "Igammac": dict(a=x, x=y), "Polygamma": dict(a=x, x=y)}
            outs[op] = getattr(tf.raw_ops, op)(**args.get(op, dict(x=x, y=y)))
        # Polygamma's order: small non-negative integers (and not) against x.
        if not half:
            a = tf1.constant(np.array([0, 1, 2, 3, 4, 1.5, -1], dtype).reshape(-1, 1))
            outs["Polygamma_orders"] = tf.raw_ops.Polygamma(a=a, x=u)
            ga = tf1.constant(np.array([0.5, 1, 2.5, 10, 100], dtype).reshape(-1, 1))
            gx = tf1.constant(np.array([0.1, 1, 2, 5, 20, 150], dtype))
            outs["Igamma_grid"] = tf.raw_ops.Igamma(a=ga, x=gx)
            outs["Igammac_grid"] = tf.raw_ops.Igammac(a=ga, x=gx)
            outs["Atan2_scalar"] = tf.raw_ops.Atan2(y=u, x=tf1.constant(dtype(-2)))
        else:
            normal = unary_values(dtype)
            normal = normal[~subnormal(normal)]
            gy = tf1.constant(normal[20:80])
            gdy = tf1.constant(normal[40:100])
            for op in GRADS_HALF:
                outs[op] = getattr(tf.raw_ops, op)(y=gy, dy=gdy)
        # The gradient ops give 0 where dy is 0, even for y 0, inf or NaN.
        zy = tf1.constant(np.array([0, -0.0, np.inf, -np.inf, np.nan, 0, 2], dtype))
        zdy = tf1.constant(np.array([0, 0, 0, 0, 0, 1, 0], dtype))
        for op in GRADS_HALF:
            outs[op + "_zero_dy"] = getattr(tf.raw_ops, op)(y=zy, dy=zdy)
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
    return g, list(outs)


INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
             np.uint32, np.uint64]


def int_graph(dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    vals = [0, 1, 2, 5, 7, 100, info.max, info.max - 1, info.min]
    if info.min < 0:
        vals += [-1, -2, -7, -100, info.min + 1]
    x = np.array(vals, dtype)
    shifts = [0, 1, 3, bits - 1, bits, bits + 5, min(100, info.max)]
    if info.min < 0:
        shifts += [-1, -5]
    divisors = [1, 2, 3, 7, info.max] + ([-1, -3, info.min] if info.min < 0 else [])
    # INT_MIN / -1 would trap in some kernels; numerators leave out INT_MIN.
    num = np.array([v for v in vals if v != info.min], dtype)
    g = tf1.Graph()
    outs = {}
    with g.as_default():
        xc = tf1.constant(x)
        col = tf1.constant(x.reshape(-1, 1))
        outs["Invert"] = tf.raw_ops.Invert(x=xc)
        outs["PopulationCount"] = tf.raw_ops.PopulationCount(x=xc)
        for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
            outs[op] = getattr(tf.raw_ops, op)(x=col, y=xc)
        s = tf1.constant(np.array(shifts, dtype))
        outs["LeftShift"] = tf.raw_ops.LeftShift(x=col, y=s)
        outs["RightShift"] = tf.raw_ops.RightShift(x=col, y=s)
        d = tf1.constant(np.array(divisors, dtype))
        n = tf1.constant(num.reshape(-1, 1))
        outs["TruncateDiv"] = tf.raw_ops.TruncateDiv(x=n, y=d)
        if dtype in (np.int32, np.int64):
            outs["TruncateMod"] = tf.raw_ops.TruncateMod(x=n, y=d)
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
    return g, list(outs)


for dt in FLOAT_TYPES:
    graph, names = float_graph(dt)
    run_and_compare(np.dtype(dt).name, graph, names, EXACT)
for dt in INT_TYPES:
    graph, names = int_graph(dt)
    run_and_compare(np.dtype(dt).name, graph, names, ())

sys.exit(summary_exit_code())
