/* reduce: out[0] += sum(x). Grid-stride partial sums per thread, a shfl.down tree per warp,
 * per-warp partials in shared memory, the first warp combines them, one atomic per block. */
#include "kbuild.h"
#include "oxide_examples.h"

/* Tree-sum of v across the warp with shfl.down; lane 0 ends with the total. */
static oxide_value *warp_sum_down(kb *b, oxide_value *v) {
    for (int d = 16; d >= 1; d /= 2)
        v = kb_op2(b, OXIDE_OP_ADD, v, kb_shfl(b, OXIDE_OP_SHFL_DOWN, v, kb_i32(b, d)));
    return v;
}

oxide_status oxide_example_reduce(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "reduce");
    oxide_value *n, *outlen;
    oxide_value *x = kb_slice_param(&b, "x", OXIDE_SCALAR_F32, 0, &n);
    oxide_value *out = kb_slice_param(&b, "out", OXIDE_SCALAR_F32, 1, &outlen);
    kb_launch_bounds(&b, OXIDE_EXAMPLE_REDUCE_THREADS, 0);
    kb_entry(&b);

    oxide_value *partials = kb_shared_array(&b, "reduce_partials", b.f32, 32, 4);
    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *lane = kb_op2(&b, OXIDE_OP_AND, tid, kb_i32(&b, 31));
    oxide_value *warp = kb_op2(&b, OXIDE_OP_LSHR, tid, kb_i32(&b, 5));
    oxide_value *nwarps = kb_op2(&b, OXIDE_OP_LSHR, kb_op0(&b, OXIDE_OP_NTID_X), kb_i32(&b, 5));
    oxide_value *stride = kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_NCTAID_X), b.i64),
                                 kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_NTID_X), b.i64));
    oxide_value *zero = kb_f32(&b, 0.0);
    oxide_value *gid = kb_global_id_x(&b);

    /* for (i = gid; i < n; i += stride) acc += x[i]; */
    oxide_type *lt[2] = {b.f32, b.i64};
    oxide_value *lp[2], *acc_out;
    oxide_block *loop = kb_block(&b, 2, lt, lp);
    oxide_block *body = kb_block(&b, 0, NULL, NULL);
    oxide_block *after = kb_block(&b, 1, lt, &acc_out);
    oxide_value *init[2] = {zero, gid};
    kb_br(&b, loop, init, 2);

    kb_set(&b, loop);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, lp[1], n), body, NULL, 0, after, &lp[0], 1);

    kb_set(&b, body);
    oxide_value *v = kb_load(&b, b.f32, kb_gep(&b, x, lp[1], b.f32), 4);
    oxide_value *next[2] = {kb_op2(&b, OXIDE_OP_ADD, lp[0], v), kb_op2(&b, OXIDE_OP_ADD, lp[1], stride)};
    kb_br(&b, loop, next, 2);

    /* Warp totals go to shared memory, one slot per warp. */
    kb_set(&b, after);
    oxide_value *wsum = warp_sum_down(&b, acc_out);
    oxide_value *lane0 = kb_icmp(&b, OXIDE_PRED_EQ, lane, kb_i32(&b, 0));
    oxide_block *joined = kb_if(&b, lane0);
    kb_store(&b, wsum, kb_gep(&b, partials, warp, b.f32), 4);
    kb_end_if(&b, joined);

    /* The first warp sums the partials; its lane 0 adds the block's total to out[0]. */
    kb_barrier(&b);
    oxide_block *first = kb_block(&b, 0, NULL, NULL), *add = kb_block(&b, 0, NULL, NULL);
    oxide_block *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_EQ, warp, kb_i32(&b, 0)), first, NULL, 0, done, NULL, 0);
    kb_set(&b, first);
    /* partials has 32 slots, so reading slot `lane` is always in bounds; slots past the block's
     * warp count hold garbage and are replaced by 0. */
    oxide_value *pv = kb_load(&b, b.f32, kb_gep(&b, partials, lane, b.f32), 4);
    pv = kb_select(&b, kb_icmp(&b, OXIDE_PRED_ULT, lane, nwarps), pv, zero);
    oxide_value *total = warp_sum_down(&b, pv);
    oxide_value *can_add = kb_op2(&b, OXIDE_OP_AND, lane0, kb_icmp(&b, OXIDE_PRED_NE, outlen, kb_i64(&b, 0)));
    kb_cond_br(&b, can_add, add, NULL, 0, done, NULL, 0);
    kb_set(&b, add);
    kb_atomic(&b, OXIDE_OP_ATOMIC_ADD, out, total, OXIDE_SCOPE_GPU);
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
