/* oxide-difftest: differential testing of the compiler against a reference interpreter.
 *
 *   oxide-difftest [--seed S] [--count N] [--gpu | --compile] [--batch B] [--jobs J] [--opt L]
 *                  [--target SM]
 *   oxide-difftest --print S
 *   oxide-difftest --tile [the same options] [--simt] | --tile --print S | --tile --json [--seed S] [--count N]
 *
 * Program i of a run is generated from seed S+i (gen.h), run in the interpreter (interp.h),
 * and with --gpu compiled (B kernels per module), run on GPU 0 and compared: integers bit for
 * bit; floats bit for bit except that any two NaNs are equal and elements holding a libdevice
 * math result may differ by DT_MATH_ULPS ulps. Each mismatch prints its seed and the program;
 * `--print SEED` prints one program again (after 20 reports, only seeds are printed). The summary:
 *   difftest programs=N mismatches=M errors=E
 * then PASSED, FAILED or SKIPPED and the same figures.
 * Without --gpu (or without a GPU) it checks the interpreter on hand-computed cases and runs each
 * generated program twice (the results must be identical), after verifying it with
 * oxide_module_verify; --compile also compiles them to PTX in batches (no GPU needed), which
 * measures the compile time a GPU run spends. OXIDE_DIFFTEST_COUNT in the environment overrides
 * --count (for scripts/gpu-check). Exit status: 0 all agree, 1 a mismatch or error, 2 bad usage,
 * 77 --gpu without a GPU (after the interpreter-side checks).
 * --tile runs tile programs instead (tile_gen.h, tile_run.c) through the same workers and summary;
 * --tile --json prints each program's structure as one JSON line (for the NumPy evaluator);
 * --tile --simt also lowers each program to SIMT IR for sm_80, sm_89 and sm_90a and runs that in the
 * reference interpreter (interp.h), compared with the tile interpreter: the lowering checked
 * without a GPU; --tile --dot runs blocked matmuls (tile_dot.c) instead of tile_gen.c's programs. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "gen.h"
#include "interp.h"
#include "ir.h"

typedef dt_opts opts;
typedef dt_tally tally;

double dt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
#define now dt_now

/* ---- running a program in the interpreter ---- */

typedef struct host_run {
    dt_buffer in[DT_MAX_INPUTS], out;
    uint8_t *out_tol;
} host_run;

#define OUT_FILL 0xa5 /* unwritten output elements read back as this on both sides */

static int host_prepare(const dt_program *p, host_run *h) {
    memset(h, 0, sizeof *h);
    for (uint32_t k = 0; k < p->ninputs; k++)
        h->in[k] = (dt_buffer){p->in[k].data, p->in[k].len, dt_scalar_size(p->in[k].elem), NULL};
    uint32_t es = dt_scalar_size(p->out_elem);
    h->out = (dt_buffer){malloc((size_t)p->out_len * es), p->out_len, es, calloc(p->out_len, 1)};
    if (!h->out.data || !h->out.tol)
        return -1;
    memset(h->out.data, OUT_FILL, (size_t)p->out_len * es);
    return 0;
}
static void host_free(host_run *h) {
    free(h->out.data);
    free(h->out.tol);
}

static int interp_program(oxide_function *fn, const dt_program *p, host_run *h, char *err, size_t errlen) {
    dt_arg args[DT_MAX_INPUTS + 2];
    size_t n = 0;
    for (uint32_t k = 0; k < p->ninputs; k++)
        args[n++] = (dt_arg){.is_buffer = 1, .buf = &h->in[k]};
    args[n++] = (dt_arg){.bits = p->scalar};
    args[n++] = (dt_arg){.is_buffer = 1, .buf = &h->out};
    dt_launch L = {.grid = {p->grid, 1, 1}, .block = {p->block, 1, 1}, .step_limit = 20000000, .mem_limit = 64u << 20};
    return dt_interp_run(fn, &L, args, n, err, errlen);
}

/* ---- comparison ---- */

static int64_t ordered(uint64_t bits, unsigned w) {
    uint64_t sign = 1ull << (w - 1);
    int64_t mag = (int64_t)(bits & (sign - 1));
    return bits & sign ? -mag : mag;
}

/* Index of the first element where got differs from want beyond tolerance, or -1. */
static int64_t compare(const dt_program *p, const uint8_t *want, const uint8_t *tol, const uint8_t *got) {
    uint32_t es = dt_scalar_size(p->out_elem);
    bool fl = p->out_elem == OXIDE_SCALAR_F32 || p->out_elem == OXIDE_SCALAR_F64;
    for (uint32_t i = 0; i < p->out_len; i++) {
        uint64_t a = 0, b = 0;
        memcpy(&a, want + (size_t)i * es, es);
        memcpy(&b, got + (size_t)i * es, es);
        if (a == b)
            continue;
        if (!fl)
            return i;
        double x, y;
        float xf, yf;
        if (es == 4) {
            memcpy(&xf, &a, 4);
            memcpy(&yf, &b, 4);
            x = xf;
            y = yf;
        } else {
            memcpy(&x, &a, 8);
            memcpy(&y, &b, 8);
        }
        if (isnan(x) && isnan(y))
            continue;
        if (isnan(x) || isnan(y))
            return i;
        int64_t d = ordered(a, es * 8) - ordered(b, es * 8);
        if ((d < 0 ? -d : d) > (int64_t)tol[i])
            return i;
    }
    return -1;
}

static void print_elem(const dt_program *p, const uint8_t *buf, int64_t i) {
    uint32_t es = dt_scalar_size(p->out_elem);
    uint64_t v = 0;
    memcpy(&v, buf + (size_t)i * es, es);
    if (p->out_elem == OXIDE_SCALAR_F32) {
        float f;
        memcpy(&f, &v, 4);
        printf("%.9g (0x%08" PRIx64 ")", f, v);
    } else if (p->out_elem == OXIDE_SCALAR_F64) {
        double d;
        memcpy(&d, &v, 8);
        printf("%.17g (0x%016" PRIx64 ")", d, v);
    } else
        printf("%" PRId64 " (0x%" PRIx64 ")", es == 4 ? (int64_t)(int32_t)v : (int64_t)v, v);
}

static char *module_text(const dt_program *const *ps, size_t n) {
    size_t len = 32;
    for (size_t i = 0; i < n; i++)
        len += strlen(ps[i]->text) + 1;
    char *t = malloc(len);
    if (!t)
        return NULL;
    size_t at = (size_t)sprintf(t, "module @difftest\n");
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(t + at, "\n%s", ps[i]->text);
    return t;
}

/* Full reports (with the program) for the first few problems of a process; then seeds only, so a
 * systematic bug does not print 100,000 programs. */
#define FULL_REPORTS 20
static unsigned nreports;

bool dt_report_full(void) { return ++nreports <= FULL_REPORTS; }

static void report(const dt_program *p, const char *what) {
    printf("---- seed %" PRIu64 ": %s\n", p->seed, what);
    if (!dt_report_full()) {
        fflush(stdout);
        return;
    }
    printf("launch grid=%u block=%u, scalar %%s=%u; inputs come from the seed; rerun it alone with "
           "oxide-difftest --gpu --seed %" PRIu64 " --count 1\n",
           p->grid, p->block, p->scalar, p->seed);
    printf("module @difftest\n\n%s", p->text);
    fflush(stdout);
}

/* ---- the interpreter on hand-computed cases ---- */

typedef struct hand_case {
    const char *what, *text;
    uint32_t block, grid;
    int64_t want[8]; /* out[i] for i < nwant; */
    uint32_t nwant;
    const char *error; /* instead: the run fails with a message containing this */
} hand_case;

static const hand_case hand_cases[] = {
    {"integer semantics",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n"
     "  %z = const {value=0} : i64\n  %o = const {value=1} : i64\n  %a = const {value=-7} : i32\n  %b = const "
     "{value=2} : i32\n"
     "  %q = sdiv %a, %b : i32\n  %q64 = sext %q : i64\n  %p0 = offset %out, %z {elem=i64} : ptr.global\n"
     "  store %q64, %p0\n"
     "  %r = srem %a, %b : i32\n  %r64 = sext %r : i64\n  %p1 = offset %out, %o {elem=i64} : ptr.global\n"
     "  store %r64, %p1\n"
     "  %m = const {value=-128} : i8\n  %s7 = const {value=7} : i8\n  %l = lshr %m, %s7 : i8\n"
     "  %l64 = zext %l : i64\n  %two = const {value=2} : i64\n  %p2 = offset %out, %two {elem=i64} : ptr.global\n"
     "  store %l64, %p2\n"
     "  %one = const {value=1} : i32\n  %c = clz %one : i32\n  %c64 = zext %c : i64\n"
     "  %three = const {value=3} : i64\n  %p3 = offset %out, %three {elem=i64} : ptr.global\n  store %c64, %p3\n"
     "  %br = brev %s7 : i8\n  %br64 = sext %br : i64\n  %four = const {value=4} : i64\n"
     "  %p4 = offset %out, %four {elem=i64} : ptr.global\n  store %br64, %p4\n"
     "  %f = const {value=-2.75} : f32\n  %fi = fptosi %f : i64\n  %five = const {value=5} : i64\n"
     "  %p5 = offset %out, %five {elem=i64} : ptr.global\n  store %fi, %p5\n"
     "  %big = const {value=-9223372036854775808} : i64\n  %as = ashr %big, %three : i64\n"
     "  %six = const {value=6} : i64\n  %p6 = offset %out, %six {elem=i64} : ptr.global\n  store %as, %p6\n"
     "  %u = udiv %big, %three : i64\n  %seven = const {value=7} : i64\n"
     "  %p7 = offset %out, %seven {elem=i64} : ptr.global\n  store %u, %p7\n"
     "  ret\n}\n",
     1,
     1,
     {-3, -1, 1, 31, -32, -2, -1152921504606846976, 3074457345618258602},
     8,
     NULL},
    {"shared memory and barriers",
     "module @h\n\nglobal @sh : array<64 x i32> shared align 4\n\n"
     "kernel @k(%out: slice<mut i64>) {\n^0:\n  %t = tid.x : i32\n  %n = ntid.x : i32\n  %c = ctaid.x : i32\n"
     "  %three = const {value=3} : i32\n  %v = mul %t, %three : i32\n  %v2 = add %v, %c : i32\n"
     "  %s = global.addr {sym=@sh} : ptr.shared\n  %t64 = zext %t : i64\n"
     "  %slot = offset %s, %t64 {elem=i32} : ptr.shared\n  store %v2, %slot\n  barrier\n"
     "  %one = const {value=1} : i32\n  %t1 = add %t, %one : i32\n  %j = urem %t1, %n : i32\n  %j64 = zext %j : i64\n"
     "  %q = offset %s, %j64 {elem=i32} : ptr.shared\n  %r = load %q : i32\n  barrier\n  %r64 = sext %r : i64\n"
     "  %base = mul %c, %n : i32\n  %g = add %base, %t : i32\n  %g64 = zext %g : i64\n"
     "  %po = offset %out, %g64 {elem=i64} : ptr.global\n  store %r64, %po\n  ret\n}\n",
     4,
     2,
     {3, 6, 9, 0, 4, 7, 10, 1},
     8,
     NULL},
    {"loops and block parameters",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %t = tid.x : i32\n  %z = const {value=0} : i32\n"
     "  %one = const {value=1} : i32\n  br ^1(%z, %z)\n^1(%i: i32, %acc: i32):\n  %c = icmp %i, %t {pred=sle} : i1\n"
     "  cond_br %c, ^2, ^3\n^2:\n  %a2 = add %acc, %i : i32\n  %i2 = add %i, %one : i32\n  br ^1(%i2, %a2)\n"
     "^3:\n  %r = sext %acc : i64\n  %t64 = zext %t : i64\n  %p = offset %out, %t64 {elem=i64} : ptr.global\n"
     "  store %r, %p\n  ret\n}\n",
     6,
     1,
     {0, 1, 3, 6, 10, 15},
     6,
     NULL},
    {"IEEE single precision",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %a = const {value=0.1} : f32\n"
     "  %b = const {value=0.2} : f32\n  %s = add %a, %b : f32\n  %si = bitcast %s : i32\n  %s64 = zext %si : i64\n"
     "  %z = const {value=0} : i64\n  %p0 = offset %out, %z {elem=i64} : ptr.global\n  store %s64, %p0\n"
     "  %ten = const {value=10} : f32\n  %m1 = const {value=-1} : f32\n  %f = fma %a, %ten, %m1 : f32\n"
     "  %fi = bitcast %f : i32\n  %f64 = zext %fi : i64\n  %o = const {value=1} : i64\n"
     "  %p1 = offset %out, %o {elem=i64} : ptr.global\n  store %f64, %p1\n"
     "  %nz = const {value=-0} : f32\n  %pz = const {value=0} : f32\n  %mn = fmin %pz, %nz : f32\n"
     "  %mi = bitcast %mn : i32\n  %m64 = zext %mi : i64\n  %tw = const {value=2} : i64\n"
     "  %p2 = offset %out, %tw {elem=i64} : ptr.global\n  store %m64, %p2\n  ret\n}\n",
     1,
     1,
     /* 0.1f + 0.2f = 0x3e99999a; fma(0.1f, 10, -1) = 2^-26 * 1.0 exactly = 0x32800000; fmin(+0, -0) = -0 */
     {0x3e99999a, 0x32800000, 0x80000000},
     3,
     NULL},
    {"warp shuffles",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %t = tid.x : i32\n  %three = const {value=3} : i32\n"
     "  %d = shfl.down %t, %three : i32\n  %one = const {value=1} : i32\n  %x = shfl.xor %d, %one : i32\n"
     "  %eight = const {value=8} : i32\n  %c = icmp %t, %eight {pred=ult} : i1\n  cond_br %c, ^1, ^2\n^1:\n"
     "  %x64 = zext %x : i64\n  %t64 = zext %t : i64\n  %p = offset %out, %t64 {elem=i64} : ptr.global\n"
     "  store %x64, %p\n  br ^2\n^2:\n  ret\n}\n",
     32,
     1,
     /* down 3 then xor 1: lane l gets (l ^ 1) + 3 */
     {4, 3, 6, 5, 8, 7, 10, 9},
     8,
     NULL},
    {"vectors: insert, extract, bitcast, a 16-byte store read back by elements",
     "module @h\n\nglobal @sh : array<4 x i32> shared align 16\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n"
     "  %z = const {value=0} : i128\n  %v0 = bitcast %z : vec<4 x i32>\n  %a = const {value=7} : i32\n"
     "  %b = const {value=-9} : i32\n  %v1 = insert %v0, %a {imm=1} : vec<4 x i32>\n"
     "  %v2 = insert %v1, %b {imm=3} : vec<4 x i32>\n  %s = global.addr {sym=@sh} : ptr.shared\n"
     "  store %v2, %s {align=16}\n  %three = const {value=3} : i64\n  %p3 = offset %s, %three {elem=i32} : ptr.shared\n"
     "  %e3 = load %p3 : i32\n  %e1 = extract %v2 {imm=1} : i32\n  %w = bitcast %v2 : i128\n"
     "  %wt = trunc %w : i64\n  %x3 = sext %e3 : i64\n  %x1 = sext %e1 : i64\n  store %x3, %out\n"
     "  %one = const {value=1} : i64\n  %q1 = offset %out, %one {elem=i64} : ptr.global\n  store %x1, %q1\n"
     "  %two = const {value=2} : i64\n  %q2 = offset %out, %two {elem=i64} : ptr.global\n  store %wt, %q2\n  ret\n}\n",
     1,
     1,
     /* the low 64 bits of the vector: element 1 (7) above element 0 (0) */
     {-9, 7, 7ll << 32},
     3,
     NULL},
    {"f16 and bf16: rounding to nearest even and back",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %f = const {value=1.1} : f32\n"
     "  %h = fptrunc %f : f16\n  %g = fptrunc %f : bf16\n  %hb = bitcast %h : i16\n  %gb = bitcast %g : i16\n"
     "  %h64 = zext %hb : i64\n  %g64 = zext %gb : i64\n  %back = fpext %h : f32\n  %bb = bitcast %back : i32\n"
     "  %b64 = zext %bb : i64\n  store %h64, %out\n  %one = const {value=1} : i64\n"
     "  %q1 = offset %out, %one {elem=i64} : ptr.global\n  store %g64, %q1\n  %two = const {value=2} : i64\n"
     "  %q2 = offset %out, %two {elem=i64} : ptr.global\n  store %b64, %q2\n  ret\n}\n",
     1,
     1,
     /* 1.1f = 0x3f8ccccd: f16 0x3c66 (1.099609375 = 0x3f8cc000 back in f32), bf16 0x3f8d */
     {0x3c66, 0x3f8d, 0x3f8cc000},
     3,
     NULL},
    {"cp.async lands at the wait that covers it, not before",
     "module @h\n\nglobal @sh : array<2 x i64> shared align 16\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n"
     "  %s = global.addr {sym=@sh} : ptr.shared\n  %old = const {value=5} : i64\n  store %old, %s\n"
     "  %new = const {value=42} : i64\n  %one = const {value=1} : i64\n"
     "  %g = offset %out, %one {elem=i64} : ptr.global\n  store %new, %g\n  cp.async.ca %s, %g {imm=8}\n"
     "  cp.async.commit_group\n  %before = load %s : i64\n  cp.async.wait_group {imm=1}\n"
     "  %kept = load %s : i64\n  cp.async.wait_group {imm=0}\n  %after = load %s : i64\n  store %before, %out\n"
     "  %two = const {value=2} : i64\n  %q2 = offset %out, %two {elem=i64} : ptr.global\n  store %kept, %q2\n"
     "  %three = const {value=3} : i64\n  %q3 = offset %out, %three {elem=i64} : ptr.global\n"
     "  store %after, %q3\n  ret\n}\n",
     1,
     1,
     {5, 42, 5, 42},
     4,
     NULL},
    {"ldmatrix and ldmatrix.trans of one 8x8 matrix",
     "module @h\n\nglobal @sh : array<64 x i16> shared align 16\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n"
     "  %t = tid.x : i32\n  %s = global.addr {sym=@sh} : ptr.shared\n  %two = const {value=2} : i32\n"
     "  %i0 = mul %t, %two : i32\n  %one = const {value=1} : i32\n  %i1 = add %i0, %one : i32\n"
     "  %e0 = trunc %i0 : i16\n  %e1 = trunc %i1 : i16\n  %p0 = offset %s, %i0 {elem=i16} : ptr.shared\n"
     "  %p1 = offset %s, %i1 {elem=i16} : ptr.shared\n  store %e0, %p0\n  store %e1, %p1\n  barrier\n"
     "  %seven = const {value=7} : i32\n  %r = and %t, %seven : i32\n  %eight = const {value=8} : i32\n"
     "  %ro = mul %r, %eight : i32\n  %row = offset %s, %ro {elem=i16} : ptr.shared\n"
     "  %m = ldmatrix %row : i32\n  %mt = ldmatrix.trans %row : i32\n  %five = const {value=5} : i32\n"
     "  %c = icmp %t, %five {pred=eq} : i1\n  cond_br %c, ^1, ^2\n^1:\n  %m64 = zext %m : i64\n"
     "  %mt64 = zext %mt : i64\n  store %m64, %out\n  %k1 = const {value=1} : i64\n"
     "  %q1 = offset %out, %k1 {elem=i64} : ptr.global\n  store %mt64, %q1\n  br ^2\n^2:\n  ret\n}\n",
     32,
     1,
     /* element (r, c) = 8r + c; lane 5: row 1, columns 2 and 3; transposed: rows 2 and 3 of column 1 */
     {10 | 11 << 16, 17 | 25 << 16},
     2,
     NULL},
    {"division by zero is an error",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %a = const {value=1} : i64\n"
     "  %z = const {value=0} : i64\n  %q = udiv %a, %z : i64\n  ret\n}\n",
     1,
     1,
     {0},
     0,
     "division by zero"},
    {"shift by the width is an error",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %a = const {value=1} : i32\n"
     "  %w = const {value=32} : i32\n  %q = shl %a, %w : i32\n  ret\n}\n",
     1,
     1,
     {0},
     0,
     "not less than the width"},
    {"an endless loop stops at the step limit",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  br ^1\n^1:\n  br ^1\n}\n",
     2,
     1,
     {0},
     0,
     "step limit"},
    {"a barrier some threads skip is an error",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %t = tid.x : i32\n  %z = const {value=0} : i32\n"
     "  %c = icmp %t, %z {pred=eq} : i1\n  cond_br %c, ^1, ^2\n^1:\n  barrier\n  ret\n^2:\n  ret\n}\n",
     4,
     1,
     {0},
     0,
     "have returned"},
    {"reading shared memory nobody wrote is an error",
     "module @h\n\nglobal @sh : array<4 x i32> shared align 4\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n"
     "  %s = global.addr {sym=@sh} : ptr.shared\n  %v = load %s : i32\n  ret\n}\n",
     1,
     1,
     {0},
     0,
     "no thread of the block wrote"},
    {"out-of-bounds stores are an error",
     "module @h\n\nkernel @k(%out: slice<mut i64>) {\n^0:\n  %i = const {value=8} : i64\n"
     "  %p = offset %out, %i {elem=i64} : ptr.global\n  store %i, %p\n  ret\n}\n",
     1,
     1,
     {0},
     0,
     "access of 8 bytes at offset 64"},
};

static int self_test(oxide_context *ctx) {
    int failures = 0;
    for (size_t c = 0; c < sizeof hand_cases / sizeof *hand_cases; c++) {
        const hand_case *h = &hand_cases[c];
        oxide_module *m;
        if (oxide_module_parse(ctx, h->text, strlen(h->text), &m) != OXIDE_OK) {
            printf("self-test '%s': does not parse: %s\n", h->what, oxide_last_error());
            failures++;
            continue;
        }
        int64_t out[8];
        uint8_t tol[8] = {0};
        memset(out, OUT_FILL, sizeof out);
        dt_buffer ob = {(uint8_t *)out, 8, 8, tol};
        dt_arg arg = {.is_buffer = 1, .buf = &ob};
        dt_launch L = {.grid = {h->grid, 1, 1}, .block = {h->block, 1, 1}, .step_limit = 100000, .mem_limit = 1u << 20};
        char err[512];
        int rc = dt_interp_run((oxide_function *)m->functions.items[0], &L, &arg, 1, err, sizeof err);
        bool ok = h->error ? rc != 0 && strstr(err, h->error) : rc == 0 && !memcmp(out, h->want, h->nwant * 8);
        if (!ok) {
            printf("self-test '%s' failed: %s\n", h->what, rc ? err : "wrong values");
            for (uint32_t i = 0; !rc && i < h->nwant; i++)
                printf("  out[%u] = %" PRId64 ", expected %" PRId64 "\n", i, out[i], h->want[i]);
            failures++;
        }
        oxide_module_destroy(m);
    }
    printf("interpreter self-test: %zu hand-computed cases, %d failed\n", sizeof hand_cases / sizeof *hand_cases,
           failures);
    return failures;
}

/* ---- the runs ---- */

typedef dt_stats stats;
dt_stats dt_st;
#define st dt_st

static void name_of(uint64_t seed, char *buf, size_t n) { snprintf(buf, n, "k%" PRIu64, seed); }

/* Parse the program alone and interpret it into h. Returns 0, or -1 having reported why. */
static int interp_one(oxide_context *ctx, const dt_program *p, host_run *h, bool verify) {
    const dt_program *one[1] = {p};
    char *text = module_text(one, 1);
    oxide_module *m = NULL;
    char err[1024];
    int rc = -1;
    if (!text || host_prepare(p, h)) {
        report(p, "out of memory");
    } else if (oxide_module_parse(ctx, text, strlen(text), &m) != OXIDE_OK) {
        snprintf(err, sizeof err, "generated text does not parse: %s", oxide_last_error());
        report(p, err);
    } else if (verify && oxide_module_verify(m, NULL) != OXIDE_OK) {
        snprintf(err, sizeof err, "generated module does not verify: %s", oxide_last_error());
        report(p, err);
    } else {
        double t0 = now();
        oxide_function *fn = NULL;
        for (uint32_t i = 0; i < m->functions.len && !fn; i++)
            if (!strcmp(((oxide_function *)m->functions.items[i])->name, p->name))
                fn = m->functions.items[i];
        char ierr[512];
        if (interp_program(fn, p, h, ierr, sizeof ierr)) {
            snprintf(err, sizeof err, "interpreter: %s", ierr);
            report(p, err);
        } else
            rc = 0;
        st.t_interp += now() - t0;
    }
    if (m)
        oxide_module_destroy(m);
    free(text);
    return rc;
}

static void cpu_range(oxide_context *ctx, const opts *o, uint64_t first, uint64_t n, uint32_t stride, tally *t) {
    for (uint64_t i = first; i < n; i += stride) {
        dt_program p;
        char name[32];
        name_of(o->seed + i, name, sizeof name);
        double t0 = now();
        if (dt_generate(o->seed + i, name, &p)) {
            t->errors++;
            continue;
        }
        st.t_gen += now() - t0;
        t->programs++;
        host_run a, b;
        if (interp_one(ctx, &p, &a, true)) {
            t->errors++;
        } else if (interp_one(ctx, &p, &b, false)) {
            t->errors++;
            host_free(&b);
        } else {
            size_t bytes = (size_t)p.out_len * dt_scalar_size(p.out_elem);
            if (memcmp(a.out.data, b.out.data, bytes) || memcmp(a.out.tol, b.out.tol, p.out_len)) {
                report(&p, "two interpreter runs of the program differ");
                t->mismatches++;
            }
            host_free(&b);
        }
        host_free(&a);
        dt_program_free(&p);
    }
}

/* Device side of a batch: one module, one buffer holding every program's inputs and output. */
static int gpu_batch(oxide_context *ctx, const opts *o, oxide_options *copts, oxide_device *dev, dt_program *ps,
                     host_run *hs, bool *ok, uint32_t n, tally *t) {
    const dt_program *live[n ? n : 1];
    uint32_t nl = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ok[i])
            live[nl++] = &ps[i];
    if (!nl)
        return 0;
    char *text = module_text(live, nl);
    oxide_module *m = NULL;
    const char *ptx;
    size_t ptx_len;
    double t0 = now();
    if (!text || oxide_module_parse(ctx, text, strlen(text), &m) != OXIDE_OK ||
        oxide_module_compile(m, copts, &ptx, &ptx_len) != OXIDE_OK) {
        printf("---- error: batch from seed %" PRIu64 " does not compile: %s\n", live[0]->seed, oxide_last_error());
        t->errors += nl;
        free(text);
        if (m)
            oxide_module_destroy(m);
        return 0;
    }
    st.t_compile += now() - t0;
    (void)o;
    if (!dev) {
        oxide_module_destroy(m);
        free(text);
        return 0;
    }
    t0 = now();
    oxide_loaded_module *lm = NULL;
    oxide_buffer *buf = NULL;
    uint8_t *img = NULL;
    int rc = -1;
    /* layout: per program, inputs then output, each at a 256-byte boundary */
    size_t total = 0;
    size_t off[DT_MAX_INPUTS + 1][n ? n : 1];
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        for (uint32_t k = 0; k <= ps[i].ninputs; k++) {
            const dt_buffer *b = k < ps[i].ninputs ? &hs[i].in[k] : &hs[i].out;
            off[k][i] = total;
            total += (b->len * b->elem_size + 255) & ~(size_t)255;
        }
    }
    if (oxide_loaded_module_load_ptx(dev, ptx, ptx_len, &lm) != OXIDE_OK ||
        oxide_buffer_alloc(dev, total, &buf) != OXIDE_OK || !(img = malloc(total))) {
        printf("---- error: batch from seed %" PRIu64 ": %s\n", live[0]->seed, oxide_last_error());
        goto out;
    }
    memset(img, OUT_FILL, total);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; ok[i] && k < ps[i].ninputs; k++)
            memcpy(img + off[k][i], hs[i].in[k].data, hs[i].in[k].len * hs[i].in[k].elem_size);
    uint64_t base = oxide_buffer_ptr(buf);
    if (oxide_memcpy_htod(dev, base, img, total) != OXIDE_OK) {
        printf("---- error: copy to the device: %s\n", oxide_last_error());
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        const dt_program *p = &ps[i];
        oxide_kernel *k;
        oxide_arg args[DT_MAX_INPUTS + 2];
        size_t na = 0;
        for (uint32_t j = 0; j < p->ninputs; j++)
            args[na++] = oxide_arg_buffer(p->in[j].elem, base + off[j][i], p->in[j].len, 0);
        args[na++] = oxide_arg_i32((int32_t)p->scalar);
        args[na++] = oxide_arg_buffer(p->out_elem, base + off[p->ninputs][i], p->out_len, 1);
        uint32_t grid[3] = {p->grid, 1, 1}, block[3] = {p->block, 1, 1};
        if (oxide_loaded_module_get_kernel(lm, p->name, &k) != OXIDE_OK ||
            oxide_kernel_launch(k, NULL, grid, block, 0, args, na) != OXIDE_OK) {
            printf("---- error: launch of seed %" PRIu64 ": %s\n", p->seed, oxide_last_error());
            report(p, "launch failed");
            goto out;
        }
    }
    if (oxide_device_synchronize(dev) != OXIDE_OK || oxide_memcpy_dtoh(dev, img, base, total) != OXIDE_OK) {
        printf("---- error: batch from seed %" PRIu64 " faulted on the GPU: %s\n", live[0]->seed, oxide_last_error());
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        const dt_program *p = &ps[i];
        const uint8_t *got = img + off[p->ninputs][i];
        int64_t at = compare(p, hs[i].out.data, hs[i].out.tol, got);
        if (at >= 0) {
            char what[64];
            snprintf(what, sizeof what, "out[%" PRId64 "] differs", at);
            report(p, what);
            if (nreports > FULL_REPORTS)
                continue;
            printf("interpreter: ");
            print_elem(p, hs[i].out.data, at);
            printf(" (tolerance %u ulps)\ngpu:         ", hs[i].out.tol[at]);
            print_elem(p, got, at);
            printf("\n");
            fflush(stdout);
            t->mismatches++;
        }
    }
    rc = 0;
out:
    st.t_gpu += now() - t0;
    free(img);
    oxide_buffer_free(buf);
    oxide_loaded_module_destroy(lm);
    oxide_module_destroy(m);
    free(text);
    if (rc)
        t->errors += nl;
    return rc;
}

static int gpu_range(oxide_context *ctx, const opts *o, oxide_device *dev, uint64_t first_batch, uint32_t stride,
                     tally *t) {
    oxide_options *copts;
    if (oxide_options_create(&copts) != OXIDE_OK || (o->target && oxide_options_set_target(copts, o->target)) ||
        oxide_options_set_opt_level(copts, o->opt_level) != OXIDE_OK) {
        printf("---- error: options: %s\n", oxide_last_error());
        return -1;
    }
    dt_program *ps = calloc(o->batch, sizeof *ps);
    host_run *hs = calloc(o->batch, sizeof *hs);
    bool *ok = calloc(o->batch, sizeof *ok);
    int rc = ps && hs && ok ? 0 : -1;
    for (uint64_t b = first_batch; !rc && b * o->batch < o->count; b += stride) {
        uint32_t n = (uint32_t)(o->count - b * o->batch < o->batch ? o->count - b * o->batch : o->batch);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t seed = o->seed + b * o->batch + i;
            char name[32];
            name_of(seed, name, sizeof name);
            double t0 = now();
            ok[i] = false;
            if (dt_generate(seed, name, &ps[i])) {
                t->errors++;
                continue;
            }
            st.t_gen += now() - t0;
            t->programs++;
            if (interp_one(ctx, &ps[i], &hs[i], false))
                t->errors++;
            else
                ok[i] = true;
        }
        rc = gpu_batch(ctx, o, copts, dev, ps, hs, ok, n, t);
        for (uint32_t i = 0; i < n; i++) {
            if (ok[i])
                host_free(&hs[i]);
            dt_program_free(&ps[i]);
        }
    }
    free(ps);
    free(hs);
    free(ok);
    oxide_options_destroy(copts);
    return rc;
}

/* One worker's share: batches (or programs) w, w+jobs, ... */
static int work(const opts *o, uint32_t w, tally *t, char *skip, size_t skiplen) {
    oxide_context *ctx;
    if (oxide_context_create(&ctx) != OXIDE_OK)
        return -1;
    int rc = 0;
    oxide_device *dev = NULL;
    if (o->gpu && oxide_device_get(0, &dev) != OXIDE_OK) {
        snprintf(skip, skiplen, "%s", oxide_last_error());
        dev = NULL;
    }
    if (o->tile && (dev || !o->gpu))
        rc = dt_tile_work(ctx, o, dev, w, o->jobs, t);
    else if (dev || (!o->gpu && o->compile))
        rc = gpu_range(ctx, o, dev, w, o->jobs, t);
    else if (!o->gpu)
        cpu_range(ctx, o, w, o->count, o->jobs, t);
    /* else no device: main runs the interpreter-side checks once, not each worker */
    oxide_context_destroy(ctx);
    return rc;
}

static void usage(void) {
    fprintf(stderr,
            "usage: oxide-difftest [--seed S] [--count N] [--gpu | --compile] [--batch B] [--jobs J] [--opt 0-3] "
            "[--target SM]\n       oxide-difftest --print SEED\n       oxide-difftest --tile [the same options] "
            "[--simt] [--dot] | --tile --print SEED | --tile --json\n");
}

static bool num(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno || *s == '-')
        return false;
    *out = v;
    return true;
}

/* --print SEED: one SIMT program again, with its launch. */
static int print_program(uint64_t seed) {
    dt_program p;
    char name[32];
    name_of(seed, name, sizeof name);
    if (dt_generate(seed, name, &p))
        return 1;
    printf("; seed %" PRIu64 ": launch grid=%u block=%u, scalar %%s=%u, %u inputs:", seed, p.grid, p.block, p.scalar,
           p.ninputs);
    for (uint32_t k = 0; k < p.ninputs; k++)
        printf(" %u elements", p.in[k].len);
    printf("\nmodule @difftest\n\n%s", p.text);
    dt_program_free(&p);
    return 0;
}

/* The command line and OXIDE_DIFFTEST_COUNT into o and *json. Returns -1 to go on with the run,
 * else the exit status: 2 for bad usage, or that of --print, which is done here (with the options
 * before it, so --tile --print prints a tile program). */
static int parse_args(int argc, char **argv, opts *o, bool *json) {
    uint64_t v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gpu") || !strcmp(a, "--compile") || !strcmp(a, "--tile") || !strcmp(a, "--json") ||
            !strcmp(a, "--simt") || !strcmp(a, "--dot")) {
            *(a[2] == 'g'   ? &o->gpu
              : a[2] == 'c' ? &o->compile
              : a[2] == 't' ? &o->tile
              : a[2] == 's' ? &o->simt
              : a[2] == 'd' ? &o->dot
                            : json) = true;
            continue;
        }
        if (!val || !strcmp(a, "--target")) {
            if (val && !strcmp(a, "--target")) {
                o->target = val;
                i++;
                continue;
            }
            usage();
            return 2;
        }
        if (!num(val, &v)) {
            fprintf(stderr, "oxide-difftest: %s wants a number, got '%s'\n", a, val);
            return 2;
        }
        i++;
        if (!strcmp(a, "--seed"))
            o->seed = v;
        else if (!strcmp(a, "--count"))
            o->count = v;
        else if (!strcmp(a, "--batch") && v >= 1 && v <= 4096)
            o->batch = (uint32_t)v;
        else if (!strcmp(a, "--jobs") && v >= 1 && v <= 256)
            o->jobs = (uint32_t)v;
        else if (!strcmp(a, "--opt") && v <= 3)
            o->opt_level = (int)v;
        else if (!strcmp(a, "--print"))
            return o->tile ? dt_tile_print(v, 1, false, o->dot) : print_program(v);
        else {
            usage();
            return 2;
        }
    }
    const char *env = getenv("OXIDE_DIFFTEST_COUNT");
    if (env && *env && !num(env, &o->count)) {
        fprintf(stderr, "oxide-difftest: OXIDE_DIFFTEST_COUNT wants a number, got '%s'\n", env);
        return 2;
    }
    return -1;
}

/* What a worker process sends back through its pipe when it is done. */
typedef struct worker_msg {
    tally t;
    stats s;
    int rc;
    char skip[512];
} worker_msg;

/* --jobs J > 1: one process per worker (the CUDA driver must not be initialised before a fork),
 * their tallies and times added into *total and st. Returns the number of failures (a worker that
 * died counts as one), -1 when a worker could not be started. */
static int run_workers(const opts *o, tally *total, char *skip, size_t skiplen) {
    int fds[256][2];
    pid_t pids[256];
    int failures = 0;
    fflush(stdout);
    for (uint32_t w = 0; w < o->jobs; w++) {
        if (pipe(fds[w]) || (pids[w] = fork()) < 0) {
            perror("oxide-difftest: fork");
            return -1;
        }
        if (pids[w] == 0) {
            close(fds[w][0]);
            tally t = {0};
            char sk[512] = "";
            int rc = work(o, w, &t, sk, sizeof sk);
            fflush(stdout);
            worker_msg msg = {t, st, rc, {0}};
            memcpy(msg.skip, sk, sizeof sk);
            ssize_t wr = write(fds[w][1], &msg, sizeof msg);
            _exit(wr == (ssize_t)sizeof msg ? 0 : 1);
        }
        close(fds[w][1]);
    }
    for (uint32_t w = 0; w < o->jobs; w++) {
        worker_msg msg;
        int status;
        size_t got = 0;
        while (got < sizeof msg) {
            ssize_t r = read(fds[w][0], (char *)&msg + got, sizeof msg - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(fds[w][0]);
        waitpid(pids[w], &status, 0);
        if (got != sizeof msg || !WIFEXITED(status) || WEXITSTATUS(status)) {
            printf("---- error: worker %u died\n", w);
            failures++;
            continue;
        }
        total->programs += msg.t.programs;
        total->mismatches += msg.t.mismatches;
        total->errors += msg.t.errors;
        st.t_gen += msg.s.t_gen;
        st.t_interp += msg.s.t_interp;
        st.t_compile += msg.s.t_compile;
        st.t_gpu += msg.s.t_gpu;
        st.t_simt += msg.s.t_simt;
        failures += msg.rc != 0;
        if (msg.skip[0])
            snprintf(skip, skiplen, "%s", msg.skip);
    }
    return failures;
}

/* --gpu found no device: the interpreter-side checks instead, so the run still tests something.
 * Returns the number of failures, -1 without a context. */
static int interp_instead(const opts *o, tally *total) {
    int failures = 0;
    opts c = *o;
    c.gpu = false;
    c.jobs = 1;
    c.count = o->count < 200 ? o->count : 200;
    oxide_context *ctx;
    if (oxide_context_create(&ctx) != OXIDE_OK)
        return -1;
    if (o->tile)
        failures += dt_tile_work(ctx, &c, NULL, 0, 1, total) != 0;
    else {
        failures += self_test(ctx);
        cpu_range(ctx, &c, 0, c.count, 1, total);
    }
    oxide_context_destroy(ctx);
    return failures;
}

/* The timings and the summary lines; returns the exit status. */
static int summary(const opts *o, const tally *total, double wall, int failures, const char *skip) {
    bool skipped = o->gpu && skip[0];
    double n = total->programs ? (double)total->programs : 1;
    printf("difftest: %.1f s wall, per program: generate %.3f ms, interpret %.3f ms%s", wall, 1e3 * st.t_gen / n,
           1e3 * st.t_interp / n, (o->gpu && !skipped) || o->compile ? "" : "\n");
    if (o->compile && !o->gpu)
        printf(", compile %.3f ms (batches of %u)\n", 1e3 * st.t_compile / n, o->batch);
    else if (o->gpu && !skipped)
        printf(", compile %.3f ms, load+run+compare %.3f ms (%.0f programs/s)\n", 1e3 * st.t_compile / n,
               1e3 * st.t_gpu / n, total->programs / wall);
    if (o->simt)
        printf("difftest: lowering + SIMT interpreter %.3f ms per program\n", 1e3 * st.t_simt / n);
    printf("difftest programs=%" PRIu64 " mismatches=%" PRIu64 " errors=%" PRIu64 "%s\n", total->programs,
           total->mismatches, total->errors, skipped ? " (interpreter only)" : "");
    bool pass = !failures && !total->mismatches && !total->errors;
    if (skipped) {
        printf("SKIPPED: no GPU (%s); interpreter checks %s\n", skip, pass ? "passed" : "FAILED");
        return pass ? 77 : 1;
    }
    printf("%s: difftest programs=%" PRIu64 " mismatches=%" PRIu64 "%s%s\n", pass ? "PASSED" : "FAILED",
           total->programs, total->mismatches, o->tile ? " tile" : "",
           o->gpu ? " (GPU vs interpreter)" : " (interpreter)");
    return pass ? 0 : 1;
}

int main(int argc, char **argv) {
    opts o = {1, 1000, 64, 1, false, false, 3, NULL, false, false, false};
    bool json = false;
    int rc = parse_args(argc, argv, &o, &json);
    if (rc >= 0)
        return rc;
    if (json)
        return o.tile ? dt_tile_print(o.seed, o.count, true, o.dot) : 2;

    double t0 = now();
    int failures = 0;
    if (!o.gpu && !o.tile) {
        oxide_context *ctx;
        if (oxide_context_create(&ctx) != OXIDE_OK)
            return 1;
        failures = self_test(ctx);
        oxide_context_destroy(ctx);
    }
    tally total = {0};
    char skip[512] = "";
    if (o.jobs == 1) {
        if (work(&o, 0, &total, skip, sizeof skip))
            failures++;
    } else if ((rc = run_workers(&o, &total, skip, sizeof skip)) < 0) {
        return 1;
    } else {
        failures += rc;
    }
    double wall = now() - t0;
    if (o.gpu && skip[0] && !total.programs) {
        printf("GPU side skipped: %s\n", skip);
        if ((rc = interp_instead(&o, &total)) < 0)
            return 1;
        failures += rc;
    }
    return summary(&o, &total, wall, failures, skip);
}
