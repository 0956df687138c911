#!/usr/bin/env bash
# Weft vs TensorFlow on the same graphs, in one run (see bench_vs_tf.py).
#   tools/bench_vs_tf.sh [--only executor|matmul|train|kernels|models|devices|distributed|replication] [--repeats N]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cache_dir="${WEFT_BAZEL_CACHE:-$HOME/.cache/weft/bazel-disk}"
bazel build --disk_cache="$cache_dir" //tools:weft 2>&1 | tail -n 1
exec python3 tools/bench_vs_tf.py bazel-bin/tools/weft "$@"
