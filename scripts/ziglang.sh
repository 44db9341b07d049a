#!/usr/bin/env bash
# Installs the C toolchain of the file-size anchor of `parec bench`: clang -Oz
# against musl, static, as the `ziglang` wheel from PyPI ships it
# (`python3 -m ziglang cc -target aarch64-linux-musl ...`), pinned, into a
# virtual environment of its own; then builds a C program with the flags of
# the twins once, so that zig compiles musl and its runtime for aarch64 into
# its cache now (about a CPU-minute, once) rather than in the first test or
# benchmark that needs them. Afterwards nothing needs the network.
# scripts/test.sh runs this; `parec bench` and the tests find the environment
# at the same place (crates/tools/src/bench/musl.rs) and fail, naming this
# script, when it is missing or of another version.
#
# Usage: scripts/ziglang.sh   (installs when missing; prints nothing else)
#
# Environment:
#   PAREC_ZIGLANG_VENV  where the environment is (default
#                       ${XDG_CACHE_HOME:-$HOME/.cache}/parec/ziglang); zig's
#                       cache is its subdirectory zig-cache
set -euo pipefail

# Pinned: zig 0.14.1's clang is LLVM 19, as clang-19 of the glibc anchor.
# crates/tools/src/bench/musl.rs names the same version (a test checks).
ziglang_version=0.14.1

venv="${PAREC_ZIGLANG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/parec/ziglang}"
python="$venv/bin/python3"
export ZIG_GLOBAL_CACHE_DIR="$venv/zig-cache"

installed() {
    [ "$("$python" -m ziglang version 2>/dev/null || true)" = "$ziglang_version" ]
}

if ! installed; then
    echo "scripts/ziglang.sh: installing ziglang $ziglang_version into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$python" -m pip install --quiet --disable-pip-version-check "ziglang==$ziglang_version"
fi
if ! installed; then
    echo "scripts/ziglang.sh: error: $python -m ziglang is not version $ziglang_version after installing it" >&2
    exit 1
fi

# The warm-up: the twins' flags (crates/tools/src/bench/musl.rs, FLAGS) on a
# program that uses stdio, as they do. zig keeps what it built in its cache.
stamp="$ZIG_GLOBAL_CACHE_DIR/parec-warm-$ziglang_version"
if [ ! -e "$stamp" ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    printf '#include <stdio.h>\nint main(void) { printf("%%d\\n", 42); return 0; }\n' >"$work/warm.c"
    start=$SECONDS
    "$python" -m ziglang cc -target aarch64-linux-musl -Oz -static -s \
        -ffunction-sections -fdata-sections -Wl,--gc-sections \
        -o "$work/warm" "$work/warm.c"
    echo "scripts/ziglang.sh: musl for aarch64 built into zig's cache in $((SECONDS - start)) s" >&2
    touch "$stamp"
fi
