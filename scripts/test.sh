#!/usr/bin/env bash
# Installs what parec's tests need (when missing) and runs the whole test suite.
#
# Tools: qemu-aarch64-static (run aarch64 programs), aarch64-linux-gnu-gcc and
# the aarch64 libc (start files, libc.a), ld.lld-19 (the linker, with ICF),
# clang-19 and llvm-19 (the C twins of `parec bench`, built with clang -Oz),
# chromium (the headless browser that renders `parec size --html` pages),
# ninja (runs the build files of `parec ninja` in crates/driver/tests/ninja.rs),
# g++ (libfuzzer-sys compiles libFuzzer, for scripts/fuzz.sh), python3-venv
# (the virtual environment of the clang + musl twins, scripts/ziglang.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross lld-19 clang-19 llvm-19 chromium ninja-build g++ python3-venv)
tools=(qemu-aarch64-static aarch64-linux-gnu-gcc ld.lld-19 clang-19 llvm-objdump-19 chromium ninja g++)

missing=0
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing=1
done
if [ ! -e /usr/aarch64-linux-gnu/lib/libc.a ]; then
    missing=1
fi
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    missing=1
fi

if [ "$missing" = 1 ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        sudo="sudo"
    fi
    echo "scripts/test.sh: installing ${packages[*]}" >&2
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
fi

for tool in "${tools[@]}"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "scripts/test.sh: error: $tool is still missing after installing ${packages[*]}" >&2
        exit 1
    fi
done
if [ ! -e /usr/aarch64-linux-gnu/lib/libc.a ]; then
    echo "scripts/test.sh: error: the aarch64 libc (libc6-dev-arm64-cross) is still missing" >&2
    exit 1
fi

if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    echo "scripts/test.sh: error: python3 cannot make virtual environments (python3-venv) after installing it" >&2
    exit 1
fi

# The clang + musl twins of `parec bench` (crates/tools/tests/bench_cmd.rs
# builds them): the pinned ziglang wheel in a virtual environment, installed
# when missing and warmed up (zig builds musl once) by scripts/ziglang.sh —
# in the background while cargo builds the tests, whose serial steps leave a
# core idle; the tests start once both are done.
scripts/ziglang.sh &
ziglang=$!
cargo test --workspace --no-run
wait "$ziglang"

cargo test --workspace

# The cargo-fuzz targets of fuzz/ (outside the workspace): built, and each run
# briefly with a fixed seed; a crash fails the suite (scripts/fuzz.sh says how).
exec scripts/fuzz.sh
