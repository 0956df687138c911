"""Conformance: the dense linear algebra ops, run by `weft run` against
TensorFlow 2.21 on the same GraphDef.

Where the result is unique it is compared directly (float to 1e-5
relative, double to 1e-10): MatrixInverse, MatrixDeterminant,
LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve (with broadcast
batch dims), Cholesky (and the NaN lower triangle TensorFlow 2.21 gives
where it fails), CholeskyGrad, MatrixSolveLs (fast and not), eigenvalues
and singular values. Where TensorFlow's output is one of several valid
ones (the signs of Q's columns, of eigenvectors and singular vectors),
Weft's is checked on invariants instead: Q R = A, Q^T Q = I, R upper
triangular; A V = V diag(e), V^T V = I; U diag(s) V^T = A, U and V
orthonormal, s descending; with TensorFlow's shapes. Also batched inputs,
empty batches, 0x0 matrices, TensorFlow's failures (singular matrices,
non-square inputs, rank-deficient least squares) and tf.gradients of
every op (TensorFlow's gradient graphs, in float64) run by Weft.

usage: linalg_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, compare_tf1_graph, decode, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("linalg")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops

rng = np.random.RandomState(11)
FLOATS = (np.float32, np.float64)


def tol(dt):
    return 1e-5 if dt == np.float32 else 1e-10


def general(shape, dt):
    """Well-conditioned matrices: uniform entries plus n on the diagonal."""
    n = shape[-1]
    a = rng.uniform(-1, 1, size=shape)
    if shape[-2] == n:
        a = a + n * np.eye(n)
    return a.astype(dt)


def spd(shape, dt):
    x = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dt)


def run_case(case, build, rtol, atol=None):
    """build() adds the outputs (a dict name -> tensor) to a fresh graph;
    compared with TensorFlow's to rtol (atol, default rtol)."""
    g = tf1.Graph()
    with g.as_default():
        outs = build()
        names = []
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
            names.append("out_" + name)
    compare_tf1_graph(WEFT, WORK, case, g, names, (), 1, rtol, rtol if atol is None else atol)


def unique_results(dt):
    def build():
        c = tf1.constant
        out = {}
        for shape in ((3, 3), (2, 5, 5), (0, 3, 3), (2, 0, 0), (1, 1)):
            a = c(general(shape, dt))
            tag = "x".join(map(str, shape))
            out[f"inv_{tag}"] = raw.MatrixInverse(input=a)
            out[f"inv_adj_{tag}"] = raw.MatrixInverse(input=a, adjoint=True)
            out[f"det_{tag}"] = raw.MatrixDeterminant(input=a)
            sign, logdet = raw.LogMatrixDeterminant(input=a)
            out[f"sign_{tag}"], out[f"logdet_{tag}"] = sign, logdet
            rhs = c(general(shape[:-1] + (2,), dt))
            out[f"solve_{tag}"] = raw.MatrixSolve(matrix=a, rhs=rhs)
            out[f"solve_adj_{tag}"] = raw.MatrixSolve(matrix=a, rhs=rhs, adjoint=True)
            s = c(spd(shape, dt))
            out[f"chol_{tag}"] = raw.Cholesky(input=s)
            out[f"eigvals_{tag}"] = raw.SelfAdjointEigV2(input=s, compute_v=False)[0]
        # Negative and large determinants, singular matrices.
        out["det_neg"] = raw.MatrixDeterminant(input=c(np.array([[0, 2], [3, 1]], dt)))
        out["det_big"] = raw.MatrixDeterminant(input=c((np.eye(6) * 40).astype(dt)))
        singular = c(np.array([[[1, 2], [2, 4]], [[0, 0], [0, 0]]], dt))
        out["det_singular"] = raw.MatrixDeterminant(input=singular)
        out["sign_singular"], out["logdet_singular"] = raw.LogMatrixDeterminant(input=singular)
        out["solve_no_rhs"] = raw.MatrixSolve(matrix=c(general((3, 3), dt)),
                                              rhs=c(np.zeros((3, 0), dt)))
        # Not positive definite: TensorFlow 2.21 fills the lower triangle with
        # NaN (its upper triangle is left unset, so only the lower is compared).
        bad = raw.Cholesky(input=c(np.array([[[1, 2], [2, 1]], [[4, 0], [0, 9]]], dt)))
        out["chol_not_pd"] = raw.MatrixBandPart(input=bad, num_lower=-1, num_upper=0)
        # Triangular solves, both triangles, adjoint, broadcast batch dims.
        for lower in (True, False):
            for adj in (False, True):
                for ms, rs in (((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 3)), ((1, 3, 3), (2, 3, 2)),
                               ((3, 3), (2, 3, 1)), ((2, 1, 3, 3), (4, 3, 2)), ((0, 3, 3), (3, 2)),
                               ((2, 2), (2, 0))):
                    tag = f"{int(lower)}{int(adj)}_{'x'.join(map(str, ms))}_{'x'.join(map(str, rs))}"
                    out[f"trsolve_{tag}"] = raw.MatrixTriangularSolve(
                        matrix=c(general(ms, dt)), rhs=c(general(rs, dt)), lower=lower, adjoint=adj)
        # CholeskyGrad of an SPD matrix's factor.
        l_in = raw.Cholesky(input=c(spd((2, 4, 4), dt)))
        out["chol_grad"] = raw.CholeskyGrad(l=l_in, grad=c(general((2, 4, 4), dt)))
        out["chol_grad_empty"] = raw.CholeskyGrad(l=c(np.zeros((3, 0, 0), dt)),
                                                  grad=c(np.zeros((3, 0, 0), dt)))
        # Least squares: tall and wide, regularised, non-fast (minimum norm).
        for shape in ((5, 3), (3, 5), (2, 4, 4)):
            tag = "x".join(map(str, shape))
            a = c(rng.uniform(-1, 1, size=shape).astype(dt))
            b = c(rng.uniform(-1, 1, size=shape[:-1] + (2,)).astype(dt))
            for l2 in (0.0, 0.25):
                out[f"lstsq_{tag}_{l2}"] = raw.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=l2)
            out[f"lstsq_slow_{tag}"] = raw.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=0.0,
                                                         fast=False)
        rank1 = c(np.outer([1, 2, 3, 4], [1, -1, 2]).astype(dt))
        out["lstsq_slow_rank1"] = raw.MatrixSolveLs(matrix=rank1, rhs=c(np.ones((4, 1), dt)),
                                                    l2_regularizer=0.0, fast=False)
        # Singular values (unique), batched and empty.
        for shape in ((4, 3), (3, 4), (2, 5, 5), (0, 2, 3), (2, 0, 3)):
            a = c(rng.uniform(-1, 1, size=shape).astype(dt))
            out[f"svals_{'x'.join(map(str, shape))}"] = raw.Svd(input=a, compute_uv=False)[0]
        return out
    return build


for dt in FLOATS:
    # The products behind a determinant, log|det| and LLT's solves add
    # rounding: relative 1e-5 in float, 1e-10 in double.
    run_case(f"unique_{np.dtype(dt).name}", unique_results(dt), tol(dt))


def weft_values(case, build):
    """Runs build()'s outputs with TensorFlow and with weft: (tf, weft)
    value dicts, or None (reported) where weft fails."""
    g = tf1.Graph()
    with g.as_default():
        outs = build()
        names = []
        for name, t in outs.items():
            tf1.identity(t, name=name)
            names.append(name)
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    with tf1.Session(graph=g) as sess:
        ref = dict(zip(names, sess.run([n + ":0" for n in names])))
    proc = run_weft(WEFT, path, names)
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return None, None
    got = json.loads(proc.stdout)["fetches"]
    return ref, {n: decode(got[n]) for n in names}


def close(a, b, t):
    return a.shape == b.shape and np.allclose(a, b, rtol=t, atol=t)


def eye_like(x):
    return np.broadcast_to(np.eye(x.shape[-1]), x.shape[:-2] + (x.shape[-1], x.shape[-1]))


def orthonormal_columns(q, t):
    return close(np.swapaxes(q, -1, -2) @ q, eye_like(q), t)


def invariants(dt):
    t = 1e-4 if dt == np.float32 else 1e-10
    shapes = ((4, 3), (3, 4), (2, 5, 5), (3, 1, 4), (0, 3, 2), (2, 3, 0), (2, 0, 3))
    inputs = {"x".join(map(str, s)): rng.uniform(-1, 1, size=s).astype(dt) for s in shapes}
    sym = {"x".join(map(str, s)): spd(s, dt) - s[-1] for s in ((3, 3), (2, 5, 5), (0, 0), (2, 0, 0))}

    def build():
        out = {}
        for tag, a in inputs.items():
            for full in (False, True):
                q, r = raw.Qr(input=tf1.constant(a), full_matrices=full)
                out[f"q_{tag}_{int(full)}"], out[f"r_{tag}_{int(full)}"] = q, r
                s, u, v = raw.Svd(input=tf1.constant(a), full_matrices=full)
                out[f"s_{tag}_{int(full)}"], out[f"u_{tag}_{int(full)}"] = s, u
                out[f"v_{tag}_{int(full)}"] = v
        for tag, a in sym.items():
            e, v = raw.SelfAdjointEigV2(input=tf1.constant(a))
            out[f"e_{tag}"], out[f"ev_{tag}"] = e, v
        return out

    case = f"invariants_{np.dtype(dt).name}"
    ref, got = weft_values(case, build)
    if got is None:
        return
    for tag, a in inputs.items():
        for full in (0, 1):
            q, r = got[f"q_{tag}_{full}"], got[f"r_{tag}_{full}"]
            ok = (q.shape == ref[f"q_{tag}_{full}"].shape and r.shape == ref[f"r_{tag}_{full}"].shape
                  and close(q @ r, a, t) and orthonormal_columns(q, t)
                  and np.array_equal(r, np.triu(r)))
            check(f"{case}/qr_{tag}_{full}", ok, f"q {q.shape} r {r.shape}")
            s, u, v = (got[f"{k}_{tag}_{full}"] for k in "suv")
            k = s.shape[-1]
            shapes_ok = all(got[f"{x}_{tag}_{full}"].shape == ref[f"{x}_{tag}_{full}"].shape
                            for x in "suv")
            recon = (u[..., :k] * s[..., None, :]) @ np.swapaxes(v[..., :k], -1, -2)
            ok = (shapes_ok and close(s, ref[f"s_{tag}_{full}"], t) and close(recon, a, t)
                  and orthonormal_columns(u, t) and orthonormal_columns(v, t)
                  and np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0))
            check(f"{case}/svd_{tag}_{full}", ok, f"s {s} vs TF {ref[f's_{tag}_{full}']}")
    for tag, a in sym.items():
        e, v = got[f"e_{tag}"], got[f"ev_{tag}"]
        ok = (e.shape == ref[f"e_{tag}"].shape and v.shape == ref[f"ev_{tag}"].shape
              and close(e, ref[f"e_{tag}"], t) and close(a @ v, v * e[..., None, :], t)
              and orthonormal_columns(v, t) and np.all(np.diff(e, axis=-1) >= 0))
        check(f"{case}/eig_{tag}", ok, f"e {e} vs TF {ref[f'e_{tag}']}")


for dt in FLOATS:
    invariants(dt)


def gradients():
    """tf.gradients of a weighted sum of each op's outputs (float64): the
    gradient graphs TensorFlow writes, run by weft."""
    dt = np.float64
    c = tf1.constant
    out = {}

    def grad(name, x, ys):
        total = tf1.add_n([tf1.reduce_sum(y * c(rng.uniform(-1, 1, size=y.shape.as_list()).astype(dt)))
                           for y in ys])
        out[name] = tf1.gradients(total, x)[0]

    a = c(general((2, 4, 4), dt))
    b = c(general((2, 4, 3), dt))
    grad("inverse", a, [raw.MatrixInverse(input=a)])
    grad("inverse_adj", a, [raw.MatrixInverse(input=a, adjoint=True)])
    grad("det", a, [raw.MatrixDeterminant(input=a)])
    grad("logdet", a, [raw.LogMatrixDeterminant(input=a)[1]])
    grad("solve_a", a, [raw.MatrixSolve(matrix=a, rhs=b)])
    grad("solve_b", b, [raw.MatrixSolve(matrix=a, rhs=b, adjoint=True)])
    grad("trsolve_a", a, [raw.MatrixTriangularSolve(matrix=a, rhs=b)])
    grad("trsolve_b", b, [raw.MatrixTriangularSolve(matrix=a, rhs=b, lower=False, adjoint=True)])
    s = c(spd((2, 4, 4), dt))
    grad("cholesky", s, [raw.Cholesky(input=s)])
    grad("eig", s, list(raw.SelfAdjointEigV2(input=s)))
    grad("eigvals", s, [raw.SelfAdjointEigV2(input=s, compute_v=False)[0]])
    m = c(rng.uniform(-1, 1, size=(2, 5, 3)).astype(dt))
    grad("qr", m, list(raw.Qr(input=m)))
    grad("svd_values", m, [raw.Svd(input=m, compute_uv=False)[0]])
    grad("svd", m, list(raw.Svd(input=m)))
    grad("lstsq", m, [raw.MatrixSolveLs(matrix=m, rhs=c(general((2, 5, 2), dt)), l2_regularizer=0.1)])
    return out


run_case("gradients", gradients, 1e-9)


def expect_failure(case, build, needle):
    """The graph fails in TensorFlow and in weft, both naming `needle`."""
    g = tf1.Graph()
    with g.as_default():
        tf1.identity(build(), name="out")
    tf_message = ""
    with tf1.Session(graph=g) as sess:
        try:
            sess.run("out:0")
        except tf.errors.OpError as e:
            tf_message = e.message
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as fp:
        fp.write(g.as_graph_def().SerializeToString())
    proc = run_weft(WEFT, path, ["out"])
    check(f"{case}/tf", needle in tf_message, f"TensorFlow said {tf_message!r}")
    check(f"{case}/weft", proc.returncode != 0 and needle in proc.stderr,
          f"weft exited {proc.returncode}: {clip(proc.stderr)}")


def fed(value):
    """`value` behind a placeholder of unknown shape (so only the kernel
    sees its shape)."""
    return tf1.placeholder_with_default(value, shape=None)


singular = np.array([[[1, 0], [0, 1]], [[1, 2], [2, 4]]], np.float32)
expect_failure("inverse_singular", lambda: raw.MatrixInverse(input=fed(singular)),
               "Input is not invertible.")
expect_failure("solve_singular",
               lambda: raw.MatrixSolve(matrix=fed(singular), rhs=fed(np.ones((2, 2, 1), np.float32))),
               "Input matrix is not invertible.")
rect = np.ones((2, 3), np.float32)
expect_failure("inverse_not_square", lambda: raw.MatrixInverse(input=fed(rect)),
               "Input matrix must be square.")
expect_failure("det_not_square", lambda: raw.MatrixDeterminant(input=fed(rect)),
               "Input matrix must be square.")
expect_failure("cholesky_not_square", lambda: raw.Cholesky(input=fed(rect)),
               "Input matrix must be square.")
expect_failure("eig_not_square", lambda: raw.SelfAdjointEigV2(input=fed(rect))[0],
               "Input matrix must be square.")
expect_failure("solve_not_square", lambda: raw.MatrixSolve(matrix=fed(rect), rhs=fed(rect)),
               "First input (lhs) must be a square matrix.")
expect_failure("inverse_rank1", lambda: raw.MatrixInverse(input=fed(np.ones(3, np.float32))),
               "Input tensor 0 must have rank >= 2, got 1")
expect_failure("solve_incompatible",
               lambda: raw.MatrixSolve(matrix=fed(singular[0]), rhs=fed(np.ones((3, 1), np.float32))),
               "Input matrix and rhs are incompatible")
expect_failure("solve_batches",
               lambda: raw.MatrixSolve(matrix=fed(singular), rhs=fed(np.ones((3, 2, 1), np.float32))),
               "All input tensors must have the same outer dimensions")
expect_failure("trsolve_batches",
               lambda: raw.MatrixTriangularSolve(matrix=fed(singular),
                                                 rhs=fed(np.ones((3, 2, 1), np.float32))),
               "In[0] and In[1] must have compatible batch dimensions: [2,2,2] vs. [3,2,1]")
expect_failure("lstsq_rank_deficient",
               lambda: raw.MatrixSolveLs(matrix=fed(np.zeros((3, 2), np.float32)),
                                         rhs=fed(np.ones((3, 1), np.float32)), l2_regularizer=0.0),
               "Input matrix was rank deficient or ill-conditioned.")
expect_failure("cholesky_grad_shapes",
               lambda: raw.CholeskyGrad(l=fed(singular[0]), grad=fed(np.ones((3, 3), np.float32))),
               "Inputs (L and grad) must have the same shape")

sys.exit(summary_exit_code())
