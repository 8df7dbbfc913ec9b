/* Pass 1: a layout for every tile value. Memory ops and arange take the blocked layout,
 * dot results the mma fragments, elementwise ops the layout of their first operand that has one,
 * shape ops the transformed layout of their operand; tile.full and tile.splat stay uniform (they
 * take any layout for free where they are used). A block parameter takes the layout of an
 * incoming value that has one -- so a loop-carried accumulator keeps the fragments of the dot
 * that feeds it back -- and the blocked layout when every incoming value is uniform. A broadcast
 * places its new bits where the tile it is combined with has them (acc * alpha[:, None] in the
 * accumulator's fragments), else where the reduction it undoes took them from. */
#include <stdlib.h>

#include "lower.h"

typedef struct as {
    tl *T;
    const oxide_value **sib; /* per value id: for a broadcast, a tile its first user combines it with */
    bool force;              /* no progress: decide with what is known */
} as;

static bool decided(const tl_val *v) { return v->uniform || v->has_layout; }

/* A broadcast that undoes a reduction (x - max(x, axis) broadcast back, as softmax does) takes
 * the layout the reduction started from: the reduced bits return to the lanes, warps and
 * registers that held them, so the result meets x without a conversion. The operand is followed
 * back through expand_dims and reshape to a reduce whose operand has the broadcast's shape. */
static const tl_layout *reduced_from(tl *T, const oxide_inst *in, const oxide_type *rt) {
    const oxide_value *v = in->operands[0];
    for (int hops = 0; hops < 8 && v->kind == VAL_INST; hops++) {
        const oxide_inst *d = v->def;
        if (d->op == OXIDE_OP_TILE_EXPAND_DIMS || d->op == OXIDE_OP_TILE_RESHAPE) {
            v = d->operands[0];
            continue;
        }
        if (d->op != OXIDE_OP_TILE_REDUCE)
            return NULL;
        const oxide_value *src = d->operands[0];
        const tl_val *x = tl_val_of(T, src);
        return x->has_layout && oxide__tile_shape_eq(src->type, rt) ? &x->L : NULL;
    }
    return NULL;
}

/* Decides the result of in from its operands; false while an operand it needs is undecided. */
static bool assign_inst(as *A, const oxide_inst *in) {
    tl *T = A->T;
    tl_val *r = tl_val_of(T, in->result);
    const oxide_type *rt = in->result->type;
    tl_val *a = in->noperands && tl_is_tile(in->operands[0]) ? tl_val_of(T, in->operands[0]) : NULL;
    switch (in->op) {
    case OXIDE_OP_TILE_ARANGE: r->flex = true; /* fall through */
    case OXIDE_OP_TILE_LOAD: tl_blocked(&r->L, rt, T->warps); break;
    case OXIDE_OP_TILE_DOT:
        if (r->wgmma)
            tl_wgmma_layout(&r->L, rt, T->warps);
        else
            tl_mma(&r->L, rt, T->warps);
        break;
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
        r->flex = a->flex && in->op != OXIDE_OP_TILE_REDUCE;
        switch (in->op) {
        case OXIDE_OP_TILE_CAST: r->L = from; break;
        case OXIDE_OP_TILE_BROADCAST: {
            const oxide_value *sib = A->sib[in->result->id];
            const tl_val *sv = sib ? tl_val_of(T, sib) : NULL;
            if (sv && !decided(sv) && !A->force)
                return false;
            /* take the layout of the tile it meets outright: the emission moves the (smaller)
             * operand into what that maps back to first, if it is not there already */
            const tl_layout *hint = sv && sv->has_layout ? &sv->L : reduced_from(T, in, rt);
            if (hint)
                r->L = *hint, r->L.rank = (uint8_t)rt->rank;
            else
                tl_layout_broadcast(&r->L, &from, rt, T->warps, NULL);
            break;
        }
        case OXIDE_OP_TILE_PERMUTE: tl_layout_permute(&r->L, &from, rt, in->perm); break;
        case OXIDE_OP_TILE_REDUCE: tl_layout_reduce(&r->L, &from, rt, (uint32_t)in->imm); break;
        default: tl_layout_reshape(&r->L, &from, rt); break;
        }
        break;
    }
    default: {
        /* elementwise: the first operand with a layout leads, one holding data before an index
         * tile (which is rebuilt in any layout: a mask meets the tile it selects from); uniform
         * operands follow any */
        const tl_val *lead = NULL, *index = NULL;
        bool waiting = false;
        for (uint32_t i = 0; i < in->noperands && !lead; i++) {
            if (!tl_is_tile(in->operands[i]))
                continue;
            const tl_val *o = tl_val_of(T, in->operands[i]);
            waiting |= !decided(o);
            if (o->has_layout && o->flex)
                index = index ? index : o;
            else if (o->has_layout)
                lead = o;
        }
        if (!lead && index && (!waiting || A->force))
            lead = index;
        else if (!lead && index)
            return false;
        if (!lead && waiting && !A->force)
            return false;
        if (!lead && !waiting) {
            r->uniform = true;
            return true;
        }
        if (lead)
            r->L = lead->L;
        else
            tl_blocked(&r->L, rt, T->warps);
        r->flex = true;
        for (uint32_t i = 0; i < in->noperands; i++)
            if (tl_is_tile(in->operands[i])) {
                const tl_val *o = tl_val_of(T, in->operands[i]);
                r->flex &= o->uniform || o->flex;
            }
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

/* Values computed from arange, splats and constants only (flex) are rebuilt cheaply in any
 * layout: each takes, last to first, the layout its first user with one wants -- an elementwise
 * user's own, or what a shape op's result maps back to -- so that index arithmetic and masks
 * (causal attention's key <= query) meet the tiles they select from without a conversion. */
static oxide_status follow_users(as *A) {
    tl *T = A->T;
    const oxide_function *fn = T->src;
    uint32_t *start = calloc(T->nvals + 2, sizeof *start), *fill = NULL;
    const oxide_inst **user = NULL;
    size_t total = 0;
    for (uint32_t bi = 0; bi < fn->blocks.len && start; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            for (uint32_t k = 0; k < in->noperands; k++)
                if (tl_is_tile(in->operands[k]))
                    start[in->operands[k]->id + 1]++, total++;
        }
    }
    if (start)
        for (uint32_t v = 0; v < T->nvals + 1; v++)
            start[v + 1] += start[v];
    if (!start || !(user = malloc((total + 1) * sizeof *user)) || !(fill = calloc(T->nvals + 1, sizeof *fill))) {
        free(start), free(user);
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            for (uint32_t k = 0; k < in->noperands; k++)
                if (tl_is_tile(in->operands[k])) {
                    uint32_t id = in->operands[k]->id;
                    user[start[id] + fill[id]++] = in;
                }
        }
    }
    for (uint32_t bi = fn->blocks.len; bi-- > 0;) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = b->insts.len; i-- > 0;) {
            const oxide_inst *in = b->insts.items[i];
            if (!in->result || !tl_is_tile(in->result) || !tl_val_of(T, in->result)->flex)
                continue;
            tl_val *x = tl_val_of(T, in->result);
            for (uint32_t u = start[in->result->id]; u < start[in->result->id + 1]; u++) {
                const oxide_inst *us = user[u];
                const tl_val *r = us->result && tl_is_tile(us->result) ? tl_val_of(T, us->result) : NULL;
                if (!r || !r->has_layout)
                    continue;
                bool shape = us->op == OXIDE_OP_TILE_BROADCAST || us->op == OXIDE_OP_TILE_EXPAND_DIMS ||
                             us->op == OXIDE_OP_TILE_RESHAPE || us->op == OXIDE_OP_TILE_PERMUTE ||
                             us->op == OXIDE_OP_TILE_CAST;
                if (shape) {
                    int32_t bitmap[TL_MAXBITS];
                    tl_shape_bitmap(us, bitmap);
                    tl_project(&x->L, &r->L, bitmap, in->result->type);
                    break;
                }
                if (!oxide__is_tile_op(us->op)) {
                    x->L = r->L;
                    break;
                }
            }
        }
    }
    free(start), free(user), free(fill);
    return OXIDE_OK;
}

/* For each broadcast, the other tile of the same shape its first elementwise user takes. */
static void find_siblings(as *A) {
    const oxide_function *fn = A->T->src;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (oxide__is_tile_op(in->op) || !in->result || !tl_is_tile(in->result))
                continue;
            for (uint32_t j = 0; j < in->noperands; j++) {
                const oxide_value *o = in->operands[j];
                if (o->kind != VAL_INST || o->def->op != OXIDE_OP_TILE_BROADCAST || A->sib[o->id])
                    continue;
                for (uint32_t k = 0; k < in->noperands; k++)
                    if (k != j && oxide__tile_shape_eq(in->operands[k]->type, o->type)) {
                        A->sib[o->id] = in->operands[k];
                        break;
                    }
            }
        }
    }
}

oxide_status tl_assign(tl *T) {
    const oxide_function *fn = T->src;
    as A = {.T = T, .sib = calloc(T->nvals + 1, sizeof *A.sib)};
    if (!A.sib)
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    find_siblings(&A);
    oxide_status st = OXIDE_OK;
    for (;;) {
        bool progress = false, pending = false;
        for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
            const oxide_block *b = fn->blocks.items[bi];
            for (uint32_t p = 0; p < b->params.len; p++) {
                const oxide_value *v = b->params.items[p];
                if (!tl_is_tile(v) || decided(tl_val_of(T, v)))
                    continue;
                if (assign_param(T, b, p, false))
                    progress = true;
                else
                    pending = true;
            }
            for (uint32_t i = 0; i < b->insts.len; i++) {
                const oxide_inst *in = b->insts.items[i];
                if (!in->result || !tl_is_tile(in->result) || decided(tl_val_of(T, in->result)))
                    continue;
                if (assign_inst(&A, in))
                    progress = true;
                else
                    pending = true;
            }
        }
        if (!pending)
            break;
        if (progress) {
            A.force = false;
            continue;
        }
        if (!A.force) {
            A.force = true; /* first let ops decide with what they know */
            continue;
        }
        A.force = false;
        /* a cycle of block parameters fed only by each other: the first takes the blocked layout */
        bool forced = false;
        for (uint32_t bi = 0; bi < fn->blocks.len && !forced; bi++) {
            const oxide_block *b = fn->blocks.items[bi];
            for (uint32_t p = 0; p < b->params.len && !forced; p++)
                if (tl_is_tile(b->params.items[p]) && !decided(tl_val_of(T, b->params.items[p])))
                    forced = assign_param(T, b, p, true);
        }
        if (!forced) {
            st = tl_fail(T, OXIDE_ERROR_CODEGEN, "no layout could be chosen for a value of @%s", fn->name);
            break;
        }
    }
    free(A.sib);
    return st ? st : follow_users(&A);
}
