#!/usr/bin/env bash
# build_warm: `cargo oxide build` against plain `cargo build`, warm, after touching one source
# file (examples/rust/vecadd). Prints `build_warm oxide_s cargo_s ratio` (medians of 5).
# Each tool builds into its own target directory, so each is warm in its own cache: alternating
# in one directory makes cargo re-probe rustc every time (its rustc-info cache holds one
# toolchain fingerprint, with or without the wrapper) and lets plain cargo overwrite the binary.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT/examples/rust"
export PATH="$ROOT/rustc-plugin/target/release:$PATH"
PROFILE_FLAG="${1:-}"
time_one() { local t0 t1; touch vecadd/src/main.rs; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
cargo build --target-dir target/plain-cargo -p vecadd $PROFILE_FLAG >/dev/null 2>&1; cargo oxide build -p vecadd $PROFILE_FLAG >/dev/null 2>&1
o=(); c=()
for i in 1 2 3 4 5; do
    o+=("$(time_one cargo oxide build -p vecadd $PROFILE_FLAG)")
    c+=("$(time_one cargo build --target-dir target/plain-cargo -p vecadd $PROFILE_FLAG)")
done
med() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
mo=$(med "${o[@]}"); mc=$(med "${c[@]}")
printf 'build_warm %.3f %.3f %.2f\n' "$mo" "$mc" "$(echo "$mo / $mc" | bc -l)"
