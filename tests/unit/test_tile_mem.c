/* Tile loads and stores in the lowered SIMT IR (docs/tile.md, "Memory"): a thread whose part
 * of the tile is inside the tensor takes a path with no per-element check (one base address plus
 * constant offsets, vectors where its registers run along the last dim), and the others check
 * each element, a store only where it is inside. The expected counts follow from the layouts
 * (elements per thread, elements per vector). Whether the results are right is checked by the
 * SIMT interpreter (difftile_simt, difftile_dot_simt) and on the GPU (difftile_gpu). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;

/* The SIMT IR of the file (examples/tile or tests/ir/tile) for target, the variants asked for
 * (the caller frees it). */
static char *lower(const char *path, const char *target, int variants) {
    char full[512];
    snprintf(full, sizeof full, "%s/%s", OXIDE_SOURCE_DIR, path);
    char *ir = check_read_file(full, NULL);
    CHECK(ir != NULL, "cannot read %s", full);
    char *simt = ir ? check_lower_tile(ctx, ir, target, variants) : NULL;
    free(ir);
    return simt;
}

/* Lines containing what (ending with it, when it ends with '$'): in all, and over the blocks with
 * no compare and no select, in blocks holding one such line (alone) and in those holding more
 * (together). */
typedef struct counts {
    int alone, together, all;
} counts;

static counts count(const char *text, const char *what) {
    counts c = {0, 0, 0};
    size_t wl = strlen(what);
    bool suffix = wl && what[wl - 1] == '$';
    wl -= suffix;
    for (const char *b = text; b && *b;) {
        const char *end = strstr(b + 1, "\n^");
        end = end ? end + 1 : b + strlen(b);
        int n = 0;
        bool checks = false;
        for (const char *l = b; l < end;) {
            const char *eol = memchr(l, '\n', (size_t)(end - l));
            eol = eol ? eol : end;
            size_t len = (size_t)(eol - l);
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
            size_t ll = strlen(line);
            n += suffix ? ll >= wl && !strncmp(line + ll - wl, what, wl) : strstr(line, what) != NULL;
            checks |= strstr(line, " = icmp ") || strstr(line, " = select ");
            l = eol + 1;
        }
        c.all += n;
        if (!checks)
            *(n == 1 ? &c.alone : &c.together) += n > 0 ? n : 0;
        b = end;
    }
    return c;
}

static void expect(const char *what, const char *where, int got, int want) {
    CHECK(got == want, "%s: %s: %d, expected %d", where, what, got, want);
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    /* add2d: 64x64 f32 over 4 warps, blocked: 32 elements a thread, 4 to a 16-byte vector */
    char *add = lower("tests/ir/tile/add2d.oxir", "sm_80", OXIDE_TILE_VARIANTS_ALL);
    if (add) {
        int per = 64 * 64 / 128, vec = 16 / 4;
        counts vl = count(add, "{align=16, volatile=0} : vec<4 x f32>");
        counts vs = count(add, "{align=16, volatile=0}$");
        counts sl = count(add, "{align=4, volatile=0} : f32");
        counts ss = count(add, "{align=4, volatile=0}$");
        expect("vector loads, unchecked", "add2d", vl.together, 2 * per / vec);
        /* the edge loads a vector wholly inside whole too */
        expect("vector loads", "add2d", vl.all, 2 * 2 * per / vec);
        expect("vector stores, unchecked", "add2d", vs.together, per / vec);
        expect("vector stores", "add2d", vs.all, per / vec);
        /* the edge: each element's load and store alone behind its own check (a select of a
         * checked address let ptxas keep every address live, the kernel's register count) */
        expect("element loads, each alone", "add2d", sl.alone, 2 * per);
        expect("element loads", "add2d", sl.all, 2 * per);
        expect("element stores, each alone", "add2d", ss.alone, per);
        expect("element stores", "add2d", ss.all, per);
        /* and each element's check compares its constant offsets with two bounds a dim (made once
         * per access), not an index computed per element: an index per element is the same for
         * every access at the same place, so the backend kept them all live across the kernel.
         * Three accesses, both dims stepping, and the loads' test of each vector (its first and
         * last element): the only unsigned index compares are the unchecked path's test (first
         * and last element, each dim) */
        int checks = (3 * per + 2 * 2 * per / vec) * 2;
        expect("element checks against the low bound", "add2d", count(add, "{pred=sge}").all, checks);
        expect("element checks against the high bound", "add2d", count(add, "{pred=slt}").all, checks);
        expect("index compares", "add2d", count(add, "{pred=ult}").all, 3 * 2 * 2);
    }
    free(add);
    /* the Hopper matmul's epilogue: 128x128 bf16 in the wgmma accumulator layout over 8 warps, 64
     * elements a thread in pairs along a row (one 4-byte vector each). The plain variant stores
     * them; the TMA variant writes every pair unchecked into shared memory (C is only written)
     * and copies out its two 128-byte column panels by TMA, which skips what lies outside C */
    const int variants[] = {OXIDE_TILE_VARIANTS_TMA, OXIDE_TILE_VARIANTS_PLAIN};
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "matmul_bf16_128 (plain)" : "matmul_bf16_128 (TMA)";
        char *mm = lower("examples/tile/matmul_bf16_128.oxir", "sm_90a", variants[i]);
        if (!mm)
            continue;
        int per = 128 * 128 / 256;
        counts vs = count(mm, "{align=4, volatile=0}$"), ss = count(mm, "{align=2, volatile=0}$");
        if (i)
            expect("vector stores, unchecked", name, vs.together, per / 2);
        expect("vector stores (to shared memory in the TMA variant)", name, vs.all, per / 2);
        expect("element stores, each alone", name, ss.alone, i ? per : 0);
        expect("element stores", name, ss.all, i ? per : 0);
        expect("TMA stores", name, count(mm, "  tma.store %c.tma, ").all, i ? 0 : 2);
        expect("TMA store groups", name, count(mm, "cp.async.bulk.commit_group").all, i ? 0 : 2);
        free(mm);
    }
    /* atomic adds: no vectors; 128 i32 and 8x16 f32 over one warp, 4 elements a thread */
    char *at = lower("tests/ir/tile/atomic.oxir", "sm_80", OXIDE_TILE_VARIANTS_ALL);
    if (at) {
        counts a = count(at, "= atomic.add ");
        expect("atomic adds, unchecked", "atomic", a.together, 2 * 4);
        expect("atomic adds, each alone", "atomic", a.alone, 2 * 4);
        expect("atomic adds", "atomic", a.all, 2 * 2 * 4);
    }
    free(at);
    oxide_context_destroy(ctx);
    return check_report("test_tile_mem");
}
