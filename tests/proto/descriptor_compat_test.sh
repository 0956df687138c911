#!/bin/bash
# Runs descriptor_compat_test.py over the .proto files in this test's
# runfiles. python3 comes from PATH (Bazel's Python rules are not usable
# offline); without python3 or TensorFlow the test reports itself skipped.
set -u

if [[ -n "${TEST_SRCDIR:-}" ]]; then
  root="${TEST_SRCDIR}/${TEST_WORKSPACE:-weft}"
else
  root="$(cd "$(dirname "$0")/../.." && pwd)"
fi
script="${root}/tests/proto/descriptor_compat_test.py"

if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED: tensorflow not installed (no python3 on PATH)"
  exit 0
fi

protoc="$(command -v protoc || echo /usr/bin/protoc)"
exec python3 "${script}" --root "${root}" --protoc "${protoc}"
