#!/usr/bin/env bash
# Builds every bench/ and examples/ program with two parec binaries and checks
# that every object file is byte-identical (a refactoring must not change
# output).
#
#   scripts/compare-objects.sh OLD_PAREC NEW_PAREC [WORK_DIR]
#
# Each program is built with `--emit obj` under every configuration in
# CONFIGS; the objects land in WORK_DIR/{old,new}/<config>/<program>/ and are
# compared with `cmp`. Exits non-zero if any object differs or is missing, or
# if the two binaries disagree on whether a build succeeds.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_PAREC NEW_PAREC [WORK_DIR]" >&2
    exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d)}

CONFIGS=("Oz:-Oz" "Oz-two-rounds:-Oz --two-rounds")
programs=(bench/*/main.pare examples/*.pare examples/*/main.pare)

# build PAREC SIDE: builds every program under every configuration.
build() {
    local parec=$1 side=$2
    for config in "${CONFIGS[@]}"; do
        local name=${config%%:*} flags=${config#*:}
        for program in "${programs[@]}"; do
            local out="$work/$side/$name/${program%.pare}"
            rm -rf "$out"
            mkdir -p "$out"
            # shellcheck disable=SC2086 # flags are words on purpose
            if ! "$parec" build "$program" $flags --emit obj -o "$out" \
                >"$out.stdout" 2>"$out.stderr"; then
                echo failed >"$out.status"
            fi
        done
    done
}

build "$old" old
build "$new" new

same=0 differ=0 builds=0 failed_both=0 status_differs=0
for config in "${CONFIGS[@]}"; do
    name=${config%%:*}
    for program in "${programs[@]}"; do
        builds=$((builds + 1))
        a="$work/old/$name/${program%.pare}"
        b="$work/new/$name/${program%.pare}"
        if [ -e "$a.status" ] || [ -e "$b.status" ]; then
            if [ -e "$a.status" ] && [ -e "$b.status" ] && cmp -s "$a.stderr" "$b.stderr"; then
                failed_both=$((failed_both + 1))
            else
                echo "build status or error differs: $name $program" >&2
                status_differs=$((status_differs + 1))
            fi
            continue
        fi
        for obj in "$a"/*.o "$b"/*.o; do
            rel=${obj##*/}
            if cmp -s "$a/$rel" "$b/$rel"; then
                [ "$obj" = "$a/$rel" ] && same=$((same + 1))
            else
                # Counted once per object, from the side that has it.
                if [ "$obj" = "$a/$rel" ] || [ ! -e "$a/$rel" ]; then
                    echo "differs: $name $program $rel" >&2
                    differ=$((differ + 1))
                fi
            fi
        done
    done
done

echo "builds: $builds ($failed_both fail identically under both binaries, $status_differs differ in status)"
echo "objects: $same identical, $differ different or missing"
echo "work directory: $work"
[ "$differ" = 0 ] && [ "$status_differs" = 0 ]
