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
        # host functions rustc merged into aliases (a program's crate is several codegen units)
        # must not reach the PTX, nor the host function an alias names
        ! grep -q "^\.alias" "$ptx" || bad "host aliases in $ptx"
    done
    for bin in vecadd seed seed_full generics reduce warp_reduce histogram matmul cluster async_pipeline gemm_hopper graph_replay pinned_copy slices await_cpu contract tile_matmul tile_softmax tile_matmul_fp8 tile_layernorm tile_mixed tile_attention; do
        out="$("$EX/target/$dir/$bin" 2>&1)" && rc=0 || rc=$?
        if [ $rc -ne 0 ] && [ $bin = seed ] && grep -q "OXIDE_ERROR_NO_DRIVER\|OXIDE_ERROR_NO_DEVICE" <<<"$out"; then
            pass "run $profile seed: no GPU here (the unchanged seed unwraps CudaContext::new)"; continue; fi
        if [ $rc -eq 0 ] && grep -qE "PASSED|no GPU found|^$" <<<"$out"; then pass "run $profile $bin: $(echo "$out" | head -1)"; else echo "$out" | tail -5; bad "run $profile $bin (rc $rc)"; fi
    done
    # tile_attention's own check (its reference and tolerance) passes the right answer and fails a wrong one
    (cd "$EX" && cargo test --offline -q $flag -p tile_attention 2>&1 | grep -q "^test result: ok. 1 passed") \
        && pass "tile_attention $profile: its check tells right from wrong (cargo test)" || bad "tile_attention $profile cargo test"
    # the tile kernels lifted from this build's bitcode, printed, reparsed and run in the tile
    # interpreter against a CPU reference (tests/rust/tile_lift.c); their PTX through ptxas
    D="$EX/target/$dir/deps"
    # a crate's bitcode: <crate>-<hash>.bc, or, for a program's crate of several codegen units,
    # the units the last compile wrote (after its dep-info, .d; an earlier build's stay there)
    newest() {
        local f; f="$(ls -t "$D/$1"-*.bc | head -1)"
        case "$f" in *.rcgu.bc) local c="${f##*/}"; c="${c%%.*}"; find "$D" -name "$c.*.rcgu.bc" -newer "$D/$c.d" | sort ;; *) echo "$f" ;; esac
    }
    for pair in "tile_matmul matmul_bf16" "tile_softmax softmax_f32" "tile_layernorm layernorm_bf16" "tile_matmul_fp8 matmul_fp8" "tile_mixed row_sums" "tile_attention attention"; do
        read -r crate kern <<<"$pair"
        # shellcheck disable=SC2046 # one argument per unit
        if out="$("$BUILD/tests/rust/tile_lift" "$kern" "$TMP/$kern.oxir" $(newest "$crate") "$(newest cuda_tile)" "$(newest cuda_device)" 2>&1)"; then
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
# views, pinned copies, a graph, a tile kernel's checked launch (tile_matmul), with the generated
# launches, checked against the CPU
fake="$BUILD/tests/gpu/mock/libcuda.so.1"
if [ -f "$fake" ]; then
    for bin in graph_replay pinned_copy slices tile_matmul; do
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
    # tile_ops' loops in the interpreter: a rotated while loop gets its head back, loops that test
    # at the bottom keep their shape (tests/rust/tile_lift.c, lib/import_tile_loop.c)
    D="$ROOT/tests/rust/crates/target/$dir/deps"
    # the newest build's bitcode of tile_ops: one file in dev, one per codegen unit in release
    # (tile_ops-HASH.bc, tile_ops-HASH.tile_ops.X-cgu.N.rcgu.bc)
    newest=$(ls -t "$D"/tile_ops-*.bc | head -1); stem=${newest##*/}; stem=${stem%%.*}
    if out="$("$BUILD/tests/rust/tile_lift" loops "$TMP/loops.oxir" "$D/$stem"*.bc "$(ls -t "$D"/cuda_tile-*.bc | head -1)" "$(ls -t "$D"/cuda_device-*.bc | head -1)" 2>&1)"; then
        pass "tile $profile loops lifted: $(grep 'interpreter' <<<"$out")"
    else echo "$out" | tail -5; bad "tile $profile loops lifted and interpreted"; fi
done
grep -q "panicked at panic_trap/src/main.rs:" "$ROOT/tests/rust/crates/target/debug/oxide/panic_trap.ptx" 2>/dev/null || \
    python3 - "$ROOT/tests/rust/crates/target/debug/oxide/panic_trap.ptx" <<'PY' && pass "panic message carries file:line" || bad "panic message without file:line"
import re, sys
t = open(sys.argv[1]).read()
msgs = [bytes(int(x) for x in m.group(1).split(",")).decode() for m in re.finditer(r"panic_\$_msg\w*\[\d+\] = \{([0-9, ]+)\}", t)]
sys.exit(0 if any("panic_trap/src/main.rs:" in m for m in msgs) else 1)
PY

# a profile with several codegen units (a library's would each be a bitcode file of its own,
# which the linker does not read; the program's crate keeps them, and the linker reads each)
# and LTO (which links the crates into one object before the linker sees them, and the program
# carried no PTX): the wrapper compiles each library crate as one unit, and none with LTO
(cd "$ROOT/tests/rust/crates" && CARGO_PROFILE_RELEASE_CODEGEN_UNITS=4 CARGO_PROFILE_RELEASE_LTO=true \
    cargo oxide build --release -q -p device_api --target-dir "$TMP/cgu4" 2>"$TMP/b.log") \
    && "$PTXAS" -arch="$SM" "$TMP/cgu4/release/oxide/device_api.ptx" -o "$TMP/x.cubin" \
    && grep -qa "// oxide.manifest.v1 " "$TMP/cgu4/release/device_api" \
    && pass "a profile with codegen-units = 4 and lto = true: device_api builds and carries its PTX" || { cat "$TMP/b.log"; bad "codegen-units = 4, lto = true"; }

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
        # one program, built for the default targets: --module needs no -p (the bundle's
        # per-target copies beside its PTX are not programs)
        (cd "$TMP/seedpkg" && cargo oxide build --release -q --module "$TMP/seed_module.ptx") | grep -qE "wrote .*seed_module.ptx \([0-9]+ kernels, 2 targets\)" \
            && head -1 "$TMP/seed_module.ptx" | grep -q "^// oxide.ptx-bundle.v1 sm_80:[0-9]* sm_90a:[0-9]*$" \
            && pass "--module without -p in a one-program package: the bundle" || bad "--module without -p (seed)"
        out="$("$TMP/seedpkg/target/release/seed_map" 2>&1)" && pass "seed runs: ${out:-assert passed}" || {
            grep -q "NO_DRIVER\|NO_DEVICE" <<<"$out" && pass "seed: no GPU here (built and PTX checked)" || bad "seed run: $out"; }
    else cat "$TMP/seed.log"; bad "seed_map.rs build"; fi
else
    echo "SKIP seed: $SEED not found (set OXIDE_SEED)"
fi

echo "== refusals: the kernel, the call chain, the user's file:line, rustc's layout"
RF="$ROOT/tests/rust/crates"
# expect_refusal PACKAGE FILE:LINE SUBSTRING...: the build fails; liboxide's refusals (FILE:LINE
# not "-") print `error: kernel ...` with `--> FILE:LINE:COL` at the user's line (the line of
# the offending statement in the crate's source, read off by hand) and no linker command line;
# #[kernel]'s come from rustc. $RFLAG: cargo flags (--release).
expect_refusal() {
    local p=$1 at=$2; shift 2
    if (cd "$RF" && cargo oxide build ${RFLAG:-} -p "$p" >"$TMP/r.log" 2>&1); then bad "refuse $p: it built"; return; fi
    for s in "$@"; do grep -qF -- "$s" "$TMP/r.log" || { grep "error" "$TMP/r.log" | head -5; bad "refuse $p: no '$s'"; return; }; done
    if [ "$at" != - ]; then
        grep -qE -- "^  --> $at:[0-9]+\$" "$TMP/r.log" || { cat "$TMP/r.log"; bad "refuse $p ${RFLAG:-}: no '--> $at:COL'"; return; }
        grep -q '^error: kernel `' "$TMP/r.log" || { bad "refuse $p: no 'error: kernel' headline"; return; }
        if grep -q "linking with\|nodefaultlibs\|rcgu\.o" "$TMP/r.log"; then cat "$TMP/r.log"; bad "refuse $p: the linker command line is shown"; return; fi
    fi
    pass "refuse $p ${RFLAG:-}: $(grep -m1 '^error: ' "$TMP/r.log" | cut -c1-140) $([ "$at" = - ] || echo "(--> $at)")"
}
expect_refusal std_call std_call/src/main.rs:7 "std_call::kernels::bad_kernel" "std::io::stdio::_print" "standard library"
expect_refusal alloc alloc/src/main.rs:9 "heap allocation" "the call chain from the kernel:" "-> <alloc::raw_vec::RawVecInner>::deallocate" \
    "-> __rustc::__rust_dealloc" "alloc::kernels::bad_kernel at alloc/src/main.rs:9:"
expect_refusal x86 x86/src/main.rs:7 "llvm.x86.rdtsc" "x86-specific" "x86::kernels::bad_kernel"
expect_refusal inline_asm inline_asm/src/main.rs:8 "inline_asm::kernels::bad_kernel" "inline assembly"
expect_refusal tma_by_value - "take a TMA descriptor as \`&TensorMap\`"
expect_refusal fn_ptr_param - "parameter \`f: fn(f32) -> f32\`" "function pointer, a host address" "\`F: Fn(..) -> .. + Copy\`"
expect_refusal ref_param - "parameter \`scale: &f32\`" "host address the GPU cannot read" "\`&[f32]\`"
expect_refusal process_exit - "\`std::process::exit\` in a #[kernel]" "cannot end the host process" "return from the kernel"
expect_refusal thread_local thread_local/src/main.rs:17 "kernel \`thread_local::kernels::bad_kernel\`" "uses the thread-local static" "CALLS" "thread_local!"
# an operation the default targets' sm_80 lacks, called through the device API from the user's
# helper: the user's line, not the device API's
expect_refusal target_op target_op/src/main.rs:7 "kernel \`target_op::kernels::bad_kernel\`: target_op::rank_of_block uses cluster.ctarank" \
    "which only sm_90 and later has, and this build targets sm_80 too" "-> target_op::rank_of_block at target_op/src/main.rs:7:"
expect_refusal wide_float wide_float/src/main.rs:8 "wide_float::kernels::bad_kernel" "converts a 128-bit integer to a float"
expect_refusal contract_config - "expected \`LaunchConfig1D\`, found \`LaunchConfig2D\`" "expected \`&PreparedLaunch<second>\`, found \`&PreparedLaunch<first>\`"
expect_refusal contract_domain - "domain = 1, but the kernel calls \`index_2d\`; declare \`domain = 2\`" "contract_domain/src/main.rs:12"
expect_refusal tile_memory - "tile kernel bad_tile" "a tile stored to memory" "keep tiles in local variables"
expect_refusal tile_table - "tile kernel bad_tile" "reads or writes memory" "only through its tensors"
expect_refusal tile_full_runtime - "tile kernel bad_tile at tile_full_runtime/src/main.rs:13" "Tile::full takes a constant" "Tile::splat"
expect_refusal tile_dot_small - "tile kernel bad_tile at" "'tile.dot': M, N and K must be at least 16, got M=16, N=16, K=8"
# the same bitcode through the C API: the same error on every call and at compile, and the module
# left without a half-lifted kernel (tests/rust/tile_lift.c --refused)
for c in tile_memory tile_table tile_full_runtime tile_dot_small; do
    D="$RF/target/debug/deps"
    if out="$("$BUILD/tests/rust/tile_lift" --refused "$TMP/r" "$(ls -t "$D/$c"-*.bc | head -1)" "$(ls -t "$D"/cuda_tile-*.bc | head -1)" "$(ls -t "$D"/cuda_device-*.bc | head -1)" 2>&1)"; then
        pass "tile_lift --refused $c: $(tail -1 <<<"$out")"
    else echo "$out" | tail -5; bad "tile_lift --refused $c"; fi
done
# release builds have no debug info of their own: cargo oxide asks rustc for line tables
RFLAG=--release expect_refusal alloc alloc/src/main.rs:9 "heap allocation" "-> __rustc::__rust_dealloc"
RFLAG=--release expect_refusal std_call std_call/src/main.rs:7 "std::io::stdio::_print"
RFLAG=--release expect_refusal target_op target_op/src/main.rs:7 "kernel \`target_op::kernels::bad_kernel\`: uses cluster.ctarank" \
    "this build targets sm_80 too"
# a formatted panic keeps its text (panic_trap's `negative` kernel; built above, dev and release)
for dir in debug release; do
    python3 - "$RF/target/$dir/oxide/panic_trap.ptx" <<'PY' && pass "formatted panic keeps its text ($dir)" || bad "formatted panic text ($dir)"
import re, sys
t = open(sys.argv[1]).read()
msgs = [bytes(int(x) for x in m.group(1).split(",")).decode() for m in re.finditer(r"panic_\$_msg\w*\[\d+\] = \{([0-9, ]+)\}", t)]
sys.exit(0 if any("panic_trap/src/main.rs:" in m and "negative input {} at {}" in m for m in msgs) else 1)
PY
done

# a link that fails for another reason (the real linker) keeps rustc's block: nothing is hidden
out="$(cd "$EX" && touch vecadd/src/main.rs && OXIDE_REAL_LINKER=false cargo oxide build -p vecadd 2>&1)" && bad "a failing real linker passed" || {
    grep -q "error: linking with" <<<"$out" && pass "a real linker's failure keeps rustc's linker block" || { echo "$out"; bad "a real linker's failure was hidden"; }; }
(cd "$EX" && cargo oxide build -p vecadd -q) || bad "vecadd rebuild"

echo "== cargo oxide build --help, a bad --sm, --export without --module"
out="$(cargo oxide build --help)" && for o in --sm --lineinfo --module --export sm_90a; do grep -q -- "$o" <<<"$out" || bad "--help lacks $o"; done && pass "build --help documents --sm, --lineinfo, --module, --export"
t0=$(date +%s%N)
out="$(cd "$EX" && cargo oxide build --sm sm_91 2>&1)" && bad "--sm sm_91 accepted" || {
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if grep -q "sm_91: not a target" <<<"$out" && grep -q "sm_90a" <<<"$out" && ! grep -q "Compiling" <<<"$out" && [ $ms -lt 2000 ]; then
        pass "--sm sm_91 refused before cargo runs, in $ms ms"; else echo "$out"; bad "--sm sm_91 ($ms ms)"; fi; }
out="$(cd "$EX" && cargo oxide build --export a=b 2>&1)" && bad "--export without --module accepted" || { grep -q "add --module" <<<"$out" && pass "--export without --module refused" || bad "--export message: $out"; }

echo "== --lineinfo: .file/.loc for the Rust lines, nothing else, ptxas accepts it"
code() { grep -vE '^\s*\.(loc|file|section)\s|^\$L__|^\s*$|^//' "$1" | sed 's/\$L__tmp[0-9]*//'; }
for profile in dev release; do
    flag=""; dir=debug
    [ $profile = release ] && flag="--release" && dir=release
    # --module: the PTX the program carries (cargo need not relink a program built before with
    # the same options, and the copy in target/$dir/oxide is the last link's)
    p="$TMP/with_lines.ptx"
    (cd "$EX" && cargo oxide build $flag --lineinfo --sm "$SM" -p matmul -q --module "$p" >/dev/null 2>"$TMP/l.log") || { cat "$TMP/l.log"; bad "--lineinfo build ($profile)"; continue; }
    if grep -qE '^\s*\.loc\s' "$p" && grep -qE '^\s*\.file\s+[0-9]+ ".*matmul/src/main\.rs"' "$p" && ! grep -q '^\.target.*debug\|\.debug_info' "$p"; then
        pass "--lineinfo $profile: $(grep -cE '^\s*\.loc\s' "$p") .loc lines, matmul/src/main.rs among the .file, no DWARF"
    else bad "--lineinfo $profile: no .loc/.file, or full debug info"; fi
    "$PTXAS" -arch="$SM" "$p" -o "$TMP/x.cubin" && pass "ptxas accepts --lineinfo PTX ($profile)" || bad "ptxas --lineinfo ($profile)"
    # line tables change no instruction
    (cd "$EX" && cargo oxide build $flag --sm "$SM" -p matmul -q --module "$TMP/no_lines.ptx" >/dev/null) || bad "matmul --module ($profile)"
    grep -qE '^\s*\.loc\s' "$TMP/no_lines.ptx" && bad "PTX without --lineinfo has .loc ($profile)"
    cmp -s <(code "$TMP/no_lines.ptx") <(code "$TMP/with_lines.ptx") && pass "--lineinfo changes no instruction ($profile)" || bad "--lineinfo changed the code ($profile)"
done

echo "== toolchain newer than liboxide's LLVM"
cat > "$TMP/rustc" <<'SH'
#!/bin/sh
printf 'rustc 9.99.0\nrelease: 9.99.0\nLLVM version: 99.1.0\n'
SH
chmod +x "$TMP/rustc"
out="$(RUSTC="$TMP/rustc" cargo oxide doctor 2>&1)" && bad "doctor accepted LLVM 99" || { grep -q "newer than liboxide's LLVM" <<<"$out" && pass "doctor refuses LLVM 99 with the fix" || bad "doctor message: $out"; }
# (checked when cargo first asks the wrapper for rustc's version: before anything compiles, and
# shown in place of cargo's block with rustc's output)
out="$(cd "$EX" && RUSTC="$TMP/rustc" cargo oxide build 2>&1)" && bad "build accepted LLVM 99" || {
    grep -q "rustup default" <<<"$out" && ! grep -q "Compiling\|process didn't exit" <<<"$out" && pass "build refuses LLVM 99 with the fix, before compiling" || bad "build message: $out"; }

echo "== cargo oxide build --module with export names"
(cd "$EX" && cargo oxide build --release -p vecadd --sm "$SM" --module "$TMP/vecadd_module.ptx" --export vecadd=vector_add >/dev/null 2>&1) || bad "--module build"
grep -q '"name":"vector_add","entry":"vecadd"' "$TMP/vecadd_module.ptx" && pass "--module exports vecadd as vector_add" || bad "--module export name"
"$PTXAS" -arch="$SM" "$TMP/vecadd_module.ptx" -o "$TMP/x.cubin" && pass "--module PTX passes ptxas" || bad "--module ptxas"

# the compute-sanitizer check's program (scripts/gpu-check.d/lineinfo): its planted store carries
# the line of the write
(cd "$RF" && cargo oxide build --release --lineinfo --sm "$SM" -p oob_write -q --module "$TMP/oob_write.ptx" >/dev/null) || bad "oob_write build"
python3 - "$TMP/oob_write.ptx" "$RF/oob_write/src/main.rs" <<'PY' && pass "oob_write: the planted st.global is at its Rust line" || bad "oob_write: the store's .loc"
import re, sys
ptx, src = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
line = next(i + 1 for i, l in enumerate(src) if "// the planted write" in l)
files = {m.group(1): m.group(2) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)}
loc = None
for l in ptx.splitlines():
    m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", l)
    if m:
        loc = (files.get(m.group(1), ""), int(m.group(2)))
    elif re.match(r"\s*st\.global", l):
        sys.exit(0 if loc and loc[0].endswith("oob_write/src/main.rs") and loc[1] == line else 1)
sys.exit(1)
PY

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
# a rebuilt liboxide relinks (its PTX may differ): cargo must not call the old build Fresh
cp "$OXIDE_LIB" "$TMP/liboxide.so"
(cd "$EX" && OXIDE_LIB="$TMP/liboxide.so" cargo oxide build --release -q -p vecadd) || bad "vecadd with a copied liboxide"
touch -d "+1 second" "$TMP/liboxide.so"
out="$(cd "$EX" && OXIDE_LIB="$TMP/liboxide.so" cargo oxide build --release -p vecadd 2>&1)"
grep -q "Compiling vecadd" <<<"$out" && pass "a rebuilt liboxide relinks the program" || bad "liboxide rebuilt, program kept: $out"
# built first for its Cargo.toml's sm_90a alone: an explicit --sm equal to the default list must
# still relink it (the unit hash names the package list, not the default's targets)
(cd "$EX" && cargo oxide build --release -q -p cluster) && pass "cluster built for its own sm_90a" || bad "cluster for sm_90a"
out="$(cd "$EX" && cargo oxide build --release -p cluster --sm sm_80,sm_90a 2>&1)" && bad "cluster built for sm_80" || {
    grep -q "kernel \`cluster::kernels::exchange\`: uses cluster.ctarank, which only sm_90 and later has, and this build targets sm_80 too" <<<"$out" \
        && grep -qE "^  --> cluster/src/main.rs:15:[0-9]+$" <<<"$out" \
        && pass "sm_90 operations refused for sm_80, naming the kernel, the operation and the user's line" || bad "cluster for sm_80: $(grep -A2 '^error' <<<"$out")"; }
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

echo "== the PTX cache: keyed by what the kernels are"
VSRC="$EX/vecadd/src/main.rs"
cp "$VSRC" "$TMP/vecadd_main.rs"
for profile in dev release; do
    flag=""; dir=debug
    [ $profile = release ] && flag="--release" && dir=release
    VLOG="$EX/target/$dir/oxide/vecadd.log"
    (cd "$EX" && cargo oxide build $flag -p vecadd -q && touch vecadd/src/main.rs && cargo oxide build $flag -p vecadd -q) && grep -q "unchanged: reused" "$VLOG" \
        && pass "touched source: PTX reused ($profile)" || bad "touched source ($profile): $(cat "$VLOG")"
    # an edit to main (host-only code): a new string, a closure that multiplies (in a dev build
    # the overflow check's intrinsic is then first used by host code), and a new host function
    sed -i 's/PASSED: all {N} elements correct/PASSED: each of the {N} elements correct/' "$VSRC"
    sed -i 's/^    let stream = ctx.default_stream();/    let stream = ctx.default_stream();\n    let f = |k: u32| k * 3 + 2;\n    println!("{}", f(N as u32));/' "$VSRC"
    grep -q "let f = |k: u32|" "$VSRC" || bad "the host-only edit did not apply"
    echo "pub fn oxide_cache_probe() -> u32 { 7 }" >>"$VSRC"
    out="$(cd "$EX" && OXIDE_TIME=1 cargo oxide build $flag -p vecadd 2>&1)" && grep -q "unchanged: reused" "$VLOG" && grep -q "PTX reused" <<<"$out" \
        && pass "host-only edit: PTX reused ($profile)" || bad "host-only edit ($profile): $(cat "$VLOG")"
    # OXIDE_TIME=1: each process's stages, the link's with the kernel key and no PTX compile
    grep -qE "^ +[0-9.]+ +[0-9.]+ +[0-9.]+  rustc vecadd +rustc [0-9.]+$" <<<"$out" && grep -E "^ .*  link vecadd " <<<"$out" | grep -q "kernel_key [0-9.]*, .*real_linker" \
        && ! grep -q "compile_ptx" <<<"$out" && grep -q "cargo oxide (all)" <<<"$out" \
        && pass "OXIDE_TIME=1: the build's stages ($profile)" || bad "OXIDE_TIME=1 ($profile): $(grep -A5 'oxide time' <<<"$out")"
    # the link of a likely hit starts while liboxide computes the kernel key (link.rs, EarlyLink):
    # the program is the edited one, carrying the PTX
    grep -qa "PASSED: each of the" "$EX/target/$dir/vecadd" && grep -qa "\.entry vecadd(" "$EX/target/$dir/vecadd" \
        && pass "host-only edit: the program has the edit and carries the PTX ($profile)" || bad "host-only edit: the program ($profile)"
    # an edit to the kernel: the PTX is remade, with the edit in it (the constant 3.0)
    sed -i 's/\*c_elem = a\[i\] + b\[i\];/*c_elem = a[i] + b[i] * 3.0;/' "$VSRC"
    out="$(cd "$EX" && cargo oxide build $flag -p vecadd 2>&1)" && ! grep -q "reused" "$VLOG" && grep -qE "PTX vecadd: 1 kernel for sm_80,sm_90a in [0-9.]+ s" <<<"$out" \
        && grep -q "0f40400000" "$EX/target/$dir/oxide/vecadd.ptx" && grep -qa "0f40400000" "$EX/target/$dir/vecadd" \
        && pass "kernel edit: PTX remade, and carried by the program ($profile): $(grep -m1 'PTX vecadd' <<<"$out" | sed 's/^ *//')" || bad "kernel edit ($profile): $(cat "$VLOG")"
    cp "$TMP/vecadd_main.rs" "$VSRC"
    (cd "$EX" && cargo oxide build $flag -p vecadd -q) && ! grep -q "reused" "$VLOG" && ! grep -q "0f40400000" "$EX/target/$dir/oxide/vecadd.ptx" && ! grep -qa "0f40400000" "$EX/target/$dir/vecadd" \
        && pass "kernel edit undone: PTX remade ($profile)" || bad "rebuild after the cache test ($profile)"
    # generics: the closures a generic kernel is instantiated with live in main, beside host
    # code (in release main's codegen unit need not be the kernels'): an edit to main's message
    # reuses the PTX, an edit to a closure's body (x * 5.0, in the PTX as -5.0, 0fC0A00000) remakes it
    GSRC="$EX/generics/src/main.rs" GLOG="$EX/target/$dir/oxide/generics.log" GPTX="$EX/target/$dir/oxide/generics.ptx"
    cp "$GSRC" "$TMP/generics_main.rs"
    (cd "$EX" && cargo oxide build $flag -p generics -q) || bad "generics build ($profile)"
    sed -i 's/PASSED: 6 generic instances/PASSED: six generic instances/' "$GSRC"
    (cd "$EX" && cargo oxide build $flag -p generics -q) && grep -q "unchanged: reused" "$GLOG" \
        && pass "generics, host-only edit in main: PTX reused ($profile)" || bad "generics host-only edit ($profile): $(cat "$GLOG")"
    sed -i 's/|x: f32| -x, &dxf/|x: f32| -x * 5.0, \&dxf/' "$GSRC"
    grep -q -- "-x \* 5.0" "$GSRC" || bad "the closure edit did not apply"
    (cd "$EX" && cargo oxide build $flag -p generics -q) && ! grep -q "reused" "$GLOG" && grep -qi "0fC0A00000" "$GPTX" \
        && pass "generics, an edit to a closure a kernel instance calls: PTX remade ($profile)" || bad "generics closure edit ($profile): $(cat "$GLOG")"
    cp "$TMP/generics_main.rs" "$GSRC"
    (cd "$EX" && cargo oxide build $flag -p generics -q) && ! grep -qi "0fC0A00000" "$GPTX" || bad "generics rebuild after the cache test ($profile)"
done
# the targets are part of the key and each kind of build keeps its own entry; a bundle's link
# rewrites <program>.ptx as its newest target's copy, and a one-target link after it must not
# take that copy for its own PTX
VDIR="$EX/target/release/oxide"
carried() { if [ -x "$BUILD/oxide" ]; then "$BUILD/oxide" extract "$EX/target/release/vecadd" -o "$TMP/carried.ptx" && grep -q "^\.target $1\$" "$TMP/carried.ptx"; fi; }
(cd "$EX" && touch vecadd/src/main.rs && cargo oxide build --release -p vecadd --sm sm_80 -q) && grep -q '^\.target sm_80$' "$VDIR/vecadd.ptx" && carried sm_80 \
    && pass "--sm sm_80 after the bundle: sm_80 PTX" || bad "--sm sm_80 after the bundle: $(cat "$VLOG")"
(cd "$EX" && touch vecadd/src/main.rs && cargo oxide build --release -p vecadd -q) && grep -q "unchanged: reused" "$VLOG" && grep -q '^\.target sm_90a$' "$VDIR/vecadd.ptx" \
    && pass "the bundle's entry kept beside the one-target entry: reused" || bad "the bundle after --sm sm_80: $(cat "$VLOG")"
(cd "$EX" && touch vecadd/src/main.rs && cargo oxide build --release -p vecadd --sm sm_80 -q) && grep -q '^\.target sm_80$' "$VDIR/vecadd.ptx" && carried sm_80 \
    && pass "--sm sm_80 again: its own PTX, not the bundle's copy ($(cat "$VLOG" | sed 's/.* in //'))" || bad "--sm sm_80 again: $(cat "$VLOG")"
(cd "$EX" && cargo oxide build --release -p vecadd -q) || bad "vecadd rebuild (default targets)"

[ $fail -eq 0 ] && echo "ALL RUST TESTS PASSED" || echo "SOME RUST TESTS FAILED"
exit $fail
