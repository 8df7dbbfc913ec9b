/* What NVPTX's instruction selection cannot do, refused before codegen and named by the Rust
 * function that does it. Without this LLVM meets it first, deep in codegen, and ends the process
 * ("unsupported library call operation", "Cannot select"), or reports it without saying where.
 * Found by compiling each construct with llc for nvptx64 (LLVM 22): 128-bit integer <-> float
 * conversions need compiler-rt calls the GPU has no bodies for; f128 arithmetic likewise; 128-bit
 * atomics are not selected; an indirect branch cannot be; thread-local storage has no GPU form.
 * 128-bit add, multiply, shift, division and remainder are selected (expanded inline). */
#include <stdio.h>

#include "import.h"

/* The bit width of an integer (or integer vector's element) type, 0 for anything else. */
static unsigned int_width(LLVMTypeRef t) {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
        t = LLVMGetElementType(t);
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

static bool is_wide_float(LLVMTypeRef t) {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
        t = LLVMGetElementType(t);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    return k == LLVMFP128TypeKind || k == LLVMX86_FP80TypeKind || k == LLVMPPC_FP128TypeKind;
}

static const char *unselectable(LLVMValueRef i) {
    LLVMOpcode op = LLVMGetInstructionOpcode(i);
    if ((op == LLVMSIToFP || op == LLVMUIToFP) && int_width(LLVMTypeOf(LLVMGetOperand(i, 0))) > 64)
        return "converts a 128-bit integer to a float (`as f32`/`as f64` on i128/u128), which needs a "
               "library routine the GPU does not have";
    if ((op == LLVMFPToSI || op == LLVMFPToUI) && int_width(LLVMTypeOf(i)) > 64)
        return "converts a float to a 128-bit integer (`as i128`/`as u128`), which needs a library routine "
               "the GPU does not have";
    if ((op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) &&
        int_width(LLVMTypeOf(LLVMGetOperand(i, op == LLVMAtomicRMW ? 1 : 2))) > 64)
        return "performs a 128-bit atomic operation, which NVPTX cannot compile";
    if (op == LLVMIndirectBr)
        return "branches to a computed address, which NVPTX cannot compile";
    if (op == LLVMCall) {
        size_t nl;
        LLVMValueRef callee = LLVMGetCalledValue(i);
        const char *name = LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &nl) : "";
        if ((oxide__starts(name, "llvm.fptosi.sat.") || oxide__starts(name, "llvm.fptoui.sat.")) &&
            int_width(LLVMTypeOf(i)) > 64)
            return "converts a float to a 128-bit integer (`as i128`/`as u128`), which needs a library routine "
                   "the GPU does not have";
    }
    if (is_wide_float(LLVMTypeOf(i)))
        return "computes with f128, which the GPU has no instructions or library routines for";
    for (int k = 0, n = LLVMGetNumOperands(i); k < n; k++)
        if (is_wide_float(LLVMTypeOf(LLVMGetOperand(i, k))))
            return "computes with f128, which the GPU has no instructions or library routines for";
    return NULL;
}

/* An instruction that uses v, directly or through a constant expression. */
static LLVMValueRef user_instruction(LLVMValueRef v, int depth) {
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsAInstruction(user))
            return user;
        LLVMValueRef i = depth < 4 && LLVMIsAConstant(user) ? user_instruction(user, depth + 1) : NULL;
        if (i)
            return i;
    }
    return NULL;
}

oxide_status oxide__check_selectable(LLVMModuleRef m) {
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
        if (!LLVMIsThreadLocal(g))
            continue;
        size_t nl;
        return oxide__refuse(m, user_instruction(g, 0), NULL,
                             "uses the thread-local static %s (thread_local!), which has no GPU form: a GPU "
                             "thread's own data lives in local variables, a block's in shared memory",
                             oxide__demangle(LLVMGetValueName2(g, &nl), (char[256]){0}, 256));
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
                const char *why = unselectable(i);
                if (why)
                    return oxide__refuse(m, i, NULL, "%s", why);
            }
    return OXIDE_OK;
}
