#!/usr/bin/env bash
# Inputs a user or a file controls that used to crash, hang or exhaust `weft`:
# unbounded reads (devices, FIFOs, huge files), nesting and rank beyond any
# tensor's, untrusted .npy headers, binary graphs that look like text, and
# switches given values. Each must end in a clean error or the right result.
# Usage: input_bounds_cli_test.sh WEFT EXAMPLES_DIR
set -u
WEFT=$1
EXAMPLES=$2
source "$(dirname "$0")/expect.sh"
MLP="$EXAMPLES/mlp_classifier.pbtxt"
EXPECT_TIMEOUT=20

# Reads: only regular files, at most --max-input-bytes.
expect graph_dev_zero 1 "^error: INVALID_ARGUMENT: '/dev/zero' is not a regular file \(a character device\)" -- \
  "$WEFT" run --graph /dev/zero --fetch y
expect graph_directory 1 "^error: INVALID_ARGUMENT: '$TMP' is not a regular file \(a directory\)" -- \
  "$WEFT" run --graph "$TMP" --fetch y
mkfifo "$TMP/fifo"
expect graph_fifo_no_writer 1 "^error: INVALID_ARGUMENT: '$TMP/fifo' is not a regular file \(a pipe\)" -- \
  "$WEFT" inspect --graph "$TMP/fifo"
expect graph_over_limit 1 "^error: RESOURCE_EXHAUSTED: '$MLP' has [0-9]+ bytes, more than the limit of 100 \(raise it with --max-input-bytes\)" -- \
  "$WEFT" run --graph "$MLP" --fetch class --max-input-bytes 100
expect graph_limit_raised 0 "^class = int64 \[1\]" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --max-input-bytes 100000
expect train_graph_over_limit 1 "RESOURCE_EXHAUSTED: .*more than the limit of 10 " -- \
  "$WEFT" train --graph "$MLP" --max-input-bytes 10
expect bad_limit 2 "--max-input-bytes must be a positive size in bytes .*, not '-5'" -- \
  "$WEFT" inspect --graph "$MLP" --max-input-bytes -5
expect limit_with_suffix 1 "more than the limit of 1024 " -- \
  "$WEFT" inspect --graph "$MLP" --max-input-bytes 1K
expect feed_splat_over_limit 1 "^error: RESOURCE_EXHAUSTED: feed 'x': a feed of shape \[100000,100000\] and dtype float32 takes more than the limit of 1073741824 bytes \(raise it with --max-input-bytes\)" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed 'x={"shape": [100000, 100000], "values": [0]}'
expect feed_npy_dev_zero 1 "^error: INVALID_ARGUMENT: feed 'x': '/dev/zero' is not a regular file" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed x=@/dev/zero

# Nesting and rank: bounded before anything recurses or allocates.
deep=$(python3 -c 'print("[" * 20000 + "]" * 20000)')
expect feed_deep_nesting 1 "^error: INVALID_ARGUMENT: feed 'x': feed value nests lists 20000 deep; a tensor has at most 254 dimensions" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x=$deep"
expect feed_deep_object 1 "nests lists 20001 deep" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x={\"values\": $deep}"
ones=$(python3 -c 'print(",".join(["1"] * 255))')
expect feed_rank_over_cap 1 "shape has 255 dimensions, more than the maximum rank 254" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x={\"shape\": [$ones], \"values\": 1}"

# Number attrs: bounded (2^20 tensors an arg) before a list of 2^30 dtypes
# is built; within the bound the node's inputs are counted as before.
const='node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 } } } }'
dim='node { name: "d" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }'
for n in 1073741824 2147483650; do
  { echo "$const"; echo "node { name: \"s\" op: \"AddN\" input: \"a\" input: \"a\" attr { key: \"N\" value { i: $n } } attr { key: \"T\" value { type: DT_FLOAT } } }"; } >"$TMP/addn_$n.pbtxt"
  { echo "$const"; echo "$dim"; echo "node { name: \"s\" op: \"Split\" input: \"d\" input: \"a\" attr { key: \"num_split\" value { i: $n } } attr { key: \"T\" value { type: DT_FLOAT } } }"; } >"$TMP/split_$n.pbtxt"
  expect "addn_n_$n" 1 "^error: INVALID_ARGUMENT: node 's' \(AddN\): attr 'N' is $n, more than the 1048576 tensors an arg \\('inputs'\\) may have" -- \
    "$WEFT" run --graph "$TMP/addn_$n.pbtxt" --fetch s
  expect "inspect_split_$n" 1 "^validation: INVALID_ARGUMENT: node 's' \(Split\): attr 'num_split' is $n, more than the 1048576 tensors an arg \\('output'\\) may have" -- \
    "$WEFT" inspect --graph "$TMP/split_$n.pbtxt"
done
{ echo "$const"; echo 'node { name: "s" op: "AddN" input: "a" input: "a" attr { key: "N" value { i: 5 } } attr { key: "T" value { type: DT_FLOAT } } }'; } >"$TMP/addn_5.pbtxt"
expect addn_n_5 1 "^error: INVALID_ARGUMENT: node 's' \(AddN\): has 2 data inputs, op AddN expects 5" -- \
  "$WEFT" run --graph "$TMP/addn_5.pbtxt" --fetch s

# A Const shape input that claims 2^40 elements while holding one value:
# shape inference builds nothing in proportion to the claim (it aborted with
# bad_alloc), and running it is a clean RESOURCE_EXHAUSTED naming the node once.
cat >"$TMP/fill.pbtxt" <<'PB'
node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1099511627776 } } int_val: 3 } } } }
node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
node { name: "f" op: "Fill" input: "dims" input: "v" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
PB
expect inspect_claimed_shape 0 "^validation: ok" -- "$WEFT" inspect --graph "$TMP/fill.pbtxt"
expect run_claimed_shape 1 "^error: RESOURCE_EXHAUSTED: node 'dims' \(Const\): attr 'value': out of memory allocating tensor of shape \[1099511627776\]" -- \
  "$WEFT" run --graph "$TMP/fill.pbtxt" --fetch f

# .npy headers are scanned, not matched with a backtracking regex: a header
# of hundreds of kilobytes parses (std::regex overflowed the stack on it).
python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(header, data):
    h = header + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + data
data = struct.pack("<4f", 1, 2, 3, 4)
open(d + "/long_header.npy", "wb").write(npy(
    b"{'descr': '<f4', 'fortran_order': False, 'shape': (1," + b" " * 400000 + b"4), }", data))
open(d + "/long_descr.npy", "wb").write(npy(
    b"{'descr': '" + b"x" * 400000 + b"', 'fortran_order': False, 'shape': (1, 4), }", data))
open(d + "/no_shape.npy", "wb").write(npy(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4", data))
# A binary GraphDef of one node whose bytes are all printable: a 40-byte name
# makes every length byte printable, so it looks like text format.
open(d + "/printable.pb", "wb").write(b"\n*\n(" + b"a" * 40)
PY
expect npy_long_header 0 "^class = int64 \[1\]" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x=@$TMP/long_header.npy"
expect npy_long_descr 1 "unsupported dtype descr 'x{32}\.\.\.' " -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x=@$TMP/long_descr.npy"
expect npy_unclosed_shape 1 "is not a readable .npy file: no shape" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed "x=@$TMP/no_shape.npy"

# Format detection: printable bytes that are not text format are tried as
# binary before the text error is reported.
expect binary_that_looks_like_text 1 "^graph: 1 nodes" -- \
  "$WEFT" inspect --graph "$TMP/printable.pb"

# Switches: a value is honoured or a usage error, never silently "on".
expect switch_false_honoured 0 "^class = int64" -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --timing=false
out=$("$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --timing=false 2>&1)
if grep -q "^timing:" <<<"$out"; then fail switch_false_no_timing "$out"; else pass switch_false_no_timing; fi
out=$("$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --log-device-placement=0 2>&1)
if grep -q "CPU:0" <<<"$out"; then fail switch_zero_no_placement "$out"; else pass switch_zero_no_placement; fi
expect switch_true 0 "^timing: steps=3 " -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --timing=true --steps 3
expect switch_bad_value 2 "^usage error: switch --no-soft-placement takes no value or true/false, not 'maybe'" -- \
  "$WEFT" run --graph "$MLP" --fetch class --no-soft-placement=maybe
expect switch_last_wins 2 "no-soft-placement goes with --placed" -- \
  "$WEFT" inspect --graph "$MLP" --no-soft-placement=false --no-soft-placement
expect timing_counts_one_step 0 "^timing: steps=1 " -- \
  "$WEFT" run --graph "$MLP" --fetch class --feed 'x=[[1, 2, 3, 4]]' --timing

# A session memory limit: a step whose tensors would pass it fails with
# RESOURCE_EXHAUSTED naming the node, the shape and the bytes; below it the
# same graph runs.
cat >"$TMP/big_fill.pbtxt" <<'PB'
node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1000 int_val: 1000 } } } }
node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
node { name: "big" op: "Fill" input: "dims" input: "v" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
PB
expect memory_limit_exceeded 1 "^error: RESOURCE_EXHAUSTED: node 'big' \(Fill\): out of memory allocating tensor of shape \[1000,1000\] and dtype float \(4000000 bytes\) on cpu \(session memory limit 1048576 bytes.*this run's --memory-limit is 1048576 bytes" -- \
  "$WEFT" run --graph "$TMP/big_fill.pbtxt" --fetch big --memory-limit 1M
expect memory_limit_enough 0 "^big = float32 \[1000,1000\]" -- \
  "$WEFT" run --graph "$TMP/big_fill.pbtxt" --fetch big --memory-limit 64M
# A Const whose one value fills a claimed shape is decoded into the
# session's memory, under its limit (the session fuzzer's 8 GB Const went
# around it).
cat >"$TMP/big_const.pbtxt" <<'PB'
node { name: "huge" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 268435456 } } float_val: 1 } } } }
PB
expect memory_limit_const 1 "^error: RESOURCE_EXHAUSTED: node 'huge' \(Const\): attr 'value': out of memory allocating tensor of shape \[268435456\] and dtype float \(1073741824 bytes\) on cpu \(session memory limit 67108864 bytes" -- \
  "$WEFT" run --graph "$TMP/big_const.pbtxt" --fetch huge --memory-limit 64M
expect memory_limit_bad 2 "--memory-limit must be a positive size in bytes .*, not '12Q'" -- \
  "$WEFT" run --graph "$TMP/big_fill.pbtxt" --fetch big --memory-limit 12Q
expect memory_limit_overflow 2 "at most 2\^62, not '99999999999T'" -- \
  "$WEFT" train --graph "$MLP" --memory-limit 99999999999T

# A batch too large to allocate is RESOURCE_EXHAUSTED naming it (it wrote
# through a failed allocation).
expect train_huge_batch 1 "^error: RESOURCE_EXHAUSTED: images of a batch of 100000000000 examples: out of memory allocating tensor of shape \[100000000000,64\]" -- \
  "$WEFT" train --model mlp --batch 100000000000 --steps 1
expect train_absurd_batch 1 "^error: RESOURCE_EXHAUSTED: images of a batch of 1099511627776 examples: tensor of shape \[1099511627776,64\] and dtype float is too large" -- \
  "$WEFT" train --model mlp --batch 1099511627776 --steps 1

# Loop frames nested 20000 deep (Enter ... Enter, Exit ... Exit): frames are
# tracked without recursion, so the depth a graph chooses cannot overflow
# the stack of validation, inspect or the executor.
python3 - "$TMP/nested.pbtxt" <<'PY'
import sys
n = 20000
out = ['node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
       'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }']
prev = "x"
for i in range(n):
    out.append('node { name: "e%d" op: "Enter" input: "%s" attr { key: "T" value { type: DT_FLOAT } } '
               'attr { key: "frame_name" value { s: "f%d" } } }' % (i, prev, i))
    prev = "e%d" % i
for i in reversed(range(n)):
    out.append('node { name: "x%d" op: "Exit" input: "%s" attr { key: "T" value { type: DT_FLOAT } } }' % (i, prev))
    prev = "x%d" % i
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
expect nested_frames_run 0 "^2$" -- "$WEFT" run --graph "$TMP/nested.pbtxt" --fetch x0
expect nested_frames_inspect 0 "^validation: ok" -- "$WEFT" inspect --graph "$TMP/nested.pbtxt"

# Threads the system refuses (here: 8 MiB stacks under a 400 MB address-space
# limit) are RESOURCE_EXHAUSTED naming the pool, not an abort from a thrown
# std::system_error. Sanitizer builds reserve terabytes of shadow memory, so
# ulimit -v cannot be applied to them.
printf 'node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }\n' >"$TMP/const.pbtxt"
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  echo "skip inter_op_threads_refused, intra_op_threads_refused: ulimit -v and a sanitizer build do not mix"
else
  limited=(bash -c 'ulimit -s 8192 && ulimit -v 400000 && exec "$@"' limited)
  expect inter_op_threads_refused 1 "^error: RESOURCE_EXHAUSTED: the session's inter-op pool \(ConfigProto.inter_op_parallelism_threads\): cannot start thread [0-9]+ of 1000 of thread pool 'weft_inter_op': " -- \
    "${limited[@]}" "$WEFT" run --graph "$TMP/const.pbtxt" --fetch c --inter-op-threads 1000 --intra-op-threads 1
  expect intra_op_threads_refused 1 "^error: RESOURCE_EXHAUSTED: the CPU devices' intra-op pool .*cannot start thread [0-9]+ of 1000 of thread pool 'cpu_intra_op'" -- \
    "${limited[@]}" "$WEFT" run --graph "$TMP/const.pbtxt" --fetch c --intra-op-threads 1000
  expect few_threads_fit 0 "^2$" -- \
    "${limited[@]}" "$WEFT" run --graph "$TMP/const.pbtxt" --fetch c --inter-op-threads 2 --intra-op-threads 2
fi

# Names with NUL or control bytes are C-escaped in messages, not cut short.
printf 'node { name: "a\\001b\\000c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }\n' >"$TMP/ctrl_name.pbtxt"
expect name_control_bytes 1 '^error: INVALID_ARGUMENT: node 0 \(op Const\) has invalid name .a\\001b\\000c.' -- \
  "$WEFT" run --graph "$TMP/ctrl_name.pbtxt" --fetch y
printf 'node { name: "ok" op: "Const\\033[2J\\377" }\n' >"$TMP/ctrl_op.pbtxt"
expect inspect_control_bytes 1 '^  1.Const\\033\[2J\\377$' -- \
  "$WEFT" inspect --graph "$TMP/ctrl_op.pbtxt"
expect inspect_json_bad_utf8 1 '"Const\\u001b\[2J' -- \
  "$WEFT" inspect --graph "$TMP/ctrl_op.pbtxt" --format json

finish
