/* Tile kernels: hints and the whole-function rules. */
#include <string.h>

#include "../ir.h"

const char *const oxide__tile_hint_names[OXIDE__TILE_NHINTS] = {"warps",           "stages",  "group",   "persistent",
                                                                "consumer_groups", "cluster", "producer"};
static const uint32_t hint_defaults[OXIDE__TILE_NHINTS] = {4, 3, 0, 0, 1, 1, 1};
#define MAX_GROUP 1024u

oxide_status oxide__tile_hint_check(unsigned hint, uint32_t v) {
    bool ok;
    const char *want;
    switch (hint) {
    case OXIDE_TILE_HINT_WARPS: ok = v && v <= 16 && !(v & (v - 1)), want = "1, 2, 4, 8 or 16"; break;
    case OXIDE_TILE_HINT_STAGES: ok = v >= 1 && v <= 8, want = "1 to 8"; break;
    case OXIDE_TILE_HINT_GROUP: ok = v <= MAX_GROUP, want = "0 (off) to 1024"; break;
    case OXIDE_TILE_HINT_PERSISTENT: ok = v <= 1, want = "0 or 1"; break;
    case OXIDE_TILE_HINT_CONSUMER_GROUPS: ok = v == 1 || v == 2, want = "1 or 2"; break;
    case OXIDE_TILE_HINT_CLUSTER: ok = v == 1 || v == 2 || v == 4, want = "1, 2 or 4"; break;
    case OXIDE_TILE_HINT_PRODUCER: ok = v <= 1, want = "0 or 1"; break;
    default: return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "unknown tile kernel hint %u", hint);
    }
    if (!ok)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "hint %s=%u is out of range: it takes %s",
                           oxide__tile_hint_names[hint], v, want);
    return OXIDE_OK;
}

static oxide_status need_tile_kernel(const oxide_function *k, const char *what) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: kernel is NULL", what);
    if (!k->is_tile)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: @%s is not a tile kernel", what, k->name);
    return OXIDE_OK;
}

oxide_status oxide_tile_kernel_set_hint(oxide_function *k, oxide_tile_hint hint, uint32_t value) {
    oxide_status st = need_tile_kernel(k, "oxide_tile_kernel_set_hint");
    if (st || (st = oxide__tile_hint_check((unsigned)hint, value)))
        return st;
    oxide__module_changed(k->mod);
    k->hints[hint] = value;
    k->hints_set |= 1u << hint;
    return OXIDE_OK;
}

oxide_status oxide_tile_kernel_get_hint(const oxide_function *k, oxide_tile_hint hint, uint32_t *value) {
    oxide_status st = need_tile_kernel(k, "oxide_tile_kernel_get_hint");
    if (st)
        return st;
    if ((unsigned)hint >= OXIDE__TILE_NHINTS || !value)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_tile_kernel_get_hint: unknown hint or NULL value");
    *value = k->hints_set & (1u << hint) ? k->hints[hint] : hint_defaults[hint];
    return OXIDE_OK;
}

oxide_status oxide__tile_check_value_type(const oxide_function *fn, const oxide_type *t, const char *what) {
    if (!fn->is_tile && oxide__type_is_tile_only(t))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH,
                           "%s of @%s cannot have type %s: tiles, tensors and fp8 values exist only in tile kernels",
                           what, fn->name, t->name);
    if (fn->is_tile && t->kind == OXIDE_TYPE_TENSOR)
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH,
                           "%s of @%s cannot have type %s: tensors are only kernel parameters", what, fn->name,
                           t->name);
    if (fn->is_tile && oxide__type_is_fp8(t))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH,
                           "%s of @%s cannot have type %s: fp8 values exist only as tile elements", what, fn->name,
                           t->name);
    return OXIDE_OK;
}

/* A tile kernel's interface: tensors and scalars, each one value of the matching type. */
static oxide_status check_interface(const oxide_function *fn) {
    uint32_t next = 0;
    for (uint32_t i = 0; i < fn->iface.len; i++) {
        const oxide_iface_param *ip = fn->iface.items[i];
        const char *nm = ip && ip->name ? ip->name : "?";
        const oxide_type *want = NULL;
        if (!ip || ip->first_value != next || next >= fn->params.len)
            return oxide__fail(OXIDE_ERROR_VERIFY, "kernel parameter %u (%s) is not recorded as value %u", i, nm, next);
        if (ip->kind == OXIDE_PARAM_SCALAR)
            want = oxide__scalar_ir_type(fn->mod->ctx, ip->scalar);
        else if (ip->kind == OXIDE_PARAM_TENSOR)
            want = ip->tensor && ip->tensor->kind == OXIDE_TYPE_TENSOR ? ip->tensor : NULL;
        else
            return oxide__fail(OXIDE_ERROR_VERIFY,
                               "kernel parameter %u (%s) is a %s; a tile kernel takes tensors and scalars", i, nm,
                               oxide_param_kind_name(ip->kind) ? oxide_param_kind_name(ip->kind) : "?");
        const oxide_value *v = fn->params.items[next++];
        if (!want || !v || v->type != want)
            return oxide__fail(OXIDE_ERROR_VERIFY, "kernel parameter %u (%s): its value must be %s, got %s", i, nm,
                               want ? want->name : "a known scalar or tensor", v && v->type ? v->type->name : "none");
    }
    if (next != fn->params.len)
        return oxide__fail(OXIDE_ERROR_VERIFY, "the kernel has %u parameter values, but its interface accounts for %u",
                           fn->params.len, next);
    if (fn->launch_bounds[0] || fn->launch_bounds[1] || fn->cluster[0] || fn->dyn_smem)
        return oxide__fail(OXIDE_ERROR_VERIFY, "a tile kernel has launch bounds, cluster or dynamic shared memory; "
                                               "the tile compiler chooses these (use hints)");
    for (unsigned h = 0; h < OXIDE__TILE_NHINTS; h++) {
        oxide_status st = fn->hints_set & (1u << h) ? oxide__tile_hint_check(h, fn->hints[h]) : OXIDE_OK;
        if (st)
            return st;
    }
    return OXIDE_OK;
}

oxide_status oxide__tile_check_function(const oxide_function *fn) {
    oxide_status st;
    if (fn->is_tile && (st = check_interface(fn)))
        return st;
    for (uint32_t i = 0; !fn->is_tile && i < fn->params.len; i++) {
        const oxide_value *v = fn->params.items[i];
        if (v && v->type && (st = oxide__tile_check_value_type(fn, v->type, "a parameter")))
            return st;
    }
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *bl = fn->blocks.items[b];
        for (uint32_t i = 0; bl && i < bl->params.len; i++) {
            const oxide_value *v = bl->params.items[i];
            if (v && v->type && (st = oxide__tile_check_value_type(fn, v->type, "a block parameter")))
                return st;
        }
    }
    return OXIDE_OK;
}
