#!/usr/bin/env bash
# The main job, end to end: build `weft`, then run the bundled example graphs.
#   1. a 4-8-3 MLP classifier's forward pass, on its default batch and on a
#      batch given on the command line;
#   2. linear regression trained by gradient descent with variables that
#      persist across 500 steps (it should find w = 3, b = 1).
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
