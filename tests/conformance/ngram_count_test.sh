#!/usr/bin/env bash
# Wrapper so Bazel can run the Python conformance test with the system python3.
exec python3 "$(dirname "$0")/ngram_count_test.py" "$@"
