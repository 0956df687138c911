#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into tests/fuzz/corpus/.

Run by hand when the targets or the ops change (the corpus is committed;
campaigns add what they find with tools/fuzz.sh TARGET MINUTES --merge):
  python3 tests/fuzz/make_seed_corpus.py bazel-bin/tools/weft
Needs numpy and tensorflow (for TensorProto and .npy seeds) and the weft
binary (for generated model graphs). Deterministic: the same files each run.
"""
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(ROOT, "corpus")
EXAMPLES = os.path.join(ROOT, "..", "..", "tools", "examples")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def graphdef_seeds(weft):
    for name in sorted(os.listdir(EXAMPLES)):
        text = open(os.path.join(EXAMPLES, name), "rb").read()
        write("graphdef_fuzzer", name, text)
        g = tf.compat.v1.GraphDef()
        from google.protobuf import text_format
        text_format.Parse(text.decode(), g)
        write("graphdef_fuzzer", name.replace(".pbtxt", ".pb"),
              g.SerializeToString())
    with tempfile.TemporaryDirectory() as tmp:
        for model, extra in [("mlp", []), ("cnn", ["--hidden", "8"]),
                             ("transformer", ["--hidden", "16"]),
                             ("mlp", ["--mode", "in-graph", "--devices",
                                      "cpu:0,cpu:1", "--optimizer", "adam"])]:
            out = os.path.join(tmp, "g.pb")
            subprocess.run([weft, "graphgen", "--model", model, "--batch", "4",
                            "--out", out] + extra, check=True,
                           stdout=subprocess.DEVNULL)
            tag = "_".join([model] + [e.strip("-").replace(":", "")
                                      for e in extra[1::2]])
            write("graphdef_fuzzer", "graphgen_%s.pb" % tag,
                  open(out, "rb").read())


def random_graph_seeds():
    # tests/fuzz/random_graph.cc reads a count byte (0: one op), then the
    # op's index in the sorted op list (one byte while there are at most 256
    # ops), then attrs and inputs. One seed per op index, so every op is in
    # the corpus from the start; the rest of each seed is pseudo-random.
    rng = random.Random(7)
    for i in range(256):
        tail = bytes(rng.randrange(256) for _ in range(96))
        data = bytes([0, i]) + tail
        write("shape_inference_fuzzer", "op_%03d" % i, data)
        write("session_fuzzer", "op_%03d" % i, data)


def feed_seeds():
    texts = [b"1.5", b"[[1, 2], [3, 4]]", b"[true, false]", b'["a", "b"]',
             b'{"dtype": "int32", "shape": [2, 2], "values": [1, 2, 3, 4]}',
             b'{"dtype": "float16", "shape": [], "values": 1}',
             b"[[[1.5e300, -2]], [[NaN, 3]]]", b'{"values": [[1], [2]]}']
    for i, t in enumerate(texts):
        write("feed_fuzzer", "text_%d" % i, bytes([i % 10]) + t)
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3),
              np.array([1, 2], dtype=np.int64), np.array(True),
              np.zeros((0, 3), dtype=np.float64),
              np.arange(4, dtype=np.uint8).reshape(2, 2).T,
              np.array([1.5], dtype=np.float16)]
    for i, a in enumerate(arrays):
        with tempfile.TemporaryFile() as f:
            np.save(f, a)
            f.seek(0)
            write("feed_fuzzer", "npy_%d" % i, bytes([0x80]) + f.read())


def tensor_proto_seeds():
    values = [np.float32(1.5), np.arange(6, dtype=np.float32).reshape(2, 3),
              np.array([1, -2, 3], dtype=np.int32), np.int64(7),
              np.array([True, False]), np.array([b"ab", b""], dtype=object),
              np.array([0.5, 2], dtype=np.float16),
              np.array([[1, 2]], dtype=np.uint8), np.float64(3.25),
              np.array([1, 2], dtype=np.int16), np.array([1], dtype=np.uint64)]
    for i, v in enumerate(values):
        write("tensor_proto_fuzzer", "value_%d" % i,
              tf.make_tensor_proto(v).SerializeToString())
    # A scalar value splatted over a shape, and tensor_content.
    write("tensor_proto_fuzzer", "splat",
          tf.make_tensor_proto(2.0, shape=[3, 4]).SerializeToString())
    p = tf.make_tensor_proto(np.arange(8, dtype=np.float32))
    write("tensor_proto_fuzzer", "content", p.SerializeToString())
    p = tf.make_tensor_proto(np.arange(8, dtype=np.float32).astype(
        tf.bfloat16.as_numpy_dtype))
    write("tensor_proto_fuzzer", "bfloat16", p.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    graphdef_seeds(sys.argv[1])
    random_graph_seeds()
    feed_seeds()
    tensor_proto_seeds()


if __name__ == "__main__":
    main()
