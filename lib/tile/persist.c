/* Persistent scheduling (hint persistent=1; docs/tile.md, "Persistent programs").
 *
 * With a producer warpgroup the kernel's program is one ring loop between a prologue and an
 * epilogue. Launched as one block a program, each block fills its ring, runs the loop and drains
 * it, and the SM's next block starts cold. Persistent, the runtime launches no more blocks than
 * the device holds at once (runtime/launch.c) and each walks the grid's programs: linear ids
 * from its own by the launched count, the program ids decoded from the grid the launch was given
 * (three u32 parameters after the interface's, iface.h). The producer runs its copies on into
 * the next program while the consumers finish this one's epilogue; both sides count ring
 * iterations across programs, so the slots' barrier phases stay in step (the producer from its
 * own loop, the consumers from the loop's exit value). */
#include "../cfg.h"
#include "lower.h"

/* Every return follows the ring loop's head, so its exit value is there to count with. */
static bool head_before_returns(tl *T, const tl_pipe *p) {
    oxide_cfg g;
    bool ok = oxide__cfg_build(&g, T->src);
    for (uint32_t i = 0; ok && i < g.nreach; i++) {
        const oxide_block *blk = T->src->blocks.items[g.order[i]];
        const oxide_inst *t = blk->insts.len ? blk->insts.items[blk->insts.len - 1] : NULL;
        if (t && t->op == OXIDE_OP_RET)
            ok = oxide__cfg_dominates(&g, p->head->index, g.order[i]);
    }
    oxide__cfg_free(&g);
    return ok;
}

oxide_status tl_plan_persistent(tl *T) {
    uint32_t on = 0;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_PERSISTENT, &on);
    if (!on || !T->producer || !head_before_returns(T, &T->pipes[T->producer - 1]))
        return OXIDE_OK;
    oxide_status st = oxide__kernel_set_persistent(T->k, T->grid);
    if (st)
        return tl_fail(T, st, "%s", oxide_last_error());
    T->persist = true;
    return OXIDE_OK;
}

void tl_tiles_open(tl *T, tl_tiles *L) {
    oxide_type *ty[2] = {T->ti32, T->ti64};
    oxide_value *hv[2];
    oxide_block *body;
    if (T->st || oxide_function_add_block(T->k, ty, 2, &L->head, hv) ||
        oxide_function_add_block(T->k, NULL, 0, &L->exit, NULL) ||
        oxide_function_add_block(T->k, NULL, 0, &body, NULL)) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    /* the runtime keeps the count below 2^31 */
    oxide_value *total = tl_op2(T, OXIDE_OP_MUL, tl_op2(T, OXIDE_OP_MUL, T->grid[0], T->grid[1]), T->grid[2]);
    oxide_value *start[2] = {tl_op(T, OXIDE_OP_CTAID_X, NULL, 0, NULL, NULL, 0), tl_int(T, T->ti64, 0)};
    tl_go_to(T, L->head, start, 2);
    T->b = L->head;
    L->t = hv[0], L->base = hv[1];
    oxide_value *more = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, L->t, total);
    if (!T->st && oxide_build_cond_br(T->b, more, body, NULL, 0, L->exit, NULL, 0))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
    T->b = body;
    T->tiles = L;
}

void tl_tiles_next(tl *T, tl_tiles *L, oxide_value *iters) {
    oxide_value *next[2] = {tl_op2(T, OXIDE_OP_ADD, L->t, tl_op(T, OXIDE_OP_NCTAID_X, NULL, 0, NULL, NULL, 0)), iters};
    tl_go_to(T, L->head, next, 2);
    T->b = L->exit;
}

oxide_value *tl_block_id(tl *T, uint32_t axis) {
    if (!T->tiles)
        return tl_op(T, (oxide_op)(OXIDE_OP_CTAID_X + axis), NULL, 0, NULL, NULL, 0);
    /* x fastest, as the hardware numbers a grid's blocks */
    oxide_value *t = T->tiles->t;
    for (uint32_t a = 0; a < axis; a++)
        t = tl_op2(T, OXIDE_OP_UDIV, t, T->grid[a]);
    return axis == 2 ? t : tl_op2(T, OXIDE_OP_UREM, t, T->grid[axis]);
}

oxide_value *tl_block_count(tl *T, uint32_t axis) {
    return T->persist ? T->grid[axis] : tl_op(T, (oxide_op)(OXIDE_OP_NCTAID_X + axis), NULL, 0, NULL, NULL, 0);
}
