/* Random tile kernel generator of the differential tester (tile_gen.h says what it produces; the
 * tolerance rules are docs/reliability.md's "Tile programs"). Values, their text and their JSON
 * statement are written together by one function per production; tile_emit.c holds the pieces
 * they share (types, bounds, the op writer). */
#include "tile_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile_emit.h"

/* ---- leaves ---- */

static void choose_layout(tg_gen *g, tg_tensor *t) {
    uint32_t r = t->rank, lay = tg_rnd(g, r == 1 ? 3 : 4);
    int64_t *s = t->stride, *D = t->dim;
    s[r - 1] = lay == 1 && r == 1 ? 2 : 1;
    for (int d = (int)r - 2; d >= 0; d--)
        s[d] = s[d + 1] * (D[d + 1] + (lay == 1 && d == (int)r - 2 ? 3 : 0));
    if (lay == 2)
        s[0] = -s[0];
    if (lay == 3)
        for (uint32_t d = 0; d < r; d++)
            s[d] = d ? s[d - 1] * D[d - 1] : 1;
    t->base = 0;
    t->storage = 1;
    for (uint32_t d = 0; d < r; d++) {
        int64_t span = (D[d] - 1) * (s[d] < 0 ? -s[d] : s[d]);
        t->storage += span;
        if (s[d] < 0)
            t->base += span;
    }
}

static int add_tensor(tg_gen *g, tg_elem e, tg_kind kind, uint32_t rank, const int64_t *dim) {
    tg_program *p = g->p;
    if (p->ntensors == TG_MAX_TENSORS)
        return -1;
    tg_tensor *t = &p->t[p->ntensors];
    memset(t, 0, sizeof *t);
    uint32_t nin = 0;
    for (uint32_t i = 0; i < p->ntensors; i++)
        nin += p->t[i].kind == TG_IN;
    snprintf(t->name, sizeof t->name, "%c%u", kind == TG_IN ? 'x' : 'y', kind == TG_IN ? nin : p->ntensors - nin);
    t->elem = e;
    t->kind = kind;
    t->rank = rank;
    for (uint32_t d = 0; d < rank; d++)
        t->dim[d] = dim[d] < 1 ? 1 : dim[d];
    if (tg_is_float(e)) {
        t->lo = 0.125;
        t->hi = 1;
    } else {
        t->hi = e == TG_I8 ? 100 : tg_chance(g, 30) ? 2147483647.0 : 1000;
        t->lo = -t->hi;
    }
    choose_layout(g, t);
    return (int)p->ntensors++;
}

/* An input tensor of e and rank: an existing one, else a new one sized for a tile of shape s
 * (each program instance's part along the grid axes, some rows and columns short or extra, and
 * room along the last dim for loops that step through it). */
static int input_for(tg_gen *g, const tg_ty *t) {
    tg_program *p = g->p;
    for (uint32_t i = 0; i < p->ntensors; i++)
        if (p->t[i].kind == TG_IN && p->t[i].elem == t->e && p->t[i].rank == t->rank)
            return (int)i;
    uint32_t nin = 0;
    for (uint32_t i = 0; i < p->ntensors; i++)
        nin += p->t[i].kind == TG_IN;
    if (nin == TG_MAX_INPUTS || p->ntensors + 1 == TG_MAX_TENSORS) /* keep room for a second output */
        return -1;
    int64_t dim[3] = {1, 1, 1};
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t m = (d == 0 ? p->grid[0] : d == 1 ? p->grid[1] : 1) + (d == t->rank - 1 ? 2 : 0);
        dim[d] = (int64_t)t->s[d] * m + (int64_t)tg_rnd(g, t->s[d] + 1) - t->s[d] / 2;
    }
    return add_tensor(g, t->e, TG_IN, t->rank, dim);
}

static tg_val load(tg_gen *g, const tg_ty *t) {
    int ti = input_for(g, t);
    if (ti < 0)
        return tg_full(g, *t, tg_is_float(t->e) ? 0.75 : 5);
    const tg_tensor *x = &g->p->t[ti];
    tg_offsets off;
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t c = (int64_t)tg_rnd(g, t->s[d] + 1) - t->s[d] / 2;
        if (tg_chance(g, 4))
            c = tg_chance(g, 50) ? x->dim[d] + 1 : -(int64_t)t->s[d]; /* the whole tile is padding */
        off.c[d][0] = d == 0 ? t->s[0] : 0;
        off.c[d][1] = d == 1 ? t->s[1] : 0;
        off.c[d][2] = g->nloops && d == t->rank - 1 ? t->s[d] : 0;
        off.c[d][3] = c;
    }
    static const double fpads[] = {0, 1, -1, 0.5, -2}, ipads[] = {0, 1, -3, 7};
    double pad = tg_is_float(t->e) ? fpads[tg_rnd(g, 5)] : ipads[tg_rnd(g, 4)];
    return tg_memop(g, "tile.load", ti, &off, -1, *t, pad);
}

static tg_val compare(tg_gen *g, const tg_ty *t, int depth);

static tg_val leaf(tg_gen *g, tg_ty t) {
    if (t.e == TG_I1)
        return compare(g, &t, 0);
    uint32_t r = tg_rnd(g, 100);
    if (r < 75)
        return load(g, &t);
    if (r < 85)
        return tg_full(g, t, tg_is_float(t.e) ? (double)((int)tg_rnd(g, 17) - 8) / 4 : (double)tg_rnd(g, 41) - 20);
    if (t.e == TG_F32)
        return tg_splat(g, t, TG_ID_X, 1);
    if (t.e == TG_I32)
        return g->nloops && tg_chance(g, 60) ? tg_splat(g, t, g->iv[g->nloops - 1], 3) : tg_splat(g, t, TG_ID_N, 3);
    return tg_full(g, t, 3);
}

/* ---- productions ---- */

static tg_val gen(tg_gen *g, tg_ty t, int depth);

/* A value of t both sides hold exactly (discontinuous ops take only these). */
static tg_val exact(tg_gen *g, tg_ty t, int depth) {
    tg_val v = gen(g, t, depth);
    return v.E > 0 ? leaf(g, t) : v;
}

static tg_val compare(tg_gen *g, const tg_ty *t, int depth) {
    static const tg_elem ce[] = {TG_I32, TG_F32, TG_I8, TG_BF16, TG_F16};
    tg_ty ct = *t;
    ct.e = ce[tg_rnd(g, 5)];
    tg_val a = exact(g, ct, depth - 1), b = exact(g, ct, depth - 1);
    static const char *const ip[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
    static const char *const fp[] = {"oeq", "one", "olt", "ole", "ogt", "oge", "une", "fult", "fuge"};
    bool fl = tg_is_float(ct.e);
    char attr[16];
    snprintf(attr, sizeof attr, "pred=%s", fl ? fp[tg_rnd(g, 9)] : ip[tg_rnd(g, 10)]);
    tg_ty bt = *t;
    bt.e = TG_I1;
    tg_val args[2] = {a, b};
    return tg_op(g, fl ? "fcmp" : "icmp", bt, args, 2, attr, 1, 0, false);
}

static tg_val unary(tg_gen *g, tg_ty t, int depth) {
    tg_val x = gen(g, t, depth - 1);
    if (!tg_is_float(t.e)) {
        static const char *const ops[] = {"neg", "not", "iabs"};
        return tg_op(g, ops[tg_rnd(g, 3)], t, &x, 1, NULL, tg_icap(t.e, x.B + 1), 0, false);
    }
    double math = tg_math_err(t.e);
    switch (tg_rnd(g, x.E > 0 ? 7 : 9)) {
    case 0: return tg_op(g, "neg", t, &x, 1, NULL, x.B, x.E, x.prod);
    case 1: return tg_op(g, "fabs", t, &x, 1, NULL, x.B, x.E, x.prod);
    case 2: {
        double B = fmin(x.B, 1);
        return tg_op(g, "tanh", t, &x, 1, NULL, B, x.E + math * B, false);
    }
    case 3: {
        if (x.B > 4)
            x = tg_scale(g, x, 4);
        double B = exp(x.B);
        return tg_op(g, "exp", t, &x, 1, NULL, B, B * x.E + math * B, false);
    }
    case 4: {
        double B = fmin(1, 1.13 * x.B);
        return tg_op(g, "erf", t, &x, 1, NULL, B, 1.13 * x.E + math * B, false);
    }
    case 5:
    case 6: { /* sqrt and log of |x| + 1, where both are well conditioned */
        tg_val a = tg_op(g, "fabs", t, &x, 1, NULL, x.B, x.E, x.prod);
        tg_val s = tg_add(g, "add", a, tg_full(g, t, 1));
        if (tg_rnd(g, 2))
            return tg_op(g, "sqrt", t, &s, 1, NULL, sqrt(s.B), tg_rounded(t.e, s.E / 2, sqrt(s.B)), false);
        double B = log(s.B);
        return tg_op(g, "log", t, &s, 1, NULL, B, s.E + math * B + tg_u(TG_F32) * 2, false);
    }
    default: return tg_op(g, tg_rnd(g, 2) ? "floor" : "ceil", t, &x, 1, NULL, x.B + 1, 0, x.prod);
    }
}

static tg_val binary(tg_gen *g, tg_ty t, int depth) {
    tg_val a = gen(g, t, depth - 1), b = gen(g, t, depth - 1), args[2] = {a, b};
    if (!tg_is_float(t.e)) {
        static const char *const ops[] = {"add",  "sub",  "mul",  "and",  "or",   "xor",  "shl",  "lshr", "ashr",
                                          "sdiv", "srem", "udiv", "urem", "smin", "smax", "umin", "umax"};
        uint32_t k = tg_rnd(g, 17);
        double B = k < 2 ? a.B + b.B : k == 2 ? a.B * b.B : k >= 13 && k <= 14 ? fmax(a.B, b.B) : 1e300;
        return tg_op(g, ops[k], t, args, 2, NULL, tg_icap(t.e, B), 0, false);
    }
    switch (tg_rnd(g, 6)) {
    case 0: return tg_add(g, "add", a, b);
    case 1: return tg_add(g, "sub", a, b);
    case 2: return tg_mul(g, a, b);
    case 3: { /* the divisor is |b| + 1 >= 1 */
        tg_val ab = tg_op(g, "fabs", t, &b, 1, NULL, b.B, b.E, b.prod);
        tg_val d = tg_add(g, "add", ab, tg_full(g, t, 1));
        args[1] = d;
        return tg_op(g, "fdiv", t, args, 2, NULL, a.B, tg_rounded(t.e, a.E + a.B * d.E, a.B), true);
    }
    default: return tg_op(g, tg_rnd(g, 2) ? "fmin" : "fmax", t, args, 2, NULL, fmax(a.B, b.B), fmax(a.E, b.E), false);
    }
}

static tg_val fma_(tg_gen *g, tg_ty t, int depth) {
    tg_val v[3] = {gen(g, t, depth - 1), gen(g, t, depth - 1), gen(g, t, depth - 1)};
    double B = v[0].B * v[1].B + v[2].B;
    double E = v[0].E * v[1].B + v[1].E * v[0].B + v[0].E * v[1].E + v[2].E + 2 * tg_u(t.e) * B;
    return tg_op(g, "fma", t, v, 3, NULL, B, E, false);
}

static tg_val select_(tg_gen *g, tg_ty t, int depth) {
    tg_val v[3] = {compare(g, &t, depth), gen(g, t, depth - 1), gen(g, t, depth - 1)};
    return tg_op(g, "select", t, v, 3, NULL, fmax(v[1].B, v[2].B), fmax(v[1].E, v[2].E), v[1].prod || v[2].prod);
}

static tg_val cast(tg_gen *g, tg_ty t, int depth) {
    tg_ty st = t;
    if (tg_is_float(t.e)) {
        if (tg_chance(g, 60)) {
            static const tg_elem fe[] = {TG_F32, TG_BF16, TG_F16};
            do
                st.e = fe[tg_rnd(g, 3)];
            while (st.e == t.e);
            tg_val x = gen(g, st, depth - 1);
            return tg_op(g, "tile.cast", t, &x, 1, NULL, x.B, tg_rounded(t.e, x.E, x.B), t.e == TG_F32 && x.prod);
        }
        static const tg_elem ie[] = {TG_I32, TG_I8, TG_I1};
        st.e = ie[tg_rnd(g, 3)];
        tg_val x = gen(g, st, depth - 1);
        if (x.B > 1023) /* integers that every float type holds exactly, or nearly */
            x = tg_op2(g, "and", x, tg_full(g, st, 1023), 1023, 0, false);
        return tg_fit(g, tg_op(g, "tile.cast", t, &x, 1, NULL, x.B, 0, false));
    }
    if (tg_chance(g, 40)) {
        static const tg_elem fe[] = {TG_F32, TG_BF16, TG_F16};
        st.e = fe[tg_rnd(g, 3)];
        tg_val x = exact(g, st, depth - 1);
        x = tg_op2(g, "mul", x, tg_full(g, st, 16), 16 * x.B, 0, true); /* exact: a power of two */
        return tg_op(g, "tile.cast", t, &x, 1, NULL, tg_icap(t.e, x.B), 0, false);
    }
    static const tg_elem ie[] = {TG_I32, TG_I8, TG_I1};
    do
        st.e = ie[tg_rnd(g, 3)];
    while (st.e == t.e);
    tg_val x = gen(g, st, depth - 1);
    return tg_op(g, "tile.cast", t, &x, 1, NULL, tg_icap(t.e, x.B), 0, false);
}

static tg_val shape(tg_gen *g, tg_ty t, int depth) {
    tg_ty st = t;
    uint32_t r = t.rank, kind = tg_rnd(g, 4);
    if (kind == 0 && r >= 2) { /* permute */
        uint32_t perm[3] = {0, 1, 2};
        for (uint32_t i = r - 1; i > 0; i--) {
            uint32_t j = tg_rnd(g, i + 1), k = perm[i];
            perm[i] = perm[j], perm[j] = k;
        }
        for (uint32_t i = 0; i < r; i++)
            st.s[perm[i]] = t.s[i];
        tg_val x = gen(g, st, depth - 1);
        return tg_permute(g, t, x, perm);
    }
    uint32_t a = tg_rnd(g, r);
    if (kind == 3 && r >= 2) { /* expand_dims, then broadcast */
        st.rank = r - 1;
        for (uint32_t i = 0, j = 0; i < r; i++)
            if (i != a)
                st.s[j++] = t.s[i];
        tg_val x = gen(g, st, depth - 1);
        tg_ty et = t;
        et.s[a] = 1;
        char attr[16];
        snprintf(attr, sizeof attr, "imm=%u", a);
        x = tg_op(g, "tile.expand_dims", et, &x, 1, attr, x.B, x.E, x.prod);
        return et.s[a] == t.s[a] ? x : tg_op(g, "tile.broadcast", t, &x, 1, NULL, x.B, x.E, x.prod);
    }
    if (kind == 2 && t.s[a] > 1) { /* broadcast of a size-1 dim */
        st.s[a] = 1;
        tg_val x = gen(g, st, depth - 1);
        return tg_op(g, "tile.broadcast", t, &x, 1, NULL, x.B, x.E, x.prod);
    }
    /* reshape from another shape of as many elements */
    uint32_t bits = 0;
    for (uint32_t i = 0; i < r; i++)
        bits += (uint32_t)__builtin_ctz(t.s[i]);
    st.rank = 1 + tg_rnd(g, bits >= 2 ? 3 : bits + 1);
    uint32_t left = bits;
    for (uint32_t i = 0; i < st.rank; i++) {
        uint32_t b = i + 1 == st.rank ? left : tg_rnd(g, left + 1);
        st.s[i] = 1u << b;
        left -= b;
    }
    tg_val x = gen(g, st, depth - 1);
    return tg_op(g, "tile.reshape", t, &x, 1, NULL, x.B, x.E, x.prod);
}

/* A reduction to t (rank <= 2) over a new axis, or (t a scalar) over a rank-1 tile. */
static tg_val reduce(tg_gen *g, tg_ty t, int depth) {
    uint32_t count = tg_count(&t), k = 2u << tg_rnd(g, t.rank ? 4 : 6), a = tg_rnd(g, t.rank + 1);
    while (count * k > TG_CAP)
        k >>= 1;
    if (k < 2 || t.rank == 3)
        return gen(g, t, depth - 1);
    tg_ty st = t;
    st.rank = t.rank + 1;
    for (uint32_t i = 0, j = 0; i < st.rank; i++)
        st.s[i] = i == a ? k : t.s[j++];
    tg_val x = gen(g, st, depth - 1);
    uint32_t kind = tg_rnd(g, 3);
    return tg_reduce(g, t, x, a, kind, k);
}

static tg_val dot(tg_gen *g, tg_ty t, int depth) {
    uint32_t r = t.rank, M = r >= 2 ? t.s[r - 2] : 0, N = r >= 2 ? t.s[r - 1] : 0, batch = r == 3 ? t.s[0] : 1;
    uint32_t K = tg_chance(g, 50) ? 32 : 16;
    if (batch * M * K > TG_CAP || batch * K * N > TG_CAP)
        K = 16;
    if (t.e != TG_F32 || M < 16 || N < 16 || batch * M * K > TG_CAP || batch * K * N > TG_CAP)
        return binary(g, t, depth);
    tg_ty at = t, bt = t;
    at.e = bt.e = tg_chance(g, 50) ? TG_BF16 : TG_F16;
    at.s[r - 1] = K;
    bt.s[r - 2] = K;
    tg_val v[3];
    v[0] = tg_scale(g, gen(g, at, depth - 1), 2);
    v[1] = tg_scale(g, gen(g, bt, depth - 1), 2);
    v[2] = tg_chance(g, 60) ? gen(g, t, depth - 1) : tg_full(g, t, 0);
    double B = v[2].B + K * v[0].B * v[1].B;
    double E = v[2].E + (v[2].prod ? 2 * tg_u(TG_F32) * v[2].B : 0) +
               K * (v[0].E * v[1].B + v[1].E * v[0].B + v[0].E * v[1].E) + 4 * K * tg_u(TG_F32) * B;
    return tg_op(g, "tile.dot", t, v, 3, NULL, B, E, false);
}

static tg_val loop(tg_gen *g, tg_ty t, int depth) {
    if (g->nloops == 2 || t.e == TG_I1)
        return binary(g, t, depth);
    tg_val init = gen(g, t, depth - 1);
    int lim = tg_chance(g, 50) ? -1 : 1 + (int)tg_rnd(g, 3); /* -1: %n */
    tg_loop L = tg_loop_begin(g, t, init, lim);
    tg_val x = gen(g, t, depth - 1);
    const char *op = !tg_is_float(t.e) ? (tg_rnd(g, 2) ? "add" : "xor") : tg_chance(g, 70) ? "add" : "fmax";
    /* the carried value's bounds after 0..3 trips */
    /* a product from before the loop may be fused into the first trip's add once LLVM unrolls
     * it (fma: the lowering contracts as nvcc does), so the carried value keeps init's prod */
    tg_val p = L.param;
    double B = init.B, E = init.E;
    p.B = B, p.E = E, p.prod = init.prod;
    for (int trip = 0; trip < 3; trip++) {
        tg_val next = tg_combine(op, t.e, p, x);
        B = fmax(B, next.B), E = fmax(E, next.E);
        p.B = next.B, p.E = next.E, p.prod = false;
    }
    p.B = B, p.E = E, p.prod = init.prod;
    L.param = p;
    tg_val next = tg_combine(op, t.e, p, x);
    tg_val args[2] = {p, x};
    next = tg_op(g, op, t, args, 2, NULL, next.B, next.E, false);
    return tg_loop_end(g, &L, next);
}

static tg_val branch(tg_gen *g, tg_ty t, int depth) {
    static const char *const preds[] = {"eq", "ne", "slt", "sgt", "sle", "sge"};
    tg_branch br = tg_branch_begin(g, preds[tg_rnd(g, 6)], (int)tg_rnd(g, 4));
    tg_val a = gen(g, t, depth - 1);
    tg_branch_else(g, &br, a);
    tg_val b = gen(g, t, depth - 1);
    return tg_branch_end(g, &br, t, a, b);
}

static tg_val splat_reduce(tg_gen *g, tg_ty t, int depth) {
    if (t.e == TG_I1)
        return leaf(g, t);
    tg_ty st = {t.e, 0, {1, 1, 1}};
    tg_val s = reduce(g, st, depth);
    return tg_splat_val(g, t, s);
}

static tg_val gen(tg_gen *g, tg_ty t, int depth) {
    if (depth <= 0 || g->budget <= 0)
        return leaf(g, t);
    g->budget--;
    if (t.e == TG_I1)
        return compare(g, &t, depth);
    /* weights of: unary binary fma select cast shape reduce dot loop branch splat(reduce) */
    uint8_t w[] = {3, 5, 1, 2, 3, 4, 2, 0, 1, 1, 1};
    uint32_t r = t.rank;
    if (t.e == TG_F32 && r >= 2 && t.s[r - 1] >= 16 && t.s[r - 2] >= 16)
        w[7] = 10; /* a dot fits: make it likely */
    uint32_t total = 0, pick;
    for (size_t i = 0; i < sizeof w; i++)
        total += w[i];
    pick = tg_rnd(g, total);
    size_t k = 0;
    while (pick >= w[k])
        pick -= w[k++];
    tg_val v;
    switch (k) {
    case 0: v = unary(g, t, depth); break;
    case 1: v = binary(g, t, depth); break;
    case 2: v = tg_is_float(t.e) ? fma_(g, t, depth) : binary(g, t, depth); break;
    case 3: v = select_(g, t, depth); break;
    case 4: v = cast(g, t, depth); break;
    case 5: v = shape(g, t, depth); break;
    case 6: v = reduce(g, t, depth); break;
    case 7: v = dot(g, t, depth); break;
    case 8: v = loop(g, t, depth); break;
    case 9: v = branch(g, t, depth); break;
    default: v = splat_reduce(g, t, depth); break;
    }
    return tg_fit(g, v);
}

/* ---- the program ---- */

static tg_ty random_shape(tg_gen *g, tg_elem e, uint32_t rank, bool dot_sized) {
    tg_ty t = {e, rank, {1, 1, 1}};
    for (;;) {
        uint32_t n = 1;
        for (uint32_t d = 0; d < rank; d++) {
            uint32_t lo = dot_sized && d + 2 >= rank ? 4 : 0, hi = rank == 1 ? 8 : 6;
            t.s[d] = 1u << (lo + tg_rnd(g, hi - lo + 1));
            n *= t.s[d];
        }
        if (n >= 2 && n <= TG_CAP)
            return t;
    }
}

static void output(tg_gen *g, tg_val v, tg_kind kind) {
    const tg_ty *t = &v.t;
    int64_t dim[3] = {1, 1, 1};
    tg_offsets off;
    memset(&off, 0, sizeof off);
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t trim = tg_rnd(g, t->s[d] / 2 + 1);
        if (kind == TG_ATOMIC_INT) { /* every instance adds into the same elements */
            dim[d] = t->s[d] - trim;
            continue;
        }
        dim[d] = (int64_t)t->s[d] * (d == 0 ? g->p->grid[0] : d == 1 ? g->p->grid[1] : 1) - trim;
        off.c[d][0] = d == 0 ? t->s[0] : 0;
        off.c[d][1] = d == 1 ? t->s[1] : 0;
    }
    int ti = add_tensor(g, t->e, kind, t->rank, dim);
    tg_tensor *y = &g->p->t[ti];
    y->tol = kind == TG_ATOMIC_F32 ? tg_rounded(TG_F32, v.E, v.B + y->hi) : v.E;
    tg_memop(g, kind == TG_STORE ? "tile.store" : "tile.atomic_add", ti, &off, v.id, *t, 0);
}

int tg_generate(uint64_t seed, const char *name, tg_program *p) {
    memset(p, 0, sizeof *p);
    tg_gen g;
    tg_gen_init(&g, p, seed);
    p->seed = seed;
    snprintf(p->name, sizeof p->name, "%s", name);
    static const tg_elem oe[] = {TG_F32, TG_F32, TG_F32, TG_F32, TG_BF16, TG_BF16,
                                 TG_F16, TG_F16, TG_I32, TG_I32, TG_I8};
    tg_elem e = oe[tg_rnd(&g, sizeof oe / sizeof *oe)];
    uint32_t rank = 1 + tg_rnd(&g, 3);
    tg_ty t = random_shape(&g, e, rank, e == TG_F32 && rank >= 2 && tg_chance(&g, 60));
    p->grid[0] = 1 + tg_rnd(&g, 3);
    p->grid[1] = rank >= 2 ? 1 + tg_rnd(&g, 2) : 1;
    p->grid[2] = 1;
    p->warps = 1u << tg_rnd(&g, 4);
    /* from the seed, not the stream, so that every seed keeps its program: about a third of the
     * 2-D grids visit their programs in grouped order, 1 to 3 wide (a last group short or not) */
    p->group = p->grid[1] > 1 && seed % 3 == 0 ? 1 + (uint32_t)(seed / 3 % 3) : 0;
    p->n = (int32_t)tg_rnd(&g, 4);
    p->x = (float)((tg_chance(&g, 50) ? -1 : 1) * (0.125 + 0.875 * (double)tg_rnd(&g, 1u << 20) / (1u << 20)));
    g.budget = 6 + (int)tg_rnd(&g, 18);
    tg_val v = gen(&g, t, 3 + (int)tg_rnd(&g, 3));
    output(&g, v, TG_STORE);
    if (tg_chance(&g, 40)) {
        g.budget = 4 + (int)tg_rnd(&g, 6);
        bool ints = tg_chance(&g, 50);
        tg_ty t2 = ints ? random_shape(&g, TG_I32, 1 + tg_rnd(&g, 3), false) : random_shape(&g, TG_F32, rank, false);
        output(&g, gen(&g, t2, 2 + (int)tg_rnd(&g, 2)), ints ? TG_ATOMIC_INT : TG_ATOMIC_F32);
    }
    return tg_gen_finish(&g);
}
