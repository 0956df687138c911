"""weft train --graph FILE --loss T: a model the user brings, exported from
Keras by tools/export_keras_graph.py, trained as TensorFlow trains it.

  - one process: a small CNN with batch norm (SGD, then momentum) gives
    Keras's own losses step by step on the same batches (.npy inputs);
  - between-sync, 1 ps + 2 workers, each on its half of every global batch:
    the mean of the workers' losses is one process's loss on the whole
    batch, step by step (a model without batch norm, whose statistics
    would be per slice); allreduce over 2 workers, hybrid (allreduce with
    each worker's copy split by estimated cost over its 2 CPUs), in-graph towers over
    2 CPU devices, and model parallelism (the graph split by estimated cost
    over 2 CPU devices) likewise;
  - between-async trains (the loss falls);
  - weft compare --graph runs the modes a user's graph has, and its sync
    modes report one process's loss;
  - a graph that trains itself (Keras's training step, its optimizer
    inside; --train-op) gives Keras's losses;
  - synthetic inputs from the placeholders' shapes when no --input is given;
  - errors name the flag, node or file: no such loss, an --input naming no
    placeholder, a file of the wrong dtype or shape, a mode or devices it
    cannot use.
Skipped, visibly, without TensorFlow.

usage: train_graph_cli_test.py PATH_TO_WEFT
"""
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
try:
    import numpy as np
    import tensorflow as tf
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    print("0 passed, 0 failed")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from export_keras_graph import forward_graph, train_step_graph  # noqa: E402
from local_cluster import free_port  # noqa: E402

WEFT = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="weft_train_graph_", dir=os.environ.get("TEST_TMPDIR"))
K = tf.keras
results = {"passed": 0, "failed": 0}
children = []


def check(case, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(f"PASS {case}" if ok else f"FAIL {case}: {detail}", flush=True)


def path(name):
    return os.path.join(WORK, name)


def save(name, value):
    np.save(path(name), value)
    return path(name)


def weft_train(args, timeout=240):
    return subprocess.run([WEFT, "train", *args], capture_output=True, text=True,
                          timeout=timeout)


def metrics(file):
    with open(file) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def cnn():
    inp = K.Input((8, 8, 3))
    h = K.layers.Conv2D(4, 3, padding="same")(inp)
    h = K.layers.BatchNormalization()(h)
    h = K.layers.ReLU()(h)
    h = K.layers.GlobalAveragePooling2D()(h)
    return K.Model(inp, K.layers.Dense(5)(h))


def mlp():
    inp = K.Input((12,))
    h = K.layers.Dense(16, activation="tanh")(inp)
    h = K.layers.LayerNormalization()(h)
    return K.Model(inp, K.layers.Dense(3)(h))


def two_inputs():
    """Features and token ids: a model of two inputs (x0, x1)."""
    feats, ids = K.Input((6,)), K.Input((4,), dtype="int32")
    e = K.layers.Flatten()(K.layers.Embedding(20, 3)(ids))
    h = K.layers.Concatenate()([K.layers.Dense(5, activation="relu")(feats), e])
    return K.Model([feats, ids], K.layers.Dense(3)(h))


def keras_losses(build, x, y, batch, steps, optimizer):
    """Keras's losses, each before its step's update, on batches
    [k * batch, (k + 1) * batch) of x (an array, or a list for a model of
    several inputs) and y, from the model's initial weights."""
    K.utils.set_random_seed(7)
    model = build()
    loss_fn = K.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for k in range(steps):
        rows = slice(k * batch, (k + 1) * batch)
        xb = [v[rows] for v in x] if isinstance(x, list) else x[rows]
        yb = y[rows]
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return losses


def export(build, name):
    """The model's forward graph (any batch) with Keras's initial weights
    for seed 7; the loss is sparse cross-entropy from logits."""
    K.utils.set_random_seed(7)
    model = build()
    graph = forward_graph(model, 0, "sparse_categorical_crossentropy", from_logits=True)
    with open(path(name), "wb") as f:
        f.write(graph.SerializeToString())
    return path(name)


def close(a, b, tol=2e-5):
    return len(a) == len(b) and all(abs(p - q) <= tol * (1 + abs(q)) for p, q in zip(a, b))


def test_single_process():
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (48, 8, 8, 3)).astype(np.float32)
    y = rng.randint(0, 5, (48,)).astype(np.int32)
    graph = export(cnn, "cnn.pb")
    inputs = ["--input", f"x={save('cnn_x.npy', x)}", "--input", f"y={save('cnn_y.npy', y)}"]
    for opt, keras_opt, flags in [
            ("sgd", K.optimizers.SGD(0.1), ["--lr", "0.1"]),
            ("momentum", K.optimizers.SGD(0.05, momentum=0.9), ["--lr", "0.05"])]:
        want = keras_losses(cnn, x, y, 16, 3, keras_opt)
        r = weft_train(["--graph", graph, "--loss", "loss", *inputs, "--batch", "16",
                        "--optimizer", opt, *flags, "--steps", "3",
                        "--metrics-out", path(f"cnn_{opt}.jsonl")])
        got = metrics(path(f"cnn_{opt}.jsonl")) if r.returncode == 0 else []
        check(f"a Keras CNN with batch norm trains in weft as in Keras ({opt})",
              close(got, want), f"weft {got} keras {want}\n{r.stdout[-500:]}{r.stderr[-800:]}")
    # A graph that trains itself: Keras's own momentum optimizer inside.
    K.utils.set_random_seed(7)
    step_graph = train_step_graph(cnn(), 0, "sparse_categorical_crossentropy",
                                  K.optimizers.SGD(0.05, momentum=0.9), from_logits=True)
    with open(path("cnn_step.pb"), "wb") as f:
        f.write(step_graph.SerializeToString())
    want = keras_losses(cnn, x, y, 16, 3, K.optimizers.SGD(0.05, momentum=0.9))
    r = weft_train(["--graph", path("cnn_step.pb"), "--loss", "loss", "--train-op",
                    "train_step", *inputs, "--batch", "16", "--steps", "3",
                    "--metrics-out", path("cnn_step.jsonl")])
    got = metrics(path("cnn_step.jsonl")) if r.returncode == 0 else []
    check("a Keras training step (its optimizer in the graph) runs as in Keras",
          close(got, want), f"weft {got} keras {want}\n{r.stdout[-500:]}{r.stderr[-800:]}")
    r = weft_train(["--graph", path("cnn_step.pb"), "--loss", "loss", "--train-op",
                    "train_step", "--batch", "16", "--mode", "between-sync"])
    check("a graph that trains itself is refused in sync, naming what to export",
          r.returncode != 0 and "export the forward graph" in r.stderr, r.stderr[-500:])

    # A model of two inputs, one of them token ids (an embedding's gather).
    feats = rng.uniform(-1, 1, (32, 6)).astype(np.float32)
    ids = rng.randint(0, 20, (32, 4)).astype(np.int32)
    labels = rng.randint(0, 3, (32,)).astype(np.int32)
    want = keras_losses(two_inputs, [feats, ids], labels, 8, 3, K.optimizers.SGD(0.3))
    r = weft_train(["--graph", export(two_inputs, "two.pb"), "--loss", "loss",
                    "--input", f"x0={save('two_x0.npy', feats)}",
                    "--input", f"x1={save('two_x1.npy', ids)}",
                    "--input", f"y={save('two_y.npy', labels)}", "--batch", "8",
                    "--optimizer", "sgd", "--lr", "0.3", "--steps", "3",
                    "--metrics-out", path("two.jsonl")])
    got = metrics(path("two.jsonl")) if r.returncode == 0 else []
    check("a Keras model of two inputs (x0, x1; an embedding) trains as in Keras",
          close(got, want), f"weft {got} keras {want}\n{r.stdout[-500:]}{r.stderr[-800:]}")
    r = weft_train(["--graph", graph, "--loss", "loss", "--batch", "4", "--steps", "2"])
    check("without --input, the inputs are synthetic from the placeholders",
          r.returncode == 0 and "x synthetic, y synthetic" in r.stdout,
          r.stdout[-500:] + r.stderr[-500:])


def free_addresses(n):
    held = []  # bound until all are picked, so no port comes twice
    try:
        return [f"127.0.0.1:{free_port(held=held)}" for _ in range(n)]
    finally:
        for s in held:
            s.close()


def start(name, args):
    log = open(path(name + ".log"), "w+")
    p = subprocess.Popen([WEFT, *args], stdout=log, stderr=subprocess.STDOUT)
    children.append(p)
    return p, log


def finish(proc_log, timeout=180):
    p, log = proc_log
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    log.seek(0)
    return p.returncode, log.read()


def run_cluster(mode, graph, inputs, steps, ps=1, workers=2):
    addrs = free_addresses(ps + workers)
    spec = f"worker={','.join(addrs[ps:])}"
    if ps:
        spec = f"ps={','.join(addrs[:ps])};" + spec
    servers = [start(f"{mode}_ps{i}", ["server", "--cluster", spec, "--job", "ps",
                                       "--task", str(i)]) for i in range(ps)]
    try:
        procs = [start(f"{mode}_w{i}", [
            "train", "--graph", graph, "--loss", "loss", *inputs, "--batch", "8",
            "--mode", mode, "--cluster", spec, "--job", "worker", "--task", str(i),
            "--steps", str(steps), "--optimizer", "sgd", "--lr", "0.2",
            "--metrics-out", path(f"{mode}_w{i}.jsonl")]) for i in range(workers)]
        outs = [finish(p) for p in procs]
    finally:
        for p, _ in servers:
            p.kill()
            p.wait()
    ok = all(rc == 0 for rc, _ in outs)
    losses = [metrics(path(f"{mode}_w{i}.jsonl")) if ok else [] for i in range(workers)]
    return ok, losses, "\n".join(out[-800:] for _, out in outs)


def test_replicated_modes():
    rng = np.random.RandomState(4)
    x = rng.uniform(-1, 1, (64, 12)).astype(np.float32)
    y = rng.randint(0, 3, (64,)).astype(np.int32)
    graph = export(mlp, "mlp.pb")
    inputs = ["--input", f"x={save('mlp_x.npy', x)}", "--input", f"y={save('mlp_y.npy', y)}"]
    want = keras_losses(mlp, x, y, 16, 3, K.optimizers.SGD(0.2))
    for mode, ps in [("between-sync", 1), ("allreduce", 0), ("hybrid", 0)]:
        ok, losses, out = run_cluster(mode, graph, inputs, 3, ps=ps)
        mean = [(a + b) / 2 for a, b in zip(*losses)] if ok else []
        check(f"{mode} over 2 workers: the mean of their losses is one "
              "process's on the whole batch"
              + (" (each worker's copy split by cost over its 2 CPUs)"
                 if mode == "hybrid" else ""),
              ok and close(mean, want, 1e-4),
              f"weft {mean} keras {want}\n{out}")
    r = weft_train(["--graph", graph, "--loss", "loss", *inputs, "--batch", "16",
                    "--mode", "in-graph", "--devices", "cpu:0,cpu:1", "--steps", "3",
                    "--optimizer", "sgd", "--lr", "0.2",
                    "--metrics-out", path("in_graph.jsonl")])
    got = metrics(path("in_graph.jsonl")) if r.returncode == 0 else []
    check("in-graph, a tower per CPU device: one process's losses on the whole batch",
          close(got, want, 1e-4), f"weft {got} keras {want}\n{r.stdout[-500:]}{r.stderr[-800:]}")
    r = weft_train(["--graph", graph, "--loss", "loss", *inputs, "--batch", "16",
                    "--mode", "model-parallel", "--devices", "cpu:0,cpu:1", "--steps", "3",
                    "--optimizer", "sgd", "--lr", "0.2",
                    "--metrics-out", path("model_parallel.jsonl")])
    got = metrics(path("model_parallel.jsonl")) if r.returncode == 0 else []
    check("model-parallel, split by estimated cost over 2 CPU devices: Keras's losses",
          close(got, want, 1e-4) and "split by estimated cost" in r.stdout,
          f"weft {got} keras {want}\n{r.stdout[-500:]}{r.stderr[-800:]}")
    ok, losses, out = run_cluster("between-async", graph, inputs, 40)
    falls = ok and all(len(l) > 4 and np.mean(l[-3:]) < np.mean(l[:3]) for l in losses)
    check("between-async over 2 workers trains (the loss falls)", falls,
          f"{losses}\n{out}")


def test_compare():
    """weft compare --graph over the modes a user's graph has: the sync modes
    end at one process's loss (the global batch's mean, not the chief's)."""
    graph = path("mlp.pb")
    out = path("compare")
    r = subprocess.run([WEFT, "compare", "--graph", graph, "--loss", "loss",
                        "--input", f"x={path('mlp_x.npy')}", "--input",
                        f"y={path('mlp_y.npy')}", "--batch", "16", "--steps", "12",
                        "--optimizer", "sgd", "--lr", "0.2", "--out", out],
                       capture_output=True, text=True, timeout=600)
    try:
        with open(os.path.join(out, "report.json")) as f:
            runs = {run["mode"]: run for run in json.load(f)["runs"]}
    except (OSError, ValueError) as e:
        runs = {}
        r.stderr += repr(e)
    check("weft compare --graph runs single, model-parallel, in-graph, "
          "between-async, between-sync, allreduce and hybrid",
          r.returncode == 0 and sorted(runs) == ["allreduce", "between-async",
                                                 "between-sync", "hybrid", "in-graph",
                                                 "model-parallel", "single"]
          and all(run["ok"] for run in runs.values()),
          r.stdout[-1500:] + r.stderr[-800:])
    if "single" in runs:
        single = runs["single"]["final_loss"]
        for mode in ("model-parallel", "in-graph", "between-sync", "allreduce", "hybrid"):
            got = runs.get(mode, {}).get("final_loss")
            check(f"compare: {mode}'s loss is one process's ({single:.5f})",
                  got is not None and abs(got - single) <= 1e-4 * (1 + single),
                  f"{mode} {got}")
    r = subprocess.run([WEFT, "compare", "--graph", path("cnn_step.pb"), "--loss", "loss",
                        "--train-op", "train_step", "--modes", "allreduce"],
                       capture_output=True, text=True, timeout=60)
    check("compare: a mode a --graph model lacks is refused, naming those it has",
          r.returncode != 0 and "allreduce is not available" in r.stderr
          and "between-async" in r.stderr, r.stderr[-500:])


def test_errors():
    graph = path("mlp.pb")
    bad_dtype = save("bad_dtype.npy", np.zeros((4, 12), np.float64))
    bad_shape = save("bad_shape.npy", np.zeros((4, 11), np.float32))
    for args, want in [
            (["--loss", "nope"], "no loss tensor 'nope'"),
            (["--loss", "loss", "--input", "z=" + bad_dtype], "no placeholder 'z'"),
            (["--loss", "loss", "--batch", "4", "--input", "x=" + bad_dtype], "holds double"),
            (["--loss", "loss", "--batch", "4", "--input", "x=" + bad_shape],
             "dimension 1 must be 12"),
            (["--loss", "loss"], "give --batch"),
            (["--loss", "loss", "--batch", "4", "--mode", "hybrid", "--devices", "cpu:0"],
             "needs 2 or more --devices"),
            (["--loss", "loss", "--batch", "4", "--mode", "fast"], "--mode must be"),
            (["--loss", "loss", "--batch", "4", "--mode", "in-graph"], "needs --devices"),
            (["--loss", "loss", "--batch", "4", "--data", "digits"], "--input"),
            (["--loss", "loss", "--batch", "4", "--model", "mlp"], "--model")]:
        r = weft_train(["--graph", graph, *args, "--steps", "1"])
        check(f"error names the problem: {want}", r.returncode != 0 and want in r.stderr,
              f"rc {r.returncode}: {r.stderr[-600:]}")


try:
    test_single_process()
    test_replicated_modes()
    test_compare()
    test_errors()
finally:
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
