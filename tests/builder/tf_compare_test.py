"""Runs a GraphDef built by Weft's C++ graph builder in TensorFlow.

The dump binary (argv[1]: dump_mlp_graph, dump_grad_graph,
dump_control_flow_graph) writes a graph with a "loss" and Weft's symbolic
gradients of it as a GraphDef, plus the values Weft computed
(tests/builder/dump_graph_values.h); this script imports the GraphDef with
tf.compat.v1.import_graph_def, fetches the same tensors, and also compares
Weft's gradients with TensorFlow's own tf.gradients of "loss" for each
"grad" line (dump_control_flow_graph writes none: TensorFlow cannot
differentiate an imported v1 while loop, so there TensorFlow runs Weft's
gradient graph). Prints "SKIPPED: tensorflow not installed" (exit 0)
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
    grads = []  # (x, Weft's gradient tensor of y w.r.t. x, y)
    with open(values_path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "grad":
                grads.append((parts[1], parts[2], parts[3]))
            else:
                weft[parts[0]] = np.array([float(v) for v in parts[1:]])

    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
        # TensorFlow's own symbolic gradients of the same ys, one
        # tf.gradients call per y. None (no path from x to y) means zeros.
        tf_grads = []
        for y in dict.fromkeys(y for _, _, y in grads):
            xs = [x for x, _, gy in grads if gy == y]
            ts = tf.compat.v1.gradients(
                graph.get_tensor_by_name(y),
                [graph.get_tensor_by_name(x) for x in xs])
            for x, t in zip(xs, ts):
                if t is None:
                    t = tf.zeros_like(graph.get_tensor_by_name(x))
                # A gather's gradient comes as IndexedSlices: make it dense.
                tf_grads.append((x, y, tf.convert_to_tensor(t)))
    order = {(x, y): g for x, g, y in grads}
    with tf.compat.v1.Session(graph=graph) as sess:
        names = list(weft)
        got = sess.run(names)
        got_tf_grads = sess.run([t for _, _, t in tf_grads])
    for (x, y, _), value in zip(tf_grads, got_tf_grads):
        g = order[(x, y)]
        names.append("tf.gradients(%s, %s) vs %s" % (y, x, g))
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
