/* Reference interpreter for oxide's SIMT IR (interp.h says what it models). Independent of the
 * compiler: it reads lib/ir.h's structures and nothing of lib/lower.c or LLVM. */
#include "interp_priv.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "ir.h"
#include "tile/floatfmt.h"

#define failf dt__failf

int dt__failf(interp *I, const oxide_inst *in, const char *fmt, ...) {
    if (I->failed)
        return -1;
    I->failed = true;
    I->unmodelled = strstr(fmt, "not modelled") != NULL;
    size_t n = 0;
    if (in)
        n = (size_t)snprintf(I->err, I->errlen, "@%s ^%u '%s': ", I->fn->name, in->block->index, oxide_op_name(in->op));
    if (n < I->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(I->err + n, I->errlen - n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void *budget_alloc(interp *I, size_t n) {
    if (n > I->mem_limit || I->mem > I->mem_limit - n) {
        failf(I, NULL, "@%s: memory limit of %llu bytes reached", I->fn->name, (unsigned long long)I->mem_limit);
        return NULL;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        failf(I, NULL, "@%s: out of memory", I->fn->name);
        return NULL;
    }
    I->mem += n;
    return p;
}

/* ---- types ---- */

static unsigned tbits(const oxide_type *t) {
    switch (t->kind) {
    case OXIDE_TYPE_I1: return 1;
    case OXIDE_TYPE_I8: return 8;
    case OXIDE_TYPE_I16:
    case OXIDE_TYPE_F16:
    case OXIDE_TYPE_BF16: return 16;
    case OXIDE_TYPE_I32:
    case OXIDE_TYPE_F32: return 32;
    case OXIDE_TYPE_I64:
    case OXIDE_TYPE_F64:
    case OXIDE_TYPE_PTR: return 64;
    case OXIDE_TYPE_I128: return 128;
    case OXIDE_TYPE_VECTOR: {
        unsigned e = t->elem->kind == OXIDE_TYPE_I1 ? 0 : tbits(t->elem);
        return e && t->count * e <= 128 ? (unsigned)t->count * e : 0;
    }
    default: return 0;
    }
}
static bool is_flt(const oxide_type *t) { return t->kind == OXIDE_TYPE_F32 || t->kind == OXIDE_TYPE_F64; }
static bool is_half(const oxide_type *t) { return t->kind == OXIDE_TYPE_F16 || t->kind == OXIDE_TYPE_BF16; }

/* Bytes of a type in memory (C layout); 0 for what the interpreter does not model. */
static uint64_t tsize(const oxide_type *t) {
    if (t->kind == OXIDE_TYPE_I1)
        return 1;
    if (tbits(t))
        return tbits(t) / 8;
    if (t->kind == OXIDE_TYPE_ARRAY) {
        uint64_t e = tsize(t->elem);
        return e && t->count <= (1ull << 40) / e ? e * t->count : 0;
    }
    return 0;
}

static uint64_t mask(uint64_t v, unsigned w) { return w >= 64 ? v : v & ((1ull << w) - 1); }
static int64_t sx(uint64_t v, unsigned w) {
    if (w >= 64)
        return (int64_t)v;
    uint64_t m = 1ull << (w - 1);
    v = mask(v, w);
    return (int64_t)((v ^ m) - m);
}
/* bf16 of d, rounded once: d to f32 rounding to odd (which keeps the sticky bit), then to nearest
 * even at bf16's last bit. */
static uint64_t bf16_of(double d) {
    if (isnan(d))
        return signbit(d) ? 0xffc0 : 0x7fc0;
    float f = (float)d;
    if (isfinite(f) && (double)f != d) {
        if (fabs((double)f) > fabs(d))
            f = nextafterf(f, 0.0f);
        f = dt_f32(dt_b32(f) | 1);
    }
    uint32_t u = dt_b32(f);
    return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
}
/* The C compiler's own _Float16 conversions: nothing shared with the tile interpreter's. */
static double fget(const oxide_type *t, uint64_t b) {
    switch (t->kind) {
    case OXIDE_TYPE_F32: return dt_f32(b);
    case OXIDE_TYPE_BF16: return dt_f32((b & 0xffff) << 16);
    case OXIDE_TYPE_F16: {
        uint16_t u = (uint16_t)b;
        _Float16 h;
        memcpy(&h, &u, 2);
        return (double)h;
    }
    default: return dt_f64(b);
    }
}
static uint64_t fput(const oxide_type *t, double d) {
    switch (t->kind) {
    case OXIDE_TYPE_F32: return dt_b32((float)d);
    case OXIDE_TYPE_BF16: return bf16_of(d);
    case OXIDE_TYPE_F16: {
        _Float16 h = (_Float16)d;
        uint16_t u;
        memcpy(&u, &h, 2);
        return u;
    }
    default: return dt_b64(d);
    }
}

/* ---- values ---- */

static void number_values(interp *I) {
    oxide_function *fn = I->fn;
    uint32_t n = 0;
    for (uint32_t i = 0; i < fn->params.len; i++)
        ((oxide_value *)fn->params.items[i])->scratch = (void *)(uintptr_t)n++;
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        oxide_block *bl = fn->blocks.items[b];
        for (uint32_t i = 0; i < bl->params.len; i++)
            ((oxide_value *)bl->params.items[i])->scratch = (void *)(uintptr_t)n++;
        for (uint32_t i = 0; i < bl->insts.len; i++) {
            oxide_inst *in = bl->insts.items[i];
            if (in->result)
                in->result->scratch = (void *)(uintptr_t)n++;
        }
    }
    I->nvals = n;
}

/* ---- memory ---- */

region *dt__resolve(interp *I, const oxide_inst *in, uint64_t ptr, uint64_t size, uint64_t *off) {
    uint64_t r = ptr >> REGION_SHIFT;
    *off = ptr & OFFSET_MASK;
    if (r == 0 || r >= I->nregions || !I->regions[r].data) {
        failf(I, in, "pointer 0x%llx points into no buffer", (unsigned long long)ptr);
        return NULL;
    }
    region *g = &I->regions[r];
    if (*off > g->size || size > g->size - *off) {
        failf(I, in, "access of %llu bytes at offset %llu of a %llu-byte %s", (unsigned long long)size,
              (unsigned long long)*off, (unsigned long long)g->size, g->is_shared ? "shared array" : "buffer");
        return NULL;
    }
    return g;
}

int dt__read(interp *I, const oxide_inst *in, uint64_t ptr, uint64_t size, void *out) {
    uint64_t off;
    region *g = dt__resolve(I, in, ptr, size, &off);
    if (!g)
        return -1;
    if (g->written)
        for (uint64_t i = 0; i < size; i++)
            if (!g->written[off + i])
                return failf(I, in, "reads shared byte %llu, which no thread of the block wrote",
                             (unsigned long long)(off + i));
    memcpy(out, g->data + off, size); /* little-endian, like the GPU */
    return 0;
}

static int do_load(interp *I, thread *t, const oxide_inst *in, uint64_t *out, uint8_t *tol) {
    const oxide_type *ty = in->result->type;
    uint64_t size = tsize(ty), off, ptr = t->regs[vidx(in->operands[0])];
    if (!tbits(ty))
        return failf(I, in, "loads of %s are not modelled", ty->name);
    out[0] = out[1] = 0;
    if (dt__read(I, in, ptr, size, out))
        return -1;
    region *g = dt__resolve(I, in, ptr, size, &off);
    *tol = g->tol && g->elem_size ? g->tol[off / g->elem_size] : 0;
    return 0;
}

static int do_store(interp *I, thread *t, const oxide_inst *in) {
    const oxide_value *val = in->operands[0];
    uint64_t size = tsize(val->type), off;
    if (!tbits(val->type))
        return failf(I, in, "stores of %s are not modelled", val->type->name);
    region *g = dt__resolve(I, in, t->regs[vidx(in->operands[1])], size, &off);
    if (!g)
        return -1;
    memcpy(g->data + off, &t->regs[vidx(val)], size); /* the value's slots are contiguous */
    if (g->written)
        memset(g->written + off, 1, size);
    if (g->tol && g->elem_size)
        for (uint64_t k = 0; k * g->elem_size < size; k++)
            g->tol[off / g->elem_size + k] = t->tol[vidx(val)];
    else if (t->tol[vidx(val)] && !g->tol)
        return failf(I, in, "an approximate math result stored where its tolerance cannot be recorded");
    return 0;
}

/* ---- one instruction ---- */

static int icmp(oxide_pred p, uint64_t a, uint64_t b, unsigned w) {
    int64_t x = sx(a, w), y = sx(b, w);
    switch (p) {
    case OXIDE_PRED_EQ: return a == b;
    case OXIDE_PRED_NE: return a != b;
    case OXIDE_PRED_SLT: return x < y;
    case OXIDE_PRED_SLE: return x <= y;
    case OXIDE_PRED_SGT: return x > y;
    case OXIDE_PRED_SGE: return x >= y;
    case OXIDE_PRED_ULT: return a < b;
    case OXIDE_PRED_ULE: return a <= b;
    case OXIDE_PRED_UGT: return a > b;
    case OXIDE_PRED_UGE: return a >= b;
    default: return -1;
    }
}

/* libdevice math on the host. f32 calls the float functions, so a result is rounded once. */
static bool math1(oxide_op op, bool is32, double x, double *r) {
    float f = (float)x;
    switch (op) {
    case OXIDE_OP_EXP: *r = is32 ? expf(f) : exp(x); return true;
    case OXIDE_OP_EXP2: *r = is32 ? exp2f(f) : exp2(x); return true;
    case OXIDE_OP_LOG: *r = is32 ? logf(f) : log(x); return true;
    case OXIDE_OP_LOG2: *r = is32 ? log2f(f) : log2(x); return true;
    case OXIDE_OP_SIN: *r = is32 ? sinf(f) : sin(x); return true;
    case OXIDE_OP_COS: *r = is32 ? cosf(f) : cos(x); return true;
    case OXIDE_OP_TAN: *r = is32 ? tanf(f) : tan(x); return true;
    case OXIDE_OP_TANH: *r = is32 ? tanhf(f) : tanh(x); return true;
    case OXIDE_OP_ERF: *r = is32 ? erff(f) : erf(x); return true;
    case OXIDE_OP_RSQRT: *r = is32 ? 1.0f / sqrtf(f) : 1.0 / sqrt(x); return true;
    default: return false;
    }
}

/* One instruction as exec_inst's op groups see it: its operands read, its types and widths looked
 * up; r and tol are where a group leaves the result and its tolerance. */
typedef struct step {
    const oxide_value *const *o;
    uint64_t a, b, r, r2; /* r2: a result's high 64 bits */
    const oxide_type *rt, *ot;
    unsigned w, ow;
    bool fl;
    uint8_t tol;
} step;

/* An op group's answer for an op that belongs to another group (0: done, -1: failed). */
#define OTHER_GROUP 1

/* Thread and block ids, constants. */
static int exec_ids(interp *I, thread *t, const oxide_inst *in, step *s) {
    switch (in->op) {
    case OXIDE_OP_TID_X: s->r = t->tid[0]; break;
    case OXIDE_OP_TID_Y: s->r = t->tid[1]; break;
    case OXIDE_OP_TID_Z: s->r = t->tid[2]; break;
    case OXIDE_OP_NTID_X: s->r = I->L->block[0]; break;
    case OXIDE_OP_NTID_Y: s->r = I->L->block[1]; break;
    case OXIDE_OP_NTID_Z: s->r = I->L->block[2]; break;
    case OXIDE_OP_CTAID_X: s->r = I->ctaid[0]; break;
    case OXIDE_OP_CTAID_Y: s->r = I->ctaid[1]; break;
    case OXIDE_OP_CTAID_Z: s->r = I->ctaid[2]; break;
    case OXIDE_OP_NCTAID_X: s->r = I->L->grid[0]; break;
    case OXIDE_OP_NCTAID_Y: s->r = I->L->grid[1]; break;
    case OXIDE_OP_NCTAID_Z: s->r = I->L->grid[2]; break;
    case OXIDE_OP_LANEID:
        s->r = (t->tid[0] + I->L->block[0] * (t->tid[1] + (uint64_t)I->L->block[1] * t->tid[2])) % 32;
        break;
    case OXIDE_OP_CONST:
        s->r = s->fl || is_half(s->rt) ? fput(s->rt, in->fvalue) : (uint64_t)in->ivalue;
        s->r2 = in->ivalue < 0 ? ~0ull : 0;
        break;
    default: return OTHER_GROUP;
    }
    return 0;
}

/* sdiv, srem, udiv, urem: the inputs C and LLVM leave undefined are refused. */
static int exec_div(interp *I, const oxide_inst *in, step *s) {
    uint64_t a = s->a, b = s->b;
    unsigned w = s->w;
    if (mask(b, w) == 0)
        return failf(I, in, "division by zero");
    if (in->op == OXIDE_OP_UDIV || in->op == OXIDE_OP_UREM) {
        s->r = in->op == OXIDE_OP_UDIV ? mask(a, w) / mask(b, w) : mask(a, w) % mask(b, w);
        return 0;
    }
    int64_t x = sx(a, w), y = sx(b, w);
    if (y == -1 && x == sx(1ull << (w - 1), w))
        return failf(I, in, "signed overflow (INT_MIN / -1)");
    if (w == 64 && y == -1) /* x is not INT64_MIN here; C's INT64_MIN / -1 is the only trap */
        s->r = in->op == OXIDE_OP_SDIV ? (uint64_t)-x : 0;
    else
        s->r = (uint64_t)(in->op == OXIDE_OP_SDIV ? x / y : x % y);
    return 0;
}

/* Integer and float arithmetic, bit operations, comparisons, select. */
static int exec_arith(interp *I, thread *t, const oxide_inst *in, step *s) {
    const oxide_type *rt = s->rt, *ot = s->ot;
    uint64_t a = s->a, b = s->b, r = 0;
    unsigned w = s->w, ow = s->ow;
    bool fl = s->fl;
    switch (in->op) {
    case OXIDE_OP_ADD: r = fl ? fput(rt, fget(rt, a) + fget(rt, b)) : a + b; break;
    case OXIDE_OP_SUB: r = fl ? fput(rt, fget(rt, a) - fget(rt, b)) : a - b; break;
    case OXIDE_OP_MUL:
        if (fl)
            r = rt->kind == OXIDE_TYPE_F32 ? dt_b32(dt_f32(a) * dt_f32(b)) : dt_b64(dt_f64(a) * dt_f64(b));
        else
            r = a * b;
        break;
    case OXIDE_OP_FDIV:
        r = rt->kind == OXIDE_TYPE_F32 ? dt_b32(dt_f32(a) / dt_f32(b)) : dt_b64(dt_f64(a) / dt_f64(b));
        break;
    case OXIDE_OP_FREM:
        r = rt->kind == OXIDE_TYPE_F32 ? dt_b32(fmodf(dt_f32(a), dt_f32(b))) : dt_b64(fmod(dt_f64(a), dt_f64(b)));
        break;
    case OXIDE_OP_SDIV:
    case OXIDE_OP_SREM:
    case OXIDE_OP_UDIV:
    case OXIDE_OP_UREM: return exec_div(I, in, s);
    case OXIDE_OP_NEG: r = fl ? (rt->kind == OXIDE_TYPE_F32 ? a ^ 0x80000000u : a ^ (1ull << 63)) : 0 - a; break;
    case OXIDE_OP_AND: r = a & b; break;
    case OXIDE_OP_OR: r = a | b; break;
    case OXIDE_OP_XOR: r = a ^ b; break;
    case OXIDE_OP_NOT: r = ~a; break;
    case OXIDE_OP_SHL:
    case OXIDE_OP_LSHR:
    case OXIDE_OP_ASHR:
        if (mask(b, w) >= w)
            return failf(I, in, "shift by %llu, not less than the width %u", (unsigned long long)mask(b, w), w);
        r = in->op == OXIDE_OP_SHL ? a << b : in->op == OXIDE_OP_LSHR ? mask(a, w) >> b : (uint64_t)(sx(a, w) >> b);
        break;
    case OXIDE_OP_ICMP: {
        int c = icmp(in->pred, mask(a, ow), mask(b, ow), ow);
        if (c < 0)
            return failf(I, in, "predicate %d is not an icmp predicate", (int)in->pred);
        r = (uint64_t)c;
        break;
    }
    case OXIDE_OP_FCMP: {
        if (!is_flt(ot) && !is_half(ot))
            return failf(I, in, "fcmp of %s is not modelled", ot->name);
        int c = oxide__fcmp(in->pred, fget(ot, a), fget(ot, b));
        if (c < 0)
            return failf(I, in, "predicate %d is not an fcmp predicate", (int)in->pred);
        r = (uint64_t)c;
        break;
    }
    case OXIDE_OP_SELECT: {
        uint32_t k = vidx(s->o[(a & 1) ? 1 : 2]);
        r = t->regs[k];
        s->r2 = t->regs[k + 1];
        s->tol = t->tol[k];
        break;
    }
    case OXIDE_OP_SMIN: r = sx(a, w) < sx(b, w) ? a : b; break;
    case OXIDE_OP_SMAX: r = sx(a, w) > sx(b, w) ? a : b; break;
    case OXIDE_OP_UMIN: r = mask(a, w) < mask(b, w) ? a : b; break;
    case OXIDE_OP_UMAX: r = mask(a, w) > mask(b, w) ? a : b; break;
    case OXIDE_OP_POPC: r = (uint64_t)__builtin_popcountll(mask(a, w)); break;
    case OXIDE_OP_CLZ: r = mask(a, w) ? (uint64_t)(__builtin_clzll(mask(a, w)) - (64 - (int)w)) : w; break;
    case OXIDE_OP_BREV:
        for (unsigned i = 0; i < w; i++)
            r |= ((a >> i) & 1) << (w - 1 - i);
        break;
    case OXIDE_OP_IABS: r = sx(a, w) < 0 ? 0 - a : a; break;
    default: return OTHER_GROUP;
    }
    s->r = r;
    return 0;
}

static int exec_cast(interp *I, const oxide_inst *in, step *s) {
    const oxide_type *rt = s->rt, *ot = s->ot;
    uint64_t a = s->a, r = 0;
    unsigned w = s->w, ow = s->ow;
    switch (in->op) {
    case OXIDE_OP_TRUNC:
    case OXIDE_OP_ZEXT: r = mask(a, ow); break;
    case OXIDE_OP_SEXT: r = (uint64_t)sx(a, ow); break;
    case OXIDE_OP_FPTRUNC:
    case OXIDE_OP_FPEXT:
        if (!(is_flt(ot) || is_half(ot)) || !(is_flt(rt) || is_half(rt)))
            return failf(I, in, "%s to %s is not modelled", ot->name, rt->name);
        r = fput(rt, fget(ot, a));
        break;
    case OXIDE_OP_FPTOSI:
    case OXIDE_OP_FPTOUI: {
        if (!is_flt(ot) && !is_half(ot))
            return failf(I, in, "from %s is not modelled", ot->name);
        double x = trunc(fget(ot, a));
        bool sg = in->op == OXIDE_OP_FPTOSI;
        double lo = sg ? -ldexp(1, (int)w - 1) : 0, hi = sg ? ldexp(1, (int)w - 1) : ldexp(1, (int)w);
        if (!(x >= lo && x < hi)) /* NaN included */
            return failf(I, in, "%g does not fit %s (poison)", fget(ot, a), rt->name);
        r = sg ? (uint64_t)(int64_t)x : (uint64_t)x;
        break;
    }
    case OXIDE_OP_SITOFP:
    case OXIDE_OP_UITOFP:
        if (!s->fl && !is_half(rt))
            return failf(I, in, "to %s is not modelled", rt->name);
        /* Convert straight to the result type: going through double would round twice (for
         * f16 and bf16, double holds the integers the tiles have exactly). */
        if (is_half(rt))
            r = fput(rt, in->op == OXIDE_OP_SITOFP ? (double)sx(a, ow) : (double)mask(a, ow));
        else if (in->op == OXIDE_OP_SITOFP)
            r = rt->kind == OXIDE_TYPE_F32 ? dt_b32((float)sx(a, ow)) : dt_b64((double)sx(a, ow));
        else
            r = rt->kind == OXIDE_TYPE_F32 ? dt_b32((float)mask(a, ow)) : dt_b64((double)mask(a, ow));
        break;
    case OXIDE_OP_PTRTOINT:
        /* to a narrower integer: the low bits of the offset (what an alignment test reads) */
        r = a;
        break;
    case OXIDE_OP_INTTOPTR:
    case OXIDE_OP_ADDRSPACECAST:
        if (ow != w)
            return failf(I, in, "%s to %s is not modelled", ot->name, rt->name);
        r = a;
        break;
    default: return OTHER_GROUP;
    }
    s->r = r;
    return 0;
}

/* Bits [at, at + n) of a value's slots (n <= 64 and a power of two, so one slot holds them). */
static uint64_t get_bits(const uint64_t *v, unsigned at, unsigned n) { return mask(v[at / 64] >> (at % 64), n); }

/* extract, insert, bitcast: a value's bits as its slots hold them. */
static int exec_vector(interp *I, thread *t, const oxide_inst *in, step *s) {
    if (in->op != OXIDE_OP_BITCAST && in->op != OXIDE_OP_EXTRACT && in->op != OXIDE_OP_INSERT)
        return OTHER_GROUP;
    const uint64_t *v = &t->regs[vidx(s->o[0])];
    switch (in->op) {
    case OXIDE_OP_BITCAST:
        if (s->ow != s->w || !s->w)
            return failf(I, in, "%s to %s is not modelled", s->ot->name, s->rt->name);
        s->r = v[0];
        s->r2 = v[1];
        return 0;
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_INSERT: {
        const oxide_type *vt = s->ot;
        if (vt->kind != OXIDE_TYPE_VECTOR || !s->ow)
            return failf(I, in, "%s of %s is not modelled", oxide_op_name(in->op), vt->name);
        if (in->imm < 0 || (uint64_t)in->imm >= vt->count)
            return failf(I, in, "index %lld outside %s", (long long)in->imm, vt->name);
        unsigned eb = tbits(vt->elem), at = (unsigned)in->imm * eb;
        if (in->op == OXIDE_OP_EXTRACT) {
            s->r = get_bits(v, at, eb);
            return 0;
        }
        uint64_t w[2] = {v[0], v[1]}, m = eb >= 64 ? ~0ull : (1ull << eb) - 1;
        w[at / 64] = (w[at / 64] & ~(m << (at % 64))) | (mask(s->b, eb) << (at % 64));
        s->r = w[0];
        s->r2 = w[1];
        return 0;
    }
    default: return OTHER_GROUP;
    }
}

/* atomic.add on global or shared memory: the old value. */
static int do_atomic_add(interp *I, thread *t, const oxide_inst *in, step *s) {
    const oxide_type *ty = s->o[1]->type;
    uint64_t size = tsize(ty), off, old = 0;
    if (!(ty->kind >= OXIDE_TYPE_I8 && ty->kind <= OXIDE_TYPE_I64) && !is_flt(ty))
        return failf(I, in, "atomic adds of %s are not modelled", ty->name);
    if (dt__read(I, in, s->a, size, &old))
        return -1;
    region *g = dt__resolve(I, in, s->a, size, &off);
    uint64_t nv = is_flt(ty) ? fput(ty, fget(ty, old) + fget(ty, s->b)) : old + s->b;
    memcpy(g->data + off, &nv, size);
    if (g->tol && g->elem_size && t->tol[vidx(s->o[1])])
        g->tol[off / g->elem_size] = t->tol[vidx(s->o[1])];
    s->r = old;
    return 0;
}

static int exec_memory(interp *I, thread *t, const oxide_inst *in, step *s) {
    switch (in->op) {
    case OXIDE_OP_LOAD: {
        uint64_t v[2];
        if (do_load(I, t, in, v, &s->tol))
            return -1;
        s->r = v[0];
        s->r2 = v[1];
        return 0;
    }
    case OXIDE_OP_ATOMIC_ADD: return do_atomic_add(I, t, in, s);
    case OXIDE_OP_STORE: return do_store(I, t, in);
    case OXIDE_OP_OFFSET: {
        uint64_t es = tsize(in->elem);
        if (!es)
            return failf(I, in, "elem=%s is not modelled", in->elem->name);
        s->r = s->a + (uint64_t)sx(s->b, tbits(s->o[1]->type)) * es;
        return 0;
    }
    case OXIDE_OP_GLOBAL_ADDR: {
        oxide_module *mod = I->fn->mod;
        uint32_t g = 0;
        while (g < mod->globals.len && strcmp(((oxide_global *)mod->globals.items[g])->name, in->sym))
            g++;
        if (g == mod->globals.len)
            return failf(I, in, "no global @%s", in->sym);
        s->r = (uint64_t)(I->first_global + g) << REGION_SHIFT;
        return 0;
    }
    case OXIDE_OP_DYN_SMEM: s->r = (uint64_t)I->dyn_region << REGION_SHIFT | DYN_SMEM_AT; return 0;
    case OXIDE_OP_FENCE: return 0;
    default: return OTHER_GROUP;
    }
}

/* Math: the exact ops, then libdevice's (within DT_MATH_ULPS); anything else is not modelled. */
static int exec_math(interp *I, thread *t, const oxide_inst *in, step *s) {
    const oxide_type *rt = s->rt;
    uint64_t a = s->a, b = s->b;
    switch (in->op) {
    case OXIDE_OP_SQRT: s->r = rt->kind == OXIDE_TYPE_F32 ? dt_b32(sqrtf(dt_f32(a))) : dt_b64(sqrt(dt_f64(a))); break;
    case OXIDE_OP_FMA: {
        uint64_t c = t->regs[vidx(s->o[2])];
        s->r = rt->kind == OXIDE_TYPE_F32 ? dt_b32(fmaf(dt_f32(a), dt_f32(b), dt_f32(c)))
                                          : dt_b64(fma(dt_f64(a), dt_f64(b), dt_f64(c)));
        break;
    }
    case OXIDE_OP_FMIN:
    case OXIDE_OP_FMAX: s->r = fput(rt, oxide__fminmax(fget(rt, a), fget(rt, b), in->op == OXIDE_OP_FMAX)); break;
    case OXIDE_OP_FABS: s->r = rt->kind == OXIDE_TYPE_F32 ? a & 0x7fffffffu : a & ~(1ull << 63); break;
    case OXIDE_OP_FLOOR: s->r = fput(rt, floor(fget(rt, a))); break;
    case OXIDE_OP_CEIL: s->r = fput(rt, ceil(fget(rt, a))); break;
    case OXIDE_OP_FTRUNC: s->r = fput(rt, trunc(fget(rt, a))); break;
    case OXIDE_OP_ROUND: s->r = fput(rt, round(fget(rt, a))); break;
    default: {
        double m;
        if (s->fl && math1(in->op, rt->kind == OXIDE_TYPE_F32, fget(rt, a), &m)) {
            s->r = fput(rt, m);
            s->tol = I->L->untracked_math ? 0 : DT_MATH_ULPS;
            break;
        }
        return failf(I, in, "not modelled by the interpreter");
    }
    }
    return 0;
}

/* The ops an approximate value may pass through (its tolerance goes with it). */
static bool carries_tol(oxide_op op) {
    switch (op) {
    case OXIDE_OP_STORE:
    case OXIDE_OP_SELECT:
    case OXIDE_OP_FPEXT:
    case OXIDE_OP_INSERT:
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_BITCAST:
    case OXIDE_OP_ATOMIC_ADD: return true;
    default: return false;
    }
}

/* The ops that make f16 and bf16 values: the interpreter computes nothing in those types. */
static bool moves_half(oxide_op op) {
    switch (op) {
    case OXIDE_OP_CONST:
    case OXIDE_OP_LOAD:
    case OXIDE_OP_SELECT:
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_BITCAST:
    case OXIDE_OP_FPTRUNC:
    case OXIDE_OP_SITOFP:
    case OXIDE_OP_UITOFP: return true;
    default: return false;
    }
}

/* The ops that take or make values wider than 64 bits: moves, not arithmetic. */
static bool moves_wide(oxide_op op) {
    switch (op) {
    case OXIDE_OP_CONST:
    case OXIDE_OP_LOAD:
    case OXIDE_OP_STORE:
    case OXIDE_OP_SELECT:
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_INSERT:
    case OXIDE_OP_BITCAST:
    case OXIDE_OP_TRUNC: return true; /* to 64 bits at most: the low slot */
    default: return false;
    }
}

static int exec_inst(interp *I, thread *t, const oxide_inst *in) {
    uint64_t *R = t->regs;
    const oxide_value *const *o = (const oxide_value *const *)in->operands;
    step s = {.o = o, .rt = in->result ? in->result->type : NULL, .ot = in->noperands ? o[0]->type : NULL};
    s.a = in->noperands > 0 ? R[vidx(o[0])] : 0;
    s.b = in->noperands > 1 ? R[vidx(o[1])] : 0;
    s.w = s.rt ? tbits(s.rt) : 0;
    s.ow = s.ot ? tbits(s.ot) : 0;
    for (uint32_t i = 0; i < in->noperands; i++)
        if (t->tol[vidx(o[i])]) {
            /* What a libdevice result may feed without its error growing out of our sight. */
            if (!carries_tol(in->op))
                return failf(I, in, "uses an approximate math result; its error cannot be bounded");
            s.tol = t->tol[vidx(o[i])] > s.tol ? t->tol[vidx(o[i])] : s.tol;
        }
    if (s.rt && !tbits(s.rt))
        return failf(I, in, "results of type %s are not modelled", s.rt->name);
    if (s.rt && is_half(s.rt) && !moves_half(in->op))
        return failf(I, in, "f16 and bf16 arithmetic is not modelled");
    if ((s.w > 64 || s.ow > 64) && !moves_wide(in->op))
        return failf(I, in, "arithmetic on values wider than 64 bits is not modelled");
    s.fl = s.rt && is_flt(s.rt);

    int rc = dt__exec_copy(I, t, in);
    if (rc != OTHER_GROUP)
        return rc;
    rc = exec_ids(I, t, in, &s);
    if (rc == OTHER_GROUP)
        rc = exec_vector(I, t, in, &s);
    if (rc == OTHER_GROUP)
        rc = exec_arith(I, t, in, &s);
    if (rc == OTHER_GROUP)
        rc = exec_cast(I, in, &s);
    if (rc == OTHER_GROUP)
        rc = exec_memory(I, t, in, &s);
    if (rc == OTHER_GROUP)
        rc = exec_math(I, t, in, &s);
    if (rc || in->op == OXIDE_OP_STORE || in->op == OXIDE_OP_FENCE)
        return rc;
    if (in->result) {
        uint32_t d = vidx(in->result);
        R[d] = s.w > 64 || s.fl ? s.r : mask(s.r, s.w);
        R[d + 1] = s.w > 64 ? mask(s.r2, s.w - 64) : 0;
        t->tol[d] = s.tol;
    }
    return 0;
}

/* ---- control ---- */

static int jump(interp *I, thread *t, const oxide_inst *in, const oxide_succ *s) {
    oxide_block *dst = s->block;
    if (s->nargs != dst->params.len)
        return failf(I, in, "passes %u arguments to ^%u, which takes %u", s->nargs, dst->index, dst->params.len);
    for (uint32_t i = 0; i < s->nargs; i++) {
        memcpy(&I->argtmp[SLOTS * i], &t->regs[vidx(s->args[i])], SLOTS * sizeof *I->argtmp);
        I->argtol[i] = t->tol[vidx(s->args[i])];
    }
    for (uint32_t i = 0; i < s->nargs; i++) {
        uint32_t d = vidx(dst->params.items[i]);
        memcpy(&t->regs[d], &I->argtmp[SLOTS * i], SLOTS * sizeof *I->argtmp);
        t->tol[d] = I->argtol[i];
    }
    t->block = dst;
    t->pc = 0;
    return 0;
}

/* Run t until it waits at a barrier, returns, or fails. */
static int run_thread(interp *I, thread *t) {
    while (t->state == T_RUN) {
        if (t->pc >= t->block->insts.len)
            return failf(I, NULL, "@%s ^%u: ends without a terminator", I->fn->name, t->block->index);
        const oxide_inst *in = t->block->insts.items[t->pc];
        if (++I->steps > I->step_limit)
            return failf(I, in, "step limit of %llu instructions reached", (unsigned long long)I->step_limit);
        switch (in->op) {
        case OXIDE_OP_BR:
            if (jump(I, t, in, &in->succ[0]))
                return -1;
            break;
        case OXIDE_OP_COND_BR:
            if (jump(I, t, in, &in->succ[(t->regs[vidx(in->operands[0])] & 1) ? 0 : 1]))
                return -1;
            break;
        case OXIDE_OP_SWITCH: {
            const oxide_value *v = in->operands[0];
            int64_t x = sx(t->regs[vidx(v)], tbits(v->type));
            uint32_t k = 0;
            for (uint32_t i = 1; i < in->nsucc; i++)
                if (in->succ[i].case_value == x)
                    k = i;
            if (jump(I, t, in, &in->succ[k]))
                return -1;
            break;
        }
        case OXIDE_OP_RET: t->state = T_DONE; break;
        case OXIDE_OP_BARRIER: t->state = T_WAIT; break;
        case OXIDE_OP_TRAP: return failf(I, in, "trap reached");
        case OXIDE_OP_UNREACHABLE: return failf(I, in, "unreachable reached");
        default:
            if (dt__is_warp_op(in->op)) {
                t->state = T_WARP;
                break;
            }
            if (exec_inst(I, t, in))
                return -1;
            t->pc++;
        }
    }
    return 0;
}

static int run_block(interp *I, thread *th, uint32_t nthreads) {
    oxide_block *entry = I->fn->blocks.items[0];
    for (uint32_t i = 0; i < nthreads; i++) {
        th[i].block = entry;
        th[i].pc = 0;
        th[i].state = T_RUN;
        th[i].ncopies = th[i].groups = 0;
        memset(th[i].tol, 0, (size_t)SLOTS * I->nvals);
        /* parameters (numbered first): thread 0 holds them */
        memcpy(th[i].regs, th[0].regs, (size_t)SLOTS * I->fn->params.len * sizeof *th[i].regs);
    }
    for (;;) {
        for (uint32_t i = 0; i < nthreads; i++)
            if (run_thread(I, &th[i]))
                return -1;
        uint32_t done = 0, shfl = 0;
        for (uint32_t i = 0; i < nthreads; i++) {
            done += th[i].state == T_DONE;
            shfl += th[i].state == T_WARP;
        }
        if (done == nthreads)
            return 0;
        if (shfl) { /* warps meet at shuffles first; barriers wait for them */
            if (dt__resolve_warps(I, th, nthreads))
                return -1;
            continue;
        }
        const oxide_inst *bar = NULL;
        for (uint32_t i = 0; i < nthreads; i++) {
            if (th[i].state != T_WAIT)
                continue;
            const oxide_inst *b = th[i].block->insts.items[th[i].pc];
            if (done)
                return failf(I, b, "thread %u waits while %u threads of its block have returned", i, done);
            if (bar && b != bar)
                return failf(I, b, "thread %u waits at another barrier than thread 0", i);
            bar = b;
        }
        for (uint32_t i = 0; i < nthreads; i++) {
            th[i].state = T_RUN;
            th[i].pc++;
        }
    }
}

static int setup_and_run(interp *I, const dt_arg *args, size_t nargs) {
    oxide_function *fn = I->fn;
    oxide_module *mod = fn->mod;
    const dt_launch *L = I->L;
    if (!fn->is_kernel)
        return failf(I, NULL, "@%s is not a kernel", fn->name);
    if (nargs != fn->iface.len)
        return failf(I, NULL, "@%s takes %u arguments, given %zu", fn->name, fn->iface.len, nargs);
    if (!fn->blocks.len)
        return failf(I, NULL, "@%s has no body", fn->name);
    uint64_t nthreads = (uint64_t)L->block[0] * L->block[1] * L->block[2];
    if (!nthreads || nthreads > 1024 || !L->grid[0] || !L->grid[1] || !L->grid[2])
        return failf(I, NULL, "@%s: launch of %llu threads per block is not runnable", fn->name,
                     (unsigned long long)nthreads);
    number_values(I);

    I->nregions = 1 + (uint32_t)nargs + mod->globals.len + 1;
    I->first_global = 1 + (uint32_t)nargs;
    I->dyn_region = I->nregions - 1;
    if (!(I->regions = budget_alloc(I, I->nregions * sizeof(region))))
        return -1;
    uint32_t maxargs = 0;
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        oxide_block *bl = fn->blocks.items[b];
        maxargs = bl->params.len > maxargs ? bl->params.len : maxargs;
    }
    if (!(I->argtmp = budget_alloc(I, (maxargs + 1) * SLOTS * 8)) || !(I->argtol = budget_alloc(I, maxargs + 1)))
        return -1;

    thread *th = I->threads = budget_alloc(I, nthreads * sizeof(thread));
    if (!th)
        return -1;
    I->nthreads = nthreads;
    for (uint64_t i = 0; i < nthreads; i++) {
        if (!(th[i].regs = budget_alloc(I, ((size_t)I->nvals + 1) * SLOTS * 8)) ||
            !(th[i].tol = budget_alloc(I, ((size_t)I->nvals + 1) * SLOTS)))
            return -1;
        th[i].tid[0] = (uint32_t)(i % L->block[0]);
        th[i].tid[1] = (uint32_t)(i / L->block[0] % L->block[1]);
        th[i].tid[2] = (uint32_t)(i / L->block[0] / L->block[1]);
    }
    for (size_t a = 0; a < nargs; a++) {
        const oxide_iface_param *ip = fn->iface.items[a];
        uint32_t v = ip->first_value;
        uint64_t *pr = &th[0].regs[SLOTS * v];
        if (ip->kind == OXIDE_PARAM_SCALAR) {
            if (args[a].is_buffer)
                return failf(I, NULL, "@%s: argument %zu (%%%s) is a scalar, given a buffer", fn->name, a, ip->name);
            const oxide_value *pv = fn->params.items[v];
            pr[0] = mask(args[a].bits, tbits(pv->type));
            continue;
        }
        if (ip->kind == OXIDE_PARAM_TENSOR && (args[a].rank != ip->rank || !args[a].shape || !args[a].strides))
            return failf(I, NULL, "@%s: argument %zu (%%%s) needs a tensor of rank %u", fn->name, a, ip->name,
                         ip->rank);
        if (ip->kind != OXIDE_PARAM_SLICE && ip->kind != OXIDE_PARAM_PTR && ip->kind != OXIDE_PARAM_TENSOR)
            return failf(I, NULL, "@%s: parameter %%%s: bytes and tma_desc parameters are not modelled", fn->name,
                         ip->name);
        if (!args[a].is_buffer || !args[a].buf)
            return failf(I, NULL, "@%s: argument %zu (%%%s) needs a buffer", fn->name, a, ip->name);
        dt_buffer *bf = args[a].buf;
        region *g = &I->regions[1 + a];
        g->data = bf->data;
        g->tol = bf->tol;
        g->elem_size = bf->elem_size;
        g->size = bf->len * bf->elem_size;
        pr[0] = (uint64_t)(1 + a) << REGION_SHIFT;
        if (ip->kind == OXIDE_PARAM_SLICE)
            pr[SLOTS] = bf->len;
        /* the element pointer, then the shape and the strides: one value each */
        if (ip->kind == OXIDE_PARAM_TENSOR) {
            pr[0] += args[a].byte_offset;
            for (uint32_t d = 0; d < ip->rank; d++) {
                pr[SLOTS * (1 + d)] = (uint64_t)args[a].shape[d];
                pr[SLOTS * (1 + ip->rank + d)] = (uint64_t)args[a].strides[d];
            }
        }
    }
    /* Global-space globals live for the launch; shared ones are reset for each block below. */
    for (uint32_t gi = 0; gi < mod->globals.len; gi++) {
        const oxide_global *gl = mod->globals.items[gi];
        region *g = &I->regions[I->first_global + gi];
        g->size = tsize(gl->type);
        if (!g->size)
            return failf(I, NULL, "@%s: global @%s of type %s is not modelled", fn->name, gl->name, gl->type->name);
        g->is_shared = gl->as == OXIDE_AS_SHARED;
        if (!(g->data = budget_alloc(I, g->size)))
            return -1;
        if (g->is_shared && !(g->written = budget_alloc(I, g->size)))
            return -1;
        if (gl->init)
            memcpy(g->data, gl->init, gl->init_size < g->size ? gl->init_size : g->size);
    }
    region *dyn = &I->regions[I->dyn_region];
    dyn->size = (uint64_t)L->dyn_smem + DYN_SMEM_AT;
    dyn->is_shared = true;
    if (!(dyn->data = budget_alloc(I, dyn->size)) || !(dyn->written = budget_alloc(I, dyn->size)))
        return -1;

    for (uint32_t z = 0; z < L->grid[2]; z++)
        for (uint32_t y = 0; y < L->grid[1]; y++)
            for (uint32_t x = 0; x < L->grid[0]; x++) {
                I->ctaid[0] = x;
                I->ctaid[1] = y;
                I->ctaid[2] = z;
                for (uint32_t r = I->first_global; r < I->nregions; r++)
                    if (I->regions[r].is_shared)
                        memset(I->regions[r].written, 0, I->regions[r].size);
                if (run_block(I, th, (uint32_t)nthreads))
                    return -1;
            }
    return 0;
}

int dt_interp_run(oxide_function *fn, const dt_launch *launch, const dt_arg *args, size_t nargs, char *err,
                  size_t errlen) {
    interp I = {0};
    I.fn = fn;
    I.L = launch;
    I.err = err;
    I.errlen = errlen;
    I.step_limit = launch->step_limit ? launch->step_limit : 100000000ull;
    I.mem_limit = launch->mem_limit ? launch->mem_limit : 256ull << 20;
    if (errlen)
        err[0] = 0;
    int rc = setup_and_run(&I, args, nargs);
    /* Free everything allocated (the budget counted it). */
    if (I.regions) {
        for (uint32_t r = I.first_global; r < I.nregions; r++) {
            free(I.regions[r].data);
            free(I.regions[r].written);
        }
    }
    for (uint64_t i = 0; I.threads && i < I.nthreads; i++) {
        free(I.threads[i].regs);
        free(I.threads[i].tol);
        free(I.threads[i].copies);
    }
    free(I.threads);
    free(I.regions);
    free(I.argtmp);
    free(I.argtol);
    return rc && I.unmodelled ? -2 : rc;
}
