# Shared by the CLI shell tests (source it): a scratch folder $TMP removed on
# exit, pass/fail counters, and
#   expect NAME WANT_EXIT WANT_REGEX -- command...
# which checks the exit code and that stdout+stderr matches the extended
# regex (commands time out after ${EXPECT_TIMEOUT:-60} seconds). End a test
# with `finish`: it prints "N passed, N failed" and sets the exit status.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

expect() {
  local name=$1 want_rc=$2 want_re=$3
  shift 4
  local out rc
  out=$(timeout "${EXPECT_TIMEOUT:-60}" "$@" 2>&1)
  rc=$?
  if [ "$rc" = "$want_rc" ] && grep -Eq -- "$want_re" <<<"$out"; then
    pass "$name"
  else
    fail "$name" "exit $rc (want $want_rc), output:
$(echo "$out" | head -20)"
  fi
}

pass() {
  passed=$((passed + 1))
  echo "PASS $1"
}

fail() {  # NAME DETAILS
  failed=$((failed + 1))
  echo "FAIL $1: $2"
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
