#!/usr/bin/env bash
# Wrapper so Bazel can run the Python cluster test with the system python3.
exec python3 "$(dirname "$0")/cluster_process_test.py" "$@"
