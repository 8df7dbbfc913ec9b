/* The tile interpreter's element semantics (docs/tile.md, "Semantics"): constants, the SIMT rows
 * a tile kernel may use, on scalars and elementwise on tiles, the scalar casts and the element
 * conversion of tile.cast. Integers wrap; division by zero and INT_MIN / -1 have defined results;
 * f16 and bf16 compute in f32 and round after each op; math functions come from libm in float. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "interp.h"

bool oxide__ti_is_float(oxide_type_kind k) {
    return k == OXIDE_TYPE_F16 || k == OXIDE_TYPE_BF16 || k == OXIDE_TYPE_F32 || k == OXIDE_TYPE_F64 ||
           k == OXIDE_TYPE_F8E4M3 || k == OXIDE_TYPE_F8E5M2;
}

unsigned oxide__ti_bits(oxide_type_kind k) {
    switch (k) {
    case OXIDE_TYPE_I1: return 1;
    case OXIDE_TYPE_I8: return 8;
    case OXIDE_TYPE_I16: return 16;
    case OXIDE_TYPE_I32: return 32;
    default: return 64;
    }
}

static uint64_t mask_of(unsigned w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }
static uint64_t uval(unsigned w, int64_t x) { return (uint64_t)x & mask_of(w); }
static int64_t sext(unsigned w, uint64_t x) {
    x &= mask_of(w);
    return w < 64 && (x >> (w - 1)) & 1 ? (int64_t)(x | ~mask_of(w)) : (int64_t)x;
}

int64_t oxide__ti_wrap(oxide_type_kind k, uint64_t x) {
    unsigned w = oxide__ti_bits(k);
    return w == 1 ? (int64_t)(x & 1) : sext(w, x);
}

double oxide__ti_round(oxide_type_kind k, double v) {
    switch (k) {
    case OXIDE_TYPE_F16: return oxide__ffmt_round(&oxide__ffmt_f16, v, false);
    case OXIDE_TYPE_BF16: return oxide__ffmt_round(&oxide__ffmt_bf16, v, false);
    case OXIDE_TYPE_F32: return (float)v;
    case OXIDE_TYPE_F8E4M3: return oxide__ffmt_round(&oxide__ffmt_e4m3, v, true);
    case OXIDE_TYPE_F8E5M2: return oxide__ffmt_round(&oxide__ffmt_e5m2, v, true);
    default: return v;
    }
}

/* A float to an integer of width w: toward zero, saturating, NaN to 0. */
static int64_t float_to_int(double v, unsigned w, bool is_signed) {
    if (isnan(v))
        return 0;
    v = trunc(v);
    double lo = is_signed ? -ldexp(1.0, (int)w - 1) : 0, hi = is_signed ? ldexp(1.0, (int)w - 1) : ldexp(1.0, (int)w);
    if (v < lo)
        return is_signed ? sext(w, 1ull << (w - 1)) : 0;
    if (v >= hi)
        return is_signed ? (int64_t)(mask_of(w) >> 1) : (int64_t)mask_of(w);
    return is_signed ? (int64_t)v : (int64_t)(uint64_t)v;
}

static double int_to_float(oxide_type_kind to, int64_t x, bool is_unsigned) {
    if (to == OXIDE_TYPE_F32)
        return is_unsigned ? (double)(float)(uint64_t)x : (double)(float)x;
    if (to == OXIDE_TYPE_F64)
        return is_unsigned ? (double)(uint64_t)x : (double)x;
    return oxide__ti_round(to, is_unsigned ? oxide__ffmt_from_u64((uint64_t)x) : oxide__ffmt_from_i64(x));
}

ti_cell oxide__ti_convert(oxide_type_kind a, oxide_type_kind b, ti_cell x) {
    ti_cell r;
    if (a == b) /* a cast to the same element is a copy: an e5m2 infinity stays one */
        return x;
    bool af = oxide__ti_is_float(a), bf = oxide__ti_is_float(b);
    if (b == OXIDE_TYPE_I1)
        r.i = af ? (!isnan(x.f) && x.f != 0) : x.i != 0;
    else if (af && bf)
        /* a NaN cast to fp8 is the canonical NaN, positive, as PTX's cvt writes it */
        r.f = (b == OXIDE_TYPE_F8E4M3 || b == OXIDE_TYPE_F8E5M2) && a != b && isnan(x.f) ? fabs(x.f)
                                                                                         : oxide__ti_round(b, x.f);
    else if (af)
        r.i = float_to_int(x.f, oxide__ti_bits(b), true);
    else if (bf)
        r.f = int_to_float(b, x.i, false);
    else
        r.i = oxide__ti_wrap(b, (uint64_t)x.i);
    return r;
}

void oxide__ti_format(oxide_type_kind k, ti_cell x, char *out, size_t cap) {
    if (!oxide__ti_is_float(k))
        snprintf(out, cap, "%" PRId64, x.i);
    else
        snprintf(out, cap, k == OXIDE_TYPE_F64 ? "%.17g" : "%.9g", x.f);
}

/* ---- integers ---- */

static int64_t int_binary(oxide_op op, unsigned w, int64_t a, int64_t b) {
    uint64_t ua = uval(w, a), ub = uval(w, b);
    int64_t sa = sext(w, ua), sb = sext(w, ub), smin = sext(w, 1ull << (w - 1));
    switch (op) {
    case OXIDE_OP_ADD: return (int64_t)(ua + ub);
    case OXIDE_OP_SUB: return (int64_t)(ua - ub);
    case OXIDE_OP_MUL: return (int64_t)(ua * ub);
    case OXIDE_OP_SDIV: return !sb ? -1 : sa == smin && sb == -1 ? smin : sa / sb;
    case OXIDE_OP_SREM: return !sb ? sa : sb == -1 ? 0 : sa % sb;
    case OXIDE_OP_UDIV: return !ub ? -1 : (int64_t)(ua / ub);
    case OXIDE_OP_UREM: return !ub ? (int64_t)ua : (int64_t)(ua % ub);
    case OXIDE_OP_AND: return (int64_t)(ua & ub);
    case OXIDE_OP_OR: return (int64_t)(ua | ub);
    case OXIDE_OP_XOR: return (int64_t)(ua ^ ub);
    case OXIDE_OP_SHL: return ub >= w ? 0 : (int64_t)(ua << ub);
    case OXIDE_OP_LSHR: return ub >= w ? 0 : (int64_t)(ua >> ub);
    case OXIDE_OP_ASHR: return ub >= w ? (sa < 0 ? -1 : 0) : sa < 0 ? ~(~sa >> ub) : sa >> ub;
    case OXIDE_OP_SMIN: return sa < sb ? sa : sb;
    case OXIDE_OP_SMAX: return sa > sb ? sa : sb;
    case OXIDE_OP_UMIN: return (int64_t)(ua < ub ? ua : ub);
    default: /* UMAX */ return (int64_t)(ua > ub ? ua : ub);
    }
}

static int64_t int_unary(oxide_op op, unsigned w, int64_t a) {
    uint64_t ua = uval(w, a);
    switch (op) {
    case OXIDE_OP_NEG: return (int64_t)(0 - ua);
    case OXIDE_OP_NOT: return (int64_t)~ua;
    case OXIDE_OP_IABS: return sext(w, ua) < 0 ? (int64_t)(0 - ua) : (int64_t)ua;
    case OXIDE_OP_POPC: return __builtin_popcountll(ua);
    case OXIDE_OP_CLZ: return ua ? __builtin_clzll(ua) - (64 - (int)w) : (int64_t)w;
    default: { /* BREV */
        uint64_t r = 0;
        for (unsigned i = 0; i < w; i++)
            r |= ((ua >> i) & 1) << (w - 1 - i);
        return (int64_t)r;
    }
    }
}

static bool int_compare(oxide_pred p, unsigned w, int64_t a, int64_t b) {
    uint64_t ua = uval(w, a), ub = uval(w, b);
    int64_t sa = sext(w, ua), sb = sext(w, ub);
    switch (p) {
    case OXIDE_PRED_EQ: return ua == ub;
    case OXIDE_PRED_NE: return ua != ub;
    case OXIDE_PRED_SLT: return sa < sb;
    case OXIDE_PRED_SLE: return sa <= sb;
    case OXIDE_PRED_SGT: return sa > sb;
    case OXIDE_PRED_SGE: return sa >= sb;
    case OXIDE_PRED_ULT: return ua < ub;
    case OXIDE_PRED_ULE: return ua <= ub;
    case OXIDE_PRED_UGT: return ua > ub;
    default: return ua >= ub;
    }
}

/* ---- floats: f64 in double, the others in float ---- */

static double float_op_d(oxide_op op, double a, double b, double c) {
    switch (op) {
    case OXIDE_OP_ADD: return a + b;
    case OXIDE_OP_SUB: return a - b;
    case OXIDE_OP_MUL: return a * b;
    case OXIDE_OP_FDIV: return a / b;
    case OXIDE_OP_FREM: return fmod(a, b);
    case OXIDE_OP_NEG: return -a;
    case OXIDE_OP_FMIN: return oxide__fminmax(a, b, false);
    case OXIDE_OP_FMAX: return oxide__fminmax(a, b, true);
    case OXIDE_OP_FABS: return fabs(a);
    case OXIDE_OP_SQRT: return sqrt(a);
    case OXIDE_OP_RSQRT:
    case OXIDE_OP_RSQRT_APPROX: return 1.0 / sqrt(a);
    case OXIDE_OP_RCP_APPROX: return 1.0 / a;
    case OXIDE_OP_EXP: return exp(a);
    case OXIDE_OP_EXP2:
    case OXIDE_OP_EXP2_APPROX: return exp2(a);
    case OXIDE_OP_LOG: return log(a);
    case OXIDE_OP_LOG2:
    case OXIDE_OP_LOG2_APPROX: return log2(a);
    case OXIDE_OP_SIN:
    case OXIDE_OP_SIN_APPROX: return sin(a);
    case OXIDE_OP_COS:
    case OXIDE_OP_COS_APPROX: return cos(a);
    case OXIDE_OP_TAN: return tan(a);
    case OXIDE_OP_TANH:
    case OXIDE_OP_TANH_APPROX: return tanh(a);
    case OXIDE_OP_POW: return pow(a, b);
    case OXIDE_OP_ERF: return erf(a);
    case OXIDE_OP_FMA: return fma(a, b, c);
    case OXIDE_OP_FLOOR: return floor(a);
    case OXIDE_OP_CEIL: return ceil(a);
    case OXIDE_OP_ROUND: return round(a);
    default: /* FTRUNC */ return trunc(a);
    }
}

static float float_op_f(oxide_op op, float a, float b, float c) {
    switch (op) {
    case OXIDE_OP_ADD: return a + b;
    case OXIDE_OP_SUB: return a - b;
    case OXIDE_OP_MUL: return a * b;
    case OXIDE_OP_FDIV: return a / b;
    case OXIDE_OP_FREM: return fmodf(a, b);
    case OXIDE_OP_NEG: return -a;
    case OXIDE_OP_FMIN: return (float)oxide__fminmax(a, b, false);
    case OXIDE_OP_FMAX: return (float)oxide__fminmax(a, b, true);
    case OXIDE_OP_FABS: return fabsf(a);
    case OXIDE_OP_SQRT: return sqrtf(a);
    case OXIDE_OP_RSQRT:
    case OXIDE_OP_RSQRT_APPROX: return 1.0f / sqrtf(a);
    case OXIDE_OP_RCP_APPROX: return 1.0f / a;
    case OXIDE_OP_EXP: return expf(a);
    case OXIDE_OP_EXP2:
    case OXIDE_OP_EXP2_APPROX: return exp2f(a);
    case OXIDE_OP_LOG: return logf(a);
    case OXIDE_OP_LOG2:
    case OXIDE_OP_LOG2_APPROX: return log2f(a);
    case OXIDE_OP_SIN:
    case OXIDE_OP_SIN_APPROX: return sinf(a);
    case OXIDE_OP_COS:
    case OXIDE_OP_COS_APPROX: return cosf(a);
    case OXIDE_OP_TAN: return tanf(a);
    case OXIDE_OP_TANH:
    case OXIDE_OP_TANH_APPROX: return tanhf(a);
    case OXIDE_OP_POW: return powf(a, b);
    case OXIDE_OP_ERF: return erff(a);
    case OXIDE_OP_FMA: return fmaf(a, b, c);
    case OXIDE_OP_FLOOR: return floorf(a);
    case OXIDE_OP_CEIL: return ceilf(a);
    case OXIDE_OP_ROUND: return roundf(a);
    default: /* FTRUNC */ return truncf(a);
    }
}

/* ---- the SIMT rows ---- */

static oxide_status run_const(ti_state *s, const oxide_inst *in) {
    ti_slot *r;
    oxide_status st = oxide__ti_def(s, in->result, &r);
    if (st)
        return st;
    oxide_type_kind k = ti_kind(r->type);
    if (oxide__ti_is_float(k))
        r->data[0].f = oxide__ti_round(k, in->fvalue);
    else
        r->data[0].i = oxide__ti_wrap(k, (uint64_t)in->ivalue);
    return OXIDE_OK;
}

static uint64_t bits_of(oxide_type_kind k, ti_cell x) {
    switch (k) {
    case OXIDE_TYPE_F16: return oxide__ffmt_encode(&oxide__ffmt_f16, x.f, false);
    case OXIDE_TYPE_BF16: return oxide__ffmt_encode(&oxide__ffmt_bf16, x.f, false);
    case OXIDE_TYPE_F32: {
        float f = (float)x.f;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    case OXIDE_TYPE_F64: {
        uint64_t u;
        memcpy(&u, &x.f, 8);
        return u;
    }
    default: return uval(oxide__ti_bits(k), x.i);
    }
}

ti_cell oxide__ti_from_bits(oxide_type_kind k, uint64_t u) {
    ti_cell r;
    switch (k) {
    case OXIDE_TYPE_F16: r.f = oxide__ffmt_decode(&oxide__ffmt_f16, (uint32_t)u); break;
    case OXIDE_TYPE_BF16: r.f = oxide__ffmt_decode(&oxide__ffmt_bf16, (uint32_t)u); break;
    case OXIDE_TYPE_F32: {
        float f;
        uint32_t w = (uint32_t)u;
        memcpy(&f, &w, 4);
        r.f = f;
        break;
    }
    case OXIDE_TYPE_F64: memcpy(&r.f, &u, 8); break;
    default: r.i = oxide__ti_wrap(k, u);
    }
    return r;
}

/* The scalar casts (trunc .. sitofp, bitcast); their operands are never tiles. */
static ti_cell scalar_cast(oxide_op op, oxide_type_kind a, oxide_type_kind b, ti_cell x) {
    ti_cell r;
    unsigned wa = oxide__ti_bits(a), wb = oxide__ti_bits(b);
    switch (op) {
    case OXIDE_OP_ZEXT: r.i = oxide__ti_wrap(b, uval(wa, x.i)); break;
    case OXIDE_OP_TRUNC:
    case OXIDE_OP_SEXT: r.i = oxide__ti_wrap(b, (uint64_t)sext(wa, uval(wa, x.i))); break;
    case OXIDE_OP_FPTRUNC:
    case OXIDE_OP_FPEXT: r.f = oxide__ti_round(b, x.f); break;
    case OXIDE_OP_FPTOUI: r.i = oxide__ti_wrap(b, (uint64_t)float_to_int(x.f, wb, false)); break;
    case OXIDE_OP_FPTOSI: r.i = oxide__ti_wrap(b, (uint64_t)float_to_int(x.f, wb, true)); break;
    case OXIDE_OP_UITOFP: r.f = int_to_float(b, (int64_t)uval(wa, x.i), true); break;
    case OXIDE_OP_SITOFP: r.f = int_to_float(b, sext(wa, uval(wa, x.i)), false); break;
    default: r = oxide__ti_from_bits(b, bits_of(a, x)); /* BITCAST */
    }
    return r;
}

static bool is_cast(oxide_op op) { return (op >= OXIDE_OP_TRUNC && op <= OXIDE_OP_SITOFP) || op == OXIDE_OP_BITCAST; }

/* One element of an arithmetic or math row; x, y, z are the operands' cells at the element. */
static ti_cell element(oxide_op op, oxide_type_kind k, ti_cell x, ti_cell y, ti_cell z) {
    ti_cell r;
    if (oxide__ti_is_float(k)) {
        r.f = k == OXIDE_TYPE_F64 ? float_op_d(op, x.f, y.f, z.f)
                                  : oxide__ti_round(k, float_op_f(op, (float)x.f, (float)y.f, (float)z.f));
        return r;
    }
    unsigned w = oxide__ti_bits(k);
    bool unary = op == OXIDE_OP_NEG || op == OXIDE_OP_NOT || op == OXIDE_OP_IABS || op == OXIDE_OP_POPC ||
                 op == OXIDE_OP_CLZ || op == OXIDE_OP_BREV;
    r.i = oxide__ti_wrap(k, (uint64_t)(unary ? int_unary(op, w, x.i) : int_binary(op, w, x.i, y.i)));
    return r;
}

oxide_status oxide__ti_simt(ti_state *s, const oxide_inst *in) {
    if (in->op == OXIDE_OP_CONST)
        return run_const(s, in);
    ti_slot *r, *ops[3] = {NULL, NULL, NULL};
    for (uint32_t i = 0; i < in->noperands && i < 3; i++)
        ops[i] = ti_get(s, in->operands[i]);
    oxide_status st = oxide__ti_def(s, in->result, &r);
    if (st)
        return st;
    oxide_type_kind k = ti_kind(ops[0]->type), rk = ti_kind(r->type);
    ti_cell zero = {0};
    for (uint64_t e = 0; e < r->n; e++) {
        ti_cell x = ops[0]->data[ops[0]->n == 1 ? 0 : e];
        ti_cell y = ops[1] ? ops[1]->data[ops[1]->n == 1 ? 0 : e] : zero;
        ti_cell z = ops[2] ? ops[2]->data[ops[2]->n == 1 ? 0 : e] : zero;
        ti_cell out;
        if (in->op == OXIDE_OP_SELECT)
            out = x.i & 1 ? y : z;
        else if (in->op == OXIDE_OP_ICMP)
            out.i = int_compare(in->pred, oxide__ti_bits(k), x.i, y.i);
        else if (in->op == OXIDE_OP_FCMP)
            out.i = oxide__fcmp(in->pred, x.f, y.f);
        else if (is_cast(in->op))
            out = scalar_cast(in->op, k, rk, x);
        else
            out = element(in->op, k, x, y, z);
        r->data[e] = out;
    }
    return OXIDE_OK;
}
