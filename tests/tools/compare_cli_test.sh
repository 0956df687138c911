#!/usr/bin/env bash
# Wrapper so Bazel can run the Python weft compare test with the system python3.
exec python3 "$(dirname "$0")/compare_cli_test.py" "$@"
