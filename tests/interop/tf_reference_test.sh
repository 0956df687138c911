#!/usr/bin/env bash
# Wrapper so Bazel can run the Python interop test with the system python3.
exec python3 "$(dirname "$0")/tf_reference_test.py" "$@"
