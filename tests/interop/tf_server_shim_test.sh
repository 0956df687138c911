#!/usr/bin/env bash
# Wrapper so Bazel can run the Python test with the system python3.
exec python3 "$(dirname "$0")/tf_server_shim_test.py" "$@"
