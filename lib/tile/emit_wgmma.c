/* tile.dot on sm_90a: wgmma from shared memory (docs/tile.md, "The Hopper path").
 *
 * A dot takes this path when both operands are tile.loads (pad 0) of 16-bit elements that feed
 * wgmma dots only, A is M x K and B K x N with M a multiple of 64 per warpgroup, N a multiple of
 * 64 up to 256 and K a multiple of 64. Such a load never reaches registers: its tile is copied
 * into a region of shared memory reserved for it, in the 128-byte-swizzled layout wgmma reads
 * (A K-major, B N-major: "atoms" of 64 elements by rows of 128 bytes, the 16-byte chunk c of
 * row r stored at chunk c ^ (r % 8)). The copy is 16-byte cp.async with zero fill where the
 * view's rows are contiguous and aligned, element by element otherwise, so any strides and
 * ragged edges still load. The accumulator stays in registers in the wgmma fragment layout
 * (tl_wgmma_layout), carried through loops like any tile. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* A dot operand that lives in shared memory: a tile.load, then (optionally) a reshape dropping
 * its leading 1s and a transposition -- the values on the way (v[0] is the dot's operand) hold no
 * registers. trans: the operand is the load's tile transposed, so its contiguous dim is the
 * operand's first (a B of N x K rows: K-major). */
typedef struct opchain {
    const oxide_value *v[4];
    uint32_t n;
    const oxide_inst *load;
    bool trans;
} opchain;

static bool operand_chain(const oxide_value *v, opchain *c) {
    *c = (opchain){0};
    while (c->n < 4 && v->kind == VAL_INST && tl_is_tile(v)) {
        const oxide_inst *d = v->def;
        c->v[c->n++] = v;
        if (d->op == OXIDE_OP_TILE_LOAD) {
            c->load = d;
            return true;
        }
        const oxide_type *from = d->noperands ? d->operands[0]->type : NULL;
        if (d->op == OXIDE_OP_TILE_PERMUTE && v->type->rank == 2 && (d->perm & 15) == 1)
            c->trans = !c->trans;
        else if (d->op != OXIDE_OP_TILE_RESHAPE || !from || from->kind != OXIDE_TYPE_TILE || from->rank < 2 ||
                 v->type->rank != 2 || from->shape[from->rank - 2] != v->type->shape[0] ||
                 from->shape[from->rank - 1] != v->type->shape[1])
            return false;
        v = d->operands[0];
    }
    return false;
}

void tl_wgmma_layout(tl_layout *L, const oxide_type *tile, uint32_t warps) {
    /* tl_mma with every warp along M gives a warp 16 rows of each m16 block; wgmma wants warp w
     * of a warpgroup at rows 16 (w % 4) of each 64-row block, the warpgroups next, then the
     * blocks a warpgroup repeats over: so the warp bits take row bits 4.. first */
    tl_mma(L, tile, 1);
    uint32_t N = tile->shape[1], M = tile->shape[0], nb = tl_bits(N), mb = tl_bits(M);
    uint32_t wb = tl_bits(warps);
    L->nreg = 0;
    L->reg[L->nreg++] = 0;
    L->reg[L->nreg++] = (int8_t)(nb + 3);
    for (uint32_t j = 3; j < nb; j++)
        L->reg[L->nreg++] = (int8_t)j;
    for (uint32_t i = 4 + wb; i < mb; i++)
        L->reg[L->nreg++] = (int8_t)(nb + i);
    L->nwarp = (uint8_t)wb;
    for (uint32_t w = 0; w < wb; w++)
        L->warp[w] = (int8_t)(nb + 4 + w);
}

static bool load_fits(const oxide_inst *l) {
    const oxide_type *lt = l->result->type;
    /* the tile's leading dims are 1 (a reshape dropped them) */
    for (uint32_t d = 0; d + 2 < lt->rank; d++)
        if (lt->shape[d] != 1)
            return false;
    return !l->ivalue && l->fvalue == 0.0;
}

/* WG_SS: both operands from shared memory; WG_RS: A from registers (any tile), B from shared. */
enum { WG_NONE, WG_SS, WG_RS };

static uint8_t dot_fits(tl *T, const oxide_inst *in) {
    if (T->opts->sm != 90 || !T->opts->arch_specific || T->warps % 4)
        return WG_NONE;
    const oxide_value *a = in->operands[0], *b = in->operands[1];
    opchain ca, cb;
    if (a->type->rank != 2 || !operand_chain(b, &cb) || !load_fits(cb.load))
        return WG_NONE;
    const oxide_type *ea = oxide__tile_scalar(a->type), *eb = oxide__tile_scalar(b->type);
    bool fp8 = oxide__type_is_fp8(ea) && oxide__type_is_fp8(eb);
    if (!fp8 && (ea != eb || (ea->kind != OXIDE_TYPE_BF16 && ea->kind != OXIDE_TYPE_F16)))
        return WG_NONE;
    /* K in whole 128-byte atoms; 16-byte chunks enough for every thread */
    uint32_t M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1], G = T->warps / 4, es = fp8 ? 1 : 2;
    if (M % (64 * G) || N % 64 || N > 256 || (K * es) % 128 || K * N * es / 16 < T->threads)
        return WG_NONE;
    bool ss =
        operand_chain(a, &ca) && ca.load != cb.load && !ca.trans && load_fits(ca.load) && M * K * es / 16 >= T->threads;
    /* fp8 wgmma reads both operands K-major from shared memory */
    if (fp8 && (!ss || !cb.trans))
        return WG_NONE;
    return ss ? WG_SS : WG_RS;
}

static uint64_t tile_bytes(const oxide_type *t) {
    uint64_t n = tl_elem_bytes(oxide__tile_scalar(t));
    for (uint32_t d = 0; d < t->rank; d++)
        n *= t->shape[d];
    return (n + 1023) / 1024 * 1024;
}

static const oxide_inst *term_of(const oxide_block *b) {
    return b->insts.len ? b->insts.items[b->insts.len - 1] : NULL;
}

static bool in_loop(const tl_pipe *p, const oxide_value *v) {
    return v->kind != VAL_PARAM && (v->block == p->head || v->block == p->body);
}

/* Marks (mark[i] for instruction i of the body) what the load's coordinates are computed from in
 * the body; false when that is not plain scalar arithmetic on iv and values from before the
 * loop, which the pipeline could not compute for a later iteration. */
static bool chain(const tl_pipe *p, const oxide_inst *load, bool *mark) {
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
        if (v == p->iv || !in_loop(p, v))
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
    if (in_loop(p, p->ub))
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

/* Loads that feed wgmma dots inside a counted loop are issued stages - 1 iterations ahead. */
static oxide_status plan_pipes(tl *T) {
    uint32_t stages;
    oxide_tile_kernel_get_hint(T->src, OXIDE_TILE_HINT_STAGES, &stages);
    if (stages < 2)
        return OXIDE_OK;
    const oxide_function *fn = T->src;
    /* chain() marks instructions of one block: room for the longest */
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
            if (!chain(&p, in, mark))
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
    /* both operands of a dot in the same ring, or neither */
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (in->op != OXIDE_OP_TILE_DOT || !tl_val_of(T, in->result)->wgmma)
                continue;
            opchain ca, cb;
            operand_chain(in->operands[0], &ca);
            operand_chain(in->operands[1], &cb);
            bool rs = tl_val_of(T, in->result)->wgmma == WG_RS;
            tl_val none = {.pipe = -1};
            tl_val *a = rs ? &none : tl_val_of(T, ca.load->result), *c = tl_val_of(T, cb.load->result);
            /* an operand outside the ring must be loaded before the loop (its copy is older than
             * every copy the dot's wait leaves in flight) */
            int8_t pp = a->pipe >= 0 ? a->pipe : c->pipe;
            const tl_pipe *q = pp >= 0 ? &T->pipes[pp] : NULL;
            bool ok = !q || in->block == q->body;
            for (int k = 0; ok && q && k < 2; k++) {
                const tl_val *x = k ? c : a;
                if (!k && rs)
                    continue;
                const oxide_value *lv = (k ? cb : ca).load->result;
                ok = x->pipe == pp || (x->pipe < 0 && !in_loop(q, lv));
            }
            if (!ok) {
                for (int k = 0; k < 2; k++) {
                    tl_val *x = k ? c : a;
                    if (x->pipe >= 0)
                        T->pipes[x->pipe].nloads--;
                    x->pipe = -1;
                }
            }
        }
    }
    return OXIDE_OK;
}

/* Marks the values of operand k's chain with its role (k + 1), or 3 (refused) where two roles
 * meet or set is false; false when a value of it was refused already. */
static bool mark_chain(tl *T, const oxide_inst *dot, uint32_t k, bool set) {
    bool ok = true;
    opchain c;
    operand_chain(dot->operands[k], &c);
    for (uint32_t i = 0; i < c.n; i++) {
        tl_val *x = tl_val_of(T, c.v[i]);
        ok &= x->smem != 3;
        x->smem = set ? (uint8_t)(x->smem && x->smem != k + 1 ? 3 : k + 1) : 3;
    }
    return ok;
}

oxide_status tl_plan_wgmma(tl *T) {
    const oxide_function *fn = T->src;
    /* candidates, then drop any whose operand tiles have another user, until nothing changes */
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            uint8_t how = in->op == OXIDE_OP_TILE_DOT ? dot_fits(T, in) : WG_NONE;
            if (how) {
                tl_val_of(T, in->result)->wgmma = how;
                for (uint32_t k = how == WG_SS ? 0 : 1; k < 2; k++)
                    mark_chain(T, in, k, true);
            }
        }
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
            const oxide_block *b = fn->blocks.items[bi];
            for (uint32_t i = 0; i < b->insts.len; i++) {
                const oxide_inst *in = b->insts.items[i];
                tl_val *r = in->result && tl_is_tile(in->result) ? tl_val_of(T, in->result) : NULL;
                bool wg = r && r->wgmma, view = r && r->smem && r->smem != 3 &&
                                                (in->op == OXIDE_OP_TILE_RESHAPE || in->op == OXIDE_OP_TILE_PERMUTE);
                for (uint32_t k = 0; k < in->noperands; k++) {
                    if (!tl_is_tile(in->operands[k]))
                        continue;
                    tl_val *o = tl_val_of(T, in->operands[k]);
                    bool fits = (wg && (k == 1 || (k == 0 && r->wgmma == WG_SS)) && o->smem == k + 1) ||
                                (view && o->smem == r->smem);
                    if (o->smem && o->smem != 3 && !fits)
                        o->smem = 3, changed = true;
                }
                /* a dot whose A cannot live in shared memory takes it from registers; one whose B
                 * cannot, the general path */
                if (wg && !mark_chain(T, in, 1, true)) {
                    if (r->wgmma == WG_SS)
                        mark_chain(T, in, 0, false);
                    mark_chain(T, in, 1, false);
                    r->wgmma = WG_NONE;
                    changed = true;
                } else if (wg && r->wgmma == WG_SS && !mark_chain(T, in, 0, true)) {
                    mark_chain(T, in, 0, false);
                    r->wgmma = WG_RS;
                    changed = true;
                }
            }
        }
    }
    for (uint32_t v = 0; v < T->nvals; v++) {
        tl_val *x = &T->vals[v];
        x->pipe = -1;
        if (x->smem == 3)
            x->smem = 0;
    }
    oxide_status st = plan_pipes(T);
    if (st)
        return st;
    /* the reserved region: each operand tile (a ring of them in a pipelined loop) at a 1024-byte
     * boundary, after 1024 bytes of slack for aligning the dynamic shared memory's base */
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
    T->smem_fixed = off ? off + 1024 : 0;
    return OXIDE_OK;
}

void tl_emit_wgmma_region(tl *T) {
    oxide_value *addr = tl_cast(T, OXIDE_OP_PTRTOINT, T->smem, T->ti32);
    oxide_value *pad =
        tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_SUB, tl_int(T, T->ti32, 0), addr), tl_int(T, T->ti32, 1023));
    T->smem_tiles = tl_smem_elem(T, T->smem, pad, T->ti8);
}

/* Byte offset, in the swizzled layout, of the 16-byte chunk cq (8 elements along the contiguous
 * dim, cq < C/8) of row r of an R-row tile. */
static oxide_value *chunk_at(tl *T, oxide_value *r, oxide_value *cq, uint32_t R) {
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
            oxide_value *at = tl_smem_elem(T, dst, chunk_at(T, r, cq, R), T->ti8);
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

/* The load's coordinates for the iteration whose iv is ivv: the arithmetic chain() marked,
 * emitted again with iv replaced (the values it overwrites are put back). */
static void coords_at(tl *T, const tl_pipe *p, const oxide_inst *load, oxide_value *ivv, oxide_value **at) {
    bool *mark = calloc(p->body->insts.len + 1, sizeof *mark);
    oxide_value **saved = calloc(p->body->insts.len + 1, sizeof *saved);
    if (!mark || !saved || !chain(p, load, mark)) {
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

static oxide_value *ring_slot(tl *T, const oxide_inst *load, oxide_value *stage) {
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

/* The iteration number of the body now (from 0), mod the ring's stages, plus d. */
static oxide_value *stage_of(tl *T, const tl_pipe *p, uint32_t d) {
    oxide_value *i = tl_op2(T, OXIDE_OP_SUB, as_i64(T, p->iv), as_i64(T, p->iv0));
    i = tl_op2(T, OXIDE_OP_UDIV, i, tl_int(T, T->ti64, p->step));
    i = tl_op2(T, OXIDE_OP_ADD, i, tl_int(T, T->ti64, d));
    return tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_UREM, i, tl_int(T, T->ti64, p->stages)), T->ti32);
}

void tl_emit_load_smem(tl *T, const oxide_inst *in) {
    const tl_val *x = tl_val_of(T, in->result);
    /* the tile's last readers (the wgmmas of the previous iteration) are done */
    tl_barrier(T);
    oxide_value *at[4];
    if (x->pipe < 0) {
        for (uint32_t d = 1; d < in->noperands; d++)
            at[d - 1] = as_i64(T, in->operands[d]);
        copy_tile(T, in, ring_slot(T, in, tl_int(T, T->ti32, 0)), at, tl_int(T, T->ti1, 1));
        return;
    }
    /* this iteration's tile is in flight already: fetch the one stages - 1 iterations on */
    const tl_pipe *p = &T->pipes[x->pipe];
    oxide_value *active, *ivv = iter_iv(T, p, tl_scalar_of(T, p->iv), p->stages - 1, &active);
    coords_at(T, p, in, ivv, at);
    if (!T->st)
        copy_tile(T, in, ring_slot(T, in, stage_of(T, p, p->stages - 1)), at, active);
}

void tl_emit_pipe_prologue(tl *T, const oxide_block *b) {
    for (uint32_t k = 0; k < T->npipes && !T->st; k++) {
        const tl_pipe *p = &T->pipes[k];
        if (p->pre != b || !p->nloads)
            continue;
        for (uint32_t d = 0; d + 1 < p->stages && !T->st; d++) {
            oxide_value *active, *ivv = iter_iv(T, p, tl_scalar_of(T, p->iv0), d, &active);
            for (uint32_t i = 0; i < p->body->insts.len && !T->st; i++) {
                const oxide_inst *in = p->body->insts.items[i];
                if (in->op != OXIDE_OP_TILE_LOAD || !in->result || tl_val_of(T, in->result)->pipe != (int8_t)k)
                    continue;
                oxide_value *at[4];
                coords_at(T, p, in, ivv, at);
                if (!T->st)
                    copy_tile(T, in, ring_slot(T, in, tl_int(T, T->ti32, d)), at, active);
            }
        }
    }
}

void tl_emit_pipe_drain(tl *T, const oxide_block *b) {
    for (uint32_t k = 0; k < T->npipes; k++)
        if (T->pipes[k].exit == b && T->pipes[k].nloads) {
            tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, 0, NULL, NULL, 0);
            return;
        }
}

static oxide_value *desc(tl *T, oxide_value *base, oxide_value *byte, uint32_t lbo, uint32_t sbo) {
    oxide_value *o[3] = {tl_smem_elem(T, base, byte, T->ti8), tl_int(T, T->ti32, lbo), tl_int(T, T->ti32, sbo)};
    return tl_imm_op(T, OXIDE_OP_WGMMA_DESC, 128, NULL, o, 3);
}

void tl_emit_dot_wgmma(tl *T, const oxide_inst *in) {
    const oxide_value *av = in->operands[0], *bv = in->operands[1];
    tl_val *r = tl_val_of(T, in->result);
    uint32_t M = av->type->shape[0], K = av->type->shape[1], N = bv->type->shape[1];
    uint32_t G = T->warps / 4, blocks = M / (64 * G), half = N / 2;
    bool rs = r->wgmma == WG_RS;
    oxide_value **acc = tl_regs_in(T, in->operands[2], &r->L), **aregs = NULL;
    /* from registers, A is wanted in the accumulator's own layout (an m64k16 A fragment is two
     * n8 column blocks of it): a tile computed from an earlier dot's result is there already */
    tl_layout lw;
    if (rs) {
        tl_wgmma_layout(&lw, av->type, T->warps);
        aregs = tl_regs_in(T, av, &lw);
    }
    if (!(r->regs = tl_new_regs(T, &r->L)) || !acc || (rs && !aregs))
        return;
    opchain ca, cb;
    operand_chain(av, &ca);
    operand_chain(bv, &cb);
    const tl_val none = {.pipe = -1}, *la = rs ? &none : tl_val_of(T, ca.load->result);
    const tl_val *lb = tl_val_of(T, cb.load->result);
    int8_t pipe = la->pipe >= 0 ? la->pipe : lb->pipe;
    const tl_pipe *p = pipe >= 0 ? &T->pipes[pipe] : NULL;
    oxide_value *stage = p ? stage_of(T, p, 0) : NULL, *zero = tl_int(T, T->ti32, 0);
    oxide_value *abase = rs ? NULL : ring_slot(T, ca.load, la->pipe >= 0 ? stage : zero);
    oxide_value *bbase = ring_slot(T, cb.load, lb->pipe >= 0 ? stage : zero);
    /* this thread's copies of the tiles have landed (the later iterations' may still fly); make
     * them visible to the async proxy, then to all */
    tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, p ? (int64_t)((p->stages - 1) * p->nloads) : 0, NULL, NULL, 0);
    tl_op(T, OXIDE_OP_FENCE_PROXY_ASYNC, NULL, 0, NULL, NULL, 0);
    tl_barrier(T);
    oxide_type *arr;
    if (oxide_type_array(T->ctx, T->tf32, half, &arr)) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    oxide_value **frag = oxide__alloc(&T->out->arena, blocks * sizeof *frag);
    if (!frag) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    oxide_attr zattr = {.key = OXIDE_ATTR_VALUE, .i = 0};
    for (uint32_t i = 0; i < blocks && !T->st; i++) {
        frag[i] = tl_op(T, OXIDE_OP_CONST, NULL, 0, arr, &zattr, 1);
        for (uint32_t j = 0; j < half; j++) {
            oxide_value *o[2] = {frag[i], acc[i * half + j]};
            frag[i] = tl_imm_op(T, OXIDE_OP_INSERT, j, NULL, o, 2);
        }
    }
    tl_op(T, OXIDE_OP_WGMMA_FENCE, NULL, 0, NULL, NULL, 0);
    oxide_value *g = tl_op2(T, OXIDE_OP_LSHR, T->warp, tl_int(T, T->ti32, 2));
    oxide_value *grow = tl_op2(T, OXIDE_OP_MUL, g, tl_int(T, T->ti32, 64 * 128));
    oxide_value *one = tl_int(T, T->ti1, 1);
    const oxide_type *ea = oxide__tile_scalar(av->type), *eb = oxide__tile_scalar(bv->type);
    bool bf = ea->kind == OXIDE_TYPE_BF16, fp8 = oxide__type_is_fp8(ea);
    oxide_op op =
        rs ? (bf ? OXIDE_OP_WGMMA_BF16_RS : OXIDE_OP_WGMMA_F16_RS) : (bf ? OXIDE_OP_WGMMA_BF16 : OXIDE_OP_WGMMA_F16);
    if (fp8) {
        bool a4 = ea->kind == OXIDE_TYPE_F8E4M3, b4 = eb->kind == OXIDE_TYPE_F8E4M3;
        op = a4 ? (b4 ? OXIDE_OP_WGMMA_E4M3_E4M3 : OXIDE_OP_WGMMA_E4M3_E5M2)
                : (b4 ? OXIDE_OP_WGMMA_E5M2_E4M3 : OXIDE_OP_WGMMA_E5M2_E5M2);
    }
    /* one wgmma takes 32 bytes of K: k16 of 16-bit elements, k32 of fp8 */
    uint32_t ksteps = K * (fp8 ? 1 : 2) / 32;
    for (uint32_t kk = 0; kk < ksteps && !T->st; kk++) {
        /* B, N-major: 64-column atoms of K rows (K * 128 bytes apart), 8-row groups 1024 apart;
         * K-major (a transposed N x K load): 64-element atoms of N rows, a k16 step 32 bytes */
        oxide_value *db = cb.trans ? desc(T, bbase, tl_int(T, T->ti32, (kk / 4) * N * 128 + (kk % 4) * 32), 16, 1024)
                                   : desc(T, bbase, tl_int(T, T->ti32, kk * 16 * 128), K * 128, 1024);
        for (uint32_t i = 0; i < blocks && !T->st; i++) {
            oxide_value *da;
            if (rs) {
                /* a0..a3: rows g and g + 8 of k 16 kk + 2t (n8 block 2 kk), then of k + 8 (block
                 * 2 kk + 1): registers 4 j + {0, 1} and 4 j + {2, 3} of block j */
                oxide_value *w[4];
                for (uint32_t q = 0; q < 4; q++) {
                    uint32_t at = i * (K / 2) + 4 * (2 * kk + q / 2) + 2 * (q % 2);
                    oxide_value *pr = tl_pack(T, &aregs[at], 2);
                    w[q] = pr ? tl_cast(T, OXIDE_OP_BITCAST, pr, T->ti32) : NULL;
                }
                da = w[3] ? tl_pack(T, w, 4) : NULL;
            } else {
                /* A, K-major: 64-element atoms of M rows of 128 bytes; a k16 step is 32 bytes */
                uint32_t off = i * G * 64 * 128 + (kk / 4) * M * 128 + (kk % 4) * 32;
                da = desc(T, abase, tl_op2(T, OXIDE_OP_ADD, grow, tl_int(T, T->ti32, off)), 16, 1024);
            }
            oxide_value *o[4] = {frag[i], da, db, one};
            frag[i] = tl_imm_op(T, op, cb.trans ? 0 : 2, NULL, o, 4); /* mode 2: B N-major */
        }
    }
    tl_op(T, OXIDE_OP_WGMMA_COMMIT, NULL, 0, NULL, NULL, 0);
    for (uint32_t i = 0; i < blocks && !T->st; i++) {
        frag[i] = tl_imm_op(T, OXIDE_OP_WGMMA_WAIT_ACC, 0, NULL, &frag[i], 1);
        for (uint32_t j = 0; j < half; j++)
            r->regs[i * half + j] = tl_imm_op(T, OXIDE_OP_EXTRACT, j, T->tf32, &frag[i], 1);
    }
}
