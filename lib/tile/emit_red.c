/* Reductions and shape ops. A reduction combines, in this order, the registers that hold
 * elements of the reduced dim, the lanes (shfl.xor butterflies, after which every lane of the
 * group holds the result), and the warps (through shared memory); the result's layout is its
 * operand's with the reduced dim's bits gone (tl_layout_reduce), so its copies sit where the
 * reduced elements were. Shape ops only relabel (lib/tile/layout.c). */
#include "lower.h"

static bool is_half(const oxide_type *t) { return t->kind == OXIDE_TYPE_F16 || t->kind == OXIDE_TYPE_BF16; }

/* sum, max or min of a and b; float max and min propagate NaN (a + b is NaN when either is). */
static oxide_value *combine(tl *T, uint8_t kind, oxide_value *a, oxide_value *b) {
    bool f = oxide__type_is_float(a->type);
    if (kind == OXIDE_REDUCE_SUM)
        return tl_op2(T, OXIDE_OP_ADD, a, b);
    if (!f)
        return tl_op2(T, kind == OXIDE_REDUCE_MAX ? OXIDE_OP_SMAX : OXIDE_OP_SMIN, a, b);
    oxide_value *m = tl_op2(T, kind == OXIDE_REDUCE_MAX ? OXIDE_OP_FMAX : OXIDE_OP_FMIN, a, b);
    oxide_value *nan = tl_cmp(T, OXIDE_OP_FCMP, OXIDE_PRED_UNO, a, b);
    return tl_sel(T, nan, tl_op2(T, OXIDE_OP_ADD, a, b), m);
}

static uint32_t scatter(uint32_t v, const uint8_t *bits, uint32_t n) {
    uint32_t r = 0;
    for (uint32_t i = 0; i < n; i++)
        r |= (v >> i & 1) << bits[i];
    return r;
}

/* Combines the partials v[0..n) of the warps that differ only in the bits wred, where every lane
 * of a warp holds the same partials: each warp writes its n to shared memory, then lane l reads
 * those of the warp whose reduced bits are l's low bits, and a butterfly over those lane bits
 * combines them: n loads and n * log2(warps) shuffles a thread, not n loads per warp. */
/* Partial r of slot s in the scratch at base (n partials a slot). */
static oxide_value *partial_at(tl *T, oxide_value *base, oxide_value *s, uint32_t n, uint32_t r, oxide_type *at) {
    oxide_value *i = tl_op2(T, OXIDE_OP_MUL, s, tl_int(T, T->ti32, n));
    return tl_smem_elem(T, base, tl_op2(T, OXIDE_OP_ADD, i, tl_int(T, T->ti32, r)), at);
}

/* Writes v[0..n) to slot s of a scratch of slots x n partials, between barriers (the first: the
 * scratch's last readers are done); returns the scratch. */
static oxide_value *publish(tl *T, oxide_value *const *v, uint32_t n, oxide_type *at, oxide_value *s, uint32_t slots) {
    oxide_value *base = tl_smem_at(T, (uint64_t)slots * n * (oxide__type_bits(at) / 8));
    tl_barrier(T);
    for (uint32_t r = 0; r < n && !T->st; r++) {
        oxide_value *o[2] = {v[r], partial_at(T, base, s, n, r, at)};
        tl_op(T, OXIDE_OP_STORE, o, 2, NULL, NULL, 0);
    }
    tl_barrier(T);
    return base;
}

static void across_warps(tl *T, uint8_t kind, oxide_value **v, uint32_t n, uint32_t wred, oxide_type *at) {
    /* every lane of a warp stores the same values to the same places */
    oxide_value *base = publish(T, v, n, at, T->warp, T->warps);
    /* the warp lane l reads: its own warp's other bits, and l's bit i at wred's i-th bit */
    oxide_value *from = tl_op2(T, OXIDE_OP_AND, T->warp, tl_int(T, T->ti32, ~wred & (T->warps - 1)));
    uint32_t nb = 0;
    for (uint32_t b = 0; b < 5; b++)
        if (wred >> b & 1) {
            oxide_value *l = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, T->lane, tl_int(T, T->ti32, nb)),
                                    tl_int(T, T->ti32, 1));
            from = tl_op2(T, OXIDE_OP_OR, from, tl_op2(T, OXIDE_OP_SHL, l, tl_int(T, T->ti32, b)));
            nb++;
        }
    for (uint32_t r = 0; r < n && !T->st; r++) {
        oxide_value *p = partial_at(T, base, from, n, r, at);
        v[r] = tl_op(T, OXIDE_OP_LOAD, &p, 1, at, NULL, 0);
        for (uint32_t i = 0; i < nb; i++) {
            oxide_value *o[2] = {v[r], tl_int(T, T->ti32, 1u << i)};
            v[r] = combine(T, kind, v[r], tl_op(T, OXIDE_OP_SHFL_XOR, o, 2, NULL, NULL, 0));
        }
    }
}

void tl_emit_reduce(tl *T, const oxide_inst *in) {
    const oxide_value *sv = in->operands[0];
    tl_layout tmp, L = *tl_layout_of(T, sv, &tmp);
    oxide_value **src = tl_regs_in(T, sv, &L);
    uint32_t axis = (uint32_t)in->imm, lo = tl_dim_off(L.shape, L.rank, axis), hi = lo + tl_bits(L.shape[axis]);
    const oxide_type *e = oxide__tile_scalar(sv->type);
    oxide_type *et = tl_elem(T, sv->type);
    /* f16 and bf16 accumulate in f32; i8 in i32 (the same sum modulo 256) */
    oxide_type *at = is_half(e) ? T->tf32 : e->kind == OXIDE_TYPE_I8 ? T->ti32 : et;
    uint8_t kept[TL_MAXBITS], red[TL_MAXBITS];
    uint32_t nk = 0, nr = 0;
    for (uint32_t i = 0; i < L.nreg; i++) {
        if ((uint32_t)L.reg[i] >= lo && (uint32_t)L.reg[i] < hi)
            red[nr++] = (uint8_t)i;
        else
            kept[nk++] = (uint8_t)i;
    }
    oxide_value **v = oxide__alloc(&T->out->arena, sizeof *v << nk);
    if (!v || !src) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    for (uint32_t r = 0; r < 1u << nk && !T->st; r++) {
        oxide_value *acc = NULL;
        for (uint32_t c = 0; c < 1u << nr; c++) {
            oxide_value *y = src[scatter(r, kept, nk) | scatter(c, red, nr)];
            if (at != et)
                y = tl_cast(T, is_half(e) ? OXIDE_OP_FPEXT : OXIDE_OP_SEXT, y, at);
            acc = acc ? combine(T, in->kind, acc, y) : y;
        }
        v[r] = acc;
    }
    for (uint32_t j = 0; j < 5; j++) {
        if (L.lane[j] < 0 || (uint32_t)L.lane[j] < lo || (uint32_t)L.lane[j] >= hi)
            continue;
        for (uint32_t r = 0; r < 1u << nk && !T->st; r++) {
            oxide_value *o[2] = {v[r], tl_int(T, T->ti32, 1u << j)};
            v[r] = combine(T, in->kind, v[r], tl_op(T, OXIDE_OP_SHFL_XOR, o, 2, NULL, NULL, 0));
        }
    }
    uint32_t wred = 0;
    for (uint32_t j = 0; j < L.nwarp; j++)
        if (L.warp[j] >= 0 && (uint32_t)L.warp[j] >= lo && (uint32_t)L.warp[j] < hi)
            wred |= 1u << j;
    /* after the butterflies, every lane of a warp holds the same partials where each lane bit
     * is a reduced bit or a copy (the reduced dim spans the warp, as in a row's reduction) */
    bool alike = true;
    for (uint32_t j = 0; j < 5; j++)
        alike &= L.lane[j] < 0 || ((uint32_t)L.lane[j] >= lo && (uint32_t)L.lane[j] < hi);
    if (wred && alike)
        across_warps(T, in->kind, v, 1u << nk, wred, at);
    else if (wred) {
        /* each thread's partials at ((warp * 32 + lane) * nregs + r); each then reads those of the
         * warps that differ from its own only in the reduced bits */
        uint32_t n = 1u << nk;
        oxide_value *base = publish(T, v, n, at, T->tid, T->threads);
        oxide_value *mine = tl_op2(T, OXIDE_OP_AND, T->warp, tl_int(T, T->ti32, ~wred & (T->warps - 1)));
        for (uint32_t r = 0; r < n && !T->st; r++) {
            oxide_value *acc = NULL;
            for (uint32_t w = 0; w < T->warps; w++) {
                if (w & ~wred)
                    continue;
                oxide_value *ww = tl_op2(T, OXIDE_OP_OR, mine, tl_int(T, T->ti32, w));
                oxide_value *t = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_SHL, ww, tl_int(T, T->ti32, 5)), T->lane);
                oxide_value *p = partial_at(T, base, t, n, r, at);
                oxide_value *y = tl_op(T, OXIDE_OP_LOAD, &p, 1, at, NULL, 0);
                acc = acc ? combine(T, in->kind, acc, y) : y;
            }
            v[r] = acc;
        }
    }
    for (uint32_t r = 0; r < 1u << nk && at != et && !T->st; r++)
        v[r] = tl_cast(T, is_half(e) ? OXIDE_OP_FPTRUNC : OXIDE_OP_TRUNC, v[r], et);
    if (in->result->type->kind != OXIDE_TYPE_TILE)
        T->scal[in->result->id] = v[0];
    else
        tl_val_of(T, in->result)->regs = v;
}

void tl_emit_shape(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result), *x = tl_val_of(T, in->operands[0]);
    if (r->uniform) {
        r->scalar = x->scalar;
        return;
    }
    /* the operand in the layout this op's result comes from (it moves no data when the layouts
     * were derived from each other, as assign.c does; else the operand is converted first) */
    int32_t bitmap[TL_MAXBITS];
    tl_shape_bitmap(in, bitmap);
    tl_layout want;
    tl_project(&want, &r->L, bitmap, in->operands[0]->type);
    oxide_value **src = tl_regs_in(T, in->operands[0], &want);
    if (!(r->regs = tl_new_regs(T, &r->L)) || !src)
        return;
    /* each result register bit is an operand register bit renamed, or (broadcast) a new bit
     * along which the values repeat */
    uint32_t from[TL_MAXBITS];
    for (uint32_t i = 0; i < r->L.nreg; i++) {
        from[i] = 0;
        for (uint32_t j = 0; j < want.nreg; j++)
            if (bitmap[want.reg[j]] == r->L.reg[i])
                from[i] = 1u << j;
    }
    for (uint32_t g = 0; g < 1u << r->L.nreg; g++) {
        uint32_t sg = 0;
        for (uint32_t i = 0; i < r->L.nreg; i++)
            sg |= g >> i & 1 ? from[i] : 0;
        r->regs[g] = src[sg];
    }
}
