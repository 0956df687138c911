#!/usr/bin/env bash
# The main job, end to end: build `weft`, then run the bundled example graphs.
#   1. a 4-8-3 MLP classifier's forward pass, on its default batch and on a
#      batch given on the command line;
#   2. linear regression trained by gradient descent with variables that
#      persist across 500 steps (it should find w = 3, b = 1);
#   3. an MLP trained on scikit-learn's 8x8 digits on one CPU device, then
#      with two in-graph replicas (one tower per device, gradients averaged)
#      and with its layers split over two devices: the same losses, and the
#      throughput of each way of spreading it;
#   4. weft compare: the same MLP in every replication mode (one process,
#      layers over 2 devices, in-graph over 2 worker tasks, between-graph async and sync with a ps
#      task), on local clusters it starts and stops; a table, a report and
#      pictures.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cache_dir="${WEFT_BAZEL_CACHE:-$HOME/.cache/weft/bazel-disk}"
mkdir -p "$cache_dir"
bazel build --disk_cache="$cache_dir" //tools:weft 2>&1 | tail -n 2
WEFT=bazel-bin/tools/weft

run() {
  echo
  echo "\$ weft $*"
  "$WEFT" "$@"
}

run run --graph tools/examples/mlp_classifier.pbtxt --fetch probs --fetch class
run run --graph tools/examples/mlp_classifier.pbtxt \
  --feed 'x=[[1, 2, 3, 4], [-1, 0, 1, 0]]' --fetch class --format json
run run --graph tools/examples/linear_regression.pbtxt --init init \
  --target train --steps 500 --fetch w --fetch b --fetch loss

for mode in "--mode single" "--devices cpu:0,cpu:1 --mode in-graph" \
    "--devices cpu:0,cpu:1 --mode model-parallel"; do
  # shellcheck disable=SC2086  # $mode is two flags
  run train --model mlp --data digits --batch 64 --steps 300 \
    --optimizer adam --log-every 100 $mode
done

# Every replication mode on the same model, data and global batch: local
# clusters (1 ps, 2 workers) started and stopped by weft compare itself.
compare_out=$(mktemp -d /tmp/weft-demo-compare-XXXXXX)
run compare --model mlp --data digits --workers 2 --ps 1 --steps 300 \
  --optimizer adam --project 8,32,128 --project-link 10gbit \
  --project-latency 50us --out "$compare_out"
echo
echo "The comparison's report and pictures are in $compare_out"
