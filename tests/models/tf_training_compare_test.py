"""Replays Weft-built training graphs in TensorFlow, step by step, and
checks Weft's optimizers against TensorFlow's own v1 optimizers.

For each (model, optimizer, variable kind), dump_training_graph writes the
GraphDef and Weft's per-step batches, losses and accuracies; this script
imports the GraphDef, runs "init" (the seeded initializers give the same
weights in both), then feeds the same batches to "train_op" and compares
the loss and accuracy of every step. Prints "SKIPPED: ..." (exit 0) without
TensorFlow.

Each (model, optimizer) runs with resource and with ref variables. Resource
graphs are compared with TensorFlow at every step. Ref graphs are compared
at step 0 only: TensorFlow's ref variables are read through Identity nodes
that alias the variable's buffer, which the Apply* ops then update in
place, so within one step a gradient may read already-updated weights and
its later steps depend on thread timing. Weft copies on write, so instead
its ref losses must equal its resource losses at every step (the same
update rule on the same numbers).
"""
import os
import subprocess
import sys
import tempfile

CASES = [
    ("mlp", "sgd"),
    ("mlp", "momentum"),
    ("mlp", "nesterov"),
    ("mlp", "adam"),
    ("cnn", "sgd"),
    ("cnn", "adam"),
    ("transformer", "momentum"),
    ("transformer", "adam"),
]
STEPS = 5


def read_values(path):
    steps = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            steps.setdefault(int(parts[1]), {})[parts[0]] = parts[2:]
    return [steps[i] for i in sorted(steps)]


def run_case(tf, np, dump, tmp, model, optimizer, kind, compare_steps):
    graph_path = os.path.join(tmp, "%s_%s_%s.pb" % (model, optimizer, kind))
    values_path = graph_path + ".txt"
    subprocess.run([dump, model, optimizer, kind, str(STEPS), graph_path,
                    values_path], check=True)
    graph_def = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    steps = read_values(values_path)
    if len(steps) != STEPS:
        print("MISSING %s/%s/%s: weft ran %d steps" % (model, optimizer, kind,
                                                       len(steps)))
        return 1, steps
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    failures = 0
    with tf.compat.v1.Session(graph=graph) as sess:
        sess.run("init")
        for i, step in enumerate(steps[:compare_steps]):
            images = np.array(step["images"], dtype=np.float32).reshape(
                graph.get_tensor_by_name("images:0").shape)
            labels = np.array(step["labels"], dtype=np.int64)
            loss, acc, _ = sess.run(
                ["loss:0", "accuracy:0", "train_op"],
                {"images:0": images, "labels:0": labels})
            want_loss = float(step["loss"][0])
            want_acc = float(step["accuracy"][0])
            ok = (np.isclose(loss, want_loss, rtol=2e-4, atol=1e-5) and
                  np.isclose(acc, want_acc))
            if not ok:
                print("MISMATCH %s/%s/%s step %d: tensorflow loss %.7g acc %g, "
                      "weft loss %.7g acc %g" % (model, optimizer, kind, i,
                                                 loss, acc, want_loss,
                                                 want_acc))
                failures += 1
    if not failures:
        print("ok %s/%s/%s: %d steps match tensorflow, weft losses %s" % (
            model, optimizer, kind, compare_steps,
            " ".join(s["loss"][0] for s in steps)))
    return failures, steps


def tf_native_mlp(tf, np, dump, tmp, optimizer):
    """The MLP rebuilt with TensorFlow's own layers ops and v1 optimizer
    (tf.compat.v1.train.*Optimizer), from Weft's initial weights: its
    losses must follow Weft's step by step."""
    graph_path = os.path.join(tmp, "native_%s.pb" % optimizer)
    values_path = graph_path + ".txt"
    subprocess.run([dump, "mlp", optimizer, "resource", str(STEPS),
                    graph_path, values_path], check=True)
    steps = read_values(values_path)
    graph_def = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph_def.ParseFromString(f.read())
    names = ["hidden1/w", "hidden1/b", "hidden2/w", "hidden2/b", "output/w",
             "output/b"]
    imported = tf.Graph()
    with imported.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=imported) as sess:
        sess.run("init")
        initial = sess.run(["mlp/%s/Read:0" % n for n in names])
    images_shape = [int(d) for d in
                    imported.get_tensor_by_name("images:0").shape]
    v1 = tf.compat.v1
    native = tf.Graph()
    with native.as_default():
        images = v1.placeholder(tf.float32, images_shape)
        labels = v1.placeholder(tf.int64, [images_shape[0]])
        w = [v1.get_variable(n.replace("/", "_"), initializer=value,
                             use_resource=True)
             for n, value in zip(names, initial)]
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(images, w[0]), w[1]))
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w[2]), w[3]))
        logits = tf.nn.bias_add(tf.matmul(h, w[4]), w[5])
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        opt = {
            "sgd": lambda: v1.train.GradientDescentOptimizer(0.1),
            "momentum": lambda: v1.train.MomentumOptimizer(0.1, 0.9),
            "nesterov": lambda: v1.train.MomentumOptimizer(
                0.1, 0.9, use_nesterov=True),
            "adam": lambda: v1.train.AdamOptimizer(0.01),
        }[optimizer]()
        step_var = v1.train.get_or_create_global_step()
        train = opt.minimize(loss, global_step=step_var)
        init = v1.global_variables_initializer()
    failures = 0
    with v1.Session(graph=native) as sess:
        sess.run(init)
        for i, step in enumerate(steps):
            feed = {images: np.array(step["images"], np.float32).reshape(
                        images_shape),
                    labels: np.array(step["labels"], np.int64)}
            got, _ = sess.run([loss, train], feed)
            want = float(step["loss"][0])
            if not np.isclose(got, want, rtol=2e-4, atol=1e-5):
                print("MISMATCH tf.compat.v1.train %s step %d: tensorflow %.7g,"
                      " weft %.7g" % (optimizer, i, got, want))
                failures += 1
        if sess.run(step_var) != len(steps):
            print("MISMATCH global step")
            failures += 1
    if not failures:
        print("ok mlp with TensorFlow's own %s optimizer: %d steps match" %
              (optimizer, len(steps)))
    return failures


def main():
    try:
        import numpy as np
        import tensorflow as tf
    except ImportError:
        print("SKIPPED: tensorflow not installed")
        return 0
    dump = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="weft_models_")
    failures = 0
    for model, optimizer in CASES:
        f, resource = run_case(tf, np, dump, tmp, model, optimizer,
                               "resource", STEPS)
        failures += f
        f, ref = run_case(tf, np, dump, tmp, model, optimizer, "ref", 1)
        failures += f
        for i, (a, b) in enumerate(zip(ref, resource)):
            if not np.isclose(float(a["loss"][0]), float(b["loss"][0]),
                              rtol=1e-6):
                print("MISMATCH %s/%s step %d: weft ref loss %s, resource %s"
                      % (model, optimizer, i, a["loss"][0], b["loss"][0]))
                failures += 1
    for optimizer in ("sgd", "momentum", "nesterov", "adam"):
        failures += tf_native_mlp(tf, np, dump, tmp, optimizer)
    if failures:
        print("FAILED: %d comparisons differ" % failures)
        return 1
    print("PASSED: %d models x optimizers match TensorFlow for %d steps "
          "(resource variables; ref variables at step 0 and against Weft's "
          "resource run)" % (len(CASES), STEPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
