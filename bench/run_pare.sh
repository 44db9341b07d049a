#!/bin/sh
# Runs the Pare programs with parec and compares against expected.out.
# Usage: bench/run_pare.sh MODE [NAME...]
#   MODE: interp | run (JIT) | build (aarch64 executable under qemu-aarch64-static)
# PAREC overrides the parec binary (default: target/release/parec); PAREC_FLAGS
# adds flags to `parec build` (e.g. "-O0" or "-O2").
set -u
cd "$(dirname "$0")"
mode=${1:-interp}
[ $# -gt 0 ] && shift
parec=${PAREC:-../target/release/parec}
names="$*"
[ -z "$names" ] && names=$(for d in */; do [ -f "${d}main.pare" ] && echo "${d%/}"; done)
fail=0
for n in $names; do
  out=$(mktemp)
  start=$(date +%s.%N)
  case $mode in
    build)
      exe=$(mktemp)
      if "$parec" build ${PAREC_FLAGS:-} "$n/main.pare" -o "$exe"; then qemu-aarch64-static "$exe" > "$out"; status=$?
      else status=compile-error; fi
      rm -f "$exe" ;;
    *) "$parec" "$mode" "$n/main.pare" > "$out"; status=$? ;;
  esac
  end=$(date +%s.%N)
  if [ "$status" = 0 ] && cmp -s "$out" "$n/expected.out"; then result=ok
  else result="FAIL (status $status)"; fail=1; fi
  printf '%-14s %-6s %6.2fs  %s\n' "$n" "$mode" "$(echo "$end - $start" | bc)" "$result"
  rm -f "$out"
done
exit $fail
