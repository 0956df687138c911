#!/usr/bin/env python3
"""Exports a Keras model as a forward graph with a loss, for
`weft train --graph FILE --loss loss` and `weft compare --graph`, or with
--train-step as a graph that trains itself (Keras's optimizer inside), for
`weft train --graph FILE --loss loss --train-op train_step`.

    python3 tools/export_keras_graph.py model.keras --out model.pb \\
        --batch 32 --loss sparse_categorical_crossentropy
    weft train --graph model.pb --loss loss --input x=x.npy --input y=y.npy

The GraphDef holds:
  x      Placeholder, the model's input, [batch, ...] (batch: --batch,
         or any size without it); x0, x1, ... for a model of several
         inputs, in the order of model.inputs
  y      Placeholder, the labels: int32 [batch] for sparse categorical
         cross-entropy, the model's output shape otherwise
  loss   the mean loss of the batch (float32 scalar), the model called with
         training=True (dropout on, batch norm on the batch's statistics and
         updating its moving averages)
  init   assigns every variable the model's current weights
Variables are VarHandleOps (one per Keras variable, trainable or not: the
trainer trains those the loss reads and the graph does not assign itself).
Needs TensorFlow 2.x with Keras; runs outside Weft.
"""
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

LOSSES = ("sparse_categorical_crossentropy", "categorical_crossentropy",
          "mse", "mae", "binary_crossentropy")


def variable_graph(concrete, variables):
    """`concrete`'s GraphDef with each captured variable a VarHandleOp (and
    each captured constant a Const), plus an 'init' NoOp that assigns every
    variable its current value. Returns (graph_def, {node name: variable})."""
    import tensorflow as tf
    gd = concrete.graph.as_graph_def()
    by_handle = {id(v.handle): v for v in variables}
    placeholders, constants = {}, {}
    for external, internal in concrete.graph.captures:
        v = by_handle.get(id(external))
        if v is not None:
            placeholders[internal.op.name] = v
        elif external.dtype != tf.resource:
            constants[internal.op.name] = external.numpy()  # a captured constant
        else:
            raise RuntimeError(f"capture {internal.name} is not a known variable")
    inits = []
    for i, node in enumerate(gd.node):
        if node.name in constants:
            value = constants[node.name]
            new = tf.compat.v1.NodeDef(name=node.name, op="Const")
            new.attr["dtype"].type = tf.as_dtype(value.dtype).as_datatype_enum
            new.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
            gd.node[i].CopyFrom(new)
            continue
        v = placeholders.get(node.name)
        if v is None:
            continue
        new = tf.compat.v1.NodeDef(name=node.name, op="VarHandleOp")
        new.attr["dtype"].type = tf.as_dtype(v.dtype).as_datatype_enum
        new.attr["shape"].shape.CopyFrom(tf.TensorShape(v.shape).as_proto())
        new.attr["shared_name"].s = f"var{i}".encode()
        new.attr["container"].s = b""
        new.attr["allowed_devices"].list.SetInParent()
        gd.node[i].CopyFrom(new)
        const = gd.node.add(name=f"{node.name}/initial_value", op="Const")
        const.attr["dtype"].type = tf.as_dtype(v.dtype).as_datatype_enum
        const.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(v.numpy()))
        assign = gd.node.add(name=f"{node.name}/assign", op="AssignVariableOp",
                             input=[node.name, const.name])
        assign.attr["dtype"].type = tf.as_dtype(v.dtype).as_datatype_enum
        inits.append(assign.name)
    init = gd.node.add(name="init", op="NoOp")
    init.input.extend("^" + a for a in inits)
    return gd, placeholders


def loss_function(name, from_logits=False):
    """The Keras loss `name` (one of LOSSES)."""
    import tensorflow as tf
    losses = tf.keras.losses
    return {
        "sparse_categorical_crossentropy":
            lambda: losses.SparseCategoricalCrossentropy(from_logits=from_logits),
        "categorical_crossentropy":
            lambda: losses.CategoricalCrossentropy(from_logits=from_logits),
        "binary_crossentropy":
            lambda: losses.BinaryCrossentropy(from_logits=from_logits),
        "mse": losses.MeanSquaredError,
        "mae": losses.MeanAbsoluteError,
    }[name]()


def _specs(model, batch, loss):
    """The placeholders' specs: x (x0, x1, ...) and y."""
    import tensorflow as tf
    batch = batch or None  # a batch of any size, fixed by weft's --batch
    inputs = list(model.inputs)
    names = ["x"] if len(inputs) == 1 else [f"x{i}" for i in range(len(inputs))]
    x_specs = [tf.TensorSpec((batch,) + tuple(t.shape[1:]), t.dtype or tf.float32, name=n)
               for t, n in zip(inputs, names)]
    if loss == "sparse_categorical_crossentropy":
        y_spec = tf.TensorSpec((batch,), tf.int32, name="y")
    else:
        y_spec = tf.TensorSpec((batch,) + tuple(model.output.shape[1:]),
                               tf.float32, name="y")
    return x_specs, y_spec


def _mean_loss(model, fn, xs, y):
    import tensorflow as tf
    pred = model(xs[0] if len(xs) == 1 else list(xs), training=True)
    return tf.reduce_mean(fn(y, pred))


def forward_graph(model, batch, loss, from_logits=False):
    """The forward GraphDef (x, y, loss, init) of `model` for `batch` (0:
    any) and the Keras loss named `loss`."""
    import tensorflow as tf
    fn = loss_function(loss, from_logits)

    @tf.function
    def forward(xs, y):
        return tf.identity(_mean_loss(model, fn, xs, y), name="loss")

    concrete = forward.get_concrete_function(*_specs(model, batch, loss))
    gd, _ = variable_graph(concrete, list(model.variables))
    return gd


def train_step_graph(model, batch, loss, optimizer, from_logits=False):
    """The training step's GraphDef: x, y, loss, init (the optimizer's
    variables too) and 'train_step', a NoOp after one step of the Keras
    `optimizer` on the model's trainable variables (weft train --train-op)."""
    import tensorflow as tf
    fn = loss_function(loss, from_logits)
    optimizer.build(model.trainable_variables)

    @tf.function
    def step(xs, y):
        with tf.GradientTape() as tape:
            value = _mean_loss(model, fn, xs, y)
        grads = tape.gradient(value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return tf.identity(value, name="loss")

    concrete = step.get_concrete_function(*_specs(model, batch, loss))
    gd, _ = variable_graph(concrete, list(model.variables) + list(optimizer.variables))
    gd.node.add(name="train_step", op="NoOp",
                input=["^" + t.op.name for t in concrete.outputs])
    return gd


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="a Keras model file (.keras or .h5)")
    p.add_argument("--out", required=True, help="the GraphDef to write (.pb)")
    p.add_argument("--batch", type=int, default=0,
                   help="examples per step (the placeholders' first "
                        "dimension; default 0: any, given to weft train "
                        "with --batch)")
    p.add_argument("--loss", choices=LOSSES, default=LOSSES[0])
    p.add_argument("--from-logits", action="store_true",
                   help="the model outputs logits (cross-entropy losses)")
    p.add_argument("--train-step", choices=("sgd", "momentum", "adam"),
                   help="write the training step with this Keras optimizer "
                        "(weft train --train-op train_step) instead of the "
                        "forward graph")
    p.add_argument("--lr", type=float, default=0.01,
                   help="the --train-step optimizer's learning rate")
    a = p.parse_args()
    import tensorflow as tf
    model = tf.keras.models.load_model(a.model, compile=False)
    if a.train_step:
        opt = {"sgd": lambda: tf.keras.optimizers.SGD(a.lr),
               "momentum": lambda: tf.keras.optimizers.SGD(a.lr, momentum=0.9),
               "adam": lambda: tf.keras.optimizers.Adam(a.lr)}[a.train_step]()
        gd = train_step_graph(model, a.batch, a.loss, opt, a.from_logits)
    else:
        gd = forward_graph(model, a.batch, a.loss, a.from_logits)
    with open(a.out, "wb") as f:
        f.write(gd.SerializeToString())
    inputs = [n.name for n in gd.node if n.op == "Placeholder"]
    print(f"wrote {a.out}: inputs {', '.join(inputs)}, loss 'loss', "
          f"{len(model.variables)} variables, init 'init'"
          + (", train op 'train_step'" if a.train_step else ""))


if __name__ == "__main__":
    sys.exit(main())
