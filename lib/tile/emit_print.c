/* tile.print: one printf per element, in the interpreter's line format ("pid(X,Y,Z) NAME[I,J] =
 * VALUE"), from the one thread whose copy of the element counts (tl_is_owner), so that each
 * element is printed once; a scalar is printed by thread 0. The order of the lines across
 * threads is the GPU's (docs/tile.md, "The lowering"). */
#include <stdio.h>
#include <string.h>

#include "lower.h"

/* The name as printf text: '%' doubled, at most the interpreter's 200 bytes of it. */
static void put_name(char *out, size_t cap, size_t *n, const char *name) {
    for (size_t i = 0; name && name[i] && i < 200 && *n + 3 < cap; i++) {
        if (name[i] == '%')
            out[(*n)++] = '%';
        out[(*n)++] = name[i];
    }
    out[*n] = 0;
}

static const char *value_format(const oxide_type *e) {
    if (oxide__type_is_int(e))
        return e->kind == OXIDE_TYPE_I64 ? "%lld" : "%d";
    return "%.9g"; /* printf takes it as a double: the interpreter's digits of the same value */
}

/* What vprintf is handed for an element: fp8 and 16-bit floats as f32, i1 as i32. */
static oxide_value *printable(tl *T, oxide_value *v, const oxide_type *e) {
    if (oxide__type_is_fp8(e))
        return tl_fp8_to_f32(T, v, e);
    if (e->kind == OXIDE_TYPE_F16 || e->kind == OXIDE_TYPE_BF16)
        return tl_cast(T, OXIDE_OP_FPEXT, v, T->tf32);
    if (e->kind == OXIDE_TYPE_I1)
        return tl_cast(T, OXIDE_OP_ZEXT, v, T->ti32);
    return v;
}

/* Code in a new block entered only where cond holds; returns the block after it, which the rest
 * of the source block's code goes to. */
static oxide_block *begin_if(tl *T, oxide_value *cond) {
    oxide_block *body = NULL, *after = NULL;
    oxide_status st;
    if (T->st)
        return NULL;
    if ((st = oxide_function_add_block(T->k, NULL, 0, &body, NULL)) ||
        (st = oxide_function_add_block(T->k, NULL, 0, &after, NULL)) ||
        (st = oxide_build_cond_br(T->b, cond, body, NULL, 0, after, NULL, 0))) {
        tl_fail(T, st, "%s", oxide_last_error());
        return NULL;
    }
    T->b = body;
    return after;
}

static void end_if(tl *T, oxide_block *after) {
    oxide_status st;
    if (T->st)
        return;
    if ((st = oxide_build_br(T->b, after, NULL, 0)))
        tl_fail(T, st, "%s", oxide_last_error());
    T->b = after;
}

void tl_emit_print(tl *T, const oxide_inst *in) {
    const oxide_value *x = in->operands[0];
    bool is_tile = x->type->kind == OXIDE_TYPE_TILE;
    const oxide_type *e = is_tile ? oxide__tile_scalar(x->type) : x->type;
    tl_layout L;
    oxide_value **regs = NULL, *c[3], *scalar = NULL;
    if (is_tile) {
        tl_val *v = tl_val_of(T, x);
        if (v->uniform)
            tl_blocked(&L, x->type, T->warps);
        else
            L = v->L;
        regs = tl_regs_in(T, x, &L);
        tl_thread_coords(T, &L, c);
    } else
        scalar = tl_scalar_of(T, x);
    char fmt[512];
    size_t n = (size_t)snprintf(fmt, sizeof fmt, "pid(%%u,%%u,%%u) ");
    put_name(fmt, sizeof fmt, &n, in->str);
    for (uint32_t d = 0; is_tile && d < L.rank; d++)
        n += (size_t)snprintf(fmt + n, sizeof fmt - n, "%s%%u", d ? "," : "[");
    snprintf(fmt + n, sizeof fmt - n, "%s = %s\n", is_tile ? "]" : "", value_format(e));
    oxide_value *cond =
        is_tile ? tl_is_owner(T, &L) : tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, T->tid, tl_int(T, T->ti32, 0));
    oxide_block *after = begin_if(T, cond);
    oxide_value *args[8];
    for (uint32_t a = 0; a < 3; a++)
        args[a] = tl_op(T, (oxide_op)(OXIDE_OP_CTAID_X + a), NULL, 0, NULL, NULL, 0);
    oxide_attr str = {.key = OXIDE_ATTR_STR, .s = fmt};
    uint32_t nregs = is_tile ? 1u << L.nreg : 1;
    for (uint32_t g = 0; g < nregs && !T->st; g++) {
        uint32_t k = 3;
        for (uint32_t d = 0; is_tile && d < L.rank; d++) {
            uint32_t lo = tl_dim_off(L.shape, L.rank, d);
            args[k++] = tl_op2(T, OXIDE_OP_ADD, c[d], tl_int(T, T->ti32, tl_reg_elem(&L, g) >> lo & (L.shape[d] - 1)));
        }
        args[k++] = printable(T, is_tile ? regs[g] : scalar, e);
        tl_op(T, OXIDE_OP_PRINTF, args, k, NULL, &str, 1);
    }
    end_if(T, after);
}
