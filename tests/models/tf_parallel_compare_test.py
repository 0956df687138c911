"""Replays Weft's multi-device training graphs in TensorFlow: in-graph
replication (K towers on K CPU devices, parameters on CPU:0) and model
parallelism (layers split over K CPU devices).

For each case dump_training_graph builds the graph, trains it in Weft in a
session with K CPU devices and writes every step's batch, loss and
accuracy; TensorFlow imports the same GraphDef into a session with
device_count {"CPU": K} and without soft placement (so every device request
must be honoured), runs "init", feeds the same batches to "train_op" and
must see the same loss and accuracy at every step. It also checks that
TensorFlow split the graph into K partitions, so the graph really spans the
devices. Prints "SKIPPED: ..." (exit 0) without TensorFlow.
"""
import os
import subprocess
import sys
import tempfile

from tf_training_compare_test import read_values

CASES = [
    ("mlp", "sgd", "in-graph", 2),
    ("mlp", "adam", "in-graph", 4),
    ("cnn", "momentum", "in-graph", 2),
    ("transformer", "sgd", "in-graph", 2),
    ("mlp", "adam", "model-parallel", 3),
    ("cnn", "sgd", "model-parallel", 2),
]
STEPS = 20


def run_case(tf, np, dump, tmp, model, optimizer, mode, k):
    name = "%s/%s/%s/%d" % (model, optimizer, mode, k)
    graph_path = os.path.join(tmp, name.replace("/", "_") + ".pb")
    values_path = graph_path + ".txt"
    subprocess.run([dump, model, optimizer, "resource", str(STEPS),
                    graph_path, values_path, mode, str(k)], check=True)
    steps = read_values(values_path)
    if len(steps) != STEPS:
        print("MISSING %s: weft ran %d steps" % (name, len(steps)))
        return 1
    graph_def = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(device_count={"CPU": k},
                                      allow_soft_placement=False)
    failures = 0
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        sess.run("init")
        shape = graph.get_tensor_by_name("images:0").shape
        for i, step in enumerate(steps):
            feed = {"images:0": np.array(step["images"], np.float32).reshape(
                        shape),
                    "labels:0": np.array(step["labels"], np.int64)}
            options = tf.compat.v1.RunOptions(output_partition_graphs=True)
            metadata = tf.compat.v1.RunMetadata()
            loss, acc, _ = sess.run(["loss:0", "accuracy:0", "train_op"],
                                    feed, options=options,
                                    run_metadata=metadata)
            if i == 0 and len(metadata.partition_graphs) != k:
                print("MISMATCH %s: tensorflow ran %d partitions, want %d" %
                      (name, len(metadata.partition_graphs), k))
                failures += 1
            want_loss = float(step["loss"][0])
            want_acc = float(step["accuracy"][0])
            if not (np.isclose(loss, want_loss, rtol=2e-4, atol=1e-5) and
                    np.isclose(acc, want_acc)):
                print("MISMATCH %s step %d: tensorflow loss %.7g acc %g, "
                      "weft loss %.7g acc %g" % (name, i, loss, acc,
                                                 want_loss, want_acc))
                failures += 1
    if not failures:
        print("ok %s: %d steps match tensorflow (losses %s ... %s)" % (
            name, STEPS, steps[0]["loss"][0], steps[-1]["loss"][0]))
    return failures


def main():
    try:
        import numpy as np
        import tensorflow as tf
    except ImportError:
        print("SKIPPED: tensorflow not installed")
        return 0
    dump = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="weft_parallel_")
    failures = 0
    for case in CASES:
        failures += run_case(tf, np, dump, tmp, *case)
    if failures:
        print("FAILED: %d comparisons differ" % failures)
        return 1
    print("PASSED: %d multi-device graphs train identically in TensorFlow "
          "for %d steps" % (len(CASES), STEPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
