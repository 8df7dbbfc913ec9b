/* oxide-difftest --tile --dot: random blocked matmuls, the programs whose dot operands are big
 * enough for shared-memory staging and pipelined rings (tile_gen.c keeps its tiles at 1,024
 * elements, below what those need). Each program instance computes a BM x BN block of
 * C = A B over a counted loop of BK-wide steps, A (M x K) and B (K x N) bf16 or f16 in
 * row-major views with padded rows, offset bases (so 16-byte copies may be misaligned) or, now
 * and then, column-major; M, N and K ragged, so the copies zero-fill past every edge. The
 * stages hint is 1 to 4. Deterministic from the seed, like tile_gen.c's programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tile_gen.h"

static uint32_t rnd(uint64_t *s, uint32_t n) { return (uint32_t)(dt_splitmix(s) % n); }

/* A rows x cols view: row-major with rows padded by 0, 1 or 8 elements, or column-major, at an
 * element offset of 0, 1 or 8 into its storage. */
static void view(uint64_t *s, tg_tensor *t, const char *name, tg_elem e, tg_kind k, int64_t rows, int64_t cols) {
    static const int64_t pads[] = {0, 0, 1, 8}, bases[] = {0, 0, 1, 8};
    *t = (tg_tensor){.elem = e, .kind = k, .rank = 2, .dim = {rows, cols, 1}, .lo = 0.125, .hi = 1};
    snprintf(t->name, sizeof t->name, "%s", name);
    bool colmajor = k == TG_IN && rnd(s, 5) == 0;
    int64_t pad = pads[rnd(s, 4)];
    t->stride[0] = colmajor ? 1 : cols + pad;
    t->stride[1] = colmajor ? rows + pad : 1;
    t->base = k == TG_IN ? bases[rnd(s, 4)] : 0;
    t->storage = t->base + (rows - 1) * t->stride[0] + (cols - 1) * t->stride[1] + 1;
}

int tg_generate_dot(uint64_t seed, const char *name, tg_program *p) {
    memset(p, 0, sizeof *p);
    uint64_t s = seed ^ 0xd1b54a32d192ed03ull;
    p->seed = seed;
    snprintf(p->name, sizeof p->name, "%s", name);
    uint32_t BM = 16u << rnd(&s, 4), BN = 64u << rnd(&s, 2), BK = 64, trips = 1 + rnd(&s, 3);
    p->warps = 1u << rnd(&s, 3);
    while (BM * BN / (32 * p->warps) > 64) /* accumulator registers a thread: keep runs short */
        p->warps *= 2;
    uint32_t stages = 1 + rnd(&s, 4);
    p->grid[0] = 1 + rnd(&s, 2);
    p->grid[1] = 1 + rnd(&s, 2);
    p->grid[2] = 1;
    int64_t M = (int64_t)BM * p->grid[0] - rnd(&s, BM / 2 + 1), N = (int64_t)BN * p->grid[1] - rnd(&s, BN / 2 + 1);
    int64_t K = (int64_t)BK * trips - rnd(&s, BK / 2 + 1);
    tg_elem e = rnd(&s, 2) ? TG_BF16 : TG_F16;
    const char *et = e == TG_BF16 ? "bf16" : "f16";
    p->ntensors = 3;
    view(&s, &p->t[0], "a", e, TG_IN, M, K);
    view(&s, &p->t[1], "b", e, TG_IN, K, N);
    view(&s, &p->t[2], "c", TG_F32, TG_STORE, M, N);
    /* inputs within 1 and exact products: within 4K f32 ulps of |C| <= K (tile_gen.c's dot rule) */
    p->t[2].tol = 4.0 * (double)K * (double)K / (1 << 24);
    p->x = 0.5f;
    dt_buf b = {0};
    dt_buf_printf(&b,
                  "tile_kernel @%s(%%a: tensor<2 x %s>, %%b: tensor<2 x %s>, %%c: tensor<mut 2 x f32>, %%n: i32, "
                  "%%x: f32) hints(warps=%u, stages=%u) {\n^0:\n",
                  name, et, et, p->warps, stages);
    dt_buf_printf(&b,
                  "  %%p0 = tile.program_id {imm=0} : i32\n  %%p1 = tile.program_id {imm=1} : i32\n"
                  "  %%bm = const {value=%u} : i32\n  %%bn = const {value=%u} : i32\n  %%bk = const {value=%u} : i32\n"
                  "  %%m0 = mul %%p0, %%bm : i32\n  %%n0 = mul %%p1, %%bn : i32\n"
                  "  %%zero = const {value=0} : i32\n  %%one = const {value=1} : i32\n"
                  "  %%trips = const {value=%u} : i32\n"
                  "  %%acc0 = tile.full {value=0} : tile<%ux%u x f32>\n  br ^1(%%zero, %%acc0)\n",
                  BM, BN, BK, trips, BM, BN);
    dt_buf_printf(&b,
                  "^1(%%k: i32, %%acc: tile<%ux%u x f32>):\n  %%more = icmp %%k, %%trips {pred=slt} : i1\n"
                  "  cond_br %%more, ^2, ^3\n^2:\n  %%k0 = mul %%k, %%bk : i32\n",
                  BM, BN);
    dt_buf_printf(&b,
                  "  %%ta = tile.load %%a, %%m0, %%k0 {pad=0} : tile<%ux%u x %s>\n"
                  "  %%tb = tile.load %%b, %%k0, %%n0 {pad=0} : tile<%ux%u x %s>\n"
                  "  %%acc1 = tile.dot %%ta, %%tb, %%acc : tile<%ux%u x f32>\n"
                  "  %%k1 = add %%k, %%one : i32\n  br ^1(%%k1, %%acc1)\n",
                  BM, BK, et, BK, BN, et, BM, BN);
    dt_buf_printf(&b, "^3:\n  tile.store %%c, %%m0, %%n0, %%acc\n  ret\n}\n");
    dt_buf j = {0};
    dt_buf_printf(&j, "{\"seed\":%llu,\"name\":\"%s\",\"family\":\"dot\"}", (unsigned long long)seed, name);
    p->text = b.p;
    p->json = j.p;
    if (!b.oom && !j.oom)
        return 0;
    tg_program_free(p);
    return -1;
}
