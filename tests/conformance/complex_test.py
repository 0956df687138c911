"""Conformance: complex64 and complex128 against TensorFlow 2.21 running the
same GraphDef: constants in both TensorProto forms, Cast to and from the
real types, element-wise arithmetic and functions with broadcasting, the
gradient ops, Complex/Real/Imag/Angle/ComplexAbs/Conj/ConjugateTranspose,
Sum/Mean/Prod, MatMul and BatchMatMul (adjoints conjugate), the array ops
that move elements, the spectral ops (FFT, IFFT, RFFT, IRFFT in 1-3 D,
odd, even and prime lengths, cropped), tf.signal.stft and an MFCC audio
front end, linear algebra, complex variables and feeds, and a gradient
graph through complex ops. A malformed complex constant is refused
with an error naming the field.

usage: complex_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, decode, run_tf1_and_weft, run_weft  # noqa: E402
from tf_compare import summary_exit_code, weft_fetches  # noqa: E402

np, tf, WEFT, WORK = start_conformance("complex")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops
rng = np.random.RandomState(17)

TYPES = ["complex64", "complex128"]
# (rtol, atol) per type: complex64 functions agree to a few float ulps.
TOL = {"complex64": (2e-5, 2e-6), "complex128": (1e-12, 1e-14)}
REAL_OF = {"complex64": "float32", "complex128": "float64"}


def sample(dtype, shape, scale=1.0):
    re = rng.uniform(-2, 2, size=shape) * scale
    im = rng.uniform(-2, 2, size=shape) * scale
    return (re + 1j * im).astype(dtype)


def compare(case, graph, fetches, tol):
    """Runs `graph` in TensorFlow and in weft; checks each fetch within
    `tol` (rtol, atol scaled by the largest magnitude TensorFlow returned
    for that fetch), bools and integers exactly."""
    ref, proc = run_tf1_and_weft(WEFT, WORK, case.replace("/", "_"), graph, fetches)
    got = weft_fetches(case, proc)
    if got is None:
        return
    rtol, atol = tol
    for name, want in zip(fetches, ref):
        want = np.asarray(want)
        have = decode(got[name])
        if have.shape != want.shape or have.dtype != want.dtype:
            check(f"{case}/{name}", False,
                  f"{have.dtype}{have.shape} != TF {want.dtype}{want.shape}")
            continue
        if want.dtype.kind in "fc":
            scale = np.max(np.abs(want[np.isfinite(want)]), initial=1.0)
            ok = np.allclose(have, want, rtol=rtol, atol=atol * scale, equal_nan=True)
            diff = np.max(np.abs(have - want), initial=0) if want.size else 0
            check(f"{case}/{name}", ok, f"max abs diff {diff}: {have.ravel()[:4]} != TF {want.ravel()[:4]}")
        else:
            check(f"{case}/{name}", np.array_equal(have, want),
                  f"{have.ravel()[:6]} != TF {want.ravel()[:6]}")


def elementwise(dtype):
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.constant(sample(dtype, (3, 4)))
        y = tf1.constant(sample(dtype, (3, 4)))
        row = tf1.constant(sample(dtype, (1, 4)))
        some_zero = tf1.constant(np.where(rng.rand(3, 4) < 0.3, 0, sample(dtype, (3, 4))))
        binary = {
            "add": raw.Add, "addv2": raw.AddV2, "sub": raw.Sub, "mul": raw.Mul,
            "div": raw.Div, "realdiv": raw.RealDiv, "pow": raw.Pow,
            "squared_difference": raw.SquaredDifference, "equal": raw.Equal,
            "not_equal": raw.NotEqual,
        }
        for name, op in binary.items():
            op(x=x, y=y, name=name)
            op(x=x, y=row, name=name + "_bcast")
            f += [name, name + "_bcast"]
        raw.Equal(x=x, y=x, name="equal_self")
        raw.DivNoNan(x=x, y=some_zero, name="div_no_nan")
        raw.Xdivy(x=some_zero, y=y, name="xdivy")
        raw.Xlogy(x=some_zero, y=y, name="xlogy")
        raw.Xlog1py(x=some_zero, y=y, name="xlog1py")
        f += ["equal_self", "div_no_nan", "xdivy", "xlogy", "xlog1py"]
        for name, op in {"tanh_grad": raw.TanhGrad, "sigmoid_grad": raw.SigmoidGrad,
                         "sqrt_grad": raw.SqrtGrad, "rsqrt_grad": raw.RsqrtGrad,
                         "reciprocal_grad": raw.ReciprocalGrad}.items():
            op(y=x, dy=some_zero, name=name)
            f.append(name)
        unary = ["Neg", "Square", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Tanh",
                 "Sigmoid", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                 "Cosh", "Asinh", "Acosh", "Atanh", "Expm1", "Log1p"]
        for name in unary:
            getattr(raw, name)(x=some_zero if name == "Sign" else x, name=name.lower())
            f.append(name.lower())
        real = REAL_OF[dtype]
        raw.Complex(real=tf1.constant(rng.randn(3, 4).astype(real)),
                    imag=tf1.constant(rng.randn(1, 4).astype(real)), Tout=dtype, name="complex")
        for name in ["Real", "Imag", "Angle"]:
            getattr(raw, name)(input=x, Tout=real, name=name.lower())
        raw.ComplexAbs(x=x, Tout=real, name="complexabs")
        raw.Conj(input=x, name="conj")
        raw.ConjugateTranspose(x=x, perm=[1, 0], name="conj_transpose")
        raw.ConjugateTranspose(x=tf1.reshape(x, [1, 12]), perm=[1, 0], name="conj_transpose_1d")
        huge = tf1.constant(np.array([3e300 + 4e300j, 0j, -1j], "complex128").astype(dtype))
        raw.ComplexAbs(x=huge, Tout=real, name="complexabs_large")
        f += ["complex", "real", "imag", "angle", "complexabs", "conj", "conj_transpose",
              "conj_transpose_1d", "complexabs_large"]
        raw.AddN(inputs=[x, y, x], name="addn")
        f.append("addn")
    compare(f"{dtype}/elementwise", g, f, TOL[dtype])


def casts_and_constants(dtype):
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        v = sample(dtype, (2, 3))
        tf1.identity(tf1.constant(v), name="content")  # tensor_content
        tf1.identity(tf1.constant(1 - 2j, dtype=dtype, shape=[2, 2]), name="splat")  # scomplex_val
        tf1.identity(tf1.constant([], dtype=dtype), name="empty")
        f += ["content", "splat", "empty"]
        x = tf1.constant(v)
        # (Not to the unsigned types: a negative real part is implementation-
        # defined there, saturated in weft as from float.)
        for to in ["float32", "float64", "int32", "int64", "bool", "half",
                   "complex64", "complex128"]:
            tf1.identity(tf1.cast(x, to), name=f"to_{to}")
            f.append(f"to_{to}")
        for src in ["float32", "float64", "int32", "int64", "bool", "half"]:
            tf1.identity(tf1.cast(tf1.constant(np.array([0, 1, -3, 2.5]).astype(src)), dtype),
                         name=f"from_{src}")
            f.append(f"from_{src}")
    compare(f"{dtype}/casts", g, f, (0, 0))


def reductions_and_products(dtype):
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.constant(sample(dtype, (3, 4, 5), scale=0.6))
        for op in ["Sum", "Mean", "Prod"]:
            for axes, keep in [([0], False), ([1, 2], True), ([0, 1, 2], False), ([], False)]:
                name = f"{op.lower()}_{'_'.join(map(str, axes)) or 'none'}"
                getattr(raw, op)(input=x, axis=axes, keep_dims=keep, name=name)
                f.append(name)
        a = tf1.constant(sample(dtype, (4, 6)))
        b = tf1.constant(sample(dtype, (6, 5)))
        raw.MatMul(a=a, b=b, name="matmul")
        raw.MatMul(a=a, b=a, transpose_b=True, name="matmul_tb")
        raw.MatMul(a=b, b=b, transpose_a=True, name="matmul_ta")
        big_a = tf1.constant(sample(dtype, (70, 90)))
        big_b = tf1.constant(sample(dtype, (90, 80)))
        raw.MatMul(a=big_a, b=big_b, name="matmul_big")
        p = tf1.constant(sample(dtype, (2, 3, 4)))
        q = tf1.constant(sample(dtype, (2, 4, 5)))
        raw.BatchMatMulV2(x=p, y=q, name="bmm")
        raw.BatchMatMulV2(x=p, y=p, adj_y=True, name="bmm_adj_y")
        raw.BatchMatMulV2(x=tf1.transpose(p, [0, 2, 1]), y=q, adj_x=True, name="bmm_adj_x")
        raw.BatchMatMulV3(x=p, y=q, Tout=dtype, name="bmm_v3")
        f += ["matmul", "matmul_tb", "matmul_ta", "matmul_big", "bmm", "bmm_adj_y",
              "bmm_adj_x", "bmm_v3"]
    rtol, atol = TOL[dtype]
    compare(f"{dtype}/reductions", g, f, (rtol * 10, atol * 10))


def array_ops(dtype):
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.constant(sample(dtype, (3, 4)))
        y = tf1.constant(sample(dtype, (3, 4)))
        ops = {
            "transpose": lambda: tf1.transpose(x),
            "reshape": lambda: tf1.reshape(x, [2, 6]),
            "concat": lambda: tf1.concat([x, y], axis=1),
            "stack": lambda: tf1.stack([x, y]),
            "unstack": lambda: tf1.unstack(x)[1],
            "slice": lambda: tf1.slice(x, [1, 1], [2, 2]),
            "strided_slice": lambda: x[::-1, 1::2],
            "gather": lambda: tf1.gather(x, [2, 0, 2]),
            "gather_nd": lambda: tf1.gather_nd(x, [[0, 1], [2, 3]]),
            "tile": lambda: tf1.tile(x, [2, 1]),
            "pad": lambda: tf1.pad(x, [[1, 0], [0, 2]]),
            "fill": lambda: tf1.fill([2, 3], tf1.constant(1 + 1j, dtype)),
            "zeros_like": lambda: tf1.zeros_like(x),
            "ones_like": lambda: tf1.ones_like(x),
            "select": lambda: tf1.where(tf1.constant(rng.rand(3, 4) < 0.5), x, y),
            "reverse": lambda: tf1.reverse(x, [1]),
            "expand_dims": lambda: tf1.expand_dims(x, 0),
            "split": lambda: tf1.split(x, 2, axis=1)[1],
            "broadcast_to": lambda: tf1.broadcast_to(x[:1], [3, 4]),
            "one_hot": lambda: tf1.one_hot([0, 2], 3, on_value=tf1.constant(2j, dtype),
                                           off_value=tf1.constant(1, dtype)),
            "cumsum": lambda: tf1.cumsum(x, axis=1),
            "cumprod": lambda: tf1.cumprod(x, axis=0, exclusive=True),
            "matrix_band_part": lambda: tf1.linalg.band_part(x, 0, 1),
            "diag_part": lambda: tf1.linalg.diag_part(x),
            "mirror_pad": lambda: tf1.pad(x, [[1, 1], [0, 1]], mode="REFLECT"),
            "roll": lambda: tf1.roll(x, 1, axis=1),
            "unsorted_segment_sum": lambda: tf1.math.unsorted_segment_sum(x, [2, 0, 2], 4),
            "unsorted_segment_prod": lambda: tf1.math.unsorted_segment_prod(x, [1, 1, 0], 2),
            "segment_sum": lambda: tf1.math.segment_sum(x, [0, 0, 2]),
            "segment_mean": lambda: tf1.math.segment_mean(x, [0, 1, 1]),
            "segment_prod": lambda: tf1.math.segment_prod(x, [0, 0, 0]),
            "where": lambda: tf1.where(tf1.constant(np.array([[0, 1j], [2, 0]], dtype))),
            "bias_add": lambda: tf1.nn.bias_add(x, y[0]),
            "bias_add_grad": lambda: raw.BiasAddGrad(out_backprop=x),
            "diag": lambda: tf1.linalg.tensor_diag(x[0]),
            "diag_part": lambda: tf1.linalg.tensor_diag_part(x[:, :3]),
            "einsum": lambda: tf1.einsum("ij,kj->ik", x, y),
            "einsum_trace": lambda: tf1.einsum("ii->", x[:, :3]),
            "mirror_pad_grad": lambda: raw.MirrorPadGrad(input=x, paddings=[[1, 0], [0, 1]],
                                                         mode="SYMMETRIC"),
            "image_patches": lambda: tf1.image.extract_patches(
                tf1.reshape(x, [1, 3, 4, 1]), [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "VALID"),
        }
        for name, fn in ops.items():
            tf1.identity(fn(), name="out_" + name)
            f.append("out_" + name)
    compare(f"{dtype}/array", g, f, TOL[dtype])


def spectral(dtype):
    real = REAL_OF[dtype]
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        for n in [1, 2, 7, 8, 12, 13, 64]:
            x = tf1.constant(sample(dtype, (3, n)))
            raw.FFT(input=x, name=f"fft_{n}")
            raw.IFFT(input=x, name=f"ifft_{n}")
            r = tf1.constant(rng.randn(2, n).astype(real))
            half = tf1.constant(sample(dtype, (2, n // 2 + 1)))
            for m in sorted({n, max(n - 1, 1), max(n - 4, 1)}):  # whole and cropped
                raw.RFFT(input=r, fft_length=[m], Tcomplex=dtype, name=f"rfft_{n}_{m}")
                raw.IRFFT(input=half, fft_length=[m], Treal=real, name=f"irfft_{n}_{m}")
                f += [f"rfft_{n}_{m}", f"irfft_{n}_{m}"]
            f += [f"fft_{n}", f"ifft_{n}"]
        x3 = tf1.constant(sample(dtype, (2, 5, 6, 4)))
        raw.FFT2D(input=x3, name="fft2d")
        raw.IFFT2D(input=x3, name="ifft2d")
        raw.FFT3D(input=x3, name="fft3d")
        raw.IFFT3D(input=x3, name="ifft3d")
        r3 = tf1.constant(rng.randn(2, 5, 6, 7).astype(real))
        raw.RFFT2D(input=r3, fft_length=[6, 7], Tcomplex=dtype, name="rfft2d")
        raw.RFFT2D(input=r3, fft_length=[4, 5], Tcomplex=dtype, name="rfft2d_crop")
        raw.RFFT3D(input=r3, fft_length=[5, 6, 6], Tcomplex=dtype, name="rfft3d")
        h3 = tf1.constant(sample(dtype, (2, 5, 6, 4)))
        raw.IRFFT2D(input=h3, fft_length=[6, 6], Treal=real, name="irfft2d")
        raw.IRFFT3D(input=h3, fft_length=[4, 5, 7], Treal=real, name="irfft3d")
        f += ["fft2d", "ifft2d", "fft3d", "ifft3d", "rfft2d", "rfft2d_crop", "rfft3d",
              "irfft2d", "irfft3d"]
        if dtype == "complex64":
            signal = tf1.constant(rng.randn(2, 1000).astype("float32"))
            stft = tf.signal.stft(signal, frame_length=256, frame_step=128)
            tf1.identity(stft, name="out_stft")
            tf1.identity(tf.signal.inverse_stft(stft, 256, 128), name="out_inverse_stft")
            f += ["out_stft", "out_inverse_stft"]
            # An audio front end: log-mel spectrogram and MFCCs (the DCT
            # runs as an RFFT of the padded signal), framing, overlap-add.
            mag = tf.abs(tf.signal.stft(signal, 400, 160, fft_length=512))
            mel = tf.tensordot(mag, tf.signal.linear_to_mel_weight_matrix(
                40, 257, 16000, 20.0, 4000.0), 1)
            logmel = tf.math.log(mel + 1e-6)
            tf1.identity(tf.signal.mfccs_from_log_mel_spectrograms(logmel)[..., :13],
                         name="out_mfcc")
            tf1.identity(tf.signal.idct(logmel, type=2), name="out_idct")
            tf1.identity(tf.signal.overlap_and_add(tf.signal.frame(signal, 400, 200), 200),
                         name="out_overlap_add")
            f += ["out_mfcc", "out_idct", "out_overlap_add"]
    rtol, atol = TOL[dtype]
    compare(f"{dtype}/spectral", g, f, (rtol * 10, atol * 20))


def gradient_graph(dtype):
    """tf.gradients through Complex, Mul, Conj, Exp, Real, Abs and the real
    FFTs: the graph TensorFlow's own gradient functions write for a complex
    computation (for RFFT and IRFFT: the Hermitian weights, twiddle
    matrices and their batched products)."""
    real = REAL_OF[dtype]
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        a = tf1.constant(rng.randn(4, 3).astype(real))
        b = tf1.constant(rng.randn(4, 3).astype(real))
        z = tf1.complex(a, b)
        w = tf1.constant(sample(dtype, (3, 2)))
        h = tf1.matmul(z, w)
        loss = tf1.reduce_sum(tf1.math.real(tf1.exp(h) * tf1.math.conj(h))) + \
            tf1.reduce_sum(tf1.abs(tf1.signal.fft(z))) + \
            tf1.reduce_sum(tf1.math.imag(tf1.signal.rfft(a)) ** 2) + \
            tf1.reduce_sum(tf1.math.real(tf1.signal.rfft2d(b) * w[0, 0])) + \
            tf1.reduce_sum(tf1.signal.irfft(z) ** 2) + \
            tf1.reduce_sum(tf1.signal.irfft2d(z, fft_length=[4, 5]) * a[0, 0])
        ga, gb = tf1.gradients(loss, [a, b])
        tf1.identity(loss, name="loss")
        tf1.identity(ga, name="grad_a")
        tf1.identity(gb, name="grad_b")
    rtol, atol = TOL[dtype]
    compare(f"{dtype}/gradients", g, ["loss", "grad_a", "grad_b"], (rtol * 10, atol * 10))


def short_fft_input():
    """RFFT of an input shorter than fft_length is refused, as TensorFlow
    refuses it, naming the dimension."""
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        raw.RFFT(input=tf1.constant(np.ones((2, 5), np.float32)), fft_length=[8], name="r")
    path = os.path.join(WORK, "short_rfft.pb")
    with open(path, "wb") as fh:
        fh.write(g.as_graph_def().SerializeToString())
    proc = run_weft(WEFT, path, ["r"])
    check("short_rfft_input", proc.returncode != 0 and
          "Input dimension 1 must have length of at least 8 but got: 5" in proc.stderr,
          clip(proc.stderr))


def linalg(dtype):
    """The decompositions and solvers on complex matrices: adjoints
    conjugate; eigen and singular values are real, with a zero imaginary
    part, as TensorFlow returns them. Q, R, U, V and eigenvectors are
    unique only up to phases, so they are checked through products that
    are unique (Q R, U diag(s) V^H, V diag(e) V^H)."""
    g = tf1.Graph()
    f = []
    with g.as_default(), tf1.device("/cpu:0"):
        a = tf1.constant(sample(dtype, (2, 4, 4)) + 4 * np.eye(4, dtype=dtype))
        b = tf1.constant(sample(dtype, (2, 4, 3)))
        hpd = tf1.matmul(a, a, adjoint_b=True)  # Hermitian positive definite
        outs = {
            "inverse": raw.MatrixInverse(input=a),
            "inverse_adjoint": raw.MatrixInverse(input=a, adjoint=True),
            "det": raw.MatrixDeterminant(input=a),
            "logdet_sign": raw.LogMatrixDeterminant(input=a).sign,
            "logdet_abs": raw.LogMatrixDeterminant(input=a).log_abs_determinant,
            "solve": raw.MatrixSolve(matrix=a, rhs=b),
            "solve_adjoint": raw.MatrixSolve(matrix=a, rhs=b, adjoint=True),
            "tri_lower": raw.MatrixTriangularSolve(matrix=a, rhs=b, lower=True),
            "tri_upper_adjoint": raw.MatrixTriangularSolve(matrix=a, rhs=b, lower=False,
                                                           adjoint=True),
            "tri_lower_adjoint": raw.MatrixTriangularSolve(matrix=a, rhs=b, lower=True,
                                                           adjoint=True),
            "cholesky": raw.Cholesky(input=hpd),
            "solve_ls": raw.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=0.0, fast=True),
            "eigvals": raw.SelfAdjointEigV2(input=hpd, compute_v=False).e,
            "svd_s": raw.Svd(input=a[:, :, :3], compute_uv=False).s,
        }
        q, r = tf1.linalg.qr(a[:, :, :3])
        outs["qr_product"] = tf1.matmul(q, r)
        outs["q_unitary"] = tf1.matmul(q, q, adjoint_a=True)
        s, u, v = tf1.linalg.svd(a)
        outs["svd_product"] = tf1.matmul(u * tf1.cast(tf1.expand_dims(s, -2), dtype), v,
                                         adjoint_b=True)
        e, vecs = tf1.linalg.eigh(hpd)
        outs["eigh_product"] = tf1.matmul(vecs * tf1.cast(tf1.expand_dims(e, -2), dtype), vecs,
                                          adjoint_b=True)
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
            f.append("out_" + name)
    rtol, atol = TOL[dtype]
    compare(f"{dtype}/linalg", g, f, (rtol * 50, atol * 50))


def variables(dtype):
    """A resource variable and a ref variable of complex type, updated by
    AssignAdd/AssignSub and gradient descent, and the gradient of a gather
    (an UnsortedSegmentSum-free IndexedSlices applied densely)."""
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        init = sample(dtype, (3, 2))
        v = tf1.Variable(init, name="v", use_resource=True)
        r = tf1.Variable(init, name="r", use_resource=False)
        delta = tf1.constant(sample(dtype, (3, 2)))
        with tf1.control_dependencies([v.assign_add(delta), r.assign_sub(delta)]):
            step = tf1.train.GradientDescentOptimizer(0.5).apply_gradients(
                [(tf1.constant(sample(dtype, (3, 2))), v), (delta, r)])
        with tf1.control_dependencies([step]):
            tf1.identity(v.read_value(), name="v_after")
            tf1.identity(r.read_value(), name="r_after")
        x = tf1.constant(sample(dtype, (5, 2)))
        gathered = tf1.gather(x, [4, 0, 4])
        loss = tf1.reduce_sum(tf1.math.real(gathered * tf1.math.conj(gathered)))
        tf1.identity(tf1.convert_to_tensor(tf1.gradients(loss, x)[0]), name="gather_grad")
        init_op = tf1.global_variables_initializer()
    ref, proc = run_tf1_and_weft(WEFT, WORK, f"{dtype}_variables", g,
                                 ["v_after", "r_after", "gather_grad"], init=[init_op.name])
    got = weft_fetches(f"{dtype}/variables", proc)
    if got is None:
        return
    rtol, atol = TOL[dtype]
    for name, want in zip(["v_after", "r_after", "gather_grad"], ref):
        have = decode(got[name])
        check(f"{dtype}/variables/{name}", np.allclose(have, want, rtol=rtol, atol=atol),
              f"{have.ravel()[:4]} != TF {np.asarray(want).ravel()[:4]}")


def feeds(dtype):
    """Complex feeds through the CLI: JSON [real, imag] pairs (the form weft
    prints) and a .npy file."""
    g = tf1.Graph()
    with g.as_default(), tf1.device("/cpu:0"):
        x = tf1.placeholder(dtype, [2, 3], name="x")
        tf1.identity(x * tf1.math.conj(x) + 1j, name="y")
    path = os.path.join(WORK, f"feeds_{dtype}.pb")
    with open(path, "wb") as fh:
        fh.write(g.as_graph_def().SerializeToString())
    value = sample(dtype, (2, 3))
    want = value * np.conj(value) + 1j
    proc = run_weft(WEFT, path, ["y"], feeds=[("x", value)])
    got = weft_fetches(f"{dtype}/feed_json", proc)
    if got is not None:
        have = decode(got["y"])
        check(f"{dtype}/feed_json", have.dtype == want.dtype and np.allclose(have, want),
              f"{have} != {want}")
    npy = os.path.join(WORK, f"x_{dtype}.npy")
    np.save(npy, value)
    proc = subprocess.run([WEFT, "run", "--graph", path, "--fetch", "y", "--format", "json",
                           "--feed", f"x=@{npy}"], capture_output=True, text=True, timeout=120)
    got = weft_fetches(f"{dtype}/feed_npy", proc)
    if got is not None:
        have = decode(got["y"])
        check(f"{dtype}/feed_npy", np.allclose(have, want), f"{have} != {want}")


def malformed_constant():
    """A complex64 Const whose scomplex_val holds an odd number of floats
    (half a pair) is refused, naming the field, not read past its end."""
    g = tf1.Graph()
    with g.as_default():
        tf1.constant(np.array([1 + 2j, 3 - 4j], np.complex64), name="c")
    gd = g.as_graph_def()
    proto = gd.node[0].attr["value"].tensor
    proto.ClearField("tensor_content")
    proto.scomplex_val.extend([1.0, 2.0, 3.0])
    path = os.path.join(WORK, "malformed.pb")
    with open(path, "wb") as fh:
        fh.write(gd.SerializeToString())
    proc = run_weft(WEFT, path, ["c"])
    check("malformed_scomplex_val", proc.returncode != 0 and "scomplex_val" in proc.stderr,
          clip(proc.stderr))


for t in TYPES:
    casts_and_constants(t)
    elementwise(t)
    reductions_and_products(t)
    array_ops(t)
    spectral(t)
    gradient_graph(t)
    variables(t)
    linalg(t)
    feeds(t)
short_fft_input()
malformed_constant()
sys.exit(summary_exit_code())
