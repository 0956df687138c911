"""Conformance: tf.data input pipelines as TensorFlow 1.x programs build them,
run unchanged by a TensorFlow 2.21 client against a `weft server` task, and
a traced TensorFlow 2 graph that loops over a dataset, run by `weft run`.

Each pipeline is read to its end (OutOfRangeError) in a local TensorFlow
session and in a session on the Weft task, and the element sequences must be
identical (the pipelines here are deterministic): one-shot and initializable
iterators, re-initialisation, map with captured tensors and variables,
filter, flat_map, batch (with and without drop_remainder), repeat, take,
skip, zip, concatenate, range with steps, string handles (feedable
iterators), iterators shared by two sessions, a model trained from an
iterator, and the errors a user meets (reading before initialising, a map
function that fails, batching elements of different shapes).

usage: dataset_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, run_weft, decode, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("data")
import local_cluster  # noqa: E402

tf1 = tf.compat.v1
OPTIONS = tf1.RunOptions(timeout_in_ms=60000)
MAX_ELEMENTS = 200


def read_all(sess, fetch, init=None, feed=None):
    """Every element `fetch` yields until OutOfRangeError, as lists."""
    if init is not None:
        sess.run(init, feed_dict=feed, options=OPTIONS)
    out = []
    for _ in range(MAX_ELEMENTS):
        try:
            value = sess.run(fetch, feed_dict=feed, options=OPTIONS)
        except tf.errors.OutOfRangeError:
            return out
        out.append(value)
    raise RuntimeError(f"more than {MAX_ELEMENTS} elements")


def same(a, b):
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def compare(case, build, target, runs=1):
    """Builds a graph with build() -> (fetch, init or None, variables init or
    None) and reads it to the end `runs` times (re-running init between) in
    TensorFlow and on the Weft task."""
    results = []
    for where in ("", target):
        g = tf1.Graph()
        with g.as_default():
            fetch, init, var_init = build()
            with tf1.Session(where, graph=g) as sess:
                if var_init is not None:
                    sess.run(var_init, options=OPTIONS)
                try:
                    results.append([read_all(sess, fetch, init) for _ in range(runs)])
                except Exception as e:  # noqa: BLE001 - reported as a failure
                    results.append(f"{type(e).__name__}: {clip(str(e), 800, 200)}")
    ok = same(results[0], results[1]) if not isinstance(results[1], str) else False
    check(case, ok, f"weft: {str(results[1])[:1500]}\n tf: {str(results[0])[:800]}")


def slices_map_batch():
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    y = np.arange(7, dtype=np.int64)
    scale = tf1.constant(3.0)
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    ds = ds.map(lambda a, b: (a * scale + 1.0, b * 2, tf.cast(b, tf.float64) / 4))
    ds = ds.batch(3)
    return tf1.data.make_one_shot_iterator(ds).get_next(), None, None


def filter_repeat_take():
    ds = tf.data.Dataset.range(3, 20, 2).filter(lambda v: tf.equal(v % 3, 0))
    ds = ds.repeat(3).skip(1).take(5)
    it = tf1.data.make_initializable_iterator(ds)
    return it.get_next(), it.initializer, None


def flat_map_zip_concatenate():
    a = tf.data.Dataset.range(5).flat_map(lambda v: tf.data.Dataset.range(v).map(lambda w: w * 10 + v))
    b = tf.data.Dataset.from_tensor_slices(np.arange(100, 112, dtype=np.int32))
    c = tf.data.Dataset.from_tensor_slices(np.array([7, 8], np.int64))
    ds = tf.data.Dataset.zip((a, b)).concatenate(tf.data.Dataset.zip((c, b.take(2))))
    return tf1.data.make_one_shot_iterator(ds).get_next(), None, None


def batch_drop_remainder_dict():
    ds = tf.data.Dataset.from_tensor_slices({"f": np.arange(10, dtype=np.float64),
                                             "s": [str(i) for i in range(10)]})
    ds = ds.batch(4, drop_remainder=True).repeat(2)
    return tf1.data.make_one_shot_iterator(ds).get_next(), None, None


def map_reads_a_variable():
    v = tf1.get_variable("v", initializer=tf1.constant([1.0, -2.0]), use_resource=True)
    ds = tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32) * v.read_value())
    it = tf1.data.make_initializable_iterator(ds)
    return it.get_next(), it.initializer, tf1.global_variables_initializer()


def range_variants():
    ds = tf.data.Dataset.range(10, 0, -3).concatenate(
        tf.data.Dataset.range(2, 3, output_type=tf.int32).map(lambda v: tf.cast(v, tf.int64)))
    ds = ds.concatenate(tf.data.Dataset.range(0))
    return tf1.data.make_one_shot_iterator(ds).get_next(), None, None


def test_pipelines(target):
    compare("one_shot/slices_map_batch", slices_map_batch, target)
    compare("initializable/filter_repeat_skip_take_reinitialised", filter_repeat_take,
            target, runs=2)
    compare("one_shot/flat_map_zip_concatenate", flat_map_zip_concatenate, target)
    compare("one_shot/batch_drop_remainder_dict_strings", batch_drop_remainder_dict, target)
    compare("initializable/map_reads_a_resource_variable", map_reads_a_variable, target,
            runs=2)
    compare("one_shot/range_steps_and_dtypes", range_variants, target)


def test_string_handle_and_sharing(target):
    g = tf1.Graph()
    with g.as_default():
        train = tf.data.Dataset.range(100, 105)
        val = tf.data.Dataset.range(200, 202)
        train_it = tf1.data.make_one_shot_iterator(train)
        val_it = tf1.data.make_initializable_iterator(val)
        handle = tf1.placeholder(tf.string, [])
        it = tf1.data.Iterator.from_string_handle(
            handle, tf1.data.get_output_types(train), tf1.data.get_output_shapes(train))
        nxt = it.get_next()
        with tf1.Session(target, graph=g) as sess:
            th, vh = sess.run([train_it.string_handle(), val_it.string_handle()])
            sess.run(val_it.initializer)
            got = [sess.run(nxt, {handle: h}) for h in (th, th, vh, th, vh)]
            check("string_handle/feedable_iterator_switches", got == [100, 101, 200, 102, 201],
                  str(got))
            try:
                sess.run(nxt, {handle: vh})
                check("string_handle/end_of_the_validation_set", False, "no OutOfRangeError")
            except tf.errors.OutOfRangeError:
                check("string_handle/end_of_the_validation_set", True)
        # A handle whose iterator yields another shape than the feedable
        # iterator declares is refused, as by TensorFlow.
        vector_it = tf1.data.Iterator.from_string_handle(handle, tf.int64, [None])
        with tf1.Session(target, graph=g) as sess:
            th = sess.run(train_it.string_handle())
            try:
                sess.run(vector_it.get_next(), {handle: th})
                check("string_handle/shape_mismatch_refused", False, "no error")
            except tf.errors.InvalidArgumentError as e:
                check("string_handle/shape_mismatch_refused", "incompatible" in str(e), str(e))
    # A shared_name'd iterator is one iterator for every session on the task.
    g = tf1.Graph()
    with g.as_default():
        it = tf1.data.Iterator.from_structure(tf.int64, [], shared_name="shared_it")
        init = it.make_initializer(tf.data.Dataset.range(6))
        nxt = it.get_next()
        with tf1.Session(target, graph=g) as a, tf1.Session(target, graph=g) as b:
            a.run(init)
            got = [a.run(nxt), b.run(nxt), a.run(nxt), b.run(nxt)]
            check("shared_name/two_sessions_read_one_iterator", got == [0, 1, 2, 3], str(got))


def test_errors(target):
    g = tf1.Graph()
    with g.as_default():
        it = tf1.data.make_initializable_iterator(tf.data.Dataset.range(3))
        nxt = it.get_next()
        bad = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices([1.0, -1.0, 4.0]).map(
                lambda v: tf1.debugging.check_numerics(tf.sqrt(v), "sqrt of a negative")))
        bad_next = bad.get_next()
        ragged = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.range(1, 4).map(lambda n: tf.range(n)).batch(2))
        ragged_next = ragged.get_next()
        with tf1.Session(target, graph=g) as sess:
            try:
                sess.run(nxt, options=OPTIONS)
                check("errors/get_next_before_initializer", False, "no error")
            except tf.errors.FailedPreconditionError as e:
                check("errors/get_next_before_initializer",
                      "has not been initialized" in str(e), str(e)[:300])
            got = [sess.run(bad_next)]
            try:
                sess.run(bad_next)
                check("errors/map_function_error_is_reported", False, "no error")
            except tf.errors.InvalidArgumentError as e:
                check("errors/map_function_error_is_reported",
                      "sqrt of a negative" in str(e), str(e)[:300])
            got.append(sess.run(bad_next))  # the iterator goes on after an error
            check("errors/iterator_continues_after_an_error", got == [1.0, 2.0], str(got))
            try:
                sess.run(ragged_next)
                check("errors/batching_different_shapes", False, "no error")
            except tf.errors.InvalidArgumentError as e:
                check("errors/batching_different_shapes",
                      "Cannot batch tensors with different shapes" in str(e), str(e)[:300])


def test_training_from_an_iterator(target):
    """A linear model trained with SGD from a shuffled-free batched pipeline:
    the loss sequence matches TensorFlow's."""
    rng = np.random.RandomState(0)
    x = rng.randn(32, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    losses = []
    for where in ("", target):
        g = tf1.Graph()
        with g.as_default():
            tf1.set_random_seed(1)
            xb, yb = tf1.data.make_one_shot_iterator(
                tf.data.Dataset.from_tensor_slices((x, y)).repeat(3).batch(8)).get_next()
            w = tf1.get_variable("w", [3, 1], initializer=tf1.zeros_initializer())
            b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer())
            loss = tf1.reduce_mean(tf1.square(tf1.matmul(xb, w) + b - yb))
            step = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf1.Session(where, graph=g) as sess:
                sess.run(tf1.global_variables_initializer())
                run = []
                while True:
                    try:
                        run.append(sess.run([loss, step], options=OPTIONS)[0])
                    except tf.errors.OutOfRangeError:
                        break
                losses.append(np.array(run))
    ok = losses[0].shape == losses[1].shape and np.allclose(losses[0], losses[1], rtol=1e-5)
    check("training/loss_per_batch_until_the_end", ok, f"tf {losses[0]} weft {losses[1]}")


def traced_case(case, fn):
    """Runs the traced tf.function `fn` (no inputs) with `weft run` and
    compares its result with TensorFlow's."""
    concrete = fn.get_concrete_function()
    path = os.path.join(WORK, case.replace("/", "_") + ".pb")
    with open(path, "wb") as f:
        f.write(concrete.graph.as_graph_def().SerializeToString())
    fetch = concrete.outputs[0].name
    proc = run_weft(WEFT, path, [fetch])
    if proc.returncode != 0:
        check(case, False, clip(proc.stderr))
        return
    got = decode(json.loads(proc.stdout)["fetches"][fetch])
    want = fn().numpy()
    check(case, same(got.astype(want.dtype), want), f"{got} != {want}")


def test_traced_loops_with_weft_run():
    """TensorFlow 2's traced loops over a dataset, run by `weft run`: a
    Python for loop (ScanDataset and ReduceDataset) and iter/next in a
    tf.range loop (an anonymous iterator in a While loop)."""

    def pipeline():
        return tf.data.Dataset.range(1, 8).map(lambda v: v * v).batch(3)

    @tf.function
    def for_loop():
        s = tf.constant(0, tf.int64)
        for b in pipeline():
            s += tf.reduce_sum(b)
        return s

    @tf.function
    def next_in_a_while_loop():
        it = iter(pipeline())
        s = tf.constant(0, tf.int64)
        for _ in tf.range(2):
            s += tf.reduce_sum(next(it))
        return s

    @tf.function
    def reduce_method():
        return pipeline().reduce(tf.constant(0, tf.int64),
                                 lambda a, b: a * 2 + tf.reduce_sum(b))

    traced_case("traced/for_loop_over_a_dataset", for_loop)
    traced_case("traced/next_in_a_while_loop", next_in_a_while_loop)
    traced_case("traced/dataset_reduce", reduce_method)


def main():
    test_traced_loops_with_weft_run()
    tf1.disable_eager_execution()
    cluster = local_cluster.Cluster(WEFT, WORK, {"local": 1})
    try:
        target = cluster.target("local", 0)
        test_pipelines(target)
        test_string_handle_and_sharing(target)
        test_errors(target)
        test_training_from_an_iterator(target)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("dataset test ran to the end", False, f"{type(e).__name__}: {e}")
        print(clip(cluster.log("local", 0), 500, 3000))
    finally:
        cluster.close()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
