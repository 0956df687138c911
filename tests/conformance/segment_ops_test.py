"""Conformance: the segment reductions written by TensorFlow 2.21 in TF1
graph mode (tf.raw_ops), run by `weft run`, compared with TensorFlow.

Segment{Sum,Mean,Prod,Min,Max} (sorted ids with a gap: an empty segment),
UnsortedSegment{Sum,Max,Min,Prod} (negative ids dropped, num_segments past
the ids, multi-dimensional ids, empty segments at T's lowest/highest),
SparseSegment{Sum,Mean,SqrtN} and their WithNumSegments forms (indices
repeated and unsorted, empty segments), SparseSegment*Grad and *GradV2;
float32, float64, half and the integer types, int32 and int64 ids, empty
inputs. Gradients: tf.gradients of a loss through each differentiable op
(TensorFlow's gradient graphs: gathers, SparseSegment*Grad, ...), run by
weft. Floats to 1e-6 relative (half 1e-3), integers exactly. Also ids and
num_segments so large that the output would overflow int64's element count:
INVALID_ARGUMENT, the process unharmed.

(The V2 sorted forms, SegmentSumV2 and co., have no CPU kernel in
TensorFlow, so they are checked in tests/ops instead.)

usage: segment_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, compare_tf1_graph, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("segment_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
raw = tf.raw_ops


RNG = np.random.RandomState(7)
DATA = RNG.uniform(-3, 3, size=(6, 4)).round(3)
DATA[2, 1] = DATA[3, 1]  # a tie for min/max
IDS = [0, 0, 2, 2, 2, 5]  # 1, 3, 4 empty


def compare(case, build, dtype=np.float32):
    """build() makes the fetched tensors (named) in a fresh graph."""
    g = tf1.Graph()
    with g.as_default():
        fetches = build()
    tol = 1e-3 if dtype == np.float16 else (1e-6 if dtype == np.float32 else 1e-9)
    compare_tf1_graph(WEFT, WORK, case, g, fetches, rtol=tol, atol=tol)


def named(tensors):
    names = []
    for i, t in enumerate(tensors):
        names.append(f"out{i}")
        tf1.identity(t, name=names[-1])
    return names


def data_of(dtype, rows=DATA):
    if np.dtype(dtype).kind in "iu":
        return tf1.constant((rows * 3).astype(dtype))
    return tf1.constant(rows.astype(dtype))


# --- Sorted segments.
for dtype in (np.float32, np.float64, np.float16, np.int32, np.int64):
    for id_type in (tf.int32, tf.int64):
        ops = ["SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax"]
        if dtype == np.float16:
            ops = ["SegmentSum", "SegmentMean", "SegmentMin", "SegmentMax"]
        compare(f"sorted_{np.dtype(dtype).name}_{id_type.name}", lambda: named(
            [getattr(raw, op)(data=data_of(dtype), segment_ids=tf1.constant(IDS, id_type))
             for op in ops]), dtype)
compare("sorted_3d", lambda: named(
    [getattr(raw, op)(data=tf1.constant(RNG.uniform(-1, 1, (4, 2, 3)).astype(np.float32)),
                      segment_ids=[1, 1, 1, 3])
     for op in ("SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax")]))
compare("sorted_empty", lambda: named(
    [getattr(raw, op)(data=tf1.zeros([0, 3]), segment_ids=tf1.zeros([0], tf.int32))
     for op in ("SegmentSum", "SegmentMean", "SegmentMax")]))
compare("sorted_vector", lambda: named(
    [raw.SegmentSum(data=tf1.constant([1.5, 2.0, -1.0, 4.0]), segment_ids=[0, 1, 1, 1])]))

# --- Unsorted segments: ids out of order, negative (dropped), num_segments
# past the ids (empty segments), 2-D ids.
UIDS = [3, -1, 0, 3, 6, 0]
for dtype in (np.float32, np.float64, np.float16, np.int32, np.int64):
    for id_type in (tf.int32, tf.int64):
        ops = ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
               "UnsortedSegmentProd"]
        compare(f"unsorted_{np.dtype(dtype).name}_{id_type.name}", lambda: named(
            [getattr(raw, op)(data=data_of(dtype), segment_ids=tf1.constant(UIDS, id_type),
                              num_segments=tf1.constant(9, id_type))
             for op in ops]), dtype)
compare("unsorted_2d_ids", lambda: named(
    [getattr(raw, op)(data=tf1.constant(DATA.reshape(2, 3, 4).astype(np.float32)),
                      segment_ids=[[1, 0, 1], [-1, 4, 0]], num_segments=5)
     for op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
                "UnsortedSegmentProd")]))
compare("unsorted_empty", lambda: named(
    [getattr(raw, op)(data=tf1.zeros([0, 2]), segment_ids=tf1.zeros([0], tf.int32),
                      num_segments=3)
     for op in ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")]))

# --- Sparse segments: indices repeated and unsorted, sorted segment ids
# with gaps, num_segments past the last id.
SIDX = [5, 0, 5, 2, 1, 3]
SSEG = [0, 0, 0, 2, 2, 4]
for dtype in (np.float32, np.float64, np.float16):
    for idx_type, seg_type in ((tf.int32, tf.int32), (tf.int64, tf.int32), (tf.int32, tf.int64)):
        def sparse():
            out = []
            for op in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"):
                args = dict(data=data_of(dtype), indices=tf1.constant(SIDX, idx_type),
                            segment_ids=tf1.constant(SSEG, seg_type))
                out.append(getattr(raw, op)(**args))
                out.append(getattr(raw, op + "WithNumSegments")(num_segments=7, **args))
            return named(out)
        compare(f"sparse_{np.dtype(dtype).name}_{idx_type.name}_{seg_type.name}", sparse, dtype)
for dtype in (np.int32, np.int64):
    compare(f"sparse_sum_{np.dtype(dtype).name}", lambda: named(
        [raw.SparseSegmentSum(data=data_of(dtype), indices=SIDX, segment_ids=SSEG),
         raw.SparseSegmentSumWithNumSegments(data=data_of(dtype), indices=SIDX,
                                             segment_ids=SSEG, num_segments=6)]), dtype)
compare("sparse_empty", lambda: named(
    [raw.SparseSegmentMean(data=tf1.constant(DATA.astype(np.float32)),
                           indices=tf1.zeros([0], tf.int32), segment_ids=tf1.zeros([0], tf.int32)),
     raw.SparseSegmentSqrtNWithNumSegments(data=tf1.constant(DATA.astype(np.float32)),
                                           indices=tf1.zeros([0], tf.int32),
                                           segment_ids=tf1.zeros([0], tf.int32), num_segments=3)]))

# --- The gradient ops themselves.
GRAD = RNG.uniform(-2, 2, size=(5, 4))
for dtype in (np.float32, np.float64, np.float16):
    for op in ("SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"):
        def grads():
            args = dict(grad=tf1.constant(GRAD.astype(dtype)), indices=SIDX, segment_ids=SSEG)
            v2 = getattr(raw, op + "V2")(dense_output_dim0=6, **args)
            return named([getattr(raw, op)(output_dim0=8, **args), v2[0], v2[1]])
        compare(f"{op}_{np.dtype(dtype).name}", grads, dtype)


# --- Gradients through the forward ops: tf.gradients' graphs, run by weft.
def grad_case(case, fwd):
    def build():
        x = tf1.constant(DATA.astype(np.float32))
        y = fwd(x)
        loss = tf1.reduce_sum(y * tf1.constant(RNG.uniform(-1, 1, (1, 4)).astype(np.float32)))
        return named([y, tf1.convert_to_tensor(tf1.gradients(loss, x)[0])])
    compare(case, build)


for name in ("segment_sum", "segment_mean", "segment_min", "segment_max", "segment_prod"):
    grad_case(f"grad_{name}", lambda x, n=name: getattr(tf.math, n)(x, IDS))
for name in ("unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min",
             "unsorted_segment_prod", "unsorted_segment_mean", "unsorted_segment_sqrt_n"):
    grad_case(f"grad_{name}", lambda x, n=name: getattr(tf.math, n)(x, UIDS, 8))
for name in ("sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"):
    grad_case(f"grad_{name}", lambda x, n=name: getattr(tf.sparse, n.replace("sparse_", "", 1))(
        x, SIDX, SSEG))
    grad_case(f"grad_{name}_num_segments", lambda x, n=name: getattr(
        tf.sparse, n.replace("sparse_", "", 1))(x, SIDX, SSEG, num_segments=6))
# An embedding lookup with a combiner: embedding_lookup_sparse's graph.
grad_case("grad_embedding_lookup_sparse", lambda x: tf.nn.embedding_lookup_sparse(
    x, tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf1.constant([4, 1, 4], tf.int64), [3, 2]),
    None, combiner="sqrtn"))


# Hostile sizes: an id or num_segments whose output would hold more than
# int64's elements is INVALID_ARGUMENT (it used to crash the process).
def huge_case(case, build):
    g = tf1.Graph()
    with g.as_default():
        build()
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    proc = run_weft(WEFT, path, ["out"])
    check(f"{case}/invalid_argument", proc.returncode == 1 and
          "INVALID_ARGUMENT" in proc.stderr and "too large" in proc.stderr, proc.stderr[-600:])


BIG = 1676240524292489355
for name in ("segment_max", "segment_sum", "segment_mean", "segment_prod"):
    huge_case(f"huge_id_{name}", lambda n=name: tf1.identity(getattr(tf.math, n)(
        tf1.constant(np.ones((1, 10, 1))), tf1.constant([BIG], tf.int64)), name="out"))
huge_case("huge_num_segments_unsorted", lambda: tf1.identity(tf.math.unsorted_segment_sum(
    tf1.constant(np.ones((2, 10))), tf1.constant([0, 1]), tf1.constant(BIG, tf.int64)), name="out"))
huge_case("huge_id_sparse_segment", lambda: tf1.identity(tf.sparse.segment_sum(
    tf1.constant(np.ones((2, 10))), tf1.constant([0, 1]), tf1.constant([0, BIG], tf.int64)),
    name="out"))

sys.exit(summary_exit_code())
