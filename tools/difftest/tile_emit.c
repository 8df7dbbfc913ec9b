/* The tile generator's writer (tile_emit.h): each op goes to the kernel body as IR text and to the
 * JSON statement list, so the two always describe one program. */
#include "tile_emit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ELEM[TG_NELEM] = {"i1", "i8", "i32", "f16", "bf16", "f32"};
static const char *const REDUCE[3] = {"sum", "max", "min"};

const char *tg_elem_name(tg_elem e) { return ELEM[e]; }
bool tg_is_float(tg_elem e) { return e >= TG_F16; }
uint32_t tg_elem_size(tg_elem e) { return e <= TG_I8 ? 1 : e == TG_I32 || e == TG_F32 ? 4 : 2; }

uint32_t tg_rnd(tg_gen *g, uint32_t n) { return (uint32_t)(dt_splitmix(&g->rng) % n); }
bool tg_chance(tg_gen *g, uint32_t percent) { return tg_rnd(g, 100) < percent; }

uint32_t tg_count(const tg_ty *t) {
    uint32_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++)
        n *= t->s[d];
    return n;
}

double tg_u(tg_elem e) { return e == TG_F32 ? 0x1p-24 : e == TG_F16 ? 0x1p-11 : e == TG_BF16 ? 0x1p-8 : 0; }
double tg_icap(tg_elem e, double B) {
    double cap = e == TG_I1 ? 1 : e == TG_I8 ? 128 : 2147483648.0;
    return B < cap ? B : cap;
}
double tg_rounded(tg_elem e, double E, double B) { return E > 0 ? E + 2 * tg_u(e) * B : 0; }
/* 4 ulps of f32 (libm, libdevice and NumPy each within 2 of the exact value), then a rounding
 * to the element that the f32 difference may flip. */
double tg_math_err(tg_elem e) { return 8 * tg_u(TG_F32) + 2 * tg_u(e); }

void tg_gen_init(tg_gen *g, tg_program *p, uint64_t seed) {
    memset(g, 0, sizeof *g);
    g->rng = seed * 0x2545f4914f6cdd1dull + 0x7;
    g->p = p;
    g->first[0] = true;
}

static const char *vname(int id, char *buf, size_t n) {
    if (id == TG_ID_N)
        return "n";
    if (id == TG_ID_X)
        return "x";
    snprintf(buf, n, "v%d", id);
    return buf;
}

static void ty_text(const tg_ty *t, char *buf, size_t n) {
    if (!t->rank) {
        snprintf(buf, n, "%s", ELEM[t->e]);
        return;
    }
    size_t at = (size_t)snprintf(buf, n, "tile<");
    for (uint32_t d = 0; d < t->rank; d++)
        at += (size_t)snprintf(buf + at, n - at, d ? "x%u" : "%u", t->s[d]);
    snprintf(buf + at, n - at, " x %s>", ELEM[t->e]);
}

static void json_shape(tg_gen *g, const tg_ty *t) {
    dt_buf_printf(&g->json, ",\"shape\":[");
    for (uint32_t d = 0; d < t->rank; d++)
        dt_buf_printf(&g->json, d ? ",%u" : "%u", t->s[d]);
    dt_buf_printf(&g->json, "],\"elem\":\"%s\"", ELEM[t->e]);
}

/* Opens a JSON statement in the current list. */
static void stmt(tg_gen *g, const char *op) {
    dt_buf_printf(&g->json, "%s{\"op\":\"%s\"", g->first[g->jdepth] ? "" : ",", op);
    g->first[g->jdepth] = false;
}
static void list_begin(tg_gen *g, const char *key) {
    dt_buf_printf(&g->json, ",\"%s\":[", key);
    g->first[++g->jdepth] = true;
}
static void list_end(tg_gen *g) {
    dt_buf_printf(&g->json, "]");
    g->jdepth--;
}

/* "k=v, k=v" as JSON members: numbers and lists as they are, words quoted. */
static void json_attrs(tg_gen *g, const char *attr) {
    while (attr && *attr) {
        const char *eq = strchr(attr, '='), *end = strstr(attr, ", ");
        size_t vlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
        bool word = (eq[1] >= 'a' && eq[1] <= 'z');
        dt_buf_printf(&g->json, ",\"%.*s\":%s%.*s%s", (int)(eq - attr), attr, word ? "\"" : "", (int)vlen, eq + 1,
                      word ? "\"" : "");
        attr = end ? end + 2 : NULL;
    }
}

static tg_val def(tg_gen *g, tg_ty t, double B, double E, bool prod) {
    tg_val v = {g->nextv++, t, B, E, prod};
    return v;
}

tg_val tg_op(tg_gen *g, const char *op, tg_ty t, const tg_val *args, int nargs, const char *attr, double B, double E,
             bool prod) {
    tg_val v = def(g, t, B, E, prod);
    char ty[64], nm[16];
    ty_text(&t, ty, sizeof ty);
    dt_buf_printf(&g->body, "  %%v%d = %s", v.id, op);
    for (int i = 0; i < nargs; i++)
        dt_buf_printf(&g->body, "%s %%%s", i ? "," : "", vname(args[i].id, nm, sizeof nm));
    if (attr)
        dt_buf_printf(&g->body, " {%s}", attr);
    dt_buf_printf(&g->body, " : %s\n", ty);
    stmt(g, op);
    dt_buf_printf(&g->json, ",\"dst\":\"v%d\",\"args\":[", v.id);
    for (int i = 0; i < nargs; i++)
        dt_buf_printf(&g->json, "%s\"%s\"", i ? "," : "", vname(args[i].id, nm, sizeof nm));
    dt_buf_printf(&g->json, "]");
    json_shape(g, &t);
    json_attrs(g, attr);
    dt_buf_printf(&g->json, "}");
    return v;
}

tg_val tg_op2(tg_gen *g, const char *op, tg_val a, tg_val b, double B, double E, bool prod) {
    tg_val args[2] = {a, b};
    return tg_op(g, op, a.t, args, 2, NULL, B, E, prod);
}

tg_val tg_combine(const char *op, tg_elem e, tg_val a, tg_val b) {
    tg_val r = a;
    r.prod = false;
    if (!tg_is_float(e)) {
        r.B = tg_icap(e, strcmp(op, "add") ? 1e300 : a.B + b.B);
        r.E = 0;
    } else if (!strcmp(op, "add") || !strcmp(op, "sub")) {
        r.B = a.B + b.B;
        double E = a.E + b.E + (a.prod ? 2 * tg_u(e) * a.B : 0) + (b.prod ? 2 * tg_u(e) * b.B : 0);
        r.E = tg_rounded(e, E, r.B);
    } else if (!strcmp(op, "mul")) {
        r.B = a.B * b.B;
        r.E = tg_rounded(e, a.E * b.B + b.E * a.B + a.E * b.E, r.B);
        r.prod = true;
    } else { /* fmin, fmax */
        r.B = fmax(a.B, b.B);
        r.E = fmax(a.E, b.E);
    }
    return r;
}

tg_val tg_add(tg_gen *g, const char *op, tg_val a, tg_val b) {
    tg_val r = tg_combine(op, a.t.e, a, b);
    return tg_op2(g, op, a, b, r.B, r.E, false);
}
tg_val tg_mul(tg_gen *g, tg_val a, tg_val b) {
    tg_val r = tg_combine("mul", a.t.e, a, b);
    return tg_op2(g, "mul", a, b, r.B, r.E, true);
}

tg_val tg_full(tg_gen *g, tg_ty t, double value) {
    char attr[48];
    snprintf(attr, sizeof attr, "value=%.9g", value);
    return tg_op(g, "tile.full", t, NULL, 0, attr, fabs(value), 0, false);
}

tg_val tg_splat(tg_gen *g, tg_ty t, int scalar_id, double B) {
    tg_val s = {scalar_id, {t.e, 0, {1, 1, 1}}, B, 0, false};
    return tg_op(g, "tile.splat", t, &s, 1, NULL, B, 0, false);
}
tg_val tg_splat_val(tg_gen *g, tg_ty t, tg_val s) { return tg_op(g, "tile.splat", t, &s, 1, NULL, s.B, s.E, s.prod); }

tg_val tg_permute(tg_gen *g, tg_ty t, tg_val x, const uint32_t *perm) {
    char attr[32];
    size_t at = (size_t)snprintf(attr, sizeof attr, "perm=[");
    for (uint32_t i = 0; i < t.rank; i++)
        at += (size_t)snprintf(attr + at, sizeof attr - at, i ? ",%u" : "%u", perm[i]);
    snprintf(attr + at, sizeof attr - at, "]");
    return tg_op(g, "tile.permute", t, &x, 1, attr, x.B, x.E, x.prod);
}

/* Sums: k terms in another order (shuffles, shared memory) differ by up to 2k roundings of the
 * sum's magnitude; f16 and bf16 sums round once more at the end. */
tg_val tg_reduce(tg_gen *g, tg_ty t, tg_val x, uint32_t axis, uint32_t kind, uint32_t k) {
    char attr[32];
    snprintf(attr, sizeof attr, "imm=%u, kind=%s", axis, REDUCE[kind]);
    double B = x.B, E = x.E;
    if (kind == 0 && tg_is_float(t.e)) {
        B = k * x.B;
        double u = tg_u(TG_F32);
        E = k * x.E + (x.prod ? 2 * u * k * x.B : 0) + 2 * k * u * B + (t.e != TG_F32 ? 2 * tg_u(t.e) * B : 0);
    } else if (kind == 0)
        B = tg_icap(t.e, k * x.B);
    return tg_op(g, "tile.reduce", t, &x, 1, attr, B, E, false);
}

tg_val tg_scale(tg_gen *g, tg_val v, double bmax) {
    if (!tg_is_float(v.t.e) || v.B <= bmax)
        return v;
    double c = ldexp(1.0, -(int)ceil(log2(v.B / bmax)));
    tg_val f = tg_full(g, v.t, c);
    return tg_op2(g, "mul", v, f, v.B * c, tg_rounded(v.t.e, v.E * c, v.B * c), true);
}
tg_val tg_fit(tg_gen *g, tg_val v) { return tg_scale(g, v, TG_BMAX); }

/* An i32 offset as IR text: the name of the scalar holding it. */
static void offset_text(tg_gen *g, const int64_t *c, char *name, size_t n) {
    static const char *const src[3] = {"pid0", "pid1", NULL};
    int at = g->nexts++;
    dt_buf_printf(&g->body, "  %%s%d = const {value=%lld} : i32\n", at, (long long)c[3]);
    for (int k = 0; k < 3; k++) {
        if (!c[k])
            continue;
        int kc = g->nexts++, m = g->nexts++, s = g->nexts++;
        char ivn[16];
        snprintf(ivn, sizeof ivn, "v%d", g->iv[g->nloops ? g->nloops - 1 : 0]);
        dt_buf_printf(&g->body, "  %%s%d = const {value=%lld} : i32\n  %%s%d = mul %%%s, %%s%d : i32\n", kc,
                      (long long)c[k], m, src[k] ? src[k] : ivn, kc);
        dt_buf_printf(&g->body, "  %%s%d = add %%s%d, %%s%d : i32\n", s, at, m);
        at = s;
    }
    snprintf(name, n, "%%s%d", at);
}

tg_val tg_memop(tg_gen *g, const char *op, int tensor, const tg_offsets *off, int src, tg_ty t, double pad) {
    const tg_tensor *x = &g->p->t[tensor];
    char names[3][16], ty[64], nm[16];
    bool uses_iv = false;
    for (uint32_t d = 0; d < x->rank; d++) {
        offset_text(g, off->c[d], names[d], sizeof names[d]);
        uses_iv |= off->c[d][2] != 0;
    }
    bool is_load = !strcmp(op, "tile.load");
    tg_val v = {-1, t, 0, 0, false};
    if (is_load) {
        v = def(g, t, fmax(x->hi, fabs(pad)), 0, false);
        dt_buf_printf(&g->body, "  %%v%d = ", v.id);
    } else
        dt_buf_printf(&g->body, "  ");
    dt_buf_printf(&g->body, "%s %%%s", op, x->name);
    for (uint32_t d = 0; d < x->rank; d++)
        dt_buf_printf(&g->body, ", %s", names[d]);
    ty_text(&t, ty, sizeof ty);
    if (is_load)
        dt_buf_printf(&g->body, " {pad=%.9g} : %s\n", pad, ty);
    else
        dt_buf_printf(&g->body, ", %%%s\n", vname(src, nm, sizeof nm));
    stmt(g, op + 5);
    dt_buf_printf(&g->json, ",\"t\":\"%s\",\"off\":[", x->name);
    for (uint32_t d = 0; d < x->rank; d++)
        dt_buf_printf(&g->json, "%s[%lld,%lld,%lld,%lld]", d ? "," : "", (long long)off->c[d][0],
                      (long long)off->c[d][1], (long long)off->c[d][2], (long long)off->c[d][3]);
    dt_buf_printf(&g->json, "]");
    if (uses_iv)
        dt_buf_printf(&g->json, ",\"iv\":\"v%d\"", g->iv[g->nloops - 1]);
    if (is_load) {
        dt_buf_printf(&g->json, ",\"dst\":\"v%d\",\"pad\":%.9g", v.id, pad);
        json_shape(g, &t);
    } else
        dt_buf_printf(&g->json, ",\"src\":\"v%d\"", src);
    dt_buf_printf(&g->json, "}");
    return v;
}

/* ---- control flow: a counted loop carrying one tile, a branch on %n ---- */

tg_loop tg_loop_begin(tg_gen *g, tg_ty t, tg_val init, int lim) {
    tg_loop L = {g->nextb + 1, g->nextb + 3, init};
    int body = g->nextb + 2, zero = g->nexts++, c = g->nexts++, lv = g->nexts++;
    g->nextb += 3;
    int iv = g->nextv++;
    L.param = def(g, t, init.B, init.E, false);
    char ty[64];
    ty_text(&t, ty, sizeof ty);
    dt_buf_printf(&g->body, "  %%s%d = const {value=0} : i32\n  br ^%d(%%s%d, %%v%d)\n", zero, L.header, zero, init.id);
    dt_buf_printf(&g->body, "^%d(%%v%d: i32, %%v%d: %s):\n", L.header, iv, L.param.id, ty);
    if (lim < 0)
        dt_buf_printf(&g->body, "  %%s%d = icmp %%v%d, %%n {pred=slt} : i1\n", c, iv);
    else
        dt_buf_printf(&g->body, "  %%s%d = const {value=%d} : i32\n  %%s%d = icmp %%v%d, %%s%d {pred=slt} : i1\n", lv,
                      lim, c, iv, lv);
    dt_buf_printf(&g->body, "  cond_br %%s%d, ^%d, ^%d\n^%d:\n", c, body, L.exit, body);
    stmt(g, "for");
    if (lim < 0)
        dt_buf_printf(&g->json, ",\"iv\":\"v%d\",\"lim\":\"n\"", iv);
    else
        dt_buf_printf(&g->json, ",\"iv\":\"v%d\",\"lim\":%d", iv, lim);
    dt_buf_printf(&g->json, ",\"param\":\"v%d\",\"init\":\"v%d\"", L.param.id, init.id);
    list_begin(g, "body");
    g->iv[g->nloops++] = iv;
    return L;
}

tg_val tg_loop_end(tg_gen *g, tg_loop *L, tg_val next) {
    int iv = g->iv[--g->nloops], one = g->nexts++, n = g->nexts++;
    dt_buf_printf(&g->body, "  %%s%d = const {value=1} : i32\n  %%s%d = add %%v%d, %%s%d : i32\n", one, n, iv, one);
    dt_buf_printf(&g->body, "  br ^%d(%%s%d, %%v%d)\n^%d:\n", L->header, n, next.id, L->exit);
    list_end(g);
    dt_buf_printf(&g->json, ",\"next\":\"v%d\"}", next.id);
    return L->param;
}

tg_branch tg_branch_begin(tg_gen *g, const char *pred, int rhs) {
    tg_branch b = {g->nextb + 3, g->nextb + 2};
    int then = g->nextb + 1, c = g->nexts++, k = g->nexts++;
    g->nextb += 3;
    dt_buf_printf(&g->body, "  %%s%d = const {value=%d} : i32\n  %%s%d = icmp %%n, %%s%d {pred=%s} : i1\n", k, rhs, c,
                  k, pred);
    dt_buf_printf(&g->body, "  cond_br %%s%d, ^%d, ^%d\n^%d:\n", c, then, b.other, then);
    stmt(g, "if");
    dt_buf_printf(&g->json, ",\"pred\":\"%s\",\"rhs\":%d", pred, rhs);
    list_begin(g, "then");
    return b;
}

void tg_branch_else(tg_gen *g, tg_branch *b, tg_val then_value) {
    dt_buf_printf(&g->body, "  br ^%d(%%v%d)\n^%d:\n", b->merge, then_value.id, b->other);
    list_end(g);
    dt_buf_printf(&g->json, ",\"tv\":\"v%d\"", then_value.id);
    list_begin(g, "else");
}

tg_val tg_branch_end(tg_gen *g, tg_branch *b, tg_ty t, tg_val a, tg_val e) {
    tg_val r = def(g, t, fmax(a.B, e.B), fmax(a.E, e.E), a.prod || e.prod);
    char ty[64];
    ty_text(&t, ty, sizeof ty);
    dt_buf_printf(&g->body, "  br ^%d(%%v%d)\n^%d(%%v%d: %s):\n", b->merge, e.id, b->merge, r.id, ty);
    list_end(g);
    dt_buf_printf(&g->json, ",\"ev\":\"v%d\",\"dst\":\"v%d\"}", e.id, r.id);
    return r;
}

/* ---- the kernel ---- */

static void tensor_type(const tg_tensor *t, char *buf, size_t n) {
    snprintf(buf, n, "tensor<%s%u x %s>", t->kind == TG_IN ? "" : "mut ", t->rank, ELEM[t->elem]);
}

static void json_ints(dt_buf *b, const char *key, const int64_t *v, uint32_t n) {
    dt_buf_printf(b, ",\"%s\":[", key);
    for (uint32_t i = 0; i < n; i++)
        dt_buf_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
    dt_buf_printf(b, "]");
}

int tg_gen_finish(tg_gen *g) {
    static const char *const KIND[] = {"in", "store", "atomic_int", "atomic_f32"};
    tg_program *p = g->p;
    dt_buf text = {0}, json = {0};
    char ty[64];
    dt_buf_printf(&text, "tile_kernel @%s(", p->name);
    dt_buf_printf(&json, "{\"seed\":%llu,\"name\":\"%s\",\"grid\":[%u,%u,%u],\"n\":%d,\"x\":%.9g,\"tensors\":[",
                  (unsigned long long)p->seed, p->name, p->grid[0], p->grid[1], p->grid[2], p->n, (double)p->x);
    for (uint32_t i = 0; i < p->ntensors; i++) {
        const tg_tensor *t = &p->t[i];
        tensor_type(t, ty, sizeof ty);
        dt_buf_printf(&text, "%%%s: %s, ", t->name, ty);
        dt_buf_printf(&json, "%s{\"name\":\"%s\",\"elem\":\"%s\",\"kind\":\"%s\"", i ? "," : "", t->name, ELEM[t->elem],
                      KIND[t->kind]);
        json_ints(&json, "dims", t->dim, t->rank);
        json_ints(&json, "strides", t->stride, t->rank);
        dt_buf_printf(&json, ",\"base\":%lld,\"storage\":%lld,\"lo\":%.17g,\"hi\":%.17g,\"tol\":%.17g}",
                      (long long)t->base, (long long)t->storage, t->lo, t->hi, t->tol);
    }
    dt_buf_printf(&text, "%%n: i32, %%x: f32) hints(warps=%u", p->warps);
    if (p->group)
        dt_buf_printf(&text, ", group=%u", p->group);
    dt_buf_printf(&text, ") {\n^0:\n");
    dt_buf_printf(&text, "  %%pid0 = tile.program_id {imm=0} : i32\n  %%pid1 = tile.program_id {imm=1} : i32\n");
    dt_buf_append(&text, &g->body);
    dt_buf_printf(&text, "  ret\n}\n");
    dt_buf_printf(&json, "],\"body\":[");
    dt_buf_append(&json, &g->json);
    /* the IR too, for the interpreter's side of the comparison; the NumPy evaluator never reads it */
    dt_buf_printf(&json, "],\"text\":\"");
    for (const char *c = text.oom ? "" : text.p; *c; c++)
        dt_buf_printf(&json, *c == '\n' ? "\\n" : *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
    dt_buf_printf(&json, "\"}");
    free(g->body.p);
    free(g->json.p);
    if (text.oom || json.oom || g->body.oom || g->json.oom) {
        free(text.p);
        free(json.p);
        return -1;
    }
    p->text = text.p;
    p->json = json.p;
    return 0;
}

void tg_program_free(tg_program *p) {
    free(p->text);
    free(p->json);
    p->text = p->json = NULL;
}
