/* Layouts (lib/tile/lower.h): how the elements of a tile are spread over registers, lanes and
 * warps, and how shape ops transform them without moving data. */
#include <string.h>

#include "lower.h"

uint32_t tl_bits(uint32_t n) {
    uint32_t b = 0;
    while ((1u << b) < n)
        b++;
    return b;
}

uint32_t tl_dim_off(const uint32_t *shape, uint32_t rank, uint32_t d) {
    uint32_t off = 0;
    for (uint32_t e = d + 1; e < rank; e++)
        off += tl_bits(shape[e]);
    return off;
}

static uint32_t total_bits(const tl_layout *L) {
    uint32_t b = 0;
    for (uint32_t d = 0; d < L->rank; d++)
        b += tl_bits(L->shape[d]);
    return b;
}

static void start(tl_layout *L, const oxide_type *tile, uint32_t warps) {
    memset(L, 0, sizeof *L);
    L->rank = (uint8_t)tile->rank;
    for (uint32_t d = 0; d < tile->rank; d++)
        L->shape[d] = tile->shape[d];
    L->nwarp = (uint8_t)tl_bits(warps);
    memset(L->lane, -1, sizeof L->lane);
    memset(L->warp, -1, sizeof L->warp);
}

uint32_t tl_elem_bytes(const oxide_type *e) {
    unsigned bits = oxide__type_bits(e);
    return bits >= 8 ? bits / 8 : 1; /* i1 and fp8 (no scalar width) take a byte */
}

void tl_blocked(tl_layout *L, const oxide_type *tile, uint32_t warps) {
    start(L, tile, warps);
    uint32_t B = total_bits(L), c = 0;
    /* 16 bytes per thread side by side along the last dim (one vector access), unless the tile
     * is too small to give every thread its own elements */
    uint32_t vbits = tl_bits(16 / tl_elem_bytes(tile->elem)), spread = 5 + L->nwarp;
    if (B < spread + vbits)
        vbits = B > spread ? B - spread : 0;
    while (c < vbits)
        L->reg[L->nreg++] = (int8_t)c++;
    for (uint32_t j = 0; j < 5; j++)
        L->lane[j] = c < B ? (int8_t)c++ : -1;
    for (uint32_t j = 0; j < L->nwarp; j++)
        L->warp[j] = c < B ? (int8_t)c++ : -1;
    while (c < B)
        L->reg[L->nreg++] = (int8_t)c++;
}

void tl_mma_split(const oxide_type *tile, uint32_t warps, uint32_t *wm, uint32_t *wn) {
    uint32_t M = tile->shape[tile->rank - 2], N = tile->shape[tile->rank - 1];
    *wm = warps < M / 16 ? warps : M / 16;
    uint32_t rest = warps / *wm;
    *wn = rest < N / 8 ? rest : N / 8;
}

void tl_mma(tl_layout *L, const oxide_type *tile, uint32_t warps) {
    start(L, tile, warps);
    uint32_t M = tile->shape[tile->rank - 2], N = tile->shape[tile->rank - 1], wm, wn;
    tl_mma_split(tile, warps, &wm, &wn);
    uint32_t nb = tl_bits(N), mb = tl_bits(M), wmb = tl_bits(M / wm), wnb = tl_bits(N / wn);
    /* one m16n8 accumulator: c0..c3 of lane l are row l/4 (+8 for c2, c3), column 2 (l%4) (+1) */
    L->reg[L->nreg++] = 0;
    L->lane[0] = 1, L->lane[1] = 2;
    L->lane[2] = (int8_t)nb, L->lane[3] = (int8_t)(nb + 1), L->lane[4] = (int8_t)(nb + 2);
    L->reg[L->nreg++] = (int8_t)(nb + 3);
    /* a warp's atoms: along N, then along M */
    for (uint32_t j = 3; j < wnb; j++)
        L->reg[L->nreg++] = (int8_t)j;
    for (uint32_t i = 4; i < wmb; i++)
        L->reg[L->nreg++] = (int8_t)(nb + i);
    uint32_t w = 0;
    for (uint32_t i = wmb; i < mb; i++)
        L->warp[w++] = (int8_t)(nb + i);
    for (uint32_t j = wnb; j < nb; j++)
        L->warp[w++] = (int8_t)j;
    /* batch dims: registers */
    for (uint32_t c = nb + mb; c < total_bits(L); c++)
        L->reg[L->nreg++] = (int8_t)c;
}

bool tl_layout_eq(const tl_layout *a, const tl_layout *b) {
    if (a->rank != b->rank || a->nreg != b->nreg || a->nwarp != b->nwarp)
        return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return !memcmp(a->reg, b->reg, a->nreg) && !memcmp(a->lane, b->lane, 5) && !memcmp(a->warp, b->warp, a->nwarp);
}

bool tl_layout_regperm(const tl_layout *a, const tl_layout *b, uint32_t *perm) {
    if (a->nreg != b->nreg || memcmp(a->lane, b->lane, 5) || a->nwarp != b->nwarp || memcmp(a->warp, b->warp, a->nwarp))
        return false;
    int8_t where[TL_MAXBITS]; /* element bit -> register bit of a */
    memset(where, -1, sizeof where);
    for (uint32_t i = 0; i < a->nreg; i++)
        where[a->reg[i]] = (int8_t)i;
    for (uint32_t i = 0; i < b->nreg; i++)
        if (where[b->reg[i]] < 0)
            return false;
    for (uint32_t r = 0; r < (1u << b->nreg); r++) {
        uint32_t ra = 0;
        for (uint32_t i = 0; i < b->nreg; i++)
            if (r >> i & 1)
                ra |= 1u << where[b->reg[i]];
        perm[r] = ra;
    }
    return true;
}

uint32_t tl_reg_elem(const tl_layout *L, uint32_t r) {
    uint32_t e = 0;
    for (uint32_t i = 0; i < L->nreg; i++)
        if (r >> i & 1)
            e |= 1u << L->reg[i];
    return e;
}

void tl_relabel(tl_layout *out, const tl_layout *in, const oxide_type *result, const int32_t *bitmap) {
    tl_layout o = *in;
    o.rank = (uint8_t)result->rank;
    memset(o.shape, 0, sizeof o.shape);
    for (uint32_t d = 0; d < result->rank; d++)
        o.shape[d] = result->shape[d];
    o.nreg = 0;
    for (uint32_t i = 0; i < in->nreg; i++)
        if (bitmap[in->reg[i]] >= 0)
            o.reg[o.nreg++] = (int8_t)bitmap[in->reg[i]];
    for (uint32_t j = 0; j < 5; j++)
        o.lane[j] = in->lane[j] < 0 ? -1 : (int8_t)bitmap[in->lane[j]];
    for (uint32_t j = 0; j < in->nwarp; j++)
        o.warp[j] = in->warp[j] < 0 ? -1 : (int8_t)bitmap[in->warp[j]];
    *out = o;
}

void tl_layout_reshape(tl_layout *out, const tl_layout *in, const oxide_type *result) {
    int32_t bitmap[TL_MAXBITS];
    for (int32_t i = 0; i < TL_MAXBITS; i++)
        bitmap[i] = i;
    tl_relabel(out, in, result, bitmap);
}

void tl_layout_permute(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t perm) {
    int32_t bitmap[TL_MAXBITS];
    for (uint32_t i = 0; i < result->rank; i++) {
        uint32_t p = perm >> (4 * i) & 15, in_off = tl_dim_off(in->shape, in->rank, p);
        uint32_t out_off = tl_dim_off(result->shape, result->rank, i);
        for (uint32_t k = 0; k < tl_bits(in->shape[p]); k++)
            bitmap[in_off + k] = (int32_t)(out_off + k);
    }
    tl_relabel(out, in, result, bitmap);
}

void tl_layout_reduce(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t axis) {
    int32_t bitmap[TL_MAXBITS];
    uint32_t lo = tl_dim_off(in->shape, in->rank, axis), n = tl_bits(in->shape[axis]);
    for (uint32_t i = 0; i < TL_MAXBITS; i++)
        bitmap[i] = i < lo ? (int32_t)i : i < lo + n ? -1 : (int32_t)(i - n);
    oxide_type scalar_shape = {.rank = 0};
    tl_relabel(out, in, result->kind == OXIDE_TYPE_TILE ? result : &scalar_shape, bitmap);
}

void tl_layout_broadcast(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t warps,
                         const tl_layout *hint) {
    int32_t bitmap[TL_MAXBITS];
    bool fresh[TL_MAXBITS] = {false};
    for (uint32_t d = 0; d < in->rank; d++) {
        uint32_t in_off = tl_dim_off(in->shape, in->rank, d), out_off = tl_dim_off(result->shape, result->rank, d);
        for (uint32_t k = 0; k < tl_bits(in->shape[d]); k++)
            bitmap[in_off + k] = (int32_t)(out_off + k);
        if (in->shape[d] == 1)
            for (uint32_t k = 0; k < tl_bits(result->shape[d]); k++)
                fresh[out_off + k] = true;
    }
    tl_layout o, want;
    tl_relabel(&o, in, result, bitmap);
    if (hint)
        want = *hint;
    else
        tl_blocked(&want, result, warps);
    /* first where the blocked layout has the bit, so that the usual consumer needs no conversion */
    for (uint32_t j = 0; j < 5; j++)
        if (o.lane[j] < 0 && want.lane[j] >= 0 && fresh[want.lane[j]])
            o.lane[j] = want.lane[j], fresh[want.lane[j]] = false;
    for (uint32_t j = 0; j < o.nwarp; j++)
        if (o.warp[j] < 0 && want.warp[j] >= 0 && fresh[want.warp[j]])
            o.warp[j] = want.warp[j], fresh[want.warp[j]] = false;
    for (uint32_t e = 0; e < TL_MAXBITS; e++) {
        if (!fresh[e])
            continue;
        /* then lanes and warps holding copies, then new registers (each a copy of an old one) */
        int8_t *slot = NULL;
        for (uint32_t j = 0; j < 5 && !slot; j++)
            if (o.lane[j] < 0)
                slot = &o.lane[j];
        for (uint32_t j = 0; j < o.nwarp && !slot; j++)
            if (o.warp[j] < 0)
                slot = &o.warp[j];
        if (!slot)
            slot = &o.reg[o.nreg++];
        *slot = (int8_t)e;
    }
    *out = o;
}

uint32_t tl_run_along(const tl_layout *L, uint32_t d) {
    uint32_t lo = tl_dim_off(L->shape, L->rank, d), n = 0;
    while (n < L->nreg && n < tl_bits(L->shape[d]) && L->reg[n] == (int8_t)(lo + n))
        n++;
    return n;
}

void tl_shape_bitmap(const oxide_inst *in, int32_t *bitmap) {
    const oxide_type *a = in->operands[0]->type, *r = in->result->type;
    for (uint32_t i = 0; i < TL_MAXBITS; i++)
        bitmap[i] = -1;
    if (in->op == OXIDE_OP_TILE_PERMUTE) {
        for (uint32_t i = 0; i < r->rank; i++) {
            uint32_t p = in->perm >> (4 * i) & 15, ao = tl_dim_off(a->shape, a->rank, p);
            for (uint32_t k = 0; k < tl_bits(a->shape[p]); k++)
                bitmap[ao + k] = (int32_t)(tl_dim_off(r->shape, r->rank, i) + k);
        }
    } else if (in->op == OXIDE_OP_TILE_BROADCAST) {
        for (uint32_t d = 0; d < a->rank; d++)
            for (uint32_t k = 0; k < tl_bits(a->shape[d]); k++)
                bitmap[tl_dim_off(a->shape, a->rank, d) + k] = (int32_t)(tl_dim_off(r->shape, r->rank, d) + k);
    } else {
        for (uint32_t i = 0; i < TL_MAXBITS; i++) /* reshape, expand_dims, cast: the same numbering */
            bitmap[i] = (int32_t)i;
    }
}

void tl_project(tl_layout *out, const tl_layout *R, const int32_t *bitmap, const oxide_type *operand) {
    int32_t inv[TL_MAXBITS];
    for (uint32_t i = 0; i < TL_MAXBITS; i++)
        inv[i] = -1;
    for (uint32_t i = 0; i < TL_MAXBITS; i++)
        if (bitmap[i] >= 0 && bitmap[i] < TL_MAXBITS)
            inv[bitmap[i]] = (int32_t)i;
    tl_relabel(out, R, operand, inv);
}
