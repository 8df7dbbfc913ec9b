/* The Hopper path's choices, read off the lowered SIMT IR (docs/tile.md, "The Hopper path"):
 * which dots become wgmma (from shared memory, A from registers, fp8), whether the loads are
 * pipelined over the stages hint, and that other targets and shapes keep the general path. The
 * GPU tests (tests/gpu/tile/test_gpu_tile_examples.c) check the results against the
 * interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;

static char *read_example(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/tile/%s.oxir", OXIDE_SOURCE_DIR, name);
    size_t len = 0;
    char *text = check_read_file(path, &len);
    CHECK(text != NULL, "cannot read %s", path);
    return text;
}

/* The SIMT IR the tile compiler makes of ir for target (the caller frees it). */
static char *lower(const char *ir, const char *target) {
    oxide_module *m = NULL, *low = NULL;
    oxide_options *o;
    MUST(oxide_options_create(&o));
    MUST(oxide_options_set_target(o, target));
    MUST(oxide_module_parse(ctx, ir, strlen(ir), &m));
    OK(oxide_module_lower_tile(m, o, &low));
    const char *text = NULL;
    if (low)
        OK(oxide_module_print(low, &text));
    char *copy = text ? strdup(text) : NULL;
    oxide_module_destroy(low);
    oxide_module_destroy(m);
    oxide_options_destroy(o);
    return copy;
}

static int count(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The example lowered for target has want of each op in the list (-1: at least one). */
static void expect(const char *example, const char *ir, const char *target, const char *op, int want) {
    char *simt = lower(ir, target);
    int n = simt ? count(simt, op) : 0;
    CHECK(simt && (want < 0 ? n > 0 : n == want), "%s on %s: %d x '%s', expected %s%d", example, target, n, op,
          want < 0 ? "some, not " : "", want < 0 ? 0 : want);
    free(simt);
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    char *mm = read_example("matmul_bf16_128"), *f8 = read_example("matmul_fp8_128");
    char *att = read_example("attention_fwd"), *small = read_example("matmul_bf16");
    if (mm && f8 && att && small) {
        /* 128x128x64 bf16, 8 warps: two warpgroups, four k16 steps, the loads in a 3-stage ring
         * (the dot waits with (3 - 1) * 2 copies in flight) */
        expect("matmul_bf16_128", mm, "sm_90a", "wgmma.mma_async.bf16 ", 4);
        expect("matmul_bf16_128", mm, "sm_90a", "cp.async.cg.zfill", -1);
        expect("matmul_bf16_128", mm, "sm_90a", "cp.async.wait_group {imm=4}", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "mma.m16n8k16", 0);
        /* other targets: the general path's mma.sync */
        expect("matmul_bf16_128", mm, "sm_90", "wgmma", 0);
        expect("matmul_bf16_128", mm, "sm_80", "wgmma", 0);
        expect("matmul_bf16_128", mm, "sm_80", "mma.m16n8k16", -1);
        /* stages=1: no ring, each copy waited for */
        char *one = strdup(mm), *h = one ? strstr(one, "stages=3") : NULL;
        if (h) {
            h[7] = '1';
            expect("matmul_bf16_128 stages=1", one, "sm_90a", "cp.async.wait_group {imm=0}", -1);
            expect("matmul_bf16_128 stages=1", one, "sm_90a", "cp.async.wait_group {imm=4}", 0);
        }
        free(one);
        /* fp8: k32 steps of e4m3 x e4m3, B (loaded N x K, permuted) K-major */
        expect("matmul_fp8_128", f8, "sm_90a", "wgmma.mma_async.e4m3.e4m3", 4);
        expect("matmul_fp8_128", f8, "sm_89", "wgmma", 0);
        /* attention: S = Q K^T from shared memory (K transposed), O += P V with P from registers */
        expect("attention_fwd", att, "sm_90a", "wgmma.mma_async.bf16 ", 4);
        expect("attention_fwd", att, "sm_90a", "wgmma.mma_async.rs.bf16", 4);
        /* K steps of 32 fill no 128-byte row: the general path */
        expect("matmul_bf16", small, "sm_90a", "wgmma", 0);
    }
    free(mm), free(f8), free(att), free(small);
    oxide_context_destroy(ctx);
    return check_report("test_tile_hopper");
}
