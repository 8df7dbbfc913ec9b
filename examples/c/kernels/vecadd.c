/* vecadd: out[i] = a[i] + b[i]. Each thread adds OXIDE_EXAMPLE_VECADD_PER_THREAD elements a block
 * width apart, so loads stay coalesced and several are in flight per thread: with one element
 * per thread the H200 reached only 83% of copy bandwidth (too few bytes in flight); two reach
 * 101%, four 103% but at twice the code, which doubled the compile time (docs/pipeline.md). */
#include "kbuild.h"
#include "oxide_examples.h"

/* out[idx] = a[idx] + b[idx] */
static void add_one(kb *b, oxide_value *a, oxide_value *bp, oxide_value *out, oxide_value *idx) {
    oxide_value *x = kb_load(b, b->f32, kb_gep(b, a, idx, b->f32), 4);
    oxide_value *y = kb_load(b, b->f32, kb_gep(b, bp, idx, b->f32), 4);
    kb_store(b, kb_op2(b, OXIDE_OP_ADD, x, y), kb_gep(b, out, idx, b->f32), 4);
}

oxide_status oxide_example_vecadd(oxide_context *ctx, oxide_module *mod) {
    enum { K = OXIDE_EXAMPLE_VECADD_PER_THREAD };
    kb b;
    kb_begin(&b, ctx, mod, "vecadd");
    oxide_value *alen, *blen, *olen;
    oxide_value *a = kb_slice_param(&b, "a", OXIDE_SCALAR_F32, 0, &alen);
    oxide_value *bp = kb_slice_param(&b, "b", OXIDE_SCALAR_F32, 0, &blen);
    oxide_value *out = kb_slice_param(&b, "out", OXIDE_SCALAR_F32, 1, &olen);
    kb_entry(&b);

    /* The shortest slice bounds the work, so no slice is ever read or written past its end
     * whatever lengths the caller passes. */
    oxide_value *n = kb_op2(&b, OXIDE_OP_UMIN, kb_op2(&b, OXIDE_OP_UMIN, alen, blen), olen);
    oxide_value *bid = kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_CTAID_X), b.i64);
    oxide_value *bdim = kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_NTID_X), b.i64);
    oxide_value *tid = kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_TID_X), b.i64);
    oxide_value *base =
        kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, kb_op2(&b, OXIDE_OP_MUL, bid, bdim), kb_i64(&b, K)), tid);
    oxide_value *last = kb_op2(&b, OXIDE_OP_ADD, base, kb_op2(&b, OXIDE_OP_MUL, bdim, kb_i64(&b, K - 1)));
    oxide_block *fast = kb_block(&b, 0, NULL, NULL), *tail = kb_block(&b, 0, NULL, NULL);
    oxide_block *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, last, n), fast, NULL, 0, tail, NULL, 0);

    /* All K elements in range: loads first, so they are in flight together. */
    kb_set(&b, fast);
    oxide_value *idx[K], *x[K], *y[K];
    for (int j = 0; j < K; j++) {
        idx[j] = kb_op2(&b, OXIDE_OP_ADD, base, kb_op2(&b, OXIDE_OP_MUL, bdim, kb_i64(&b, j)));
        x[j] = kb_load(&b, b.f32, kb_gep(&b, a, idx[j], b.f32), 4);
    }
    for (int j = 0; j < K; j++)
        y[j] = kb_load(&b, b.f32, kb_gep(&b, bp, idx[j], b.f32), 4);
    for (int j = 0; j < K; j++)
        kb_store(&b, kb_op2(&b, OXIDE_OP_ADD, x[j], y[j]), kb_gep(&b, out, idx[j], b.f32), 4);
    kb_br(&b, done, NULL, 0);

    /* The tail: one element at a time while in range, written out straight (not as a loop) so
     * compiling it costs no loop passes -- compile time is one of vecadd's goals too. */
    kb_set(&b, tail);
    for (int j = 0; j < K; j++) {
        oxide_value *i = kb_op2(&b, OXIDE_OP_ADD, base, kb_op2(&b, OXIDE_OP_MUL, bdim, kb_i64(&b, j)));
        oxide_block *body = kb_block(&b, 0, NULL, NULL);
        oxide_block *next = j + 1 < K ? kb_block(&b, 0, NULL, NULL) : done;
        kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, i, n), body, NULL, 0, done, NULL, 0);
        kb_set(&b, body);
        add_one(&b, a, bp, out, i);
        kb_br(&b, next, NULL, 0);
        kb_set(&b, next);
    }

    kb_ret(&b);
    return kb_end(&b);
}
