#!/bin/bash
# Runs op_def_compat_test.py against the dump_op_defs binary passed as $1.
# python3 comes from PATH (Bazel's Python rules are not usable offline);
# without python3 or TensorFlow the test reports itself skipped.
set -u

if [[ -n "${TEST_SRCDIR:-}" ]]; then
  root="${TEST_SRCDIR}/${TEST_WORKSPACE:-weft}"
else
  root="$(cd "$(dirname "$0")/../.." && pwd)"
fi
script="${root}/tests/ops/op_def_compat_test.py"
dump="${1:?usage: op_def_compat_test.sh PATH_TO_dump_op_defs}"
[[ "${dump}" = /* ]] || dump="${root}/${dump}"

if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED: tensorflow not installed (no python3 on PATH)"
  exit 0
fi

exec python3 "${script}" --dump "${dump}"
