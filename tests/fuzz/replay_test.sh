#!/usr/bin/env bash
# Replays a fuzz target's committed corpus (a regression test: every input
# that once found a bug, or covers a path, must still run cleanly).
# Usage: replay_test.sh TARGET_BINARY CORPUS_DIR
set -u
bin=$1
corpus=$2
n=$(find -L "$corpus" -type f | wc -l)
if [ "$n" -eq 0 ]; then
  echo "FAIL: no inputs in $corpus"
  echo "0 passed, 1 failed"
  exit 1
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
if out=$(timeout 600 "$bin" -runs=0 "$corpus" 2>&1); then
  echo "replayed $n inputs of $corpus"
  echo "1 passed, 0 failed"
else
  rc=$?
  echo "$out" | tail -40
  echo "FAIL: $bin exited $rc on the corpus $corpus"
  echo "0 passed, 1 failed"
  exit 1
fi
