"""Conformance: ragged ops against TensorFlow 2.21, run by `weft run`.

RaggedTensorToTensor in both partition forms TensorFlow writes (ROW_SPLITS
for every level; FIRST_DIM_SIZE then VALUE_ROWIDS), ragged rank 1 to 3,
with `shape` unknown or given (cropping and padding), default_value scalar
or broadcast, int32 and int64 partitions, every dtype Weft holds of those
TensorFlow's CPU kernel registers; RaggedBincount (binary_output, weights,
int32/int64 values), RaggedRange (every T with a CPU kernel, int32/int64
splits), RaggedTensorToSparse, RaggedGather and RaggedFillEmptyRows (+Grad).
Compared bit for bit. Hostile partitions (splits not
starting at 0, decreasing or past the values, row ids unsorted or out of
range, huge shapes) must make `weft run` exit non-zero with an
INVALID_ARGUMENT naming the input. End to end: Keras TextVectorization
("int" with output_sequence_length, plus an Embedding; and "multi_hot" and
"tf_idf"; and with ngrams, through StringNGrams) frozen with
convert_variables_to_constants_v2 and fed strings.

usage: ragged_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, compare_fetches, compare_tf1_graph  # noqa: E402
from tf_compare import check_refused, run_built, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("ragged")
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2)

tf1 = tf.compat.v1
R = tf.raw_ops
I32, I64 = tf.int32, tf.int64


def to_tensor(shape, values, default, parts, types, index=I64, shape_dtype=I64, name="out"):
    parts = [tf1.constant(p, index) for p in parts]
    shape = tf1.constant(shape, shape_dtype)
    return tf1.identity(R.RaggedTensorToTensor(
        shape=shape, values=values, default_value=default, row_partition_tensors=parts,
        row_partition_types=types), name=name)


def to_tensor_cases():
    """(case, graph builder) for RaggedTensorToTensor."""
    v5 = [1, 2, 3, 4, 5]
    cases = {
        "splits_unknown_shape": lambda: to_tensor(-1, tf1.constant(v5), 0, [[0, 2, 2, 5]],
                                                  ["ROW_SPLITS"]),
        "splits_int32_pad": lambda: to_tensor([4, 5], tf1.constant(v5), -1, [[0, 2, 2, 5]],
                                              ["ROW_SPLITS"], index=I32, shape_dtype=I32),
        "splits_crop": lambda: to_tensor([2, 2], tf1.constant(v5), 9, [[0, 1, 1, 5]],
                                         ["ROW_SPLITS"]),
        "splits_partial_shape": lambda: to_tensor([-1, 4], tf1.constant(v5), 7, [[0, 3, 5]],
                                                  ["ROW_SPLITS"]),
        "splits_fewer_values": lambda: to_tensor(-1, tf1.constant(v5 + [6, 7]), 0, [[0, 2, 5]],
                                                 ["ROW_SPLITS"]),
        "rowids": lambda: to_tensor(-1, tf1.constant(v5), 0, [4, [0, 0, 2, 2, 2]],
                                    ["FIRST_DIM_SIZE", "VALUE_ROWIDS"]),
        "rowids_int32_crop": lambda: to_tensor([-1, 2], tf1.constant(v5), 8, [5, [1, 1, 1, 3, 4]],
                                               ["FIRST_DIM_SIZE", "VALUE_ROWIDS"], index=I32),
        "rank2_splits": lambda: to_tensor(-1, tf1.constant(np.arange(9.0, dtype=np.float32)),
                                          -1.0, [[0, 2, 3], [0, 3, 3, 9]],
                                          ["ROW_SPLITS", "ROW_SPLITS"]),
        "rank2_splits_crop_pad": lambda: to_tensor(
            [3, 1, 3], tf1.constant(np.arange(9.0, dtype=np.float32)), -1.0,
            [[0, 2, 3], [0, 3, 3, 9]], ["ROW_SPLITS", "ROW_SPLITS"]),
        "rank2_rowids": lambda: to_tensor(-1, tf1.constant(np.arange(9, dtype=np.int64)),
                                          tf1.constant(0, I64),
                                          [3, [0, 0, 2, 2], [0, 0, 0, 2, 2, 2, 2, 3, 3]],
                                          ["FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS"]),
        "rank3_splits": lambda: to_tensor(-1, tf1.constant(np.arange(6, dtype=np.int32)), 0,
                                          [[0, 1, 2], [0, 2, 3], [0, 1, 1, 6]],
                                          ["ROW_SPLITS"] * 3),
        "inner_dims_broadcast_default": lambda: to_tensor(
            -1, tf1.constant(np.arange(15.0).reshape(5, 3)), tf1.constant([7.0, 8.0, 9.0],
                                                                         tf.float64),
            [[0, 2, 2, 5]], ["ROW_SPLITS"]),
        "inner_dims_default_row": lambda: to_tensor(
            [2, 4, 2, 3], tf1.constant(np.arange(30.0, dtype=np.float32).reshape(5, 2, 3)),
            tf1.constant([[1.5], [2.5]], tf.float32), [[0, 3, 5]], ["ROW_SPLITS"]),
        "empty_values": lambda: to_tensor(-1, tf1.constant([], tf.float32), 3.0, [[0, 0, 0]],
                                          ["ROW_SPLITS"]),
        "empty_rows": lambda: to_tensor([0, 3], tf1.constant([], tf.float32), 3.0, [[0]],
                                        ["ROW_SPLITS"]),
    }
    dtypes = [tf.float32, tf.float64, tf.int32, tf.uint8, tf.int16, tf.int8, tf.int64,
              tf.bool, tf.bfloat16, tf.uint16, tf.half, tf.uint32, tf.uint64, tf.complex64,
              tf.complex128, tf.string]
    for dt in dtypes:
        if dt == tf.string:
            vals, default = ["a", "bb", "", "ccc", "d"], "pad"
        elif dt == tf.bool:
            vals, default = [True, False, True, True, False], False
        elif dt.is_complex:
            vals, default = [1 + 2j, 3, -4j, 5, 6 + 1j], 9 - 1j
        else:
            vals, default = [1, 2, 3, 4, 5], 7
        cases[f"dtype_{dt.name}"] = (
            lambda vals=vals, default=default, dt=dt: to_tensor(
                [3, 4], tf1.constant(vals, dt), tf1.constant(default, dt), [[0, 2, 2, 5]],
                ["ROW_SPLITS"]))
    return cases


def bincount_cases():
    """(case, (index dtype, binary_output, weight dtype, weighted))."""
    out = []
    for idx in (I32, I64):
        for binary in (False, True):
            for dt in (tf.float32, tf.float64, tf.int32, tf.int64):
                for weighted in (False, True):
                    out.append((f"bincount_{idx.name}_{dt.name}_binary{int(binary)}"
                                f"_w{int(weighted)}", (idx, binary, dt, weighted)))
    return out


def run_bincount(case, idx, binary, dt, weighted):
    g = tf1.Graph()
    with g.as_default():
        wv = ([0.5, 1.0, 2.0, 3.0, 4.0, 0.25] if dt.is_floating else [1, 2, 3, 4, 5, 6])
        tf1.identity(R.RaggedBincount(
            splits=tf1.constant([0, 2, 2, 6], I64), values=tf1.constant([1, 3, 3, 0, 7, 3], idx),
            size=tf1.constant(5, idx), weights=tf1.constant(wv if weighted else [], dt),
            binary_output=binary), name="out")
    compare_tf1_graph(WEFT, WORK, case, g, ["out"], rtol=0, atol=0)


def range_and_sparse_cases():
    """(case, builder, fetches) for RaggedRange and RaggedTensorToSparse."""
    def rng(starts, limits, deltas, dt, splits=I64):
        def build():
            sp, vals = R.RaggedRange(starts=tf1.constant(starts, dt), limits=tf1.constant(
                limits, dt), deltas=tf1.constant(deltas, dt), Tsplits=splits)
            tf1.identity(sp, name="out_splits")
            tf1.identity(vals, name="out_values")
        return build

    def sparse(splits, values, tsplits=I64):
        def build():
            idx, vals, shape = R.RaggedTensorToSparse(
                rt_nested_splits=[tf1.constant(s, tsplits) for s in splits],
                rt_dense_values=values())
            for name, t in (("out_indices", idx), ("out_values", vals), ("out_shape", shape)):
                tf1.identity(t, name=name)
        return build

    def gather(splits, values, indices, out_rank, tindices=I32, tsplits=I64):
        def build():
            sp, vals = R.RaggedGather(
                params_nested_splits=[tf1.constant(s, tsplits) for s in splits],
                params_dense_values=values(), indices=tf1.constant(indices, tindices),
                OUTPUT_RAGGED_RANK=out_rank)
            for k, t in enumerate(sp):
                tf1.identity(t, name=f"out_splits{k}")
            tf1.identity(vals, name="out_values")
        return build, [f"out_splits{k}" for k in range(out_rank)] + ["out_values"]

    def fill(ids, values, nrows, default):
        def build():
            outs = R.RaggedFillEmptyRows(
                value_rowids=tf1.constant(ids, I64), values=values(),
                nrows=tf1.constant(nrows, I64), default_value=default())
            for k, t in enumerate(outs):
                tf1.identity(t, name=f"out{k}")
        return build, [f"out{k}" for k in range(4)]

    def fill_grad(index_map, grad):
        def build():
            outs = R.RaggedFillEmptyRowsGrad(reverse_index_map=tf1.constant(index_map, I64),
                                             grad_values=grad())
            for k, t in enumerate(outs):
                tf1.identity(t, name=f"out{k}")
        return build, ["out0", "out1"]

    fills = [
        ("fill_empty_rows_float", *fill([1, 1, 3], lambda: tf1.constant([1.0, 2.0, 3.0]), 5,
                                        lambda: tf1.constant(9.0))),
        ("fill_empty_rows_strings", *fill([0, 2, 2], lambda: tf1.constant(["a", "b", "c"]), 4,
                                          lambda: tf1.constant("-"))),
        ("fill_empty_rows_none", *fill(np.zeros([0], np.int64),
                                       lambda: tf1.constant([], tf.int32), 3,
                                       lambda: tf1.constant(7))),
        ("fill_empty_rows_grad_float", *fill_grad([1, 2, 4], lambda: tf1.constant(
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))),
        ("fill_empty_rows_grad_int64", *fill_grad([0, 3], lambda: tf1.constant(
            [5, 6, 7, 8], I64))),
    ]
    both = ["out_splits", "out_values"]
    strings9 = lambda: tf1.constant([f"s{i}" for i in range(9)])  # noqa: E731
    gathers = [
        ("gather_rank1", *gather([[0, 2, 2, 5]], lambda: tf1.constant([1, 2, 3, 4, 5]),
                                 [2, 0, 2, 1], 1)),
        ("gather_indices_2d_int64", *gather([[0, 2, 2, 5]], lambda: tf1.constant(
            np.arange(10.0).reshape(5, 2)), [[2, 0], [1, 1], [0, 2]], 2, I64, I32)),
        ("gather_rank2_strings", *gather([[0, 2, 3], [0, 3, 3, 9]], strings9, [1, 0, 1], 2)),
        ("gather_scalar_index", *gather([[0, 2, 3], [0, 3, 3, 9]], strings9, 0, 1)),
        ("gather_empty", *gather([[0, 2, 3], [0, 3, 3, 9]], strings9,
                                 np.zeros([0], np.int32), 2)),
    ]
    three = ["out_indices", "out_values", "out_shape"]
    return [
        ("range_int32", rng([0, 5, 3, 10], [4, 1, 3, 20], [1, -2, 1, 3], I32), both),
        ("range_int64_int32_splits", rng([-3, 7], 9, [2, 4], I64, I32), both),
        ("range_scalars", rng(2, 11, 3, I32), both),
        ("range_float", rng([0.0, 1.5, -1.0], [1.0, 0.0, 1.0], [0.1, -0.25, 0.3], tf.float32),
         both),
        ("range_double", rng([0.0, 2.0], 1.0, [0.1, -0.3], tf.float64), both),
        ("range_int64_extremes", rng([-(1 << 62)], [(1 << 62)], [1 << 61], I64), both),
        ("to_sparse_rank1", sparse([[0, 2, 2, 5]], lambda: tf1.constant([1, 2, 3, 4, 5])),
         three),
        ("to_sparse_rank2_int32", sparse([[0, 2, 3], [0, 3, 3, 9]], lambda: tf1.constant(
            [str(i) for i in range(9)]), I32), three),
        ("to_sparse_inner_dims", sparse([[0, 1, 3]], lambda: tf1.constant(
            np.arange(12.0).reshape(3, 2, 2))), three),
        ("to_sparse_empty", sparse([[0, 0, 0]], lambda: tf1.constant([], tf.float32)), three),
    ] + gathers + fills


def run_fed(case, build, feeds):
    return run_built(WEFT, WORK, case, build, ["out"], feeds)


def survives(case, build, feeds):
    """Huge but legal sizes: a result or a clean error, never a crash."""
    proc = run_fed(case, build, feeds)
    check(f"huge/{case}", proc.returncode in (0, 1),
          f"exit {proc.returncode}: {clip(proc.stdout + proc.stderr)}")


def hostile(case, build, feeds, expect):
    """A graph whose inputs come from placeholders fed to `weft run`: it
    must exit non-zero with INVALID_ARGUMENT and `expect` in its message."""
    check_refused(f"hostile/{case}", run_fed(case, build, feeds), expect)


def hostile_cases():
    P = tf1.placeholder

    def tt(types, n, shape_feed=False):
        def build():
            parts = [P(I64, name=f"p{i}") for i in range(n)]
            shape = P(I64, name="shape") if shape_feed else tf1.constant(-1, I64)
            tf1.identity(R.RaggedTensorToTensor(
                shape=shape, values=P(tf.int32, name="v"), default_value=tf1.constant(0),
                row_partition_tensors=parts, row_partition_types=types), name="out")
        return build

    v = ("v", np.array([1, 2, 3, 4, 5], np.int32))
    S = ["ROW_SPLITS"]
    F = ["FIRST_DIM_SIZE", "VALUE_ROWIDS"]
    i64 = lambda x: np.array(x, np.int64)  # noqa: E731
    hostile("splits_not_zero", tt(S, 1), [v, ("p0", i64([1, 2, 5]))],
            "row_partition_tensors[0] (ROW_SPLITS) must start with 0")
    hostile("splits_decreasing", tt(S, 1), [v, ("p0", i64([0, 3, 2, 5]))],
            "row_partition_tensors[0] (ROW_SPLITS) must not decrease")
    hostile("splits_past_values", tt(S, 1), [v, ("p0", i64([0, 2, 7]))],
            "describes 7 values but values has only 5")
    hostile("splits_huge", tt(S, 1), [v, ("p0", i64([0, 2, 1 << 62]))],
            "but values has only 5")
    hostile("splits_inner_mismatch", tt(S * 2, 2),
            [v, ("p0", i64([0, 1, 3])), ("p1", i64([0, 2, 5]))],
            "row_partition_tensors[1] (ROW_SPLITS) splits 2 rows but the level above has 3")
    hostile("splits_empty", tt(S, 1), [v, ("p0", i64([]))], "must start with 0")
    hostile("rowids_unsorted", tt(F, 2), [v, ("p0", i64(3)), ("p1", i64([0, 1, 0, 2, 2]))],
            "row_partition_tensors[1] (VALUE_ROWIDS) must be sorted")
    hostile("rowids_out_of_range", tt(F, 2), [v, ("p0", i64(3)), ("p1", i64([0, 1, 1, 2, 5]))],
            "Got value_rowid=5 which is not less than 3")
    hostile("rowids_negative", tt(F, 2), [v, ("p0", i64(3)), ("p1", i64([-1, 1, 1, 2, 2]))],
            "Got value_rowid=-1")
    hostile("rowids_too_many", tt(F, 2), [v, ("p0", i64(3)), ("p1", i64([0] * 6))],
            "describes 6 values but values has only 5")
    hostile("first_dim_negative", tt(F, 2), [v, ("p0", i64(-3)), ("p1", i64([0] * 5))],
            "Dimension -3 must be >= 0")
    survives("first_dim_huge_empty", tt(F, 2), [("v", np.zeros([0], np.int32)),
                                                ("p0", i64(1 << 60)), ("p1", i64([]))])
    hostile("shape_huge", tt(S, 1, True), [v, ("p0", i64([0, 2, 5])),
                                           ("shape", i64([1 << 40, 1 << 40]))],
            "would have more than 2**63 - 1 elements")
    hostile("shape_rank", tt(S, 1, True), [v, ("p0", i64([0, 2, 5])), ("shape", i64([2, 3, 4]))],
            "rt_input.rank = 2 but shape.rank = 3")
    hostile("shape_negative", tt(S, 1, True), [v, ("p0", i64([0, 2, 5])), ("shape", i64([-2, 3]))],
            "Dimension -2 must be >= -1")

    def rng(dt=I64):
        def build():
            sp, _ = R.RaggedRange(starts=P(dt, name="a"), limits=P(dt, name="b"),
                                  deltas=P(dt, name="d"))
            tf1.identity(sp, name="out")
        return build

    abd = lambda a, b, d, dt=np.int64: [("a", np.array(a, dt)), ("b", np.array(b, dt)),  # noqa
                                        ("d", np.array(d, dt))]
    hostile("range_zero_delta", rng(), abd([0, 1], [5, 5], [1, 0]), "Requires delta != 0")
    hostile("range_shapes", rng(), abd([0, 1], [5, 5, 5], 1),
            "starts, limits, and deltas must have the same shape")
    hostile("range_rank2", rng(), abd([[0]], 5, 1), "starts must be a scalar or vector")
    hostile("range_overflow", rng(), abd([-(1 << 62), 0], [1 << 62, 1 << 62], [1, 1]),
            "The total range size overflowed")
    def nan_range():
        sp, _ = R.RaggedRange(starts=tf1.constant(0.0), limits=tf1.constant(float("nan")),
                              deltas=tf1.constant(1.0))
        tf1.identity(sp, name="out")

    hostile("range_float_nan", nan_range, [], "The total range size overflowed")

    def ts(n):
        def build():
            idx, _, _ = R.RaggedTensorToSparse(
                rt_nested_splits=[P(I64, name=f"s{i}") for i in range(n)],
                rt_dense_values=P(tf.int32, name="v"))
            tf1.identity(idx, name="out")
        return build

    hostile("to_sparse_not_zero", ts(1), [v, ("s0", i64([1, 2, 5]))],
            "First value of ragged splits must be 0 (rt_nested_splits[0])")
    hostile("to_sparse_decreasing", ts(1), [v, ("s0", i64([0, 3, 2, 5]))],
            "Ragged splits must be sorted in ascending order (rt_nested_splits[0]")
    hostile("to_sparse_past_values", ts(1), [v, ("s0", i64([0, 2, 7]))],
            "Final value of ragged splits must match the length the corresponding ragged values")
    hostile("to_sparse_inner_mismatch", ts(2), [v, ("s0", i64([0, 1, 9])), ("s1", i64([0, 5]))],
            "rt_nested_splits[0] ends at 9, not 1")

    def gt(n):
        def build():
            sp, _ = R.RaggedGather(
                params_nested_splits=[P(I64, name=f"s{i}") for i in range(n)],
                params_dense_values=P(tf.int32, name="v"), indices=P(I64, name="i"),
                OUTPUT_RAGGED_RANK=n)
            tf1.identity(sp[-1], name="out")
        return build

    hostile("gather_index_out_of_range", gt(1), [v, ("s0", i64([0, 2, 5])), ("i", i64([1, 2]))],
            "indices[1] = 2 is not in [0, 2)")
    hostile("gather_index_negative", gt(1), [v, ("s0", i64([0, 2, 5])), ("i", i64([-1]))],
            "indices[0] = -1 is not in [0, 2)")
    hostile("gather_splits_decreasing", gt(1), [v, ("s0", i64([0, 4, 2, 5])), ("i", i64([1]))],
            "Ragged splits must be sorted in ascending order")
    hostile("gather_splits_past_values", gt(1), [v, ("s0", i64([0, 2, 9])), ("i", i64([1]))],
            "Final value of ragged splits must match")

    def fe():
        outs = R.RaggedFillEmptyRows(value_rowids=P(I64, name="i"), values=P(tf.int32, name="v"),
                                     nrows=P(I64, name="n"), default_value=tf1.constant(0))
        tf1.identity(outs[1], name="out")

    def feg():
        outs = R.RaggedFillEmptyRowsGrad(reverse_index_map=P(I64, name="m"),
                                         grad_values=P(tf.float32, name="g"))
        tf1.identity(outs[0], name="out")

    hostile("fill_rowid_out_of_range", fe, [v, ("i", i64([0, 1, 1, 2, 3])), ("n", i64(3))],
            "value_rowids[4] = 3 is not in [0, 3)")
    hostile("fill_rowids_unsorted", fe, [v, ("i", i64([0, 2, 1, 2, 2])), ("n", i64(3))],
            "value_rowids must be sorted")
    hostile("fill_length_mismatch", fe, [v, ("i", i64([0, 1])), ("n", i64(3))],
            "value_rowids and values must be vectors of one length")
    hostile("fill_grad_map_out_of_range", feg, [("m", i64([0, 7])),
                                                ("g", np.ones([3], np.float32))],
            "reverse_index_map[1] = 7 is not in [0, 3)")

    def bc(idx=tf.int32):
        def build():
            tf1.identity(R.RaggedBincount(
                splits=P(I64, name="s"), values=P(idx, name="v"), size=P(idx, name="n"),
                weights=P(tf.float32, name="w"), binary_output=False), name="out")
        return build

    feeds = lambda s, w=(), n=4, vals=(1, 2, 3, 4, 5): [  # noqa: E731
        ("s", i64(s)), ("v", np.array(vals, np.int32)), ("n", np.array(n, np.int32)),
        ("w", np.array(w, np.float32))]
    hostile("bincount_splits_decreasing", bc(), feeds([0, 3, 2, 5]), "Splits must not decrease")
    hostile("bincount_splits_not_zero", bc(), feeds([1, 2, 5]), "Splits must start with 0")
    hostile("bincount_splits_past_values", bc(), feeds([0, 2, 7]),
            "Splits must end with the number of values, got 7 instead of 5")
    hostile("bincount_splits_empty", bc(), feeds([]), "Splits must be non-empty")
    hostile("bincount_negative_value", bc(), feeds([0, 5], vals=(1, -2, 3, 4, 5)),
            "Input must be non-negative")
    hostile("bincount_weights_shape", bc(), feeds([0, 5], w=(1, 2, 3)),
            "weights must be the same shape as values")
    hostile("bincount_negative_size", bc(), feeds([0, 5], n=-1), "size (-1) must be non-negative")
    hostile("bincount_huge_size", bc(tf.int64),
            [("s", i64([0, 2, 3, 5])), ("v", i64([1, 2, 3, 4, 5])), ("n", i64(1 << 62)),
             ("w", np.array([], np.float32))], "has too many elements")


def with_tables(fn, frozen, tables):
    """The frozen graph of `fn` (imported under "m/") with each captured lookup
    table's placeholder replaced by a HashTableV2 holding its contents:
    convert_variables_to_constants_v2 freezes variables but not tables.
    Returns (graph_def, init op name)."""
    contents = {id(t.resource_handle): [x.numpy() for x in t.export()] + [
        t.default_value.numpy()] for t in tables}
    g = tf1.Graph()
    input_map = {}
    with g.as_default():
        for ext, internal in fn.graph.captures:
            if ext.dtype != tf.resource or id(ext) not in contents:
                continue
            keys, values, default = contents[id(ext)]
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(keys, values), default)
            input_map[internal.name] = table.resource_handle
        tf1.import_graph_def(frozen.graph.as_graph_def(), input_map=input_map, name="m")
        init = tf1.tables_initializer(name="init_tables")
    return g.as_graph_def(), init.name


def weft_string_feed(graph_def, case, fetches, x_name, strings, init):
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString())
    spec = {"dtype": "string", "shape": [len(strings)], "values": strings}
    cmd = [WEFT, "run", "--graph", path, "--format", "json", "--init", init,
           "--feed", f"{x_name}={json.dumps(spec)}"]
    for t in fetches:
        cmd += ["--fetch", t]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def text_vectorization_case(name, layers, strings, tol, ragged_op):
    model = tf.keras.Sequential([tf.keras.Input(shape=(), dtype=tf.string)] + layers)
    spec = tf.TensorSpec([None], tf.string)
    fn = tf.function(lambda v: model(v, training=False)).get_concrete_function(spec)
    frozen = convert_variables_to_constants_v2(fn, lower_control_flow=True)
    tables = [layer._lookup_layer.lookup_table for layer in layers
              if isinstance(layer, tf.keras.layers.TextVectorization)]
    gd, init = with_tables(fn, frozen, tables)
    ops = {n.op for n in gd.node}
    check(f"text_vectorization/{name}/uses_{ragged_op}", ragged_op in ops, sorted(ops))
    x_name = "m/" + frozen.inputs[0].name.split(":")[0]
    y_name = "m/" + frozen.outputs[0].name
    want = model(tf.constant(strings), training=False).numpy()
    proc = weft_string_feed(gd, f"text_{name}", [y_name], x_name, strings, init)
    compare_fetches(f"text_vectorization/{name}", proc, [y_name], [want], tol, tol)


def text_vectorization_cases():
    corpus = ["The quick brown fox", "jumps over the lazy dog", "the dog barks",
              "A fox! A dog?", "quick quick slow"]
    inputs = ["the QUICK fox barks", "", "an unknown word", "dog dog dog the fox over lazy x y z"]
    tf.random.set_seed(3)
    tv = tf.keras.layers.TextVectorization(max_tokens=20, output_mode="int",
                                           output_sequence_length=6)
    tv.adapt(corpus)
    text_vectorization_case("int_seq6_embedding",
                            [tv, tf.keras.layers.Embedding(20, 4)], inputs, 1e-6,
                            "RaggedTensorToTensor")
    tv2 = tf.keras.layers.TextVectorization(max_tokens=20, output_mode="int",
                                            output_sequence_length=6)
    tv2.adapt(corpus)
    text_vectorization_case("int_seq6", [tv2], inputs, 0, "RaggedTensorToTensor")
    for mode in ("multi_hot", "count", "tf_idf"):
        layer = tf.keras.layers.TextVectorization(max_tokens=12, output_mode=mode)
        layer.adapt(corpus)
        text_vectorization_case(mode, [layer], inputs, 1e-6, "RaggedBincount")
    # Bigrams (and trigrams) of the tokens: StringNGrams before the lookup.
    for name, ngrams, mode, length in (("ngrams2_int_seq8", 2, "int", 8),
                                       ("ngrams2_multi_hot", 2, "multi_hot", None),
                                       ("ngrams123_count", (1, 2, 3), "count", None)):
        layer = tf.keras.layers.TextVectorization(max_tokens=30, output_mode=mode, ngrams=ngrams,
                                                  output_sequence_length=length)
        layer.adapt(corpus)
        text_vectorization_case(name, [layer], inputs, 0, "StringNGrams")


def main():
    for case, build in to_tensor_cases().items():
        g = tf1.Graph()
        with g.as_default():
            build()
        compare_tf1_graph(WEFT, WORK, case, g, ["out"], rtol=0, atol=0)
    for case, args in bincount_cases():
        run_bincount(case, *args)
    for case, build, fetches in range_and_sparse_cases():
        g = tf1.Graph()
        with g.as_default():
            build()
        compare_tf1_graph(WEFT, WORK, case, g, fetches, rtol=0, atol=0)
    hostile_cases()
    text_vectorization_cases()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
