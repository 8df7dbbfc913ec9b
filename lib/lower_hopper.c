/* Lowering of the tier-2 ops of ops.def (asynchronous copies, tensor cores, Hopper) to NVVM
 * intrinsics and, where LLVM has none, PTX inline asm (docs/ir.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* Inline asm written in LLVM's own syntax with explicit constraints, for what emit_asm's
 * one-result templates cannot say (wgmma: up to 128 results tied to as many inputs). Always
 * side-effecting, convergent and a memory clobber: these instructions read shared memory
 * asynchronously and are warpgroup-collective. */
static LLVMValueRef emit_asm_raw(lw *L, const char *text, const char *cons, LLVMTypeRef ret, LLVMValueRef *args,
                                 unsigned n) {
    LLVMTypeRef *at = malloc((n ? n : 1) * sizeof *at);
    if (!at) {
        lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory building inline asm");
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

/* Inline asm whose results are the n f32 accumulators of acc (an array), each tied to its input
 * after the nin others (constraints cin, e.g. ",l,l,r"): the shape of wgmma and of its tied
 * wait. In the text the accumulators are $0..$n-1 and the other inputs $n... */
static LLVMValueRef tied_acc_asm(lw *L, const oxide_inst *in, const char *text, const char *cin, LLVMValueRef *ins,
                                 unsigned nin, LLVMValueRef acc, LLVMTypeRef rt) {
    unsigned n = (unsigned)LLVMGetArrayLength2(rt);
    size_t cap = 64 + strlen(cin) + (size_t)n * 12;
    char *cons = malloc(cap);
    LLVMValueRef *args = malloc((n + nin) * sizeof *args), r = NULL;
    LLVMTypeRef *ft = malloc(n * sizeof *ft);
    if (!cons || !args || !ft) {
        lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering '%s'", oxide_ops[in->op].name);
        goto out;
    }
    size_t c = 0;
    for (unsigned i = 0; i < n; i++)
        c += (size_t)snprintf(cons + c, cap - c, "%s=f", i ? "," : "");
    c += (size_t)snprintf(cons + c, cap - c, "%s", cin);
    for (unsigned i = 0; i < n; i++)
        c += (size_t)snprintf(cons + c, cap - c, ",%u", i);
    snprintf(cons + c, cap - c, ",~{memory}");
    for (unsigned i = 0; i < nin; i++)
        args[i] = ins[i];
    for (unsigned i = 0; i < n; i++) {
        args[nin + i] = LLVMBuildExtractValue(L->b, acc, i, "");
        ft[i] = L->tf32;
    }
    LLVMValueRef s = emit_asm_raw(L, text, cons, LLVMStructTypeInContext(L->c, ft, n, 0), args, n + nin);
    if (s)
        r = struct_to(L, s, rt, n);
out:
    free(cons), free(args), free(ft);
    return r;
}

static LLVMValueRef lower_wgmma(lw *L, const oxide_inst *in, LLVMValueRef *ops, LLVMTypeRef rt) {
    unsigned n = (unsigned)LLVMGetArrayLength2(rt); /* f32 accumulators per thread: N/2 */
    size_t cap = 256 + (size_t)n * 8;
    char *text = malloc(cap);
    if (!text) {
        lw_fail(L, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering '%s'", oxide_ops[in->op].name);
        return NULL;
    }
    /* ops.def's template with $N replaced. Braces are literal: NVPTX has one asm dialect, and
     * LLVM's "$(" would open a dialect alternative. */
    const char *tmpl = oxide_ops[in->op].tmpl, *dollar = strstr(tmpl, "$N");
    int imm = (int)in->imm;
    /* from registers, A is four b32 operands after the accumulators, and the scale-d operand
     * follows them */
    bool rs = in->op == OXIDE_OP_WGMMA_BF16_RS || in->op == OXIDE_OP_WGMMA_F16_RS;
    /* fp8 operands are K-major only: the PTX form has no transpose operands */
    bool fp8 = in->op == OXIDE_OP_WGMMA_E4M3_E4M3 || in->op == OXIDE_OP_WGMMA_E4M3_E5M2 ||
               in->op == OXIDE_OP_WGMMA_E5M2_E4M3 || in->op == OXIDE_OP_WGMMA_E5M2_E5M2;
    unsigned na = rs ? 4 : 1;
    size_t k = (size_t)snprintf(text, cap, "{ .reg .pred p; setp.ne.b32 p, $%u, 0; %.*s%u%s {", n + na + 1,
                                (int)(dollar - tmpl), tmpl, n * 2, dollar + 2);
    for (unsigned i = 0; i < n; i++)
        k += (size_t)snprintf(text + k, cap - k, "%s$%u", i ? ", " : "", i);
    if (rs)
        snprintf(text + k, cap - k, "}, {$%u, $%u, $%u, $%u}, $%u, p, %d, %d, %d; }", n, n + 1, n + 2, n + 3, n + 4,
                 imm & 4 ? -1 : 1, imm & 8 ? -1 : 1, (imm >> 1) & 1);
    else if (fp8)
        snprintf(text + k, cap - k, "}, $%u, $%u, p, %d, %d; }", n, n + 1, imm & 4 ? -1 : 1, imm & 8 ? -1 : 1);
    else
        snprintf(text + k, cap - k, "}, $%u, $%u, p, %d, %d, %d, %d; }", n, n + 1, imm & 4 ? -1 : 1, imm & 8 ? -1 : 1,
                 imm & 1, (imm >> 1) & 1);
    LLVMValueRef ins[6];
    for (unsigned i = 0; i < na; i++)
        ins[i] = rs ? LLVMBuildExtractElement(L->b, ops[1], const_i32(L, i), "") : ops[1];
    ins[na] = ops[2];
    ins[na + 1] = LLVMBuildZExt(L->b, ops[3], L->ti32, "");
    LLVMValueRef r = tied_acc_asm(L, in, text, rs ? ",r,r,r,r,l,r" : ",l,l,r", ins, na + 2, ops[0], rt);
    free(text);
    return r;
}

/* wgmma.wait_group with the accumulators tied through it. */
static LLVMValueRef lower_wgmma_wait_acc(lw *L, const oxide_inst *in, LLVMValueRef *ops, LLVMTypeRef rt) {
    char text[96];
    snprintf(text, sizeof text, "%s %d;", oxide_ops[in->op].tmpl, (int)in->imm);
    return tied_acc_asm(L, in, text, "", NULL, 0, ops[0], rt);
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

/* mma.sync: the intrinsic takes the fragments register by register, and returns D as a struct. */
static LLVMValueRef lower_mma_sync(lw *L, const oxide_inst *in, LLVMValueRef *ops, LLVMTypeRef rt) {
    /* f16 inputs travel as <2 x half>, bf16 and fp8 ones as the packed i32 */
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
    LLVMValueRef r = lw_call_intrinsic(L, oxide_ops[in->op].tmpl, NULL, 0, a, 10);
    return r ? struct_to(L, r, rt, 4) : NULL;
}

LLVMValueRef lower_tier2(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n, LLVMTypeRef rt) {
    const char *tmpl = oxide_ops[in->op].tmpl;
    char name[128];
    switch (in->op) {
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL:
        /* the .s forms take the source size: bytes past it are filled with zeros */
        snprintf(name, sizeof name, "%s.%lld%s", tmpl, (long long)in->imm, n == 3 ? ".s" : "");
        return lw_call_intrinsic(L, name, NULL, 0, ops, n);
    case OXIDE_OP_CP_ASYNC_WAIT:
    case OXIDE_OP_BULK_WAIT:
    case OXIDE_OP_BULK_WAIT_READ:
    case OXIDE_OP_SETMAXNREG_INC:
    case OXIDE_OP_SETMAXNREG_DEC: {
        LLVMValueRef a = const_i32(L, (uint64_t)in->imm);
        return lw_call_intrinsic(L, tmpl, NULL, 0, &a, 1);
    }
    case OXIDE_OP_WGMMA_WAIT: {
        LLVMValueRef a = LLVMConstInt(L->ti64, (uint64_t)in->imm, 0);
        return lw_call_intrinsic(L, tmpl, NULL, 0, &a, 1);
    }
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS: {
        unsigned k = fragment_regs(rt);
        snprintf(name, sizeof name, "%s.x%u%s.b16", tmpl, k, in->op == OXIDE_OP_LDMATRIX_TRANS ? ".trans" : "");
        LLVMTypeRef pt = LLVMTypeOf(ops[0]);
        LLVMValueRef r = lw_call_intrinsic(L, name, &pt, 1, ops, 1);
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
        return lw_call_intrinsic(L, name, &pt, 1, a, 1 + k);
    }
    OXIDE_CASE_MMA_SYNC:
        return lower_mma_sync(L, in, ops, rt);
    case OXIDE_OP_CVT_E4M3X2_F32:
    case OXIDE_OP_CVT_E5M2X2_F32: {
        /* PTX puts its first operand in the high byte; oxide's operand 0 is element 0, the low one */
        LLVMValueRef a[2] = {ops[1], ops[0]};
        return lw_call_intrinsic(L, tmpl, NULL, 0, a, 2);
    }
    case OXIDE_OP_ELECT_SYNC: {
        LLVMValueRef a = const_i32(L, (uint32_t)in->imm);
        LLVMValueRef r = lw_call_intrinsic(L, tmpl, NULL, 0, &a, 1);
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
        a[k++] = lw_to_generic(L, ops[1]);
        for (unsigned i = 0; i < dims; i++)
            a[k++] = ops[first + i];
        a[k++] = mc ? LLVMBuildTrunc(L->b, ops[3], L->ti16, "") : LLVMConstInt(L->ti16, 0, 0);
        a[k++] = LLVMConstInt(L->ti64, 0, 0);
        a[k++] = LLVMConstInt(L->ti1, mc, 0);
        a[k++] = LLVMConstInt(L->ti1, 0, 0);
        a[k++] = const_i32(L, 0);
        snprintf(name, sizeof name, "%s.%ud", tmpl, dims);
        return lw_call_intrinsic(L, name, NULL, 0, a, k);
    }
    case OXIDE_OP_TMA_STORE: {
        /* s2g(src shared::cta, tensor map, coords..., cache hint, use hint) */
        unsigned dims = n - 2, k = 0;
        LLVMValueRef a[16];
        a[k++] = ops[1];
        a[k++] = lw_to_generic(L, ops[0]);
        for (unsigned i = 0; i < dims; i++)
            a[k++] = ops[2 + i];
        a[k++] = LLVMConstInt(L->ti64, 0, 0);
        a[k++] = LLVMConstInt(L->ti1, 0, 0);
        snprintf(name, sizeof name, "%s.%ud", tmpl, dims);
        return lw_call_intrinsic(L, name, NULL, 0, a, k);
    }
    case OXIDE_OP_MBARRIER_ARRIVE_CLUSTER: {
        /* the barrier at the same offset in CTA `rank` of the cluster, arrived on once with
         * release semantics at cluster scope */
        LLVMValueRef a[2] = {ops[0], ops[1]};
        LLVMValueRef remote = lw_call_intrinsic(L, "llvm.nvvm.mapa.shared.cluster", NULL, 0, a, 2);
        if (!remote)
            return NULL;
        LLVMValueRef b[2] = {remote, const_i32(L, 1)};
        return lw_call_intrinsic(L, tmpl, NULL, 0, b, 2);
    }
    case OXIDE_OP_TMA_PREFETCH_DESC: {
        LLVMValueRef p = lw_to_generic(L, ops[0]);
        LLVMTypeRef pt = LLVMTypeOf(p);
        return lw_call_intrinsic(L, tmpl, &pt, 1, &p, 1);
    }
    case OXIDE_OP_WGMMA_BF16:
    case OXIDE_OP_WGMMA_F16:
    case OXIDE_OP_WGMMA_BF16_RS:
    case OXIDE_OP_WGMMA_F16_RS:
    case OXIDE_OP_WGMMA_E4M3_E4M3:
    case OXIDE_OP_WGMMA_E4M3_E5M2:
    case OXIDE_OP_WGMMA_E5M2_E4M3:
    case OXIDE_OP_WGMMA_E5M2_E5M2: return lower_wgmma(L, in, ops, rt);
    case OXIDE_OP_WGMMA_DESC: return lower_wgmma_desc(L, in, ops);
    case OXIDE_OP_WGMMA_WAIT_ACC: return lower_wgmma_wait_acc(L, in, ops, rt);
    default:
        /* the rest map one to one onto their intrinsic */
        return lw_call_intrinsic(L, tmpl, NULL, 0, ops, n);
    }
}
