#!/bin/sh
# Builds every C twin (bench/NAME/NAME.c) and regenerates NAME/expected.out.
# Usage: bench/run_twins.sh [NAME...]   (run from anywhere)
# With CHECK=1 it also builds with ASan/UBSan to catch out-of-bounds or UB in
# the twin (which would mean the Pare program traps or differs).
set -e
cd "$(dirname "$0")"
names="$*"
[ -z "$names" ] && names=$(for d in */; do [ -f "$d${d%/}.c" ] && echo "${d%/}"; done)
for n in $names; do
  gcc -std=c11 -O1 -fwrapv -Wall -Wextra -Wno-unused-function -o "/tmp/twin_$n" "$n/$n.c"
  start=$(date +%s.%N)
  "/tmp/twin_$n" > "$n/expected.out"
  end=$(date +%s.%N)
  if [ "${CHECK:-0}" = 1 ]; then
    gcc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -o "/tmp/twin_${n}_san" "$n/$n.c"
    ASAN_OPTIONS=detect_leaks=0 "/tmp/twin_${n}_san" | cmp - "$n/expected.out"
  fi
  printf '%-14s %5s lines  %.3fs\n' "$n" "$(wc -l < "$n/expected.out")" "$(echo "$end - $start" | bc)"
done
