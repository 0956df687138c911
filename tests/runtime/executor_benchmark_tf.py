#!/usr/bin/env python3
"""TensorFlow's per-node overhead on the GraphDefs of executor_benchmark.cc.

    WEFT_BENCH_DUMP_DIR=/tmp/g bazel-bin/tests/runtime/executor_benchmark \
        --benchmark_filter=NONE
    python3 tests/runtime/executor_benchmark_tf.py /tmp/g

Runs each graph with tf.compat.v1.Session (TensorFlow's classic executor, the
one Weft's mirrors), with Grappler and the classic graph optimizer turned off
so constant folding and common-subexpression elimination do not collapse the
10,000 trivial nodes. Prints the median step time over several runs, divided
by 10,000, in nanoseconds per node.
"""
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

NODES = 10000
CASES = [("chain", ["n%d:0" % (NODES - 1)], []),
         ("fan_addn", ["sum:0"], []),
         ("fan_noop", [], ["done"])]


def config():
    c = tf.compat.v1.ConfigProto()
    c.graph_options.rewrite_options.disable_meta_optimizer = True
    opts = c.graph_options.optimizer_options
    opts.opt_level = tf.compat.v1.OptimizerOptions.L0
    opts.do_constant_folding = False
    opts.do_common_subexpression_elimination = False
    opts.do_function_inlining = False
    return c


def measure(path, fetches, targets, runs=7, steps=20):
    graph_def = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    to_run = [graph.get_tensor_by_name(n) for n in fetches] + \
        [graph.get_operation_by_name(n) for n in targets]
    with tf.compat.v1.Session(graph=graph, config=config()) as sess:
        for _ in range(5):
            sess.run(to_run)
        medians = []
        for _ in range(runs):
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                sess.run(to_run)
                times.append(time.perf_counter() - start)
            medians.append(statistics.median(times))
    return statistics.median(medians) / NODES * 1e9


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp/weft_bench"
    print("TensorFlow %s, tf.compat.v1.Session, optimizers off" % tf.__version__)
    for name, fetches, targets in CASES:
        ns = measure(os.path.join(directory, name + ".pb"), fetches, targets)
        print("%-10s %8.1f ns/node" % (name, ns))


if __name__ == "__main__":
    main()
