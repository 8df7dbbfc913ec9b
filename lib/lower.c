/* Lowering of oxide IR (lib/ir.h) to LLVM IR for the NVPTX backend.
 *
 * One LLVM function per oxide function, block parameters as phis, and each op as its ops.def row
 * says (LLVM instruction, intrinsic, libdevice call or PTX inline asm). docs/pipeline.md records
 * the choices that are not obvious from the table (atomics, fast-math flags, line info). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>

#include "llvm.h"

typedef struct pending_phi {
    LLVMValueRef phi;
    oxide_value *value;
    LLVMBasicBlockRef from;
} pending_phi;

typedef struct lw {
    oxide_module *mod;
    const oxide_options *opts;
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMTargetDataRef td;
    unsigned md_asm;
    LLVMTypeRef tvoid, ti1, ti8, ti16, ti32, ti64, tf32, tf64, tptr;
    /* current function */
    oxide_function *ofn;
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;
    pending_phi *pend;
    size_t npend, cappend;
    /* module-wide lazies */
    LLVMValueRef dyn_smem, vprintf;
    unsigned nstr;
    /* line info (opts->line_info) */
    LLVMDIBuilderRef dib;
    LLVMMetadataRef difile, disub;
    uint32_t *block_line; /* per block of ofn: line of its label in oxide_module_print's text */
    uint32_t next_fn_line;
    /* first failure */
    oxide_status st;
} lw;

static oxide_status failf(lw *L, oxide_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static oxide_status failf(lw *L, oxide_status st, const char *fmt, ...) {
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

static LLVMTypeRef lty(lw *L, const oxide_type *t) {
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
    case OXIDE_TYPE_VECTOR: return LLVMVectorType(lty(L, t->elem), (unsigned)t->count);
    case OXIDE_TYPE_ARRAY: return LLVMArrayType2(lty(L, t->elem), t->count);
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2:
    case OXIDE_TYPE_TILE:
    case OXIDE_TYPE_TENSOR: /* the verifier keeps these in tile kernels, which compile refuses */
        failf(L, OXIDE_ERROR_UNSUPPORTED, "type %s has no SIMT lowering", t->name);
        return L->ti8;
    case OXIDE_TYPE_STRUCT: {
        LLVMTypeRef small[16], *f = t->nfields <= 16 ? small : malloc(t->nfields * sizeof *f);
        if (!f) {
            failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering type %s", t->name);
            return L->ti8;
        }
        for (uint32_t i = 0; i < t->nfields; i++)
            f[i] = lty(L, t->fields[i]);
        LLVMTypeRef s = LLVMStructTypeInContext(L->c, f, t->nfields, 0);
        if (f != small)
            free(f);
        return s;
    }
    }
    return L->ti8;
}

static LLVMValueRef V(oxide_value *v) { return (LLVMValueRef)v->scratch; }

/* ---- small helpers ---- */

static void fp_flags(lw *L, LLVMValueRef inst) {
    if (!LLVMIsAInstruction(inst) || !LLVMCanValueUseFastMathFlags(inst))
        return;
    /* contract always: the same as nvcc's default --fmad=true, so a*b+c becomes fma. */
    LLVMFastMathFlags f = LLVMFastMathAllowContract;
    if (L->opts->fast_math)
        f |=
            LLVMFastMathAllowReassoc | LLVMFastMathAllowReciprocal | LLVMFastMathApproxFunc | LLVMFastMathNoSignedZeros;
    LLVMSetFastMathFlags(inst, f);
}

static LLVMValueRef call_intrinsic(lw *L, const char *name, LLVMTypeRef *over, size_t nover, LLVMValueRef *args,
                                   unsigned nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        failf(L, OXIDE_ERROR_CODEGEN, "LLVM 22 has no intrinsic named %s", name);
        return NULL;
    }
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(L->m, id, over, nover);
    LLVMTypeRef fty = LLVMIntrinsicGetType(L->c, id, over, nover);
    return LLVMBuildCall2(L->b, fty, f, args, nargs, "");
}

static LLVMValueRef declare_fn(lw *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, bool vararg) {
    LLVMValueRef f = LLVMGetNamedFunction(L->m, name);
    if (f)
        return f;
    return LLVMAddFunction(L->m, name, LLVMFunctionType(ret, params, n, vararg));
}

static LLVMValueRef call_fn(lw *L, LLVMValueRef f, LLVMValueRef *args, unsigned n) {
    return LLVMBuildCall2(L->b, LLVMGlobalGetValueType(f), f, args, n, "");
}

static LLVMValueRef const_i32(lw *L, uint64_t v) { return LLVMConstInt(L->ti32, v, 0); }

/* A new alloca at the top of the entry block, where SROA and the NVPTX local-memory lowering
 * expect them; the generic pointer to it is made at the current position. */
static LLVMValueRef entry_alloca(lw *L, LLVMTypeRef ty, unsigned align) {
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

static LLVMValueRef to_generic(lw *L, LLVMValueRef p) {
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) == 0)
        return p;
    return LLVMBuildAddrSpaceCast(L->b, p, L->tptr, "");
}

/* A NUL-terminated string in global memory (where vprintf wants its format). */
static LLVMValueRef global_string(lw *L, const char *s, size_t len) {
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

/* ---- inline asm ---- */

static const char *asm_constraint(lw *L, LLVMTypeRef t) {
    switch (LLVMGetTypeKind(t)) {
    case LLVMFloatTypeKind: return "f";
    case LLVMDoubleTypeKind: return "d";
    case LLVMPointerTypeKind: return LLVMPointerSizeForAS(L->td, LLVMGetPointerAddressSpace(t)) == 4 ? "r" : "l";
    case LLVMIntegerTypeKind:
        switch (LLVMGetIntTypeWidth(t)) {
        case 16: return "h";
        case 64: return "l";
        default: return "r";
        }
    default: return "r";
    }
}

static const char *ptx_order(lw *L, oxide_order o) {
    (void)L;
    /* PTX fences have only sc and acq_rel (acquire/release fences need PTX 8.6); acq_rel is
     * the weakest that is at least as strong as any of relaxed/acquire/release. */
    return o == OXIDE_ORDER_SEQ_CST ? "sc" : "acq_rel";
}

static const char *ptx_scope(lw *L, oxide_scope s) {
    switch (s) {
    case OXIDE_SCOPE_CTA: return "cta";
    /* Before sm_90 there are no clusters: a cluster is the CTA itself, and gpu scope is a safe
     * (stronger) stand-in that these targets accept. */
    case OXIDE_SCOPE_CLUSTER: return L->opts->sm >= 90 ? "cluster" : "gpu";
    case OXIDE_SCOPE_GPU: return "gpu";
    default: return "sys";
    }
}

typedef struct asm_spec {
    const char *text; /* template in oxide form ($0 result, $1.. operands, $I $O $S) */
    LLVMTypeRef ret;  /* NULL: no result */
    LLVMValueRef *args;
    unsigned nargs;
    bool side_effects, convergent, memory;
    const oxide_inst *in; /* for $I $O $S */
} asm_spec;

static LLVMValueRef emit_asm(lw *L, const asm_spec *a) {
    /* Translate to LLVM's asm-string syntax: operand numbers shift down by one when there is no
     * result, a literal '$' is "$$", and $I/$O/$S are the instruction's attributes. '{' '|' '}'
     * stay as they are: NVPTX has one dialect, so they reach the PTX literally, whereas LLVM's
     * "$(" "$|" "$)" would open dialect alternatives and drop text. */
    size_t tl = strlen(a->text);
    char *s = malloc(tl * 4 + 64), *o = s;
    if (!s) {
        failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory building inline asm");
        return NULL;
    }
    for (const char *p = a->text; *p; p++) {
        if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
            int n = 0;
            while (p[1] >= '0' && p[1] <= '9')
                n = n * 10 + (*++p - '0');
            o += sprintf(o, "$%d", a->ret ? n : n - 1);
        } else if (*p == '$' && (p[1] == 'I' || p[1] == 'O' || p[1] == 'S')) {
            char k = *++p;
            if (k == 'I') {
                long long v = a->in ? (long long)a->in->imm : 0;
                o += v > 0xffff ? sprintf(o, "0x%llx", v) : sprintf(o, "%lld", v);
            } else if (k == 'O') {
                o += sprintf(o, "%s", ptx_order(L, a->in ? a->in->order : OXIDE_ORDER_SEQ_CST));
            } else {
                o += sprintf(o, "%s", ptx_scope(L, a->in ? a->in->scope : OXIDE_SCOPE_GPU));
            }
        } else if (*p == '$') {
            *o++ = '$', *o++ = '$';
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    char cons[256];
    size_t cl = 0;
    cons[0] = 0;
    if (a->ret)
        cl += (size_t)snprintf(cons + cl, sizeof cons - cl, "=%s", asm_constraint(L, a->ret));
    LLVMTypeRef at[8];
    for (unsigned i = 0; i < a->nargs && i < 8; i++) {
        at[i] = LLVMTypeOf(a->args[i]);
        cl += (size_t)snprintf(cons + cl, sizeof cons - cl, "%s%s", cl ? "," : "", asm_constraint(L, at[i]));
    }
    if (a->memory)
        cl += (size_t)snprintf(cons + cl, sizeof cons - cl, "%s~{memory}", cl ? "," : "");
    LLVMTypeRef fty = LLVMFunctionType(a->ret ? a->ret : L->tvoid, at, a->nargs, 0);
    LLVMValueRef asmv =
        LLVMGetInlineAsm(fty, s, strlen(s), cons, strlen(cons), a->side_effects, 0, LLVMInlineAsmDialectATT, 0);
    free(s);
    LLVMValueRef call = LLVMBuildCall2(L->b, fty, asmv, a->args, a->nargs, "");
    LLVMSetMetadata(call, L->md_asm, LLVMMetadataAsValue(L->c, LLVMMDStringInContext2(L->c, "", 0)));
    LLVMAttributeIndex fnidx = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    LLVMAddCallSiteAttribute(call, fnidx,
                             LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
    if (a->convergent)
        LLVMAddCallSiteAttribute(call, fnidx,
                                 LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName("convergent", 10), 0));
    if (!a->side_effects && !a->memory)
        /* memory(none): pure arithmetic asm can be CSE'd and hoisted like an instruction */
        LLVMAddCallSiteAttribute(call, fnidx,
                                 LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName("memory", 6), 0));
    return call;
}

/* ---- per-op lowering ---- */

static bool is_float_type(LLVMTypeRef t) {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
        t = LLVMGetElementType(t);
    switch (LLVMGetTypeKind(t)) {
    case LLVMHalfTypeKind:
    case LLVMBFloatTypeKind:
    case LLVMFloatTypeKind:
    case LLVMDoubleTypeKind: return true;
    default: return false;
    }
}

/* Apply f to each element when t is a vector (libdevice and asm templates are scalar). */
typedef LLVMValueRef (*scalar_fn)(lw *L, const oxide_inst *in, LLVMValueRef *args, unsigned n, LLVMTypeRef t);

static LLVMValueRef per_element(lw *L, const oxide_inst *in, LLVMValueRef *args, unsigned n, LLVMTypeRef t,
                                scalar_fn f) {
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return f(L, in, args, n, t);
    unsigned count = LLVMGetVectorSize(t);
    LLVMTypeRef et = LLVMGetElementType(t);
    LLVMValueRef r = LLVMGetPoison(t);
    for (unsigned i = 0; i < count; i++) {
        LLVMValueRef ea[4];
        for (unsigned j = 0; j < n && j < 4; j++)
            ea[j] = LLVMBuildExtractElement(L->b, args[j], const_i32(L, i), "");
        LLVMValueRef e = f(L, in, ea, n, et);
        if (!e)
            return NULL;
        r = LLVMBuildInsertElement(L->b, r, e, const_i32(L, i), "");
    }
    return r;
}

/* Scalar float work done in f32 (f16/bf16 always; f64 only where f32 is all there is). */
static LLVMValueRef widen(lw *L, LLVMValueRef v) {
    return LLVMTypeOf(v) == L->tf32 ? v : LLVMBuildFPCast(L->b, v, L->tf32, "");
}
static LLVMValueRef narrow(lw *L, LLVMValueRef v, LLVMTypeRef t) {
    return t == L->tf32 ? v : LLVMBuildFPCast(L->b, v, t, "");
}

static LLVMValueRef libdev_scalar(lw *L, const oxide_inst *in, LLVMValueRef *args, unsigned n, LLVMTypeRef t) {
    const char *base = oxide_ops[in->op].tmpl;
    bool f64 = t == L->tf64;
    LLVMTypeRef ct = f64 ? L->tf64 : L->tf32;
    char name[64];
    snprintf(name, sizeof name, "%s%s", base, f64 ? "" : "f");
    if (!f64 && L->opts->fast_math) {
        /* nvcc --use_fast_math's choice: the approximate libdevice forms where they exist */
        static const char *const fast[] = {"__nv_exp", "__nv_log", "__nv_log2", "__nv_sin",
                                           "__nv_cos", "__nv_tan", "__nv_tanh", "__nv_pow"};
        for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++)
            if (!strcmp(base, fast[i]))
                snprintf(name, sizeof name, "__nv_fast_%sf", base + 5);
    }
    LLVMTypeRef pt[3] = {ct, ct, ct};
    LLVMValueRef f = declare_fn(L, name, ct, pt, n, false);
    LLVMValueRef a[3];
    for (unsigned i = 0; i < n && i < 3; i++)
        a[i] = f64 ? args[i] : widen(L, args[i]);
    LLVMValueRef r = call_fn(L, f, a, n);
    return f64 ? r : narrow(L, r, t);
}

static LLVMValueRef asm_scalar(lw *L, const oxide_inst *in, LLVMValueRef *args, unsigned n, LLVMTypeRef t) {
    /* The math templates are .f32 forms: other widths go through f32. */
    LLVMValueRef a[4];
    for (unsigned i = 0; i < n && i < 4; i++)
        a[i] = is_float_type(LLVMTypeOf(args[i])) ? widen(L, args[i]) : args[i];
    bool fl = is_float_type(t);
    asm_spec s = {.text = oxide_ops[in->op].tmpl, .ret = fl ? L->tf32 : t, .args = a, .nargs = n, .in = in};
    LLVMValueRef r = emit_asm(L, &s);
    return r && fl ? narrow(L, r, t) : r;
}

static LLVMAtomicOrdering llvm_order(oxide_order o) {
    switch (o) {
    case OXIDE_ORDER_ACQUIRE: return LLVMAtomicOrderingAcquire;
    case OXIDE_ORDER_RELEASE: return LLVMAtomicOrderingRelease;
    case OXIDE_ORDER_ACQ_REL: return LLVMAtomicOrderingAcquireRelease;
    case OXIDE_ORDER_SEQ_CST: return LLVMAtomicOrderingSequentiallyConsistent;
    default: return LLVMAtomicOrderingMonotonic;
    }
}

static unsigned sync_scope(lw *L, oxide_scope s) {
    static const char *const names[] = {"block", "cluster", "device", ""};
    if (s == OXIDE_SCOPE_CLUSTER && L->opts->sm < 90)
        s = OXIDE_SCOPE_GPU;
    const char *n = names[(unsigned)s < 4 ? s : 3];
    return LLVMGetSyncScopeID(L->c, n, strlen(n));
}

static LLVMValueRef fence(lw *L, LLVMAtomicOrdering o, oxide_scope s) {
    LLVMValueRef f = LLVMBuildFence(L->b, o, 0, "");
    LLVMSetAtomicSyncScopeID(f, sync_scope(L, s));
    return f;
}

/* atomicrmw with an order other than relaxed or a scope other than gpu. LLVM 22's NVPTX backend
 * drops both for atomicrmw (it emits a plain relaxed gpu-scope atom; cmpxchg, atomic load/store
 * and fences are honoured), so these become the exact PTX instruction as inline asm. Returns NULL
 * (without failing) for types PTX's atom cannot take directly; the caller then falls back. */
static LLVMValueRef atomic_rmw_asm(lw *L, const oxide_inst *in, LLVMValueRef ptr, LLVMValueRef val) {
    LLVMTypeRef t = LLVMTypeOf(val);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    unsigned bits = k == LLVMIntegerTypeKind   ? LLVMGetIntTypeWidth(t)
                    : k == LLVMFloatTypeKind   ? 32
                    : k == LLVMDoubleTypeKind  ? 64
                    : k == LLVMPointerTypeKind ? 64
                                               : 0;
    bool fl = k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
    if (bits != 32 && bits != 64)
        return NULL;
    const char *space;
    switch (LLVMGetPointerAddressSpace(LLVMTypeOf(ptr))) {
    case OXIDE_AS_GENERIC: space = ""; break;
    case OXIDE_AS_GLOBAL: space = ".global"; break;
    case OXIDE_AS_SHARED: space = ".shared"; break;
    default: return NULL;
    }
    const char *op;
    char ty = 'b';
    switch (in->op) {
    case OXIDE_OP_ATOMIC_ADD:
        op = "add";
        ty = fl ? 'f' : 'u';
        break;
    case OXIDE_OP_ATOMIC_SUB:
        op = "add";
        ty = 'u';
        val = LLVMBuildNeg(L->b, val, "");
        break;
    case OXIDE_OP_ATOMIC_AND: op = "and"; break;
    case OXIDE_OP_ATOMIC_OR: op = "or"; break;
    case OXIDE_OP_ATOMIC_XOR: op = "xor"; break;
    case OXIDE_OP_ATOMIC_MIN:
        op = "min";
        ty = 's';
        break;
    case OXIDE_OP_ATOMIC_MAX:
        op = "max";
        ty = 's';
        break;
    case OXIDE_OP_ATOMIC_UMIN:
        op = "min";
        ty = 'u';
        break;
    case OXIDE_OP_ATOMIC_UMAX:
        op = "max";
        ty = 'u';
        break;
    case OXIDE_OP_ATOMIC_EXCH: op = "exch"; break;
    default: return NULL;
    }
    /* Operands travel as integers unless the op is a float add (exch of a float is bitwise). */
    LLVMTypeRef it = LLVMIntTypeInContext(L->c, bits);
    LLVMValueRef v = val;
    if (k == LLVMPointerTypeKind)
        v = LLVMBuildPtrToInt(L->b, val, it, "");
    else if (fl && ty != 'f')
        v = LLVMBuildBitCast(L->b, val, it, "");
    static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel", "acquire"};
    const char *scope = ptx_scope(L, in->scope);
    char text[160];
    snprintf(text, sizeof text, "%s%s%s%satom.%s.%s%s.%s.%c%u $0, [$1], $2;",
             in->order == OXIDE_ORDER_SEQ_CST ? "fence.sc." : "", in->order == OXIDE_ORDER_SEQ_CST ? scope : "",
             in->order == OXIDE_ORDER_SEQ_CST ? ";\n\t" : "", "", sems[in->order], scope, space, op, ty, bits);
    LLVMValueRef args[2] = {ptr, v};
    asm_spec s = {
        .text = text, .ret = LLVMTypeOf(v), .args = args, .nargs = 2, .side_effects = true, .memory = true, .in = in};
    LLVMValueRef r = emit_asm(L, &s);
    if (!r)
        return NULL;
    if (k == LLVMPointerTypeKind)
        r = LLVMBuildIntToPtr(L->b, r, t, "");
    else if (fl && ty != 'f')
        r = LLVMBuildBitCast(L->b, r, t, "");
    return r;
}

static LLVMValueRef lower_atomic_rmw(lw *L, const oxide_inst *in, LLVMValueRef ptr, LLVMValueRef val) {
    oxide_scope scope = in->scope;
    if (scope == OXIDE_SCOPE_CLUSTER && L->opts->sm < 90)
        scope = OXIDE_SCOPE_GPU;
    if (in->order != OXIDE_ORDER_RELAXED || scope != OXIDE_SCOPE_GPU) {
        LLVMValueRef r = atomic_rmw_asm(L, in, ptr, val);
        if (r || L->st)
            return r;
    }
    LLVMAtomicRMWBinOp op;
    bool fl = is_float_type(LLVMTypeOf(val));
    switch (in->op) {
    case OXIDE_OP_ATOMIC_ADD: op = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
    case OXIDE_OP_ATOMIC_SUB: op = LLVMAtomicRMWBinOpSub; break;
    case OXIDE_OP_ATOMIC_AND: op = LLVMAtomicRMWBinOpAnd; break;
    case OXIDE_OP_ATOMIC_OR: op = LLVMAtomicRMWBinOpOr; break;
    case OXIDE_OP_ATOMIC_XOR: op = LLVMAtomicRMWBinOpXor; break;
    case OXIDE_OP_ATOMIC_MIN: op = LLVMAtomicRMWBinOpMin; break;
    case OXIDE_OP_ATOMIC_MAX: op = LLVMAtomicRMWBinOpMax; break;
    case OXIDE_OP_ATOMIC_UMIN: op = LLVMAtomicRMWBinOpUMin; break;
    case OXIDE_OP_ATOMIC_UMAX: op = LLVMAtomicRMWBinOpUMax; break;
    default: op = LLVMAtomicRMWBinOpXchg; break;
    }
    /* Types atom cannot take (8/16-bit, f16/bf16) with a non-relaxed order: the backend
     * emulates them; the orders come from explicit fences around it. */
    oxide_order o = in->order;
    if (o == OXIDE_ORDER_RELEASE || o == OXIDE_ORDER_ACQ_REL || o == OXIDE_ORDER_SEQ_CST)
        fence(L, o == OXIDE_ORDER_SEQ_CST ? LLVMAtomicOrderingSequentiallyConsistent : LLVMAtomicOrderingRelease,
              in->scope);
    LLVMValueRef r =
        LLVMBuildAtomicRMWSyncScope(L->b, op, ptr, val, LLVMAtomicOrderingMonotonic, sync_scope(L, in->scope));
    if (o == OXIDE_ORDER_ACQUIRE || o == OXIDE_ORDER_ACQ_REL || o == OXIDE_ORDER_SEQ_CST)
        fence(L, LLVMAtomicOrderingAcquire, in->scope);
    return r;
}

/* Warp shuffles move 32-bit registers: narrower values are widened, 64-bit ones split. */
static LLVMValueRef shfl32(lw *L, const char *kind, LLVMValueRef mask, LLVMValueRef v, LLVMValueRef lane, unsigned c) {
    char name[48];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", kind);
    LLVMValueRef args[4] = {mask, v, lane, const_i32(L, c)};
    return call_intrinsic(L, name, NULL, 0, args, 4);
}

static LLVMValueRef lower_shfl(lw *L, const oxide_inst *in, LLVMValueRef v, LLVMValueRef lane) {
    static const char *const kinds[] = {"idx", "up", "down", "bfly"};
    const char *kind = kinds[in->op - OXIDE_OP_SHFL_IDX];
    /* c packs clamp and segment mask: full-warp segments, clamp 31 (0 for up, which clamps low). */
    unsigned c = in->op == OXIDE_OP_SHFL_UP ? 0 : 31;
    LLVMValueRef mask = const_i32(L, (uint32_t)in->imm);
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned bits = (unsigned)(LLVMSizeOfTypeInBits(L->td, t));
    if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 1)
        bits = 1;
    if (bits > 64 || (LLVMGetTypeKind(t) != LLVMIntegerTypeKind && LLVMGetTypeKind(t) != LLVMPointerTypeKind &&
                      !is_float_type(t) && LLVMGetTypeKind(t) != LLVMVectorTypeKind)) {
        failf(L, OXIDE_ERROR_UNSUPPORTED, "'%s' of %s in @%s: shuffles move at most 64 bits", oxide_ops[in->op].name,
              in->operands[0]->type->name, L->ofn->name);
        return NULL;
    }
    LLVMTypeRef it = LLVMIntTypeInContext(L->c, bits);
    LLVMValueRef x = LLVMGetTypeKind(t) == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, v, it, "")
                     : t == it                                 ? v
                                                               : LLVMBuildBitCast(L->b, v, it, "");
    LLVMValueRef r;
    if (bits <= 32) {
        LLVMValueRef w = bits == 32 ? x : LLVMBuildZExt(L->b, x, L->ti32, "");
        r = shfl32(L, kind, mask, w, lane, c);
        if (bits < 32)
            r = LLVMBuildTrunc(L->b, r, it, "");
    } else {
        LLVMValueRef lo = LLVMBuildTrunc(L->b, x, L->ti32, "");
        LLVMValueRef hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, x, LLVMConstInt(it, 32, 0), ""), L->ti32, "");
        lo = shfl32(L, kind, mask, lo, lane, c);
        hi = shfl32(L, kind, mask, hi, lane, c);
        r = LLVMBuildOr(L->b, LLVMBuildZExt(L->b, lo, it, ""),
                        LLVMBuildShl(L->b, LLVMBuildZExt(L->b, hi, it, ""), LLVMConstInt(it, 32, 0), ""), "");
    }
    if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
        return LLVMBuildIntToPtr(L->b, r, t, "");
    return t == it ? r : LLVMBuildBitCast(L->b, r, t, "");
}

static LLVMValueRef vprintf_fn(lw *L) {
    if (!L->vprintf) {
        LLVMTypeRef p[2] = {L->tptr, L->tptr};
        L->vprintf = declare_fn(L, "vprintf", L->ti32, p, 2, false);
    }
    return L->vprintf;
}

/* vprintf(format, buffer): the arguments laid out as a C struct of the promoted types, the way
 * CUDA's printf passes them (default argument promotions: float to double, small ints to int). */
static oxide_status emit_printf(lw *L, const char *fmt, size_t fmtlen, LLVMValueRef *args, unsigned n,
                                const char *what) {
    LLVMValueRef f = to_generic(L, global_string(L, fmt, fmtlen));
    LLVMValueRef buf = LLVMConstPointerNull(L->tptr);
    if (n) {
        LLVMTypeRef small[16], *ft = n <= 16 ? small : malloc(n * sizeof *ft);
        LLVMValueRef smallv[16], *fv = n <= 16 ? smallv : malloc(n * sizeof *fv);
        if (!ft || !fv) {
            if (ft != small)
                free(ft);
            if (fv != smallv)
                free(fv);
            return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering %s", what);
        }
        for (unsigned i = 0; i < n && !L->st; i++) {
            LLVMValueRef a = args[i];
            LLVMTypeRef t = LLVMTypeOf(a);
            switch (LLVMGetTypeKind(t)) {
            case LLVMIntegerTypeKind:
                if (LLVMGetIntTypeWidth(t) == 1)
                    a = LLVMBuildZExt(L->b, a, L->ti32, "");
                else if (LLVMGetIntTypeWidth(t) < 32)
                    a = LLVMBuildSExt(L->b, a, L->ti32, "");
                break;
            case LLVMHalfTypeKind:
            case LLVMBFloatTypeKind:
            case LLVMFloatTypeKind: a = LLVMBuildFPExt(L->b, a, L->tf64, ""); break;
            case LLVMDoubleTypeKind: break;
            case LLVMPointerTypeKind: a = to_generic(L, a); break;
            default:
                failf(L, OXIDE_ERROR_UNSUPPORTED, "%s in @%s: argument %u is not a scalar or pointer", what,
                      L->ofn->name, i);
            }
            ft[i] = LLVMTypeOf(a);
            fv[i] = a;
        }
        if (!L->st) {
            LLVMTypeRef st = LLVMStructTypeInContext(L->c, ft, n, 0);
            LLVMValueRef mem = entry_alloca(L, st, 8);
            for (unsigned i = 0; i < n; i++)
                LLVMBuildStore(L->b, fv[i], LLVMBuildStructGEP2(L->b, st, mem, i, ""));
            buf = mem;
        }
        if (ft != small)
            free(ft);
        if (fv != smallv)
            free(fv);
        if (L->st)
            return L->st;
    }
    LLVMValueRef a2[2] = {f, buf};
    call_fn(L, vprintf_fn(L), a2, 2);
    return OXIDE_OK;
}

/* printf's format with '%' doubled, for text that must print literally. */
static size_t escape_pct(char *dst, const char *src) {
    size_t n = 0;
    for (; *src; src++) {
        if (*src == '%')
            dst[n++] = '%';
        dst[n++] = *src;
    }
    dst[n] = 0;
    return n;
}

static oxide_status lower_assert(lw *L, const oxide_inst *in) {
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(L->c, L->fn, "assert.fail");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(L->c, L->fn, "assert.ok");
    LLVMValueRef br = LLVMBuildCondBr(L->b, V(in->operands[0]), cont, fail);
    /* the failing side is cold: keep it out of the hot path's layout */
    LLVMMetadataRef w[3] = {LLVMMDStringInContext2(L->c, "branch_weights", 14),
                            LLVMValueAsMetadata(const_i32(L, 1u << 20)), LLVMValueAsMetadata(const_i32(L, 1))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(L->c, "prof", 4),
                    LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, w, 3)));
    LLVMPositionBuilderAtEnd(L->b, fail);
    const char *msg = in->str ? in->str : "";
    size_t cap = strlen(msg) * 2 + strlen(L->ofn->name) * 2 + 96;
    char *fmt = malloc(cap);
    if (!fmt)
        return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering assert");
    size_t n = escape_pct(fmt, L->ofn->name);
    n += (size_t)sprintf(fmt + n, ": block [%%u,%%u,%%u], thread [%%u,%%u,%%u]: assertion failed: ");
    n += escape_pct(fmt + n, msg);
    fmt[n++] = '\n';
    fmt[n] = 0;
    static const char *const ids[] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                      "llvm.nvvm.read.ptx.sreg.ctaid.z", "llvm.nvvm.read.ptx.sreg.tid.x",
                                      "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z"};
    LLVMValueRef a[6];
    for (int i = 0; i < 6; i++)
        a[i] = call_intrinsic(L, ids[i], NULL, 0, NULL, 0);
    oxide_status st = emit_printf(L, fmt, n, a, 6, "assert");
    free(fmt);
    if (st)
        return st;
    call_intrinsic(L, "llvm.trap", NULL, 0, NULL, 0);
    LLVMBuildUnreachable(L->b);
    LLVMPositionBuilderAtEnd(L->b, cont);
    return OXIDE_OK;
}

static LLVMValueRef lower_const(lw *L, const oxide_inst *in) {
    LLVMTypeRef t = lty(L, in->result->type);
    if (oxide__type_is_float(in->result->type))
        return LLVMConstReal(t, in->fvalue);
    return LLVMConstInt(t, (unsigned long long)in->ivalue, 1);
}

static LLVMIntPredicate ipred(oxide_pred p) {
    static const LLVMIntPredicate m[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                         LLVMIntSGE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    return (unsigned)p < 10 ? m[p] : LLVMIntEQ;
}

static LLVMRealPredicate fpred(oxide_pred p) {
    static const LLVMRealPredicate m[] = {LLVMRealOEQ, LLVMRealONE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                          LLVMRealOGE, LLVMRealORD, LLVMRealUNO, LLVMRealUEQ, LLVMRealUNE,
                                          LLVMRealULT, LLVMRealULE, LLVMRealUGT, LLVMRealUGE};
    unsigned i = (unsigned)p - OXIDE_PRED_OEQ;
    return i < 14 ? m[i] : LLVMRealOEQ;
}

static LLVMValueRef lower_intrinsic(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n) {
    const char *tmpl = oxide_ops[in->op].tmpl;
    size_t tl = strlen(tmpl);
    if (in->op == OXIDE_OP_MAP_SHARED) {
        LLVMValueRef a[2] = {to_generic(L, ops[0]), ops[1]};
        return call_intrinsic(L, tmpl, NULL, 0, a, 2);
    }
    if (tl > 2 && !strcmp(tmpl + tl - 2, ".T")) {
        char base[64];
        snprintf(base, sizeof base, "%.*s", (int)(tl - 2), tmpl);
        LLVMTypeRef t = lty(L, in->operands[0]->type);
        LLVMValueRef r = call_intrinsic(L, base, &t, 1, ops, n);
        if (r)
            fp_flags(L, r);
        return r;
    }
    return call_intrinsic(L, tmpl, NULL, 0, ops, n);
}

static LLVMValueRef global_ref(lw *L, const oxide_inst *in) {
    oxide_global *g = oxide__module_find_global(L->mod, in->sym);
    if (!g || !g->scratch) {
        failf(L, OXIDE_ERROR_VERIFY, "global.addr in @%s: no global named @%s", L->ofn->name, in->sym);
        return NULL;
    }
    return (LLVMValueRef)g->scratch;
}

static LLVMValueRef cast_ptr(lw *L, LLVMValueRef p, LLVMTypeRef want) {
    if (LLVMTypeOf(p) == want)
        return p;
    return LLVMBuildAddrSpaceCast(L->b, p, want, "");
}

static LLVMValueRef dyn_smem(lw *L) {
    if (!L->dyn_smem) {
        /* the one extern __shared__ array all kernels share, as in CUDA */
        L->dyn_smem = LLVMAddGlobalInAddressSpace(L->m, LLVMArrayType2(L->ti8, 0), "oxide_dyn_smem", OXIDE_AS_SHARED);
        LLVMSetLinkage(L->dyn_smem, LLVMExternalLinkage);
        LLVMSetAlignment(L->dyn_smem, 16);
    }
    return L->dyn_smem;
}

static unsigned natural_align(const oxide_type *t) {
    uint64_t a = oxide__type_align(t);
    return a ? (unsigned)a : 1;
}

/* ---- tier 2: asynchronous copies, tensor cores, Hopper (docs/ir.md) ---- */

/* Inline asm written in LLVM's own syntax with explicit constraints, for what emit_asm's
 * one-result templates cannot say (wgmma: up to 128 results tied to as many inputs). Always
 * side-effecting, convergent and a memory clobber: these instructions read shared memory
 * asynchronously and are warpgroup-collective. */
static LLVMValueRef emit_asm_raw(lw *L, const char *text, const char *cons, LLVMTypeRef ret, LLVMValueRef *args,
                                 unsigned n) {
    LLVMTypeRef *at = malloc((n ? n : 1) * sizeof *at);
    if (!at) {
        failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory building inline asm");
        return NULL;
    }
    for (unsigned i = 0; i < n; i++)
        at[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret ? ret : L->tvoid, at, n, 0);
    free(at);
    LLVMValueRef asmv = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(L->b, fty, asmv, args, n, "");
    LLVMSetMetadata(call, L->md_asm, LLVMMetadataAsValue(L->c, LLVMMDStringInContext2(L->c, "", 0)));
    LLVMAttributeIndex fnidx = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    LLVMAddCallSiteAttribute(call, fnidx,
                             LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
    LLVMAddCallSiteAttribute(call, fnidx,
                             LLVMCreateEnumAttribute(L->c, LLVMGetEnumAttributeKindForName("convergent", 10), 0));
    return call;
}

/* An LLVM struct result (what multi-result intrinsics and asm return) as an oxide vector or array. */
static LLVMValueRef struct_to(lw *L, LLVMValueRef s, LLVMTypeRef to, unsigned n) {
    LLVMValueRef r = LLVMGetPoison(to);
    bool vec = LLVMGetTypeKind(to) == LLVMVectorTypeKind;
    for (unsigned i = 0; i < n; i++) {
        LLVMValueRef e = LLVMBuildExtractValue(L->b, s, i, "");
        r = vec ? LLVMBuildInsertElement(L->b, r, e, const_i32(L, i), "") : LLVMBuildInsertValue(L->b, r, e, i, "");
    }
    return r;
}

/* Element i of an oxide vector or array value. */
static LLVMValueRef elem_at(lw *L, LLVMValueRef v, unsigned i) {
    if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind)
        return LLVMBuildExtractElement(L->b, v, const_i32(L, i), "");
    if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMArrayTypeKind)
        return LLVMBuildExtractValue(L->b, v, i, "");
    return v;
}

static unsigned fragment_regs(LLVMTypeRef t) {
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
}

static LLVMValueRef lower_wgmma(lw *L, const oxide_inst *in, LLVMValueRef *ops, LLVMTypeRef rt) {
    unsigned n = (unsigned)LLVMGetArrayLength2(rt); /* f32 accumulators per thread: N/2 */
    size_t cap = 256 + (size_t)n * 16;
    char *text = malloc(cap), *cons = malloc(cap);
    LLVMValueRef *args = malloc((n + 3) * sizeof *args);
    LLVMTypeRef *ft = malloc(n * sizeof *ft);
    LLVMValueRef r = NULL;
    if (!text || !cons || !args || !ft) {
        failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering '%s'", oxide_ops[in->op].name);
        goto out;
    }
    /* ops.def's template with $N replaced. Braces are literal: NVPTX has one asm dialect, and
     * LLVM's "$(" would open a dialect alternative. */
    const char *tmpl = oxide_ops[in->op].tmpl, *dollar = strstr(tmpl, "$N");
    int imm = (int)in->imm;
    size_t k = (size_t)snprintf(text, cap, "{ .reg .pred p; setp.ne.b32 p, $%u, 0; %.*s%u%s {", n + 2,
                                (int)(dollar - tmpl), tmpl, n * 2, dollar + 2);
    size_t c = 0;
    for (unsigned i = 0; i < n; i++) {
        k += (size_t)snprintf(text + k, cap - k, "%s$%u", i ? ", " : "", i);
        c += (size_t)snprintf(cons + c, cap - c, "%s=f", i ? "," : "");
        ft[i] = L->tf32;
    }
    snprintf(text + k, cap - k, "}, $%u, $%u, p, %d, %d, %d, %d; }", n, n + 1, imm & 4 ? -1 : 1, imm & 8 ? -1 : 1,
             imm & 1, (imm >> 1) & 1);
    c += (size_t)snprintf(cons + c, cap - c, ",l,l,r");
    for (unsigned i = 0; i < n; i++)
        c += (size_t)snprintf(cons + c, cap - c, ",%u", i);
    snprintf(cons + c, cap - c, ",~{memory}");
    args[0] = ops[1];
    args[1] = ops[2];
    args[2] = LLVMBuildZExt(L->b, ops[3], L->ti32, "");
    for (unsigned i = 0; i < n; i++)
        args[3 + i] = LLVMBuildExtractValue(L->b, ops[0], i, "");
    LLVMValueRef s = emit_asm_raw(L, text, cons, LLVMStructTypeInContext(L->c, ft, n, 0), args, n + 3);
    if (s)
        r = struct_to(L, s, rt, n);
out:
    free(text), free(cons), free(args), free(ft);
    return r;
}

/* The shared-memory matrix descriptor of wgmma (PTX ISA, "Matrix Descriptor Format"): start
 * address, leading and stride byte offsets, each >> 4 in 14 bits; the swizzle mode in bits 62-63. */
static LLVMValueRef lower_wgmma_desc(lw *L, const oxide_inst *in, LLVMValueRef *ops) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef addr = LLVMBuildPtrToInt(b, ops[0], L->ti64, "");
    LLVMValueRef field[3] = {addr, LLVMBuildZExt(b, ops[1], L->ti64, ""), LLVMBuildZExt(b, ops[2], L->ti64, "")};
    static const unsigned shift[3] = {0, 16, 32};
    uint64_t layout = in->imm == 128 ? 1 : in->imm == 64 ? 2 : in->imm == 32 ? 3 : 0;
    LLVMValueRef d = LLVMConstInt(L->ti64, layout << 62, 0);
    for (int i = 0; i < 3; i++) {
        LLVMValueRef f = LLVMBuildLShr(b, field[i], LLVMConstInt(L->ti64, 4, 0), "");
        f = LLVMBuildAnd(b, f, LLVMConstInt(L->ti64, 0x3fff, 0), "");
        d = LLVMBuildOr(b, d, LLVMBuildShl(b, f, LLVMConstInt(L->ti64, shift[i], 0), ""), "");
    }
    return d;
}

static LLVMValueRef lower_tier2(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n, LLVMTypeRef rt) {
    const char *tmpl = oxide_ops[in->op].tmpl;
    char name[128];
    switch (in->op) {
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL:
        /* the .s forms take the source size: bytes past it are filled with zeros */
        snprintf(name, sizeof name, "%s.%lld%s", tmpl, (long long)in->imm, n == 3 ? ".s" : "");
        return call_intrinsic(L, name, NULL, 0, ops, n);
    case OXIDE_OP_CP_ASYNC_WAIT:
    case OXIDE_OP_BULK_WAIT:
    case OXIDE_OP_BULK_WAIT_READ:
    case OXIDE_OP_SETMAXNREG_INC:
    case OXIDE_OP_SETMAXNREG_DEC: {
        LLVMValueRef a = const_i32(L, (uint64_t)in->imm);
        return call_intrinsic(L, tmpl, NULL, 0, &a, 1);
    }
    case OXIDE_OP_WGMMA_WAIT: {
        LLVMValueRef a = LLVMConstInt(L->ti64, (uint64_t)in->imm, 0);
        return call_intrinsic(L, tmpl, NULL, 0, &a, 1);
    }
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS: {
        unsigned k = fragment_regs(rt);
        snprintf(name, sizeof name, "%s.x%u%s.b16", tmpl, k, in->op == OXIDE_OP_LDMATRIX_TRANS ? ".trans" : "");
        LLVMTypeRef pt = LLVMTypeOf(ops[0]);
        LLVMValueRef r = call_intrinsic(L, name, &pt, 1, ops, 1);
        return r && k > 1 ? struct_to(L, r, rt, k) : r;
    }
    case OXIDE_OP_STMATRIX:
    case OXIDE_OP_STMATRIX_TRANS: {
        unsigned k = fragment_regs(LLVMTypeOf(ops[1]));
        snprintf(name, sizeof name, "%s.x%u%s.b16", tmpl, k, in->op == OXIDE_OP_STMATRIX_TRANS ? ".trans" : "");
        LLVMValueRef a[5] = {ops[0]};
        for (unsigned i = 0; i < k; i++)
            a[1 + i] = elem_at(L, ops[1], i);
        LLVMTypeRef pt = LLVMTypeOf(ops[0]);
        return call_intrinsic(L, name, &pt, 1, a, 1 + k);
    }
    case OXIDE_OP_MMA_BF16:
    case OXIDE_OP_MMA_F16: {
        /* f16 inputs travel as <2 x half>, bf16 ones as the packed i32 */
        LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(L->c), 2);
        LLVMValueRef a[10];
        for (unsigned i = 0; i < 4; i++)
            a[i] = elem_at(L, ops[0], i);
        for (unsigned i = 0; i < 2; i++)
            a[4 + i] = elem_at(L, ops[1], i);
        if (in->op == OXIDE_OP_MMA_F16)
            for (unsigned i = 0; i < 6; i++)
                a[i] = LLVMBuildBitCast(L->b, a[i], h2, "");
        for (unsigned i = 0; i < 4; i++)
            a[6 + i] = elem_at(L, ops[2], i);
        LLVMValueRef r = call_intrinsic(L, tmpl, NULL, 0, a, 10);
        return r ? struct_to(L, r, rt, 4) : NULL;
    }
    case OXIDE_OP_ELECT_SYNC: {
        LLVMValueRef a = const_i32(L, (uint32_t)in->imm);
        LLVMValueRef r = call_intrinsic(L, tmpl, NULL, 0, &a, 1);
        return r ? LLVMBuildExtractValue(L->b, r, 1, "") : NULL;
    }
    case OXIDE_OP_TMA_LOAD:
    case OXIDE_OP_TMA_LOAD_MULTICAST: {
        /* g2s(dst shared::cluster, mbarrier, tensor map, coords..., cta mask, cache hint,
         *     use mask, use hint, cta group) */
        bool mc = in->op == OXIDE_OP_TMA_LOAD_MULTICAST;
        unsigned first = mc ? 4 : 3, dims = n - first;
        LLVMValueRef a[16];
        unsigned k = 0;
        a[k++] = LLVMBuildAddrSpaceCast(L->b, ops[0], LLVMPointerTypeInContext(L->c, 7), "");
        a[k++] = ops[2];
        a[k++] = to_generic(L, ops[1]);
        for (unsigned i = 0; i < dims; i++)
            a[k++] = ops[first + i];
        a[k++] = mc ? LLVMBuildTrunc(L->b, ops[3], L->ti16, "") : LLVMConstInt(L->ti16, 0, 0);
        a[k++] = LLVMConstInt(L->ti64, 0, 0);
        a[k++] = LLVMConstInt(L->ti1, mc, 0);
        a[k++] = LLVMConstInt(L->ti1, 0, 0);
        a[k++] = const_i32(L, 0);
        snprintf(name, sizeof name, "%s.%ud", tmpl, dims);
        return call_intrinsic(L, name, NULL, 0, a, k);
    }
    case OXIDE_OP_TMA_STORE: {
        /* s2g(src shared::cta, tensor map, coords..., cache hint, use hint) */
        unsigned dims = n - 2, k = 0;
        LLVMValueRef a[16];
        a[k++] = ops[1];
        a[k++] = to_generic(L, ops[0]);
        for (unsigned i = 0; i < dims; i++)
            a[k++] = ops[2 + i];
        a[k++] = LLVMConstInt(L->ti64, 0, 0);
        a[k++] = LLVMConstInt(L->ti1, 0, 0);
        snprintf(name, sizeof name, "%s.%ud", tmpl, dims);
        return call_intrinsic(L, name, NULL, 0, a, k);
    }
    case OXIDE_OP_MBARRIER_ARRIVE_CLUSTER: {
        /* the barrier at the same offset in CTA `rank` of the cluster, arrived on once with
         * release semantics at cluster scope */
        LLVMValueRef a[2] = {ops[0], ops[1]};
        LLVMValueRef remote = call_intrinsic(L, "llvm.nvvm.mapa.shared.cluster", NULL, 0, a, 2);
        if (!remote)
            return NULL;
        LLVMValueRef b[2] = {remote, const_i32(L, 1)};
        return call_intrinsic(L, tmpl, NULL, 0, b, 2);
    }
    case OXIDE_OP_TMA_PREFETCH_DESC: {
        LLVMValueRef p = to_generic(L, ops[0]);
        LLVMTypeRef pt = LLVMTypeOf(p);
        return call_intrinsic(L, tmpl, &pt, 1, &p, 1);
    }
    case OXIDE_OP_WGMMA_BF16:
    case OXIDE_OP_WGMMA_F16: return lower_wgmma(L, in, ops, rt);
    case OXIDE_OP_WGMMA_DESC: return lower_wgmma_desc(L, in, ops);
    default:
        /* the rest map one to one onto their intrinsic */
        return call_intrinsic(L, tmpl, NULL, 0, ops, n);
    }
}

static oxide_status lower_inst(lw *L, const oxide_inst *in) {
    const oxide_op_info *info = &oxide_ops[in->op];
    unsigned n = in->noperands;
    LLVMValueRef small[8] = {0}, *ops = n <= 8 ? small : calloc(n, sizeof *ops);
    if (!ops)
        return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering '%s'", info->name);
    for (uint32_t i = 0; i < n; i++) {
        ops[i] = V(in->operands[i]);
        if (!ops[i]) {
            if (ops != small)
                free(ops);
            return failf(L, OXIDE_ERROR_VERIFY, "'%s' in @%s uses a value before its definition", info->name,
                         L->ofn->name);
        }
    }
    LLVMTypeRef rt = in->result ? lty(L, in->result->type) : NULL;
    LLVMValueRef r = NULL;
    LLVMBuilderRef b = L->b;

    if (in->op >= OXIDE_OP_CP_ASYNC_CA && in->op != OXIDE_OP_FENCE_PROXY_ASYNC) {
        r = lower_tier2(L, in, ops, n, rt);
        goto done;
    }
    switch (info->lower) {
    case L_INTR: r = lower_intrinsic(L, in, ops, n); goto done;
    case L_LIBDEV: r = per_element(L, in, ops, n, LLVMTypeOf(ops[0]), libdev_scalar); goto done;
    case L_ASM:
        if (in->result && is_float_type(rt)) {
            r = per_element(L, in, ops, n, rt, asm_scalar);
        } else {
            bool sync = !in->result; /* barrier, fence, cluster barriers: order memory */
            bool warp = in->op == OXIDE_OP_ACTIVEMASK || (in->op >= OXIDE_OP_REDUX_ADD && in->op <= OXIDE_OP_REDUX_XOR);
            asm_spec s = {.text = info->tmpl,
                          .ret = rt,
                          .args = ops,
                          .nargs = n,
                          .side_effects = sync || in->op == OXIDE_OP_ACTIVEMASK,
                          .convergent = sync || warp,
                          .memory = sync,
                          .in = in};
            r = emit_asm(L, &s);
        }
        goto done;
    default: break;
    }

    switch (in->op) {
    case OXIDE_OP_CONST: r = lower_const(L, in); break;
    case OXIDE_OP_ADD:
        r = is_float_type(rt) ? LLVMBuildFAdd(b, ops[0], ops[1], "") : LLVMBuildAdd(b, ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_SUB:
        r = is_float_type(rt) ? LLVMBuildFSub(b, ops[0], ops[1], "") : LLVMBuildSub(b, ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_MUL:
        r = is_float_type(rt) ? LLVMBuildFMul(b, ops[0], ops[1], "") : LLVMBuildMul(b, ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_SDIV: r = LLVMBuildSDiv(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_UDIV: r = LLVMBuildUDiv(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_SREM: r = LLVMBuildSRem(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_UREM: r = LLVMBuildURem(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_FDIV:
        r = LLVMBuildFDiv(b, ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_FREM:
        r = LLVMBuildFRem(b, ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_NEG:
        r = is_float_type(rt) ? LLVMBuildFNeg(b, ops[0], "") : LLVMBuildNeg(b, ops[0], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_AND: r = LLVMBuildAnd(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_OR: r = LLVMBuildOr(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_XOR: r = LLVMBuildXor(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_NOT: r = LLVMBuildNot(b, ops[0], ""); break;
    case OXIDE_OP_SHL: r = LLVMBuildShl(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_LSHR: r = LLVMBuildLShr(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_ASHR: r = LLVMBuildAShr(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_ICMP: r = LLVMBuildICmp(b, ipred(in->pred), ops[0], ops[1], ""); break;
    case OXIDE_OP_FCMP:
        r = LLVMBuildFCmp(b, fpred(in->pred), ops[0], ops[1], "");
        fp_flags(L, r);
        break;
    case OXIDE_OP_SELECT: r = LLVMBuildSelect(b, ops[0], ops[1], ops[2], ""); break;
    case OXIDE_OP_CLZ: {
        LLVMTypeRef t = LLVMTypeOf(ops[0]);
        LLVMValueRef a[2] = {ops[0], LLVMConstInt(L->ti1, 0, 0)};
        r = call_intrinsic(L, "llvm.ctlz", &t, 1, a, 2);
        break;
    }
    case OXIDE_OP_IABS: {
        LLVMTypeRef t = LLVMTypeOf(ops[0]);
        LLVMValueRef a[2] = {ops[0], LLVMConstInt(L->ti1, 0, 0)};
        r = call_intrinsic(L, "llvm.abs", &t, 1, a, 2);
        break;
    }
    case OXIDE_OP_TRUNC: r = LLVMBuildTrunc(b, ops[0], rt, ""); break;
    case OXIDE_OP_ZEXT: r = LLVMBuildZExt(b, ops[0], rt, ""); break;
    case OXIDE_OP_SEXT: r = LLVMBuildSExt(b, ops[0], rt, ""); break;
    case OXIDE_OP_FPTRUNC: r = LLVMBuildFPTrunc(b, ops[0], rt, ""); break;
    case OXIDE_OP_FPEXT: r = LLVMBuildFPExt(b, ops[0], rt, ""); break;
    case OXIDE_OP_FPTOUI: r = LLVMBuildFPToUI(b, ops[0], rt, ""); break;
    case OXIDE_OP_FPTOSI: r = LLVMBuildFPToSI(b, ops[0], rt, ""); break;
    case OXIDE_OP_UITOFP: r = LLVMBuildUIToFP(b, ops[0], rt, ""); break;
    case OXIDE_OP_SITOFP: r = LLVMBuildSIToFP(b, ops[0], rt, ""); break;
    case OXIDE_OP_PTRTOINT: r = LLVMBuildPtrToInt(b, ops[0], rt, ""); break;
    case OXIDE_OP_INTTOPTR: r = LLVMBuildIntToPtr(b, ops[0], rt, ""); break;
    case OXIDE_OP_BITCAST: r = LLVMBuildBitCast(b, ops[0], rt, ""); break;
    case OXIDE_OP_ADDRSPACECAST: r = LLVMBuildAddrSpaceCast(b, ops[0], rt, ""); break;
    case OXIDE_OP_EXTRACT:
        if (in->operands[0]->type->kind == OXIDE_TYPE_VECTOR)
            r = LLVMBuildExtractElement(b, ops[0], const_i32(L, (uint64_t)in->imm), "");
        else
            r = LLVMBuildExtractValue(b, ops[0], (unsigned)in->imm, "");
        break;
    case OXIDE_OP_INSERT:
        if (in->operands[0]->type->kind == OXIDE_TYPE_VECTOR)
            r = LLVMBuildInsertElement(b, ops[0], ops[1], const_i32(L, (uint64_t)in->imm), "");
        else
            r = LLVMBuildInsertValue(b, ops[0], ops[1], (unsigned)in->imm, "");
        break;
    case OXIDE_OP_LOAD:
        r = LLVMBuildLoad2(b, rt, ops[0], "");
        LLVMSetAlignment(r, in->align ? in->align : natural_align(in->result->type));
        if (in->is_volatile)
            LLVMSetVolatile(r, 1);
        break;
    case OXIDE_OP_STORE: {
        LLVMValueRef s = LLVMBuildStore(b, ops[0], ops[1]);
        LLVMSetAlignment(s, in->align ? in->align : natural_align(in->operands[0]->type));
        if (in->is_volatile)
            LLVMSetVolatile(s, 1);
        break;
    }
    case OXIDE_OP_OFFSET: {
        LLVMTypeRef et = in->elem ? lty(L, in->elem) : L->ti8;
        r = LLVMBuildGEP2(b, et, ops[0], &ops[1], 1, "");
        break;
    }
    case OXIDE_OP_ALLOCA:
        r = entry_alloca(L, lty(L, in->elem), in->align ? in->align : natural_align(in->elem));
        r = to_generic(L, r);
        break;
    case OXIDE_OP_GLOBAL_ADDR: {
        LLVMValueRef g = global_ref(L, in);
        if (g)
            r = cast_ptr(L, g, rt);
        break;
    }
    case OXIDE_OP_DYN_SMEM: r = cast_ptr(L, dyn_smem(L), rt); break;
    case OXIDE_OP_CALL: {
        oxide_function *callee = oxide__module_find_function(L->mod, in->sym);
        if (!callee || !callee->scratch)
            failf(L, OXIDE_ERROR_VERIFY, "call in @%s: no function named @%s", L->ofn->name, in->sym);
        else if (callee->is_kernel)
            failf(L, OXIDE_ERROR_UNSUPPORTED, "call in @%s: @%s is a kernel; kernels cannot be called", L->ofn->name,
                  in->sym);
        else
            r = call_fn(L, (LLVMValueRef)callee->scratch, ops, n);
        if (!in->result)
            r = NULL;
        break;
    }
    case OXIDE_OP_ATOMIC_ADD:
    case OXIDE_OP_ATOMIC_SUB:
    case OXIDE_OP_ATOMIC_AND:
    case OXIDE_OP_ATOMIC_OR:
    case OXIDE_OP_ATOMIC_XOR:
    case OXIDE_OP_ATOMIC_MIN:
    case OXIDE_OP_ATOMIC_MAX:
    case OXIDE_OP_ATOMIC_UMIN:
    case OXIDE_OP_ATOMIC_UMAX:
    case OXIDE_OP_ATOMIC_EXCH: r = lower_atomic_rmw(L, in, ops[0], ops[1]); break;
    case OXIDE_OP_ATOMIC_CAS: {
        LLVMAtomicOrdering ok = llvm_order(in->order), bad;
        switch (in->order) {
        case OXIDE_ORDER_ACQ_REL:
        case OXIDE_ORDER_ACQUIRE: bad = LLVMAtomicOrderingAcquire; break;
        case OXIDE_ORDER_SEQ_CST: bad = LLVMAtomicOrderingSequentiallyConsistent; break;
        default: bad = LLVMAtomicOrderingMonotonic;
        }
        LLVMValueRef x = LLVMBuildAtomicCmpXchgSyncScope(b, ops[0], ops[1], ops[2], ok, bad, sync_scope(L, in->scope));
        r = LLVMBuildExtractValue(b, x, 0, "");
        break;
    }
    case OXIDE_OP_ATOMIC_LOAD: {
        /* a load cannot release: release orders become acquire (the nearest valid stronger) */
        LLVMAtomicOrdering o = llvm_order(in->order);
        if (o == LLVMAtomicOrderingRelease || o == LLVMAtomicOrderingAcquireRelease)
            o = LLVMAtomicOrderingAcquire;
        r = LLVMBuildLoad2(b, rt, ops[0], "");
        LLVMSetOrdering(r, o);
        LLVMSetAtomicSyncScopeID(r, sync_scope(L, in->scope));
        LLVMSetAlignment(r, natural_align(in->result->type));
        break;
    }
    case OXIDE_OP_ATOMIC_STORE: {
        LLVMAtomicOrdering o = llvm_order(in->order);
        if (o == LLVMAtomicOrderingAcquire || o == LLVMAtomicOrderingAcquireRelease)
            o = LLVMAtomicOrderingRelease;
        LLVMValueRef s = LLVMBuildStore(b, ops[0], ops[1]);
        LLVMSetOrdering(s, o);
        LLVMSetAtomicSyncScopeID(s, sync_scope(L, in->scope));
        LLVMSetAlignment(s, natural_align(in->operands[0]->type));
        break;
    }
    case OXIDE_OP_SHFL_IDX:
    case OXIDE_OP_SHFL_UP:
    case OXIDE_OP_SHFL_DOWN:
    case OXIDE_OP_SHFL_XOR: r = lower_shfl(L, in, ops[0], ops[1]); break;
    case OXIDE_OP_VOTE_ALL:
    case OXIDE_OP_VOTE_ANY:
    case OXIDE_OP_VOTE_BALLOT: {
        LLVMValueRef a[2] = {const_i32(L, (uint32_t)in->imm), ops[0]};
        r = call_intrinsic(L, info->tmpl, NULL, 0, a, 2);
        break;
    }
    case OXIDE_OP_MATCH_ANY: {
        LLVMValueRef v = ops[0];
        unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(v));
        if (bits < 32)
            v = LLVMBuildZExt(b, v, L->ti32, "");
        else if (bits > 64) {
            failf(L, OXIDE_ERROR_UNSUPPORTED, "match.any in @%s: %s is wider than 64 bits", L->ofn->name,
                  in->operands[0]->type->name);
            break;
        }
        LLVMValueRef a[2] = {const_i32(L, (uint32_t)in->imm), v};
        r = call_intrinsic(L, bits == 64 ? "llvm.nvvm.match.any.sync.i64" : "llvm.nvvm.match.any.sync.i32", NULL, 0, a,
                           2);
        break;
    }
    case OXIDE_OP_PRINTF: {
        const char *fmt = in->str ? in->str : "";
        emit_printf(L, fmt, strlen(fmt), ops, n, "printf");
        break;
    }
    case OXIDE_OP_ASSERT: lower_assert(L, in); break;
    default: failf(L, OXIDE_ERROR_CODEGEN, "lowering of '%s' is not implemented", info->name);
    }
done:
    if (ops != small)
        free(ops);
    if (L->st)
        return L->st;
    if (in->result) {
        if (!r)
            return failf(L, OXIDE_ERROR_CODEGEN, "lowering '%s' in @%s produced no value", info->name, L->ofn->name);
        in->result->scratch = r;
    }
    return OXIDE_OK;
}

/* ---- terminators and block parameters ---- */

static oxide_status add_pending(lw *L, LLVMValueRef phi, oxide_value *v, LLVMBasicBlockRef from) {
    if (L->npend == L->cappend) {
        size_t cap = L->cappend ? L->cappend * 2 : 32;
        pending_phi *p = realloc(L->pend, cap * sizeof *p);
        if (!p)
            return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", L->ofn->name);
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
        call_intrinsic(L, "llvm.trap", NULL, 0, NULL, 0);
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
        return failf(L, OXIDE_ERROR_UNSUPPORTED, "@%s: the name is reserved (llvm.*, __nv_*, vprintf)", f->name);
    uint32_t np = f->params.len;
    LLVMTypeRef small[16], *pt = np <= 16 ? small : malloc(np * sizeof *pt);
    if (!pt)
        return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", f->name);
    for (uint32_t i = 0; i < np; i++)
        pt[i] = lty(L, ((oxide_value *)f->params.items[i])->type);
    LLVMTypeRef fty = LLVMFunctionType(f->is_kernel ? L->tvoid : lty(L, f->ret), pt, np, 0);
    if (pt != small)
        free(pt);
    LLVMValueRef fn = LLVMAddFunction(L->m, f->name, fty);
    f->scratch = fn;
    LLVMAttributeIndex fnidx = (LLVMAttributeIndex)LLVMAttributeFunctionIndex;
    add_attr(L, fn, fnidx, "nounwind", 0);
    if (f->is_kernel) {
        LLVMSetFunctionCallConv(fn, 71 /* ptx_kernel */);
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

/* Reverse postorder from the entry: every definition is lowered before its uses (the verifier
 * guarantees dominance). Returns the count of reachable blocks written to order. */
static uint32_t rpo(oxide_function *f, oxide_block **order, uint8_t *state, uint32_t *stack_b, uint32_t *stack_i) {
    uint32_t nb = f->blocks.len, out = nb, sp = 0;
    memset(state, 0, nb);
    stack_b[sp] = 0;
    stack_i[sp++] = 0;
    state[0] = 1;
    while (sp) {
        oxide_block *b = f->blocks.items[stack_b[sp - 1]];
        oxide_inst *t = b->insts.len ? b->insts.items[b->insts.len - 1] : NULL;
        uint32_t ns = t ? t->nsucc : 0;
        if (stack_i[sp - 1] < ns) {
            oxide_block *s = t->succ[stack_i[sp - 1]++].block;
            if (s && !state[s->index]) {
                state[s->index] = 1;
                stack_b[sp] = s->index;
                stack_i[sp++] = 0;
            }
        } else {
            order[--out] = b;
            sp--;
        }
    }
    /* compact to the front */
    uint32_t n = nb - out;
    memmove(order, order + out, n * sizeof *order);
    return n;
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
        return failf(L, OXIDE_ERROR_VERIFY, "@%s has no blocks", f->name);
    oxide_block **order = malloc(nb * sizeof *order);
    uint8_t *state = malloc(nb);
    uint32_t *sb = malloc(nb * sizeof *sb), *si = malloc(nb * sizeof *si);
    if (!order || !state || !sb || !si) {
        free(order), free(state), free(sb), free(si);
        return failf(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", f->name);
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
    uint32_t nr = rpo(f, order, state, sb, si);
    /* phis first, so that branches lowered before a block can name its parameters */
    for (uint32_t i = 0; i < nb; i++) {
        oxide_block *b = f->blocks.items[i];
        LLVMPositionBuilderAtEnd(L->b, (LLVMBasicBlockRef)b->scratch);
        for (uint32_t j = 0; j < b->params.len; j++) {
            oxide_value *v = b->params.items[j];
            v->scratch = LLVMBuildPhi(L->b, lty(L, v->type), "");
            if (v->name)
                LLVMSetValueName2((LLVMValueRef)v->scratch, v->name, strlen(v->name));
        }
    }
    for (uint32_t k = 0; k < nr && !L->st; k++) {
        oxide_block *b = order[k];
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
            failf(L, OXIDE_ERROR_VERIFY, "block ^%u of @%s does not end in a terminator", b->index, f->name);
    }
    /* blocks the entry cannot reach: never executed, and their phis get no incoming values */
    for (uint32_t i = 0; i < nb && !L->st; i++) {
        oxide_block *b = f->blocks.items[i];
        bool reached = false;
        for (uint32_t k = 0; k < nr && !reached; k++)
            reached = order[k] == b;
        if (!reached) {
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
            failf(L, OXIDE_ERROR_VERIFY, "a branch in @%s passes a value that is not defined on that path", f->name);
            break;
        }
        LLVMBasicBlockRef from = L->pend[i].from;
        LLVMAddIncoming(L->pend[i].phi, &v, &from, 1);
    }
    LLVMSetCurrentDebugLocation2(L->b, NULL);
    free(order), free(state), free(sb), free(si);
    return L->st;
}

/* ---- globals ---- */

static void lower_global(lw *L, oxide_global *g) {
    if (reserved_name(g->name)) {
        failf(L, OXIDE_ERROR_UNSUPPORTED, "@%s: the name is reserved (llvm.*, __nv_*, vprintf)", g->name);
        return;
    }
    LLVMTypeRef t = lty(L, g->type);
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
    if (!opts) {
        oxide__options_default(&defaults);
        opts = &defaults;
    }
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
        failf(&L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering module %s", mod->name);

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
