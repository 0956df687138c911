#!/usr/bin/env python3
"""TensorFlow's times for the sizes conv_ops_test's Timing test prints
(32x28x28x1 input, 32 filters of 5x5, SAME; Conv2D and both backprops):

    python3 tests/ops/conv_timing_tf.py
"""
import os
import time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

x = tf.constant(np.random.rand(32, 28, 28, 1).astype(np.float32))
w = tf.constant(np.random.rand(5, 5, 1, 32).astype(np.float32))
dy = tf.constant(np.random.rand(32, 28, 28, 32).astype(np.float32))
kw = dict(strides=[1, 1, 1, 1], padding="SAME")
ops = {
    "Conv2D": lambda: tf.raw_ops.Conv2D(input=x, filter=w, **kw),
    "Conv2DBackpropInput": lambda: tf.raw_ops.Conv2DBackpropInput(
        input_sizes=[32, 28, 28, 1], filter=w, out_backprop=dy, **kw),
    "Conv2DBackpropFilter": lambda: tf.raw_ops.Conv2DBackpropFilter(
        input=x, filter_sizes=[5, 5, 1, 32], out_backprop=dy, **kw),
}
for name, fn in ops.items():
    f = tf.function(fn, autograph=False)
    f().numpy()
    start = time.perf_counter()
    for _ in range(20):
        f().numpy()
    print("TF %s: %.3f ms/run" % (name, (time.perf_counter() - start) / 20 * 1e3))
