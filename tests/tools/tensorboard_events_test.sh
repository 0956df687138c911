#!/usr/bin/env bash
# Wrapper so Bazel can run the Python TensorBoard test with the system python3.
exec python3 "$(dirname "$0")/tensorboard_events_test.py" "$@"
