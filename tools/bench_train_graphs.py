"""Training graphs for bench_vs_tf.py, written with tf.compat.v1 as a user
would write them (legacy ref variables, `init` initialises them, `train_op`
runs one optimizer step). Initial values are seeded NumPy arrays, so both
systems start from the same weights.

Each builder returns (GraphDef, feeds) where feeds maps a placeholder name
to the NumPy array fed to it on every step.
"""
import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1

MLP_SIZES = (784, 256, 256, 10)


def _optimizer(name):
    if name == "sgd":
        return tf1.train.GradientDescentOptimizer(0.01)
    if name == "adam":
        return tf1.train.AdamOptimizer(1e-3)
    raise ValueError(f"unknown optimizer {name}")


def _dense(rng, x, n_in, n_out, name, relu):
    w = tf1.Variable((rng.randn(n_in, n_out) * np.sqrt(2.0 / n_in)).astype(np.float32),
                     name=f"{name}_w")
    b = tf1.Variable(np.zeros(n_out, np.float32), name=f"{name}_b")
    y = tf.nn.bias_add(tf.matmul(x, w), b)
    return tf.nn.relu(y) if relu else y


def _mlp_logits(rng, x, sizes, prefix=""):
    h = x
    for i in range(len(sizes) - 1):
        last = i == len(sizes) - 2
        h = _dense(rng, h, sizes[i], sizes[i + 1], f"{prefix}fc{i}", relu=not last)
    return h


def _data(rng, batch, shape, classes):
    x = rng.rand(batch, *shape).astype(np.float32)
    y = rng.randint(0, classes, size=batch).astype(np.int32)
    return x, y


def _xent(logits, labels):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))


def mlp(batch=128, optimizer="sgd", sizes=MLP_SIZES):
    """784 -> 256 -> 256 -> 10, ReLU, sparse softmax cross-entropy."""
    rng = np.random.RandomState(0)
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [batch, sizes[0]], name="x")
        labels = tf1.placeholder(tf.int32, [batch], name="labels")
        loss = _xent(_mlp_logits(rng, x, sizes), labels)
        _optimizer(optimizer).minimize(loss, name="train_op")
        tf1.global_variables_initializer()
    xv, yv = _data(rng, batch, (sizes[0],), sizes[-1])
    return g.as_graph_def(), {"x": xv, "labels": yv}


def cnn(batch=32, optimizer="sgd"):
    """28x28x1 -> conv5x5x16 -> pool -> conv5x5x32 -> pool -> fc128 -> fc10,
    NHWC, SAME padding, ReLU after every conv and the hidden dense layer."""
    rng = np.random.RandomState(0)
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [batch, 28, 28, 1], name="x")
        labels = tf1.placeholder(tf.int32, [batch], name="labels")
        h = x
        for i, (c_in, c_out) in enumerate(((1, 16), (16, 32))):
            w = tf1.Variable((rng.randn(5, 5, c_in, c_out) *
                              np.sqrt(2.0 / (25 * c_in))).astype(np.float32),
                             name=f"conv{i}_w")
            b = tf1.Variable(np.zeros(c_out, np.float32), name=f"conv{i}_b")
            h = tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME")
            h = tf.nn.relu(tf.nn.bias_add(h, b))
            h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        h = tf.reshape(h, [batch, 7 * 7 * 32])
        logits = _mlp_logits(rng, h, (7 * 7 * 32, 128, 10))
        _optimizer(optimizer).minimize(_xent(logits, labels), name="train_op")
        tf1.global_variables_initializer()
    xv, yv = _data(rng, batch, (28, 28, 1), 10)
    return g.as_graph_def(), {"x": xv, "labels": yv}


def replicated_mlp(towers, devices, batch=256, sizes=MLP_SIZES):
    """In-graph data parallelism: the global batch is split into `towers`
    slices on /cpu:0; tower i runs on devices[i] with the shared variables
    (on /cpu:0); the gradients are averaged on /cpu:0 and applied once (SGD).
    With every entry of `devices` the same, it is the same graph on one
    device, which isolates what partitioning and transfers cost."""
    rng = np.random.RandomState(0)
    g = tf1.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf1.placeholder(tf.float32, [batch, sizes[0]], name="x")
            labels = tf1.placeholder(tf.int32, [batch], name="labels")
            params = []
            for i in range(len(sizes) - 1):
                w = tf1.Variable((rng.randn(sizes[i], sizes[i + 1]) *
                                  np.sqrt(2.0 / sizes[i])).astype(np.float32),
                                 name=f"fc{i}_w")
                b = tf1.Variable(np.zeros(sizes[i + 1], np.float32), name=f"fc{i}_b")
                params += [w, b]
            xs = tf.split(x, towers, axis=0)
            ys = tf.split(labels, towers, axis=0)
        opt = tf1.train.GradientDescentOptimizer(0.01)
        tower_grads = []
        for t in range(towers):
            with tf.device(devices[t]), tf1.name_scope(f"tower{t}"):
                h = xs[t]
                for i in range(len(sizes) - 1):
                    h = tf.nn.bias_add(tf.matmul(h, params[2 * i]), params[2 * i + 1])
                    if i < len(sizes) - 2:
                        h = tf.nn.relu(h)
                loss = _xent(h, ys[t])
                tower_grads.append(opt.compute_gradients(loss, var_list=params))
        with tf.device("/cpu:0"):
            averaged = []
            for per_var in zip(*tower_grads):
                grads = [gv[0] for gv in per_var]
                mean = grads[0] if towers == 1 else tf.add_n(grads) / float(towers)
                averaged.append((mean, per_var[0][1]))
            opt.apply_gradients(averaged, name="train_op")
        tf1.global_variables_initializer()
    xv, yv = _data(rng, batch, (sizes[0],), sizes[-1])
    return g.as_graph_def(), {"x": xv, "labels": yv}


def cnn_kernels(batch=32):
    """The CNN step's heavy kernels alone, at its shapes: {name: GraphDef},
    each graph's `target` op runs one kernel on constant inputs."""
    rng = np.random.RandomState(0)

    def const(shape):
        return tf.identity(tf.constant(rng.randn(*shape).astype(np.float32)))

    b = batch
    one = [1, 1, 1, 1]
    cases = {
        "Conv2D 28x28x1 -> 16": lambda: tf.nn.conv2d(
            const([b, 28, 28, 1]), const([5, 5, 1, 16]), one, "SAME"),
        "Conv2D 14x14x16 -> 32": lambda: tf.nn.conv2d(
            const([b, 14, 14, 16]), const([5, 5, 16, 32]), one, "SAME"),
        "Conv2DBackpropInput 28x28x1 <- 16": lambda: tf.raw_ops.Conv2DBackpropInput(
            input_sizes=[b, 28, 28, 1], filter=const([5, 5, 1, 16]),
            out_backprop=const([b, 28, 28, 16]), strides=one, padding="SAME"),
        "Conv2DBackpropInput 14x14x16 <- 32": lambda: tf.raw_ops.Conv2DBackpropInput(
            input_sizes=[b, 14, 14, 16], filter=const([5, 5, 16, 32]),
            out_backprop=const([b, 14, 14, 32]), strides=one, padding="SAME"),
        "Conv2DBackpropFilter 28x28x1 -> 16": lambda: tf.raw_ops.Conv2DBackpropFilter(
            input=const([b, 28, 28, 1]), filter_sizes=[5, 5, 1, 16],
            out_backprop=const([b, 28, 28, 16]), strides=one, padding="SAME"),
        "Conv2DBackpropFilter 14x14x16 -> 32": lambda: tf.raw_ops.Conv2DBackpropFilter(
            input=const([b, 14, 14, 16]), filter_sizes=[5, 5, 16, 32],
            out_backprop=const([b, 14, 14, 32]), strides=one, padding="SAME"),
        "MaxPoolGrad 28x28x16": lambda: (lambda x: tf.raw_ops.MaxPoolGrad(
            orig_input=x, orig_output=tf.nn.max_pool2d(x, 2, 2, "VALID"),
            grad=const([b, 14, 14, 16]), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
            padding="VALID"))(const([b, 28, 28, 16])),
        "ReluGrad 28x28x16": lambda: tf.raw_ops.ReluGrad(
            gradients=const([b, 28, 28, 16]), features=const([b, 28, 28, 16])),
        "BiasAdd 28x28x16": lambda: tf.nn.bias_add(const([b, 28, 28, 16]), const([16])),
        "MaxPool 28x28x16": lambda: tf.nn.max_pool2d(const([b, 28, 28, 16]), 2, 2, "VALID"),
    }
    graphs = {}
    for name, build in cases.items():
        g = tf1.Graph()
        with g.as_default():
            tf.group(build(), name="target")
        graphs[name] = g.as_graph_def()
    return graphs
