"""Conformance: array layout and indexing ops, run by `weft run` against
TensorFlow 2.21 on the same GraphDef, exactly: TopKV2 (ties, k = 0, k = n,
long rows, int64 indices), MatrixBandPart, Diag, DiagPart, MatrixDiagV3,
MatrixDiagPartV3, MatrixSetDiagV3 (every align, bands of k), MirrorPad
(REFLECT, SYMMETRIC; strings, bools), SpaceToBatchND, BatchToSpaceND,
SpaceToDepth, DepthToSpace, Roll, ReverseSequence and CheckNumerics over
float, int32, int64, bool and string where TensorFlow has them, plus
tf.gradients through the differentiable ones (TensorFlow's gradient graphs:
MirrorPadGrad, the inverse layout ops, TopKV2's scatter), and the failures
TensorFlow reports (CheckNumerics' message, bad k, block sizes that do not
divide, paddings too big for MirrorPad).

usage: array_index_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, compare_tf1_graph, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("array_index")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops

rng = np.random.RandomState(7)


def values(shape, dtype):
    """Test values of `dtype`: small integers (so that ties happen), floats
    with a fractional part, alternating bools, numbered strings."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dtype == object:
        return np.array([f"s{i}" for i in range(n)], dtype=object).reshape(shape)
    if np.issubdtype(dtype, np.integer):
        return rng.randint(-20, 20, size=shape).astype(dtype)
    return (rng.randint(-40, 40, size=shape) / 4.0 + rng.uniform(-1e-3, 1e-3, size=shape)).astype(dtype)


def const(shape, dtype):
    v = values(shape, dtype)
    return tf1.constant(v, dtype=tf.string if dtype == object else None)


def run_case(case, build):
    """build() adds the outputs (a dict name -> tensor) to a fresh graph;
    compared exactly with TensorFlow's."""
    g = tf1.Graph()
    with g.as_default():
        outs = build()
        names = []
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
            names.append("out_" + name)
    compare_tf1_graph(WEFT, WORK, case, g, names, (), 1, 0.0, 0.0)


def topk():
    out = {}
    for dt in (np.float32, np.float64, np.int32, np.int64, np.float16, np.uint8):
        x = tf1.constant(values((3, 17), np.float32).astype(dt) if dt != np.uint8
                         else rng.randint(0, 5, size=(3, 17)).astype(dt))
        for k in (0, 1, 4, 17):
            v, i = raw.TopKV2(input=x, k=k)
            out[f"{np.dtype(dt).name}_k{k}_v"], out[f"{np.dtype(dt).name}_k{k}_i"] = v, i
    big = tf1.constant(rng.randint(0, 300, size=(4, 5000)).astype(np.float32))
    v, i = raw.TopKV2(input=big, k=tf1.constant(np.int64(37)), index_type=tf.int64)
    out["big_v"], out["big_i"] = v, i
    v, i = raw.TopKV2(input=tf1.constant(values((9,), np.float32)), k=3)
    out["vec_v"], out["vec_i"] = v, i
    return out


def band_diag():
    out = {}
    for dt in (np.float32, np.int32, np.int64, np.bool_):
        x = const((2, 4, 5), dt)
        for lo, up in ((1, 2), (-1, 0), (0, -1), (0, 0), (4, 5)):
            out[f"band_{np.dtype(dt).name}_{lo}_{up}"] = raw.MatrixBandPart(
                input=x, num_lower=np.int64(lo), num_upper=np.int64(up))
    out["band_i32idx"] = raw.MatrixBandPart(input=const((3, 3), np.float32),
                                            num_lower=np.int32(1), num_upper=np.int32(0))
    for dt in (np.float32, np.float64, np.int32, np.int64):
        d = raw.Diag(diagonal=const((2, 3), dt))
        out[f"diag_{np.dtype(dt).name}"] = d
        out[f"diagpart_{np.dtype(dt).name}"] = raw.DiagPart(input=d + 1)
    return out


def matrix_diag():
    out = {}
    for dt in (np.float32, np.int32, np.int64, np.bool_):
        m = const((2, 4, 5), dt)
        pad = values((), dt)
        for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
            tag = f"{np.dtype(dt).name}_{align}"
            for k in ([-2, 1], [0, 0], [1, 3], [-3, -1], 2):
                kt = np.array(k, np.int32)
                k = "_".join(str(i) for i in np.ravel(kt)).replace("-", "m")
                part = raw.MatrixDiagPartV3(input=m, k=kt, padding_value=pad, align=align)
                out[f"part_{tag}_{k}"] = part
                out[f"set_{tag}_{k}"] = raw.MatrixSetDiagV3(input=m, diagonal=part, k=kt, align=align)
                out[f"diag_{tag}_{k}"] = raw.MatrixDiagV3(diagonal=part, k=kt, num_rows=-1, num_cols=-1,
                                                          padding_value=pad, align=align)
            out[f"diag_rows_{tag}"] = raw.MatrixDiagV3(
                diagonal=const((2, 3), dt), k=np.array([-1, 0], np.int32), num_rows=4, num_cols=-1,
                padding_value=pad, align=align)
    return out


def mirror_pad():
    out = {}
    pads = [[1, 2], [0, 3], [2, 2]]
    for dt in (np.float32, np.int32, np.int64, np.bool_, object):
        x = const((3, 4, 5), dt)
        for mode in ("REFLECT", "SYMMETRIC"):
            out[f"{mode}_{np.dtype(dt).name}"] = raw.MirrorPad(input=x, paddings=pads, mode=mode)
    out["sym_full"] = raw.MirrorPad(input=const((2, 3), np.float32),
                                    paddings=np.array([[2, 2], [3, 0]], np.int64), mode="SYMMETRIC")
    out["scalar_rank1"] = raw.MirrorPad(input=const((1,), np.float32), paddings=[[0, 0]],
                                        mode="REFLECT")
    return out


def space_batch():
    out = {}
    for dt in (np.float32, np.int32, np.int64, np.float16):
        x = const((2, 4, 6, 3), dt)
        sb = raw.SpaceToBatchND(input=x, block_shape=[2, 3], paddings=[[0, 2], [1, 2]])
        out[f"s2b_{np.dtype(dt).name}"] = sb
        out[f"b2s_{np.dtype(dt).name}"] = raw.BatchToSpaceND(input=sb, block_shape=[2, 3],
                                                             crops=[[1, 0], [2, 1]])
    x = const((2, 6, 5), np.float32)  # one spatial dim, a trailing dim
    out["s2b_1d"] = raw.SpaceToBatchND(input=x, block_shape=np.array([4], np.int64),
                                       paddings=np.array([[1, 1]], np.int64))
    out["s2b_none"] = raw.SpaceToBatchND(input=x, block_shape=np.zeros([0], np.int32),
                                         paddings=np.zeros([0, 2], np.int32))
    for dt in (np.float32, np.int32, np.bool_, object):
        x = const((2, 4, 6, 3), dt)
        s2d = raw.SpaceToDepth(input=x, block_size=2)
        out[f"s2d_{np.dtype(dt).name}"] = s2d
        out[f"d2s_{np.dtype(dt).name}"] = raw.DepthToSpace(input=s2d, block_size=2)
        out[f"d2s3_{np.dtype(dt).name}"] = raw.DepthToSpace(input=const((1, 2, 3, 9), dt), block_size=3)
    return out


def roll_reverse():
    out = {}
    for dt in (np.float32, np.int32, np.int64, np.bool_, object):
        x = const((3, 4, 5), dt)
        out[f"roll_{np.dtype(dt).name}"] = raw.Roll(input=x, shift=[1, -7], axis=[0, 2])
        out[f"roll_rep_{np.dtype(dt).name}"] = raw.Roll(input=x, shift=np.array([2, 5, -1], np.int64),
                                                        axis=np.array([1, 1, -1], np.int64))
        out[f"roll_scalar_{np.dtype(dt).name}"] = raw.Roll(input=x, shift=3, axis=1)
        out[f"rev_{np.dtype(dt).name}"] = raw.ReverseSequence(
            input=x, seq_lengths=np.array([4, 0, 2], np.int64), seq_dim=1, batch_dim=0)
        out[f"rev_last_{np.dtype(dt).name}"] = raw.ReverseSequence(
            input=x, seq_lengths=np.array([5, 1, 3], np.int32), seq_dim=2, batch_dim=0)
        out[f"rev_batchlast_{np.dtype(dt).name}"] = raw.ReverseSequence(
            input=x, seq_lengths=np.array([3, 0, 1, 2, 2], np.int64), seq_dim=0, batch_dim=2)
    out["check"] = raw.CheckNumerics(tensor=const((3, 4), np.float32), message="fine")
    out["check_v2"] = raw.CheckNumericsV2(tensor=const((3, 4), np.float64), message="fine")
    return out


def gradients():
    out = {}
    f = np.float32
    cases = {
        "topk": lambda x: raw.TopKV2(input=x, k=3)[0],
        "band": lambda x: raw.MatrixBandPart(input=x, num_lower=np.int64(1), num_upper=np.int64(0)),
        "mirror_reflect": lambda x: raw.MirrorPad(input=x, paddings=[[0, 1], [2, 3]], mode="REFLECT"),
        "mirror_symmetric": lambda x: raw.MirrorPad(input=x, paddings=[[2, 1], [4, 3]], mode="SYMMETRIC"),
        "s2b": lambda x: raw.SpaceToBatchND(input=tf1.reshape(x, [1, 4, 6, 1]), block_shape=[2, 3],
                                            paddings=[[0, 0], [0, 0]]),
        "b2s": lambda x: raw.BatchToSpaceND(input=tf1.reshape(x, [4, 2, 3, 1]), block_shape=[2, 2],
                                            crops=[[1, 0], [0, 1]]),
        "s2d": lambda x: raw.SpaceToDepth(input=tf1.reshape(x, [1, 4, 6, 1]), block_size=2),
        "d2s": lambda x: raw.DepthToSpace(input=tf1.reshape(x, [1, 2, 3, 4]), block_size=2),
        "roll": lambda x: raw.Roll(input=x, shift=[1, -2], axis=[0, 1]),
        "rev": lambda x: raw.ReverseSequence(input=x, seq_lengths=np.array([6, 2, 0, 3], np.int64),
                                             seq_dim=1, batch_dim=0),
        "check": lambda x: raw.CheckNumerics(tensor=x, message="m"),
        "diag": lambda x: raw.Diag(diagonal=x),
        "diagpart": lambda x: raw.DiagPart(input=tf1.reshape(x, [2, 3, 2, 2])[:, :2, :, :]),
        "matrix_diag_part": lambda x: raw.MatrixDiagPartV3(input=x, k=np.array([-1, 2], np.int32),
                                                           padding_value=9.0, align="LEFT_RIGHT"),
        "matrix_set_diag": lambda x: raw.MatrixSetDiagV3(input=x, diagonal=x[:, 1] * 2,
                                                         k=np.array(1, np.int32)),
        "matrix_diag": lambda x: raw.MatrixDiagV3(diagonal=x, k=np.array([0, 1], np.int32)[0],
                                                  num_rows=-1, num_cols=-1, padding_value=0.0),
    }
    for name, op in cases.items():
        x = tf1.constant(values((4, 6), f))
        y = op(x)
        w = tf1.constant(values(y.shape.as_list(), f))
        out[name] = tf1.gradients(tf1.reduce_sum(y * w), x)[0]
    return out


run_case("topk", topk)
run_case("band_diag", band_diag)
run_case("matrix_diag", matrix_diag)
run_case("mirror_pad", mirror_pad)
run_case("space_batch", space_batch)
run_case("roll_reverse", roll_reverse)
run_case("gradients", gradients)


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
          f"weft exited {proc.returncode}: {proc.stderr[-2000:]}")


nan_x = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
expect_failure("check_nan",
               lambda: raw.CheckNumerics(tensor=tf1.placeholder_with_default(nan_x[:2], [None]),
                                         message="loss is bad", name="guard"),
               "loss is bad : Tensor had NaN values")
expect_failure("check_inf_nan",
               lambda: raw.CheckNumerics(tensor=tf1.placeholder_with_default(nan_x, [None]),
                                         message="m", name="guard"),
               "m : Tensor had Inf and NaN values")
expect_failure("check_v2",
               lambda: raw.CheckNumericsV2(tensor=tf1.placeholder_with_default(nan_x, [None]),
                                           message="m", name="guard"),
               "m : Tensor had -Inf, +Inf, and NaN values")
expect_failure("check_v2_inf",
               lambda: raw.CheckNumericsV2(tensor=tf1.placeholder_with_default(nan_x[2:], [None]),
                                           message="m", name="guard"),
               "m : Tensor had -Inf and +Inf values")
expect_failure("topk_k_too_big",
               lambda: raw.TopKV2(input=tf1.placeholder_with_default(nan_x[:2], [None]), k=3)[0],
               "input must have at least k columns. Had 2, needed 3")
expect_failure("mirror_pad_too_big",
               lambda: raw.MirrorPad(input=tf1.placeholder_with_default(nan_x[:3], [None]),
                                     paddings=[[3, 0]], mode="REFLECT"),
               "paddings must be less than the dimension size: 3, 0 not less than 3")
expect_failure("s2b_not_divisible",
               lambda: raw.SpaceToBatchND(
                   input=tf1.placeholder_with_default(np.zeros((1, 5, 1), np.float32), [None, None, 1]),
                   block_shape=[2], paddings=[[0, 0]]),
               "padded_shape[0]=5 is not divisible by block_shape[0]=2")
expect_failure("d2s_not_divisible",
               lambda: raw.DepthToSpace(
                   input=tf1.placeholder_with_default(np.zeros((1, 1, 1, 6), np.float32),
                                                      [None, None, None, None]),
                   block_size=2),
               "Input depth dimension 6 should be divisible by: 4")

sys.exit(summary_exit_code())
