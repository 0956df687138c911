#!/usr/bin/env bash
# Wrapper so Bazel can run the Python test with the system python3.
exec python3 "$(dirname "$0")/train_graph_cli_test.py" "$@"
