/* Reductions in the lowered SIMT IR (docs/tile.md, "Reductions"): the counts of shuffles,
 * shared-memory accesses and scratch bytes that follow from the layouts. Where every lane of a
 * warp holds the same partials after the butterflies (the reduced dim spans the warp: a row's
 * reduction), the warps combine through one shared-memory slot per warp and partial, each thread
 * reading one and shuffling over the warp bits; otherwise each thread reads the partial of the
 * same lane in every warp it combines with. Whether the results are right is checked by the SIMT
 * interpreter (difftile_simt) and on the GPU (difftile_gpu, test_gpu_tile_examples). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;

static char *lower(const char *path) {
    char full[512];
    snprintf(full, sizeof full, "%s/%s", OXIDE_SOURCE_DIR, path);
    char *ir = check_read_file(full, NULL);
    CHECK(ir != NULL, "cannot read %s", full);
    char *simt = ir ? check_lower_tile(ctx, ir, "sm_90a", OXIDE_TILE_VARIANTS_ALL) : NULL;
    free(ir);
    return simt;
}

static int count(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void expect(const char *where, const char *what, int got, int want) {
    CHECK(got == want, "%s: %s: %d, expected %d", where, what, got, want);
}

/* Shared-memory loads: the lowering's carry no alignment (its global loads do). */
static const char SMEM_LOAD[] = "{align=0, volatile=0} : f32";

int main(void) {
    MUST(oxide_context_create(&ctx));
    /* softmax_f32: 16x1024 f32 over 8 warps, blocked: a warp spans 128 columns, so all 32 lanes
     * and all 3 warp bits are columns, and the 16 rows are registers: 16 partials a thread, two
     * reductions (max, sum) */
    char *sm = lower("examples/tile/softmax_f32.oxir");
    if (sm) {
        int rows = 16, lanes = 5, warps = 3;
        expect("softmax_f32", "shuffles", count(sm, "= shfl.xor "), 2 * rows * (lanes + warps));
        expect("softmax_f32", "shared-memory loads", count(sm, SMEM_LOAD), 2 * rows);
        expect("softmax_f32", "scratch bytes (a slot per warp and row)", count(sm, "dyn_smem(512)"), 1);
    }
    free(sm);
    /* column_sum: 64x64 f32 summed over the rows, 4 warps, blocked: 4 columns a thread, 16
     * lanes along the columns, then 1 lane bit, both warp bits and 8 registers along the rows. The
     * lanes differ after the one butterfly, so each thread reads its 4 partials from its own lane
     * in each of the 4 warps */
    char *cs = lower("examples/tile/column_sum.oxir");
    if (cs) {
        expect("column_sum", "shuffles", count(cs, "= shfl.xor "), 4 * 1);
        expect("column_sum", "shared-memory loads", count(cs, SMEM_LOAD), 4 * 4);
    }
    free(cs);
    oxide_context_destroy(ctx);
    return check_report("test_tile_reduce");
}
