"""Conformance: the set operations and the pad-fused convolutions, run by
`weft run` against TensorFlow 2.21 on the same GraphDefs.

Sets (exactly): DenseToDenseSetOperation, DenseToSparseSetOperation and
SparseToSparseSetOperation for every CPU dtype (int8/16/32/64, uint8/16,
string) and every set_operation (a-b, b-a, intersection, union), with
rank-2 and rank-3 sets, duplicates, extreme values, rows missing from a
sparse set, empty sets; SetSize; validate_indices off with unsorted and
repeated indices.

Convolutions (to a few ulps of the summed magnitudes; half and bfloat16
to a couple of their ulps, TensorFlow accumulating in half):
FusedPadConv2D for half, bfloat16, float and double and
FusedResizeAndPadConv2D for half, float and double: REFLECT and SYMMETRIC,
SAME and VALID, strides above the window (TensorFlow's window offset
rule), up- and downsizing with and without align_corners, inf in the
input. TensorFlow's fused kernel gets every image after the first of a
batch wrong (its row cache is not refilled), so batches of two are
compared on their first image only.

usage: set_fused_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("set_fused")

tf1 = tf.compat.v1
tf1.disable_eager_execution()

rng = np.random.RandomState(7)

SET_OPS = ["a-b", "b-a", "intersection", "union"]
INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16]
WORDS = np.array(["", "a", "B", "ab", "abc", "b", "Zz", "a b", "~", "0"], dtype=object)


def values(dtype, shape):
    """Small values (so rows share some) plus the type's extremes."""
    if dtype is object:
        return WORDS[rng.randint(0, len(WORDS), size=shape)]
    info = np.iinfo(dtype)
    v = rng.randint(0, 6, size=shape).astype(np.int64)
    if np.issubdtype(dtype, np.signedinteger):
        v -= 2
    flat = v.reshape(-1)
    if flat.size >= 4:
        flat[0], flat[-1] = info.max, info.min
    return v.astype(dtype)


def sparse(dtype, dense_shape, keep):
    """A SparseTensor of `dense_shape` holding entries where `keep` is true,
    in row-major order: (indices, values, shape) constants."""
    ix = np.argwhere(keep).astype(np.int64).reshape(-1, len(dense_shape))
    return (tf1.constant(ix), tf1.constant(values(dtype, (len(ix),)),
                                           dtype=tf.string if dtype is object else None),
            tf1.constant(np.array(dense_shape, np.int64)))


def const(v, dtype):
    return tf1.constant(v, dtype=tf.string) if dtype is object else tf1.constant(v)


def set_graph():
    g = tf1.Graph()
    fetches = []
    with g.as_default():
        def keep(name, outs):
            for i, o in enumerate(outs):
                fetches.append(tf1.identity(o, name=f"{name}_{i}").op.name)

        for dtype in INT_TYPES + [object]:
            tname = "string" if dtype is object else np.dtype(dtype).name
            a3 = const(values(dtype, (2, 3, 4)), dtype)
            b3 = const(values(dtype, (2, 3, 5)), dtype)
            a2 = const(values(dtype, (4, 5)), dtype)
            s2 = sparse(dtype, (4, 6), rng.rand(4, 6) < 0.5)
            s1 = sparse(dtype, (4, 3), np.array([[1, 1, 0], [0, 0, 0],
                                                 [1, 0, 1], [0, 1, 1]], bool))
            for op in SET_OPS:
                tag = f"{tname}_{op.replace('-', '_')}"
                keep(f"dd3_{tag}", tf.raw_ops.DenseToDenseSetOperation(
                    set1=a3, set2=b3, set_operation=op))
                keep(f"ds_{tag}", tf.raw_ops.DenseToSparseSetOperation(
                    set1=a2, set2_indices=s2[0], set2_values=s2[1],
                    set2_shape=s2[2], set_operation=op))
                keep(f"ss_{tag}", tf.raw_ops.SparseToSparseSetOperation(
                    set1_indices=s1[0], set1_values=s1[1], set1_shape=s1[2],
                    set2_indices=s2[0], set2_values=s2[1], set2_shape=s2[2],
                    set_operation=op))
            keep(f"size_{tname}", [tf.raw_ops.SetSize(
                set_indices=s2[0], set_values=s2[1], set_shape=s2[2])])
            # Empty sets: no columns, and a SparseTensor with no entries.
            e1 = const(values(dtype, (3, 0)), dtype)
            keep(f"empty_dd_{tname}", tf.raw_ops.DenseToDenseSetOperation(
                set1=e1, set2=const(values(dtype, (3, 2)), dtype),
                set_operation="union"))
            none = sparse(dtype, (3, 4), np.zeros((3, 4), bool))
            keep(f"empty_ds_{tname}", tf.raw_ops.DenseToSparseSetOperation(
                set1=e1, set2_indices=none[0], set2_values=none[1],
                set2_shape=none[2], set_operation="intersection"))
            keep(f"empty_size_{tname}", [tf.raw_ops.SetSize(
                set_indices=none[0], set_values=none[1], set_shape=none[2])])

        # validate_indices off: repeated and unsorted indices are runs.
        ix = tf1.constant(np.array([[0, 1], [0, 1], [2, 0], [1, 3], [1, 0],
                                    [2, 2]], np.int64))
        vals = tf1.constant(np.array([5, 5, 7, 1, 9, 7], np.int32))
        shape = tf1.constant(np.array([3, 4], np.int64))
        keep("unsorted_size", [tf.raw_ops.SetSize(
            set_indices=ix, set_values=vals, set_shape=shape,
            validate_indices=False)])
        ix2 = tf1.constant(np.array([[1, 0], [0, 0], [2, 1]], np.int64))
        vals2 = tf1.constant(np.array([9, 5, 3], np.int32))
        for op in SET_OPS:
            keep(f"unsorted_ss_{op.replace('-', '_')}",
                 tf.raw_ops.SparseToSparseSetOperation(
                     set1_indices=ix, set1_values=vals, set1_shape=shape,
                     set2_indices=ix2, set2_values=vals2, set2_shape=shape,
                     set_operation=op, validate_indices=False))
            keep(f"unsorted_ds_{op.replace('-', '_')}",
                 tf.raw_ops.DenseToSparseSetOperation(
                     set1=tf1.constant(np.array([[5, 1], [9, 9], [7, 0]], np.int32)),
                     set2_indices=ix, set2_values=vals, set2_shape=shape,
                     set_operation=op, validate_indices=False))
    return g, fetches


g, fetches = set_graph()
compare_tf1_graph(WEFT, WORK, "sets", g, fetches, (), 1, 0.0, 0.0)


# ---- FusedPadConv2D / FusedResizeAndPadConv2D -------------------------------

def conv_cases():
    """(name, resize size or None, image shape, filter shape, paddings,
    strides, padding, align_corners)."""
    cases = []
    pads = [[0, 0], [1, 2], [2, 1], [0, 0]]
    for mode in ["REFLECT", "SYMMETRIC"]:
        for padding in ["VALID", "SAME"]:
            for strides in [[1, 1, 1, 1], [1, 2, 3, 1]]:
                tag = f"{mode}_{padding}_{strides[1]}{strides[2]}"
                cases.append((tag, mode, None, (2, 5, 6, 3), (3, 3, 3, 4),
                              pads, strides, padding, False))
                cases.append((f"rs_{tag}", mode, [7, 9], (2, 5, 6, 3),
                              (3, 2, 3, 2), pads, strides, padding, False))
        # Strides above the window: TensorFlow's windows start inside.
        cases.append((f"{mode}_wide_stride_valid", mode, None, (1, 16, 9, 2),
                      (1, 1, 2, 3), [[0, 0], [0, 0], [1, 0], [0, 0]],
                      [1, 8, 4, 1], "VALID", False))
        cases.append((f"{mode}_wide_stride_same", mode, None, (1, 6, 14, 2),
                      (1, 2, 2, 3), [[0, 0], [0, 0], [0, 0], [0, 0]],
                      [1, 3, 6, 1], "SAME", False))
        for align in [False, True]:
            cases.append((f"rs_down_{mode}_{align}", mode, [3, 4], (1, 7, 9, 2),
                          (2, 2, 2, 3), [[0, 0], [2, 1], [1, 2], [0, 0]],
                          [1, 1, 1, 1], "SAME", align))
            cases.append((f"rs_up_{mode}_{align}", mode, [11, 6], (1, 4, 3, 2),
                          (3, 3, 2, 2), [[0, 0], [1, 1], [0, 2], [0, 0]],
                          [1, 2, 1, 1], "VALID", align))
    return cases


def conv_graph(dtype, resize_types):
    g = tf1.Graph()
    fetches = []
    with g.as_default():
        for (tag, mode, size, ishape, fshape, pads, strides, padding,
             align) in conv_cases():
            if size is not None and dtype not in resize_types:
                continue
            x = rng.standard_normal(ishape).astype(np.float32)
            if tag.startswith("REFLECT_VALID_11"):
                x[0, 2, 3, 1] = np.inf  # spreads as inf (or nan) as in TF
            w = rng.standard_normal(fshape).astype(np.float32)
            x = tf1.constant(x.astype(dtype) if dtype != tf.bfloat16 else x, dtype=dtype)
            w = tf1.constant(w.astype(dtype) if dtype != tf.bfloat16 else w, dtype=dtype)
            p = tf1.constant(np.array(pads, np.int32))
            if size is None:
                y = tf.raw_ops.FusedPadConv2D(input=x, paddings=p, filter=w, mode=mode,
                                              strides=strides, padding=padding)
            else:
                y = tf.raw_ops.FusedResizeAndPadConv2D(
                    input=x, size=tf1.constant(np.array(size, np.int32)), paddings=p,
                    filter=w, mode=mode, strides=strides, padding=padding,
                    resize_align_corners=align)
            # The first image only (see the module docstring); float32 out so
            # bfloat16 compares too.
            y = tf.cast(y[:1], tf.float32)
            fetches.append(tf1.identity(y, name="out_" + tag).op.name)
    return g, fetches


for dtype, rtol, atol in [(np.float32, 2e-6, 2e-5), (np.float64, 1e-13, 1e-12),
                          (np.float16, 4e-3, 3e-2), (tf.bfloat16, 2e-2, 1.5e-1)]:
    name = tf.as_dtype(dtype).name
    g, fetches = conv_graph(dtype, (np.float32, np.float64, np.float16))
    compare_tf1_graph(WEFT, WORK, f"fused_conv_{name}", g, fetches, (), 1, rtol, atol)

sys.exit(summary_exit_code())
