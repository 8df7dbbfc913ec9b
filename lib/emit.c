/* From an LLVM module to PTX text: the legality check, libdevice, the optimisation pipeline, PTX
 * symbol names and the manifest line (target machines and codegen: lib/target.c).
 * docs/pipeline.md records why the pipeline is what it is, with measurements. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>

#include "llvm.h"

/* ---- diagnostics: LLVM reports errors through the context; without a handler it exits ---- */

typedef struct diag_state {
    char *first_error;
} diag_state;

static void diag_handler(LLVMDiagnosticInfoRef di, void *p) {
    diag_state *d = p;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || d->first_error)
        return;
    char *msg = LLVMGetDiagInfoDescription(di);
    d->first_error = msg ? strdup(msg) : strdup("unknown LLVM error");
    LLVMDisposeMessage(msg);
}

/* ---- the legality check ---- */

/* Generic LLVM intrinsics NVPTX selects itself. Anything else non-NVVM is refused, except the
 * math rewritten to libdevice below. */
static const char *const native_intrinsics[] = {
    "llvm.sqrt.",
    "llvm.fma.",
    "llvm.fmuladd.",
    "llvm.fabs.",
    "llvm.floor.",
    "llvm.ceil.",
    "llvm.trunc.",
    "llvm.rint.",
    "llvm.nearbyint.",
    "llvm.roundeven.",
    "llvm.round.",
    "llvm.minnum.",
    "llvm.maxnum.",
    "llvm.minimum.",
    "llvm.maximum.",
    "llvm.minimumnum.",
    "llvm.maximumnum.",
    "llvm.copysign.",
    "llvm.canonicalize.",
    "llvm.is.fpclass.",
    "llvm.ctpop.",
    "llvm.ctlz.",
    "llvm.cttz.",
    "llvm.bitreverse.",
    "llvm.bswap.",
    "llvm.fshl.",
    "llvm.fshr.",
    "llvm.abs.",
    "llvm.smin.",
    "llvm.smax.",
    "llvm.umin.",
    "llvm.umax.",
    "llvm.scmp.",
    "llvm.ucmp.",
    "llvm.sadd.",
    "llvm.uadd.",
    "llvm.ssub.",
    "llvm.usub.",
    "llvm.smul.",
    "llvm.umul.",
    "llvm.sshl.sat.",
    "llvm.ushl.sat.",
    "llvm.fptosi.sat.",
    "llvm.fptoui.sat.",
    "llvm.memcpy.",
    "llvm.memmove.",
    "llvm.memset.",
    "llvm.memcpy.inline.",
    "llvm.memset.inline.",
    "llvm.lifetime.",
    "llvm.assume",
    "llvm.expect",
    "llvm.trap",
    "llvm.debugtrap",
    "llvm.ubsantrap",
    "llvm.dbg.",
    "llvm.invariant.",
    "llvm.launder.invariant.group",
    "llvm.strip.invariant.group",
    "llvm.ptrmask.",
    "llvm.objectsize.",
    "llvm.sideeffect",
    "llvm.donothing",
    "llvm.var.annotation",
    "llvm.ptr.annotation",
    "llvm.annotation",
    "llvm.experimental.noalias.scope.decl",
    "llvm.prefetch",
    "llvm.vector.reduce.",
    "llvm.stacksave",
    "llvm.stackrestore",
    "llvm.threadlocal.address",
    "llvm.is.constant.",
    "llvm.experimental.constrained.",
    "llvm.fake.use",
    "llvm.allow.",
};

/* Generic math intrinsics NVPTX cannot lower ("Cannot select fsin" aborts the process): rewritten
 * to libdevice, which is how rustc's f32::sin and friends reach the GPU. */
typedef struct math_map {
    const char *intr, *nv, *fast; /* fast: the f32 libdevice variant used under afn/fast-math */
    unsigned nargs;
    bool int_arg; /* second argument is i32 (powi, ldexp) */
} math_map;

static const math_map math_maps[] = {
    {"sin", "__nv_sin", "__nv_fast_sinf", 1, false},
    {"cos", "__nv_cos", "__nv_fast_cosf", 1, false},
    {"tan", "__nv_tan", "__nv_fast_tanf", 1, false},
    {"exp", "__nv_exp", "__nv_fast_expf", 1, false},
    {"exp2", "__nv_exp2", NULL, 1, false},
    {"exp10", "__nv_exp10", "__nv_fast_exp10f", 1, false},
    {"log", "__nv_log", "__nv_fast_logf", 1, false},
    {"log2", "__nv_log2", "__nv_fast_log2f", 1, false},
    {"log10", "__nv_log10", "__nv_fast_log10f", 1, false},
    {"pow", "__nv_pow", "__nv_fast_powf", 2, false},
    {"powi", "__nv_powi", NULL, 2, true},
    {"ldexp", "__nv_ldexp", NULL, 2, true},
    {"sinh", "__nv_sinh", NULL, 1, false},
    {"cosh", "__nv_cosh", NULL, 1, false},
    {"tanh", "__nv_tanh", "__nv_fast_tanhf", 1, false},
    {"asin", "__nv_asin", NULL, 1, false},
    {"acos", "__nv_acos", NULL, 1, false},
    {"atan", "__nv_atan", NULL, 1, false},
    {"atan2", "__nv_atan2", NULL, 2, false},
};

/* "llvm.sin.f32" -> the map row, or NULL. */
static const math_map *math_of(const char *name) {
    if (strncmp(name, "llvm.", 5))
        return NULL;
    const char *base = name + 5, *dot = strchr(base, '.');
    if (!dot)
        return NULL;
    size_t n = (size_t)(dot - base);
    for (size_t i = 0; i < sizeof math_maps / sizeof math_maps[0]; i++)
        if (strlen(math_maps[i].intr) == n && !strncmp(math_maps[i].intr, base, n))
            return &math_maps[i];
    return NULL;
}

static bool is_native_intrinsic(const char *name) {
    if (oxide__starts(name, "llvm.nvvm."))
        return true;
    for (size_t i = 0; i < sizeof native_intrinsics / sizeof native_intrinsics[0]; i++) {
        const char *p = native_intrinsics[i];
        size_t n = strlen(p);
        /* entries ending in '.' are overloaded families; others are exact names (or a family
         * whose overload suffix follows after a '.') */
        if (!strncmp(name, p, n) && (p[n - 1] == '.' || name[n] == 0 || name[n] == '.'))
            return true;
    }
    return false;
}

/* Name of the function a call instruction sits in, for messages. */
static const char *caller_name(LLVMValueRef call) {
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
    size_t len;
    const char *n = LLVMGetValueName2(fn, &len);
    return n && *n ? n : "(unnamed)";
}

static const char *first_caller(LLVMValueRef f) {
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsACallInst(user) || LLVMIsAInvokeInst(user))
            return caller_name(user);
    }
    return "(no direct caller)";
}

/* f32-typed libdevice call for one scalar element (f16/bf16 widened to f32). */
static LLVMValueRef math_scalar(LLVMModuleRef m, LLVMBuilderRef b, const math_map *mm, LLVMValueRef *args, bool fast) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef t = LLVMTypeOf(args[0]);
    bool f64 = LLVMGetTypeKind(t) == LLVMDoubleTypeKind;
    LLVMTypeRef ct = f64 ? LLVMDoubleTypeInContext(c) : LLVMFloatTypeInContext(c);
    char name[48];
    if (!f64 && fast && mm->fast)
        snprintf(name, sizeof name, "%s", mm->fast);
    else
        snprintf(name, sizeof name, "%s%s", mm->nv, f64 ? "" : "f");
    LLVMTypeRef pt[2] = {ct, mm->int_arg ? LLVMInt32TypeInContext(c) : ct};
    LLVMValueRef f = LLVMGetNamedFunction(m, name);
    if (!f)
        f = LLVMAddFunction(m, name, LLVMFunctionType(ct, pt, mm->nargs, 0));
    LLVMValueRef a[2];
    for (unsigned i = 0; i < mm->nargs; i++)
        a[i] = (i == 1 && mm->int_arg) || LLVMTypeOf(args[i]) == ct ? args[i] : LLVMBuildFPCast(b, args[i], ct, "");
    LLVMValueRef r = LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, a, mm->nargs, "");
    return t == ct ? r : LLVMBuildFPCast(b, r, t, "");
}

static oxide_status rewrite_math(LLVMModuleRef m, LLVMValueRef f, const math_map *mm, const char *fname,
                                 const oxide_options *opts) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    oxide_status st = OXIDE_OK;
    for (LLVMUseRef u = LLVMGetFirstUse(f), next; u && !st; u = next) {
        next = LLVMGetNextUse(u);
        LLVMValueRef call = LLVMGetUser(u);
        if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != f) {
            st = oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: %s is used other than by a direct call", first_caller(f),
                             fname);
            break;
        }
        bool fast = opts->fast_math ||
                    (LLVMCanValueUseFastMathFlags(call) && (LLVMGetFastMathFlags(call) & LLVMFastMathApproxFunc));
        LLVMPositionBuilderBefore(b, call);
        LLVMValueRef args[2] = {LLVMGetOperand(call, 0), mm->nargs > 1 ? LLVMGetOperand(call, 1) : NULL};
        LLVMTypeRef t = LLVMTypeOf(call);
        LLVMValueRef r;
        if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
            r = LLVMGetPoison(t);
            LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
            for (unsigned i = 0; i < LLVMGetVectorSize(t); i++) {
                LLVMValueRef idx = LLVMConstInt(i32, i, 0), ea[2];
                for (unsigned j = 0; j < mm->nargs; j++)
                    ea[j] = LLVMGetTypeKind(LLVMTypeOf(args[j])) == LLVMVectorTypeKind
                                ? LLVMBuildExtractElement(b, args[j], idx, "")
                                : args[j];
                r = LLVMBuildInsertElement(b, r, math_scalar(m, b, mm, ea, fast), idx, "");
            }
        } else {
            r = math_scalar(m, b, mm, args, fast);
        }
        LLVMReplaceAllUsesWith(call, r);
        LLVMInstructionEraseFromParent(call);
    }
    LLVMDisposeBuilder(b);
    if (!st && !LLVMGetFirstUse(f))
        LLVMDeleteFunction(f);
    return st;
}

/* Inline asm is refused unless oxide generated it (its lowering tags every asm call). */
static oxide_status check_asm(LLVMModuleRef m) {
    size_t len = 0;
    LLVMGetModuleInlineAsm(m, &len);
    if (len)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "module-level inline assembly cannot be compiled for the GPU");
    unsigned kind = LLVMGetMDKindIDInContext(LLVMGetModuleContext(m), OXIDE_ASM_MD, (unsigned)strlen(OXIDE_ASM_MD));
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
                if (!LLVMIsACallInst(i) && !LLVMIsAInvokeInst(i) && !LLVMIsACallBrInst(i))
                    continue;
                LLVMValueRef callee = LLVMGetCalledValue(i);
                if (LLVMIsAInlineAsm(callee) && !LLVMGetMetadata(i, kind)) {
                    size_t al;
                    const char *text = LLVMGetInlineAsmAsmString(callee, &al);
                    return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                                       "%s: inline assembly (\"%.*s\") cannot be compiled by oxide; use the "
                                       "device intrinsics instead",
                                       caller_name(i), (int)(al > 60 ? 60 : al), text);
                }
            }
    return OXIDE_OK;
}

/* Rewrites math intrinsics and refuses what NVPTX cannot compile, before LLVM sees it (codegen
 * failures there end the process). Sets *needs_libdevice when __nv_* functions are called. */
static oxide_status legalize(LLVMModuleRef m, const oxide_options *opts, bool *needs_libdevice) {
    *needs_libdevice = false;
    oxide_status st = OXIDE_OK;
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f && !st; f = next) {
        next = LLVMGetNextFunction(f);
        if (!LLVMIsDeclaration(f))
            continue;
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (!LLVMGetFirstUse(f))
            continue;
        if (oxide__starts(name, "llvm.")) {
            const math_map *mm = math_of(name);
            if (mm) {
                st = rewrite_math(m, f, mm, name, opts);
                *needs_libdevice = true;
            } else if (oxide__starts(name, "llvm.x86.") || oxide__starts(name, "llvm.aarch64.") ||
                       oxide__starts(name, "llvm.arm.")) {
                st = oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: calls the CPU intrinsic %s, which has no GPU form",
                                 first_caller(f), name);
            } else if (!is_native_intrinsic(name)) {
                st = oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: calls %s, which the NVPTX backend cannot lower",
                                 first_caller(f), name);
            }
        } else if (oxide__starts(name, "__nv_")) {
            *needs_libdevice = true;
        } else if (strcmp(name, "vprintf") != 0) {
            st = oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                             "%s: calls %s, which is not defined for the GPU (host-only code: std, libc, "
                             "allocation, or a missing device function)",
                             first_caller(f), name);
        }
    }
    if (!st)
        st = check_asm(m);
    return st;
}

/* ---- libdevice ---- */

static oxide_status link_libdevice(LLVMModuleRef m) {
    oxide_status st = oxide__libdevice_link(m);
    if (st)
        return st;
    /* every libdevice function is private to this module: inlined and dropped when unused */
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (oxide__starts(name, "__nv_")) {
            if (LLVMIsDeclaration(f)) {
                if (LLVMGetFirstUse(f))
                    return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: calls %s, which libdevice does not have",
                                       first_caller(f), name);
                continue;
            }
            LLVMSetLinkage(f, LLVMInternalLinkage);
        }
    }
    return OXIDE_OK;
}

/* ---- the optimisation pipeline ---- */

/* Levels 2 and 3 run the IR pipeline chosen for GPU kernels (docs/pipeline.md has the
 * measurements against default<O3> and nvcc). Kernels have no exceptions, no virtual calls and
 * nothing for the vectorisers (NVPTX has no wide vector registers), so what pays is: reflect
 * (libdevice's FTZ/arch switches), the inliner (device functions, libdevice), thread-index ranges
 * from the launch bounds (nvvm-intr-range: with .maxntid 256, tid.x < 256, so a Rust kernel's
 * shared-array bounds check on threadIdx goes away), SROA, address-space
 * inference (generic pointers from allocas, by-value parameters and imported code), the scalar
 * cleanups, LICM, loop rotation and induction variables, unrolling with NVPTX's preferences
 * (full for constant trip counts, runtime by 4 for small loops, as nvcc does), GVN's value
 * numbering. default<O3> costs 2-9x more here for the same or larger SASS and no faster kernels.
 * Cut because the PTX of every example kernel (C, tile and Rust) stayed byte for byte the same
 * without them: a second SROA and ADCE, an explicit loop-simplify and lcssa (the loop pass
 * adaptor makes both forms itself), GVN's load elimination and PRE with the memory dependence
 * analysis they need, and EarlyCSE's MemorySSA; docs/pipeline.md has the figures. */
#define GPU_PIPELINE                                                                                                   \
    "nvvm-reflect,always-inline,cgscc(inline),"                                                                        \
    "function(nvvm-intr-range,sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"                             \
    "loop-mssa(licm),loop(loop-rotate,indvars),loop-unroll<O3>,"                                                       \
    "infer-address-spaces,gvn<no-pre;no-load-pre;no-memdep>,instcombine<no-verify-fixpoint>,simplifycfg),globaldce"

static const char *const pipelines[4] = {
    NULL,
    "nvvm-reflect,always-inline,cgscc(inline),"
    "function(sroa,early-cse,infer-address-spaces,instcombine<no-verify-fixpoint>,simplifycfg),globaldce",
    GPU_PIPELINE,
    GPU_PIPELINE,
};

static const char *pipeline_for(int level) { return pipelines[level < 0 ? 0 : level > 3 ? 3 : level]; }

static oxide_status optimise(LLVMModuleRef m, LLVMTargetMachineRef tm, oxide_kept *kept, int level) {
    const char *p = pipeline_for(level);
    if (!p)
        return OXIDE_OK;
    char *err = oxide__run_pipeline(tm, &kept->ir, m, p);
    if (err) {
        oxide_status st = oxide__fail(OXIDE_ERROR_CODEGEN, "LLVM optimisation failed: %s", err);
        free(err);
        return st;
    }
    return OXIDE_OK;
}

/* ---- symbol names ---- */

/* PTX identifiers are [A-Za-z0-9_$] (not starting with a digit); LLVM's NVPTX printer aborts the
 * process on some other characters ('@') and writes others ('.') into PTX that ptxas rejects.
 * IR names allow '.' (and imported Rust symbols have more), so every symbol is spelled PTX's
 * way before codegen: '.' becomes "_$_" (LLVM's own spelling for local symbols), any other
 * byte "_$XX_" in hex. Legal names are unchanged. Returns NULL when nothing changes. */
static char *ptx_symbol(const char *name) {
    size_t n = 0, extra = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++, n++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c == '$' ||
                  (*c >= '0' && *c <= '9' && c != (const unsigned char *)name);
        if (!ok)
            extra += *c == '.' ? 2 : 4;
    }
    if (!extra)
        return NULL;
    char *out = malloc(n + extra + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c == '$' ||
                  (*c >= '0' && *c <= '9' && c != (const unsigned char *)name);
        if (ok)
            *o++ = (char)*c;
        else if (*c == '.')
            o += sprintf(o, "_$_");
        else
            o += sprintf(o, "_$%02x_", *c);
    }
    *o = 0;
    return out;
}

static void rename_value(LLVMValueRef v) {
    size_t len;
    const char *name = LLVMGetValueName2(v, &len);
    if (!len || oxide__starts(name, "llvm."))
        return;
    char *fixed = ptx_symbol(name);
    if (fixed) {
        LLVMSetValueName2(v, fixed, strlen(fixed));
        free(fixed);
    }
}

static void sanitize_symbols(LLVMModuleRef m) {
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        rename_value(f);
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
        rename_value(g);
}

/* ---- PTX text ---- */

/* The manifest goes after the header comment lines LLVM writes, before ".version". */
static char *insert_manifest(const char *ptx, size_t len, const char *line, size_t *out_len) {
    size_t at = 0;
    while (at + 2 <= len && ptx[at] == '/' && ptx[at + 1] == '/') {
        const char *nl = memchr(ptx + at, '\n', len - at);
        if (!nl)
            break;
        at = (size_t)(nl - ptx) + 1;
    }
    size_t ll = strlen(line);
    char *out = malloc(len + ll + 1);
    if (!out)
        return NULL;
    memcpy(out, ptx, at);
    memcpy(out + at, line, ll);
    memcpy(out + at + ll, ptx + at, len - at);
    out[len + ll] = 0;
    *out_len = len + ll;
    return out;
}

/* The options m compiles with: an intrinsic that needs a newer PTX ISA than the target's lowest
 * (fp8 mma: 8.4) raises an unset version to the lowest that has everything m calls; an explicit
 * version below it is refused here, because LLVM's instruction selection would end the process. */
static oxide_status ptx_for_module(LLVMModuleRef m, const oxide_options *opts, oxide_options *raised,
                                   const oxide_options **out) {
    int major, minor, need = 0;
    oxide_status st = oxide__ptx_version(opts, &major, &minor);
    if (st)
        return st;
    const char *who = NULL;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t n = 0;
        const char *name = LLVMIsDeclaration(f) ? LLVMGetValueName2(f, &n) : "";
        int v = oxide__intrinsic_min_ptx(name, opts->sm);
        if (v > need)
            need = v, who = name;
    }
    *out = opts;
    if (need <= major * 10 + minor)
        return OXIDE_OK;
    if (opts->ptx_major || opts->ptx_minor)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "the module calls %s, which needs PTX ISA %d.%d on %s; %d.%d was asked for (set %d.%d or "
                           "newer, or leave the version unset)",
                           who, need / 10, need % 10, opts->target, major, minor, need / 10, need % 10);
    *raised = *opts;
    raised->ptx_major = need / 10;
    raised->ptx_minor = need % 10;
    *out = raised;
    return OXIDE_OK;
}

/* Adds the time since *t to ms[stage] and restarts the clock there. */
static void lap(double *ms, oxide__stage stage, double *t) {
    double now = oxide__now_ms();
    ms[stage] += now - *t;
    *t = now;
}

/* Everything before codegen: the PTX version, the target machine, legality, libdevice (whether
 * linked in *needs_libdevice), the verifier and the IR pipeline. */
static oxide_status prepare(oxide_context *ctx, LLVMModuleRef m, const oxide_options **opts, oxide_options *raised,
                            bool *needs_libdevice, double *ms, double *t) {
    LLVMTargetMachineRef tm;
    oxide_kept *kept;
    oxide_status st = ptx_for_module(m, *opts, raised, opts);
    if (!st)
        st = oxide__target_codegen(ctx, *opts, &tm, &kept);
    lap(ms, OXIDE__STAGE_TARGET, t);
    if (!st)
        st = legalize(m, *opts, needs_libdevice);
    lap(ms, OXIDE__STAGE_LEGALIZE, t);
    if (!st && *needs_libdevice) {
        st = link_libdevice(m);
        LLVMValueRef one = LLVMConstInt(LLVMInt32TypeInContext(LLVMGetModuleContext(m)), (*opts)->fast_math ? 1 : 0, 0);
        LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16, LLVMValueAsMetadata(one));
    }
    lap(ms, OXIDE__STAGE_LIBDEVICE, t);
    if (!st) {
        char *msg = NULL;
        if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg))
            st =
                oxide__fail(OXIDE_ERROR_CODEGEN, "internal error: the LLVM module is invalid: %.400s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
    }
    lap(ms, OXIDE__STAGE_LLVM_VERIFY, t);
    if (!st)
        st = optimise(m, tm, kept, (*opts)->opt_level);
    if (!st)
        oxide__opaque_negations(m);
    lap(ms, OXIDE__STAGE_PASSES, t);
    return st;
}

/* The manifest line, naming each entry as the PTX spells it (kfn: the kernels' functions). */
static oxide_status manifest_line(const oxide_options *opts, const oxide_iface_kernel *kernels, size_t nkernels,
                                  LLVMValueRef *kfn, char **out) {
    oxide_iface_kernel *k = nkernels ? malloc(nkernels * sizeof *k) : NULL;
    char **fixed = nkernels ? calloc(nkernels, sizeof *fixed) : NULL;
    oxide_status st = OXIDE_OK;
    if (nkernels && (!k || !fixed))
        st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory writing the manifest");
    for (size_t i = 0; i < nkernels && !st; i++) {
        k[i] = kernels[i];
        size_t n = 0;
        const char *emitted = LLVMGetValueName2(kfn[i], &n);
        if (!(fixed[i] = strndup(emitted, n)))
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory writing the manifest");
        k[i].entry = fixed[i];
    }
    if (!st && !(*out = oxide__manifest_json(opts, k, nkernels)))
        st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory writing the manifest");
    for (size_t i = 0; fixed && i < nkernels; i++)
        free(fixed[i]);
    free(fixed);
    free(k);
    return st;
}

/* Symbols spelled for PTX, and the kernels' functions found (kfn, nkernels of them). */
static oxide_status name_symbols(LLVMModuleRef m, const oxide_iface_kernel *kernels, size_t nkernels,
                                 LLVMValueRef **kfn) {
    /* Renaming can collide ("a.b" becomes a_$_b, which another kernel may already be); LLVM
     * then makes the name unique, so each kernel's entry is read back from its function. */
    if (nkernels && !(*kfn = calloc(nkernels, sizeof **kfn)))
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory writing the manifest");
    for (size_t i = 0; i < nkernels; i++)
        if (!((*kfn)[i] = LLVMGetNamedFunction(m, kernels[i].entry)))
            return oxide__fail(OXIDE_ERROR_CODEGEN,
                               "internal error: kernel '%s' has no function '%s' after optimisation", kernels[i].name,
                               kernels[i].entry);
    sanitize_symbols(m);
    return OXIDE_OK;
}

oxide_status oxide__emit_ptx(oxide_context *ctx, LLVMModuleRef m, const oxide_options *opts, bool imported,
                             const oxide_iface_kernel *kernels, size_t nkernels, char **ptx_out, size_t *len_out,
                             char **llvm_ir_out, double *ms) {
    double t = oxide__now_ms();
    oxide_options defaults, raised;
    opts = oxide__options_or_default(opts, &defaults);
    LLVMContextRef llctx = LLVMGetModuleContext(m);
    LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(llctx);
    void *old_diag_ctx = LLVMContextGetDiagnosticContext(llctx);
    diag_state diag = {0};
    LLVMContextSetDiagnosticHandler(llctx, diag_handler, &diag);

    char *ir = NULL, *manifest = NULL, *ptx = NULL;
    LLVMValueRef *kfn = NULL;
    LLVMTargetMachineRef tm;
    size_t ptx_len = 0;
    bool libdevice = false;
    oxide_status st = prepare(ctx, m, &opts, &raised, &libdevice, ms, &t);
    if (!st)
        st = name_symbols(m, kernels, nkernels, &kfn);
    if (!st)
        st = manifest_line(opts, kernels, nkernels, kfn, &manifest);
    lap(ms, OXIDE__STAGE_PTX, &t);
    if (!st && llvm_ir_out && !(ir = oxide__print_ir(m)))
        st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory printing LLVM IR");
    lap(ms, OXIDE__STAGE_LLVM_IR, &t);
    oxide_kept *kept = NULL;
    if (!st)
        st = oxide__target_codegen(ctx, opts, &tm, &kept);
    bool vectorise = imported || libdevice; /* code oxide did not lower itself */
    if (!st && ptx_out && !(ptx = oxide__codegen(tm, vectorise ? &kept->cg_vec : &kept->cg, m, vectorise, &ptx_len)))
        st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory emitting PTX");
    if (kept && diag.first_error)
        oxide__kept_clear(kept); /* LLVM went on after its error; what its passes kept of that module is not trusted */
    if (!st && diag.first_error)
        st = oxide__fail(OXIDE_ERROR_CODEGEN, "PTX emission failed: %s", diag.first_error);
    lap(ms, OXIDE__STAGE_CODEGEN, &t);
    if (!st) {
        size_t len = 0;
        char *out = ptx_out ? insert_manifest(ptx, ptx_len, manifest, &len) : NULL;
        if (ptx_out && !out) {
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory assembling the PTX");
        } else {
            if (ptx_out)
                *ptx_out = out;
            if (len_out)
                *len_out = len;
            if (llvm_ir_out)
                *llvm_ir_out = ir, ir = NULL;
        }
    }
    free(ir);
    free(ptx);
    free(manifest);
    free(kfn);
    free(diag.first_error);
    LLVMDisposeModule(m);
    LLVMContextSetDiagnosticHandler(llctx, old_handler, old_diag_ctx);
    lap(ms, OXIDE__STAGE_PTX, &t);
    return st;
}
