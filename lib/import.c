/* Import of LLVM bitcode: the Rust front end's device path (docs/design.md section 7).
 *
 * rustc's normal host compile leaves one bitcode unit per crate. oxide_module_import_bitcode
 * stores a unit in the module; at compile time oxide__import_link links them, finds the kernel
 * instances (import_kernels.c), keeps them and what they call, retargets that code to nvptx64
 * (import_retarget.c) and refuses what cannot run on a GPU, naming the Rust function. emit.c then
 * legalises, optimises and writes the PTX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "bitcode_check.h"
#include "import.h"

/* The first error LLVM reported while one import ran: each call has its own, so imports in
 * separate contexts run in parallel. */
typedef struct link_diag {
    char msg[512];
} link_diag;

static void link_diag_handler(LLVMDiagnosticInfoRef di, void *p) {
    link_diag *d = p;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    char *msg = LLVMGetDiagInfoDescription(di);
    if (!d->msg[0])
        snprintf(d->msg, sizeof d->msg, "%s", msg ? msg : "unknown LLVM error");
    LLVMDisposeMessage(msg);
}

/* A parsed unit must be valid IR before anything walks it: the reader checks records one by one,
 * not that the whole module makes sense (a mutated unit can parse into IR that crashes a pass).
 * The verifier runs without printing: printing a broken node reads its operands as the types
 * they should have (a "name" that is not a string), which a mutated unit violates. */
static bool unit_is_valid(LLVMModuleRef m) { return !LLVMVerifyModule(m, LLVMReturnStatusAction, NULL); }

static oxide_status verify_unit(LLVMModuleRef m, const char *uname) {
    if (unit_is_valid(m))
        return OXIDE_OK;
    return oxide__fail(OXIDE_ERROR_PARSE, "%s: the bitcode reads as invalid LLVM IR (malformed or corrupted)", uname);
}

/* ======================================================================================
 * Public entry: check and store a unit
 * ====================================================================================== */

oxide_status oxide__bitcode_precheck(const void *data, size_t size, const char *uname) {
    const uint8_t *b = data;
    bool magic = size >= 4 && ((b[0] == 'B' && b[1] == 'C' && b[2] == 0xC0 && b[3] == 0xDE) ||
                               (b[0] == 0xDE && b[1] == 0xC0 && b[2] == 0x17 && b[3] == 0x0B));
    if (!magic)
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: not LLVM bitcode (no 'BC' magic)", uname);
    char why[256];
    if (!oxide__bitcode_check(b, size, why, sizeof why))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: malformed LLVM bitcode: %s", uname, why);
    return OXIDE_OK;
}

static oxide_status unreadable(const char *uname, const char *why) {
    return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                       "%s: LLVM %d could not read this bitcode (%s); it is malformed or from a newer LLVM "
                       "(rustc's LLVM major must be <= %d: check `rustc -vV`, or run `cargo oxide doctor`)",
                       uname, 22, why[0] ? why : "no reason given", 22);
}

/* LLVM reads the unit in a context of its own with a recording handler: its header only (a lazy
 * parse, cheap, which fails on bitcode from a newer LLVM), or all of it, verified, as compile
 * will. */
static oxide_status read_unit(const void *data, size_t size, const char *uname, bool whole) {
    oxide__llvm_init();
    LLVMContextRef c = LLVMContextCreate();
    link_diag diag = {{0}};
    LLVMContextSetDiagnosticHandler(c, link_diag_handler, &diag);
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(data, size, uname, 0);
    LLVMModuleRef m = NULL;
    oxide_status st = OXIDE_OK;
    LLVMBool bad = whole ? LLVMParseBitcodeInContext2(c, mb, &m) : LLVMGetBitcodeModuleInContext2(c, mb, &m);
    if (bad)
        st = unreadable(uname, diag.msg);
    else if (whole)
        st = verify_unit(m, uname);
    if (whole || bad)
        LLVMDisposeMemoryBuffer(mb); /* a lazy module owns its buffer */
    if (m)
        LLVMDisposeModule(m);
    LLVMContextDispose(c);
    return st;
}

oxide_status oxide__bitcode_lazy_read(const void *data, size_t size, const char *uname) {
    return read_unit(data, size, uname, false);
}

/* The isolated import runs this in its child. */
oxide_status oxide__bitcode_full_read(const void *data, size_t size, const char *uname) {
    return read_unit(data, size, uname, true);
}

oxide_status oxide__bitcode_store(oxide_module *mod, const void *data, size_t size, const char *uname) {
    oxide__module_changed(mod);
    oxide_bitcode_unit *u = oxide__alloc(&mod->arena, sizeof *u);
    if (!u || !(u->data = oxide__alloc(&mod->arena, size)) || !(u->name = oxide__strdup(&mod->arena, uname)) ||
        !oxide__vec_push(&mod->arena, &mod->bitcode, u))
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory importing bitcode");
    memcpy(u->data, data, size);
    u->size = size;
    return OXIDE_OK;
}

oxide_status oxide_module_import_bitcode(oxide_module *mod, const void *data, size_t size, const char *unit_name) {
    if (!mod || !data || !size)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_import_bitcode: NULL or empty argument");
    const char *uname = unit_name ? unit_name : "bitcode";
    oxide_status st = oxide__bitcode_precheck(data, size, uname);
    if (!st)
        st = oxide__bitcode_lazy_read(data, size, uname);
    return st ? st : oxide__bitcode_store(mod, data, size, uname);
}

/* ======================================================================================
 * Link
 * ====================================================================================== */

/* Step: parse and link the crates' units (not the libraries) into dst. */
static oxide_status link_units(oxide_module *mod, LLVMModuleRef dst, link_diag *diag) {
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    oxide_status st = OXIDE_OK;
    for (uint32_t i = 0; i < mod->bitcode.len && !st; i++) {
        oxide_bitcode_unit *u = mod->bitcode.items[i];
        if (oxide__starts(u->name, "library:"))
            continue; /* linked on demand (link_libraries) */
        LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, u->name, 0);
        LLVMModuleRef m = NULL;
        diag->msg[0] = 0;
        if (LLVMParseBitcodeInContext2(ctx, mb, &m)) {
            LLVMDisposeMemoryBuffer(mb);
            st = oxide__fail(OXIDE_ERROR_PARSE, "%s: could not read the bitcode: %s", u->name,
                             diag->msg[0] ? diag->msg : "malformed");
            break;
        }
        LLVMDisposeMemoryBuffer(mb);
        if ((st = verify_unit(m, u->name))) {
            LLVMDisposeModule(m);
            break;
        }
        oxide__retarget_unit(m, dst);
        /* definitions with external linkage that another unit also defines (e.g. the same
         * #[no_mangle] item twice) would stop the link: keep the first */
        for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
            size_t nl;
            const char *nm = LLVMGetValueName2(f, &nl);
            LLVMValueRef prev = LLVMGetNamedFunction(dst, nm);
            if (!LLVMIsDeclaration(f) && prev && !LLVMIsDeclaration(prev) && LLVMGetLinkage(f) == LLVMExternalLinkage)
                LLVMSetLinkage(f, LLVMLinkOnceODRLinkage), LLVMSetLinkage(prev, LLVMLinkOnceODRLinkage);
        }
        for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
            size_t nl;
            const char *nm = LLVMGetValueName2(g, &nl);
            LLVMValueRef prev = LLVMGetNamedGlobal(dst, nm);
            if (LLVMGetInitializer(g) && prev && LLVMGetInitializer(prev) && LLVMGetLinkage(g) == LLVMExternalLinkage)
                LLVMSetLinkage(g, LLVMLinkOnceODRLinkage), LLVMSetLinkage(prev, LLVMLinkOnceODRLinkage);
        }
        if (LLVMLinkModules2(dst, m))
            st = oxide__fail(OXIDE_ERROR_PARSE, "linking %s failed: %s", u->name, diag->msg[0] ? diag->msg : "?");
    }
    return st;
}

/* The same link for lib/import_tile.c, into a module of its own context. */
oxide_status oxide__link_units(oxide_module *mod, LLVMModuleRef dst) {
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    LLVMDiagnosticHandler old = LLVMContextGetDiagnosticHandler(ctx);
    void *old_ctx = LLVMContextGetDiagnosticContext(ctx);
    link_diag diag = {{0}};
    LLVMContextSetDiagnosticHandler(ctx, link_diag_handler, &diag);
    oxide_status st = link_units(mod, dst, &diag);
    LLVMContextSetDiagnosticHandler(ctx, old, old_ctx);
    return st;
}

/* Step: library units (the standard library's core, from its rlib) are linked only when the
 * device code calls functions the crates' bitcode does not define; panics stay declarations
 * (they trap). */
static oxide_status link_libraries(oxide_module *mod, LLVMModuleRef dst, link_diag *diag, bool *linked) {
    *linked = false;
    bool need = false;
    for (LLVMValueRef f = LLVMGetFirstFunction(dst); f && !need; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (LLVMIsDeclaration(f) && LLVMGetFirstUse(f) && !oxide__is_known_external(name) &&
            oxide__starts(name, "_R")) {
            char rb[512];
            need = !oxide__panic_reason(oxide__demangle(name, rb, sizeof rb), f);
        }
    }
    if (!need)
        return OXIDE_OK;
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    for (uint32_t i = 0; i < mod->bitcode.len; i++) {
        oxide_bitcode_unit *u = mod->bitcode.items[i];
        if (!oxide__starts(u->name, "library:"))
            continue;
        /* only a library whose crate name (v0: <length><name>) a needed symbol mentions */
        char key[128];
        snprintf(key, sizeof key, "%zu%s", strlen(u->name + 8), u->name + 8);
        bool wanted = false;
        for (LLVMValueRef f = LLVMGetFirstFunction(dst); f && !wanted; f = LLVMGetNextFunction(f)) {
            size_t nl;
            const char *name = LLVMGetValueName2(f, &nl);
            if (LLVMIsDeclaration(f) && LLVMGetFirstUse(f) && !oxide__is_known_external(name) && strstr(name, key)) {
                char rb[512];
                wanted = !oxide__panic_reason(oxide__demangle(name, rb, sizeof rb), f);
            }
        }
        if (!wanted)
            continue;
        LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, u->name, 0);
        LLVMModuleRef lib = NULL;
        diag->msg[0] = 0;
        if (LLVMParseBitcodeInContext2(ctx, mb, &lib)) {
            LLVMDisposeMemoryBuffer(mb);
            continue; /* an unreadable library only means fewer functions available */
        }
        LLVMDisposeMemoryBuffer(mb);
        if (!unit_is_valid(lib)) {
            LLVMDisposeModule(lib);
            continue;
        }
        oxide__retarget_unit(lib, dst);
        char rb[512];
        for (LLVMValueRef f = LLVMGetFirstFunction(lib), next; f; f = next) {
            next = LLVMGetNextFunction(f);
            if (LLVMIsDeclaration(f))
                continue;
            size_t nl;
            const char *name = LLVMGetValueName2(f, &nl);
            if (oxide__panic_reason(oxide__demangle(name, rb, sizeof rb), f)) {
                LLVMValueRef d = oxide__declare_instead(lib, f);
                if (next == d)
                    next = LLVMGetNextFunction(d);
                continue;
            }
            LLVMValueRef mine = LLVMGetNamedFunction(dst, name);
            if (mine && !LLVMIsDeclaration(mine)) { /* the crates' own copy wins */
                LLVMValueRef d = oxide__declare_instead(lib, f);
                if (next == d)
                    next = LLVMGetNextFunction(d);
                continue;
            }
            if (LLVMGetLinkage(f) != LLVMInternalLinkage && LLVMGetLinkage(f) != LLVMPrivateLinkage)
                LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
        }
        for (LLVMValueRef g = LLVMGetFirstGlobal(lib); g; g = LLVMGetNextGlobal(g)) {
            size_t nl;
            const char *name = LLVMGetValueName2(g, &nl);
            LLVMValueRef mine = LLVMGetNamedGlobal(dst, name);
            if (LLVMGetInitializer(g) && LLVMGetLinkage(g) != LLVMInternalLinkage &&
                LLVMGetLinkage(g) != LLVMPrivateLinkage)
                LLVMSetLinkage(g, mine && LLVMGetInitializer(mine) ? LLVMAvailableExternallyLinkage
                                                                   : LLVMLinkOnceODRLinkage);
        }
        if (LLVMLinkModules2(dst, lib))
            return oxide__fail(OXIDE_ERROR_PARSE, "linking %s failed: %s", u->name, diag->msg[0] ? diag->msg : "?");
        *linked = true;
    }
    return OXIDE_OK;
}

oxide_status oxide__run_passes(LLVMModuleRef m, const char *pipeline) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(m, pipeline, NULL, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        oxide_status st = oxide__fail(OXIDE_ERROR_CODEGEN, "internal: pass pipeline '%s' failed: %s", pipeline, msg);
        LLVMDisposeErrorMessage(msg);
        return st;
    }
    return OXIDE_OK;
}

/* Step: what dst defines before the import (oxide IR kernels and functions) must survive the
 * internalisation. NULL with *n = 0 when there is nothing, or no memory (then nothing is kept,
 * which only costs dead-code removal). */
static LLVMValueRef *own_definitions(LLVMModuleRef dst, size_t *n) {
    *n = 0;
    size_t cap = 0;
    LLVMValueRef *own = NULL;
    for (LLVMValueRef f = LLVMGetFirstFunction(dst); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f) || LLVMGetLinkage(f) != LLVMExternalLinkage)
            continue;
        if (*n == cap) {
            LLVMValueRef *grown = realloc(own, (cap = cap ? cap * 2 : 16) * sizeof *own);
            if (!grown)
                return own;
            own = grown;
        }
        own[(*n)++] = f;
    }
    return own;
}

/* Step: everything but the kernels (and dst's own definitions) becomes internal, host
 * attributes go, and only what the kernels reach is kept; invokes become calls, landing pads go. */
static oxide_status internalise_and_prune(LLVMModuleRef dst, LLVMValueRef *own, size_t nown) {
    for (LLVMValueRef f = LLVMGetFirstFunction(dst); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f))
            continue;
        bool keep = LLVMGetFunctionCallConv(f) == LLVMPTXKernelCallConv;
        for (size_t j = 0; j < nown && !keep; j++)
            keep = own[j] == f;
        if (!keep)
            LLVMSetLinkage(f, LLVMInternalLinkage);
        oxide__strip_host_attrs(f);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(dst); g; g = LLVMGetNextGlobal(g))
        if (LLVMGetInitializer(g) && LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == 0)
            LLVMSetLinkage(g, LLVMInternalLinkage);
    /* host functions rustc merged (Vec<u8>::drop an alias of Vec<f32>::drop, hidden, in a crate
     * of several codegen units): an alias kept external kept its host target in the PTX */
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(dst); a; a = LLVMGetNextGlobalAlias(a))
        LLVMSetLinkage(a, LLVMInternalLinkage);
    return oxide__run_passes(dst, "globaldce,function(lower-invoke,simplifycfg),globaldce");
}

/* Step: the descriptors of the kernels found are appended to the caller's array. */
static oxide_status append_descriptors(const oxide_found_kernel *ks, size_t nk, oxide_iface_kernel **kernels,
                                       size_t *nkernels) {
    oxide_iface_kernel *grown = realloc(*kernels, (*nkernels + nk) * sizeof **kernels);
    if (!grown)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < nk; i++)
        grown[*nkernels + i] = ks[i].desc;
    *kernels = grown;
    *nkernels += nk;
    return OXIDE_OK;
}

oxide_status oxide__import_link(oxide_module *mod, LLVMModuleRef dst, const oxide_options *opts,
                                oxide_iface_kernel **kernels, size_t *nkernels) {
    if (!mod || !dst || !kernels || !nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide__import_link: NULL argument");
    oxide__llvm_init();
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(ctx);
    void *old_diag_ctx = LLVMContextGetDiagnosticContext(ctx);
    link_diag diag = {{0}};
    LLVMContextSetDiagnosticHandler(ctx, link_diag_handler, &diag);
    if (!LLVMGetDataLayoutStr(dst)[0])
        LLVMSetDataLayout(dst, NVPTX_DL);
    LLVMSetTarget(dst, OXIDE_NVPTX_TRIPLE);
    size_t nown;
    LLVMValueRef *own = own_definitions(dst, &nown);
    oxide_found_kernel *ks = NULL;
    size_t nk = 0;
    bool linked = false;
    oxide_status st = link_units(mod, dst, &diag);
    if (!st)
        st = oxide__find_kernels(mod, dst, &ks, &nk);
    if (!st)
        st = oxide__make_wrappers(dst, ks, nk, opts ? opts->sm : 90); /* NULL opts: the default, sm_90a */
    if (!st && opts && opts->line_info)
        oxide__wrapper_lines(dst, ks, nk);
    if (!st) {
        oxide__drop_stub_bodies(dst);
        oxide__mark_convergent_stubs(dst);
        st = internalise_and_prune(dst, own, nown);
    }
    if (!st)
        st = link_libraries(mod, dst, &diag, &linked);
    if (!st && linked)
        st = internalise_and_prune(dst, own, nown);
    if (!st)
        st = oxide__check_calls(dst, LLVMGetModuleDataLayout(dst));
    if (!st)
        st = oxide__check_selectable(dst);
    /* the host optimiser may have duplicated intrinsic calls (barriers) into both arms of a
     * branch; sink them back while they are still plain calls */
    if (!st)
        st = oxide__run_passes(dst, "function(simplifycfg<sink-common-insts>)");
    if (!st)
        st = oxide__link_intrinsics(dst);
    if (!st)
        st = oxide__check_targets(dst, ks, nk, opts);
    if (!st) {
        oxide__move_statics(dst);
        if (!opts || !opts->line_info)
            LLVMStripModuleDebugInfo(dst);
        st = oxide__run_passes(dst, "globaldce");
    }
    if (!st)
        st = append_descriptors(ks, nk, kernels, nkernels);
    free(ks);
    free(own);
    LLVMContextSetDiagnosticHandler(ctx, old_handler, old_diag_ctx);
    return st;
}
