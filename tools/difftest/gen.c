/* Random kernel generator of the differential tester (gen.h says what it produces and avoids). */
#include "gen.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TI1, TI8, TI16, TI32, TI64, TF32, TF64, NTYPES };
static const char *const TN[NTYPES] = {"i1", "i8", "i16", "i32", "i64", "f32", "f64"};
static const unsigned TW[NTYPES] = {1, 8, 16, 32, 64, 32, 64};
static bool isf(int t) { return t >= TF32; }

typedef struct val {
    char nm[20];
    uint8_t ty;
    bool muld; /* a float mul/fdiv result or derived from one: add/sub must not take it */
    bool dyn;  /* depends on data or thread ids: LLVM cannot fold it to a constant */
} val;

#define MAXPOOL 512

typedef struct gen {
    uint64_t rng;
    char *buf;
    size_t len, cap;
    bool oom;
    val pool[MAXPOOL];
    uint32_t npool, nextv, nextb;
    int budget; /* instructions left */
    dt_program *p;
    int in_ty[DT_MAX_INPUTS];
    uint32_t nshared;
} gen;

static uint64_t next(gen *g) { /* splitmix64 */
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t rnd(gen *g, uint32_t n) { return (uint32_t)(next(g) % n); }

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(gen *g, const char *fmt, ...) {
    if (g->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < g->cap - g->len) {
            g->len += (size_t)n;
            return;
        }
        size_t cap = g->cap * 2 + (size_t)(n > 0 ? n : 0) + 256;
        char *b = realloc(g->buf, cap);
        if (!b) {
            g->oom = true;
            return;
        }
        g->buf = b;
        g->cap = cap;
    }
}

static val push(gen *g, const char *nm, int ty, bool muld) {
    val v = {{0}, (uint8_t)ty, muld, true};
    snprintf(v.nm, sizeof v.nm, "%s", nm);
    if (g->npool < MAXPOOL)
        g->pool[g->npool++] = v;
    return v;
}
/* A new value: "%vN = " is printed; the caller prints the rest of the line. */
static val def(gen *g, int ty, bool muld) {
    char nm[20];
    snprintf(nm, sizeof nm, "v%u", g->nextv++);
    g->budget--;
    out(g, "  %%%s = ", nm);
    return push(g, nm, ty, muld);
}

/* A value of type ty from the pool, mostly one that depends on the data (programs whose outputs
 * fold to constants would test only LLVM's constant folder). */
static const val *pick(gen *g, int ty) {
    uint32_t n = 0, nd = 0;
    for (uint32_t i = 0; i < g->npool; i++) {
        n += g->pool[i].ty == ty;
        nd += g->pool[i].ty == ty && g->pool[i].dyn;
    }
    if (!n)
        return NULL;
    bool want_dyn = nd && rnd(g, 8);
    uint32_t k = rnd(g, want_dyn ? nd : n);
    for (uint32_t i = 0; i < g->npool; i++)
        if (g->pool[i].ty == ty && (!want_dyn || g->pool[i].dyn) && !k--)
            return &g->pool[i];
    return NULL;
}

/* Mark the value just defined (the pool's last) as depending on the data or not. */
static val set_dyn(gen *g, val v, bool dyn) {
    v.dyn = dyn;
    if (g->npool && !strcmp(g->pool[g->npool - 1].nm, v.nm))
        g->pool[g->npool - 1].dyn = dyn;
    return v;
}

static val iconst(gen *g, int ty, int64_t v) {
    val r = set_dyn(g, def(g, ty, false), false);
    out(g, "const {value=%lld} : %s\n", (long long)v, TN[ty]);
    return r;
}
static val fconst(gen *g, int ty, double v) {
    val r = set_dyn(g, def(g, ty, false), false);
    if (ty == TF32)
        v = (float)v;
    out(g, "const {value=%.17g} : %s\n", v, TN[ty]);
    return r;
}
static val op2(gen *g, const char *op, val a, val b, int ty, bool muld) {
    val r = set_dyn(g, def(g, ty, muld), a.dyn || b.dyn);
    out(g, "%s %%%s, %%%s : %s\n", op, a.nm, b.nm, TN[ty]);
    return r;
}
static val op1(gen *g, const char *op, val a, int ty, bool muld) {
    val r = set_dyn(g, def(g, ty, muld), a.dyn);
    out(g, "%s %%%s : %s\n", op, a.nm, TN[ty]);
    return r;
}

static val get(gen *g, int ty, int d);

/* fmin/fmax, then + 0.0: LLVM's minnum/maxnum may return either zero for -0 and +0, and adding
 * +0.0 (which LLVM may not fold away) turns both into +0, so the result is defined. */
static val minmax(gen *g, const char *op, val a, val b, int ty) {
    val m = op2(g, op, a, b, ty, false);
    return op2(g, "add", m, fconst(g, ty, 0.0), ty, false);
}

/* select between two values of type ty; a product stays a product through it. */
static val sel(gen *g, int ty, int d) {
    val c = get(g, TI1, d + 1), a = get(g, ty, d + 1), b = get(g, ty, d + 1);
    val r = set_dyn(g, def(g, ty, a.muld || b.muld), c.dyn || a.dyn || b.dyn);
    out(g, "select %%%s, %%%s, %%%s : %s\n", c.nm, a.nm, b.nm, TN[ty]);
    return r;
}

/* v, or if it is a product, a value LLVM cannot fuse into an add: fabs, floor and the like are
 * no barrier (LLVM drops fabs of x*x and floor of a product of integers, and then contracts), but
 * nothing simplifies sqrt away without fast-math flags. */
static val nomul(gen *g, val v) {
    if (v.muld)
        v = op1(g, "sqrt", op1(g, "fabs", v, v.ty, true), v.ty, false);
    return v;
}
static val get_nomul(gen *g, int ty, int d) { return nomul(g, get(g, ty, d)); }

static val int_const(gen *g, int ty) {
    static const int64_t edges[] = {0, 1, -1, 2, 7, 31, 127, -128, 255, 32767, 65535, 2147483647, -2147483647 - 1};
    int64_t v = rnd(g, 3) ? (int64_t)rnd(g, 33) - 16 : edges[rnd(g, sizeof edges / sizeof *edges)];
    if (ty == TI1)
        v &= 1;
    else if (TW[ty] < 64) { /* a value the type holds, written signed */
        uint64_t m = (1ull << TW[ty]) - 1, u = (uint64_t)v & m;
        v = (u >> (TW[ty] - 1)) ? (int64_t)(u | ~m) : (int64_t)u;
    }
    return iconst(g, ty, v);
}

static val float_const(gen *g, int ty) {
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e-3, 65504.0, 1e30, -1e-30, 0.1};
    double v = rnd(g, 2) ? (double)((int)rnd(g, 65) - 32) / 4.0 : edges[rnd(g, sizeof edges / sizeof *edges)];
    return fconst(g, ty, v);
}

/* An in-bounds element of input k as its own type. */
static val load_input(gen *g, int k, int d) {
    val i = get(g, TI32, d + 1);
    val z = def(g, TI64, false);
    out(g, "zext %%%s : i64\n", i.nm);
    val idx = def(g, TI64, false);
    out(g, "urem %%%s, %%in%d.len : i64\n", z.nm, k);
    val ptr = def(g, NTYPES, false);
    out(g, "offset %%in%d, %%%s {elem=%s} : ptr.global\n", k, idx.nm, TN[g->in_ty[k]]);
    val r = def(g, g->in_ty[k], false);
    out(g, "load %%%s : %s\n", ptr.nm, TN[g->in_ty[k]]);
    return r;
}

/* A float clamped into [lo, hi] (NaN becomes lo: maxnum returns the number). */
static val clamp(gen *g, val f, double lo, double hi) {
    val l = fconst(g, f.ty, lo), h = fconst(g, f.ty, hi);
    val a = op2(g, "fmax", f, l, f.ty, false);
    return op2(g, "fmin", a, h, f.ty, false);
}

static val make_int(gen *g, int ty, int d) {
    unsigned w = TW[ty];
    for (int k = 0; k < 8; k++) {
        if (d > 3 || g->budget <= 0) {
            const val *p = pick(g, ty);
            return p ? *p : int_const(g, ty);
        }
        switch (rnd(g, 14)) {
        case 0: return int_const(g, ty);
        case 1:
        case 2: {
            static const char *const ops[] = {"add", "sub", "mul", "and", "or", "xor", "smin", "smax", "umin", "umax"};
            if (ty == TI1)
                break;
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1);
            return op2(g, ops[rnd(g, 10)], a, b, ty, false);
        }
        case 3: { /* shift by an amount below the width */
            static const char *const ops[] = {"shl", "lshr", "ashr"};
            if (ty == TI1)
                break;
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1);
            val m = iconst(g, ty, (int64_t)w - 1);
            val s = op2(g, "and", b, m, ty, false);
            return op2(g, ops[rnd(g, 3)], a, s, ty, false);
        }
        case 4: { /* divide by a positive, non-zero value: no trap, no INT_MIN / -1 */
            static const char *const ops[] = {"sdiv", "udiv", "srem", "urem"};
            if (ty == TI1)
                break;
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1);
            val m = iconst(g, ty, (int64_t)((w == 64 ? ~0ull : (1ull << w) - 1) >> 1));
            val one = iconst(g, ty, 1);
            val pos = op2(g, "and", b, m, ty, false);
            val nz = op2(g, "or", pos, one, ty, false);
            return op2(g, ops[rnd(g, 4)], a, nz, ty, false);
        }
        case 5: {
            static const char *const ops[] = {"not", "popc", "clz", "brev", "iabs", "neg"};
            if (ty == TI1)
                break;
            return op1(g, ops[rnd(g, 6)], get(g, ty, d + 1), ty, false);
        }
        case 6: return sel(g, ty, d);
        case 7: { /* from another integer type */
            int s = TI1 + (int)rnd(g, 5);
            if (s == ty)
                break;
            val a = get(g, s, d + 1);
            val r = set_dyn(g, def(g, ty, false), a.dyn);
            out(g, "%s %%%s : %s\n", TW[s] > w ? "trunc" : (rnd(g, 2) ? "zext" : "sext"), a.nm, TN[ty]);
            return r;
        }
        case 8: { /* from a float, clamped to where the conversion is defined */
            if (ty == TI1)
                break;
            bool s = rnd(g, 2);
            static const double lim[] = {0, 100, 30000, 1e9, 1e18}; /* by type: i1 i8 i16 i32 i64 */
            double hi = s ? lim[ty] : 2 * lim[ty];
            val f = clamp(g, get(g, TF32 + (int)rnd(g, 2), d + 1), s ? -lim[ty] : 0, hi);
            val r = set_dyn(g, def(g, ty, false), f.dyn);
            out(g, "%s %%%s : %s\n", s ? "fptosi" : "fptoui", f.nm, TN[ty]);
            return r;
        }
        case 9:
        case 10: {
            int k = (int)rnd(g, g->p->ninputs);
            if (g->in_ty[k] == ty)
                return load_input(g, k, d);
            break;
        }
        case 11: {
            if (ty == TI1) {
                if (rnd(g, 2)) {
                    static const char *const pr[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                                     "sge", "ult", "ule", "ugt", "uge"};
                    int s = TI8 + (int)rnd(g, 4);
                    val a = get(g, s, d + 1), b = get(g, s, d + 1);
                    val r = set_dyn(g, def(g, TI1, false), a.dyn || b.dyn);
                    out(g, "icmp %%%s, %%%s {pred=%s} : i1\n", a.nm, b.nm, pr[rnd(g, 10)]);
                    return r;
                }
                static const char *const pr[] = {"oeq", "one", "olt", "ole",  "ogt",  "oge",  "ord",
                                                 "uno", "ueq", "une", "fult", "fule", "fugt", "fuge"};
                int s = TF32 + (int)rnd(g, 2);
                val a = get(g, s, d + 1), b = get(g, s, d + 1);
                val r = set_dyn(g, def(g, TI1, false), a.dyn || b.dyn);
                out(g, "fcmp %%%s, %%%s {pred=%s} : i1\n", a.nm, b.nm, pr[rnd(g, 14)]);
                return r;
            }
            if (ty == TI32) {
                static const char *const ids[] = {"tid.x", "ctaid.x", "ntid.x", "laneid"};
                val r = def(g, TI32, false);
                out(g, "%s : i32\n", ids[rnd(g, 4)]);
                return r;
            }
            break;
        }
        default: {
            const val *p = pick(g, ty);
            if (p)
                return *p;
        }
        }
    }
    return int_const(g, ty);
}

static val make_float(gen *g, int ty, int d) {
    for (int k = 0; k < 8; k++) {
        if (d > 3 || g->budget <= 0) {
            const val *p = pick(g, ty);
            return p ? *p : float_const(g, ty);
        }
        switch (rnd(g, 14)) {
        case 0: return float_const(g, ty);
        case 1:
        case 2: {
            val a = get_nomul(g, ty, d + 1), b = get_nomul(g, ty, d + 1);
            return op2(g, rnd(g, 2) ? "add" : "sub", a, b, ty, false);
        }
        case 3: {
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1);
            return op2(g, rnd(g, 2) ? "mul" : "fdiv", a, b, ty, true);
        }
        case 4: {
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1), c = get(g, ty, d + 1);
            val r = set_dyn(g, def(g, ty, false), a.dyn || b.dyn || c.dyn);
            out(g, "fma %%%s, %%%s, %%%s : %s\n", a.nm, b.nm, c.nm, TN[ty]);
            return r;
        }
        case 5: {
            val a = get(g, ty, d + 1), b = get(g, ty, d + 1);
            return minmax(g, rnd(g, 2) ? "fmin" : "fmax", a, b, ty);
        }
        case 6: {
            static const char *const ops[] = {"sqrt", "fabs", "floor", "ceil", "ftrunc", "round"};
            uint32_t k = rnd(g, 6);
            val a = get(g, ty, d + 1);
            return op1(g, ops[k], a, ty, k && a.muld); /* see nomul */
        }
        case 7: {
            val a = get(g, ty, d + 1);
            return op1(g, "neg", a, ty, a.muld);
        }
        case 8: {
            int s = TI1 + (int)rnd(g, 5);
            val a = get(g, s, d + 1);
            val r = set_dyn(g, def(g, ty, false), a.dyn);
            out(g, "%s %%%s : %s\n", rnd(g, 2) ? "sitofp" : "uitofp", a.nm, TN[ty]);
            return r;
        }
        case 9: {
            int s = ty == TF32 ? TF64 : TF32;
            val a = get(g, s, d + 1);
            val r = set_dyn(g, def(g, ty, a.muld), a.dyn);
            out(g, "%s %%%s : %s\n", ty == TF32 ? "fptrunc" : "fpext", a.nm, TN[ty]);
            return r;
        }
        case 10:
        case 11: {
            int k = (int)rnd(g, g->p->ninputs);
            if (g->in_ty[k] == ty)
                return load_input(g, k, d);
            break;
        }
        case 12: return sel(g, ty, d);
        default: {
            const val *p = pick(g, ty);
            if (p)
                return *p;
        }
        }
    }
    return float_const(g, ty);
}

static val get(gen *g, int ty, int d) {
    if (rnd(g, 100) < 60) {
        const val *p = pick(g, ty);
        if (p)
            return *p;
    }
    return isf(ty) ? make_float(g, ty, d) : make_int(g, ty, d);
}

static int rand_type(gen *g) { return TI8 + (int)rnd(g, NTYPES - 1); }

/* v as a value of type ty (floats to integers through a clamp; a float product stays one). */
static val conv(gen *g, val v, int ty) {
    static const double lim[] = {0, 100, 30000, 1e9, 1e18};
    if (v.ty == ty)
        return v;
    const char *op;
    if (isf(ty) && isf(v.ty))
        op = ty == TF32 ? "fptrunc" : "fpext";
    else if (isf(ty))
        op = "sitofp";
    else if (isf(v.ty)) {
        v = clamp(g, v, -lim[ty], lim[ty]);
        op = "fptosi";
    } else
        op = TW[v.ty] > TW[ty] ? "trunc" : v.ty == TI1 ? "zext" : "sext";
    val r = set_dyn(g, def(g, ty, isf(ty) && v.muld), v.dyn);
    out(g, "%s %%%s : %s\n", op, v.nm, TN[ty]);
    return r;
}

static void region(gen *g, int depth, int nstmts);

static char *block_name(gen *g, char *b, size_t n) {
    snprintf(b, n, "b%u", g->nextb++);
    return b;
}

/* A two-way branch (cond_br) or a three-way one (switch on a value masked to 0..3, so that the
 * default arm is taken too), each arm passing 1-2 values to the join block. */
static void stmt_if(gen *g, int depth) {
    char arm_block[3][16], bm[16];
    int narms = rnd(g, 3) ? 2 : 3;
    for (int a = 0; a < narms; a++)
        block_name(g, arm_block[a], sizeof arm_block[a]);
    block_name(g, bm, sizeof bm);
    if (narms == 2) {
        val c = get(g, TI1, 1);
        out(g, "  cond_br %%%s, ^%s, ^%s\n", c.nm, arm_block[0], arm_block[1]);
    } else {
        val x = get(g, TI32, 1);
        val three = iconst(g, TI32, 3);
        val c = op2(g, "and", x, three, TI32, false);
        uint32_t k = rnd(g, 3);
        out(g, "  switch %%%s, ^%s [%u: ^%s, %u: ^%s]\n", c.nm, arm_block[0], k, arm_block[1], k + 1, arm_block[2]);
    }
    int nm = 1 + (int)rnd(g, 2), ty[2] = {rand_type(g), rand_type(g)};
    bool muld[2] = {false, false};
    for (int arm = 0; arm < narms; arm++) {
        out(g, "^%s:\n", arm_block[arm]);
        uint32_t saved = g->npool;
        region(g, depth + 1, 1 + (int)rnd(g, 2));
        val args[2];
        for (int i = 0; i < nm; i++) {
            args[i] = get(g, ty[i], 1);
            muld[i] |= args[i].muld;
        }
        out(g, "  br ^%s(", bm);
        for (int i = 0; i < nm; i++)
            out(g, "%s%%%s", i ? ", " : "", args[i].nm);
        out(g, ")\n");
        g->npool = saved;
    }
    out(g, "^%s(", bm);
    for (int i = 0; i < nm; i++) {
        char nmv[20];
        snprintf(nmv, sizeof nmv, "v%u", g->nextv++);
        out(g, "%s%%%s: %s", i ? ", " : "", nmv, TN[ty[i]]);
        push(g, nmv, ty[i], muld[i]);
    }
    out(g, "):\n");
}

static void stmt_loop(gen *g, int depth) {
    char bh[16], bb[16], bx[16], iv[20], av[20];
    block_name(g, bh, sizeof bh);
    block_name(g, bb, sizeof bb);
    block_name(g, bx, sizeof bx);
    int ty = rand_type(g);
    val n;
    if (rnd(g, 2)) {
        n = iconst(g, TI32, rnd(g, 5));
    } else { /* a trip count that may differ between threads: 0..3 */
        val x = get(g, TI32, 1);
        val three = iconst(g, TI32, 3);
        n = op2(g, "and", x, three, TI32, false);
    }
    val zero = iconst(g, TI32, 0), one = iconst(g, TI32, 1);
    val init = get_nomul(g, ty, 1);
    snprintf(iv, sizeof iv, "v%u", g->nextv++);
    snprintf(av, sizeof av, "v%u", g->nextv++);
    out(g, "  br ^%s(%%%s, %%%s)\n", bh, zero.nm, init.nm);
    out(g, "^%s(%%%s: i32, %%%s: %s):\n", bh, iv, av, TN[ty]);
    uint32_t saved = g->npool;
    val i = push(g, iv, TI32, false), acc = push(g, av, ty, false);
    val c = def(g, TI1, false);
    out(g, "icmp %%%s, %%%s {pred=slt} : i1\n", i.nm, n.nm);
    out(g, "  cond_br %%%s, ^%s, ^%s\n^%s:\n", c.nm, bb, bx, bb);
    region(g, depth + 1, 1 + (int)rnd(g, 2));
    /* The carried value must not be a product: the next iteration may add to it. */
    val x = get_nomul(g, ty, 1), acc2;
    if (isf(ty)) {
        static const char *const ops[] = {"add", "sub", "fmin", "fmax"};
        uint32_t k = rnd(g, 4);
        acc2 = k < 2 ? op2(g, ops[k], acc, x, ty, false) : minmax(g, ops[k], acc, x, ty);
    } else {
        static const char *const ops[] = {"add", "sub", "xor", "mul", "or"};
        acc2 = op2(g, ops[rnd(g, 5)], acc, x, ty, false);
    }
    val i2 = op2(g, "add", i, one, TI32, false);
    out(g, "  br ^%s(%%%s, %%%s)\n^%s:\n", bh, i2.nm, acc2.nm, bx);
    g->npool = saved;
    push(g, iv, TI32, false);
    push(g, av, ty, false);
}

/* Each thread publishes a value in its slot of shared memory; after a barrier each reads some
 * thread's slot; a second barrier keeps the next exchange's stores after these loads. */
static void stmt_shared(gen *g) {
    static const int tys[] = {TI32, TI64, TF32, TF64};
    int ty = tys[rnd(g, 4)];
    val v = get(g, ty, 1);
    val slot = def(g, NTYPES, false);
    out(g, "offset %%sh, %%tid64 {elem=i64} : ptr.shared\n");
    out(g, "  store %%%s, %%%s\n  barrier\n", v.nm, slot.nm);
    val x = get(g, TI32, 1);
    val z = def(g, TI64, false);
    out(g, "zext %%%s : i64\n", x.nm);
    val j = def(g, TI64, false);
    out(g, "urem %%%s, %%ntid64 : i64\n", z.nm);
    val p = def(g, NTYPES, false);
    out(g, "offset %%sh, %%%s {elem=i64} : ptr.shared\n", j.nm);
    val r = def(g, ty, v.muld);
    out(g, "load %%%s : %s\n  barrier\n", p.nm, TN[ty]);
    (void)r;
    g->nshared++;
}

/* A warp shuffle (uniform code only: every lane of the warp must take part). */
static void stmt_shuffle(gen *g) {
    static const char *const ops[] = {"shfl.idx", "shfl.up", "shfl.down", "shfl.xor"};
    int ty = rand_type(g);
    val v = get(g, ty, 1), x = get(g, TI32, 1);
    val lane = op2(g, "and", x, iconst(g, TI32, 31), TI32, false);
    val r = set_dyn(g, def(g, ty, v.muld), true);
    out(g, "%s %%%s, %%%s : %s\n", ops[rnd(g, 4)], v.nm, lane.nm, TN[ty]);
    (void)r;
}

static void region(gen *g, int depth, int nstmts) {
    for (int s = 0; s < nstmts && g->budget > 0; s++) {
        uint32_t k = rnd(g, 10);
        if (k < 2 && depth < 2)
            stmt_if(g, depth);
        else if (k < 4 && depth < 2)
            stmt_loop(g, depth);
        else if (k < 5 && depth == 0 && g->nshared < 3)
            stmt_shared(g);
        else if (k < 6 && depth == 0)
            stmt_shuffle(g);
        else
            for (uint32_t i = 1 + rnd(g, 3); i; i--)
                (void)get(g, rand_type(g), 0);
    }
}

uint32_t dt_scalar_size(oxide_scalar s) {
    switch (s) {
    case OXIDE_SCALAR_I64:
    case OXIDE_SCALAR_U64:
    case OXIDE_SCALAR_F64: return 8;
    case OXIDE_SCALAR_I32:
    case OXIDE_SCALAR_U32:
    case OXIDE_SCALAR_F32: return 4;
    case OXIDE_SCALAR_I16:
    case OXIDE_SCALAR_U16:
    case OXIDE_SCALAR_F16:
    case OXIDE_SCALAR_BF16: return 2;
    default: return 1;
    }
}

static void fill_input(gen *g, dt_input *in, int ty) {
    uint32_t es = TW[ty] / 8;
    bool nonzero = false;
    for (uint32_t i = 0; i < in->len; i++) {
        uint8_t *e = in->data + (size_t)i * es;
        uint32_t k = rnd(g, 10);
        if (isf(ty)) {
            double v = k < 3   ? (double)((int)rnd(g, 17) - 8)
                       : k < 7 ? ((double)(next(g) >> 11) / 9007199254740992.0 - 0.5) * 200
                       : k < 9 ? ldexp(rnd(g, 2) ? 1.0 : -1.0, (int)rnd(g, 61) - 30) * (1 + rnd(g, 1000) / 1000.0)
                               : (double[]){0.0, -0.0, 1.0, 0.5, 1e-40, 3e38}[rnd(g, 6)];
            if (ty == TF32) {
                float f = (float)v;
                memcpy(e, &f, 4);
            } else
                memcpy(e, &v, 8);
            nonzero |= v != 0;
        } else {
            uint64_t v = k < 5 ? next(g) : k < 8 ? (uint64_t)((int64_t)rnd(g, 33) - 16) : (uint64_t)1 << rnd(g, 64);
            memcpy(e, &v, es);
            nonzero |= (es == 8 ? v : (uint32_t)v) != 0;
        }
    }
    if (!nonzero) { /* never all zeros: element 0 becomes 1 */
        if (ty == TF32)
            memcpy(in->data, &(float){1.0f}, 4);
        else if (ty == TF64)
            memcpy(in->data, &(double){1.0}, 8);
        else
            in->data[0] = 1;
    }
}

static oxide_scalar scalar_of(int ty) {
    return ty == TI32   ? OXIDE_SCALAR_I32
           : ty == TI64 ? OXIDE_SCALAR_I64
           : ty == TF32 ? OXIDE_SCALAR_F32
                        : OXIDE_SCALAR_F64;
}

int dt_generate(uint64_t seed, const char *name, dt_program *p) {
    static const int io_types[] = {TI32, TI64, TF32, TF64};
    static const char *const math[] = {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"};
    gen *g = calloc(1, sizeof *g);
    if (!g)
        return -1;
    memset(p, 0, sizeof *p);
    p->seed = seed;
    snprintf(p->name, sizeof p->name, "%s", name);
    g->rng = seed * 0x2545f4914f6cdd1dull + 1;
    g->p = p;
    g->budget = 40 + (int)rnd(g, 120);
    p->ninputs = 1 + rnd(g, DT_MAX_INPUTS);
    for (uint32_t k = 0; k < p->ninputs; k++) {
        g->in_ty[k] = io_types[rnd(g, 4)];
        p->in[k].elem = scalar_of(g->in_ty[k]);
        p->in[k].len = 16 + rnd(g, 241);
        p->in[k].data = malloc((size_t)p->in[k].len * 8);
        if (!p->in[k].data) {
            free(g);
            dt_program_free(p);
            return -1;
        }
        fill_input(g, &p->in[k], g->in_ty[k]);
    }
    p->scalar = (uint32_t)next(g);
    int oty = io_types[rnd(g, 4)];
    uint32_t nout = 1 + rnd(g, 3);
    p->out_elem = scalar_of(oty);
    p->block = 32 * (1 + rnd(g, 4));
    p->grid = 1 + rnd(g, 3);
    p->out_len = p->grid * p->block * nout;

    out(g, "global @%s_sh : array<128 x i64> shared align 8\n\n", name);
    out(g, "kernel @%s(", name);
    for (uint32_t k = 0; k < p->ninputs; k++)
        out(g, "%%in%u: slice<%s>, ", k, TN[g->in_ty[k]]);
    out(g, "%%s: i32, %%out: slice<mut %s>) launch_bounds(128, 0) {\n^entry:\n", TN[oty]);
    push(g, "s", TI32, false);
    out(g, "  %%tid = tid.x : i32\n  %%tid64 = zext %%tid : i64\n  %%ntid = ntid.x : i32\n");
    out(g, "  %%ntid64 = zext %%ntid : i64\n  %%cta = ctaid.x : i32\n  %%base = mul %%cta, %%ntid : i32\n");
    out(g, "  %%gid = add %%base, %%tid : i32\n  %%gid64 = zext %%gid : i64\n");
    out(g, "  %%sh = global.addr {sym=@%s_sh} : ptr.shared\n", name);
    push(g, "tid", TI32, false);
    val gid = push(g, "gid", TI32, false);
    /* Data to build on: an element of each input, and the scalar in every type. */
    for (uint32_t k = 0; k < p->ninputs; k++)
        (void)load_input(g, (int)k, 3);
    val sv = {"s", TI32, false, true};
    for (int ty = TI1; ty < NTYPES; ty++)
        if (ty == TI1) {
            (void)def(g, TI1, false);
            out(g, "icmp %%s, %%gid {pred=ult} : i1\n");
        } else
            (void)conv(g, ty == TI8 || ty == TF64 ? gid : sv, ty);

    region(g, 0, 3 + (int)rnd(g, 6));

    for (uint32_t j = 0; j < nout; j++) {
        val v;
        if (isf(oty) && rnd(g, 4) == 0) {
            val x = get(g, oty, 2);
            v = op1(g, math[rnd(g, 8)], x, oty, false);
            g->npool--; /* approximate: it goes to the output and nowhere else */
        } else {        /* several of the program's values, so that little of it is dead code */
            v = conv(g, get(g, rand_type(g), 1), oty);
            for (uint32_t n = 2 + rnd(g, 6); n; n--) {
                /* mostly values defined late: what the branches and loops computed */
                uint32_t at = g->npool - 1 - rnd(g, rnd(g, 2) ? (g->npool < 24 ? g->npool : 24) : g->npool);
                val x = g->pool[at];
                if (x.ty == TI1 || x.ty == NTYPES || !x.dyn)
                    continue;
                x = conv(g, x, oty);
                if (isf(oty)) {
                    v = op2(g, rnd(g, 2) ? "add" : "sub", nomul(g, v), nomul(g, x), oty, false);
                } else
                    v = op2(g, rnd(g, 2) ? "xor" : "add", v, x, oty, false);
            }
        }
        val k = iconst(g, TI64, nout), jj = iconst(g, TI64, j);
        val m = def(g, TI64, false);
        out(g, "mul %%gid64, %%%s : i64\n", k.nm);
        val idx = op2(g, "add", m, jj, TI64, false);
        val ptr = def(g, NTYPES, false);
        out(g, "offset %%out, %%%s {elem=%s} : ptr.global\n", idx.nm, TN[oty]);
        out(g, "  store %%%s, %%%s\n", v.nm, ptr.nm);
    }
    out(g, "  ret\n}\n");
    int rc = g->oom ? -1 : 0;
    p->text = g->buf;
    free(g);
    if (rc)
        dt_program_free(p);
    return rc;
}

void dt_program_free(dt_program *p) {
    for (uint32_t k = 0; k < DT_MAX_INPUTS; k++)
        free(p->in[k].data);
    free(p->text);
    memset(p, 0, sizeof *p);
}
