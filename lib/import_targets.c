/* What one compile target asks of the imported Rust kernels (lib/import.c calls it once the
 * intrinsic bodies are linked): a kernel that reaches an intrinsic its target does not have
 * (wgmma on sm_80, a cluster barrier before sm_90) is refused naming the kernel, the Rust
 * function that calls it and the operation -- NVPTX would otherwise stop with a selection error
 * or write PTX that ptxas refuses. A build for several targets (cargo oxide build --sm
 * sm_80,sm_90a) compiles each one, so the refusal says which target lacks it. The refusal has
 * the layout of the others (lib/import_diag.c): the user's line of the call, and the chain to it,
 * since the intrinsic is called from the device API, not from the line to change. Also gives the
 * dynamic shared memory the alignment the launch contracts ask for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "import.h"
#include "rust_intrinsic_targets.inc"

#define SM_90A 901u /* lib/ops.def: the arch-specific sm_90a only */

static int by_name(const void *key, const void *row) {
    return strcmp(key, *(const char *const *)row); /* the rows start with their name */
}

static bool target_has(unsigned min_sm, const oxide_options *o) {
    return min_sm == SM_90A ? o->sm == 90 && o->arch_specific : min_sm <= o->sm;
}

/* Functions seen in one walk: open addressing on the pointer. */
typedef struct seen_set {
    LLVMValueRef *slot;
    size_t cap, n;
} seen_set;

/* 1: added; 0: seen before; -1: out of memory. */
static int seen_add(seen_set *s, LLVMValueRef f) {
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        LLVMValueRef *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) {
                size_t h = ((uintptr_t)s->slot[i] >> 4) & (cap - 1);
                while (slot[h])
                    h = (h + 1) & (cap - 1);
                slot[h] = s->slot[i];
            }
        free(s->slot);
        s->slot = slot, s->cap = cap;
    }
    size_t h = ((uintptr_t)f >> 4) & (s->cap - 1);
    for (; s->slot[h]; h = (h + 1) & (s->cap - 1))
        if (s->slot[h] == f)
            return 0;
    s->slot[h] = f;
    s->n++;
    return 1;
}

typedef struct walk {
    const oxide_options *o;
    seen_set seen;
    LLVMValueRef *stack;
    size_t len, cap;
    bool oom;
} walk;

static void push(walk *w, LLVMValueRef f) {
    int added = seen_add(&w->seen, f);
    if (added <= 0) {
        w->oom |= added < 0;
        return;
    }
    if (w->len == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        LLVMValueRef *st = realloc(w->stack, cap * sizeof *st);
        if (!st) {
            w->oom = true;
            return;
        }
        w->stack = st, w->cap = cap;
    }
    w->stack[w->len++] = f;
}

/* The first call in f (or what f reaches) to an intrinsic the target lacks: its row, and the
 * call in *call. */
static int missing_in(walk *w, LLVMValueRef root, LLVMValueRef *call) {
    w->len = 0;
    push(w, root);
    while (w->len && !w->oom) {
        LLVMValueRef f = w->stack[--w->len];
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                if (!LLVMIsACallInst(in) && !LLVMIsAInvokeInst(in))
                    continue;
                LLVMValueRef callee = LLVMGetCalledValue(in);
                if (!callee || !LLVMIsAFunction(callee))
                    continue;
                size_t n;
                const char *name = LLVMGetValueName2(callee, &n);
                if (!strncmp(name, "__oxide_", 8)) {
                    const void *row =
                        bsearch(name, oxide__rust_intrinsic_targets,
                                sizeof oxide__rust_intrinsic_targets / sizeof oxide__rust_intrinsic_targets[0],
                                sizeof oxide__rust_intrinsic_targets[0], by_name);
                    int i = row ? (int)(((const char *)row - (const char *)oxide__rust_intrinsic_targets) /
                                        sizeof oxide__rust_intrinsic_targets[0])
                                : -1;
                    if (i >= 0 && !target_has(oxide__rust_intrinsic_targets[i].min_sm, w->o)) {
                        *call = in;
                        return i;
                    }
                    continue; /* an intrinsic's body calls only LLVM's */
                }
                if (LLVMCountBasicBlocks(callee))
                    push(w, callee);
            }
    }
    return -1;
}

static bool same_dir(LLVMMetadataRef a, LLVMMetadataRef b) {
    unsigned na = 0, nb = 0;
    const char *da = "", *db = "";
    LLVMMetadataRef fa = LLVMDIScopeGetFile(LLVMDILocationGetScope(a)),
                    fb = LLVMDIScopeGetFile(LLVMDILocationGetScope(b));
    if (fa)
        da = LLVMDIFileGetDirectory(fa, &na);
    if (fb)
        db = LLVMDIFileGetDirectory(fb, &nb);
    return na == nb && (!na || !memcmp(da, db, na));
}

/* Where to point the refusal: the refused call is the device API's (cuda_device wraps each
 * intrinsic), whose source line is not the one to change. The user's line is the first place
 * outside the package folder of the call's own line: an inlinedAt location of the call (which
 * the call then takes as its line: the compile fails, nothing else reads it), else, when the call
 * sits in a device API function that was not inlined, a call of that function, outward. */
static LLVMValueRef user_site(LLVMValueRef call) {
    LLVMMetadataRef inner = LLVMInstructionGetDebugLoc(call);
    for (int depth = 0; inner && depth < 16; depth++) {
        LLVMMetadataRef here = LLVMInstructionGetDebugLoc(call);
        if (!here)
            return call;
        if (!same_dir(here, inner))
            return call;
        for (LLVMMetadataRef l = LLVMDILocationGetInlinedAt(here); l; l = LLVMDILocationGetInlinedAt(l))
            if (!same_dir(l, inner)) {
                LLVMInstructionSetDebugLoc(call, l);
                return call;
            }
        LLVMValueRef f = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call)), next = NULL;
        for (LLVMUseRef u = LLVMGetFirstUse(f); u && !next; u = LLVMGetNextUse(u)) {
            LLVMValueRef user = LLVMGetUser(u);
            if ((LLVMIsACallInst(user) || LLVMIsAInvokeInst(user)) && LLVMGetCalledValue(user) == f &&
                LLVMInstructionGetDebugLoc(user))
                next = user;
        }
        if (!next)
            return call;
        call = next;
    }
    return call;
}

static void align_dyn_smem(LLVMModuleRef m, const oxide_found_kernel *ks, size_t n) {
    LLVMValueRef g = LLVMGetNamedGlobal(m, "__oxide_dyn_smem_base");
    for (size_t i = 0; g && i < n; i++) {
        const oxide_launch_contract *c = &ks[i].desc.contract;
        /* one symbol for every kernel of the module: the strongest alignment any of them asks */
        if ((c->fields & OXIDE_CONTRACT_SMEM_ALIGN) && c->smem_align > LLVMGetAlignment(g))
            LLVMSetAlignment(g, c->smem_align);
    }
}

oxide_status oxide__check_targets(LLVMModuleRef m, const oxide_found_kernel *ks, size_t n, const oxide_options *opts) {
    align_dyn_smem(m, ks, n);
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    walk w = {.o = opts};
    oxide_status st = OXIDE_OK;
    for (size_t k = 0; k < n && !st; k++) {
        LLVMValueRef call = NULL;
        int i = missing_in(&w, ks[k].entry, &call);
        if (w.oom) {
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory checking the kernels for %s", opts->target);
        } else if (i >= 0) {
            unsigned need = oxide__rust_intrinsic_targets[i].min_sm;
            char want[32];
            if (need == SM_90A)
                snprintf(want, sizeof want, "sm_90a");
            else
                snprintf(want, sizeof want, "sm_%u", need);
            st = oxide__refuse(m, user_site(call), NULL,
                               "uses %s, which only %s%s has, and this build targets %s too; build the program for "
                               "%s%s only (cargo oxide build --sm %s, or [package.metadata.oxide] sm = [\"%s\"] in "
                               "its Cargo.toml), or keep that kernel out of a program built for %s",
                               oxide__rust_intrinsic_targets[i].what, want, need == SM_90A ? "" : " and later",
                               opts->target, want, need == SM_90A ? "" : " and later", want, want, opts->target);
        }
    }
    free(w.seen.slot);
    free(w.stack);
    return st;
}
