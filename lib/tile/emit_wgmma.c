/* tile.dot on sm_90a: wgmma from shared memory (docs/tile.md, "The Hopper path").
 *
 * A dot takes this path when both operands are tile.loads (pad 0) of 16-bit elements that feed
 * wgmma dots only, A is M x K and B K x N with M a multiple of 64 per warpgroup, N a multiple of
 * 64 up to 256 and K a multiple of 64. Such a load never reaches registers: its tile is copied
 * into a region of shared memory reserved for it, in the 128-byte-swizzled layout wgmma reads
 * (A K-major, B N-major: "atoms" of 64 elements by rows of 128 bytes, the 16-byte chunk c of
 * row r stored at chunk c ^ (r % 8)); pipeline.c copies it there and pipelines counted loops.
 * The accumulator stays in registers in the wgmma fragment layout (tl_wgmma_layout), carried
 * through loops like any tile. */
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

const oxide_inst *tl_wgmma_operand_load(const oxide_value *operand) {
    opchain c;
    return operand_chain(operand, &c) ? c.load : NULL;
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

/* Whether value v's every use is one of: operand 2 of dot, argument j of the branch from body to
 * head (when j is not NULL), or outside the loop (blocks other than head and body). */
static bool uses_only(const tl_pipe *p, const oxide_value *v, const oxide_inst *dot, int32_t *j) {
    const oxide_function *fn = p->body->fn;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        bool inside = b == p->head || b == p->body;
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            for (uint32_t k = 0; k < in->noperands; k++)
                if (in->operands[k] == v && inside && !(in == dot && k == 2))
                    return false;
            for (uint32_t s = 0; s < in->nsucc; s++)
                for (uint32_t a = 0; a < in->succ[s].nargs; a++) {
                    if (in->succ[s].args[a] != v || !inside)
                        continue;
                    if (!j || b != p->body || in->succ[s].block != p->head || (*j >= 0 && *j != (int32_t)a))
                        return false;
                    *j = (int32_t)a;
                }
        }
    }
    return true;
}

/* The ring's one wgmma dot may keep its group in flight (tl_pipe.defer) when it reads both
 * operands from the ring and its result goes only around the loop into its own accumulator and
 * out of the loop: nothing reads the registers wgmma is still writing. */
static void plan_defer(tl *T, tl_pipe *p, int8_t k) {
    const oxide_inst *dot = NULL;
    if (p->stages < 3 || !p->nloads)
        return;
    for (uint32_t i = 0; i < p->body->insts.len; i++) {
        const oxide_inst *in = p->body->insts.items[i];
        if (in->op != OXIDE_OP_TILE_DOT || !tl_val_of(T, in->result)->wgmma)
            continue;
        if (dot)
            return; /* two wgmma dots: the second's wait would wait for the first */
        dot = in;
    }
    if (!dot || tl_val_of(T, dot->result)->wgmma != WG_SS)
        return;
    opchain ca, cb;
    operand_chain(dot->operands[0], &ca);
    operand_chain(dot->operands[1], &cb);
    if (tl_val_of(T, ca.load->result)->pipe != k || tl_val_of(T, cb.load->result)->pipe != k)
        return;
    int32_t j = -1;
    const oxide_value *acc = dot->operands[2];
    if (!uses_only(p, dot->result, dot, &j) || j < 0 || acc->kind != VAL_BLOCK_PARAM || acc->block != p->head ||
        acc->index != (uint32_t)j || !uses_only(p, acc, dot, NULL))
        return;
    p->defer = dot;
    p->acc = acc;
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
    oxide_status st = tl_plan_pipes(T);
    if (st)
        return st;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            tl_val *r = in->op == OXIDE_OP_TILE_DOT ? tl_val_of(T, in->result) : NULL;
            if (!r || !r->wgmma)
                continue;
            opchain ca, cb;
            operand_chain(in->operands[0], &ca);
            operand_chain(in->operands[1], &cb);
            tl_pipe_pair(T, in, r->wgmma == WG_RS ? NULL : ca.load, cb.load);
        }
    }
    for (uint32_t k = 0; k < T->npipes; k++)
        plan_defer(T, &T->pipes[k], (int8_t)k);
    if (!T->opts || T->opts->tile_variants != OXIDE_TILE_VARIANTS_PLAIN)
        tl_plan_tma(T); /* with no TMA variant built, no tensor carries a descriptor either */
    tl_plan_release(T);
    tl_place_smem_tiles(T);
    return OXIDE_OK;
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
    const oxide_inst *loads[2] = {rs ? NULL : ca.load, cb.load};
    oxide_value *abase, *bbase;
    const tl_pipe *p = tl_dot_slots(T, loads[0], loads[1], &abase, &bbase);
    tl_tma_wait(T, p, loads, 2, p ? tl_pipe_ahead(p) : 0);
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
    /* a deferred dot leaves this group in flight: the registers tied here are written until the
     * next iteration's wait, and nothing but the next group (and the drain) reads them */
    bool defer = p && p->defer == in;
    for (uint32_t i = 0; i < blocks && !T->st; i++) {
        frag[i] = tl_imm_op(T, OXIDE_OP_WGMMA_WAIT_ACC, defer ? 1 : 0, NULL, &frag[i], 1);
        for (uint32_t j = 0; j < half; j++)
            r->regs[i * half + j] = tl_imm_op(T, OXIDE_OP_EXTRACT, j, T->tf32, &frag[i], 1);
    }
    tl_tma_release(T, p, loads, 2);
}

void tl_emit_wgmma_drain(tl *T, const tl_pipe *p) {
    tl_val *x = tl_val_of(T, p->acc);
    uint32_t half = p->defer->operands[1]->type->shape[1] / 2, n = 1u << x->L.nreg;
    oxide_type *arr;
    if (oxide_type_array(T->ctx, T->tf32, half, &arr)) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    oxide_value **regs = tl_new_regs(T, &x->L);
    if (!regs || n % half)
        return;
    oxide_attr zattr = {.key = OXIDE_ATTR_VALUE, .i = 0};
    for (uint32_t i = 0; i < n / half && !T->st; i++) {
        oxide_value *f = tl_op(T, OXIDE_OP_CONST, NULL, 0, arr, &zattr, 1);
        for (uint32_t j = 0; j < half; j++) {
            oxide_value *o[2] = {f, x->regs[i * half + j]};
            f = tl_imm_op(T, OXIDE_OP_INSERT, j, NULL, o, 2);
        }
        f = tl_imm_op(T, OXIDE_OP_WGMMA_WAIT_ACC, 0, NULL, &f, 1);
        for (uint32_t j = 0; j < half; j++)
            regs[i * half + j] = tl_imm_op(T, OXIDE_OP_EXTRACT, j, T->tf32, &f, 1);
    }
    /* the loop's blocks are emitted already (tl_emit_kernel puts the body first): from here on
     * the accumulator is the tied registers */
    x->regs = regs;
}
