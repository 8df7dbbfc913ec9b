/* Memory: tile loads and stores on tensor views, and layout conversions through shared memory.
 * A thread whose whole part of the tile is inside the tensor accesses it unchecked, from one base
 * address plus constant offsets; the others check each element (out of bounds, a load reads the
 * pad and a store or atomic add is skipped, as are atomic adds of copies other threads own). */
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
 * the checked path's addresses too are a row's base plus constant offsets, not one product each
 * (a quarter of the 128x256 matmul's epilogue instructions). */
static oxide_value *stride(tl *T, const tl_tensor *t, uint32_t d) {
    return T->tma_variant && T->ntma && d == t->rank - 1 ? tl_int(T, T->ti64, 1) : t->stride[d];
}

/* The thread's part of an access: per dim, the index of its first element (i64) and the largest
 * offset a register adds to it (the register bits of the dim, all set); on the element path, the
 * range of those offsets that is inside (from_lo <= k < from_hi, see element_path). */
typedef struct part {
    const tl_tensor *t;
    oxide_value *base[3];
    uint32_t most[3];
    oxide_value *from_lo[3], *from_hi[3];
} part;

static void thread_part(tl *T, const oxide_inst *in, const tl_layout *L, part *s) {
    s->t = &T->tensors[in->operands[0]->index];
    oxide_value *c[3];
    tl_thread_coords(T, L, c);
    uint32_t regs = tl_reg_elem(L, (1u << L->nreg) - 1);
    for (uint32_t d = 0; d < s->t->rank; d++) {
        oxide_value *o = tl_i64(T, tl_scalar_of(T, in->operands[1 + d]));
        s->base[d] = tl_op2(T, OXIDE_OP_ADD, o, tl_cast(T, OXIDE_OP_ZEXT, c[d], T->ti64));
        s->most[d] = regs >> tl_dim_off(L->shape, L->rank, d) & (L->shape[d] - 1);
        s->from_lo[d] = s->from_hi[d] = NULL;
    }
}

/* Enters the element path: per dim along which the registers step, base + k is inside for
 * -base <= k < dim - base (signed; dims are >= 0 and far below 2^63, so where a difference wraps,
 * base is within 2^16 of the i64 limits and no k below 2^16 is inside, which the wrapped bounds
 * also say). Two values a dim, made here, instead of an
 * index base + k per element: those are the same for every tensor read or written at the same
 * place, so the backend hoists them above the first access and keeps them live to the last (a
 * 4096-column softmax's 15 i64 indices took 30 of its 58 registers). */
static void element_path(tl *T, part *s) {
    for (uint32_t d = 0; d < s->t->rank; d++)
        if (s->most[d]) {
            s->from_lo[d] = tl_op2(T, OXIDE_OP_SUB, tl_int(T, T->ti64, 0), s->base[d]);
            s->from_hi[d] = tl_op2(T, OXIDE_OP_SUB, s->t->dim[d], s->base[d]);
        }
}

/* Whether register g's element of L is inside the tensor (and, where own is given, the thread's
 * copy is the one that counts: an atomic add's). */
static oxide_value *elem_inside(tl *T, const part *s, const tl_layout *L, uint32_t g, oxide_value *own) {
    uint32_t e = tl_reg_elem(L, g);
    oxide_value *ok = own;
    for (uint32_t d = 0; d < s->t->rank; d++) {
        uint32_t k = e >> tl_dim_off(L->shape, L->rank, d) & (L->shape[d] - 1);
        oxide_value *in;
        if (s->from_lo[d]) {
            oxide_value *kv = tl_int(T, T->ti64, k);
            in = tl_op2(T, OXIDE_OP_AND, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SGE, kv, s->from_lo[d]),
                        tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_SLT, kv, s->from_hi[d]));
        } else {
            oxide_value *idx = k ? tl_op2(T, OXIDE_OP_ADD, s->base[d], tl_int(T, T->ti64, k)) : s->base[d];
            /* unsigned: a negative index is out of bounds too */
            in = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_ULT, idx, s->t->dim[d]);
        }
        ok = ok ? tl_op2(T, OXIDE_OP_AND, ok, in) : in;
    }
    return ok;
}

static oxide_value *offset(tl *T, oxide_value *p, oxide_value *off, oxide_type *et) {
    oxide_value *o[2] = {p, off};
    oxide_attr at = {.key = OXIDE_ATTR_ELEM, .t = et};
    return tl_op(T, OXIDE_OP_OFFSET, o, 2, NULL, &at, 1);
}

/* The address of the thread's first element. */
static oxide_value *first_address(tl *T, const part *s, oxide_type *et) {
    oxide_value *off = NULL;
    for (uint32_t d = 0; d < s->t->rank; d++) {
        oxide_value *o = tl_op2(T, OXIDE_OP_MUL, s->base[d], stride(T, s->t, d));
        off = off ? tl_op2(T, OXIDE_OP_ADD, off, o) : o;
    }
    return offset(T, s->t->ptr, off, et);
}

/* Whether the thread's vectors of n can be accessed whole: a last dim of stride 1 and every
 * vector aligned (the first address, and the strides of the other dims the registers step along). */
static oxide_value *vectors_aligned(tl *T, const part *s, oxide_value *first, uint32_t n, uint32_t es) {
    const tl_tensor *t = s->t;
    oxide_value *unit = tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, stride(T, t, t->rank - 1), tl_int(T, T->ti64, 1));
    oxide_value *bits = tl_cast(T, OXIDE_OP_PTRTOINT, first, T->ti64);
    for (uint32_t d = 0; d + 1 < t->rank; d++)
        if (s->most[d])
            bits = tl_op2(T, OXIDE_OP_OR, bits, tl_op2(T, OXIDE_OP_MUL, t->stride[d], tl_int(T, T->ti64, es)));
    oxide_value *lo = tl_op2(T, OXIDE_OP_AND, bits, tl_int(T, T->ti64, n * es - 1));
    return tl_op2(T, OXIDE_OP_AND, unit, tl_cmp(T, OXIDE_OP_ICMP, OXIDE_PRED_EQ, lo, tl_int(T, T->ti64, 0)));
}

/* Whether the thread's whole part is inside the tensor: its first and last element are (both
 * indices inside, nothing between wraps), and for vectors of n, they are aligned. */
static oxide_value *all_inside(tl *T, const part *s, const tl_layout *L, oxide_value *first, uint32_t n, uint32_t es,
                               oxide_value *own) {
    oxide_value *ok = elem_inside(T, s, L, 0, own);
    if (L->nreg)
        ok = tl_op2(T, OXIDE_OP_AND, ok, elem_inside(T, s, L, (1u << L->nreg) - 1, NULL));
    return n == 1 ? ok : tl_op2(T, OXIDE_OP_AND, ok, vectors_aligned(T, s, first, n, es));
}

/* Register g's address when the thread's part is inside: the first address plus its offset along
 * each dim, a constant along the last one when it has stride 1 (unit). */
static oxide_value *inside_address(tl *T, const part *s, const tl_layout *L, oxide_value *first, uint32_t g,
                                   oxide_type *et, bool unit) {
    const tl_tensor *t = s->t;
    uint32_t e = tl_reg_elem(L, g), r = t->rank - 1;
    oxide_value *p = first;
    for (uint32_t d = 0; d <= r; d++) {
        uint32_t k = e >> tl_dim_off(L->shape, L->rank, d) & (L->shape[d] - 1);
        if (k)
            p = offset(T, p,
                       d == r && unit ? tl_int(T, T->ti64, k)
                                      : tl_op2(T, OXIDE_OP_MUL, tl_int(T, T->ti64, k), stride(T, t, d)),
                       et);
    }
    return p;
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

/* 'if (cond) { ... }': leaves T->b in the new 'then' block, whose end branches to *join. With a
 * type t, *join takes one parameter (*joined): the value the 'then' block passes, else otherwise. */
static bool when_or(tl *T, oxide_value *cond, oxide_type *t, oxide_value *otherwise, oxide_block **join,
                    oxide_value **joined) {
    oxide_block *then = NULL;
    oxide_status st = T->st ? T->st : oxide_function_add_block(T->k, NULL, 0, &then, NULL);
    if (!st)
        st = oxide_function_add_block(T->k, t ? &t : NULL, t ? 1 : 0, join, joined);
    if (!st)
        st = oxide_build_cond_br(T->b, cond, then, NULL, 0, *join, t ? &otherwise : NULL, t ? 1 : 0);
    if (st && !T->st)
        tl_fail(T, OXIDE_ERROR_CODEGEN, "the lowering built an invalid branch: %s", oxide_last_error());
    T->b = then;
    return !T->st;
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
    oxide_value **vals = scratch(T, &r->L), **elems = scratch(T, &r->L);
    if (!(r->regs = tl_new_regs(T, &r->L)) || !vals || !elems)
        return;
    part s;
    thread_part(T, in, &r->L, &s);
    uint32_t es = tl_elem_bytes(et), n = vec_regs(&r->L, es), nregs = 1u << r->L.nreg;
    oxide_type *vt = et;
    if (n > 1 && oxide_type_vector(T->ctx, et, n, &vt))
        tl_fail(T, OXIDE_ERROR_CODEGEN, "no %u-element vector of %s", n, et->name);
    /* the paths meet with whole vectors where they pack (ptxas keeps 16-bit values meeting one
     * by one in local memory) */
    uint32_t vbits = n * oxide__type_bits(et), w = n > 1 && (vbits == 32 || vbits == 64 || vbits == 128) ? n : 1;
    oxide_value *first = first_address(T, &s, et);
    oxide_block *fast = NULL, *slow = NULL, *join = NULL;
    /* a thread whose elements are all inside loads them unchecked, as vectors where its registers
     * run along a last dim of stride 1; the others load each element inside under a branch of its
     * own (a predicated load once assembled), the pad where it is outside. A select of the address
     * instead (loading from the tensor's first element where outside) lets ptxas compute every
     * address first and keep them all live: the edge path then set the kernel's register count */
    if (!tl_split(T, all_inside(T, &s, &r->L, first, n, es, NULL), &fast, &slow, &join, w > 1 ? vt : et, nregs / w,
                  vals))
        return;
    oxide_attr val = {.key = OXIDE_ATTR_ALIGN, .i = es * n}, al = {.key = OXIDE_ATTR_ALIGN, .i = es};
    T->b = fast;
    for (uint32_t g = 0; g < nregs && !T->st; g += n) {
        oxide_value *p = inside_address(T, &s, &r->L, first, g, et, n > 1);
        oxide_value *v = tl_op(T, OXIDE_OP_LOAD, &p, 1, vt, &val, 1);
        for (uint32_t i = 0; i < n; i += w)
            elems[(g + i) / w] = n > w ? tl_imm_op(T, OXIDE_OP_EXTRACT, i, et, &v, 1) : v;
    }
    tl_go_to(T, join, elems, nregs / w);
    /* the edge: a vector wholly inside (and aligned) loads whole, the others element by element,
     * each inserted into a vector of pads under a branch of its own. Loaded one by one for the
     * whole part and packed at the end, the elements took a register each, on top of what is live
     * across the load: a bf16 layernorm's load of b, 8192 columns at 8 warps, set the kernel's
     * count at 113 registers (96 so; 58 with no edge path at all) */
    T->b = slow;
    element_path(T, &s);
    oxide_value *pads[8], *whole = w > 1 ? vectors_aligned(T, &s, first, n, es) : NULL;
    for (uint32_t i = 0; i < w; i++)
        pads[i] = pad;
    for (uint32_t g = 0; g < nregs && !T->st; g += w) {
        oxide_block *vec = NULL, *each = NULL, *got = NULL;
        if (w > 1) {
            oxide_value *in =
                tl_op2(T, OXIDE_OP_AND, elem_inside(T, &s, &r->L, g, NULL), elem_inside(T, &s, &r->L, g + w - 1, NULL));
            if (!tl_split(T, tl_op2(T, OXIDE_OP_AND, whole, in), &vec, &each, &got, vt, 1, &elems[g / w]))
                return;
            T->b = vec;
            oxide_value *p = inside_address(T, &s, &r->L, first, g, et, true);
            oxide_value *v = tl_op(T, OXIDE_OP_LOAD, &p, 1, vt, &val, 1);
            tl_go_to(T, got, &v, 1);
            T->b = each;
        }
        oxide_value *v = w > 1 ? tl_pack(T, pads, w) : pad;
        for (uint32_t i = 0; i < w; i++) {
            oxide_block *next = NULL;
            oxide_value *left = v;
            if (!when_or(T, elem_inside(T, &s, &r->L, g + i, NULL), w > 1 ? vt : et, left, &next, &v))
                return;
            oxide_value *p = inside_address(T, &s, &r->L, first, g + i, et, false);
            oxide_value *o[2] = {left, tl_op(T, OXIDE_OP_LOAD, &p, 1, et, &al, 1)};
            tl_go_to(T, next, (oxide_value *[]){w > 1 ? tl_imm_op(T, OXIDE_OP_INSERT, i, NULL, o, 2) : o[1]}, 1);
            T->b = next;
        }
        if (w > 1) {
            tl_go_to(T, got, &v, 1);
            T->b = got;
        } else
            elems[g] = v;
    }
    tl_go_to(T, join, elems, nregs / w);
    T->b = join;
    for (uint32_t g = 0; g < nregs && !T->st; g++)
        r->regs[g] = w > 1 ? tl_imm_op(T, OXIDE_OP_EXTRACT, g % w, et, &vals[g / w], 1) : vals[g];
}

bool tl_when(tl *T, oxide_value *cond, oxide_block **join) { return when_or(T, cond, NULL, NULL, join, NULL); }

static void put(tl *T, bool atomic, oxide_value *v, oxide_value *p, const oxide_attr *align) {
    oxide_value *o[2] = {atomic ? p : v, atomic ? v : p};
    tl_op(T, atomic ? OXIDE_OP_ATOMIC_ADD : OXIDE_OP_STORE, o, 2, NULL, atomic ? NULL : align, atomic ? 0 : 1);
}

void tl_emit_store(tl *T, const oxide_inst *in, bool atomic) {
    const oxide_value *tile = in->operands[in->noperands - 1];
    tl_layout tmp, L = *tl_layout_of(T, tile, &tmp);
    oxide_type *et = tl_elem(T, tile->type);
    oxide_value **v = tl_regs_in(T, tile, &L);
    if (!v || (!atomic && tl_tma_store(T, in, v, &L)))
        return;
    part s;
    thread_part(T, in, &L, &s);
    uint32_t es = tl_elem_bytes(et), n = atomic ? 1 : vec_regs(&L, es), nregs = 1u << L.nreg;
    oxide_value *first = first_address(T, &s, et);
    /* an atomic add must not add the copies other threads own; a plain store may write them */
    oxide_value *own = atomic ? tl_is_owner(T, &L) : NULL;
    oxide_block *fast = NULL, *slow = NULL, *join = NULL, *next = NULL;
    if (!tl_split(T, all_inside(T, &s, &L, first, n, es, own), &fast, &slow, &join, NULL, 0, NULL))
        return;
    oxide_attr val = {.key = OXIDE_ATTR_ALIGN, .i = es * n}, al = {.key = OXIDE_ATTR_ALIGN, .i = es};
    T->b = fast;
    for (uint32_t g = 0; g < nregs && !T->st; g += n)
        put(T, atomic, n > 1 ? tl_pack(T, &v[g], n) : v[g], inside_address(T, &s, &L, first, g, et, n > 1), &val);
    tl_go_to(T, join, NULL, 0);
    /* the edge: each element stored only where it is inside (a predicated store once assembled) */
    T->b = slow;
    element_path(T, &s);
    for (uint32_t g = 0; g < nregs && tl_when(T, elem_inside(T, &s, &L, g, own), &next); g++) {
        put(T, atomic, v[g], inside_address(T, &s, &L, first, g, et, false), &al);
        tl_go_to(T, next, NULL, 0);
        T->b = next;
    }
    tl_go_to(T, join, NULL, 0);
    T->b = join;
}
