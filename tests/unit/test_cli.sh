#!/usr/bin/env bash
# The `oxide` command-line tool: every subcommand, its flags, and bad input (missing files, bad
# IR, bad flags, truncated and foreign binaries), which must give `oxide: <STATUS>: ...` and
# exit 1 (64 for a command line the tool cannot use), never a crash; each command's --help.
#
# usage: test_cli.sh PATH/TO/oxide [CUDA_HOME]
set -u
OXIDE=${1:?usage: test_cli.sh PATH/TO/oxide [CUDA_HOME]}
CUDA_HOME=${2:-/usr/local/cuda}
PTXAS="$CUDA_HOME/bin/ptxas"
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/oxide_test_cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

checks=0
failures=0
fail() {
    failures=$((failures + 1))
    echo "FAIL: $*"
}

# run NAME WANT_RC CMD...: runs CMD, keeps stdout in $T/out and stderr in $T/err.
run() {
    local name=$1 want=$2
    shift 2
    checks=$((checks + 1))
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$name: exit $rc, want $want"
        sed 's/^/    stderr: /' "$T/err" | head -5
        return 1
    fi
    return 0
}

# expect FILE TEXT [NAME]: FILE contains TEXT (fixed string).
expect() {
    checks=$((checks + 1))
    grep -qF -- "$2" "$1" || {
        fail "${3:-$2}: '$2' not in $(basename "$1")"
        sed 's/^/    | /' "$1" | head -5
    }
}

# error NAME STATUS CMD...: exits 1 with one `oxide: STATUS: ...` line on stderr.
error() {
    local name=$1 status=$2
    shift 2
    run "$name" 1 "$@" && expect "$T/err" "oxide: $status: " "$name"
}

# usage NAME CMD...: a command line the tool cannot use: exit 64, one line naming the help.
usage() {
    local name=$1
    shift
    run "$name" 64 "$@" && expect "$T/err" "oxide: OXIDE_ERROR_INVALID_ARGUMENT: " "$name" &&
        expect "$T/err" "--help)" "$name: names the help"
}

# ---- version, help, bad commands ----
run "--version" 0 "$OXIDE" --version && expect "$T/out" "oxide 0."
run "-V" 0 "$OXIDE" -V && expect "$T/out" "oxide 0." && expect "$T/out" "(LLVM 22."
run "help" 0 "$OXIDE" help && expect "$T/out" "extract" && expect "$T/out" "64 usage error"
run "--help" 0 "$OXIDE" --help && expect "$T/out" "oxide COMMAND --help"
run "-h" 0 "$OXIDE" -h && expect "$T/out" "doctor"
run "no arguments" 64 "$OXIDE" && expect "$T/err" "usage: oxide"
usage "unknown command" "$OXIDE" frobnicate
usage "help on an unknown command" "$OXIDE" help frobnicate
# Each command's help lists its own options, and only those.
for cmd in compile verify manifest extract example doctor; do
    run "$cmd --help" 0 "$OXIDE" "$cmd" --help && expect "$T/out" "usage: oxide $cmd" "$cmd --help" &&
        expect "$T/out" "-h, --help" "$cmd --help" && expect "$T/out" "exit status: 0 success" "$cmd --help"
    run "help $cmd" 0 "$OXIDE" help "$cmd" && expect "$T/out" "usage: oxide $cmd" "help $cmd"
    run "$cmd -h" 0 "$OXIDE" "$cmd" -h && expect "$T/out" "usage: oxide $cmd" "$cmd -h"
done
"$OXIDE" compile --help >"$T/out"
for opt in "-o, --output FILE" "--sm SM" "--ptx-version X.Y" "-O, --opt-level N" --fast-math --lineinfo --emit-llvm \
    --emit-simt --time-passes "--tile-variants V"; do
    expect "$T/out" "$opt" "compile --help lists $opt"
done
"$OXIDE" verify --help >"$T/out"
expect "$T/out" "--sm SM" "verify --help lists --sm"
checks=$((checks + 1))
grep -qF -- "--emit-llvm" "$T/out" && fail "verify --help lists --emit-llvm, which verify does not take"
"$OXIDE" example --help >"$T/out"
expect "$T/out" "--ir" "example --help lists --ir"
"$OXIDE" doctor --help >"$T/out"
expect "$T/out" "2 (doctor)" "doctor --help gives its exit statuses"
run "help beats the other arguments" 0 "$OXIDE" compile "$T/does_not_exist.oxir" --help
checks=$((checks + 1))
[ -s "$T/err" ] && fail "compile --help with a missing file printed an error"

# ---- example ----
run "example list" 0 "$OXIDE" example
for k in vecadd saxpy reduce sgemm softmax transpose histogram cluster_dsmem; do
    expect "$T/out" "$k"
done
error "unknown example" OXIDE_ERROR_NOT_FOUND "$OXIDE" example no_such_kernel
run "example --ir" 0 "$OXIDE" example vecadd --ir -o "$T/vecadd.oxir" && expect "$T/vecadd.oxir" "kernel @vecadd"
run "example sgemm ptx" 0 "$OXIDE" example sgemm --sm sm_80 -o "$T/sgemm.ptx" && expect "$T/sgemm.ptx" ".target sm_80"
"$OXIDE" example cluster_dsmem --ir -o "$T/cluster.oxir"
error "example needing sm_90 on sm_80" OXIDE_ERROR_VERIFY "$OXIDE" example cluster_dsmem --sm sm_80

# ---- compile and its flags ----
run "compile" 0 "$OXIDE" compile "$T/vecadd.oxir" -o "$T/vecadd.ptx"
# the SIMT text a tile kernel lowers to (both TMA variants, linked) compiles again and lowers to
# itself
TILE="$(cd "$(dirname "$0")/../.." && pwd)/examples/tile/matmul_bf16_128.oxir"
run "compile --emit-simt of a tile kernel" 0 "$OXIDE" compile --emit-simt "$TILE" -o "$T/simt1.oxir"
expect "$T/simt1.oxir" "tma_entry(@matmul_bf16_128__tma)"
run "compile --emit-simt of its SIMT text" 0 "$OXIDE" compile --emit-simt "$T/simt1.oxir" -o "$T/simt2.oxir"
checks=$((checks + 1))
cmp -s "$T/simt1.oxir" "$T/simt2.oxir" || fail "the SIMT text of a tile kernel lowers to other text"
run "compile of the SIMT text" 0 "$OXIDE" compile "$T/simt1.oxir" -o "$T/simt.ptx"
expect "$T/simt.ptx" '"tma_only":true'
run "--tile-variants tma" 0 "$OXIDE" compile --tile-variants tma --emit-simt "$TILE" && expect "$T/out" " tma_only"
checks=$((checks + 1))
grep -qF "__tma" "$T/out" && fail "--tile-variants tma built a second variant"
run "--tile-variants=plain" 0 "$OXIDE" compile --tile-variants=plain --emit-simt "$TILE"
checks=$((checks + 1))
grep -qF "tma" "$T/out" && fail "--tile-variants plain kept a TMA copy or descriptor"
usage "--tile-variants both" "$OXIDE" compile --tile-variants both "$TILE"
expect "$T/vecadd.ptx" "// oxide.manifest.v1 "
expect "$T/vecadd.ptx" ".target sm_90a"
expect "$T/vecadd.ptx" ".entry vecadd"
if [ -x "$PTXAS" ]; then
    run "ptxas accepts compile output" 0 "$PTXAS" -arch=sm_90a "$T/vecadd.ptx" -o /dev/null
    run "ptxas accepts sm_80 example" 0 "$PTXAS" -arch=sm_80 "$T/sgemm.ptx" -o /dev/null
fi
run "compile to stdout" 0 "$OXIDE" compile "$T/vecadd.oxir" && cmp -s "$T/out" "$T/vecadd.ptx" ||
    fail "compile to stdout differs from -o output"
run "compile from stdin" 0 "$OXIDE" compile - <"$T/vecadd.oxir" && cmp -s "$T/out" "$T/vecadd.ptx" ||
    fail "compile from stdin differs"
run "--sm sm_80" 0 "$OXIDE" compile "$T/vecadd.oxir" --sm sm_80 && expect "$T/out" ".target sm_80"
run "--sm=sm_86" 0 "$OXIDE" compile "$T/vecadd.oxir" --sm=sm_86 && expect "$T/out" ".target sm_86"
run "--ptx-version" 0 "$OXIDE" compile "$T/vecadd.oxir" --ptx-version 8.0 && expect "$T/out" ".version 8.0"
run "-O0" 0 "$OXIDE" compile "$T/vecadd.oxir" -O0 && expect "$T/out" ".entry vecadd"
run "-O 2" 0 "$OXIDE" compile "$T/vecadd.oxir" -O 2 && expect "$T/out" ".entry vecadd"
run "--fast-math" 0 "$OXIDE" compile "$T/vecadd.oxir" --fast-math && expect "$T/out" ".entry vecadd"
run "--lineinfo" 0 "$OXIDE" compile "$T/vecadd.oxir" --lineinfo && expect "$T/out" ".entry vecadd"
run "--emit-llvm" 0 "$OXIDE" compile "$T/vecadd.oxir" --emit-llvm && expect "$T/out" "nvptx64-nvidia-cuda"
run "--time-passes" 0 "$OXIDE" compile "$T/vecadd.oxir" --time-passes && cmp -s "$T/out" "$T/vecadd.ptx" ||
    fail "--time-passes changed the PTX"
for stage in parse verify lower passes codegen total; do
    grep -qE "^  $stage +[0-9]+\.[0-9]{3}$" "$T/err" || fail "--time-passes shows no '$stage' line: $(cat "$T/err")"
done
run "example --time-passes" 0 "$OXIDE" example saxpy --time-passes && expect "$T/err" "  codegen"
grep -q "  parse" "$T/err" && fail "example --time-passes shows a parse stage, but nothing was parsed"

error "missing input file" OXIDE_ERROR_IO "$OXIDE" compile "$T/does_not_exist.oxir"
usage "no input" "$OXIDE" compile
usage "two inputs" "$OXIDE" compile "$T/vecadd.oxir" "$T/vecadd.oxir"
usage "unknown flag" "$OXIDE" compile "$T/vecadd.oxir" --bogus
usage "unknown target" "$OXIDE" compile "$T/vecadd.oxir" --sm sm_99
usage "bad -O" "$OXIDE" compile "$T/vecadd.oxir" -O 7
usage "bad --ptx-version" "$OXIDE" compile "$T/vecadd.oxir" --ptx-version eight
usage "unsupported --ptx-version" "$OXIDE" compile "$T/vecadd.oxir" --ptx-version 99.9
usage "-o without a file" "$OXIDE" compile "$T/vecadd.oxir" -o
usage "unknown short flag" "$OXIDE" compile "$T/vecadd.oxir" -Z
usage "--sm without a value" "$OXIDE" compile "$T/vecadd.oxir" --sm && expect "$T/err" "'--sm' needs a value"
usage "--emit-llvm with --emit-simt" "$OXIDE" compile "$T/vecadd.oxir" --emit-llvm --emit-simt
usage "manifest takes no options" "$OXIDE" manifest "$T/vecadd.oxir" --sm sm_80
# Options are checked before the input is read: a bad value is a usage error, not an I/O one.
usage "bad option, missing file" "$OXIDE" compile "$T/does_not_exist.oxir" --sm sm_99
run "options before the input" 0 "$OXIDE" compile -O2 --sm sm_80 "$T/vecadd.oxir" && expect "$T/out" ".target sm_80"
run "--output=FILE" 0 "$OXIDE" compile "$T/vecadd.oxir" --output="$T/long.ptx" && cmp -s "$T/long.ptx" "$T/vecadd.ptx" ||
    fail "--output=FILE differs from -o output"
run "-O3 attached" 0 "$OXIDE" compile "$T/vecadd.oxir" -O3 && cmp -s "$T/out" "$T/vecadd.ptx" ||
    fail "-O3 differs from the default level"
run "--opt-level=0" 0 "$OXIDE" compile "$T/vecadd.oxir" --opt-level=0 && expect "$T/out" ".entry vecadd"
run "-- ends the options" 0 "$OXIDE" compile -- - <"$T/vecadd.oxir" && cmp -s "$T/out" "$T/vecadd.ptx" ||
    fail "compile -- - differs"
error "unwritable output" OXIDE_ERROR_IO "$OXIDE" compile "$T/vecadd.oxir" -o "$T/no/such/dir/x.ptx"
usage "--ir is not a compile flag" "$OXIDE" compile "$T/vecadd.oxir" --ir

printf 'module @bad\nkernel @k() {\n^0:\n  %%0 = add %%1, %%1 : i32\n  ret\n}\n' >"$T/bad.oxir"
error "bad IR" OXIDE_ERROR_PARSE "$OXIDE" compile "$T/bad.oxir" && expect "$T/err" "bad.oxir:4:"
printf 'this is not IR\n' >"$T/junk.oxir"
error "junk IR" OXIDE_ERROR_PARSE "$OXIDE" compile "$T/junk.oxir"
: >"$T/empty.oxir"
run "empty IR" 1 "$OXIDE" compile "$T/empty.oxir"
# Every prefix of a valid file is refused with a status or compiled, never a crash.
size=$(wc -c <"$T/vecadd.oxir")
for cut in 1 7 20 50 100 200 300 400 500 600; do
    [ "$cut" -lt "$size" ] || continue
    head -c "$cut" "$T/vecadd.oxir" >"$T/cut.oxir"
    checks=$((checks + 1))
    "$OXIDE" compile "$T/cut.oxir" >/dev/null 2>"$T/err"
    rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        fail "truncated IR ($cut bytes): exit $rc"
    elif [ "$rc" = 1 ]; then
        expect "$T/err" "oxide: OXIDE_ERROR_" "truncated IR ($cut bytes)"
    fi
done

# ---- verify ----
run "verify" 0 "$OXIDE" verify "$T/vecadd.oxir" && expect "$T/out" "ok for sm_90a"
run "verify --sm sm_80" 0 "$OXIDE" verify "$T/vecadd.oxir" --sm sm_80 && expect "$T/out" "ok for sm_80"
run "verify sm_90 kernel" 0 "$OXIDE" verify "$T/cluster.oxir" --sm sm_90a
error "verify sm_90 kernel for sm_80" OXIDE_ERROR_VERIFY "$OXIDE" verify "$T/cluster.oxir" --sm sm_80
expect "$T/err" "cluster.sync"
printf 'module @r\nkernel @vprintf() {\n^0:\n  ret\n}\n' >"$T/reserved.oxir"
error "verify a reserved name" OXIDE_ERROR_VERIFY "$OXIDE" verify "$T/reserved.oxir" && expect "$T/err" "reserved"
error "compile a reserved name" OXIDE_ERROR_VERIFY "$OXIDE" compile "$T/reserved.oxir"
error "verify bad IR" OXIDE_ERROR_PARSE "$OXIDE" verify "$T/bad.oxir"
error "verify missing file" OXIDE_ERROR_IO "$OXIDE" verify "$T/nope.oxir"
usage "verify takes no -o" "$OXIDE" verify "$T/vecadd.oxir" -o x

# ---- manifest ----
run "manifest" 0 "$OXIDE" manifest "$T/vecadd.ptx"
expect "$T/out" "target sm_90a"
expect "$T/out" "kernel vecadd"
expect "$T/out" "slice<mut f32>"
run "manifest of sgemm" 0 "$OXIDE" manifest "$T/sgemm.ptx"
expect "$T/out" "launch_bounds 256 2"
expect "$T/out" "u32"
"$OXIDE" example cluster_dsmem -o "$T/cluster.ptx"
run "manifest of a cluster kernel" 0 "$OXIDE" manifest "$T/cluster.ptx" && expect "$T/out" "cluster 4x1x1"
error "manifest of IR" OXIDE_ERROR_MANIFEST "$OXIDE" manifest "$T/vecadd.oxir"
error "manifest missing file" OXIDE_ERROR_IO "$OXIDE" manifest "$T/nope.ptx"
sed 's/"kernels":\[/"kernels":[{/' "$T/vecadd.ptx" >"$T/broken.ptx"
error "malformed manifest" OXIDE_ERROR_MANIFEST "$OXIDE" manifest "$T/broken.ptx"

# ---- extract: binaries carrying PTX, made here with the C compiler ----
if command -v "$CC" >/dev/null 2>&1; then
    bytes=$(od -An -v -tx1 "$T/vecadd.ptx" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//; s/ /,0x/g; s/^/0x/')
    # (a) an array and a 64-bit length, in a position-independent executable
    cat >"$T/array.c" <<EOF
const unsigned char OXIDE_PTX[] = {$bytes};
const unsigned long long OXIDE_PTX_LEN = sizeof OXIDE_PTX;
int main(void) { return OXIDE_PTX[0] == 0; }
EOF
    # (b) a pointer and a 32-bit length: the pointer is a relocation in a PIE
    cat >"$T/pointer.c" <<EOF
static const unsigned char data[] = {$bytes};
const unsigned char *const OXIDE_PTX = data;
const unsigned int OXIDE_PTX_LEN = sizeof data;
int main(void) { return OXIDE_PTX[0] == 0; }
EOF
    # (c) what an object made by an assembler may hold: bare labels, no symbol sizes
    cat >"$T/label.s" <<EOF
    .section .rodata
    .globl OXIDE_PTX
OXIDE_PTX:
    .incbin "$T/vecadd.ptx"
    .balign 8
    .globl OXIDE_PTX_LEN
OXIDE_PTX_LEN:
    .quad $(wc -c <"$T/vecadd.ptx")
    .section .note.GNU-stack,"",@progbits
EOF
    # (d) what cargo oxide links in (rustc-plugin/cargo-oxide/src/link.rs): a NUL-terminated copy
    # in a section .oxide_ptx, which stays findable by name once the binary is stripped
    cat >"$T/cargo.s" <<EOF
    .section .oxide_ptx,"a",@progbits
    .globl OXIDE_PTX
    .type OXIDE_PTX,@object
OXIDE_PTX:
    .incbin "$T/vecadd.ptx"
    .byte 0
    .size OXIDE_PTX, . - OXIDE_PTX
    .section .rodata.oxide_ptx_len,"a",@progbits
    .balign 8
    .globl OXIDE_PTX_LEN
    .type OXIDE_PTX_LEN,@object
OXIDE_PTX_LEN:
    .quad $(wc -c <"$T/vecadd.ptx")
    .size OXIDE_PTX_LEN, 8
    .section .note.GNU-stack,"",@progbits
EOF
    # (e) cuda-core's weak defaults alone: a Rust program linked without its PTX
    cat >"$T/weak.s" <<EOF
    .section .rodata.oxide_ptx_default,"a",@progbits
    .weak OXIDE_PTX
    .weak OXIDE_PTX_LEN
    .balign 8
OXIDE_PTX_LEN: .quad 0
OXIDE_PTX: .byte 0
    .section .note.GNU-stack,"",@progbits
EOF
    cat >"$T/none.c" <<EOF
int main(void) { return 0; }
EOF
    if "$CC" -O1 -fPIE -pie "$T/array.c" -o "$T/array" && "$CC" -O1 -fPIE -pie "$T/pointer.c" -o "$T/pointer" &&
        "$CC" -O1 -c "$T/array.c" -o "$T/array.o" && "$CC" "$T/none.c" "$T/label.s" -o "$T/label" &&
        "$CC" "$T/none.c" "$T/cargo.s" -o "$T/cargo" && "$CC" "$T/none.c" "$T/weak.s" -o "$T/weak" &&
        "$CC" "$T/none.c" -o "$T/none"; then
        cp "$T/cargo" "$T/cargo_stripped" && strip "$T/cargo_stripped"
        for bin in array pointer array.o label cargo cargo_stripped; do
            run "extract ($bin)" 0 "$OXIDE" extract "$T/$bin" -o "$T/$bin.ptx" &&
                { cmp -s "$T/$bin.ptx" "$T/vecadd.ptx" || fail "extract ($bin): PTX differs from the original"; }
            checks=$((checks + 1))
        done
        run "extract to stdout" 0 "$OXIDE" extract "$T/array" && cmp -s "$T/out" "$T/vecadd.ptx" ||
            fail "extract to stdout differs"
        run "manifest of a binary" 0 "$OXIDE" manifest "$T/pointer" && expect "$T/out" "kernel vecadd"
        error "extract: no symbol" OXIDE_ERROR_NOT_FOUND "$OXIDE" extract "$T/none"
        error "extract: built without PTX" OXIDE_ERROR_NOT_FOUND "$OXIDE" extract "$T/weak"
        expect "$T/err" "OXIDE_PTX_LEN is 0"
        cp "$T/array" "$T/stripped" && strip "$T/stripped" 2>/dev/null &&
            error "extract: stripped binary" OXIDE_ERROR_NOT_FOUND "$OXIDE" extract "$T/stripped"
        # Truncated and corrupted binaries: a status, never a crash.
        for cut in 3 16 63 64 200 1000 4000; do
            head -c "$cut" "$T/array" >"$T/cut.bin"
            checks=$((checks + 1))
            "$OXIDE" extract "$T/cut.bin" >/dev/null 2>"$T/err"
            rc=$?
            [ "$rc" = 1 ] && grep -qF "oxide: OXIDE_ERROR_" "$T/err" || fail "truncated binary ($cut bytes): exit $rc"
        done
        # The header fields the reader trusts first: section table offset, entry size, count.
        for field in 40:8 58:2 60:2 62:2; do
            cp "$T/array" "$T/corrupt.bin"
            head -c "${field#*:}" /dev/zero | tr '\0' '\377' |
                dd of="$T/corrupt.bin" bs=1 seek="${field%:*}" conv=notrunc status=none
            checks=$((checks + 1))
            "$OXIDE" extract "$T/corrupt.bin" >/dev/null 2>&1
            rc=$?
            [ "$rc" -le 1 ] || fail "corrupted ELF header field at ${field%:*}: exit $rc"
        done
        size=$(wc -c <"$T/array")
        for seed in 1 2 3 4 5 6 7 8; do
            cp "$T/array" "$T/corrupt.bin"
            # overwrite 64 bytes at a fixed pseudo-random place with 0xff or with bytes from
            # elsewhere in the file (deterministic, so a failure repeats)
            off=$(((seed * 2654435761) % size))
            if [ $((seed % 2)) = 0 ]; then
                head -c 64 /dev/zero | tr '\0' '\377'
            else
                dd if="$T/array" bs=1 skip=$(((seed * 7919) % size)) count=64 status=none
            fi | dd of="$T/corrupt.bin" bs=1 seek="$off" conv=notrunc status=none
            checks=$((checks + 1))
            "$OXIDE" extract "$T/corrupt.bin" >/dev/null 2>&1
            rc=$?
            [ "$rc" -le 1 ] || fail "corrupted binary (64 bytes at $off): exit $rc"
        done
    else
        echo "note: $CC could not build the test binaries; extract tests skipped"
    fi
else
    echo "note: no C compiler ($CC); extract tests skipped"
fi
error "extract: not ELF" OXIDE_ERROR_PARSE "$OXIDE" extract "$T/vecadd.ptx"
error "extract: missing file" OXIDE_ERROR_IO "$OXIDE" extract "$T/nope"
usage "extract: no input" "$OXIDE" extract

# ---- doctor: the compiler works here; a missing driver or GPU alone is exit 2 ----
checks=$((checks + 1))
"$OXIDE" doctor >"$T/out" 2>"$T/err"
rc=$?
case $rc in
0 | 2) ;;
*) fail "doctor: exit $rc (the compiler should work here)" ;;
esac
expect "$T/out" "OK       LLVM"
expect "$T/out" "libdevice"
expect "$T/out" "driver"
if [ "$rc" = 2 ]; then expect "$T/out" "MISSING"; fi
usage "doctor takes no arguments" "$OXIDE" doctor extra
OXIDE_CUDA_DRIVER=/nonexistent/libcuda.so.1 "$OXIDE" doctor >"$T/out" 2>&1
rc=$?
checks=$((checks + 1))
[ "$rc" = 2 ] || fail "doctor without a driver: exit $rc, want 2"
expect "$T/out" "install the NVIDIA driver"

echo "test_cli: $checks checks, $failures failed"
[ "$failures" = 0 ]
