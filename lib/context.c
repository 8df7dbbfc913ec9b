/* Contexts, options, types and the expanded op table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ---- the op table ---- */

const oxide_op_info oxide_ops[OXIDE_OP_COUNT_] = {
#define OP(ID, NAME, OPERANDS, RESULT, ATTRS, SM, LOWER, TIER, TMPL)                                                   \
    [OXIDE_OP_##ID] = {NAME, OPERANDS, RESULT[0], ATTRS, SM, LOWER, TIER, TMPL},
#include "ops.def"
#undef OP
};

/* The public enum is generated from ops.def (tools/gen.py); prove it matches row by row. */
enum {
#define OP(ID, NAME, OPERANDS, RESULT, ATTRS, SM, LOWER, TIER, TMPL) ROW_##ID,
#include "ops.def"
#undef OP
    ROW_COUNT_
};
#define OP(ID, NAME, OPERANDS, RESULT, ATTRS, SM, LOWER, TIER, TMPL)                                                   \
    _Static_assert(OXIDE_OP_##ID == (int)ROW_##ID, "include/oxide.h op enum is stale: run tools/gen.py");
#include "ops.def"
#undef OP
_Static_assert(OXIDE_OP_COUNT_ == (int)ROW_COUNT_, "include/oxide.h op enum is stale: run tools/gen.py");

const char *oxide_op_name(oxide_op op) { return (unsigned)op < OXIDE_OP_COUNT_ ? oxide_ops[op].name : NULL; }

oxide_op oxide__op_by_name(const char *name, size_t len) {
    for (unsigned i = 0; i < OXIDE_OP_COUNT_; i++)
        if (strlen(oxide_ops[i].name) == len && !memcmp(oxide_ops[i].name, name, len))
            return (oxide_op)i;
    return OXIDE_OP_COUNT_;
}

const char *const oxide__scope_names[4] = {"cta", "cluster", "gpu", "sys"};
const char *const oxide__order_names[5] = {"relaxed", "acquire", "release", "acq_rel", "seq_cst"};
const char *const oxide__pred_names[24] = {"eq",  "ne",  "slt", "sle", "sgt",  "sge",  "ult",  "ule",
                                           "ugt", "uge", "oeq", "one", "olt",  "ole",  "ogt",  "oge",
                                           "ord", "uno", "ueq", "une", "fult", "fule", "fugt", "fuge"};

/* ---- context ---- */

static const char *const scalar_type_names[] = {"void", "i1",  "i8",   "i16", "i32", "i64",
                                                "i128", "f16", "bf16", "f32", "f64"};

oxide_status oxide_context_create(oxide_context **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_context_create: out is NULL");
    oxide_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_context_create: out of memory");
    for (int k = OXIDE_TYPE_VOID; k <= OXIDE_TYPE_F64; k++) {
        oxide_type *t = oxide__alloc(&ctx->arena, sizeof *t);
        if (!t) {
            oxide_context_destroy(ctx);
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_context_create: out of memory");
        }
        t->kind = (oxide_type_kind)k;
        t->name = scalar_type_names[k];
        ctx->scalars[k] = t;
    }
    *out = ctx;
    return OXIDE_OK;
}

void oxide_context_destroy(oxide_context *ctx) {
    if (!ctx)
        return;
    while (ctx->modules)
        oxide_module_destroy(ctx->modules);
    oxide__targets_free(ctx->targets);
    oxide__arena_free(&ctx->arena);
    free(ctx);
}

/* ---- options ---- */

static const struct {
    const char *name;
    unsigned sm;
    bool arch_specific;
} targets[] = {{"sm_80", 80, false}, {"sm_86", 86, false}, {"sm_89", 89, false},
               {"sm_90", 90, false}, {"sm_90a", 90, true}, {"sm_100a", 100, true}};

void oxide__options_default(oxide_options *o) {
    memset(o, 0, sizeof *o);
    strcpy(o->target, "sm_90a");
    o->sm = 90;
    o->arch_specific = true;
    o->opt_level = 3;
    o->tile_variants = OXIDE_TILE_VARIANTS_ALL;
}

oxide_status oxide_options_create(oxide_options **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_create: out is NULL");
    oxide_options *o = malloc(sizeof *o);
    if (!o)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_options_create: out of memory");
    oxide__options_default(o);
    *out = o;
    return OXIDE_OK;
}

void oxide_options_destroy(oxide_options *opts) { free(opts); }

oxide_status oxide_options_set_target(oxide_options *opts, const char *sm) {
    if (!opts || !sm)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_target: %s is NULL", !opts ? "opts" : "sm");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i].name, sm)) {
            strcpy(opts->target, targets[i].name);
            opts->sm = targets[i].sm;
            opts->arch_specific = targets[i].arch_specific;
            return OXIDE_OK;
        }
    return oxide__fail(
        OXIDE_ERROR_INVALID_ARGUMENT,
        "oxide_options_set_target: unknown target '%.32s': use one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a", sm);
}

oxide_status oxide_options_set_ptx_version(oxide_options *opts, int major, int minor) {
    if (!opts)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_ptx_version: opts is NULL");
    bool choose = major == 0 && minor == 0;
    /* LLVM 22's NVPTX backend emits PTX ISA 6.0 up to 9.0. */
    if (!choose && (minor < 0 || minor > 9 || major * 10 + minor < 60 || major * 10 + minor > 90))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_options_set_ptx_version: PTX ISA version %d.%d is outside what oxide can emit "
                           "(6.0 to 9.0, or 0.0 to let oxide choose)",
                           major, minor);
    opts->ptx_major = major;
    opts->ptx_minor = minor;
    return OXIDE_OK;
}

oxide_status oxide_options_set_opt_level(oxide_options *opts, int level) {
    if (!opts)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_opt_level: opts is NULL");
    if (level < 0 || level > 3)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_opt_level: level must be 0..3, got %d",
                           level);
    opts->opt_level = level;
    return OXIDE_OK;
}

oxide_status oxide_options_set_fast_math(oxide_options *opts, int enable) {
    if (!opts)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_fast_math: opts is NULL");
    opts->fast_math = enable != 0;
    return OXIDE_OK;
}

oxide_status oxide_options_set_line_info(oxide_options *opts, int enable) {
    if (!opts)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_line_info: opts is NULL");
    opts->line_info = enable != 0;
    return OXIDE_OK;
}

oxide_status oxide_options_set_tile_variants(oxide_options *opts, int variants) {
    if (!opts)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_options_set_tile_variants: opts is NULL");
    if (variants < OXIDE_TILE_VARIANTS_PLAIN || variants > OXIDE_TILE_VARIANTS_ALL)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_options_set_tile_variants: %d is none of OXIDE_TILE_VARIANTS_PLAIN (1), _TMA (2) "
                           "and _ALL (3)",
                           variants);
    opts->tile_variants = variants;
    return OXIDE_OK;
}

const char *oxide_options_get_target(const oxide_options *opts) { return opts ? opts->target : NULL; }

/* ---- types ---- */

static oxide_status intern(oxide_context *ctx, const oxide_type *proto, oxide_type **out) {
    for (oxide_type *t = ctx->interned; t; t = t->next_interned) {
        if (t->kind != proto->kind || t->addrspace != proto->addrspace || t->count != proto->count ||
            t->elem != proto->elem || t->nfields != proto->nfields || !oxide__tile_shape_eq(t, proto))
            continue;
        if (t->nfields && memcmp(t->fields, proto->fields, t->nfields * sizeof *t->fields))
            continue;
        *out = t;
        return OXIDE_OK;
    }
    oxide_type *t = oxide__alloc(&ctx->arena, sizeof *t);
    if (!t)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory creating a type");
    *t = *proto;
    if (proto->nfields) {
        t->fields = oxide__alloc(&ctx->arena, proto->nfields * sizeof *t->fields);
        if (!t->fields)
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory creating a type");
        memcpy(t->fields, proto->fields, proto->nfields * sizeof *t->fields);
    }
    /* Sizes and alignments once per type, from the fields' (already computed): recomputing
     * them through every use is exponential in the nesting depth. */
    if (t->kind == OXIDE_TYPE_STRUCT) {
        uint64_t off = 0, align = 1;
        for (uint32_t i = 0; i < t->nfields; i++) {
            uint64_t a = oxide__type_align(t->fields[i]);
            off = (off + a - 1) / a * a + oxide__type_size(t->fields[i]);
            align = a > align ? a : align;
        }
        t->align = align;
        t->size = (off + align - 1) / align * align;
        for (uint32_t i = 0; i < t->nfields; i++) {
            const oxide_type *f = t->fields[i];
            uint64_t l = f->kind == OXIDE_TYPE_STRUCT || f->kind == OXIDE_TYPE_ARRAY ? f->leaves : 1;
            t->leaves = t->leaves + l < t->leaves ? UINT64_MAX : t->leaves + l;
        }
    } else if (t->kind == OXIDE_TYPE_VECTOR || t->kind == OXIDE_TYPE_ARRAY) {
        t->size = t->count * oxide__type_size(t->elem);
        t->align = t->kind == OXIDE_TYPE_VECTOR ? t->size : oxide__type_align(t->elem);
        const oxide_type *e = t->elem;
        t->leaves = e->kind == OXIDE_TYPE_STRUCT || e->kind == OXIDE_TYPE_ARRAY ? e->leaves : 1;
    }
    /* The text form, built once: "ptr.shared", "vec<4 x f32>", "struct<f32, i64>". Past
     * OXIDE_TYPE_NAME_MAX it is cut short ("struct<struct<...") so that names cost bounded
     * memory however deep the nesting; the printer writes the full form from the structure. */
    char text[OXIDE_TYPE_NAME_MAX + 1];
    size_t n = 0;
    bool cut = false;
    switch (t->kind) {
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2:
    case OXIDE_TYPE_TILE:
    case OXIDE_TYPE_TENSOR:
        oxide__tile_type_name(t, text, sizeof text);
        n = strlen(text);
        break;
    case OXIDE_TYPE_PTR: {
        static const char *const spaces[] = {
            [0] = "ptr", [1] = "ptr.global", [3] = "ptr.shared", [4] = "ptr.constant", [5] = "ptr.local"};
        n = (size_t)snprintf(text, sizeof text, "%s",
                             t->addrspace == OXIDE_AS_PARAM ? "ptr.param" : spaces[t->addrspace]);
        break;
    }
    case OXIDE_TYPE_VECTOR:
    case OXIDE_TYPE_ARRAY:
        n = (size_t)snprintf(text, sizeof text, "%s<%llu x %s>", t->kind == OXIDE_TYPE_VECTOR ? "vec" : "array",
                             (unsigned long long)t->count, t->elem->name);
        cut = t->elem->name_cut;
        break;
    default:
        n = (size_t)snprintf(text, sizeof text, "struct<");
        for (uint32_t i = 0; i < t->nfields && n < sizeof text; i++) {
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i ? ", " : "", t->fields[i]->name);
            cut |= t->fields[i]->name_cut;
        }
        if (n < sizeof text)
            n += (size_t)snprintf(text + n, sizeof text - n, ">");
    }
    if (cut || n >= sizeof text) {
        t->name_cut = true;
        strcpy(text + (sizeof text - 4), "...");
        n = sizeof text - 1;
    }
    char *name = oxide__alloc(&ctx->arena, n + 1);
    if (!name)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory creating a type");
    memcpy(name, text, n + 1);
    t->name = name;
    t->next_interned = ctx->interned;
    ctx->interned = t;
    *out = t;
    return OXIDE_OK;
}

oxide_status oxide__type_intern(oxide_context *ctx, const oxide_type *proto, oxide_type **out) {
    return intern(ctx, proto, out);
}

oxide_status oxide_type_scalar(oxide_context *ctx, oxide_type_kind kind, oxide_type **out) {
    if (!ctx || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_scalar: %s is NULL", !ctx ? "ctx" : "out");
    if (kind == OXIDE_TYPE_F8E4M3 || kind == OXIDE_TYPE_F8E5M2) {
        oxide_type proto = {.kind = kind};
        return intern(ctx, &proto, out);
    }
    if ((unsigned)kind > OXIDE_TYPE_F64)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_scalar: kind %d is not a scalar type", (int)kind);
    *out = ctx->scalars[kind];
    return OXIDE_OK;
}

oxide_status oxide_type_pointer(oxide_context *ctx, oxide_addrspace as, oxide_type **out) {
    if (!ctx || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_pointer: %s is NULL", !ctx ? "ctx" : "out");
    if (as != OXIDE_AS_GENERIC && as != OXIDE_AS_GLOBAL && as != OXIDE_AS_SHARED && as != OXIDE_AS_CONSTANT &&
        as != OXIDE_AS_LOCAL && as != OXIDE_AS_PARAM)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_pointer: unknown address space %d", (int)as);
    oxide_type proto = {.kind = OXIDE_TYPE_PTR, .addrspace = (uint32_t)as};
    return intern(ctx, &proto, out);
}

bool oxide__type_is_int(const oxide_type *t) { return t->kind >= OXIDE_TYPE_I1 && t->kind <= OXIDE_TYPE_I128; }
bool oxide__type_is_float(const oxide_type *t) { return t->kind >= OXIDE_TYPE_F16 && t->kind <= OXIDE_TYPE_F64; }
bool oxide__type_is_zeroable(const oxide_type *t) {
    return (t->kind == OXIDE_TYPE_VECTOR || t->kind == OXIDE_TYPE_ARRAY) && t->elem &&
           (oxide__type_is_int(t->elem) || oxide__type_is_float(t->elem));
}
bool oxide__type_is_ptr(const oxide_type *t) { return t->kind == OXIDE_TYPE_PTR; }

unsigned oxide__type_bits(const oxide_type *t) {
    static const unsigned bits[] = {0, 1, 8, 16, 32, 64, 128, 16, 16, 32, 64, 64};
    return t->kind <= OXIDE_TYPE_PTR ? bits[t->kind] : 0;
}

uint64_t oxide__type_align(const oxide_type *t) {
    switch (t->kind) {
    case OXIDE_TYPE_VOID: return 1;
    case OXIDE_TYPE_I1: return 1;
    case OXIDE_TYPE_VECTOR:
    case OXIDE_TYPE_ARRAY:
    case OXIDE_TYPE_STRUCT: return t->align;
    default: return oxide__type_bits(t) / 8;
    }
}

uint64_t oxide__type_size(const oxide_type *t) {
    switch (t->kind) {
    case OXIDE_TYPE_VOID: return 0;
    case OXIDE_TYPE_I1: return 1;
    case OXIDE_TYPE_VECTOR:
    case OXIDE_TYPE_ARRAY:
    case OXIDE_TYPE_STRUCT: return t->size;
    default: return oxide__type_bits(t) / 8;
    }
}

static bool sized(const oxide_type *t) { return oxide__type_has_layout(t); }

oxide_status oxide_type_vector(oxide_context *ctx, oxide_type *elem, uint32_t count, oxide_type **out) {
    if (!ctx || !elem || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_vector: %s is NULL",
                           !ctx    ? "ctx"
                           : !elem ? "elem"
                                   : "out");
    if (!(oxide__type_is_int(elem) || oxide__type_is_float(elem) || oxide__type_is_ptr(elem)) ||
        elem->kind == OXIDE_TYPE_I1)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_type_vector: element type %s is not an integer, float or pointer", elem->name);
    if (count != 2 && count != 4 && count != 8)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_vector: count must be 2, 4 or 8, got %u", count);
    oxide_type proto = {.kind = OXIDE_TYPE_VECTOR, .elem = elem, .count = count};
    return intern(ctx, &proto, out);
}

oxide_status oxide_type_array(oxide_context *ctx, oxide_type *elem, uint64_t count, oxide_type **out) {
    if (!ctx || !elem || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_array: %s is NULL",
                           !ctx    ? "ctx"
                           : !elem ? "elem"
                                   : "out");
    uint64_t esize = sized(elem) ? oxide__type_size(elem) : 0;
    if (!sized(elem) || count == 0 || count > (1ull << 40) || (esize && count > (1ull << 40) / esize))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_type_array: need a sized element, count >= 1 and at most 2^40 bytes in all");
    oxide_type proto = {.kind = OXIDE_TYPE_ARRAY, .elem = elem, .count = count};
    return intern(ctx, &proto, out);
}

oxide_status oxide_type_struct(oxide_context *ctx, oxide_type *const *fields, size_t nfields, oxide_type **out) {
    if (!ctx || !fields || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_struct: %s is NULL",
                           !ctx      ? "ctx"
                           : !fields ? "fields"
                                     : "out");
    if (nfields == 0 || nfields > 65536)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_type_struct: %zu fields (a struct has 1 to 65536)",
                           nfields);
    for (size_t i = 0; i < nfields; i++)
        if (!fields[i] || !sized(fields[i]) || oxide__type_size(fields[i]) > (1ull << 40) / nfields)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "oxide_type_struct: field %zu is NULL, void, or makes the struct larger than 2^40 bytes",
                               i);
    oxide_type proto = {.kind = OXIDE_TYPE_STRUCT, .fields = (oxide_type **)fields, .nfields = (uint32_t)nfields};
    return intern(ctx, &proto, out);
}

oxide_type_kind oxide_type_get_kind(const oxide_type *t) { return t ? t->kind : OXIDE_TYPE_VOID; }
const char *oxide_type_get_name(const oxide_type *t) { return t ? t->name : NULL; }

oxide_type *oxide__scalar_ir_type(oxide_context *ctx, oxide_scalar s) {
    static const oxide_type_kind kinds[] = {
        OXIDE_TYPE_I8,  OXIDE_TYPE_I8,  OXIDE_TYPE_I16, OXIDE_TYPE_I32,  OXIDE_TYPE_I64, OXIDE_TYPE_I8, OXIDE_TYPE_I16,
        OXIDE_TYPE_I32, OXIDE_TYPE_I64, OXIDE_TYPE_F16, OXIDE_TYPE_BF16, OXIDE_TYPE_F32, OXIDE_TYPE_F64};
    return (unsigned)s < sizeof kinds / sizeof kinds[0] ? ctx->scalars[kinds[s]] : NULL;
}

bool oxide__round_float(oxide_type_kind kind, double v, double *out) {
    int mant_bits, min_exp; /* stored mantissa bits, smallest normal exponent */
    double max;
    switch (kind) {
    case OXIDE_TYPE_F64: *out = v; return true;
    case OXIDE_TYPE_F32: *out = (float)v; return !(isfinite(v) && isinf(*out));
    case OXIDE_TYPE_F16: mant_bits = 10, min_exp = -14, max = 65504.0; break;
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2: return oxide__round_fp8(kind, v, out);
    default: /* BF16 */ mant_bits = 7, min_exp = -126, max = 0x1.fep127; break;
    }
    if (!isfinite(v) || v == 0) {
        *out = v;
        return true;
    }
    int e = (int)floor(log2(fabs(v)));
    if (e < min_exp)
        e = min_exp; /* subnormals share the smallest normal's step */
    double ulp = ldexp(1.0, e - mant_bits);
    double r = nearbyint(v / ulp) * ulp; /* default rounding mode: ties to even */
    *out = r;
    return fabs(r) <= max;
}
