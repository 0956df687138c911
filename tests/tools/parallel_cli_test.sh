#!/usr/bin/env bash
# In-graph replication and model parallelism from the command line:
# `weft train --devices ... --mode in-graph|model-parallel` trains like one
# device (same final loss on the same data), `weft graphgen` writes the same
# graphs, `weft inspect --placed` shows where each node runs, and bad device
# lists fail with messages that name the device.
# usage: parallel_cli_test.sh PATH_TO_WEFT
set -u
WEFT=$1
EXPECT_TIMEOUT=120
source "$(dirname "$0")/expect.sh"

# The "final loss X" of a train run's summary line.
final_loss() {
  "$@" 2>&1 | sed -n 's/^done: .*final loss \([0-9.]*\).*/\1/p'
}

# Training: the summary names the devices and reports throughput.
expect train_in_graph 0 "in-graph over 2 devices .*2 CPU devices" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1 --mode in-graph --steps 5
expect train_in_graph_throughput 0 "^done: steps 5  final loss [0-9.]+ .* [0-9]+ examples/s" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1 --mode in-graph --steps 5
expect train_model_parallel 0 "model-parallel over 3 devices .*3 CPU devices" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1,cpu:2 --mode model-parallel --steps 5
expect train_cnn_model_parallel 0 "^done: steps 3 " -- \
  "$WEFT" train --model cnn --devices cpu:0,cpu:1 --mode model-parallel --steps 3
expect train_single_named_device 0 "on /device:CPU:1 .*2 CPU devices" -- \
  "$WEFT" train --model mlp --devices cpu:1 --steps 2
# A GPU request trains wherever the session can run it and says what GPUs
# there are (none without a GPU: soft placement puts the work on the CPU).
expect train_gpu_device 0 "^GPUs: (none \(|[0-9]+ \(GPU:0 )" -- \
  "$WEFT" train --model mlp --devices gpu:0 --steps 2

# Same data, same loss: 4 towers and a 3-way layer split train like 1 device.
for opt in sgd adam; do
  one=$(final_loss "$WEFT" train --model mlp --optimizer "$opt" --steps 30)
  towers=$(final_loss "$WEFT" train --model mlp --optimizer "$opt" --steps 30 \
    --devices cpu:0,cpu:1,cpu:2,cpu:3 --mode in-graph)
  layers=$(final_loss "$WEFT" train --model mlp --optimizer "$opt" --steps 30 \
    --devices cpu:0,cpu:1,cpu:2 --mode model-parallel)
  if [ -n "$one" ] && [ "$one" = "$towers" ] && [ "$one" = "$layers" ]; then
    pass "same_loss_$opt"
  else
    fail "same_loss_$opt" "final loss: 1 device '$one', 4 towers '$towers', 3 layer devices '$layers'"
  fi
done

# Usage errors (exit 2) and device errors (exit 1) name what is wrong.
expect devices_without_mode 2 "usage error: --devices lists 2 devices: .*--mode in-graph" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1
expect bad_mode 2 "usage error: --mode must be single, in-graph, model-parallel, between-async, between-sync, allreduce or hybrid, not 'ring'" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1 --mode ring
expect mode_without_devices 2 "usage error: --mode in-graph needs --devices" -- \
  "$WEFT" train --model mlp --mode in-graph
expect bad_device_name 2 "usage error: --devices: 'cpu:x' is not a device name" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:x --mode in-graph
expect duplicate_device 2 "usage error: --devices names '/device:CPU:1' twice" -- \
  "$WEFT" train --model mlp --devices cpu:1,/device:CPU:1 --mode in-graph
expect batch_not_multiple 2 "usage error: --batch 30 must be a multiple of the 4 devices" -- \
  "$WEFT" train --model mlp --batch 30 --devices cpu:0,cpu:1,cpu:2,cpu:3 --mode in-graph
expect too_many_layer_devices 2 "usage error: .*mlp has 3 layers to place, but 4" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1,cpu:2,cpu:3 --mode model-parallel
expect transformer_layers 2 "usage error: .*only mlp and cnn can be split by layer" -- \
  "$WEFT" train --model transformer --devices cpu:0,cpu:1 --mode model-parallel
expect task_device_in_train 2 "usage error: '/job:worker/task:1' is not a CPU or GPU device of this process" -- \
  "$WEFT" train --model mlp --devices /job:worker/task:1,cpu:0 --mode in-graph
expect param_device_needs_in_graph 2 "usage error: --param-device goes with --mode in-graph" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:1 --mode model-parallel --param-device cpu:0
expect device_beyond_session 1 \
  "^error: INVALID_ARGUMENT: node '.*' requests device '/device:CPU:7' but the session has 2 CPU devices" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:7 --mode in-graph --cpu-devices 2 --steps 1
expect graph_with_devices 2 "usage error: --devices goes with --model" -- \
  "$WEFT" train --graph x.pb --devices cpu:0

# graphgen writes the replicated graph; train sizes the session from it.
expect graphgen_in_graph 0 "^wrote .*rep.pb: [0-9]+ nodes \(mlp, .*in-graph over 2 devices" -- \
  "$WEFT" graphgen --model mlp --devices cpu:0,cpu:1 --mode in-graph --out "$TMP/rep.pb"
expect train_replicated_graph 0 "2 CPU devices" -- "$WEFT" train --graph "$TMP/rep.pb" --steps 3
expect train_replicated_graph_too_few 1 "requests device '/device:CPU:1' but the session has 1 CPU device " -- \
  "$WEFT" train --graph "$TMP/rep.pb" --steps 1 --cpu-devices 1
expect graphgen_model_parallel 0 "^wrote .*mp.pbtxt" -- \
  "$WEFT" graphgen --model cnn --devices cpu:0,cpu:1 --mode model-parallel --out "$TMP/mp.pbtxt"
# Towers on the tasks of a cluster: the same API, the requests kept.
expect graphgen_cluster 0 "parameters on /job:ps/task:0" -- \
  "$WEFT" graphgen --model mlp --devices /job:worker/task:0,/job:worker/task:1 \
  --mode in-graph --param-device /job:ps/task:0 --out "$TMP/cluster.pb"
expect inspect_cluster_requests 0 "/job:worker/task:1" -- "$WEFT" inspect --graph "$TMP/cluster.pb"

# inspect --placed: per-device counts and each node's device.
CPU=/job:localhost/replica:0/task:0/device:CPU
expect inspect_placed_counts 0 "placement \(2 CPU devices, soft placement; [1-9][0-9]* cross-device transfers\)" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --placed
expect inspect_placed_tower1 0 "tower_1/mlp/hidden1/MatMul	$CPU:1" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --placed
expect inspect_placed_params 0 "mlp/hidden1/w	$CPU:0" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --placed
expect inspect_placed_layers 0 "cnn/conv2/Conv2D	$CPU:0" -- \
  "$WEFT" inspect --graph "$TMP/mp.pbtxt" --placed
expect inspect_placed_layers_last 0 "cnn/output/MatMul	$CPU:1" -- \
  "$WEFT" inspect --graph "$TMP/mp.pbtxt" --placed
expect inspect_placed_one_device 0 "placement \(1 CPU device, soft placement; 0 cross-device" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --placed --cpu-devices 1
expect inspect_cpu_devices_alone 2 "usage error: --cpu-devices goes with --placed" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --cpu-devices 2
expect inspect_bad_cpu_devices 2 "usage error: --cpu-devices must be a positive integer" -- \
  "$WEFT" inspect --graph "$TMP/rep.pb" --placed --cpu-devices none
out=$("$WEFT" inspect --graph "$TMP/rep.pb" --placed --format json 2>&1)
if python3 -c '
import json, sys
j = json.loads(sys.argv[1])
p = j["placement"]
devices = {n["node"]: n["device"] for n in p["nodes"]}
assert p["cpu_devices"] == 2, p["cpu_devices"]
assert devices["tower_1/mlp/hidden1/MatMul"].endswith("CPU:1")
assert devices["mlp/hidden1/w"].endswith("CPU:0")
assert sum(p["nodes_per_device"].values()) == j["num_nodes"] == len(p["nodes"])
assert p["transfers"] > 0
' "$out"; then
  pass inspect_placed_json
else
  fail inspect_placed_json "$(echo "$out" | head -5)"
fi

finish
