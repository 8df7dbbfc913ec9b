/* Lowering of the core ops (ops.def up to "debug") to LLVM IR: LLVM instructions, intrinsics,
 * libdevice calls and PTX inline asm, as each op's row says. The tier-2 ops are in
 * lib/lower_hopper.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

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
        lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory building inline asm");
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

/* The text of -$1 for an i32 or i64: not, then + 1. ptxas (CUDA 13.0: sm_90, sm_90a and sm_100a)
 * fuses min(min(-a, -b), c) into one three-input VIMNMX3 that keeps only one of the two
 * negations, so min(-a, b, c) is computed instead (found by the GPU difftile: an i32 tile
 * negated, then reduced with min along the registers of each thread); it takes not + 1 for what
 * it is (LOP3 and an add it folds into the min), with no negation modifier to lose. */
static const char *not_plus_one(bool wide) {
    return wide ? "not.b64 $0, $1;\n\tadd.s64 $0, $0, 1;" : "not.b32 $0, $1;\n\tadd.s32 $0, $0, 1;";
}

/* -x for an i32 or i64 x in asm LLVM cannot fold back into sub 0, x. */
static LLVMValueRef opaque_neg(lw *L, const oxide_inst *in, LLVMValueRef x) {
    LLVMValueRef arg[1] = {x};
    asm_spec neg = {not_plus_one(LLVMTypeOf(x) == L->ti64), LLVMTypeOf(x), arg, 1, false, false, false, in};
    return emit_asm(L, &neg);
}

void oxide__opaque_negations(LLVMModuleRef m) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    unsigned md = LLVMGetMDKindIDInContext(c, OXIDE_ASM_MD, (unsigned)strlen(OXIDE_ASM_MD));
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c), i64 = LLVMInt64TypeInContext(c);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
                next = LLVMGetNextInstruction(in);
                LLVMTypeRef t = LLVMTypeOf(in);
                LLVMValueRef z = LLVMGetInstructionOpcode(in) == LLVMSub ? LLVMGetOperand(in, 0) : NULL;
                if (!z || LLVMGetTypeKind(t) != LLVMIntegerTypeKind || !LLVMIsAConstantInt(z) ||
                    LLVMConstIntGetZExtValue(z) != 0 || LLVMGetIntTypeWidth(t) > 64 || LLVMGetIntTypeWidth(t) < 8)
                    continue;
                /* narrow types in 32 bits: the low bits of the negation are the same */
                bool wide = LLVMGetIntTypeWidth(t) == 64;
                LLVMTypeRef wt = wide ? i64 : i32;
                LLVMPositionBuilderBefore(b, in);
                LLVMValueRef x = LLVMGetOperand(in, 1);
                LLVMValueRef arg = t == wt ? x : LLVMBuildSExt(b, x, wt, "");
                LLVMTypeRef fty = LLVMFunctionType(wt, &wt, 1, 0);
                const char *text = not_plus_one(wide), *cons = wide ? "=l,l" : "=r,r";
                LLVMValueRef asmv = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, 4, 0, 0,
                                                     LLVMInlineAsmDialectATT, 0);
                LLVMValueRef r = LLVMBuildCall2(b, fty, asmv, &arg, 1, "");
                LLVMSetMetadata(r, md, LLVMMetadataAsValue(c, LLVMMDStringInContext2(c, "", 0)));
                if (t != wt)
                    r = LLVMBuildTrunc(b, r, t, "");
                LLVMReplaceAllUsesWith(in, r);
                LLVMInstructionEraseFromParent(in);
            }
    LLVMDisposeBuilder(b);
}

/* iabs wraps (|MIN| is MIN). ptxas treats the result of PTX abs.sN as non-negative and folds a
 * later sign extension or signed conversion of MIN into an unsigned one (found by the GPU
 * difftest), so abs.sN is never emitted: the negation is opaque asm and the choice a select,
 * which LLVM cannot merge back into llvm.abs. Narrow types work in 32 bits; truncating gives
 * the same wrapped result. */
static LLVMValueRef iabs_scalar(lw *L, const oxide_inst *in, LLVMValueRef *args, unsigned n, LLVMTypeRef t) {
    (void)n;
    LLVMTypeRef wt = LLVMGetIntTypeWidth(t) == 64 ? L->ti64 : L->ti32;
    LLVMValueRef x = t == wt ? args[0] : LLVMBuildSExt(L->b, args[0], wt, "");
    LLVMValueRef m = opaque_neg(L, in, x);
    if (!m)
        return NULL;
    LLVMValueRef r = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, x, LLVMConstInt(wt, 0, 0), ""), m, x, "");
    return t == wt ? r : LLVMBuildTrunc(L->b, r, t, "");
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
    LLVMValueRef f = lw_declare_fn(L, name, ct, pt, n, false);
    LLVMValueRef a[3];
    for (unsigned i = 0; i < n && i < 3; i++)
        a[i] = f64 ? args[i] : widen(L, args[i]);
    LLVMValueRef r = lw_call_fn(L, f, a, n);
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
    return lw_call_intrinsic(L, name, NULL, 0, args, 4);
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
        lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "'%s' of %s in @%s: shuffles move at most 64 bits", oxide_ops[in->op].name,
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
        L->vprintf = lw_declare_fn(L, "vprintf", L->ti32, p, 2, false);
    }
    return L->vprintf;
}

/* vprintf(format, buffer): the arguments laid out as a C struct of the promoted types, the way
 * CUDA's printf passes them (default argument promotions: float to double, small ints to int). */
static oxide_status emit_printf(lw *L, const char *fmt, size_t fmtlen, LLVMValueRef *args, unsigned n,
                                const char *what) {
    LLVMValueRef f = lw_to_generic(L, lw_global_string(L, fmt, fmtlen));
    LLVMValueRef buf = LLVMConstPointerNull(L->tptr);
    if (n) {
        LLVMTypeRef small[16], *ft = n <= 16 ? small : malloc(n * sizeof *ft);
        LLVMValueRef smallv[16], *fv = n <= 16 ? smallv : malloc(n * sizeof *fv);
        if (!ft || !fv) {
            if (ft != small)
                free(ft);
            if (fv != smallv)
                free(fv);
            return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering %s", what);
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
            case LLVMPointerTypeKind: a = lw_to_generic(L, a); break;
            default:
                lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "%s in @%s: argument %u is not a scalar or pointer", what,
                        L->ofn->name, i);
            }
            ft[i] = LLVMTypeOf(a);
            fv[i] = a;
        }
        if (!L->st) {
            LLVMTypeRef st = LLVMStructTypeInContext(L->c, ft, n, 0);
            LLVMValueRef mem = lw_entry_alloca(L, st, 8);
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
    lw_call_fn(L, vprintf_fn(L), a2, 2);
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
        return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering assert");
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
        a[i] = lw_call_intrinsic(L, ids[i], NULL, 0, NULL, 0);
    oxide_status st = emit_printf(L, fmt, n, a, 6, "assert");
    free(fmt);
    if (st)
        return st;
    lw_call_intrinsic(L, "llvm.trap", NULL, 0, NULL, 0);
    LLVMBuildUnreachable(L->b);
    LLVMPositionBuilderAtEnd(L->b, cont);
    return OXIDE_OK;
}

static LLVMValueRef lower_const(lw *L, const oxide_inst *in) {
    LLVMTypeRef t = lw_type(L, in->result->type);
    if (oxide__type_is_zeroable(in->result->type))
        return LLVMConstNull(t);
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
        LLVMValueRef a[2] = {lw_to_generic(L, ops[0]), ops[1]};
        return lw_call_intrinsic(L, tmpl, NULL, 0, a, 2);
    }
    if (tl > 2 && !strcmp(tmpl + tl - 2, ".T")) {
        char base[64];
        if (tl - 2 >= sizeof base)
            return lw_call_intrinsic(L, tmpl, NULL, 0, ops, n); /* no such intrinsic: its error */
        memcpy(base, tmpl, tl - 2);
        base[tl - 2] = 0;
        LLVMTypeRef t = lw_type(L, in->operands[0]->type);
        LLVMValueRef r = lw_call_intrinsic(L, base, &t, 1, ops, n);
        if (r)
            lw_fp_flags(L, r);
        return r;
    }
    return lw_call_intrinsic(L, tmpl, NULL, 0, ops, n);
}

static LLVMValueRef global_ref(lw *L, const oxide_inst *in) {
    oxide_global *g = oxide__module_find_global(L->mod, in->sym);
    if (!g || !g->scratch) {
        lw_fail(L, OXIDE_ERROR_VERIFY, "global.addr in @%s: no global named @%s", L->ofn->name, in->sym);
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

/* memory, calls, atomics, warp and debug */
static LLVMValueRef lower_memory_op(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n, LLVMTypeRef rt) {
    const oxide_op_info *info = &oxide_ops[in->op];
    LLVMBuilderRef b = L->b;
    LLVMValueRef r = NULL;
    switch (in->op) {
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
        LLVMTypeRef et = in->elem ? lw_type(L, in->elem) : L->ti8;
        r = LLVMBuildGEP2(b, et, ops[0], &ops[1], 1, "");
        break;
    }
    case OXIDE_OP_ALLOCA:
        r = lw_entry_alloca(L, lw_type(L, in->elem), in->align ? in->align : natural_align(in->elem));
        r = lw_to_generic(L, r);
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
            lw_fail(L, OXIDE_ERROR_VERIFY, "call in @%s: no function named @%s", L->ofn->name, in->sym);
        else if (callee->is_kernel)
            lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "call in @%s: @%s is a kernel; kernels cannot be called", L->ofn->name,
                    in->sym);
        else
            r = lw_call_fn(L, (LLVMValueRef)callee->scratch, ops, n);
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
        r = lw_call_intrinsic(L, info->tmpl, NULL, 0, a, 2);
        break;
    }
    case OXIDE_OP_MATCH_ANY: {
        LLVMValueRef v = ops[0];
        unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(v));
        if (bits < 32)
            v = LLVMBuildZExt(b, v, L->ti32, "");
        else if (bits > 64) {
            lw_fail(L, OXIDE_ERROR_UNSUPPORTED, "match.any in @%s: %s is wider than 64 bits", L->ofn->name,
                    in->operands[0]->type->name);
            break;
        }
        LLVMValueRef a[2] = {const_i32(L, (uint32_t)in->imm), v};
        r = lw_call_intrinsic(L, bits == 64 ? "llvm.nvvm.match.any.sync.i64" : "llvm.nvvm.match.any.sync.i32", NULL, 0,
                              a, 2);
        break;
    }
    case OXIDE_OP_PRINTF: {
        const char *fmt = in->str ? in->str : "";
        emit_printf(L, fmt, strlen(fmt), ops, n, "printf");
        break;
    }
    case OXIDE_OP_ASSERT: lower_assert(L, in); break;
    default: lw_fail(L, OXIDE_ERROR_CODEGEN, "lowering of '%s' is not implemented", info->name);
    }
    return r;
}

/* constants, arithmetic, casts and aggregates; the rest in lower_memory_op */
static LLVMValueRef lower_value_op(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n, LLVMTypeRef rt) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef r = NULL;
    switch (in->op) {
    case OXIDE_OP_CONST: r = lower_const(L, in); break;
    case OXIDE_OP_ADD:
        r = is_float_type(rt) ? LLVMBuildFAdd(b, ops[0], ops[1], "") : LLVMBuildAdd(b, ops[0], ops[1], "");
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_SUB:
        r = is_float_type(rt) ? LLVMBuildFSub(b, ops[0], ops[1], "") : LLVMBuildSub(b, ops[0], ops[1], "");
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_MUL:
        r = is_float_type(rt) ? LLVMBuildFMul(b, ops[0], ops[1], "") : LLVMBuildMul(b, ops[0], ops[1], "");
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_SDIV: r = LLVMBuildSDiv(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_UDIV: r = LLVMBuildUDiv(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_SREM: r = LLVMBuildSRem(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_UREM: r = LLVMBuildURem(b, ops[0], ops[1], ""); break;
    case OXIDE_OP_FDIV:
        r = LLVMBuildFDiv(b, ops[0], ops[1], "");
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_FREM:
        r = LLVMBuildFRem(b, ops[0], ops[1], "");
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_NEG:
        /* an integer negation left after optimisation is made opaque (oxide__opaque_negations) */
        r = is_float_type(rt) ? LLVMBuildFNeg(b, ops[0], "") : LLVMBuildNeg(b, ops[0], "");
        lw_fp_flags(L, r);
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
        lw_fp_flags(L, r);
        break;
    case OXIDE_OP_SELECT: r = LLVMBuildSelect(b, ops[0], ops[1], ops[2], ""); break;
    case OXIDE_OP_CLZ: {
        LLVMTypeRef t = LLVMTypeOf(ops[0]);
        LLVMValueRef a[2] = {ops[0], LLVMConstInt(L->ti1, 0, 0)};
        r = lw_call_intrinsic(L, "llvm.ctlz", &t, 1, a, 2);
        break;
    }
    case OXIDE_OP_IABS: r = per_element(L, in, ops, 1, rt, iabs_scalar); break;
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
    default: return lower_memory_op(L, in, ops, n, rt);
    }
    return r;
}

oxide_status lower_inst(lw *L, const oxide_inst *in) {
    const oxide_op_info *info = &oxide_ops[in->op];
    unsigned n = in->noperands;
    LLVMValueRef small[8] = {0}, *ops = n <= 8 ? small : calloc(n, sizeof *ops);
    if (!ops)
        return lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering '%s'", info->name);
    for (uint32_t i = 0; i < n; i++) {
        ops[i] = V(in->operands[i]);
        if (!ops[i]) {
            if (ops != small)
                free(ops);
            return lw_fail(L, OXIDE_ERROR_VERIFY, "'%s' in @%s uses a value before its definition", info->name,
                           L->ofn->name);
        }
    }
    LLVMTypeRef rt = in->result ? lw_type(L, in->result->type) : NULL;
    LLVMValueRef r = NULL;

    if (info->tier == 2) {
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

    r = lower_value_op(L, in, ops, n, rt); /* hands what it does not know to lower_memory_op */
done:
    if (ops != small)
        free(ops);
    if (L->st)
        return L->st;
    if (in->result) {
        if (!r)
            return lw_fail(L, OXIDE_ERROR_CODEGEN, "lowering '%s' in @%s produced no value", info->name, L->ofn->name);
        in->result->scratch = r;
    }
    return OXIDE_OK;
}
