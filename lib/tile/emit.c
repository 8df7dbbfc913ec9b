/* Pass 2: the SIMT kernel. Each source block becomes one block whose parameters are the
 * registers of its tile parameters; scalar ops are copied; elementwise ops run once per register
 * (f16 and bf16 computed in f32 and rounded, as docs/tile.md says); the rest is in emit_*.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cfg.h"
#include "floatfmt.h"
#include "lower.h"

oxide_status tl_fail(tl *T, oxide_status st, const char *fmt, ...) {
    if (T->st)
        return T->st;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const oxide_inst *in = T->at;
    if (in && in->line)
        oxide__fail(st, "tile_kernel @%s: '%s' at %u:%u: %s", T->src->name, oxide_ops[in->op].name, in->line, in->col,
                    msg);
    else if (in)
        oxide__fail(st, "tile_kernel @%s: '%s': %s", T->src->name, oxide_ops[in->op].name, msg);
    else
        oxide__fail(st, "tile_kernel @%s: %s", T->src->name, msg);
    return T->st = st;
}

static bool ok(tl *T, oxide_status st, oxide_op op) {
    if (!st)
        return true;
    /* everything the lowering builds is checked by the builder: a refusal is a lowering bug */
    tl_fail(T, st == OXIDE_ERROR_OUT_OF_MEMORY ? st : OXIDE_ERROR_CODEGEN, "the lowering built an invalid '%s': %s",
            oxide_ops[op].name, oxide_last_error());
    return false;
}

oxide_value *tl_op(tl *T, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt, const oxide_attr *attrs,
                   size_t nattrs) {
    if (T->st)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!ops[i]) {
            tl_fail(T, OXIDE_ERROR_CODEGEN, "operand %zu of a '%s' the lowering built is missing", i,
                    oxide_ops[op].name);
            return NULL;
        }
    oxide_value *r = NULL;
    return ok(T, oxide_build_op(T->b, op, ops, n, rt, attrs, nattrs, &r), op) ? r : NULL;
}

oxide_value *tl_op2(tl *T, oxide_op op, oxide_value *a, oxide_value *b) {
    oxide_value *o[2] = {a, b};
    return tl_op(T, op, o, b ? 2 : 1, NULL, NULL, 0);
}

oxide_value *tl_cast(tl *T, oxide_op op, oxide_value *a, oxide_type *to) { return tl_op(T, op, &a, 1, to, NULL, 0); }

oxide_value *tl_int(tl *T, oxide_type *t, int64_t v) {
    oxide_value *r = NULL;
    return !T->st && ok(T, oxide_build_const_int(T->b, t, v, &r), OXIDE_OP_CONST) ? r : NULL;
}

oxide_value *tl_flt(tl *T, oxide_type *t, double v) {
    oxide_value *r = NULL;
    return !T->st && ok(T, oxide_build_const_float(T->b, t, v, &r), OXIDE_OP_CONST) ? r : NULL;
}

oxide_value *tl_cmp(tl *T, oxide_op op, oxide_pred pred, oxide_value *a, oxide_value *b) {
    oxide_value *o[2] = {a, b};
    oxide_attr at = {.key = OXIDE_ATTR_PRED, .i = pred};
    return tl_op(T, op, o, 2, NULL, &at, 1);
}

oxide_value *tl_sel(tl *T, oxide_value *c, oxide_value *a, oxide_value *b) {
    oxide_value *o[3] = {c, a, b};
    return tl_op(T, OXIDE_OP_SELECT, o, 3, NULL, NULL, 0);
}

oxide_value *tl_imm_op(tl *T, oxide_op op, int64_t imm, oxide_type *rt, oxide_value *const *ops, size_t n) {
    oxide_attr at = {.key = OXIDE_ATTR_IMM, .i = imm};
    return tl_op(T, op, ops, n, rt, &at, 1);
}

void tl_barrier(tl *T) {
    /* past the producer's branch (produce.c) only the consumer warps meet: barrier 1 counts them */
    if (T->named) {
        oxide_value *n = tl_int(T, T->ti32, T->threads);
        tl_imm_op(T, OXIDE_OP_BARRIER_COUNT, 1, NULL, &n, 1);
    } else
        tl_op(T, OXIDE_OP_BARRIER, NULL, 0, NULL, NULL, 0);
}

oxide_type *tl_elem(tl *T, const oxide_type *tile) {
    const oxide_type *e = oxide__tile_scalar(tile);
    if (oxide__type_is_fp8(e))
        return T->ti8; /* fp8 travels as its bit pattern */
    return T->ctx->scalars[e->kind];
}

tl_val *tl_val_of(tl *T, const oxide_value *v) { return &T->vals[v->id]; }

const tl_layout *tl_layout_of(tl *T, const oxide_value *v, tl_layout *tmp) {
    tl_val *x = tl_val_of(T, v);
    if (!x->uniform)
        return &x->L;
    tl_blocked(tmp, v->type, T->warps);
    return tmp;
}

oxide_value *tl_scalar_of(tl *T, const oxide_value *v) {
    oxide_value *s = T->scal[v->id];
    if (!s)
        tl_fail(T, OXIDE_ERROR_CODEGEN, "a scalar is used before the lowering defined it");
    return s;
}

oxide_value **tl_new_regs(tl *T, const tl_layout *L) {
    oxide_value **r = oxide__alloc(&T->out->arena, sizeof *r << L->nreg);
    if (!r)
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    return r;
}

static oxide_value **arange_in(tl *T, const tl_layout *L);

oxide_value **tl_regs_in(tl *T, const oxide_value *v, const tl_layout *L) {
    tl_val *x = tl_val_of(T, v);
    oxide_value **r;
    if (T->st)
        return NULL;
    if (x->uniform) {
        if (!(r = tl_new_regs(T, L)))
            return NULL;
        for (uint32_t i = 0; i < 1u << L->nreg; i++)
            r[i] = x->scalar;
        return r;
    }
    if (!x->regs)
        return tl_fail(T, OXIDE_ERROR_CODEGEN, "a tile is used before the lowering defined it"), NULL;
    if (tl_layout_eq(&x->L, L))
        return x->regs;
    static _Thread_local uint32_t perm[TL_MAX_REGS];
    if (tl_layout_regperm(&x->L, L, perm)) {
        if (!(r = tl_new_regs(T, L)))
            return NULL;
        for (uint32_t i = 0; i < 1u << L->nreg; i++)
            r[i] = x->regs[perm[i]];
        return r;
    }
    /* an index tile is computed again where it is wanted, cheaper than moving it */
    if (v->kind == VAL_INST && v->def->op == OXIDE_OP_TILE_ARANGE)
        return arange_in(T, L);
    return tl_convert(T, x->regs, &x->L, L, tl_elem(T, v->type));
}

void tl_thread_coords(tl *T, const tl_layout *L, oxide_value **coord) {
    for (uint32_t d = 0; d < L->rank; d++) {
        uint32_t lo = tl_dim_off(L->shape, L->rank, d), hi = lo + tl_bits(L->shape[d]);
        oxide_value *c = tl_int(T, T->ti32, 0);
        for (uint32_t hw = 0; hw < 5u + L->nwarp; hw++) {
            int8_t e = hw < 5 ? L->lane[hw] : L->warp[hw - 5];
            if (e < 0 || (uint32_t)e < lo || (uint32_t)e >= hi)
                continue;
            oxide_value *src = hw < 5 ? T->lane : T->warp;
            uint32_t bit = hw < 5 ? hw : hw - 5;
            oxide_value *b =
                tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, src, tl_int(T, T->ti32, bit)), tl_int(T, T->ti32, 1));
            c = tl_op2(T, OXIDE_OP_OR, c, tl_op2(T, OXIDE_OP_SHL, b, tl_int(T, T->ti32, (uint32_t)e - lo)));
        }
        coord[d] = c;
    }
}

oxide_value *tl_is_owner(tl *T, const tl_layout *L) {
    uint32_t lm = 0, wm = 0;
    for (uint32_t j = 0; j < 5; j++)
        lm |= L->lane[j] < 0 ? 1u << j : 0;
    for (uint32_t j = 0; j < L->nwarp; j++)
        wm |= L->warp[j] < 0 ? 1u << j : 0;
    oxide_value *zero = tl_int(T, T->ti32, 0);
    oxide_value *l = tl_op2(T, OXIDE_OP_AND, T->lane, tl_int(T, T->ti32, lm));
    oxide_value *w = tl_op2(T, OXIDE_OP_AND, T->warp, tl_int(T, T->ti32, wm));
    return tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, tl_op2(T, OXIDE_OP_OR, l, w), zero);
}

oxide_value *tl_i64(tl *T, oxide_value *v) {
    return v && v->type != T->ti64 ? tl_cast(T, OXIDE_OP_SEXT, v, T->ti64) : v;
}

oxide_value *tl_smem_at(tl *T, uint64_t bytes) {
    if (T->smem_fixed + bytes > T->smem_need) {
        T->smem_need = T->smem_fixed + bytes;
        T->smem_who = T->at;
    }
    return T->smem;
}

oxide_value *tl_smem_elem(tl *T, oxide_value *base, oxide_value *index, oxide_type *elem) {
    oxide_value *o[2] = {base, index};
    oxide_attr at = {.key = OXIDE_ATTR_ELEM, .t = elem};
    return tl_op(T, OXIDE_OP_OFFSET, o, 2, NULL, &at, 1);
}

/* ---- elementwise ---- */

static bool is_half(const oxide_type *t) { return t->kind == OXIDE_TYPE_F16 || t->kind == OXIDE_TYPE_BF16; }

/* Integer division, remainder and shifts as docs/tile.md defines them for every input, where
 * LLVM leaves some undefined (poison, which may become anything): x / 0 is -1 and x % 0 is x,
 * MIN / -1 is MIN and MIN % -1 is 0; a shift by the width or more gives 0, or the sign (ashr).
 * NULL when op is not one of these. */
static oxide_value *defined_int_op(tl *T, oxide_op op, oxide_value *a, oxide_value *b) {
    bool div = op == OXIDE_OP_SDIV || op == OXIDE_OP_UDIV, rem = op == OXIDE_OP_SREM || op == OXIDE_OP_UREM;
    bool shift = op == OXIDE_OP_SHL || op == OXIDE_OP_LSHR || op == OXIDE_OP_ASHR;
    if (!a || !b || !oxide__type_is_int(a->type) || (!div && !rem && !shift))
        return NULL;
    oxide_type *t = a->type;
    unsigned w = oxide__type_bits(t);
    if (shift) {
        oxide_value *big = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_UGE, b, tl_int(T, t, w));
        oxide_value *amt = tl_sel(T, big, tl_int(T, t, op == OXIDE_OP_ASHR ? w - 1 : 0), b);
        oxide_value *r = tl_op2(T, op, a, amt);
        return op == OXIDE_OP_ASHR ? r : tl_sel(T, big, tl_int(T, t, 0), r);
    }
    oxide_value *zero = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, b, tl_int(T, t, 0)), *bad = zero;
    if (op == OXIDE_OP_SDIV || op == OXIDE_OP_SREM) {
        int64_t min = w >= 64 ? INT64_MIN : w == 1 ? -1 : -((int64_t)1 << (w - 1));
        oxide_value *ovf = tl_op2(T, OXIDE_OP_AND, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, a, tl_int(T, t, min)),
                                  tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, b, tl_int(T, t, -1)));
        bad = tl_op2(T, OXIDE_OP_OR, zero, ovf);
    }
    oxide_value *r = tl_op2(T, op, a, tl_sel(T, bad, tl_int(T, t, 1), b));
    return tl_sel(T, zero, div ? tl_int(T, t, -1) : a, r);
}

/* Builds op like the source instruction in (its attributes copied) on scalar operands; f16 and
 * bf16 operands of float rows are widened to f32 and a float result rounded back. */
static oxide_value *like(tl *T, const oxide_inst *in, oxide_value **ops, oxide_type *rt) {
    if (T->st)
        return NULL;
    oxide_value *defined = in->noperands == 2 ? defined_int_op(T, in->op, ops[0], ops[1]) : NULL;
    if (defined || T->st)
        return defined;
    const oxide_op_info *row = &oxide_ops[in->op];
    oxide_type *half = NULL;
    for (uint32_t i = 0; i < in->noperands; i++) {
        char c = row->operands[i] ? row->operands[i] : 'x';
        if ((c == 'F' || c == 'N') && ops[i] && is_half(ops[i]->type)) {
            half = ops[i]->type;
            ops[i] = tl_cast(T, OXIDE_OP_FPEXT, ops[i], T->tf32);
        }
    }
    oxide_inst *r = NULL;
    if (T->st || !ok(T, oxide__build(T->b, in->op, ops, in->noperands, rt, NULL, 0, &r), in->op))
        return NULL;
    r->align = in->align, r->is_volatile = in->is_volatile, r->scope = in->scope, r->order = in->order;
    r->pred = in->pred, r->imm = in->imm, r->ivalue = in->ivalue, r->fvalue = in->fvalue;
    r->str = in->str, r->elem = in->elem, r->sym = in->sym;
    oxide_value *v = r->result;
    if (half && v && v->type == T->tf32)
        v = tl_cast(T, OXIDE_OP_FPTRUNC, v, half);
    return v;
}

static void emit_elementwise(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    oxide_value *ops[8];
    if (in->noperands > 8) {
        tl_fail(T, OXIDE_ERROR_UNSUPPORTED, "more than 8 operands");
        return;
    }
    if (r->uniform) {
        for (uint32_t i = 0; i < in->noperands; i++) {
            const oxide_value *o = in->operands[i];
            ops[i] = o->type->kind == OXIDE_TYPE_TILE ? tl_val_of(T, o)->scalar : tl_scalar_of(T, o);
        }
        r->scalar = like(T, in, ops, NULL);
        return;
    }
    oxide_value **src[8];
    for (uint32_t i = 0; i < in->noperands; i++)
        src[i] = tl_regs_in(T, in->operands[i], &r->L);
    if (!(r->regs = tl_new_regs(T, &r->L)))
        return;
    for (uint32_t g = 0; g < 1u << r->L.nreg && !T->st; g++) {
        for (uint32_t i = 0; i < in->noperands; i++)
            ops[i] = src[i][g];
        r->regs[g] = like(T, in, ops, NULL);
    }
}

/* ---- fp8 (docs/tile.md, "The lowering": casts) ----
 * fp8 elements are i8 bit patterns. Every conversion goes through f32, which holds every value of
 * the other element types that matters exactly (an integer too large for f32 saturates in fp8
 * either way), so there is one rounding, the interpreter's (floatfmt.h). sm_89 and newer convert
 * with the cvt rows, two elements per instruction; older targets convert in integer ops that
 * give the same bits (RNE, satfinite, a NaN becomes the canonical 0x7f). */

static const oxide__ffmt *fp8_fmt(const oxide_type *t) {
    return t->kind == OXIDE_TYPE_F8E4M3 ? &oxide__ffmt_e4m3 : &oxide__ffmt_e5m2;
}

/* Whether the cvt rows may be used: sm_89+, at a PTX version that has them (8.1) when one is set. */
static bool fp8_hw(tl *T) {
    const oxide_options *o = T->opts;
    return o->sm >= 89 && (!o->ptx_major || o->ptx_major > 8 || (o->ptx_major == 8 && o->ptx_minor >= 1));
}

static oxide_value *c32(tl *T, uint32_t v) { return tl_int(T, T->ti32, (int32_t)v); }

oxide_value *tl_fp8_const(tl *T, const oxide_type *e, double v) {
    /* v is already an fp8 value (the builder rounded it): an e5m2 infinity stays one */
    return tl_int(T, T->ti8, (int8_t)oxide__ffmt_encode(fp8_fmt(e), v, false));
}

/* f32 to fp8 in integer ops. Normal results round the f32 bits at the fp8 mantissa's last bit
 * (a carry moves into the exponent) and rebias; subnormal ones shift the significand right by
 * the exponent's distance, rounding the same way. Both saturate by clamping the magnitude. */
static oxide_value *fp8_from_f32_sw(tl *T, oxide_value *x, const oxide__ffmt *f) {
    uint32_t M = (uint32_t)f->mbits, B = (uint32_t)f->bias, sh = 23 - M;
    uint32_t maxb = oxide__ffmt_encode(f, f->max, true);
    oxide_value *u = tl_cast(T, OXIDE_OP_BITCAST, x, T->ti32);
    oxide_value *a = tl_op2(T, OXIDE_OP_AND, u, c32(T, 0x7fffffff));
    oxide_value *s = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, u, c32(T, 24)), c32(T, 0x80));
    oxide_value *odd = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, a, c32(T, sh)), c32(T, 1));
    oxide_value *rn = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_ADD, a, c32(T, (1u << (sh - 1)) - 1)), odd);
    oxide_value *n = tl_op2(T, OXIDE_OP_SUB, tl_op2(T, OXIDE_OP_LSHR, rn, c32(T, sh)), c32(T, (127 - B) << M));
    /* subnormal: k = 151 - B - M - E, from 24 - M (E = 127 - B) up, at most 31 */
    oxide_value *E = tl_op2(T, OXIDE_OP_UMIN, tl_op2(T, OXIDE_OP_LSHR, a, c32(T, 23)), c32(T, 127 - B));
    oxide_value *k = tl_op2(T, OXIDE_OP_UMIN, tl_op2(T, OXIDE_OP_SUB, c32(T, 151 - B - M), E), c32(T, 31));
    oxide_value *m = tl_op2(T, OXIDE_OP_OR, tl_op2(T, OXIDE_OP_AND, a, c32(T, 0x7fffff)),
                            c32(T, 0x800000)); /* f32 subnormals give 0 */
    oxide_value *half1 =
        tl_op2(T, OXIDE_OP_SUB, tl_op2(T, OXIDE_OP_SHL, c32(T, 1), tl_op2(T, OXIDE_OP_SUB, k, c32(T, 1))), c32(T, 1));
    odd = tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, m, k), c32(T, 1));
    oxide_value *q = tl_op2(T, OXIDE_OP_LSHR, tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_ADD, m, half1), odd), k);
    oxide_value *r = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, a, c32(T, (128 - B) << 23)), q, n);
    r = tl_op2(T, OXIDE_OP_OR, tl_op2(T, OXIDE_OP_UMIN, r, c32(T, maxb)), s);
    r = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_UGT, a, c32(T, 0x7f800000)), c32(T, 0x7f), r);
    return tl_cast(T, OXIDE_OP_TRUNC, r, T->ti8);
}

/* fp8 to f32 in integer ops (exact). e5m2 is the high byte of an f16; e4m3 rebiases its bits
 * into an f32's, and a subnormal is its mantissa times the smallest subnormal (exact in f32). */
static oxide_value *fp8_to_f32_sw(tl *T, oxide_value *b, const oxide__ffmt *f) {
    if (f->ebits == 5) {
        oxide_value *h = tl_op2(T, OXIDE_OP_SHL, tl_cast(T, OXIDE_OP_ZEXT, b, T->ti16), tl_int(T, T->ti16, 8));
        return tl_cast(T, OXIDE_OP_FPEXT, tl_cast(T, OXIDE_OP_BITCAST, h, T->tf16), T->tf32);
    }
    uint32_t M = (uint32_t)f->mbits, B = (uint32_t)f->bias;
    oxide_value *w = tl_cast(T, OXIDE_OP_ZEXT, b, T->ti32), *a = tl_op2(T, OXIDE_OP_AND, w, c32(T, 0x7f));
    oxide_value *s = tl_op2(T, OXIDE_OP_SHL, tl_op2(T, OXIDE_OP_AND, w, c32(T, 0x80)), c32(T, 24));
    oxide_value *norm = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_SHL, a, c32(T, 23 - M)), c32(T, (127 - B) << 23));
    oxide_value *sub = tl_op2(T, OXIDE_OP_MUL, tl_cast(T, OXIDE_OP_UITOFP, a, T->tf32),
                              tl_flt(T, T->tf32, ldexp(1.0, 1 - (int)B - (int)M)));
    oxide_value *r = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, a, c32(T, 1u << M)),
                            tl_cast(T, OXIDE_OP_BITCAST, sub, T->ti32), norm);
    r = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, a, c32(T, 0x7f)), c32(T, 0x7fc00000), r);
    return tl_cast(T, OXIDE_OP_BITCAST, tl_op2(T, OXIDE_OP_OR, r, s), T->tf32);
}

/* y[i] = fp8 bits of the f32 x[i], two per cvt on sm_89+ (y may be x). */
static void fp8_from_f32(tl *T, oxide_value **x, oxide_value **y, uint32_t n, const oxide_type *to) {
    if (!fp8_hw(T)) {
        for (uint32_t i = 0; i < n && !T->st; i++)
            y[i] = fp8_from_f32_sw(T, x[i], fp8_fmt(to));
        return;
    }
    oxide_op op = to->kind == OXIDE_TYPE_F8E4M3 ? OXIDE_OP_CVT_E4M3X2_F32 : OXIDE_OP_CVT_E5M2X2_F32;
    for (uint32_t i = 0; i < n && !T->st; i += 2) {
        oxide_value *o[2] = {x[i], i + 1 < n ? x[i + 1] : tl_flt(T, T->tf32, 0)};
        oxide_value *p = tl_op(T, op, o, 2, T->ti16, NULL, 0);
        y[i] = tl_cast(T, OXIDE_OP_TRUNC, p, T->ti8);
        if (i + 1 < n)
            y[i + 1] = tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_LSHR, p, tl_int(T, T->ti16, 8)), T->ti8);
    }
}

/* y[i] = the f32 value of the fp8 bits x[i]; e4m3 two per cvt on sm_89+ (e5m2 is cheaper by shift). */
static void fp8_to_f32(tl *T, oxide_value **x, oxide_value **y, uint32_t n, const oxide_type *from) {
    oxide_type *v2;
    if (!fp8_hw(T) || from->kind == OXIDE_TYPE_F8E5M2) {
        for (uint32_t i = 0; i < n && !T->st; i++)
            y[i] = fp8_to_f32_sw(T, x[i], fp8_fmt(from));
        return;
    }
    oxide_status st = oxide_type_vector(T->ctx, T->tf16, 2, &v2);
    if (st) {
        tl_fail(T, st, "%s", oxide_last_error());
        return;
    }
    for (uint32_t i = 0; i < n && !T->st; i += 2) {
        oxide_value *p = tl_cast(T, OXIDE_OP_ZEXT, x[i], T->ti16);
        if (i + 1 < n)
            p = tl_op2(T, OXIDE_OP_OR, p,
                       tl_op2(T, OXIDE_OP_SHL, tl_cast(T, OXIDE_OP_ZEXT, x[i + 1], T->ti16), tl_int(T, T->ti16, 8)));
        oxide_value *h = tl_cast(T, OXIDE_OP_CVT_F16X2_E4M3X2, p, v2);
        for (uint32_t j = 0; j < 2 && i + j < n; j++)
            y[i + j] = tl_cast(T, OXIDE_OP_FPEXT, tl_imm_op(T, OXIDE_OP_EXTRACT, j, T->tf16, &h, 1), T->tf32);
    }
}

oxide_value *tl_fp8_to_f32(tl *T, oxide_value *x, const oxide_type *from) {
    oxide_value *y = NULL;
    fp8_to_f32(T, &x, &y, 1, from);
    return y;
}

/* tile.cast of one element between types that are not fp8: docs/tile.md gives the rounding and
 * saturation. */
/* Toward zero, saturating, NaN to 0 (docs/tile.md): what PTX's cvt.rzi does, spelled out because
 * LLVM's fptosi of an out-of-range value is poison, which it may fold to anything. */
static oxide_value *float_to_int(tl *T, oxide_value *x, oxide_type *to) {
    unsigned w = oxide__type_bits(to);
    double hi = ldexp(1.0, (int)w - 1);
    oxide_value *nan = tl_cmp(T, OXIDE_OP_FCMP, OXIDE_PRED_UNO, x, x);
    oxide_value *big = tl_cmp(T, OXIDE_OP_FCMP, OXIDE_PRED_OGE, x, tl_flt(T, x->type, hi));
    oxide_value *small = tl_cmp(T, OXIDE_OP_FCMP, OXIDE_PRED_OLT, x, tl_flt(T, x->type, -hi));
    oxide_value *out = tl_op2(T, OXIDE_OP_OR, nan, tl_op2(T, OXIDE_OP_OR, big, small));
    oxide_value *r = tl_cast(T, OXIDE_OP_FPTOSI, tl_sel(T, out, tl_flt(T, x->type, 0), x), to);
    int64_t max = w >= 64 ? INT64_MAX : (int64_t)((1ull << (w - 1)) - 1);
    r = tl_sel(T, big, tl_int(T, to, max), r);
    r = tl_sel(T, small, tl_int(T, to, -max - 1), r);
    return tl_sel(T, nan, tl_int(T, to, 0), r);
}

static oxide_value *convert(tl *T, oxide_value *x, const oxide_type *from, const oxide_type *to) {
    if (from == to) /* a copy (fp8 included, which has no scalar type below) */
        return x;
    oxide_type *ft = T->ctx->scalars[from->kind], *tt = T->ctx->scalars[to->kind];
    bool fi = oxide__type_is_int(from), ti = oxide__type_is_int(to);
    if (to->kind == OXIDE_TYPE_I1) /* NaN is not non-zero: an ordered compare */
        return fi ? tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_NE, x, tl_int(T, ft, 0))
                  : tl_cmp(T, OXIDE_OP_FCMP, OXIDE_PRED_ONE, x, tl_flt(T, ft, 0));
    if (from->kind == OXIDE_TYPE_I1)
        return ti ? tl_cast(T, OXIDE_OP_ZEXT, x, tt) : tl_cast(T, OXIDE_OP_UITOFP, x, tt);
    if (fi && ti)
        return tl_cast(T, oxide__type_bits(from) > oxide__type_bits(to) ? OXIDE_OP_TRUNC : OXIDE_OP_SEXT, x, tt);
    if (fi)
        return tl_cast(T, OXIDE_OP_SITOFP, x, tt);
    if (ti)
        return float_to_int(T, is_half(from) ? tl_cast(T, OXIDE_OP_FPEXT, x, T->tf32) : x, tt);
    if (is_half(from) && is_half(to))
        x = tl_cast(T, OXIDE_OP_FPEXT, x, T->tf32), from = T->tf32;
    return oxide__type_bits(from) < oxide__type_bits(to) ? tl_cast(T, OXIDE_OP_FPEXT, x, tt)
                                                         : tl_cast(T, OXIDE_OP_FPTRUNC, x, tt);
}

/* y[i] = x[i] cast from one element type to another; fp8 on either side goes through f32. */
static void convert_all(tl *T, oxide_value **x, oxide_value **y, uint32_t n, const oxide_type *from,
                        const oxide_type *to) {
    bool f8 = oxide__type_is_fp8(from), t8 = oxide__type_is_fp8(to);
    if (from == to || (!f8 && !t8)) {
        for (uint32_t i = 0; i < n && !T->st; i++)
            y[i] = convert(T, x[i], from, to);
        return;
    }
    if (f8)
        fp8_to_f32(T, x, y, n, from);
    else
        for (uint32_t i = 0; i < n && !T->st; i++)
            y[i] = convert(T, x[i], from, T->tf32);
    if (t8)
        fp8_from_f32(T, y, y, n, to);
    else
        for (uint32_t i = 0; i < n && !T->st; i++)
            y[i] = convert(T, y[i], T->tf32, to);
}

static void emit_cast(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    const oxide_type *from = oxide__tile_scalar(in->operands[0]->type), *to = oxide__tile_scalar(in->result->type);
    if (r->uniform) {
        oxide_value *x = tl_val_of(T, in->operands[0])->scalar;
        convert_all(T, &x, &r->scalar, 1, from, to);
        return;
    }
    oxide_value **src = tl_regs_in(T, in->operands[0], &r->L);
    if (src && (r->regs = tl_new_regs(T, &r->L)))
        convert_all(T, src, r->regs, 1u << r->L.nreg, from, to);
}

/* tile.arange's registers in layout L: each thread's coordinate plus the register's. */
static oxide_value **arange_in(tl *T, const tl_layout *L) {
    oxide_value *c[3], **r = tl_new_regs(T, L);
    tl_thread_coords(T, L, c);
    for (uint32_t g = 0; r && g < 1u << L->nreg && !T->st; g++)
        r[g] = tl_op2(T, OXIDE_OP_ADD, c[0], tl_int(T, T->ti32, tl_reg_elem(L, g)));
    return r;
}

static void emit_arange(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    r->regs = arange_in(T, &r->L);
}

static void emit_full(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    const oxide_type *e = oxide__tile_scalar(in->result->type);
    if (in->op == OXIDE_OP_TILE_SPLAT)
        r->scalar = tl_scalar_of(T, in->operands[0]);
    else if (oxide__type_is_fp8(e))
        r->scalar = tl_fp8_const(T, e, in->fvalue);
    else if (oxide__type_is_int(e))
        r->scalar = tl_int(T, tl_elem(T, in->result->type), in->ivalue);
    else
        r->scalar = tl_flt(T, tl_elem(T, in->result->type), in->fvalue);
}

/* ---- scalars and dispatch ---- */

static void emit_scalar(tl *T, const oxide_inst *in) {
    oxide_value *ops[8];
    if (in->noperands > 8) {
        tl_fail(T, OXIDE_ERROR_UNSUPPORTED, "more than 8 operands");
        return;
    }
    for (uint32_t i = 0; i < in->noperands; i++)
        ops[i] = tl_scalar_of(T, in->operands[i]);
    oxide_type *rt = oxide_ops[in->op].result == 'x' ? in->result->type : NULL;
    oxide_value *v = like(T, in, ops, rt);
    if (in->result)
        T->scal[in->result->id] = v;
}

/* tile.program_id along axis. With the group hint G, the first two axes are visited in grouped
 * order (for L2 reuse, as Triton's tutorials write it): the blocks the hardware launches one after
 * another, x fastest, walk G values of axis 0 for each value of axis 1 before moving on to the next
 * G. A bijection of the grid onto itself, so each program still runs once; a program's results
 * cannot depend on the order, so the interpreter keeps the plain one. */
static oxide_value *program_id(tl *T, uint32_t axis) {
    uint32_t g = 0;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_GROUP, &g);
    if (!g || axis > 1)
        return tl_block_id(T, axis);
    oxide_value *v[4];
    for (uint32_t i = 0; i < 4; i++) /* ctaid.x, ctaid.y, nctaid.x, nctaid.y as i64 */
        v[i] = tl_cast(T, OXIDE_OP_ZEXT, i < 2 ? tl_block_id(T, i) : tl_block_count(T, i - 2), T->ti64);
    oxide_value *G = tl_int(T, T->ti64, g);
    oxide_value *lin = tl_op2(T, OXIDE_OP_ADD, v[0], tl_op2(T, OXIDE_OP_MUL, v[1], v[2]));
    oxide_value *width = tl_op2(T, OXIDE_OP_MUL, G, v[3]);
    oxide_value *first = tl_op2(T, OXIDE_OP_MUL, tl_op2(T, OXIDE_OP_UDIV, lin, width), G);
    oxide_value *size = tl_op2(T, OXIDE_OP_UMIN, tl_op2(T, OXIDE_OP_SUB, v[2], first), G);
    oxide_value *r = tl_op2(T, OXIDE_OP_UREM, lin, width);
    oxide_value *id =
        axis ? tl_op2(T, OXIDE_OP_UDIV, r, size) : tl_op2(T, OXIDE_OP_ADD, first, tl_op2(T, OXIDE_OP_UREM, r, size));
    return tl_cast(T, OXIDE_OP_TRUNC, id, T->ti32);
}

void tl_emit_inst(tl *T, const oxide_inst *in) {
    T->at = in;
    oxide_value *v = NULL;
    switch (in->op) {
    case OXIDE_OP_TILE_PROGRAM_ID: v = program_id(T, (uint32_t)in->imm); break;
    case OXIDE_OP_TILE_NUM_PROGRAMS: v = tl_block_count(T, (uint32_t)in->imm); break;
    case OXIDE_OP_TILE_DIM: v = T->tensors[in->operands[0]->index].dim[in->imm]; break;
    case OXIDE_OP_TILE_LOAD:
        if (tl_val_of(T, in->result)->smem)
            tl_emit_load_smem(T, in);
        else
            tl_emit_load(T, in);
        return;
    case OXIDE_OP_TILE_STORE: tl_emit_store(T, in, false); return;
    case OXIDE_OP_TILE_ATOMIC_ADD: tl_emit_store(T, in, true); return;
    case OXIDE_OP_TILE_FULL:
    case OXIDE_OP_TILE_SPLAT: emit_full(T, in); return;
    case OXIDE_OP_TILE_ARANGE: emit_arange(T, in); return;
    case OXIDE_OP_TILE_DOT:
        if (tl_val_of(T, in->result)->wgmma)
            tl_emit_dot_wgmma(T, in);
        else
            tl_emit_dot(T, in);
        return;
    case OXIDE_OP_TILE_CAST: emit_cast(T, in); return;
    case OXIDE_OP_TILE_REDUCE: tl_emit_reduce(T, in); return;
    case OXIDE_OP_TILE_BROADCAST:
    case OXIDE_OP_TILE_EXPAND_DIMS:
    case OXIDE_OP_TILE_RESHAPE:
    case OXIDE_OP_TILE_PERMUTE:
        /* a view of a shared-memory operand tile (emit_wgmma.c) has no registers */
        if (!tl_val_of(T, in->result)->smem)
            tl_emit_shape(T, in);
        return;
    case OXIDE_OP_TILE_PRINT: tl_emit_print(T, in); return;
    default:
        if (in->result && in->result->type->kind == OXIDE_TYPE_TILE)
            emit_elementwise(T, in);
        else
            emit_scalar(T, in);
        return;
    }
    T->scal[in->result->id] = v;
}

/* The values a successor's parameters receive: a tile's registers in the parameter's layout. */
static oxide_value **succ_args(tl *T, const oxide_succ *s, uint32_t *n) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < s->nargs; i++) {
        const oxide_value *p = s->block->params.items[i];
        total += p->type->kind == OXIDE_TYPE_TILE ? 1u << tl_val_of(T, p)->L.nreg : 1;
    }
    oxide_value **a = oxide__alloc(&T->out->arena, (total ? total : 1) * sizeof *a);
    if (!a) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nargs && !T->st; i++) {
        const oxide_value *p = s->block->params.items[i];
        if (p->type->kind != OXIDE_TYPE_TILE) {
            a[k++] = tl_scalar_of(T, s->args[i]);
            continue;
        }
        const tl_layout *L = &tl_val_of(T, p)->L;
        oxide_value **r = tl_regs_in(T, s->args[i], L);
        for (uint32_t g = 0; g < 1u << L->nreg && r; g++)
            a[k++] = r[g];
    }
    *n = k;
    return a;
}

static void emit_term(tl *T, const oxide_inst *in) {
    T->at = in;
    oxide_status st = OXIDE_OK;
    uint32_t n0 = 0, n1 = 0;
    oxide_value **a0, **a1;
    switch (in->op) {
    case OXIDE_OP_RET:
        if (T->tiles) {
            /* the consumers are done with this program's shared memory before the next's */
            tl_barrier(T);
            tl_tiles_next(T, T->tiles, tl_pipe_iter(T, &T->pipes[T->producer - 1], 0));
            return;
        }
        st = oxide_build_op(T->b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL);
        break;
    case OXIDE_OP_BR:
        if ((a0 = succ_args(T, &in->succ[0], &n0)))
            st = oxide_build_br(T->b, T->blocks[in->succ[0].block->index], a0, n0);
        break;
    case OXIDE_OP_COND_BR: {
        oxide_value *c = tl_scalar_of(T, in->operands[0]);
        a0 = succ_args(T, &in->succ[0], &n0);
        a1 = succ_args(T, &in->succ[1], &n1);
        if (a0 && a1 && c)
            st = oxide_build_cond_br(T->b, c, T->blocks[in->succ[0].block->index], a0, n0,
                                     T->blocks[in->succ[1].block->index], a1, n1);
        break;
    }
    default: tl_fail(T, OXIDE_ERROR_UNSUPPORTED, "this terminator is not lowered"); return;
    }
    if (!T->st)
        ok(T, st, in->op);
}

/* The parameters: a tensor becomes its view (pointer, dims, strides), a scalar stays one. */
static oxide_status emit_params(tl *T) {
    oxide_function *src = T->src;
    for (uint32_t i = 0; i < src->iface.len; i++) {
        const oxide_iface_param *ip = src->iface.items[i];
        oxide_value *sv = src->params.items[ip->first_value], *v = NULL;
        oxide_status st;
        if (ip->kind == OXIDE_PARAM_TENSOR) {
            if ((st = oxide_kernel_add_tensor_param(T->k, ip->name, ip->tensor, &v)))
                return st;
            tl_tensor *t = &T->tensors[ip->first_value];
            t->ptr = v;
            t->rank = ip->tensor->rank;
            for (uint32_t d = 0; d < t->rank; d++) {
                t->dim[d] = T->k->params.items[v->index + 1 + d];
                t->stride[d] = T->k->params.items[v->index + 1 + t->rank + d];
            }
            if (t->tma && (st = oxide__kernel_tensor_tma(T->k, t->tma_box, &t->tma_desc)))
                return st;
        } else if ((st = oxide_kernel_add_scalar_param(T->k, ip->name, ip->scalar, &v)))
            return st;
        T->scal[sv->id] = v;
    }
    return OXIDE_OK;
}

static oxide_status emit_blocks(tl *T) {
    oxide_function *src = T->src;
    for (uint32_t bi = 0; bi < src->blocks.len; bi++) {
        const oxide_block *b = src->blocks.items[bi];
        uint32_t n = 0;
        for (uint32_t p = 0; p < b->params.len; p++) {
            const oxide_value *v = b->params.items[p];
            n += v->type->kind == OXIDE_TYPE_TILE ? 1u << tl_val_of(T, v)->L.nreg : 1;
        }
        oxide_type **types = oxide__alloc(&T->out->arena, (n ? n : 1) * sizeof *types);
        oxide_value **vals = oxide__alloc(&T->out->arena, (n ? n : 1) * sizeof *vals);
        if (!types || !vals)
            return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        uint32_t k = 0;
        for (uint32_t p = 0; p < b->params.len; p++) {
            const oxide_value *v = b->params.items[p];
            if (v->type->kind != OXIDE_TYPE_TILE) {
                types[k++] = v->type;
                continue;
            }
            for (uint32_t g = 0; g < 1u << tl_val_of(T, v)->L.nreg; g++)
                types[k++] = tl_elem(T, v->type);
        }
        /* the entry block takes no parameters: its code starts the kernel */
        oxide_status st = oxide_function_add_block(T->k, types, n, &T->blocks[bi], n ? vals : NULL);
        if (st)
            return tl_fail(T, st, "%s", oxide_last_error());
        k = 0;
        for (uint32_t p = 0; p < b->params.len; p++) {
            const oxide_value *v = b->params.items[p];
            if (v->type->kind != OXIDE_TYPE_TILE) {
                T->scal[v->id] = vals[k++];
                continue;
            }
            tl_val *x = tl_val_of(T, v);
            if (!(x->regs = tl_new_regs(T, &x->L)))
                return T->st;
            for (uint32_t g = 0; g < 1u << x->L.nreg; g++)
                x->regs[g] = vals[k++];
        }
    }
    return OXIDE_OK;
}

/* The entry's preamble: thread, lane and warp, the scratch base, safe tensor pointers. */
static void emit_prologue(tl *T) {
    T->tid = tl_op(T, OXIDE_OP_TID_X, NULL, 0, NULL, NULL, 0);
    T->lane = tl_op2(T, OXIDE_OP_AND, T->tid, tl_int(T, T->ti32, 31));
    T->warp = tl_op2(T, OXIDE_OP_LSHR, T->tid, tl_int(T, T->ti32, 5));
    T->smem = tl_op(T, OXIDE_OP_DYN_SMEM, NULL, 0, T->tps, NULL, 0);
    if (T->smem_fixed) {
        tl_emit_smem_region(T);
        T->smem = tl_smem_elem(T, T->smem, tl_int(T, T->ti32, (uint32_t)T->smem_fixed), T->ti8);
    }
    oxide_attr sym = {.key = OXIDE_ATTR_SYM, .s = "__oxide_tile_void"};
    T->dummy = tl_op(T, OXIDE_OP_GLOBAL_ADDR, NULL, 0, T->tpg, &sym, 1);
    for (uint32_t i = 0; i < T->src->params.len; i++) {
        tl_tensor *t = &T->tensors[i];
        if (!t->ptr)
            continue;
        /* an empty tensor's pointer may be anything (NULL): its every element is out of bounds,
         * and its checked loads read the private word instead */
        oxide_value *any = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SGT, t->dim[0], tl_int(T, T->ti64, 0));
        for (uint32_t d = 1; d < t->rank; d++)
            any = tl_op2(T, OXIDE_OP_AND, any,
                         tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SGT, t->dim[d], tl_int(T, T->ti64, 0)));
        t->safe = tl_sel(T, any, t->ptr, T->dummy);
    }
}

static void number(tl *T) {
    uint32_t id = 0;
    oxide_function *f = T->src;
    for (uint32_t i = 0; i < f->params.len; i++)
        ((oxide_value *)f->params.items[i])->id = id++;
    for (uint32_t bi = 0; bi < f->blocks.len; bi++) {
        const oxide_block *b = f->blocks.items[bi];
        for (uint32_t p = 0; p < b->params.len; p++)
            ((oxide_value *)b->params.items[p])->id = id++;
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (in->result)
                in->result->id = id++;
        }
    }
    T->nvals = id;
}

/* A widening cast (bf16 to f32, ...) is emitted where its result is first used in its block, or
 * at the block's end: until then the narrower operand is what stays live. Emitted where it
 * stands, a bf16 layernorm's w, converted before b is loaded, kept its f32 registers live across
 * b's edge path, twice the packed bf16 (4096 columns: 96 registers at 4 warps, 80 so; 58 at 8
 * warps, 48). */
static bool widens(const oxide_inst *in) {
    return in->op == OXIDE_OP_TILE_CAST && oxide__type_bits(oxide__tile_scalar(in->result->type)) >
                                               oxide__type_bits(oxide__tile_scalar(in->operands[0]->type));
}

/* Emits in, after the held casts it uses. */
static void emit_in_turn(tl *T, const oxide_inst *in, bool *held) {
    for (uint32_t k = 0; k < in->noperands; k++) {
        const oxide_value *o = in->operands[k];
        if (o->kind == VAL_INST && held[o->id]) {
            held[o->id] = false;
            emit_in_turn(T, o->def, held);
        }
    }
    tl_emit_inst(T, in);
}

uint64_t tl_smem_limit(unsigned sm) {
    /* the most dynamic shared memory one block may opt in to (CUDA's per-architecture table) */
    return sm >= 90 ? 232448 : sm == 80 || sm == 87 ? 166912 : 101376;
}

oxide_status tl_emit_kernel(tl *T) {
    number(T);
    oxide_arena *a = &T->out->arena;
    T->vals = oxide__alloc(a, (T->nvals + 1) * sizeof *T->vals);
    T->scal = oxide__alloc(a, (T->nvals + 1) * sizeof *T->scal);
    T->tensors = oxide__alloc(a, (T->src->params.len + 1) * sizeof *T->tensors);
    T->blocks = oxide__alloc(a, (T->src->blocks.len + 1) * sizeof *T->blocks);
    if (!T->vals || !T->scal || !T->tensors || !T->blocks)
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    memset(T->vals, 0, (T->nvals + 1) * sizeof *T->vals);
    memset(T->scal, 0, (T->nvals + 1) * sizeof *T->scal);
    memset(T->tensors, 0, (T->src->params.len + 1) * sizeof *T->tensors);
    oxide_status st;
    if ((st = tl_plan_wgmma(T)) || (st = tl_plan_mma_smem(T)) || (st = tl_assign(T)))
        return st;
    T->smem_need = T->smem_fixed;
    /* registers per thread: refuse what cannot run before building it */
    for (uint32_t i = 0; i < T->nvals; i++)
        if (T->vals[i].has_layout && (1u << T->vals[i].L.nreg) > TL_MAX_REGS)
            return tl_fail(T, OXIDE_ERROR_UNSUPPORTED,
                           "a tile takes %u registers per thread with %u warps; the lowering allows %u (use smaller "
                           "tiles or more warps)",
                           1u << T->vals[i].L.nreg, T->warps, TL_MAX_REGS);
    if ((st = emit_params(T)) || (st = tl_plan_persistent(T)) || (st = emit_blocks(T)))
        return st;
    bool *held = oxide__alloc(a, (T->nvals + 1) * sizeof *held);
    if (!held)
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    oxide_cfg g;
    if (!oxide__cfg_build(&g, T->src)) {
        oxide__cfg_free(&g);
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    /* a deferred pipelined loop's body before its exit: the exit's drain rebinds the accumulator */
    for (uint32_t k = 0; k < T->npipes; k++) {
        uint32_t ie = g.nreach, ib = g.nreach;
        for (uint32_t i = 0; i < g.nreach; i++) {
            const oxide_block *b = T->src->blocks.items[g.order[i]];
            ie = b == T->pipes[k].exit ? i : ie;
            ib = b == T->pipes[k].body ? i : ib;
        }
        if (T->pipes[k].defer && ie < ib && ib < g.nreach) {
            uint32_t body = g.order[ib];
            memmove(&g.order[ie + 1], &g.order[ie], (ib - ie) * sizeof g.order[0]);
            g.order[ie] = body;
        }
    }
    for (uint32_t i = 0; i < g.nreach && !T->st; i++) {
        const oxide_block *b = T->src->blocks.items[g.order[i]];
        T->b = T->blocks[g.order[i]];
        if (i == 0) {
            emit_prologue(T);
            if (T->producer)
                tl_emit_producer(T, &g);
        }
        tl_emit_pipe_drain(T, b);
        for (uint32_t j = 0; j + 1 < b->insts.len && !T->st; j++) {
            const oxide_inst *in = b->insts.items[j];
            if (widens(in))
                held[in->result->id] = true;
            else
                emit_in_turn(T, in, held);
        }
        for (uint32_t j = 0; j + 1 < b->insts.len && !T->st; j++) {
            const oxide_inst *in = b->insts.items[j];
            if (in->result && held[in->result->id]) {
                held[in->result->id] = false;
                tl_emit_inst(T, in);
            }
        }
        tl_emit_pipe_prologue(T, b);
        if (b->insts.len && !T->st)
            emit_term(T, b->insts.items[b->insts.len - 1]);
    }
    oxide__cfg_free(&g);
    /* blocks the entry never reaches were not emitted: end them so the kernel verifies */
    for (uint32_t bi = 0; bi < T->src->blocks.len && !T->st; bi++) {
        oxide_block *nb = T->blocks[bi];
        if (!nb->insts.len)
            ok(T, oxide_build_op(nb, OXIDE_OP_UNREACHABLE, NULL, 0, NULL, NULL, 0, NULL), OXIDE_OP_UNREACHABLE);
    }
    if (T->st)
        return T->st;
    if (T->smem_need > tl_smem_limit(T->opts->sm)) {
        T->at = T->smem_who;
        return tl_fail(T, OXIDE_ERROR_UNSUPPORTED,
                       "needs %llu bytes of shared memory; %s allows %llu per block (use smaller tiles)",
                       (unsigned long long)T->smem_need, T->opts->target,
                       (unsigned long long)tl_smem_limit(T->opts->sm));
    }
    T->at = NULL;
    if ((st = oxide_kernel_set_dyn_smem(T->k, (uint32_t)T->smem_need)) ||
        (st = oxide_kernel_set_launch_bounds(T->k, T->threads + (T->producer ? 128 : 0), 0)))
        return tl_fail(T, st, "%s", oxide_last_error());
    T->k->block[0] = T->threads + (T->producer ? 128 : 0), T->k->block[1] = T->k->block[2] = 1;
    return OXIDE_OK;
}
