#!/usr/bin/env bash
# Runs a kernel test binary with the SIMD kernels capped at one ISA
# (WEFT_MAX_CPU_ISA, ops/cpu/cpu_isa.h), so that every ISA path this CPU
# can run is tested, whatever the widest one is:
#   tests/ops/isa_test.sh ISA BINARY [ARGS...]
# Skips visibly when the CPU lacks the ISA.
set -euo pipefail
isa=$1
binary=$2
shift 2
case "$isa" in
  avx512) need="avx512f avx512vl avx512bw avx512dq avx2 fma" ;;
  avx2) need="avx2 fma" ;;
  baseline) need="" ;;
  *) echo "isa_test.sh: unknown ISA '$isa' (avx512, avx2, baseline)" >&2; exit 2 ;;
esac
for flag in $need; do
  if ! grep -qw "$flag" /proc/cpuinfo; then
    echo "SKIPPED: this CPU lacks $flag, so the $isa kernels cannot run here"
    exit 0
  fi
done
export WEFT_MAX_CPU_ISA="$isa"
exec "$binary" "$@"
