#!/usr/bin/env python3
"""Writes TensorFlow 2.21 training graphs and TF's own results for them.

usage: tf_training_graphs.py OUT_DIR [--ops-only]

Every case is a GraphDef built with tf.compat.v1 in graph mode (float32,
fixed data made here with numpy seeds, no random ops) plus a sequence of
Session.run calls: an init run, N training steps with the same feeds, and a
final run that fetches the variables. For each run the script records the
feeds, fetches, targets and the tensors TF returned. Broken variants record
the error a run must fail with instead, followed by a good run that must
still work in the same session.

--ops-only prints the sorted set of op types the graphs use and exits (to
find what Weft lacks).

Output: OUT_DIR/manifest.txt, one directive a line (names never hold
spaces):
  case NAME GRAPH_FILE        starts a case; GRAPH_FILE is a binary GraphDef
  create_error CODE TEXT...   Session::Create must fail: CODE and TEXT
  run                         starts a Session::Run
  feed TENSOR FILE            FILE: binary TensorProto
  fetch TENSOR FILE           FILE: TF's value (binary TensorProto)
  target NODE
  error CODE TEXT...          this run must fail with CODE, message has TEXT
  end                         ends the run
  endcase
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = sys.argv[1]
OPS_ONLY = "--ops-only" in sys.argv[2:]
os.makedirs(OUT, exist_ok=True)
manifest = []
all_ops = set()
STEPS = 3


def tname(t):
    return t if isinstance(t, str) else t.name


def save_tensor(path, value):
    with open(os.path.join(OUT, path), "wb") as f:
        f.write(tf1.make_tensor_proto(np.asarray(value)).SerializeToString())


class Case:
    """One graph and the runs made on it (in TF now, in Weft later)."""

    def __init__(self, name, graph, graph_def=None):
        self.name, self.graph = name, graph
        self.graph_def = graph_def or graph.as_graph_def()
        all_ops.update(n.op for n in self.graph_def.node)
        self.file = name + ".pb"
        with open(os.path.join(OUT, self.file), "wb") as f:
            f.write(self.graph_def.SerializeToString())
        manifest.append(f"case {name} {self.file}")
        self.sess = tf1.Session(graph=graph)
        self.runs = 0

    def run(self, fetches=(), targets=(), feeds=None):
        """Runs in TF and records the run with TF's results."""
        feeds = feeds or {}
        g = self.graph
        feed_dict = {g.get_tensor_by_name(tname(k)): v for k, v in feeds.items()}
        ops = [g.get_operation_by_name(tname(t)) for t in targets]
        values = self.sess.run([tname(f) for f in fetches] + ops, feed_dict)
        self._record(fetches, targets, feeds, values[:len(fetches)])
        return values[:len(fetches)]

    def run_error(self, code, text, fetches=(), targets=(), feeds=None):
        """Records a run that must fail (not run in TF)."""
        self._record(fetches, targets, feeds or {}, None, (code, text))

    def _record(self, fetches, targets, feeds, values, error=None):
        manifest.append("run")
        for k, v in feeds.items():
            path = f"{self.name}.r{self.runs}.feed.{len(manifest)}.pb"
            save_tensor(path, v)
            manifest.append(f"feed {tname(k)} {path}")
        for i, f in enumerate(fetches):
            path = f"{self.name}.r{self.runs}.fetch{i}.pb"
            if values is not None:
                save_tensor(path, values[i])
            manifest.append(f"fetch {tname(f)} {path if values is not None else '-'}")
        for t in targets:
            manifest.append(f"target {tname(t)}")
        if error:
            manifest.append(f"error {error[0]} {error[1]}")
        manifest.append("end")
        self.runs += 1

    def end(self):
        self.sess.close()
        manifest.append("endcase")


def var(name, value, resource):
    return tf1.get_variable(name, initializer=tf.constant(value), use_resource=resource)


def train_case(name, graph, loss, train_op, feeds, extra_fetches=()):
    """Init, STEPS training steps fetching the loss, then the variables."""
    with graph.as_default():
        init = tf1.global_variables_initializer()
        # Reads made now, so they are part of the GraphDef Weft gets.
        values = [v.value() for v in tf1.global_variables()]
    c = Case(name, graph)
    c.run(targets=[init])
    for _ in range(STEPS):
        c.run(fetches=[loss, *extra_fetches], targets=[train_op], feeds=feeds)
    c.run(fetches=values)
    c.end()


# ---- MLP with three optimizers, ref and resource variables ----------------

rng = np.random.RandomState(1)
X = rng.randn(16, 12).astype(np.float32)
Y = rng.randint(0, 5, size=16).astype(np.int64)
W1 = (rng.randn(12, 20) * 0.3).astype(np.float32)
W2 = (rng.randn(20, 16) * 0.3).astype(np.float32)
W3 = (rng.randn(16, 5) * 0.3).astype(np.float32)


def mlp_graph(optimizer, resource):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 12], name="x")
        y = tf1.placeholder(tf.int64, [None], name="y")
        h = x
        for i, w in enumerate((W1, W2)):
            wv = var(f"w{i}", w, resource)
            bv = var(f"b{i}", np.full([w.shape[1]], 0.1, np.float32), resource)
            h = tf.nn.relu(tf.matmul(h, wv) + bv)
        logits = tf.matmul(h, var("w2", W3, resource)) + var("b2", np.zeros(5, np.float32), resource)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
        train = optimizer().minimize(loss, name="train")
    return g, loss, train, {"x:0": X, "y:0": Y}


OPTIMIZERS = {
    "sgd": lambda: tf1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf1.train.MomentumOptimizer(0.1, 0.9),
    "adam": lambda: tf1.train.AdamOptimizer(0.01),
}
for resource in (False, True):
    if not resource:
        tf1.disable_resource_variables()
    else:
        tf1.enable_resource_variables()
    for opt_name, opt in OPTIMIZERS.items():
        g, loss, train, feeds = mlp_graph(opt, resource)
        train_case(f"mlp_{opt_name}_{'resource' if resource else 'ref'}", g, loss, train, feeds)
tf1.enable_resource_variables()

# ---- MLP with dense labels, weight decay and gradient clipping -------------
#
# softmax_cross_entropy_with_logits (dense labels), Elu / LeakyRelu / Relu6
# layers, L2Loss weight decay and clip_by_global_norm, applied by SGD: the
# new ops inside a training step rather than alone.

for resource in (False, True):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 12], name="x")
        y = tf1.placeholder(tf.int64, [None], name="y")
        ws = [var(f"w{i}", w, resource) for i, w in enumerate((W1, W2, W3))]
        h = tf.nn.elu(tf.matmul(x, ws[0]))
        h = tf.nn.leaky_relu(tf.matmul(h, ws[1]), alpha=0.1)
        logits = tf.nn.relu6(tf.matmul(h, ws[2]) * 3.0)
        xent = tf.nn.softmax_cross_entropy_with_logits(labels=tf.one_hot(y, 5), logits=logits)
        loss = tf.add(tf.reduce_mean(xent), 1e-3 * tf.add_n([tf.nn.l2_loss(w) for w in ws]),
                      name="loss")
        grads = tf.gradients(loss, ws)
        clipped, norm = tf.clip_by_global_norm(grads, 0.5)
        train = tf1.train.GradientDescentOptimizer(0.2).apply_gradients(
            list(zip(clipped, ws)), name="train")
    train_case(f"mlp_xent_l2_clip_{'resource' if resource else 'ref'}", g, loss, train,
               {"x:0": X, "y:0": Y}, extra_fetches=[norm])

# ---- Small CNN: Conv2D, BiasAdd, Relu, MaxPool, flatten, dense (NHWC) ------

rng = np.random.RandomState(2)
g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    y = tf1.placeholder(tf.int32, [None], name="y")
    k1 = var("k1", (rng.randn(3, 3, 3, 4) * 0.3).astype(np.float32), True)
    c1 = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k1, 1, "SAME"),
                                   var("cb1", np.full(4, 0.05, np.float32), True)))
    p1 = tf.nn.max_pool2d(c1, 2, 2, "VALID")
    k2 = var("k2", (rng.randn(3, 3, 4, 6) * 0.3).astype(np.float32), True)
    c2 = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(p1, k2, [1, 2, 2, 1], "VALID"),
                                   var("cb2", np.zeros(6, np.float32), True)))
    flat = tf.reshape(c2, [tf.shape(c2)[0], -1])
    wd = var("wd", (rng.randn(6, 3) * 0.3).astype(np.float32), True)
    logits = tf.matmul(flat, wd)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    train = tf1.train.MomentumOptimizer(0.05, 0.9).minimize(loss, name="train")
feeds = {"x:0": rng.randn(4, 8, 8, 3).astype(np.float32),
         "y:0": rng.randint(0, 3, size=4).astype(np.int32)}
train_case("cnn_momentum", g, loss, train, feeds)

# ---- Attention block with layer norm ---------------------------------------

rng = np.random.RandomState(3)


def layer_norm(h, scale, bias):
    mean = tf.reduce_mean(h, axis=-1, keepdims=True)
    variance = tf.reduce_mean(tf.math.squared_difference(h, mean), axis=-1, keepdims=True)
    return (h - mean) * tf.math.rsqrt(variance + 1e-6) * scale + bias


g = tf1.Graph()
with g.as_default():
    d, heads = 8, 2
    x = tf1.placeholder(tf.float32, [2, 5, d], name="x")
    target = tf1.placeholder(tf.float32, [2, 5, d], name="target")
    wq, wk, wv, wo = (var(n, (rng.randn(d, d) * 0.3).astype(np.float32), True)
                      for n in ("wq", "wk", "wv", "wo"))

    def proj(h, w):
        p = tf.reshape(tf.matmul(tf.reshape(h, [-1, d]), w), [2, 5, heads, d // heads])
        return tf.transpose(p, [0, 2, 1, 3])

    q, k, v = proj(x, wq), proj(x, wk), proj(x, wv)
    att = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(d // heads))
    o = tf.reshape(tf.transpose(tf.matmul(att, v), [0, 2, 1, 3]), [-1, d])
    h = tf.reshape(tf.matmul(o, wo), [2, 5, d]) + x
    out = layer_norm(h, var("ln_scale", np.ones(d, np.float32), True),
                     var("ln_bias", np.zeros(d, np.float32), True))
    loss = tf.reduce_mean(tf.square(out - target), name="loss")
    train = tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
feeds = {"x:0": rng.randn(2, 5, 8).astype(np.float32),
         "target:0": rng.randn(2, 5, 8).astype(np.float32)}
train_case("attention_adam", g, loss, train, feeds, extra_fetches=[out])

# ---- Single ops, forward and gradients --------------------------------------
#
# Each case: y = f(inputs); loss = sum(y * fixed weights); fetch y and
# tf.gradients(loss, float inputs), so every gradient op TF emits runs.

rng = np.random.RandomState(4)


def op_case(name, fn, inputs, grad=True):
    """inputs: dict name -> numpy value (each becomes a placeholder)."""
    g = tf1.Graph()
    with g.as_default():
        phs = {k: tf1.placeholder(tf.as_dtype(v.dtype), v.shape, name=k)
               for k, v in inputs.items()}
        outs = fn(**phs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        fetches = list(outs)
        if grad:
            loss = tf.add_n([tf.reduce_sum(o * tf.constant(
                np.asarray(rng.randn(*o.shape.as_list()), np.float32)))
                for o in outs if o.dtype == tf.float32])
            xs = [p for p in phs.values() if p.dtype == tf.float32]
            fetches += [gr for gr in tf.gradients(loss, xs) if gr is not None]
    c = Case("op_" + name, g)
    c.run(fetches=fetches, feeds={k + ":0": v for k, v in inputs.items()})
    c.end()


def f32(*shape):
    return rng.randn(*shape).astype(np.float32)


op_case("strided_slice", lambda x: [x[1:5:2, ::-1], x[:, 1], x[..., 2:], x[None, 3, -2:]],
        {"x": f32(6, 5)})
op_case("strided_slice_3d", lambda x: [x[:, 1:3, ::2], x[1, ..., tf.newaxis]], {"x": f32(3, 4, 5)})
op_case("gather_v2", lambda x: [tf.gather(x, [3, 0, 3, 1]), tf.gather(x, [[1, 2]], axis=1)],
        {"x": f32(5, 4)})
op_case("one_hot", lambda x: [tf.one_hot([0, 3, 2, -1], 4) * x,
                              tf.one_hot(tf.constant([[1, 0]], tf.int64), 3, 2.0, -1.0, axis=0)],
        {"x": f32(4, 4)})
op_case("slice", lambda x: [tf.slice(x, [1, 0, 2], [2, -1, 3])], {"x": f32(4, 3, 6)})
op_case("pad", lambda x: [tf.pad(x, [[1, 2], [0, 3]]), tf.pad(x, [[0, 1], [1, 0]], constant_values=2.0)],
        {"x": f32(3, 4)})
op_case("select", lambda x, y: [tf1.where(x > y, x, y * 2.0)], {"x": f32(4, 3), "y": f32(4, 3)})
op_case("select_v2", lambda x, y: [tf.where(x > 0.0, x, y), tf.where(y[:1] > 0.0, x, 0.5)],
        {"x": f32(4, 3), "y": f32(4, 3)})
op_case("cumsum", lambda x: [tf.cumsum(x, axis=1), tf.cumsum(x, axis=0, exclusive=True),
                             tf.cumsum(x, axis=1, reverse=True),
                             tf.cumsum(x, axis=-1, exclusive=True, reverse=True)],
        {"x": f32(4, 5)})
op_case("l2_loss", lambda x: [tf.nn.l2_loss(x)], {"x": f32(6, 7)})
op_case("softmax_xent", lambda x, l: [tf.nn.softmax_cross_entropy_with_logits(
    labels=tf.nn.softmax(l), logits=x)], {"x": f32(5, 6), "l": f32(5, 6)})
op_case("sparse_softmax_xent", lambda x: [tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=tf.constant([1, 0, 5, 2]), logits=x)], {"x": f32(4, 6)})
op_case("log_softmax", lambda x: [tf.nn.log_softmax(x), tf.nn.softmax(x)], {"x": f32(4, 7)})
op_case("relu6", lambda x: [tf.nn.relu6(x * 4.0)], {"x": f32(5, 6)})
op_case("leaky_relu", lambda x: [tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.3)],
        {"x": f32(5, 6)})
op_case("elu", lambda x: [tf.nn.elu(x)], {"x": f32(5, 6)})
op_case("selu", lambda x: [tf.nn.selu(x)], {"x": f32(5, 6)})
op_case("softplus", lambda x: [tf.nn.softplus(x * 3.0)], {"x": f32(5, 6)})
op_case("softsign", lambda x: [tf.nn.softsign(x)], {"x": f32(5, 6)})
op_case("clip_by_value", lambda x: [tf.clip_by_value(x, -0.5, 0.7),
                                    tf.raw_ops.ClipByValue(t=x, clip_value_min=-0.2,
                                                           clip_value_max=0.3)],
        {"x": f32(5, 6)})
op_case("range", lambda x: [x * tf.cast(tf.range(6), tf.float32),
                            tf.range(1.0, 4.0, 0.5) + x[0, :1]], {"x": f32(3, 6)})
op_case("unpack", lambda x: tf.unstack(x, axis=1), {"x": f32(3, 4, 2)})
op_case("split", lambda x: tf.split(x, 3, axis=1), {"x": f32(2, 6)})
op_case("split_v", lambda x: tf.split(x, [1, 3, -1], axis=0), {"x": f32(6, 2)})
op_case("broadcast_to", lambda x: [tf.broadcast_to(x, [4, 3, 5])], {"x": f32(3, 1)})
op_case("broadcast_grad_args", lambda x, y, z: [x * y + z, x / y - z, tf.maximum(x, z)],
        {"x": f32(4, 1, 3), "y": f32(5, 1), "z": f32(3)})
op_case("reductions", lambda x: [tf.reduce_sum(x, [0, 2]), tf.reduce_mean(x, 1, keepdims=True),
                                 tf.reduce_max(x, -1), tf.reduce_prod(x, 0)],
        {"x": f32(3, 4, 5)})
op_case("unary_math", lambda x: [tf.exp(x), tf.math.log(tf.abs(x) + 1.0), tf.tanh(x),
                                 tf.sigmoid(x), tf.sqrt(tf.abs(x) + 0.5), tf.math.reciprocal(x + 3.0),
                                 tf.square(x), tf.abs(x), tf.negative(x), tf.math.rsqrt(x * x + 1.0)],
        {"x": f32(4, 5)})
op_case("binary_math", lambda x, y: [tf.pow(tf.abs(x) + 1.0, y), tf.math.squared_difference(x, y),
                                     tf.minimum(x, y), tf.math.divide_no_nan(x, y)],
        {"x": f32(4, 5), "y": f32(4, 5)})
op_case("concat_transpose_tile", lambda x, y: [tf.concat([x, y], 1), tf.transpose(x, [1, 0]),
                                               tf.tile(x, [2, 3]), tf.stack([x, y], 2)],
        {"x": f32(3, 4), "y": f32(3, 4)})
op_case("batch_matmul", lambda x, y: [tf.matmul(x, y), tf.matmul(x, x, transpose_a=True),
                                      tf.matmul(x[:1], y)],
        {"x": f32(3, 4, 4), "y": f32(3, 4, 2)})
op_case("dynamic_stitch", lambda x: [tf.dynamic_stitch([[0, 2], [1, 3]], [x[:2], x[2:]])],
        {"x": f32(4, 3)})
op_case("segment_sum", lambda x: [tf.math.unsorted_segment_sum(x, [0, 2, 0, 1], 3)],
        {"x": f32(4, 3)})
op_case("embedding_lookup", lambda x: [tf.nn.embedding_lookup(x, [[0, 3], [3, 2]])],
        {"x": f32(5, 4)})
op_case("expand_squeeze_reshape", lambda x: [tf.squeeze(tf.expand_dims(x, 1) * 2.0, [1]),
                                             tf.reshape(x, [-1]), tf.identity(x)],
        {"x": f32(3, 4)})
op_case("prevent_gradient", lambda x: [tf.raw_ops.PreventGradient(input=x, message="no") * 2.0],
        {"x": f32(3, 4)}, grad=False)
op_case("avg_pool", lambda x: [tf.nn.avg_pool2d(x, 2, 1, "SAME")], {"x": f32(2, 5, 5, 3)})
op_case("moments", lambda x: list(tf.nn.moments(x, [0, 1])), {"x": f32(4, 6, 3)})


def max_pool_grad(x, dy):
    y = tf.nn.max_pool2d(x, 3, 2, "SAME")
    return [tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=dy, ksize=[1, 3, 3, 1],
                                   strides=[1, 2, 2, 1], padding="SAME")]


def max_pool_grad_grad(x, g):
    y = tf.nn.max_pool2d(x, 2, 2, "VALID")
    return [tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, ksize=[1, 2, 2, 1],
                                       strides=[1, 2, 2, 1], padding="VALID"),
            tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=tf.nn.max_pool2d(x, 3, 1, "SAME"),
                                       grad=g, ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
                                       padding="SAME")]


# tf.gradients of MaxPoolGrad emits MaxPoolGradGrad and vice versa.
op_case("max_pool_grad", max_pool_grad, {"x": f32(2, 5, 6, 19), "dy": f32(2, 3, 3, 19)})
op_case("max_pool_grad_grad", max_pool_grad_grad, {"x": f32(2, 7, 5, 4), "g": f32(2, 7, 5, 4)})

# ---- Broken variants ---------------------------------------------------------
#
# Each must fail with an error naming the node, and the session must then
# still run a good step.

g = tf1.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, None, name="x")
    b = tf1.placeholder(tf.float32, None, name="b")
    w = tf.constant(f32(4, 3), name="w")
    y = tf.add(tf.matmul(x, w, name="mm"), b, name="y")
good_feeds = {"x:0": f32(2, 4), "b:0": f32(3)}

# Runtime errors in one session: shapes that do not broadcast, wrong feed dtype.
c = Case("bad_runtime_inputs", g)
c.run(fetches=["y:0"], feeds=good_feeds)
c.run_error("INVALID_ARGUMENT", "{{node y}}", fetches=["y:0"],
            feeds={"x:0": f32(2, 4), "b:0": f32(2)})
c.run(fetches=["y:0"], feeds=good_feeds)
c.run_error("INVALID_ARGUMENT", "{{node mm}}", fetches=["y:0"],
            feeds={"x:0": f32(2, 5), "b:0": f32(3)})
c.run(fetches=["y:0"], feeds=good_feeds)
c.run_error("INVALID_ARGUMENT", "feed 'x:0'", fetches=["y:0"],
            feeds={"x:0": np.ones([2, 4], np.int32), "b:0": f32(3)})
c.run(fetches=["y:0"], feeds=good_feeds)
c.end()


def broken_case(name, mutate, code, text):
    """A graph that Create must reject; the session then takes the good one."""
    gd = g.as_graph_def()
    mutate({n.name: n for n in gd.node})
    path = name + ".bad.pb"
    with open(os.path.join(OUT, path), "wb") as f:
        f.write(gd.SerializeToString())
    c = Case(name, g)
    manifest.append(f"create_bad {path} {code} {text}")
    c.run(fetches=["y:0"], feeds=good_feeds)
    c.end()


def wrong_attr_type(nodes):
    nodes["mm"].attr["transpose_a"].Clear()
    nodes["mm"].attr["transpose_a"].i = 1


def missing_input(nodes):
    del nodes["y"].input[1]


def unknown_input(nodes):
    nodes["y"].input[1] = "no_such_node"


def unknown_op(nodes):
    nodes["mm"].op = "NoSuchOpInWeft"


def shape_mismatch(nodes):
    # x: [?, 4], so mm is [?, 3]; b becomes a [5, 2] constant, which cannot
    # broadcast against it: shape inference sees it when the graph loads.
    nodes["x"].attr["shape"].shape.CopyFrom(tf.TensorShape([None, 4]).as_proto())
    nodes["b"].op = "Const"
    nodes["b"].attr.clear()
    nodes["b"].attr["dtype"].type = tf.float32.as_datatype_enum
    nodes["b"].attr["value"].tensor.CopyFrom(tf1.make_tensor_proto(f32(5, 2)))


broken_case("bad_attr_type", wrong_attr_type, "INVALID_ARGUMENT", "'mm'")
broken_case("bad_missing_input", missing_input, "INVALID_ARGUMENT", "'y'")
broken_case("bad_unknown_input", unknown_input, "INVALID_ARGUMENT", "'y'")
broken_case("bad_shape_broadcast", shape_mismatch, "INVALID_ARGUMENT", "'y'")
broken_case("bad_unknown_op", unknown_op, "UNIMPLEMENTED", "op 'NoSuchOpInWeft' (node 'mm')")

if OPS_ONLY:
    print("\n".join(sorted(all_ops)))
    sys.exit(0)
with open(os.path.join(OUT, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print(f"wrote {sum(1 for l in manifest if l.startswith('case '))} cases to {OUT}")
