/* sgemm: C = A * B (row-major f32), the classic register-blocked shared-memory algorithm.
 *
 * A block computes a BM x BN tile of C with 256 threads, each owning a TM x TN (8 x 8)
 * micro-tile held in registers. Per step of BK along k, the block stages A's BM x BK panel
 * (stored transposed, so a thread's 8 A values are contiguous) and B's BK x BN panel in
 * shared memory with 16-byte loads, then every thread does BK rank-1 updates of its
 * micro-tile from 16-byte shared loads. The k loop carries the 64 accumulators as block
 * parameters; the BK and micro-tile loops are unrolled here, as `#pragma unroll` does in the
 * CUDA twin (bench/cuda/sgemm.cu), which is the same algorithm line for line. */
#include "kbuild.h"
#include "oxide_examples.h"

#define BM OXIDE_EXAMPLE_SGEMM_BM
#define BN OXIDE_EXAMPLE_SGEMM_BN
#define BK OXIDE_EXAMPLE_SGEMM_BK
#define TM OXIDE_EXAMPLE_SGEMM_TM
#define TN OXIDE_EXAMPLE_SGEMM_TN
#define NACC (TM * TN)

_Static_assert(BM *BK == OXIDE_EXAMPLE_SGEMM_THREADS * 4 && BN * BK == OXIDE_EXAMPLE_SGEMM_THREADS * 4,
               "each thread stages one float4 of A and one of B per k step");
_Static_assert((BM / TM) * (BN / TN) == OXIDE_EXAMPLE_SGEMM_THREADS, "one micro-tile per thread");
_Static_assert(TM == 8 && TN == 8, "fragments are read as two float4 each");

#define I32(v) kb_i32(&b, (v))
#define ADD(x, y) kb_op2(&b, OXIDE_OP_ADD, (x), (y))
#define MUL(x, y) kb_op2(&b, OXIDE_OP_MUL, (x), (y))

static oxide_value *extract(kb *b, oxide_value *vec, int i) {
    oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = i};
    return kb_op(b, OXIDE_OP_EXTRACT, &vec, 1, b->f32, &a, 1);
}

oxide_status oxide_example_sgemm(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "sgemm");
    kb_gemm g;
    kb_gemm_params(&b, OXIDE_SCALAR_F32, &g);
    oxide_value *A = g.a, *B = g.b, *C = g.c, *M = g.m, *N = g.n, *K = g.k;
    /* 2 blocks per SM caps registers at 128 a thread: room for the 64 accumulators and both
     * fragments without spilling. */
    kb_launch_bounds(&b, OXIDE_EXAMPLE_SGEMM_THREADS, 2);
    kb_entry(&b);

    /* Shapes the tiling does not cover, or slices too short for them, make the kernel do
     * nothing rather than touch memory outside the slices. (The grid must be exactly
     * (n / BN, m / BM), and m * k, k * n, m * n below 2^31: the twin's contract too.) */
    oxide_value *M64 = kb_cast(&b, OXIDE_OP_ZEXT, M, b.i64), *N64 = kb_cast(&b, OXIDE_OP_ZEXT, N, b.i64);
    oxide_value *K64 = kb_cast(&b, OXIDE_OP_ZEXT, K, b.i64);
    oxide_value *misfit = kb_op2(&b, OXIDE_OP_AND, M, I32(BM - 1));
    misfit = kb_op2(&b, OXIDE_OP_OR, misfit, kb_op2(&b, OXIDE_OP_AND, N, I32(BN - 1)));
    misfit = kb_op2(&b, OXIDE_OP_OR, misfit, kb_op2(&b, OXIDE_OP_AND, K, I32(BK - 1)));
    oxide_value *bad = kb_icmp(&b, OXIDE_PRED_NE, misfit, I32(0));
    oxide_block *done = kb_gemm_guard(&b, &g, bad, M64, N64, K64);

    oxide_value *As = kb_shared_array(&b, "sgemm_as", b.f32, BK * BM, 16); /* As[k][m] */
    oxide_value *Bs = kb_shared_array(&b, "sgemm_bs", b.f32, BK * BN, 16); /* Bs[k][n] */
    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *row0 = MUL(kb_op0(&b, OXIDE_OP_CTAID_Y), I32(BM));
    oxide_value *col0 = MUL(kb_op0(&b, OXIDE_OP_CTAID_X), I32(BN));
    /* This thread's micro-tile: rows ty*TM.., columns tx*TN.. of the block's tile. */
    oxide_value *ty = kb_op2(&b, OXIDE_OP_LSHR, tid, I32(4));
    oxide_value *tx = kb_op2(&b, OXIDE_OP_AND, tid, I32(15));
    /* What this thread stages: A[row0 + a_r][k0 + a_c .. +4], B[k0 + b_r][col0 + b_c .. +4]. */
    oxide_value *a_r = kb_op2(&b, OXIDE_OP_LSHR, tid, I32(1));
    oxide_value *a_c = MUL(kb_op2(&b, OXIDE_OP_AND, tid, I32(1)), I32(4));
    oxide_value *b_r = kb_op2(&b, OXIDE_OP_LSHR, tid, I32(5));
    oxide_value *b_c = MUL(kb_op2(&b, OXIDE_OP_AND, tid, I32(31)), I32(4));
    oxide_value *a_base = ADD(MUL(ADD(row0, a_r), K), a_c);
    oxide_value *b_base = ADD(MUL(b_r, N), ADD(col0, b_c));
    oxide_value *bs_put = kb_gep(&b, Bs, ADD(MUL(b_r, I32(BN)), b_c), b.f32);
    oxide_value *as_put[4];
    for (int i = 0; i < 4; i++)
        as_put[i] = kb_gep(&b, As, ADD(MUL(ADD(a_c, I32(i)), I32(BM)), a_r), b.f32);
    oxide_value *a_frag_base = MUL(ty, I32(TM)), *b_frag_base = MUL(tx, I32(TN));
    oxide_value *fzero = kb_f32(&b, 0.0);

    /* k loop: block parameters are the accumulators, then k0. */
    oxide_value *lp[NACC + 1], *res[NACC];
    kb_loop loop = kb_acc_loop(&b, NACC, b.f32, fzero, K, lp, res);
    oxide_value *k0 = lp[NACC];
    /* Stage the panels: A's float4 is scattered transposed, B's float4 stored as is. */
    oxide_value *av = kb_load(&b, b.v4f32, kb_gep(&b, A, ADD(a_base, k0), b.f32), 16);
    oxide_value *bv = kb_load(&b, b.v4f32, kb_gep(&b, B, ADD(b_base, MUL(k0, N)), b.f32), 16);
    for (int i = 0; i < 4; i++)
        kb_store(&b, extract(&b, av, i), as_put[i], 4);
    kb_store(&b, bv, bs_put, 16);
    kb_barrier(&b);
    oxide_value *acc[NACC + 1];
    for (int i = 0; i < NACC; i++)
        acc[i] = lp[i];
    for (int kk = 0; kk < BK; kk++) {
        oxide_value *af[TM], *bf[TN];
        for (int h = 0; h < 2; h++) {
            oxide_value *a4 = kb_load(&b, b.v4f32, kb_gep(&b, As, ADD(a_frag_base, I32(kk * BM + h * 4)), b.f32), 16);
            oxide_value *b4 = kb_load(&b, b.v4f32, kb_gep(&b, Bs, ADD(b_frag_base, I32(kk * BN + h * 4)), b.f32), 16);
            for (int e = 0; e < 4; e++) {
                af[h * 4 + e] = extract(&b, a4, e);
                bf[h * 4 + e] = extract(&b, b4, e);
            }
        }
        for (int i = 0; i < TM; i++)
            for (int j = 0; j < TN; j++)
                acc[i * TN + j] = kb_op3(&b, OXIDE_OP_FMA, af[i], bf[j], acc[i * TN + j]);
    }
    /* The next step overwrites the panels: every thread must be done reading them. */
    kb_barrier(&b);
    acc[NACC] = ADD(k0, I32(BK));
    kb_br(&b, loop.head, acc, NACC + 1);

    kb_set(&b, loop.exit);
    oxide_value *crow = ADD(row0, a_frag_base), *ccol = ADD(col0, b_frag_base);
    for (int i = 0; i < TM; i++) {
        oxide_value *rowp = kb_gep(&b, C, ADD(MUL(ADD(crow, I32(i)), N), ccol), b.f32);
        for (int j = 0; j < TN; j++)
            kb_store(&b, res[i * TN + j], kb_gep(&b, rowp, I32(j), b.f32), 4);
    }
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
