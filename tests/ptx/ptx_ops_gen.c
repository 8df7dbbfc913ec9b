/* test_ptx_ops' generators: for each op of lib/ops.def, its variants, built through the public
 * builder into one kernel each. A generic generator reads the operands from the op's row
 * (operand letters, attributes); the ops the row cannot describe have their own: casts, memory,
 * control flow, the special ones, and tier 2 (tensor cores, async copies, Hopper). Builder calls
 * latch their first failure in G, so a generator reads straight through; the driver
 * (test_ptx_ops.c) verifies, compiles and assembles what they build. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "ptx_ops.h"

/* ---- building ---- */

void types(G *g) {
    oxide_context *c = g->ctx;
    oxide_type_scalar(c, OXIDE_TYPE_VOID, &g->v);
    oxide_type_scalar(c, OXIDE_TYPE_I1, &g->i1);
    oxide_type_scalar(c, OXIDE_TYPE_I8, &g->i8);
    oxide_type_scalar(c, OXIDE_TYPE_I16, &g->i16);
    oxide_type_scalar(c, OXIDE_TYPE_I32, &g->i32);
    oxide_type_scalar(c, OXIDE_TYPE_I64, &g->i64);
    oxide_type_scalar(c, OXIDE_TYPE_F16, &g->f16);
    oxide_type_scalar(c, OXIDE_TYPE_BF16, &g->bf16);
    oxide_type_scalar(c, OXIDE_TYPE_F32, &g->f32);
    oxide_type_scalar(c, OXIDE_TYPE_F64, &g->f64);
    oxide_type_pointer(c, OXIDE_AS_GLOBAL, &g->pg);
    oxide_type_pointer(c, OXIDE_AS_SHARED, &g->ps);
    oxide_type_pointer(c, OXIDE_AS_CONSTANT, &g->pc);
    oxide_type_pointer(c, OXIDE_AS_GENERIC, &g->pgen);
    oxide_type_vector(c, g->f32, 4, &g->v4f32);
    oxide_type_vector(c, g->f32, 2, &g->v2f32);
    oxide_type_vector(c, g->i32, 2, &g->v2i32);
    oxide_type_vector(c, g->i64, 2, &g->v2i64);
    oxide_type *f[2] = {g->f32, g->i32};
    oxide_type_struct(c, f, 2, &g->st_fi);
}

/* Builder calls latch the first failure, so generators read straight through. */
static oxide_value *op(G *g, oxide_op o, oxide_value *const *ops, size_t n, oxide_type *rt, const oxide_attr *at,
                       size_t na) {
    oxide_value *r = NULL;
    if (!g->st)
        g->st = oxide_build_op(g->b, o, ops, n, rt, at, na, &r);
    return g->st ? NULL : r;
}

static oxide_value *ci(G *g, oxide_type *t, int64_t v) {
    oxide_value *r = NULL;
    if (!g->st)
        g->st = oxide_build_const_int(g->b, t, v, &r);
    return r;
}

static oxide_value *addr(G *g, oxide_value *base, int64_t bytes) {
    oxide_value *o[2] = {base, ci(g, g->i64, bytes)};
    oxide_attr a = {.key = OXIDE_ATTR_ELEM, .t = g->i8};
    return op(g, OXIDE_OP_OFFSET, o, 2, NULL, &a, 1);
}

/* A fresh, non-constant value of type t, read from the scratch memory. */
static oxide_value *input(G *g, oxide_type *t) {
    if (t == g->i1) {
        oxide_value *o[2] = {input(g, g->i32), ci(g, g->i32, 0)};
        oxide_attr a = {.key = OXIDE_ATTR_PRED, .i = OXIDE_PRED_NE};
        return op(g, OXIDE_OP_ICMP, o, 2, NULL, &a, 1);
    }
    oxide_value *p = addr(g, g->p, 16 * g->slot++);
    return op(g, OXIDE_OP_LOAD, &p, 1, t, NULL, 0);
}

static void sink(G *g, oxide_value *v) {
    if (!v || g->st)
        return;
    if (oxide_value_get_type(v) == g->i1)
        v = op(g, OXIDE_OP_ZEXT, &v, 1, g->i32, NULL, 0);
    oxide_value *o[2] = {v, addr(g, g->p, 16 * g->slot++)};
    op(g, OXIDE_OP_STORE, o, 2, NULL, NULL, 0);
}

static oxide_value *shared_ptr(G *g) {
    oxide_attr a = {.key = OXIDE_ATTR_SYM, .s = "sh"};
    return op(g, OXIDE_OP_GLOBAL_ADDR, NULL, 0, g->ps, &a, 1);
}

static oxide_value *generic_ptr(G *g) { return op(g, OXIDE_OP_ADDRSPACECAST, &g->p, 1, g->pgen, NULL, 0); }

/* pointer in space s: 0 global, 1 shared, 2 generic, 3 constant */
static oxide_value *ptr_in(G *g, int s) {
    switch (s) {
    case 1: return shared_ptr(g);
    case 2: return generic_ptr(g);
    case 3: {
        oxide_attr a = {.key = OXIDE_ATTR_SYM, .s = "cst"};
        return op(g, OXIDE_OP_GLOBAL_ADDR, NULL, 0, g->pc, &a, 1);
    }
    default: return addr(g, g->p, 256);
    }
}

static void ret(G *g) {
    if (!g->st)
        g->st = oxide_build_op(g->b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL);
}

static oxide_block *block(G *g, oxide_type *const *pt, size_t n, oxide_value **pv) {
    oxide_block *b = NULL;
    if (!g->st)
        g->st = oxide_function_add_block(g->k, pt, n, &b, pv);
    return b;
}

/* ---- module scaffolding ---- */

oxide_status new_module(G *g, const char *name) {
    oxide_status st = oxide_module_create(g->ctx, name, &g->mod);
    if (st)
        return st;
    oxide_type *arr, *carr;
    oxide_global *gl;
    oxide_type_array(g->ctx, g->i8, 1024, &arr);
    oxide_type_array(g->ctx, g->i32, 4, &carr);
    static const int32_t init[4] = {1, 2, 3, 4};
    if ((st = oxide_module_add_global(g->mod, "sh", arr, OXIDE_AS_SHARED, 16, NULL, 0, &gl)) ||
        (st = oxide_module_add_global(g->mod, "cst", carr, OXIDE_AS_CONSTANT, 16, init, sizeof init, &gl)) ||
        (st = oxide_module_add_global(g->mod, "gv", carr, OXIDE_AS_GLOBAL, 0, NULL, 0, &gl)))
        return st;
    /* device functions for 'call' */
    oxide_function *f;
    oxide_block *b;
    oxide_value *x, *r;
    if ((st = oxide_module_add_function(g->mod, "dev_inc", g->i32, &f)) ||
        (st = oxide_function_add_param(f, "x", g->i32, &x)) || (st = oxide_function_add_block(f, NULL, 0, &b, NULL)))
        return st;
    oxide_value *one;
    if ((st = oxide_build_const_int(b, g->i32, 1, &one)))
        return st;
    oxide_value *o[2] = {x, one};
    if ((st = oxide_build_op(b, OXIDE_OP_ADD, o, 2, NULL, NULL, 0, &r)) ||
        (st = oxide_build_op(b, OXIDE_OP_RET, &r, 1, NULL, NULL, 0, NULL)))
        return st;
    if ((st = oxide_module_add_function(g->mod, "dev_void", g->v, &f)) ||
        (st = oxide_function_add_param(f, "q", g->pg, &x)) || (st = oxide_function_add_block(f, NULL, 0, &b, NULL)))
        return st;
    oxide_value *seven;
    if ((st = oxide_build_const_int(b, g->i32, 7, &seven)))
        return st;
    oxide_value *o2[2] = {seven, x};
    if ((st = oxide_build_op(b, OXIDE_OP_STORE, o2, 2, NULL, NULL, 0, NULL)) ||
        (st = oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL)))
        return st;
    return OXIDE_OK;
}

static bool is_tma(oxide_op o);

oxide_status begin_kernel(G *g, const char *name, oxide_op o) {
    oxide_status st = oxide_module_add_kernel(g->mod, name, &g->k);
    if (!st)
        st = oxide_kernel_add_ptr_param(g->k, "p", OXIDE_SCALAR_U8, 1, &g->p);
    if (!st && is_tma(o))
        st = oxide_kernel_add_tma_desc_param(g->k, "d", &g->desc);
    if (!st)
        st = oxide_function_add_block(g->k, NULL, 0, &g->b, NULL);
    g->slot = 0;
    g->st = st;
    return st;
}

/* ---- variants ---- */

static oxide_type *class_type(G *g, char c, int i) {
    oxide_type *I[] = {g->i32, g->i64, g->i16, g->i8, g->v2i32};
    oxide_type *F[] = {g->f32, g->f64, g->f16, g->bf16, g->v2f32};
    oxide_type *N[] = {g->i32, g->i64, g->f32, g->f64, g->f16, g->bf16, g->i8, g->v4f32, g->v2i64};
    oxide_type *T[] = {g->i32, g->i64, g->f32, g->f64, g->pg, g->f16, g->i1, g->v2f32};
    switch (c) {
    case 'I': return i < 5 ? I[i] : NULL;
    case 'F': return i < 5 ? F[i] : NULL;
    case 'N': return i < 9 ? N[i] : NULL;
    case 'T': return i < 8 ? T[i] : NULL;
    default: return NULL;
    }
}

static char row_class(const char *operands) {
    for (const char *c = operands; *c; c++)
        if (strchr("TIFN", *c))
            return *c;
    return 0;
}

static bool is_atomic_rmw(oxide_op o) { return o >= OXIDE_OP_ATOMIC_ADD && o <= OXIDE_OP_ATOMIC_CAS; }

/* Generic generator: operands from the row's letters. Variant v picks the row type and, for
 * rows with them, the predicate, order/scope and pointer space. Returns 0 when v is past the
 * last variant. */
static int gen_generic(G *g, oxide_op o, int v) {
    const struct row *r = &rows[o];
    char cls = row_class(r->operands);
    int ntypes = 1;
    if (cls)
        while (class_type(g, cls, ntypes))
            ntypes++;
    int npred = o == OXIDE_OP_ICMP ? 10 : o == OXIDE_OP_FCMP ? 14 : 1;
    oxide_attr at[4];
    size_t na = 0;
    int space = 0;
    oxide_type *row;
    if (is_atomic_rmw(o)) {
        /* every type in each space relaxed at gpu scope, then every order x scope on global */
        int nbase = ntypes * 3;
        if (v < nbase) {
            row = class_type(g, cls, v % ntypes);
            space = v / ntypes;
        } else if (v < nbase + 20) {
            int w = v - nbase;
            row = class_type(g, cls, 0);
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_ORDER, .i = w % 5};
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_SCOPE, .i = w / 5};
        } else if (v < nbase + 21) {
            row = class_type(g, cls, o == OXIDE_OP_ATOMIC_ADD || o == OXIDE_OP_ATOMIC_EXCH ? 2 : 1); /* f32 / i64 */
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_ORDER, .i = OXIDE_ORDER_SEQ_CST};
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_SCOPE, .i = OXIDE_SCOPE_CLUSTER};
            space = 1;
        } else {
            return 0;
        }
    } else {
        if (v >= ntypes * npred)
            return 0;
        row = cls ? class_type(g, cls, v % ntypes) : NULL;
        if (npred > 1)
            at[na++] =
                (oxide_attr){.key = OXIDE_ATTR_PRED, .i = (o == OXIDE_OP_FCMP ? OXIDE_PRED_OEQ : 0) + v / ntypes};
        if (o == OXIDE_OP_MAP_SHARED)
            space = v % 2 ? 2 : 1;
    }
    oxide_value *ops[4];
    size_t n = 0;
    for (const char *c = r->operands; *c && *c != '*'; c++) {
        switch (*c) {
        case 'T':
        case 'I':
        case 'F':
        case 'N': ops[n++] = input(g, row); break;
        case 'b': ops[n++] = input(g, g->i1); break;
        case 'i': ops[n++] = o == OXIDE_OP_MAP_SHARED ? ci(g, g->i32, 1) : input(g, g->i32); break;
        case 'l': ops[n++] = input(g, g->i64); break;
        case 'P': ops[n++] = ptr_in(g, space); break;
        case 'S': ops[n++] = shared_ptr(g); break;
        default: ops[n++] = input(g, g->i32);
        }
    }
    if ((r->attrs & A_IMM) && (o == OXIDE_OP_REDUX_ADD || o == OXIDE_OP_SHFL_IDX) && v == 1)
        at[na++] = (oxide_attr){.key = OXIDE_ATTR_IMM, .i = 0xffff}; /* a partial lane mask */
    sink(g, op(g, o, ops, n, NULL, at, na));
    ret(g);
    return 1;
}

static int gen_cast(G *g, oxide_op o, int v) {
    struct {
        oxide_type *from, *to;
    } c[6] = {{0}};
    int n = 0;
#define C(a, b) (c[n].from = (a), c[n].to = (b), n++)
    switch (o) {
    case OXIDE_OP_TRUNC:
        C(g->i64, g->i32);
        C(g->i32, g->i8);
        C(g->i32, g->i1);
        C(g->i64, g->i16);
        break;
    case OXIDE_OP_ZEXT:
        C(g->i32, g->i64);
        C(g->i1, g->i32);
        C(g->i8, g->i16);
        break;
    case OXIDE_OP_SEXT:
        C(g->i16, g->i64);
        C(g->i1, g->i32);
        C(g->i8, g->i32);
        break;
    case OXIDE_OP_FPTRUNC:
        C(g->f64, g->f32);
        C(g->f32, g->f16);
        C(g->f32, g->bf16);
        C(g->f64, g->f16);
        break;
    case OXIDE_OP_FPEXT:
        C(g->f32, g->f64);
        C(g->f16, g->f32);
        C(g->bf16, g->f32);
        C(g->bf16, g->f64);
        break;
    case OXIDE_OP_FPTOUI:
    case OXIDE_OP_FPTOSI:
        C(g->f32, g->i32);
        C(g->f64, g->i64);
        C(g->f16, g->i16);
        C(g->bf16, g->i32);
        C(g->f32, g->i8);
        break;
    case OXIDE_OP_UITOFP:
    case OXIDE_OP_SITOFP:
        C(g->i32, g->f32);
        C(g->i64, g->f64);
        C(g->i16, g->f16);
        C(g->i32, g->bf16);
        C(g->i1, g->f32);
        break;
    case OXIDE_OP_PTRTOINT:
        C(g->pg, g->i64);
        C(g->pgen, g->i64);
        break;
    case OXIDE_OP_INTTOPTR:
        C(g->i64, g->pg);
        C(g->i64, g->pgen);
        break;
    case OXIDE_OP_BITCAST:
        C(g->f32, g->i32);
        C(g->i64, g->f64);
        C(g->v2f32, g->i64);
        C(g->f16, g->i16);
        break;
    case OXIDE_OP_ADDRSPACECAST:
        C(g->pg, g->pgen);
        C(g->pgen, g->pg);
        C(g->ps, g->pgen);
        C(g->pgen, g->ps);
        break;
    default: break;
    }
#undef C
    if (v >= n)
        return 0;
    oxide_value *x;
    if (c[v].from == g->ps)
        x = shared_ptr(g);
    else if (c[v].from == g->pgen)
        x = generic_ptr(g);
    else
        x = input(g, c[v].from);
    sink(g, op(g, o, &x, 1, c[v].to, NULL, 0));
    ret(g);
    return 1;
}

static int gen_memory(G *g, oxide_op o, int v) {
    oxide_type *ts[] = {g->i32, g->f32, g->v4f32, g->i8, g->f64, g->st_fi, g->pg};
    int nt = 7;
    switch (o) {
    case OXIDE_OP_LOAD:
    case OXIDE_OP_STORE: {
        /* types x spaces (global, shared, generic, and constant for loads), then volatile and align */
        int nsp = o == OXIDE_OP_LOAD ? 4 : 3, nbase = nt * nsp;
        if (v >= nbase + 2)
            return 0;
        oxide_type *t = v < nbase ? ts[v % nt] : g->f32;
        int space = v < nbase ? v / nt : 0;
        oxide_attr at[1];
        size_t na = 0;
        if (v == nbase)
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_VOLATILE, .i = 1};
        if (v == nbase + 1) {
            t = g->v4f32;
            at[na++] = (oxide_attr){.key = OXIDE_ATTR_ALIGN, .i = 8};
        }
        oxide_value *p = ptr_in(g, space);
        if (o == OXIDE_OP_LOAD) {
            sink(g, op(g, o, &p, 1, t, at, na));
        } else {
            oxide_value *ops[2] = {input(g, t), p};
            op(g, o, ops, 2, NULL, at, na);
        }
        ret(g);
        return 1;
    }
    case OXIDE_OP_OFFSET: {
        if (v >= 6)
            return 0;
        oxide_type *elem = v % 3 == 0 ? g->f32 : v % 3 == 1 ? g->st_fi : g->v4f32;
        oxide_value *ops[2] = {ptr_in(g, v / 3), input(g, v % 2 ? g->i32 : g->i64)};
        oxide_attr a = {.key = OXIDE_ATTR_ELEM, .t = elem};
        oxide_value *q = op(g, o, ops, 2, NULL, &a, 1);
        oxide_value *s[2] = {input(g, g->f32), q};
        op(g, OXIDE_OP_STORE, s, 2, NULL, NULL, 0);
        ret(g);
        return 1;
    }
    case OXIDE_OP_ALLOCA: {
        if (v >= 3)
            return 0;
        oxide_type *arr;
        oxide_type_array(g->ctx, g->f32, 4, &arr);
        oxide_attr a[2] = {{.key = OXIDE_ATTR_ELEM,
                            .t = v == 0   ? arr
                                 : v == 1 ? g->i64
                                          : g->st_fi},
                           {.key = OXIDE_ATTR_ALIGN, .i = 16}};
        oxide_value *m = op(g, o, NULL, 0, NULL, a, v == 2 ? 2 : 1);
        /* index with a runtime value so the stack slot cannot be promoted away */
        oxide_value *idx = op(g, OXIDE_OP_AND, (oxide_value *[]){input(g, g->i64), ci(g, g->i64, 1)}, 2, NULL, NULL, 0);
        oxide_attr e = {.key = OXIDE_ATTR_ELEM, .t = g->f32};
        oxide_value *q = op(g, OXIDE_OP_OFFSET, (oxide_value *[]){m, idx}, 2, NULL, &e, 1);
        op(g, OXIDE_OP_STORE, (oxide_value *[]){input(g, g->f32), q}, 2, NULL, NULL, 0);
        sink(g, op(g, OXIDE_OP_LOAD, &m, 1, g->f32, NULL, 0));
        ret(g);
        return 1;
    }
    case OXIDE_OP_GLOBAL_ADDR: {
        if (v >= 3)
            return 0;
        static const char *const syms[] = {"gv", "sh", "cst"};
        oxide_type *pt[] = {g->pg, g->ps, g->pc};
        oxide_attr a = {.key = OXIDE_ATTR_SYM, .s = syms[v]};
        oxide_value *q = op(g, o, NULL, 0, pt[v], &a, 1);
        if (v < 2)
            op(g, OXIDE_OP_STORE, (oxide_value *[]){input(g, g->i32), q}, 2, NULL, NULL, 0);
        sink(g, op(g, OXIDE_OP_LOAD, &q, 1, g->i32, NULL, 0));
        ret(g);
        return 1;
    }
    case OXIDE_OP_DYN_SMEM: {
        if (v >= 1)
            return 0;
        oxide_value *q = op(g, o, NULL, 0, g->ps, NULL, 0);
        op(g, OXIDE_OP_STORE, (oxide_value *[]){input(g, g->f32), addr(g, q, 64)}, 2, NULL, NULL, 0);
        sink(g, op(g, OXIDE_OP_LOAD, &q, 1, g->f32, NULL, 0));
        if (!g->st)
            g->st = oxide_kernel_set_dyn_smem(g->k, 4096);
        ret(g);
        return 1;
    }
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_INSERT: {
        if (v >= 3)
            return 0;
        oxide_type *agg = v == 0 ? g->v4f32 : v == 1 ? g->st_fi : g->v2i64;
        oxide_type *el = v == 0 ? g->f32 : v == 1 ? g->i32 : g->i64;
        oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = 1};
        oxide_value *x = input(g, agg);
        if (o == OXIDE_OP_EXTRACT)
            sink(g, op(g, o, &x, 1, el, &a, 1));
        else
            sink(g, op(g, o, (oxide_value *[]){x, input(g, el)}, 2, NULL, &a, 1));
        ret(g);
        return 1;
    }
    case OXIDE_OP_ATOMIC_LOAD:
    case OXIDE_OP_ATOMIC_STORE: {
        /* types x spaces relaxed, then orders x scopes on an i32 in global memory */
        oxide_type *at[] = {g->i32, g->i64, g->f32, g->f64, g->pg, g->i16};
        int nb = 6 * 3;
        if (v >= nb + 20)
            return 0;
        oxide_type *t = v < nb ? at[v % 6] : g->i32;
        int space = v < nb ? v / 6 : 0;
        oxide_attr a[2];
        size_t na = 0;
        if (v >= nb) {
            a[na++] = (oxide_attr){.key = OXIDE_ATTR_ORDER, .i = (v - nb) % 5};
            a[na++] = (oxide_attr){.key = OXIDE_ATTR_SCOPE, .i = (v - nb) / 5};
        }
        oxide_value *p = ptr_in(g, space);
        if (o == OXIDE_OP_ATOMIC_LOAD)
            sink(g, op(g, o, &p, 1, t, a, na));
        else
            op(g, o, (oxide_value *[]){input(g, t), p}, 2, NULL, a, na);
        ret(g);
        return 1;
    }
    default: return 0;
    }
}

static int gen_control(G *g, oxide_op o, int v) {
    if (v >= 1)
        return 0;
    switch (o) {
    case OXIDE_OP_BR: {
        /* a counted loop: block parameters carried around a back edge */
        oxide_type *pt[2] = {g->i32, g->f32};
        oxide_value *lp[2], *out;
        oxide_block *entry = g->b;
        oxide_block *loop = block(g, pt, 2, lp), *body = block(g, NULL, 0, NULL), *exit = block(g, pt + 1, 1, &out);
        oxide_value *init[2] = {ci(g, g->i32, 0), input(g, g->f32)};
        if (!g->st)
            g->st = oxide_build_br(entry, loop, init, 2);
        g->b = loop;
        oxide_value *n = input(g, g->i32);
        oxide_attr ult = {.key = OXIDE_ATTR_PRED, .i = OXIDE_PRED_ULT};
        oxide_value *c = op(g, OXIDE_OP_ICMP, (oxide_value *[]){lp[0], n}, 2, NULL, &ult, 1);
        if (!g->st)
            g->st = oxide_build_cond_br(loop, c, body, NULL, 0, exit, &lp[1], 1);
        g->b = body;
        oxide_value *next[2] = {op(g, OXIDE_OP_ADD, (oxide_value *[]){lp[0], ci(g, g->i32, 1)}, 2, NULL, NULL, 0),
                                op(g, OXIDE_OP_MUL, (oxide_value *[]){lp[1], lp[1]}, 2, NULL, NULL, 0)};
        if (!g->st)
            g->st = oxide_build_br(body, loop, next, 2);
        g->b = exit;
        sink(g, out);
        ret(g);
        return 1;
    }
    case OXIDE_OP_COND_BR: {
        /* both edges to the same block with different arguments (needs an edge block) */
        oxide_value *x;
        oxide_block *j = block(g, &g->i32, 1, &x);
        oxide_value *a = input(g, g->i32), *b = input(g, g->i32);
        if (!g->st)
            g->st = oxide_build_cond_br(g->b, input(g, g->i1), j, &a, 1, j, &b, 1);
        g->b = j;
        sink(g, x);
        ret(g);
        return 1;
    }
    case OXIDE_OP_SWITCH: {
        oxide_block *d = block(g, NULL, 0, NULL), *c1 = block(g, NULL, 0, NULL), *c2 = block(g, NULL, 0, NULL);
        oxide_block *j = block(g, NULL, 0, NULL);
        int64_t cases[2] = {3, -7};
        oxide_block *dests[2] = {c1, c2};
        if (!g->st)
            g->st = oxide_build_switch(g->b, input(g, g->i32), d, cases, dests, 2);
        oxide_block *bs[3] = {d, c1, c2};
        for (int i = 0; i < 3; i++) {
            g->b = bs[i];
            sink(g, ci(g, g->i32, i));
            if (!g->st)
                g->st = oxide_build_br(bs[i], j, NULL, 0);
        }
        g->b = j;
        ret(g);
        return 1;
    }
    case OXIDE_OP_RET: ret(g); return 1;
    case OXIDE_OP_TRAP:
    case OXIDE_OP_UNREACHABLE: {
        oxide_block *t = block(g, NULL, 0, NULL), *f = block(g, NULL, 0, NULL);
        if (!g->st)
            g->st = oxide_build_cond_br(g->b, input(g, g->i1), t, NULL, 0, f, NULL, 0);
        g->b = t;
        op(g, o, NULL, 0, NULL, NULL, 0);
        g->b = f;
        ret(g);
        return 1;
    }
    default: return 0;
    }
}

static int gen_special(G *g, oxide_op o, int v) {
    switch (o) {
    case OXIDE_OP_CONST: {
        oxide_type *ts[] = {g->i1, g->i8, g->i16, g->i32, g->i64, g->f16, g->bf16, g->f32, g->f64};
        if (v >= 9)
            return 0;
        oxide_attr a = {.key = OXIDE_ATTR_VALUE, .i = -5, .f = -2.5};
        sink(g, op(g, o, NULL, 0, ts[v], &a, 1));
        ret(g);
        return 1;
    }
    case OXIDE_OP_CALL: {
        if (v >= 2)
            return 0;
        oxide_attr a = {.key = OXIDE_ATTR_SYM, .s = v ? "dev_void" : "dev_inc"};
        if (v)
            op(g, o, &g->p, 1, NULL, &a, 1);
        else
            sink(g, op(g, o, (oxide_value *[]){input(g, g->i32)}, 1, g->i32, &a, 1));
        ret(g);
        return 1;
    }
    case OXIDE_OP_BARRIER:
    case OXIDE_OP_BARRIER_COUNT: {
        if (v >= 2)
            return 0;
        oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = v ? 3 : 0};
        op(g, o, (oxide_value *[]){ci(g, g->i32, 64)}, o == OXIDE_OP_BARRIER_COUNT, NULL, &a, 1);
        ret(g);
        return 1;
    }
    case OXIDE_OP_FENCE: {
        if (v >= 20)
            return 0;
        oxide_attr a[2] = {{.key = OXIDE_ATTR_ORDER, .i = v % 5}, {.key = OXIDE_ATTR_SCOPE, .i = v / 5}};
        op(g, o, NULL, 0, NULL, a, 2);
        ret(g);
        return 1;
    }
    case OXIDE_OP_PRINTF: {
        if (v >= 2)
            return 0;
        oxide_attr a = {.key = OXIDE_ATTR_STR, .s = v ? "no arguments, 100%%\n" : "%d %lld %f %f %p %hhd\n"};
        oxide_value *args[6] = {input(g, g->i32), input(g, g->i64), input(g, g->f32),
                                input(g, g->f64), generic_ptr(g),   input(g, g->i8)};
        op(g, o, args, v ? 0 : 6, NULL, &a, 1);
        ret(g);
        return 1;
    }
    case OXIDE_OP_ASSERT: {
        if (v >= 1)
            return 0;
        oxide_attr a = {.key = OXIDE_ATTR_STR, .s = "x must be nonzero (100% sure)"};
        op(g, o, (oxide_value *[]){input(g, g->i1)}, 1, NULL, &a, 1);
        sink(g, ci(g, g->i32, 1));
        ret(g);
        return 1;
    }
    default: return -1;
    }
}

/* ---- tier 2 (tensor cores, async copies, Hopper) ---- */

static bool is_tma(oxide_op o) {
    return (o >= OXIDE_OP_TMA_LOAD && o <= OXIDE_OP_TMA_STORE) || o == OXIDE_OP_TMA_PREFETCH_DESC;
}

static oxide_type *vec_i32(G *g, unsigned n) {
    oxide_type *t = g->i32;
    if (n > 1)
        oxide_type_vector(g->ctx, g->i32, n, &t);
    return t;
}

static oxide_value *imm_op(G *g, oxide_op o, oxide_value *const *ops, size_t n, oxide_type *rt, int64_t imm) {
    oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = imm};
    return op(g, o, ops, n, rt, &a, 1);
}

/* A wgmma m64nNk16 with the accumulator loaded from memory, fenced, committed and waited for
 * (the sequence ptxas wants: without it, it injects warpgroup waits of its own). */
static void wgmma_seq(G *g, oxide_op o, unsigned nn, int64_t mode, bool tied_wait) {
    oxide_type *acc_t;
    oxide_type_array(g->ctx, g->f32, nn / 2, &acc_t);
    oxide_value *acc = input(g, acc_t);
    oxide_value *s = shared_ptr(g);
    oxide_value *da =
        imm_op(g, OXIDE_OP_WGMMA_DESC, (oxide_value *[]){s, ci(g, g->i32, 128), ci(g, g->i32, 1024)}, 3, NULL, 128);
    oxide_value *db = imm_op(g, OXIDE_OP_WGMMA_DESC,
                             (oxide_value *[]){addr(g, s, 512), ci(g, g->i32, 16), ci(g, g->i32, 512)}, 3, NULL, 64);
    op(g, OXIDE_OP_WGMMA_FENCE, NULL, 0, NULL, NULL, 0);
    oxide_value *d;
    if (o == OXIDE_OP_WGMMA_BF16_RS || o == OXIDE_OP_WGMMA_F16_RS) {
        oxide_type *v4;
        oxide_type_vector(g->ctx, g->i32, 4, &v4);
        oxide_value *fa = input(g, v4);
        d = imm_op(g, o, (oxide_value *[]){acc, fa, db, input(g, g->i1)}, 4, NULL, mode);
        d = imm_op(g, o, (oxide_value *[]){d, fa, da, ci(g, g->i1, 1)}, 4, NULL, 0);
    } else {
        d = imm_op(g, o, (oxide_value *[]){acc, da, db, input(g, g->i1)}, 4, NULL, mode);
        d = imm_op(g, o, (oxide_value *[]){d, db, da, ci(g, g->i1, 1)}, 4, NULL, 0);
    }
    op(g, OXIDE_OP_WGMMA_COMMIT, NULL, 0, NULL, NULL, 0);
    if (tied_wait)
        d = imm_op(g, OXIDE_OP_WGMMA_WAIT_ACC, &d, 1, NULL, 0);
    else
        imm_op(g, OXIDE_OP_WGMMA_WAIT, NULL, 0, NULL, 0);
    sink(g, d);
}

/* A bulk tensor copy with what it needs around it: v 0..4, 1..5 dimensions with the descriptor
 * parameter; v 5, two dimensions with a descriptor in global memory. */
static void tma_seq(G *g, oxide_op o, int v) {
    unsigned dims = v < 5 ? (unsigned)v + 1 : 2;
    oxide_value *ops[10];
    size_t n = 0;
    oxide_value *desc = v < 5 ? g->desc : addr(g, g->p, 128);
    oxide_value *s = shared_ptr(g), *bar = addr(g, s, 1016);
    if (o == OXIDE_OP_TMA_STORE) {
        ops[n++] = desc;
        ops[n++] = s;
    } else {
        ops[n++] = s;
        ops[n++] = desc;
        ops[n++] = bar;
        if (o == OXIDE_OP_TMA_LOAD_MULTICAST)
            ops[n++] = input(g, g->i32);
    }
    for (unsigned i = 0; i < dims; i++)
        ops[n++] = input(g, g->i32);
    if (o != OXIDE_OP_TMA_STORE)
        op(g, OXIDE_OP_MBARRIER_INIT, (oxide_value *[]){bar, ci(g, g->i32, 1)}, 2, NULL, NULL, 0);
    op(g, o, ops, n, NULL, NULL, 0);
    if (o == OXIDE_OP_TMA_STORE) {
        op(g, OXIDE_OP_BULK_COMMIT, NULL, 0, NULL, NULL, 0);
        imm_op(g, OXIDE_OP_BULK_WAIT_READ, NULL, 0, NULL, 0);
    } else {
        sink(g,
             op(g, OXIDE_OP_MBARRIER_ARRIVE_EXPECT_TX, (oxide_value *[]){bar, ci(g, g->i32, 4096)}, 2, NULL, NULL, 0));
    }
}

/* Two chained mma.sync; v 0: A and B straight from ldmatrix, as a GEMM has them; v 1: from
 * arbitrary registers. */
static void mma_sync_seq(G *g, oxide_op o, int v) {
    oxide_value *a, *b;
    if (v == 0) {
        oxide_value *s = shared_ptr(g);
        a = op(g, OXIDE_OP_LDMATRIX, &s, 1, vec_i32(g, 4), NULL, 0);
        b = op(g, OXIDE_OP_LDMATRIX_TRANS, &s, 1, vec_i32(g, 2), NULL, 0);
    } else {
        a = input(g, vec_i32(g, 4));
        b = input(g, vec_i32(g, 2));
    }
    oxide_value *d = op(g, o, (oxide_value *[]){a, b, input(g, g->v4f32)}, 3, NULL, NULL, 0);
    sink(g, op(g, o, (oxide_value *[]){a, b, d}, 3, NULL, NULL, 0));
}

static int gen_tier2(G *g, oxide_op o, int v) {
    switch (o) {
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL: {
        static const int sizes[] = {4, 8, 16};
        bool cg = o == OXIDE_OP_CP_ASYNC_CG || o == OXIDE_OP_CP_ASYNC_CG_ZFILL;
        bool zfill = o == OXIDE_OP_CP_ASYNC_CA_ZFILL || o == OXIDE_OP_CP_ASYNC_CG_ZFILL;
        if (v >= (cg ? 1 : 3))
            return 0;
        oxide_value *ops[3] = {shared_ptr(g), addr(g, g->p, 256), input(g, g->i32)};
        imm_op(g, o, ops, zfill ? 3 : 2, NULL, cg ? 16 : sizes[v]);
        op(g, OXIDE_OP_CP_ASYNC_COMMIT, NULL, 0, NULL, NULL, 0);
        imm_op(g, OXIDE_OP_CP_ASYNC_WAIT, NULL, 0, NULL, 0);
        break;
    }
    case OXIDE_OP_CP_ASYNC_WAIT:
    case OXIDE_OP_BULK_WAIT:
    case OXIDE_OP_BULK_WAIT_READ:
    case OXIDE_OP_WGMMA_WAIT:
        if (v >= 3)
            return 0;
        imm_op(g, o, NULL, 0, NULL, v == 0 ? 0 : v == 1 ? 1 : 7);
        break;
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS:
    case OXIDE_OP_STMATRIX:
    case OXIDE_OP_STMATRIX_TRANS: {
        if (v >= 3)
            return 0;
        oxide_type *t = vec_i32(g, 1u << v);
        oxide_value *s = addr(g, shared_ptr(g), 128);
        if (o == OXIDE_OP_LDMATRIX || o == OXIDE_OP_LDMATRIX_TRANS)
            sink(g, op(g, o, &s, 1, t, NULL, 0));
        else
            op(g, o, (oxide_value *[]){s, input(g, t)}, 2, NULL, NULL, 0);
        break;
    }
    OXIDE_CASE_MMA_SYNC:
        if (v >= 2)
            return 0;
        mma_sync_seq(g, o, v);
        break;
    case OXIDE_OP_CVT_E4M3X2_F32:
    case OXIDE_OP_CVT_E5M2X2_F32:
        if (v >= 1)
            return 0;
        sink(g, op(g, o, (oxide_value *[]){input(g, g->f32), input(g, g->f32)}, 2, g->i16, NULL, 0));
        break;
    case OXIDE_OP_CVT_E4M3X2_F16X2:
    case OXIDE_OP_CVT_E5M2X2_F16X2:
    case OXIDE_OP_CVT_F16X2_E4M3X2:
    case OXIDE_OP_CVT_F16X2_E5M2X2: {
        if (v >= 1)
            return 0;
        oxide_type *h2, *from, *to;
        oxide_type_vector(g->ctx, g->f16, 2, &h2);
        bool to_fp8 = o == OXIDE_OP_CVT_E4M3X2_F16X2 || o == OXIDE_OP_CVT_E5M2X2_F16X2;
        from = to_fp8 ? h2 : g->i16;
        to = to_fp8 ? g->i16 : h2;
        sink(g, op(g, o, (oxide_value *[]){input(g, from)}, 1, to, NULL, 0));
        break;
    }
    case OXIDE_OP_TMA_LOAD:
    case OXIDE_OP_TMA_LOAD_MULTICAST:
    case OXIDE_OP_TMA_STORE:
        if (v >= 6)
            return 0;
        tma_seq(g, o, v);
        break;
    case OXIDE_OP_WGMMA_BF16:
    case OXIDE_OP_WGMMA_F16: {
        /* N = 64, 128, 256 plain, then N = 128 with each mode bit and N = 8 */
        static const unsigned ns[] = {64, 128, 256, 128, 128, 128, 128, 8};
        static const int modes[] = {0, 0, 0, 1, 2, 4, 15, 3};
        if (v >= 8)
            return 0;
        wgmma_seq(g, o, ns[v], modes[v], false);
        break;
    }
    case OXIDE_OP_WGMMA_FENCE:
    case OXIDE_OP_WGMMA_COMMIT:
        if (v >= 1)
            return 0;
        wgmma_seq(g, OXIDE_OP_WGMMA_BF16, 64, 0, false);
        break;
    case OXIDE_OP_WGMMA_E4M3_E4M3:
    case OXIDE_OP_WGMMA_E4M3_E5M2:
    case OXIDE_OP_WGMMA_E5M2_E4M3:
    case OXIDE_OP_WGMMA_E5M2_E5M2: {
        /* N = 64, 128, 256, then both negations */
        static const unsigned ns[] = {64, 128, 256, 128};
        static const int modes[] = {0, 0, 0, 12};
        if (v >= 4)
            return 0;
        wgmma_seq(g, o, ns[v], modes[v], v == 1);
        break;
    }
    case OXIDE_OP_WGMMA_BF16_RS:
    case OXIDE_OP_WGMMA_F16_RS: {
        /* N = 64, 128, 256 plain, then B transposed and both negations */
        static const unsigned ns[] = {64, 128, 256, 128, 128};
        static const int modes[] = {0, 0, 0, 2, 14};
        if (v >= 5)
            return 0;
        wgmma_seq(g, o, ns[v], modes[v], v == 1);
        break;
    }
    case OXIDE_OP_WGMMA_WAIT_ACC: {
        /* N = 64, 128, 256 */
        static const unsigned ns[] = {64, 128, 256};
        if (v >= 3)
            return 0;
        wgmma_seq(g, OXIDE_OP_WGMMA_BF16, ns[v], 0, true);
        break;
    }
    case OXIDE_OP_WGMMA_DESC: {
        if (v >= 4)
            return 0;
        oxide_value *s = shared_ptr(g);
        sink(g, imm_op(g, o, (oxide_value *[]){s, input(g, g->i32), input(g, g->i32)}, 3, NULL, v ? 16 << v : 0));
        break;
    }
    case OXIDE_OP_SETMAXNREG_INC:
    case OXIDE_OP_SETMAXNREG_DEC:
        if (v >= 2)
            return 0;
        /* ptxas needs the launch bounds to know the register count at entry */
        if (!g->st)
            g->st = oxide_kernel_set_launch_bounds(g->k, 384, 1);
        imm_op(g, o, NULL, 0, NULL, o == OXIDE_OP_SETMAXNREG_INC ? (v ? 240 : 232) : (v ? 24 : 40));
        break;
    case OXIDE_OP_TMA_PREFETCH_DESC:
        if (v >= 2)
            return 0;
        op(g, o, (oxide_value *[]){v ? addr(g, g->p, 128) : g->desc}, 1, NULL, NULL, 0);
        break;
    case OXIDE_OP_MBARRIER_ARRIVE_CLUSTER: {
        if (v >= 1)
            return 0;
        oxide_value *bar = addr(g, shared_ptr(g), 1016);
        op(g, OXIDE_OP_MBARRIER_INIT, (oxide_value *[]){bar, ci(g, g->i32, 2)}, 2, NULL, NULL, 0);
        op(g, OXIDE_OP_FENCE_MBARRIER_INIT, NULL, 0, NULL, NULL, 0);
        op(g, OXIDE_OP_CLUSTER_SYNC, NULL, 0, NULL, NULL, 0);
        op(g, o, (oxide_value *[]){bar, op(g, OXIDE_OP_CLUSTER_CTARANK, NULL, 0, NULL, NULL, 0)}, 2, NULL, NULL, 0);
        break;
    }
    case OXIDE_OP_ELECT_SYNC:
        if (v >= 2)
            return 0;
        sink(g, imm_op(g, o, NULL, 0, NULL, v ? 0x0000ffff : 0xffffffff));
        break;
    default: return gen_generic(g, o, v);
    }
    ret(g);
    return 1;
}

/* Builds variant v of op o into the current kernel. 1: built (or g->st set), 0: no such variant. */
int gen(G *g, oxide_op o, int v) {
    int r = gen_special(g, o, v);
    if (r >= 0)
        return r;
    if (o >= OXIDE_OP_CP_ASYNC_CA)
        return gen_tier2(g, o, v);
    if (o >= OXIDE_OP_TRUNC && o <= OXIDE_OP_ADDRSPACECAST)
        return gen_cast(g, o, v);
    if (rows[o].lower == L_TERM)
        return gen_control(g, o, v);
    switch (o) {
    case OXIDE_OP_LOAD:
    case OXIDE_OP_STORE:
    case OXIDE_OP_OFFSET:
    case OXIDE_OP_ALLOCA:
    case OXIDE_OP_GLOBAL_ADDR:
    case OXIDE_OP_DYN_SMEM:
    case OXIDE_OP_EXTRACT:
    case OXIDE_OP_INSERT:
    case OXIDE_OP_ATOMIC_LOAD:
    case OXIDE_OP_ATOMIC_STORE: return gen_memory(g, o, v);
    default: return gen_generic(g, o, v);
    }
}
