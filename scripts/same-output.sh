#!/usr/bin/env bash
# same-output.sh: do two parec binaries build the corpus to byte-identical files?
#
# Usage:
#   scripts/same-output.sh [OPTIONS] OLD_PAREC NEW_PAREC
#   scripts/same-output.sh [OPTIONS] --old-rev REV NEW_PAREC
#
# Typical use, before merging a change that must not change the output:
#   cargo build --release -p parec
#   scripts/same-output.sh --old-rev main target/release/parec
#
# What it checks. Every program of the corpus, found as the driver's tests
# find them (crates/driver/tests/examples.rs):
#   bench/NAME/main.pare      (the other modules of NAME/ are found through `import`)
#   examples/NAME.pare        (one module)
#   examples/NAME/main.pare   (several modules)
# is built by both binaries, from the repository root holding this script, in
# each configuration  -O2 | -Oz | -Oz --two-rounds,  twice:
#   obj: `parec build SRC FLAGS --emit obj -o DIR`  the sets of file names in
#        the two directories must be equal and every file byte-identical;
#   exe: `parec build SRC FLAGS -o EXE`             the executables byte-identical.
# The messages of each build (stdout and stderr, with the output path
# replaced by OUT) and its exit status must be equal too. A program that
# fails to build with both binaries with the same message and status is not a
# difference (it is listed as a note); with different messages it is one.
# Both binaries run with parec's default -j (the number of CPUs); the
# multi-module programs are also built by NEW_PAREC with -j1 and compared with
# its default -j build, since the output must not depend on -j.
# Inherited PAREC_* environment variables (merge tuning, test modes) are
# removed so that both binaries build with their defaults; use --env to set one.
#
# Output: one line per difference, by program, configuration and file name
# (`differs:`, `only in old:`, `only in new:`, `messages differ:`, the last
# also for two failed builds whose messages or statuses differ), then a
# summary line; notes and errors go to stderr.
# Exit status: 0 all identical; 1 some difference; 2 bad usage or a tool
# error (missing or broken binary, a program that builds with one binary but
# not with the other, a failed --old-rev build).
#
# Options:
#   --old-rev REV       build OLD_PAREC from git revision REV of this
#                       repository: a temporary `git worktree` (removed
#                       afterwards) and `cargo build --release -p parec` into
#                       its own target directory, by default
#                       target/same-output-old-rev/ of this repository, kept so
#                       that later runs only rebuild parec's own crates. The
#                       first run compiles Cranelift and the other dependencies
#                       in release mode: a few minutes on an idle machine (16
#                       minutes on 2 cores shared with other builds); a later
#                       run took 4 minutes in all on the same busy machine.
#   --old-target-dir D  the target directory of the --old-rev build.
#   --keep DIR          work in DIR (created; must be empty) and keep it: the
#                       outputs are in DIR/out/{old,new,new-j1}/CONFIG/{obj,exe}/,
#                       the build messages in DIR/log/.
#   --env NAME=VALUE    set this variable for both binaries (repeatable).
#   --new-env NAME=VALUE  set it for NEW_PAREC only (repeatable): a way to
#                       check that the script sees differences, e.g.
#                       --new-env PAREC_MERGE_MIN_BENEFIT=1000000.
#   --filter S[,S...]   only the programs whose name (bench/calc, examples/hello,
#                       examples/modsort) contains one of the strings.
#   --no-j1             skip the -j1 builds.
#   -P N                builds run N at a time (default: the number of CPUs).
#   -h, --help          this text.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)

usage() {
    sed -n '2,/^set -euo pipefail$/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

die_usage() {
    echo "same-output.sh: error: $*" >&2
    echo "run scripts/same-output.sh --help for the usage" >&2
    exit 2
}

die() {
    echo "same-output.sh: error: $*" >&2
    exit 2
}

# ---------------------------------------------------------------- arguments

old_rev=""
old_target_dir="$root/target/same-output-old-rev"
keep=""
filter=""
j1=1
parallel=$(nproc 2>/dev/null || echo 2)
both_env=()
new_env=()
positional=()

need_value() {
    [ "$2" -ge 2 ] || die_usage "$1 needs a value"
}

while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --old-rev) need_value "$1" $#; old_rev=$2; shift 2 ;;
        --old-target-dir) need_value "$1" $#; old_target_dir=$(realpath -m -- "$2"); shift 2 ;;
        --keep) need_value "$1" $#; keep=$2; shift 2 ;;
        --env | --new-env)
            need_value "$1" $#
            [[ "$2" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die_usage "$1 wants NAME=VALUE, not '$2'"
            if [ "$1" = --env ]; then both_env+=("$2"); else new_env+=("$2"); fi
            shift 2 ;;
        --filter) need_value "$1" $#; filter=$2; shift 2 ;;
        --no-j1) j1=0; shift ;;
        -P) need_value "$1" $#; parallel=$2; shift 2 ;;
        --) shift; positional+=("$@"); break ;;
        -*) die_usage "unknown option $1" ;;
        *) positional+=("$1"); shift ;;
    esac
done
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || die_usage "-P wants a positive number, not '$parallel'"

if [ -n "$old_rev" ]; then
    [ ${#positional[@]} -eq 1 ] || die_usage "with --old-rev, give exactly one binary: NEW_PAREC"
    new_parec=${positional[0]}
else
    [ ${#positional[@]} -eq 2 ] || die_usage "give two binaries: OLD_PAREC NEW_PAREC (or --old-rev REV NEW_PAREC)"
    old_parec=${positional[0]}
    new_parec=${positional[1]}
fi

# An absolute path to an executable parec binary, or exit 2.
check_binary() {
    local what=$1 path=$2
    [ -e "$path" ] || die "$what binary $path does not exist"
    [ -f "$path" ] && [ -x "$path" ] || die "$what binary $path is not an executable file"
    path=$(cd "$(dirname "$path")" && pwd)/$(basename "$path")
    "$path" --version >/dev/null 2>&1 || die "$what binary $path does not run ($path --version failed)"
    printf '%s\n' "$path"
}

new_parec=$(check_binary new "$new_parec")
if [ -z "$old_rev" ]; then
    old_parec=$(check_binary old "$old_parec")
fi

# ---------------------------------------------------------------- work directory

old_worktree=""
cleanup() {
    if [ -n "$old_worktree" ]; then
        git -C "$root" worktree remove --force "$old_worktree" >/dev/null 2>&1 || true
    fi
    if [ -z "$keep" ] && [ -n "${work:-}" ]; then
        rm -rf -- "$work"
    fi
}
trap cleanup EXIT

if [ -n "$keep" ]; then
    mkdir -p -- "$keep" || die "cannot create $keep"
    [ -z "$(ls -A -- "$keep")" ] || die "--keep $keep: the directory is not empty"
    work=$(cd "$keep" && pwd)
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
fi

# ---------------------------------------------------------------- --old-rev

if [ -n "$old_rev" ]; then
    commit=$(git -C "$root" rev-parse --verify --quiet "$old_rev^{commit}") ||
        die "--old-rev $old_rev: not a commit of $root"
    old_worktree="$work/old-src"
    git -C "$root" worktree add --detach --quiet "$old_worktree" "$commit" ||
        die "cannot create a git worktree of $commit in $old_worktree"
    echo "building parec at $old_rev (${commit:0:12}) into $old_target_dir (log: $work/old-build.log)..." >&2
    if ! (cd "$old_worktree" && CARGO_TARGET_DIR="$old_target_dir" cargo build --release --locked -p parec) \
        >"$work/old-build.log" 2>&1; then
        tail -n 30 "$work/old-build.log" >&2
        die "cargo build --release -p parec of $old_rev failed (log above)"
    fi
    cp -- "$old_target_dir/release/parec" "$work/parec-old"
    git -C "$root" worktree remove --force "$old_worktree"
    old_worktree=""
    old_parec=$(check_binary old "$work/parec-old")
fi

# ---------------------------------------------------------------- corpus and jobs

configs=(O2 Oz Oz-two-rounds)
config_flags() {
    case "$1" in
        O2) echo "-O2" ;;
        Oz) echo "-Oz" ;;
        Oz-two-rounds) echo "-Oz --two-rounds" ;;
    esac
}
kinds=(obj exe)

# Program names and their root files, sorted by name; `multi` lists those with
# more than one module (the ones where -j can matter).
names=()
declare -A source_of=()
declare -A multi=()
add_program() {
    local name=$1 src=$2
    if [ -n "$filter" ]; then
        local keep_it=0 s wanted=()
        IFS=, read -r -a wanted <<<"$filter"
        for s in "${wanted[@]}"; do
            if [[ "$name" == *"$s"* ]]; then keep_it=1; fi
        done
        if [ "$keep_it" = 0 ]; then return 0; fi
    fi
    names+=("$name")
    source_of[$name]=$src
    if [ "$(basename "$src")" = main.pare ]; then
        local modules=("$root/$(dirname "$src")"/*.pare)
        if [ ${#modules[@]} -gt 1 ]; then multi[$name]=1; fi
    fi
}
shopt -s nullglob
for src in "$root"/bench/*/main.pare; do
    rel=${src#"$root/"}
    add_program "$(dirname "$rel")" "$rel"
done
for src in "$root"/examples/*.pare; do
    rel=${src#"$root/"}
    add_program "${rel%.pare}" "$rel"
done
for src in "$root"/examples/*/main.pare; do
    rel=${src#"$root/"}
    add_program "$(dirname "$rel")" "$rel"
done
shopt -u nullglob
[ ${#names[@]} -gt 0 ] || die "no program of the corpus matches (bench/*/main.pare, examples/*.pare, examples/*/main.pare${filter:+, --filter $filter})"
mapfile -t names < <(printf '%s\n' "${names[@]}" | LC_ALL=C sort)

# A program name as one path component.
flat() { printf '%s\n' "${1//\//__}"; }

# Inherited PAREC_* variables would tune both builds away from the defaults.
for var in $(compgen -e); do
    if [[ "$var" == PAREC_* ]]; then
        echo "note: ignoring the inherited $var (use --env $var=... to set it)" >&2
        unset "$var"
    fi
done
for assignment in "${both_env[@]+"${both_env[@]}"}"; do
    export "${assignment?}"
done
if [ ${#new_env[@]} -gt 0 ]; then
    printf '%s\n' "${new_env[@]}" >"$work/new.env"
fi

# One build per 5 NUL-terminated fields: side, config, kind, program, source.
jobs_file="$work/jobs"
: >"$jobs_file"
sides=(old new)
if [ "$j1" = 1 ]; then sides+=(new-j1); fi
for name in "${names[@]}"; do
    for config in "${configs[@]}"; do
        for kind in "${kinds[@]}"; do
            for side in "${sides[@]}"; do
                if [ "$side" = new-j1 ] && [ -z "${multi[$name]:-}" ]; then
                    continue
                fi
                printf '%s\0' "$side" "$config" "$kind" "$name" "${source_of[$name]}" >>"$jobs_file"
            done
        done
    done
done

# ---------------------------------------------------------------- builds

# Builds one program; never fails (xargs would stop), records the messages in
# log/.../NAME.log and the exit status in NAME.status.
build_one() {
    local side=$1 config=$2 kind=$3 name=$4 src=$5
    local bin=$OLD_PAREC jobs=() extra_env=()
    case "$side" in
        new) bin=$NEW_PAREC ;;
        new-j1) bin=$NEW_PAREC; jobs=(-j1) ;;
    esac
    if [ "$side" != old ] && [ -e "$WORK/new.env" ]; then
        mapfile -t extra_env <"$WORK/new.env"
    fi
    local flat_name=${name//\//__}
    local out_dir="$WORK/out/$side/$config/$kind"
    local log_dir="$WORK/log/$side/$config/$kind"
    mkdir -p "$out_dir" "$log_dir"
    local out="$out_dir/$flat_name" flags=()
    read -r -a flags <<<"$(config_flags "$config")"
    local emit=()
    if [ "$kind" = obj ]; then emit=(--emit obj); fi
    local status=0
    (cd "$ROOT" && env ${extra_env[@]+"${extra_env[@]}"} "$bin" build "$src" \
        "${flags[@]}" ${emit[@]+"${emit[@]}"} ${jobs[@]+"${jobs[@]}"} -o "$out") \
        >"$log_dir/$flat_name.log" 2>&1 || status=$?
    # The output path is the only thing that differs between the two sides.
    local text
    text=$(<"$log_dir/$flat_name.log")
    printf '%s\n' "${text//"$out"/OUT}" >"$log_dir/$flat_name.log"
    echo "$status" >"$log_dir/$flat_name.status"
}

export WORK="$work" ROOT="$root" OLD_PAREC="$old_parec" NEW_PAREC="$new_parec"
export -f build_one config_flags

n_jobs=$(tr -cd '\0' <"$jobs_file" | wc -c)
n_jobs=$((n_jobs / 5))
echo "building ${#names[@]} programs × ${#configs[@]} configurations × {obj, exe} with old, new$([ "$j1" = 1 ] && echo ", new -j1 (${#multi[@]} multi-module programs)"): $n_jobs builds, $parallel at a time..." >&2
start=$SECONDS
xargs -0 -n 5 -P "$parallel" bash -c 'build_one "$@"' _ <"$jobs_file" ||
    die "a build job could not run (see above)"
echo "builds done in $((SECONDS - start)) s" >&2

# ---------------------------------------------------------------- comparison

differences=0
diff_obj=0
diff_exe=0
diff_messages=0
errors=0
both_fail=0
files_compared=0
declare -A differing_pairs=()

report() {
    echo "$*"
}

# The first differing line of two message files, as `A "..." / B "..."`.
first_message_difference() {
    local a=$1 b=$2 log_a=$3 log_b=$4 line_a line_b
    line_a=$(diff "$log_a" "$log_b" | sed -n 's/^< //p' | head -n 1 | cut -c 1-120 || true)
    line_b=$(diff "$log_a" "$log_b" | sed -n 's/^> //p' | head -n 1 | cut -c 1-120 || true)
    printf '%s "%s" / %s "%s"' "$a" "$line_a" "$b" "$line_b"
}

# Compares the result of one build by sides A and B ("old" "new" or "new" "new-j1").
compare_build() {
    local a=$1 b=$2 config=$3 kind=$4 name=$5
    local label="$name $(config_flags "$config") $kind"
    if [ "$a" = new ]; then label="$label (new -j vs new -j1)"; fi
    local f
    f=$(flat "$name")
    local log_a="$work/log/$a/$config/$kind/$f" log_b="$work/log/$b/$config/$kind/$f"
    local status_a status_b
    status_a=$(<"$log_a.status")
    status_b=$(<"$log_b.status")
    local same_messages=1
    cmp -s "$log_a.log" "$log_b.log" || same_messages=0
    if [ "$status_a" != 0 ] || [ "$status_b" != 0 ]; then
        if [ "$status_a" = "$status_b" ] && [ "$same_messages" = 1 ]; then
            echo "note: $label: fails with both (status $status_a, same message): $(head -n 1 "$log_a.log")" >&2
            both_fail=$((both_fail + 1))
        elif [ "$status_a" != 0 ] && [ "$status_b" != 0 ]; then
            report "messages differ: $label: both fail (status $status_a, $status_b): $(first_message_difference "$a" "$b" "$log_a.log" "$log_b.log")"
            differences=$((differences + 1)); diff_messages=$((diff_messages + 1))
            differing_pairs["$name $config"]=1
        else
            local failing=$a
            if [ "$status_b" != 0 ]; then failing=$b; fi
            echo "error: $label: fails with $failing only (status $(<"$work/log/$failing/$config/$kind/$f.status")):" >&2
            sed 's/^/    /' "$work/log/$failing/$config/$kind/$f.log" >&2
            errors=$((errors + 1))
        fi
        return
    fi
    if [ "$same_messages" = 0 ]; then
        report "messages differ: $label: $(first_message_difference "$a" "$b" "$log_a.log" "$log_b.log")"
        differences=$((differences + 1)); diff_messages=$((diff_messages + 1))
        differing_pairs["$name $config"]=1
    fi
    local out_a="$work/out/$a/$config/$kind/$f" out_b="$work/out/$b/$config/$kind/$f"
    if [ "$kind" = exe ]; then
        files_compared=$((files_compared + 1))
        if ! cmp -s "$out_a" "$out_b"; then
            report "differs: $label"
            differences=$((differences + 1)); diff_exe=$((diff_exe + 1))
            differing_pairs["$name $config"]=1
        fi
        return
    fi
    local file
    while IFS= read -r file; do
        if [ ! -e "$out_b/$file" ]; then
            report "only in $a: $label $file"
        elif [ ! -e "$out_a/$file" ]; then
            report "only in $b: $label $file"
        else
            files_compared=$((files_compared + 1))
            cmp -s "$out_a/$file" "$out_b/$file" && continue
            report "differs: $label $file"
        fi
        differences=$((differences + 1)); diff_obj=$((diff_obj + 1))
        differing_pairs["$name $config"]=1
    done < <( (cd "$out_a" && ls -A; cd "$out_b" && ls -A) | LC_ALL=C sort -u)
}

for name in "${names[@]}"; do
    for config in "${configs[@]}"; do
        for kind in "${kinds[@]}"; do
            compare_build old new "$config" "$kind" "$name"
            if [ "$j1" = 1 ] && [ -n "${multi[$name]:-}" ]; then
                compare_build new new-j1 "$config" "$kind" "$name"
            fi
        done
    done
done

shape="${#names[@]} programs × ${#configs[@]} configurations × {obj, exe}"
j1_note=""
if [ "$j1" = 1 ] && [ ${#multi[@]} -gt 0 ]; then
    j1_note=", and new -j1 = new -j on the ${#multi[@]} multi-module programs"
fi
if [ "$both_fail" -gt 0 ]; then
    j1_note="$j1_note; $both_fail build(s) fail with both binaries alike (notes above)"
fi
if [ "$errors" -gt 0 ]; then
    echo "$shape: $errors build(s) failed with one binary only (above); $differences difference(s) among the rest" >&2
    [ -n "$keep" ] && echo "outputs kept in $work" >&2
    exit 2
fi
if [ "$differences" -gt 0 ]; then
    echo "$shape: $differences difference(s) in ${#differing_pairs[@]} program×configuration pair(s): $diff_obj object file(s), $diff_exe executable(s), $diff_messages build message(s)"
    [ -n "$keep" ] && echo "outputs kept in $work" >&2
    exit 1
fi
if [ "$both_fail" -gt 0 ]; then
    echo "$shape: no differences, but not all built ($files_compared files compared$j1_note)"
else
    echo "$shape: all identical ($files_compared files compared$j1_note)"
fi
[ -n "$keep" ] && echo "outputs kept in $work" >&2
exit 0
