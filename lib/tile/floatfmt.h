/* The small float formats (f16, bf16, f8e4m3, f8e5m2) on the host: rounding a double to one of
 * them and converting between its bit pattern and its value. Header-only (static inline) so that
 * programs which link only liboxide's public symbols (tools/difftest) can use the same code as the
 * tile interpreter. Values are kept as doubles, which hold every value of these formats exactly.
 * Not installed. */
#ifndef OXIDE_TILE_FLOATFMT_H
#define OXIDE_TILE_FLOATFMT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "oxide.h"

typedef struct oxide__ffmt {
    int mbits, ebits, bias;
    double max;        /* largest finite value */
    bool ieee_special; /* the all-ones exponent holds infinities and NaNs (e4m3: only S.1111.111 is NaN) */
    uint32_t nan;      /* the NaN encode writes, sign aside: for fp8 the one PTX's conversions write */
} oxide__ffmt;

static const oxide__ffmt oxide__ffmt_f16 = {10, 5, 15, 65504.0, true, 0x7e00};
static const oxide__ffmt oxide__ffmt_bf16 = {7, 8, 127, 0x1.fep127, true, 0x7fc0};
static const oxide__ffmt oxide__ffmt_e4m3 = {3, 4, 7, 448.0, false, 0x7f};
static const oxide__ffmt oxide__ffmt_e5m2 = {2, 5, 15, 57344.0, true, 0x7f};

/* v rounded to the format, to nearest with ties to even (subnormals included). A value beyond the
 * largest finite one becomes +-max when saturate is set (and always for e4m3, which has no
 * infinity), else +-infinity; NaN stays NaN. */
static inline double oxide__ffmt_round(const oxide__ffmt *f, double v, bool saturate) {
    if (isnan(v) || v == 0)
        return v;
    saturate = saturate || !f->ieee_special;
    if (isinf(v))
        return saturate ? copysign(f->max, v) : v;
    int e = ilogb(v), emin = 1 - f->bias;
    if (e < emin)
        e = emin; /* subnormals share the smallest normal's step */
    double ulp = ldexp(1.0, e - f->mbits);
    double r = nearbyint(v / ulp) * ulp; /* v / ulp is exact: ulp is a power of two */
    if (fabs(r) > f->max)
        return saturate ? copysign(f->max, v) : copysign(INFINITY, v);
    return r;
}

static inline double oxide__ffmt_decode(const oxide__ffmt *f, uint32_t bits) {
    uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    uint32_t e = (bits >> f->mbits) & emask, m = bits & mmask;
    bool neg = (bits >> (f->ebits + f->mbits)) & 1;
    double v;
    if (f->ieee_special && e == emask)
        v = m ? NAN : INFINITY;
    else if (!f->ieee_special && e == emask && m == mmask)
        v = NAN;
    else if (e == 0)
        v = ldexp((double)m, 1 - f->bias - f->mbits);
    else
        v = ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
    return neg ? -v : v;
}

/* The bit pattern of v after oxide__ffmt_round(f, v, saturate). NaN is f->nan with v's sign. */
static inline uint32_t oxide__ffmt_encode(const oxide__ffmt *f, double v, bool saturate) {
    uint32_t emask = (1u << f->ebits) - 1, sign = signbit(v) ? 1u << (f->ebits + f->mbits) : 0;
    if (isnan(v))
        return sign | f->nan;
    v = fabs(oxide__ffmt_round(f, v, saturate));
    if (isinf(v))
        return sign | emask << f->mbits;
    if (v == 0)
        return sign;
    int e = ilogb(v);
    if (e < 1 - f->bias)
        return sign | (uint32_t)ldexp(v, f->bias - 1 + f->mbits);
    uint32_t m = (uint32_t)ldexp(v, f->mbits - e) - (1u << f->mbits);
    return sign | (uint32_t)(e + f->bias) << f->mbits | m;
}

/* An integer as the double nearest to it, rounded to odd when it has more than 53 significant
 * bits: a later rounding to a format of at most 51 bits then gives the correctly rounded result
 * (rounding twice to nearest would not). */
static inline double oxide__ffmt_from_u64(uint64_t u) {
    int bits = u ? 64 - __builtin_clzll(u) : 0;
    if (bits <= 53)
        return (double)u;
    int s = bits - 53;
    uint64_t kept = u >> s, lost = u & ((1ull << s) - 1);
    return ldexp((double)(kept | (lost != 0)), s);
}

static inline double oxide__ffmt_from_i64(int64_t x) {
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    double v = oxide__ffmt_from_u64(u);
    return x < 0 ? -v : v;
}

/* fcmp's predicates on two values (f16 .. f64 as doubles): 1 or 0; -1 for a predicate that is
 * not fcmp's. Shared by the tile interpreter and tools/difftest's SIMT interpreter. */
static inline int oxide__fcmp(oxide_pred p, double a, double b) {
    bool uno = isnan(a) || isnan(b);
    switch (p) {
    case OXIDE_PRED_OEQ: return !uno && a == b;
    case OXIDE_PRED_ONE: return !uno && a != b;
    case OXIDE_PRED_OLT: return !uno && a < b;
    case OXIDE_PRED_OLE: return !uno && a <= b;
    case OXIDE_PRED_OGT: return !uno && a > b;
    case OXIDE_PRED_OGE: return !uno && a >= b;
    case OXIDE_PRED_ORD: return !uno;
    case OXIDE_PRED_UNO: return uno;
    case OXIDE_PRED_UEQ: return uno || a == b;
    case OXIDE_PRED_UNE: return uno || a != b;
    case OXIDE_PRED_FULT: return uno || a < b;
    case OXIDE_PRED_FULE: return uno || a <= b;
    case OXIDE_PRED_FUGT: return uno || a > b;
    case OXIDE_PRED_FUGE: return uno || a >= b;
    default: return -1;
    }
}

/* minnum/maxnum as PTX min.f32/max.f32 compute them: a NaN operand gives the other operand, and
 * -0 orders below +0. Shared with tools/difftest. */
static inline double oxide__fminmax(double a, double b, bool is_max) {
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    if (a == b && a == 0)
        return (signbit(a) != 0) == is_max ? b : a;
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

#endif
