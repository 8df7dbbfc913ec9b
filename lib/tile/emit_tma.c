/* TMA copies of pipelined wgmma operand tiles (sm_90a; docs/tile.md, "The Hopper path").
 *
 * A load in a pipelined loop (pipeline.c) whose tile fits a TMA box reads its tensor through a
 * descriptor that the launch encodes (iface.h: the tensor parameter's tma box). One thread issues
 * the copy, into the same 128-byte-swizzled ring slot the cp.async copy fills (TMA's 128-byte
 * swizzle is that layout), and an mbarrier per slot counts its bytes in; the dot waits on the
 * barrier's phase instead of on cp.async groups and a block barrier. Whether the launch's
 * tensors allow TMA is known only then, so such a kernel is built twice (lower.c): the TMA
 * variant, and one that copies with cp.async, which the launch takes for other tensors (odd
 * pitches, offset views); or only one of them, for a caller that knows its tensors
 * (oxide_options_set_tile_variants). */
#include <string.h>

#include "lower.h"

/* A tensor parameter's box: the tile's dims, the last cut to one 128-byte swizzle span. */
static void tma_box(const oxide_type *tile, uint32_t es, uint32_t *box) {
    for (uint32_t d = 0; d < tile->rank; d++)
        box[d] = tile->shape[d];
    if (box[tile->rank - 1] * es > 128)
        box[tile->rank - 1] = 128 / es;
}

/* Tensor t takes the box of a tile lt (elements of es bytes), unless it has another already or
 * the kernel has as many TMA tensors as the runtime binds: one box a tensor. */
static bool claim_box(tl_tensor *t, const oxide_type *lt, uint32_t es, uint32_t *ntensors) {
    uint32_t box[4];
    tma_box(lt, es, box);
    if (t->tma ? memcmp(t->tma_box, box, lt->rank * sizeof *box) != 0 : *ntensors == TL_MAX_TMA)
        return false;
    *ntensors += !t->tma;
    t->tma = true;
    memcpy(t->tma_box, box, lt->rank * sizeof *box);
    return true;
}

void tl_plan_tma(tl *T) {
    const oxide_function *fn = T->src;
    uint32_t ntensors = 0;
    for (uint32_t bi = 0; bi < fn->blocks.len; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            tl_val *x = in->op == OXIDE_OP_TILE_LOAD ? tl_val_of(T, in->result) : NULL;
            if (!x || !x->smem || x->pipe < 0)
                continue;
            const oxide_type *lt = in->result->type;
            tl_tensor *t = &T->tensors[in->operands[0]->index];
            uint32_t es = tl_elem_bytes(oxide__tile_scalar(lt));
            if (lt->shape[lt->rank - 2] > 256 || (lt->shape[lt->rank - 1] * es) % 16)
                continue;
            if (!claim_box(t, lt, es, &ntensors))
                continue; /* one box a tensor: its other loads copy with cp.async */
            /* the other variant keeps the parameters (the launch binds both alike), not the copies */
            x->tma = T->tma_variant;
            T->pipes[x->pipe].ntma += x->tma;
        }
    }
    /* the epilogue: stores to tensors the kernel only writes, where a TMA variant is built anyway
     * (a later load of the same elements would race with the asynchronous copy) */
    for (uint32_t bi = 0; bi < fn->blocks.len && ntensors; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (in->op == OXIDE_OP_TILE_LOAD || in->op == OXIDE_OP_TILE_ATOMIC_ADD)
                T->tensors[in->operands[0]->index].read = true;
        }
    }
    for (uint32_t bi = 0; bi < fn->blocks.len && ntensors; bi++) {
        const oxide_block *b = fn->blocks.items[bi];
        for (uint32_t i = 0; i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            if (in->op != OXIDE_OP_TILE_STORE || T->tensors[in->operands[0]->index].read)
                continue;
            const oxide_type *lt = in->operands[in->noperands - 1]->type;
            tl_tensor *t = &T->tensors[in->operands[0]->index];
            const oxide_type *e = oxide__tile_scalar(lt);
            uint32_t es = tl_elem_bytes(e), rk = lt->rank;
            bool flat = true; /* rows and 128-byte panels: the leading dims are 1 */
            for (uint32_t d = 0; d + 2 < rk; d++)
                flat &= lt->shape[d] == 1;
            if (rk < 2 || !flat || e->kind == OXIDE_TYPE_I1 || lt->shape[rk - 2] > 256 || lt->shape[rk - 2] % 8 ||
                (lt->shape[rk - 1] * es) % 128)
                continue;
            if (claim_box(t, lt, es, &ntensors))
                t->tma_store = T->tma_variant;
        }
    }
    T->ntma = ntensors;
}

void tl_plan_release(tl *T) {
    for (uint32_t k = 0; k < T->npipes; k++) {
        tl_pipe *p = &T->pipes[k];
        /* a deferred dot's rings keep their block barriers unless a producer warpgroup copies:
         * released by the dot's warps, whose thread 0 then waited for free slots, the fp8 matmul
         * ran 10-14% slower on the H200 (bf16 about 2%), where attention's loop gained 7-10% */
        if (!p->nloads || p->ntma != p->nloads)
            continue;
        /* each ring load read by exactly one wgmma dot of the body (the count of arrivals) */
        bool ok = true;
        for (uint32_t i = 0; i < p->body->insts.len && ok; i++) {
            const oxide_inst *l = p->body->insts.items[i];
            if (l->op != OXIDE_OP_TILE_LOAD || !l->result || tl_val_of(T, l->result)->pipe != (int8_t)k)
                continue;
            uint32_t readers = 0;
            for (uint32_t j = 0; j < p->body->insts.len; j++) {
                const oxide_inst *d = p->body->insts.items[j];
                if (d->op == OXIDE_OP_TILE_DOT && tl_val_of(T, d->result)->wgmma)
                    readers +=
                        (tl_wgmma_operand_load(d->operands[0]) == l) + (tl_wgmma_operand_load(d->operands[1]) == l);
            }
            ok = readers == 1;
        }
        /* with a producer warpgroup a deferred dot's ring is released too (produce.c) */
        bool produced = ok && tl_plan_producer(T, k);
        p->released = ok && (!p->defer || produced);
    }
}

/* The slot's barrier: "full" (the copy's bytes landed) or, in a released ring, "empty" (its
 * readers are done), stages * 8 bytes after the full ones. */
static oxide_value *slot_bar(tl *T, const oxide_inst *load, oxide_value *stage, bool empty) {
    const tl_val *x = tl_val_of(T, load->result);
    uint32_t at = x->bar_off + (empty ? 8 * T->pipes[x->pipe].stages : 0);
    oxide_value *off =
        tl_op2(T, OXIDE_OP_ADD, tl_int(T, T->ti32, at), tl_op2(T, OXIDE_OP_MUL, stage, tl_int(T, T->ti32, 8)));
    return tl_smem_elem(T, T->smem_tiles, off, T->ti8);
}

static oxide_value *bar_at(tl *T, const oxide_inst *load, oxide_value *stage) {
    return slot_bar(T, load, stage, false);
}

/* the thread that copies: the producer warpgroup's first, else the block's */
static oxide_value *tid0(tl *T) {
    return tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, T->tid, tl_int(T, T->ti32, T->producer ? T->threads : 0));
}

void tl_tma_init(tl *T, const tl_pipe *p, int8_t k) {
    bool any = false;
    for (uint32_t i = 0; i < p->body->insts.len; i++) {
        const oxide_inst *in = p->body->insts.items[i];
        any |= in->op == OXIDE_OP_TILE_LOAD && in->result && tl_val_of(T, in->result)->pipe == k &&
               tl_val_of(T, in->result)->tma;
    }
    if (!any)
        return;
    /* every thread is past the barriers' last use (the loop may run again) */
    tl_barrier(T);
    oxide_block *join;
    if (!tl_when(T, tid0(T), &join))
        return;
    for (uint32_t i = 0; i < p->body->insts.len; i++) {
        const oxide_inst *in = p->body->insts.items[i];
        if (in->op != OXIDE_OP_TILE_LOAD || !in->result || tl_val_of(T, in->result)->pipe != k ||
            !tl_val_of(T, in->result)->tma)
            continue;
        for (uint32_t s = 0; s < p->stages; s++) {
            oxide_value *o[2] = {bar_at(T, in, tl_int(T, T->ti32, s)), tl_int(T, T->ti32, 1)};
            tl_op(T, OXIDE_OP_MBARRIER_INIT, o, 2, NULL, NULL, 0);
            if (p->released) { /* one arrival a warp */
                oxide_value *e[2] = {slot_bar(T, in, tl_int(T, T->ti32, s), true), tl_int(T, T->ti32, T->warps)};
                tl_op(T, OXIDE_OP_MBARRIER_INIT, e, 2, NULL, NULL, 0);
            }
        }
    }
    tl_op(T, OXIDE_OP_FENCE_MBARRIER_INIT, NULL, 0, NULL, NULL, 0);
    tl_go_to(T, join, NULL, 0);
    T->b = join;
    tl_barrier(T);
}

/* (iter / stages) & 1: the phase a slot's barrier completes for iteration iter (i64) */
static oxide_value *phase(tl *T, const tl_pipe *p, oxide_value *iter) {
    oxide_value *i = tl_op2(T, OXIDE_OP_UDIV, iter, tl_int(T, T->ti64, p->stages));
    return tl_cast(T, OXIDE_OP_TRUNC, tl_op2(T, OXIDE_OP_AND, i, tl_int(T, T->ti64, 1)), T->ti32);
}

static void spin(tl *T, oxide_value *bar, oxide_value *ph) {
    oxide_block *loop, *done;
    if (oxide_function_add_block(T->k, NULL, 0, &loop, NULL) || oxide_function_add_block(T->k, NULL, 0, &done, NULL)) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    tl_go_to(T, loop, NULL, 0);
    T->b = loop;
    oxide_value *o[2] = {bar, ph};
    oxide_value *ok = tl_op(T, OXIDE_OP_MBARRIER_TRY_WAIT_PARITY, o, 2, T->ti1, NULL, 0);
    if (!T->st && oxide_build_cond_br(T->b, ok, done, NULL, 0, loop, NULL, 0))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
    T->b = done;
}

/* i64 coordinate -> i32, clamped: a coordinate past the i32 range is out of bounds either way */
static oxide_value *coord32(tl *T, oxide_value *c) {
    oxide_value *lo = tl_int(T, T->ti64, INT32_MIN), *hi = tl_int(T, T->ti64, INT32_MAX);
    c = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SLT, c, lo), lo, c);
    c = tl_sel(T, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SGT, c, hi), hi, c);
    return tl_cast(T, OXIDE_OP_TRUNC, c, T->ti32);
}

void tl_tma_copy(tl *T, const oxide_inst *in, oxide_value *dst, oxide_value *const *at, oxide_value *active,
                 oxide_value *stage, oxide_value *iter) {
    const tl_tensor *t = &T->tensors[in->operands[0]->index];
    const oxide_type *lt = in->result->type;
    uint32_t es = tl_elem_bytes(oxide__tile_scalar(lt)), rk = lt->rank, R = lt->shape[rk - 2], C = lt->shape[rk - 1];
    uint32_t bytes = es;
    for (uint32_t d = 0; d < rk; d++)
        bytes *= lt->shape[d];
    oxide_block *join;
    if (!tl_when(T, tl_op2(T, OXIDE_OP_AND, active, tid0(T)), &join))
        return;
    const tl_pipe *p = &T->pipes[tl_val_of(T, in->result)->pipe];
    if (iter && p->released) {
        /* the slot's last readers were iteration iter - stages, if the loop ran it */
        oxide_value *st = tl_int(T, T->ti64, p->stages);
        oxide_block *used;
        oxide_value *reuse = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_UGE, iter, st);
        if (!tl_when(T, reuse, &used))
            return;
        spin(T, slot_bar(T, in, stage, true), phase(T, p, tl_op2(T, OXIDE_OP_SUB, iter, st)));
        tl_go_to(T, used, NULL, 0);
        T->b = used;
    }
    oxide_value *bar = bar_at(T, in, stage);
    oxide_value *o[2] = {bar, tl_int(T, T->ti32, bytes)};
    tl_op(T, OXIDE_OP_MBARRIER_ARRIVE_EXPECT_TX, o, 2, T->ti64, NULL, 0);
    /* one copy per 128-byte column panel of the tile (the swizzled layout's atoms, R * 128 bytes) */
    uint32_t panel = t->tma_box[rk - 1];
    for (uint32_t q = 0; q * panel < C && !T->st; q++) {
        oxide_value *ops[8] = {tl_smem_elem(T, dst, tl_int(T, T->ti32, q * R * 128), T->ti8), t->tma_desc, bar};
        uint32_t n = 3;
        for (uint32_t d = rk; d-- > 0;)
            ops[n++] = coord32(T, d + 1 == rk ? tl_op2(T, OXIDE_OP_ADD, at[d], tl_int(T, T->ti64, q * panel)) : at[d]);
        tl_op(T, OXIDE_OP_TMA_LOAD, ops, n, NULL, NULL, 0);
    }
    tl_go_to(T, join, NULL, 0);
    T->b = join;
}

void tl_tma_wait(tl *T, const tl_pipe *p, const oxide_inst *const *loads, uint32_t n, uint32_t ahead) {
    bool cp = false;
    for (uint32_t i = 0; i < n; i++) {
        const tl_val *x = loads[i] ? tl_val_of(T, loads[i]->result) : NULL;
        /* a released ring's prologue waited for the copies from before the loop */
        cp |= x && !x->tma && !(p && p->released && x->pipe < 0);
    }
    if (cp) {
        /* this thread's copies have landed (later iterations' may fly); to the async proxy, to all */
        tl_imm_op(T, OXIDE_OP_CP_ASYNC_WAIT, p ? ahead * (p->nloads - p->ntma) : 0, NULL, NULL, 0);
        tl_op(T, OXIDE_OP_FENCE_PROXY_ASYNC, NULL, 0, NULL, NULL, 0);
        tl_barrier(T);
    }
    oxide_value *stage = NULL, *ph = NULL;
    for (uint32_t i = 0; i < n && !T->st; i++) {
        if (!loads[i] || !tl_val_of(T, loads[i]->result)->tma)
            continue;
        if (!stage)
            stage = tl_pipe_stage(T, p, 0), ph = phase(T, p, tl_pipe_iter(T, p, 0));
        spin(T, bar_at(T, loads[i], stage), ph);
    }
}

void tl_tma_release(tl *T, const tl_pipe *p, const oxide_inst *const *loads, uint32_t n) {
    if (!p || !p->released)
        return;
    oxide_value *go = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, T->lane, tl_int(T, T->ti32, 0));
    oxide_value *stage = tl_pipe_stage(T, p, 0);
    if (p->defer) {
        /* the group left in flight reads this iteration's slot: the one before is free, if the
         * loop ran an iteration before */
        oxide_value *ran = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_UGE, tl_pipe_iter(T, p, 0), tl_int(T, T->ti64, 1));
        go = tl_op2(T, OXIDE_OP_AND, go, ran);
        stage = tl_pipe_stage(T, p, p->stages - 1);
    }
    oxide_block *join;
    if (!tl_when(T, go, &join))
        return;
    for (uint32_t i = 0; i < n && !T->st; i++) {
        if (!loads[i] || tl_val_of(T, loads[i]->result)->pipe < 0)
            continue;
        oxide_value *bar = slot_bar(T, loads[i], stage, true);
        tl_op(T, OXIDE_OP_MBARRIER_ARRIVE, &bar, 1, T->ti64, NULL, 0);
    }
    tl_go_to(T, join, NULL, 0);
    T->b = join;
}

/* The epilogue through shared memory: the tile is written, one 128-byte column panel at a time,
 * into staging buffers in the swizzled layout a TMA box of the tensor has, and one thread copies
 * each panel out. The copy writes only the elements inside the tensor, so no thread tests its
 * elements, and whole 128-byte rows reach global memory where the registers' layout (a wgmma
 * accumulator's pairs) would write 16 bytes a row. Taken when every thread's panel of a register
 * is the register's own (no lane or warp bit selects a panel) and a buffer fits beside the
 * reserved region; as many buffers as fit, up to the panels, so copies overlap the next writes. */
bool tl_tma_store(tl *T, const oxide_inst *in, oxide_value *const *v, const tl_layout *L) {
    const tl_tensor *t = &T->tensors[in->operands[0]->index];
    const oxide_type *lt = in->operands[in->noperands - 1]->type;
    uint32_t rk = lt->rank, es = tl_elem_bytes(oxide__tile_scalar(lt)), box[4];
    if (!t->tma_store)
        return false;
    tma_box(lt, es, box);
    if (memcmp(t->tma_box, box, rk * sizeof *box))
        return false;
    uint32_t R = lt->shape[rk - 2], C = lt->shape[rk - 1], P = 128 / es, pbits = tl_bits(P), cbits = tl_bits(C);
    for (uint32_t hw = 0; hw < 5u + L->nwarp; hw++) {
        int8_t e = hw < 5 ? L->lane[hw] : L->warp[hw - 5];
        if (e >= (int8_t)pbits && e < (int8_t)cbits)
            return false;
    }
    uint64_t panel = (uint64_t)R * 128, room = tl_smem_limit(T->opts->sm), used = T->smem_fixed + 1024;
    uint32_t npanels = C / P, nbuf = room > used ? (uint32_t)((room - used) / panel) : 0;
    if (!nbuf)
        return false;
    nbuf = nbuf < npanels ? nbuf : npanels;
    /* in the scratch region, aligned to the swizzle's 1024-byte atom */
    oxide_value *base = tl_smem_at(T, 1024 + nbuf * panel);
    oxide_value *addr = tl_cast(T, OXIDE_OP_PTRTOINT, base, T->ti32);
    oxide_value *pad =
        tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_SUB, tl_int(T, T->ti32, 0), addr), tl_int(T, T->ti32, 1023));
    base = tl_smem_elem(T, base, pad, T->ti8);
    uint32_t n = 1, nregs = 1u << L->nreg;
    /* vectors of registers along the last dim (aligned runs, so never across a 16-byte chunk) */
    for (uint32_t run = tl_run_along(L, rk - 1); n < (1u << run) && 2 * n * es <= 16;)
        n *= 2;
    n = n * es >= 4 ? n : 1;
    oxide_value *c[3], *at[4];
    tl_thread_coords(T, L, c);
    for (uint32_t d = 0; d < rk; d++)
        at[d] = tl_i64(T, tl_scalar_of(T, in->operands[1 + d]));
    oxide_value *one = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, T->tid, tl_int(T, T->ti32, 0));
    oxide_block *join;
    tl_barrier(T); /* the scratch's last readers are done */
    for (uint32_t q = 0; q < npanels && !T->st; q++) {
        oxide_value *buf = tl_smem_elem(T, base, tl_int(T, T->ti32, (uint32_t)((q % nbuf) * panel)), T->ti8);
        if (q >= nbuf) { /* the copy that read this buffer is done */
            if (!tl_when(T, one, &join))
                return true;
            tl_imm_op(T, OXIDE_OP_BULK_WAIT_READ, nbuf - 1, NULL, NULL, 0);
            tl_go_to(T, join, NULL, 0);
            T->b = join;
            tl_barrier(T);
        }
        for (uint32_t g = 0; g < nregs && !T->st; g += n) {
            uint32_t e = tl_reg_elem(L, g), kc = e & (C - 1), kr = e >> tl_dim_off(L->shape, rk, rk - 2) & (R - 1);
            if (kc >> pbits != q)
                continue;
            oxide_value *r = tl_op2(T, OXIDE_OP_ADD, c[rk - 2], tl_int(T, T->ti32, kr));
            oxide_value *col = tl_op2(T, OXIDE_OP_ADD, c[rk - 1], tl_int(T, T->ti32, kc & (P - 1)));
            oxide_value *byte = tl_op2(T, OXIDE_OP_MUL, col, tl_int(T, T->ti32, es));
            oxide_value *chunk = tl_op2(T, OXIDE_OP_XOR, tl_op2(T, OXIDE_OP_LSHR, byte, tl_int(T, T->ti32, 4)),
                                        tl_op2(T, OXIDE_OP_AND, r, tl_int(T, T->ti32, 7)));
            oxide_value *off = tl_op2(T, OXIDE_OP_ADD, tl_op2(T, OXIDE_OP_MUL, r, tl_int(T, T->ti32, 128)),
                                      tl_op2(T, OXIDE_OP_OR, tl_op2(T, OXIDE_OP_SHL, chunk, tl_int(T, T->ti32, 4)),
                                             tl_op2(T, OXIDE_OP_AND, byte, tl_int(T, T->ti32, 15))));
            oxide_value *o[2] = {n > 1 ? tl_pack(T, &v[g], n) : v[g], tl_smem_elem(T, buf, off, T->ti8)};
            oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = n * es};
            tl_op(T, OXIDE_OP_STORE, o, 2, NULL, &al, 1);
        }
        /* the writes, to the copy's (async) proxy, then to the thread that copies */
        tl_op(T, OXIDE_OP_FENCE_PROXY_ASYNC, NULL, 0, NULL, NULL, 0);
        tl_barrier(T);
        if (!tl_when(T, one, &join))
            return true;
        oxide_value *ops[8] = {t->tma_desc, buf};
        uint32_t k = 2;
        for (uint32_t d = rk; d-- > 0;)
            ops[k++] = coord32(T, d + 1 == rk ? tl_op2(T, OXIDE_OP_ADD, at[d], tl_int(T, T->ti64, q * P)) : at[d]);
        tl_op(T, OXIDE_OP_TMA_STORE, ops, k, NULL, NULL, 0);
        tl_op(T, OXIDE_OP_BULK_COMMIT, NULL, 0, NULL, NULL, 0);
        tl_go_to(T, join, NULL, 0);
        T->b = join;
    }
    /* the buffers are scratch again for whatever follows, the next program's epilogue too */
    if (!tl_when(T, one, &join))
        return true;
    tl_imm_op(T, OXIDE_OP_BULK_WAIT_READ, 0, NULL, NULL, 0);
    tl_go_to(T, join, NULL, 0);
    T->b = join;
    tl_barrier(T);
    return true;
}
