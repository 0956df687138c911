"""Conformance: RemoteCall (tf.compat.v1's functional_ops.remote_call), a
library function run on the device its target names, as TensorFlow 1.x
programs use it, from a TensorFlow 2.21 client on a Weft cluster (one ps and
two worker tasks) and, for this process's devices, with `weft run`.

Cases: a target on another task (the function's graph is registered there
and each call is a step of it), a target on the calling task, a target on
the ps task that reads the arguments from variables there, a function with
several results and a control-flow body, values compared with TensorFlow's
own servers running the same client code; and the errors a user meets
(a target no task has, a malformed target), which must name the target.

usage: remote_call_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, decode, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("remote_call")
from tensorflow.python.framework import function  # noqa: E402
from tensorflow.python.ops import functional_ops  # noqa: E402
import local_cluster  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OPTIONS = tf1.RunOptions(timeout_in_ms=60000)
WORKER0 = "/job:worker/replica:0/task:0"
WORKER1 = "/job:worker/replica:0/task:1"
PS0 = "/job:ps/replica:0/task:0"


@function.Defun(tf.float32, tf.float32)
def mul(a, b):
    return a * b


@function.Defun(tf.float32, tf.int32)
def pow_and_sum(x, n):
    # A loop in the body, and two results of different dtypes.
    _, y = tf1.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x),
                          [tf.constant(0), tf.ones_like(x)])
    return y, tf.reduce_sum(tf.cast(y, tf.int64))


def cross_task():
    """TensorFlow's own cross-process case: variables on the ps, the call
    on worker 0, the function on worker 1."""
    with tf.device(PS0):
        a = tf1.Variable(2.0)
        b = tf1.Variable(3.0)
    with tf.device(WORKER0 + "/cpu:0"):
        out = functional_ops.remote_call(args=[a, b], Tout=[tf.float32], f=mul,
                                         target=WORKER1 + "/cpu:0")[0] + 3.0
    return [out], tf1.global_variables_initializer()


def same_task():
    with tf.device(WORKER0 + "/cpu:0"):
        x = tf.constant([1.5, -2.0, 3.0])
        y = tf.constant([2.0, 4.0, -1.0])
        out = functional_ops.remote_call(args=[x, y], Tout=[tf.float32], f=mul,
                                         target=WORKER0 + "/cpu:0")
    return out, None


def on_ps_with_loop():
    with tf.device(WORKER1):
        x = tf.constant([[1.0, 2.0], [0.5, -3.0]])
        n = tf.constant(3)
        outs = functional_ops.remote_call(args=[x, n], Tout=[tf.float32, tf.int64],
                                          f=pow_and_sum, target=PS0 + "/device:CPU:0")
    return outs, None


def fed_target():
    # The target is a runtime value: one graph, two targets.
    with tf.device(WORKER0):
        target = tf1.placeholder(tf.string, [])
        out = functional_ops.remote_call(args=[tf.constant(5.0), tf.constant(7.0)],
                                         Tout=[tf.float32], f=mul, target=target)
    return out, target


def run_case(sess_target, build, steps=2):
    g = tf1.Graph()
    with g.as_default():
        fetches, init = build()
        with tf1.Session(sess_target, graph=g) as sess:
            if init is not None:
                sess.run(init, options=OPTIONS)
            return [sess.run(fetches, options=OPTIONS) for _ in range(steps)]


def same(a, b):
    return all(np.array_equal(np.asarray(x), np.asarray(y))
               and np.asarray(x).dtype == np.asarray(y).dtype
               for ra, rb in zip(a, b) for x, y in zip(ra, rb)) and len(a) == len(b)


def test_against_tensorflow(weft, tfc):
    for name, build in [("cross_task/ps_variables_worker1_function", cross_task),
                        ("same_task/target_on_the_calling_task", same_task),
                        ("ps_target/while_loop_two_results", on_ps_with_loop)]:
        try:
            want = run_case(tfc.target(), build)
            got = run_case(weft.target(), build)
            check(name, same(want, got), f"weft {got} tf {want}")
        except Exception as e:  # noqa: BLE001
            check(name, False, f"{type(e).__name__}: {str(e)[:800]}")


def test_fed_target_and_errors(weft):
    g = tf1.Graph()
    with g.as_default():
        out, target = fed_target()
        with tf1.Session(weft.target(), graph=g) as sess:
            try:
                got = [sess.run(out, {target: t}, options=OPTIONS)[0]
                       for t in (WORKER1 + "/cpu:0", WORKER0 + "/cpu:0", PS0 + "/cpu:0")]
                check("fed_target/three_targets_one_graph", got == [35.0] * 3, str(got))
            except Exception as e:  # noqa: BLE001
                check("fed_target/three_targets_one_graph", False, str(e)[:800])
            for case, bad, words in [
                ("errors/target_no_task_has", "/job:worker/replica:0/task:7/cpu:0",
                 ["task:7"]),
                ("errors/device_the_task_lacks", WORKER1 + "/device:CPU:9", ["CPU:9"]),
                ("errors/malformed_target", "/job:worker/bogus:1", ["bogus"]),
            ]:
                try:
                    sess.run(out, {target: bad}, options=OPTIONS)
                    check(case, False, "no error")
                except tf.errors.OpError as e:
                    check(case, all(w in e.message for w in words) and "mul" in e.message,
                          e.message[:600])
            # The session still works after the errors.
            try:
                check("errors/session_goes_on",
                      sess.run(out, {target: WORKER1 + "/cpu:0"}, options=OPTIONS)[0] == 35.0)
            except Exception as e:  # noqa: BLE001
                check("errors/session_goes_on", False, str(e)[:600])


def test_weft_run_local_devices():
    """`weft run` on a graph whose RemoteCall targets another CPU device of
    the same process."""
    g = tf1.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            out = functional_ops.remote_call(
                args=[tf.constant([1.0, 2.0]), tf.constant([3.0, -1.0])],
                Tout=[tf.float32], f=mul,
                target="/job:localhost/replica:0/task:0/device:CPU:1")
        tf.identity(out[0], name="result")
    path = os.path.join(WORK, "local.pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    proc = subprocess.run([WEFT, "run", "--graph", path, "--fetch", "result",
                           "--cpu-devices", "2", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    try:
        got = decode(json.loads(proc.stdout)["fetches"]["result"])
        check("weft_run/second_cpu_of_the_process", np.allclose(got, [3.0, -2.0]),
              str(got))
    except Exception as e:  # noqa: BLE001
        check("weft_run/second_cpu_of_the_process", False,
              f"{e}: {proc.stdout[:400]} {proc.stderr[:800]}")


def main():
    jobs = {"ps": 1, "worker": 2}
    for d in ("weft", "tf"):
        os.makedirs(os.path.join(WORK, d), exist_ok=True)
    weft = local_cluster.Cluster(WEFT, os.path.join(WORK, "weft"), jobs)
    try:
        tfc = local_cluster.Cluster(WEFT, os.path.join(WORK, "tf"), jobs,
                                    tf_jobs=tuple(jobs))
        try:
            test_against_tensorflow(weft, tfc)
        finally:
            tfc.close()
        test_fed_target_and_errors(weft)
    finally:
        weft.close()
    test_weft_run_local_devices()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
