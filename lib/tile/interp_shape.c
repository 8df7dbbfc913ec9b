/* The tile interpreter's tile-building, shape and reduction ops: tile.full, tile.splat,
 * tile.arange, tile.cast, tile.broadcast, tile.expand_dims, tile.reshape, tile.permute, tile.dot
 * and tile.reduce (docs/tile.md, "Semantics"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

/* Row-major strides of a tile's shape, in elements. */
static void strides_of(const oxide_type *t, uint64_t *st) {
    uint64_t n = 1;
    for (uint32_t d = t->rank; d-- > 0;) {
        st[d] = n;
        n *= t->shape[d];
    }
}

/* tile.dot: for each output element, acc + a[.., m, 0] * b[.., 0, n] + a[.., m, 1] * b[.., 1, n] + ...
 * in f32, one rounding per addition, in k order. The products of bf16, f16 and fp8 values are
 * exact in f32, so a fused multiply-add gives the same result. */
static void dot(const ti_slot *a, const ti_slot *b, const ti_slot *c, ti_slot *r) {
    const oxide_type *ta = a->type, *tb = b->type;
    uint32_t o = ta->rank - 2, batches = o ? ta->shape[0] : 1;
    uint64_t m = ta->shape[o], kk = ta->shape[o + 1], n = tb->shape[o + 1];
    for (uint32_t bt = 0; bt < batches; bt++) {
        const ti_cell *pa = a->data + bt * m * kk, *pb = b->data + bt * kk * n, *pc = c->data + bt * m * n;
        ti_cell *pr = r->data + bt * m * n;
        for (uint64_t i = 0; i < m; i++) {
            for (uint64_t j = 0; j < n; j++)
                pr[i * n + j].f = (float)pc[i * n + j].f;
            for (uint64_t k = 0; k < kk; k++) {
                float av = (float)pa[i * kk + k].f;
                for (uint64_t j = 0; j < n; j++)
                    pr[i * n + j].f = (float)((float)pr[i * n + j].f + av * (float)pb[k * n + j].f);
            }
        }
    }
}

/* max/min of floats: a NaN anywhere gives NaN; +0 is above -0. */
static double float_pick(bool is_max, double acc, double x) {
    if (isnan(acc) || isnan(x))
        return isnan(acc) ? acc : x;
    if (acc == x)
        return (signbit(acc) != 0) == is_max ? x : acc;
    return (x > acc) == is_max ? x : acc;
}

/* tile.reduce along axis: index order; sums of f16 and bf16 accumulate in f32 and round once at
 * the end, integer sums wrap, max and min of integers compare signed. */
static void reduce(const ti_slot *x, ti_slot *r, uint32_t axis, oxide_reduce_kind kind) {
    const oxide_type *t = x->type;
    oxide_type_kind k = ti_kind(t);
    uint64_t outer = 1, inner = 1, len = t->shape[axis];
    for (uint32_t d = 0; d < axis; d++)
        outer *= t->shape[d];
    for (uint32_t d = axis + 1; d < t->rank; d++)
        inner *= t->shape[d];
    bool fl = oxide__ti_is_float(k);
    for (uint64_t o = 0; o < outer; o++) {
        for (uint64_t j = 0; j < inner; j++) {
            const ti_cell *p = x->data + o * len * inner + j;
            ti_cell acc = p[0];
            for (uint64_t a = 1; a < len; a++) {
                ti_cell v = p[a * inner];
                if (fl && kind == OXIDE_REDUCE_SUM)
                    acc.f = (float)((float)acc.f + (float)v.f);
                else if (fl)
                    acc.f = float_pick(kind == OXIDE_REDUCE_MAX, acc.f, v.f);
                else if (kind == OXIDE_REDUCE_SUM)
                    acc.i = oxide__ti_wrap(k, (uint64_t)acc.i + (uint64_t)v.i);
                else if (kind == OXIDE_REDUCE_MAX ? v.i > acc.i : v.i < acc.i)
                    acc = v;
            }
            if (fl)
                acc.f = oxide__ti_round(k, acc.f);
            r->data[o * inner + j] = acc;
        }
    }
}

/* broadcast, expand_dims, reshape, permute: result element e takes operand element src(e). */
static void move(const oxide_inst *in, const ti_slot *x, ti_slot *r) {
    const oxide_type *tx = x->type, *tr = r->type;
    if (in->op == OXIDE_OP_TILE_RESHAPE || in->op == OXIDE_OP_TILE_EXPAND_DIMS) {
        memcpy(r->data, x->data, r->n * sizeof *r->data); /* row-major order is kept */
        return;
    }
    uint64_t sx[3], from[3] = {0, 0, 0};
    strides_of(tx, sx);
    for (uint32_t d = 0; d < tr->rank; d++) {
        if (in->op == OXIDE_OP_TILE_BROADCAST) /* a stretched dim always reads index 0 */
            from[d] = tx->shape[d] == 1 ? 0 : sx[d];
        else /* permute: result dim d walks operand dim perm[d] */
            from[d] = sx[(in->perm >> (4 * d)) & 15];
    }
    uint32_t idx[3] = {0, 0, 0};
    for (uint64_t e = 0; e < r->n; e++) {
        uint64_t src = 0;
        for (uint32_t d = 0; d < tr->rank; d++)
            src += idx[d] * from[d];
        r->data[e] = x->data[src];
        for (uint32_t d = tr->rank; d-- > 0;) {
            if (++idx[d] < tr->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

oxide_status oxide__ti_shape(ti_state *s, const oxide_inst *in) {
    ti_slot *r;
    oxide_status st = oxide__ti_def(s, in->result, &r);
    if (st)
        return st;
    const ti_slot *x = in->noperands ? ti_get(s, in->operands[0]) : NULL;
    oxide_type_kind rk = ti_kind(r->type);
    switch (in->op) {
    case OXIDE_OP_TILE_FULL:
    case OXIDE_OP_TILE_SPLAT: {
        ti_cell v;
        if (x)
            v = x->data[0];
        else if (oxide__ti_is_float(rk))
            v.f = in->fvalue;
        else
            v.i = oxide__ti_wrap(rk, (uint64_t)in->ivalue);
        for (uint64_t e = 0; e < r->n; e++)
            r->data[e] = v;
        return OXIDE_OK;
    }
    case OXIDE_OP_TILE_ARANGE:
        for (uint64_t e = 0; e < r->n; e++)
            r->data[e].i = (int64_t)e;
        return OXIDE_OK;
    case OXIDE_OP_TILE_CAST:
        for (uint64_t e = 0; e < r->n; e++)
            r->data[e] = oxide__ti_convert(ti_kind(x->type), rk, x->data[e]);
        return OXIDE_OK;
    case OXIDE_OP_TILE_DOT: dot(x, ti_get(s, in->operands[1]), ti_get(s, in->operands[2]), r); return OXIDE_OK;
    case OXIDE_OP_TILE_REDUCE: reduce(x, r, (uint32_t)in->imm, (oxide_reduce_kind)in->kind); return OXIDE_OK;
    default: move(in, x, r); return OXIDE_OK;
    }
}
