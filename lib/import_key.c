/* What the kernels of a Rust program are, as key material for a PTX cache
 * (oxide_module_kernel_key, lib/cache.c): an edit to host-only code must give the same key, an
 * edit to anything a kernel can reach a new one.
 *
 * A unit that defines kernel entries (the crates that launch kernels: rustc emits each kernel
 * instance in the crate that instantiates it) is parsed, and only what its kernels reach is kept:
 * the functions they call and the globals they use, through constants too; every other body
 * becomes a declaration and is dropped with what only it used. Debug information goes too unless
 * line info is asked for (then the lines are part of the PTX). The printed module is the unit's
 * material. Any other unit (a library, the device API) is taken as its bytes: reading it costs
 * more than hashing it, and a library a kernel calls into changes only when its own code does. A
 * function of a kernel unit that another kernel unit declares is reached from there, so it is
 * kept too. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/DebugInfo.h>

#include "import.h"

/* ---- a set of LLVM values (open addressing, grows) ---- */

typedef struct vset {
    LLVMValueRef *slot;
    size_t cap, len;
} vset;

static size_t vhash(LLVMValueRef v, size_t cap) {
    return (size_t)(((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

/* true when v was not in the set (and now is); false when it was, or without memory */
static bool vset_add(vset *s, LLVMValueRef v, bool *oom) {
    if (2 * (s->len + 1) > s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 256;
        LLVMValueRef *ns = calloc(ncap, sizeof *ns);
        if (!ns)
            return !(*oom = true);
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) {
                size_t h = vhash(s->slot[i], ncap);
                while (ns[h])
                    h = (h + 1) & (ncap - 1);
                ns[h] = s->slot[i];
            }
        free(s->slot);
        s->slot = ns, s->cap = ncap;
    }
    size_t h = vhash(v, s->cap);
    while (s->slot[h]) {
        if (s->slot[h] == v)
            return false;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = v;
    s->len++;
    return true;
}

static bool vset_has(const vset *s, LLVMValueRef v) {
    if (!s->cap)
        return false;
    for (size_t h = vhash(v, s->cap); s->slot[h]; h = (h + 1) & (s->cap - 1))
        if (s->slot[h] == v)
            return true;
    return false;
}

/* ---- what the kernels reach ---- */

typedef struct walk {
    vset kept;
    LLVMValueRef *work;
    size_t nwork, capwork;
    bool oom;
} walk;

static void reach(walk *w, LLVMValueRef v, int depth) {
    if (!v || w->oom || depth > 64)
        return;
    if (LLVMIsAFunction(v) || LLVMIsAGlobalVariable(v) || LLVMIsAGlobalAlias(v)) {
        if (!vset_add(&w->kept, v, &w->oom))
            return;
        if (w->nwork == w->capwork) {
            size_t nc = w->capwork ? 2 * w->capwork : 256;
            LLVMValueRef *nw = realloc(w->work, nc * sizeof *nw);
            if (!nw) {
                w->oom = true;
                return;
            }
            w->work = nw, w->capwork = nc;
        }
        w->work[w->nwork++] = v;
        return;
    }
    if (LLVMIsAConstant(v) && !LLVMIsAGlobalValue(v))
        for (int i = 0, n = LLVMGetNumOperands(v); i < n; i++)
            reach(w, LLVMGetOperand(v, (unsigned)i), depth + 1);
}

/* Everything a kept value refers to is kept: a function's operands, a global's initializer, an
 * alias's target. */
static void close_over(walk *w) {
    while (w->nwork && !w->oom) {
        LLVMValueRef v = w->work[--w->nwork];
        if (LLVMIsAGlobalAlias(v)) {
            reach(w, LLVMAliasGetAliasee(v), 0);
        } else if (LLVMIsAGlobalVariable(v)) {
            reach(w, LLVMGetInitializer(v), 0);
        } else {
            for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(v); bb; bb = LLVMGetNextBasicBlock(bb))
                for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
                    for (int i = 0, n = LLVMGetNumOperands(in); i < n; i++) {
                        LLVMValueRef op = LLVMGetOperand(in, (unsigned)i);
                        if (op && !LLVMIsAInstruction(op) && !LLVMIsABasicBlock(op) && !LLVMIsAArgument(op))
                            reach(w, op, 0);
                    }
        }
    }
}

static bool is_entry(LLVMValueRef f) {
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    return !LLVMIsDeclaration(f) && strstr(name, "__oxide_kernel_entry_");
}

/* Does another kernel unit call f by name (declare it)? */
static bool declared_elsewhere(LLVMValueRef f, LLVMModuleRef *units, size_t n, size_t self) {
    size_t nl;
    const char *name = LLVMGetValueName2(f, &nl);
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef d = i == self ? NULL : LLVMGetNamedFunction(units[i], name);
        if (d && LLVMIsDeclaration(d))
            return true;
    }
    return false;
}

static int by_name(const void *a, const void *b) {
    size_t n;
    return strcmp(LLVMGetValueName2(*(LLVMValueRef const *)a, &n), LLVMGetValueName2(*(LLVMValueRef const *)b, &n));
}

/* The declarations in name order, at the end: rustc orders a unit's functions by where host
 * code first used them (an edit to main that first calls llvm.umul.with.overflow moved that
 * declaration, and the printer's attribute-group numbers with it), which must not change the
 * key. */
static oxide_status sort_declarations(LLVMModuleRef m) {
    size_t n = 0, i = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        n += LLVMIsDeclaration(f) != 0;
    LLVMValueRef *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f && i < n; f = LLVMGetNextFunction(f))
        if (LLVMIsDeclaration(f))
            d[i++] = f;
    qsort(d, n, sizeof *d, by_name);
    for (i = 0; i < n; i++)
        oxide__declare_instead(m, d[i]); /* a fresh declaration, added last */
    free(d);
    return OXIDE_OK;
}

/* Unit `self` of the kernel units, cut down to what kernels reach (see the file's comment). */
static oxide_status cut_to_kernels(LLVMModuleRef *units, size_t n, size_t self, bool line_info) {
    LLVMModuleRef m = units[self];
    /* valid IR before anything walks it: the reader checks records one by one, not that the
     * whole module makes sense (import.c's verify_unit, for the same reason) */
    size_t idl;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, NULL))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: the bitcode reads as invalid LLVM IR (malformed or corrupted)",
                           LLVMGetModuleIdentifier(m, &idl));
    walk w;
    memset(&w, 0, sizeof w);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (is_entry(f) || (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage &&
                            declared_elsewhere(f, units, n, self)))
            reach(&w, f, 0);
    close_over(&w);
    if (!w.oom) {
        for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
            next = LLVMGetNextFunction(f);
            if (!LLVMIsDeclaration(f) && !vset_has(&w.kept, f)) {
                LLVMValueRef d = oxide__declare_instead(m, f);
                if (next == d)
                    next = LLVMGetNextFunction(d);
            }
        }
        for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
            if (LLVMGetInitializer(g) && !vset_has(&w.kept, g)) {
                LLVMSetInitializer(g, NULL);
                LLVMSetLinkage(g, LLVMExternalLinkage);
            }
        for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m), next; a; a = next) {
            next = LLVMGetNextGlobalAlias(a);
            if (!vset_has(&w.kept, a) && !LLVMGetFirstUse(a))
                LLVMDeleteGlobal(a);
        }
    }
    free(w.kept.slot);
    free(w.work);
    if (w.oom)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    if (!line_info)
        LLVMStripModuleDebugInfo(m);
    /* the declarations nothing kept uses (not globaldce: it would also drop the kernel entries,
     * internal functions that only host code refers to) */
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        if (LLVMIsDeclaration(f) && !LLVMGetFirstUse(f))
            LLVMDeleteFunction(f);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(m), next; g; g = next) {
        next = LLVMGetNextGlobal(g);
        if (!LLVMGetInitializer(g) && !LLVMGetFirstUse(g))
            LLVMDeleteGlobal(g);
    }
    return sort_declarations(m);
}

static bool has_kernels(const oxide_bitcode_ref *u) {
    static const char tag[] = "__oxide_kernel_entry_";
    if ((u->name && oxide__starts(u->name, "library:")) || u->size < sizeof tag)
        return false;
    return memmem(u->data, u->size, tag, sizeof tag - 1) != NULL;
}

static void ignore_diag(LLVMDiagnosticInfoRef di, void *p) {
    (void)di;
    (void)p;
}

oxide_status oxide__kernel_key_material(const oxide_bitcode_ref *us, size_t n, bool line_info,
                                        void (*put)(void *, const void *, size_t), void *ctx) {
    oxide__llvm_init();
    size_t nk = 0;
    for (size_t i = 0; i < n; i++)
        nk += has_kernels(&us[i]);
    LLVMModuleRef *units = calloc(nk ? nk : 1, sizeof *units);
    if (!units)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    LLVMContextRef c = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(c, ignore_diag, NULL);
    oxide_status st = OXIDE_OK;
    size_t k = 0;
    for (size_t i = 0; i < n && !st; i++) {
        const oxide_bitcode_ref *u = &us[i];
        const char *name = u->name ? u->name : "bitcode";
        if (!has_kernels(u))
            continue;
        /* as the import checks a unit before LLVM reads it: LLVM trusts well-formed bitcode */
        if ((st = oxide__bitcode_precheck(u->data, u->size, name)))
            break;
        LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, name, 0);
        if (LLVMParseBitcodeInContext2(c, mb, &units[k]))
            st = oxide__fail(OXIDE_ERROR_PARSE, "%s: could not read the bitcode (malformed, or from a newer LLVM)",
                             name);
        LLVMDisposeMemoryBuffer(mb);
        k++;
    }
    for (size_t i = 0; i < nk && !st; i++)
        st = cut_to_kernels(units, nk, i, line_info);
    k = 0;
    for (size_t i = 0; i < n && !st; i++) {
        const oxide_bitcode_ref *u = &us[i];
        char head[600];
        if (!has_kernels(u)) {
            int len = snprintf(head, sizeof head, "unit %s %zu\n", u->name ? u->name : "", u->size);
            put(ctx, head, (size_t)len);
            put(ctx, u->data, u->size);
            continue;
        }
        char *text = LLVMPrintModuleToString(units[k++]);
        int len = snprintf(head, sizeof head, "kernels %s %zu\n", u->name ? u->name : "", strlen(text));
        put(ctx, head, (size_t)len);
        put(ctx, text, strlen(text));
        LLVMDisposeMessage(text);
    }
    for (size_t i = 0; i < nk; i++)
        if (units[i])
            LLVMDisposeModule(units[i]);
    free(units);
    LLVMContextDispose(c);
    return st;
}
