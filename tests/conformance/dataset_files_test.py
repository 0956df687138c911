"""Conformance: tf.data pipelines that read files, as TensorFlow 1.x programs
build them, run by a TensorFlow 2.21 client against a `weft server` task
confined to a temporary --file-root, and compared element by element with
TensorFlow's own run of the same graph.

Files are written by TensorFlow (tf.io.TFRecordWriter: plain, GZIP, ZLIB)
and by hand (text lines with CRLF, empty lines and no final newline; fixed
length records with header and footer, plain and GZIP). Pipelines:
TFRecordDataset -> map(parse_single_example) -> batch; TFRecordDataset ->
batch -> map(parse_example); parse_example on a batch of records with
dense, sparse (VarLenFeature) and ragged features; TextLineDataset;
FixedLengthRecordDataset -> map(decode_raw, both byte orders);
MatchingFiles / list_files / MatchingFilesDataset. Errors: a
path outside the root (PERMISSION_DENIED on Weft), a corrupt record
(DATA_LOSS), a truncated file, a missing file (NOT_FOUND), a missing
required feature and a wrong feature type (INVALID_ARGUMENT); the error
class and its first clause must match TensorFlow's.

usage: dataset_files_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import gzip
import os
import struct
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("files")
import local_cluster  # noqa: E402
from dataset_ops_test import same  # noqa: E402

tf1 = tf.compat.v1
DATA = os.path.realpath(os.path.join(WORK, "data"))
OUTSIDE = os.path.realpath(os.path.join(WORK, "outside"))
OPTIONS = tf1.RunOptions(timeout_in_ms=60000)
MAX_ELEMENTS = 300


def path(name):
    return os.path.join(DATA, name)


def feature(values):
    if isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if isinstance(values[0], int):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def example(i):
    f = {
        "f": feature([i * 0.5, -1.25, float(i) ** 2]),
        "i": feature([i, -i * 1000000007]),
        "s": feature([f"row{i}".encode()]),
        "v": feature(list(range(i % 4)) or [99]),
        "w": feature([k + 0.5 for k in range(i % 3)] or [-2.0]),
    }
    if i % 3:
        f["opt"] = feature([i + 0.25])
    if i % 2:
        f["tags"] = feature([b"x" * k for k in range(i % 5)] or [b""])
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


RECORDS = [example(i) for i in range(11)]


def write_files():
    os.makedirs(DATA)
    os.makedirs(OUTSIDE)
    for name, kind in (("plain.tfrecord", ""), ("gzip.tfrecord", "GZIP"),
                       ("zlib.tfrecord", "ZLIB")):
        with tf.io.TFRecordWriter(path(name), options=kind or None) as w:
            for r in RECORDS:
                w.write(r)
    with tf.io.TFRecordWriter(os.path.join(OUTSIDE, "x.tfrecord")) as w:
        w.write(b"secret")
    raw = open(path("plain.tfrecord"), "rb").read()
    bad = bytearray(raw)
    bad[len(RECORDS[0]) + 12 + 4 + 20] ^= 0x40  # in the second record's data
    open(path("corrupt.tfrecord"), "wb").write(bytes(bad))
    bad_len = bytearray(raw)
    bad_len[len(RECORDS[0]) + 16 + 2] ^= 0x01  # the second record's length
    open(path("badlength.tfrecord"), "wb").write(bytes(bad_len))
    open(path("truncated.tfrecord"), "wb").write(raw[: len(raw) - 7])
    text = b"first line\r\nsecond\n\n  spaced \t\nlast without newline"
    open(path("a.txt"), "wb").write(text)
    open(path("b.txt"), "wb").write(b"b1\nb2\n")
    open(path(".hidden.txt"), "wb").write(b"hidden\n")
    open(path("empty.txt"), "wb").write(b"")
    with gzip.open(path("c.txt.gz"), "wb") as g:
        g.write(b"gz one\ngz two\r\n" * 50)
    body = bytes(range(256)) * 2
    fixed = b"HEAD!" + body[: 6 * 13] + b"xy" + b"FT!"  # 13 records, a partial, footer
    open(path("fixed.bin"), "wb").write(fixed)
    open(path("fixed_whole.bin"), "wb").write(b"HEAD!" + body[: 6 * 13] + b"FT!")
    with gzip.open(path("fixed.bin.gz"), "wb") as g:
        g.write(b"HEAD!" + body[: 6 * 9] + b"FT!")


def first_line(message):
    """The error's own message, without the client's and runtime's framing
    (TensorFlow's "Graph execution error:", "Detected at node ...", node
    lines and " [[...]]" suffixes)."""
    for line in message.split("\n"):
        text = line.split(" [[")[0].strip()
        if (text and not text.startswith(("Graph execution error", "Detected at",
                                           "File ", "Node:", "[["))):
            return text
    return message


def outcome(where, build, once=False):
    """The elements build()'s fetch yields to the end, or 'ErrorClass: first
    clause' (and the elements before it) when reading fails."""
    g = tf1.Graph()
    with g.as_default():
        fetch, init = build()
        with tf1.Session(where, graph=g) as sess:
            got = []
            try:
                if init is not None:
                    sess.run(init, options=OPTIONS)
                for _ in range(MAX_ELEMENTS):
                    got.append(sess.run(fetch, options=OPTIONS))
                    if once:
                        return got
            except tf.errors.OutOfRangeError:
                return got
            except tf.errors.OpError as e:
                return got + [f"{type(e).__name__}: {first_line(e.message)}"]
    raise RuntimeError(f"more than {MAX_ELEMENTS} elements")


def compare(case, build, target, prefix_only=False, once=False, core_chars=70):
    tf_run = outcome("", build, once)
    try:
        weft_run = outcome(target, build, once)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        weft_run = f"{type(e).__name__}: {clip(str(e), 800, 200)}"
    ok = same(tf_run[:-1], weft_run[:-1]) if prefix_only else same(tf_run, weft_run)
    if prefix_only and ok:
        # Errors: the same class and message start (Weft may add context).
        # TensorFlow frames a map function's error ("... ParallelMapV2: ")
        # and adds its file layer's words after a read error ("' failed").
        t, w = str(tf_run[-1]), str(weft_run[-1])
        core = t.split(": ", 1)[-1].split("ParallelMapV2: ")[-1].split("' failed")[0]
        ok = w.startswith(t.split(":")[0]) and core[:core_chars] in w
    check(case, ok, f"weft: {clip(str(weft_run), 1500, 300)}\n tf: {clip(str(tf_run), 800, 300)}")


def one_shot(ds):
    return tf1.data.make_one_shot_iterator(ds).get_next(), None


FEATURES = {
    "f": tf.io.FixedLenFeature([3], tf.float32),
    "i": tf.io.FixedLenFeature([2], tf.int64),
    "s": tf.io.FixedLenFeature([], tf.string),
    "opt": tf.io.FixedLenFeature([], tf.float32, default_value=7.5),
    "opt2": tf.io.FixedLenFeature([2, 1], tf.int64, default_value=[[3], [4]]),
}


def tfrecord_parse_single(kind):
    def build():
        ds = tf.data.TFRecordDataset(path(f"{kind.lower() or 'plain'}.tfrecord"),
                                     compression_type=kind)
        ds = ds.map(lambda r: tf.io.parse_single_example(r, FEATURES)).batch(4)
        return one_shot(ds)
    return build


def tfrecord_batch_parse():
    ds = tf.data.TFRecordDataset([path("plain.tfrecord"), path("plain.tfrecord")])
    return one_shot(ds.take(14).batch(3).map(lambda s: tf.io.parse_example(s, FEATURES)))


def two_compressed_files():
    files = tf.constant([path("gzip.tfrecord"), path("gzip.tfrecord")])
    ds = tf.data.TFRecordDataset(files, compression_type="GZIP", buffer_size=100)
    return one_shot(ds)


def sparse(t):
    return (t.indices, t.values, t.dense_shape)


def parse_example_sparse_ragged():
    ds = tf.data.TFRecordDataset(path("plain.tfrecord")).batch(4)
    serialized = tf1.data.make_one_shot_iterator(ds).get_next()
    parsed = tf.io.parse_example(serialized, {
        "v": tf.io.VarLenFeature(tf.int64),
        "tags": tf.io.VarLenFeature(tf.string),
        "f": tf.io.FixedLenFeature([3], tf.float32),
        "r": tf.io.RaggedFeature(tf.float32, value_key="w", row_splits_dtype=tf.int32),
        "rs": tf.io.RaggedFeature(tf.string, value_key="s"),
    })
    fetch = {"v": sparse(parsed["v"]), "tags": sparse(parsed["tags"]), "f": parsed["f"],
             "r": (parsed["r"].values, parsed["r"].row_splits),
             "rs": (parsed["rs"].values, parsed["rs"].row_splits)}
    return fetch, None


SEQUENCES = {  # tf.io.FixedLenSequenceFeature: rows padded to the longest
    "v": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    "w": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True,
                                       default_value=-1.0),
    "tags": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True,
                                          default_value=b"pad"),
    "f": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=True),
}


def parse_example_sequences():
    ds = tf.data.TFRecordDataset(path("plain.tfrecord")).batch(4)
    return one_shot(ds.map(lambda s: tf.io.parse_example(s, SEQUENCES)))


def parse_single_sequences():
    ds = tf.data.TFRecordDataset(path("plain.tfrecord"))
    return one_shot(ds.map(lambda r: tf.io.parse_single_example(r, SEQUENCES))
                    .padded_batch(3))


def sequence_not_a_multiple(single):
    feature = {"v": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)}
    ds = tf.data.TFRecordDataset(path("plain.tfrecord"))
    if single:
        return one_shot(ds.map(lambda r: tf.io.parse_single_example(r, feature)))
    return one_shot(ds.batch(5).map(lambda s: tf.io.parse_example(s, feature)))


def parse_single_sparse():
    ds = tf.data.TFRecordDataset(path("plain.tfrecord"))
    r = tf1.data.make_one_shot_iterator(ds).get_next()
    parsed = tf.io.parse_single_example(r, {"v": tf.io.VarLenFeature(tf.int64),
                                            "s": tf.io.FixedLenFeature([1], tf.string)})
    return {"v": sparse(parsed["v"]), "s": parsed["s"]}, None


def text_lines():
    ds = tf.data.TextLineDataset([path("a.txt"), path("empty.txt"), path("b.txt")])
    return one_shot(ds)


def text_lines_gzip():
    return one_shot(tf.data.TextLineDataset(path("c.txt.gz"), compression_type="GZIP")
                    .batch(7))


def fixed_length(name):
    def build():
        ds = tf.data.FixedLengthRecordDataset(path(name), 6, header_bytes=5,
                                              footer_bytes=3)
        ds = ds.map(lambda r: (tf.io.decode_raw(r, tf.uint8),
                               tf.io.decode_raw(r, tf.int16, little_endian=False),
                               tf.io.decode_raw(r, tf.int16)))
        return one_shot(ds)
    return build


def fixed_length_gzip():
    ds = tf.data.FixedLengthRecordDataset(path("fixed.bin.gz"), 6, header_bytes=5,
                                          footer_bytes=3, compression_type="GZIP")
    return one_shot(ds.batch(4).map(lambda r: tf.io.decode_raw(r, tf.int16)))


def matching_files():
    return (tf.io.matching_files([path("*.txt"), path("?.txt*")]), None)


def list_files_flat_map():
    ds = tf.data.Dataset.from_tensor_slices(tf.io.matching_files(path("[ab].txt")))
    return one_shot(ds.flat_map(tf.data.TextLineDataset))


def matching_files_dataset():
    from tensorflow.python.data.experimental.ops import matching_files as mf
    return one_shot(mf.MatchingFilesDataset([path("*.tfrecord"), path("*.gz")]))


def error_case(files, parse=None, kind=None):
    def build():
        ds = tf.data.TFRecordDataset(files, compression_type=kind)
        if parse is not None:
            ds = ds.map(lambda r: tf.io.parse_single_example(r, parse))
        return one_shot(ds)
    return build


def test_pipelines(target):
    for kind in ("", "GZIP", "ZLIB"):
        compare(f"tfrecord[{kind or 'plain'}]/map_parse_single_example/batch",
                tfrecord_parse_single(kind), target)
    compare("tfrecord/two_files/batch/map_parse_example", tfrecord_batch_parse, target)
    compare("tfrecord/gzip_two_files_small_buffer", two_compressed_files, target)
    compare("parse_example/sparse_and_ragged", parse_example_sparse_ragged, target)
    compare("parse_single_example/sparse", parse_single_sparse, target)
    compare("parse_example/fixed_len_sequence_padded", parse_example_sequences, target)
    compare("parse_single_example/fixed_len_sequence_padded_batch",
            parse_single_sequences, target)
    for single in (False, True):
        compare(f"parse_{'single_' if single else ''}example/sequence_not_a_multiple_of_its_row",
                lambda single=single: sequence_not_a_multiple(single), target,
                prefix_only=True)
    compare("text_line/three_files_crlf_empty_no_final_newline", text_lines, target)
    compare("text_line/gzip/batch", text_lines_gzip, target)
    compare("fixed_length/header_footer_partial_record_refused",
            fixed_length("fixed.bin"), target, prefix_only=True)
    compare("fixed_length/header_footer/decode_raw_both_orders",
            fixed_length("fixed_whole.bin"), target)
    compare("fixed_length/gzip/batch/decode_raw_int16", fixed_length_gzip, target)
    compare("matching_files/two_patterns_sorted_hidden", matching_files, target,
            once=True)
    compare("matching_files/flat_map_text_line", list_files_flat_map, target)
    compare("matching_files_dataset", matching_files_dataset, target)
    compare("list_files/unshuffled_then_lines", lambda: one_shot(
        tf.data.Dataset.list_files(path("[ab].txt"), shuffle=False)
        .interleave(tf.data.TextLineDataset, cycle_length=2)), target)
    compare("list_files/no_match", lambda: one_shot(
        tf.data.Dataset.list_files(path("none*.txt"), shuffle=False)), target)


def test_errors(target):
    compare("error/corrupt_record_data_loss",
            error_case([path("corrupt.tfrecord"), path("plain.tfrecord")]), target,
            prefix_only=True)
    compare("error/bad_length_data_loss", error_case(path("badlength.tfrecord")), target,
            prefix_only=True)
    compare("error/truncated_file_data_loss", error_case(path("truncated.tfrecord")),
            target, prefix_only=True)
    compare("error/missing_file_not_found", error_case(path("nope.tfrecord")), target,
            prefix_only=True)
    compare("error/gzip_read_as_zlib", error_case(path("gzip.tfrecord"), kind="ZLIB"),
            target, prefix_only=True)
    compare("error/missing_required_feature",
            error_case(path("plain.tfrecord"),
                       {"opt": tf.io.FixedLenFeature([], tf.float32)}), target,
            prefix_only=True)
    compare("error/feature_type_mismatch",
            error_case(path("plain.tfrecord"), {"i": tf.io.FixedLenFeature([2], tf.float32)}),
            target, prefix_only=True)
    compare("error/feature_size_mismatch",
            error_case(path("plain.tfrecord"), {"f": tf.io.FixedLenFeature([2], tf.float32)}),
            target, prefix_only=True, core_chars=39)  # TensorFlow's detail differs
    # Outside the server's --file-root: refused, whether or not it exists.
    for name in (os.path.join(OUTSIDE, "x.tfrecord"), os.path.join(OUTSIDE, "none"),
                 os.path.join(DATA, "..", "outside", "x.tfrecord")):
        got = outcome(target, error_case(name))
        check(f"error/outside_root_permission_denied[{os.path.basename(name)}]",
              len(got) == 1 and str(got[0]).startswith("PermissionDeniedError"),
              str(got)[:500])
    got = outcome(target, lambda: (tf.io.matching_files(os.path.join(OUTSIDE, "*")), None))
    check("error/matching_files_outside_root_permission_denied",
          len(got) == 1 and str(got[0]).startswith("PermissionDeniedError"), str(got)[:500])


def main():
    write_files()
    tf1.disable_eager_execution()
    cluster = local_cluster.Cluster(WEFT, WORK, {"local": 1},
                                    server_flags=("--file-root", DATA))
    try:
        target = cluster.target("local", 0)
        test_pipelines(target)
        test_errors(target)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("dataset files test ran to the end", False, f"{type(e).__name__}: {e}")
        print(clip(cluster.log("local", 0), 500, 3000))
    finally:
        cluster.close()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
