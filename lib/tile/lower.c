/* The tile compiler's entry: a copy of the module (through its text form, so that nothing the
 * caller holds changes) in which each tile kernel is replaced, at its place, by the SIMT kernel
 * the passes of lib/tile/lower.h build from it. */
#include <stdio.h>
#include <string.h>

#include "lower.h"

bool oxide__module_has_tile(const oxide_module *mod) {
    for (uint32_t i = 0; i < mod->functions.len; i++)
        if (((const oxide_function *)mod->functions.items[i])->is_tile)
            return true;
    return false;
}

static oxide_status build_kernel(oxide_module *out, oxide_function *src, const oxide_options *opts, bool tma,
                                 const char *name, oxide_function **made);

static oxide_status lower_kernel(oxide_module *out, oxide_function *src, const oxide_options *opts) {
    /* the copy's tile kernel of this name gives way to the SIMT kernel, at the same position */
    uint32_t at = 0;
    while (at < out->functions.len && strcmp(((oxide_function *)out->functions.items[at])->name, src->name))
        at++;
    if (at == out->functions.len)
        return oxide__fail(OXIDE_ERROR_CODEGEN, "tile kernel @%s is missing from the copy", src->name);
    memmove(&out->functions.items[at], &out->functions.items[at + 1],
            (out->functions.len - at - 1) * sizeof out->functions.items[0]);
    out->functions.len--;
    oxide_function *k = NULL;
    int which = opts ? opts->tile_variants : OXIDE_TILE_VARIANTS_ALL;
    bool tma_only = which == OXIDE_TILE_VARIANTS_TMA;
    oxide_status st = build_kernel(out, src, opts, tma_only, src->name, &k);
    if (st)
        return st;
    /* oxide_module_add_kernel appended it: move it to the tile kernel's place */
    memmove(&out->functions.items[at + 1], &out->functions.items[at],
            (out->functions.len - 1 - at) * sizeof out->functions.items[0]);
    out->functions.items[at] = k;
    if (!k->tma_entry)
        return OXIDE_OK;
    /* the TMA variant, which launches take when the tensors allow (emit_tma.c) */
    oxide_function *v;
    if (oxide__module_find_function(out, k->tma_entry))
        return oxide__fail(OXIDE_ERROR_VERIFY,
                           "tile kernel @%s: its TMA variant would be @%s, which is another function's name; rename "
                           "one of them",
                           src->name, k->tma_entry);
    if ((st = build_kernel(out, src, opts, true, k->tma_entry, &v)))
        return st;
    v->tma_only = true;
    return OXIDE_OK;
}

/* The SIMT kernel name of tile kernel src; with TMA copies (tma) or without. A kernel without
 * gets tma_entry set when a TMA variant would differ. */
static oxide_status build_kernel(oxide_module *out, oxide_function *src, const oxide_options *opts, bool tma,
                                 const char *name, oxide_function **made) {
    tl T = {.ctx = out->ctx, .opts = opts, .out = out, .src = src, .tma_variant = tma};
    oxide_tile_kernel_get_hint(src, OXIDE_TILE_HINT_WARPS, &T.warps);
    T.threads = 32 * T.warps;
    oxide_context *c = out->ctx;
    T.ti1 = c->scalars[OXIDE_TYPE_I1], T.ti8 = c->scalars[OXIDE_TYPE_I8], T.ti16 = c->scalars[OXIDE_TYPE_I16];
    T.ti32 = c->scalars[OXIDE_TYPE_I32], T.ti64 = c->scalars[OXIDE_TYPE_I64], T.tf16 = c->scalars[OXIDE_TYPE_F16];
    T.tbf16 = c->scalars[OXIDE_TYPE_BF16], T.tf32 = c->scalars[OXIDE_TYPE_F32];
    oxide_status st;
    if ((st = oxide_type_pointer(c, OXIDE_AS_GLOBAL, &T.tpg)) ||
        (st = oxide_type_pointer(c, OXIDE_AS_SHARED, &T.tps)) || (st = oxide_module_add_kernel(out, name, &T.k)))
        return st;
    if ((st = tl_emit_kernel(&T)))
        return st;
    *made = T.k;
    if (tma && T.ntma && !strcmp(name, src->name))
        T.k->tma_only = true; /* the one variant built (OXIDE_TILE_VARIANTS_TMA) */
    if (!tma && T.ntma) {
        char v[300];
        snprintf(v, sizeof v, "%s__tma", name);
        if (!(T.k->tma_entry = oxide__strdup(&out->arena, v)))
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering @%s", name);
    }
    return OXIDE_OK;
}

oxide_status oxide__tile_lower(oxide_module *mod, const oxide_options *opts, oxide_module **out) {
    const char *text;
    oxide_module *copy = NULL;
    oxide_status st = oxide_module_print(mod, &text);
    if (st || (st = oxide_module_parse(mod->ctx, text, strlen(text), &copy)))
        return oxide__fail_prefix(st, "module %s: copying it for the tile lowering", mod->name);
    for (uint32_t i = 0; i < mod->bitcode.len && !st; i++) {
        const oxide_bitcode_unit *u = mod->bitcode.items[i];
        oxide_bitcode_unit *v = oxide__alloc(&copy->arena, sizeof *v);
        uint8_t *data = v ? oxide__alloc(&copy->arena, u->size ? u->size : 1) : NULL;
        if (!data || !oxide__vec_push(&copy->arena, &copy->bitcode, v))
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lowering module %s", mod->name);
        else {
            memcpy(data, u->data, u->size);
            *v = (oxide_bitcode_unit){.name = u->name, .data = data, .size = u->size};
        }
    }
    /* the word out-of-bounds stores go to (16 bytes: the widest element, aligned) */
    oxide_type *i64 = mod->ctx->scalars[OXIDE_TYPE_I64], *arr;
    oxide_global *g;
    if (!st && !(st = oxide_type_array(mod->ctx, i64, 2, &arr))) {
        /* a module lowered before (oxide compile --emit-simt's output) has it already */
        g = oxide__module_find_global(copy, "__oxide_tile_void");
        if (!g || g->type != arr || g->as != OXIDE_AS_GLOBAL || g->align != 16 || g->init)
            st = oxide_module_add_global(copy, "__oxide_tile_void", arr, OXIDE_AS_GLOBAL, 16, NULL, 0, &g);
    }
    for (uint32_t i = 0; i < mod->functions.len && !st; i++) {
        oxide_function *f = mod->functions.items[i];
        if (f->is_tile)
            st = lower_kernel(copy, f, opts);
    }
    if (st) {
        oxide_module_destroy(copy);
        return st;
    }
    *out = copy;
    return OXIDE_OK;
}

oxide_status oxide_module_lower_tile(oxide_module *mod, const oxide_options *opts, oxide_module **out) {
    if (!mod || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_lower_tile: %s is NULL", mod ? "out" : "mod");
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    oxide_status st = oxide__verify(mod, opts);
    return st ? st : oxide__tile_lower(mod, opts, out);
}
