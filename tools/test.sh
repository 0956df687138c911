#!/usr/bin/env bash
# Builds Weft and runs every test, then prints one closing line:
#   N passed, N failed, N skipped
# (counted per test case; a test that needs TensorFlow or a GPU and cannot
# find it reports itself as skipped). Extra arguments go to `bazel test`,
# e.g. tools/test.sh --config=asan, or a target pattern.
set -uo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh

targets=()
flags=()
for arg in "$@"; do
  case "$arg" in
    //*) targets+=("$arg") ;;
    *) flags+=("$arg") ;;
  esac
done
((${#targets[@]})) || targets=(//...)

cache_dir="${WEFT_BAZEL_CACHE:-$HOME/.cache/weft/bazel-disk}"
mkdir -p "$cache_dir"
log=$(mktemp)
bazel test --disk_cache="$cache_dir" --test_summary=short --keep_going \
  ${flags[@]+"${flags[@]}"} -- "${targets[@]}" 2>&1 | tee "$log"
bazel_rc=${PIPESTATUS[0]}

# The flags choose the output tree (--config=asan has its own testlogs).
testlogs=$(bazel info ${flags[@]+"${flags[@]}"} bazel-testlogs 2>/dev/null)
python3 tools/count_tests.py "$log" "$testlogs"
count_rc=$?
rm -f "$log"
if [ "$count_rc" -ne 0 ] || [ "$bazel_rc" -ne 0 ]; then
  exit 1
fi
