#!/usr/bin/env bash
# Runs tf_parallel_compare_test.py with the system python3 (args: the dump binary).
exec python3 "$(dirname "$0")/tf_parallel_compare_test.py" "$@"
