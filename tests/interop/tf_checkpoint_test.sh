#!/usr/bin/env bash
# Wrapper so Bazel can run the Python checkpoint test with the system python3.
exec python3 "$(dirname "$0")/tf_checkpoint_test.py" "$@"
