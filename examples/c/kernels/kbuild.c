/* kbuild: see kbuild.h. */
#include "kbuild.h"

/* Every helper starts with GUARD: after the first failure nothing more is built. */
#define GUARD(ret)                                                                                                     \
    do {                                                                                                               \
        if (b->st)                                                                                                     \
            return ret;                                                                                                \
    } while (0)
#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_ && !b->st)                                                                                             \
            b->st = st_;                                                                                               \
    } while (0)

void kb_begin(kb *b, oxide_context *ctx, oxide_module *mod, const char *name) {
    *b = (kb){.ctx = ctx, .mod = mod};
    if (!ctx || !mod) {
        /* Let the library record the message, as for any other NULL argument. */
        b->st = oxide_module_add_kernel(NULL, name, &b->fn);
        return;
    }
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_VOID, &b->void_));
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_I1, &b->i1));
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_I8, &b->i8));
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_I32, &b->i32));
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_I64, &b->i64));
    CHECK(oxide_type_scalar(ctx, OXIDE_TYPE_F32, &b->f32));
    GUARD();
    CHECK(oxide_type_vector(ctx, b->f32, 4, &b->v4f32));
    CHECK(oxide_type_pointer(ctx, OXIDE_AS_GLOBAL, &b->gptr));
    CHECK(oxide_type_pointer(ctx, OXIDE_AS_SHARED, &b->sptr));
    CHECK(oxide_type_pointer(ctx, OXIDE_AS_GENERIC, &b->ptr));
    GUARD();
    CHECK(oxide_module_add_kernel(mod, name, &b->fn));
}

oxide_value *kb_scalar_param(kb *b, const char *name, oxide_scalar type) {
    GUARD(NULL);
    oxide_value *v = NULL;
    CHECK(oxide_kernel_add_scalar_param(b->fn, name, type, &v));
    return v;
}

oxide_value *kb_slice_param(kb *b, const char *name, oxide_scalar elem, int is_mutable, oxide_value **len) {
    oxide_value *p = NULL, *l = NULL;
    if (len)
        *len = NULL;
    GUARD(NULL);
    CHECK(oxide_kernel_add_slice_param(b->fn, name, elem, is_mutable, &p, &l));
    if (len)
        *len = l;
    return p;
}

void kb_launch_bounds(kb *b, unsigned max_threads, unsigned min_blocks) {
    GUARD();
    CHECK(oxide_kernel_set_launch_bounds(b->fn, max_threads, min_blocks));
}

void kb_entry(kb *b) {
    GUARD();
    CHECK(oxide_function_add_block(b->fn, NULL, 0, &b->cur, NULL));
}

oxide_status kb_end(kb *b) { return b->st; }

oxide_block *kb_block(kb *b, size_t nparams, oxide_type *const *types, oxide_value **params) {
    GUARD(NULL);
    oxide_block *blk = NULL;
    CHECK(oxide_function_add_block(b->fn, types, nparams, &blk, params));
    return blk;
}

void kb_set(kb *b, oxide_block *blk) {
    GUARD();
    b->cur = blk;
}

void kb_br(kb *b, oxide_block *dest, oxide_value *const *args, size_t nargs) {
    GUARD();
    CHECK(oxide_build_br(b->cur, dest, args, nargs));
}

void kb_cond_br(kb *b, oxide_value *cond, oxide_block *t, oxide_value *const *targs, size_t nt, oxide_block *f,
                oxide_value *const *fargs, size_t nf) {
    GUARD();
    CHECK(oxide_build_cond_br(b->cur, cond, t, targs, nt, f, fargs, nf));
}

void kb_ret(kb *b) {
    GUARD();
    CHECK(oxide_build_op(b->cur, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
}

oxide_block *kb_if(kb *b, oxide_value *cond) {
    oxide_block *then = kb_block(b, 0, NULL, NULL), *join = kb_block(b, 0, NULL, NULL);
    kb_cond_br(b, cond, then, NULL, 0, join, NULL, 0);
    kb_set(b, then);
    return join;
}

void kb_end_if(kb *b, oxide_block *join) {
    kb_br(b, join, NULL, 0);
    kb_set(b, join);
}

void kb_gemm_params(kb *b, oxide_scalar elem, kb_gemm *g) {
    g->a = kb_slice_param(b, "a", elem, 0, &g->alen);
    g->b = kb_slice_param(b, "b", elem, 0, &g->blen);
    g->c = kb_slice_param(b, "c", OXIDE_SCALAR_F32, 1, &g->clen);
    g->m = kb_scalar_param(b, "m", OXIDE_SCALAR_U32);
    g->n = kb_scalar_param(b, "n", OXIDE_SCALAR_U32);
    g->k = kb_scalar_param(b, "k", OXIDE_SCALAR_U32);
}

void kb_matrix_params(kb *b, kb_matrix *m) {
    m->x = kb_slice_param(b, "x", OXIDE_SCALAR_F32, 0, &m->xlen);
    m->y = kb_slice_param(b, "y", OXIDE_SCALAR_F32, 1, &m->ylen);
    m->rows = kb_scalar_param(b, "rows", OXIDE_SCALAR_U32);
    m->cols = kb_scalar_param(b, "cols", OXIDE_SCALAR_U32);
}

oxide_block *kb_gemm_guard(kb *b, const kb_gemm *g, oxide_value *bad, oxide_value *m64, oxide_value *n64,
                           oxide_value *k64) {
    const oxide_op OR = OXIDE_OP_OR, MUL = OXIDE_OP_MUL;
    bad = kb_op2(b, OR, bad, kb_icmp(b, OXIDE_PRED_UGT, kb_op2(b, MUL, m64, k64), g->alen));
    bad = kb_op2(b, OR, bad, kb_icmp(b, OXIDE_PRED_UGT, kb_op2(b, MUL, k64, n64), g->blen));
    bad = kb_op2(b, OR, bad, kb_icmp(b, OXIDE_PRED_UGT, kb_op2(b, MUL, m64, n64), g->clen));
    oxide_block *start = kb_block(b, 0, NULL, NULL), *done = kb_block(b, 0, NULL, NULL);
    kb_cond_br(b, bad, done, NULL, 0, start, NULL, 0);
    kb_set(b, start);
    return done;
}

kb_loop kb_acc_loop(kb *b, size_t n, oxide_type *t, oxide_value *init, oxide_value *limit, oxide_value **params,
                    oxide_value **results) {
    oxide_type *types[n + 1];
    oxide_value *start[n + 1];
    for (size_t i = 0; i < n; i++) {
        types[i] = t;
        start[i] = init;
        results[i] = NULL;
    }
    for (size_t i = 0; i <= n; i++)
        params[i] = NULL;
    types[n] = b->i32;
    start[n] = kb_i32(b, 0);
    kb_loop l = {kb_block(b, n + 1, types, params), NULL, NULL, NULL};
    oxide_block *body = kb_block(b, 0, NULL, NULL);
    l.exit = kb_block(b, n, types, results);
    kb_br(b, l.head, start, n + 1);
    kb_set(b, l.head);
    kb_cond_br(b, kb_icmp(b, OXIDE_PRED_ULT, params[n], limit), body, NULL, 0, l.exit, params, n);
    kb_set(b, body);
    return l;
}

kb_loop kb_for(kb *b, oxide_type *t, oxide_value *start, oxide_value *limit, oxide_value *step, oxide_block *exit) {
    kb_loop l = {NULL, exit, NULL, step};
    l.head = kb_block(b, 1, &t, &l.i);
    oxide_block *body = kb_block(b, 0, NULL, NULL);
    if (!exit)
        l.exit = kb_block(b, 0, NULL, NULL);
    kb_br(b, l.head, &start, 1);
    kb_set(b, l.head);
    kb_cond_br(b, kb_icmp(b, OXIDE_PRED_ULT, l.i, limit), body, NULL, 0, l.exit, NULL, 0);
    kb_set(b, body);
    return l;
}

oxide_value *kb_for_next(kb *b, const kb_loop *l) { return kb_op2(b, OXIDE_OP_ADD, l->i, l->step); }

void kb_for_end(kb *b, const kb_loop *l) {
    oxide_value *next = kb_for_next(b, l);
    kb_br(b, l->head, &next, 1);
}

oxide_value *kb_op(kb *b, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt, const oxide_attr *attrs,
                   size_t nattrs) {
    GUARD(NULL);
    oxide_value *r = NULL;
    CHECK(oxide_build_op(b->cur, op, ops, n, rt, attrs, nattrs, &r));
    return r;
}

oxide_value *kb_op0(kb *b, oxide_op op) { return kb_op(b, op, NULL, 0, NULL, NULL, 0); }

oxide_value *kb_op1(kb *b, oxide_op op, oxide_value *x) { return kb_op(b, op, &x, 1, NULL, NULL, 0); }

oxide_value *kb_op2(kb *b, oxide_op op, oxide_value *x, oxide_value *y) {
    oxide_value *ops[2] = {x, y};
    return kb_op(b, op, ops, 2, NULL, NULL, 0);
}

oxide_value *kb_op3(kb *b, oxide_op op, oxide_value *x, oxide_value *y, oxide_value *z) {
    oxide_value *ops[3] = {x, y, z};
    return kb_op(b, op, ops, 3, NULL, NULL, 0);
}

oxide_value *kb_cast(kb *b, oxide_op op, oxide_value *x, oxide_type *to) { return kb_op(b, op, &x, 1, to, NULL, 0); }

oxide_value *kb_i32(kb *b, int64_t v) {
    GUARD(NULL);
    oxide_value *r = NULL;
    CHECK(oxide_build_const_int(b->cur, b->i32, v, &r));
    return r;
}

oxide_value *kb_i64(kb *b, int64_t v) {
    GUARD(NULL);
    oxide_value *r = NULL;
    CHECK(oxide_build_const_int(b->cur, b->i64, v, &r));
    return r;
}

oxide_value *kb_f32(kb *b, double v) {
    GUARD(NULL);
    oxide_value *r = NULL;
    CHECK(oxide_build_const_float(b->cur, b->f32, v, &r));
    return r;
}

oxide_value *kb_icmp(kb *b, oxide_pred p, oxide_value *x, oxide_value *y) {
    oxide_value *ops[2] = {x, y};
    oxide_attr a = {.key = OXIDE_ATTR_PRED, .i = p};
    return kb_op(b, OXIDE_OP_ICMP, ops, 2, NULL, &a, 1);
}

oxide_value *kb_fcmp(kb *b, oxide_pred p, oxide_value *x, oxide_value *y) {
    oxide_value *ops[2] = {x, y};
    oxide_attr a = {.key = OXIDE_ATTR_PRED, .i = p};
    return kb_op(b, OXIDE_OP_FCMP, ops, 2, NULL, &a, 1);
}

oxide_value *kb_select(kb *b, oxide_value *c, oxide_value *x, oxide_value *y) {
    return kb_op3(b, OXIDE_OP_SELECT, c, x, y);
}

oxide_value *kb_gep(kb *b, oxide_value *p, oxide_value *idx, oxide_type *elem) {
    oxide_value *ops[2] = {p, idx};
    oxide_attr a = {.key = OXIDE_ATTR_ELEM, .t = elem};
    return kb_op(b, OXIDE_OP_OFFSET, ops, 2, NULL, &a, 1);
}

oxide_value *kb_load(kb *b, oxide_type *t, oxide_value *p, unsigned align) {
    oxide_attr a = {.key = OXIDE_ATTR_ALIGN, .i = align};
    return kb_op(b, OXIDE_OP_LOAD, &p, 1, t, &a, 1);
}

void kb_store(kb *b, oxide_value *v, oxide_value *p, unsigned align) {
    oxide_value *ops[2] = {v, p};
    oxide_attr a = {.key = OXIDE_ATTR_ALIGN, .i = align};
    kb_op(b, OXIDE_OP_STORE, ops, 2, NULL, &a, 1);
}

oxide_value *kb_shared_array(kb *b, const char *name, oxide_type *elem, uint64_t count, unsigned align) {
    GUARD(NULL);
    oxide_type *arr = NULL;
    oxide_global *g = NULL;
    CHECK(oxide_type_array(b->ctx, elem, count, &arr));
    GUARD(NULL);
    CHECK(oxide_module_add_global(b->mod, name, arr, OXIDE_AS_SHARED, align, NULL, 0, &g));
    oxide_attr a = {.key = OXIDE_ATTR_SYM, .s = name};
    return kb_op(b, OXIDE_OP_GLOBAL_ADDR, NULL, 0, b->sptr, &a, 1);
}

oxide_value *kb_atomic(kb *b, oxide_op op, oxide_value *p, oxide_value *v, oxide_scope scope) {
    oxide_value *ops[2] = {p, v};
    oxide_attr a[2] = {{.key = OXIDE_ATTR_SCOPE, .i = scope}, {.key = OXIDE_ATTR_ORDER, .i = OXIDE_ORDER_RELAXED}};
    return kb_op(b, op, ops, 2, NULL, a, 2);
}

void kb_barrier(kb *b) {
    oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = 0};
    kb_op(b, OXIDE_OP_BARRIER, NULL, 0, NULL, &a, 1);
}

oxide_value *kb_shfl(kb *b, oxide_op op, oxide_value *v, oxide_value *lane) {
    oxide_value *ops[2] = {v, lane};
    oxide_attr a = {.key = OXIDE_ATTR_IMM, .i = 0xffffffff};
    return kb_op(b, op, ops, 2, NULL, &a, 1);
}

void kb_void(kb *b, oxide_op op) { kb_op(b, op, NULL, 0, NULL, NULL, 0); }

oxide_value *kb_global_id_x(kb *b) {
    oxide_value *bid = kb_cast(b, OXIDE_OP_ZEXT, kb_op0(b, OXIDE_OP_CTAID_X), b->i64);
    oxide_value *bdim = kb_cast(b, OXIDE_OP_ZEXT, kb_op0(b, OXIDE_OP_NTID_X), b->i64);
    oxide_value *tid = kb_cast(b, OXIDE_OP_ZEXT, kb_op0(b, OXIDE_OP_TID_X), b->i64);
    return kb_op2(b, OXIDE_OP_ADD, kb_op2(b, OXIDE_OP_MUL, bid, bdim), tid);
}
