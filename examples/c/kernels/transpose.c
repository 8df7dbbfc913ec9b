/* transpose: y = x^T through a 32 x 32 shared tile whose rows are padded to 33 floats, so the
 * column-wise reads of the second phase hit 32 different banks. Blocks of 32 x 8 threads, each
 * thread moving 4 elements per phase (the layout of NVIDIA's classic transpose). */
#include "kbuild.h"
#include "oxide_examples.h"

#define TILE OXIDE_EXAMPLE_TRANSPOSE_TILE
#define ROWS OXIDE_EXAMPLE_TRANSPOSE_ROWS
#define PITCH (TILE + 1)

oxide_status oxide_example_transpose(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "transpose");
    kb_matrix io;
    kb_matrix_params(&b, &io);
    oxide_value *x = io.x, *y = io.y, *rows = io.rows, *cols = io.cols;
    kb_launch_bounds(&b, TILE * ROWS, 0);
    kb_entry(&b);

    oxide_value *rows64 = kb_cast(&b, OXIDE_OP_ZEXT, rows, b.i64);
    oxide_value *cols64 = kb_cast(&b, OXIDE_OP_ZEXT, cols, b.i64);
    oxide_value *size = kb_op2(&b, OXIDE_OP_MUL, rows64, cols64);
    oxide_value *bad =
        kb_op2(&b, OXIDE_OP_OR, kb_icmp(&b, OXIDE_PRED_UGT, size, io.xlen), kb_icmp(&b, OXIDE_PRED_UGT, size, io.ylen));
    oxide_block *start = kb_block(&b, 0, NULL, NULL), *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, bad, done, NULL, 0, start, NULL, 0);

    kb_set(&b, start);
    oxide_value *tile = kb_shared_array(&b, "transpose_tile", b.f32, TILE * PITCH, 4);
    oxide_value *tx = kb_op0(&b, OXIDE_OP_TID_X), *ty = kb_op0(&b, OXIDE_OP_TID_Y);
    oxide_value *bx = kb_op2(&b, OXIDE_OP_MUL, kb_op0(&b, OXIDE_OP_CTAID_X), kb_i32(&b, TILE));
    oxide_value *by = kb_op2(&b, OXIDE_OP_MUL, kb_op0(&b, OXIDE_OP_CTAID_Y), kb_i32(&b, TILE));

    /* Phase 1: tile[ty + j][tx] = x[by + ty + j][bx + tx] (coalesced reads along x's rows). */
    oxide_value *c_in = kb_op2(&b, OXIDE_OP_ADD, bx, tx);
    oxide_value *c_ok = kb_icmp(&b, OXIDE_PRED_ULT, c_in, cols);
    for (int j = 0; j < TILE; j += ROWS) {
        oxide_value *tr = kb_op2(&b, OXIDE_OP_ADD, ty, kb_i32(&b, j));
        oxide_value *r = kb_op2(&b, OXIDE_OP_ADD, by, tr);
        oxide_value *ok = kb_op2(&b, OXIDE_OP_AND, c_ok, kb_icmp(&b, OXIDE_PRED_ULT, r, rows));
        oxide_block *join = kb_if(&b, ok);
        oxide_value *src =
            kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, r, b.i64), cols64),
                   kb_cast(&b, OXIDE_OP_ZEXT, c_in, b.i64));
        oxide_value *v = kb_load(&b, b.f32, kb_gep(&b, x, src, b.f32), 4);
        oxide_value *slot = kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, tr, kb_i32(&b, PITCH)), tx);
        kb_store(&b, v, kb_gep(&b, tile, slot, b.f32), 4);
        kb_end_if(&b, join);
    }
    kb_barrier(&b);

    /* Phase 2: y[bx + ty + j][by + tx] = tile[tx][ty + j] (coalesced writes along y's rows). */
    oxide_value *c_out = kb_op2(&b, OXIDE_OP_ADD, by, tx);
    oxide_value *c_out_ok = kb_icmp(&b, OXIDE_PRED_ULT, c_out, rows);
    for (int j = 0; j < TILE; j += ROWS) {
        oxide_value *tr = kb_op2(&b, OXIDE_OP_ADD, ty, kb_i32(&b, j));
        oxide_value *r = kb_op2(&b, OXIDE_OP_ADD, bx, tr);
        oxide_value *ok = kb_op2(&b, OXIDE_OP_AND, c_out_ok, kb_icmp(&b, OXIDE_PRED_ULT, r, cols));
        oxide_block *join = kb_if(&b, ok);
        oxide_value *slot = kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, tx, kb_i32(&b, PITCH)), tr);
        oxide_value *v = kb_load(&b, b.f32, kb_gep(&b, tile, slot, b.f32), 4);
        oxide_value *dst =
            kb_op2(&b, OXIDE_OP_ADD, kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, r, b.i64), rows64),
                   kb_cast(&b, OXIDE_OP_ZEXT, c_out, b.i64));
        kb_store(&b, v, kb_gep(&b, y, dst, b.f32), 4);
        kb_end_if(&b, join);
    }
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
