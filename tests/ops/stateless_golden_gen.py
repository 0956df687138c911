#!/usr/bin/env python3
"""Regenerates stateless_random_golden.inc and shuffle_golden.inc with
TensorFlow (not run by the tests):

    cd tests/ops && python3 stateless_golden_gen.py
"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(UNSIGNED[a.dtype.itemsize]).astype(np.uint64).flatten()


def digest(a):
    w = bits(a)
    idx = np.arange(1, len(w) + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(w * idx, dtype=np.uint64))


DT = {tf.float32: "DT_FLOAT", tf.float64: "DT_DOUBLE", tf.float16: "DT_HALF",
      tf.bfloat16: "DT_BFLOAT16", tf.int32: "DT_INT32", tf.int64: "DT_INT64",
      tf.uint32: "DT_UINT32", tf.uint64: "DT_UINT64"}
FLOATS = [tf.float32, tf.float64, tf.float16, tf.bfloat16]
SEEDS = [((1, 2), tf.int64), ((-7, 123456), tf.int32),
         ((-1, 1 << 40), tf.int64), ((0, 0), tf.int32)]
BOUNDS = {tf.int32: (-5, 1000), tf.int64: (-(1 << 40), (1 << 40) + 123)}

g = tf.Graph()
cases = []  # (op, dtype, seed, seed dtype, lo, hi, small node, big node)
with g.as_default():
    for (s0, s1), sdt in SEEDS:
        seed = tf.constant([s0, s1], sdt)
        key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
        cases.append(("StatelessRandomGetKeyCounter", "DT_UINT64", s0, s1, sdt,
                      0, 0, tf.concat([key, counter], 0), None))
        for v1, v2 in [("StatelessRandomUniform", "StatelessRandomUniformV2"),
                       ("StatelessRandomNormal", "StatelessRandomNormalV2"),
                       ("StatelessTruncatedNormal", "StatelessTruncatedNormalV2")]:
            for dt in FLOATS:
                f1 = getattr(tf.raw_ops, v1)
                f2 = getattr(tf.raw_ops, v2)
                big_shape = tf.constant([1000, 37], tf.int64)
                cases.append((v1, DT[dt], s0, s1, sdt, 0, 0,
                              f1(shape=[7], seed=seed, dtype=dt),
                              f1(shape=big_shape, seed=seed, dtype=dt)))
                cases.append((v2, DT[dt], s0, s1, sdt, 0, 0,
                              f2(shape=[7], key=key, counter=counter, alg=1, dtype=dt),
                              f2(shape=big_shape, key=key, counter=counter, alg=1, dtype=dt)))
        for dt, (lo, hi) in BOUNDS.items():
            lo_t, hi_t = tf.constant(lo, dt), tf.constant(hi, dt)
            cases.append(("StatelessRandomUniformInt", DT[dt], s0, s1, sdt, lo, hi,
                          tf.raw_ops.StatelessRandomUniformInt(shape=[7], seed=seed, minval=lo_t, maxval=hi_t),
                          tf.raw_ops.StatelessRandomUniformInt(shape=[1000, 37], seed=seed, minval=lo_t, maxval=hi_t)))
            cases.append(("StatelessRandomUniformIntV2", DT[dt], s0, s1, sdt, lo, hi,
                          tf.raw_ops.StatelessRandomUniformIntV2(shape=[7], key=key, counter=counter, alg=1, minval=lo_t, maxval=hi_t),
                          tf.raw_ops.StatelessRandomUniformIntV2(shape=[1000, 37], key=key, counter=counter, alg=1, minval=lo_t, maxval=hi_t)))
        for dt in [tf.int32, tf.int64, tf.uint32, tf.uint64]:
            cases.append(("StatelessRandomUniformFullInt", DT[dt], s0, s1, sdt, 0, 0,
                          tf.raw_ops.StatelessRandomUniformFullInt(shape=[7], seed=seed, dtype=dt),
                          tf.raw_ops.StatelessRandomUniformFullInt(shape=[1000, 37], seed=seed, dtype=dt)))
            cases.append(("StatelessRandomUniformFullIntV2", DT[dt], s0, s1, sdt, 0, 0,
                          tf.raw_ops.StatelessRandomUniformFullIntV2(shape=[7], key=key, counter=counter, alg=1, dtype=dt),
                          tf.raw_ops.StatelessRandomUniformFullIntV2(shape=[1000, 37], key=key, counter=counter, alg=1, dtype=dt)))
    shuffles = []
    for n, rows, seed, seed2 in [(10, 1, 3, 4), (2, 1, 7, 0), (1000, 1, 5, 6),
                                 (50, 3, 11, 12), (4097, 1, 1, 1)]:
        shape = [n] if rows == 1 else [n, rows]
        value = tf.reshape(tf.range(n * rows, dtype=tf.int32), shape)
        shuffles.append((n, rows, seed, seed2,
                         tf.raw_ops.RandomShuffle(value=value, seed=seed, seed2=seed2)))
    with tf.compat.v1.Session() as s:
        rows = []
        for op, dn, s0, s1, sdt, lo, hi, small, big in cases:
            a = s.run(small)
            d = digest(s.run(big)) if big is not None else 0
            rows.append((op, dn, s0, s1, DT[sdt], lo, hi, bits(a).tolist(), d))
        shuffle_rows = []
        for n, r, seed, seed2, node in shuffles:
            runs = [s.run(node) for _ in range(2)]
            shuffle_rows.append((n, r, seed, seed2, [digest(x) for x in runs],
                                 runs[0].flatten()[:10].tolist()))

with open("stateless_random_golden.inc", "w") as f:
    f.write("// Generated with TensorFlow 2.21 (tf.raw_ops, graph mode, CPU) by\n"
            "// stateless_golden_gen.py. Fields: op, dtype, seed words, seed dtype,\n"
            "// minval, maxval (integer ops), bit patterns of shape [7] (for\n"
            "// StatelessRandomGetKeyCounter: key then counter), digest of shape\n"
            "// [1000, 37] (sum over i of (i + 1) * bits[i] mod 2^64). V2 ops take the\n"
            "// key and counter StatelessRandomGetKeyCounter makes from the seed, alg 1.\n")
    for op, dn, s0, s1, sdn, lo, hi, small, d in rows:
        f.write('{"%s", %s, %dLL, %dLL, %s, %dLL, %dLL, {%s}, %duLL},\n' % (
            op, dn, s0, s1, sdn, lo, hi, ", ".join("0x%xuLL" % x for x in small), d))
with open("shuffle_golden.inc", "w") as f:
    f.write("// Generated with TensorFlow 2.21 (tf.raw_ops.RandomShuffle, graph mode,\n"
            "// CPU) by stateless_golden_gen.py. Fields: n, row length, seed, seed2,\n"
            "// digests of two successive runs shuffling range(n * row) shaped [n] or\n"
            "// [n, row] (int32), first ten values of the first run.\n")
    for n, r, seed, seed2, ds, head in shuffle_rows:
        f.write("{%d, %d, %d, %d, {%duLL, %duLL}, {%s}},\n" % (
            n, r, seed, seed2, ds[0], ds[1], ", ".join(str(x) for x in head)))
