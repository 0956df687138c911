#!/usr/bin/env bash
# Runs a coverage-guided fuzzing campaign on one of Weft's fuzz targets
# (tests/fuzz/): builds it with --config=fuzz (clang, libFuzzer, ASan,
# UBSan), starts from the committed corpus and prints what the campaign did.
#
#   tools/fuzz.sh TARGET MINUTES [--merge] [--jobs N]
#   tools/fuzz.sh session_fuzzer 30
#   tools/fuzz.sh list
#
# TARGET is graphdef_fuzzer, shape_inference_fuzzer, session_fuzzer,
# feed_fuzzer, tensor_proto_fuzzer or service_request_fuzzer. The campaign's corpus and any crash,
# timeout or out-of-memory input go to ${WEFT_FUZZ_DIR:-/tmp/weft-fuzz}/TARGET/;
# a finding ends the campaign, and its input replays with
#   bazel-bin-fuzz/tests/fuzz/TARGET FILE  (or the regular build's binary).
# --merge adds the inputs that reach new coverage to tests/fuzz/corpus/TARGET
# (commit them: the regression tests replay that corpus). --jobs N runs N
# fuzzing processes (default 1). Exit status: 0 when nothing was found.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(graphdef_fuzzer shape_inference_fuzzer session_fuzzer feed_fuzzer
         tensor_proto_fuzzer service_request_fuzzer)
usage() {
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
[ $# -ge 1 ] || usage
if [ "$1" = list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
[ $# -ge 2 ] || usage
target=$1
minutes=$2
shift 2
merge=0
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --merge) merge=1 ;;
    --jobs) jobs=${2:?--jobs takes a number}; shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
if ! printf '%s\n' "${targets[@]}" | grep -qx "$target"; then
  echo "fuzz.sh: no fuzz target '$target'; targets: ${targets[*]}" >&2
  exit 2
fi
if ! [[ "$minutes" =~ ^[0-9]+$ ]] || [ "$minutes" -lt 1 ]; then
  echo "fuzz.sh: MINUTES must be a positive integer, not '$minutes'" >&2
  exit 2
fi
if ! command -v clang >/dev/null ||
   ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
        >/dev/null 2>&1; then
  echo "fuzz.sh: needs clang and libFuzzer: apt-get install clang libclang-rt-dev" >&2
  exit 2
fi

cache_dir="${WEFT_BAZEL_CACHE:-$HOME/.cache/weft/bazel-disk}"
bazel build --config=fuzz --disk_cache="$cache_dir" "//tests/fuzz:$target"
bin="$(bazel info --config=fuzz bazel-bin)/tests/fuzz/$target"

work="${WEFT_FUZZ_DIR:-/tmp/weft-fuzz}/$target"
mkdir -p "$work/corpus" "$work/findings"
seeds="$PWD/tests/fuzz/corpus/$target"
log="$work/campaign.log"
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "fuzz.sh: $target for $minutes min ($jobs job(s)); log $log"
# With --jobs, libFuzzer runs child processes that log to fuzz-N.log in the
# current directory: run it in $work so those logs land there.
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
rm -f "$work"/fuzz-*.log
rc=0
start=$SECONDS
# Findings are the crash/leak/timeout/oom inputs this campaign writes; older
# ones in the directory, and libFuzzer's slow-unit-* notes, are not.
stamp="$work/.campaign-start"
touch "$stamp"
(cd "$work" &&
 "$bin" -max_total_time=$((minutes * 60)) -timeout=20 -rss_limit_mb=4096 \
   -malloc_limit_mb=4096 -print_final_stats=1 "${parallel[@]}" \
   -artifact_prefix="$work/findings/" "$work/corpus" "$seeds") \
  >"$log" 2>&1 || rc=$?

# libFuzzer's last status line ("#N DONE cov: C ft: F corp: ...") and its
# final stats give the executions and the coverage the campaign reached.
shopt -s nullglob
logs=("$log" "$work"/fuzz-*.log)
shopt -u nullglob
execs=$(cat "${logs[@]}" | grep -o 'stat::number_of_executed_units: *[0-9]*' |
        awk '{s += $2} END {print s + 0}' || true)
last=$(cat "${logs[@]}" | grep -E '^#[0-9]+' | tail -1 || true)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
findings=$(find "$work/findings" -type f -newer "$stamp" ! -name 'slow-unit-*' |
           wc -l)
earlier=$(find "$work/findings" -type f ! -newer "$stamp" | wc -l)
ran=$((SECONDS - start))  # a finding ends the campaign early
echo "fuzz.sh: $target: $execs executions in $((ran / 60)) min $((ran % 60)) s" \
     "(of $minutes min), coverage $cov edges" \
     "($ft features), corpus $(find "$work/corpus" -type f | wc -l) files," \
     "$findings finding(s) in $work/findings" \
     "$( [ "$earlier" -gt 0 ] && echo "($earlier file(s) there from earlier campaigns)")"
if [ "$merge" = 1 ]; then
  before=$(find "$seeds" -type f | wc -l)
  "$bin" -merge=1 "$seeds" "$work/corpus" >>"$log" 2>&1
  echo "fuzz.sh: merged: $seeds has $(find "$seeds" -type f | wc -l) files (was $before)"
fi
if [ "$findings" -gt 0 ] || [ "$rc" -ne 0 ]; then
  grep -E "ERROR|SUMMARY|fuzz: " "$log" | head -5 >&2 || true
  exit 1
fi
