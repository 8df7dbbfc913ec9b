/* The verifier's op-specific rules (rules 5 and 7, see lib/verify.c) for the core ops, one
 * function per group of ops.def sections; the tier-2 ops are in lib/verify_hopper.c. */
#include <stdio.h>
#include <string.h>

#include "verify.h"

/* ---- rule 1: result types of ops whose result the builder gives explicitly ---- */

/* The rule one cast applies to scalars (or to vector elements); NULL if from -> to is fine. */
static const char *cast_rule(oxide_op op, const oxide_type *from, const oxide_type *to) {
    unsigned fb = bits(from), tb = bits(to);
    switch (op) {
    case OXIDE_OP_TRUNC: return is_int(from) && is_int(to) && tb < fb ? NULL : "needs an integer to a narrower integer";
    case OXIDE_OP_ZEXT:
    case OXIDE_OP_SEXT: return is_int(from) && is_int(to) && tb > fb ? NULL : "needs an integer to a wider integer";
    case OXIDE_OP_FPTRUNC:
        return is_float(from) && is_float(to) && tb < fb ? NULL : "needs a float to a narrower float";
    case OXIDE_OP_FPEXT: return is_float(from) && is_float(to) && tb > fb ? NULL : "needs a float to a wider float";
    case OXIDE_OP_FPTOUI:
    case OXIDE_OP_FPTOSI:
        if (!is_float(from) || !is_int(to))
            return "needs a float to an integer";
        /* LLVM 22's NVPTX backend aborts the process ("unsupported library call operation"):
         * there is no i128 conversion routine on the GPU. */
        return tb > 64 ? "to i128 is not supported on NVPTX" : NULL;
    case OXIDE_OP_UITOFP:
    case OXIDE_OP_SITOFP:
        if (!is_int(from) || !is_float(to))
            return "needs an integer to a float";
        return fb > 64 ? "from i128 is not supported on NVPTX" : NULL;
    case OXIDE_OP_PTRTOINT: return is_ptr(from) && is_int(to) ? NULL : "needs a pointer to an integer";
    case OXIDE_OP_INTTOPTR: return is_int(from) && is_ptr(to) ? NULL : "needs an integer to a pointer";
    case OXIDE_OP_ADDRSPACECAST:
        if (!is_ptr(from) || !is_ptr(to))
            return "needs a pointer to a pointer";
        if (from->addrspace == to->addrspace)
            return "needs two different address spaces";
        /* NVPTX converts between a specific space and generic only (cvta / cvta.to). */
        if (from->addrspace != OXIDE_AS_GENERIC && to->addrspace != OXIDE_AS_GENERIC)
            return "needs one side to be the generic space (cast through ptr)";
        return NULL;
    default: return NULL;
    }
}

static void check_cast(verifier *v, const oxide_inst *in, const oxide_type *from, const oxide_type *to) {
    if (in->op == OXIDE_OP_BITCAST) {
        bool fp = is_ptr(from) || (is_kind(from, OXIDE_TYPE_VECTOR) && is_ptr(from->elem));
        bool tp = is_ptr(to) || (is_kind(to, OXIDE_TYPE_VECTOR) && is_ptr(to->elem));
        bool fagg = is_kind(from, OXIDE_TYPE_ARRAY) || is_kind(from, OXIDE_TYPE_STRUCT) || !is_sized(from);
        bool tagg = is_kind(to, OXIDE_TYPE_ARRAY) || is_kind(to, OXIDE_TYPE_STRUCT) || !is_sized(to);
        if (fagg || tagg)
            verify_report(v, "cannot bitcast %s to %s: bitcast needs non-aggregate types", tname(from), tname(to));
        else if (fp || tp) {
            /* LLVM rejects pointer <-> non-pointer bitcasts; those are ptrtoint/inttoptr. */
            if (!(is_ptr(from) && is_ptr(to) && from->addrspace == to->addrspace))
                verify_report(v, "cannot bitcast %s to %s: use ptrtoint, inttoptr or addrspacecast for pointers",
                              tname(from), tname(to));
        } else if (oxide__type_size(from) * 8 != oxide__type_size(to) * 8 ||
                   (bits(from) && bits(to) && bits(from) != bits(to)))
            verify_report(v, "cannot bitcast %s to %s: sizes differ", tname(from), tname(to));
        return;
    }
    const oxide_type *fe = from, *te = to;
    if (is_kind(from, OXIDE_TYPE_VECTOR) || is_kind(to, OXIDE_TYPE_VECTOR)) {
        if (!is_kind(from, OXIDE_TYPE_VECTOR) || !is_kind(to, OXIDE_TYPE_VECTOR) || from->count != to->count) {
            verify_report(v, "cannot cast %s to %s: a vector casts to a vector of the same length", tname(from),
                          tname(to));
            return;
        }
        fe = from->elem;
        te = to->elem;
    }
    const char *why = cast_rule(in->op, fe, te);
    if (why)
        verify_report(v, "cannot cast %s to %s: '%s' %s", tname(from), tname(to), op_name(in->op), why);
}

/* Element type at index idx of an aggregate, or NULL (with *why set). */
static const oxide_type *aggregate_elem(const oxide_type *agg, int64_t idx, const char **why) {
    if (!agg || (agg->kind != OXIDE_TYPE_VECTOR && agg->kind != OXIDE_TYPE_ARRAY && agg->kind != OXIDE_TYPE_STRUCT)) {
        *why = "not a vector, array or struct";
        return NULL;
    }
    uint64_t n = agg->kind == OXIDE_TYPE_STRUCT ? agg->nfields : agg->count;
    if (idx < 0 || (uint64_t)idx >= n) {
        *why = "index out of bounds";
        return NULL;
    }
    return agg->kind == OXIDE_TYPE_STRUCT ? agg->fields[idx] : agg->elem;
}
/* ---- rule 5: what each address space allows ---- */

typedef enum { ACC_LOAD, ACC_STORE, ACC_ATOMIC } access_kind;

static bool check_space(verifier *v, const oxide_type *ptr, access_kind acc, unsigned operand) {
    if (!is_ptr(ptr))
        return true; /* type errors are reported by the operand check */
    uint32_t as = ptr->addrspace;
    switch (acc) {
    case ACC_LOAD: return true;
    case ACC_STORE:
        if (as == OXIDE_AS_CONSTANT || as == OXIDE_AS_PARAM) {
            verify_report(v, "operand %u: cannot store through a %s pointer (%s memory is read-only)", operand,
                          tname(ptr), verify_as_name(as));
            return false;
        }
        return true;
    case ACC_ATOMIC:
        /* PTX atom/red address generic, global and shared memory only; LLVM aborts on an
         * atomicrmw in constant space ("Cannot select: AtomicLoadAdd"). */
        if (as != OXIDE_AS_GENERIC && as != OXIDE_AS_GLOBAL && as != OXIDE_AS_SHARED) {
            verify_report(v, "operand %u: atomics need a generic, global or shared pointer, got %s", operand,
                          tname(ptr));
            return false;
        }
        return true;
    }
    return true;
}

/* ---- rule 7: op-specific checks ---- */

static bool is_lane_mask_op(oxide_op op) {
    return (op >= OXIDE_OP_SHFL_IDX && op <= OXIDE_OP_MATCH_ANY) ||
           (op >= OXIDE_OP_REDUX_ADD && op <= OXIDE_OP_REDUX_XOR) || op == OXIDE_OP_ELECT_SYNC;
}

static const oxide_type *elem_type(const oxide_type *t) {
    return is_kind(t, OXIDE_TYPE_VECTOR) && t->elem ? t->elem : t;
}

/* Integers PTX atomics and warp matches work on (narrower ones are widened or emulated by the
 * lowering; i1 has no memory form and nothing here is 128 bits wide on sm_80). */
static bool is_int_8_to_64(const oxide_type *t) { return is_int(t) && bits(t) >= 8 && bits(t) <= 64; }
static bool is_f32_or_f64(const oxide_type *t) { return is_kind(t, OXIDE_TYPE_F32) || is_kind(t, OXIDE_TYPE_F64); }

/* Scalar types an atomic load/store/exchange moves in one PTX access: integers of 8 to 64 bits,
 * floats, pointers. (i1 has no memory form; i128 atomics are "unsupported atomic load" in
 * LLVM 22.) */
static bool atomic_mem_type(const oxide_type *t) { return is_int_8_to_64(t) || is_float(t) || is_ptr(t); }

static void check_call(verifier *v, const oxide_inst *in) {
    if (!in->sym) {
        verify_report(v, "call has no callee (attribute sym is missing)");
        return;
    }
    oxide_function *callee = oxide__module_find_function(v->mod, in->sym);
    if (!callee) {
        verify_report(v, "call to @%s: no function of that name in module @%s", in->sym,
                      v->mod->name ? v->mod->name : "");
        return;
    }
    if (callee->is_kernel) {
        verify_report(v, "call to @%s: it is a kernel; only device functions can be called", in->sym);
        return;
    }
    if (in->noperands != callee->params.len) {
        verify_report(v, "call to @%s: expected %u argument%s, got %u", in->sym, callee->params.len,
                      plural(callee->params.len), in->noperands);
        return;
    }
    for (uint32_t i = 0; i < in->noperands; i++) {
        const oxide_value *a = in->operands[i], *p = callee->params.items[i];
        if (a && p && !verify_type_eq(a->type, p->type)) {
            verify_report(v, "call to @%s: operand %u must be %s, got %s", in->sym, i, tname(p->type), tname(a->type));
            return;
        }
    }
    bool is_void = !callee->ret || callee->ret->kind == OXIDE_TYPE_VOID;
    if (is_void && in->result)
        verify_report(v, "call to @%s: the function returns nothing, but the call has a %s result", in->sym,
                      tname(in->result->type));
    else if (!is_void && !in->result)
        verify_report(v, "call to @%s: the function returns %s, but the call has no result", in->sym,
                      tname(callee->ret));
    else if (!is_void && !verify_type_eq(in->result->type, callee->ret))
        verify_report(v, "call to @%s: result must be %s, got %s", in->sym, tname(callee->ret),
                      tname(in->result->type));
}

/* synchronisation, atomics, warp, cluster and debug */
static bool check_sync_op(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_type *res = result_type(in), *t0 = operand_type(in, 0), *t1 = operand_type(in, 1);
    switch (in->op) {
    case OXIDE_OP_BARRIER:
    case OXIDE_OP_BARRIER_COUNT:
        /* PTX has 16 named barriers per CTA. */
        if (in->imm < 0 || in->imm > 15) {
            verify_report(v, "barrier id %lld is outside 0..15", (long long)in->imm);
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_ADD:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        /* PTX atom.add has f32 and f64 (f16 only as packed f16x2, which oxide does not model) */
        if (is_float(row) ? !is_f32_or_f64(row) : !is_int_8_to_64(row)) {
            verify_report(v, "supports integers of 8 to 64 bits, f32 and f64, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_SUB:
    case OXIDE_OP_ATOMIC_AND:
    case OXIDE_OP_ATOMIC_OR:
    case OXIDE_OP_ATOMIC_XOR:
    case OXIDE_OP_ATOMIC_MIN:
    case OXIDE_OP_ATOMIC_MAX:
    case OXIDE_OP_ATOMIC_UMIN:
    case OXIDE_OP_ATOMIC_UMAX:
    case OXIDE_OP_ATOMIC_CAS:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!is_int_8_to_64(row)) {
            verify_report(v, "supports integers of 8 to 64 bits, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_EXCH:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!atomic_mem_type(row)) {
            verify_report(v, "supports integers of 8 to 64 bits, floats and pointers, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_LOAD:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!atomic_mem_type(res)) {
            verify_report(v, "an atomic load needs an integer (8 to 64 bits), float or pointer result, got %s",
                          tname(res));
            return false;
        }
        if (in->order == OXIDE_ORDER_RELEASE || in->order == OXIDE_ORDER_ACQ_REL) {
            verify_report(v, "an atomic load cannot have %s ordering", oxide__order_names[in->order]);
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_STORE:
        if (!check_space(v, t1, ACC_ATOMIC, 1))
            return false;
        if (!atomic_mem_type(t0)) {
            verify_report(v, "an atomic store needs an integer (8 to 64 bits), float or pointer value, got %s",
                          tname(t0));
            return false;
        }
        if (in->order == OXIDE_ORDER_ACQUIRE || in->order == OXIDE_ORDER_ACQ_REL) {
            verify_report(v, "an atomic store cannot have %s ordering", oxide__order_names[in->order]);
            return false;
        }
        return true;
    case OXIDE_OP_SHFL_IDX:
    case OXIDE_OP_SHFL_UP:
    case OXIDE_OP_SHFL_DOWN:
    case OXIDE_OP_SHFL_XOR:
        /* shfl.sync moves a 32-bit register; the lowering widens narrower values and splits
         * 64-bit ones in two, and has nothing for wider ones. */
        if (!(is_int(row) || is_float(row) || is_ptr(row) || is_kind(row, OXIDE_TYPE_VECTOR)) ||
            oxide__type_size(row) > 8) {
            verify_report(v, "moves at most 64 bits (an integer, float, pointer or small vector), got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_MATCH_ANY:
        /* match.any.sync has .b32 and .b64 forms; narrower integers are widened */
        if (!is_int(row) || bits(row) > 64) {
            verify_report(v, "supports integers of up to 64 bits, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_MAP_SHARED:
        /* mapa takes a shared-window or generic address of this CTA's shared memory. */
        if (is_ptr(t0) && t0->addrspace != OXIDE_AS_SHARED && t0->addrspace != OXIDE_AS_GENERIC) {
            verify_report(v, "operand 0 must be a ptr.shared or generic pointer, got %s", tname(t0));
            return false;
        }
        return true;
    case OXIDE_OP_PRINTF:
        if (!in->str) {
            verify_report(v, "printf has no format string (attribute str is missing)");
            return false;
        }
        for (uint32_t i = 0; i < in->noperands; i++) {
            const oxide_type *t = in->operands[i]->type;
            /* vprintf takes a buffer of C-promoted scalars: nothing wider than 64 bits, no i1. */
            bool ok = (is_int(t) && bits(t) >= 8 && bits(t) <= 64) || is_float(t) || is_ptr(t);
            if (!ok) {
                verify_report(v,
                              "operand %u: printf arguments must be integers of 8 to 64 bits, floats or pointers, "
                              "got %s",
                              i, tname(t));
                return false;
            }
        }
        return true;
    default: return verify_hopper_op(v, in, row);
    }
}

/* memory and control */
static bool check_memory_op(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_type *res = result_type(in), *t0 = operand_type(in, 0), *t1 = operand_type(in, 1);
    unsigned e0 = v->nerrors;
    switch (in->op) {
    case OXIDE_OP_LOAD:
        if (!is_sized(res)) {
            verify_report(v, "a load needs a sized result type, got %s", tname(res));
            return false;
        }
        return check_space(v, t0, ACC_LOAD, 0);
    case OXIDE_OP_STORE:
        if (!is_sized(t0)) {
            verify_report(v, "operand 0: cannot store a value of type %s", tname(t0));
            return false;
        }
        return check_space(v, t1, ACC_STORE, 1);
    case OXIDE_OP_OFFSET:
        if (!is_sized(in->elem)) {
            verify_report(v, "offset needs a sized element type (attribute elem), got %s", tname(in->elem));
            return false;
        }
        if (!is_int(t1) || bits(t1) > 64) {
            verify_report(v, "operand 1: the index must be an integer of up to 64 bits, got %s", tname(t1));
            return false;
        }
        return true;
    case OXIDE_OP_ALLOCA:
        if (!is_sized(in->elem)) {
            verify_report(v, "alloca needs a sized element type (attribute elem), got %s", tname(in->elem));
            return false;
        }
        return true;
    case OXIDE_OP_GLOBAL_ADDR: {
        if (!in->sym) {
            verify_report(v, "global.addr has no symbol (attribute sym is missing)");
            return false;
        }
        const oxide_global *g = oxide__module_find_global(v->mod, in->sym);
        if (!g) {
            verify_report(v, "no global named @%s in module @%s", in->sym, v->mod->name ? v->mod->name : "");
            return false;
        }
        if (!is_ptr(res) || res->addrspace != (uint32_t)g->as) {
            verify_report(v, "the address of @%s (a %s global) is a ptr.%s, but the result is %s", in->sym,
                          verify_as_name(g->as), verify_as_name(g->as), tname(res));
            return false;
        }
        return true;
    }
    case OXIDE_OP_DYN_SMEM:
        if (!is_ptr(res) || res->addrspace != OXIDE_AS_SHARED) {
            verify_report(v, "dynamic shared memory is addressed by a ptr.shared, but the result is %s", tname(res));
            return false;
        }
        return true;
    case OXIDE_OP_CALL: check_call(v, in); return v->nerrors == e0;
    default: return check_sync_op(v, in, row);
    }
}

/* constants, arithmetic, casts and aggregates */
static bool check_value_op(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_type *res = result_type(in), *t0 = operand_type(in, 0), *t1 = operand_type(in, 1);
    unsigned e0 = v->nerrors;
    switch (in->op) {
    case OXIDE_OP_CONST:
        if (res && oxide__type_is_zeroable(res)) {
            /* an aggregate constant is all zeros: the first value of a fragment built up by insert */
            if (in->ivalue || in->fvalue != 0.0) {
                verify_report(v, "a constant of type %s must be 0 (aggregates are zero-initialized only)", tname(res));
                return false;
            }
            return true;
        }
        if (!is_int(res) && !is_float(res)) {
            verify_report(v, "a constant must be an integer or float scalar, or a vector or array of them, got %s",
                          tname(res));
            return false;
        }
        if (is_int(res) && bits(res) < 64) {
            unsigned b = bits(res);
            int64_t lo = b == 1 ? -1 : -((int64_t)1 << (b - 1));
            int64_t hi = (int64_t)(((uint64_t)1 << b) - 1);
            if (in->ivalue < lo || in->ivalue > hi) {
                verify_report(v, "value %lld does not fit in %s", (long long)in->ivalue, tname(res));
                return false;
            }
        }
        return true;
    case OXIDE_OP_ICMP:
    case OXIDE_OP_FCMP:
        if (row && row->kind == OXIDE_TYPE_VECTOR) {
            verify_report(v, "cannot compare vectors (%s): the result is a single i1", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_TRUNC:
    case OXIDE_OP_ZEXT:
    case OXIDE_OP_SEXT:
    case OXIDE_OP_FPTRUNC:
    case OXIDE_OP_FPEXT:
    case OXIDE_OP_FPTOUI:
    case OXIDE_OP_FPTOSI:
    case OXIDE_OP_UITOFP:
    case OXIDE_OP_SITOFP:
    case OXIDE_OP_PTRTOINT:
    case OXIDE_OP_INTTOPTR:
    case OXIDE_OP_BITCAST:
    case OXIDE_OP_ADDRSPACECAST: check_cast(v, in, t0, res); return v->nerrors == e0;
    case OXIDE_OP_EXTRACT: {
        const char *why = NULL;
        const oxide_type *el = aggregate_elem(t0, in->imm, &why);
        if (!el)
            verify_report(v, "cannot extract element %lld from %s: %s", (long long)in->imm, tname(t0), why);
        else if (!verify_type_eq(el, res))
            verify_report(v, "element %lld of %s is %s, but the result is %s", (long long)in->imm, tname(t0), tname(el),
                          tname(res));
        return v->nerrors == e0;
    }
    case OXIDE_OP_INSERT: {
        const char *why = NULL;
        const oxide_type *el = aggregate_elem(t0, in->imm, &why);
        if (!el)
            verify_report(v, "cannot insert element %lld into %s: %s", (long long)in->imm, tname(t0), why);
        else if (!verify_type_eq(el, t1))
            verify_report(v, "element %lld of %s is %s, but operand 1 is %s", (long long)in->imm, tname(t0), tname(el),
                          tname(t1));
        return v->nerrors == e0;
    }
    default: return check_memory_op(v, in, row);
    }
}

/* Returns false after reporting the instruction's first problem. */
bool verify_op_specific(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_op op = in->op;
    const oxide_op_info *info = &oxide_ops[op];
    unsigned e0 = v->nerrors;

    /* attribute ranges (IR from elsewhere may hold anything) */
    if ((info->attrs & A_SCOPE) && (unsigned)in->scope > OXIDE_SCOPE_SYS)
        verify_report(v, "scope %d is not a scope", (int)in->scope);
    else if ((info->attrs & A_ORDER) && (unsigned)in->order > OXIDE_ORDER_SEQ_CST)
        verify_report(v, "order %d is not a memory order", (int)in->order);
    else if (op == OXIDE_OP_ICMP && (unsigned)in->pred > OXIDE_PRED_UGE)
        verify_report(v, "predicate %d is not an integer comparison", (int)in->pred);
    else if (op == OXIDE_OP_FCMP && ((unsigned)in->pred < OXIDE_PRED_OEQ || (unsigned)in->pred > OXIDE_PRED_FUGE))
        verify_report(v, "predicate %d is not a float comparison", (int)in->pred);
    else if ((info->attrs & A_ALIGN) && in->align && (!is_pow2(in->align) || in->align > 65536))
        verify_report(v, "align %u is not a power of two up to 65536", in->align);
    else if ((info->attrs & A_SCOPE) && in->scope == OXIDE_SCOPE_CLUSTER)
        verify_need_sm(v, 90, "scope 'cluster'");
    else if (is_lane_mask_op(op) && (in->imm < 0 || in->imm > (int64_t)UINT32_MAX))
        verify_report(v, "lane mask 0x%llx does not fit in 32 bits", (unsigned long long)in->imm);
    if (v->nerrors != e0)
        return false;

    /* The PTX approximations exist in .f32 only. The lowering computes f16/bf16 in f32, which
     * loses nothing, but would silently cut f64 to f32. */
    if (oxide__ends(info->name, ".approx") && row && elem_type(row)->kind == OXIDE_TYPE_F64) {
        verify_report(v,
                      "computes in f32 (PTX has only .f32 approximations), got %s; use the exact op or convert "
                      "explicitly",
                      tname(row));
        return false;
    }

    /* each group hands the ops it does not know to the next, ending with the tier-2 ops */
    return check_value_op(v, in, row);
}
