"""Conformance: StringNGrams and the sparse-output counts against TensorFlow
2.21, run by `weft run`.

StringNGrams (raw, and through tf.strings.ngrams) over several widths,
pads, separators and preserve_short_sequences, with empty rows, no tokens
and no splits, int32 and int64 splits; Dense-, Sparse- and
RaggedCountSparseOutput (raw, every T and output_type TensorFlow's OpDef
allows, and through tf.sparse.bincount over dense, sparse and ragged
inputs) with weights, binary_output, minlength and maxlength. Compared
bit for bit. Hostile inputs (splits not starting at 0, decreasing or past
the data, bad widths, huge pads, sparse indices outside dense_shape,
negative values, mismatched weights) must make `weft run` exit non-zero
with an INVALID_ARGUMENT naming the field. Keras TextVectorization with
ngrams runs in ragged_ops_test.py beside the other TextVectorization cases.

usage: ngram_count_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import itertools
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check_refused, compare_tf1_graph, run_built  # noqa: E402
from tf_compare import check, decode, summary_exit_code, weft_fetches  # noqa: E402

np, tf, WEFT, WORK = start_conformance("ngram_count")
tf1 = tf.compat.v1
R = tf.raw_ops
I32, I64 = tf.int32, tf.int64

TOKENS = ["the", "quick", "", "brown", "fox", "jumps", "över", "a", "b", "c"]
SPLITS = [0, 3, 3, 4, 9, 10]  # rows of 3, 0, 1, 5 and 1 tokens


def ngrams(data, splits, widths, sep=" ", left="<s>", right="</s>", pad=-1, short=False):
    return R.StringNGrams(data=data, data_splits=splits, separator=sep, ngram_widths=widths,
                          left_pad=left, right_pad=right, pad_width=pad,
                          preserve_short_sequences=short)


def fetch_all(outputs):
    """Names every tensor of `outputs` (a list of tuples) out<k>_<j>."""
    names = []
    for k, outs in enumerate(outputs):
        for j, t in enumerate(outs):
            names.append(tf1.identity(t, name=f"out{k}_{j}").op.name)
    return names


def ngram_cases():
    """(case, builder returning fetch names)."""
    def grid(tsplits):
        def build():
            data, splits = tf1.constant(TOKENS), tf1.constant(SPLITS, tsplits)
            outs = []
            for widths, pad, short in itertools.product(
                    ([1], [2], [3], [1, 2, 3], [2, 6], [7]), (-1, 0, 1, 2), (False, True)):
                outs.append(ngrams(data, splits, widths, pad=pad, short=short))
            return fetch_all(outs)
        return build

    def variants():
        data, splits = tf1.constant(TOKENS), tf1.constant(SPLITS, I64)
        outs = [ngrams(data, splits, [2, 3], sep="", left="", right=""),
                ngrams(data, splits, [3], sep="--", left="L", right="", pad=2),
                ngrams(data, splits, [4], sep="+", left="", right="R", pad=3, short=True),
                ngrams(data, splits, [], pad=1, short=True),
                ngrams(data, splits, [], pad=0, short=True),
                ngrams(data, splits, [], pad=-1, short=False),
                ngrams(data, splits, [2, 2, 1], pad=0)]
        return fetch_all(outs)

    def empties():
        empty = tf1.constant([], tf.string)
        outs = [ngrams(empty, tf1.constant([0, 0, 0], I64), [2], pad=1),
                ngrams(empty, tf1.constant([0], I32), [1, 2], short=True),
                ngrams(tf1.constant(["x", "y"]), tf1.constant([], I64), [2]),
                ngrams(tf1.constant(["x", "y"]), tf1.constant([0, 0, 2, 2], I32), [3],
                       pad=0, short=True)]
        return fetch_all(outs)

    def api():
        rt = tf.ragged.constant([["a", "b", "c", "d"], [], ["e"], ["f", "g"]])
        outs = []
        for width, pads, pw, short in (((2, 3), ("L", "R"), 1, False), (2, None, None, True),
                                       (3, ("<", ">"), None, False), ((1, 4), "#", 2, True)):
            r = tf.strings.ngrams(rt, width, separator="|", pad_values=pads,
                                  padding_width=pw, preserve_short_sequences=short)
            outs.append((r.flat_values, r.row_splits))
        dense = tf.strings.ngrams(tf1.constant([["a", "b", "c"], ["d", "e", "f"]]), 2)
        outs.append((dense,))
        return fetch_all(outs)

    return [("ngrams_grid_int64", grid(I64)), ("ngrams_grid_int32", grid(I32)),
            ("ngrams_variants", variants), ("ngrams_empty", empties),
            ("ngrams_tf_strings_api", api)]


def count_cases():
    """(case, builder returning fetch names) for the raw count ops, every T
    and output_type, and tf.sparse.bincount."""
    def raw(t, w):
        def build():
            wv = lambda n: tf1.constant(  # noqa: E731
                ([0.5, 1.25, -2.0, 3.0, 0.1, 7.0, 0.2, 1e-3][:n] if w.is_floating
                 else [1, 2, 3, 4, 5, 6, 7, 8][:n]), w)
            none = tf1.constant([], w)
            dense = tf1.constant([[3, 1, 3, 0], [5, 5, 2, 9]], t)
            vec = tf1.constant([4, 0, 4, 4, 2, 11], t)
            outs = []
            for binary, weighted, minl, maxl in itertools.product(
                    (False, True), (False, True), (-1, 12), (-1, 0, 4)):
                kw = dict(binary_output=binary, minlength=minl, maxlength=maxl)
                outs.append(R.DenseCountSparseOutput(
                    values=dense, weights=tf1.reshape(wv(8), [2, 4]) if weighted else none, **kw))
                outs.append(R.DenseCountSparseOutput(values=vec, weights=wv(6) if weighted
                                                     else none, **kw))
                outs.append(R.SparseCountSparseOutput(
                    indices=tf1.constant([[2, 1], [0, 3], [2, 0], [0, 0], [2, 2]], I64),
                    values=tf1.constant([7, 1, 7, 3, 0], t),
                    dense_shape=tf1.constant([4, 5], I64), weights=wv(5) if weighted else none,
                    **kw))
                outs.append(R.SparseCountSparseOutput(
                    indices=tf1.constant([[4], [1], [2]], I64), values=tf1.constant([6, 6, 2], t),
                    dense_shape=tf1.constant([5], I64), weights=wv(3) if weighted else none,
                    **kw))
                outs.append(R.RaggedCountSparseOutput(
                    splits=tf1.constant([0, 3, 3, 7], I64),
                    values=tf1.constant([2, 0, 2, 8, 1, 1, 5], t),
                    weights=wv(7) if weighted else none, **kw))
            return fetch_all(outs)
        return build

    def bincount():
        dense = tf1.constant([[1, 2, 2, 0], [4, 4, 4, 1]], I64)
        wd = tf1.constant([[0.5, 1.5, 2.5, 1.0], [1.0, 2.0, 4.0, 8.0]])
        rt = tf.ragged.constant([[3, 1, 3], [], [0, 7]], dtype=I32)
        rw = tf.ragged.constant([[1.0, 2.0, 3.0], [], [0.25, 0.5]])
        sp = tf.sparse.SparseTensor([[0, 1], [1, 0], [1, 3], [3, 2]], tf1.constant([5, 2, 2, 0]),
                                    [4, 4])
        sw = tf.sparse.SparseTensor(sp.indices, tf1.constant([1.0, 2.0, 3.0, 4.0]), sp.dense_shape)
        outs = []
        for x, w in ((dense, None), (dense, wd), (rt, None), (rt, rw), (sp, None), (sp, sw)):
            for kw in (dict(axis=-1), dict(axis=-1, binary_output=True), dict(),
                       dict(axis=-1, minlength=9), dict(axis=-1, maxlength=3)):
                kw = dict(kw)
                if kw.get("binary_output"):
                    w = None
                r = tf.sparse.bincount(x, weights=w, **kw)
                outs.append((r.indices, r.values, r.dense_shape))
        return fetch_all(outs)

    cases = [(f"count_{t.name}_{w.name}", raw(t, w))
             for t in (I32, I64) for w in (I32, I64, tf.float32, tf.float64)]
    return cases + [("sparse_bincount_api", bincount)]


def hostile(case, build, feeds, expect):
    """A graph fed through placeholders to `weft run`: it must exit
    non-zero with INVALID_ARGUMENT and `expect` in its message."""
    check_refused(f"hostile/{case}", run_built(WEFT, WORK, case, build, ["out"], feeds), expect)


def hostile_cases():
    P = tf1.placeholder
    i64 = lambda x: np.array(x, np.int64)  # noqa: E731
    i32 = lambda x: np.array(x, np.int32)  # noqa: E731

    def ng(widths=(2,), pad=-1, short=False, tsplits=I64):
        def build():
            out, _ = ngrams(tf1.constant(["a", "b", "c", "d", "e"]), P(tsplits, name="s"),
                            list(widths), pad=pad, short=short)
            tf1.identity(out, name="out")
        return build

    ok5 = [("s", i64([0, 2, 5]))]
    hostile("ngrams_splits_not_zero", ng(), [("s", i64([1, 2, 5]))],
            "First split value must be 0, got 1 (data_splits)")
    hostile("ngrams_splits_decreasing", ng(), [("s", i64([0, 3, 2, 5]))],
            "Invalid split value 2, must be in [3, 5] (data_splits[2])")
    hostile("ngrams_splits_past_data", ng(), [("s", i64([0, 2, 7]))],
            "Invalid split value 7, must be in [2, 5]")
    hostile("ngrams_splits_huge", ng(), [("s", i64([0, 1 << 62]))], "Invalid split value")
    hostile("ngrams_splits_short", ng(), [("s", i64([0, 2, 4]))],
            "Last split value must be data size. Expected 5, got 4")
    hostile("ngrams_splits_int32_negative", ng(tsplits=I32), [("s", i32([0, -3, 5]))],
            "Invalid split value -3, must be in [0, 5]")
    hostile("ngrams_width_negative", ng(widths=(2, -1)), ok5,
            "ngram_widths must contain positive values")
    hostile("ngrams_width_zero", ng(widths=(0,)), ok5, "ngram_widths must contain positive values")
    hostile("ngrams_pad_width_huge", ng(pad=1 << 40), ok5,
            "Attr pad_width has value 1099511627776 out of range for an int32")
    hostile("ngrams_width_huge", ng(widths=(1 << 40,)), ok5,
            "Attr ngram_widths has value 1099511627776 out of range for an int32")
    hostile("ngrams_output_huge", ng(widths=(1 << 30,)), ok5,
            "StringNGrams would make more than 2147483647 joined pieces")
    hostile("ngrams_short_without_widths", ng(widths=(), short=True), ok5,
            "Pad width should be >= 0 when preserve_short_sequences is True")

    def dc(w=tf.float32):
        def build():
            out = R.DenseCountSparseOutput(values=P(I32, name="v"), weights=P(w, name="w"),
                                           binary_output=False)
            tf1.identity(out[0], name="out")
        return build

    f32 = lambda x: np.array(x, np.float32)  # noqa: E731
    hostile("dense_count_negative", dc(), [("v", i32([3, -1])), ("w", f32([]))],
            "Input values must all be non-negative, got values[1] = -1")
    hostile("dense_count_rank3", dc(), [("v", i32([[[1]]])), ("w", f32([]))],
            "Input must be a 1 or 2-dimensional tensor. Got: [1,1,1]")
    hostile("dense_count_no_rows", dc(), [("v", np.zeros([0, 3], np.int32)), ("w", f32([]))],
            "Invalid input: Shapes dimension cannot be 0.")
    hostile("dense_count_weights_shape", dc(), [("v", i32([1, 2, 3])), ("w", f32([1, 2]))],
            "Weights and data must have the same shape. Weight shape: [2]; data shape: [3]")

    def sc():
        out = R.SparseCountSparseOutput(indices=P(I64, name="i"), values=P(I32, name="v"),
                                        dense_shape=P(I64, name="d"),
                                        weights=P(tf.float32, name="w"), binary_output=False)
        tf1.identity(out[0], name="out")

    def sfeeds(i, v, d, w=()):
        return [("i", i64(i)), ("v", i32(v)), ("d", i64(d)), ("w", f32(w))]

    hostile("sparse_count_index_past_shape", sc, sfeeds([[0, 0], [1, 3]], [1, 2], [2, 3]),
            "Invalid index value at 1: dimension 1 has value 3 which is not in [0, 3)")
    hostile("sparse_count_index_negative", sc, sfeeds([[-1, 0]], [1], [2, 3]),
            "Invalid index value at 0: dimension 0 has value -1")
    hostile("sparse_count_values_count", sc, sfeeds([[0, 0]], [1, 2], [2, 3]),
            "Number of values must match first dimension of indices")
    hostile("sparse_count_rank_mismatch", sc, sfeeds([[0, 0]], [1], [2, 3, 4]),
            "Number of dimensions must match second dimension of indices")
    hostile("sparse_count_no_shape", sc, [("i", np.zeros([0, 0], np.int64)), ("v", i32([])),
                                          ("d", i64([])), ("w", f32([]))],
            "The shape argument requires at least one element")
    hostile("sparse_count_huge_batch", sc, sfeeds([[0, 0]], [1], [1 << 40, 3]),
            "Cannot allocate 1099511627776 batches, is the dense shape too wide?")
    hostile("sparse_count_no_batch", sc, sfeeds(np.zeros([0, 2]), [], [0, 3]),
            "Cannot allocate 0 batches")
    hostile("sparse_count_negative", sc, sfeeds([[0, 0]], [-4], [2, 3]),
            "Input values must all be non-negative")
    hostile("sparse_count_weights_shape", sc, sfeeds([[0, 0]], [1], [2, 3], [1, 2]),
            "Weights and values must have the same shape")

    def rc():
        out = R.RaggedCountSparseOutput(splits=P(I64, name="s"), values=P(I32, name="v"),
                                        weights=P(tf.float32, name="w"), binary_output=False)
        tf1.identity(out[0], name="out")

    def rfeeds(s, v=(1, 2, 3, 4, 5), w=()):
        return [("s", i64(s)), ("v", i32(v)), ("w", f32(w))]

    hostile("ragged_count_splits_not_zero", rc, rfeeds([1, 2, 5]),
            "Splits must start with 0, not with 1")
    hostile("ragged_count_splits_decreasing", rc, rfeeds([0, 4, 2, 5]),
            "Splits must not decrease, got 4 then 2")
    hostile("ragged_count_splits_past_values", rc, rfeeds([0, 2, 9]),
            "Splits must end with the number of values, got 9 instead of 5")
    hostile("ragged_count_splits_too_few", rc, rfeeds([0]),
            "Must provide at least 2 elements for the splits argument")
    hostile("ragged_count_splits_empty", rc, rfeeds([]),
            "Must provide at least 2 elements for the splits argument")
    hostile("ragged_count_negative", rc, rfeeds([0, 5], v=(1, 2, -3, 4, 5)),
            "Input values must all be non-negative, got values[2] = -3")
    hostile("ragged_count_weights_shape", rc, rfeeds([0, 5], w=(1, 2)),
            "Weights and values must have the same shape")


def huge_empty_cases():
    """Dense values of shape [2**40, 0]: nothing to count, so a quick
    result (dense_shape [2**40, 1]), never 2**40 rows of work."""
    def build():
        out = R.DenseCountSparseOutput(values=tf1.placeholder(I32, name="v"),
                                       weights=tf1.constant([], tf.float32), binary_output=False)
        tf1.identity(out[2], name="out")

    proc = run_built(WEFT, WORK, "dense_count_huge_empty", build, ["out"],
                     [("v", np.zeros([1 << 40, 0], np.int32))])
    got = weft_fetches("huge/dense_count_huge_empty", proc)
    if got is not None:
        have = decode(got["out"]).tolist()
        check("huge/dense_count_huge_empty", have == [1 << 40, 1], have)


def main():
    for case, build in ngram_cases() + count_cases():
        g = tf1.Graph()
        with g.as_default():
            fetches = build()
        compare_tf1_graph(WEFT, WORK, case, g, fetches, rtol=0, atol=0)
    hostile_cases()
    huge_empty_cases()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
