/* softmax: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), one warp per row.
 * Three lane-strided passes over the row (max, sum of exponentials, write), each pass's
 * warp reduction done with shfl.xor so every lane ends with the result. */
#include <math.h>

#include "kbuild.h"
#include "oxide_examples.h"

static oxide_value *warp_allreduce(kb *b, oxide_op op, oxide_value *v) {
    for (int d = 16; d >= 1; d /= 2)
        v = kb_op2(b, op, v, kb_shfl(b, OXIDE_OP_SHFL_XOR, v, kb_i32(b, d)));
    return v;
}

/* Builds `for (c = lane; c < cols; c += 32) carried = step(carried, c)` starting at the current
 * block; leaves the exit block current, and returns the carried value there (NULL if none). */
typedef oxide_value *(*step_fn)(kb *b, oxide_value *carried, oxide_value *c, void *env);

static oxide_value *lane_loop(kb *b, oxide_value *lane, oxide_value *cols, oxide_value *init, step_fn step, void *env) {
    size_t nc = init ? 1 : 0;
    oxide_type *lt[2] = {b->i32, init ? oxide_value_get_type(init) : NULL};
    oxide_value *lp[2], *out = NULL;
    oxide_block *loop = kb_block(b, 1 + nc, lt, lp);
    oxide_block *body = kb_block(b, 0, NULL, NULL);
    oxide_block *exit = kb_block(b, nc, lt + 1, &out);
    oxide_value *start[2] = {lane, init};
    kb_br(b, loop, start, 1 + nc);

    kb_set(b, loop);
    kb_cond_br(b, kb_icmp(b, OXIDE_PRED_ULT, lp[0], cols), body, NULL, 0, exit, lp + 1, nc);
    kb_set(b, body);
    /* The step first, then the increment: the body reads in program order. */
    oxide_value *carried = step(b, nc ? lp[1] : NULL, lp[0], env);
    oxide_value *next[2] = {kb_op2(b, OXIDE_OP_ADD, lp[0], kb_i32(b, 32)), carried};
    kb_br(b, loop, next, 1 + nc);
    kb_set(b, exit);
    return out;
}

typedef struct {
    oxide_value *xrow, *yrow, *max, *inv;
} env_t;

static oxide_value *load_x(kb *b, env_t *e, oxide_value *c) {
    return kb_load(b, b->f32, kb_gep(b, e->xrow, c, b->f32), 4);
}

static oxide_value *step_max(kb *b, oxide_value *m, oxide_value *c, void *env) {
    return kb_op2(b, OXIDE_OP_FMAX, m, load_x(b, env, c));
}

static oxide_value *step_sum(kb *b, oxide_value *s, oxide_value *c, void *env) {
    env_t *e = env;
    return kb_op2(b, OXIDE_OP_ADD, s, kb_op1(b, OXIDE_OP_EXP, kb_op2(b, OXIDE_OP_SUB, load_x(b, e, c), e->max)));
}

static oxide_value *step_write(kb *b, oxide_value *unused, oxide_value *c, void *env) {
    (void)unused;
    env_t *e = env;
    oxide_value *ex = kb_op1(b, OXIDE_OP_EXP, kb_op2(b, OXIDE_OP_SUB, load_x(b, e, c), e->max));
    kb_store(b, kb_op2(b, OXIDE_OP_MUL, ex, e->inv), kb_gep(b, e->yrow, c, b->f32), 4);
    return NULL;
}

oxide_status oxide_example_softmax(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "softmax");
    kb_matrix io;
    kb_matrix_params(&b, &io);
    oxide_value *x = io.x, *y = io.y, *rows = io.rows, *cols = io.cols;
    kb_launch_bounds(&b, OXIDE_EXAMPLE_SOFTMAX_THREADS, 0);
    kb_entry(&b);

    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *lane = kb_op2(&b, OXIDE_OP_AND, tid, kb_i32(&b, 31));
    oxide_value *warps = kb_op2(&b, OXIDE_OP_LSHR, kb_op0(&b, OXIDE_OP_NTID_X), kb_i32(&b, 5));
    oxide_value *row = kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, kb_op0(&b, OXIDE_OP_CTAID_X), warps),
                              kb_op2(&b, OXIDE_OP_LSHR, tid, kb_i32(&b, 5)));
    /* Rows past the end, or a matrix larger than either slice, leave the warp with nothing to do. */
    oxide_value *size =
        kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, rows, b.i64), kb_cast(&b, OXIDE_OP_ZEXT, cols, b.i64));
    oxide_value *idle = kb_op2(&b, OXIDE_OP_OR, kb_icmp(&b, OXIDE_PRED_UGE, row, rows),
                               kb_op2(&b, OXIDE_OP_OR, kb_icmp(&b, OXIDE_PRED_UGT, size, io.xlen),
                                      kb_icmp(&b, OXIDE_PRED_UGT, size, io.ylen)));
    oxide_block *work = kb_block(&b, 0, NULL, NULL), *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, idle, done, NULL, 0, work, NULL, 0);

    kb_set(&b, work);
    oxide_value *base =
        kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, row, b.i64), kb_cast(&b, OXIDE_OP_ZEXT, cols, b.i64));
    env_t e = {.xrow = kb_gep(&b, x, base, b.f32), .yrow = kb_gep(&b, y, base, b.f32)};
    oxide_value *m = lane_loop(&b, lane, cols, kb_f32(&b, -INFINITY), step_max, &e);
    e.max = warp_allreduce(&b, OXIDE_OP_FMAX, m);
    oxide_value *s = lane_loop(&b, lane, cols, kb_f32(&b, 0.0), step_sum, &e);
    e.inv = kb_op2(&b, OXIDE_OP_FDIV, kb_f32(&b, 1.0), warp_allreduce(&b, OXIDE_OP_ADD, s));
    lane_loop(&b, lane, cols, NULL, step_write, &e);
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
