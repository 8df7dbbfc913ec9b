/* tile.dot on the general path: both operands go to shared memory with K contiguous (A as
 * [M][K], B transposed to [N][K]), so that ldmatrix without .trans gives the mma.sync fragments
 * for 16-bit (m16n8k16) and 8-bit (m16n8k32, sm_89+) elements alike: either way a fragment row
 * is 16 bytes of K; each warp owns a (M/wm) x (N/wn) block of m16n8 atoms of
 * the accumulator (tl_mma), which stays in registers. Rows are padded by 16 bytes so the eight
 * row addresses of one ldmatrix fall in different banks. */
#include "lower.h"

/* Writes tile value v to shared memory at base + off: element (b, r, c) of a [B,] R x C tile at
 * byte b*bstride + r*rstride + c*cstride. */
static void write_operand(tl *T, const oxide_value *v, oxide_value *base, uint32_t off, uint32_t bstride,
                          uint32_t rstride, uint32_t cstride) {
    tl_val *x = tl_val_of(T, v);
    tl_layout L;
    if (x->uniform)
        tl_blocked(&L, v->type, T->warps);
    else
        L = x->L;
    oxide_value **regs = tl_regs_in(T, v, &L);
    oxide_value *c[3];
    tl_thread_coords(T, &L, c);
    uint32_t rank = L.rank;
    uint32_t strides[3] = {bstride, rstride, cstride};
    const uint32_t *st = strides + (3 - rank);
    oxide_value *tb = tl_int(T, T->ti32, off);
    for (uint32_t d = 0; d < rank; d++)
        tb = tl_op2(T, OXIDE_OP_ADD, tb, tl_op2(T, OXIDE_OP_MUL, c[d], tl_int(T, T->ti32, st[d])));
    for (uint32_t g = 0; regs && g < 1u << L.nreg && !T->st; g++) {
        uint32_t e = tl_reg_elem(&L, g), k = 0;
        for (uint32_t d = 0; d < rank; d++)
            k += (e >> tl_dim_off(L.shape, rank, d) & (L.shape[d] - 1)) * st[d];
        oxide_value *p = tl_smem_elem(T, base, tl_op2(T, OXIDE_OP_ADD, tb, tl_int(T, T->ti32, k)), T->ti8);
        oxide_value *o[2] = {regs[g], p};
        tl_op(T, OXIDE_OP_STORE, o, 2, NULL, NULL, 0);
    }
}

static oxide_value *ldmatrix(tl *T, oxide_value *base, oxide_value *byte, oxide_type *vt) {
    oxide_value *p = tl_smem_elem(T, base, byte, T->ti8);
    return tl_op(T, OXIDE_OP_LDMATRIX, &p, 1, vt, NULL, 0);
}

static oxide_value *extract(tl *T, oxide_value *v, uint32_t i, oxide_type *et) {
    return tl_imm_op(T, OXIDE_OP_EXTRACT, i, et, &v, 1);
}

static oxide_value *insert(tl *T, oxide_value *v, oxide_value *e, uint32_t i) {
    oxide_value *o[2] = {v, e};
    return tl_imm_op(T, OXIDE_OP_INSERT, i, NULL, o, 2);
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
    uint32_t esize = fp8 ? 1 : 2, kstep = 32 / esize, pitch = K * esize + 16;
    if (K % kstep) {
        tl_fail(T, OXIDE_ERROR_UNSUPPORTED, "an fp8 tile.dot needs K to be a multiple of 32, got K=%u", K);
        return;
    }
    uint32_t size_a = batch * M * pitch, size_b = batch * N * pitch;
    /* the accumulator first: a conversion of it would reuse the scratch the operands go to */
    oxide_value **acc = tl_regs_in(T, in->operands[2], &r->L);
    oxide_value *base = tl_smem_at(T, (uint64_t)size_a + size_b);
    if (!(r->regs = tl_new_regs(T, &r->L)) || !acc)
        return;
    tl_barrier(T);
    write_operand(T, av, base, 0, M * pitch, pitch, esize);
    write_operand(T, bv, base, size_a, N * pitch, esize, pitch); /* (k, n) at n*pitch + k */
    tl_barrier(T);

    uint32_t wm, wn;
    tl_mma_split(in->result->type, T->warps, &wm, &wn);
    uint32_t WM = M / wm, WN = N / wn, am = WM / 16, an = WN / 8;
    oxide_value *wr = tl_op2(T, OXIDE_OP_AND, T->warp, tl_int(T, T->ti32, wm - 1));
    oxide_value *wc = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, T->warp, tl_int(T, T->ti32, tl_bits(wm))),
                             tl_int(T, T->ti32, wn - 1));
    oxide_value *lr = tl_op2(T, OXIDE_OP_AND, T->lane, tl_int(T, T->ti32, 7));
    oxide_value *q = tl_op2(T, OXIDE_OP_LSHR, T->lane, tl_int(T, T->ti32, 3));
    oxide_value *q1 = tl_op2(T, OXIDE_OP_AND, q, tl_int(T, T->ti32, 1));
    oxide_value *q2 = tl_op2(T, OXIDE_OP_LSHR, q, tl_int(T, T->ti32, 1));
    oxide_value *q2b = tl_op2(T, OXIDE_OP_AND, q2, tl_int(T, T->ti32, 1));
    /* ldmatrix.x4 for A: lane l gives row (l/8 & 1)*8 + l%8 of matrix l/8, at k byte (l/16)*16;
     * x2 for B: row l%8 (an n), at k byte (l/8 & 1)*16 */
    oxide_value *rowa = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, wr, tl_int(T, T->ti32, WM)),
                               tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_SHL, q1, tl_int(T, T->ti32, 3)), lr));
    oxide_value *la = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, rowa, tl_int(T, T->ti32, pitch)),
                             tl_op2(T, OXIDE_OP_SHL, q2b, tl_int(T, T->ti32, 4)));
    oxide_value *rowb = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, wc, tl_int(T, T->ti32, WN)), lr);
    oxide_value *lb = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, rowb, tl_int(T, T->ti32, pitch)),
                             tl_op2(T, OXIDE_OP_SHL, q1, tl_int(T, T->ti32, 4)));
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
            uint32_t ka = bb * M * pitch + ks * kstep * esize, kb = size_a + bb * N * pitch + ks * kstep * esize;
            for (uint32_t mi = 0; mi < am; mi++)
                av4[mi] = ldmatrix(T, base, tl_op2(T, OXIDE_OP_ADD, la, tl_int(T, T->ti32, ka + mi * 16 * pitch)), v4i);
            for (uint32_t ni = 0; ni < an; ni++)
                bv2[ni] = ldmatrix(T, base, tl_op2(T, OXIDE_OP_ADD, lb, tl_int(T, T->ti32, kb + ni * 8 * pitch)), v2i);
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
