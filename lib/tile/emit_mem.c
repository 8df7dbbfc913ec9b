/* Memory: tile loads and stores on tensor views (each element bounds-checked; out-of-bounds
 * loads read the pad, out-of-bounds stores and the copies other threads also hold go to a
 * private word), and layout conversions through shared memory. */
#include "lower.h"

/* The element number bits this thread's lane and warp set in layout L (i32). */
static oxide_value *thread_flat(tl *T, const tl_layout *L) {
    oxide_value *f = tl_int(T, T->ti32, 0);
    for (uint32_t hw = 0; hw < 5u + L->nwarp; hw++) {
        int8_t e = hw < 5 ? L->lane[hw] : L->warp[hw - 5];
        if (e < 0)
            continue;
        oxide_value *src = hw < 5 ? T->lane : T->warp;
        uint32_t bit = hw < 5 ? hw : hw - 5;
        oxide_value *b =
            tl_op2(T, OXIDE_OP_AND, tl_op2(T, OXIDE_OP_LSHR, src, tl_int(T, T->ti32, bit)), tl_int(T, T->ti32, 1));
        f = tl_op2(T, OXIDE_OP_OR, f, tl_op2(T, OXIDE_OP_SHL, b, tl_int(T, T->ti32, (uint32_t)e)));
    }
    return f;
}

oxide_value **tl_convert(tl *T, oxide_value **src, const tl_layout *a, const tl_layout *b, oxide_type *elem) {
    uint32_t bits = 0;
    for (uint32_t d = 0; d < a->rank; d++)
        bits += tl_bits(a->shape[d]);
    /* i1 is kept as a byte in memory */
    oxide_type *mt = elem == T->ti1 ? T->ti8 : elem;
    oxide_value *base = tl_smem_at(T, (uint64_t)tl_elem_bytes(mt) << bits);
    oxide_value **r = tl_new_regs(T, b);
    if (!r)
        return NULL;
    tl_barrier(T); /* the scratch's last readers are done */
    oxide_value *f = thread_flat(T, a);
    for (uint32_t g = 0; g < 1u << a->nreg && !T->st; g++) {
        oxide_value *v = src[g], *idx = tl_op2(T, OXIDE_OP_OR, f, tl_int(T, T->ti32, tl_reg_elem(a, g)));
        if (elem == T->ti1)
            v = tl_cast(T, OXIDE_OP_ZEXT, v, T->ti8);
        oxide_value *o[2] = {v, tl_smem_elem(T, base, idx, mt)};
        tl_op(T, OXIDE_OP_STORE, o, 2, NULL, NULL, 0);
    }
    tl_barrier(T);
    f = thread_flat(T, b);
    for (uint32_t g = 0; g < 1u << b->nreg && !T->st; g++) {
        oxide_value *p = tl_smem_elem(T, base, tl_op2(T, OXIDE_OP_OR, f, tl_int(T, T->ti32, tl_reg_elem(b, g))), mt);
        oxide_value *v = tl_op(T, OXIDE_OP_LOAD, &p, 1, mt, NULL, 0);
        r[g] = elem == T->ti1 ? tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_NE, v, tl_int(T, T->ti8, 0)) : v;
    }
    return r;
}

/* Tensor t's stride along dim d. The TMA variant runs only on tensors whose last dim is
 * contiguous (the launch checks every tensor, runtime/launch.c), so there it is the constant 1:
 * an access's addresses are a row's base plus constant offsets, not one product each (the
 * 128x256 matmul's epilogue spilled about 490 bytes without it). */
static oxide_value *stride(tl *T, const tl_tensor *t, uint32_t d) {
    return T->tma_variant && T->ntma && d == t->rank - 1 ? tl_int(T, T->ti64, 1) : t->stride[d];
}

/* Per register of L: whether the element is inside the tensor, and its address: else, for a load
 * one that is safe to read, for a store the private word (and there too the copies of an atomic
 * add's elements that another thread owns). */
static void addresses(tl *T, const oxide_inst *in, const tl_layout *L, oxide_value **inb, oxide_value **ptr,
                      oxide_type *et, bool store, bool owner_only) {
    const tl_tensor *t = &T->tensors[in->operands[0]->index];
    oxide_value *c[3], *base[4];
    tl_thread_coords(T, L, c);
    for (uint32_t d = 0; d < t->rank; d++) {
        oxide_value *o = tl_i64(T, tl_scalar_of(T, in->operands[1 + d]));
        base[d] = tl_op2(T, OXIDE_OP_ADD, o, tl_cast(T, OXIDE_OP_ZEXT, c[d], T->ti64));
    }
    oxide_value *own = owner_only ? tl_is_owner(T, L) : NULL;
    for (uint32_t g = 0; g < 1u << L->nreg && !T->st; g++) {
        uint32_t e = tl_reg_elem(L, g);
        oxide_value *in_b = own, *off = tl_int(T, T->ti64, 0);
        for (uint32_t d = 0; d < t->rank; d++) {
            uint32_t lo = tl_dim_off(L->shape, L->rank, d);
            oxide_value *idx = tl_op2(T, OXIDE_OP_ADD, base[d], tl_int(T, T->ti64, e >> lo & (L->shape[d] - 1)));
            /* unsigned: a negative index is out of bounds too */
            oxide_value *lt = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, idx, t->dim[d]);
            in_b = in_b ? tl_op2(T, OXIDE_OP_AND, in_b, lt) : lt;
            off = tl_op2(T, OXIDE_OP_ADD, off, tl_op2(T, OXIDE_OP_MUL, idx, stride(T, t, d)));
        }
        oxide_value *o[2] = {t->ptr, off};
        oxide_attr at = {.key = OXIDE_ATTR_ELEM, .t = et};
        oxide_value *p = tl_op(T, OXIDE_OP_OFFSET, o, 2, NULL, &at, 1);
        inb[g] = in_b;
        ptr[g] = tl_sel(T, in_b, p, store ? T->dummy : t->safe);
    }
}

static oxide_value **scratch(tl *T, const tl_layout *L) {
    oxide_value **r = oxide__alloc(&T->out->arena, sizeof *r << L->nreg);
    if (!r)
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    return r;
}

oxide_value *tl_pack(tl *T, oxide_value *const *elems, uint32_t n) {
    oxide_type *et = elems[0] ? elems[0]->type : NULL, *vt = NULL, *it = NULL;
    unsigned bits = et ? n * oxide__type_bits(et) : 0;
    oxide_type_kind ik = bits == 128 ? OXIDE_TYPE_I128 : bits == 64 ? OXIDE_TYPE_I64 : OXIDE_TYPE_I32;
    if (!et || (bits != 128 && bits != 64 && bits != 32) || oxide_type_vector(T->ctx, et, n, &vt) ||
        oxide_type_scalar(T->ctx, ik, &it)) {
        tl_fail(T, OXIDE_ERROR_CODEGEN, "no %u-element vector of %s", n, et ? et->name : "?");
        return NULL;
    }
    /* a vector to insert into: the bits of an integer 0 (constants are scalars) */
    oxide_value *v = tl_cast(T, OXIDE_OP_BITCAST, tl_int(T, it, 0), vt);
    for (uint32_t i = 0; i < n; i++) {
        oxide_value *o[2] = {v, elems[i]};
        v = tl_imm_op(T, OXIDE_OP_INSERT, i, NULL, o, 2);
    }
    return v;
}

/* Registers per vector access along the last dim of L (16 bytes at most, 4 at least), else 1. */
static uint32_t vec_regs(const tl_layout *L, uint32_t es) {
    uint32_t vb = tl_run_along(L, L->rank - 1);
    while ((es << vb) > 16 || vb > 3) /* 16 bytes, 8 elements (the widest vector) */
        vb--;
    return (es << vb) >= 4 ? 1u << vb : 1;
}

/* Whether this thread's whole access can go as vectors of n: the last dim has stride 1, every
 * element is in bounds and each group's first address is aligned to the vector's size. */
static oxide_value *vector_ok(tl *T, const oxide_inst *in, const tl_layout *L, oxide_value **inb, oxide_value **ptr,
                              uint32_t n, uint32_t es) {
    const tl_tensor *t = &T->tensors[in->operands[0]->index];
    oxide_value *ok = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, stride(T, t, t->rank - 1), tl_int(T, T->ti64, 1));
    for (uint32_t g = 0; g < 1u << L->nreg && !T->st; g++) {
        ok = tl_op2(T, OXIDE_OP_AND, ok, inb[g]);
        if (g % n)
            continue;
        oxide_value *a = tl_cast(T, OXIDE_OP_PTRTOINT, ptr[g], T->ti64);
        oxide_value *lo = tl_op2(T, OXIDE_OP_AND, a, tl_int(T, T->ti64, n * es - 1));
        ok = tl_op2(T, OXIDE_OP_AND, ok, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, lo, tl_int(T, T->ti64, 0)));
    }
    return ok;
}

bool tl_split(tl *T, oxide_value *cond, oxide_block **fast, oxide_block **slow, oxide_block **join, oxide_type *t,
              uint32_t n, oxide_value **joined) {
    oxide_type **types = n ? oxide__alloc(&T->out->arena, n * sizeof *types) : NULL;
    if (T->st || (n && !types)) {
        tl_fail(T, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        types[i] = t;
    oxide_status st = oxide_function_add_block(T->k, NULL, 0, fast, NULL);
    if (!st)
        st = oxide_function_add_block(T->k, NULL, 0, slow, NULL);
    if (!st)
        st = oxide_function_add_block(T->k, types, n, join, n ? joined : NULL);
    if (!st)
        st = oxide_build_cond_br(T->b, cond, *fast, NULL, 0, *slow, NULL, 0);
    if (st) {
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
        return false;
    }
    return true;
}

void tl_go_to(tl *T, oxide_block *to, oxide_value *const *args, uint32_t n) {
    if (!T->st && oxide_build_br(T->b, to, args, n))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
}

void tl_emit_load(tl *T, const oxide_inst *in) {
    tl_val *r = tl_val_of(T, in->result);
    oxide_type *et = tl_elem(T, in->result->type);
    const oxide_type *e = oxide__tile_scalar(in->result->type);
    oxide_value *pad;
    if (oxide__type_is_fp8(e))
        pad = tl_fp8_const(T, e, in->fvalue);
    else
        pad = oxide__type_is_int(e) ? tl_int(T, et, in->ivalue) : tl_flt(T, et, in->fvalue);
    oxide_value **inb = scratch(T, &r->L), **ptr = scratch(T, &r->L);
    if (!(r->regs = tl_new_regs(T, &r->L)) || !inb || !ptr)
        return;
    addresses(T, in, &r->L, inb, ptr, et, false, false);
    uint32_t es = tl_elem_bytes(et), n = vec_regs(&r->L, es), nregs = 1u << r->L.nreg;
    oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = es};
    oxide_block *fast = NULL, *slow = NULL, *join = NULL;
    oxide_value **vals = r->regs;
    /* a thread whose elements are all inside a tensor with contiguous rows loads vectors */
    if (n > 1 && (vals = scratch(T, &r->L)) &&
        tl_split(T, vector_ok(T, in, &r->L, inb, ptr, n, es), &fast, &slow, &join, et, nregs, r->regs)) {
        oxide_type *vt = NULL;
        oxide_type_vector(T->ctx, et, n, &vt);
        oxide_attr val = {.key = OXIDE_ATTR_ALIGN, .i = es * n};
        T->b = fast;
        for (uint32_t g = 0; g < nregs && !T->st; g += n) {
            oxide_value *v = tl_op(T, OXIDE_OP_LOAD, &ptr[g], 1, vt, &val, 1);
            for (uint32_t i = 0; i < n; i++)
                vals[g + i] = tl_imm_op(T, OXIDE_OP_EXTRACT, i, et, &v, 1);
        }
        tl_go_to(T, join, vals, nregs);
        T->b = slow;
    }
    for (uint32_t g = 0; g < nregs && !T->st; g++) {
        oxide_value *v = tl_op(T, OXIDE_OP_LOAD, &ptr[g], 1, et, &al, 1);
        vals[g] = tl_sel(T, inb[g], v, pad);
    }
    if (join) {
        tl_go_to(T, join, vals, nregs);
        T->b = join;
    }
}

void tl_emit_store(tl *T, const oxide_inst *in, bool atomic) {
    const oxide_value *tile = in->operands[in->noperands - 1];
    tl_layout tmp, L = *tl_layout_of(T, tile, &tmp);
    oxide_type *et = tl_elem(T, tile->type);
    oxide_value **v = tl_regs_in(T, tile, &L), **inb = scratch(T, &L), **ptr = scratch(T, &L);
    if (!v || !inb || !ptr)
        return;
    /* a plain store may write the same value from every copy; an atomic add must not */
    addresses(T, in, &L, inb, ptr, et, true, atomic);
    uint32_t es = tl_elem_bytes(et), n = atomic ? 1 : vec_regs(&L, es), nregs = 1u << L.nreg;
    oxide_attr al = {.key = OXIDE_ATTR_ALIGN, .i = es};
    oxide_block *fast = NULL, *slow = NULL, *join = NULL;
    if (n > 1 && tl_split(T, vector_ok(T, in, &L, inb, ptr, n, es), &fast, &slow, &join, NULL, 0, NULL)) {
        oxide_attr val = {.key = OXIDE_ATTR_ALIGN, .i = es * n};
        T->b = fast;
        for (uint32_t g = 0; g < nregs && !T->st; g += n) {
            oxide_value *o[2] = {tl_pack(T, &v[g], n), ptr[g]};
            tl_op(T, OXIDE_OP_STORE, o, 2, NULL, &val, 1);
        }
        tl_go_to(T, join, NULL, 0);
        T->b = slow;
    }
    for (uint32_t g = 0; g < nregs && !T->st; g++) {
        oxide_value *o[2] = {atomic ? ptr[g] : v[g], atomic ? v[g] : ptr[g]};
        if (atomic)
            tl_op(T, OXIDE_OP_ATOMIC_ADD, o, 2, NULL, NULL, 0);
        else
            tl_op(T, OXIDE_OP_STORE, o, 2, NULL, &al, 1);
    }
    if (join) {
        tl_go_to(T, join, NULL, 0);
        T->b = join;
    }
}
