"""Conformance: TensorFlow 1.x input queues, run by `weft run` against
TensorFlow 2.21 on the same GraphDef, value for value.

- A RandomShuffleQueue with graph and op seeds and min_after_dequeue,
  carrying (int32, string) pairs: the same elements in the same order two
  dequeue_many steps in (TensorFlow's shuffle, bit for bit).
- A PaddingFIFOQueue of variable-length vectors: dequeue_many pads each
  batch to its longest.
- A FIFOQueue of strings, closed: dequeue_up_to returns what is left, and
  is_closed says so.
- A PriorityQueue: lowest priority first, ties in TensorFlow's order.
- A StagingArea: put, peek, get and size.
- File names built with string Add, broadcast.
- A SparseConditionalAccumulator (what SyncReplicasOptimizer aggregates
  embedding gradients in): the rows, values and shape a take gives after
  three gradients and a stale one.

usage: queue_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("queue_ops")
from tensorflow.python.ops import data_flow_ops  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()



def compare(case, graph, fetches, init=(), steps=1):
    """The last of `steps` runs of `fetches` after the init ops, in order, in
    TensorFlow and in weft: equal."""
    compare_tf1_graph(WEFT, WORK, case, graph, fetches, init, steps, 0.0, 0.0)


# --- RandomShuffleQueue: TensorFlow's order, two steps in.
g = tf1.Graph()
with g.as_default():
    tf1.set_random_seed(5)
    q = tf1.RandomShuffleQueue(capacity=50, min_after_dequeue=5,
                               dtypes=[tf.int32, tf.string], shapes=[[], []],
                               seed=7, name="shuffle")
    ids = tf1.constant(list(range(20)), tf.int32)
    names = tf1.constant([f"item{i}" for i in range(20)])
    q.enqueue_many([ids, names], name="fill")
    got = q.dequeue_many(4)
    tf1.identity(got[0], name="ids")
    tf1.identity(got[1], name="names")
    tf1.identity(q.size(), name="size")
compare("random_shuffle_queue", g, ["ids", "names", "size"], init=["fill"], steps=2)

# --- PaddingFIFOQueue: each batch padded to its longest vector.
g = tf1.Graph()
with g.as_default():
    q = tf1.PaddingFIFOQueue(capacity=10, dtypes=[tf.int64, tf.string],
                             shapes=[[None], [None]], name="padding")
    inits = []
    for i, n in enumerate([1, 3, 2, 2]):
        inits.append(q.enqueue([tf1.constant(list(range(1, n + 1)), tf.int64),
                                tf1.constant(["w"] * n)], name=f"put{i}").name)
    got = q.dequeue_many(2)
    tf1.identity(got[0], name="padded")
    tf1.identity(got[1], name="padded_strings")
compare("padding_fifo_queue", g, ["padded", "padded_strings"], init=inits, steps=2)

# --- FIFOQueue of strings, closed: dequeue_up_to gives what is left.
g = tf1.Graph()
with g.as_default():
    q = tf1.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[[]], name="files")
    q.enqueue_many([tf1.constant(["a.tfrecord", "b.tfrecord", "c.tfrecord",
                                  "d.tfrecord", "e.tfrecord"])], name="fill")
    q.close(name="close")
    tf1.identity(q.dequeue_up_to(3), name="batch")
    tf1.identity(q.is_closed(), name="closed")
compare("fifo_queue_up_to", g, ["batch", "closed"], init=["fill", "close"], steps=2)

# --- PriorityQueue: lowest priority first, equal priorities in TensorFlow's
# heap order, with (string, float) components; dequeue and dequeue_many.
g = tf1.Graph()
with g.as_default():
    q = tf1.PriorityQueue(capacity=20, types=[tf.string, tf.float32], shapes=[[], [2]],
                          name="priority")
    pri = tf1.constant([5, 1, 3, 1, 9, 3, 0, 1], tf.int64)
    names = tf1.constant([f"job{i}" for i in range(8)])
    vals = tf1.constant(np.arange(16, dtype=np.float32).reshape(8, 2))
    fill = q.enqueue_many([pri, names, vals], name="fill")
    one = q.enqueue([tf1.constant(2, tf.int64), tf1.constant("late"),
                     tf1.constant([7.0, 7.0])], name="one")
    first = q.dequeue()
    tf1.identity(first[0], name="p0")
    tf1.identity(first[1], name="n0")
    batch = q.dequeue_many(3)
    tf1.identity(batch[0], name="pb")
    tf1.identity(batch[1], name="nb")
    tf1.identity(batch[2], name="vb")
compare("priority_queue", g, ["p0", "n0"], init=[fill.name, one.name])
compare("priority_queue_many", g, ["pb", "nb", "vb"], init=[fill.name, one.name],
        steps=2)

# --- StagingArea: put three tuples, peek, take the oldest, count; two
# steps in (each step puts one more and takes one).
g = tf1.Graph()
with g.as_default():
    area = data_flow_ops.StagingArea([tf.float32, tf.string], shapes=[[2], []],
                                     capacity=10, memory_limit=1 << 20,
                                     shared_name="staging")
    puts = [area.put([tf1.constant([float(i), -float(i)]), tf1.constant(f"b{i}")],
                     name=f"put{i}").name for i in range(3)]
    more = area.put([tf1.constant([9.0, 9.0]), tf1.constant("more")], name="more")
    peeked = area.peek(1)
    with tf1.control_dependencies([more]):
        got = area.get()
    tf1.identity(peeked[0], name="peek_v")
    tf1.identity(peeked[1], name="peek_s")
    tf1.identity(got[0], name="got_v")
    tf1.identity(got[1], name="got_s")
    with tf1.control_dependencies([got[0]]):
        tf1.identity(area.size(), name="size")
compare("staging_area", g, ["got_v", "got_s", "size"], init=puts, steps=2)
compare("staging_area_peek", g, ["peek_v", "peek_s"], init=puts)

# --- File names as TF1 input pipelines build them: string Add, broadcast.
g = tf1.Graph()
with g.as_default():
    dirs = tf1.constant([["data/"], ["eval/"]])          # [2, 1]
    names = tf1.constant(["a", "bb", ""])                # [3]
    tf1.identity(tf.add(tf.add(dirs, names), ".tfrecord"), name="paths")
compare("string_add", g, ["paths"])

# --- SparseConditionalAccumulator: IndexedSlices gradients merged row by
# row in TensorFlow's order (a duplicate index within one gradient stays a
# row of its own), a stale gradient dropped, the mean per row; float and
# double, MEAN and SUM, a known, a partial, an unknown and a rank-0 shape.
for dtype, reduction, shape in ((tf.float32, "MEAN", [None, 2]),
                                (tf.float64, "SUM", None),
                                (tf.float32, "MEAN", [6, 2]),
                                (tf.float32, "MEAN", [])):  # SyncReplicasOptimizer's
    g = tf1.Graph()
    with g.as_default():
        acc = data_flow_ops.SparseConditionalAccumulator(
            dtype, shape=shape, reduction_type=reduction, name="acc")
        np_type = dtype.as_numpy_dtype
        applies = [
            acc.apply_grad([3, 1, 3], np.array([[1, 2], [3, 4], [5, 6]], np_type),
                           local_step=0, grad_shape=[6, 2], name="a1"),
            acc.apply_grad([0, 3, 5], np.array([[10, 20], [30, 40], [1, 1]], np_type),
                           local_step=0, name="a2"),
            acc.apply_grad([4, 0], np.array([[.5, .25], [2, 2]], np_type),
                           local_step=0, name="a3"),
            acc.apply_grad([1], np.array([[7, 8]], np_type), local_step=-1,
                           name="stale"),
        ]
        taken = acc.take_indexed_slices_grad(3)
        tf1.identity(taken.indices, name="indices")
        tf1.identity(taken.values, name="values")
        tf1.identity(taken.dense_shape, name="dense_shape")
        with tf1.control_dependencies([taken.values]):
            tf1.identity(acc.num_accumulated(), name="left")  # after the take
    compare(f"sparse_accumulator_{dtype.name}_{reduction}_{shape}", g,
            ["indices", "values", "dense_shape", "left"],
            init=[a.name for a in applies])

sys.exit(summary_exit_code())
