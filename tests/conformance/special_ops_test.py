"""Conformance: TensorFlow's special-function element-wise ops run by
`weft run` against TensorFlow 2.21 on the same GraphDefs: the Bessel
functions BesselI0/I0e/I1/I1e/J0/J1/K0/K0e/K1/K1e/Y0/Y1 (float32, float64,
float16), Dawsn, Expint, FresnelCos, FresnelSin, Spence (float32, float64),
and the binary Zeta(x, q) and IgammaGradA(a, x) (float32, float64,
broadcasting a column against a row). Inputs cover each function's edges:
+-0, negatives (Expint and Spence are NaN there, the K and Y functions NaN
or -inf, the others odd or even), poles (K at 0, Expint at 0, Zeta at
q = 0 and at negative integers), the overflow of I and Expint, large
arguments where J and Y oscillate and Fresnel's auxiliary functions take
over, +-inf and NaN.

Tolerances (a result passes on any clause):
- float32: relative 1e-6; float64: relative 1e-13.
- For the functions with roots at O(1) arguments (J0, J1, Y0, Y1, Expint,
  Spence) also an absolute 4 epsilons of the type: near a root both lose
  relative accuracy to cancellation (float Expint near 0.3725 keeps only
  a few bits, in TensorFlow as here).
- An absolute 2^10 times the smallest normal number, for all: TensorFlow
  runs its kernels with subnormals flushed to zero and Weft does not, so
  results near the bottom of the range (K0(100) in float, Zeta and
  IgammaGradA far out) differ there. Inputs are normal numbers.
- float16: at most 1 half ulp (both compute in float and round once; a
  float result's last-bit difference can cross a rounding boundary).
Infinities must agree in sign, NaN positions exactly.

Known differences, checked against the true values instead: Expint and
Spence of x with 1 / x subnormal (x > 8.5e37 in float, 4.5e307 in double)
are NaN in TensorFlow, whose flush of 1 / x to 0 gives inf * 0 and
log(0) * 0; Weft gives inf and -pi^2/6 - log(x)^2 / 2.

The comparison checks itself first: TensorFlow's own results, nudged by ten
times the tolerance, must be rejected, so a wrong kernel cannot pass.

usage: special_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, decode, nonfinite_agree, ordered  # noqa: E402
from tf_compare import run_tf1_and_weft, summary_exit_code, weft_fetches  # noqa: E402

np, tf, WEFT, WORK = start_conformance("special_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

BESSEL = ["BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0",
          "BesselJ1", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e",
          "BesselY0", "BesselY1"]
INTEGRALS = ["Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence"]
RTOL = {np.float32: 1e-6, np.float64: 1e-13}
WITH_ROOTS = {"BesselJ0", "BesselJ1", "BesselY0", "BesselY1", "Expint",
              "Spence"}


def unary_values(dtype):
    info = np.finfo(dtype)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1.5, 2.5, 3.25,
             -3.25, 6.25, 1.6, 1.6008, 0.3725074107813666, 0.25, 0.75,
             1e-3, -1e-3, 1e-6, 1e-20, -1e-20, float(info.tiny) * 4, 4.0,
             8.0, 16.0, 32.0, 64.0, 3.0, 7.9, 15.9, 31.9, 63.9, 80.0, 88.0,
             88.7, 89.0, 92.0, 100.0, 300.0, 700.0, 709.0, 713.0, 720.0,
             2.404825557695773, 5.520078110286311, 3.831705970207512,
             0.8935769662791675, 2.197141326031017, 1e3, -1e3, 1e4, 36973.0,
             36975.0, 1e5, 1e8, 9e8, -9e8, 1e9, -1e9, 2e9, -2e9, 1e20, -1e20, float(info.max),
             -float(info.max), np.inf, -np.inf, np.nan, -5.0, -10.0]
    rng = np.random.RandomState(7)
    logs = np.exp(rng.uniform(-18, 11, 300))  # 1.5e-8 to 6e4
    rand = np.concatenate([rng.uniform(-8, 8, 200), rng.uniform(0, 2, 60),
                           logs, -logs[:100]])
    with np.errstate(over="ignore", under="ignore"):
        v = np.concatenate([edges, rand]).astype(dtype)
    return v[(v == 0) | ~(np.abs(v) < info.tiny)]  # no subnormals


def binary_values(dtype):
    """Zeta's (x, q) and IgammaGradA's (a, x): a column against a row."""
    x = np.array([1.0, 1.0001, 1.5, 2.0, 3.0, 4.5, 10.0, 50.0, 0.5, -1.0,
                  0.0, -0.0, np.inf, np.nan, 1e-3, 25.0], dtype)
    q = np.array([1.0, 2.0, 0.5, 1e-3, 10.0, 100.0, 1e4, 0.0, -0.0, -1.0,
                  -2.5, -3.0, np.inf, np.nan, 3.7, 30.0, 0.1], dtype)
    return x.reshape(-1, 1), q


def atol(op, t):
    """The absolute tolerance of `op` on type `t` (see the top)."""
    tiny = 2.0 ** 10 * float(np.finfo(t).tiny)
    return 4 * float(np.finfo(t).eps) if op.split("_")[0] in WITH_ROOTS else tiny


def mismatches(op, have, want):
    """A boolean array: where `have` is not within tolerance of `want`."""
    want = np.asarray(want)
    have = have.astype(want.dtype)
    ok, finite = nonfinite_agree(have, want)
    with np.errstate(over="ignore", invalid="ignore"):
        if want.dtype == np.float16:
            ok &= ~finite | (np.abs(ordered(have) - ordered(want)) <= 1)
        else:
            t = want.dtype.type
            h, w = have.astype(np.float64), want.astype(np.float64)
            diff = np.abs(h - w)
            close = (diff <= RTOL[t] * np.abs(w)) | (diff <= atol(op, t))
            ok &= ~finite | close
    return ~ok


def compare(case, op, have, want):
    want = np.asarray(want)
    if have.shape != want.shape:
        check(case, False, f"shape {have.shape} != TF {want.shape}")
        return
    bad = mismatches(op, have, want)
    idx = np.flatnonzero(bad)[:4]
    check(case, not bad.any(),
          f"{int(bad.sum())} differ at flat {idx.tolist()}; weft "
          f"{have.reshape(-1)[idx]} vs TF {want.reshape(-1)[idx]}")


def nudged(op, want):
    """TensorFlow's results moved up by ten times the tolerance (ten half
    ulps for float16)."""
    t = want.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):
        if t == np.float16:
            bits = want.view(np.int16).astype(np.int64)
            return np.where(bits >= 0, bits + 10, bits - 10).astype(
                np.int16).view(np.float16)
        step = 10 * (RTOL[t] * np.abs(want) + atol(op, t))
        return (want + step).astype(t)


def self_check(op, want):
    """Whether the comparison rejects results off by ten tolerances
    wherever TensorFlow's are finite."""
    want = np.asarray(want)
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(want.dtype).max / 2)
    if want.dtype == np.float16:
        finite &= np.abs(want) < 60000  # ten ulps up stays finite
    if not finite.any():
        return True
    return bool(mismatches(op, nudged(op, want[finite]), want[finite]).all())


def huge(u):
    """Where 1 / u is subnormal or 0."""
    return np.abs(u.astype(np.float64)) > 1 / float(np.finfo(u.dtype).tiny)


def true_expint(u):
    return np.full(u.shape, np.inf)


def true_spence(u):
    z = np.log(u.astype(np.float64))
    return -np.pi ** 2 / 6 - z * z / 2


KNOWN = {"Expint": true_expint, "Spence": true_spence}


def run_and_compare(case, graph, outs, u):
    names = ["out_" + n for n in outs]
    ref, proc = run_tf1_and_weft(WEFT, WORK, case, graph, names)
    check(f"{case}/comparison_rejects_wrong_values",
          all(self_check(op, r) for op, r in zip(outs, ref)))
    got = weft_fetches(case, proc)
    if got is None:
        return
    for op, name, want in zip(outs, names, ref):
        have = decode(got[name])
        if op in KNOWN:
            mask = huge(u) & (u > 0) & np.isfinite(u)
            with np.errstate(all="ignore"):
                close = np.allclose(have[mask], KNOWN[op](u[mask]), rtol=1e-6)
            check(f"{case}/{op}/true_values_where_tf_flushes_1_over_x",
                  mask.any() and close, f"weft {have[mask]}")
            have, want = have[~mask], want[~mask]
        compare(f"{case}/{op}", op, have, want)


def special_graph(dtype):
    half = dtype == np.float16
    g = tf1.Graph()
    outs = {}
    values = unary_values(dtype)
    with g.as_default():
        u = tf1.constant(values)
        for op in BESSEL + ([] if half else INTEGRALS):
            outs[op] = getattr(tf.raw_ops, op)(x=u)
        if not half:
            xv, qv = binary_values(dtype)
            x, q = tf1.constant(xv), tf1.constant(qv)
            outs["Zeta"] = tf.raw_ops.Zeta(x=x, q=q)
            outs["IgammaGradA"] = tf.raw_ops.IgammaGradA(a=tf.abs(x), x=tf.abs(q))
            outs["IgammaGradA_signed"] = tf.raw_ops.IgammaGradA(a=x, x=q)
            # A scalar against a vector, both ways.
            outs["Zeta_scalar_q"] = tf.raw_ops.Zeta(x=u, q=tf1.constant(dtype(2)))
            pos = tf.abs(u) + dtype(0.25)
            outs["IgammaGradA_scalar_a"] = tf.raw_ops.IgammaGradA(
                a=tf1.constant(dtype(2.5)), x=pos)
            outs["IgammaGradA_scalar_x"] = tf.raw_ops.IgammaGradA(
                a=pos, x=tf1.constant(dtype(3)))
            # Random grids: 40 by 40 positive arguments over many scales.
            rng = np.random.RandomState(3)
            col = np.exp(rng.uniform(-4, 4, 40)).astype(dtype).reshape(-1, 1)
            row = np.exp(rng.uniform(-4, 4, 40)).astype(dtype)
            outs["Zeta_grid"] = tf.raw_ops.Zeta(x=tf1.constant(col + dtype(1)),
                                                q=tf1.constant(row))
            outs["IgammaGradA_grid"] = tf.raw_ops.IgammaGradA(
                a=tf1.constant(col), x=tf1.constant(row))
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
    return g, list(outs), values


for dt in (np.float32, np.float64, np.float16):
    graph, names, values = special_graph(dt)
    run_and_compare(np.dtype(dt).name, graph, names, values)

sys.exit(summary_exit_code())
