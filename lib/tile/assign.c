/* Pass 1: a layout for every tile value. Memory ops and arange take the blocked layout,
 * dot results the mma fragments, elementwise ops the layout of their first operand that has one,
 * shape ops the transformed layout of their operand; tile.full and tile.splat stay uniform (they
 * take any layout for free where they are used). A block parameter takes the layout of an
 * incoming value that has one -- so a loop-carried accumulator keeps the fragments of the dot
 * that feeds it back -- and the blocked layout when every incoming value is uniform. */
#include "lower.h"

static bool decided(const tl_val *v) { return v->uniform || v->has_layout; }

static bool is_tile(const oxide_value *v) { return v && v->type && v->type->kind == OXIDE_TYPE_TILE; }

/* Decides the result of in from its operands; false while an operand it needs is undecided. */
static bool assign_inst(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    const oxide_type *rt = in->result->type;
    tl_val *a = in->noperands && is_tile(in->operands[0]) ? tl_val_of(T, in->operands[0]) : NULL;
    switch (in->op) {
    case OXIDE_OP_TILE_LOAD:
    case OXIDE_OP_TILE_ARANGE: tl_blocked(&r->L, rt, T->warps); break;
    case OXIDE_OP_TILE_DOT: tl_mma(&r->L, rt, T->warps); break;
    case OXIDE_OP_TILE_FULL:
    case OXIDE_OP_TILE_SPLAT: r->uniform = true; return true;
    case OXIDE_OP_TILE_CAST:
    case OXIDE_OP_TILE_BROADCAST:
    case OXIDE_OP_TILE_EXPAND_DIMS:
    case OXIDE_OP_TILE_RESHAPE:
    case OXIDE_OP_TILE_PERMUTE:
    case OXIDE_OP_TILE_REDUCE: {
        if (!decided(a))
            return false;
        if (a->uniform && in->op != OXIDE_OP_TILE_REDUCE) {
            r->uniform = true;
            return true;
        }
        tl_layout from = a->L;
        if (a->uniform)
            tl_blocked(&from, in->operands[0]->type, T->warps);
        switch (in->op) {
        case OXIDE_OP_TILE_CAST: r->L = from; break;
        case OXIDE_OP_TILE_BROADCAST: tl_layout_broadcast(&r->L, &from, rt, T->warps); break;
        case OXIDE_OP_TILE_PERMUTE: tl_layout_permute(&r->L, &from, rt, in->perm); break;
        case OXIDE_OP_TILE_REDUCE: tl_layout_reduce(&r->L, &from, rt, (uint32_t)in->imm); break;
        default: tl_layout_reshape(&r->L, &from, rt); break;
        }
        break;
    }
    default: {
        /* elementwise: the first operand that is not uniform leads */
        const tl_val *lead = NULL;
        for (uint32_t i = 0; i < in->noperands && !lead; i++) {
            if (!is_tile(in->operands[i]))
                continue;
            const tl_val *o = tl_val_of(T, in->operands[i]);
            if (!decided(o))
                return false;
            if (!o->uniform)
                lead = o;
        }
        if (!lead) {
            r->uniform = true;
            return true;
        }
        r->L = lead->L;
        r->L.rank = (uint8_t)rt->rank; /* icmp's i1 result has the operands' shape */
        break;
    }
    }
    r->has_layout = true;
    return true;
}

/* A block parameter from the values passed to it; false while none of them is decided. */
static bool assign_param(tl *T, const oxide_block *b, uint32_t p, bool force) {
    tl_val *r = tl_val_of(T, b->params.items[p]);
    bool all_decided = true;
    for (uint32_t i = 0; i < T->src->blocks.len; i++) {
        const oxide_block *pb = T->src->blocks.items[i];
        const oxide_inst *t = pb->insts.len ? pb->insts.items[pb->insts.len - 1] : NULL;
        for (uint32_t s = 0; t && s < t->nsucc; s++) {
            if (t->succ[s].block != b || p >= t->succ[s].nargs)
                continue;
            const tl_val *a = tl_val_of(T, t->succ[s].args[p]);
            if (a->has_layout) {
                r->L = a->L;
                r->has_layout = true;
                return true;
            }
            all_decided &= a->uniform;
        }
    }
    if (!all_decided && !force)
        return false;
    tl_blocked(&r->L, b->params.items[p] ? ((const oxide_value *)b->params.items[p])->type : NULL, T->warps);
    r->has_layout = true;
    return true;
}

oxide_status tl_assign(tl *T) {
    const oxide_function *fn = T->src;
    for (;;) {
        bool progress = false, pending = false;
        for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
            const oxide_block *b = fn->blocks.items[bi];
            for (uint32_t p = 0; p < b->params.len; p++) {
                const oxide_value *v = b->params.items[p];
                if (!is_tile(v) || decided(tl_val_of(T, v)))
                    continue;
                if (assign_param(T, b, p, false))
                    progress = true;
                else
                    pending = true;
            }
            for (uint32_t i = 0; i < b->insts.len; i++) {
                const oxide_inst *in = b->insts.items[i];
                if (!in->result || !is_tile(in->result) || decided(tl_val_of(T, in->result)))
                    continue;
                if (assign_inst(T, in))
                    progress = true;
                else
                    pending = true;
            }
        }
        if (!pending)
            return OXIDE_OK;
        if (progress)
            continue;
        /* a cycle of block parameters fed only by each other: the first takes the blocked layout */
        bool forced = false;
        for (uint32_t bi = 0; bi < fn->blocks.len && !forced; bi++) {
            const oxide_block *b = fn->blocks.items[bi];
            for (uint32_t p = 0; p < b->params.len && !forced; p++)
                if (is_tile(b->params.items[p]) && !decided(tl_val_of(T, b->params.items[p])))
                    forced = assign_param(T, b, p, true);
        }
        if (!forced)
            return tl_fail(T, OXIDE_ERROR_CODEGEN, "no layout could be chosen for a value of @%s", fn->name);
    }
}
