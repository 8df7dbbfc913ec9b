/* gemm_mma: C = A * B with bf16 A and B (row-major) and f32 C, on the Ampere tensor-core path:
 * cp.async multi-stage pipeline into shared memory, ldmatrix fragments, mma.sync m16n8k16.
 *
 * A block of 256 threads (8 warps, 2 along M x 4 along N) computes a 128 x 128 tile of C; a warp
 * owns 64 x 32 of it: 4 x 4 mma tiles of 16 x 8, i.e. 16 vec<4 x f32> accumulators. Per step of
 * BK = 32 along k, the block's A panel (128 x 32) and B panel (32 x 128) travel by 16-byte
 * cp.async.cg into one of STAGES shared-memory buffers, STAGES - 1 steps ahead of the math, so
 * global loads overlap the tensor cores. Shared rows are padded (A: 40 elements, B: 136) so that
 * the eight 16-byte rows an ldmatrix phase reads fall in distinct banks. A fragments come from
 * ldmatrix.x4, B fragments from ldmatrix.x4.trans (B is k-major in memory; mma wants it "col").
 *
 * The k loop carries the accumulators and the step index as block parameters. Copies past the
 * last k step are issued with a source size of 0 (zero fill) into a buffer nobody reads again,
 * which keeps the loop free of branches: every iteration commits one group, so "wait until at
 * most STAGES - 2 groups are pending" always means "the step about to be used has landed". */
#include "kbuild.h"
#include "oxide_examples.h"

#define BM OXIDE_EXAMPLE_GEMM_MMA_BM
#define BN OXIDE_EXAMPLE_GEMM_MMA_BN
#define BK OXIDE_EXAMPLE_GEMM_MMA_BK
#define STAGES OXIDE_EXAMPLE_GEMM_MMA_STAGES
#define THREADS OXIDE_EXAMPLE_GEMM_MMA_THREADS
#define A_LD (BK + 8) /* padded shared row of A, in bf16 elements (80 bytes) */
#define B_LD (BN + 8) /* padded shared row of B (272 bytes) */
#define A_STAGE (BM * A_LD * 2)
#define B_STAGE (BK * B_LD * 2)
#define STAGE_BYTES (A_STAGE + B_STAGE)
#define WM 64 /* warp tile */
#define WN 32
#define MT (WM / 16) /* mma tiles per warp along M */
#define NT (WN / 8)  /* ... along N */
#define NACC (MT * NT)

_Static_assert(OXIDE_EXAMPLE_GEMM_MMA_SMEM == STAGES * STAGE_BYTES, "dynamic shared memory in the header");
_Static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp tile per warp");
_Static_assert(BM *BK / 8 == 2 * THREADS && BK * BN / 8 == 2 * THREADS, "two 16-byte copies of A and B per thread");
_Static_assert(BK % 16 == 0 && NT % 2 == 0, "k16 steps; B fragments in pairs of n8 tiles");

#define I32(v) kb_i32(&b, (v))
#define ADD(x, y) kb_op2(&b, OXIDE_OP_ADD, (x), (y))
#define MUL(x, y) kb_op2(&b, OXIDE_OP_MUL, (x), (y))
#define AND(x, y) kb_op2(&b, OXIDE_OP_AND, (x), (y))
#define SHR(x, y) kb_op2(&b, OXIDE_OP_LSHR, (x), (y))

static oxide_value *imm_op(kb *b, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt, int64_t imm) {
    oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = imm};
    return kb_op(b, op, ops, n, rt, &a, 1);
}

static oxide_value *elem(kb *b, oxide_value *agg, oxide_type *t, int i) {
    return imm_op(b, OXIDE_OP_EXTRACT, &agg, 1, t, i);
}

/* vec<2 x i32> {lo, hi}: built as the i64 lo | hi << 32 (element 0 is the low half), which
 * LLVM folds away; `insert` would need a vector to start from. */
static oxide_value *pair(kb *b, oxide_type *v2i32, oxide_value *lo, oxide_value *hi) {
    oxide_value *w = kb_op2(b, OXIDE_OP_OR, kb_cast(b, OXIDE_OP_ZEXT, lo, b->i64),
                            kb_op2(b, OXIDE_OP_SHL, kb_cast(b, OXIDE_OP_ZEXT, hi, b->i64), kb_i64(b, 32)));
    return kb_cast(b, OXIDE_OP_BITCAST, w, v2i32);
}

/* One 16-byte cp.async of this thread's chunk c (0 .. 2 * THREADS - 1) of the A and B panels of
 * k step kt into stage buffer `stage`; valid is 16 or 0 (zero fill past the last step). */
static void issue_step(kb *bp, oxide_value *smem, oxide_value *A, oxide_value *B, oxide_value *tid, oxide_value *K,
                       oxide_value *N, oxide_value *m0, oxide_value *n0, oxide_value *kt, oxide_value *stage,
                       oxide_value *valid, oxide_type *bf16) {
    kb b = *bp;
    oxide_value *k0 = MUL(kt, I32(BK));
    oxide_value *sbase = MUL(stage, I32(STAGE_BYTES));
    for (int i = 0; i < 2; i++) {
        oxide_value *c = ADD(tid, I32(i * THREADS));
        /* A: 4 chunks of 8 elements per row of 32 */
        oxide_value *ar = SHR(c, I32(2)), *ac = MUL(AND(c, I32(3)), I32(8));
        oxide_value *adst = kb_gep(&b, smem, ADD(sbase, MUL(ADD(MUL(ar, I32(A_LD)), ac), I32(2))), b.i8);
        oxide_value *asrc = kb_gep(&b, A, ADD(MUL(ADD(m0, ar), K), ADD(k0, ac)), bf16);
        imm_op(&b, OXIDE_OP_CP_ASYNC_CG_ZFILL, (oxide_value *[]){adst, asrc, valid}, 3, NULL, 16);
        /* B: 16 chunks of 8 elements per row of 128 */
        oxide_value *br = SHR(c, I32(4)), *bc = MUL(AND(c, I32(15)), I32(8));
        oxide_value *boff = ADD(I32(A_STAGE), MUL(ADD(MUL(br, I32(B_LD)), bc), I32(2)));
        oxide_value *bdst = kb_gep(&b, smem, ADD(sbase, boff), b.i8);
        oxide_value *bsrc = kb_gep(&b, B, ADD(MUL(ADD(k0, br), N), ADD(n0, bc)), bf16);
        imm_op(&b, OXIDE_OP_CP_ASYNC_CG_ZFILL, (oxide_value *[]){bdst, bsrc, valid}, 3, NULL, 16);
    }
    kb_void(&b, OXIDE_OP_CP_ASYNC_COMMIT);
    *bp = b;
}

oxide_status oxide_example_gemm_mma(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "gemm_mma");
    oxide_type *bf16 = NULL, *v4i32 = NULL, *v2i32 = NULL;
    if (!b.st)
        b.st = oxide_type_scalar(ctx, OXIDE_TYPE_BF16, &bf16);
    if (!b.st)
        b.st = oxide_type_vector(ctx, b.i32, 4, &v4i32);
    if (!b.st)
        b.st = oxide_type_vector(ctx, b.i32, 2, &v2i32);
    kb_gemm g;
    kb_gemm_params(&b, OXIDE_SCALAR_BF16, &g);
    oxide_value *A = g.a, *B = g.b, *C = g.c, *M = g.m, *N = g.n, *K = g.k;
    /* 2 blocks per SM: 128 registers a thread holds the 64 accumulators and the fragments */
    kb_launch_bounds(&b, THREADS, 2);
    if (!b.st)
        b.st = oxide_kernel_set_dyn_smem(b.fn, STAGES * STAGE_BYTES);
    kb_entry(&b);

    /* Shapes the tiling does not cover, or slices too short for them: do nothing (the grid must
     * be exactly (n / BN, m / BM); m * k, k * n and m * n below 2^31). */
    oxide_value *M64 = kb_cast(&b, OXIDE_OP_ZEXT, M, b.i64), *N64 = kb_cast(&b, OXIDE_OP_ZEXT, N, b.i64);
    oxide_value *K64 = kb_cast(&b, OXIDE_OP_ZEXT, K, b.i64);
    oxide_value *misfit = kb_op2(&b, OXIDE_OP_OR, AND(M, I32(BM - 1)), AND(N, I32(BN - 1)));
    misfit = kb_op2(&b, OXIDE_OP_OR, misfit, AND(K, I32(BK - 1)));
    oxide_value *bad = kb_icmp(&b, OXIDE_PRED_NE, misfit, I32(0));
    bad = kb_op2(&b, OXIDE_OP_OR, bad, kb_icmp(&b, OXIDE_PRED_EQ, K, I32(0)));
    oxide_block *done = kb_gemm_guard(&b, &g, bad, M64, N64, K64);

    oxide_value *smem = kb_op(&b, OXIDE_OP_DYN_SMEM, NULL, 0, b.sptr, NULL, 0);
    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *lane = AND(tid, I32(31)), *warp = SHR(tid, I32(5));
    oxide_value *m0 = MUL(kb_op0(&b, OXIDE_OP_CTAID_Y), I32(BM));
    oxide_value *n0 = MUL(kb_op0(&b, OXIDE_OP_CTAID_X), I32(BN));
    oxide_value *wm = MUL(AND(warp, I32(BM / WM - 1)), I32(WM)); /* warp tile origin in the block tile */
    oxide_value *wn = MUL(SHR(warp, I32(1)), I32(WN));
    oxide_value *KT = SHR(K, I32(5)); /* k steps (BK = 32) */
    _Static_assert(BK == 32 && BM / WM == 2, "the shifts above");

    /* ldmatrix addresses within a stage, for k16 step 0 (step kk adds kk * 16 elements):
     * A x4: lane l reads row wm + l % 16 at column (l / 16) * 8 of an m16 tile;
     * B x4.trans: lane l reads k row l % 16 at column wn + (l / 16) * 8 of an n16 pair. */
    oxide_value *l16 = AND(lane, I32(15)), *lhi = MUL(SHR(lane, I32(4)), I32(8));
    oxide_value *a_ld = MUL(ADD(MUL(ADD(wm, l16), I32(A_LD)), lhi), I32(2));
    oxide_value *b_ld = ADD(I32(A_STAGE), MUL(ADD(MUL(l16, I32(B_LD)), ADD(wn, lhi)), I32(2)));

    /* prologue: steps 0 .. STAGES - 2 */
    for (int s = 0; s < STAGES - 1; s++) {
        oxide_value *in = kb_icmp(&b, OXIDE_PRED_ULT, I32(s), KT);
        issue_step(&b, smem, A, B, tid, K, N, m0, n0, kb_select(&b, in, I32(s), I32(0)), I32(s),
                   kb_select(&b, in, I32(16), I32(0)), bf16);
    }

    /* k loop: block parameters are the accumulators, then kt */
    oxide_value *lp[NACC + 1], *res[NACC];
    /* vec<4 x f32> zeros: the bits of an i128 0 (constants are scalars) */
    oxide_type *i128 = NULL;
    if (!b.st)
        b.st = oxide_type_scalar(ctx, OXIDE_TYPE_I128, &i128);
    oxide_value *zero4 = NULL;
    if (!b.st)
        b.st = oxide_build_const_int(b.cur, i128, 0, &zero4);
    zero4 = kb_cast(&b, OXIDE_OP_BITCAST, zero4, b.v4f32);
    kb_loop loop = kb_acc_loop(&b, NACC, b.v4f32, zero4, KT, lp, res);
    oxide_value *kt = lp[NACC];
    /* step kt has landed (at most STAGES - 2 younger groups in flight), for every thread; and
     * everyone is done with the buffer the next copy overwrites (step kt - 1's) */
    imm_op(&b, OXIDE_OP_CP_ASYNC_WAIT, NULL, 0, NULL, STAGES - 2);
    kb_barrier(&b);
    oxide_value *next = ADD(kt, I32(STAGES - 1));
    oxide_value *nvalid = kb_icmp(&b, OXIDE_PRED_ULT, next, KT);
    /* past the end: zero-fill from step 0's (valid) address into the free buffer */
    issue_step(&b, smem, A, B, tid, K, N, m0, n0, kb_select(&b, nvalid, next, I32(0)),
               kb_op2(&b, OXIDE_OP_UREM, next, I32(STAGES)), kb_select(&b, nvalid, I32(16), I32(0)), bf16);

    oxide_value *sbase = MUL(kb_op2(&b, OXIDE_OP_UREM, kt, I32(STAGES)), I32(STAGE_BYTES));
    oxide_value *acc[NACC + 1];
    for (int i = 0; i < NACC; i++)
        acc[i] = lp[i];
    for (int kk = 0; kk < BK / 16; kk++) {
        oxide_value *af[MT], *bfr[NT];
        for (int mi = 0; mi < MT; mi++) {
            oxide_value *p = kb_gep(&b, smem, ADD(sbase, ADD(a_ld, I32((mi * 16 * A_LD + kk * 16) * 2))), b.i8);
            af[mi] = kb_op(&b, OXIDE_OP_LDMATRIX, &p, 1, v4i32, NULL, 0);
        }
        for (int np = 0; np < NT / 2; np++) {
            oxide_value *p = kb_gep(&b, smem, ADD(sbase, ADD(b_ld, I32((kk * 16 * B_LD + np * 16) * 2))), b.i8);
            oxide_value *r = kb_op(&b, OXIDE_OP_LDMATRIX_TRANS, &p, 1, v4i32, NULL, 0);
            for (int h = 0; h < 2; h++) {
                /* registers 2h, 2h + 1: k rows 0-7 and 8-15 of n8 tile 2 * np + h */
                bfr[2 * np + h] = pair(&b, v2i32, elem(&b, r, b.i32, 2 * h), elem(&b, r, b.i32, 2 * h + 1));
            }
        }
        for (int mi = 0; mi < MT; mi++)
            for (int ni = 0; ni < NT; ni++)
                acc[mi * NT + ni] = kb_op3(&b, OXIDE_OP_MMA_BF16, af[mi], bfr[ni], acc[mi * NT + ni]);
    }
    acc[NACC] = ADD(kt, I32(1));
    kb_br(&b, loop.head, acc, NACC + 1);

    /* C fragment of an m16n8 tile: c0, c1 at row lane / 4, columns (lane % 4) * 2 + {0, 1};
     * c2, c3 eight rows further down */
    kb_set(&b, loop.exit);
    /* the zero-filling copies of the last steps must not outlive the block's shared memory */
    imm_op(&b, OXIDE_OP_CP_ASYNC_WAIT, NULL, 0, NULL, 0);
    oxide_value *crow = ADD(ADD(m0, wm), SHR(lane, I32(2)));
    oxide_value *ccol = ADD(ADD(n0, wn), MUL(AND(lane, I32(3)), I32(2)));
    for (int mi = 0; mi < MT; mi++)
        for (int half = 0; half < 2; half++) {
            oxide_value *row = ADD(crow, I32(mi * 16 + half * 8));
            oxide_value *rowp = kb_gep(&b, C, ADD(MUL(row, N), ccol), b.f32);
            for (int ni = 0; ni < NT; ni++)
                for (int e = 0; e < 2; e++)
                    kb_store(&b, elem(&b, res[mi * NT + ni], b.f32, half * 2 + e),
                             kb_gep(&b, rowp, I32(ni * 8 + e), b.f32), 4);
        }
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
