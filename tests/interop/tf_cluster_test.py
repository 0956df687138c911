"""A real TensorFlow 2.21 client driving a cluster of `weft server` tasks.

Starts ps and worker tasks as child processes on loopback with free ports,
then runs tf.compat.v1 sessions against them over gRPC, as a TensorFlow
1.x job would: in-graph replication with variables on the ps task and one
tower per worker task (compared step by step with the same graph in a local
TensorFlow session), variables shared by the sessions of two clients (the
between-graph replication pattern, with device_filters), the same training
against a Weft cluster, a TensorFlow cluster and a mixed one (a Weft ps
under TensorFlow's master and worker), `weft submit` against a Weft and a
TensorFlow cluster, and the errors a
user sees for a failing node and for a task that has died.

usage: tf_cluster_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_compare import check, feed_arg, summary_exit_code  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import local_cluster  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_cluster_")
STEP_TIMEOUT_MS = 60000


def run_options():
    return tf1.RunOptions(timeout_in_ms=STEP_TIMEOUT_MS)


def in_graph_model(devices):
    """A linear model trained by towers: `devices` is (ps device, [tower
    devices]); None for all places means one local device."""
    ps, towers = devices
    g = tf1.Graph()
    rng = np.random.RandomState(3)
    with g.as_default():
        with tf1.device(ps):
            w = tf1.Variable(rng.randn(4, 2).astype(np.float32), name="w")
            b = tf1.Variable(np.zeros(2, np.float32), name="b")
        x = tf1.placeholder(tf.float32, [None, 4], name="x")
        y = tf1.placeholder(tf.float32, [None, 2], name="y")
        xs = tf1.split(x, len(towers))
        ys = tf1.split(y, len(towers))
        losses, grads = [], []
        for k, dev in enumerate(towers):
            with tf1.device(dev), tf1.name_scope(f"tower{k}"):
                pred = tf1.matmul(xs[k], w) + b
                loss = tf1.reduce_mean(tf1.square(pred - ys[k]))
                losses.append(loss)
                grads.append(tf1.gradients(loss, [w, b]))
        with tf1.device(ps):
            avg = [tf1.add_n([gr[i] for gr in grads]) / len(towers)
                   for i in range(2)]
            train = tf1.train.GradientDescentOptimizer(0.1).apply_gradients(
                list(zip(avg, [w, b])))
            total = tf1.add_n(losses) / len(towers)
        init = tf1.global_variables_initializer()
    return g, x, y, total, train, init


def data(step):
    rng = np.random.RandomState(100 + step)
    xv = rng.randn(8, 4).astype(np.float32)
    yv = (xv @ np.array([[1, 0], [0, 1], [1, 1], [-1, 2]], np.float32)).astype(np.float32)
    return xv, yv


def test_in_graph_replication(cluster):
    ps = "/job:ps/task:0"
    towers = ["/job:worker/task:0", "/job:worker/task:1"]
    g, x, y, total, train, init = in_graph_model((ps, towers))
    got = []
    with tf1.Session(cluster.target(), graph=g) as sess:
        sess.run(init, options=run_options())
        for step in range(5):
            xv, yv = data(step)
            loss, _ = sess.run([total, train], {x: xv, y: yv}, options=run_options())
            got.append(loss)
        names = sorted(d.name for d in sess.list_devices())
    check("list_devices names every task's CPU",
          names == sorted(["/job:ps/replica:0/task:0/device:CPU:0",
                           "/job:worker/replica:0/task:0/device:CPU:0",
                           "/job:worker/replica:0/task:1/device:CPU:0"]),
          str(names))
    # The same graph in a local TensorFlow session.
    g2, x2, y2, total2, train2, init2 = in_graph_model((None, [None, None]))
    want = []
    with tf1.Session(graph=g2) as sess:
        sess.run(init2)
        for step in range(5):
            xv, yv = data(step)
            loss, _ = sess.run([total2, train2], {x2: xv, y2: yv})
            want.append(loss)
    check("in-graph replication: 2 worker towers, variables on ps, TF's losses",
          np.allclose(got, want, rtol=1e-5, atol=1e-6), f"weft {got} tf {want}")
    check("in-graph replication: the loss goes down", got[-1] < got[0], str(got))


def shared_variable_graph(task):
    g = tf1.Graph()
    with g.as_default():
        with tf1.device("/job:ps/task:0"):
            v = tf1.Variable(np.zeros(3, np.float32), name="shared")
        with tf1.device(f"/job:worker/task:{task}"):
            delta = tf1.ones([3]) * float(task + 1)
        inc = tf1.assign_add(v, delta)  # with the variable, on ps
        init = tf1.global_variables_initializer()
    return g, v, inc, init


def test_sessions_of_two_clients_share_ps_variables(cluster):
    sessions = []
    for task in range(2):
        g, v, inc, init = shared_variable_graph(task)
        config = tf1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
        sess = tf1.Session(cluster.target("worker", task), graph=g, config=config)
        sessions.append((sess, v, inc, init))
    s0, v0, inc0, init0 = sessions[0]
    s1, v1, inc1, init1 = sessions[1]
    s0.run(init0, options=run_options())
    s0.run(inc0, options=run_options())      # + 1
    s1.run(inc1, options=run_options())      # + 2
    seen0 = s0.run(v0, options=run_options())
    seen1 = s1.run(v1, options=run_options())
    for s, _, _, _ in sessions:
        s.close()
    check("two clients' sessions share the ps task's variable",
          np.array_equal(seen0, [3, 3, 3]) and np.array_equal(seen1, [3, 3, 3]),
          f"{seen0} {seen1}")


def test_a_failing_node_is_a_clear_error(cluster):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None], name="x")
        with tf1.device("/job:worker/task:1"):
            y = tf1.reshape(x, [2, 2], name="square") * 2.0
    with tf1.Session(cluster.target(), graph=g) as sess:
        try:
            sess.run(y, {x: np.ones(3, np.float32)}, options=run_options())
            check("a failing node is InvalidArgumentError", False, "no error")
        except tf.errors.InvalidArgumentError as e:
            check("a failing node on another task is InvalidArgumentError "
                  "naming the node and the task",
                  "square" in e.message and "/job:worker/replica:0/task:1" in e.message,
                  e.message)
        # The session serves on.
        out = sess.run(y, {x: np.ones(4, np.float32)}, options=run_options())
        check("the session serves on after an error",
              np.array_equal(out, np.full((2, 2), 2.0)), str(out))


def test_partial_run(cluster):
    """Session.partial_run over two worker tasks: feeds and fetches given
    in two calls of one step, a fetch on each task."""
    g = tf1.Graph()
    with g.as_default():
        with tf1.device("/job:worker/task:0"):
            a = tf1.placeholder(tf.float32, [])
        with tf1.device("/job:worker/task:1"):
            b = tf1.placeholder(tf.float32, [])
            c = tf1.placeholder(tf.float32, [])
            r1 = a + b
        with tf1.device("/job:worker/task:0"):
            r2 = r1 * c
    with tf1.Session(cluster.target(), graph=g) as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        first = sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})
        second = sess.partial_run(h, r2, feed_dict={c: 3.0})
        try:
            sess.partial_run(h, r2, feed_dict={c: 3.0})
            again = "no error"
        except tf.errors.OpError as e:
            again = e.message
    check("Session.partial_run over two tasks: 3 then 9, and the handle ends "
          "with its last fetch", first == 3.0 and second == 9.0
          and again != "no error", f"{first} {second} {again}")


def propagated_graph():
    """Constants on both tasks of a propagated "worker" job, summed on task
    0; and a variable on task 1."""
    g = tf1.Graph()
    with g.as_default():
        with tf1.device("/job:worker/task:1"):
            a = tf1.constant(17.0, name="on_task1")
            v = tf1.Variable(0.0, name="v")
            init = tf1.placeholder(tf.float32, [], name="init")
            assign = tf1.assign(v, init)
        with tf1.device("/job:worker/task:0"):
            b = tf1.constant(3.0, name="on_task0")
            total = a + b
    return g, total, v, init, assign


def propagated_session(g, master, other):
    """A session on `master` over the cluster {worker: [master, other]}
    given in its ConfigProto (ClusterSpec propagation)."""
    cluster_def = tf1.train.ClusterSpec(
        {"worker": [master.addresses["local"][0],
                    other.addresses["local"][0]]}).as_cluster_def()
    config = tf1.ConfigProto(cluster_def=cluster_def)
    return tf1.Session(master.target("local"), graph=g, config=config)


def test_cluster_spec_propagation(a, b, tf_task):
    """Servers started as /job:local/task:0 each serve a session whose
    ConfigProto names them /job:worker/task:0 and 1: the placement, the
    step statistics by device, isolated state per session; a Weft master
    over a TensorFlow task and a TensorFlow master over a Weft task."""
    g, total, v, init, assign = propagated_graph()
    s1 = propagated_session(g, a, b)
    meta = tf1.RunMetadata()
    opts = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE,
                          timeout_in_ms=STEP_TIMEOUT_MS)
    out = s1.run(total, options=opts, run_metadata=meta)
    where = {n.node_name: d.device for d in meta.step_stats.dev_stats
             for n in d.node_stats}
    check("ClusterSpec propagation: a step over two servers named by the "
          "session's cluster_def, with step statistics under those names",
          out == 20.0
          and where.get("on_task1") == "/job:worker/replica:0/task:1/device:CPU:0"
          and where.get("on_task0") == "/job:worker/replica:0/task:0/device:CPU:0",
          f"{out} {where}")
    s2 = propagated_session(g, a, b)
    s1.run(assign, {init: 37.0}, options=run_options())
    try:
        s2.run(v, options=run_options())
        isolated = False
    except tf.errors.FailedPreconditionError:
        isolated = True
    s2.run(assign, {init: 86.0}, options=run_options())
    seen = (s1.run(v, options=run_options()), s2.run(v, options=run_options()))
    check("ClusterSpec propagation: each session's variables are its own",
          isolated and seen == (37.0, 86.0), f"isolated={isolated} {seen}")
    s2.close()
    check("ClusterSpec propagation: closing one session leaves the other's state",
          s1.run(v, options=run_options()) == 37.0)
    s1.close()
    for name, master, other in (("a Weft master over a TensorFlow task", a, tf_task),
                                ("a TensorFlow master over a Weft task", tf_task, a)):
        try:
            with propagated_session(g, master, other) as s:
                out = s.run(total, options=run_options())
            check(f"ClusterSpec propagation: {name}", out == 20.0, str(out))
        except tf.errors.OpError as e:
            check(f"ClusterSpec propagation: {name}", False, e.message)
    # A cluster_def that leaves the master out is refused, saying so.
    cluster_def = tf1.train.ClusterSpec(
        {"worker": [b.addresses["local"][0]]}).as_cluster_def()
    try:
        with tf1.Session(a.target("local"), graph=g,
                         config=tf1.ConfigProto(cluster_def=cluster_def)) as s:
            s.run(total, options=run_options())
        check("ClusterSpec propagation without the master is refused", False,
              "no error")
    except tf.errors.InvalidArgumentError as e:
        check("ClusterSpec propagation without the master is refused, naming "
              "its address", a.addresses["local"][0] in e.message, e.message)


def test_a_dead_task_is_named(cluster):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [2], name="x")
        with tf1.device("/job:worker/task:1"):
            y = x + 1.0
    sess = tf1.Session(cluster.target(), graph=g)
    sess.run(y, {x: np.ones(2, np.float32)}, options=run_options())
    cluster.kill("worker", 1)
    start = time.time()
    try:
        sess.run(y, {x: np.ones(2, np.float32)}, options=run_options())
        check("a step on a dead task fails", False, "no error")
    except tf.errors.OpError as e:
        took = time.time() - start
        check("a step on a dead task fails fast, naming the task and address",
              took < 30 and "/job:worker/replica:0/task:1" in e.message
              and cluster.addresses["worker"][1] in e.message,
              f"{took:.1f}s {type(e).__name__}: {e.message}")
        print(f"  (the error: {type(e).__name__}: {e.message})")
    sess.close()  # succeeds though a task of the session is gone


def ps_worker_model():
    """Variables on ps, the model and its gradients on worker 0."""
    g = tf1.Graph()
    with g.as_default():
        rng = np.random.RandomState(3)
        with tf1.device("/job:ps/task:0"):
            w = tf1.Variable(rng.randn(4, 2).astype(np.float32), name="w")
            b = tf1.Variable(np.zeros(2, np.float32), name="b")
        with tf1.device("/job:worker/task:0"):
            x = tf1.placeholder(tf.float32, [None, 4], name="x")
            y = tf1.placeholder(tf.float32, [None, 2], name="y")
            loss = tf1.reduce_mean(tf1.square(tf1.matmul(x, w) + b - y), name="loss")
            train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        init = tf1.global_variables_initializer()
    return g, x, y, loss, train, init


def train_ps_worker(target, steps=20):
    g, x, y, loss, train, init = ps_worker_model()
    losses = []
    with tf1.Session(target, graph=g) as sess:
        sess.run(init, options=run_options())
        for step in range(steps):
            xv, yv = data(step)
            l, _ = sess.run([loss, train], {x: xv, y: yv}, options=run_options())
            losses.append(float(l))
    return losses


def submit(target, graph_path, xv, yv):
    return subprocess.run(
        [WEFT, "submit", "--target", target, "--graph", graph_path,
         "--init", "init", "--target-node", "train", "--steps", "20",
         "--feed", feed_arg("x", xv), "--feed", feed_arg("y", yv),
         "--fetch", "loss", "--fetch", "w/Read/ReadVariableOp", "--format", "json"],
        capture_output=True, text=True, timeout=300)


def test_weft_tensorflow_and_mixed_clusters_agree(weft_cluster, tf_cluster, mixed):
    weft = train_ps_worker(weft_cluster.target())
    tf_losses = train_ps_worker(tf_cluster.target())
    mixed_losses = train_ps_worker(mixed.target())
    check("20 steps, a TensorFlow client: a Weft cluster's losses equal a "
          "TensorFlow cluster's",
          np.allclose(weft, tf_losses, rtol=1e-4, atol=1e-6), f"{weft} vs {tf_losses}")
    check("a Weft ps under TensorFlow's master and worker: the losses equal "
          "an all-TensorFlow cluster's",
          np.allclose(mixed_losses, tf_losses, rtol=1e-4, atol=1e-6),
          f"{mixed_losses} vs {tf_losses}")
    # weft submit against both clusters: the model's GraphDef, one batch.
    g, *_ = ps_worker_model()
    path = os.path.join(WORK, "ps_worker.pbtxt")
    tf1.train.write_graph(g.as_graph_def(), WORK, os.path.basename(path), as_text=True)
    xv, yv = data(0)
    runs = [submit(c.target(), path, xv, yv) for c in (weft_cluster, tf_cluster)]
    ok = all(r.returncode == 0 for r in runs)
    detail = " | ".join(r.stderr[-800:] for r in runs)
    if ok:
        got = [json.loads(r.stdout)["fetches"] for r in runs]
        vals = [np.concatenate([np.asarray(f[k]["values"], np.float64).reshape(-1)
                                for k in ("loss", "w/Read/ReadVariableOp")])
                for f in got]
        ok = np.allclose(vals[0], vals[1], rtol=1e-4, atol=1e-6)
        detail = f"weft cluster {vals[0]} tf cluster {vals[1]}"
    check("weft submit: a Weft cluster and a TensorFlow cluster give the same "
          "numbers", ok, detail)


def Cluster(jobs, **kwargs):
    return local_cluster.Cluster(WEFT, WORK, jobs, **kwargs)


def main():
    cluster = Cluster({"ps": 1, "worker": 2})
    tf_cluster = mixed = None
    propagated = []
    try:
        test_in_graph_replication(cluster)
        test_sessions_of_two_clients_share_ps_variables(cluster)
        test_a_failing_node_is_a_clear_error(cluster)
        test_partial_run(cluster)
        tf_cluster = Cluster({"ps": 1, "worker": 1}, tf_jobs=("ps", "worker"), name="tf")
        mixed = Cluster({"ps": 1, "worker": 1}, tf_jobs=("worker",), name="mixed")
        test_weft_tensorflow_and_mixed_clusters_agree(cluster, tf_cluster, mixed)
        for name, tf_jobs in (("prop_a", ()), ("prop_b", ()), ("prop_tf", ("local",))):
            propagated.append(Cluster({"local": 1}, tf_jobs=tf_jobs, name=name))
        test_cluster_spec_propagation(*propagated)
        test_a_dead_task_is_named(cluster)
        cluster.close()
        check("every task shut down cleanly on SIGTERM",
              all(p.returncode == 0 for (job, i), (p, _) in cluster.procs.items()
                  if (job, i) != ("worker", 1)),
              str({k: p.returncode for k, (p, _) in cluster.procs.items()}))
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check("cluster test ran to the end", False, f"{type(e).__name__}: {e}")
        for (job, i) in cluster.procs:
            print(f"--- {job}:{i} log ---\n{cluster.log(job, i)[-3000:]}")
    finally:
        for c in (cluster, tf_cluster, mixed, *propagated):
            if c is not None:
                c.close()
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
