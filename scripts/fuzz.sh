#!/usr/bin/env bash
# Builds the cargo-fuzz targets of fuzz/ and runs each one briefly, with a
# fixed libFuzzer seed, a fixed seed corpus and a bounded number of runs and
# time, so that CI (scripts/test.sh runs this after `cargo test --workspace`)
# keeps the targets building and catches what a short fuzz run finds. Any
# crash, panic, timeout or failed build fails the script; the input that
# crashed is printed (under fuzz/artifacts/TARGET/).
#
# Usage: scripts/fuzz.sh [TARGET...]   (default: every target of fuzz/Cargo.toml)
#
# Environment (CI uses the defaults):
#   PAREC_FUZZ_RUNS_SCALE  multiplies every target's runs and time cap (default 1)
#   PAREC_FUZZ_SEED        libFuzzer's -seed (default 1)
#   CARGO_TARGET_DIR       honoured by cargo, for the workspace and fuzz/ alike
set -euo pipefail
cd "$(dirname "$0")/.."

# cargo-fuzz, pinned so that CI builds with the flags that were measured.
# It is installed from crates.io when missing (never skipped: a missing tool
# must fail, not pass). Stable Rust is enough: `--sanitizer none` passes no
# -Z flags, and CI has no nightly toolchain (nor can fetch one).
cargo_fuzz_version=0.13.2
install_root="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
export PATH="$install_root/bin:$PATH"
if [ "$(cargo fuzz --version 2>/dev/null || true)" != "cargo-fuzz $cargo_fuzz_version" ]; then
    echo "scripts/fuzz.sh: installing cargo-fuzz $cargo_fuzz_version" >&2
    cargo install cargo-fuzz --version "$cargo_fuzz_version" --locked
fi
if [ "$(cargo fuzz --version)" != "cargo-fuzz $cargo_fuzz_version" ]; then
    echo "scripts/fuzz.sh: error: cargo fuzz is not version $cargo_fuzz_version after installing it" >&2
    exit 1
fi

# The fuzz build: cargo-fuzz's dev mode (opt-level 0), without comparison
# tracing. Measured on this project's 2-core machine, cargo-fuzz's default
# (release, one codegen unit) costs about 7 CPU-minutes to build, twice as
# much as this; opt-level 1 with 16 codegen units costs as much as the
# default. Runs are slower at opt-level 0 (clif_passes: about 2 s per 1 KiB
# input instead of 0.3 s), which the run counts below allow for. Comparison
# tracing took a third of the run time at opt-level 0 and matters little to
# targets whose input drives a generator. Debug assertions and overflow
# checks are on (dev mode), so Cranelift's own checks run too. Line tables
# only, no incremental cache: smaller and faster, as in the workspace.
fuzz_flags=(--sanitizer none --dev --no-trace-compares)
fuzz_env=(CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_DEV_INCREMENTAL=false)

runs_scale="${PAREC_FUZZ_RUNS_SCALE:-1}"
seed="${PAREC_FUZZ_SEED:-1}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The workspace's debug build gives two programs: `parec-tools`, which the
# differential target runs programs with (`exec-jit`, a child process), and
# the example `fuzz_seeds`, which writes the seed corpus. `cargo test
# --workspace --no-run` builds exactly what `cargo test --workspace` built
# (nothing, right after it); building them with `-p parec-tools` instead would
# resolve the dependencies' features differently and compile Cranelift again.
cargo test --workspace --no-run
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
export PAREC_TOOLS_BIN="$target_dir/debug/parec-tools"
fuzz_seeds="$target_dir/debug/examples/fuzz_seeds"
for program in "$PAREC_TOOLS_BIN" "$fuzz_seeds"; do
    if [ ! -x "$program" ]; then
        echo "scripts/fuzz.sh: error: $program is missing after cargo test --workspace --no-run" >&2
        exit 1
    fi
done

# Seed corpora, the same on every machine: the Pare programs of examples/
# and bench/ for the frontend; for the generator-driven targets, the first
# 1 KiB of the generator input of seeds 0..7 (real programs from the first
# run on, instead of growing the empty input a byte at a time).
mkdir -p "$work/seeds/frontend"
find examples bench -name '*.pare' -type f -print0 | sort -z |
    while IFS= read -r -d '' file; do
        cp "$file" "$work/seeds/frontend/$(echo "$file" | tr / _)"
    done
"$fuzz_seeds" 0 8 1024 "$work/seeds/generated"

# TARGET RUNS MAX_SECONDS SEED_DIR: libFuzzer stops after RUNS inputs (the
# bound that makes the run repeatable) or after MAX_SECONDS, a cap for a slow
# or loaded machine. Each input has 60 s before it counts as a hang.
declare -A target_runs=([frontend]=3000 [clif_passes]=20 [differential]=20)
declare -A target_time=([frontend]=60 [clif_passes]=60 [differential]=60)
declare -A target_seeds=([frontend]=frontend [clif_passes]=generated [differential]=generated)

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    listed="$(cargo fuzz list)"
    mapfile -t targets <<<"$listed"
fi

# One build of every target first, its output shown (each `cargo fuzz run`
# below then finds it up to date). cargo-fuzz passes no --locked, so a stale
# fuzz/Cargo.lock would be rewritten by the build without a word: fail
# instead, so that what CI builds is what the committed lock file says.
lock_before="$(cksum <fuzz/Cargo.lock)"
build_start=$SECONDS
env "${fuzz_env[@]}" cargo fuzz build "${fuzz_flags[@]}"
echo "scripts/fuzz.sh: fuzz targets built in $((SECONDS - build_start)) s" >&2
if [ "$(cksum <fuzz/Cargo.lock)" != "$lock_before" ]; then
    echo "scripts/fuzz.sh: error: the build changed fuzz/Cargo.lock (stale); commit the updated file" >&2
    exit 1
fi

passed=0
failed=0
for target in "${targets[@]}"; do
    if [ -z "${target_runs[$target]:-}" ]; then
        # A new target must be given its runs here, not left out of CI.
        echo "scripts/fuzz.sh: error: no run count for fuzz target '$target' (add it to target_runs)" >&2
        exit 1
    fi
    runs=$((target_runs[$target] * runs_scale))
    max_time=$((target_time[$target] * runs_scale))
    corpus="$work/corpus/$target"
    mkdir -p "$corpus" "fuzz/artifacts/$target"
    stamp="$work/stamp-$target"
    touch "$stamp"
    echo "scripts/fuzz.sh: $target: -seed=$seed -runs=$runs -max_total_time=$max_time" >&2
    start=$SECONDS
    if env "${fuzz_env[@]}" cargo fuzz run "${fuzz_flags[@]}" "$target" "$corpus" "$work/seeds/${target_seeds[$target]}" -- \
        -seed="$seed" -runs="$runs" -max_total_time="$max_time" \
        -timeout=60 -print_final_stats=1 2>"$work/$target.log"; then
        grep -E '^(#[0-9]+[[:space:]]+DONE|Done|stat::number_of_executed_units)' "$work/$target.log" >&2 || true
        echo "scripts/fuzz.sh: $target: ok in $((SECONDS - start)) s" >&2
        passed=$((passed + 1))
    else
        # The panic or libFuzzer's report onwards (else the end of the log, for
        # a failed build), lines cut short: cargo-fuzz also prints the whole
        # crashing input as one line. The full log is kept beside the inputs.
        log="$work/$target.log"
        if grep -qE 'panicked at|ERROR: libFuzzer' "$log"; then
            sed -nE '/panicked at|ERROR: libFuzzer/,$p' "$log" | cut -c1-300 | head -n 150 >&2 || true
        else
            tail -n 60 "$log" | cut -c1-300 >&2 || true
        fi
        cp "$log" "fuzz/artifacts/$target.log"
        echo "scripts/fuzz.sh: $target: FAILED (full log: fuzz/artifacts/$target.log); reproducer(s):" >&2
        find "fuzz/artifacts/$target" "fuzz/artifacts/differential-repro" -mindepth 1 -maxdepth 1 -newer "$stamp" >&2 2>/dev/null || true
        echo "scripts/fuzz.sh: rerun one with: ${fuzz_env[*]} cargo fuzz run ${fuzz_flags[*]} $target fuzz/artifacts/$target/FILE" >&2
        failed=$((failed + 1))
    fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
