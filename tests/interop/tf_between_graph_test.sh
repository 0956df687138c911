#!/usr/bin/env bash
# Wrapper so Bazel can run the Python between-graph interop test with the system python3.
exec python3 "$(dirname "$0")/tf_between_graph_test.py" "$@"
