#!/usr/bin/env bash
# The GPU checks, for a machine with an NVIDIA GPU and the CUDA toolkit
# (written for an H200 with CUDA 13 and 16 cores; a few minutes there):
#   1. builds weft and the GPU tests with --config=cuda, which requires the
#      toolkit at $CUDA_PATH or /usr/local/cuda (the default build uses it when
#      found; this makes a missing toolkit an error rather than a CPU build);
#   2. runs tests/gpu un-skipped: loading cuBLAS, every CUDA kernel against the
#      CPU kernel, Send/Recv both ways, the MLP trained on /gpu:0 vs /cpu:0;
#   3. trains the MLP with `weft train --devices gpu:0` and `cpu:0` and
#      compares the final losses.
# Prints "GPU CHECK: PASS" or "GPU CHECK: FAIL (<what>)" last; exit status 0
# only on PASS. Where no GPU is usable the tests skip and this says FAIL.
#   tools/gpu_check.sh [extra bazel flags]
set -uo pipefail
cd "$(dirname "$0")/.."

jobs="${JOBS:-$(nproc)}"
failures=()
fail() { failures+=("$1"); echo "FAILED: $1"; }

if ! command -v bazel >/dev/null; then
  echo "GPU CHECK: FAIL (no bazel on PATH: apt-get install bazel-bootstrap, see README)"
  exit 1
fi

echo "== GPUs"
nvidia-smi -L 2>&1 || echo "(nvidia-smi failed: no driver?)"

echo "== build (--jobs=$jobs)"
if ! bazel build --config=cuda --jobs="$jobs" "$@" //tools:weft //tests/gpu:all; then
  echo "GPU CHECK: FAIL (build)"
  exit 1
fi

echo "== tests/gpu"
log=$(mktemp)
bazel test --config=cuda --jobs="$jobs" --test_output=all "$@" //tests/gpu:all 2>&1 | tee "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || fail "bazel test //tests/gpu:all"
if grep -q "^SKIPPED:" "$log"; then
  fail "GPU tests skipped: $(grep -m1 '^SKIPPED:' "$log")"
fi

echo "== weft train --model mlp: gpu:0 vs cpu:0"
weft=bazel-bin/tools/weft
final_loss() { sed -n 's/^done: steps [0-9]*  final loss \([0-9.eE+-]*\).*/\1/p'; }
gpu_out=$("$weft" train --model mlp --devices gpu:0 --steps 200 --log-every 50 2>&1)
echo "$gpu_out"
cpu_out=$("$weft" train --model mlp --devices cpu:0 --steps 200 --log-every 50 2>&1)
echo "$cpu_out"
gpu_loss=$(final_loss <<<"$gpu_out")
cpu_loss=$(final_loss <<<"$cpu_out")
if [[ -z "$gpu_loss" || -z "$cpu_loss" ]]; then
  fail "weft train did not finish (gpu '$gpu_loss', cpu '$cpu_loss')"
elif ! python3 -c "import sys; g, c = map(float, sys.argv[1:]); sys.exit(abs(g - c) > 1e-3 * abs(c))" \
    "$gpu_loss" "$cpu_loss"; then
  fail "final losses differ: gpu $gpu_loss vs cpu $cpu_loss"
else
  echo "final loss gpu $gpu_loss, cpu $cpu_loss: agree to 1e-3"
fi
if grep -q "GPUs: none" <<<"$gpu_out"; then
  fail "weft train found no GPU: $(grep -m1 'GPUs: none' <<<"$gpu_out")"
fi

if ((${#failures[@]})); then
  echo "GPU CHECK: FAIL (${failures[*]})"
  exit 1
fi
echo "GPU CHECK: PASS"
