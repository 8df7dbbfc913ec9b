/* Tile IR types: fp8 scalars, tiles and tensors (docs/tile.md, "Types"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ir.h"

bool oxide__type_is_fp8(const oxide_type *t) {
    return t && (t->kind == OXIDE_TYPE_F8E4M3 || t->kind == OXIDE_TYPE_F8E5M2);
}

bool oxide__type_is_tile_only(const oxide_type *t) {
    return t && (oxide__type_is_fp8(t) || t->kind == OXIDE_TYPE_TILE || t->kind == OXIDE_TYPE_TENSOR);
}

bool oxide__type_has_layout(const oxide_type *t) {
    return t && t->kind != OXIDE_TYPE_VOID && !oxide__type_is_tile_only(t);
}

const oxide_type *oxide__tile_scalar(const oxide_type *t) { return t && t->kind == OXIDE_TYPE_TILE ? t->elem : t; }

uint64_t oxide__tile_elems(const oxide_type *t) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->rank && i < OXIDE__TILE_MAX_RANK; i++)
        n *= t->shape[i];
    return n;
}

bool oxide__tile_shape_eq(const oxide_type *a, const oxide_type *b) {
    return a->rank == b->rank && a->is_mutable == b->is_mutable && !memcmp(a->shape, b->shape, sizeof a->shape);
}

bool oxide__tile_type_name(const oxide_type *t, char *out, size_t cap) {
    switch (t->kind) {
    case OXIDE_TYPE_F8E4M3: snprintf(out, cap, "f8e4m3"); return true;
    case OXIDE_TYPE_F8E5M2: snprintf(out, cap, "f8e5m2"); return true;
    case OXIDE_TYPE_TILE: {
        size_t n = (size_t)snprintf(out, cap, "tile<");
        for (uint32_t i = 0; i < t->rank && n < cap; i++)
            n += (size_t)snprintf(out + n, cap - n, "%s%u", i ? "x" : "", t->shape[i]);
        if (n < cap)
            snprintf(out + n, cap - n, " x %s>", t->elem->name);
        return true;
    }
    case OXIDE_TYPE_TENSOR:
        snprintf(out, cap, "tensor<%s%u x %s>", t->is_mutable ? "mut " : "", t->rank, t->elem->name);
        return true;
    default: return false;
    }
}

bool oxide__tensor_elem_scalar(const oxide_type *tensor, oxide_scalar *out) {
    if (!tensor || tensor->kind != OXIDE_TYPE_TENSOR || !tensor->elem)
        return false;
    switch (tensor->elem->kind) {
    case OXIDE_TYPE_I8: *out = OXIDE_SCALAR_I8; return true;
    case OXIDE_TYPE_I32: *out = OXIDE_SCALAR_I32; return true;
    case OXIDE_TYPE_I64: *out = OXIDE_SCALAR_I64; return true;
    case OXIDE_TYPE_F16: *out = OXIDE_SCALAR_F16; return true;
    case OXIDE_TYPE_BF16: *out = OXIDE_SCALAR_BF16; return true;
    case OXIDE_TYPE_F32: *out = OXIDE_SCALAR_F32; return true;
    case OXIDE_TYPE_F8E4M3: *out = OXIDE_SCALAR_F8E4M3; return true;
    case OXIDE_TYPE_F8E5M2: *out = OXIDE_SCALAR_F8E5M2; return true;
    default: return false;
    }
}

/* The element types a tile may hold (tensors: the same without i1). */
static bool tile_elem_ok(const oxide_type *e) {
    switch (e->kind) {
    case OXIDE_TYPE_I1:
    case OXIDE_TYPE_I8:
    case OXIDE_TYPE_I32:
    case OXIDE_TYPE_I64:
    case OXIDE_TYPE_F16:
    case OXIDE_TYPE_BF16:
    case OXIDE_TYPE_F32:
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2: return true;
    default: return false;
    }
}

oxide_status oxide_type_tile(oxide_context *ctx, oxide_type *elem, uint32_t rank, const uint32_t *shape,
                             oxide_type **out) {
    if (!ctx || !elem || !out || (rank && !shape))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_tile: NULL argument");
    if (!tile_elem_ok(elem))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "tile element type %s is not one of i1, i8, i32, i64, f16, bf16, f32, f8e4m3, f8e5m2",
                           elem->name);
    if (rank < 1 || rank > OXIDE__TILE_MAX_RANK)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "a tile has rank 1 to %u, got %u", OXIDE__TILE_MAX_RANK, rank);
    uint64_t n = 1;
    oxide_type proto = {.kind = OXIDE_TYPE_TILE, .elem = elem, .rank = rank};
    for (uint32_t i = 0; i < rank; i++) {
        if (!shape[i] || (shape[i] & (shape[i] - 1)) || shape[i] > OXIDE__TILE_MAX_DIM)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "tile dim %u is %u; every dim must be a power of two from 1 to %u", i, shape[i],
                               OXIDE__TILE_MAX_DIM);
        n *= shape[i];
        proto.shape[i] = shape[i];
    }
    if (n > OXIDE__TILE_MAX_ELEMS)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "a tile of %llu elements exceeds the limit of %u (2^20)",
                           (unsigned long long)n, OXIDE__TILE_MAX_ELEMS);
    return oxide__type_intern(ctx, &proto, out);
}

oxide_status oxide_type_tensor(oxide_context *ctx, oxide_type *elem, uint32_t rank, int is_mutable, oxide_type **out) {
    if (!ctx || !elem || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_tensor: NULL argument");
    if (!tile_elem_ok(elem) || elem->kind == OXIDE_TYPE_I1)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "tensor element type %s is not one of i8, i32, i64, f16, bf16, f32, f8e4m3, f8e5m2",
                           elem->name);
    if (rank < 1 || rank > OXIDE__TENSOR_MAX_RANK)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "a tensor has rank 1 to %u, got %u", OXIDE__TENSOR_MAX_RANK,
                           rank);
    oxide_type proto = {.kind = OXIDE_TYPE_TENSOR, .elem = elem, .rank = rank, .is_mutable = is_mutable != 0};
    return oxide__type_intern(ctx, &proto, out);
}

oxide_status oxide__tile_like(oxide_context *ctx, const oxide_type *t, oxide_type *elem, oxide_type **out) {
    return oxide_type_tile(ctx, elem, t->rank, t->shape, out);
}

/* fp8 e4m3 (bias 7, max 448, no inf) and e5m2 (bias 15, max 57344): values are kept as doubles
 * rounded to the format, the way const keeps f16 and bf16 values. */
bool oxide__round_fp8(oxide_type_kind kind, double v, double *out) {
    int mant_bits = kind == OXIDE_TYPE_F8E4M3 ? 3 : 2, min_exp = kind == OXIDE_TYPE_F8E4M3 ? -6 : -14;
    double max = kind == OXIDE_TYPE_F8E4M3 ? 448.0 : 57344.0;
    if (isnan(v) || v == 0 || (isinf(v) && kind == OXIDE_TYPE_F8E5M2)) {
        *out = v;
        return true;
    }
    if (isinf(v))
        return false; /* e4m3 has no infinity */
    int e = (int)floor(log2(fabs(v)));
    if (e < min_exp)
        e = min_exp;
    double ulp = ldexp(1.0, e - mant_bits);
    *out = nearbyint(v / ulp) * ulp;
    return fabs(*out) <= max;
}
