/* Shared-memory operand tiles and the loops that pipeline their copies (docs/tile.md, "The
 * Hopper path"), for every dot path that reads its operands from shared memory.
 *
 * A load marked smem never reaches registers: its tile is copied into a region of shared memory
 * reserved for it (tl_place_smem_tiles), in the 128-byte-swizzled layout (atoms of rows of 128
 * bytes, the 16-byte chunk c of row r stored at chunk c ^ (r % 8)) that wgmma reads and that
 * keeps ldmatrix free of bank conflicts. The copy is 16-byte cp.async with zero fill where the
 * view's rows are contiguous and aligned, element by element otherwise, so any strides and
 * ragged edges still load. In a counted loop (tl_plan_pipes) the copies run tl_pipe_ahead
 * iterations ahead into a ring of stages tiles. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

static uint64_t tile_bytes(const oxide_type *t) {
    uint64_t n = tl_elem_bytes(oxide__tile_scalar(t));
    for (uint32_t d = 0; d < t->rank; d++)
        n *= t->shape[d];
    return (n + 1023) / 1024 * 1024;
}

static const oxide_inst *term_of(const oxide_block *b) {
    return b->insts.len ? b->insts.items[b->insts.len - 1] : NULL;
}

bool tl_pipe_in_loop(const tl_pipe *p, const oxide_value *v) {
    return v->kind != VAL_PARAM && (v->block == p->head || v->block == p->body);
}

/* Marks (mark[i] for instruction i of the body) what the load's coordinates are computed from in
 * the body; false when that is not plain scalar arithmetic on iv and values from before the
 * loop, which the pipeline could not compute for a later iteration. */
bool tl_pipe_chain(const tl_pipe *p, const oxide_inst *load, bool *mark) {
    const oxide_block *b = p->body;
    uint32_t at = 0;
    while (at < b->insts.len && b->insts.items[at] != load)
        at++;
    const oxide_value *need[64];
    uint32_t nneed = 0;
    for (uint32_t k = 1; k < load->noperands && nneed < 64; k++)
        need[nneed++] = load->operands[k];
    for (uint32_t i = 0; i < nneed; i++) {
        const oxide_value *v = need[i];
        if (v == p->iv || !tl_pipe_in_loop(p, v))
            continue;
        if (v->kind != VAL_INST || v->block != b)
            return false; /* a value of the head other than iv, or a block parameter */
        const oxide_inst *d = v->def;
        switch (d->op) {
        case OXIDE_OP_CONST:
        case OXIDE_OP_ADD:
        case OXIDE_OP_SUB:
        case OXIDE_OP_MUL:
        case OXIDE_OP_SHL:
        case OXIDE_OP_LSHR:
        case OXIDE_OP_ASHR:
        case OXIDE_OP_AND:
        case OXIDE_OP_OR:
        case OXIDE_OP_XOR:
        case OXIDE_OP_SEXT:
        case OXIDE_OP_ZEXT:
        case OXIDE_OP_TRUNC:
        case OXIDE_OP_TILE_PROGRAM_ID:
        case OXIDE_OP_TILE_NUM_PROGRAMS:
        case OXIDE_OP_TILE_DIM: break;
        default: return false;
        }
        for (uint32_t j = 0; j < at; j++)
            if (b->insts.items[j] == d && !mark[j]) {
                mark[j] = true;
                for (uint32_t k = 0; k < d->noperands; k++) {
                    if (nneed == 64)
                        return false;
                    need[nneed++] = d->operands[k];
                }
            }
    }
    return true;
}

/* The counted loop around a shared-memory load, if its shape is the one tl_pipe describes. */
static bool find_loop(tl *T, const oxide_inst *load, tl_pipe *p) {
    const oxide_block *b = load->block;
    const oxide_inst *bt = term_of(b), *ht;
    if (!bt || bt->op != OXIDE_OP_BR)
        return false;
    const oxide_block *h = bt->succ[0].block;
    if (h == b || !(ht = term_of(h)) || ht->op != OXIDE_OP_COND_BR || ht->succ[0].block != b || ht->succ[1].block == b)
        return false;
    const oxide_value *c = ht->operands[0];
    if (c->kind != VAL_INST || c->def->op != OXIDE_OP_ICMP || c->def->operands[0]->kind != VAL_BLOCK_PARAM ||
        c->def->operands[0]->block != h)
        return false;
    *p = (tl_pipe){.head = h,
                   .body = b,
                   .exit = ht->succ[1].block,
                   .iv = c->def->operands[0],
                   .ub = c->def->operands[1],
                   .pred = c->def->pred};
    if (tl_pipe_in_loop(p, p->ub))
        return false;
    uint32_t j = p->iv->index, npred = 0;
    const oxide_value *next = bt->succ[0].args[j];
    for (uint32_t i = 0; i < T->src->blocks.len; i++) {
        const oxide_block *q = T->src->blocks.items[i];
        const oxide_inst *t = term_of(q);
        for (uint32_t s = 0; t && s < t->nsucc; s++)
            if (t->succ[s].block == h && q != b)
                p->pre = q, p->iv0 = t->succ[s].args[j], npred++;
    }
    if (npred != 1 || next->kind != VAL_INST || next->def->op != OXIDE_OP_ADD)
        return false;
    const oxide_inst *add = next->def;
    const oxide_value *k = add->operands[0] == p->iv   ? add->operands[1]
                           : add->operands[1] == p->iv ? add->operands[0]
                                                       : NULL;
    if (!k || k->kind != VAL_INST || k->def->op != OXIDE_OP_CONST || k->def->ivalue <= 0)
        return false;
    p->step = k->def->ivalue;
    return true;
}

/* Shared-memory loads inside a counted loop are issued stages - 1 iterations ahead. */
oxide_status tl_plan_pipes(tl *T) {
    uint32_t stages;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_STAGES, &stages);
    return tl_plan_pipes_n(T, stages);
}

oxide_status tl_plan_pipes_n(tl *T, uint32_t stages) {
    if (stages < 2)
        return OXIDE_OK;
    const oxide_function *fn = T->src;
    /* tl_pipe_chain marks instructions of one block: room for the longest */
    size_t most = 1;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++)
        most = ((const oxide_block *)fn->blocks.items[bi])->insts.len > most
                   ? ((const oxide_block *)fn->blocks.items[bi])->insts.len
                   : most;
    bool *mark = calloc(most, sizeof *mark);
    if (!mark)
        return tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            tl_pipe p;
            if (in->op != OXIDE_OP_TILE_LOAD || !tl_val_of(T, in->result)->smem || !find_loop(T, in, &p))
                continue;
            memset(mark, 0, most * sizeof *mark);
            if (!tl_pipe_chain(&p, in, mark))
                continue;
            uint32_t k = 0;
            while (k < T->npipes && T->pipes[k].body != b)
                k++;
            if (k == T->npipes) {
                if (k == TL_MAX_PIPES)
                    continue;
                p.stages = stages;
                T->pipes[T->npipes++] = p;
            }
            T->pipes[k].nloads++;
            tl_val_of(T, in->result)->pipe = (int8_t)k;
        }
    }
    free(mark);
    return OXIDE_OK;
}

/* Both operands of a dot in the same ring, or neither: an operand outside the ring must be loaded
 * before the loop (its copy is older than every copy the dot's wait leaves in flight). */
void tl_pipe_pair(tl *T, const oxide_inst *dot, const oxide_inst *la, const oxide_inst *lb) {
    tl_val none = {.pipe = -1};
    tl_val *a = la ? tl_val_of(T, la->result) : &none, *c = tl_val_of(T, lb->result);
    int8_t pp = a->pipe >= 0 ? a->pipe : c->pipe;
    const tl_pipe *q = pp >= 0 ? &T->pipes[pp] : NULL;
    bool ok = !q || dot->block == q->body;
    for (int k = 0; ok && q && k < 2; k++) {
        const oxide_inst *l = k ? lb : la;
        const tl_val *x = k ? c : a;
        if (l)
            ok = x->pipe == pp || (x->pipe < 0 && !tl_pipe_in_loop(q, l->result));
    }
    if (ok)
        return;
    for (int k = 0; k < 2; k++) {
        tl_val *x = k ? c : a;
        if (x->pipe >= 0)
            T->pipes[x->pipe].nloads--;
        x->pipe = -1;
    }
}

/* The reserved region: each operand tile (a ring of them in a pipelined loop) at a 1024-byte
 * boundary, after 1024 bytes of slack for aligning the dynamic shared memory's base. */
void tl_place_smem_tiles(tl *T) {
    const oxide_function *fn = T->src;
    uint64_t off = 0;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (in->op != OXIDE_OP_TILE_LOAD || !tl_val_of(T, in->result)->smem)
                continue;
            const oxide_type *t = in->result->type;
            tl_val *x = tl_val_of(T, in->result);
            x->smem_off = (uint32_t)off;
            off += tile_bytes(t) * (x->pipe >= 0 ? T->pipes[x->pipe].stages : 1);
        }
    }
    /* then the TMA copies' barriers, 8 bytes a ring slot (16 in a released ring) */
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            tl_val *x = in->op == OXIDE_OP_TILE_LOAD ? tl_val_of(T, in->result) : NULL;
            if (x && x->smem && x->tma) {
                const tl_pipe *p = &T->pipes[x->pipe];
                x->bar_off = (uint32_t)off;
                off += (p->released ? 16 : 8) * p->stages; /* full, then empty barriers */
            }
        }
    }
    T->smem_fixed = off ? off + 1024 : 0;
}

void tl_emit_smem_region(tl *T) {
    oxide_value *addr = tl_cast(T, OXIDE_OP_PTRTOINT, T->smem, T->ti32);
    oxide_value *pad =
        tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_SUB, tl_int(T, T->ti32, 0), addr), tl_int(T, T->ti32, 1023));
    T->smem_tiles = tl_smem_elem(T, T->smem, pad, T->ti8);
}

/* Byte offset, in the swizzled layout, of the 16-byte chunk cq (8 elements along the contiguous
 * dim, cq < C/8) of row r of an R-row tile. */
oxide_value *tl_swizzle_at(tl *T, oxide_value *r, oxide_value *cq, uint32_t R) {
    oxide_value *atom =
        tl_op2(T, OXIDE_OP_MUL, tl_op2(T, OXIDE_OP_LSHR, cq, tl_int(T, T->ti32, 3)), tl_int(T, T->ti32, R * 128));
    oxide_value *c = tl_op2(T, OXIDE_OP_XOR, tl_op2(T, OXIDE_OP_AND, cq, tl_int(T, T->ti32, 7)),
                            tl_op2(T, OXIDE_OP_AND, r, tl_int(T, T->ti32, 7)));
    return tl_op2(T, OXIDE_OP_ADD, atom,
                  tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, r, tl_int(T, T->ti32, 128)),
                         tl_op2(T, OXIDE_OP_MUL, c, tl_int(T, T->ti32, 16))));
}

/* 16 bytes of elements as one vector (bytes four to a word: there is no 16 x i8 vector). */
static oxide_value *pack16(tl *T, oxide_value *const *e, uint32_t es) {
    if (es == 2)
        return tl_pack(T, e, 8);
    oxide_value *w[4];
    for (uint32_t i = 0; i < 4; i++) {
        w[i] = tl_int(T, T->ti32, 0);
        for (uint32_t j = 0; j < 4; j++)
            w[i] = tl_op2(
                T, OXIDE_OP_OR, w[i],
                tl_op2(T, OXIDE_OP_SHL, tl_cast(T, OXIDE_OP_ZEXT, e[4 * i + j], T->ti32), tl_int(T, T->ti32, 8 * j)));
    }
    return tl_pack(T, w, 4);
}

/* Copies the tile that load in reads at coordinates at[] (i64) to dst (nothing where active is
 * false). The tile is [1.., R, C]: the leading coordinates pick one R x C slab. */
static void copy_tile(tl *T, const oxide_inst *in, oxide_value *dst, oxide_value *const *at, oxide_value *active) {
    const tl_tensor *t = &T->tensors[in->operands[0]->index];
    uint32_t rk = t->rank, rd = rk - 2, cd = rk - 1;
    const oxide_type *lt = in->result->type;
    oxide_type *et = tl_elem(T, in->result->type);
    /* a chunk is 16 bytes: epc elements */
    uint32_t es = tl_elem_bytes(oxide__tile_scalar(lt)), epc = 16 / es;
    uint32_t R = lt->shape[rd], C = lt->shape[cd], cpr = C / epc;
    oxide_value *row0 = at[rd], *col0 = at[cd];
    /* the slab's offset; a leading coordinate outside its dim leaves the whole tile out */
    oxide_value *lead = tl_int(T, T->ti64, 0);
    for (uint32_t d = 0; d < rd; d++) {
        active = tl_op2(T, OXIDE_OP_AND, active, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, at[d], t->dim[d]));
        lead = tl_op2(T, OXIDE_OP_ADD, lead, tl_op2(T, OXIDE_OP_MUL, at[d], t->stride[d]));
    }
    uint32_t per = R * cpr / T->threads;
    oxide_value *z64 = tl_int(T, T->ti64, 0);
    /* 16-byte copies need contiguous rows, a 16-byte aligned start and row pitch */
    oxide_value *ptr64 = tl_cast(T, OXIDE_OP_PTRTOINT, t->ptr, T->ti64);
    oxide_value *mis =
        tl_op2(T, OXIDE_OP_OR, tl_op2(T, OXIDE_OP_AND, ptr64, tl_int(T, T->ti64, 15)),
               tl_op2(T, OXIDE_OP_OR, tl_op2(T, OXIDE_OP_AND, t->stride[rd], tl_int(T, T->ti64, epc - 1)),
                      tl_op2(T, OXIDE_OP_AND, col0, tl_int(T, T->ti64, epc - 1))));
    oxide_value *fast_ok = tl_op2(T, OXIDE_OP_AND, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, mis, z64),
                                  tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, t->stride[cd], tl_int(T, T->ti64, 1)));
    oxide_block *fast, *slow, *join;
    if (!tl_split(T, fast_ok, &fast, &slow, &join, NULL, 0, NULL))
        return;
    for (int path = 0; path < 2 && !T->st; path++) {
        T->b = path ? slow : fast;
        for (uint32_t j = 0; j < per && !T->st; j++) {
            oxide_value *q = tl_op2(T, OXIDE_OP_ADD, T->tid, tl_int(T, T->ti32, j * T->threads));
            oxide_value *r = tl_op2(T, OXIDE_OP_LSHR, q, tl_int(T, T->ti32, tl_bits(cpr)));
            oxide_value *cq = tl_op2(T, OXIDE_OP_AND, q, tl_int(T, T->ti32, cpr - 1));
            oxide_value *at = tl_smem_elem(T, dst, tl_swizzle_at(T, r, cq, R), T->ti8);
            oxide_value *row = tl_op2(T, OXIDE_OP_ADD, row0, tl_cast(T, OXIDE_OP_ZEXT, r, T->ti64));
            oxide_value *col = tl_op2(
                T, OXIDE_OP_ADD, col0,
                tl_cast(T, OXIDE_OP_ZEXT, tl_op2(T, OXIDE_OP_SHL, cq, tl_int(T, T->ti32, tl_bits(epc))), T->ti64));
            /* unsigned: a negative index is out of bounds too */
            oxide_value *row_in =
                tl_op2(T, OXIDE_OP_AND, active, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, row, t->dim[rd]));
            oxide_value *rowoff = tl_op2(T, OXIDE_OP_ADD, lead, tl_op2(T, OXIDE_OP_MUL, row, t->stride[rd]));
            if (!path) {
                /* elements of this chunk inside the view: 0..8, the rest zero-filled */
                oxide_value *left = tl_op2(T, OXIDE_OP_SUB, t->dim[cd], col);
                oxide_value *pos = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SGT, left, z64);
                oxide_value *n = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SLT, left, tl_int(T, T->ti64, epc)),
                                        left, tl_int(T, T->ti64, epc));
                oxide_value *ok =
                    tl_op2(T, OXIDE_OP_AND, row_in,
                           tl_op2(T, OXIDE_OP_AND, pos, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, col, t->dim[cd])));
                oxide_value *o[2] = {t->ptr, tl_op2(T, OXIDE_OP_ADD, rowoff, col)};
                oxide_attr ea = {.key = OXIDE_ATTR_ELEM, .t = et};
                oxide_value *src = tl_sel(T, ok, tl_op(T, OXIDE_OP_OFFSET, o, 2, NULL, &ea, 1), t->safe);
                oxide_value *bytes = tl_sel(
                    T, ok, tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_SHL, n, tl_int(T, T->ti64, es - 1)), T->ti32),
                    tl_int(T, T->ti32, 0));
                oxide_value *ops[3] = {at, src, bytes};
                tl_imm_op(T, OXIDE_OP_CP_ASYNC_CG_ZFILL, 16, NULL, ops, 3);
                continue;
            }
            oxide_value *e[16];
            for (uint32_t k = 0; k < epc && !T->st; k++) {
                oxide_value *c = tl_op2(T, OXIDE_OP_ADD, col, tl_int(T, T->ti64, k));
                oxide_value *ok =
                    tl_op2(T, OXIDE_OP_AND, row_in, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, c, t->dim[cd]));
                oxide_value *o[2] = {t->ptr,
                                     tl_op2(T, OXIDE_OP_ADD, rowoff, tl_op2(T, OXIDE_OP_MUL, c, t->stride[cd]))};
                oxide_attr ea = {.key = OXIDE_ATTR_ELEM, .t = et};
                oxide_value *p = tl_sel(T, ok, tl_op(T, OXIDE_OP_OFFSET, o, 2, NULL, &ea, 1), t->safe);
                oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = 2};
                e[k] = tl_sel(T, ok, tl_op(T, OXIDE_OP_LOAD, &p, 1, et, &al, 1),
                              oxide__type_is_int(et) ? tl_int(T, et, 0) : tl_flt(T, et, 0.0));
            }
            oxide_value *o[2] = {pack16(T, e, es), at};
            oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = 16};
            tl_op(T, OXIDE_OP_STORE, o, 2, NULL, &al, 1);
        }
        tl_go_to(T, join, NULL, 0);
    }
    T->b = join;
    /* one group a copy on either path, so that the pipeline's counts hold */
    tl_op(T, OXIDE_OP_CP_ASYNC_COMMIT, NULL, 0, NULL, NULL, 0);
}

/* The load's coordinates for the iteration whose iv is ivv: the arithmetic tl_pipe_chain marked,
 * emitted again with iv replaced (the values it overwrites are put back). */
void tl_pipe_coords(tl *T, const tl_pipe *p, const oxide_inst *load, oxide_value *ivv, oxide_value **at) {
    bool *mark = calloc(p->body->insts.len + 1, sizeof *mark);
    oxide_value **saved = calloc(p->body->insts.len + 1, sizeof *saved);
    if (!mark || !saved || !tl_pipe_chain(p, load, mark)) {
        free(mark), free(saved);
        tl_fail(T, mark && saved ? OXIDE_ERROR_CODEGEN : OXIDE_ERROR_OUT_OF_MEMORY, "pipelining a load failed");
        return;
    }
    oxide_value *iv_saved = T->scal[p->iv->id];
    T->scal[p->iv->id] = ivv;
    for (uint32_t i = 0; i < p->body->insts.len && !T->st; i++)
        if (mark[i]) {
            const oxide_inst *in = p->body->insts.items[i];
            saved[i] = T->scal[in->result->id];
            tl_emit_inst(T, in);
        }
    for (uint32_t d = 1; d < load->noperands; d++)
        at[d - 1] = tl_i64(T, tl_scalar_of(T, load->operands[d]));
    for (uint32_t i = 0; i < p->body->insts.len; i++)
        if (mark[i])
            T->scal[((const oxide_inst *)p->body->insts.items[i])->result->id] = saved[i];
    T->scal[p->iv->id] = iv_saved;
    free(mark), free(saved);
}

oxide_value *tl_ring_slot(tl *T, const oxide_inst *load, oxide_value *stage) {
    const tl_val *x = tl_val_of(T, load->result);
    oxide_value *off =
        tl_op2(T, OXIDE_OP_ADD, tl_int(T, T->ti32, x->smem_off),
               tl_op2(T, OXIDE_OP_MUL, stage, tl_int(T, T->ti32, (uint32_t)tile_bytes(load->result->type))));
    return tl_smem_elem(T, T->smem_tiles, off, T->ti8);
}

static oxide_value *as_i64(tl *T, const oxide_value *v) { return tl_i64(T, tl_scalar_of(T, v)); }

/* iv + d * step, and whether the loop runs that iteration */
static oxide_value *iter_iv(tl *T, const tl_pipe *p, oxide_value *iv, int64_t d, oxide_value **active) {
    oxide_value *v = tl_op2(T, OXIDE_OP_ADD, iv, tl_int(T, iv->type, d * p->step));
    *active = tl_cmp(T, OXIDE_OP_ICMP, p->pred, v, tl_scalar_of(T, p->ub));
    return v;
}

oxide_value *tl_pipe_iter(tl *T, const tl_pipe *p, uint32_t d) {
    oxide_value *i = tl_op2(T, OXIDE_OP_SUB, as_i64(T, p->iv), as_i64(T, p->iv0));
    i = tl_op2(T, OXIDE_OP_UDIV, i, tl_int(T, T->ti64, p->step));
    if (T->tiles) /* the block's earlier programs' iterations (persist.c) */
        i = tl_op2(T, OXIDE_OP_ADD, i, T->tiles->base);
    return d ? tl_op2(T, OXIDE_OP_ADD, i, tl_int(T, T->ti64, d)) : i;
}

oxide_value *tl_pipe_stage(tl *T, const tl_pipe *p, uint32_t d) {
    return tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_UREM, tl_pipe_iter(T, p, d), tl_int(T, T->ti64, p->stages)),
                   T->ti32);
}

/* A ring slot's copy: through TMA in the TMA variant where the load may (emit_tma.c), else with
 * cp.async. */
static void pipe_copy(tl *T, const oxide_inst *in, oxide_value *stage, oxide_value *const *at, oxide_value *active,
                      oxide_value *iter) {
    oxide_value *dst = tl_ring_slot(T, in, stage);
    if (tl_val_of(T, in->result)->tma)
        tl_tma_copy(T, in, dst, at, active, stage, iter);
    else
        copy_tile(T, in, dst, at, active);
}

void tl_emit_load_smem(tl *T, const oxide_inst *in) {
    const tl_val *x = tl_val_of(T, in->result);
    if (x->pipe >= 0 && T->pipes[x->pipe].produced)
        return; /* the producer warpgroup copies it */
    /* the tile's last readers (the wgmmas of the previous iteration) are done: a released ring's
     * copy waits for its slot's empty barrier instead */
    if (x->pipe < 0 || !T->pipes[x->pipe].released)
        tl_barrier(T);
    oxide_value *at[4];
    if (x->pipe < 0) {
        for (uint32_t d = 1; d < in->noperands; d++)
            at[d - 1] = as_i64(T, in->operands[d]);
        copy_tile(T, in, tl_ring_slot(T, in, tl_int(T, T->ti32, 0)), at, tl_int(T, T->ti1, 1));
        return;
    }
    /* this iteration's tile is in flight already: fetch the one tl_pipe_ahead iterations on */
    const tl_pipe *p = &T->pipes[x->pipe];
    uint32_t ahead = tl_pipe_ahead(p);
    oxide_value *active, *ivv = iter_iv(T, p, tl_scalar_of(T, p->iv), ahead, &active);
    tl_pipe_coords(T, p, in, ivv, at);
    if (!T->st)
        pipe_copy(T, in, tl_pipe_stage(T, p, ahead), at, active, tl_pipe_iter(T, p, ahead));
}

void tl_emit_pipe_prologue(tl *T, const oxide_block *b) {
    for (uint32_t k = 0; k < T->npipes && !T->st; k++) {
        const tl_pipe *p = &T->pipes[k];
        if (p->pre != b || !p->nloads)
            continue;
        if (!p->produced)
            tl_tma_init(T, p, (int8_t)k);
        for (uint32_t d = 0; d < tl_pipe_ahead(p) && !p->produced && !T->st; d++) {
            oxide_value *active, *ivv = iter_iv(T, p, tl_scalar_of(T, p->iv0), d, &active);
            for (uint32_t i = 0; i < p->body->insts.len && !T->st; i++) {
                const oxide_inst *in = p->body->insts.items[i];
                if (in->op != OXIDE_OP_TILE_LOAD || !in->result || tl_val_of(T, in->result)->pipe != (int8_t)k)
                    continue;
                oxide_value *at[4];
                tl_pipe_coords(T, p, in, ivv, at);
                if (!T->st)
                    pipe_copy(T, in, tl_int(T, T->ti32, d), at, active, NULL);
            }
        }
        if (p->released && !T->st) {
            /* the loop's dots wait for no cp.async group: the copies from before the loop (a
             * one-shot operand) are waited for here, once */
            tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, 0, NULL, NULL, 0);
            tl_op(T, OXIDE_OP_FENCE_PROXY_ASYNC, NULL, 0, NULL, NULL, 0);
            tl_barrier(T);
        }
    }
}

const tl_pipe *tl_dot_slots(tl *T, const oxide_inst *la, const oxide_inst *lb, oxide_value **abase,
                            oxide_value **bbase) {
    const tl_val *xa = la ? tl_val_of(T, la->result) : NULL, *xb = tl_val_of(T, lb->result);
    int8_t k = xa && xa->pipe >= 0 ? xa->pipe : xb->pipe;
    const tl_pipe *p = k >= 0 ? &T->pipes[k] : NULL;
    oxide_value *now = p ? tl_pipe_stage(T, p, 0) : NULL, *first = tl_int(T, T->ti32, 0);
    *abase = la ? tl_ring_slot(T, la, xa->pipe >= 0 ? now : first) : NULL;
    *bbase = tl_ring_slot(T, lb, xb->pipe >= 0 ? now : first);
    return p;
}

void tl_emit_pipe_drain(tl *T, const oxide_block *b) {
    bool drain = false;
    /* the wgmma wait first: ptxas serialises a loop's wgmmas (C7514) when a cp.async wait comes
     * between the last group and its wait */
    for (uint32_t k = 0; k < T->npipes; k++)
        if (T->pipes[k].exit == b && T->pipes[k].nloads) {
            drain = true;
            if (T->pipes[k].defer)
                tl_emit_wgmma_drain(T, &T->pipes[k]);
        }
    if (drain)
        tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, 0, NULL, NULL, 0);
}
