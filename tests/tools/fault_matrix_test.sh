#!/usr/bin/env bash
# Wrapper so Bazel can run the Python fault matrix with the system python3.
exec python3 "$(dirname "$0")/fault_matrix_test.py" "$@"
