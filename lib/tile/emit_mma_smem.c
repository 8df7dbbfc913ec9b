/* The general path's dot operands straight from shared memory (docs/tile.md, "Dot"): where a
 * dot's A and B are tile.loads (pad 0) of 16-bit elements whose rows are whole 128-byte atoms and
 * that feed such dots only, the loads never reach registers. pipeline.c copies each into the
 * swizzled layout with 16-byte cp.async (zero fill at the edges, element by element where the
 * view is not contiguous and aligned), in a ring of `stages` tiles in a counted loop, as on the
 * Hopper path; emit_dot.c's mma.sync loop reads its fragments from there with ldmatrix (A) and
 * ldmatrix.trans (B). Runs only when the Hopper path took no dot of the kernel, so the region
 * and the rings are this planner's alone. */
#include <stdlib.h>

#include "lower.h"

/* The load behind operand v if its tile can be one: rank 2, pad 0, bf16 or f16, rows of whole
 * 128-byte atoms, and 16-byte chunks enough for every thread (copy_tile's shapes). */
static const oxide_inst *stageable(tl *T, const oxide_value *v) {
    if (v->kind != VAL_INST || v->def->op != OXIDE_OP_TILE_LOAD || v->type->rank != 2)
        return NULL;
    const oxide_inst *l = v->def;
    const oxide_type *e = oxide__tile_scalar(v->type);
    uint32_t R = v->type->shape[0], C = v->type->shape[1];
    if (l->ivalue || l->fvalue != 0.0 || (e->kind != OXIDE_TYPE_BF16 && e->kind != OXIDE_TYPE_F16))
        return NULL;
    return (C * 2) % 128 || R * C * 2 / 16 < T->threads ? NULL : l;
}

/* The instructions of fn in order (*at starts at 0), NULL after the last. */
static const oxide_inst *next_inst(const oxide_function *fn, uint64_t *at) {
    for (uint32_t bi = (uint32_t)(*at >> 32), i = (uint32_t)*at; bi < fn->blocks.len; bi++, i = 0) {
        const oxide_block *b = fn->blocks.items[bi];
        if (i < b->insts.len) {
            *at = (uint64_t)bi << 32 | (i + 1);
            return b->insts.items[i];
        }
    }
    return NULL;
}

static bool candidate(tl *T, const oxide_inst *in) {
    if (in->op != OXIDE_OP_TILE_DOT || tl_val_of(T, in->result)->wgmma || in->operands[0]->type->rank != 2)
        return false;
    const oxide_inst *a = stageable(T, in->operands[0]), *b = stageable(T, in->operands[1]);
    return a && b && a != b && oxide__tile_scalar(in->operands[0]->type) == oxide__tile_scalar(in->operands[1]->type);
}

/* Marks (smem 1: A, 2: B, 3: refused) the operand loads of the dots cand[] holds, then refuses
 * every load with another user and every dot whose operand was refused, until nothing changes. */
static void mark(tl *T, bool *cand) {
    const oxide_inst *in;
    for (uint64_t at = 0; (in = next_inst(T->src, &at));) {
        if (!in->result || !(cand[in->result->id] = candidate(T, in)))
            continue;
        for (uint32_t k = 0; k < 2; k++) {
            tl_val *x = tl_val_of(T, in->operands[k]);
            x->smem = x->smem && x->smem != k + 1 ? 3 : (uint8_t)(k + 1);
        }
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint64_t at = 0; (in = next_inst(T->src, &at));) {
            bool dot = in->result && cand[in->result->id];
            for (uint32_t k = 0; k < in->noperands; k++) {
                if (!tl_is_tile(in->operands[k]))
                    continue;
                tl_val *x = tl_val_of(T, in->operands[k]);
                if (x->smem && x->smem != 3 && !(dot && k < 2 && x->smem == k + 1))
                    x->smem = 3, changed = true;
            }
            if (dot && (tl_val_of(T, in->operands[0])->smem == 3 || tl_val_of(T, in->operands[1])->smem == 3)) {
                cand[in->result->id] = false;
                for (uint32_t k = 0; k < 2; k++)
                    tl_val_of(T, in->operands[k])->smem = 3;
                changed = true;
            }
        }
    }
}

/* Rings of `stages` (fewer while the tiles would take more than half the target's shared memory,
 * which the other ops' scratch shares), or no staging at all when even single tiles would. */
static oxide_status place(tl *T, const bool *cand) {
    const oxide_function *fn = T->src;
    uint32_t stages;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_STAGES, &stages);
    for (;; stages--) {
        T->npipes = 0;
        for (uint32_t v = 0; v < T->nvals; v++)
            T->vals[v].pipe = -1;
        oxide_status st = tl_plan_pipes_n(T, stages);
        if (st)
            return st;
        const oxide_inst *in;
        for (uint64_t at = 0; (in = next_inst(fn, &at));)
            if (in->result && cand[in->result->id])
                tl_pipe_pair(T, in, in->operands[0]->def, in->operands[1]->def);
        tl_place_smem_tiles(T);
        if (T->smem_fixed <= tl_smem_limit(T->opts->sm) / 2)
            return OXIDE_OK;
        if (stages <= 1)
            break;
    }
    for (uint32_t v = 0; v < T->nvals; v++)
        T->vals[v].smem = 0, T->vals[v].pipe = -1;
    T->npipes = 0;
    T->smem_fixed = 0;
    return OXIDE_OK;
}

oxide_status tl_plan_mma_smem(tl *T) {
    for (uint32_t v = 0; v < T->nvals; v++)
        if (T->vals[v].smem)
            return OXIDE_OK; /* the Hopper path's region */
    bool *cand = calloc(T->nvals + 1, sizeof *cand);
    if (!cand)
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    mark(T, cand);
    bool any = false;
    for (uint32_t v = 0; v < T->nvals; v++) {
        if (T->vals[v].smem == 3)
            T->vals[v].smem = 0;
        any |= T->vals[v].smem != 0;
    }
    oxide_status st = any ? place(T, cand) : OXIDE_OK;
    free(cand);
    return st;
}

const oxide_inst *tl_mma_smem_load(tl *T, const oxide_value *operand) {
    return operand->kind == VAL_INST && operand->def->op == OXIDE_OP_TILE_LOAD && tl_val_of(T, operand)->smem
               ? operand->def
               : NULL;
}
