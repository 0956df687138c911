"""Runs a GraphDef built by Weft's C++ graph builder in TensorFlow.

The dump binary (argv[1]: dump_mlp_graph, dump_grad_graph) writes a graph
with a "loss" and Weft's symbolic gradients of it as a GraphDef, plus the
values Weft computed (tests/builder/dump_graph_values.h); this script
imports the GraphDef with tf.compat.v1.import_graph_def, fetches the same
tensors, and also compares Weft's gradients with TensorFlow's own
tf.gradients of "loss". Prints "SKIPPED: tensorflow not installed" (exit 0)
without TF.
"""
import os
import subprocess
import sys
import tempfile


def main():
    try:
        import numpy as np
        import tensorflow as tf
    except ImportError:
        print("SKIPPED: tensorflow not installed")
        return 0
    dump = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="weft_builder_")
    graph_path = os.path.join(tmp, "graph.pb")
    values_path = os.path.join(tmp, "weft_values.txt")
    subprocess.run([dump, graph_path, values_path], check=True)

    graph_def = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    weft = {}
    grads = []  # (x, Weft's gradient tensor of loss w.r.t. x)
    with open(values_path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "grad":
                grads.append((parts[1], parts[2]))
            else:
                weft[parts[0]] = np.array([float(v) for v in parts[1:]])

    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
        # TensorFlow's own symbolic gradients of the same loss.
        tf_grads = tf.compat.v1.gradients(
            graph.get_tensor_by_name("loss:0"),
            [graph.get_tensor_by_name(x) for x, _ in grads])
        # A gather's gradient comes as IndexedSlices: compare it densely.
        tf_grads = [tf.convert_to_tensor(g) if g is not None else None
                    for g in tf_grads]
        missing = [x for (x, _), g in zip(grads, tf_grads) if g is None]
        if missing:
            print("FAILED: tensorflow has no gradient of loss for %s" %
                  missing)
            return 1
    with tf.compat.v1.Session(graph=graph) as sess:
        names = list(weft)
        got = sess.run(names)
        got_tf_grads = sess.run(tf_grads)
    for (x, g), value in zip(grads, got_tf_grads):
        # Compared as "tf.gradients(loss, x)" against Weft's gradient g.
        names.append("tf.gradients(loss, %s) vs %s" % (x, g))
        got.append(value)
        weft[names[-1]] = weft[g]
    failures = 0
    for name, value in zip(names, got):
        value = np.asarray(value, dtype=np.float64).reshape(-1)
        if value.shape != weft[name].shape or not np.allclose(
                value, weft[name], rtol=1e-4, atol=1e-5):
            print("MISMATCH %s: tensorflow %s, weft %s" %
                  (name, value, weft[name]))
            failures += 1
        else:
            print("ok %s (%d values)" % (name, value.size))
    if failures:
        print("FAILED: %d of %d tensors differ" % (failures, len(names)))
        return 1
    print("PASSED: %d tensors match TensorFlow" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
