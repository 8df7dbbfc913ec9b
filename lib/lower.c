/* Lowering of oxide IR (lib/ir.h) to LLVM IR for the NVPTX backend.
 *
 * One LLVM function per oxide function, block parameters as phis, and each op as its ops.def row
 * says (LLVM instruction, intrinsic, libdevice call or PTX inline asm). docs/pipeline.md records
 * the choices that are not obvious from the table (atomics, fast-math flags, line info). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "cfg.h"
#include "lower.h"

oxide_status lw_fail(lw *L, oxide_status st, const char *fmt, ...) {
    if (L->st)
        return L->st;
    va_list ap;
    va_start(ap, fmt);
    oxide__vfail(st, fmt, ap);
    va_end(ap);
    L->st = st;
    return st;
}

/* ---- types ---- */

struct lw_type_memo {
    const oxide_type *key;
    LLVMTypeRef val;
};

static struct lw_type_memo *memo_slot(lw *L, const oxide_type *t) {
    size_t h = ((uintptr_t)t >> 4) * 0x9e3779b97f4a7c15ull;
    for (size_t i = h & (L->tmemo_cap - 1);; i = (i + 1) & (L->tmemo_cap - 1))
        if (L->tmemo[i].key == t || !L->tmemo[i].key)
            return &L->tmemo[i];
}

static LLVMTypeRef lower_type(lw *L, const oxide_type *t);

LLVMTypeRef lw_type(lw *L, const oxide_type *t) {
    if (t->kind != OXIDE_TYPE_STRUCT && t->kind != OXIDE_TYPE_ARRAY && t->kind != OXIDE_TYPE_VECTOR)
        return lower_type(L, t);
    if ((L->tmemo_len + 1) * 2 > L->tmemo_cap) {
        uint32_t cap = L->tmemo_cap ? L->tmemo_cap * 2 : 64;
        struct lw_type_memo *old = L->tmemo, *grown = calloc(cap, sizeof *grown);
        if (!grown) {
            lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering type %s", t->name);
            return L->ti8;
        }
        uint32_t old_cap = L->tmemo_cap;
        L->tmemo = grown;
        L->tmemo_cap = cap;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old[i].key)
                *memo_slot(L, old[i].key) = old[i];
        free(old);
    }
    if (t->leaves > OXIDE_TYPE_MAX_LEAVES) {
        lw_fail(L, OXIDE_ERROR_UNSUPPORTED,
                "type %s nests %llu scalar fields; at most %u are lowered (flatten it, or use arrays)", t->name,
                (unsigned long long)t->leaves, OXIDE_TYPE_MAX_LEAVES);
        return L->ti8;
    }
    struct lw_type_memo *m = memo_slot(L, t);
    if (!m->key) {
        LLVMTypeRef v = lower_type(L, t);
        m = memo_slot(L, t); /* the recursion may have grown the table */
        *m = (struct lw_type_memo){t, v};
        L->tmemo_len++;
    }
    return m->val;
}

static LLVMTypeRef lower_type(lw *L, const oxide_type *t) {
    switch (t->kind) {
    case OXIDE_TYPE_VOID: return L->tvoid;
    case OXIDE_TYPE_I1: return L->ti1;
    case OXIDE_TYPE_I8: return L->ti8;
    case OXIDE_TYPE_I16: return L->ti16;
    case OXIDE_TYPE_I32: return L->ti32;
    case OXIDE_TYPE_I64: return L->ti64;
    case OXIDE_TYPE_I128: return LLVMIntTypeInContext(L->c, 128);
    case OXIDE_TYPE_F16: return LLVMHalfTypeInContext(L->c);
    case OXIDE_TYPE_BF16: return LLVMBFloatTypeInContext(L->c);
    case OXIDE_TYPE_F32: return L->tf32;
    case OXIDE_TYPE_F64: return L->tf64;
    case OXIDE_TYPE_PTR: return LLVMPointerTypeInContext(L->c, t->addrspace);
    case OXIDE_TYPE_VECTOR: return LLVMVectorType(lw_type(L, t->elem), (unsigned)t->count);
    case OXIDE_TYPE_ARRAY: return LLVMArrayType2(lw_type(L, t->elem), t->count);
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2:
    case OXIDE_TYPE_TILE:
    case OXIDE_TYPE_TENSOR: /* the verifier keeps these in tile kernels, which compile refuses */
        lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "type %s has no SIMT lowering", t->name);
        return L->ti8;
    case OXIDE_TYPE_STRUCT: {
        LLVMTypeRef small[16], *f = t->nfields <= 16 ? small : malloc(t->nfields * sizeof *f);
        if (!f) {
            lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering type %s", t->name);
            return L->ti8;
        }
        for (uint32_t i = 0; i < t->nfields; i++)
            f[i] = lw_type(L, t->fields[i]);
        LLVMTypeRef s = LLVMStructTypeInContext(L->c, f, t->nfields, 0);
        if (f != small)
            free(f);
        return s;
    }
    }
    return L->ti8;
}

/* ---- small helpers ---- */

void lw_fp_flags(lw *L, LLVMValueRef inst) {
    if (!LLVMIsAInstruction(inst) || !LLVMCanValueUseFastMathFlags(inst))
        return;
    /* contract always: the same as nvcc's default --fmad=true, so a*b+c becomes fma. */
    LLVMFastMathFlags f = LLVMFastMathAllowContract;
    if (L->opts->fast_math)
        f |=
            LLVMFastMathAllowReassoc | LLVMFastMathAllowReciprocal | LLVMFastMathApproxFunc | LLVMFastMathNoSignedZeros;
    LLVMSetFastMathFlags(inst, f);
}

/* Looking an intrinsic up by name, mangling its overloads and finding its declaration cost 4,600
 * instructions a call, a fifth of lowering (sgemm makes 512 fma calls), so each declaration made
 * is remembered by name and overload types; the declaration LLVM returns for them is the same. */
enum { IMEMO_SLOTS = 32, IMEMO_NAME = 64, IMEMO_OVER = 2 };
struct lw_intrinsic {
    char name[IMEMO_NAME];
    LLVMTypeRef over[IMEMO_OVER];
    size_t nover;
    LLVMValueRef f;
    LLVMTypeRef fty;
};

static struct lw_intrinsic *intrinsic_slot(lw *L, const char *name, LLVMTypeRef *over, size_t nover) {
    size_t len = strlen(name);
    if (len >= IMEMO_NAME || nover > IMEMO_OVER || (!L->imemo && !(L->imemo = calloc(IMEMO_SLOTS, sizeof *L->imemo))))
        return NULL;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
    for (size_t i = 0; i < nover; i++)
        h = (h ^ (uintptr_t)over[i]) * 0x100000001b3ull;
    return &L->imemo[(h >> 32) & (IMEMO_SLOTS - 1)];
}

LLVMValueRef lw_call_intrinsic(lw *L, const char *name, LLVMTypeRef *over, size_t nover, LLVMValueRef *args,
                               unsigned nargs) {
    struct lw_intrinsic *e = intrinsic_slot(L, name, over, nover);
    bool hit = e && e->f && e->nover == nover && !strcmp(e->name, name);
    for (size_t i = 0; hit && i < nover; i++)
        hit = e->over[i] == over[i];
    if (hit)
        return LLVMBuildCall2(L->b, e->fty, e->f, args, nargs, "");
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        lw_fail(L, OXIDE_ERROR_CODEGEN, "LLVM 22 has no intrinsic named %s", name);
        return NULL;
    }
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(L->m, id, over, nover);
    LLVMTypeRef fty = LLVMIntrinsicGetType(L->c, id, over, nover);
    if (e) {
        strcpy(e->name, name);
        if (nover) /* over may be NULL then */
            memcpy(e->over, over, nover * sizeof *over);
        e->nover = nover;
        e->f = f;
        e->fty = fty;
    }
    return LLVMBuildCall2(L->b, fty, f, args, nargs, "");
}

LLVMValueRef lw_declare_fn(lw *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, bool vararg) {
    LLVMValueRef f = LLVMGetNamedFunction(L->m, name);
    if (f)
        return f;
    return LLVMAddFunction(L->m, name, LLVMFunctionType(ret, params, n, vararg));
}

LLVMValueRef lw_call_fn(lw *L, LLVMValueRef f, LLVMValueRef *args, unsigned n) {
    return LLVMBuildCall2(L->b, LLVMGlobalGetValueType(f), f, args, n, "");
}

/* A new alloca at the top of the entry block, where SROA and the NVPTX local-memory lowering
 * expect them; the generic pointer to it is made at the current position. */
LLVMValueRef lw_entry_alloca(lw *L, LLVMTypeRef ty, unsigned align) {
    LLVMBuilderRef ab = LLVMCreateBuilderInContext(L->c);
    LLVMValueRef first = LLVMGetFirstInstruction(L->entry);
    if (first)
        LLVMPositionBuilderBefore(ab, first);
    else
        LLVMPositionBuilderAtEnd(ab, L->entry);
    LLVMValueRef a = LLVMBuildAlloca(ab, ty, "");
    LLVMDisposeBuilder(ab);
    if (align)
        LLVMSetAlignment(a, align);
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(a)) != 0)
        a = LLVMBuildAddrSpaceCast(L->b, a, L->tptr, "");
    return a;
}

LLVMValueRef lw_to_generic(lw *L, LLVMValueRef p) {
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) == 0)
        return p;
    return LLVMBuildAddrSpaceCast(L->b, p, L->tptr, "");
}

/* A NUL-terminated string in global memory (where vprintf wants its format). */
LLVMValueRef lw_global_string(lw *L, const char *s, size_t len) {
    char name[32];
    snprintf(name, sizeof name, "oxide.str.%u", L->nstr++);
    LLVMValueRef init = LLVMConstStringInContext2(L->c, s, len, 0);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->m, LLVMTypeOf(init), name, OXIDE_AS_GLOBAL);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 1);
    return g;
}

/* ---- terminators and block parameters ---- */

static oxide_status add_pending(lw *L, LLVMValueRef phi, oxide_value *v, LLVMBasicBlockRef from) {
    if (L->npend == L->cappend) {
        size_t cap = L->cappend ? L->cappend * 2 : 32;
        pending_phi *p = realloc(L->pend, cap * sizeof *p);
        if (!p)
            return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", L->ofn->name);
        L->pend = p;
        L->cappend = cap;
    }
    L->pend[L->npend++] = (pending_phi){phi, v, from};
    return OXIDE_OK;
}

/* The LLVM block to branch to for successor s of a terminator in LLVM block from. A block with
 * parameters reached twice from one terminator gets an edge block, since a phi has one incoming
 * value per predecessor block. */
static LLVMBasicBlockRef edge(lw *L, const oxide_inst *term, uint32_t si, LLVMBasicBlockRef from) {
    const oxide_succ *s = &term->succ[si];
    LLVMBasicBlockRef dest = (LLVMBasicBlockRef)s->block->scratch;
    bool dup = false;
    for (uint32_t j = 0; j < si; j++)
        if (term->succ[j].block == s->block)
            dup = true;
    LLVMBasicBlockRef pred = from;
    if (dup && s->nargs) {
        LLVMBasicBlockRef e = LLVMAppendBasicBlockInContext(L->c, L->fn, "edge");
        LLVMBuilderRef eb = LLVMCreateBuilderInContext(L->c);
        LLVMPositionBuilderAtEnd(eb, e);
        LLVMBuildBr(eb, dest);
        LLVMDisposeBuilder(eb);
        pred = e;
        dest = e;
    }
    for (uint32_t k = 0; k < s->nargs; k++)
        add_pending(L, (LLVMValueRef)((oxide_value *)s->block->params.items[k])->scratch, s->args[k], pred);
    return dest;
}

static oxide_status lower_term(lw *L, const oxide_inst *in) {
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    switch (in->op) {
    case OXIDE_OP_BR: LLVMBuildBr(L->b, edge(L, in, 0, from)); break;
    case OXIDE_OP_COND_BR: {
        LLVMBasicBlockRef t = edge(L, in, 0, from), f = edge(L, in, 1, from);
        LLVMBuildCondBr(L->b, V(in->operands[0]), t, f);
        break;
    }
    case OXIDE_OP_SWITCH: {
        LLVMValueRef v = V(in->operands[0]);
        LLVMValueRef sw = LLVMBuildSwitch(L->b, v, edge(L, in, 0, from), in->nsucc - 1);
        for (uint32_t i = 1; i < in->nsucc; i++)
            LLVMAddCase(sw, LLVMConstInt(LLVMTypeOf(v), (unsigned long long)in->succ[i].case_value, 1),
                        edge(L, in, i, from));
        break;
    }
    case OXIDE_OP_RET:
        if (in->noperands)
            LLVMBuildRet(L->b, V(in->operands[0]));
        else
            LLVMBuildRetVoid(L->b);
        break;
    case OXIDE_OP_TRAP:
        lw_call_intrinsic(L, "llvm.trap", NULL, 0, NULL, 0);
        LLVMBuildUnreachable(L->b);
        break;
    default: LLVMBuildUnreachable(L->b);
    }
    return L->st;
}

/* ---- functions ---- */

static void add_attr(lw *L, LLVMValueRef fn, LLVMAttributeIndex idx, const char *name, uint64_t v) {
    LLVMAddAttributeAtIndex(fn, idx,
                            LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName(name, strlen(name)), v));
}

static void add_str_attr(lw *L, LLVMValueRef fn, const char *k, const char *v) {
    LLVMAddAttributeAtIndex(fn, (LLVMAttributeIndex)LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(L->c, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

/* Names LLVM or the lowering give a meaning of their own. */
static bool reserved_name(const char *n) {
    return !strncmp(n, "llvm.", 5) || !strncmp(n, "__nv_", 5) || !strcmp(n, "vprintf") || !strcmp(n, "__nvvm_reflect");
}

static oxide_status declare_function(lw *L, oxide_function *f) {
    L->ofn = f;
    if (reserved_name(f->name))
        return lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "@%s: the name is reserved (llvm.*, __nv_*, vprintf)", f->name);
    uint32_t np = f->params.len;
    LLVMTypeRef small[16], *pt = np <= 16 ? small : malloc(np * sizeof *pt);
    if (!pt)
        return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", f->name);
    for (uint32_t i = 0; i < np; i++)
        pt[i] = lw_type(L, ((oxide_value *)f->params.items[i])->type);
    LLVMTypeRef fty = LLVMFunctionType(f->is_kernel ? L->tvoid : lw_type(L, f->ret), pt, np, 0);
    if (pt != small)
        free(pt);
    LLVMValueRef fn = LLVMAddFunction(L->m, f->name, fty);
    f->scratch = fn;
    LLVMAttributeIndex fnidx = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    add_attr(L, fn, fnidx, "nounwind", 0);
    if (f->is_kernel) {
        LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
        for (uint32_t i = 0; i < f->iface.len; i++) {
            const oxide_iface_param *p = f->iface.items[i];
            LLVMAttributeIndex idx = p->first_value + 1;
            if (p->kind == OXIDE_PARAM_SLICE || p->kind == OXIDE_PARAM_PTR) {
                size_t es = oxide_scalar_size(p->scalar);
                if (es > 1)
                    add_attr(L, fn, idx, "align", es);
                /* The slice contract (docs/ir.md): a mutable slice overlaps no other slice of the
                 * launch, as Rust's &mut guarantees and the runtime checks; so slices are noalias,
                 * and read-only ones may use the non-coherent cache (ld.global.nc). */
                if (p->kind == OXIDE_PARAM_SLICE) {
                    add_attr(L, fn, idx, "noalias", 0);
                    if (!p->is_mutable)
                        add_attr(L, fn, idx, "readonly", 0);
                }
            } else if (p->kind == OXIDE_PARAM_BYTES || p->kind == OXIDE_PARAM_TMA_DESC) {
                /* by-value bytes: NVPTX makes this ".param .align A .b8 name[N]" */
                LLVMTypeRef bt = LLVMArrayType2(L->ti8, p->size);
                LLVMAddAttributeAtIndex(fn, idx,
                                        LLVMCreateTypeAttribute(L->c, LLVMGetEnumAttributeKindForName("byval", 5), bt));
                add_attr(L, fn, idx, "align", p->align);
                /* TMA reads the descriptor where the launch put it: grid_constant lets its address
                 * be taken (cvta.param) instead of copying the parameter to local memory */
                if (p->kind == OXIDE_PARAM_TMA_DESC && L->opts->sm >= 90)
                    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateStringAttribute(L->c, "nvvm.grid_constant", 18, "", 0));
            } else if (p->kind == OXIDE_PARAM_TENSOR && p->tma) {
                /* the descriptor after the strides: by value and grid_constant as a tma_desc */
                LLVMAttributeIndex d = idx + 2 * p->rank + 1;
                LLVMAddAttributeAtIndex(fn, d,
                                        LLVMCreateTypeAttribute(L->c, LLVMGetEnumAttributeKindForName("byval", 5),
                                                                LLVMArrayType2(L->ti8, 128)));
                add_attr(L, fn, d, "align", 64);
                LLVMAddAttributeAtIndex(fn, d, LLVMCreateStringAttribute(L->c, "nvvm.grid_constant", 18, "", 0));
            }
        }
        char buf[48];
        if (f->launch_bounds[0]) {
            snprintf(buf, sizeof buf, "%u", f->launch_bounds[0]);
            add_str_attr(L, fn, "nvvm.maxntid", buf);
            if (f->launch_bounds[1]) {
                snprintf(buf, sizeof buf, "%u", f->launch_bounds[1]);
                add_str_attr(L, fn, "nvvm.minctasm", buf);
            }
        }
        if (f->cluster[0] && L->opts->sm >= 90) {
            snprintf(buf, sizeof buf, "%u,%u,%u", f->cluster[0], f->cluster[1] ? f->cluster[1] : 1,
                     f->cluster[2] ? f->cluster[2] : 1);
            add_str_attr(L, fn, "nvvm.cluster_dim", buf);
        }
    } else {
        LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    if (L->opts->fast_math) {
        /* flush f32 denormals (the .ftz forms), as nvcc --use_fast_math does */
        add_str_attr(L, fn, "denormal-fp-math-f32", "preserve-sign,preserve-sign");
    }
    for (uint32_t i = 0; i < np; i++) {
        oxide_value *v = f->params.items[i];
        LLVMValueRef p = LLVMGetParam(fn, i);
        if (v->name)
            LLVMSetValueName2(p, v->name, strlen(v->name));
        v->scratch = p;
    }
    return OXIDE_OK;
}

static void set_line(lw *L, uint32_t line) {
    if (!L->dib)
        return;
    LLVMMetadataRef loc = LLVMDIBuilderCreateDebugLocation(L->c, line, 3, L->disub, NULL);
    LLVMSetCurrentDebugLocation2(L->b, loc);
}

static oxide_status lower_body(lw *L, oxide_function *f) {
    L->ofn = f;
    L->fn = (LLVMValueRef)f->scratch;
    L->npend = 0;
    uint32_t nb = f->blocks.len;
    if (!nb)
        return lw_fail(L, OXIDE_ERROR_VERIFY, "@%s has no blocks", f->name);
    /* Blocks in reverse postorder from the entry: every definition is lowered before its uses
     * (the verifier guarantees dominance). */
    oxide_cfg g;
    if (!oxide__cfg_build(&g, f)) {
        oxide__cfg_free(&g);
        return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", f->name);
    }
    if (L->dib) {
        uint32_t line = L->next_fn_line;
        LLVMMetadataRef sty = LLVMDIBuilderCreateSubroutineType(L->dib, L->difile, NULL, 0, LLVMDIFlagZero);
        L->disub = LLVMDIBuilderCreateFunction(L->dib, L->difile, f->name, strlen(f->name), f->name, strlen(f->name),
                                               L->difile, line, sty, !f->is_kernel, 1, line, LLVMDIFlagZero,
                                               L->opts->opt_level > 0);
        LLVMSetSubprogram(L->fn, L->disub);
        /* lines of oxide_module_print's text: header, then per block its label and one line per op */
        for (uint32_t i = 0; i < nb; i++) {
            oxide_block *b = f->blocks.items[i];
            L->block_line[i] = ++line;
            line += b->insts.len;
        }
        L->next_fn_line = line + 3; /* "}", blank line, next header */
    }
    for (uint32_t i = 0; i < nb; i++) {
        oxide_block *b = f->blocks.items[i];
        char name[24];
        snprintf(name, sizeof name, "b%u", i);
        b->scratch = LLVMAppendBasicBlockInContext(L->c, L->fn, name);
    }
    L->entry = (LLVMBasicBlockRef)((oxide_block *)f->blocks.items[0])->scratch;
    /* phis first, so that branches lowered before a block can name its parameters */
    for (uint32_t i = 0; i < nb; i++) {
        oxide_block *b = f->blocks.items[i];
        LLVMPositionBuilderAtEnd(L->b, (LLVMBasicBlockRef)b->scratch);
        for (uint32_t j = 0; j < b->params.len; j++) {
            oxide_value *v = b->params.items[j];
            v->scratch = LLVMBuildPhi(L->b, lw_type(L, v->type), "");
            if (v->name)
                LLVMSetValueName2((LLVMValueRef)v->scratch, v->name, strlen(v->name));
        }
    }
    for (uint32_t k = 0; k < g.nreach && !L->st; k++) {
        oxide_block *b = f->blocks.items[g.order[k]];
        LLVMPositionBuilderAtEnd(L->b, (LLVMBasicBlockRef)b->scratch);
        for (uint32_t j = 0; j < b->insts.len && !L->st; j++) {
            oxide_inst *in = b->insts.items[j];
            if (L->dib)
                set_line(L, L->block_line[b->index] + 1 + j);
            if (oxide_ops[in->op].lower == L_TERM)
                lower_term(L, in);
            else
                lower_inst(L, in);
            if (in->result && in->result->name && in->result->scratch && LLVMIsAInstruction(in->result->scratch) &&
                !LLVMGetValueName2(in->result->scratch, &(size_t){0})[0])
                LLVMSetValueName2(in->result->scratch, in->result->name, strlen(in->result->name));
        }
        if (!L->st &&
            (!b->insts.len || oxide_ops[((oxide_inst *)b->insts.items[b->insts.len - 1])->op].lower != L_TERM))
            lw_fail(L, OXIDE_ERROR_VERIFY, "block ^%u of @%s does not end in a terminator", b->index, f->name);
    }
    /* blocks the entry cannot reach: never executed, and their phis get no incoming values */
    for (uint32_t i = 0; i < nb && !L->st; i++) {
        oxide_block *b = f->blocks.items[i];
        if (!oxide__cfg_reachable(&g, i)) {
            LLVMBasicBlockRef bb = (LLVMBasicBlockRef)b->scratch;
            for (LLVMValueRef ins = LLVMGetFirstInstruction(bb); ins;) {
                LLVMValueRef next = LLVMGetNextInstruction(ins);
                LLVMReplaceAllUsesWith(ins, LLVMGetPoison(LLVMTypeOf(ins)));
                LLVMInstructionEraseFromParent(ins);
                ins = next;
            }
            LLVMDeleteBasicBlock(bb);
            b->scratch = NULL;
        }
    }
    for (size_t i = 0; i < L->npend && !L->st; i++) {
        LLVMValueRef v = V(L->pend[i].value);
        if (!v) {
            lw_fail(L, OXIDE_ERROR_VERIFY, "a branch in @%s passes a value that is not defined on that path", f->name);
            break;
        }
        LLVMBasicBlockRef from = L->pend[i].from;
        LLVMAddIncoming(L->pend[i].phi, &v, &from, 1);
    }
    LLVMSetCurrentDebugLocation2(L->b, NULL);
    oxide__cfg_free(&g);
    return L->st;
}

/* ---- globals ---- */

static void lower_global(lw *L, oxide_global *g) {
    if (reserved_name(g->name)) {
        lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "@%s: the name is reserved (llvm.*, __nv_*, vprintf)", g->name);
        return;
    }
    LLVMTypeRef t = lw_type(L, g->type);
    LLVMValueRef init;
    if (g->init) {
        /* the bytes as given; loads of any type read them through opaque pointers */
        init = LLVMConstStringInContext2(L->c, (const char *)g->init, g->init_size, 1);
        t = LLVMTypeOf(init);
    } else {
        init = g->as == OXIDE_AS_SHARED ? LLVMGetUndef(t) : LLVMConstNull(t);
    }
    LLVMValueRef v = LLVMAddGlobalInAddressSpace(L->m, t, g->name, g->as);
    LLVMSetInitializer(v, init);
    LLVMSetAlignment(v, g->align ? g->align : natural_align(g->type));
    /* Shared memory is per block and invisible to the host; global and constant variables stay
     * visible so the host can find them by name (cuModuleGetGlobal). */
    if (g->as == OXIDE_AS_SHARED)
        LLVMSetLinkage(v, LLVMInternalLinkage);
    g->scratch = v;
}

/* ---- module ---- */

static void line_info_begin(lw *L) {
    L->dib = LLVMCreateDIBuilder(L->m);
    char file[320];
    snprintf(file, sizeof file, "%s.oxide", L->mod->name);
    L->difile = LLVMDIBuilderCreateFile(L->dib, file, strlen(file), "", 0);
    /* 3 = DICompileUnit::DebugDirectivesOnly (what -lineinfo gives: .file/.loc, no DWARF
     * sections); the C enum stops at LineTablesOnly but the value maps straight through. */
    LLVMDIBuilderCreateCompileUnit(L->dib, LLVMDWARFSourceLanguageC, L->difile, "oxide", 5, L->opts->opt_level > 0, "",
                                   0, 0, "", 0, (LLVMDWARFEmissionKind)3, 0, 0, 0, "", 0, "", 0);
    LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(L->ti32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(L->m, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(L->ti32, 2, 0)));
    /* module line, and with globals a blank line plus one line each */
    L->next_fn_line = 1 + (L->mod->globals.len ? 1 + L->mod->globals.len : 0) + 2;
}

oxide_status oxide__lower(oxide_module *mod, LLVMContextRef llctx, const oxide_options *opts, LLVMModuleRef *out) {
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    LLVMTargetMachineRef tm;
    oxide_status st = oxide__target_machine(mod->ctx, opts, &tm);
    if (st)
        return st;
    lw L = {.mod = mod, .opts = opts, .c = llctx};
    L.m = LLVMModuleCreateWithNameInContext(mod->name, llctx);
    L.b = LLVMCreateBuilderInContext(llctx);
    L.td = LLVMCreateTargetDataLayout(tm);
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(L.m, triple);
    LLVMDisposeMessage(triple);
    LLVMSetModuleDataLayout(L.m, L.td);
    L.md_asm = LLVMGetMDKindIDInContext(llctx, OXIDE_ASM_MD, (unsigned)strlen(OXIDE_ASM_MD));
    L.tvoid = LLVMVoidTypeInContext(llctx);
    L.ti1 = LLVMInt1TypeInContext(llctx);
    L.ti8 = LLVMInt8TypeInContext(llctx);
    L.ti16 = LLVMInt16TypeInContext(llctx);
    L.ti32 = LLVMInt32TypeInContext(llctx);
    L.ti64 = LLVMInt64TypeInContext(llctx);
    L.tf32 = LLVMFloatTypeInContext(llctx);
    L.tf64 = LLVMDoubleTypeInContext(llctx);
    L.tptr = LLVMPointerTypeInContext(llctx, 0);
    if (opts->line_info)
        line_info_begin(&L);

    uint32_t maxblocks = 1;
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        oxide_function *f = mod->functions.items[i];
        if (f->blocks.len > maxblocks)
            maxblocks = f->blocks.len;
    }
    if (L.dib && !(L.block_line = malloc(maxblocks * sizeof *L.block_line)))
        lw_fail(&L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering module %s", mod->name);

    for (uint32_t i = 0; i < mod->globals.len && !L.st; i++)
        lower_global(&L, mod->globals.items[i]);
    for (uint32_t i = 0; i < mod->functions.len && !L.st; i++)
        declare_function(&L, mod->functions.items[i]);
    for (uint32_t i = 0; i < mod->functions.len && !L.st; i++)
        lower_body(&L, mod->functions.items[i]);

    if (L.dib) {
        LLVMDIBuilderFinalize(L.dib);
        LLVMDisposeDIBuilder(L.dib);
    }
    free(L.block_line);
    free(L.tmemo);
    free(L.imemo);
    free(L.pend);
    LLVMDisposeBuilder(L.b);
    LLVMDisposeTargetData(L.td);
    /* scratch pointers into the LLVM module must not outlive it */
    for (uint32_t i = 0; i < mod->globals.len; i++)
        ((oxide_global *)mod->globals.items[i])->scratch = NULL;
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        oxide_function *f = mod->functions.items[i];
        f->scratch = NULL;
        for (uint32_t j = 0; j < f->params.len; j++)
            ((oxide_value *)f->params.items[j])->scratch = NULL;
        for (uint32_t j = 0; j < f->blocks.len; j++) {
            oxide_block *b = f->blocks.items[j];
            b->scratch = NULL;
            for (uint32_t k = 0; k < b->params.len; k++)
                ((oxide_value *)b->params.items[k])->scratch = NULL;
            for (uint32_t k = 0; k < b->insts.len; k++) {
                oxide_inst *in = b->insts.items[k];
                if (in->result)
                    in->result->scratch = NULL;
            }
        }
    }
    if (L.st) {
        LLVMDisposeModule(L.m);
        return L.st;
    }
    *out = L.m;
    return OXIDE_OK;
}
