#!/usr/bin/env bash
# Runs simd_symbols_test.py over the ISA compilations (see it for why).
set -euo pipefail
exec python3 "$(dirname "$0")/simd_symbols_test.py" "$@"
