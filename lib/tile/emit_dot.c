/* tile.dot on the general path. Both operands go to shared memory, then each warp reads the
 * mma.sync fragments of its atoms with ldmatrix and issues m16n8k16 (bf16, f16) or m16n8k32
 * (fp8, sm_89+) per 32 bytes of K; the accumulator (tl_mma: each warp a (M/wm) x (N/wn) block of
 * m16n8 atoms) stays in registers. An operand is stored with K contiguous (A as [M][K], B as
 * [N][K]) and read with plain ldmatrix -- what 8-bit elements need -- or, for 16-bit elements
 * whose registers run along M (A) or N (B), the other way round and read with ldmatrix.trans, so
 * that each thread writes its registers with 16-byte stores either way. Rows are padded by 16
 * bytes so the eight row addresses of one ldmatrix fall in different banks. */
#include "lower.h"

/* Writes tile value v to shared memory at base + off: element (b, r, c) of a [B,] R x C tile at
 * byte b*st[0] + r*st[1] + c*st[2]. Registers that are neighbours in memory go out together, up
 * to 16 bytes (the offsets are multiples of the width: rows are 16-byte multiples). */
static void write_operand(tl *T, const oxide_value *v, oxide_value *base, uint32_t off, const uint32_t st3[3],
                          uint32_t es) {
    tl_layout tmp, L = *tl_layout_of(T, v, &tmp);
    oxide_value **regs = tl_regs_in(T, v, &L);
    oxide_value *c[3];
    tl_thread_coords(T, &L, c);
    uint32_t rank = L.rank;
    const uint32_t *st = st3 + (3 - rank);
    oxide_value *tb = tl_int(T, T->ti32, off);
    for (uint32_t d = 0; d < rank; d++)
        tb = tl_op2(T, OXIDE_OP_ADD, tb, tl_op2(T, OXIDE_OP_MUL, c[d], tl_int(T, T->ti32, st[d])));
    uint32_t vb = 0;
    for (uint32_t d = 0; d < rank; d++)
        if (st[d] == es)
            vb = tl_run_along(&L, d);
    while ((es << vb) > 16 || vb > 3) /* 16 bytes, 8 elements (the widest vector) */
        vb--;
    uint32_t n = 1u << vb;
    oxide_type *et = tl_elem(T, v->type), *vt = NULL, *it = NULL;
    oxide_type_kind ik = es * n == 16  ? OXIDE_TYPE_I128
                         : es * n == 8 ? OXIDE_TYPE_I64
                         : es * n == 4 ? OXIDE_TYPE_I32
                                       : OXIDE_TYPE_I16;
    if (n > 1 && (oxide_type_vector(T->ctx, et, n, &vt) || oxide_type_scalar(T->ctx, ik, &it)))
        n = 1;
    for (uint32_t g = 0; regs && g < 1u << L.nreg && !T->st; g += n) {
        uint32_t e = tl_reg_elem(&L, g), k = 0;
        for (uint32_t d = 0; d < rank; d++)
            k += (e >> tl_dim_off(L.shape, rank, d) & (L.shape[d] - 1)) * st[d];
        oxide_value *p = tl_smem_elem(T, base, tl_op2(T, OXIDE_OP_ADD, tb, tl_int(T, T->ti32, k)), T->ti8);
        oxide_value *val = regs[g];
        if (n > 1) {
            /* a vector to insert into: the bits of an integer 0 (constants are scalars) */
            val = tl_cast(T, OXIDE_OP_BITCAST, tl_int(T, it, 0), vt);
            for (uint32_t i = 0; i < n; i++) {
                oxide_value *o[2] = {val, regs[g + i]};
                val = tl_imm_op(T, OXIDE_OP_INSERT, i, NULL, o, 2);
            }
        }
        oxide_value *o[2] = {val, p};
        oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = es * n};
        tl_op(T, OXIDE_OP_STORE, o, 2, NULL, &al, 1);
    }
}

static oxide_value *ldmatrix(tl *T, bool trans, oxide_value *base, oxide_value *byte, oxide_type *vt) {
    oxide_value *p = tl_smem_elem(T, base, byte, T->ti8);
    return tl_op(T, trans ? OXIDE_OP_LDMATRIX_TRANS : OXIDE_OP_LDMATRIX, &p, 1, vt, NULL, 0);
}

static oxide_value *extract(tl *T, oxide_value *v, uint32_t i, oxide_type *et) {
    return tl_imm_op(T, OXIDE_OP_EXTRACT, i, et, &v, 1);
}

static oxide_value *insert(tl *T, oxide_value *v, oxide_value *e, uint32_t i) {
    oxide_value *o[2] = {v, e};
    return tl_imm_op(T, OXIDE_OP_INSERT, i, NULL, o, 2);
}

static oxide_value *add(tl *T, oxide_value *a, oxide_value *b) { return tl_op2(T, OXIDE_OP_ADD, a, b); }
static oxide_value *mul(tl *T, oxide_value *a, uint32_t k) { return tl_op2(T, OXIDE_OP_MUL, a, tl_int(T, T->ti32, k)); }

/* Where the lanes' ldmatrix of one operand read, for batch bb, K step ks and atom i (of M for A,
 * of N for B): in write_operand's rows at byte lane + bb * b_step + ks * ks_step + i * i_step, or
 * (swz) in pipeline.c's swizzled tile of R rows at row row + ks * row_ks + i * row_i, chunk
 * cq + ks * cq_ks + i * cq_i. */
typedef struct dot_src {
    oxide_value *base;
    bool trans, swz;
    oxide_value *lane, *row, *cq;
    uint32_t b_step, ks_step, i_step, R, row_ks, row_i, cq_ks, cq_i;
} dot_src;

static oxide_value *src_read(tl *T, const dot_src *s, uint32_t bb, uint32_t ks, uint32_t i, oxide_type *vt) {
    oxide_value *byte = s->swz ? tl_swizzle_at(T, add(T, s->row, tl_int(T, T->ti32, ks * s->row_ks + i * s->row_i)),
                                               add(T, s->cq, tl_int(T, T->ti32, ks * s->cq_ks + i * s->cq_i)), s->R)
                               : add(T, s->lane, tl_int(T, T->ti32, bb * s->b_step + ks * s->ks_step + i * s->i_step));
    return ldmatrix(T, s->trans, s->base, byte, vt);
}

/* A warp's place in the dot: the first row (m0) and column (n0) of its block of atoms, and the
 * lane's parts: l % 8 (lr), l / 8 & 1 (q1), l / 16 (q2). */
typedef struct dot_lane {
    oxide_value *m0, *n0, *lr, *q1, *q2;
} dot_lane;

/* Both operands written to scratch shared memory with K contiguous, or the other way round for a
 * 16-bit operand whose registers run along M (A) or N (B). The row address lane l gives
 * ldmatrix. A, x4: matrix l/8 covers rows (l/8 & 1)*8.. of M and k (l/16)*8..: stored [M][K], row
 * m = m0 + (l/8 & 1)*8 + l%8 at k byte (l/16)*16; stored [K][M] (.trans), row k = (l/16)*8 + l%8
 * at m = m0 + (l/8 & 1)*8. B, x2: matrix l/8 & 1 covers k (l/8 & 1)*8..: stored [N][K], row n =
 * n0 + l%8 at k byte (l/8 & 1)*16; stored [K][N] (.trans), row k = (l/8 & 1)*8 + l%8 at n = n0. */
static void scratch_sources(tl *T, const oxide_inst *in, const dot_lane *w, uint32_t esize, uint32_t kstep, dot_src *A,
                            dot_src *B) {
    const oxide_value *av = in->operands[0], *bv = in->operands[1];
    const oxide_type *at = av->type;
    uint32_t rank = at->rank, batch = rank == 3 ? at->shape[0] : 1;
    uint32_t M = at->shape[rank - 2], K = at->shape[rank - 1], N = bv->type->shape[rank - 1];
    tl_layout la_, lb_;
    const tl_layout *LA = tl_layout_of(T, av, &la_), *LB = tl_layout_of(T, bv, &lb_);
    bool fp8 = esize == 1;
    bool ta = !fp8 && tl_run_along(LA, rank - 2) > tl_run_along(LA, rank - 1);
    bool tb = !fp8 && tl_run_along(LB, rank - 1) > tl_run_along(LB, rank - 2);
    uint32_t pa = (ta ? M : K) * esize + 16, pb = (tb ? N : K) * esize + 16;
    uint32_t bsa = (ta ? K : M) * pa, bsb = (tb ? K : N) * pb, size_a = batch * bsa, size_b = batch * bsb;
    oxide_value *base = tl_smem_at(T, (uint64_t)size_a + size_b);
    tl_barrier(T);
    uint32_t sa[3] = {bsa, ta ? esize : pa, ta ? pa : esize}, sb[3] = {bsb, tb ? pb : esize, tb ? esize : pb};
    write_operand(T, av, base, 0, sa, esize);
    write_operand(T, bv, base, size_a, sb, esize);
    tl_barrier(T);
    *A = (dot_src){.base = base, .trans = ta, .b_step = bsa};
    *B = (dot_src){.base = base, .trans = tb, .b_step = bsb};
    if (!ta)
        A->lane = add(T, mul(T, add(T, w->m0, add(T, mul(T, w->q1, 8), w->lr)), pa), mul(T, w->q2, 16));
    else
        A->lane = add(T, mul(T, add(T, mul(T, w->q2, 8), w->lr), pa), mul(T, add(T, w->m0, mul(T, w->q1, 8)), esize));
    if (!tb)
        B->lane = add(T, mul(T, add(T, w->n0, w->lr), pb), mul(T, w->q1, 16));
    else
        B->lane = add(T, mul(T, add(T, mul(T, w->q1, 8), w->lr), pb), mul(T, w->n0, esize));
    B->lane = add(T, B->lane, tl_int(T, T->ti32, size_a));
    /* per step of K (kstep elements, 32 bytes) and per atom, what the addresses move by */
    A->ks_step = ta ? kstep * pa : 32, B->ks_step = tb ? kstep * pb : 32;
    A->i_step = ta ? 16 * esize : 16 * pa, B->i_step = tb ? 8 * esize : 8 * pb;
}

/* Both operands in the smem tiles emit_mma_smem.c chose: A [M][K] and B [K][N] as loaded, read
 * with ldmatrix and ldmatrix.trans at the same lanes' rows as the unswizzled [M][K] and [K][N]
 * (16-byte chunk k/8 of row m; chunk n/8 of row k). */
static void tile_sources(tl *T, const oxide_inst *in, const dot_lane *w, dot_src *A, dot_src *B) {
    const oxide_type *at = in->operands[0]->type;
    oxide_value *abase, *bbase;
    const tl_pipe *p = tl_dot_slots(T, in->operands[0]->def, in->operands[1]->def, &abase, &bbase);
    /* this thread's copies have landed (a later iteration's may still fly), then everyone's */
    tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, p ? (int64_t)(tl_pipe_ahead(p) * p->nloads) : 0, NULL, NULL, 0);
    tl_barrier(T);
    *A = (dot_src){.base = abase,
                   .swz = true,
                   .row = add(T, w->m0, add(T, mul(T, w->q1, 8), w->lr)),
                   .cq = w->q2,
                   .R = at->shape[0],
                   .row_i = 16,
                   .cq_ks = 2};
    *B = (dot_src){.base = bbase,
                   .trans = true,
                   .swz = true,
                   .row = add(T, mul(T, w->q1, 8), w->lr),
                   .cq = tl_op2(T, OXIDE_OP_LSHR, w->n0, tl_int(T, T->ti32, 3)),
                   .R = at->shape[1],
                   .row_ks = 16,
                   .cq_i = 1};
}

void tl_emit_dot(tl *T, const oxide_inst *in) {
    const oxide_value *av = in->operands[0], *bv = in->operands[1];
    tl_val *r = tl_val_of(T, in->result);
    const oxide_type *at = av->type, *ae = oxide__tile_scalar(at), *be = oxide__tile_scalar(bv->type);
    uint32_t rank = at->rank, batch = rank == 3 ? at->shape[0] : 1;
    uint32_t M = at->shape[rank - 2], K = at->shape[rank - 1], N = bv->type->shape[rank - 1];
    bool fp8 = oxide__type_is_fp8(ae);
    oxide_op op = ae->kind == OXIDE_TYPE_BF16 ? OXIDE_OP_MMA_BF16 : OXIDE_OP_MMA_F16;
    if (fp8) {
        bool a4 = ae->kind == OXIDE_TYPE_F8E4M3, b4 = be->kind == OXIDE_TYPE_F8E4M3;
        op = a4 ? (b4 ? OXIDE_OP_MMA_E4M3_E4M3 : OXIDE_OP_MMA_E4M3_E5M2)
                : (b4 ? OXIDE_OP_MMA_E5M2_E4M3 : OXIDE_OP_MMA_E5M2_E5M2);
    }
    /* one mma step takes 32 bytes of K: 16 elements of 16 bits, 32 of fp8 */
    uint32_t esize = fp8 ? 1 : 2, kstep = 32 / esize;
    /* the accumulator first: a conversion of it would reuse the scratch the operands go to */
    oxide_value **acc = tl_regs_in(T, in->operands[2], &r->L);
    if (!(r->regs = tl_new_regs(T, &r->L)) || !acc)
        return;
    uint32_t wm, wn;
    tl_mma_split(in->result->type, T->warps, &wm, &wn);
    uint32_t WM = M / wm, WN = N / wn, am = WM / 16, an = WN / 8;
    oxide_value *wr = tl_op2(T, OXIDE_OP_AND, T->warp, tl_int(T, T->ti32, wm - 1));
    oxide_value *wc = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, T->warp, tl_int(T, T->ti32, tl_bits(wm))),
                             tl_int(T, T->ti32, wn - 1));
    oxide_value *q = tl_op2(T, OXIDE_OP_LSHR, T->lane, tl_int(T, T->ti32, 3));
    dot_lane w = {mul(T, wr, WM), mul(T, wc, WN), tl_op2(T, OXIDE_OP_AND, T->lane, tl_int(T, T->ti32, 7)),
                  tl_op2(T, OXIDE_OP_AND, q, tl_int(T, T->ti32, 1)),
                  tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, q, tl_int(T, T->ti32, 1)), tl_int(T, T->ti32, 1))};
    dot_src A, B;
    if (tl_mma_smem_load(T, av) && tl_mma_smem_load(T, bv))
        tile_sources(T, in, &w, &A, &B);
    else
        scratch_sources(T, in, &w, esize, kstep, &A, &B);
    oxide_type *v4i, *v2i, *v4f;
    oxide_type_vector(T->ctx, T->ti32, 4, &v4i);
    oxide_type_vector(T->ctx, T->ti32, 2, &v2i);
    oxide_type_vector(T->ctx, T->tf32, 4, &v4f);
    uint32_t nbm = tl_bits(an), nbb = nbm + tl_bits(am);
    /* vectors to insert into: the bits of an i128 0 (constants are scalars) */
    oxide_value *z128 = tl_int(T, T->ctx->scalars[OXIDE_TYPE_I128], 0);
    oxide_value *zero4 = tl_cast(T, OXIDE_OP_BITCAST, z128, v4f);
    oxide_value **av4 = oxide__alloc(&T->out->arena, am * sizeof *av4);
    oxide_value **bv2 = oxide__alloc(&T->out->arena, an * sizeof *bv2);
    oxide_value **cv = oxide__alloc(&T->out->arena, (size_t)am * an * sizeof *cv);
    if (!av4 || !bv2 || !cv) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    for (uint32_t bb = 0; bb < batch && !T->st; bb++) {
        for (uint32_t a = 0; a < am * an; a++) {
            uint32_t mi = a / an, ni = a % an, r0 = ni << 2 | mi << (2 + nbm) | bb << (2 + nbb);
            cv[a] = zero4;
            for (uint32_t j = 0; j < 4; j++)
                cv[a] = insert(T, cv[a], acc[r0 | j], j);
        }
        for (uint32_t ks = 0; ks < K / kstep && !T->st; ks++) {
            for (uint32_t mi = 0; mi < am; mi++)
                av4[mi] = src_read(T, &A, bb, ks, mi, v4i);
            for (uint32_t ni = 0; ni < an; ni++)
                bv2[ni] = src_read(T, &B, bb, ks, ni, v2i);
            for (uint32_t a = 0; a < am * an; a++) {
                oxide_value *o[3] = {av4[a / an], bv2[a % an], cv[a]};
                cv[a] = tl_op(T, op, o, 3, NULL, NULL, 0);
            }
        }
        for (uint32_t a = 0; a < am * an && !T->st; a++) {
            uint32_t mi = a / an, ni = a % an, r0 = ni << 2 | mi << (2 + nbm) | bb << (2 + nbb);
            for (uint32_t j = 0; j < 4; j++)
                r->regs[r0 | j] = extract(T, cv[a], j, T->tf32);
        }
    }
}
