#!/usr/bin/env bash
# `weft` as a user runs it: example graphs, exit codes and error lines for
# bad flags and bad files. usage: cli_test.sh PATH_TO_WEFT EXAMPLES_DIR
set -u
WEFT=$1
EXAMPLES=$2
source "$(dirname "$0")/expect.sh"

# Usage errors exit 2.
expect no_command 2 "usage: weft" -- "$WEFT"
expect unknown_command 2 "unknown command 'frobnicate'" -- "$WEFT" frobnicate
expect run_help 0 "--graph FILE" -- "$WEFT" run --help
expect run_no_graph 2 "usage error: --graph is required" -- "$WEFT" run --fetch y
expect run_unknown_flag 2 "unknown flag --bogus" -- "$WEFT" run --graph x --fetch y --bogus 1
expect run_bad_steps 2 "--steps must be a positive integer" -- \
  "$WEFT" run --graph x --fetch y --steps zero
expect run_bad_format 2 "--format must be text or json" -- \
  "$WEFT" run --graph x --fetch y --format xml

# Bad files exit 1 with "error: CODE: ...".
expect missing_file 1 "^error: NOT_FOUND: cannot open '$TMP/none.pb'" -- \
  "$WEFT" run --graph "$TMP/none.pb" --fetch y
printf '\x0a\xff\xff\xff\xff\x0f\x01garbage' >"$TMP/garbage.pb"
expect garbage_binary 1 "^error: INVALID_ARGUMENT: .*not a valid binary GraphDef" -- \
  "$WEFT" run --graph "$TMP/garbage.pb" --fetch y
: >"$TMP/empty.pb"
expect empty_file 1 "^error: INVALID_ARGUMENT: .*is empty" -- \
  "$WEFT" run --graph "$TMP/empty.pb" --fetch y
printf 'node { name: "a" op: "Const" \n attr { key: "dtype" \n' >"$TMP/syntax.pbtxt"
expect text_syntax_error 1 "^error: INVALID_ARGUMENT: .*line [0-9]+, column [0-9]+" -- \
  "$WEFT" run --graph "$TMP/syntax.pbtxt" --fetch a

const_node() {  # name, value
  printf 'node { name: "%s" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %s } } } }\n' "$1" "$2"
}
T='attr { key: "T" value { type: DT_FLOAT } }'
{ const_node a 1; echo "node { name: \"b\" op: \"FancyOp\" input: \"a\" }"; } >"$TMP/unknown_op.pbtxt"
expect unknown_op 1 "^error: UNIMPLEMENTED: .*FancyOp.*'b'|^error: UNIMPLEMENTED: .*'b'.*FancyOp" -- \
  "$WEFT" run --graph "$TMP/unknown_op.pbtxt" --fetch b
{ const_node a 1; echo "node { name: \"b\" op: \"Neg\" input: \"zz\" $T }"; } >"$TMP/dangling.pbtxt"
expect dangling_input 1 "^error: INVALID_ARGUMENT: .*'b'.*zz" -- \
  "$WEFT" run --graph "$TMP/dangling.pbtxt" --fetch b
{ const_node a 1; const_node a 2; } >"$TMP/duplicate.pbtxt"
expect duplicate_name 1 "^error: INVALID_ARGUMENT: .*'a'" -- \
  "$WEFT" run --graph "$TMP/duplicate.pbtxt" --fetch a
{ echo "node { name: \"p\" op: \"Neg\" input: \"q\" $T }"; echo "node { name: \"q\" op: \"Neg\" input: \"p\" $T }"; } >"$TMP/cycle.pbtxt"
expect cycle 1 "^error: INVALID_ARGUMENT: .*cycle" -- \
  "$WEFT" run --graph "$TMP/cycle.pbtxt" --fetch p
{ const_node a 1; echo "node { name: \"b\" op: \"Neg\" input: \"a\" }"; } >"$TMP/missing_attr.pbtxt"
expect missing_attr 1 "^error: INVALID_ARGUMENT: .*'b'.*attr 'T'" -- \
  "$WEFT" run --graph "$TMP/missing_attr.pbtxt" --fetch b
{ const_node a 1; echo "node { name: \"b\" op: \"Neg\" input: \"a\" attr { key: \"T\" value { s: \"float\" } } }"; } >"$TMP/attr_kind.pbtxt"
expect wrong_attr_type 1 "^error: INVALID_ARGUMENT: .*'b'.*attr 'T'" -- \
  "$WEFT" run --graph "$TMP/attr_kind.pbtxt" --fetch b
# A _Recv with no _Send in the step (the user's own transfer node) is named
# at once instead of waiting forever.
cat >"$TMP/stray_recv.pbtxt" <<'PBTXT'
node { name: "r" op: "_Recv" device: "/cpu:1"
  attr { key: "tensor_type" value { type: DT_FLOAT } }
  attr { key: "tensor_name" value { s: "x" } }
  attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } }
  attr { key: "send_device_incarnation" value { i: 1 } }
  attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:1" } }
  attr { key: "client_terminated" value { b: false } } }
node { name: "n" op: "Neg" input: "r" device: "/cpu:0" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
EXPECT_TIMEOUT=20 expect stray_recv 1 "^error: INVALID_ARGUMENT: _Recv node 'r' on .*CPU:1 waits for tensor 'x'.*would wait forever" -- \
  "$WEFT" run --graph "$TMP/stray_recv.pbtxt" --fetch n --cpu-devices 2
expect unknown_fetch 1 "^error: .*nope" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --fetch nope

expect run_too_many_threads 2 "usage error: --inter-op-threads must be at most 4096, not 100000000" -- \
  "$WEFT" run --graph x --fetch y --inter-op-threads 100000000

# Examples.
expect mlp_default_input 0 "^probs = float32 \[2,3\]" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --fetch probs --fetch class
expect mlp_fed_json 0 '"class": \{"dtype": "int64", "shape": \[1\], "values": \[[0-2]\]\}' -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --feed 'x=[[1,2,3,4]]' \
  --fetch class --format json
# --timing: step-time statistics and the CPU a step costs (nonzero: 5000
# steps take tens of milliseconds of CPU, more than the kernel's tick).
expect mlp_timing 0 "timing: steps=5000 .*median_step_us=[0-9.]+ .*cpu_us_per_step=([1-9][0-9]*\.[0-9]+|0\.0*[1-9][0-9]*)" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --fetch probs --steps 5000 --timing
expect mlp_feed_wrong_shape 1 "^error: INVALID_ARGUMENT: .*'?x" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --feed 'x=[1,2,3]' --fetch probs
expect mlp_feed_ragged 1 "^error: INVALID_ARGUMENT: feed 'x': ragged list" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --feed 'x=[[1,2],[3]]' --fetch probs
expect mlp_feed_not_json 1 "^error: INVALID_ARGUMENT: feed 'x': .*not a JSON value" -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --feed 'x=[[1,2' --fetch probs

# A .npy feed written without NumPy: float32, shape (1, 4).
python3 - "$TMP/x.npy" <<'PY'
import struct, sys
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }"
header += " " * (64 - 10 - len(header) - 1) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<4f", 1, 2, 3, 4))
PY
expect mlp_npy_feed 0 '"x": \{"dtype": "float32", "shape": \[1, 4\], "values": \[1, 2, 3, 4\]\}' -- \
  "$WEFT" run --graph "$EXAMPLES/mlp_classifier.pbtxt" --feed "x=@$TMP/x.npy" \
  --fetch x --format json

# Training with variables across steps: w -> 3, b -> 1.
out=$("$WEFT" run --graph "$EXAMPLES/linear_regression.pbtxt" --init init \
  --target train --steps 2000 --fetch w --fetch b --format json 2>&1)
if python3 -c '
import json, sys
f = json.loads(sys.argv[1])["fetches"]
w, b = f["w"]["values"][0], f["b"]["values"][0]
sys.exit(0 if abs(w - 3) < 1e-3 and abs(b - 1) < 1e-3 else 1)' "$out"; then
  pass linear_regression_converges
else
  fail linear_regression_converges "$out"
fi
expect uninitialized_variable 1 "^error: FAILED_PRECONDITION: .*(uninitialized|w)" -- \
  "$WEFT" run --graph "$EXAMPLES/linear_regression.pbtxt" --fetch loss

# --cpu-devices N: a graph split over /cpu:0 and /cpu:1 runs partitioned
# (Send/Recv between the devices) and gives the same value.
{ const_node a 2; echo "node { name: \"n\" op: \"Neg\" input: \"a\" device: \"/cpu:1\" $T }"
  echo "node { name: \"s\" op: \"Square\" input: \"n\" device: \"/cpu:0\" $T }"; } >"$TMP/two_devices.pbtxt"
expect cpu_devices_placed 0 "^n \(Neg\): /job:localhost/replica:0/task:0/device:CPU:1" -- \
  "$WEFT" run --graph "$TMP/two_devices.pbtxt" --fetch s --cpu-devices 2 --log-device-placement
expect cpu_devices_result 0 '"s": \{"dtype": "float32", "shape": \[\], "values": \[4\]\}' -- \
  "$WEFT" run --graph "$TMP/two_devices.pbtxt" --fetch s --cpu-devices 2 --format json
expect cpu_devices_one_soft 0 "^n \(Neg\): /job:localhost/replica:0/task:0/device:CPU:0" -- \
  "$WEFT" run --graph "$TMP/two_devices.pbtxt" --fetch s --log-device-placement
# Soft placement (the default) moves a node whose request cannot be met and
# says so; --no-soft-placement reports the placer's error instead. Three
# requests no device meets: an unknown device type, a CPU id beyond the
# session's, and a `_class` colocation with a node asking for another CPU.
{ const_node a 2; echo "node { name: \"n\" op: \"Neg\" input: \"a\" device: \"/device:XPU:0\" $T }"; } >"$TMP/xpu.pbtxt"
{ const_node a 2; echo "node { name: \"n\" op: \"Neg\" input: \"a\" device: \"/cpu:9\" $T }"; } >"$TMP/cpu9.pbtxt"
{ const_node a 2; echo "node { name: \"n\" op: \"Neg\" input: \"a\" device: \"/cpu:0\" $T }"
  echo "node { name: \"m\" op: \"Neg\" input: \"n\" device: \"/cpu:1\" $T attr { key: \"_class\" value { list { s: \"loc:@n\" } } } }"; } >"$TMP/coloc.pbtxt"
CPU0=/job:localhost/replica:0/task:0/device:CPU:0
for c in "xpu n /device:XPU:0" "cpu9 n /cpu:9" "coloc m /cpu:1"; do
  read -r g node request <<<"$c"
  expect "soft_${g}_logged" 0 "^$node \(Neg\): $CPU0 \(requested $request, soft-placed\)$" -- \
    "$WEFT" run --graph "$TMP/$g.pbtxt" --fetch "$node" --cpu-devices 2 --log-device-placement
  expect "soft_${g}_inspect" 0 "^  $node	$CPU0	\(requested $request, soft-placed\)$" -- \
    "$WEFT" inspect --graph "$TMP/$g.pbtxt" --placed --cpu-devices 2
done
expect soft_inspect_json 0 '"note": "requested /cpu:9, soft-placed"' -- \
  "$WEFT" inspect --graph "$TMP/cpu9.pbtxt" --placed --cpu-devices 2 --format json
expect soft_unmoved_unmarked 0 "^n \(Neg\): $CPU0$" -- \
  "$WEFT" run --graph "$TMP/coloc.pbtxt" --fetch m --cpu-devices 2 --log-device-placement
no_device="^error: INVALID_ARGUMENT: cannot place node 'n' \(Neg\): requested device"
declare -A hard_error=(
  [xpu]="$no_device '/device:XPU:0' matches no device .*devices: $CPU0"
  [cpu9]="$no_device '/device:CPU:9' matches no device"
  [coloc]="^error: INVALID_ARGUMENT: cannot place node 'm' \(Neg\) on its requested device '/cpu:1': it must be colocated with node 'n', which requests '/cpu:0'")
for g in xpu cpu9 coloc; do
  fetch=n
  [ "$g" = coloc ] && fetch=m
  expect "hard_${g}_run" 1 "${hard_error[$g]}" -- \
    "$WEFT" run --graph "$TMP/$g.pbtxt" --fetch "$fetch" --cpu-devices 2 --no-soft-placement
  expect "hard_${g}_inspect" 1 "${hard_error[$g]}" -- \
    "$WEFT" inspect --graph "$TMP/$g.pbtxt" --placed --cpu-devices 2 --no-soft-placement
done
expect no_soft_without_placed 2 "usage error: --no-soft-placement goes with --placed" -- \
  "$WEFT" inspect --graph "$TMP/coloc.pbtxt" --no-soft-placement
expect run_bad_cpu_devices 2 "--cpu-devices must be a positive integer, not '0'" -- \
  "$WEFT" run --graph x --fetch y --cpu-devices 0
# Thread counts go to the session's ConfigProto; one thread each still runs
# both devices' partitions.
expect one_thread_each 0 '"s": \{"dtype": "float32", "shape": \[\], "values": \[4\]\}' -- \
  "$WEFT" run --graph "$TMP/two_devices.pbtxt" --fetch s --cpu-devices 2 \
  --intra-op-threads 1 --inter-op-threads 1 --format json
expect run_bad_intra_op 2 "--intra-op-threads must be a positive integer, not '-1'" -- \
  "$WEFT" run --graph x --fetch y --intra-op-threads -1

# weft inspect: a readable summary; exit 1 when the graph cannot run.
expect inspect_help 0 "--graph FILE" -- "$WEFT" inspect --help
expect inspect_no_graph 2 "usage error: --graph is required" -- "$WEFT" inspect
expect inspect_mlp_ops 0 "14 nodes.*" -- "$WEFT" inspect --graph "$EXAMPLES/mlp_classifier.pbtxt"
expect inspect_mlp_counts 0 "^  6	Const" -- "$WEFT" inspect --graph "$EXAMPLES/mlp_classifier.pbtxt"
expect inspect_mlp_input 0 "^  x	float32\[\?,4\]	\(has a default\)" -- \
  "$WEFT" inspect --graph "$EXAMPLES/mlp_classifier.pbtxt"
expect inspect_mlp_outputs 0 "^    class:0" -- "$WEFT" inspect --graph "$EXAMPLES/mlp_classifier.pbtxt"
expect inspect_variables 0 "^  w	float32\[\]	\(VariableV2\)" -- \
  "$WEFT" inspect --graph "$EXAMPLES/linear_regression.pbtxt"
expect inspect_targets 0 "targets:.*" -- "$WEFT" inspect --graph "$EXAMPLES/linear_regression.pbtxt"
expect inspect_json 0 '"validation": "ok"' -- \
  "$WEFT" inspect --graph "$EXAMPLES/mlp_classifier.pbtxt" --format json
expect inspect_unknown_op 1 "^  FancyOp \(1 node: b\): unknown op$" -- \
  "$WEFT" inspect --graph "$TMP/unknown_op.pbtxt"
expect inspect_cycle 1 "^validation: INVALID_ARGUMENT: .*cycle" -- \
  "$WEFT" inspect --graph "$TMP/cycle.pbtxt"
{ const_node a 1; echo "node { name: \"s\" op: \"Cast\" input: \"a\" attr { key: \"SrcT\" value { type: DT_FLOAT } } attr { key: \"DstT\" value { type: DT_STRING } } }"; } >"$TMP/no_kernel.pbtxt"
expect inspect_no_kernel 1 "^  Cast \(1 node: s\): NOT_FOUND: no CPU kernel for op 'Cast' with DstT=string;" -- \
  "$WEFT" inspect --graph "$TMP/no_kernel.pbtxt"
# Every op in the way at once, with its nodes, function bodies included
# ("function/node"); a call of a library function is no unknown op, and a
# body's node whose dtype the call sets ("$T") is not guessed at.
cat >"$TMP/unknown_ops.pbtxt" <<'PBTXT'
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "b" op: "FancyOp" input: "a" }
node { name: "b2" op: "FancyOp" input: "a" }
node { name: "c" op: "OtherOp" input: "a" }
node { name: "call" op: "myfn" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
library { function {
  signature { name: "myfn" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT }
    attr { name: "T" type: "type" } }
  node_def { name: "inner" op: "BodyOnlyOp" input: "x" }
  node_def { name: "neg" op: "Neg" input: "x" attr { key: "T" value { placeholder: "T" } } }
  ret { key: "y" value: "inner:y:0" }
} }
PBTXT
for want in "^ops Weft cannot run \(3\):$" "^  BodyOnlyOp \(1 node: myfn/inner\): unknown op$" \
    "^  FancyOp \(2 nodes: b, b2\): unknown op$" "^  OtherOp \(1 node: c\): unknown op$"; do
  expect "inspect_all_unknown_ops ($want)" 1 "$want" -- \
    "$WEFT" inspect --graph "$TMP/unknown_ops.pbtxt"
done
# `weft ARGS --format json` on one line without spaces, so that a pattern can
# span fields; weft's exit code.
json_line=(bash -c '"$0" "$@" --format json | tr -d " \n"; exit "${PIPESTATUS[0]}"' "$WEFT")
expect inspect_unknown_json 1 '\{"nodes":\["myfn/inner"\],"num_nodes":1,"op":"BodyOnlyOp","reason":"unknownop"\}' -- \
  "${json_line[@]}" inspect --graph "$TMP/unknown_ops.pbtxt"
# A StatelessWhile is lowered before it runs: no missing kernel, and it runs.
cat >"$TMP/while.pbtxt" <<'PBTXT'
node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "loop" op: "StatelessWhile" input: "i0" attr { key: "T" value { list { type: DT_INT32 } } } attr { key: "cond" value { func { name: "cond" } } } attr { key: "body" value { func { name: "body" } } } }
library {
  function {
    signature { name: "cond" input_arg { name: "i" type: DT_INT32 } output_arg { name: "c" type: DT_BOOL } }
    node_def { name: "limit" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
    node_def { name: "less" op: "Less" input: "i" input: "limit:output:0" attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "c" value: "less:z:0" }
  }
  function {
    signature { name: "body" input_arg { name: "i" type: DT_INT32 } output_arg { name: "n" type: DT_INT32 } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node_def { name: "add" op: "AddV2" input: "i" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "n" value: "add:z:0" }
  }
}
PBTXT
expect inspect_while_runnable 0 "^ops Weft cannot run \(0\):$" -- "$WEFT" inspect --graph "$TMP/while.pbtxt"
expect inspect_while_runs 0 "^3$" -- "$WEFT" run --graph "$TMP/while.pbtxt" --fetch loop

# weft inspect --coverage: Weft's op count, and against a TensorFlow op list.
expect coverage_weft_only 0 "^[0-9]+ ops registered in Weft$" -- "$WEFT" inspect --coverage
printf 'Add\nAddV2\n_InternalOnly\n# a comment\n\nNotAnOpInWeft\nAdd\n' >"$TMP/tf_ops.txt"
expect coverage_lines 0 "ops registered in Weft; 2 of TensorFlow's 3 public ops \(66\.7%\)$" -- \
  "$WEFT" inspect --coverage --tf-ops "$TMP/tf_ops.txt"
for want in "^missing \(1\):$" "^  NotAnOpInWeft$"; do
  expect "coverage_missing ($want)" 0 "$want" -- \
    "$WEFT" inspect --coverage --tf-ops "$TMP/tf_ops.txt" --list-missing
done
echo 'op { name: "Add" } op { name: "Zzz" } op { name: "_Z" }' >"$TMP/tf_ops.pbtxt"
expect coverage_oplist_json 0 '^\{"tensorflow":\{"covered":1,"missing":\["Zzz"\],"percent":50\.0,"public_ops":2\},"weft_ops":[0-9]+\}$' -- \
  "${json_line[@]}" inspect --coverage --tf-ops "$TMP/tf_ops.pbtxt" --list-missing
# The binary OpList: field 1 (op) holding an OpDef whose field 1 (name) is "Add".
printf '\x0a\x05\x0a\x03Add\x0a\x05\x0a\x03Foo' >"$TMP/tf_ops.pb"
expect coverage_oplist_binary 0 "; 1 of TensorFlow's 2 public ops \(50\.0%\)$" -- \
  "$WEFT" inspect --coverage --tf-ops "$TMP/tf_ops.pb"
printf 'bad name\n' >"$TMP/bad_ops.txt"
expect coverage_bad_file 1 "^error: INVALID_ARGUMENT: .*line 1: 'bad name' is not an op name" -- \
  "$WEFT" inspect --coverage --tf-ops "$TMP/bad_ops.txt"
expect coverage_list_needs_tf 2 "usage error: --list-missing needs --tf-ops" -- \
  "$WEFT" inspect --coverage --list-missing
expect coverage_not_with_graph 2 "usage error: --graph does not go with --coverage" -- \
  "$WEFT" inspect --coverage --graph "$TMP/while.pbtxt"
# --tf-kernels: TensorFlow's CPU kernels' dtypes for the ops Weft has. The
# GPU kernel, the labelled one, the op Weft lacks and a type the OpDef
# refuses (Abs on string: no graph can hold it) are not counted.
cat >"$TMP/tf_kernels.pbtxt" <<'KERNELS'
kernel { op: "Abs" device_type: "CPU" constraint { name: "T" allowed_values { list { type: DT_FLOAT } } } }
kernel { op: "Abs" device_type: "CPU" constraint { name: "T" allowed_values { list { type: DT_STRING } } } }
kernel { op: "ConcatV2" device_type: "CPU" constraint { name: "T" allowed_values { list { type: DT_QINT8 } } } }
kernel { op: "Abs" device_type: "GPU" constraint { name: "T" allowed_values { list { type: DT_BOOL } } } }
kernel { op: "Abs" device_type: "CPU" label: "test" constraint { name: "T" allowed_values { list { type: DT_BOOL } } } }
kernel { op: "NotAnOpInWeft" device_type: "CPU" }
KERNELS
for want in "^dtypes: 1 of the 2 type combinations .* \(50\.0%\)$" "^missing by dtype: qint8 1$" \
            "^missing type combinations \(1\):$" "^  ConcatV2\[T=qint8\]$"; do
  expect "coverage_kernels ($want)" 0 "$want" -- \
    "$WEFT" inspect --coverage --tf-ops "$TMP/tf_ops.txt" --tf-kernels "$TMP/tf_kernels.pbtxt" --list-missing
done
expect coverage_kernels_json 0 '"kernels":\{"combinations":2,"covered":1,"missing":\["ConcatV2\[T=qint8\]"\],"missing_by_dtype":\{"qint8":1\},"percent":50\.0\}' -- \
  "${json_line[@]}" inspect --coverage --tf-ops "$TMP/tf_ops.txt" --tf-kernels "$TMP/tf_kernels.pbtxt" --list-missing
printf 'not a kernel list {' >"$TMP/bad_kernels.txt"
expect coverage_kernels_bad_file 1 "^error: INVALID_ARGUMENT: '.*bad_kernels.txt' is not a KernelList" -- \
  "$WEFT" inspect --coverage --tf-ops "$TMP/tf_ops.txt" --tf-kernels "$TMP/bad_kernels.txt"
expect coverage_kernels_needs_tf_ops 2 "usage error: --tf-kernels needs --tf-ops" -- \
  "$WEFT" inspect --coverage --tf-kernels "$TMP/tf_kernels.pbtxt"
expect tf_ops_needs_coverage 2 "usage error: --tf-ops goes with --coverage" -- \
  "$WEFT" inspect --graph "$TMP/while.pbtxt" --tf-ops "$TMP/tf_ops.txt"

finish
