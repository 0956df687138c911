"""Runs the same GraphDefs in Weft (`weft run --timing`) and TensorFlow 2.21
(tf.compat.v1.Session) in one run, interleaved, and prints medians and ratios.

Benchmarks:
  executor  per-node overhead: a 10,000-node chain of scalar AddV2 and a
            10,000-wide fan of scalar Neg ops joined by a NoOp (us per node)
  matmul    float32 MatMul of two NxN variables, N = 256, 1024, 2048 (GFLOP/s)
  train     one training step (ms): MLP 784-256-256-10 batch 128 with SGD and
            with Adam; CNN (two 5x5 conv + max-pool, two dense) batch 32, SGD;
            and the CPU time a step takes, all threads (ms; the mean over the
            steps after the first)
  kernels   the CNN step's heavy kernels alone at its shapes (us per run)
  models    inference of a Keras LSTM and a Keras GRU (sequence 32, width
            128, batch 16) exported as TensorFlow 2.x writes them: a
            functional While over TensorLists (tools/bench_rnn_graphs.py);
            and of Keras ResNet50, MobileNetV2, EfficientNetB0 and
            DenseNet121 frozen at 224x224, batch 1, and a ResNet50 training
            step at batch 4 (tools/bench_app_graphs.py);
            ms per batch
  devices   in-graph replicated MLP, global batch 256, K towers on K CPU
            devices (K = 1, 2, 4; steps/s), and the same graph with every
            tower on /cpu:0, whose difference (median over repeats of the
            paired difference) is the cost of partitioning and transfers;
            the same for a small MLP (64-32-10, batch 32, K = 2, 4), whose
            step is mostly that per-step cost
TensorFlow runs with Grappler and constant folding off, so both systems run
the graph as written, except in `models`: there both optimise the graph as
they do by default (TensorFlow's grappler; Weft's constant folding and
kernel fusion, runtime/graph_optimizer.h), as a user running a saved model
would. Each figure is the median over --repeats measurements,
each the median step time over many steps.

usage: bench_vs_tf.py WEFT_BINARY [--only executor|matmul|train|kernels|models|devices|distributed|
                       replication]
                       [--repeats N]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

import bench_train_graphs

tf1 = tf.compat.v1
tf1.disable_eager_execution()
tf1.disable_resource_variables()

parser = argparse.ArgumentParser()
parser.add_argument("weft")
parser.add_argument("--only", choices=["executor", "matmul", "train", "kernels", "models",
                                       "devices", "distributed", "replication"])
parser.add_argument("--repeats", type=int, default=5)
args = parser.parse_args()
if args.only in ("distributed", "replication"):
    # Clusters of servers, in a script of its own (not part of the default
    # run: it starts a dozen server processes per repeat); replication: its
    # MLP rows only (in-graph, between-graph async and sync).
    here = os.path.dirname(os.path.abspath(__file__))
    os.execv(sys.executable, [sys.executable, os.path.join(here, "bench_distributed.py"),
                              args.weft, "--repeats", str(args.repeats)]
             + (["--only", "replication"] if args.only == "replication" else []))
WORK = tempfile.mkdtemp(prefix="weft_bench_")


def tf_config(cpus=1, optimize=False):
    """optimize: TensorFlow's default graph optimisations (grappler, constant
    folding), for graphs Weft optimises too (the models section); otherwise
    both run the graph's nodes as written."""
    config = tf1.ConfigProto()
    config.device_count["CPU"] = cpus
    if optimize:
        return config
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    return config


def save(graph_def, name):
    path = os.path.join(WORK, name + ".pb")
    with open(path, "wb") as f:
        f.write(graph_def.SerializeToString())
    return path


def save_feeds(feeds, name):
    """Writes each fed array as NAME_PLACEHOLDER.npy; returns --feed specs."""
    specs = []
    for key, value in feeds.items():
        path = os.path.join(WORK, f"{name}_{key}.npy")
        np.save(path, value)
        specs.append(f"{key}=@{path}")
    return specs


# CPU time (us, all threads) per step of the last weft_step_us / tf_step_us
# call: on a busy machine a step's wall time is mostly the process's share
# of the cores, and this says what the step itself costs.
last_cpu_us = {}


def process_cpu_us():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e6


def weft_step_us(path, fetch, steps, feeds=(), init=None, target=None, cpus=1):
    cmd = [args.weft, "run", "--graph", path, "--steps", str(steps), "--timing"]
    if cpus > 1:
        cmd += ["--cpu-devices", str(cpus)]
    cmd += ["--fetch", fetch] if fetch else ["--target", target]
    for f in feeds:
        cmd += ["--feed", f]
    if init:
        cmd += ["--init", init]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"weft failed: {proc.stderr}")
    last_cpu_us["weft"] = float(re.search(r"cpu_us_per_step=([\d.]+)", proc.stderr).group(1))
    return float(re.search(r"median_step_us=([\d.]+)", proc.stderr).group(1))


def tf_step_us(graph_def, fetch, steps, feed=None, init=None, cpus=1, optimize=False):
    g = tf1.Graph()
    with g.as_default():
        tf1.import_graph_def(graph_def, name="")
    with tf1.Session(graph=g, config=tf_config(cpus, optimize)) as sess:
        if init:
            sess.run(g.get_operation_by_name(init))
        target = g.get_operation_by_name(fetch) if ":" not in fetch else g.get_tensor_by_name(fetch)
        feed_dict = {g.get_tensor_by_name(k): v for k, v in (feed or {}).items()}
        sess.run(target, feed_dict)  # warm-up: builds the executors
        times = []
        cpu_start = process_cpu_us()
        for _ in range(steps):
            start = time.perf_counter()
            sess.run(target, feed_dict)
            times.append((time.perf_counter() - start) * 1e6)
        last_cpu_us["tf"] = (process_cpu_us() - cpu_start) / steps
    return statistics.median(times)


def measure(name, weft_fn, tf_fn, cpu=None):
    """Medians of the two step times over the repeats; with `cpu` (a list),
    also appends the medians of their CPU times per step to it."""
    w, t, cw, ct = [], [], [], []
    for _ in range(args.repeats):
        w.append(weft_fn())
        cw.append(last_cpu_us["weft"])
        t.append(tf_fn())
        ct.append(last_cpu_us["tf"])
    if cpu is not None:
        cpu += [statistics.median(cw), statistics.median(ct)]
    return statistics.median(w), statistics.median(t)


rows = []
N = 10000
if args.only in (None, "executor"):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.0, name="one")
        y = x
        for i in range(N):
            y = tf.raw_ops.AddV2(x=y, y=one, name=f"add{i}")
        tf.identity(y, name="chain_out")
    chain = g.as_graph_def()
    chain_path = save(chain, "chain")
    w, t = measure("chain",
                   lambda: weft_step_us(chain_path, "chain_out", 200, ["x=1.0"]),
                   lambda: tf_step_us(chain, "chain_out:0", 100, {"x:0": 1.0}))
    rows.append(("executor: 10,000-node chain (us/node)", w / N, t / N, "lower"))

    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [], name="x")
        outs = [tf.negative(x, name=f"neg{i}") for i in range(N)]
        tf.group(*outs, name="fan_out")
    fan = g.as_graph_def()
    fan_path = save(fan, "fan")
    w, t = measure("fan",
                   lambda: weft_step_us(fan_path, None, 200, ["x=1.0"], target="fan_out"),
                   lambda: tf_step_us(fan, "fan_out", 100, {"x:0": 1.0}))
    rows.append(("executor: 10,000-node fan (us/node)", w / N, t / N, "lower"))

if args.only in (None, "matmul"):
    rng = np.random.RandomState(0)
    for n in (256, 1024, 2048):
        g = tf1.Graph()
        with g.as_default():
            a = tf1.Variable(rng.randn(n, n).astype(np.float32), name="a")
            b = tf1.Variable(rng.randn(n, n).astype(np.float32), name="b")
            tf.matmul(a, b, name="product")
            tf1.global_variables_initializer()
        gd = g.as_graph_def()
        path = save(gd, f"matmul{n}")
        steps = max(5, int(2e10 / (2 * n ** 3)))
        steps = min(steps, 200)
        flop = 2.0 * n ** 3
        w, t = measure(f"matmul{n}",
                       lambda: weft_step_us(path, "product", steps, init="init"),
                       lambda: tf_step_us(gd, "product:0", steps, init="init"))
        rows.append((f"MatMul float32 {n}x{n} (GFLOP/s)", flop / w / 1e3, flop / t / 1e3, "higher"))

if args.only in (None, "train"):
    cases = (("MLP 784-256-256-10, batch 128, SGD", "mlp_sgd",
              lambda: bench_train_graphs.mlp(optimizer="sgd"), 300),
             ("MLP 784-256-256-10, batch 128, Adam", "mlp_adam",
              lambda: bench_train_graphs.mlp(optimizer="adam"), 300),
             ("CNN 28x28x1 conv16-conv32-fc128, batch 32, SGD", "cnn_sgd",
              lambda: bench_train_graphs.cnn(optimizer="sgd"), 100))
    for label, name, build, steps in cases:
        gd, feeds = build()
        path = save(gd, name)
        specs = save_feeds(feeds, name)
        tf_feeds = {f"{k}:0": v for k, v in feeds.items()}
        cpu = []
        w, t = measure(name,
                       lambda: weft_step_us(path, None, steps, specs, init="init",
                                            target="train_op"),
                       lambda: tf_step_us(gd, "train_op", steps, tf_feeds, init="init"),
                       cpu)
        rows.append((f"train step: {label} (ms)", w / 1e3, t / 1e3, "lower"))
        rows.append((f"train step: {label}, CPU time, all threads (ms)",
                     cpu[0] / 1e3, cpu[1] / 1e3, "lower"))

if args.only in (None, "kernels"):
    for i, (label, gd) in enumerate(bench_train_graphs.cnn_kernels().items()):
        path = save(gd, f"kernel{i}")
        w, t = measure(label,
                       lambda: weft_step_us(path, None, 200, target="target"),
                       lambda: tf_step_us(gd, "target", 200))
        rows.append((f"kernel: {label}, batch 32 (us)", w, t, "lower"))

if args.only in (None, "models"):
    here = os.path.dirname(os.path.abspath(__file__))

    def graph_listing(script):
        out = subprocess.run([sys.executable, os.path.join(here, script), WORK],
                             capture_output=True, text=True, timeout=900, check=True).stdout
        return [line.split() for line in out.split("\n") if line.strip()]

    def load_graph(name):
        gd = tf1.GraphDef()
        with open(os.path.join(WORK, name + ".pb"), "rb") as f:
            gd.ParseFromString(f.read())
        return gd

    for name, fetch in graph_listing("bench_rnn_graphs.py"):
        path, gd = os.path.join(WORK, name + ".pb"), load_graph(name)
        seq = np.load(os.path.join(WORK, name + "_seq.npy"))
        specs = [f"seq=@{os.path.join(WORK, name + '_seq.npy')}"]
        w, t = measure(name,
                       lambda: weft_step_us(path, fetch, 100, specs),
                       lambda: tf_step_us(gd, fetch, 100, {"seq:0": seq}, optimize=True))
        rows.append((f"model: Keras {name.upper()} 32x128, batch 16, inference (ms)",
                     w / 1e3, t / 1e3, "lower"))
    # Keras applications, frozen (bench_app_graphs.py): convolution-bound.
    app_labels = {"resnet50": "ResNet50", "mobilenetv2": "MobileNetV2",
                  "efficientnetb0": "EfficientNetB0", "densenet121": "DenseNet121"}
    for name, fetch in graph_listing("bench_app_graphs.py"):
        path, gd = os.path.join(WORK, name + ".pb"), load_graph(name)
        if name == "resnet50_train":  # fetch is the step's target
            x_path = os.path.join(WORK, name + "_x.npy")
            y_path = os.path.join(WORK, name + "_y.npy")
            feeds = {"x:0": np.load(x_path), "y:0": np.load(y_path)}
            w, t = measure(name,
                           lambda: weft_step_us(path, None, 5, [f"x=@{x_path}", f"y=@{y_path}"],
                                                init="init", target=fetch),
                           lambda: tf_step_us(gd, fetch, 5, feeds, init="init", optimize=True))
            rows.append(("model: Keras ResNet50 224x224, batch 4, training step, "
                         "SGD with momentum (ms)", w / 1e3, t / 1e3, "lower"))
            continue
        image_path = os.path.join(WORK, name + "_image.npy")
        image = np.load(image_path)
        w, t = measure(name,
                       lambda: weft_step_us(path, fetch, 30, [f"image=@{image_path}"]),
                       lambda: tf_step_us(gd, fetch, 30, {"image:0": image}, optimize=True))
        rows.append((f"model: Keras {app_labels[name]} 224x224, batch 1, inference (ms)",
                     w / 1e3, t / 1e3, "lower"))

if args.only in (None, "devices"):
    # The benchmark model, then a small one whose kernels take a few
    # microseconds: its step is mostly the runtime's per-step work, so the
    # difference between the layouts is what partitioning and transfers
    # cost, with little kernel-scheduling noise on top.
    models = [("MLP 784-256-256-10 batch 256", {}, 300, (1, 2, 4)),
              ("MLP 64-32-10 batch 32", {"batch": 32, "sizes": (64, 32, 10)}, 2000, (2, 4))]
    for model, shape, steps, ks in models:
        for k in ks:
            layouts = {"spread": [f"/cpu:{i}" for i in range(k)]}
            if k > 1:
                layouts["one"] = ["/cpu:0"] * k
            runs = {}  # layout -> (weft_fn, tf_fn)
            for layout, devices in layouts.items():
                gd, feeds = bench_train_graphs.replicated_mlp(k, devices, **shape)
                name = f"replicated_{shape.get('batch', 256)}_{k}_{layout}"
                path = save(gd, name)
                specs = save_feeds(feeds, name)
                tf_feeds = {f"{key}:0": v for key, v in feeds.items()}
                runs[layout] = (
                    lambda path=path, specs=specs: weft_step_us(
                        path, None, steps, specs, init="init", target="train_op", cpus=k),
                    lambda gd=gd, tf_feeds=tf_feeds: tf_step_us(
                        gd, "train_op", steps, tf_feeds, init="init", cpus=k))
            # Both layouts in each repeat, back to back, so that the overhead
            # is a median of paired differences: drift in the machine's
            # speed between repeats cancels out of each pair.
            times = {(layout, system): [] for layout in runs for system in (0, 1)}
            for _ in range(args.repeats):
                for layout, fns in runs.items():
                    for system, fn in enumerate(fns):
                        times[(layout, system)].append(fn())
            labels = {"spread": f"towers on /cpu:0../cpu:{k - 1}",
                      "one": "every tower on /cpu:0"}
            for layout in runs:
                w, t = (statistics.median(times[(layout, s)]) for s in (0, 1))
                rows.append((f"devices: {model}, K={k}, {labels[layout]} (steps/s)",
                             1e6 / w, 1e6 / t, "higher"))
            if k > 1:
                w, t = (statistics.median(a - b for a, b in zip(times[("spread", s)],
                                                                 times[("one", s)]))
                        for s in (0, 1))
                rows.append((f"devices: {model}, K={k}, partition+transfer overhead "
                             "(us/step, median of paired differences)", w, t, "lower"))

print()
print(f"| benchmark | Weft | TensorFlow {tf.__version__} | Weft/TF | better |")
print("|---|---:|---:|---:|---|")
for name, w, t, better in rows:
    # An overhead (a difference of two medians) can come out <= 0.
    ratio = f"{w / t:.2f}" if w > 0 and t > 0 else "n/a"
    print(f"| {name} | {w:.3f} | {t:.3f} | {ratio} | {better} |")
