#!/usr/bin/env bash
# The Rust front end's tests (CI: no GPU needed; on a GPU machine the examples also run).
#
#   tests/rust/run.sh [BUILD_DIR]       BUILD_DIR: CMake build with liboxide.so and liboxide_runtime.a
#
# 1. generated intrinsics up to date; 2. cargo test (macros, host API; views, pinned memory,
# graphs and .await on the fake driver); 3. every example built with `cargo oxide build` (dev and
# --release), its PTX accepted by ptxas -arch=sm_90a, and run (with no GPU each says so); 3b.
# graph_replay, pinned_copy and slices run on the fake driver; 4. the seed example built unchanged
# as a package of its own, from examples/rust/seed/src/main.rs (or, with $OXIDE_SEED, the
# acceptance file it must equal byte for byte); 5. build-time refusals with the Rust function and
# the reason; 6. a rustc whose LLVM is newer than liboxide's is refused by doctor and build; 7.
# --module with export names.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
PTXAS="${PTXAS:-/usr/local/cuda/bin/ptxas}"
SM="${OXIDE_TEST_SM:-sm_90a}"
export OXIDE_LIB="$BUILD/liboxide.so" OXIDE_RUNTIME_LIB_DIR="$BUILD"
[ -f "$OXIDE_LIB" ] || { echo "no $OXIDE_LIB: build oxide first (cmake --build $BUILD)"; exit 1; }
[ -f "$BUILD/liboxide_runtime.a" ] || { echo "no $BUILD/liboxide_runtime.a"; exit 1; }
fail=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fail=1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "== generated intrinsics"
python3 "$ROOT/tools/gen_rust_intrinsics.py" --check && pass "intrinsics up to date" || bad "intrinsics out of date"

echo "== cargo-oxide and cargo test (no GPU needed)"
(cd "$ROOT/rustc-plugin" && cargo build --offline --release -q -p cargo-oxide) || { bad "cargo-oxide build"; exit 1; }
export PATH="$ROOT/rustc-plugin/target/release:$PATH"
(cd "$ROOT/rustc-plugin" && cargo test --offline -q 2>&1 | grep -E "^test result|FAILED|panicked" ) && pass "cargo test" || bad "cargo test"
(cd "$ROOT/rustc-plugin" && cargo test --offline -q >/dev/null 2>&1) || bad "cargo test failures"
cargo oxide doctor || true

echo "== examples"
EX="$ROOT/examples/rust"
for profile in dev release; do
    flag=""; dir=debug
    [ $profile = release ] && flag="--release" && dir=release
    if (cd "$EX" && cargo oxide build $flag --sm "$SM" 2>"$TMP/build.log"); then pass "examples build ($profile)"; else cat "$TMP/build.log"; bad "examples build ($profile)"; continue; fi
    for ptx in "$EX/target/$dir/oxide/"*.ptx; do
        if "$PTXAS" -arch="$SM" "$ptx" -o "$TMP/x.cubin" 2>"$TMP/ptxas.log"; then pass "ptxas $profile $(basename "$ptx")"; else cat "$TMP/ptxas.log"; bad "ptxas $(basename "$ptx")"; fi
        grep -q "// oxide.manifest.v1 " "$ptx" || bad "no manifest in $ptx"
    done
    for bin in vecadd seed seed_full generics reduce warp_reduce histogram matmul cluster async_pipeline gemm_hopper graph_replay pinned_copy slices await_cpu contract tile_matmul tile_softmax tile_matmul_fp8 tile_layernorm tile_mixed; do
        out="$("$EX/target/$dir/$bin" 2>&1)" && rc=0 || rc=$?
        if [ $rc -ne 0 ] && [ $bin = seed ] && grep -q "OXIDE_ERROR_NO_DRIVER\|OXIDE_ERROR_NO_DEVICE" <<<"$out"; then
            pass "run $profile seed: no GPU here (the unchanged seed unwraps CudaContext::new)"; continue; fi
        if [ $rc -eq 0 ] && grep -qE "PASSED|no GPU found|^$" <<<"$out"; then pass "run $profile $bin: $(echo "$out" | head -1)"; else echo "$out" | tail -5; bad "run $profile $bin (rc $rc)"; fi
    done
    # the tile kernels lifted from this build's bitcode, printed, reparsed and run in the tile
    # interpreter against a CPU reference (tests/rust/tile_lift.c); their PTX through ptxas
    D="$EX/target/$dir/deps"
    newest() { ls -t "$D/$1"-*.bc | head -1; }
    for pair in "tile_matmul matmul_bf16" "tile_softmax softmax_f32" "tile_layernorm layernorm_bf16" "tile_matmul_fp8 matmul_fp8" "tile_mixed row_sums"; do
        read -r crate kern <<<"$pair"
        if out="$("$BUILD/tests/rust/tile_lift" "$kern" "$TMP/$kern.oxir" "$(newest "$crate")" "$(newest cuda_tile)" "$(newest cuda_device)" 2>&1)"; then
            pass "tile $profile $kern lifted: $(grep 'interpreter' <<<"$out")"
        else echo "$out" | tail -5; bad "tile $profile $kern lifted and interpreted"; fi
        "$PTXAS" -arch="$SM" "$TMP/$kern.oxir.ptx" -o "$TMP/x.cubin" 2>"$TMP/ptxas.log" && pass "ptxas $profile lifted $kern" || { cat "$TMP/ptxas.log"; bad "ptxas lifted $kern"; }
    done
    # the Rust softmax lifts to the text IR example op for op: the same PTX, byte for byte
    if [ -x "$BUILD/oxide" ] && "$BUILD/oxide" compile "$ROOT/examples/tile/softmax_f32.oxir" -o "$TMP/softmax_ref.ptx"; then
        cmp -s <(grep -v '^// oxide.manifest' "$TMP/softmax_f32.oxir.ptx") <(grep -v '^// oxide.manifest' "$TMP/softmax_ref.ptx") \
            && pass "tile $profile softmax_f32 from Rust: the PTX of examples/tile/softmax_f32.oxir" || bad "tile $profile softmax_f32: PTX differs from the .oxir example's"
    fi
done
# the examples whose kernels the fake driver re-implements (tests/gpu/mock) run end to end on it:
# views, pinned copies, a graph, with the generated launches, checked against the CPU
fake="$BUILD/tests/gpu/mock/libcuda.so.1"
if [ -f "$fake" ]; then
    for bin in graph_replay pinned_copy slices; do
        out="$(OXIDE_CUDA_DRIVER="$fake" "$EX/target/release/$bin" 2>&1)" && rc=0 || rc=$?
        if [ $rc -eq 0 ] && grep -q "^PASSED" <<<"$out"; then pass "fake driver $bin: $out"; else echo "$out" | tail -5; bad "fake driver $bin (rc $rc)"; fi
    done
else
    echo "note: no $fake: the examples' fake-driver runs are skipped (build target oxide_mock_cuda)"
fi
# by-value TMA descriptors (`&TensorMap`): manifest kind tma_desc, a 128-byte grid_constant PTX
# parameter, and the bulk tensor copies reading it in param space (cvta.param), never a local copy
python3 - "$EX/target/release/oxide/gemm_hopper.ptx" <<'PY' && pass "gemm_hopper: tma_desc parameters read in param space" || bad "gemm_hopper tma_desc parameters"
import json, re, sys
t = open(sys.argv[1]).read()
m = json.loads(re.search(r"^// oxide\.manifest\.v1 (.*)$", t, re.M).group(1))
for name in ("gemm_ws", "gemm_simple"):
    k = next(k for k in m["kernels"] if k["name"] == name)
    assert [p["kind"] for p in k["params"][:2]] == ["tma_desc"] * 2, (name, k["params"][:2])
    body = t[t.index(".entry %s(" % name):]
    body = body[:body.index("\n}\n")]
    for i in (0, 1):
        assert ".param .align 64 .b8 %s_param_%d[128]" % (name, i) in body, (name, i)
    assert ".local" not in body and "__local_depot" not in body, name + ": local memory"
    generic = set(re.findall(r"cvta\.param\.u64\s+(%rd\d+)", body))
    maps = re.findall(r"cp\.async\.bulk\.tensor\S*\s+\[[^]]*\],\s*\[(%rd\d+),", body)
    assert maps and set(maps) <= generic, (name, maps, generic)
gm = next(k for k in m["kernels"] if k["name"] == "gemm_ws_gmem")
assert gm["params"][0]["kind"] == "ptr", gm["params"][0]
PY
# launch contracts: an exact block is .reqntid (in place of #[launch_bounds]' .maxntid), the
# alignment reaches the dynamic shared memory, and the manifest carries each contract
python3 - "$EX/target/release/oxide/contract.ptx" <<'PY' && pass "contract: .reqntid, aligned dynamic shared memory, the manifest's contracts" || bad "contract PTX"
import json, re, sys
t = open(sys.argv[1]).read()
m = json.loads(re.search(r"^// oxide\.manifest\.v1 (.*)$", t, re.M).group(1))
c = {k["name"]: k.get("contract") for k in m["kernels"]}
assert c["block_reverse"] == {"domain": 1, "block": [256, 1, 1], "dynamic_shared": [1024, 1024], "dynamic_shared_alignment": 128}, c
assert c["add2d"] == {"domain": 2, "block": [16, 16, 1], "dynamic_shared": [0, 0], "min_compute_capability": [8, 0]}, c
for name, block in (("block_reverse", "256, 1, 1"), ("add2d", "16, 16, 1")):
    head = t[t.index(".entry %s(" % name):]
    head = head[:head.index("{")]
    assert ".reqntid %s" % block in head and ".maxntid" not in head, (name, head)
assert re.search(r"\.extern \.shared \.align 128 \.b8 __oxide_dyn_smem_base", t), "dynamic shared memory alignment"
PY
ldd "$EX/target/release/vecadd" | grep -q liboxide && bad "vecadd links liboxide dynamically" || pass "host binary carries no liboxide/LLVM"

if [ -x "$BUILD/oxide" ]; then
    "$BUILD/oxide" extract "$EX/target/release/vecadd" -o "$TMP/extracted.ptx" && cmp -s "$TMP/extracted.ptx" "$EX/target/release/oxide/vecadd.ptx" \
        && pass "oxide extract gives the PTX the binary carries" || bad "oxide extract"
    strip -o "$TMP/vecadd.stripped" "$EX/target/release/vecadd"
    "$BUILD/oxide" extract "$TMP/vecadd.stripped" -o "$TMP/extracted2.ptx" && cmp -s "$TMP/extracted2.ptx" "$EX/target/release/oxide/vecadd.ptx" \
        && pass "oxide extract of a stripped binary" || bad "oxide extract (stripped)"
fi

echo "== device API and panics (tests/rust/crates)"
for profile in dev release; do
    flag=""; dir=debug
    [ $profile = release ] && flag="--release" && dir=release
    (cd "$ROOT/tests/rust/crates" && cargo oxide build $flag -p device_api -p panic_trap -p tile_ops 2>"$TMP/b.log") || { cat "$TMP/b.log"; bad "device_api/panic_trap build ($profile)"; continue; }
    for bin in device_api panic_trap tile_ops; do
        "$PTXAS" -arch="$SM" "$ROOT/tests/rust/crates/target/$dir/oxide/$bin.ptx" -o "$TMP/x.cubin" && pass "ptxas $profile $bin" || bad "ptxas $profile $bin"
        out="$("$ROOT/tests/rust/crates/target/$dir/$bin" 2>&1)" && grep -qE "PASSED|no GPU found" <<<"$out" && pass "run $profile $bin: $(echo "$out" | tail -1)" || bad "run $profile $bin: $out"
    done
done
grep -q "panicked at panic_trap/src/main.rs:" "$ROOT/tests/rust/crates/target/debug/oxide/panic_trap.ptx" 2>/dev/null || \
    python3 - "$ROOT/tests/rust/crates/target/debug/oxide/panic_trap.ptx" <<'PY' && pass "panic message carries file:line" || bad "panic message without file:line"
import re, sys
t = open(sys.argv[1]).read()
msgs = [bytes(int(x) for x in m.group(1).split(",")).decode() for m in re.finditer(r"panic_\$_msg\w*\[\d+\] = \{([0-9, ]+)\}", t)]
sys.exit(0 if any("panic_trap/src/main.rs:" in m for m in msgs) else 1)
PY

echo "== the seed example, unchanged"
SEED="${OXIDE_SEED:-$EX/seed/src/main.rs}"
if [ -f "$SEED" ]; then
    cmp -s "$SEED" "$EX/seed/src/main.rs" && pass "examples/rust/seed is the acceptance file" || bad "examples/rust/seed/src/main.rs differs from $SEED"
    mkdir -p "$TMP/seedpkg/.cargo"
    cp "$EX/.cargo/config.toml" "$TMP/seedpkg/.cargo/"
    cat > "$TMP/seedpkg/Cargo.toml" <<TOML
[package]
name = "seed_map"
version = "0.1.0"
edition = "2021"
[[bin]]
name = "seed_map"
path = "$SEED"
[dependencies]
cuda-device = { path = "$ROOT/rustc-plugin/cuda-device" }
cuda-core = { path = "$ROOT/rustc-plugin/cuda-core" }
[workspace]
TOML
    if (cd "$TMP/seedpkg" && cargo oxide build --release 2>"$TMP/seed.log"); then
        pass "seed_map.rs builds unchanged"
        "$PTXAS" -arch="$SM" "$TMP/seedpkg/target/release/oxide/seed_map.ptx" -o "$TMP/x.cubin" && pass "seed ptxas" || bad "seed ptxas"
        out="$("$TMP/seedpkg/target/release/seed_map" 2>&1)" && pass "seed runs: ${out:-assert passed}" || {
            grep -q "NO_DRIVER\|NO_DEVICE" <<<"$out" && pass "seed: no GPU here (built and PTX checked)" || bad "seed run: $out"; }
    else cat "$TMP/seed.log"; bad "seed_map.rs build"; fi
else
    echo "SKIP seed: $SEED not found (set OXIDE_SEED)"
fi

echo "== refusals"
RF="$ROOT/tests/rust/crates"
expect_refusal() { # package, substrings...
    local p=$1; shift
    if (cd "$RF" && cargo oxide build -p "$p" >"$TMP/r.log" 2>&1); then bad "refuse $p: it built"; return; fi
    for s in "$@"; do grep -qF -- "$s" "$TMP/r.log" || { grep "error" "$TMP/r.log" | head -5; bad "refuse $p: no '$s'"; return; }; done
    # liboxide's refusals come from the linker step (the line after "error: oxide"), #[kernel]'s
    # from rustc (the first error)
    local why
    why="$(grep -A1 'error: oxide' "$TMP/r.log" | tail -1 | sed 's/^ *//')" || true
    pass "refuse $p: ${why:-$(grep -m1 '^error: ' "$TMP/r.log")}"
}
expect_refusal std_call "std_call::kernels::bad_kernel" "std::io::stdio::_print" "standard library"
expect_refusal alloc "heap allocation"
expect_refusal x86 "llvm.x86.rdtsc" "x86-specific"
expect_refusal inline_asm "inline_asm::kernels::bad_kernel" "inline assembly"
expect_refusal tma_by_value "take a TMA descriptor as \`&TensorMap\`"
expect_refusal fn_ptr_param "parameter \`f: fn(f32) -> f32\`" "function pointer, a host address" "\`F: Fn(..) -> .. + Copy\`"
expect_refusal ref_param "parameter \`scale: &f32\`" "host address the GPU cannot read" "\`&[f32]\`"
expect_refusal process_exit "\`std::process::exit\` in a #[kernel]" "cannot end the host process" "return from the kernel"
expect_refusal thread_local "thread_local::CALLS" "uses the thread-local static" "CALLS" "thread_local!"
expect_refusal wide_float "wide_float::kernels::bad_kernel" "converts a 128-bit integer to a float"
expect_refusal contract_config "expected \`LaunchConfig1D\`, found \`LaunchConfig2D\`" "expected \`&PreparedLaunch<second>\`, found \`&PreparedLaunch<first>\`"
expect_refusal contract_domain "domain = 1, but the kernel calls \`index_2d\`; declare \`domain = 2\`" "contract_domain/src/main.rs:12"
expect_refusal tile_memory "tile kernel bad_tile" "a tile stored to memory" "keep tiles in local variables"
expect_refusal tile_table "tile kernel bad_tile" "reads or writes memory" "only through its tensors"
expect_refusal tile_full_runtime "tile kernel bad_tile at tile_full_runtime/src/main.rs:14" "Tile::full takes a constant" "Tile::splat"
expect_refusal tile_dot_small "tile kernel bad_tile at" "'tile.dot': M, N and K must be at least 16, got M=16, N=16, K=8"
# the same bitcode through the C API: the same error on every call and at compile, and the module
# left without a half-lifted kernel (tests/rust/tile_lift.c --refused)
for c in tile_memory tile_table tile_full_runtime tile_dot_small; do
    D="$RF/target/debug/deps"
    if out="$("$BUILD/tests/rust/tile_lift" --refused "$TMP/r" "$(ls -t "$D/$c"-*.bc | head -1)" "$(ls -t "$D"/cuda_tile-*.bc | head -1)" "$(ls -t "$D"/cuda_device-*.bc | head -1)" 2>&1)"; then
        pass "tile_lift --refused $c: $(tail -1 <<<"$out")"
    else echo "$out" | tail -5; bad "tile_lift --refused $c"; fi
done

echo "== toolchain newer than liboxide's LLVM"
cat > "$TMP/rustc" <<'SH'
#!/bin/sh
printf 'rustc 9.99.0\nrelease: 9.99.0\nLLVM version: 99.1.0\n'
SH
chmod +x "$TMP/rustc"
out="$(RUSTC="$TMP/rustc" cargo oxide doctor 2>&1)" && bad "doctor accepted LLVM 99" || { grep -q "newer than liboxide's LLVM" <<<"$out" && pass "doctor refuses LLVM 99 with the fix" || bad "doctor message: $out"; }
out="$(cd "$EX" && RUSTC="$TMP/rustc" cargo oxide build 2>&1)" && bad "build accepted LLVM 99" || { grep -q "rustup default" <<<"$out" && pass "build refuses LLVM 99 with the fix" || bad "build message: $out"; }

echo "== cargo oxide build --module with export names"
(cd "$EX" && cargo oxide build --release -p vecadd --sm "$SM" --module "$TMP/vecadd_module.ptx" --export vecadd=vector_add >/dev/null 2>&1) || bad "--module build"
grep -q '"name":"vector_add","entry":"vecadd"' "$TMP/vecadd_module.ptx" && pass "--module exports vecadd as vector_add" || bad "--module export name"
"$PTXAS" -arch="$SM" "$TMP/vecadd_module.ptx" -o "$TMP/x.cubin" && pass "--module PTX passes ptxas" || bad "--module ptxas"

echo "== binaries for more than one GPU (--sm lists; the default is sm_80,sm_90a)"
CR="$ROOT/tests/rust/crates/target/release/oxide"
python3 - "$CR/device_api.ptx-bundle" <<'PY' && pass "default build: a bundle of sm_80 and sm_90a PTX" || bad "default build's bundle"
import sys
b = open(sys.argv[1], "rb").read()
head, body = b.split(b"\n", 1)
assert head.startswith(b"// oxide.ptx-bundle.v1 "), head
parts = [e.split(b":") for e in head.split()[2:]]
assert [t for t, _ in parts] == [b"sm_80", b"sm_90a"], parts
for t, n in parts:
    text, body = body[:int(n)], body[int(n):]
    assert b".target " + t + b"\n" in text and b"// oxide.manifest.v1 " in text, t
assert body == b"", len(body)
PY
for t in sm_80 sm_90a; do
    "$PTXAS" -arch=$t "$CR/device_api.$t.ptx" -o "$TMP/x.cubin" && pass "ptxas -arch=$t device_api.$t.ptx" || bad "ptxas $t device_api.$t.ptx"
done
cmp -s "$CR/device_api.ptx" "$CR/device_api.sm_90a.ptx" && pass "device_api.ptx is the newest target's PTX" || bad "device_api.ptx"
out="$(cd "$EX" && cargo oxide build --release -p cluster --sm sm_80,sm_90a 2>&1)" && bad "cluster built for sm_80" || {
    grep -q "kernel exchange: cluster::kernels::exchange uses cluster.ctarank, which only sm_90 and later has, and this build targets sm_80 too" <<<"$out" \
        && pass "sm_90 operations refused for sm_80, naming the kernel and the operation" || bad "cluster for sm_80: $(grep -A1 'error: oxide' <<<"$out")"; }
out="$(cd "$EX" && cargo oxide build --sm sm_80,sm_91 2>&1)" && bad "--sm sm_91 accepted" || {
    grep -q "\-\-sm sm_91: not a target oxide compiles for" <<<"$out" && pass "--sm sm_91 refused before cargo runs" || bad "--sm sm_91: $out"; }
(cd "$EX" && cargo oxide build --release -p vecadd --sm sm_80,sm_90a --module "$TMP/multi.ptx" --export vecadd=vector_add >/dev/null 2>&1) || bad "--module with two targets"
python3 - "$TMP/multi.ptx" <<'PY' && pass "--module with two targets: a bundle, each part exporting vector_add" || bad "--module bundle"
import sys
b = open(sys.argv[1], "rb").read()
head, body = b.split(b"\n", 1)
parts = [e.split(b":") for e in head.split()[2:]]
assert [t for t, _ in parts] == [b"sm_80", b"sm_90a"], head
for t, n in parts:
    text, body = body[:int(n)], body[int(n):]
    assert b'"name":"vector_add","entry":"vecadd"' in text, t
assert body == b""
PY

echo "== the PTX cache: reused when the bitcode is unchanged, remade when it changes"
VLOG="$EX/target/release/oxide/vecadd.log"
# a link with the default targets first: cargo keeps a program per set of targets and need not
# relink when the set changes back, so the entry this cargo-oxide keeps for them is made here
(cd "$EX" && touch vecadd/src/main.rs && cargo oxide build --release -p vecadd -q) || bad "vecadd build (default targets)"
(cd "$EX" && touch vecadd/src/main.rs && cargo oxide build --release -p vecadd -q) && grep -q "unchanged: reused" "$VLOG" \
    && pass "touched source: PTX reused" || bad "touched source: $(cat "$VLOG")"
cp "$EX/vecadd/src/main.rs" "$TMP/vecadd_main.rs"
echo "pub fn oxide_cache_probe() -> u32 { 7 }" >>"$EX/vecadd/src/main.rs"
(cd "$EX" && cargo oxide build --release -p vecadd -q 2>/dev/null) && ! grep -q "reused" "$VLOG" \
    && pass "edited source: PTX remade" || bad "edited source: $(cat "$VLOG")"
cp "$TMP/vecadd_main.rs" "$EX/vecadd/src/main.rs"
(cd "$EX" && cargo oxide build --release -p vecadd -q) || bad "rebuild after the cache test"

[ $fail -eq 0 ] && echo "ALL RUST TESTS PASSED" || echo "SOME RUST TESTS FAILED"
exit $fail
