"""Writes the image-model benchmark graphs of bench_vs_tf.py (--only models):
Keras applications ResNet50, MobileNetV2, EfficientNetB0 and DenseNet121
(weights=None, seeded), 224x224 RGB, batch 1, inference, each frozen from
its tf.function the way a user exports one (convert_variables_to_
constants_v2), as DIR/NAME.pb, with a random input batch as
DIR/NAME_image.npy (fed to the placeholder "image"). Prints one line per
graph: NAME FETCH.

resnet50_train: a ResNet50 training step (batch 4, 224x224, sparse
categorical cross-entropy, Keras SGD with momentum) as
export_keras_graph.train_step_graph writes it: placeholders x and y (DIR/
resnet50_train_x.npy, _y.npy), VarHandleOp variables, an "init" target and
the step's target "train_step". Its line is NAME TARGET.

Runs eagerly, so bench_vs_tf.py (which runs TensorFlow in graph mode)
starts it as its own process.

usage: bench_app_graphs.py DIR [NAME ...]
"""
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_keras_graph import train_step_graph  # noqa: E402

SIZE, BATCH = 224, 1
TRAIN_BATCH = 4
APPS = {
    "resnet50": tf.keras.applications.ResNet50,
    "mobilenetv2": tf.keras.applications.MobileNetV2,
    "efficientnetb0": tf.keras.applications.EfficientNetB0,
    "densenet121": tf.keras.applications.DenseNet121,
}


def resnet50_train(out_dir, rng):
    tf.random.set_seed(0)
    model = tf.keras.applications.ResNet50(weights=None, input_shape=(SIZE, SIZE, 3))
    gd = train_step_graph(model, TRAIN_BATCH, "sparse_categorical_crossentropy",
                          tf.keras.optimizers.SGD(0.01, momentum=0.9))
    with open(os.path.join(out_dir, "resnet50_train.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    np.save(os.path.join(out_dir, "resnet50_train_x.npy"),
            rng.rand(TRAIN_BATCH, SIZE, SIZE, 3).astype(np.float32))
    np.save(os.path.join(out_dir, "resnet50_train_y.npy"),
            rng.randint(0, 1000, TRAIN_BATCH).astype(np.int32))
    print("resnet50_train train_step")


def main(out_dir, names):
    rng = np.random.RandomState(0)
    for name in names or list(APPS) + ["resnet50_train"]:
        if name == "resnet50_train":
            resnet50_train(out_dir, rng)
            continue
        tf.random.set_seed(0)
        model = APPS[name](weights=None, input_shape=(SIZE, SIZE, 3))
        spec = tf.TensorSpec([BATCH, SIZE, SIZE, 3], tf.float32, name="image")
        frozen = convert_variables_to_constants_v2(
            tf.function(lambda x: model(x, training=False)).get_concrete_function(spec))
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(frozen.graph.as_graph_def().SerializeToString())
        np.save(os.path.join(out_dir, name + "_image.npy"),
                rng.rand(BATCH, SIZE, SIZE, 3).astype(np.float32))
        print(name, frozen.outputs[0].name)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
