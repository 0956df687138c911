"""Weft servers against TensorFlow servers on this machine, in one run, with
the same TensorFlow client driving both (bench_vs_tf.sh --only distributed).

  RecvTensor throughput  a float32 variable on worker 1 whose value worker 0
                         receives each step and reads one element of: bytes
                         moved per second (what a worker pulling a ps
                         variable sees; the transfer, not the kernels)
  v + 1 -> sum step      a float32 tensor made on worker 1 (v + 1) and
                         summed on worker 0 each step: bytes per second with
                         both kernels' time in the step
  trivial step latency   a variable read and incremented on worker 1, doubled
                         on worker 0 (median); a variable, because
                         TensorFlow's master folds constants before it
                         partitions, and `constant(1.0) + 1.0` on worker 1
                         would become a one-task step
  ps + worker MLP        variables on ps, forward/backward on a worker
  in-graph, 2 workers    one tower per worker, variables and update on ps
  between-graph async    2 workers, each its own graph and session (two
                         threads of this client), replica_device_setter,
                         variables on ps: examples/s of both together
  between-graph sync     the same with SyncReplicasOptimizer (2 of 2
                         gradients per step) under MonitoredTrainingSession:
                         examples of the applied global steps per second
  TF1 program            a program as TensorFlow 1.x users wrote them:
                         reference variables on the ps, each worker's input
                         a tf.data pipeline over a TFRecord file (shard,
                         shuffle, repeat, batch, parse, prefetch) on its
                         task, two async workers under
                         MonitoredTrainingSession: examples per second

Prints medians of --repeats runs and the ratio Weft / TensorFlow (higher
is better for rates, lower for latency). Weft's tasks reach each other over
their local sockets (distributed/rpc/local_socket.h), as they do by
default; --tcp-too also runs the transfer rows and the trivial step with
the Weft tasks on loopback TCP alone (weft server --no-local-socket), in
the same interleaved repeats.

usage: bench_distributed.py WEFT_BINARY [--repeats N] [--quick] [--only replication] [--tcp-too]
(replication: the replication rows and the TF1 program only, 1 ps + 2 workers)
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_cluster  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

parser = argparse.ArgumentParser()
parser.add_argument("weft")
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--quick", action="store_true", help="small sizes only")
parser.add_argument("--only", choices=["replication"])
parser.add_argument("--tcp-too", action="store_true",
                    help="also Weft over loopback TCP (transfer rows)")
args = parser.parse_args()
WORK = tempfile.mkdtemp(prefix="weft_bench_dist_")


def timed(sess, fetch, feed=None, steps=20, warmup=3, min_seconds=2.0):
    """Median seconds of one step over at least `steps` steps and at least
    `min_seconds` of stepping: a few dozen steps of a millisecond each are
    over before the machine's noise averages out."""
    for _ in range(warmup):
        sess.run(fetch, feed)
    times = []
    while len(times) < steps or sum(times) < min_seconds:
        start = time.perf_counter()
        sess.run(fetch, feed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def recv_throughput(target, nbytes, compute):
    """GB/s of a step that moves nbytes from worker 1 to worker 0: the
    variable's value as it is (compute=False), or a fresh v + 1 that worker
    0 sums (compute=True: both kernels' time is in the step)."""
    g = tf1.Graph()
    with g.as_default():
        n = nbytes // 4
        with tf1.device("/job:worker/task:1"):
            v = tf1.Variable(tf1.zeros([n]), name="big")
            big = v + 1.0 if compute else v.read_value()
        with tf1.device("/job:worker/task:0"):
            # One element read: the whole tensor crosses, little else runs.
            out = tf1.reduce_sum(big) if compute else big[0]
        init = tf1.global_variables_initializer()
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        steps = 5 if nbytes >= 64 << 20 else 20
        seconds = timed(sess, out, steps=steps, warmup=2)
    return nbytes / seconds / 1e9


def trivial_latency(target):
    g = tf1.Graph()
    with g.as_default():
        with tf1.device("/job:worker/task:1"):
            x = tf1.Variable(1.0) + 1.0
        with tf1.device("/job:worker/task:0"):
            y = x * 2.0
        init = tf1.global_variables_initializer()
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        return timed(sess, y, steps=200, warmup=20) * 1e6  # us


def mlp(towers, param_device):
    g = tf1.Graph()
    with g.as_default():
        rng = np.random.RandomState(0)
        with tf1.device(param_device):
            w1 = tf1.Variable(rng.randn(64, 256).astype(np.float32) * 0.1)
            w2 = tf1.Variable(rng.randn(256, 256).astype(np.float32) * 0.1)
            w3 = tf1.Variable(rng.randn(256, 10).astype(np.float32) * 0.1)
        x = tf1.placeholder(tf.float32, [None, 64])
        y = tf1.placeholder(tf.int64, [None])
        xs, ys = tf1.split(x, len(towers)), tf1.split(y, len(towers))
        grads, losses = [], []
        for k, dev in enumerate(towers):
            with tf1.device(dev):
                h = tf1.nn.relu(tf1.matmul(xs[k], w1))
                h = tf1.nn.relu(tf1.matmul(h, w2))
                logits = tf1.matmul(h, w3)
                loss = tf1.reduce_mean(
                    tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=ys[k], logits=logits))
                losses.append(loss)
                grads.append(tf1.gradients(loss, [w1, w2, w3]))
        with tf1.device(param_device):
            avg = [tf1.add_n([gr[i] for gr in grads]) / len(towers) for i in range(3)]
            train = tf1.train.GradientDescentOptimizer(0.1).apply_gradients(
                list(zip(avg, [w1, w2, w3])))
        init = tf1.global_variables_initializer()
    return g, x, y, train, init


def mlp_steps_per_s(target, towers):
    g, x, y, train, init = mlp(towers, "/job:ps/task:0")
    rng = np.random.RandomState(1)
    feed = {x: rng.randn(64, 64).astype(np.float32), y: rng.randint(0, 10, 64)}
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        return 1.0 / timed(sess, train, feed, steps=50, warmup=5)


def worker_mlp_loss(x, y, ref=False):
    """The between-graph rows' MLP (64-256-256-10, seeded weights), built
    in the caller's graph and device scope: its loss on inputs x, labels y.
    ref: TensorFlow 1.x's reference variables rather than resource ones."""
    init_rng = np.random.RandomState(0)
    kind = {"use_resource": False} if ref else {}
    w1 = tf1.Variable(init_rng.randn(64, 256).astype(np.float32) * 0.1, **kind)
    w2 = tf1.Variable(init_rng.randn(256, 256).astype(np.float32) * 0.1, **kind)
    w3 = tf1.Variable(init_rng.randn(256, 10).astype(np.float32) * 0.1, **kind)
    h = tf1.nn.relu(tf1.matmul(x, w1))
    h = tf1.nn.relu(tf1.matmul(h, w2))
    return tf1.reduce_mean(tf1.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=tf1.matmul(h, w3)))


def between_async_examples_per_s(cluster, steps=600, batch=32):
    """Two between-graph workers training the MLP asynchronously."""
    import threading
    sessions, trains, feeds = [], [], []
    rng = np.random.RandomState(1)
    for k in range(2):
        g = tf1.Graph()
        with g.as_default():
            with tf1.device(tf1.train.replica_device_setter(
                    ps_tasks=1, worker_device=f"/job:worker/task:{k}")):
                x = tf1.placeholder(tf.float32, [batch, 64])
                y = tf1.placeholder(tf.int64, [batch])
                train = tf1.train.GradientDescentOptimizer(0.1).minimize(worker_mlp_loss(x, y))
                init = tf1.global_variables_initializer()
        sess = tf1.Session(cluster.target("worker", k), graph=g)
        if k == 0:
            sess.run(init)
        sessions.append(sess)
        trains.append(train)
        feeds.append({x: rng.randn(batch, 64).astype(np.float32),
                      y: rng.randint(0, 10, batch)})
    for k in range(2):  # warm up: prepare each worker's step
        for _ in range(3):
            sessions[k].run(trains[k], feeds[k])

    def work(k):
        for _ in range(steps):
            sessions[k].run(trains[k], feeds[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    for sess in sessions:
        sess.close()
    return 2 * steps * batch / seconds


def monitored_global_steps_per_s(cluster, build, what, steps, warmup):
    """Two between-graph workers, each its graph from build(k) (which
    returns its train op, its global step tensor and its extra hooks, built
    under replica_device_setter), run under MonitoredTrainingSession until
    the global step reaches warmup + steps: global steps per second, counted
    by the chief from when the warm-up ends. `what` names the row in errors."""
    import threading
    spec = tf.train.ClusterSpec(cluster.addresses)
    ready = threading.Barrier(2, timeout=120)
    timing, errors = {}, []

    def work(k):
        g = tf1.Graph()
        with g.as_default():
            with tf1.device(tf1.train.replica_device_setter(
                    worker_device=f"/job:worker/task:{k}", cluster=spec)):
                train, step, hooks = build(k)
            hooks = hooks + [tf1.train.StopAtStepHook(last_step=warmup + steps)]
            config = tf1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{k}"])
            try:
                if k == 1:
                    ready.wait()  # after the chief's session: no 30 s readiness poll
                with tf1.train.MonitoredTrainingSession(
                        master=cluster.target("worker", k), is_chief=k == 0,
                        hooks=hooks, config=config, stop_grace_period_secs=5) as sess:
                    if k == 0:
                        ready.wait()
                    now = 0
                    while not sess.should_stop():
                        _, now = sess.run([train, step])
                        if k == 0 and now >= warmup and "start" not in timing:
                            timing["start"] = (time.perf_counter(), now)
                    if k == 0:
                        timing["end"] = (time.perf_counter(), now)
            except Exception as e:  # noqa: BLE001 - raised below
                errors.append(e)
                ready.abort()

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    if errors or "end" not in timing:
        raise RuntimeError(f"{what} did not finish: {errors}")
    (t0, s0), (t1, s1) = timing["start"], timing["end"]
    return (s1 - s0) / (t1 - t0)


def between_sync_examples_per_s(cluster, steps=400, batch=32, warmup=5):
    """Two between-graph workers training the MLP with SyncReplicasOptimizer:
    each applied global step holds both workers' batches."""
    def build(k):
        rng = np.random.RandomState(1 + k)
        loss = worker_mlp_loss(tf1.constant(rng.randn(batch, 64).astype(np.float32)),
                               tf1.constant(rng.randint(0, 10, batch)))
        step = tf1.train.get_or_create_global_step()
        opt = tf1.train.SyncReplicasOptimizer(
            tf1.train.GradientDescentOptimizer(0.1),
            replicas_to_aggregate=2, total_num_replicas=2)
        return opt.minimize(loss, global_step=step), step, [opt.make_session_run_hook(k == 0)]

    return 2 * batch * monitored_global_steps_per_s(cluster, build, "between-sync",
                                                    steps, warmup)


def tfrecord_file(n=2048):
    """Examples of 64 float features and an int64 label, as a TFRecord file
    (written once per run of this script)."""
    path = os.path.join(WORK, "mlp.tfrecord")
    if not os.path.exists(path):
        rng = np.random.RandomState(3)
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(n):
                f = {"x": tf.train.Feature(float_list=tf.train.FloatList(
                         value=rng.randn(64).astype(np.float32))),
                     "y": tf.train.Feature(int64_list=tf.train.Int64List(
                         value=[rng.randint(0, 10)]))}
                w.write(tf.train.Example(features=tf.train.Features(feature=f))
                        .SerializeToString())
    return path


def tf1_program_examples_per_s(cluster, steps=300, batch=32, warmup=10):
    """A TensorFlow 1.x program as written for TF1: reference variables on
    the ps (replica_device_setter), each worker's input a tf.data pipeline
    over a TFRecord file on its own task (parse, shard per worker, shuffle,
    repeat, batch, prefetch), two workers under MonitoredTrainingSession,
    asynchronous: examples of the global steps per second (each one
    worker's batch)."""
    path = tfrecord_file()
    features = {"x": tf.io.FixedLenFeature([64], tf.float32),
                "y": tf.io.FixedLenFeature([], tf.int64)}

    def build(k):
        ds = (tf.data.TFRecordDataset(path).shard(2, k).repeat()
              .shuffle(256, seed=k).batch(batch, drop_remainder=True)
              .map(lambda s: tf.io.parse_example(s, features)).prefetch(2))
        batch_in = tf1.data.make_one_shot_iterator(ds).get_next()
        loss = worker_mlp_loss(batch_in["x"], batch_in["y"], ref=True)
        step = tf1.train.get_or_create_global_step()
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return train, step, []

    return batch * monitored_global_steps_per_s(cluster, build, "the TF1 program",
                                                steps, warmup)


def measure(kind):
    jobs = {"ps": 1, "worker": 2}
    cluster = local_cluster.Cluster(
        args.weft, WORK, jobs, tf_jobs=("ps", "worker") if kind == "tf" else (),
        name=kind,
        # The TF1 program's workers read its TFRecord file under WORK.
        server_flags=("--file-root", WORK) + (
            ("--no-local-socket",) if kind == "weft-tcp" else ()))
    try:
        t = cluster.target()
        out = {}
        if args.only != "replication":
            sizes = [4 << 10, 1 << 20] + ([] if args.quick else [64 << 20, 256 << 20])
            for size in sizes:
                out[f"RecvTensor {size >> 10} KiB (GB/s)"] = recv_throughput(t, size, False)
            for size in sizes:
                out[f"v + 1 -> sum {size >> 10} KiB (GB/s)"] = recv_throughput(t, size, True)
            out["trivial 2-task step (us)"] = trivial_latency(t)
            if kind == "weft-tcp":
                return out
            out["MLP ps+worker (steps/s)"] = mlp_steps_per_s(t, ["/job:worker/task:0"])
        out["MLP in-graph 2 workers (steps/s)"] = mlp_steps_per_s(
            t, ["/job:worker/task:0", "/job:worker/task:1"])
        out["MLP between-async 2 workers (ex/s)"] = between_async_examples_per_s(cluster)
        out["MLP between-sync 2 workers (ex/s)"] = between_sync_examples_per_s(cluster)
        out["TF1 program: ref vars, TFRecord (ex/s)"] = tf1_program_examples_per_s(cluster)
        return out
    finally:
        cluster.close()


def main():
    kinds = ["weft", "tf"]
    if args.tcp_too and args.only != "replication":
        kinds.insert(1, "weft-tcp")
    runs = {kind: [] for kind in kinds}
    retried = {kind: 0 for kind in kinds}
    for _ in range(args.repeats):
        for kind in kinds:  # interleaved, so drift hits every kind
            try:
                runs[kind].append(measure(kind))
            except Exception as e:  # noqa: BLE001 - shown, then one retry
                # A run that fails is run once more on a fresh cluster, and
                # counted below; TensorFlow's own cluster has failed a run
                # here with "The same RunGraph (Worker) request was received
                # twice" (its request-id check) under the sync-replicas row.
                print(f"{kind}: a run failed, running it again: {e}",
                      file=sys.stderr)
                retried[kind] += 1
                runs[kind].append(measure(kind))
    cpu = platform.processor() or platform.machine()
    print(f"distributed: {args.repeats} repeats, medians; {os.cpu_count()} cores ({cpu})")
    if any(retried.values()):
        print("runs that failed and were run again: " +
              ", ".join(f"{k} {n}" for k, n in retried.items()))
    tcp = "weft-tcp" in runs
    print(f"{'measure':36s} {'weft':>12s} {'tensorflow':>12s} {'weft/tf':>8s}"
          + (f" {'weft tcp':>12s} {'tcp/tf':>8s}" if tcp else ""))
    for key in runs["weft"][0]:
        w = statistics.median(r[key] for r in runs["weft"])
        t = statistics.median(r[key] for r in runs["tf"])
        line = f"{key:36s} {w:12.3f} {t:12.3f} {w / t:8.2f}"
        if tcp and key in runs["weft-tcp"][0]:
            c = statistics.median(r[key] for r in runs["weft-tcp"])
            line += f" {c:12.3f} {c / t:8.2f}"
        print(line)


if __name__ == "__main__":
    main()
