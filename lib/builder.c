/* Modules, functions, parameters, blocks and the checked instruction builder. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define OOM(what) oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory in %s", what)

/* Symbols may be Rust-mangled or carry '.', '$' (LLVM style); they never start with a digit. */
static bool valid_symbol(const char *s) {
    if (!s || !*s || isdigit((unsigned char)*s) || strlen(s) > 4096)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '$')
            return false;
    return true;
}

/* ---- modules ---- */

oxide_status oxide_module_create(oxide_context *ctx, const char *name, oxide_module **out) {
    if (!ctx || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_create: %s is NULL", !ctx ? "ctx" : "out");
    if (!valid_symbol(name))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_create: '%.64s' is not a valid module name",
                           name ? name : "(null)");
    oxide_module *m = calloc(1, sizeof *m);
    if (!m)
        return OOM("oxide_module_create");
    m->ctx = ctx;
    m->name = oxide__strdup(&m->arena, name);
    if (!m->name) {
        free(m);
        return OOM("oxide_module_create");
    }
    m->next = ctx->modules;
    if (ctx->modules)
        ctx->modules->prev = m;
    ctx->modules = m;
    *out = m;
    return OXIDE_OK;
}

void oxide_module_destroy(oxide_module *mod) {
    if (!mod)
        return;
    if (mod->prev)
        mod->prev->next = mod->next;
    else
        mod->ctx->modules = mod->next;
    if (mod->next)
        mod->next->prev = mod->prev;
    free(mod->printed);
    free(mod->ptx);
    free(mod->llvm_ir);
    oxide__arena_free(&mod->arena);
    free(mod);
}

oxide_function *oxide__module_find_function(oxide_module *mod, const char *name) {
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        oxide_function *f = mod->functions.items[i];
        if (!strcmp(f->name, name))
            return f;
    }
    return NULL;
}

oxide_global *oxide__module_find_global(oxide_module *mod, const char *name) {
    for (uint32_t i = 0; i < mod->globals.len; i++) {
        oxide_global *g = mod->globals.items[i];
        if (!strcmp(g->name, name))
            return g;
    }
    return NULL;
}

static oxide_status check_new_symbol(oxide_module *mod, const char *name, const char *what) {
    if (!valid_symbol(name))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: '%.64s' is not a valid name", what,
                           name ? name : "(null)");
    if (oxide__module_find_function(mod, name) || oxide__module_find_global(mod, name))
        return oxide__fail(OXIDE_ERROR_STATE, "%s: the name '%.64s' is already used in module %s", what, name,
                           mod->name);
    return OXIDE_OK;
}

static oxide_status add_function(oxide_module *mod, const char *name, bool kernel, oxide_type *ret,
                                 oxide_function **out, const char *what) {
    if (!mod || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what, !mod ? "mod" : "out");
    oxide__module_changed(mod);
    oxide_status st = check_new_symbol(mod, name, what);
    if (st)
        return st;
    oxide_function *f = oxide__alloc(&mod->arena, sizeof *f);
    if (!f || !(f->name = oxide__strdup(&mod->arena, name)) || !oxide__vec_push(&mod->arena, &mod->functions, f))
        return OOM(what);
    f->mod = mod;
    f->is_kernel = kernel;
    f->ret = ret ? ret : mod->ctx->scalars[OXIDE_TYPE_VOID];
    *out = f;
    return OXIDE_OK;
}

oxide_status oxide_module_add_kernel(oxide_module *mod, const char *name, oxide_function **out) {
    return add_function(mod, name, true, NULL, out, "oxide_module_add_kernel");
}

oxide_status oxide_module_add_tile_kernel(oxide_module *mod, const char *name, oxide_function **out) {
    oxide_status st = add_function(mod, name, true, NULL, out, "oxide_module_add_tile_kernel");
    if (!st)
        (*out)->is_tile = true;
    return st;
}

oxide_status oxide_module_add_function(oxide_module *mod, const char *name, oxide_type *ret, oxide_function **out) {
    if (!ret)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_add_function: ret is NULL (use the void type)");
    if (ret->kind == OXIDE_TYPE_ARRAY || ret->kind == OXIDE_TYPE_STRUCT)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "oxide_module_add_function: returning %s is not supported; "
                           "return through a pointer parameter",
                           ret->name);
    return add_function(mod, name, false, ret, out, "oxide_module_add_function");
}

oxide_status oxide_module_get_function(oxide_module *mod, const char *name, oxide_function **out) {
    if (!mod || !name || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_get_function: %s is NULL",
                           !mod    ? "mod"
                           : !name ? "name"
                                   : "out");
    oxide_function *f = oxide__module_find_function(mod, name);
    if (!f)
        return oxide__fail(OXIDE_ERROR_NOT_FOUND, "module %s has no function named '%.64s'", mod->name, name);
    *out = f;
    return OXIDE_OK;
}

oxide_status oxide_module_add_global(oxide_module *mod, const char *name, oxide_type *type, oxide_addrspace as,
                                     uint32_t align, const void *init, size_t init_size, oxide_global **out) {
    const char *what = "oxide_module_add_global";
    if (!mod || !type || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what, !mod ? "mod" : !type ? "type" : "out");
    oxide__module_changed(mod);
    oxide_status st = check_new_symbol(mod, name, what);
    if (st)
        return st;
    if (as != OXIDE_AS_GLOBAL && as != OXIDE_AS_SHARED && as != OXIDE_AS_CONSTANT)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: @%s must live in global, shared or constant space", what,
                           name);
    if (!oxide__type_has_layout(type))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: @%s cannot have type %s (it has no memory layout)", what,
                           name, type->name);
    if (align & (align - 1))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: alignment %u is not a power of two", what, align);
    if (init && as == OXIDE_AS_SHARED)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: shared @%s cannot have an initializer", what, name);
    if (init && init_size != oxide__type_size(type))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: initializer of @%s has %zu bytes, type %s needs %llu",
                           what, name, init_size, type->name, (unsigned long long)oxide__type_size(type));
    oxide_global *g = oxide__alloc(&mod->arena, sizeof *g);
    if (!g || !(g->name = oxide__strdup(&mod->arena, name)) || !oxide__vec_push(&mod->arena, &mod->globals, g))
        return OOM(what);
    if (init) {
        if (!(g->init = oxide__alloc(&mod->arena, init_size)))
            return OOM(what);
        memcpy(g->init, init, init_size);
        g->init_size = init_size;
    }
    g->mod = mod;
    g->type = type;
    g->as = as;
    g->align = align;
    *out = g;
    return OXIDE_OK;
}

/* ---- values and parameters ---- */

static bool valid_value_name(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_') || strlen(s) > 256)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
            return false;
    return true;
}

static oxide_status name_value(oxide_function *fn, oxide_value *v, const char *name) {
    oxide__module_changed(fn->mod);
    if (!valid_value_name(name))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%.64s' is not a valid value name ([A-Za-z_][A-Za-z0-9_.]*)",
                           name ? name : "(null)");
    size_t len = strlen(name);
    oxide_value *other = oxide__strmap_get(&fn->names, name, len);
    if (other == v)
        return OXIDE_OK;
    if (other)
        return oxide__fail(OXIDE_ERROR_STATE, "function @%s already has a value named %%%s", fn->name, name);
    const char *copy = oxide__strdup(&fn->mod->arena, name);
    if (!copy || !oxide__strmap_put(&fn->mod->arena, &fn->names, copy, len, v))
        return OOM("naming a value");
    if (v->name)
        oxide__strmap_remove(&fn->names, v->name, strlen(v->name));
    v->name = copy;
    return OXIDE_OK;
}

oxide_type *oxide_value_get_type(const oxide_value *v) { return v ? v->type : NULL; }

oxide_status oxide_value_set_name(oxide_value *v, const char *name) {
    if (!v)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_value_set_name: value is NULL");
    if (v->kind == VAL_PARAM && v->fn->is_kernel)
        return oxide__fail(OXIDE_ERROR_STATE,
                           "kernel parameter %%%s of @%s cannot be renamed: its name is part of "
                           "the kernel's interface",
                           v->name ? v->name : "?", v->fn->name);
    return name_value(v->fn, v, name);
}

static oxide_status new_param(oxide_function *fn, const char *name, oxide_type *type, oxide_value **out) {
    oxide__module_changed(fn->mod);
    oxide_value *v = oxide__alloc(&fn->mod->arena, sizeof *v);
    if (!v || !oxide__vec_push(&fn->mod->arena, &fn->params, v))
        return OOM("adding a parameter");
    v->kind = VAL_PARAM;
    v->type = type;
    v->fn = fn;
    v->index = fn->params.len - 1;
    if (name) {
        oxide_status st = name_value(fn, v, name);
        if (st) {
            fn->params.len--;
            return st;
        }
    }
    *out = v;
    return OXIDE_OK;
}

oxide_status oxide_function_add_param(oxide_function *fn, const char *name, oxide_type *type, oxide_value **out) {
    if (!fn || !type || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_function_add_param: %s is NULL",
                           !fn     ? "fn"
                           : !type ? "type"
                                   : "out");
    if (fn->is_kernel)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_function_add_param: @%s is a kernel; use oxide_kernel_add_*_param", fn->name);
    if (type->kind == OXIDE_TYPE_VOID)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_function_add_param: parameter cannot be void");
    oxide_status st = oxide__tile_check_value_type(fn, type, "a parameter");
    return st ? st : new_param(fn, name, type, out);
}

/* Adds the interface entry and its IR values (one, or two for a slice). */
static oxide_status add_iface(oxide_function *k, const char *name, oxide_iface_param proto, oxide_type *t0,
                              oxide_type *t1, oxide_value **v0, oxide_value **v1, const char *what) {
    if (!k || !v0 || (t1 && !v1))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                           !k    ? "kernel"
                           : !v0 ? (t1 ? "ptr_out" : "out")
                                 : "len_out");
    if (!k->is_kernel)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: @%s is not a kernel; use oxide_function_add_param", what,
                           k->name);
    if (!name || !valid_value_name(name) || strchr(name, '.'))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: '%.64s' is not a valid parameter name", what,
                           name ? name : "(null)");
    if (k->blocks.len || k->persistent)
        return oxide__fail(OXIDE_ERROR_STATE, "%s: add kernel parameters before the first block of @%s%s", what,
                           k->name, k->persistent ? " (and before persistent, whose grid parameters come last)" : "");
    if (k->is_tile && proto.kind != OXIDE_PARAM_TENSOR && proto.kind != OXIDE_PARAM_SCALAR)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: a tile kernel takes tensors and scalars only", what);
    oxide_iface_param *p = oxide__alloc(&k->mod->arena, sizeof *p);
    if (!p || !(proto.name = oxide__strdup(&k->mod->arena, name)))
        return OOM(what);
    *p = proto;
    p->first_value = k->params.len;
    oxide_value *a, *b = NULL;
    oxide_status st = new_param(k, name, t0, &a);
    if (st)
        return st;
    if (t1) {
        char len_name[300];
        snprintf(len_name, sizeof len_name, "%s.len", name);
        if ((st = new_param(k, len_name, t1, &b))) {
            k->params.len--;
            return st;
        }
    }
    if (!oxide__vec_push(&k->mod->arena, &k->iface, p))
        return OOM(what);
    *v0 = a;
    if (v1)
        *v1 = b;
    return OXIDE_OK;
}

/* fp8 is refused here: it has no scalar IR type and no meaning outside a tensor's elements. */
static bool valid_scalar(oxide_scalar s) { return oxide_scalar_name(s) != NULL && !oxide__scalar_is_fp8(s); }

/* The kernel and element type of a slice or pointer parameter. */
static oxide_status check_elem(const oxide_function *k, oxide_scalar elem, const char *what) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: kernel is NULL", what);
    if (!valid_scalar(elem))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "%s: %d is not an element type (use an OXIDE_SCALAR_* value; fp8 elements are for "
                           "tensors of tile kernels)",
                           what, (int)elem);
    return OXIDE_OK;
}

oxide_status oxide_kernel_add_scalar_param(oxide_function *k, const char *name, oxide_scalar type, oxide_value **out) {
    if (k && oxide__scalar_is_fp8(type))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_add_scalar_param: parameter '%s' of @%s: %s is a tensor element type only "
                           "(pass an f16, bf16 or f32 scalar and convert in the kernel)",
                           name ? name : "(null)", k->name, oxide_scalar_name(type));
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_add_scalar_param: kernel is NULL");
    if (!valid_scalar(type))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_add_scalar_param: %d is not an oxide_scalar (use an OXIDE_SCALAR_* value)",
                           (int)type);
    oxide_iface_param p = {.kind = OXIDE_PARAM_SCALAR, .scalar = type};
    return add_iface(k, name, p, oxide__scalar_ir_type(k->mod->ctx, type), NULL, out, NULL,
                     "oxide_kernel_add_scalar_param");
}

oxide_status oxide_kernel_add_slice_param(oxide_function *k, const char *name, oxide_scalar elem, int is_mutable,
                                          oxide_value **ptr_out, oxide_value **len_out) {
    oxide_status st = check_elem(k, elem, "oxide_kernel_add_slice_param");
    if (st)
        return st;
    oxide_type *ptr;
    oxide_type_pointer(k->mod->ctx, OXIDE_AS_GLOBAL, &ptr);
    oxide_iface_param p = {.kind = OXIDE_PARAM_SLICE, .scalar = elem, .is_mutable = is_mutable != 0};
    return add_iface(k, name, p, ptr, k->mod->ctx->scalars[OXIDE_TYPE_I64], ptr_out, len_out,
                     "oxide_kernel_add_slice_param");
}

oxide_status oxide_kernel_add_ptr_param(oxide_function *k, const char *name, oxide_scalar elem, int is_mutable,
                                        oxide_value **out) {
    oxide_status st = check_elem(k, elem, "oxide_kernel_add_ptr_param");
    if (st)
        return st;
    oxide_type *ptr;
    oxide_type_pointer(k->mod->ctx, OXIDE_AS_GLOBAL, &ptr);
    oxide_iface_param p = {.kind = OXIDE_PARAM_PTR, .scalar = elem, .is_mutable = is_mutable != 0};
    return add_iface(k, name, p, ptr, NULL, out, NULL, "oxide_kernel_add_ptr_param");
}

oxide_status oxide_kernel_add_bytes_param(oxide_function *k, const char *name, uint32_t size, uint32_t align,
                                          oxide_value **out) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_add_bytes_param: kernel is NULL");
    if (size == 0 || size > 4096 || align == 0 || align > 16 || (align & (align - 1)))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_add_bytes_param: need size 1..4096 and a power-of-two align up to 16 "
                           "(got size %u, align %u)",
                           size, align);
    oxide_type *ptr;
    oxide_type_pointer(k->mod->ctx, OXIDE_AS_GENERIC, &ptr);
    oxide_iface_param p = {.kind = OXIDE_PARAM_BYTES, .size = size, .align = align};
    return add_iface(k, name, p, ptr, NULL, out, NULL, "oxide_kernel_add_bytes_param");
}

oxide_status oxide_kernel_add_tma_desc_param(oxide_function *k, const char *name, oxide_value **out) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_add_tma_desc_param: kernel is NULL");
    oxide_type *ptr;
    oxide_type_pointer(k->mod->ctx, OXIDE_AS_GENERIC, &ptr);
    oxide_iface_param p = {.kind = OXIDE_PARAM_TMA_DESC, .size = 128, .align = 64};
    return add_iface(k, name, p, ptr, NULL, out, NULL, "oxide_kernel_add_tma_desc_param");
}

oxide_status oxide_kernel_add_tensor_param(oxide_function *k, const char *name, oxide_type *tensor, oxide_value **out) {
    if (!tensor || tensor->kind != OXIDE_TYPE_TENSOR)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_add_tensor_param: %s is not a tensor type",
                           tensor ? tensor->name : "NULL");
    oxide_scalar elem;
    if (!oxide__tensor_elem_scalar(tensor, &elem))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_add_tensor_param: %s has no interface element",
                           tensor->name);
    oxide_iface_param p = {.kind = OXIDE_PARAM_TENSOR,
                           .tensor = tensor,
                           .is_mutable = tensor->is_mutable,
                           .rank = tensor->rank,
                           .elem = elem,
                           .scalar = elem};
    if (!k || k->is_tile)
        return add_iface(k, name, p, tensor, NULL, out, NULL, "oxide_kernel_add_tensor_param");
    /* A SIMT kernel (a lowered tile kernel, or one written by hand) sees the view as its PTX
     * parameters: the element pointer NAME, then NAME.dimI and NAME.strideI (i64). */
    oxide_type *pg = NULL;
    oxide_value *ptr = NULL, *extra;
    oxide_status st = oxide_type_pointer(k->mod->ctx, OXIDE_AS_GLOBAL, &pg);
    if (st || (st = add_iface(k, name, p, pg, NULL, &ptr, NULL, "oxide_kernel_add_tensor_param")))
        return st;
    for (uint32_t i = 0; i < 2 * tensor->rank; i++) {
        char nm[300];
        snprintf(nm, sizeof nm, "%s.%s%u", name, i < tensor->rank ? "dim" : "stride", i % tensor->rank);
        if ((st = new_param(k, nm, k->mod->ctx->scalars[OXIDE_TYPE_I64], &extra)))
            return st;
    }
    *out = ptr;
    return OXIDE_OK;
}

/* Gives the SIMT kernel's last parameter, a tensor, a TMA descriptor for boxes of box[0..rank-1]
 * elements (iface.h): the value NAME.tma, the descriptor's generic address. */
oxide_status oxide__kernel_tensor_tma(oxide_function *k, const uint32_t *box, oxide_value **desc) {
    oxide_iface_param *ip = k && k->iface.len ? k->iface.items[k->iface.len - 1] : NULL;
    if (!ip || k->is_tile || ip->kind != OXIDE_PARAM_TENSOR || ip->tma ||
        ip->first_value + 1 + 2 * ip->rank != k->params.len || k->blocks.len)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide__kernel_tensor_tma: the kernel's last parameter is not a tensor without TMA");
    oxide_type *pgen;
    char nm[300];
    oxide_status st = oxide_type_pointer(k->mod->ctx, OXIDE_AS_GENERIC, &pgen);
    snprintf(nm, sizeof nm, "%s.tma", ip->name);
    if (st || (st = new_param(k, nm, pgen, desc)))
        return st;
    ip->tma = true;
    memcpy(ip->tma_box, box, ip->rank * sizeof *box);
    return OXIDE_OK;
}

oxide_status oxide__kernel_set_persistent(oxide_function *k, oxide_value *grid[3]) {
    if (!k || !k->is_kernel || k->is_tile || k->persistent || k->blocks.len)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "persistent: only a SIMT kernel, once, before its first block (a lowered tile kernel's)");
    static const char *const names[3] = OXIDE__GRID_PARAM_NAMES;
    oxide_type *u32 = k->mod->ctx->scalars[OXIDE_TYPE_I32];
    for (int i = 0; i < 3; i++) {
        oxide_status st = new_param(k, names[i], u32, &grid[i]);
        if (st)
            return st;
    }
    k->persistent = true;
    return OXIDE_OK;
}

static oxide_status need_kernel(oxide_function *k, const char *what) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: kernel is NULL", what);
    if (!k->is_kernel)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: @%s is a device function, not a kernel", what, k->name);
    if (k->is_tile)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "%s: @%s is a tile kernel: the tile compiler chooses its launch shape (use hints)", what,
                           k->name);
    return OXIDE_OK;
}

oxide_status oxide_kernel_set_launch_bounds(oxide_function *k, uint32_t max_threads, uint32_t min_blocks) {
    oxide_status st = need_kernel(k, "oxide_kernel_set_launch_bounds");
    if (st)
        return st;
    oxide__module_changed(k->mod);
    if (max_threads > 1024 || (min_blocks && !max_threads))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_set_launch_bounds: max threads must be 1..1024 (got %u, min blocks %u)",
                           max_threads, min_blocks);
    k->launch_bounds[0] = max_threads;
    k->launch_bounds[1] = min_blocks;
    return OXIDE_OK;
}

oxide_status oxide_kernel_set_cluster(oxide_function *k, uint32_t x, uint32_t y, uint32_t z) {
    oxide_status st = need_kernel(k, "oxide_kernel_set_cluster");
    if (st)
        return st;
    oxide__module_changed(k->mod);
    /* 16 is Hopper's non-portable maximum; the verifier holds kernels to the portable 8 until the
     * runtime opts in to non-portable sizes. */
    if (!x || !y || !z || x > 16 || y > 16 || z > 16 || x * y * z > 16)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_set_cluster: dimensions must be >= 1 with at most 16 blocks (got %u,%u,%u)", x,
                           y, z);
    k->cluster[0] = x;
    k->cluster[1] = y;
    k->cluster[2] = z;
    return OXIDE_OK;
}

oxide_status oxide_kernel_set_dyn_smem(oxide_function *k, uint32_t bytes) {
    oxide_status st = need_kernel(k, "oxide_kernel_set_dyn_smem");
    if (st)
        return st;
    oxide__module_changed(k->mod);
    if (bytes > 232448)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_kernel_set_dyn_smem: %u bytes exceeds the 227 KiB a block can have", bytes);
    k->dyn_smem = bytes;
    return OXIDE_OK;
}

/* ---- blocks ---- */

oxide_status oxide_function_add_block(oxide_function *fn, oxide_type *const *params, size_t nparams, oxide_block **out,
                                      oxide_value **param_values) {
    const char *what = "oxide_function_add_block";
    if (!fn || !out || (nparams && !params))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                           !fn    ? "fn"
                           : !out ? "out"
                                  : "params (with nparams > 0)");
    if (fn->blocks.len == 0 && nparams)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: the entry block of @%s cannot have parameters", what,
                           fn->name);
    oxide__module_changed(fn->mod);
    oxide_arena *a = &fn->mod->arena;
    oxide_block *b = oxide__alloc(a, sizeof *b);
    if (!b)
        return OOM(what);
    b->fn = fn;
    b->index = fn->blocks.len;
    for (size_t i = 0; i < nparams; i++) {
        if (!params[i] || params[i]->kind == OXIDE_TYPE_VOID)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: block parameter %zu is NULL or void", what, i);
        oxide_status st = oxide__tile_check_value_type(fn, params[i], "a block parameter");
        if (st)
            return st;
        oxide_value *v = oxide__alloc(a, sizeof *v);
        if (!v || !oxide__vec_push(a, &b->params, v))
            return OOM(what);
        v->kind = VAL_BLOCK_PARAM;
        v->type = params[i];
        v->block = b;
        v->fn = fn;
        v->index = (uint32_t)i;
    }
    if (!oxide__vec_push(a, &fn->blocks, b))
        return OOM(what);
    for (size_t i = 0; param_values && i < nparams; i++)
        param_values[i] = b->params.items[i];
    *out = b;
    return OXIDE_OK;
}

/* ---- operand checking (shared with the verifier) ---- */

static bool is_vec_of(const oxide_type *t, bool (*pred)(const oxide_type *)) {
    return t->kind == OXIDE_TYPE_VECTOR && pred(t->elem);
}

static bool fits_class(char c, const oxide_type *t) {
    if (t->kind == OXIDE_TYPE_TILE) /* elementwise rows on tiles: the element decides */
        t = t->elem;
    switch (c) {
    case 'I': return (oxide__type_is_int(t) || is_vec_of(t, oxide__type_is_int));
    case 'F': return (oxide__type_is_float(t) || is_vec_of(t, oxide__type_is_float));
    case 'N':
        return (oxide__type_is_int(t) || oxide__type_is_float(t) || is_vec_of(t, oxide__type_is_int) ||
                is_vec_of(t, oxide__type_is_float));
    default: /* T, x */ return t->kind != OXIDE_TYPE_VOID;
    }
}

static const char *class_name(char c) {
    switch (c) {
    case 'I': return "an integer";
    case 'F': return "a float";
    case 'N': return "an integer or float";
    case 'P': return "a pointer";
    case 'S': return "a shared-memory pointer";
    case 'b': return "i1";
    case 'i': return "i32";
    case 'l': return "i64";
    case 'R': return "a tensor";
    case 'Y': return "a tile";
    default: return "a value";
    }
}

oxide_status oxide__check_operands(oxide_context *ctx, oxide_op op, oxide_value *const *operands, size_t n,
                                   oxide_type *result_type, oxide_type **result_out) {
    if ((unsigned)op >= OXIDE_OP_COUNT_)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "unknown op %d", (int)op);
    const oxide_op_info *info = &oxide_ops[op];
    const char *sig = info->operands;
    size_t fixed = strcspn(sig, "*");
    bool variadic = sig[fixed] == '*';
    if (n < fixed || (!variadic && n > fixed))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s' takes %s%zu operand%s, got %zu", info->name,
                           variadic ? "at least " : "", fixed, fixed == 1 ? "" : "s", n);
    if (n && !operands)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': operands is NULL", info->name);
    oxide_type *row = NULL, *cond = NULL;
    for (size_t i = 0; i < n; i++) {
        oxide_value *v = operands[i];
        char c = i < fixed ? sig[i] : 'x';
        if (!v)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': operand %zu is NULL", info->name, i);
        oxide_type *t = v->type;
        bool ok;
        switch (c) {
        case 'T':
        case 'I':
        case 'F':
        case 'N':
            if (row && t != row)
                return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH,
                                   "'%s': operand %zu has type %s, expected %s like the "
                                   "operands before it",
                                   info->name, i, t->name, row->name);
            row = t;
            ok = fits_class(c, t);
            break;
        case 'P': ok = t->kind == OXIDE_TYPE_PTR; break;
        case 'S': ok = t->kind == OXIDE_TYPE_PTR && t->addrspace == OXIDE_AS_SHARED; break;
        case 'b':
            cond = t;
            ok = oxide__tile_scalar(t)->kind == OXIDE_TYPE_I1;
            break;
        case 'R': ok = t->kind == OXIDE_TYPE_TENSOR; break;
        case 'Y': ok = t->kind == OXIDE_TYPE_TILE; break;
        case 'i': ok = t->kind == OXIDE_TYPE_I32; break;
        case 'l': ok = t->kind == OXIDE_TYPE_I64; break;
        default: ok = fits_class('x', t);
        }
        if (!ok)
            return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': operand %zu must be %s, got %s", info->name, i,
                               class_name(c), t->name);
    }
    bool tile_row = row && row->kind == OXIDE_TYPE_TILE;
    if (cond && cond->kind == OXIDE_TYPE_TILE && !(tile_row && oxide__tile_shape_eq(cond, row)))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': condition %s needs %s of its shape", info->name,
                           cond->name, tile_row ? "operands" : "tile operands");
    if (cond && tile_row && cond->kind != OXIDE_TYPE_TILE)
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': on %s operands the condition must be an i1 tile, got %s",
                           info->name, row->name, cond->name);
    oxide_type *res;
    oxide_status st;
    switch (info->result) {
    case 'T':
    case 'I':
    case 'F':
    case 'N': res = row; break;
    case 'b':
        res = ctx->scalars[OXIDE_TYPE_I1];
        if (tile_row && (st = oxide__tile_like(ctx, row, res, &res)))
            return st;
        break;
    case 'i': res = ctx->scalars[OXIDE_TYPE_I32]; break;
    case 'l': res = ctx->scalars[OXIDE_TYPE_I64]; break;
    case 'p': res = operands[0]->type; break;
    case 'g': oxide_type_pointer(ctx, OXIDE_AS_GENERIC, &res); break;
    case 'x':
        if (!result_type || result_type->kind == OXIDE_TYPE_VOID)
            return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s' needs an explicit result type", info->name);
        res = result_type;
        break;
    case '?': res = result_type && result_type->kind != OXIDE_TYPE_VOID ? result_type : NULL; break;
    default: res = NULL;
    }
    if (result_type && info->result != 'x' && info->result != '?' &&
        (res != result_type && !(res == NULL && result_type->kind == OXIDE_TYPE_VOID)))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s' produces %s, but result type %s was given", info->name,
                           res ? res->name : "no value", result_type->name);
    if (result_out)
        *result_out = res;
    return OXIDE_OK;
}

/* ---- building instructions ---- */

static unsigned attr_flag(oxide_attr_key k) { return (unsigned)k <= OXIDE_ATTR_KIND ? 1u << (unsigned)k : 0; }

static bool is_lane_mask_op(oxide_op op) {
    return (op >= OXIDE_OP_SHFL_IDX && op <= OXIDE_OP_MATCH_ANY) ||
           (op >= OXIDE_OP_REDUX_ADD && op <= OXIDE_OP_REDUX_XOR) || op == OXIDE_OP_ELECT_SYNC;
}

static oxide_status apply_attr(oxide_inst *in, oxide_type *result, const oxide_attr *a, oxide_arena *arena) {
    const char *name = oxide_ops[in->op].name;
    switch (a->key) {
    case OXIDE_ATTR_ALIGN:
        if (a->i < 0 || a->i > 65536 || (a->i & (a->i - 1)))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': align %lld is not 0 or a power of two <= 65536",
                               name, (long long)a->i);
        in->align = (uint32_t)a->i;
        break;
    case OXIDE_ATTR_VOLATILE:
        if (a->i != 0 && a->i != 1)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': volatile must be 0 or 1", name);
        in->is_volatile = a->i != 0;
        break;
    case OXIDE_ATTR_SCOPE:
        if (a->i < 0 || a->i > OXIDE_SCOPE_SYS)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': unknown scope %lld", name, (long long)a->i);
        in->scope = (oxide_scope)a->i;
        break;
    case OXIDE_ATTR_ORDER:
        if (a->i < 0 || a->i > OXIDE_ORDER_SEQ_CST)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': unknown order %lld", name, (long long)a->i);
        in->order = (oxide_order)a->i;
        break;
    case OXIDE_ATTR_PRED: {
        bool fcmp = in->op == OXIDE_OP_FCMP;
        long long lo = fcmp ? OXIDE_PRED_OEQ : OXIDE_PRED_EQ, hi = fcmp ? OXIDE_PRED_FUGE : OXIDE_PRED_UGE;
        if (a->i < lo || a->i > hi)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': predicate %lld is not a%s predicate", name,
                               (long long)a->i, fcmp ? "n fcmp" : "n icmp");
        in->pred = (oxide_pred)a->i;
        break;
    }
    case OXIDE_ATTR_IMM:
        if ((in->op == OXIDE_OP_BARRIER || in->op == OXIDE_OP_BARRIER_COUNT) && (a->i < 0 || a->i > 15))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': barrier id must be 0..15, got %lld", name,
                               (long long)a->i);
        if (is_lane_mask_op(in->op) && (a->i < 0 || a->i > 0xffffffffll))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': lane mask must fit in 32 bits", name);
        if ((in->op == OXIDE_OP_EXTRACT || in->op == OXIDE_OP_INSERT) && a->i < 0)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': index must be >= 0", name);
        in->imm = a->i;
        break;
    case OXIDE_ATTR_VALUE:
    case OXIDE_ATTR_PAD: {
        /* a tile's value or pad is one of its elements */
        const oxide_type *et = result ? oxide__tile_scalar(result) : NULL;
        if (!et || (result->kind != OXIDE_TYPE_TILE && in->op != OXIDE_OP_CONST))
            break;                         /* the tile check names the missing tile result */
        if (oxide__type_is_zeroable(et)) { /* an aggregate constant: the verifier wants 0 */
            in->ivalue = a->i, in->fvalue = a->f;
            break;
        }
        if (oxide__type_is_float(et) || oxide__type_is_fp8(et)) {
            if (!oxide__round_float(et->kind, a->f, &in->fvalue))
                return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': %g overflows %s", name, a->f, et->name);
        } else {
            unsigned bits = oxide__type_bits(et);
            if (bits < 64 && (a->i < -(1ll << (bits - 1)) || a->i > (long long)((1ull << bits) - 1)))
                return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': %lld does not fit in %s", name, (long long)a->i,
                                   et->name);
            in->ivalue = a->i;
        }
        break;
    }
    case OXIDE_ATTR_PERM:
        if (a->i < 0 || a->i > 0xfff)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': perm 0x%llx is not three 4-bit indices", name,
                               (long long)a->i);
        in->perm = (uint32_t)a->i;
        break;
    case OXIDE_ATTR_KIND:
        if (a->i < OXIDE_REDUCE_SUM || a->i > OXIDE_REDUCE_MIN)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': unknown reduce kind %lld", name, (long long)a->i);
        in->kind = (uint8_t)a->i;
        break;
    case OXIDE_ATTR_STR:
        if (!a->s || !(in->str = oxide__strdup(arena, a->s)))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': str attribute is NULL", name);
        break;
    case OXIDE_ATTR_ELEM:
        if (!a->t || a->t->kind == OXIDE_TYPE_VOID)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': elem must be a sized type", name);
        in->elem = a->t;
        break;
    case OXIDE_ATTR_SYM:
        if (!valid_symbol(a->s))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': sym '%.64s' is not a valid name", name,
                               a->s ? a->s : "(null)");
        if (!(in->sym = oxide__strdup(arena, a->s)))
            return OOM("building an op");
        break;
    }
    return OXIDE_OK;
}

static bool block_terminated(const oxide_block *b) {
    if (!b->insts.len)
        return false;
    const oxide_inst *last = b->insts.items[b->insts.len - 1];
    return oxide_ops[last->op].lower == L_TERM;
}

oxide_status oxide__build(oxide_block *block, oxide_op op, oxide_value *const *operands, size_t n,
                          oxide_type *result_type, const oxide_attr *attrs, size_t nattrs, oxide_inst **out) {
    if ((unsigned)op >= OXIDE_OP_COUNT_)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_build_op: unknown op %d (use an OXIDE_OP_* value)",
                           (int)op);
    const oxide_op_info *info = &oxide_ops[op];
    if (!block)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': block is NULL", info->name);
    oxide_function *fn = block->fn;
    oxide__module_changed(fn->mod);
    if (block_terminated(block))
        return oxide__fail(OXIDE_ERROR_STATE, "'%s': block ^%u of @%s already ends in a terminator", info->name,
                           block->index, fn->name);
    if (nattrs && !attrs)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': attrs is NULL", info->name);
    for (size_t i = 0; i < n; i++)
        if (operands && operands[i] && operands[i]->fn != fn)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': operand %zu belongs to another function",
                               info->name, i);
    oxide_type *res;
    oxide_status st = oxide__check_operands(fn->mod->ctx, op, operands, n, result_type, &res);
    if (st)
        return st;
    if (op == OXIDE_OP_CONST && !oxide__type_is_int(res) && !oxide__type_is_float(res) && !oxide__type_is_zeroable(res))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH,
                           "'const': type must be an integer or float scalar, or a vector or array of them (value 0 "
                           "only), got %s",
                           res->name);

    oxide_arena *arena = &fn->mod->arena;
    oxide_inst *in = oxide__alloc(arena, sizeof *in);
    if (!in)
        return OOM("building an op");
    in->op = op;
    in->block = block;
    in->scope = OXIDE_SCOPE_GPU;
    if (op == OXIDE_OP_FCMP)
        in->pred = OXIDE_PRED_OEQ; /* 0 is icmp's eq, which fcmp does not have */
    if (is_lane_mask_op(op))
        in->imm = 0xffffffff;
    if (op >= OXIDE_OP_CP_ASYNC_CA && op <= OXIDE_OP_CP_ASYNC_CG_ZFILL)
        in->imm = 16; /* the one size every cp.async form has */
    unsigned seen = 0;
    for (size_t i = 0; i < nattrs; i++) {
        unsigned flag = attr_flag(attrs[i].key);
        if (!(info->attrs & flag))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s' has no attribute number %d", info->name,
                               (int)attrs[i].key);
        if (seen & flag)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': attribute %d given twice", info->name,
                               (int)attrs[i].key);
        seen |= flag;
        if ((st = apply_attr(in, res, &attrs[i], arena)))
            return st;
    }
    if ((info->attrs & A_SYM) && !in->sym)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s' needs a sym attribute (the %s name)", info->name,
                           op == OXIDE_OP_CALL ? "function" : "global");
    if ((info->attrs & A_ELEM) && !in->elem)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s' needs an elem attribute (the element type)", info->name);
    if ((info->attrs & A_STR) && !in->str && !(in->str = oxide__strdup(arena, "")))
        return OOM("building an op");
    if ((info->attrs & A_PERM) && !(seen & A_PERM))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s' needs a perm attribute (the permutation)", info->name);
    if (n) {
        in->operands = oxide__alloc(arena, n * sizeof *in->operands);
        if (!in->operands)
            return OOM("building an op");
        memcpy(in->operands, operands, n * sizeof *operands);
        in->noperands = (uint32_t)n;
    }
    if (res) {
        oxide_value *v = oxide__alloc(arena, sizeof *v);
        if (!v)
            return OOM("building an op");
        v->kind = VAL_INST;
        v->type = res;
        v->def = in;
        v->block = block;
        v->fn = fn;
        in->result = v;
    }
    if ((st = oxide__tile_check_inst(in, 0)))
        return st;
    if (!oxide__vec_push(arena, &block->insts, in))
        return OOM("building an op");
    if (out)
        *out = in;
    return OXIDE_OK;
}

oxide_status oxide__add_succ(oxide_inst *term, oxide_block *dest, oxide_value *const *args, size_t nargs,
                             int64_t case_value) {
    const char *name = oxide_ops[term->op].name;
    oxide_function *fn = term->block->fn;
    oxide__module_changed(fn->mod);
    if (!dest || dest->fn != fn)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': successor is NULL or in another function", name);
    if (dest->index == 0)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': cannot branch to the entry block of @%s", name,
                           fn->name);
    if (nargs != dest->params.len)
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': block ^%u takes %u argument%s, got %zu", name, dest->index,
                           dest->params.len, dest->params.len == 1 ? "" : "s", nargs);
    for (size_t i = 0; i < nargs; i++) {
        oxide_value *p = dest->params.items[i];
        if (!args || !args[i] || args[i]->fn != fn)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s': argument %zu to ^%u is NULL or foreign", name, i,
                               dest->index);
        if (args[i]->type != p->type)
            return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "'%s': argument %zu to ^%u has type %s, expected %s", name, i,
                               dest->index, args[i]->type->name, p->type->name);
    }
    oxide_arena *arena = &fn->mod->arena;
    oxide_succ *s = oxide__alloc(arena, (term->nsucc + 1) * sizeof *s);
    if (!s)
        return OOM("adding a successor");
    if (term->nsucc)
        memcpy(s, term->succ, term->nsucc * sizeof *s);
    oxide_succ *n = &s[term->nsucc];
    n->block = dest;
    n->case_value = case_value;
    if (nargs) {
        if (!(n->args = oxide__alloc(arena, nargs * sizeof *n->args)))
            return OOM("adding a successor");
        memcpy(n->args, args, nargs * sizeof *args);
        n->nargs = (uint32_t)nargs;
    }
    term->succ = s;
    term->nsucc++;
    return OXIDE_OK;
}

/* ---- public builders ---- */

oxide_status oxide_build_op(oxide_block *block, oxide_op op, oxide_value *const *operands, size_t noperands,
                            oxide_type *result_type, const oxide_attr *attrs, size_t nattrs, oxide_value **result) {
    if ((unsigned)op < OXIDE_OP_COUNT_ && (op == OXIDE_OP_BR || op == OXIDE_OP_COND_BR || op == OXIDE_OP_SWITCH))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'%s' names successors: use oxide_build_%s",
                           oxide_ops[op].name, oxide_ops[op].name);
    oxide_inst *in;
    oxide_status st = oxide__build(block, op, operands, noperands, result_type, attrs, nattrs, &in);
    if (st)
        return st;
    if (result)
        *result = in->result;
    return OXIDE_OK;
}

oxide_status oxide_build_const_int(oxide_block *block, oxide_type *type, int64_t value, oxide_value **out) {
    oxide_attr a = {.key = OXIDE_ATTR_VALUE, .i = value};
    if (type && !oxide__type_is_int(type))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "oxide_build_const_int: %s is not an integer type", type->name);
    return oxide_build_op(block, OXIDE_OP_CONST, NULL, 0, type, &a, 1, out);
}

oxide_status oxide_build_const_float(oxide_block *block, oxide_type *type, double value, oxide_value **out) {
    oxide_attr a = {.key = OXIDE_ATTR_VALUE, .f = value};
    if (type && !oxide__type_is_float(type))
        return oxide__fail(OXIDE_ERROR_TYPE_MISMATCH, "oxide_build_const_float: %s is not a float type", type->name);
    return oxide_build_op(block, OXIDE_OP_CONST, NULL, 0, type, &a, 1, out);
}

/* Terminators are built whole or not at all: on a bad successor the half-built one is removed. */
static oxide_status finish_term(oxide_inst *in, oxide_status st) {
    if (st)
        in->block->insts.len--;
    return st;
}

oxide_status oxide_build_br(oxide_block *block, oxide_block *dest, oxide_value *const *args, size_t nargs) {
    oxide_inst *in;
    oxide_status st = oxide__build(block, OXIDE_OP_BR, NULL, 0, NULL, NULL, 0, &in);
    return st ? st : finish_term(in, oxide__add_succ(in, dest, args, nargs, 0));
}

oxide_status oxide_build_cond_br(oxide_block *block, oxide_value *cond, oxide_block *if_true,
                                 oxide_value *const *true_args, size_t ntrue, oxide_block *if_false,
                                 oxide_value *const *false_args, size_t nfalse) {
    oxide_inst *in;
    oxide_status st = oxide__build(block, OXIDE_OP_COND_BR, &cond, 1, NULL, NULL, 0, &in);
    if (st)
        return st;
    st = oxide__add_succ(in, if_true, true_args, ntrue, 0);
    if (!st)
        st = oxide__add_succ(in, if_false, false_args, nfalse, 0);
    return finish_term(in, st);
}

oxide_status oxide_build_switch(oxide_block *block, oxide_value *value, oxide_block *default_dest, const int64_t *cases,
                                oxide_block *const *dests, size_t ncases) {
    if (ncases && (!cases || !dests))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_build_switch: cases or dests is NULL");
    oxide_inst *in;
    oxide_status st = oxide__build(block, OXIDE_OP_SWITCH, &value, 1, NULL, NULL, 0, &in);
    if (st)
        return st;
    st = oxide__add_succ(in, default_dest, NULL, 0, 0);
    for (size_t i = 0; !st && i < ncases; i++) {
        for (size_t j = 0; j < i; j++)
            if (cases[j] == cases[i])
                return finish_term(in, oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "'switch': case %lld appears twice",
                                                   (long long)cases[i]));
        st = oxide__add_succ(in, dests[i], NULL, 0, cases[i]);
    }
    return finish_term(in, st);
}
