#!/usr/bin/env python3
"""Regenerates random_golden.inc with TensorFlow (not run by the tests):

    cd tests/ops && python3 random_golden_gen.py
"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"
import tensorflow as tf, numpy as np
tf.compat.v1.disable_eager_execution()
def bits(a):
    a = np.ascontiguousarray(a)
    if a.dtype == np.float32: return a.view(np.uint32).astype(np.uint64)
    if a.dtype == np.float64: return a.view(np.uint64)
    return a.view(np.uint16).astype(np.uint64)
def digest(a):
    w = bits(a).flatten()
    idx = np.arange(1, len(w)+1, dtype=np.uint64)
    with np.errstate(over='ignore'):
        return int(np.sum(w * idx, dtype=np.uint64))
ops = [("RandomUniform", tf.raw_ops.RandomUniform), ("RandomStandardNormal", tf.raw_ops.RandomStandardNormal), ("TruncatedNormal", tf.raw_ops.TruncatedNormal)]
dts = [("DT_FLOAT", tf.float32), ("DT_DOUBLE", tf.float64), ("DT_HALF", tf.float16), ("DT_BFLOAT16", tf.bfloat16)]
g = tf.Graph()
rows=[]
with g.as_default():
    nodes=[]
    for on, fn in ops:
        for dn, dt in dts:
            small = fn(shape=[7], dtype=dt, seed=87654321, seed2=42)
            big = fn(shape=tf.constant([1000, 37], tf.int64), dtype=dt, seed=5, seed2=6)
            nodes.append((on, dn, small, big))
    with tf.compat.v1.Session() as s:
        for on, dn, small, big in nodes:
            a1 = s.run(small); a2 = s.run(small)
            b1 = s.run(big); b2 = s.run(big)
            rows.append((on, dn, bits(a1).tolist(), bits(a2).tolist(), digest(b1), digest(b2)))
with open("random_golden.inc", "w") as f:
    f.write("// Generated with TensorFlow 2.21 (tf.raw_ops, graph mode, CPU). Fields: op,\n"
            "// dtype, bit patterns of two successive runs of shape [7] with\n"
            "// seed=87654321 seed2=42, digests of two successive runs of shape\n"
            "// [1000, 37] with seed=5 seed2=6 (sum over i of (i + 1) * bits[i] mod 2^64).\n")
    for on, dn, a1, a2, d1, d2 in rows:
        f.write('{"%s", %s, {%s}, {%s}, %duLL, %duLL},\n' % (on, dn, ", ".join("0x%xu" % x for x in a1), ", ".join("0x%xu" % x for x in a2), d1, d2))
