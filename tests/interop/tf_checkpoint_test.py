"""V2 checkpoints between Weft and TensorFlow 2.21, as users meet them:

  - a TensorFlow graph with a tf.compat.v1.train.Saver, run by `weft run`,
    writes a checkpoint that tf.train.load_checkpoint reads back with the
    values Weft held (float, int64, bool and string variables);
  - a checkpoint TensorFlow's Saver wrote is restored by `weft run` running
    the Saver's restore op, and the variables hold TensorFlow's values;
  - a damaged checkpoint is a clear error naming the tensor, not garbage.

usage: tf_checkpoint_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_compare import check, summary_exit_code  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_ckpt_")

VALUES = {
    "w": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
    "step": np.int64(12345678901),
    "flags": np.array([True, False, True]),
    "names": np.array([b"", b"weft", b"x" * 300], dtype=object),
}


def saver_graph(path, values):
    """Variables initialised to `values`, a Saver on `path`, and reads."""
    g = tf1.Graph()
    with g.as_default():
        vs = {}
        for name, v in values.items():
            dtype = tf.string if name == "names" else None
            vs[name] = tf1.Variable(tf1.constant(v, dtype=dtype), name=name)
            tf1.identity(vs[name], name=f"{name}_value")
        tf1.global_variables_initializer()
        saver = tf1.train.Saver(list(vs.values()), filename=path)
    gpath = os.path.join(WORK, f"graph_{len(os.listdir(WORK))}.pb")
    with open(gpath, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    return g, saver, gpath


def weft_run(*args):
    return subprocess.run([WEFT, "run", *args], capture_output=True, text=True,
                          timeout=120)


def main():
    # Weft writes, TensorFlow reads.
    path = os.path.join(WORK, "weft_ckpt", "model")
    _, saver, gpath = saver_graph(path, VALUES)
    r = weft_run("--graph", gpath, "--init", "init",
                 "--fetch", saver.saver_def.save_tensor_name)
    check("weft run runs a TensorFlow Saver's save op", r.returncode == 0,
          r.stderr[-800:])
    try:
        reader = tf.train.load_checkpoint(path)
        got = {n: reader.get_tensor(n) for n in VALUES}
        same = all(np.array_equal(np.asarray(got[n]), np.asarray(VALUES[n]))
                   for n in VALUES)
        check("tf.train.load_checkpoint reads Weft's checkpoint: float, int64, "
              "bool and string values", same, str(got))
        check("the checkpoint holds the variables and nothing else",
              sorted(reader.get_variable_to_shape_map()) == sorted(VALUES),
              str(reader.get_variable_to_shape_map()))
    except Exception as e:  # noqa: BLE001
        check("tf.train.load_checkpoint reads Weft's checkpoint", False, repr(e))

    # TensorFlow writes, Weft restores.
    tf_values = {"w": VALUES["w"] * -3, "step": np.int64(7),
                 "flags": np.array([False, False, True]),
                 "names": np.array([b"tf", b"", b"z"], dtype=object)}
    tf_path = os.path.join(WORK, "tf_ckpt", "model")
    g, saver, _ = saver_graph(tf_path, VALUES)
    with tf1.Session(graph=g) as sess:
        sess.run("init")
        with g.as_default():
            for n, v in tf_values.items():
                var = [x for x in tf1.global_variables() if x.op.name == n][0]
                var.load(v, sess)
        saver.save(sess, tf_path, write_meta_graph=False)
    _, restore_saver, gpath = saver_graph(tf_path, VALUES)
    r = weft_run("--graph", gpath, "--init", "init", "--init",
                 restore_saver.saver_def.restore_op_name, "--format", "json",
                 *sum([["--fetch", f"{n}_value"] for n in VALUES], []))
    ok = r.returncode == 0
    detail = r.stderr[-800:]
    if ok:
        fetched = json.loads(r.stdout)["fetches"]
        def value(n):
            v = fetched[f"{n}_value"]["values"]
            return [s.encode() for s in v] if n == "names" else np.array(v)
        ok = (np.allclose(np.ravel(value("w")), np.ravel(tf_values["w"]))
              and int(np.ravel(value("step"))[0]) == 7
              and list(np.ravel(value("flags"))) == [False, False, True]
              and value("names") == [b"tf", b"", b"z"])
        detail = r.stdout[-800:]
    check("weft run restores a checkpoint TensorFlow's Saver wrote", ok, detail)

    # A damaged data file is a clear error.
    data = tf_path + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[2] ^= 0xff
    open(data, "wb").write(bytes(raw))
    r = weft_run("--graph", gpath, "--init", "init", "--init",
                 restore_saver.saver_def.restore_op_name, "--fetch", "w_value")
    check("a damaged checkpoint fails the restore with DATA_LOSS naming the "
          "tensor and the checkpoint",
          r.returncode != 0 and "DATA_LOSS" in r.stderr
          and "Checksum does not match" in r.stderr and tf_path in r.stderr,
          r.stderr[-600:])
    check_filename_ops_and_where()
    check_report_uninitialized_variables()
    return summary_exit_code()


def check_filename_ops_and_where():
    """The ops a sharded Saver and MonitoredTrainingSession's readiness check
    add, run by Weft and by TensorFlow on the same graph."""
    g = tf1.Graph()
    with g.as_default():
        base = tf1.constant("/ckpt/model", name="base")
        tf1.identity(tf1.raw_ops.ShardedFilename(basename=base, shard=3, num_shards=12),
                     name="sharded")
        tf1.strings.join([base, tf1.constant(["_a", "_b"]), "_temp"], separator="/",
                         name="joined")
        tf1.strings.regex_full_match(tf1.constant(["s3://x/y", "/tmp/s3://", ""]),
                                     "^s3://.*", name="is_s3")
        tf1.where(tf1.constant([[True, False, True], [False, False, True]]), name="where_bool")
        tf1.where(tf1.constant([0.0, -0.0, 2.5, 0.0, -1.0]), name="where_float")
    names = ["sharded", "joined", "is_s3", "where_bool", "where_float"]
    with tf1.Session(graph=g) as sess:
        want = sess.run([f"{n}:0" for n in names])
    gpath = os.path.join(WORK, "filename_ops.pb")
    with open(gpath, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    r = weft_run("--graph", gpath, "--format", "json",
                 *sum([["--fetch", n] for n in names], []))
    ok, detail = r.returncode == 0, r.stderr[-600:]
    if ok:
        got = json.loads(r.stdout)["fetches"]
        for n, w in zip(names, want):
            w = np.asarray(w)
            v = got[n]["values"]
            if w.dtype.kind in "OS":  # strings come back as bytes
                w = [s.decode() for s in w.ravel()]
                same = list(np.ravel(v)) == w
            else:
                same = list(got[n]["shape"]) == list(w.shape) and np.array_equal(
                    np.ravel(v), w.ravel())
            if not same:
                ok, detail = False, f"{n}: {got[n]} vs {w}"
    check("ShardedFilename, StringJoin, StaticRegexFullMatch and Where give "
          "TensorFlow's results", ok, detail)


def check_report_uninitialized_variables():
    """MonitoredTrainingSession's and Supervisor's readiness check on ref
    variables (IsVariableInitialized), before and after the init op."""
    g = tf1.Graph()
    with g.as_default():
        tf1.Variable([1.0, 2.0], name="a", use_resource=False)
        tf1.Variable(3, name="b", use_resource=False)
        tf1.identity(tf1.report_uninitialized_variables(), name="report")
        tf1.global_variables_initializer()
        init = g.get_operation_by_name("init").name
    with tf1.Session(graph=g) as sess:
        want = [s.decode() for s in sess.run("report:0")]
    gpath = os.path.join(WORK, "readiness.pb")
    with open(gpath, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    before = weft_run("--graph", gpath, "--format", "json", "--fetch", "report")
    after = weft_run("--graph", gpath, "--format", "json", "--init", init,
                     "--fetch", "report")
    ok = before.returncode == 0 and after.returncode == 0
    got_before = json.loads(before.stdout)["fetches"]["report"]["values"] if ok else None
    got_after = json.loads(after.stdout)["fetches"]["report"]["values"] if ok else None
    check("report_uninitialized_variables names TensorFlow's variables before "
          "the init op and none after (IsVariableInitialized on ref variables)",
          ok and list(np.ravel(got_before)) == want and want == ["a", "b"]
          and list(np.ravel(got_after)) == [],
          f"{before.stderr[-400:]}{after.stderr[-400:]} {got_before} {got_after} {want}")


if __name__ == "__main__":
    sys.exit(main())
