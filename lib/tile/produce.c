/* Warp specialisation: a producer warpgroup issues a TMA ring's copies (sm_90a, the TMA variant;
 * docs/tile.md, "The producer warpgroup").
 *
 * TMA copies take no registers and few issue slots, but issued from the warps that run the dots
 * they cost those warps a wait for each free slot, and a deferred dot's ring kept a block barrier
 * every iteration. When the kernel's only loop is such a ring's, an extra warpgroup (128 threads
 * after the program's own) runs the copies instead: one of its threads walks the loop's
 * iterations by itself, waiting for a slot's "empty" barrier and arming its "full" one, while the
 * program's warps (the consumers) wait for "full" and arrive on "empty" after their dot. The
 * producer computes the loop's start, bound and the copies' coordinates again from the
 * parameters and program ids (the scalar slice before the loop, T->need), so after the barriers'
 * initialisation the two share nothing but the barriers; block barriers among the consumers
 * become barrier 1 with their count, and setmaxnreg moves registers from the producer to the
 * consumers. */
#include <string.h>

#include "../cfg.h"
#include "lower.h"

/* Registers a producer thread keeps (the least setmaxnreg takes that CUTLASS's producers use). */
#define PRODUCER_REGS 40u

/* Scalar arithmetic the producer may compute again: no memory, no tile. */
static bool slice_op(const oxide_inst *d) {
    if (!d->result || d->result->type->kind == OXIDE_TYPE_TILE)
        return false;
    switch (d->op) {
    case OXIDE_OP_CONST:
    case OXIDE_OP_ADD:
    case OXIDE_OP_SUB:
    case OXIDE_OP_MUL:
    case OXIDE_OP_SDIV:
    case OXIDE_OP_UDIV:
    case OXIDE_OP_SREM:
    case OXIDE_OP_UREM:
    case OXIDE_OP_SHL:
    case OXIDE_OP_LSHR:
    case OXIDE_OP_ASHR:
    case OXIDE_OP_AND:
    case OXIDE_OP_OR:
    case OXIDE_OP_XOR:
    case OXIDE_OP_SEXT:
    case OXIDE_OP_ZEXT:
    case OXIDE_OP_TRUNC:
    case OXIDE_OP_SMIN:
    case OXIDE_OP_SMAX:
    case OXIDE_OP_UMIN:
    case OXIDE_OP_UMAX:
    case OXIDE_OP_ICMP:
    case OXIDE_OP_SELECT:
    case OXIDE_OP_TILE_PROGRAM_ID:
    case OXIDE_OP_TILE_NUM_PROGRAMS:
    case OXIDE_OP_TILE_DIM: return true;
    default: return false;
    }
}

/* Marks v and what it is computed from before the loop; false where that is not slice_op
 * arithmetic on parameters (a block parameter: a value merged from branches). depth bounds the
 * walk; a value marked once is not walked again. */
static bool need(tl *T, const tl_pipe *p, const oxide_value *v, uint32_t depth) {
    if (v->kind == VAL_PARAM || v == p->iv || T->need[v->id])
        return true;
    if (v->kind != VAL_INST || tl_pipe_in_loop(p, v) || !slice_op(v->def) || depth > 256)
        return false;
    T->need[v->id] = true;
    for (uint32_t k = 0; k < v->def->noperands; k++)
        if (!need(T, p, v->def->operands[k], depth + 1))
            return false;
    return true;
}

/* The loop runs once in every run of the kernel: it is the function's only cycle and its
 * preheader dominates every return (so the consumers run each iteration the producer copies). */
static bool runs_once(tl *T, const tl_pipe *p) {
    oxide_cfg g;
    bool ok = oxide__cfg_build(&g, T->src);
    uint32_t back = 0;
    for (uint32_t i = 0; ok && i < g.nreach; i++) {
        uint32_t b = g.order[i];
        const oxide_block *blk = T->src->blocks.items[b];
        for (uint32_t s = g.succ_start[b]; s < g.succ_start[b + 1]; s++)
            back += g.rpo_num[g.succ[s]] <= i;
        const oxide_inst *t = blk->insts.len ? blk->insts.items[blk->insts.len - 1] : NULL;
        if (t && t->op == OXIDE_OP_RET)
            ok = oxide__cfg_dominates(&g, p->pre->index, b);
    }
    ok = ok && back == 1;
    oxide__cfg_free(&g);
    return ok;
}

bool tl_plan_producer(tl *T, uint32_t k) {
    tl_pipe *p = &T->pipes[k];
    uint32_t on = 1;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_PRODUCER, &on);
    uint32_t rings = 0;
    for (uint32_t j = 0; j < T->npipes; j++)
        rings += T->pipes[j].nloads > 0;
    if (!on || !T->tma_variant || T->producer || rings != 1 || T->warps % 4 || T->threads + 128 > 1024 ||
        !runs_once(T, p))
        return false;
    if (!(T->need = oxide__alloc(&T->out->arena, (T->nvals + 1) * sizeof *T->need))) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return false;
    }
    memset(T->need, 0, (T->nvals + 1) * sizeof *T->need);
    bool ok = need(T, p, p->iv0, 0) && need(T, p, p->ub, 0);
    bool *mark = oxide__alloc(&T->out->arena, (p->body->insts.len + 1) * sizeof *mark);
    for (uint32_t i = 0; ok && mark && i < p->body->insts.len; i++) {
        const oxide_inst *l = p->body->insts.items[i];
        if (l->op != OXIDE_OP_TILE_LOAD || !l->result || tl_val_of(T, l->result)->pipe != (int8_t)k)
            continue;
        memset(mark, 0, (p->body->insts.len + 1) * sizeof *mark);
        ok = tl_pipe_chain(p, l, mark);
        for (uint32_t j = 0; ok && j <= i; j++) {
            const oxide_inst *d = p->body->insts.items[j];
            for (uint32_t o = j == i ? 1 : 0; ok && (mark[j] || j == i) && o < d->noperands; o++)
                if (!tl_pipe_in_loop(p, d->operands[o]))
                    ok = need(T, p, d->operands[o], 0);
        }
    }
    if (!ok || !mark) {
        T->need = NULL;
        return false;
    }
    p->produced = true;
    T->producer = k + 1;
    return true;
}

static oxide_block *new_block(tl *T, oxide_type *const *types, uint32_t n, oxide_value **vals) {
    oxide_block *b = NULL;
    if (!T->st && oxide_function_add_block(T->k, (oxide_type **)types, n, &b, n ? vals : NULL))
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    return b;
}

/* The producer's thread: the slice, then every iteration's copies; persistent, for each program
 * of the block in turn. */
static void produce(tl *T, const tl_pipe *p, const oxide_cfg *g) {
    tl_tiles L = {0};
    if (T->persist)
        tl_tiles_open(T, &L);
    for (uint32_t i = 0; i < g->nreach && !T->st; i++) {
        const oxide_block *b = T->src->blocks.items[g->order[i]];
        for (uint32_t j = 0; j < b->insts.len && !T->st; j++) {
            const oxide_inst *in = b->insts.items[j];
            if (in->result && T->need[in->result->id])
                tl_emit_inst(T, in);
        }
    }
    oxide_value *iv0 = tl_scalar_of(T, p->iv0), *ub = tl_scalar_of(T, p->ub);
    if (T->st)
        return;
    oxide_type *ty[2] = {iv0->type, T->ti64};
    oxide_value *hv[2];
    oxide_block *head = new_block(T, ty, 2, hv), *body = new_block(T, NULL, 0, NULL);
    oxide_block *done = new_block(T, NULL, 0, NULL);
    oxide_value *start[2] = {iv0, T->persist ? L.base : tl_int(T, T->ti64, 0)};
    tl_go_to(T, head, start, 2);
    if (T->st)
        return;
    T->b = head;
    oxide_value *more = tl_cmp(T, OXIDE_OP_ICMP, p->pred, hv[0], ub);
    if (!T->st && oxide_build_cond_br(T->b, more, body, NULL, 0, done, NULL, 0))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
    T->b = body;
    oxide_value *stage =
        tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_UREM, hv[1], tl_int(T, T->ti64, p->stages)), T->ti32);
    for (uint32_t i = 0; i < p->body->insts.len && !T->st; i++) {
        const oxide_inst *in = p->body->insts.items[i];
        if (in->op != OXIDE_OP_TILE_LOAD || !in->result || tl_val_of(T, in->result)->pipe < 0 ||
            !T->pipes[tl_val_of(T, in->result)->pipe].produced)
            continue;
        oxide_value *at[4];
        tl_pipe_coords(T, p, in, hv[0], at);
        if (!T->st)
            tl_tma_copy(T, in, tl_ring_slot(T, in, stage), at, tl_int(T, T->ti1, 1), stage, hv[1]);
    }
    oxide_value *next[2] = {tl_op2(T, OXIDE_OP_ADD, hv[0], tl_int(T, hv[0]->type, p->step)),
                            tl_op2(T, OXIDE_OP_ADD, hv[1], tl_int(T, T->ti64, 1))};
    tl_go_to(T, head, next, 2);
    T->b = done;
    if (T->persist) {
        tl_tiles_next(T, &L, hv[1]);
        T->tiles = NULL;
    }
}

void tl_emit_producer(tl *T, const oxide_cfg *g) {
    const tl_pipe *p = &T->pipes[T->producer - 1];
    /* every thread sees the barriers initialised before either side uses them */
    tl_tma_init(T, p, (int8_t)(T->producer - 1));
    oxide_block *cons = new_block(T, NULL, 0, NULL), *prod = new_block(T, NULL, 0, NULL);
    oxide_value *mine = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, T->tid, tl_int(T, T->ti32, T->threads));
    if (!T->st && oxide_build_cond_br(T->b, mine, cons, NULL, 0, prod, NULL, 0))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
    if (T->st)
        return;
    /* setmaxnreg only pays (and only stays above what the launch gives a thread) with two or more
     * consumer warpgroups: the block's 64K registers split as PRODUCER_REGS for the producer and
     * the rest, in multiples of 8, for each consumer, 240 at most */
    uint32_t groups = T->warps / 4, inc = (65536 / 128 - PRODUCER_REGS) / (groups ? groups : 1) / 8 * 8;
    inc = inc > 240 ? 240 : inc;
    bool regs = groups >= 2;
    T->b = prod;
    if (regs)
        tl_imm_op(T, OXIDE_OP_SETMAXNREG_DEC, PRODUCER_REGS, NULL, NULL, 0);
    oxide_block *join;
    if (!tl_when(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, T->tid, tl_int(T, T->ti32, T->threads)), &join))
        return;
    produce(T, p, g);
    tl_go_to(T, join, NULL, 0);
    T->b = join;
    if (!T->st && oxide_build_op(T->b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid return: %s", oxide_last_error());
    /* the slice is computed again where the consumers' code reaches it */
    for (uint32_t i = 0; i < T->nvals; i++)
        if (T->need[i])
            T->scal[i] = NULL;
    T->b = cons;
    if (regs)
        tl_imm_op(T, OXIDE_OP_SETMAXNREG_INC, inc, NULL, NULL, 0);
    T->named = true;
    if (T->persist) {
        /* the consumers' programs: each source return goes on to the next (emit.c) */
        tl_tiles *L = oxide__alloc(&T->out->arena, sizeof *L);
        if (!L) {
            tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
            return;
        }
        *L = (tl_tiles){0};
        tl_tiles_open(T, L);
        oxide_block *body = T->b;
        T->b = L->exit;
        if (!T->st && oxide_build_op(T->b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL))
            tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid return: %s", oxide_last_error());
        T->b = body;
    }
}
