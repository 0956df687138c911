"""Conformance: TensorFlow 1.x input pipelines built on readers and queues,
run by a TensorFlow 2.21 client against a `weft server` task confined to a
temporary --file-root (the client starts the QueueRunners, as TF1 programs
do), and compared with TensorFlow's own run of the same graph.

Readers: TFRecordReader (plain and GZIP), TextLineReader with header lines
(CRLF, empty lines, a last line without newline), FixedLengthRecordReader
with header, footer and hop_bytes (plain and GZIP), WholeFileReader,
IdentityReader; read and read_up_to, the record and work-unit counters,
reset, and the state verbs (IdentityReader's state bytes; the others'
errors). Keys and values must match TensorFlow's exactly and in order (one
reader, files in order). The classic pipeline
string_input_producer -> TFRecordReader -> parse_single_example ->
shuffle_batch over two epochs must give the same multiset of examples in
batches of the same shapes (the order depends on thread timing, in
TensorFlow too). Also ReadFile/WriteFile, a path outside the root
(PERMISSION_DENIED), a missing file (NOT_FOUND), and TemporaryVariable /
DestroyTemporaryVariable and the V1 (Ref(string) handle) queue ops through
`weft run`.

usage: reader_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import gzip
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("readers")
import local_cluster  # noqa: E402
from dataset_files_test import first_line  # noqa: E402

tf1 = tf.compat.v1
DATA = os.path.realpath(os.path.join(WORK, "data"))
OUTSIDE = os.path.realpath(os.path.join(WORK, "outside"))
OPTIONS = tf1.RunOptions(timeout_in_ms=60000)
MAX_STEPS = 400
CASES = 0


def path(name):
    return os.path.join(DATA, name)


def example(i):
    f = {
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i])),
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"row{i}".encode()])),
    }
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def write_files():
    os.makedirs(DATA)
    os.makedirs(OUTSIDE)
    for k in range(3):
        with tf.io.TFRecordWriter(path(f"part{k}.tfrecord")) as w:
            for i in range(k * 7, k * 7 + 7):
                w.write(example(i))
    with tf.io.TFRecordWriter(path("z.tfrecord"), options="GZIP") as w:
        for i in range(5):
            w.write(example(100 + i))
    open(path("a.txt"), "wb").write(b"header\r\nfirst line\r\nsecond\n\n  spaced \t\nlast")
    open(path("b.txt"), "wb").write(b"only header")
    open(path("c.txt"), "wb").write(b"h\nc1\nc2\n")
    body = bytes(range(256))
    open(path("fixed.bin"), "wb").write(b"HEAD!" + body[:6 * 9] + b"xy" + b"FT!")
    with gzip.open(path("fixed.bin.gz"), "wb") as g:
        g.write(b"HEAD!" + body[100:100 + 6 * 4] + b"FT!")
    open(path("empty.bin"), "wb").write(b"")
    open(os.path.join(OUTSIDE, "secret.txt"), "wb").write(b"secret")


def values(v):
    """Fetched values as plain Python (bytes and numbers, nested lists)."""
    if isinstance(v, dict):
        return {k: values(x) for k, x in sorted(v.items())}
    if isinstance(v, (list, tuple)):
        return [values(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def outcome(where, build, steps=MAX_STEPS):
    """Runs build()'s fetch (with its queue runners started) until
    OUT_OF_RANGE or `steps` runs; returns the values, then 'ErrorClass:
    first line' for another error, then the fetches of build()'s `after`."""
    global CASES
    CASES += 1
    g = tf1.Graph()
    # A server's queues and readers outlive a session (as TensorFlow's do):
    # each run names its own.
    with g.as_default(), tf1.name_scope(f"run{CASES}"):
        fetch, after = build()
        init = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        with tf1.Session(where, graph=g) as sess:
            sess.run(init, options=OPTIONS)
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess=sess, coord=coord)
            got = []
            try:
                for _ in range(steps):
                    got.append(values(sess.run(fetch, options=OPTIONS)))
            except tf.errors.OutOfRangeError:
                got.append("OutOfRange")
            except tf.errors.OpError as e:
                got.append(f"{type(e).__name__}: {first_line(e.message)}")
            if after is not None:
                try:
                    got.append(values(sess.run(after, options=OPTIONS)))
                except tf.errors.OpError as e:
                    got.append(f"{type(e).__name__}: {first_line(e.message)}")
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10, ignore_live_threads=True)
    return got


def compare(case, build, target, steps=MAX_STEPS, key=None):
    tf_run = outcome("", build, steps)
    try:
        weft_run = outcome(target, build, steps)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        weft_run = [f"{type(e).__name__}: {clip(str(e), 800, 200)}"]
    ok = (key(tf_run) == key(weft_run)) if key else tf_run == weft_run
    check(case, ok, f"weft: {clip(str(weft_run), 1500, 300)}\n tf: {clip(str(tf_run), 800, 300)}")


def producer(names, epochs=1, shuffle=False):
    return tf1.train.string_input_producer([path(n) for n in names], num_epochs=epochs,
                                           shuffle=shuffle, seed=5)


def reader_case(make_reader, names, up_to=None, epochs=1, counters=True):
    def build():
        q = producer(names, epochs)
        reader = make_reader()
        fetch = reader.read_up_to(q, up_to) if up_to else reader.read(q)
        after = [reader.num_records_produced(), reader.num_work_units_completed()]
        return fetch, after if counters else None
    return build


def test_readers(target):
    tfr = ["part0.tfrecord", "part1.tfrecord", "part2.tfrecord"]
    compare("tfrecord/read", reader_case(tf1.TFRecordReader, tfr), target)
    compare("tfrecord/read_up_to_5", reader_case(tf1.TFRecordReader, tfr, up_to=5), target)
    compare("tfrecord/two_epochs", reader_case(tf1.TFRecordReader, tfr[:2], epochs=2), target)
    compare("tfrecord/gzip", reader_case(
        lambda: tf1.TFRecordReader(options=tf.io.TFRecordOptions("GZIP")), ["z.tfrecord"]),
        target)
    compare("text/skip_header", reader_case(
        lambda: tf1.TextLineReader(skip_header_lines=1), ["a.txt", "b.txt", "c.txt"]), target)
    compare("text/read_up_to_3", reader_case(
        lambda: tf1.TextLineReader(), ["a.txt", "c.txt"], up_to=3), target)
    compare("fixed/header_footer", reader_case(
        lambda: tf1.FixedLengthRecordReader(6, header_bytes=5, footer_bytes=3),
        ["fixed.bin", "empty.bin", "fixed.bin"]), target)
    compare("fixed/gzip", reader_case(
        lambda: tf1.FixedLengthRecordReader(6, header_bytes=5, footer_bytes=3,
                                            encoding="GZIP"), ["fixed.bin.gz"]), target)
    for hop in (2, 4, 11):
        compare(f"fixed/hop_{hop}", reader_case(
            lambda: tf1.FixedLengthRecordReader(6, header_bytes=5, footer_bytes=3,
                                                hop_bytes=hop), ["fixed.bin", "fixed.bin"]),
            target)
        compare(f"fixed/hop_{hop}_gzip", reader_case(
            lambda: tf1.FixedLengthRecordReader(6, header_bytes=5, footer_bytes=3, hop_bytes=hop,
                                                encoding="GZIP"), ["fixed.bin.gz"], up_to=3),
            target)
    compare("whole_file", reader_case(tf1.WholeFileReader, ["a.txt", "empty.bin", "c.txt"]),
            target)
    compare("identity/read_up_to_2", reader_case(
        tf1.IdentityReader, ["a.txt", "b.txt", "c.txt"], up_to=2), target)

    def reset():
        q = producer(tfr, epochs=1)
        reader = tf1.TFRecordReader()
        key, _ = reader.read(q)
        with tf1.control_dependencies([key]):
            r = reader.reset()
        with tf1.control_dependencies([r]):
            n = reader.num_records_produced() + 0
        return [key, n], None
    compare("tfrecord/reset", reset, target, steps=3)

    def serialize():
        q = producer(tfr)
        reader = tf1.TFRecordReader()
        return reader.serialize_state(), None
    compare("tfrecord/serialize_state_unimplemented", serialize, target, steps=1,
            key=lambda run: [(str(r).split(":")[0], str(r).endswith(": Reader SerializeState"))
                             for r in run])

    # IdentityReader's state (TensorFlow's ReaderBaseState bytes), restored
    # into a second reader; then a state it refuses.
    def identity_state():
        q = producer(["a.txt", "b.txt", "c.txt"])
        reader = tf1.IdentityReader()
        key, _ = reader.read(q)
        with tf1.control_dependencies([key]):
            state = reader.serialize_state()
        other = tf1.IdentityReader()
        with tf1.control_dependencies([other.restore_state(state)]):
            counts = [other.num_records_produced() + 0, other.num_work_units_completed() + 0]
        return [key, state, counts], None
    compare("identity/serialize_restore_state", identity_state, target)

    def bad_state():
        reader = tf1.IdentityReader()
        with tf1.control_dependencies([reader.restore_state(b"\x08\x07")]):
            return reader.num_records_produced() + 0, None
    compare("identity/restore_inconsistent_state", bad_state, target, steps=1,
            key=lambda run: [str(r).split(":")[0] for r in run])

    def missing():
        q = producer(["part0.tfrecord", "nope.tfrecord", "part1.tfrecord"])
        return tf1.TFRecordReader().read(q), None
    compare("error/missing_file_not_found", missing, target,
            key=lambda run: [r if isinstance(r, list) else r.split(";")[0].split(":")[0]
                             for r in run])

    # The classic pipeline: shuffled file names, parse_single_example,
    # shuffle_batch; the same examples in batches of the same shape.
    def pipeline():
        q = producer(tfr, epochs=2, shuffle=True)
        _, record = tf1.TFRecordReader().read(q)
        f = tf.io.parse_single_example(record, {
            "x": tf.io.FixedLenFeature([2], tf.float32),
            "id": tf.io.FixedLenFeature([], tf.int64),
            "s": tf.io.FixedLenFeature([], tf.string)})
        batch = tf1.train.shuffle_batch(f, batch_size=4, capacity=20, min_after_dequeue=5,
                                        num_threads=2, seed=3, allow_smaller_final_batch=True)
        return batch, None

    def by_example(run):
        rows, shapes = [], []
        for b in run:
            if isinstance(b, dict):
                shapes.append(len(b["id"]))
                rows += [(i, s, tuple(x)) for i, s, x in zip(b["id"], b["s"], b["x"])]
            else:
                shapes.append(b)
        return sorted(rows), sorted(map(str, shapes))
    compare("pipeline/shuffle_batch_two_epochs", pipeline, target, key=by_example)


def test_files(target):
    def read_write():
        written = os.path.join(DATA, "out", "deeper", "w.txt")
        w = tf.io.write_file(written, tf.constant(b"written\x00bytes"))
        with tf1.control_dependencies([w]):
            r = tf.io.read_file(written)
        return [r, tf.io.read_file(path("c.txt"))], None
    compare("files/write_then_read", read_write, target, steps=1)

    def outside():
        return tf.io.read_file(os.path.join(OUTSIDE, "secret.txt")), None
    got = outcome(target, outside, steps=1)
    check("files/outside_root_permission_denied",
          len(got) == 1 and str(got[0]).startswith("PermissionDeniedError"), str(got)[:500])

    def missing():
        return tf.io.read_file(path("nope.txt")), None
    compare("files/missing_not_found", missing, target, steps=1,
            key=lambda run: [str(r).split(":")[0] for r in run])


def test_temporary_variable():
    g = tf1.Graph()
    with g.as_default():
        tmp = tf.raw_ops.TemporaryVariable(shape=[2, 3], dtype=tf.float32, var_name="acc")
        a = tf1.assign(tmp, tf1.constant(np.arange(6, dtype=np.float32).reshape(2, 3)))
        b = tf1.assign_add(a, tf1.ones([2, 3]))
        tf1.identity(tf.raw_ops.DestroyTemporaryVariable(ref=b, var_name="acc"), name="out")
    compare_tf1_graph(WEFT, WORK, "temporary_variable", g, ["out"], (), 2, 0.0, 0.0)


def test_v1_queues():
    """The V1 queue ops (Ref(string) handles), as TensorFlow 1.x graphs hold
    them: enqueue_many into a FIFOQueue and a RandomShuffleQueue (seeded),
    then dequeue, dequeue_many, dequeue_up_to after close, size, is_closed."""
    g = tf1.Graph()
    with g.as_default():
        fifo = tf.raw_ops.FIFOQueue(component_types=[tf.int32, tf.string], shapes=[[], []],
                                   capacity=10)
        shuf = tf.raw_ops.RandomShuffleQueue(component_types=[tf.int32], shapes=[[]], capacity=10,
                                             min_after_dequeue=2, seed=4, seed2=9)
        vals = tf1.constant(np.arange(7, dtype=np.int32))
        strs = tf1.constant([f"s{i}".encode() for i in range(7)])
        tf.raw_ops.QueueEnqueueMany(handle=fifo, components=[vals, strs], name="fill_fifo")
        tf.raw_ops.QueueEnqueueMany(handle=shuf, components=[vals], name="fill_shuf")
        tf.raw_ops.QueueEnqueue(handle=fifo, components=[tf1.constant(70), tf1.constant(b"x")],
                                name="one_more")
        one = tf.raw_ops.QueueDequeue(handle=fifo, component_types=[tf.int32, tf.string])
        with tf1.control_dependencies(one):
            many = tf.raw_ops.QueueDequeueMany(handle=fifo, n=3,
                                               component_types=[tf.int32, tf.string])
        with tf1.control_dependencies(one + many):
            close = tf.raw_ops.QueueClose(handle=fifo)
        with tf1.control_dependencies([close]):
            rest = tf.raw_ops.QueueDequeueUpTo(handle=fifo, n=10,
                                               component_types=[tf.int32, tf.string])
        with tf1.control_dependencies(rest):
            tf1.identity(tf.raw_ops.QueueIsClosed(handle=fifo), name="closed")
            tf1.identity(tf.raw_ops.QueueSize(handle=fifo), name="size")
        tf1.identity(one[0], name="one")
        tf1.identity(many[0], name="many")
        tf1.identity(many[1], name="many_s")
        tf1.identity(rest[0], name="rest")
        tf1.identity(tf.raw_ops.QueueDequeueMany(handle=shuf, n=5, component_types=[tf.int32])[0],
                     name="shuffled")
    compare_tf1_graph(WEFT, WORK, "v1_queues", g,
                      ["one", "many", "many_s", "rest", "closed", "size", "shuffled"],
                      ("fill_fifo", "fill_shuf", "one_more"), 1, 0.0, 0.0)


def main():
    write_files()
    tf1.disable_eager_execution()
    test_temporary_variable()
    test_v1_queues()
    cluster = local_cluster.Cluster(WEFT, WORK, {"local": 1},
                                    server_flags=("--file-root", DATA))
    try:
        target = cluster.target("local", 0)
        test_readers(target)
        test_files(target)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("reader ops test ran to the end", False, f"{type(e).__name__}: {e}")
        print(clip(cluster.log("local", 0), 500, 3000))
    finally:
        cluster.close()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
