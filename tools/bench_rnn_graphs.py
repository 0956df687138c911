"""Writes the recurrent benchmark graphs of bench_vs_tf.py (--only models):
a Keras LSTM and a Keras GRU (sequence 32, width 128, batch 16), each frozen
from its tf.function the way a user exports one (convert_variables_to_
constants_v2, control flow left functional: a While over TensorLists), as
DIR/NAME.pb, with the input batch as DIR/NAME_seq.npy. Prints one line per
graph: NAME FETCH. Runs eagerly, so bench_vs_tf.py (which runs TensorFlow
in graph mode) starts it as its own process.

usage: bench_rnn_graphs.py DIR
"""
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

SEQUENCE, WIDTH, BATCH = 32, 128, 16


def main(out_dir):
    rng = np.random.RandomState(0)
    for name, layer in (("lstm", tf.keras.layers.LSTM), ("gru", tf.keras.layers.GRU)):
        tf.random.set_seed(0)
        model = tf.keras.Sequential([tf.keras.Input((SEQUENCE, WIDTH)), layer(WIDTH)])
        spec = tf.TensorSpec([BATCH, SEQUENCE, WIDTH], tf.float32, name="seq")
        frozen = convert_variables_to_constants_v2(
            tf.function(lambda s: model(s)).get_concrete_function(spec),
            lower_control_flow=False)
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(frozen.graph.as_graph_def().SerializeToString())
        np.save(os.path.join(out_dir, name + "_seq.npy"),
                rng.randn(BATCH, SEQUENCE, WIDTH).astype(np.float32))
        print(name, frozen.outputs[0].name)


if __name__ == "__main__":
    main(sys.argv[1])
