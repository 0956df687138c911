#!/usr/bin/env bash
# `weft graphgen` and `weft train` as a user runs them: flags, exit codes,
# error lines, progress and summary output, and that training lowers the
# loss. Then, when TensorFlow is installed, each generated graph is run in
# TensorFlow and in `weft run` on the same batch and the losses compared.
# usage: train_cli_test.sh PATH_TO_WEFT
set -u
WEFT=$1
EXPECT_TIMEOUT=120
source "$(dirname "$0")/expect.sh"

# Usage errors exit 2 with the command's usage.
expect graphgen_help 0 "--model M" -- "$WEFT" graphgen --help
expect train_help 0 "--data D" -- "$WEFT" train --help
expect graphgen_no_model 2 "usage error: --model is required" -- \
  "$WEFT" graphgen --out "$TMP/x.pb"
expect graphgen_no_out 2 "usage error: --out is required" -- "$WEFT" graphgen --model mlp
expect graphgen_bad_model 2 "usage error: unknown model 'resnet'" -- \
  "$WEFT" graphgen --model resnet --out "$TMP/x.pb"
expect graphgen_bad_optimizer 2 "usage error: unknown optimizer 'rmsprop'" -- \
  "$WEFT" graphgen --model mlp --optimizer rmsprop --out "$TMP/x.pb"
expect graphgen_bad_batch 2 "usage error: --batch must be a positive integer" -- \
  "$WEFT" graphgen --model mlp --batch 0 --out "$TMP/x.pb"
expect graphgen_bad_lr 2 "usage error: --lr must be a positive number" -- \
  "$WEFT" graphgen --model mlp --lr -1 --out "$TMP/x.pb"
expect graphgen_bad_variables 2 "usage error: variable kind must be 'ref' or 'resource'" -- \
  "$WEFT" graphgen --model mlp --variables mirrored --out "$TMP/x.pb"
expect graphgen_bad_heads 2 "usage error: .*heads" -- \
  "$WEFT" graphgen --model transformer --hidden 5 --out "$TMP/x.pb"
expect train_neither 2 "usage error: give exactly one of --graph and --model" -- "$WEFT" train
expect train_both 2 "usage error: give exactly one of --graph and --model" -- \
  "$WEFT" train --graph x.pb --model mlp
expect train_bad_steps 2 "usage error: --steps must be a positive integer" -- \
  "$WEFT" train --model mlp --steps many
expect train_bad_data 2 "usage error: --data must be synthetic or digits" -- \
  "$WEFT" train --model mlp --data mnist
expect train_graph_with_batch 2 "usage error: --batch goes with --model" -- \
  "$WEFT" train --graph x.pb --batch 8
# Device counts and ids are bounded: no overflow, no billion devices.
expect train_huge_device_id 2 "CPU:2147483647': a process has at most 1024 CPU devices" -- \
  "$WEFT" train --model mlp --devices cpu:0,cpu:2147483647 --mode in-graph --steps 1
expect train_too_many_cpu_devices 2 "usage error: --cpu-devices must be at most 1024, not 50000000" -- \
  "$WEFT" train --model mlp --cpu-devices 50000000 --steps 1
expect train_unknown_flag 2 "unknown flag --epochs" -- "$WEFT" train --model mlp --epochs 3

# Runtime errors exit 1 with "error: CODE: message".
expect graphgen_unwritable 1 "^error: UNAVAILABLE: cannot write" -- \
  "$WEFT" graphgen --model mlp --out "$TMP/no/such/dir/x.pb"
expect train_missing_graph 1 "^error: NOT_FOUND: .*none.pb" -- \
  "$WEFT" train --graph "$TMP/none.pb"
mkdir -p "$TMP/empty_data"
expect train_digits_missing 1 "^error: NOT_FOUND: digits data set .* run tools/setup.sh" -- \
  env WEFT_DATA_DIR="$TMP/empty_data" "$WEFT" train --model mlp --data digits --steps 2
echo 'node { name: "images" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }' \
  >"$TMP/not_training.pbtxt"
expect train_not_a_training_graph 1 "^error: INVALID_ARGUMENT: .*no node 'labels'" -- \
  "$WEFT" train --graph "$TMP/not_training.pbtxt"

# A user's graph whose 'loss' is not one float: an error naming the node,
# not a crash (an empty tensor) or a garbage number (an int32 read as float).
bad_loss_graph() {  # DTYPE TENSOR_FIELDS
  cat <<PBTXT
node { name: "images" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } dim { size: 64 } } } } }
node { name: "labels" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
node { name: "loss" op: "Const" attr { key: "dtype" value { type: $1 } }
  attr { key: "value" value { tensor { dtype: $1 $2 } } } }
node { name: "train_op" op: "NoOp" }
node { name: "init" op: "NoOp" }
PBTXT
}
bad_loss_graph DT_FLOAT 'tensor_shape { dim { size: 0 } }' >"$TMP/empty_loss.pbtxt"
bad_loss_graph DT_INT32 'tensor_shape { } int_val: 7' >"$TMP/int_loss.pbtxt"
expect train_empty_loss 1 "^error: INVALID_ARGUMENT: node 'loss' is float \[0\]; .*one float32" -- \
  "$WEFT" train --graph "$TMP/empty_loss.pbtxt" --steps 2
expect train_int_loss 1 "^error: INVALID_ARGUMENT: node 'loss' is int32 \[\]; .*one float32" -- \
  "$WEFT" train --graph "$TMP/int_loss.pbtxt" --steps 2

# The digits data set, where tools/setup.sh exported it (Bazel points HOME
# at a scratch folder, so the user's home comes from the password database).
digits_dir="$(getent passwd "$(id -u)" | cut -d: -f6)/.cache/weft/data"
if [ -s "$digits_dir/digits.bin" ]; then
  expect train_digits_loads 0 "on digits data \(1797 examples\)" -- \
    env WEFT_DATA_DIR="$digits_dir" "$WEFT" train --model mlp --data digits --steps 1
  expect train_digits 0 "^done: steps 40  final loss" -- \
    env WEFT_DATA_DIR="$digits_dir" "$WEFT" train --model mlp --data digits \
    --optimizer adam --steps 40 --batch 16
else
  echo "(no digits run: $digits_dir/digits.bin is missing; tools/setup.sh makes it)"
fi

# graphgen writes graphs (binary and text) that train runs.
for model in mlp cnn transformer; do
  expect "graphgen_$model" 0 "^wrote .*$model.pb: [0-9]+ nodes \($model, batch 8" -- \
    "$WEFT" graphgen --model "$model" --batch 8 --optimizer adam --out "$TMP/$model.pb"
  expect "train_graph_$model" 0 \
    "^done: steps 3  final loss [0-9.]+  accuracy [0-9.]+ .*examples/s \(after step 1\)  wall time" -- \
    "$WEFT" train --graph "$TMP/$model.pb" --steps 3
done
expect graphgen_text 0 "^wrote .*mlp.pbtxt" -- \
  "$WEFT" graphgen --model mlp --variables ref --optimizer momentum --out "$TMP/mlp.pbtxt"
expect train_text_graph 0 "^done: steps 2 " -- "$WEFT" train --graph "$TMP/mlp.pbtxt" --steps 2

# Progress: plain lines when stdout is not a terminal (no carriage returns).
out=$("$WEFT" train --model mlp --steps 20 --log-every 5 2>&1)
if [ "$(grep -c '^step ' <<<"$out")" = 5 ] && ! grep -q $'\r' <<<"$out" &&
   grep -Eq '^step 20/20  loss [0-9.]+  accuracy [0-9.]+  [0-9]+ examples/s$' <<<"$out"; then
  pass progress_plain_lines
else
  fail progress_plain_lines "$out"
fi

# On a terminal the progress line is rewritten in place ("\r"), then ends
# with a newline before the summary. `script` gives the command a pty.
if command -v script >/dev/null; then
  out=$(timeout 120 script -qec "'$WEFT' train --model mlp --steps 5" /dev/null 2>&1)
  if grep -q $'\rstep 5/5  loss' <<<"$out" && grep -q '^done: steps 5 ' <<<"$out"; then
    pass progress_tty_rewrites_line
  else
    fail progress_tty_rewrites_line "$(od -c <<<"$out" | head -20)"
  fi
else
  echo "(no pty check: 'script' is not installed)"
fi

# Training lowers the loss: first step's loss vs the summary's final loss.
out=$("$WEFT" train --model mlp --optimizer adam --steps 150 --log-every 150 2>&1)
if python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
first = float(re.search(r"^step +1/\d+  loss ([0-9.]+)", out, re.M).group(1))
final = float(re.search(r"final loss ([0-9.]+)", out).group(1))
sys.exit(0 if final < 0.5 * first else 1)
PY
then
  pass train_lowers_loss
else
  fail train_lowers_loss "$out"
fi

# The generated graphs in TensorFlow and in `weft run`, same batch.
if python3 -c "import tensorflow" 2>/dev/null; then
  for model in mlp cnn transformer; do
    python3 - "$TMP/$model.pb" "$TMP/${model}_images.npy" "$TMP/${model}_labels.npy" \
      "$TMP/${model}_tf.txt" <<'PY'
import sys
import numpy as np
import tensorflow as tf
graph_path, images_path, labels_path, out_path = sys.argv[1:]
graph_def = tf.compat.v1.GraphDef()
graph_def.ParseFromString(open(graph_path, "rb").read())
graph = tf.Graph()
with graph.as_default():
    tf.compat.v1.import_graph_def(graph_def, name="")
shape = [int(d) for d in graph.get_tensor_by_name("images:0").shape]
rng = np.random.default_rng(5)
images = rng.uniform(size=shape).astype(np.float32)
labels = rng.integers(0, 10, size=shape[0]).astype(np.int64)
np.save(images_path, images)
np.save(labels_path, labels)
losses = []
with tf.compat.v1.Session(graph=graph) as sess:
    sess.run("init")
    for _ in range(3):
        loss, _ = sess.run(["loss:0", "train_op"],
                           {"images:0": images, "labels:0": labels})
        losses.append(float(loss))
    losses.append(float(sess.run("loss:0", {"images:0": images,
                                            "labels:0": labels})))
open(out_path, "w").write(" ".join("%.9g" % l for l in losses))
PY
    # weft run: init, 3 training steps on the batch, then the loss.
    weft_loss=$("$WEFT" run --graph "$TMP/$model.pb" --init init --target train_op \
      --steps 3 --feed "images=@$TMP/${model}_images.npy" \
      --feed "labels=@$TMP/${model}_labels.npy" --fetch loss --format json 2>&1)
    if python3 - "$(cat "$TMP/${model}_tf.txt")" "$weft_loss" <<'PY'
import json, sys
tf_losses = [float(v) for v in sys.argv[1].split()]
weft = json.loads(sys.argv[2])["fetches"]["loss"]["values"]
weft = weft[0] if isinstance(weft, list) else weft
# weft run fetches the loss of its last step, before that step's update.
ok = abs(weft - tf_losses[2]) <= 2e-4 * abs(tf_losses[2]) + 1e-5
print("tensorflow losses %s, weft step-3 loss %s" % (tf_losses, weft))
sys.exit(0 if ok else 1)
PY
    then
      pass "tf_same_loss_$model"
    else
      fail "tf_same_loss_$model" "$weft_loss"
    fi
  done
else
  echo "SKIPPED: tensorflow not installed (graphgen graphs not run in TensorFlow)"
fi

finish
