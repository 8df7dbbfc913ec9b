/* The kernels of imported Rust bitcode: each `#[kernel]` entry calls __oxide_kernel_tag with a
 * constant descriptor (laid out in rustc-plugin/cuda-device/src/lib.rs, __private); this file
 * reads those constants into oxide_iface_kernel and writes the ptx_kernel wrapper that puts
 * oxide's interface ABI in front of each entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

const char *oxide__rust_name(LLVMValueRef f, char *buf, size_t cap) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    oxide__demangle(name, buf, cap);
    /* a kernel's generated entry is reported as the kernel */
    char *e = strstr(buf, "__oxide_kernel_entry_");
    if (e)
        memmove(e, e + 21, strlen(e + 21) + 1);
    return buf;
}

/* ---- reading constant data (the kernel descriptors, panic locations) ---- */

static void put_le(flat *f, size_t off, uint64_t v, unsigned nbytes) {
    for (unsigned i = 0; i < nbytes; i++)
        if (off + i < f->cap)
            f->bytes[off + i] = (uint8_t)(v >> (8 * i));
}

void oxide__flatten(LLVMTargetDataRef td, LLVMValueRef c, size_t off, flat *f) {
    if (!c || off >= f->cap)
        return;
    LLVMTypeRef ty = LLVMTypeOf(c);
    if (LLVMIsAConstantAggregateZero(c) || LLVMIsAUndefValue(c) || LLVMIsAPoisonValue(c) ||
        LLVMIsAConstantPointerNull(c))
        return;
    if (LLVMIsAConstantInt(c)) {
        unsigned bits = LLVMGetIntTypeWidth(ty);
        put_le(f, off, LLVMConstIntGetZExtValue(c), (bits + 7) / 8 > 8 ? 8 : (bits + 7) / 8);
        return;
    }
    if (LLVMIsAConstantFP(c)) {
        LLVMBool lost;
        double v = LLVMConstRealGetDouble(c, &lost);
        if (LLVMGetTypeKind(ty) == LLVMFloatTypeKind) {
            float x = (float)v;
            uint32_t u;
            memcpy(&u, &x, 4);
            put_le(f, off, u, 4);
        } else {
            uint64_t u;
            memcpy(&u, &v, 8);
            put_le(f, off, u, 8);
        }
        return;
    }
    if (LLVMIsAGlobalValue(c)) {
        if (f->nrel < 64)
            f->rel[f->nrel++] = (reloc){off, c, 0};
        return;
    }
    if (LLVMIsAConstantExpr(c)) {
        LLVMOpcode op = LLVMGetConstOpcode(c);
        if (op == LLVMIntToPtr && LLVMIsAConstantInt(LLVMGetOperand(c, 0))) {
            put_le(f, off, LLVMConstIntGetZExtValue(LLVMGetOperand(c, 0)), 8);
            return;
        }
        if (op == LLVMGetElementPtr && LLVMIsAGlobalValue(LLVMGetOperand(c, 0)) && LLVMGetNumOperands(c) == 2 &&
            LLVMIsAConstantInt(LLVMGetOperand(c, 1))) {
            uint64_t esz = LLVMABISizeOfType(td, LLVMGetGEPSourceElementType(c));
            if (f->nrel < 64)
                f->rel[f->nrel++] =
                    (reloc){off, LLVMGetOperand(c, 0), LLVMConstIntGetSExtValue(LLVMGetOperand(c, 1)) * (int64_t)esz};
            return;
        }
        f->bad = true;
        return;
    }
    LLVMTypeKind k = LLVMGetTypeKind(ty);
    if (LLVMIsAConstantDataSequential(c) && k == LLVMArrayTypeKind &&
        LLVMGetTypeKind(LLVMGetElementType(ty)) == LLVMIntegerTypeKind &&
        LLVMGetIntTypeWidth(LLVMGetElementType(ty)) == 8) {
        size_t n;
        const char *s = LLVMGetAsString(c, &n);
        for (size_t i = 0; i < n && off + i < f->cap; i++)
            f->bytes[off + i] = (uint8_t)s[i];
        return;
    }
    if (k == LLVMStructTypeKind) {
        unsigned n = LLVMCountStructElementTypes(ty);
        for (unsigned i = 0; i < n; i++)
            oxide__flatten(td, LLVMGetAggregateElement(c, i), off + LLVMOffsetOfElement(td, ty, i), f);
        return;
    }
    if (k == LLVMArrayTypeKind || k == LLVMVectorTypeKind) {
        uint64_t n = k == LLVMArrayTypeKind ? LLVMGetArrayLength2(ty) : LLVMGetVectorSize(ty);
        uint64_t esz = LLVMABISizeOfType(td, LLVMGetElementType(ty));
        for (uint64_t i = 0; i < n && off + i * esz < f->cap; i++)
            oxide__flatten(td, LLVMGetAggregateElement(c, (unsigned)i), off + i * esz, f);
        return;
    }
    f->bad = true;
}

const reloc *oxide__reloc_at(const flat *f, size_t off) {
    for (int i = 0; i < f->nrel; i++)
        if (f->rel[i].off == off)
            return &f->rel[i];
    return NULL;
}

/* The bytes of a string constant a relocation points at (NULL if it is not one). */
const char *oxide__reloc_string(const reloc *r, size_t len) {
    if (!r || !LLVMIsAGlobalVariable(r->global))
        return NULL;
    LLVMValueRef init = LLVMGetInitializer(r->global);
    if (!init || !LLVMIsAConstantDataSequential(init))
        return NULL;
    size_t n;
    const char *s = LLVMGetAsString(init, &n);
    if (r->addend < 0 || (size_t)r->addend + len > n)
        return NULL;
    return s + r->addend;
}

/* ---- the kernel descriptors ---- */

/* Layouts of cuda_device::__private (x86_64 and nvptx64 agree); the head is desc_head's. */
enum {
    KD_LB = 56,
    KD_CLUSTER = 64,
    KD_DYN_SMEM = 76,
    KD_CONTRACT = 80, /* oxide_launch_contract's ten u32, in its order */
    KD_SIZE = 120
};
enum {
    PD_NAME = 0,
    PD_NAME_LEN = 8,
    PD_KIND = 16,
    PD_MUT = 20,
    PD_SIZE = 24,
    PD_ALIGN = 28,
    PD_ELEM = 32,
    PD_SIZE_ALL = 48
};
enum { K_SCALAR = 0, K_SLICE = 1, K_PTR = 2, K_BYTES = 3, K_TMA_DESC = 4 };

typedef struct scalar_entry {
    uint64_t tid[2];
    uint32_t code;
} scalar_entry;

static oxide_status read_scalars(LLVMModuleRef m, LLVMTargetDataRef td, scalar_entry *out, int *n) {
    *n = 0;
    LLVMValueRef g = LLVMGetNamedGlobal(m, "__OXIDE_SCALAR_TYPES");
    if (!g || !LLVMGetInitializer(g))
        return oxide__fail(OXIDE_ERROR_NOT_FOUND, "the bitcode has no cuda_device::__private scalar table "
                                                  "(__OXIDE_SCALAR_TYPES): is cuda-device's bitcode among the units?");
    LLVMValueRef init = LLVMGetInitializer(g);
    uint64_t size = LLVMABISizeOfType(td, LLVMTypeOf(init));
    uint8_t buf[64 * 24] = {0};
    flat f = {.bytes = buf, .cap = sizeof buf};
    oxide__flatten(td, init, 0, &f);
    for (uint64_t off = 0; off + 24 <= size && *n < 64; off += 24) {
        out[*n].tid[0] = rd64(buf + off);
        out[*n].tid[1] = rd64(buf + off + 8);
        out[*n].code = rd32(buf + off + 16);
        (*n)++;
    }
    return OXIDE_OK;
}

static bool scalar_of(const scalar_entry *t, int n, const uint8_t *tid, oxide_scalar *out) {
    uint64_t a = rd64(tid), b = rd64(tid + 8);
    for (int i = 0; i < n; i++)
        if (t[i].tid[0] == a && t[i].tid[1] == b) {
            *out = (oxide_scalar)t[i].code;
            return true;
        }
    return false;
}

oxide_status oxide__desc_head(LLVMTargetDataRef td, LLVMValueRef tag_call, const char *rust, const char *what, flat *f,
                              desc_head *h) {
    memset(h, 0, sizeof *h);
    LLVMValueRef g = LLVMGetOperand(tag_call, 0);
    if (!LLVMIsAGlobalVariable(g) || !LLVMGetInitializer(g))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: the %s is not a constant", rust, what);
    oxide__flatten(td, LLVMGetInitializer(g), 0, f);
    h->name_len = rd64(f->bytes + DH_NAME_LEN);
    h->nparams = rd64(f->bytes + DH_PARAMS_LEN);
    h->name = oxide__reloc_string(oxide__reloc_at(f, DH_NAME), (size_t)h->name_len);
    h->params = oxide__reloc_at(f, DH_PARAMS);
    h->generic = rd32(f->bytes + DH_GENERIC) != 0;
    h->tag = rd64(f->bytes + DH_TID) ^ rd64(f->bytes + DH_TID + 8);
    return OXIDE_OK;
}

void oxide__desc_entry(const desc_head *h, char *buf, size_t cap) {
    if (h->generic)
        snprintf(buf, cap, "%.*s_%016llx", (int)h->name_len, h->name, (unsigned long long)h->tag);
    else
        snprintf(buf, cap, "%.*s", (int)h->name_len, h->name);
}

/* Read the descriptor of one tagged entry into k->desc (strings and arrays in mod->arena). */
static oxide_status read_desc(oxide_module *mod, LLVMTargetDataRef td, const scalar_entry *sc, int nsc,
                              oxide_found_kernel *k) {
    char nb[512];
    const char *rust = oxide__rust_name(k->entry, nb, sizeof nb);
    uint8_t kb[KD_SIZE] = {0};
    flat f = {.bytes = kb, .cap = sizeof kb};
    desc_head h;
    oxide_status st = oxide__desc_head(td, k->tag_call, rust, "kernel descriptor", &f, &h);
    if (st != OXIDE_OK)
        return st;
    const char *name = h.name;
    uint64_t name_len = h.name_len, nparams = h.nparams;
    const reloc *pr = h.params;
    if (f.bad || !name || name_len > 200 || nparams > 64 || (nparams && !pr))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: unreadable kernel descriptor", rust);
    oxide_iface_kernel *d = &k->desc;
    char ebuf[256];
    oxide__desc_entry(&h, ebuf, sizeof ebuf);
    d->entry = oxide__strdup(&mod->arena, ebuf);
    /* readable name: for a generic instance, the demangled generic arguments of its entry */
    if (h.generic) {
        char raw[512];
        size_t rl;
        oxide__demangle(LLVMGetValueName2(k->entry, &rl), raw, sizeof raw);
        const char *lt = strstr(raw, "__oxide_kernel_entry_");
        const char *args = lt ? strchr(lt, '<') : NULL;
        char rbuf[512];
        if (args)
            snprintf(rbuf, sizeof rbuf, "%.*s%s", (int)name_len, name, args[1] == ':' ? args + 2 : args);
        else
            snprintf(rbuf, sizeof rbuf, "%s", ebuf);
        /* "map::<f32, x>" printed by the demangler as "map<f32, x>" */
        d->name = oxide__strdup(&mod->arena, rbuf);
    } else {
        d->name = d->entry;
    }
    d->launch_bounds[0] = rd32(kb + KD_LB);
    d->launch_bounds[1] = rd32(kb + KD_LB + 4);
    d->cluster[0] = rd32(kb + KD_CLUSTER);
    d->cluster[1] = rd32(kb + KD_CLUSTER + 4);
    d->cluster[2] = rd32(kb + KD_CLUSTER + 8);
    d->dyn_smem = rd32(kb + KD_DYN_SMEM);
    uint32_t *cw = (uint32_t *)&d->contract;
    for (size_t w = 0; w < sizeof d->contract / 4; w++)
        cw[w] = rd32(kb + KD_CONTRACT + 4 * w);
    char why[200];
    if (oxide__contract_invalid(&d->contract, why, sizeof why))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: #[launch_contract] has %s", rust, why);
    d->nparams = (uint32_t)nparams;
    oxide_iface_param *ps = oxide__alloc(&mod->arena, sizeof *ps * (nparams ? nparams : 1));
    if (!d->entry || !d->name || !ps)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory reading kernel descriptors");
    if (nparams) {
        if (!LLVMIsAGlobalVariable(pr->global) || !LLVMGetInitializer(pr->global))
            return oxide__fail(OXIDE_ERROR_PARSE, "%s: unreadable parameter descriptors", rust);
        size_t cap = (size_t)(pr->addend + (int64_t)nparams * PD_SIZE_ALL);
        uint8_t *pb = calloc(1, cap);
        flat pf = {.bytes = pb, .cap = cap};
        oxide__flatten(td, LLVMGetInitializer(pr->global), 0, &pf);
        uint32_t first = 0;
        for (uint64_t i = 0; i < nparams; i++) {
            size_t o = (size_t)pr->addend + (size_t)i * PD_SIZE_ALL;
            oxide_iface_param *p = &ps[i];
            uint64_t nl = rd64(pb + o + PD_NAME_LEN);
            const char *pn = oxide__reloc_string(oxide__reloc_at(&pf, o + PD_NAME), (size_t)nl);
            p->name = pn ? oxide__strndup(&mod->arena, pn, (size_t)nl) : "arg";
            uint32_t kind = rd32(pb + o + PD_KIND);
            p->is_mutable = rd32(pb + o + PD_MUT) != 0;
            p->size = rd32(pb + o + PD_SIZE);
            p->align = rd32(pb + o + PD_ALIGN);
            oxide_scalar s = OXIDE_SCALAR_U8;
            bool known = scalar_of(sc, nsc, pb + o + PD_ELEM, &s);
            p->first_value = first;
            switch (kind) {
            case K_SCALAR:
                p->kind = OXIDE_PARAM_SCALAR;
                if (!known) {
                    free(pb);
                    return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: parameter %s has an unknown scalar type", rust,
                                       p->name);
                }
                p->scalar = s;
                first += 1;
                break;
            case K_SLICE:
                p->kind = OXIDE_PARAM_SLICE;
                p->scalar = known ? s : OXIDE_SCALAR_U8; /* a slice of structs: its bytes */
                p->size = p->align = 0;
                first += 2;
                break;
            case K_PTR:
                p->kind = OXIDE_PARAM_PTR;
                p->scalar = known ? s : OXIDE_SCALAR_U8;
                p->size = p->align = 0;
                first += 1;
                break;
            case K_TMA_DESC: /* a `&TensorMap` parameter: the descriptor itself, by value */
                p->kind = OXIDE_PARAM_TMA_DESC;
                p->scalar = OXIDE_SCALAR_U8;
                p->size = 128;
                p->align = 64;
                first += 1;
                break;
            default:
                p->kind = OXIDE_PARAM_BYTES;
                p->scalar = OXIDE_SCALAR_U8;
                if (p->align == 0 || p->align > 16)
                    p->align = p->align > 16 ? 16 : 1;
                first += 1;
                break;
            }
        }
        free(pb);
        d->nptx = first;
    }
    d->params = ps;
    return OXIDE_OK;
}

/* The ptx_kernel wrapper: oxide's interface ABI in front of the Rust entry. */
static oxide_status make_wrapper(LLVMModuleRef m, oxide_found_kernel *k, unsigned sm) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef fty = LLVMGlobalGetValueType(k->entry);
    unsigned n = LLVMCountParamTypes(fty);
    LLVMTypeRef pt[128];
    if (n > 128)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "kernel %s: too many parameters", k->desc.name);
    LLVMGetParamTypes(fty, pt);
    /* check the entry's shape against the descriptor */
    unsigned want = 0;
    for (uint32_t i = 0; i < k->desc.nparams; i++)
        want += k->desc.params[i].kind == OXIDE_PARAM_SLICE ? 2 : 1;
    if (want != n)
        return oxide__fail(OXIDE_ERROR_PARSE, "kernel %s: entry has %u parameters, its descriptor %u", k->desc.name, n,
                           want);
    LLVMValueRef clash = LLVMGetNamedFunction(m, k->desc.entry);
    if (clash)
        LLVMSetValueName2(clash, "oxide.renamed", 13);
    LLVMValueRef w = LLVMAddFunction(m, k->desc.entry, LLVMFunctionType(LLVMVoidTypeInContext(c), pt, n, 0));
    LLVMSetFunctionCallConv(w, LLVMPTXKernelCallConv);
    LLVMSetLinkage(w, LLVMExternalLinkage);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    for (uint32_t i = 0; i < k->desc.nparams; i++) {
        const oxide_iface_param *p = &k->desc.params[i];
        unsigned idx = p->first_value + 1;
        if (p->kind == OXIDE_PARAM_BYTES || p->kind == OXIDE_PARAM_TMA_DESC) {
            LLVMTypeRef bt = LLVMArrayType2(LLVMInt8TypeInContext(c), p->size);
            LLVMAddAttributeAtIndex(w, idx, LLVMCreateTypeAttribute(c, byval, bt));
            LLVMAddAttributeAtIndex(w, idx, LLVMCreateEnumAttribute(c, align, p->align));
            /* as lower.c: the Rust code gets the descriptor's address, and TMA must read it in
             * parameter space (cvta.param), which grid_constant allows; without it NVPTX would
             * copy the parameter to local memory, where TMA cannot read a descriptor */
            if (p->kind == OXIDE_PARAM_TMA_DESC && sm >= 90)
                LLVMAddAttributeAtIndex(w, idx, LLVMCreateStringAttribute(c, "nvvm.grid_constant", 18, "", 0));
        } else if (p->kind == OXIDE_PARAM_SLICE && p->is_mutable) {
            (void)noalias; /* DisjointSlice / &mut [T]: Rust already marks the uses */
        }
    }
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, w, "entry"));
    LLVMValueRef args[128];
    for (unsigned i = 0; i < n; i++)
        args[i] = LLVMGetParam(w, i);
    LLVMValueRef call = LLVMBuildCall2(b, fty, k->entry, args, n, "");
    LLVMSetInstructionCallConv(call, LLVMGetFunctionCallConv(k->entry));
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    char buf[32];
    const oxide_launch_contract *ct = &k->desc.contract;
    const char *bound = NULL;
    /* an exact block: .reqntid, which the driver enforces on every launch; PTX allows it or
     * .maxntid on an entry, not both, and it says more */
    if (ct->fields & OXIDE_CONTRACT_BLOCK)
        bound = "nvvm.reqntid", snprintf(buf, sizeof buf, "%u,%u,%u", ct->block[0], ct->block[1], ct->block[2]);
    else if (k->desc.launch_bounds[0])
        bound = "nvvm.maxntid", snprintf(buf, sizeof buf, "%u", k->desc.launch_bounds[0]);
    if (bound) {
        LLVMAddAttributeAtIndex(w, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, bound, 12, buf, (unsigned)strlen(buf)));
        if (k->desc.launch_bounds[1]) {
            snprintf(buf, sizeof buf, "%u", k->desc.launch_bounds[1]);
            LLVMAddAttributeAtIndex(w, LLVMAttributeFunctionIndex,
                                    LLVMCreateStringAttribute(c, "nvvm.minctasm", 13, buf, (unsigned)strlen(buf)));
        }
    }
    if (k->desc.cluster[0] * k->desc.cluster[1] * k->desc.cluster[2] > 1) {
        snprintf(buf, sizeof buf, "%u,%u,%u", k->desc.cluster[0], k->desc.cluster[1], k->desc.cluster[2]);
        LLVMAddAttributeAtIndex(w, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, "nvvm.cluster_dim", 16, buf, (unsigned)strlen(buf)));
    }
    return OXIDE_OK;
}

oxide_status oxide__find_kernels(oxide_module *mod, LLVMModuleRef m, oxide_found_kernel **out, size_t *count) {
    *out = NULL;
    *count = 0;
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(m);
    scalar_entry sc[64];
    int nsc = 0;
    oxide_status st = read_scalars(m, td, sc, &nsc);
    LLVMValueRef tagf = st ? NULL : LLVMGetNamedFunction(m, "__oxide_kernel_tag");
    oxide_found_kernel *ks = NULL;
    size_t nk = 0, cap = 0;
    for (LLVMUseRef u = tagf ? LLVMGetFirstUse(tagf) : NULL; u && !st; u = LLVMGetNextUse(u)) {
        LLVMValueRef call = LLVMGetUser(u);
        if (!LLVMIsACallInst(call))
            continue;
        if (nk == cap) {
            oxide_found_kernel *nks = realloc(ks, (cap = cap ? cap * 2 : 8) * sizeof *ks);
            if (!nks) {
                st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            ks = nks;
        }
        memset(&ks[nk], 0, sizeof ks[nk]);
        ks[nk].entry = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
        ks[nk].tag_call = call;
        st = read_desc(mod, td, sc, nsc, &ks[nk]);
        /* the same instance from two crates: keep one */
        bool dup = false;
        for (size_t j = 0; !st && j < nk; j++)
            dup |= !strcmp(ks[j].desc.entry, ks[nk].desc.entry);
        if (!st && !dup)
            nk++;
    }
    if (!st && nk == 0)
        st = oxide__fail(OXIDE_ERROR_NOT_FOUND,
                         "the bitcode holds no #[kernel] instance: a kernel is compiled only when the host program "
                         "launches it (through its #[cuda_module] launch method)");
    if (st) {
        free(ks);
        return st;
    }
    /* remove the tags (each entry keeps a call to nothing) */
    for (LLVMUseRef u = LLVMGetFirstUse(tagf); u;) {
        LLVMValueRef call = LLVMGetUser(u);
        u = LLVMGetNextUse(u);
        if (LLVMIsACallInst(call))
            LLVMInstructionEraseFromParent(call);
    }
    *out = ks;
    *count = nk;
    return OXIDE_OK;
}

oxide_status oxide__make_wrappers(LLVMModuleRef m, oxide_found_kernel *ks, size_t n, unsigned sm) {
    oxide_status st = OXIDE_OK;
    for (size_t i = 0; !st && i < n; i++)
        st = make_wrapper(m, &ks[i], sm);
    return st;
}
