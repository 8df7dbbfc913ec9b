/* Import of LLVM bitcode: the Rust front end's device path (docs/design.md section 7).
 *
 * rustc's normal host compile leaves one bitcode unit per crate. oxide__import_link links them,
 * finds the kernel instances (each `#[kernel]` entry calls __oxide_kernel_tag with a constant
 * descriptor, laid out in rustc-plugin/cuda-device/src/lib.rs, __private), keeps them and what
 * they call, retargets that code to nvptx64, replaces the host stubs of the device intrinsics
 * with their device bodies (lib/rust_intrinsics.inc, generated from lib/ops.def), turns panics
 * into a printed message and a trap, moves shared-memory statics to addrspace(3), wraps each
 * entry in a ptx_kernel function with oxide's interface ABI, and refuses what cannot run on a
 * GPU, naming the Rust function. emit.c then legalises, optimises and writes the PTX. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "llvm.h"
#include "rust_intrinsics.inc"

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"
#define NVPTX_DL "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"

/* ======================================================================================
 * Rust v0 symbol demangling (enough for messages and readable kernel names)
 * ====================================================================================== */

typedef struct dm {
    const char *s; /* after "_R" */
    size_t n, pos;
    char *out;
    size_t cap, len;
    int depth;
    bool bad;
} dm;

static void dm_put(dm *d, const char *s, size_t n) {
    for (size_t i = 0; i < n && d->len + 1 < d->cap; i++)
        d->out[d->len++] = s[i];
    d->out[d->len] = 0;
}
static void dm_puts(dm *d, const char *s) { dm_put(d, s, strlen(s)); }
static char dm_peek(dm *d) { return d->pos < d->n ? d->s[d->pos] : 0; }
static char dm_next(dm *d) { return d->pos < d->n ? d->s[d->pos++] : (d->bad = true, 0); }
static bool dm_eat(dm *d, char c) {
    if (dm_peek(d) == c) {
        d->pos++;
        return true;
    }
    return false;
}

static uint64_t dm_base62(dm *d) {
    if (dm_eat(d, '_'))
        return 0;
    uint64_t v = 0;
    for (;;) {
        char c = dm_next(d);
        if (c == '_')
            return v + 1;
        int x = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'z' ? c - 'a' + 10
                : c >= 'A' && c <= 'Z' ? c - 'A' + 36
                                       : -1;
        if (x < 0) {
            d->bad = true;
            return 0;
        }
        v = v * 62 + (uint64_t)x;
    }
}
static uint64_t dm_disamb(dm *d) { return dm_eat(d, 's') ? dm_base62(d) + 1 : 0; }

static void dm_ident(dm *d, const char **p, size_t *n) {
    bool puny = dm_eat(d, 'u');
    size_t len = 0;
    if (!(dm_peek(d) >= '0' && dm_peek(d) <= '9')) {
        d->bad = true;
        *p = "", *n = 0;
        return;
    }
    while (dm_peek(d) >= '0' && dm_peek(d) <= '9')
        len = len * 10 + (size_t)(dm_next(d) - '0');
    dm_eat(d, '_');
    if (d->pos + len > d->n) {
        d->bad = true;
        len = 0;
    }
    *p = d->s + d->pos, *n = len;
    d->pos += len;
    (void)puny; /* punycode identifiers are printed raw */
}

static void dm_path(dm *d, bool in_value);
static void dm_type(dm *d);

static bool dm_backref(dm *d, void (*fn)(dm *), bool in_value, void (*pfn)(dm *, bool)) {
    if (!dm_eat(d, 'B'))
        return false;
    uint64_t at = dm_base62(d);
    if (at >= d->pos || d->depth > 40) {
        d->bad = true;
        return true;
    }
    size_t save = d->pos;
    d->pos = (size_t)at;
    d->depth++;
    if (fn)
        fn(d);
    else
        pfn(d, in_value);
    d->depth--;
    d->pos = save;
    return true;
}

static void dm_const(dm *d) {
    if (dm_backref(d, dm_const, false, NULL))
        return;
    if (dm_eat(d, 'p')) {
        dm_puts(d, "_");
        return;
    }
    char t = dm_next(d); /* type of the constant */
    bool neg = dm_eat(d, 'n');
    uint64_t v = 0;
    while (dm_peek(d) && dm_peek(d) != '_') {
        char c = dm_next(d);
        v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    dm_eat(d, '_');
    char buf[32];
    if (t == 'b')
        snprintf(buf, sizeof buf, "%s", v ? "true" : "false");
    else
        snprintf(buf, sizeof buf, "%s%llu", neg ? "-" : "", (unsigned long long)v);
    dm_puts(d, buf);
}

static void dm_generic_args(dm *d) {
    bool first = true;
    while (!d->bad && !dm_eat(d, 'E')) {
        if (dm_eat(d, 'L')) { /* lifetimes are not printed */
            dm_base62(d);
            continue;
        }
        if (!first)
            dm_puts(d, ", ");
        first = false;
        if (dm_eat(d, 'K'))
            dm_const(d);
        else
            dm_type(d);
    }
}

static void dm_type(dm *d) {
    static const char *basic[26] = {"i8",    "bool", "char", "f64", "str",  "f32",  NULL,  "u8", "isize",
                                    "usize", NULL,   "i32",  "u32", "i128", "u128", "_",   NULL, NULL,
                                    "i16",   "u16",  "()",   "...", NULL,   "i64",  "u64", "!"};
    if (d->bad || d->depth > 60) {
        d->bad = true;
        return;
    }
    d->depth++;
    char c = dm_peek(d);
    if (c >= 'a' && c <= 'z' && basic[c - 'a']) {
        d->pos++;
        dm_puts(d, basic[c - 'a']);
    } else if (dm_eat(d, 'A')) {
        dm_puts(d, "[");
        dm_type(d);
        dm_puts(d, "; ");
        dm_const(d);
        dm_puts(d, "]");
    } else if (dm_eat(d, 'S')) {
        dm_puts(d, "[");
        dm_type(d);
        dm_puts(d, "]");
    } else if (dm_eat(d, 'T')) {
        dm_puts(d, "(");
        bool first = true;
        while (!d->bad && !dm_eat(d, 'E')) {
            if (!first)
                dm_puts(d, ", ");
            first = false;
            dm_type(d);
        }
        dm_puts(d, ")");
    } else if (c == 'R' || c == 'Q') {
        d->pos++;
        if (dm_eat(d, 'L'))
            dm_base62(d);
        dm_puts(d, c == 'R' ? "&" : "&mut ");
        dm_type(d);
    } else if (c == 'P' || c == 'O') {
        d->pos++;
        dm_puts(d, c == 'P' ? "*const " : "*mut ");
        dm_type(d);
    } else if (dm_eat(d, 'F')) {
        if (dm_eat(d, 'G'))
            dm_base62(d);
        if (dm_eat(d, 'U'))
            dm_puts(d, "unsafe ");
        if (dm_eat(d, 'K')) {
            if (!dm_eat(d, 'C')) {
                const char *p;
                size_t n;
                dm_ident(d, &p, &n);
            }
            dm_puts(d, "extern ");
        }
        dm_puts(d, "fn(");
        bool first = true;
        while (!d->bad && !dm_eat(d, 'E')) {
            if (!first)
                dm_puts(d, ", ");
            first = false;
            dm_type(d);
        }
        dm_puts(d, ") -> ");
        dm_type(d);
    } else if (dm_eat(d, 'D')) {
        dm_puts(d, "dyn ");
        if (dm_eat(d, 'G'))
            dm_base62(d);
        bool first = true;
        while (!d->bad && !dm_eat(d, 'E')) {
            if (!first)
                dm_puts(d, " + ");
            first = false;
            dm_path(d, false);
            while (dm_eat(d, 'p')) {
                const char *p;
                size_t n;
                dm_ident(d, &p, &n);
                dm_type(d);
            }
        }
        if (dm_eat(d, 'L'))
            dm_base62(d);
    } else if (!dm_backref(d, dm_type, false, NULL)) {
        dm_path(d, false);
    }
    d->depth--;
}

static void dm_path_v(dm *d, bool in_value) { dm_path(d, in_value); }

static void dm_path(dm *d, bool in_value) {
    if (d->bad || d->depth > 60) {
        d->bad = true;
        return;
    }
    d->depth++;
    char c = dm_next(d);
    const char *p;
    size_t n;
    switch (c) {
    case 'C':
        dm_disamb(d);
        dm_ident(d, &p, &n);
        dm_put(d, p, n);
        break;
    case 'M':
        dm_disamb(d);
        { /* the impl's path is not printed */
            size_t save = d->len;
            dm_path(d, false);
            d->len = save;
            d->out[d->len] = 0;
        }
        dm_puts(d, "<");
        dm_type(d);
        dm_puts(d, ">");
        break;
    case 'X':
        dm_disamb(d);
        {
            size_t save = d->len;
            dm_path(d, false);
            d->len = save;
            d->out[d->len] = 0;
        }
        /* fallthrough */
    case 'Y':
        dm_puts(d, "<");
        dm_type(d);
        dm_puts(d, " as ");
        dm_path(d, false);
        dm_puts(d, ">");
        break;
    case 'N': {
        char ns = dm_next(d);
        dm_path(d, in_value);
        uint64_t dis = dm_disamb(d);
        dm_ident(d, &p, &n);
        if (ns >= 'A' && ns <= 'Z') {
            char buf[48];
            dm_puts(d, "::{");
            dm_puts(d, ns == 'C' ? "closure" : ns == 'S' ? "shim" : "?");
            if (n) {
                dm_puts(d, ":");
                dm_put(d, p, n);
            }
            snprintf(buf, sizeof buf, "#%llu}", (unsigned long long)dis);
            dm_puts(d, buf);
        } else {
            dm_puts(d, "::");
            dm_put(d, p, n);
        }
        break;
    }
    case 'I':
        dm_path(d, in_value);
        dm_puts(d, in_value ? "::<" : "<");
        dm_generic_args(d);
        dm_puts(d, ">");
        break;
    case 'B':
        d->pos--;
        dm_backref(d, NULL, in_value, dm_path_v);
        break;
    default: d->bad = true;
    }
    d->depth--;
}

/* Demangle a v0 symbol into buf; a name that is not v0 is copied as it is. */
static const char *demangle(const char *sym, char *buf, size_t cap) {
    size_t n = strlen(sym);
    if (n > 2 && sym[0] == '_' && sym[1] == 'R') {
        dm d = {.s = sym + 2, .n = n - 2, .out = buf, .cap = cap};
        buf[0] = 0;
        if (dm_peek(&d) >= '0' && dm_peek(&d) <= '9')
            while (dm_peek(&d) >= '0' && dm_peek(&d) <= '9')
                d.pos++;
        dm_path(&d, true);
        if (!d.bad)
            return buf;
    }
    snprintf(buf, cap, "%s", sym);
    return buf;
}

static const char *fn_rust_name(LLVMValueRef f, char *buf, size_t cap) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    demangle(name, buf, cap);
    /* a kernel's generated entry is reported as the kernel */
    char *e = strstr(buf, "__oxide_kernel_entry_");
    if (e)
        memmove(e, e + 21, strlen(e + 21) + 1);
    return buf;
}

/* ======================================================================================
 * Reading constant data (the kernel descriptors)
 * ====================================================================================== */

typedef struct reloc {
    size_t off;
    LLVMValueRef global;
    int64_t addend;
} reloc;

typedef struct flat {
    uint8_t *bytes;
    size_t cap;
    reloc rel[64];
    int nrel;
    bool bad;
} flat;

static void put_le(flat *f, size_t off, uint64_t v, unsigned nbytes) {
    for (unsigned i = 0; i < nbytes; i++)
        if (off + i < f->cap)
            f->bytes[off + i] = (uint8_t)(v >> (8 * i));
}

static void flatten(LLVMTargetDataRef td, LLVMValueRef c, size_t off, flat *f) {
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
            flatten(td, LLVMGetAggregateElement(c, i), off + LLVMOffsetOfElement(td, ty, i), f);
        return;
    }
    if (k == LLVMArrayTypeKind || k == LLVMVectorTypeKind) {
        uint64_t n = k == LLVMArrayTypeKind ? LLVMGetArrayLength2(ty) : LLVMGetVectorSize(ty);
        uint64_t esz = LLVMABISizeOfType(td, LLVMGetElementType(ty));
        for (uint64_t i = 0; i < n && off + i * esz < f->cap; i++)
            flatten(td, LLVMGetAggregateElement(c, (unsigned)i), off + i * esz, f);
        return;
    }
    f->bad = true;
}

static uint64_t rd64(const uint8_t *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}
static uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static const reloc *reloc_at(const flat *f, size_t off) {
    for (int i = 0; i < f->nrel; i++)
        if (f->rel[i].off == off)
            return &f->rel[i];
    return NULL;
}

/* The bytes of a string constant a relocation points at (NULL if it is not one). */
static const char *reloc_string(const reloc *r, size_t len) {
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

/* Layouts of cuda_device::__private (x86_64 and nvptx64 agree). */
enum {
    KD_TID = 0,
    KD_NAME = 16,
    KD_NAME_LEN = 24,
    KD_GENERIC = 32,
    KD_NPARAMS = 36,
    KD_PARAMS = 40,
    KD_PARAMS_LEN = 48,
    KD_LB = 56,
    KD_CLUSTER = 64,
    KD_DYN_SMEM = 76,
    KD_SIZE = 80
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

/* ======================================================================================
 * Public entry: store a unit
 * ====================================================================================== */

oxide_status oxide_module_import_bitcode(oxide_module *mod, const void *data, size_t size, const char *unit_name) {
    if (!mod || !data || !size)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_import_bitcode: NULL or empty argument");
    const uint8_t *b = data;
    const char *uname = unit_name ? unit_name : "bitcode";
    bool magic = size >= 4 && ((b[0] == 'B' && b[1] == 'C' && b[2] == 0xC0 && b[3] == 0xDE) ||
                               (b[0] == 0xDE && b[1] == 0xC0 && b[2] == 0x17 && b[3] == 0x0B));
    if (!magic)
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: not LLVM bitcode (no 'BC' magic)", uname);
    /* Validate cheaply: a lazy parse reads the header and the identification block, and fails
     * on bitcode from a newer LLVM. */
    LLVMContextRef c = LLVMContextCreate();
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(data, size, uname, 0);
    LLVMModuleRef m = NULL;
    LLVMBool bad = LLVMGetBitcodeModuleInContext2(c, mb, &m);
    if (bad) {
        LLVMDisposeMemoryBuffer(mb);
        LLVMContextDispose(c);
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "%s: LLVM %d could not read this bitcode; it is malformed or from a newer LLVM "
                           "(rustc's LLVM major must be <= %d: check `rustc -vV`, or run `cargo oxide doctor`)",
                           uname, 22, 22);
    }
    LLVMDisposeModule(m); /* owns mb */
    LLVMContextDispose(c);
    oxide_bitcode_unit *u = oxide__alloc(&mod->arena, sizeof *u);
    if (!u || !(u->data = oxide__alloc(&mod->arena, size)) || !(u->name = oxide__strdup(&mod->arena, uname)) ||
        !oxide__vec_push(&mod->arena, &mod->bitcode, u))
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory importing bitcode");
    memcpy(u->data, data, size);
    u->size = size;
    return OXIDE_OK;
}

/* ======================================================================================
 * Link
 * ====================================================================================== */

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static char g_link_err[512];
static void diag_handler(LLVMDiagnosticInfoRef di, void *user) {
    (void)user;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    char *msg = LLVMGetDiagInfoDescription(di);
    if (!g_link_err[0])
        snprintf(g_link_err, sizeof g_link_err, "%s", msg);
    LLVMDisposeMessage(msg);
}

/* A unit read from host bitcode, given the GPU's triple and layout, without its module-level
 * asm and the host-only globals that would clash between crates. */
static void retarget_unit(LLVMModuleRef m, LLVMModuleRef dst) {
    LLVMSetTarget(m, NVPTX_TRIPLE);
    LLVMSetDataLayout(m, LLVMGetDataLayoutStr(dst));
    LLVMSetModuleInlineAsm2(m, "", 0);
    const char *drop[] = {"llvm.used", "llvm.compiler.used", "llvm.global_ctors", "llvm.global_dtors"};
    for (size_t d = 0; d < 4; d++) {
        LLVMValueRef g = LLVMGetNamedGlobal(m, drop[d]);
        if (g)
            LLVMDeleteGlobal(g);
    }
}
static oxide_status link_units(oxide_module *mod, LLVMModuleRef dst) {
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    LLVMDiagnosticHandler old = LLVMContextGetDiagnosticHandler(ctx);
    void *old_ctx = LLVMContextGetDiagnosticContext(ctx);
    LLVMContextSetDiagnosticHandler(ctx, diag_handler, NULL);
    oxide_status st = OXIDE_OK;
    for (uint32_t i = 0; i < mod->bitcode.len && !st; i++) {
        oxide_bitcode_unit *u = mod->bitcode.items[i];
        if (starts(u->name, "library:"))
            continue; /* linked on demand (link_libraries) */
        LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, u->name, 0);
        LLVMModuleRef m = NULL;
        g_link_err[0] = 0;
        if (LLVMParseBitcodeInContext2(ctx, mb, &m)) {
            LLVMDisposeMemoryBuffer(mb);
            st = oxide__fail(OXIDE_ERROR_PARSE, "%s: could not read the bitcode: %s", u->name,
                             g_link_err[0] ? g_link_err : "malformed");
            break;
        }
        LLVMDisposeMemoryBuffer(mb);
        retarget_unit(m, dst);
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
            st = oxide__fail(OXIDE_ERROR_PARSE, "linking %s failed: %s", u->name, g_link_err[0] ? g_link_err : "?");
    }
    LLVMContextSetDiagnosticHandler(ctx, old, old_ctx);
    return st;
}

/* ======================================================================================
 * Kernels
 * ====================================================================================== */

typedef struct found {
    LLVMValueRef entry; /* the Rust entry instance */
    LLVMValueRef tag_call;
    oxide_kernel_desc desc;
} found;

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
    flatten(td, init, 0, &f);
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

/* Read the descriptor of one tagged entry into k->desc (strings and arrays in mod->arena). */
static oxide_status read_desc(oxide_module *mod, LLVMTargetDataRef td, const scalar_entry *sc, int nsc, found *k) {
    char nb[512];
    const char *rust = fn_rust_name(k->entry, nb, sizeof nb);
    LLVMValueRef arg = LLVMGetOperand(k->tag_call, 0);
    if (!LLVMIsAGlobalVariable(arg) || !LLVMGetInitializer(arg))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: the kernel descriptor is not a constant", rust);
    uint8_t kb[KD_SIZE] = {0};
    flat f = {.bytes = kb, .cap = sizeof kb};
    flatten(td, LLVMGetInitializer(arg), 0, &f);
    uint64_t name_len = rd64(kb + KD_NAME_LEN), nparams = rd64(kb + KD_PARAMS_LEN);
    const char *name = reloc_string(reloc_at(&f, KD_NAME), (size_t)name_len);
    const reloc *pr = reloc_at(&f, KD_PARAMS);
    if (f.bad || !name || name_len > 200 || nparams > 64 || (nparams && !pr))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: unreadable kernel descriptor", rust);
    oxide_kernel_desc *d = &k->desc;
    bool generic = rd32(kb + KD_GENERIC) != 0;
    uint64_t tag = rd64(kb + KD_TID) ^ rd64(kb + KD_TID + 8);
    char ebuf[256];
    if (generic)
        snprintf(ebuf, sizeof ebuf, "%.*s_%016llx", (int)name_len, name, (unsigned long long)tag);
    else
        snprintf(ebuf, sizeof ebuf, "%.*s", (int)name_len, name);
    d->entry = oxide__strdup(&mod->arena, ebuf);
    /* readable name: for a generic instance, the demangled generic arguments of its entry */
    if (generic) {
        char raw[512];
        size_t rl;
        demangle(LLVMGetValueName2(k->entry, &rl), raw, sizeof raw);
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
        flatten(td, LLVMGetInitializer(pr->global), 0, &pf);
        uint32_t first = 0;
        for (uint64_t i = 0; i < nparams; i++) {
            size_t o = (size_t)pr->addend + (size_t)i * PD_SIZE_ALL;
            oxide_iface_param *p = &ps[i];
            uint64_t nl = rd64(pb + o + PD_NAME_LEN);
            const char *pn = reloc_string(reloc_at(&pf, o + PD_NAME), (size_t)nl);
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
    }
    d->params = ps;
    return OXIDE_OK;
}

/* The ptx_kernel wrapper: oxide's interface ABI in front of the Rust entry. */
static oxide_status make_wrapper(LLVMModuleRef m, found *k, unsigned sm) {
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
    LLVMSetFunctionCallConv(w, 71 /* ptx_kernel */);
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
    if (k->desc.launch_bounds[0]) {
        snprintf(buf, sizeof buf, "%u", k->desc.launch_bounds[0]);
        LLVMAddAttributeAtIndex(w, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, "nvvm.maxntid", 12, buf, (unsigned)strlen(buf)));
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

/* ======================================================================================
 * Retarget and clean
 * ====================================================================================== */

static void strip_host_attrs(LLVMValueRef f) {
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
static const char *panic_reason(const char *rust, LLVMValueRef f) {
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
            flatten(td, LLVMGetInitializer(v), 0, &fl);
            const uint8_t *lb = lbuf + base;
            uint64_t flen = rd64(lb + 8);
            const char *fs = reloc_string(reloc_at(&fl, (size_t)base), (size_t)flen);
            if (fs && flen < sizeof file) {
                snprintf(file, sizeof file, "%.*s", (int)flen, fs);
                line = rd32(lb + 16);
                col = rd32(lb + 20);
                break;
            }
        }
        char msg[512];
        if (file[0])
            snprintf(msg, sizeof msg, "panicked at %s:%u:%u: %s (block %%d, thread %%d)\n", file, line, col, reason);
        else /* an optimised build merged the panic paths: the location is a run-time value */
            snprintf(msg, sizeof msg, "panicked: %s (block %%d, thread %%d; build without --release for file:line)\n",
                     reason);
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
    strip_host_attrs(f);
}

/* Is this declaration one the device code may keep (intrinsics, libdevice, printf, libm)? */
static bool is_known_external(const char *name);

/* Replace a function's body by a declaration (keeps the name and type). */
static LLVMValueRef make_declaration(LLVMModuleRef m, LLVMValueRef f) {
    size_t nl;
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", LLVMGetValueName2(f, &nl));
    LLVMSetValueName2(f, "oxide.dropped", 13);
    LLVMValueRef d = LLVMAddFunction(m, keep, LLVMGlobalGetValueType(f));
    LLVMReplaceAllUsesWith(f, d);
    LLVMDeleteFunction(f);
    return d;
}

/* Library units (the standard library's core, from its rlib): link them only when the device
 * code calls functions the crates' bitcode does not define; panics stay declarations (they trap). */
static oxide_status link_libraries(oxide_module *mod, LLVMModuleRef dst, bool *linked) {
    *linked = false;
    bool need = false;
    for (LLVMValueRef f = LLVMGetFirstFunction(dst); f && !need; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (LLVMIsDeclaration(f) && LLVMGetFirstUse(f) && !is_known_external(name) && starts(name, "_R")) {
            char rb[512];
            need = !panic_reason(demangle(name, rb, sizeof rb), f);
        }
    }
    if (!need)
        return OXIDE_OK;
    LLVMContextRef ctx = LLVMGetModuleContext(dst);
    for (uint32_t i = 0; i < mod->bitcode.len; i++) {
        oxide_bitcode_unit *u = mod->bitcode.items[i];
        if (!starts(u->name, "library:"))
            continue;
        /* only a library whose crate name (v0: <length><name>) a needed symbol mentions */
        char key[128];
        snprintf(key, sizeof key, "%zu%s", strlen(u->name + 8), u->name + 8);
        bool wanted = false;
        for (LLVMValueRef f = LLVMGetFirstFunction(dst); f && !wanted; f = LLVMGetNextFunction(f)) {
            size_t nl;
            const char *name = LLVMGetValueName2(f, &nl);
            if (LLVMIsDeclaration(f) && LLVMGetFirstUse(f) && !is_known_external(name) && strstr(name, key)) {
                char rb[512];
                wanted = !panic_reason(demangle(name, rb, sizeof rb), f);
            }
        }
        if (!wanted)
            continue;
        LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)u->data, u->size, u->name, 0);
        LLVMModuleRef lib = NULL;
        if (LLVMParseBitcodeInContext2(ctx, mb, &lib)) {
            LLVMDisposeMemoryBuffer(mb);
            continue; /* an unreadable library only means fewer functions available */
        }
        LLVMDisposeMemoryBuffer(mb);
        retarget_unit(lib, dst);
        char rb[512];
        for (LLVMValueRef f = LLVMGetFirstFunction(lib), next; f; f = next) {
            next = LLVMGetNextFunction(f);
            if (LLVMIsDeclaration(f))
                continue;
            size_t nl;
            const char *name = LLVMGetValueName2(f, &nl);
            if (panic_reason(demangle(name, rb, sizeof rb), f)) {
                LLVMValueRef d = make_declaration(lib, f);
                if (next == d)
                    next = LLVMGetNextFunction(d);
                continue;
            }
            LLVMValueRef mine = LLVMGetNamedFunction(dst, name);
            if (mine && !LLVMIsDeclaration(mine)) { /* the crates' own copy wins */
                LLVMValueRef d = make_declaration(lib, f);
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
            return oxide__fail(OXIDE_ERROR_PARSE, "linking %s failed", u->name);
        *linked = true;
    }
    return OXIDE_OK;
}

static const char *const libm_names[] = {
    "sinf",  "cosf",  "tanf",   "expf",   "exp2f",  "logf",   "log2f",  "log10f", "powf",   "tanhf", "sinhf", "coshf",
    "asinf", "acosf", "atanf",  "atan2f", "cbrtf",  "hypotf", "expm1f", "log1pf", "erff",   "erfcf", "fmodf", "sin",
    "cos",   "tan",   "exp",    "exp2",   "log",    "log2",   "log10",  "pow",    "tanh",   "sinh",  "cosh",  "asin",
    "acos",  "atan",  "atan2",  "cbrt",   "hypot",  "expm1",  "log1p",  "erf",    "erfc",   "fmod",  "fmaf",  "fma",
    "fdimf", "fdim",  "asinhf", "acoshf", "atanhf", "asinh",  "acosh",  "atanh",  "ldexpf", "ldexp", NULL};

static bool is_known_external(const char *name) {
    if (starts(name, "llvm.") || starts(name, "__oxide_") || starts(name, "__nv_") || !strcmp(name, "vprintf"))
        return true;
    for (int i = 0; libm_names[i]; i++)
        if (!strcmp(name, libm_names[i]))
            return true;
    return false;
}

static oxide_status check_and_fix_calls(LLVMModuleRef m, LLVMTargetDataRef td) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0);
    LLVMTypeRef vpt[2] = {ptr, ptr};
    LLVMTypeRef vprintf_ty = LLVMFunctionType(LLVMInt32TypeInContext(c), vpt, 2, 0);
    LLVMValueRef vprintf_fn = LLVMGetNamedFunction(m, "vprintf");
    if (!vprintf_fn)
        vprintf_fn = LLVMAddFunction(m, "vprintf", vprintf_ty);
    char rb[512], cb[512];
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        if (!LLVMIsDeclaration(f) || !LLVMGetFirstUse(f))
            continue;
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (starts(name, "llvm.") || starts(name, "__oxide_") || starts(name, "__nv_") || !strcmp(name, "vprintf")) {
            if (starts(name, "llvm.x86.") || starts(name, "llvm.aarch64.")) {
                LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(f));
                LLVMValueRef caller =
                    LLVMIsAInstruction(user) ? LLVMGetBasicBlockParent(LLVMGetInstructionParent(user)) : NULL;
                return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                                   "%s: uses the x86-specific intrinsic %s (std::arch / SIMD), which has no GPU form",
                                   caller ? fn_rust_name(caller, cb, sizeof cb) : "a kernel", name);
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
        const char *rust = demangle(name, rb, sizeof rb);
        const char *reason = panic_reason(rust, f);
        if (reason) {
            trap_panics(m, td, f, reason, vprintf_fn, vprintf_ty);
            continue;
        }
        LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(f));
        LLVMValueRef caller = LLVMIsAInstruction(user) ? LLVMGetBasicBlockParent(LLVMGetInstructionParent(user)) : NULL;
        const char *why = "host-only code (std, libc or a function whose body is not in the bitcode)";
        if (strstr(rust, "alloc::") || !strcmp(name, "malloc") || strstr(name, "__rust_alloc") ||
            strstr(name, "__rust_dealloc") || strstr(name, "__rust_realloc") || strstr(rust, "exchange_malloc"))
            why = "heap allocation (Box, Vec, String ...) is not available in kernels";
        else if (strstr(rust, "std::") || strstr(rust, "core::fmt"))
            why = "the Rust standard library's host code (I/O, formatting, threads ...) cannot run on the GPU";
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: calls %s: %s",
                           caller ? fn_rust_name(caller, cb, sizeof cb) : "a kernel", rust, why);
    }
    /* inline asm written by the user */
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (starts(name, "__oxide_"))
            continue;
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
                if (LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i)))
                    return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                                       "%s: uses inline assembly (asm!), which is written for the CPU; use the "
                                       "cuda_device intrinsics instead",
                                       fn_rust_name(f, cb, sizeof cb));
    }
    return OXIDE_OK;
}

/* Replace the body of each host stub __oxide_* with a declaration (the device body is linked
 * later); returns false if an entry point is malformed. */
static void drop_stub_bodies(LLVMModuleRef m) {
    /* a host optimiser may have merged identical stubs into aliases */
    for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m), next; a; a = next) {
        next = LLVMGetNextGlobalAlias(a);
        size_t nl;
        const char *name = LLVMGetValueName2(a, &nl);
        if (!starts(name, "__oxide_"))
            continue;
        char keep[256];
        snprintf(keep, sizeof keep, "%s", name);
        LLVMSetValueName2(a, "oxide.alias", 11);
        LLVMValueRef d = LLVMAddFunction(m, keep, LLVMGlobalGetValueType(a));
        LLVMReplaceAllUsesWith(a, d);
        LLVMDeleteGlobal(a);
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
        next = LLVMGetNextFunction(f);
        size_t nl;
        const char *name = LLVMGetValueName2(f, &nl);
        if (!starts(name, "__oxide_") || starts(name, "__oxide_kernel_entry_") || LLVMIsDeclaration(f))
            continue;
        char keep[256];
        snprintf(keep, sizeof keep, "%s", name);
        LLVMSetValueName2(f, "oxide.stub", 10);
        LLVMValueRef d = LLVMAddFunction(m, keep, LLVMGlobalGetValueType(f));
        LLVMReplaceAllUsesWith(f, d);
        if (next == d)
            next = LLVMGetNextFunction(d);
        LLVMDeleteFunction(f);
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
        if (!starts(bol, "define "))
            continue; /* a call inside another body */
        const char *end = strstr(d, "\n}\n");
        if (!end)
            return NULL;
        *len = (size_t)(end + 3 - bol);
        return bol;
    }
    return NULL;
}

static void mark_convergent_stubs(LLVMModuleRef m) {
    LLVMContextRef c = LLVMGetModuleContext(m);
    unsigned conv = LLVMGetEnumAttributeKindForName("convergent", 10);
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t nl, len;
        const char *name = LLVMGetValueName2(f, &nl);
        if (!starts(name, "__oxide_") || !LLVMIsDeclaration(f) || nl > 200)
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
static oxide_status link_intrinsics(LLVMModuleRef m) {
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
        if (!starts(name, "__oxide_") || !LLVMIsDeclaration(f) || !LLVMGetFirstUse(f) || nl > 200)
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
    LLVMSetTarget(im, NVPTX_TRIPLE);
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
        if (starts(name, "__oxide_") && !LLVMIsDeclaration(f))
            LLVMSetLinkage(f, LLVMInternalLinkage);
    }
    return OXIDE_OK;
}

/* Statics the #[kernel] macro marked: .oxide.shared -> addrspace(3), .oxide.const -> (4). */
static void move_statics(LLVMModuleRef m) {
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

static oxide_status run_passes(LLVMModuleRef m, const char *pipeline) {
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

oxide_status oxide__import_link(oxide_module *mod, LLVMModuleRef dst, const oxide_options *opts,
                                oxide_kernel_desc **kernels, size_t *nkernels) {
    if (!mod || !dst || !kernels || !nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide__import_link: NULL argument");
    if (!LLVMGetDataLayoutStr(dst)[0])
        LLVMSetDataLayout(dst, NVPTX_DL);
    LLVMSetTarget(dst, NVPTX_TRIPLE);
    /* what dst already defines (oxide IR kernels) must survive the internalisation below */
    size_t nold = 0, capold = 16;
    LLVMValueRef *old = malloc(capold * sizeof *old);
    for (LLVMValueRef f = LLVMGetFirstFunction(dst); f && old; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage) {
            if (nold == capold)
                old = realloc(old, (capold *= 2) * sizeof *old);
            if (old)
                old[nold++] = f;
        }
    oxide_status st = link_units(mod, dst);
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(dst);
    scalar_entry sc[64];
    int nsc = 0;
    found *ks = NULL;
    size_t nk = 0;
    if (!st)
        st = read_scalars(dst, td, sc, &nsc);
    /* the tagged entries */
    LLVMValueRef tagf = st ? NULL : LLVMGetNamedFunction(dst, "__oxide_kernel_tag");
    if (!st && tagf) {
        size_t cap = 0;
        for (LLVMUseRef u = LLVMGetFirstUse(tagf); u && !st; u = LLVMGetNextUse(u)) {
            LLVMValueRef call = LLVMGetUser(u);
            if (!LLVMIsACallInst(call))
                continue;
            LLVMValueRef entry = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
            if (nk == cap) {
                found *nks = realloc(ks, (cap = cap ? cap * 2 : 8) * sizeof *ks);
                if (!nks) {
                    st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
                    break;
                }
                ks = nks;
            }
            memset(&ks[nk], 0, sizeof ks[nk]);
            ks[nk].entry = entry;
            ks[nk].tag_call = call;
            st = read_desc(mod, td, sc, nsc, &ks[nk]);
            if (st)
                break;
            /* the same instance from two crates: keep one */
            bool dup = false;
            for (size_t j = 0; j < nk; j++)
                dup |= !strcmp(ks[j].desc.entry, ks[nk].desc.entry);
            if (!dup)
                nk++;
        }
    }
    if (!st && nk == 0)
        st = oxide__fail(OXIDE_ERROR_NOT_FOUND,
                         "the bitcode holds no #[kernel] instance: a kernel is compiled only when the host program "
                         "launches it (through its #[cuda_module] launch method)");
    /* remove the tags (each entry keeps a call to nothing) */
    if (!st) {
        for (LLVMUseRef u = LLVMGetFirstUse(tagf); u;) {
            LLVMValueRef call = LLVMGetUser(u);
            u = LLVMGetNextUse(u);
            if (LLVMIsACallInst(call))
                LLVMInstructionEraseFromParent(call);
        }
    }
    for (size_t i = 0; !st && i < nk; i++)
        st = make_wrapper(dst, &ks[i], opts ? opts->sm : 90); /* NULL opts: the default, sm_90a */
    if (!st) {
        drop_stub_bodies(dst);
        mark_convergent_stubs(dst);
        /* internalise everything but the kernels (and what dst defined before) */
        for (LLVMValueRef f = LLVMGetFirstFunction(dst); f; f = LLVMGetNextFunction(f)) {
            if (LLVMIsDeclaration(f))
                continue;
            bool keep = LLVMGetFunctionCallConv(f) == 71;
            for (size_t j = 0; j < nold && !keep; j++)
                keep = old[j] == f;
            if (!keep)
                LLVMSetLinkage(f, LLVMInternalLinkage);
            strip_host_attrs(f);
        }
        for (LLVMValueRef g = LLVMGetFirstGlobal(dst); g; g = LLVMGetNextGlobal(g))
            if (LLVMGetInitializer(g) && LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == 0)
                LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetModuleInlineAsm2(dst, "", 0);
        /* keep what the kernels reach; invokes become calls, landing pads go */
        st = run_passes(dst, "globaldce,function(lower-invoke,simplifycfg),globaldce");
    }
    if (!st) {
        bool linked = false;
        st = link_libraries(mod, dst, &linked);
        if (!st && linked) {
            for (LLVMValueRef f = LLVMGetFirstFunction(dst); f; f = LLVMGetNextFunction(f)) {
                if (LLVMIsDeclaration(f))
                    continue;
                if (LLVMGetFunctionCallConv(f) != 71)
                    LLVMSetLinkage(f, LLVMInternalLinkage);
                strip_host_attrs(f);
            }
            for (LLVMValueRef g = LLVMGetFirstGlobal(dst); g; g = LLVMGetNextGlobal(g))
                if (LLVMGetInitializer(g) && LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == 0)
                    LLVMSetLinkage(g, LLVMInternalLinkage);
            st = run_passes(dst, "globaldce,function(lower-invoke,simplifycfg),globaldce");
        }
    }
    if (!st) {
        for (LLVMValueRef f = LLVMGetFirstFunction(dst); f; f = LLVMGetNextFunction(f))
            if (LLVMHasPersonalityFn(f))
                LLVMSetPersonalityFn(f, NULL);
        st = check_and_fix_calls(dst, td);
    }
    /* the host optimiser may have duplicated intrinsic calls (barriers) into both arms of a
     * branch; sink them back while they are still plain calls */
    if (!st)
        st = run_passes(dst, "function(simplifycfg<sink-common-insts>)");
    if (!st)
        st = link_intrinsics(dst);
    if (!st) {
        move_statics(dst);
        if (!opts || !opts->line_info)
            LLVMStripModuleDebugInfo(dst);
        st = run_passes(dst, "globaldce");
    }
    if (!st) {
        oxide_kernel_desc *nkd = realloc(*kernels, (*nkernels + nk) * sizeof **kernels);
        if (!nkd)
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        else {
            for (size_t i = 0; i < nk; i++)
                nkd[*nkernels + i] = ks[i].desc;
            *kernels = nkd;
            *nkernels += nk;
        }
    }
    free(ks);
    free(old);
    return st;
}
