/* What the kernels of a Rust program are, as key material for a PTX cache
 * (oxide_bitcode_kernel_key, lib/cache.c): an edit to host-only code must give the same key, an
 * edit to anything a kernel can reach a new one.
 *
 * The walk starts at the kernel entries of the units that define them (rustc emits each kernel
 * instance in the crate that instantiates it) and keeps what they reach: the functions they
 * call and the globals they use, through constants too, across units: a function or global
 * other units can see may be defined in another unit, looked for only in units whose bytes hold
 * the name (reading a unit costs more than looking for a name in it). Another codegen unit of a
 * kernels' crate (a program's crate is several in release) is walked too; a library the kernels
 * reach counts by its bytes, and then so does every unit outside the kernels' crates. In each
 * unit walked, every other body becomes a declaration and is dropped with what only it used;
 * debug information goes too unless line info is asked for (then the lines are part of the
 * PTX). The printed modules are the rest of the material; a unit the kernels do not reach is
 * not part of it (the import keeps only what the kernels reach, lib/import.c). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Comdat.h>
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
    LLVMValueRef *work, *order; /* to walk; every kept value, in the order kept */
    size_t nwork, norder, cap;
    bool oom;
} walk;

static void reach(walk *w, LLVMValueRef v, int depth) {
    if (!v || w->oom || depth > 64)
        return;
    if (LLVMIsAFunction(v) || LLVMIsAGlobalVariable(v) || LLVMIsAGlobalAlias(v)) {
        if (!vset_add(&w->kept, v, &w->oom))
            return;
        if (w->norder == w->cap) { /* nwork <= norder */
            size_t nc = w->cap ? 2 * w->cap : 256;
            LLVMValueRef *nw = realloc(w->work, nc * sizeof *nw), *no = nw ? realloc(w->order, nc * sizeof *no) : NULL;
            if (nw)
                w->work = nw;
            if (!no) {
                w->oom = true;
                return;
            }
            w->order = no, w->cap = nc;
        }
        w->work[w->nwork++] = v;
        w->order[w->norder++] = v;
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

/* The names without the suffix ThinLTO gives a unit's internal symbols that other codegen units
 * of the crate use (`.llvm.` and a hash of the whole unit, host code too: an edit to main's
 * message renamed the kernel entries beside it). The suffix only makes a name unique across
 * the crate's units, and names inside the PTX are not what the kernels do. */
static void unpromote_one(LLVMValueRef v) {
    size_t n;
    const char *name = LLVMGetValueName2(v, &n);
    size_t d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d < n && d >= 6 && !memcmp(name + d - 6, ".llvm.", 6)) {
        char *base = malloc(d - 6 + 1);
        if (!base)
            return; /* the name stays: a key that changes more often, no wrong one */
        memcpy(base, name, d - 6);
        base[d - 6] = 0;
        LLVMSetValueName2(v, base, d - 6);
        free(base);
    }
}

static void unpromote(LLVMModuleRef m) {
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        unpromote_one(f);
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
        unpromote_one(g);
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); a; a = LLVMGetNextGlobalAlias(a))
        unpromote_one(a);
}

/* Module m cut down to what the walk kept (see the file's comment). */
static oxide_status cut_to_kept(LLVMModuleRef m, const vset *kept, bool line_info) {
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        if (!LLVMIsDeclaration(f) && !vset_has(kept, f)) {
            LLVMValueRef d = oxide__declare_instead(m, f);
            if (next == d)
                next = LLVMGetNextFunction(d);
        }
    }
    /* what the module marks used is host code's (#[used] statics): not the kernels' */
    static const char *const used_lists[] = {"llvm.used", "llvm.compiler.used"};
    for (size_t i = 0; i < 2; i++) {
        LLVMValueRef u = LLVMGetNamedGlobal(m, used_lists[i]);
        if (u)
            LLVMDeleteGlobal(u);
    }
    size_t n = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
        if (LLVMGetInitializer(g) && !vset_has(kept, g)) {
            LLVMSetInitializer(g, NULL);
            LLVMSetLinkage(g, LLVMExternalLinkage);
            LLVMSetComdat(g, NULL); /* a declaration has none */
        } else if (LLVMGetInitializer(g)) {
            n++;
        }
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        n += !LLVMIsDeclaration(f);
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); a; a = LLVMGetNextGlobalAlias(a))
        if (vset_has(kept, a))
            n++;
        else
            LLVMSetLinkage(a, LLVMInternalLinkage); /* for globaldce to drop */
    /* What is left, kept in llvm.used while globaldce drops every alias, global and declaration
     * that only host code used (the kernel entries are internal and only host code refers to
     * them: globaldce alone would drop them too). */
    LLVMValueRef *keep = malloc((n ? n : 1) * sizeof *keep);
    if (!keep)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    size_t i = 0;
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
        if (LLVMGetInitializer(g) && i < n)
            keep[i++] = g;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && i < n)
            keep[i++] = f;
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); a; a = LLVMGetNextGlobalAlias(a))
        if (vset_has(kept, a) && i < n)
            keep[i++] = a;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(LLVMGetModuleContext(m), 0);
    LLVMValueRef used = LLVMAddGlobal(m, LLVMArrayType2(ptr, i), "llvm.used");
    LLVMSetLinkage(used, LLVMAppendingLinkage);
    LLVMSetSection(used, "llvm.metadata");
    LLVMSetInitializer(used, LLVMConstArray2(ptr, keep, i));
    free(keep);
    oxide_status st = oxide__run_passes(m, "globaldce");
    LLVMDeleteGlobal(used);
    if (st)
        return st;
    if (!line_info)
        LLVMStripModuleDebugInfo(m);
    unpromote(m);
    /* a unit's name and file are the codegen unit's (rustc numbers a crate's units by size, so
     * an edit to host code can renumber them): not what the kernels are */
    LLVMSetModuleIdentifier(m, "", 0);
    LLVMSetSourceFileName(m, "", 0);
    return sort_declarations(m);
}

static const char entry_tag[] = "__oxide_kernel_entry_";

static bool mentions(const oxide_bitcode_ref *u, const char *s, size_t n) {
    return n && u->size >= n && memmem(u->data, u->size, s, n) != NULL;
}

static bool is_library(const oxide_bitcode_ref *u) { return u->name && oxide__starts(u->name, "library:"); }

/* The definition named `name` in m, or NULL. */
static LLVMValueRef defined(LLVMModuleRef m, const char *name) {
    LLVMValueRef v = LLVMGetNamedFunction(m, name);
    if (v && !LLVMIsDeclaration(v))
        return v;
    if ((v = LLVMGetNamedGlobal(m, name)) && LLVMGetInitializer(v))
        return v;
    size_t n = strlen(name);
    return LLVMGetNamedGlobalAlias(m, name, n);
}

typedef struct keyer {
    const oxide_bitcode_ref *us;
    size_t n;
    LLVMContextRef c;
    LLVMModuleRef *mods; /* per unit: parsed (the kernels reach it), or NULL */
    LLVMModuleRef *lazy; /* per unit: its declarations, read to see that it defines nothing needed */
    bool *library;       /* per unit: a library the kernels reach, counted by its bytes */
    bool libraries;      /* any: then every unit but the kernels' crates' counts by its bytes */
    walk w;
} keyer;

/* Unit i read into *m: all of it, verified, or (lazy) its globals and declarations only, which
 * is enough to tell what it defines and costs a fraction of reading the bodies. */
static oxide_status read_unit(keyer *k, size_t i, bool lazy, LLVMModuleRef *m) {
    const oxide_bitcode_ref *u = &k->us[i];
    const char *name = u->name ? u->name : "bitcode";
    /* as the import checks a unit before LLVM reads it: LLVM trusts well-formed bitcode */
    oxide_status st = oxide__bitcode_precheck(u->data, u->size, name);
    if (st)
        return st;
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, name, 0);
    LLVMBool bad = lazy ? LLVMGetBitcodeModuleInContext2(k->c, mb, m) : LLVMParseBitcodeInContext2(k->c, mb, m);
    if (!lazy || bad)
        LLVMDisposeMemoryBuffer(mb); /* a lazy module owns its buffer */
    if (bad) {
        *m = NULL;
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: could not read the bitcode (malformed, or from a newer LLVM)", name);
    }
    /* valid IR before anything walks it: the reader checks records one by one, not that the
     * whole module makes sense (import.c's verify_unit, for the same reason) */
    if (!lazy && LLVMVerifyModule(*m, LLVMReturnStatusAction, NULL))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: the bitcode reads as invalid LLVM IR (malformed or corrupted)",
                           name);
    return OXIDE_OK;
}

/* The name other units can define v by, or NULL: v is the unit's own, or what the import puts
 * in place of any definition (an intrinsic, the device API's __oxide_ stubs, libdevice). */
static const char *shared_name(LLVMValueRef v, size_t *len) {
    LLVMLinkage l = LLVMGetLinkage(v);
    const char *name = LLVMGetValueName2(v, len);
    return l == LLVMInternalLinkage || l == LLVMPrivateLinkage || oxide__is_known_external(name) ? NULL : name;
}

/* Does unit i define any of the first n names the kernels need? Its bytes hold the name when it
 * declares it too (every crate that can panic declares core's panics), so the answer is read
 * from its declarations. */
static oxide_status defines_needed(keyer *k, size_t i, size_t n, bool *yes) {
    *yes = false;
    if (!k->lazy[i]) {
        oxide_status st = read_unit(k, i, true, &k->lazy[i]);
        if (st)
            return st;
    }
    for (size_t j = 0; j < n && !*yes; j++) {
        size_t nl;
        const char *name = shared_name(k->w.order[j], &nl);
        *yes = name && defined(k->lazy[i], name);
    }
    return OXIDE_OK;
}

/* The crate part of a codegen unit's module: rustc names it `<crate>.<hash>-cgu.<n>`. */
static size_t crate_part(LLVMModuleRef m, const char **s) {
    size_t n;
    *s = LLVMGetSourceFileName(m, &n);
    const char *c = *s ? strstr(*s, "-cgu.") : NULL;
    return c ? (size_t)(c - *s) : 0;
}

/* Is m a codegen unit of a crate whose units are parsed (a crate with kernels)? */
static bool of_kernel_crate(const keyer *k, LLVMModuleRef m) {
    const char *s, *t;
    size_t n = crate_part(m, &s);
    for (size_t j = 0; n && j < k->n; j++)
        if (k->mods[j] && crate_part(k->mods[j], &t) == n && !memcmp(s, t, n))
            return true;
    return false;
}

/* A library the kernels reach counts by its bytes (reading all of it to keep one function
 * costs more than hashing it: cuda_core's dev bitcode, 0.6 MB, for an instance of
 * is_aligned_to it shares), and so does every unit it can call into but the kernels' crates'
 * (libraries do not call into a program); what it declares that a parsed unit defines is
 * kept there. */
static void count_library(keyer *k, size_t i) {
    k->library[i] = k->libraries = true;
    for (LLVMValueRef f = LLVMGetFirstFunction(k->lazy[i]); f; f = LLVMGetNextFunction(f))
        if (LLVMIsDeclaration(f)) {
            size_t nl;
            const char *name = LLVMGetValueName2(f, &nl);
            for (size_t j = 0; j < k->n && !oxide__is_known_external(name); j++)
                if (k->mods[j])
                    reach(&k->w, defined(k->mods[j], name), 0);
        }
    for (LLVMValueRef g = LLVMGetFirstGlobal(k->lazy[i]); g; g = LLVMGetNextGlobal(g))
        if (!LLVMGetInitializer(g)) {
            size_t nl;
            const char *name = LLVMGetValueName2(g, &nl);
            for (size_t j = 0; j < k->n; j++)
                if (k->mods[j])
                    reach(&k->w, defined(k->mods[j], name), 0);
        }
}

/* From the kernel entries across the units: a kept value that other units can see (a
 * declaration, a definition that is not internal) may be defined in any unit whose bytes hold
 * its name (the string table keeps names as they are), so each such unit is parsed and its
 * definitions of the names the kernels need are walked too, until nothing new is kept. */
static oxide_status reach_across(keyer *k) {
    for (size_t done = 0;; done++) {
        close_over(&k->w);
        if (k->w.oom)
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
        if (done == k->w.norder)
            return OXIDE_OK;
        size_t nl;
        const char *name = shared_name(k->w.order[done], &nl);
        for (size_t i = 0; name && i < k->n; i++) {
            if (is_library(&k->us[i]) || k->library[i] || !(k->mods[i] || mentions(&k->us[i], name, nl)))
                continue;
            if (!k->mods[i]) {
                bool yes;
                oxide_status st = defines_needed(k, i, done + 1, &yes);
                if (!st && yes && !of_kernel_crate(k, k->lazy[i])) {
                    count_library(k, i);
                    continue;
                }
                if (!st && yes) {
                    LLVMDisposeModule(k->lazy[i]);
                    k->lazy[i] = NULL;
                    st = read_unit(k, i, false, &k->mods[i]);
                }
                if (st)
                    return st;
                if (!yes)
                    continue;
                /* what the kernels needed before this unit was read */
                for (size_t j = 0; j < done; j++) {
                    size_t el; /* not nl: name's length, for the units after this one */
                    const char *earlier = shared_name(k->w.order[j], &el);
                    if (earlier)
                        reach(&k->w, defined(k->mods[i], earlier), 0);
                }
            }
            reach(&k->w, defined(k->mods[i], name), 0);
        }
    }
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void ignore_diag(LLVMDiagnosticInfoRef di, void *p) {
    (void)di;
    (void)p;
}

/* The material: the units the kernels reach, each cut to what they reach in it and printed,
 * in the order of the printed text (not of the units: rustc numbers a crate's codegen units by
 * size). */
static oxide_status material(keyer *k, bool line_info, void (*put)(void *, const void *, size_t), void *ctx) {
    for (size_t i = 0; i < k->n; i++)
        if (!is_library(&k->us[i]) && mentions(&k->us[i], entry_tag, sizeof entry_tag - 1)) {
            oxide_status st = read_unit(k, i, false, &k->mods[i]);
            if (st)
                return st;
            for (LLVMValueRef f = LLVMGetFirstFunction(k->mods[i]); f; f = LLVMGetNextFunction(f))
                if (is_entry(f))
                    reach(&k->w, f, 0);
        }
    oxide_status st = reach_across(k);
    size_t nt = 0;
    char **texts = calloc(k->n ? k->n : 1, sizeof *texts);
    bool *kept = calloc(k->n ? k->n : 1, sizeof *kept);
    if (!texts || !kept) {
        free(texts), free(kept);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    }
    /* a unit read only because its bytes name what the kernels need (declaring it, as host
     * crates declare the panics) but where nothing is kept is not part of it */
    for (size_t j = 0; j < k->w.norder; j++)
        for (size_t i = 0; i < k->n; i++)
            kept[i] |= k->mods[i] && LLVMGetGlobalParent(k->w.order[j]) == k->mods[i];
    for (size_t i = 0; i < k->n && !st; i++)
        if (kept[i] && !(st = cut_to_kept(k->mods[i], &k->w.kept, line_info)))
            texts[nt++] = LLVMPrintModuleToString(k->mods[i]);
    free(kept);
    qsort(texts, nt, sizeof *texts, by_text);
    char head[64];
    int len;
    for (size_t i = 0; i < k->n && !st && k->libraries; i++) {
        if (is_library(&k->us[i]) || k->mods[i] || (!k->lazy[i] && (st = read_unit(k, i, true, &k->lazy[i]))) ||
            of_kernel_crate(k, k->lazy[i]))
            continue;
        len = snprintf(head, sizeof head, "unit %zu\n", k->us[i].size);
        put(ctx, head, (size_t)len);
        put(ctx, k->us[i].data, k->us[i].size);
    }
    len = snprintf(head, sizeof head, "units %zu\n", nt);
    put(ctx, head, (size_t)len);
    for (size_t i = 0; i < nt; i++) {
        len = snprintf(head, sizeof head, "kernels %zu\n", strlen(texts[i]));
        put(ctx, head, (size_t)len);
        put(ctx, texts[i], strlen(texts[i]));
        LLVMDisposeMessage(texts[i]);
    }
    free(texts);
    return st;
}

oxide_status oxide__kernel_key_material(const oxide_bitcode_ref *us, size_t n, bool line_info,
                                        void (*put)(void *, const void *, size_t), void *ctx) {
    oxide__llvm_init();
    keyer k;
    memset(&k, 0, sizeof k);
    k.us = us, k.n = n;
    k.mods = calloc(n ? n : 1, sizeof *k.mods);
    k.lazy = calloc(n ? n : 1, sizeof *k.lazy);
    k.library = calloc(n ? n : 1, sizeof *k.library);
    if (!k.mods || !k.lazy || !k.library) {
        free(k.mods), free(k.lazy), free(k.library);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory computing the kernel key");
    }
    k.c = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(k.c, ignore_diag, NULL);
    oxide_status st = material(&k, line_info, put, ctx);
    for (size_t i = 0; i < n; i++) {
        if (k.mods[i])
            LLVMDisposeModule(k.mods[i]);
        if (k.lazy[i])
            LLVMDisposeModule(k.lazy[i]);
    }
    free(k.mods), free(k.lazy), free(k.library);
    free(k.w.kept.slot);
    free(k.w.work);
    free(k.w.order);
    LLVMContextDispose(k.c);
    return st;
}
