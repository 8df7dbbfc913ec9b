#!/usr/bin/env bash
# build_warm: `cargo oxide build` against plain `cargo build`, warm, after a real edit to
# host-only code of examples/rust/vecadd, or of the example `--package P` names (main's "PASSED:"
# message gets a new number each build, so rustc recompiles main and the crate's bitcode
# changes; the kernel does not). Prints `build_warm oxide_s cargo_s ratio` (medians of 5);
# `build_warm_P ...` for another package (e.g. `--package tile_matmul`, a tile kernel). `--touch` (after the profile flag, or
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
PKG=vecadd
while [ $# -gt 0 ]; do
    case "$1" in
    --release) PROFILE_FLAG=--release ;;
    --touch) MODE=touch ;;
    --package) PKG=${2:?--package needs an example}; shift ;;
    *) echo "usage: $0 [--release] [--touch] [--package EXAMPLE]"; exit 2 ;;
    esac
    shift
done
SRC=$PKG/src/main.rs
[ -f "$SRC" ] && grep -q '"PASSED: ' "$SRC" || { echo "$0: $SRC has no \"PASSED: \" message to edit"; exit 2; }
cp "$SRC" "$SRC.build_warm"
trap 'mv "$SRC.build_warm" "$SRC"' EXIT
LOG=target/$([ -n "$PROFILE_FLAG" ] && echo release || echo debug)/oxide/$PKG.log
n=0
change() {
    n=$((n + 1))
    if [ $MODE = edit ]; then
        sed "0,/\"PASSED: /s//\"PASSED (build $n): /" "$SRC.build_warm" >"$SRC"
    else
        touch "$SRC"
    fi
}
time_one() { local t0 t1; change; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
change; cargo build --target-dir target/plain-cargo -p $PKG $PROFILE_FLAG >/dev/null 2>&1
change; cargo oxide build -p $PKG $PROFILE_FLAG >/dev/null 2>&1
o=(); c=()
for i in 1 2 3 4 5; do
    o+=("$(time_one cargo oxide build -p $PKG $PROFILE_FLAG)")
    # the PTX must have been reused (the edit is to host-only code)
    grep -q "unchanged: reused" "$LOG" || echo "note: build $n remade the PTX: $(cat "$LOG")" >&2
    c+=("$(time_one cargo build --target-dir target/plain-cargo -p $PKG $PROFILE_FLAG)")
done
med() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
mo=$(med "${o[@]}"); mc=$(med "${c[@]}")
printf '%s %.3f %.3f %.2f\n' "build_warm$([ $PKG = vecadd ] || echo _$PKG)" "$mo" "$mc" "$(echo "$mo / $mc" | bc -l)"
