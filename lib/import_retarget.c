/* Retargeting imported host code to the GPU: the nvptx64 triple and layout, host attributes
 * removed, the host stubs of the device intrinsics replaced by their device bodies
 * (lib/rust_intrinsics.inc, generated from lib/ops.def), panics turned into a printed message
 * and a trap, libm calls sent to libdevice, shared-memory statics moved to addrspace(3), and
 * calls that cannot run on a GPU refused, naming the Rust function. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>

#include "import.h"
#include "rust_intrinsics.inc"

/* A unit read from host bitcode, given the GPU's triple and layout, without its module-level
 * asm and the host-only globals that would clash between crates. */
void oxide__retarget_unit(LLVMModuleRef m, LLVMModuleRef dst) {
    LLVMSetTarget(m, OXIDE_NVPTX_TRIPLE);
    LLVMSetDataLayout(m, LLVMGetDataLayoutStr(dst));
    LLVMSetModuleInlineAsm2(m, "", 0);
    const char *drop[] = {"llvm.used", "llvm.compiler.used", "llvm.global_ctors", "llvm.global_dtors"};
    for (size_t d = 0; d < 4; d++) {
        LLVMValueRef g = LLVMGetNamedGlobal(m, drop[d]);
        if (g)
            LLVMDeleteGlobal(g);
    }
}

void oxide__strip_host_attrs(LLVMValueRef f) {
    static const char *const attrs[] = {"target-cpu",  "target-features",     "tune-cpu",
                                        "probe-stack", "frame-pointer",       "stack-protector-buffer-size",
                                        "no-builtins", "prefer-vector-width", "min-legal-vector-width"};
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
        LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, attrs[i], (unsigned)strlen(attrs[i]));
    /* optnone/noinline: rustc puts them on every function of an opt-level=0 (dev) build; the GPU
     * code is optimised regardless of the host's profile */
    static const char *const enums[] = {"uwtable", "nonlazybind",      "sspstrong", "sspreq",
                                        "ssp",     "sanitize_address", "optnone",   "noinline"};
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
        LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                       LLVMGetEnumAttributeKindForName(enums[i], strlen(enums[i])));
    if (LLVMHasPersonalityFn(f))
        LLVMSetPersonalityFn(f, NULL);
    /* dev builds also mark call sites noinline */
    unsigned ni = LLVMGetEnumAttributeKindForName("noinline", 8);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
            if (LLVMIsACallInst(i) || LLVMIsAInvokeInst(i))
                LLVMRemoveCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, ni);
}

/* Panic entry points of core/std (and anything else that never returns and is not defined). */
const char *oxide__panic_reason(const char *rust, LLVMValueRef f) {
    if (strstr(rust, "panic_bounds_check"))
        return "index out of bounds";
    if (strstr(rust, "panic_const_")) {
        const char *p = strstr(rust, "panic_const_") + 12;
        return p;
    }
    if (strstr(rust, "unwrap_failed"))
        return "called unwrap() on a None or Err value";
    if (strstr(rust, "expect_failed"))
        return "expect() failed";
    if (strstr(rust, "slice_") && strstr(rust, "_fail"))
        return "slice index out of range";
    if (strstr(rust, "str_index") || strstr(rust, "slice_error_fail"))
        return "str index out of range";
    if (strstr(rust, "core::panicking::") || strstr(rust, "std::panicking::") || strstr(rust, "core::result::") ||
        strstr(rust, "core::option::") || strstr(rust, "panic"))
        return "explicit panic";
    unsigned nr = LLVMGetEnumAttributeKindForName("noreturn", 8);
    if (LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, nr))
        return "a function that never returns";
    return NULL;
}

/* Before each call to a panic function: vprintf("panicked at FILE:LINE:COL: REASON\n"); the
 * panic function itself becomes `trap; unreachable`. */
static void trap_panics(LLVMModuleRef m, LLVMTargetDataRef td, LLVMValueRef f, const char *reason,
                        LLVMValueRef vprintf_fn, LLVMTypeRef vprintf_ty) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    char rb[512];
    size_t fl;
    /* panic!("text {}", x) reaches panic_fmt: its message is the template's text */
    bool fmt_panic = strstr(oxide__demangle(LLVMGetValueName2(f, &fl), rb, sizeof rb), "panicking::panic_fmt") != NULL;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef call = LLVMGetUser(u);
        if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != f)
            continue;
        /* the &Location argument is the last pointer argument that is a constant global */
        char file[256] = "";
        uint32_t line = 0, col = 0;
        int na = LLVMGetNumArgOperands(call);
        for (int a = na - 1; a >= 0; a--) {
            LLVMValueRef v = LLVMGetOperand(call, (unsigned)a);
            int64_t base = 0;
            /* release builds may point into a larger constant: gep (i8, @g, N) */
            if (LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == LLVMGetElementPtr && LLVMGetNumOperands(v) == 2 &&
                LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
                base = LLVMConstIntGetSExtValue(LLVMGetOperand(v, 1)) *
                       (int64_t)LLVMABISizeOfType(td, LLVMGetGEPSourceElementType(v));
                v = LLVMGetOperand(v, 0);
            }
            if (!LLVMIsAGlobalVariable(v) || !LLVMGetInitializer(v) || base < 0 || base > 4096)
                continue;
            uint8_t lbuf[4096 + 24] = {0};
            flat fl = {.bytes = lbuf, .cap = sizeof lbuf};
            oxide__flatten(td, LLVMGetInitializer(v), 0, &fl);
            const uint8_t *lb = lbuf + base;
            uint64_t flen = rd64(lb + 8);
            const char *fs = oxide__reloc_string(oxide__reloc_at(&fl, (size_t)base), (size_t)flen);
            if (fs && flen < sizeof file) {
                snprintf(file, sizeof file, "%.*s", (int)flen, fs);
                line = rd32(lb + 16);
                col = rd32(lb + 20);
                break;
            }
        }
        /* room for the whole file name and text: printf gets it whole or not at all */
        char text[256], msg[sizeof file + sizeof text + 96];
        const char *why = fmt_panic && oxide__panic_fmt_text(call, text, sizeof text) ? text : reason;
        if (file[0])
            snprintf(msg, sizeof msg, "panicked at %s:%u:%u: %s (block %%d, thread %%d)\n", file, line, col, why);
        else /* an optimised build merged the panic paths: the location is a run-time value */
            snprintf(msg, sizeof msg, "panicked: %s (block %%d, thread %%d; build without --release for file:line)\n",
                     why);
        LLVMPositionBuilderBefore(b, call);
        LLVMValueRef fmt = LLVMBuildGlobalStringPtr(b, msg, "oxide.panic.msg");
        /* the block and thread index as vprintf arguments */
        LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
        LLVMTypeRef st = LLVMArrayType2(i32, 2);
        /* the argument buffer lives in the entry block (a static alloca: inlinable) */
        LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
        LLVMBuilderRef eb = LLVMCreateBuilderInContext(c);
        LLVMPositionBuilderBefore(eb, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)));
        LLVMValueRef slot = LLVMBuildAlloca(eb, st, "");
        LLVMDisposeBuilder(eb);
        LLVMTypeRef sreg_ty = LLVMFunctionType(i32, NULL, 0, 0);
        LLVMValueRef ctaid = LLVMGetNamedFunction(m, "llvm.nvvm.read.ptx.sreg.ctaid.x");
        if (!ctaid)
            ctaid = LLVMAddFunction(m, "llvm.nvvm.read.ptx.sreg.ctaid.x", sreg_ty);
        LLVMValueRef tid = LLVMGetNamedFunction(m, "llvm.nvvm.read.ptx.sreg.tid.x");
        if (!tid)
            tid = LLVMAddFunction(m, "llvm.nvvm.read.ptx.sreg.tid.x", sreg_ty);
        LLVMValueRef bx = LLVMBuildCall2(b, sreg_ty, ctaid, NULL, 0, "");
        LLVMValueRef tx = LLVMBuildCall2(b, sreg_ty, tid, NULL, 0, "");
        LLVMValueRef idx0[2] = {LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, 0, 0)};
        LLVMValueRef idx1[2] = {LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, 1, 0)};
        LLVMBuildStore(b, bx, LLVMBuildGEP2(b, st, slot, idx0, 2, ""));
        LLVMBuildStore(b, tx, LLVMBuildGEP2(b, st, slot, idx1, 2, ""));
        LLVMValueRef args[2] = {fmt, slot};
        LLVMBuildCall2(b, vprintf_ty, vprintf_fn, args, 2, "");
    }
    LLVMDisposeBuilder(b);
    /* the body: trap */
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(c, f, "trap");
    LLVMBuilderRef tb = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(tb, bb);
    LLVMTypeRef vt = LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0);
    LLVMValueRef trap = LLVMGetNamedFunction(m, "llvm.trap");
    if (!trap)
        trap = LLVMAddFunction(m, "llvm.trap", vt);
    LLVMBuildCall2(tb, vt, trap, NULL, 0, "");
    LLVMBuildUnreachable(tb);
    LLVMDisposeBuilder(tb);
    oxide__strip_host_attrs(f);
}

static const char *const libm_names[] = {
    "sinf",  "cosf",  "tanf",   "expf",   "exp2f",  "logf",   "log2f",  "log10f", "powf",   "tanhf", "sinhf", "coshf",
    "asinf", "acosf", "atanf",  "atan2f", "cbrtf",  "hypotf", "expm1f", "log1pf", "erff",   "erfcf", "fmodf", "sin",
    "cos",   "tan",   "exp",    "exp2",   "log",    "log2",   "log10",  "pow",    "tanh",   "sinh",  "cosh",  "asin",
    "acos",  "atan",  "atan2",  "cbrt",   "hypot",  "expm1",  "log1p",  "erf",    "erfc",   "fmod",  "fmaf",  "fma",
    "fdimf", "fdim",  "asinhf", "acoshf", "atanhf", "asinh",  "acosh",  "atanh",  "ldexpf", "ldexp", NULL};

/* Is this declaration one the device code may keep (intrinsics, libdevice, printf, libm)? */
bool oxide__is_known_external(const char *name) {
    if (oxide__starts(name, "llvm.") || oxide__starts(name, "__oxide_") || oxide__starts(name, "__nv_") ||
        !strcmp(name, "vprintf"))
        return true;
    for (int i = 0; libm_names[i]; i++)
        if (!strcmp(name, libm_names[i]))
            return true;
    return false;
}

oxide_status oxide__check_calls(LLVMModuleRef m, LLVMTargetDataRef td) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0);
    LLVMTypeRef vpt[2] = {ptr, ptr};
    LLVMTypeRef vprintf_ty = LLVMFunctionType(LLVMInt32TypeInContext(c), vpt, 2, 0);
    LLVMValueRef vprintf_fn = LLVMGetNamedFunction(m, "vprintf");
    if (!vprintf_fn)
        vprintf_fn = LLVMAddFunction(m, "vprintf", vprintf_ty);
    char rb[512];
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        if (!LLVMIsDeclaration(f) || !LLVMGetFirstUse(f))
            continue;
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (oxide__starts(name, "llvm.") || oxide__starts(name, "__oxide_") || oxide__starts(name, "__nv_") ||
            !strcmp(name, "vprintf")) {
            if (oxide__starts(name, "llvm.x86.") || oxide__starts(name, "llvm.aarch64.")) {
                LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(f));
                return oxide__refuse(m, LLVMIsAInstruction(user) ? user : NULL, name,
                                     "uses the x86-specific intrinsic %s (std::arch / SIMD), which has no GPU form",
                                     name);
            }
            continue;
        }
        /* libm math from std's float methods: the libdevice twin */
        bool is_libm = false;
        for (int i = 0; libm_names[i]; i++)
            if (!strcmp(name, libm_names[i]))
                is_libm = true;
        if (is_libm) {
            char nv[64];
            snprintf(nv, sizeof nv, "__nv_%s", name);
            LLVMValueRef tgt = LLVMGetNamedFunction(m, nv);
            if (!tgt)
                tgt = LLVMAddFunction(m, nv, LLVMGlobalGetValueType(f));
            LLVMReplaceAllUsesWith(f, tgt);
            continue;
        }
        const char *rust = oxide__demangle(name, rb, sizeof rb);
        const char *reason = oxide__panic_reason(rust, f);
        if (reason) {
            trap_panics(m, td, f, reason, vprintf_fn, vprintf_ty);
            continue;
        }
        LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(f));
        const char *why = "host-only code (std, libc or a function whose body is not in the bitcode)";
        if (strstr(rust, "alloc::") || !strcmp(name, "malloc") || strstr(name, "__rust_alloc") ||
            strstr(name, "__rust_dealloc") || strstr(name, "__rust_realloc") || strstr(rust, "exchange_malloc"))
            why = "heap allocation (Box, Vec, String ...) is not available in kernels";
        else if (strstr(rust, "std::") || strstr(rust, "core::fmt"))
            why = "the Rust standard library's host code (I/O, formatting, threads ...) cannot run on the GPU";
        return oxide__refuse(m, LLVMIsAInstruction(user) ? user : NULL, rust, "calls %s: %s", rust, why);
    }
    /* inline asm written by the user (oxide's own, from lowered oxide IR such as tile kernels
     * beside Rust kernels, carries OXIDE_ASM_MD) */
    unsigned own_asm = LLVMGetMDKindIDInContext(LLVMGetModuleContext(m), OXIDE_ASM_MD, (unsigned)strlen(OXIDE_ASM_MD));
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (oxide__starts(name, "__oxide_"))
            continue;
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
                if (LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i)) && !LLVMGetMetadata(i, own_asm))
                    return oxide__refuse(m, i, NULL,
                                         "uses inline assembly (asm!), which is written for the CPU; use the "
                                         "cuda_device intrinsics instead");
    }
    return OXIDE_OK;
}

LLVMValueRef oxide__declare_instead(LLVMModuleRef m, LLVMValueRef f) {
    size_t nl;
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", LLVMGetValueName2(f, &nl));
    LLVMSetValueName2(f, "oxide.dropped", 13);
    LLVMValueRef d = LLVMAddFunction(m, keep, LLVMGlobalGetValueType(f));
    LLVMReplaceAllUsesWith(f, d);
    if (LLVMIsAGlobalAlias(f))
        LLVMDeleteGlobal(f);
    else
        LLVMDeleteFunction(f);
    return d;
}

/* Replace the body of each host stub __oxide_* with a declaration (the device body is linked
 * later). */
void oxide__drop_stub_bodies(LLVMModuleRef m) {
    /* a host optimiser may have merged identical stubs into aliases */
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m), next; a; a = next) {
        next = LLVMGetNextGlobalAlias(a);
        size_t nl;
        if (oxide__starts(LLVMGetValueName2(a, &nl), "__oxide_"))
            oxide__declare_instead(m, a);
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (!oxide__starts(name, "__oxide_") || oxide__starts(name, "__oxide_kernel_entry_") || LLVMIsDeclaration(f))
            continue;
        LLVMValueRef d = oxide__declare_instead(m, f);
        if (next == d)
            next = LLVMGetNextFunction(d);
    }
}

/* Mark the stubs whose device bodies are convergent (barriers, warp and cluster operations) as
 * convergent now, while they are still declarations: the simplifycfg runs below would otherwise
 * thread a branch through a block holding a barrier and copy the barrier into both arms (the
 * reduction's last `sync_threads()` before `if t == 0` became two barriers, one of them in
 * divergent code, which ptxas serialises for warp 0). */
/* The text of NAME's "define ... {...}" in the device bodies, or NULL. */
static const char *find_body(const char *name, size_t *len) {
    char key[256];
    snprintf(key, sizeof key, "@%s(", name);
    for (const char *d = strstr(oxide__rust_intrinsics_ir, key); d; d = strstr(d + 1, key)) {
        const char *bol = d;
        while (bol > oxide__rust_intrinsics_ir && bol[-1] != '\n')
            bol--;
        if (!oxide__starts(bol, "define "))
            continue; /* a call inside another body */
        const char *end = strstr(d, "\n}\n");
        if (!end)
            return NULL;
        *len = (size_t)(end + 3 - bol);
        return bol;
    }
    return NULL;
}

void oxide__mark_convergent_stubs(LLVMModuleRef m) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    unsigned conv = LLVMGetEnumAttributeKindForName("convergent", 10);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl, len;
        const char *name = LLVMGetValueName2(f, &nl);
        if (!oxide__starts(name, "__oxide_") || !LLVMIsDeclaration(f) || nl > 200)
            continue;
        /* the device body's definition line: "define ... @NAME(...) ... convergent {" */
        const char *body = find_body(name, &len);
        const char *eol = body ? strchr(body, '\n') : NULL, *cv = body ? strstr(body, " convergent") : NULL;
        if (cv && eol && cv < eol)
            LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c, conv, 0));
    }
}

/* Appends to the growing text the bodies of the __oxide_ functions named in [s, s+n) that are
 * not in it yet, and those their bodies name in turn. */
static bool add_bodies(char **text, size_t *len, const char *s, size_t n) {
    for (const char *p = s; p + 9 <= s + n; p++) {
        if (*p != '@' || strncmp(p, "@__oxide_", 9))
            continue;
        const char *q = p + 1;
        while (q < s + n && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '$'))
            q++;
        char name[256];
        size_t nl = (size_t)(q - p - 1);
        p = q - 1;
        if (nl >= sizeof name)
            continue;
        memcpy(name, q - nl, nl);
        name[nl] = 0;
        char key[260];
        snprintf(key, sizeof key, "@%s(", name);
        size_t blen;
        const char *body = find_body(name, &blen);
        if (!body || strstr(*text, key))
            continue; /* a global, or already in (as a body or a call inside one) */
        char *t = realloc(*text, *len + blen + 1);
        if (!t)
            return false;
        memcpy(t + *len, body, blen);
        t[ *len += blen] = 0;
        *text = t;
        if (!add_bodies(text, len, body, blen))
            return false;
    }
    return true;
}

/* Only the bodies the module uses are parsed: the whole table is over 1 MB of IR text (most of
 * it wgmma), and parsing it all cost every Rust build ~0.1 s. */
oxide_status oxide__link_intrinsics(LLVMModuleRef m) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    const char *first = strstr(oxide__rust_intrinsics_ir, "\ndefine ");
    size_t len = first ? (size_t)(first + 1 - oxide__rust_intrinsics_ir) : 0;
    char *text = malloc(len + 1);
    if (!text)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory linking the device intrinsics");
    memcpy(text, oxide__rust_intrinsics_ir, len); /* the declarations every body may use */
    text[len] = 0;
    size_t header = len;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (!oxide__starts(name, "__oxide_") || !LLVMIsDeclaration(f) || !LLVMGetFirstUse(f) || nl > 200)
            continue;
        char ref[256];
        int rl = snprintf(ref, sizeof ref, "@%s", name);
        if (!add_bodies(&text, &len, ref, (size_t)rl)) {
            free(text);
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory linking the device intrinsics");
        }
    }
    if (len == header) {
        free(text);
        return OXIDE_OK;
    }
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, len, "intrinsics");
    free(text);
    LLVMModuleRef im = NULL;
    char *err = NULL;
    if (LLVMParseIRInContext(c, mb, &im, &err)) { /* consumes mb */
        oxide_status st =
            oxide__fail(OXIDE_ERROR_CODEGEN, "internal: the device intrinsics do not parse: %s", err ? err : "");
        LLVMDisposeMessage(err);
        return st;
    }
    LLVMSetTarget(im, OXIDE_NVPTX_TRIPLE);
    LLVMSetDataLayout(im, LLVMGetDataLayoutStr(m));
    /* mark oxide's own inline asm so emit's legality check lets it through */
    unsigned kind = LLVMGetMDKindIDInContext(c, OXIDE_ASM_MD, (unsigned)strlen(OXIDE_ASM_MD));
    LLVMValueRef md = LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, NULL, 0));
    for (LLVMValueRef f = LLVMGetFirstFunction(im); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
                if (LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i)))
                    LLVMSetMetadata(i, kind, md);
    if (LLVMLinkModules2(m, im))
        return oxide__fail(OXIDE_ERROR_CODEGEN, "internal: linking the device intrinsics failed");
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (oxide__starts(name, "__oxide_") && !LLVMIsDeclaration(f))
            LLVMSetLinkage(f, LLVMInternalLinkage);
    }
    return OXIDE_OK;
}

/* Statics the #[kernel] macro marked: .oxide.shared -> addrspace(3), .oxide.const -> (4). */
void oxide__move_statics(LLVMModuleRef m) {
    for (LLVMValueRef g = LLVMGetFirstGlobal(m), next; g; g = next) {
        next = LLVMGetNextGlobal(g);
        const char *sec = LLVMGetSection(g);
        if (!sec || LLVMGetPointerAddressSpace(LLVMTypeOf(g)) != 0)
            continue;
        unsigned as = !strcmp(sec, ".oxide.shared") ? 3 : !strcmp(sec, ".oxide.const") ? 4 : 0;
        if (!as)
            continue;
        LLVMTypeRef vt = LLVMGlobalGetValueType(g);
        size_t nl;
        char name[256];
        snprintf(name, sizeof name, "%s", LLVMGetValueName2(g, &nl));
        LLVMSetValueName2(g, "oxide.moved", 11);
        LLVMValueRef ng = LLVMAddGlobalInAddressSpace(m, vt, name, as);
        LLVMSetLinkage(ng, LLVMInternalLinkage);
        LLVMSetAlignment(ng, LLVMGetAlignment(g) < 16 ? 16 : LLVMGetAlignment(g));
        if (as == 3)
            LLVMSetInitializer(ng, LLVMGetUndef(vt));
        else
            LLVMSetInitializer(ng, LLVMGetInitializer(g) ? LLVMGetInitializer(g) : LLVMConstNull(vt));
        LLVMReplaceAllUsesWith(g, LLVMConstAddrSpaceCast(ng, LLVMTypeOf(g)));
        if (next == ng)
            next = LLVMGetNextGlobal(ng);
        LLVMDeleteGlobal(g);
    }
}
