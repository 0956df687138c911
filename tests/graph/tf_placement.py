#!/usr/bin/env python3
"""Writes a GraphDef with explicit devices and TensorFlow's placement of it.

Usage: tf_placement.py GRAPH_OUT PLACEMENT_OUT

The graph (TF 1.x style, built by TensorFlow itself) has nodes pinned with
full, partial and legacy device strings, tf.colocate_with groups, a
reference variable and a resource variable with consumers that carry no
device, and unconstrained constants. TensorFlow's placement comes from
running it in a session with 3 CPU devices and reading the partition graphs
(graph rewriting is switched off so every node keeps its name). Writes
"node device" lines for every node of the partition graphs.

Prints "SKIPPED: ..." and exits 1 when TensorFlow cannot be imported.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import tensorflow as tf
except ImportError:
    print("SKIPPED: tensorflow not installed")
    sys.exit(1)

tf1 = tf.compat.v1


def build():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            ref_v = tf1.get_variable("ref_v", shape=[2, 2], use_resource=False,
                                     initializer=tf1.ones_initializer())
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:2"):
            res_v = tf1.get_variable("res_v", shape=[2, 2], use_resource=True,
                                     initializer=tf1.ones_initializer())
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        with tf.device("/device:CPU:1"):
            y = tf.matmul(x, ref_v, name="y")
        z = tf.add(y, res_v.read_value(), name="z")
        with g.colocate_with(x):
            w = tf.negative(z, name="w")
        with tf.device("/job:localhost"):
            k = tf.constant(2.0, name="k")
            out = tf.multiply(w, k, name="out")
        upd = tf1.assign_add(ref_v, tf.ones([2, 2], name="ones"), name="upd")
        upd_r = res_v.assign_add(tf.ones([2, 2]), name="upd_r")
        init = tf1.global_variables_initializer()
    return g, init, [out, upd, upd_r]


def main():
    graph_out, placement_out = sys.argv[1], sys.argv[2]
    g, init, fetches = build()
    with open(graph_out, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    config = tf1.ConfigProto(device_count={"CPU": 3})
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = -1
    config.graph_options.optimizer_options.do_constant_folding = False
    config.graph_options.optimizer_options.do_common_subexpression_elimination = False
    placement = {}
    with tf1.Session(graph=g, config=config) as sess:
        for what in ([init], fetches):
            meta = tf1.RunMetadata()
            sess.run(what, options=tf1.RunOptions(output_partition_graphs=True),
                     run_metadata=meta)
            for part in meta.partition_graphs:
                for node in part.node:
                    placement[node.name] = node.device
    with open(placement_out, "w") as f:
        for name in sorted(placement):
            f.write("%s %s\n" % (name, placement[name]))


if __name__ == "__main__":
    main()
