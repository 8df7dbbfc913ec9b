/* The rules of the tile ops and of SIMT ops inside tile kernels (docs/tile.md, "Verifier rules").
 * The builder runs them as each op is built (so the text parser reports line:col) and the verifier
 * runs them again with the target, since IR may change after it was built. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../ir.h"

bool oxide__is_tile_op(oxide_op op) { return op >= OXIDE_OP_TILE_PROGRAM_ID && op <= OXIDE_OP_TILE_PRINT; }

void oxide__tile_perm_text(uint32_t perm, uint32_t rank, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "[");
    for (uint32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%u", i ? "," : "", (perm >> (4 * i)) & 15);
    if (n < cap)
        snprintf(out + n, cap - n, "]");
}

static oxide_status fail(const oxide_inst *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static oxide_status fail(const oxide_inst *in, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': %s", oxide_ops[in->op].name, msg);
}

/* SIMT rows that take tiles of identical shape (the row type may be a tile). */
static bool elementwise_on_tiles(oxide_op op) {
    switch (op) {
    case OXIDE_OP_ADD:
    case OXIDE_OP_SUB:
    case OXIDE_OP_MUL:
    case OXIDE_OP_SDIV:
    case OXIDE_OP_UDIV:
    case OXIDE_OP_SREM:
    case OXIDE_OP_UREM:
    case OXIDE_OP_FDIV:
    case OXIDE_OP_NEG:
    case OXIDE_OP_AND:
    case OXIDE_OP_OR:
    case OXIDE_OP_XOR:
    case OXIDE_OP_NOT:
    case OXIDE_OP_SHL:
    case OXIDE_OP_LSHR:
    case OXIDE_OP_ASHR:
    case OXIDE_OP_SMIN:
    case OXIDE_OP_SMAX:
    case OXIDE_OP_UMIN:
    case OXIDE_OP_UMAX:
    case OXIDE_OP_FMIN:
    case OXIDE_OP_FMAX:
    case OXIDE_OP_FABS:
    case OXIDE_OP_IABS:
    case OXIDE_OP_SQRT:
    case OXIDE_OP_RSQRT:
    case OXIDE_OP_EXP:
    case OXIDE_OP_EXP2:
    case OXIDE_OP_LOG:
    case OXIDE_OP_LOG2:
    case OXIDE_OP_TANH:
    case OXIDE_OP_ERF:
    case OXIDE_OP_FMA:
    case OXIDE_OP_POW:
    case OXIDE_OP_FLOOR:
    case OXIDE_OP_CEIL:
    case OXIDE_OP_ICMP:
    case OXIDE_OP_FCMP:
    case OXIDE_OP_SELECT: return true;
    default: return false;
    }
}

/* The SIMT ops a tile kernel may use on scalars: constants, arithmetic, comparisons, casts, math
 * and the structured control flow of the CFG. Memory, thread ids, barriers, atomics, warp and
 * tier-2 ops belong to the tile compiler. */
static bool scalar_op_in_tile_kernel(oxide_op op) {
    return op == OXIDE_OP_CONST || (op >= OXIDE_OP_ADD && op <= OXIDE_OP_BREV) ||
           (op >= OXIDE_OP_TRUNC && op <= OXIDE_OP_SITOFP) || op == OXIDE_OP_BITCAST ||
           (op >= OXIDE_OP_SQRT && op <= OXIDE_OP_TANH_APPROX) || op == OXIDE_OP_BR || op == OXIDE_OP_COND_BR ||
           op == OXIDE_OP_RET;
}

static bool is_tile(const oxide_type *t) { return t && t->kind == OXIDE_TYPE_TILE; }
static bool is_offset(const oxide_type *t) { return t->kind == OXIDE_TYPE_I32 || t->kind == OXIDE_TYPE_I64; }
static bool is_fp8(const oxide_type *t) { return oxide__type_is_fp8(t); }
static uint32_t dim(const oxide_type *t, uint32_t i) { return t->shape[i]; }

static oxide_status check_simt(const oxide_inst *in) {
    const char *name = oxide_ops[in->op].name;
    if (!scalar_op_in_tile_kernel(in->op))
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "'%s' is not allowed in a tile kernel: the tile compiler owns threads, memory and "
                           "synchronisation (use the tile ops)",
                           name);
    for (uint32_t i = 0; i <= in->noperands; i++) {
        const oxide_value *v = i < in->noperands ? in->operands[i] : in->result;
        const oxide_type *t = v ? v->type : NULL;
        if (!t)
            continue;
        if (t->kind == OXIDE_TYPE_TENSOR)
            return fail(in, "a tensor is an operand of tile.load, tile.store, tile.atomic_add and tile.dim only");
        if (is_fp8(t))
            return fail(in, "%s values exist only as tile elements", t->name);
        if (is_tile(t) && !elementwise_on_tiles(in->op))
            return fail(in, "does not take tiles (%s); the elementwise ops and tile.cast do", t->name);
    }
    return OXIDE_OK;
}

/* tile.load, tile.store, tile.atomic_add: the tensor, one offset per dim, the tile (stores). */
static oxide_status check_access(const oxide_inst *in, const oxide_type *res) {
    const oxide_type *t = in->operands[0]->type;
    bool load = in->op == OXIDE_OP_TILE_LOAD;
    uint32_t want = 1 + t->rank + !load;
    if (in->noperands != want && load)
        return fail(in, "takes one offset per dim of %s (%u), got %u", t->name, t->rank, in->noperands - 1);
    if (in->noperands != want)
        return fail(in, "takes the tensor, one offset per dim of %s (%u) and a tile: %u operands, got %u", t->name,
                    t->rank, want, in->noperands);
    for (uint32_t i = 1; i <= t->rank; i++)
        if (!is_offset(in->operands[i]->type))
            return fail(in, "offset %u must be i32 or i64, got %s", i - 1, in->operands[i]->type->name);
    const oxide_type *x = load ? res : in->operands[t->rank + 1]->type;
    const char *what = load ? "the result" : "the stored value";
    if (!is_tile(x))
        return fail(in, "%s must be a tile, got %s", what, x ? x->name : "nothing");
    if (x->rank != t->rank || x->elem != t->elem)
        return fail(in, "%s %s must be a rank-%u tile of %s, like the tensor %s", what, x->name, t->rank, t->elem->name,
                    t->name);
    if (!load && !t->is_mutable)
        return fail(in, "%s is not mut: only tensor<mut ...> parameters are written", t->name);
    if (in->op == OXIDE_OP_TILE_ATOMIC_ADD && t->elem->kind != OXIDE_TYPE_F32 && t->elem->kind != OXIDE_TYPE_I32)
        return fail(in, "atomic add takes f32 or i32 elements, got %s", t->elem->name);
    return OXIDE_OK;
}

static const char *dot_pair_ok(const oxide_type *a, const oxide_type *b) {
    if (is_fp8(a) && is_fp8(b))
        return NULL;
    if (a == b && (a->kind == OXIDE_TYPE_BF16 || a->kind == OXIDE_TYPE_F16))
        return NULL;
    return "tile.dot multiplies bf16 x bf16, f16 x f16 or fp8 x fp8 (f8e4m3, f8e5m2, any mix)";
}

static oxide_status check_dot(const oxide_inst *in, const oxide_type *res, unsigned sm) {
    const oxide_type *a = in->operands[0]->type, *b = in->operands[1]->type, *c = in->operands[2]->type;
    uint32_t r = a->rank;
    if (r < 2 || b->rank != r || c->rank != r)
        return fail(in, "a, b and acc must all be rank 2 (or rank 3, batched), got %s, %s and %s", a->name, b->name,
                    c->name);
    uint32_t o = r - 2; /* batched: dim 0 is the batch */
    uint32_t m = dim(a, o), k = dim(a, o + 1), n = dim(b, o + 1);
    if (dim(b, o) != k || dim(c, o) != m || dim(c, o + 1) != n ||
        (o && (dim(b, 0) != dim(a, 0) || dim(c, 0) != dim(a, 0))))
        return fail(in, "shapes do not match: a is %s, b is %s, acc is %s; need a [%sM,K], b [%sK,N], acc [%sM,N]",
                    a->name, b->name, c->name, o ? "B," : "", o ? "B," : "", o ? "B," : "");
    if (m < 16 || n < 16 || k < 16)
        return fail(in, "M, N and K must be at least 16, got M=%u, N=%u, K=%u", m, n, k);
    const char *why = dot_pair_ok(a->elem, b->elem);
    if (why)
        return fail(in, "a holds %s and b holds %s: %s", a->elem->name, b->elem->name, why);
    if (c->elem->kind != OXIDE_TYPE_F32)
        return fail(in, "acc must hold f32, got %s", c->name);
    if (is_fp8(a->elem) && k < 32) /* one fp8 tensor-core step takes 32 of K */
        return fail(in, "fp8 tile.dot needs K of at least 32, got K=%u", k);
    if (res != c)
        return fail(in, "the result must be %s (the type of acc), got %s", c->name, res ? res->name : "nothing");
    if (sm && sm < 89 && is_fp8(a->elem))
        return fail(in, "fp8 tile.dot needs sm_89 or newer; the target is sm_%u", sm);
    return OXIDE_OK;
}

/* broadcast, expand_dims, reshape, permute: same elements, shapes related as the op says. */
static oxide_status check_shape_op(const oxide_inst *in, const oxide_type *x, const oxide_type *res) {
    if (res->elem != x->elem)
        return fail(in, "the result %s must hold %s like its operand %s", res->name, x->elem->name, x->name);
    switch (in->op) {
    case OXIDE_OP_TILE_BROADCAST:
        if (res->rank != x->rank)
            return fail(in, "%s cannot broadcast to %s: the rank must stay %u (use tile.expand_dims first)", x->name,
                        res->name, x->rank);
        for (uint32_t i = 0; i < x->rank; i++)
            if (dim(x, i) != dim(res, i) && dim(x, i) != 1)
                return fail(in, "%s cannot broadcast to %s: dim %u is %u; only dims of size 1 stretch", x->name,
                            res->name, i, dim(x, i));
        return OXIDE_OK;
    case OXIDE_OP_TILE_EXPAND_DIMS: {
        if (in->imm < 0 || in->imm > x->rank)
            return fail(in, "dim %lld is out of range for %s: it inserts at 0..%u", (long long)in->imm, x->name,
                        x->rank);
        if (x->rank + 1 > OXIDE__TILE_MAX_RANK)
            return fail(in, "%s already has rank %u, the most a tile has", x->name, x->rank);
        uint32_t want[3], j = 0;
        for (uint32_t i = 0; i <= x->rank; i++)
            want[i] = i == (uint32_t)in->imm ? 1 : dim(x, j++);
        if (res->rank != x->rank + 1 || memcmp(want, res->shape, (x->rank + 1) * sizeof *want))
            return fail(in, "inserting a dim of size 1 at %lld into %s gives rank %u with dim %lld = 1, not %s",
                        (long long)in->imm, x->name, x->rank + 1, (long long)in->imm, res->name);
        return OXIDE_OK;
    }
    case OXIDE_OP_TILE_RESHAPE:
        if (oxide__tile_elems(x) != oxide__tile_elems(res))
            return fail(in, "%s has %llu elements but %s has %llu; reshape keeps the element count", x->name,
                        (unsigned long long)oxide__tile_elems(x), res->name,
                        (unsigned long long)oxide__tile_elems(res));
        return OXIDE_OK;
    default: { /* permute */
        char text[32];
        unsigned seen = 0;
        oxide__tile_perm_text(in->perm, x->rank, text, sizeof text);
        bool ok = (in->perm >> (4 * x->rank)) == 0;
        for (uint32_t i = 0; ok && i < x->rank; i++) {
            uint32_t p = (in->perm >> (4 * i)) & 15;
            ok = p < x->rank && !(seen & (1u << p));
            seen |= 1u << p;
        }
        if (!ok)
            return fail(in, "perm %s is not a permutation of 0..%u (the rank of %s is %u)", text, x->rank - 1, x->name,
                        x->rank);
        bool same = res->rank == x->rank;
        for (uint32_t i = 0; same && i < x->rank; i++)
            same = dim(res, i) == dim(x, (in->perm >> (4 * i)) & 15);
        if (!same)
            return fail(in, "permuting %s by %s does not give %s", x->name, text, res->name);
        return OXIDE_OK;
    }
    }
}

static oxide_status check_reduce(const oxide_inst *in, const oxide_type *x, const oxide_type *res) {
    if (in->imm < 0 || in->imm >= x->rank)
        return fail(in, "axis %lld is out of range for %s (rank %u)", (long long)in->imm, x->name, x->rank);
    if (in->kind > OXIDE_REDUCE_MIN)
        return fail(in, "kind %u is not sum, max or min", in->kind);
    if (x->elem->kind == OXIDE_TYPE_I1 || is_fp8(x->elem))
        return fail(in, "reductions take i8, i32, i64, f16, bf16 or f32 elements, got %s (cast first)", x->elem->name);
    if (x->rank == 1) {
        if (res != x->elem)
            return fail(in, "reducing %s gives the scalar %s, not %s", x->name, x->elem->name, res->name);
        return OXIDE_OK;
    }
    uint32_t want[3], j = 0;
    for (uint32_t i = 0; i < x->rank; i++)
        if (i != (uint32_t)in->imm)
            want[j++] = dim(x, i);
    if (!is_tile(res) || res->elem != x->elem || res->rank != j || memcmp(want, res->shape, j * sizeof *want))
        return fail(in, "reducing %s along %lld gives a rank-%u tile of %s without that dim, not %s", x->name,
                    (long long)in->imm, j, x->elem->name, res->name);
    return OXIDE_OK;
}

static oxide_status check_tile_op(const oxide_inst *in, unsigned sm) {
    const oxide_type *res = in->result ? in->result->type : NULL;
    const oxide_type *x = in->noperands ? in->operands[0]->type : NULL;
    bool tile_result = oxide_ops[in->op].result == 'x';
    if (tile_result && in->op != OXIDE_OP_TILE_REDUCE && !is_tile(res))
        return fail(in, "the result must be a tile, got %s", res ? res->name : "nothing");
    switch (in->op) {
    case OXIDE_OP_TILE_PROGRAM_ID:
    case OXIDE_OP_TILE_NUM_PROGRAMS:
        if (in->imm < 0 || in->imm > 2)
            return fail(in, "grid axis %lld is not 0, 1 or 2", (long long)in->imm);
        return OXIDE_OK;
    case OXIDE_OP_TILE_DIM:
        if (in->imm < 0 || in->imm >= x->rank)
            return fail(in, "dim %lld is out of range for %s (rank %u)", (long long)in->imm, x->name, x->rank);
        return OXIDE_OK;
    case OXIDE_OP_TILE_LOAD:
    case OXIDE_OP_TILE_STORE:
    case OXIDE_OP_TILE_ATOMIC_ADD: return check_access(in, res);
    case OXIDE_OP_TILE_FULL: return OXIDE_OK; /* the value was fitted to the element when built */
    case OXIDE_OP_TILE_SPLAT:
        if (x != res->elem)
            return fail(in, "the operand must be %s, the element of %s, got %s", res->elem->name, res->name, x->name);
        return OXIDE_OK;
    case OXIDE_OP_TILE_ARANGE:
        if (res->rank != 1 || res->elem->kind != OXIDE_TYPE_I32)
            return fail(in, "the result must be a rank-1 tile of i32, got %s", res->name);
        return OXIDE_OK;
    case OXIDE_OP_TILE_DOT: return check_dot(in, res, sm);
    case OXIDE_OP_TILE_CAST:
        if (res->rank != x->rank || memcmp(res->shape, x->shape, sizeof x->shape))
            return fail(in, "casting %s gives a tile of its shape, not %s", x->name, res->name);
        return OXIDE_OK;
    case OXIDE_OP_TILE_BROADCAST:
    case OXIDE_OP_TILE_EXPAND_DIMS:
    case OXIDE_OP_TILE_RESHAPE:
    case OXIDE_OP_TILE_PERMUTE: return check_shape_op(in, x, res);
    case OXIDE_OP_TILE_REDUCE: return check_reduce(in, x, res);
    default: /* print */
        if (x->kind == OXIDE_TYPE_TENSOR || is_fp8(x))
            return fail(in, "prints a tile or a scalar, not %s", x->name);
        return OXIDE_OK;
    }
}

oxide_status oxide__tile_check_inst(const oxide_inst *in, unsigned sm) {
    const oxide_function *fn = in->block->fn;
    if (fn->is_tile)
        return oxide__is_tile_op(in->op) ? check_tile_op(in, sm) : check_simt(in);
    if (oxide__is_tile_op(in->op))
        return fail(in, "tile ops belong in tile kernels; @%s is not one", fn->name);
    for (uint32_t i = 0; i <= in->noperands; i++) {
        const oxide_value *v = i < in->noperands ? in->operands[i] : in->result;
        if (v && oxide__type_is_tile_only(v->type))
            return fail(in, "%s values exist only in tile kernels; @%s is not one", v->type->name, fn->name);
    }
    if (in->elem && oxide__type_is_tile_only(in->elem))
        return fail(in, "elem %s has no memory layout", in->elem->name);
    return OXIDE_OK;
}
