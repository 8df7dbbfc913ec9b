/* The fp8 rows of lib/ops.def and the 16-bit float paths the tile lowering builds on, compiled
 * from text IR for the sm_89+ targets and assembled by ptxas: the PTX ISA version the module
 * gets (raised to what fp8 needs when none is set), the instructions that carry each op, the
 * operand order of the f32 pair conversion, and ptxas accepting the result. Exits 77 (skipped)
 * without ptxas. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ptxas.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

static oxide_context *ctx;

static const char mma_ir[] = "module @mma\n"
                             "\n"
                             "kernel @k(%p: ptr<mut u8>) {\n"
                             "^0:\n"
                             "  %0 = load %p {align=16, volatile=0} : vec<4 x i32>\n"
                             "  %1 = load %p {align=8, volatile=0} : vec<2 x i32>\n"
                             "  %2 = load %p {align=16, volatile=0} : vec<4 x f32>\n"
                             "  %3 = mma.m16n8k32.e4m3.e4m3 %0, %1, %2 : vec<4 x f32>\n"
                             "  %4 = mma.m16n8k32.e4m3.e5m2 %0, %1, %3 : vec<4 x f32>\n"
                             "  %5 = mma.m16n8k32.e5m2.e4m3 %0, %1, %4 : vec<4 x f32>\n"
                             "  %6 = mma.m16n8k32.e5m2.e5m2 %0, %1, %5 : vec<4 x f32>\n"
                             "  store %6, %p {align=16, volatile=0}\n"
                             "  ret\n"
                             "}\n";

/* Every conversion once; lo and hi are separate parameters so the PTX names which is which. */
static const char cvt_ir[] = "module @cvt\n"
                             "\n"
                             "kernel @k(%lo: f32, %hi: f32, %p: ptr<mut u8>) {\n"
                             "^0:\n"
                             "  %0 = cvt.e4m3x2.f32 %lo, %hi : i16\n"
                             "  %1 = cvt.e5m2x2.f32 %lo, %hi : i16\n"
                             "  %2 = cvt.f16x2.e4m3x2 %0 : vec<2 x f16>\n"
                             "  %3 = cvt.f16x2.e5m2x2 %1 : vec<2 x f16>\n"
                             "  %4 = cvt.e4m3x2.f16x2 %3 : i16\n"
                             "  %5 = cvt.e5m2x2.f16x2 %2 : i16\n"
                             "  %6 = xor %4, %5 : i16\n"
                             "  store %6, %p {align=2, volatile=0}\n"
                             "  ret\n"
                             "}\n";

/* What a tile cast or dot on bf16/f16 tiles lowers to: fpext/fptrunc through f32, bitcasts of
 * the packed pair to and from i32, and insert/extract of one half. */
static const char half_ir[] = "module @half\n"
                              "\n"
                              "kernel @k(%s: f32, %w: i32, %p: ptr<mut u8>) {\n"
                              "^0:\n"
                              "  %0 = bitcast %w : vec<2 x bf16>\n"
                              "  %1 = extract %0 {imm=1} : bf16\n"
                              "  %2 = fpext %1 : f32\n"
                              "  %3 = mul %2, %s : f32\n"
                              "  %4 = fptrunc %3 : bf16\n"
                              "  %5 = insert %0, %4 {imm=0} : vec<2 x bf16>\n"
                              "  %6 = bitcast %5 : i32\n"
                              "  %7 = bitcast %w : vec<2 x f16>\n"
                              "  %8 = extract %7 {imm=0} : f16\n"
                              "  %9 = fpext %8 : f32\n"
                              "  %10 = mul %9, %s : f32\n"
                              "  %11 = fptrunc %10 : f16\n"
                              "  %12 = insert %7, %11 {imm=1} : vec<2 x f16>\n"
                              "  %13 = bitcast %12 : i32\n"
                              "  %14 = add %6, %13 : i32\n"
                              "  store %14, %p {align=4, volatile=0}\n"
                              "  ret\n"
                              "}\n";

static bool assembles(const char *ptx, size_t len, const char *arch) { return ptxas_run(ptx, len, arch) == 0; }

/* The PTX of ir for target (opt level, explicit PTX version when major > 0), or NULL after a
 * failed check. The module stays alive in *m for the caller to destroy. */
static const char *compile(const char *ir, const char *target, int level, int major, int minor, oxide_module **m) {
    const char *ptx = NULL;
    oxide_options *o;
    MUST(oxide_options_create(&o));
    MUST(oxide_options_set_target(o, target));
    MUST(oxide_options_set_opt_level(o, level));
    if (major)
        MUST(oxide_options_set_ptx_version(o, major, minor));
    MUST(oxide_module_parse(ctx, ir, strlen(ir), m));
    oxide_status st = oxide_module_compile(*m, o, &ptx, NULL);
    CHECK(st == OXIDE_OK, "%s O%d: %s", target, level, oxide_status_name(st));
    oxide_options_destroy(o);
    return st ? NULL : ptx;
}

static void expect_version(const char *ptx, const char *target, const char *want) {
    const char *v = strstr(ptx, "\n.version ");
    char got[8] = "";
    if (v)
        sscanf(v + 10, "%7s", got);
    CHECK(!strcmp(got, want), "%s: .version %s, expected %s", target, got, want);
}

static void expect_text(const char *ptx, const char *target, const char *text) {
    CHECK(strstr(ptx, text) != NULL, "%s: no '%s' in the PTX", target, text);
}

/* The register that `ld.param` fills from param (e.g. "%r1"). */
static bool param_reg(const char *ptx, const char *param, char *reg, size_t cap) {
    char want[64];
    snprintf(want, sizeof want, "[%s];", param);
    const char *at = strstr(ptx, want);
    if (!at)
        return false;
    const char *line = at;
    while (line > ptx && line[-1] != '\n')
        line--;
    const char *r = strchr(line, '%');
    size_t n = r && r < at ? strcspn(r, ",") : 0;
    if (!n || n >= cap)
        return false;
    memcpy(reg, r, n);
    reg[n] = 0;
    return true;
}

/* cvt.e4m3x2.f32 %lo, %hi must become PTX `cvt... d, hi, lo`: PTX's first source fills the high
 * byte, and oxide's operand 0 is element 0, the low byte. */
static void expect_pair_order(const char *ptx, const char *target) {
    char lo[16], hi[16], want[64];
    bool found = param_reg(ptx, "k_param_0", lo, sizeof lo) && param_reg(ptx, "k_param_1", hi, sizeof hi);
    CHECK(found, "%s: the PTX loads no parameters 0 and 1 into registers", target);
    if (!found)
        return;
    snprintf(want, sizeof want, ", %s, %s;", hi, lo);
    const char *cvt = strstr(ptx, "cvt.rn.satfinite.e4m3x2.f32");
    const char *end = cvt ? strchr(cvt, '\n') : NULL;
    const char *args = cvt ? strstr(cvt, want) : NULL;
    CHECK(args && args < end, "%s: expected 'cvt.rn.satfinite.e4m3x2.f32 d%s' (high byte first)", target, want);
}

typedef struct fp8_target {
    const char *target, *mma_version, *cvt_version;
} fp8_target;

static void check_fp8(const fp8_target *t, int level) {
    oxide_module *m;
    const char *ptx = compile(mma_ir, t->target, level, 0, 0, &m);
    if (ptx) {
        expect_version(ptx, t->target, t->mma_version);
        static const char *const pairs[] = {"e4m3.e4m3", "e4m3.e5m2", "e5m2.e4m3", "e5m2.e5m2"};
        for (int i = 0; i < 4; i++) {
            char text[96];
            snprintf(text, sizeof text, "mma.sync.aligned.m16n8k32.row.col.f32.%s.f32", pairs[i]);
            expect_text(ptx, t->target, text);
        }
        CHECK(assembles(ptx, strlen(ptx), t->target), "%s O%d: ptxas refused the fp8 mma kernel", t->target, level);
    }
    oxide_module_destroy(m);
    ptx = compile(cvt_ir, t->target, level, 0, 0, &m);
    if (ptx) {
        expect_version(ptx, t->target, t->cvt_version);
        static const char *const insts[] = {"cvt.rn.satfinite.e4m3x2.f32",   "cvt.rn.satfinite.e5m2x2.f32",
                                            "cvt.rn.f16x2.e4m3x2",           "cvt.rn.f16x2.e5m2x2",
                                            "cvt.rn.satfinite.e4m3x2.f16x2", "cvt.rn.satfinite.e5m2x2.f16x2"};
        for (int i = 0; i < 6; i++)
            expect_text(ptx, t->target, insts[i]);
        expect_pair_order(ptx, t->target);
        CHECK(assembles(ptx, strlen(ptx), t->target), "%s O%d: ptxas refused the fp8 cvt kernel", t->target, level);
    }
    oxide_module_destroy(m);
}

static void check_half(const char *target, int level) {
    oxide_module *m;
    const char *ptx = compile(half_ir, target, level, 0, 0, &m);
    if (ptx) {
        expect_text(ptx, target, "cvt.rn.bf16.f32");
        expect_text(ptx, target, "cvt.f32.f16");
        expect_text(ptx, target, "cvt.rn.f16.f32");
        /* PTX 7.8 (sm_89's and sm_90's) has a bf16 -> f32 cvt; sm_80's 7.0 shifts the bits into place */
        expect_text(ptx, target, strcmp(target, "sm_80") ? "cvt.f32.bf16" : "shl.b32");
        CHECK(assembles(ptx, strlen(ptx), target), "%s O%d: ptxas refused the 16-bit float kernel", target, level);
    }
    oxide_module_destroy(m);
}

int main(void) {
    if (!ptxas_find(OXIDE_CUDA_HOME))
        return 77;
    MUST(oxide_context_create(&ctx));
    /* mma needs PTX 8.4 everywhere; the conversions 8.1 on sm_89 and 7.8 (the default) on sm_90 */
    static const fp8_target targets[] = {
        {"sm_89", "8.4", "8.1"}, {"sm_90", "8.4", "7.8"}, {"sm_90a", "8.4", "8.0"}, {"sm_100a", "8.6", "8.6"}};
    static const int levels[] = {0, 3};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
        for (int l = 0; l < 2; l++)
            check_fp8(&targets[t], levels[l]);
    /* an explicit version at or above what the module needs is kept */
    oxide_module *m;
    const char *ptx = compile(mma_ir, "sm_89", 3, 8, 5, &m);
    if (ptx)
        expect_version(ptx, "sm_89 with PTX 8.5", "8.5");
    oxide_module_destroy(m);
    static const char *const half_targets[] = {"sm_80", "sm_89", "sm_90a"};
    for (int t = 0; t < 3; t++)
        for (int l = 0; l < 2; l++)
            check_half(half_targets[t], levels[l]);
    oxide_context_destroy(ctx);
    return check_report("test_ptx_fp8");
}
