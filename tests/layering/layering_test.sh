#!/usr/bin/env bash
# Wrapper so Bazel can run the Python layering test with the system python3.
exec python3 "$(dirname "$0")/layering_test.py" "$@"
