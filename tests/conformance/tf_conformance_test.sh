#!/usr/bin/env bash
# Generates TensorFlow 2.21 training graphs and TF's results under
# $TEST_TMPDIR (tf_training_graphs.py), then runs them in Weft
# (tf_conformance_runner, one GoogleTest case per graph; its XML goes to
# $XML_OUTPUT_FILE so each case counts). Without python3 or TensorFlow the
# test prints SKIPPED and passes.
set -u
runner="${1:?usage: tf_conformance_test.sh RUNNER}"
here="$(dirname "$0")"
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED: tensorflow not installed (no python3 on PATH)"
  exit 0
fi
out="${TEST_TMPDIR:-$(mktemp -d)}/tf_conformance_cases"
log="$(mktemp)"
if ! python3 "${here}/tf_training_graphs.py" "${out}" >"${log}" 2>&1; then
  cat "${log}"
  echo "FAILED: tf_training_graphs.py could not write the cases"
  exit 1
fi
if grep -q '^SKIPPED:' "${log}"; then
  grep '^SKIPPED:' "${log}"
  exit 0
fi
grep '^wrote ' "${log}"
exec "${runner}" "${out}"
