"""Conformance: the tf.data transformations of TensorFlow 1.x/2.x input
pipelines beyond map and batch (shuffle with its seed generators, prefetch,
padded_batch, unbatch, shard, cache (in memory and in TensorFlow's files,
each side reading the other's), map_and_batch, interleave,
parallel_interleave, parallel map), built by a TensorFlow 2.21 client
(tf.compat.v1 graph mode, or tf.raw_ops where no Python API reaches the op),
run in local TensorFlow and in a session on a `weft server` task. Every
element, in order, must be identical: the shuffles use TensorFlow's
algorithm and Philox stream, so the same seeds give the same order, across
repeats (reshuffled or not) and re-initialised iterators. Hostile inputs
(negative buffer sizes, cycle_length 0, elements larger than a padded shape)
must fail with the error TensorFlow raises.

usage: dataset_transform_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dataset_ops_test import (OPTIONS, WEFT, WORK, compare, read_all, same,  # noqa: E402
                              tf1)
from tf_compare import check, clip, summary_exit_code  # noqa: E402
import local_cluster  # noqa: E402




def word(v):
    """A string component for element v (Weft has no AsString yet)."""
    return tf.gather(tf.constant(["zero", "one", "two", "three", "four", "five", ""]),
                     v % 7)

def one_shot(ds):
    return tf1.data.make_one_shot_iterator(ds).get_next(), None, None


def initializable(ds):
    it = tf1.data.make_initializable_iterator(ds)
    return it.get_next(), it.initializer, None


def raw(ds, make):
    """The dataset a raw op makes from `ds`'s variant (make(variant) ->
    variant), with `ds`'s element structure."""
    spec = ds.element_spec
    variant = make(tf.data.experimental.to_variant(ds),
                   [s.dtype for s in tf.nest.flatten(spec)],
                   [s.shape for s in tf.nest.flatten(spec)])
    return tf.data.experimental.from_variant(variant, spec)


def raw_interleave(ds, fn, op, **inputs):
    """`ds` interleaved by the raw op `op` (a parallel interleave) with
    `fn`, traced as TensorFlow's own dataset classes trace one."""
    from tensorflow.python.data.ops import structured_function
    wrapped = structured_function.StructuredFunctionWrapper(fn, op, dataset=ds)
    spec = wrapped.output_structure.element_spec
    variant = getattr(tf.raw_ops, op)(
        input_dataset=tf.data.experimental.to_variant(ds),
        other_arguments=wrapped.function.captured_inputs, f=wrapped.function,
        output_types=[s.dtype for s in tf.nest.flatten(spec)],
        output_shapes=[s.shape for s in tf.nest.flatten(spec)], **inputs)
    return tf.data.experimental.from_variant(variant, spec)


def compare_error(case, build, target, error, words):
    """Both TensorFlow and Weft fail `build`'s pipeline with `error`; Weft's
    message contains `words`."""
    got = []
    for where in ("", target):
        g = tf1.Graph()
        with g.as_default():
            try:
                fetch, init, _ = build()
                with tf1.Session(where, graph=g) as sess:
                    read_all(sess, fetch, init)
                got.append("no error")
            except Exception as e:  # noqa: BLE001 - compared below
                got.append(e)
    tf_e, weft_e = got
    ok = (isinstance(tf_e, error) and isinstance(weft_e, error)
          and words in str(weft_e))
    check(case, ok, f"tf: {type(tf_e).__name__} {str(tf_e)[:300]}\n"
                    f" weft: {type(weft_e).__name__} {clip(str(weft_e), 600, 100)}")


# ---- shuffle -------------------------------------------------------------

def shuffle_case(n, buffer_size, seed, reshuffle=True, repeat=1, graph_seed=None,
                 init=False):
    def build():
        if graph_seed is not None:
            tf1.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(n).shuffle(buffer_size, seed=seed,
                                              reshuffle_each_iteration=reshuffle)
        if repeat != 1:
            ds = ds.repeat(repeat)
        return initializable(ds) if init else one_shot(ds)
    return build


def shuffle_and_repeat_raw(n, buffer_size, count, seed, seed2, reshuffle, take=None):
    def build():
        ds = raw(tf.data.Dataset.range(n).map(lambda v: (v, v * 10)),
                 lambda v, t, s: tf.raw_ops.ShuffleAndRepeatDataset(
                     input_dataset=v, buffer_size=buffer_size, seed=seed, seed2=seed2,
                     count=count, output_types=t, output_shapes=s,
                     reshuffle_each_iteration=reshuffle))
        if take is not None:
            ds = ds.take(take)
        return initializable(ds)
    return build


def shuffle_v3(n, buffer_size, seed, seed2, reshuffle, generator, repeat=1):
    """ShuffleDatasetV3 with a DummySeedGenerator ('dummy': its own
    generator) or an AnonymousSeedGenerator ('anonymous')."""
    def build():
        def make(v, t, s):
            if generator == "dummy":
                handle = tf.raw_ops.DummySeedGenerator()
            else:
                handle, _ = tf.raw_ops.AnonymousSeedGenerator(
                    seed=seed, seed2=seed2, reshuffle=reshuffle)
            return tf.raw_ops.ShuffleDatasetV3(
                input_dataset=v, buffer_size=buffer_size, seed=seed, seed2=seed2,
                seed_generator=handle, output_types=t, output_shapes=s,
                reshuffle_each_iteration=reshuffle)
        ds = raw(tf.data.Dataset.range(n), make)
        if repeat != 1:
            ds = ds.repeat(repeat)
        return initializable(ds)
    return build


def test_shuffle(target):
    for buffer_size in (1, 4, 10, 37):
        compare(f"shuffle/buffer_{buffer_size}_of_10", shuffle_case(10, buffer_size, 7),
                target)
    compare("shuffle/seed_123_buffer_50_of_40", shuffle_case(40, 50, 123), target)
    compare("shuffle/graph_seed_only", shuffle_case(12, 5, None, graph_seed=99), target)
    compare("shuffle/graph_and_op_seed", shuffle_case(12, 5, 3, graph_seed=42), target)
    for reshuffle in (True, False):
        for buffer_size in (3, 8, 20):
            compare(f"shuffle/repeat3_reshuffle_{reshuffle}_buffer_{buffer_size}",
                    shuffle_case(8, buffer_size, 11, reshuffle=reshuffle, repeat=3),
                    target)
        compare(f"shuffle/initialised_twice_reshuffle_{reshuffle}",
                shuffle_case(9, 4, 5, reshuffle=reshuffle, repeat=2, init=True),
                target, runs=2)
    compare("shuffle/empty_input", shuffle_case(0, 4, 1), target)
    compare("shuffle/elements_are_tuples_of_strings", lambda: one_shot(
        tf.data.Dataset.from_tensor_slices(
            ([f"s{i}" for i in range(9)], np.arange(18, dtype=np.float32).reshape(9, 2))
        ).shuffle(4, seed=8)), target)
    for reshuffle in (True, False):
        for buffer_size, count in ((3, 3), (20, 3), (5, 1)):
            compare(f"shuffle_and_repeat/buffer_{buffer_size}_count_{count}_"
                    f"reshuffle_{reshuffle}",
                    shuffle_and_repeat_raw(7, buffer_size, count, 4, 9, reshuffle),
                    target, runs=2)
    compare("shuffle_and_repeat/forever_take_40",
            shuffle_and_repeat_raw(6, 4, -1, 1, 2, True, take=40), target)
    compare("shuffle_and_repeat/forever_over_empty_ends",
            shuffle_and_repeat_raw(0, 4, -1, 1, 2, True), target)
    for generator in ("dummy", "anonymous"):
        for reshuffle in (True, False):
            compare(f"shuffle_v3/{generator}_generator_reshuffle_{reshuffle}_repeat3",
                    shuffle_v3(10, 4, 17, 23, reshuffle, generator, repeat=3),
                    target, runs=2)
    # Hostile inputs.
    compare_error("shuffle/buffer_size_0_rejected",
                  shuffle_case(5, 0, 1), target, tf.errors.InvalidArgumentError,
                  "buffer_size must be greater than zero")
    compare_error("shuffle/negative_buffer_size_rejected",
                  shuffle_case(5, -3, 1), target, tf.errors.InvalidArgumentError,
                  "buffer_size must be greater than zero")
    compare_error("shuffle_and_repeat/count_minus_2_rejected",
                  shuffle_and_repeat_raw(5, 2, -2, 1, 2, True), target,
                  tf.errors.InvalidArgumentError,
                  "count must be greater than zero or equal to -1")


# ---- prefetch and parallel map ------------------------------------------

def read_with_errors(sess, fetch, init=None):
    """Every element until OutOfRangeError, an error's class name standing
    for the element that failed."""
    if init is not None:
        sess.run(init, options=OPTIONS)
    out = []
    for _ in range(200):
        try:
            out.append(sess.run(fetch, options=OPTIONS))
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.OpError as e:
            out.append(type(e).__name__)
    raise RuntimeError("more than 200 elements")


def compare_with_errors(case, build, target):
    got = []
    for where in ("", target):
        g = tf1.Graph()
        with g.as_default():
            fetch, init, _ = build()
            with tf1.Session(where, graph=g) as sess:
                got.append(read_with_errors(sess, fetch, init))
    check(case, len(got[0]) == len(got[1]) and all(
        (isinstance(a, str) and a == b) or (not isinstance(a, str) and not isinstance(b, str)
                                            and np.array_equal(a, b))
        for a, b in zip(*got)), f"tf {got[0]}\n weft {got[1]}")


def failing_map(ds):
    return ds.map(lambda v: tf1.debugging.check_numerics(
        tf.sqrt(tf.cast(v, tf.float32) - 3.0), "negative"))


def test_prefetch_and_parallel_map(target):
    for size in (1, 2, -1, 0, 100):
        compare(f"prefetch/buffer_{size}", lambda size=size: one_shot(
            tf.data.Dataset.range(25).map(lambda v: (v, tf.cast(v, tf.float32) * 0.5))
            .prefetch(size)), target)
    compare("prefetch/reinitialised_midway", lambda: initializable(
        tf.data.Dataset.range(30).prefetch(4).take(7)), target, runs=3)
    compare("prefetch/nested_after_batch", lambda: one_shot(
        tf.data.Dataset.range(23).prefetch(3).batch(4).prefetch(2)), target)
    compare_with_errors("prefetch/errors_in_order_and_reading_goes_on", lambda: one_shot(
        failing_map(tf.data.Dataset.range(8).map(lambda v: 5 - v)).prefetch(3)), target)
    for calls in (1, 3, -1):
        compare(f"parallel_map/num_parallel_calls_{calls}", lambda calls=calls: one_shot(
            tf.data.Dataset.range(40).map(lambda v: (v * v, word(v)),
                                          num_parallel_calls=calls)), target)
    compare_with_errors("parallel_map/errors_in_order", lambda: one_shot(
        failing_map(tf.data.Dataset.range(8).map(lambda v: 5 - v,
                                                 num_parallel_calls=4))), target)
    compare_with_errors("parallel_map/failing_function_4_calls", lambda: one_shot(
        tf.data.Dataset.range(9).map(lambda v: tf1.debugging.check_numerics(
            tf.sqrt(tf.cast(v, tf.float32) - 4.0), "negative"), num_parallel_calls=4)),
        target)
    compare_error("prefetch/negative_buffer_size_rejected", lambda: one_shot(
        raw(tf.data.Dataset.range(3), lambda v, t, s: tf.raw_ops.PrefetchDataset(
            input_dataset=v, buffer_size=-5, output_types=t, output_shapes=s))),
        target, tf.errors.InvalidArgumentError, "buffer_size must be >= 0")
    test_prefetch_waits_end_with_the_step(target)
    test_parallel_map_values_whatever_the_calls(target)


def test_prefetch_waits_end_with_the_step(target):
    """A GetNext waiting on a prefetch whose input blocks (a map dequeuing an
    empty queue) ends at the step's deadline; the element arrives in a later
    step once the queue is fed; closing the session with the producer
    blocked again leaves the server working. Weft only: TensorFlow cancels
    the read ahead with the step (its dequeue fails) and then ends the
    sequence; Weft's read ahead belongs to the iterator and goes on."""
    got = []
    for where in (target,):
        g = tf1.Graph()
        with g.as_default():
            q = tf1.FIFOQueue(10, tf.int64, shapes=[])
            ds = tf.data.Dataset.range(3).map(lambda v: v + q.dequeue()).prefetch(2)
            it = tf1.data.make_initializable_iterator(ds)
            nxt = it.get_next()
            enqueue = q.enqueue(tf1.placeholder_with_default(tf.constant(100, tf.int64), []))
            short = tf1.RunOptions(timeout_in_ms=1500)
            run = []
            with tf1.Session(where, graph=g) as sess:
                sess.run(it.initializer)
                start = time.time()
                try:
                    sess.run(nxt, options=short)
                    run.append("no error")
                except tf.errors.DeadlineExceededError:
                    run.append("DeadlineExceeded")
                except tf.errors.CancelledError:
                    run.append("DeadlineExceeded")  # either ends the wait
                run.append(time.time() - start < 30)
                sess.run(enqueue, options=OPTIONS)
                run.append(int(sess.run(nxt, options=OPTIONS)))
            got.append(run)
    check("prefetch/waiting_get_next_ends_with_its_step",
          got == [["DeadlineExceeded", True, 100]], str(got))
    # The session above closed with its producer blocked on the empty queue.
    g = tf1.Graph()
    with g.as_default():
        v = tf1.data.make_one_shot_iterator(tf.data.Dataset.range(2).prefetch(1)).get_next()
        with tf1.Session(target, graph=g) as sess:
            check("prefetch/server_works_after_a_blocked_producer",
                  int(sess.run(v, options=OPTIONS)) == 0)


def test_parallel_map_values_whatever_the_calls(target):
    """A slow map function (a long chain of matrix products) gives the same
    values with 4 parallel calls as with 1 (Weft only). The times are
    printed for information: speed belongs in benchmarks, not tests."""
    def build(calls):
        m = tf.constant(np.eye(64, dtype=np.float32) * 0.999)

        def slow(v):
            x = tf.fill([64, 64], tf.cast(v, tf.float32))
            for _ in range(60):
                x = tf.matmul(x, m)
            return tf.reduce_sum(x)
        return one_shot(tf.data.Dataset.range(48).map(slow, num_parallel_calls=calls))
    times = {}
    results = {}
    for calls in (1, 4):
        g = tf1.Graph()
        with g.as_default():
            fetch, _, _ = build(calls)
            with tf1.Session(target, graph=g) as sess:
                start = time.time()
                results[calls] = read_all(sess, fetch)
                times[calls] = time.time() - start
    same_values = np.allclose(results[1], results[4])
    print(f"parallel map: 1 call {times[1]:.2f} s, 4 calls {times[4]:.2f} s")
    check("parallel_map/same_values_whatever_the_calls", same_values)


# TensorFlow reports an element larger than its padded shape as DATA_LOSS.
PAD_ERROR = tf.errors.DataLossError

# ---- padded_batch, unbatch, shard, cache, map_and_batch ----------------

def ragged(n=7):
    """Elements of varying shapes: (range(v) as float, a [v % 3, 2] int32
    block, a string)."""
    return tf.data.Dataset.range(n).map(lambda v: (
        tf.cast(tf.range(v), tf.float32),
        tf.fill(tf.stack([tf.cast(v % 3, tf.int32), 2]), tf.cast(v, tf.int32)),
        word(v)))


def test_batching_and_selection(target):
    compare("padded_batch/pad_to_largest", lambda: one_shot(
        ragged().padded_batch(3)), target)
    compare("padded_batch/fixed_shapes_and_values", lambda: one_shot(
        ragged().padded_batch(2, padded_shapes=([8], [3, 2], []),
                              padding_values=(-1.0, 7, "pad"))), target)
    compare("padded_batch/drop_remainder", lambda: one_shot(
        ragged().padded_batch(3, padded_shapes=([-1], [-1, 2], []),
                              drop_remainder=True)), target)
    compare("padded_batch/scalars_and_empty", lambda: one_shot(
        tf.data.Dataset.range(5).map(lambda v: (v, tf.zeros([0, v], tf.float64)))
        .padded_batch(2)), target)
    compare_error("padded_batch/element_larger_than_padded_shape", lambda: one_shot(
        ragged().padded_batch(4, padded_shapes=([3], [-1, 2], []))), target,
        PAD_ERROR, "Attempted to pad to a smaller size")
    compare_error("padded_batch/batch_size_0", lambda: one_shot(
        ragged().padded_batch(0)), target, tf.errors.InvalidArgumentError,
        "Batch size must be greater than zero")
    compare("unbatch/after_batch", lambda: one_shot(
        tf.data.Dataset.range(10).map(lambda v: (v, word(v)))
        .batch(3).unbatch()), target)
    compare("unbatch/matrix_rows", lambda: one_shot(
        tf.data.Dataset.from_tensors(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
        .repeat(2).unbatch()), target)
    compare_error("unbatch/components_of_different_sizes", lambda: one_shot(
        tf.data.Dataset.range(1).map(lambda v: (tf.range(3), tf.range(4 + v)))
        .unbatch()), target,
        tf.errors.InvalidArgumentError, "same batch size")
    for shards, index in ((3, 0), (3, 2), (4, 1), (20, 7)):
        compare(f"shard/{shards}_index_{index}", lambda shards=shards, index=index: one_shot(
            tf.data.Dataset.range(11).shard(shards, index)), target)
    compare_error("shard/index_out_of_range", lambda: one_shot(
        tf.data.Dataset.range(5).shard(2, 2)), target, tf.errors.InvalidArgumentError,
        "Index must be between 0 and 1")
    compare_error("shard/zero_shards", lambda: one_shot(
        raw(tf.data.Dataset.range(5), lambda v, t, s: tf.raw_ops.ShardDataset(
            input_dataset=v, num_shards=0, index=0, output_types=t, output_shapes=s))),
        target, tf.errors.InvalidArgumentError, "Number of shards must be greater than zero")
    compare_error("shard/require_non_empty", lambda: one_shot(
        raw(tf.data.Dataset.range(2), lambda v, t, s: tf.raw_ops.ShardDataset(
            input_dataset=v, num_shards=4, index=0, require_non_empty=True,
            output_types=t, output_shapes=s))),
        target, tf.errors.InvalidArgumentError, "Could not apply FILE based sharding")
    compare("cache/memory_repeat_of_a_shuffle", lambda: one_shot(
        tf.data.Dataset.range(9).shuffle(9, seed=3).cache().repeat(3)), target)
    compare("cache/reinitialised", lambda: initializable(
        tf.data.Dataset.range(6).map(lambda v: v * 3).cache().repeat(2)), target, runs=2)
    compare("cache/partial_first_pass", lambda: one_shot(
        tf.data.Dataset.range(6).cache().take(2).concatenate(
            tf.data.Dataset.range(3).cache())), target)
    test_file_cache(target)
    from tensorflow.python.data.experimental.ops import batching
    for calls, drop in ((1, False), (3, True), (-1, False)):
        compare(f"map_and_batch/calls_{calls}_drop_{drop}",
                lambda calls=calls, drop=drop: one_shot(
                    tf.data.Dataset.range(17).apply(batching.map_and_batch(
                        lambda v: (v * 2, tf.cast(v, tf.float64) / 3), 5,
                        num_parallel_calls=calls, drop_remainder=drop))), target)
    compare_with_errors("map_and_batch/error_fails_its_batch", lambda: one_shot(
        tf.data.Dataset.range(10).apply(batching.map_and_batch(
            lambda v: tf1.debugging.check_numerics(
                tf.sqrt(tf.cast(v, tf.float32) - 4.0), "negative")[None], 3))), target)


def cached(path, source=None):
    """Elements of three components, cached to `path`, read twice (the
    second pass reads the cache); `source` replaces the input (a reader of
    a finished cache never looks at it)."""
    ds = source if source is not None else tf.data.Dataset.range(7).map(
        lambda v: (v, word(v), tf.fill([2, 3], tf.cast(v, tf.float32) / 3)))
    return one_shot(ds.cache(path).repeat(2))


def read_in(where, build):
    g = tf1.Graph()
    with g.as_default():
        fetch, init, _ = build()
        with tf1.Session(where, graph=g) as sess:
            try:
                return read_all(sess, fetch, init)
            except Exception as e:  # noqa: BLE001 - compared by the caller
                return e


def test_file_cache(target):
    """dataset.cache(filename): TensorFlow's files, written and read by
    either side."""
    def path(name):
        return os.path.join(WORK, "file_cache", name, "cache")

    for name in ("tf", "weft", "locked", "stopped"):
        os.makedirs(os.path.dirname(path(name)))
    tf_first = read_in("", lambda: cached(path("tf")))
    weft_first = read_in(target, lambda: cached(path("weft")))
    check("cache/file_first_run_writes_then_reads", not isinstance(weft_first, Exception)
          and same(tf_first, weft_first) and len(weft_first) == 14,
          f"weft: {str(weft_first)[:800]}\n tf: {str(tf_first)[:300]}")
    files = sorted(os.listdir(os.path.dirname(path("weft"))))
    check("cache/file_leaves_tensorflows_files", files == [
        "cache.data-00000-of-00001", "cache.index"], f"{files}")
    # Each reads the other's finished cache, not its (different) input.
    other = lambda p: cached(p, tf.data.Dataset.range(100).map(  # noqa: E731
        lambda v: (v, word(v), tf.zeros([2, 3]))))
    tf_reads_weft = read_in("", lambda: other(path("weft")))
    weft_reads_tf = read_in(target, lambda: other(path("tf")))
    check("cache/file_tensorflow_reads_weft_cache", not isinstance(tf_reads_weft, Exception)
          and same(tf_reads_weft, tf_first), str(tf_reads_weft)[:600])
    check("cache/file_weft_reads_tensorflow_cache", not isinstance(weft_reads_tf, Exception)
          and same(weft_reads_tf, tf_first), str(weft_reads_tf)[:600])
    # A cache whose components do not match the pipeline reading it.
    wrong = read_in(target, lambda: cached(path("tf"), tf.data.Dataset.range(3).map(
        lambda v: (tf.cast(v, tf.float64), word(v), tf.zeros([2, 3])))))
    check("cache/file_of_another_pipeline_is_an_error",
          isinstance(wrong, tf.errors.OpError) and "does not equal original dtype" in str(wrong)
          and "cache" in str(wrong), str(wrong)[:400])
    # A directory that does not exist: not created, as in TensorFlow.
    for where, name in (("", "tf"), (target, "weft")):
        e = read_in(where, lambda: cached(path("missing")))
        check(f"cache/file_in_a_missing_directory_{name}",
              isinstance(e, tf.errors.NotFoundError), str(e)[:300])
    # Another writer's lock: TensorFlow's error, naming the lock.
    for where, name in (("", "tf"), (target, "weft")):
        # (TensorFlow's failed writer deletes the lock it found: write it
        # again for each.)
        with open(path("locked") + "_0.lockfile", "w") as f:
            f.write("Created at: 1")
        e = read_in(where, lambda: cached(path("locked")))
        check(f"cache/file_locked_by_another_writer_{name}",
              isinstance(e, tf.errors.AlreadyExistsError)
              and "There appears to be a concurrent caching iterator running" in str(e)
              and "cache_0.lockfile" in str(e), str(e)[:400])
    # A pass stopped early (take) leaves no cache and no lock behind.
    stopped = read_in(target, lambda: one_shot(
        tf.data.Dataset.range(7).cache(path("stopped")).take(3)))
    deadline = time.time() + 10
    left = None
    while time.time() < deadline:
        left = sorted(os.listdir(os.path.dirname(path("stopped"))))
        if not left:
            break
        time.sleep(0.1)
    check("cache/file_partial_pass_leaves_nothing", stopped == [0, 1, 2] and left == [],
          f"{stopped} {left}")
    # Outside the server's --file-root.
    e = read_in(target, lambda: cached("/tmp/weft_not_allowed/cache"))
    check("cache/file_outside_file_root_is_refused",
          isinstance(e, tf.errors.PermissionDeniedError), str(e)[:300])


def test_hostile_sizes(target):
    """Sizes TensorFlow itself would try to allocate, run on Weft only."""
    # A shuffle buffer far larger than memory costs nothing until elements arrive: the
    # order is that of any buffer holding the whole input (TensorFlow itself
    # would allocate the buffer, so it runs the small one).
    weft_run = []
    for where, size in (("", 30), (target, 1 << 62)):
        g = tf1.Graph()
        with g.as_default():
            fetch, init, _ = shuffle_case(20, size, 5, repeat=2)()
            with tf1.Session(where, graph=g) as sess:
                try:
                    weft_run.append(read_all(sess, fetch, init))
                except Exception as e:  # noqa: BLE001 - reported
                    weft_run.append(f"{type(e).__name__}: {str(e)[:300]}")
    check("shuffle/huge_buffer_size_is_lazy", weft_run[0] == weft_run[1], str(weft_run))
    # A padded shape far larger than memory: Weft refuses it (TensorFlow
    # would try to allocate it).
    g = tf1.Graph()
    with g.as_default():
        fetch, _, _ = one_shot(tf.data.Dataset.range(3).map(lambda v: tf.range(v))
                               .padded_batch(2, padded_shapes=[1 << 40]))
        with tf1.Session(target, graph=g) as sess:
            try:
                sess.run(fetch, options=OPTIONS)
                check("padded_batch/huge_padded_shape_refused", False, "no error")
            except tf.errors.InvalidArgumentError as e:
                check("padded_batch/huge_padded_shape_refused",
                      "padded_shapes" in str(e), str(e)[:300])


# ---- interleave ----------------------------------------------------------

def test_interleave(target):
    def inner(v):
        return tf.data.Dataset.range(v * 10, v * 10 + v + 1)
    for cycle, block in ((1, 1), (2, 1), (3, 2), (4, 3), (10, 1)):
        compare(f"interleave/cycle_{cycle}_block_{block}",
                lambda cycle=cycle, block=block: one_shot(
                    tf.data.Dataset.range(1, 6).interleave(
                        inner, cycle_length=cycle, block_length=block)), target)
        compare(f"parallel_interleave/cycle_{cycle}_block_{block}",
                lambda cycle=cycle, block=block: one_shot(
                    tf.data.Dataset.range(1, 6).interleave(
                        inner, cycle_length=cycle, block_length=block,
                        num_parallel_calls=min(cycle, 2), deterministic=True)), target)
    compare("interleave/empty_inner_datasets", lambda: one_shot(
        tf.data.Dataset.range(6).interleave(
            lambda v: tf.data.Dataset.range(v % 3), cycle_length=2, block_length=2)),
        target)
    compare("interleave/captured_and_tuples", lambda: one_shot(
        tf.data.Dataset.from_tensor_slices((np.array([1, 2, 3], np.int64), ["a", "b", "c"])).interleave(
            lambda n, s: tf.data.Dataset.range(n).map(
                lambda i: (i * tf.constant(7, tf.int64), s)),
            cycle_length=2, block_length=1)), target)
    # TF1's tf.data.experimental.parallel_interleave writes
    # LegacyParallelInterleaveDatasetV2, whose order differs from
    # interleave's where an input runs out (lengths v % 4 and 0-3 below).
    rng = np.random.RandomState(4)
    legacy = [(2, 2, 1, 0, 6), (3, 1, None, None, 6), (4, 3, 2, 5, 6), (4, 3, 1, 0, 9),
              (2, 3, None, 1, 7), (5, 2, 1, 2, 3)]
    legacy += [(int(rng.randint(1, 5)), int(rng.randint(1, 4)), None,
                int(rng.randint(0, 4)), int(rng.randint(0, 9))) for _ in range(6)]
    for cycle, block, buffer, prefetch, count in legacy:
        lengths = rng.randint(0, 4, count) if count % 2 else np.arange(count) % 4
        compare(f"legacy_parallel_interleave/cycle_{cycle}_block_{block}_prefetch_{prefetch}_"
                f"lengths_{''.join(map(str, lengths))}",
                lambda cycle=cycle, block=block, buffer=buffer, prefetch=prefetch,
                lengths=lengths: one_shot(
                    tf.data.Dataset.from_tensor_slices(lengths.astype(np.int64) * 100 +
                                                       np.arange(len(lengths))).apply(
                        tf.data.experimental.parallel_interleave(
                            lambda v: tf.data.Dataset.range(v % 100 * 10, v % 100 * 10 + v // 100),
                            cycle_length=cycle, block_length=block, sloppy=False,
                            buffer_output_elements=buffer, prefetch_input_elements=prefetch))),
                target)
    # The older parallel interleaves, as older graphs hold them.
    for op, tuning in (("ParallelInterleaveDatasetV2", {"num_parallel_calls": 2}),
                       ("ParallelInterleaveDatasetV3", {"num_parallel_calls": 2})):
        compare(f"interleave_op/{op}", lambda op=op, tuning=tuning: one_shot(
            raw_interleave(tf.data.Dataset.range(1, 6), inner, op, cycle_length=3,
                           block_length=2, **tuning)), target)
    compare("parallel_interleave/default_determinism", lambda: one_shot(
        tf.data.Dataset.range(1, 8).interleave(
            inner, cycle_length=3, block_length=2, num_parallel_calls=3)), target)
    compare_error("interleave/cycle_length_0", lambda: one_shot(
        tf.data.Dataset.range(3).interleave(inner, cycle_length=0, block_length=1)),
        target, tf.errors.InvalidArgumentError, "cycle_length")
    compare_error("interleave/block_length_negative", lambda: one_shot(
        tf.data.Dataset.range(3).interleave(inner, cycle_length=2, block_length=-2)),
        target, tf.errors.InvalidArgumentError, "block_length")


def main():
    tf1.disable_eager_execution()
    # Files only under WORK (the file caches).
    cluster = local_cluster.Cluster(WEFT, WORK, {"local": 1},
                                    server_flags=("--file-root", WORK))
    try:
        target = cluster.target("local", 0)
        for test in TESTS:
            test(target)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("dataset transform test ran to the end", False, f"{type(e).__name__}: {e}")
        print(clip(cluster.log("local", 0), 500, 3000))
    finally:
        cluster.close()
    return summary_exit_code()


TESTS = [test_shuffle, test_prefetch_and_parallel_map, test_batching_and_selection,
         test_interleave, test_hostile_sizes]

if __name__ == "__main__":
    sys.exit(main())
