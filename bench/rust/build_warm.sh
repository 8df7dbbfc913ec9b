#!/usr/bin/env bash
# build_warm: `cargo oxide build` against plain `cargo build`, warm, after a real edit to
# host-only code of examples/rust/vecadd (main's message gets a new number each build, so rustc
# recompiles main and the crate's bitcode changes; the kernel does not). Prints
# `build_warm oxide_s cargo_s ratio` (medians of 5). `--touch` (after the profile flag, or
# alone) only touches the file instead, the figure before the PTX cache was keyed by the kernels.
# Each tool builds into its own target directory, so each is warm in its own cache: alternating
# in one directory makes cargo re-probe rustc every time (its rustc-info cache holds one
# toolchain fingerprint, with or without the wrapper) and lets plain cargo overwrite the binary.
# On a shared machine the ratio moves by ±0.2 between runs; `chrt -f 50 bench/rust/build_warm.sh`
# (as root) gives both tools the cores as on an idle one. Where oxide's time goes:
# `OXIDE_TIME=1 cargo oxide build ...` (docs/rust.md section 11).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT/examples/rust"
export PATH="$ROOT/rustc-plugin/target/release:$PATH"
PROFILE_FLAG=""
MODE=edit
for a in "$@"; do
    case "$a" in --release) PROFILE_FLAG=--release ;; --touch) MODE=touch ;; *) echo "usage: $0 [--release] [--touch]"; exit 2 ;; esac
done
SRC=vecadd/src/main.rs
cp "$SRC" "$SRC.build_warm"
trap 'mv "$SRC.build_warm" "$SRC"' EXIT
LOG=target/$([ -n "$PROFILE_FLAG" ] && echo release || echo debug)/oxide/vecadd.log
n=0
change() {
    n=$((n + 1))
    if [ $MODE = edit ]; then
        sed "s/PASSED: all {N} elements correct/PASSED: all {N} elements correct (build $n)/" "$SRC.build_warm" >"$SRC"
    else
        touch "$SRC"
    fi
}
time_one() { local t0 t1; change; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
change; cargo build --target-dir target/plain-cargo -p vecadd $PROFILE_FLAG >/dev/null 2>&1
change; cargo oxide build -p vecadd $PROFILE_FLAG >/dev/null 2>&1
o=(); c=()
for i in 1 2 3 4 5; do
    o+=("$(time_one cargo oxide build -p vecadd $PROFILE_FLAG)")
    # the PTX must have been reused (the edit is to host-only code)
    grep -q "unchanged: reused" "$LOG" || echo "note: build $n remade the PTX: $(cat "$LOG")" >&2
    c+=("$(time_one cargo build --target-dir target/plain-cargo -p vecadd $PROFILE_FLAG)")
done
med() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
mo=$(med "${o[@]}"); mc=$(med "${c[@]}")
printf 'build_warm %.3f %.3f %.2f\n' "$mo" "$mc" "$(echo "$mo / $mc" | bc -l)"
