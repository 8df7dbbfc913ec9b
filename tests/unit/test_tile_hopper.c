/* The Hopper path's choices, read off the lowered SIMT IR (docs/tile.md, "The Hopper path"):
 * which dots become wgmma (from shared memory, A from registers, fp8), whether the loads are
 * pipelined over the stages hint, and that other targets and shapes keep the general path. The
 * GPU tests (tests/gpu/tile/test_gpu_tile_examples.c) check the results against the
 * interpreter. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;
static int variants = OXIDE_TILE_VARIANTS_ALL; /* what lower() asks the tile compiler to build */

static char *read_example(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/tile/%s.oxir", OXIDE_SOURCE_DIR, name);
    size_t len = 0;
    char *text = check_read_file(path, &len);
    CHECK(text != NULL, "cannot read %s", path);
    return text;
}

/* The SIMT IR the tile compiler makes of ir for target (the caller frees it). */
static char *lower(const char *ir, const char *target) { return check_lower_tile(ctx, ir, target, variants); }

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

/* The example with n stores of a zero tile at the start of its loop body and the loads' K
 * coordinate recomputed after them (the caller frees it). */
/* ir with the first `from` replaced by `to` (malloc'd; NULL when from is absent or out of memory). */
static char *replaced(const char *ir, const char *from, const char *to) {
    const char *at = strstr(ir, from);
    char *out = at ? malloc(strlen(ir) - strlen(from) + strlen(to) + 1) : NULL;
    if (out)
        sprintf(out, "%.*s%s%s", (int)(at - ir), ir, to, at + strlen(from));
    return out;
}

static char *body_with_stores(const char *ir, int n) {
    const char *body = strstr(ir, "^2:\n"), *rest = body ? body + 4 : NULL;
    size_t cap = strlen(ir) + (size_t)n * 64 + 256;
    char *out = rest ? malloc(cap) : NULL;
    if (!out)
        return NULL;
    const char *br = strstr(ir, "  br ^1(");
    size_t k = (size_t)snprintf(out, cap, "%.*s  %%z0 = tile.full {value=0} : tile<128x128 x bf16>\n%.*s",
                                (int)(br - ir), ir, (int)(rest - br), br);
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(out + k, cap - k, "  tile.store %%c, %%om, %%on, %%z0\n");
    k += (size_t)snprintf(out + k, cap - k, "  %%kq = add %%kk, %%zero : i32\n");
    for (const char *p = rest; *p && k + 8 < cap;) {
        /* on the loads' lines %kk becomes %kq; the loop's own "%next = add %kk" keeps it */
        const char *eol = strchr(p, '\n'), *ld = strstr(p, "tile.load");
        bool load_line = ld && (!eol || ld < eol);
        for (; *p && *p != '\n' && k + 8 < cap;) {
            if (load_line && !strncmp(p, "%kk", 3)) {
                k += (size_t)snprintf(out + k, cap - k, "%%kq");
                p += 3;
            } else
                out[k++] = *p++;
        }
        if (*p)
            out[k++] = *p++;
    }
    out[k] = 0;
    return out;
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    char *mm = read_example("matmul_bf16_128"), *f8 = read_example("matmul_fp8_128");
    char *att = read_example("attention_fwd"), *small = read_example("matmul_bf16");
    if (mm && f8 && att && small) {
        /* 128x128x64 bf16, 8 warps: two warpgroups, four k16 steps, the loads in a 3-stage ring;
         * the dot's group stays in flight into the next iteration (wait 1; the exit waits for
         * all), so the copies run one iteration ahead (the dot waits with 1 * 2 in flight) */
        expect("matmul_bf16_128", mm, "sm_90a", "wgmma.mma_async.bf16 ", 2 * 4); /* two variants */
        expect("matmul_bf16_128", mm, "sm_90a", "cp.async.cg.zfill", -1);
        expect("matmul_bf16_128", mm, "sm_90a", "cp.async.wait_group {imm=2}", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "wgmma.wait_group.acc", 2 * 2); /* the dot's, the exit's */
        expect("matmul_bf16_128", mm, "sm_90a", "mma.m16n8k16", 0);
        /* the ring's copies by TMA where the launch's tensors allow: A's box 128 x 64 (one
         * 128-byte panel), B's 64 x 64 (two panels of its 128 columns); per stage 1 + 2 copies, one
         * stage ahead and one in the loop; the dot waits on both barriers. The kernel is built twice:
         * the TMA variant (the launch takes it when the tensors allow) and one with cp.async only */
        expect("matmul_bf16_128", mm, "sm_90a", "%a: tensor<2 x bf16> tma(128, 64)", 2);
        expect("matmul_bf16_128", mm, "sm_90a", "%b: tensor<2 x bf16> tma(64, 64)", 2);
        expect("matmul_bf16_128", mm, "sm_90a", "tma_entry(@matmul_bf16_128__tma)", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "kernel @matmul_bf16_128__tma(", 1);
        expect("matmul_bf16_128", mm, "sm_90a", " tma_only", 1);
        /* a producer warpgroup (produce.c) issues the TMA variant's copies: 1 + 2 in its loop,
         * each first waiting for the slot's empty barrier (2 waits besides the dot's 2), full and
         * empty barriers per stage (12); the consumers release the slot of the iteration before
         * (2 arrivals), meet at barrier 1, and setmaxnreg moves registers to their two
         * warpgroups; the plain variant keeps 8 warps */
        expect("matmul_bf16_128", mm, "sm_90a", "tma.load %", 3);
        expect("matmul_bf16_128", mm, "sm_90a", "mbarrier.try_wait.parity", 4);
        expect("matmul_bf16_128", mm, "sm_90a", "mbarrier.init", 12);
        expect("matmul_bf16_128", mm, "sm_90a", "mbarrier.arrive %", 2);
        expect("matmul_bf16_128", mm, "sm_90a", "launch_bounds(384, 0)", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "launch_bounds(256, 0)", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "setmaxnreg.dec {imm=40}", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "setmaxnreg.inc {imm=232}", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "barrier.count %", -1);
        expect("matmul_bf16_128", mm, "sm_80", "tma", 0);
        /* producer=0: thread 0 of the dot's warps copies, stages - 2 ahead (6), its ring not
         * released (block barriers), as before the producer */
        char *noprod = replaced(mm, "stages=3)", "stages=3, producer=0)");
        CHECK(noprod);
        if (noprod) {
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "tma.load %", 6);
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "mbarrier.try_wait.parity", 2);
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "mbarrier.init", 6);
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "mbarrier.arrive %", 0);
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "setmaxnreg", 0);
            expect("matmul_bf16_128 producer=0", noprod, "sm_90a", "launch_bounds(256, 0)", 2);
        }
        free(noprod);
        /* persistent=1 (persist.c): the TMA variant walks the launch's grid, given as its last three
         * parameters; the producer and the consumers each loop over the programs (the grid's count
         * computed twice), stepping by nctaid.x; the consumers meet at barrier 1 before the next;
         * the plain variant (no producer) stays one block a program. Its text parses back to
         * itself. */
        char *pers = replaced(mm, "stages=3)", "stages=3, persistent=1)");
        CHECK(pers);
        if (pers) {
            static const struct {
                const char *op;
                int n;
            } want[] = {{") tma_only persistent {", 1},
                        {" persistent", 1},
                        {"mul %__grid.x, %__grid.y", 2},
                        {"nctaid.x", 2},
                        {"udiv %", -1}};
            for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
                expect("matmul_bf16_128 persistent=1", pers, "sm_90a", want[i].op, want[i].n);
            expect("matmul_bf16_128 persistent=1", pers, "sm_80", "__grid", 0);
            char *simt = lower(pers, "sm_90a");
            oxide_module *back = NULL;
            const char *again = NULL;
            OK(oxide_module_parse(ctx, simt ? simt : "", simt ? strlen(simt) : 0, &back));
            if (back)
                OK(oxide_module_print(back, &again));
            CHECK(simt && again && !strcmp(simt, again),
                  "matmul_bf16_128 persistent=1: its SIMT text does not round-trip");
            oxide_module_destroy(back);
            free(simt);
        }
        free(pers);
        /* the epilogue through shared memory: C is only written, so its box-shaped store is staged in
         * 128-byte column panels and copied out by TMA, as many panels in flight as buffers fit
         * beside the ring (the 128x128 kernel's 3 stages leave room for both of its panels; the
         * bench's 128x256 one's 4 stages for 2 of 4, each waited for before its buffer is
         * reused); C carries a descriptor for the box, and the plain variant stores directly */
        variants = OXIDE_TILE_VARIANTS_TMA;
        char *wide = check_read_file(OXIDE_SOURCE_DIR "/tests/ir/tile/matmul_bf16_128x256.oxir", NULL);
        char *wp = wide ? replaced(wide, "group=8)", "group=8, persistent=1)") : NULL;
        CHECK(wide && wp);
        const struct {
            const char *name, *ir, *op;
            int n;
        } epi[] = {{"matmul_bf16_128", mm, "%c: tensor<mut 2 x bf16> tma(128, 64)", 1},
                   {"matmul_bf16_128", mm, "  tma.store %c.tma, ", 2},
                   {"matmul_bf16_128", mm, "cp.async.bulk.wait_group.read {imm=0}", 1},
                   {"matmul_bf16_128", mm, "cp.async.bulk.wait_group.read {imm=1}", 0},
                   {"matmul_bf16_128x256", wide, "  tma.store %c.tma, ", 4},
                   {"matmul_bf16_128x256", wide, "cp.async.bulk.wait_group.read {imm=1}", 2},
                   {"matmul_bf16_128x256", wide, "cp.async.bulk.wait_group.read {imm=0}", 1},
                   {"matmul_bf16_128x256", wide, "dyn_smem(231552)", 1},
                   {"matmul_bf16_128x256 persistent=1", wp, "  tma.store %c.tma, ", 4},
                   {"matmul_bf16_128x256 persistent=1", wp, " persistent", 1}};
        for (size_t i = 0; i < sizeof epi / sizeof epi[0]; i++)
            if (epi[i].ir)
                expect(epi[i].name, epi[i].ir, "sm_90a", epi[i].op, epi[i].n);
        free(wp);
        free(wide);
        variants = OXIDE_TILE_VARIANTS_PLAIN;
        expect("matmul_bf16_128", mm, "sm_90a", "tma.store", 0);
        variants = OXIDE_TILE_VARIANTS_ALL;
        /* one variant, for a caller that knows its tensors: the plain one has no descriptors; the
         * TMA one is the kernel's own name, TMA-only */
        variants = OXIDE_TILE_VARIANTS_PLAIN;
        expect("matmul_bf16_128", mm, "sm_90a", "tma", 0);
        expect("matmul_bf16_128", mm, "sm_90a", "kernel @matmul_bf16_128(", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "cp.async.wait_group {imm=2}", 1);
        variants = OXIDE_TILE_VARIANTS_TMA;
        expect("matmul_bf16_128", mm, "sm_90a", "%a: tensor<2 x bf16> tma(128, 64)", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "kernel @matmul_bf16_128(", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "__tma", 0);
        expect("matmul_bf16_128", mm, "sm_90a", " tma_only", 1);
        expect("matmul_bf16_128", mm, "sm_90a", "tma.load %", 3);
        expect("matmul_bf16_128", mm, "sm_80", "tma", 0); /* nothing to copy by TMA there */
        variants = OXIDE_TILE_VARIANTS_ALL;
        {
            oxide_options *o;
            MUST(oxide_options_create(&o));
            FAILS_WITH(oxide_options_set_tile_variants(o, 4), OXIDE_ERROR_INVALID_ARGUMENT, "none of");
            FAILS_WITH(oxide_options_set_tile_variants(NULL, 1), OXIDE_ERROR_INVALID_ARGUMENT, "opts is NULL");
            oxide_options_destroy(o);
        }
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
            expect("matmul_bf16_128 stages=1", one, "sm_90a", "tma", 0);
        }
        free(one);
        /* fp8: k32 steps of e4m3 x e4m3, B (loaded N x K, permuted) K-major */
        expect("matmul_fp8_128", f8, "sm_90a", "wgmma.mma_async.e4m3.e4m3", 2 * 4);
        expect("matmul_fp8_128", f8, "sm_89", "wgmma", 0);
        expect("matmul_fp8_128", f8, "sm_90a", "tma(128, 128)", 2 * 2);
        /* attention: S = Q K^T from shared memory (K transposed), O += P V with P from registers */
        expect("attention_fwd", att, "sm_90a", "wgmma.mma_async.bf16 ", 2 * 4);
        expect("attention_fwd", att, "sm_90a", "wgmma.mma_async.rs.bf16", 2 * 4);
        /* its rings are released: each dot's warps arrive on the slot's empty barrier and the copy
         * into a slot waits for that, so the loop has no block barrier. With the producer the
         * block meets twice, at the barriers' initialisation; the consumers meet at barrier 1 for
         * Q's copy (before it and once it landed). Without it 4 are left: the entry's, the
         * initialisation's 2 and Q's wait (there were 3 more in the loop: K's and V's slot reuse
         * and Q's wait). O (64 x 64 bf16, only written) leaves through shared memory and one TMA
         * store: 3 more, before the buffer is written, before the copy and after its read */
        variants = OXIDE_TILE_VARIANTS_TMA;
        expect("attention_fwd", att, "sm_90a", "mbarrier.arrive %", 2);
        expect("attention_fwd", att, "sm_90a", "  barrier {imm=0}", 2);
        expect("attention_fwd", att, "sm_90a", "barrier.count %", 2 + 3);
        expect("attention_fwd", att, "sm_90a", "  tma.store %", 1);
        expect("attention_fwd", att, "sm_90a", "cp.async.bulk.wait_group.read {imm=0}", 1);
        expect("attention_fwd", att, "sm_90a", "launch_bounds(256, 0)", 1);
        expect("attention_fwd", att, "sm_90a", "setmaxnreg", 0); /* one consumer warpgroup */
        char *att0 = replaced(att, "hints(warps=4)", "hints(warps=4, producer=0)");
        CHECK(att0);
        if (att0) {
            expect("attention_fwd producer=0", att0, "sm_90a", "  barrier {imm=0}", 4 + 3);
            expect("attention_fwd producer=0", att0, "sm_90a", "barrier.count", 0);
        }
        free(att0);
        variants = OXIDE_TILE_VARIANTS_PLAIN;
        expect("attention_fwd", att, "sm_90a", "mbarrier", 0);
        variants = OXIDE_TILE_VARIANTS_ALL;
        /* K steps of 32 fill no 128-byte row: the general path */
        expect("matmul_bf16", small, "sm_90a", "wgmma", 0);
        /* a loop body with more instructions before its loads' coordinates than the kernel has
         * values (200 result-less stores, then %kq = %kk + 0): the pipeline's marks are per
         * instruction of the body (ASan checks the bound) */
        char *many = body_with_stores(mm, 200);
        if (many)
            expect("matmul_bf16_128 with 200 stores in its loop", many, "sm_90a", "cp.async.wait_group {imm=2}", 1);
        free(many);
    }
    free(mm), free(f8), free(att), free(small);
    oxide_context_destroy(ctx);
    return check_report("test_tile_hopper");
}
