/* The compile entry points: verify, lower, link imported bitcode, emit PTX with the manifest. */
#include <stdlib.h>
#include <string.h>

#include "llvm.h"

static void free_kernels(oxide_iface_kernel *k, size_t nown) {
    /* the first nown descriptors (oxide IR kernels) own their parameter arrays; those that
     * import.c appended point into the module's arena */
    for (size_t i = 0; k && i < nown; i++)
        free(k[i].params);
    free(k);
}

static oxide_status describe_kernels(oxide_module *mod, oxide_iface_kernel **out, size_t *n) {
    size_t count = 0;
    for (uint32_t i = 0; i < mod->functions.len; i++)
        count += ((oxide_function *)mod->functions.items[i])->is_kernel;
    oxide_iface_kernel *k = calloc(count ? count : 1, sizeof *k);
    if (!k)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory compiling module %s", mod->name);
    size_t j = 0;
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        oxide_function *f = mod->functions.items[i];
        if (!f->is_kernel)
            continue;
        oxide_iface_param *p = NULL;
        if (f->iface.len && !(p = malloc(f->iface.len * sizeof *p))) {
            free_kernels(k, j);
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory compiling module %s", mod->name);
        }
        for (uint32_t q = 0; q < f->iface.len; q++)
            p[q] = *(const oxide_iface_param *)f->iface.items[q];
        k[j] = (oxide_iface_kernel){.name = f->name,
                                    .entry = f->name,
                                    .params = p,
                                    .nparams = f->iface.len,
                                    .nptx = f->params.len, /* a kernel's values are its PTX parameters */
                                    .block = {f->block[0], f->block[1], f->block[2]},
                                    .launch_bounds = {f->launch_bounds[0], f->launch_bounds[1]},
                                    .cluster = {f->cluster[0], f->cluster[1], f->cluster[2]},
                                    .dyn_smem = f->dyn_smem,
                                    .tma_entry = f->tma_entry,
                                    .tma_only = f->tma_only,
                                    .persistent = f->persistent};
        j++;
    }
    *out = k;
    *n = j;
    return OXIDE_OK;
}

static void ignore_diagnostic(LLVMDiagnosticInfoRef di, void *p) {
    (void)di;
    (void)p;
}

/* mod compiled with opts: its PTX (ptx_out NULL: none, codegen skipped) and its optimised LLVM IR
 * (ir_out NULL: not printed), each malloc'd; the time of each stage in ms. */
static oxide_status compile(oxide_module *mod, const oxide_options *opts, char **ptx_out, size_t *len_out,
                            char **ir_out, double *ms) {
    double t = oxide__now_ms(), t0;
    oxide_status st = OXIDE_OK;
    if (mod->bitcode.len) {
        st = oxide_module_import_tile_kernels(mod);
        ms[OXIDE__STAGE_TILE] = (t0 = oxide__now_ms()) - t;
        t = t0;
    }
    if (!st)
        st = oxide__verify(mod, opts);
    ms[OXIDE__STAGE_VERIFY] = (t0 = oxide__now_ms()) - t;
    if (st)
        return st;
    if (oxide__module_has_tile(mod)) {
        /* tile kernels compile as their SIMT lowering (lib/tile/lower.h) */
        oxide_module *low = NULL;
        st = oxide__tile_lower(mod, opts, &low);
        ms[OXIDE__STAGE_TILE] += oxide__now_ms() - t0;
        if (low) /* the lowering's copy holds the same bitcode, already lifted */
            low->tile_import = mod->tile_import;
        double lms[OXIDE__STAGES] = {0};
        if (!st)
            st = compile(low, opts, ptx_out, len_out, ir_out, lms);
        for (int i = OXIDE__STAGE_VERIFY; i < OXIDE__STAGES; i++)
            ms[i] += lms[i];
        oxide_module_destroy(low);
        return st;
    }
    oxide_iface_kernel *kernels = NULL;
    size_t nkernels = 0, nown = 0;
    if ((st = describe_kernels(mod, &kernels, &nkernels)))
        return st;
    nown = nkernels;
    /* A fresh LLVM context per compile: nothing accumulates across compiles, and the output
     * cannot depend on what was compiled before. */
    LLVMContextRef llctx = LLVMContextCreate();
    /* LLVM's default handler ends the process on an error diagnostic. Import and emission install
     * their own, which record the message; this one covers the rest (lowering builds IR through
     * the API, which reports no diagnostics). */
    LLVMContextSetDiagnosticHandler(llctx, ignore_diagnostic, NULL);
    LLVMModuleRef m = NULL;
    /* made or found here, so that a cold process's machine counts as "target", not "lower" */
    LLVMTargetMachineRef tm;
    t = oxide__now_ms();
    st = oxide__target_machine(mod->ctx, opts, &tm);
    ms[OXIDE__STAGE_TARGET] = (t0 = oxide__now_ms()) - t;
    t = t0;
    if (!st)
        st = oxide__lower(mod, llctx, opts, &m);
    ms[OXIDE__STAGE_LOWER] = (t0 = oxide__now_ms()) - t;
    bool imported = mod->bitcode.len > 0 && mod->tile_import != OXIDE_TILE_IMPORT_TILE_ONLY;
    if (!st && imported)
        st = oxide__import_link(mod, m, opts, &kernels, &nkernels);
    if (!st && mod->bitcode.len > 0 && opts->line_info)
        st = oxide__import_line_tables(&m);
    if (mod->bitcode.len > 0)
        ms[OXIDE__STAGE_IMPORT] = oxide__now_ms() - t0;
    if (!st) {
        st = oxide__emit_ptx(mod->ctx, m, opts, imported, kernels, nkernels, ptx_out, len_out, ir_out, ms);
        m = NULL; /* consumed */
    }
    if (m)
        LLVMDisposeModule(m);
    LLVMContextDispose(llctx);
    free_kernels(kernels, nown);
    return st;
}

oxide_status oxide_module_compile(oxide_module *mod, const oxide_options *opts, const char **ptx, size_t *len) {
    if (!mod || !ptx)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_compile: %s is NULL", mod ? "ptx" : "mod");
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    memset(mod->stage_ms, 0, sizeof mod->stage_ms);
    char *out = NULL;
    size_t out_len = 0;
    oxide_status st = compile(mod, opts, &out, &out_len, NULL, mod->stage_ms);
    if (st)
        return st; /* a failed compile leaves the last one's PTX and IR */
    free(mod->ptx);
    free(mod->llvm_ir);
    mod->ptx = out;
    mod->ptx_len = out_len;
    mod->llvm_ir = NULL;
    mod->ir_opts = *opts;
    mod->ir_pending = true;
    *ptx = out;
    if (len)
        *len = out_len;
    return OXIDE_OK;
}

/* The optimised LLVM IR is the same text for the same module and options (docs/pipeline.md,
 * "Determinism"), so it is made again, up to the IR, when it is asked for or before the module
 * first changes after its compile, instead of printed by every compile. */
void oxide__module_keep_ir(oxide_module *mod) {
    mod->ir_pending = false; /* first: the compile's own tile import is an edit too */
    double ms[OXIDE__STAGES] = {0};
    char *ir = NULL;
    if (compile(mod, &mod->ir_opts, NULL, NULL, &ir, ms) == OXIDE_OK) {
        free(mod->llvm_ir);
        mod->llvm_ir = ir;
    }
}

oxide_status oxide_module_get_llvm_ir(oxide_module *mod, const char **out) {
    if (!mod || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_get_llvm_ir: %s is NULL", !mod ? "mod" : "out");
    if (!mod->llvm_ir && mod->ir_pending)
        oxide__module_keep_ir(mod);
    if (!mod->llvm_ir)
        return oxide__fail(
            OXIDE_ERROR_STATE,
            "oxide_module_get_llvm_ir: module %s has not been compiled yet: call oxide_module_compile first",
            mod->name);
    *out = mod->llvm_ir;
    return OXIDE_OK;
}
