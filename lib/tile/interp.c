/* oxide_tile_interpret: runs a tile kernel on the CPU (docs/tile.md, "The interpreter"). The
 * module is verified, the arguments are checked against the kernel's interface as a launch checks
 * them, then every program instance of the grid runs in turn (x fastest), walking the kernel's CFG.
 * Bounded: a step budget (element operations) and a memory budget (tile storage), so no kernel
 * can hang or exhaust its caller. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

#define DEFAULT_MAX_STEPS 10000000000ull /* 10^10 element operations */
#define DEFAULT_MAX_MEMORY (1ull << 30)  /* 1 GiB of tile storage */
#define MAX_GRID 0x7fffffffu             /* program ids are i32 */

oxide_status oxide__ti_fail(ti_state *s, oxide_status st, const char *fmt, ...) {
    char msg[512], where[96] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const oxide_inst *in = s->in;
    if (in && in->line)
        snprintf(where, sizeof where, " at %u:%u", in->line, in->col);
    if (!in)
        return oxide__fail(st, "interpret @%s: %s", s->fn->name, msg);
    uint32_t idx = 0;
    while (idx < in->block->insts.len && in->block->insts.items[idx] != in)
        idx++;
    return oxide__fail(st, "interpret @%s, program (%u,%u,%u): ^%u #%u '%s'%s: %s", s->fn->name, s->pid[0], s->pid[1],
                       s->pid[2], in->block->index, idx, oxide_ops[in->op].name, where, msg);
}

oxide_status oxide__ti_def(ti_state *s, const oxide_value *v, ti_slot **out) {
    ti_slot *sl = &s->slots[v->id];
    *out = sl;
    if (sl->data)
        return OXIDE_OK;
    uint64_t copies = v->kind == VAL_BLOCK_PARAM ? 2 : 1, bytes = sl->n * sizeof(ti_cell) * copies;
    if (bytes > s->max_bytes - s->bytes)
        return oxide__ti_fail(s, OXIDE_ERROR_OUT_OF_MEMORY,
                              "tile storage would reach %llu bytes, past the interpreter's limit of %llu "
                              "(oxide_interp_options.max_memory)",
                              (unsigned long long)(s->bytes + bytes), (unsigned long long)s->max_bytes);
    sl->data = calloc(sl->n, sizeof(ti_cell));
    sl->spare = copies == 2 ? calloc(sl->n, sizeof(ti_cell)) : NULL;
    if (!sl->data || (copies == 2 && !sl->spare))
        return oxide__ti_fail(s, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory for a %s", v->type->name);
    s->bytes += bytes;
    return OXIDE_OK;
}

/* ---- values: one slot each ---- */

static bool type_ok(const oxide_type *t) {
    if (t->kind == OXIDE_TYPE_TILE || t->kind == OXIDE_TYPE_TENSOR)
        return true;
    return (t->kind >= OXIDE_TYPE_I1 && t->kind <= OXIDE_TYPE_I64) ||
           (t->kind >= OXIDE_TYPE_F16 && t->kind <= OXIDE_TYPE_F64);
}

static oxide_status add_slot(ti_state *s, oxide_value *v, uint32_t *next) {
    if (!type_ok(v->type))
        return oxide__ti_fail(s, OXIDE_ERROR_UNSUPPORTED, "values of type %s are not interpreted", v->type->name);
    v->id = (*next)++;
    return OXIDE_OK;
}

static oxide_status number_values(ti_state *s) {
    oxide_function *fn = s->fn;
    uint32_t n = 0;
    oxide_status st = OXIDE_OK;
    for (uint32_t i = 0; !st && i < fn->params.len; i++)
        st = add_slot(s, fn->params.items[i], &n);
    for (uint32_t b = 0; !st && b < fn->blocks.len; b++) {
        oxide_block *bl = fn->blocks.items[b];
        for (uint32_t i = 0; !st && i < bl->params.len; i++)
            st = add_slot(s, bl->params.items[i], &n);
        for (uint32_t i = 0; !st && i < bl->insts.len; i++) {
            oxide_inst *in = bl->insts.items[i];
            s->in = in;
            if (in->result)
                st = add_slot(s, in->result, &n);
        }
    }
    s->in = NULL;
    if (st)
        return st;
    s->nslots = n;
    s->slots = calloc(n ? n : 1, sizeof *s->slots);
    if (!s->slots)
        return oxide__ti_fail(s, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    return OXIDE_OK;
}

static void set_slot_types(ti_state *s) {
    oxide_function *fn = s->fn;
    for (uint32_t i = 0; i < fn->params.len; i++) {
        oxide_value *v = fn->params.items[i];
        s->slots[v->id] = (ti_slot){.type = v->type, .n = 1};
    }
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        oxide_block *bl = fn->blocks.items[b];
        for (uint32_t i = 0; i < bl->params.len; i++) {
            oxide_value *v = bl->params.items[i];
            s->slots[v->id] =
                (ti_slot){.type = v->type, .n = v->type->kind == OXIDE_TYPE_TILE ? oxide__tile_elems(v->type) : 1};
        }
        for (uint32_t i = 0; i < bl->insts.len; i++) {
            oxide_value *v = ((oxide_inst *)bl->insts.items[i])->result;
            if (v)
                s->slots[v->id] =
                    (ti_slot){.type = v->type, .n = v->type->kind == OXIDE_TYPE_TILE ? oxide__tile_elems(v->type) : 1};
        }
    }
}

static void free_state(ti_state *s) {
    for (uint32_t i = 0; s->slots && i < s->nslots; i++) {
        free(s->slots[i].data);
        free(s->slots[i].spare);
        free(s->slots[i].tensor);
    }
    free(s->slots);
}

/* ---- the walker ---- */

/* Element operations an op costs (at least 1), charged before it runs. */
static uint64_t cost(ti_state *s, const oxide_inst *in) {
    if (in->op == OXIDE_OP_TILE_DOT) {
        const oxide_type *a = in->operands[0]->type, *b = in->operands[1]->type;
        return oxide__tile_elems(a) * b->shape[b->rank - 1];
    }
    uint64_t n = in->result ? ti_get(s, in->result)->n : 1;
    for (uint32_t i = 0; i < in->noperands; i++)
        if (in->operands[i]->type->kind == OXIDE_TYPE_TILE && ti_get(s, in->operands[i])->n > n)
            n = ti_get(s, in->operands[i])->n;
    for (uint32_t i = 0; i < in->nsucc; i++)
        for (uint32_t j = 0; j < in->succ[i].nargs; j++)
            n += ti_get(s, in->succ[i].args[j])->n;
    return n;
}

/* Block arguments are copied in parallel: all are read before any parameter is written. */
static oxide_status jump(ti_state *s, const oxide_succ *sc) {
    oxide_block *to = sc->block;
    for (uint32_t i = 0; i < sc->nargs; i++) {
        ti_slot *p, *a = ti_get(s, sc->args[i]);
        oxide_status st = oxide__ti_def(s, to->params.items[i], &p);
        if (st)
            return st;
        memcpy(p->spare, a->data, p->n * sizeof *p->data);
    }
    for (uint32_t i = 0; i < sc->nargs; i++) {
        ti_slot *p = ti_get(s, to->params.items[i]);
        ti_cell *t = p->data;
        p->data = p->spare;
        p->spare = t;
    }
    return OXIDE_OK;
}

static oxide_status run_inst(ti_state *s, const oxide_inst *in) {
    switch (in->op) {
    case OXIDE_OP_TILE_PROGRAM_ID:
    case OXIDE_OP_TILE_NUM_PROGRAMS:
    case OXIDE_OP_TILE_DIM:
    case OXIDE_OP_TILE_LOAD:
    case OXIDE_OP_TILE_STORE:
    case OXIDE_OP_TILE_ATOMIC_ADD:
    case OXIDE_OP_TILE_PRINT: return oxide__ti_mem(s, in);
    default: return oxide__is_tile_op(in->op) ? oxide__ti_shape(s, in) : oxide__ti_simt(s, in);
    }
}

static oxide_status run_program(ti_state *s) {
    oxide_block *b = s->fn->blocks.items[0];
    for (;;) {
        oxide_block *next = NULL;
        for (uint32_t i = 0; !next && i < b->insts.len; i++) {
            const oxide_inst *in = b->insts.items[i];
            s->in = in;
            uint64_t c = cost(s, in);
            if (c > s->max_steps - s->steps)
                return oxide__ti_fail(s, OXIDE_ERROR_UNSUPPORTED,
                                      "the run passed its budget of %llu element operations "
                                      "(oxide_interp_options.max_steps): an endless loop, or a larger budget needed",
                                      (unsigned long long)s->max_steps);
            s->steps += c;
            oxide_status st = OXIDE_OK;
            const oxide_succ *sc = NULL;
            if (in->op == OXIDE_OP_RET)
                return OXIDE_OK;
            if (in->op == OXIDE_OP_BR)
                sc = &in->succ[0];
            else if (in->op == OXIDE_OP_COND_BR)
                sc = &in->succ[ti_get(s, in->operands[0])->data[0].i & 1 ? 0 : 1];
            else
                st = run_inst(s, in);
            if (!st && sc && !(st = jump(s, sc)))
                next = sc->block;
            if (st)
                return st;
        }
        if (!next)
            return oxide__ti_fail(s, OXIDE_ERROR_VERIFY, "block ^%u ends without a terminator", b->index);
        b = next;
    }
}

/* ---- arguments ---- */

/* The oxide_scalar element types a tensor of element k accepts: the one a launch takes
 * (oxide__tensor_elem_scalar), and, since host arrays often lack the type, either sign of an
 * integer (integers are signless in the IR) and u8 for the bit patterns of fp8. */
static bool tensor_elem_ok(oxide_type_kind k, oxide_scalar e) {
    switch (k) {
    case OXIDE_TYPE_I8: return e == OXIDE_SCALAR_I8 || e == OXIDE_SCALAR_U8;
    case OXIDE_TYPE_I32: return e == OXIDE_SCALAR_I32 || e == OXIDE_SCALAR_U32;
    case OXIDE_TYPE_I64: return e == OXIDE_SCALAR_I64 || e == OXIDE_SCALAR_U64;
    case OXIDE_TYPE_F16: return e == OXIDE_SCALAR_F16;
    case OXIDE_TYPE_BF16: return e == OXIDE_SCALAR_BF16;
    case OXIDE_TYPE_F32: return e == OXIDE_SCALAR_F32;
    case OXIDE_TYPE_F8E4M3: return e == OXIDE_SCALAR_F8E4M3 || e == OXIDE_SCALAR_U8;
    case OXIDE_TYPE_F8E5M2: return e == OXIDE_SCALAR_F8E5M2 || e == OXIDE_SCALAR_U8;
    default: return false;
    }
}

static const char *scalar_name(oxide_scalar s) {
    const char *n = oxide_scalar_name(s);
    return n ? n : "?";
}

static oxide_status bad_arg(ti_state *s, uint32_t i, const oxide_iface_param *ip, const oxide_arg *a) {
    char want[128], got[128];
    const char *hint = "";
    if (ip->kind == OXIDE_PARAM_SCALAR)
        snprintf(want, sizeof want, "a scalar %s", scalar_name(ip->scalar));
    else
        snprintf(want, sizeof want, "a %s %s", ip->tensor->is_mutable ? "mutable" : "read-only", ip->tensor->name);
    if (a->kind == OXIDE_ARG_SCALAR)
        snprintf(got, sizeof got, "a scalar %s", scalar_name(a->type));
    else if (a->kind == OXIDE_ARG_TENSOR && a->bytes) {
        const oxide_tensor *t = a->bytes;
        snprintf(got, sizeof got, "a %s rank-%u tensor of %s", t->is_mutable ? "mutable" : "read-only", t->rank,
                 scalar_name(t->elem));
        if (ip->kind == OXIDE_PARAM_TENSOR && ip->tensor->is_mutable && !t->is_mutable)
            hint = " (set is_mutable in the oxide_tensor)";
        else if (ip->kind == OXIDE_PARAM_TENSOR && oxide__type_is_fp8(ip->tensor->elem))
            hint = " (an fp8 tensor is passed with elem u8: its bit patterns)";
    } else
        snprintf(got, sizeof got, "an argument of kind %d%s", (int)a->kind,
                 a->kind == OXIDE_ARG_TENSOR ? " whose tensor is NULL" : "");
    const char *name = ip->name ? ip->name : "?";
    return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH, "argument %u '%s' is %s, got %s%s", i + 1, name, want, got, hint);
}

/* The tensor's elements lie within one address range computable without overflow, so that
 * address() in interp_mem.c never overflows for in-bounds indices. */
static bool tensor_extent_ok(const oxide_tensor *t, int64_t esize) {
    int64_t lo = 0, hi = 0;
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t span;
        if (__builtin_mul_overflow(t->strides[d], t->shape[d] - 1, &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
            return false;
    }
    uint64_t base;
    int64_t lob, hib;
    if (__builtin_mul_overflow(lo, esize, &lob) || __builtin_mul_overflow(hi, esize, &hib) ||
        __builtin_add_overflow(t->data, t->byte_offset, &base))
        return false;
    return base >= (uint64_t)-lob && UINT64_MAX - base > (uint64_t)hib + (uint64_t)esize;
}

static oxide_status bind_tensor(ti_state *s, uint32_t i, const oxide_iface_param *ip, const oxide_arg *a) {
    const oxide_type *tt = ip->tensor;
    if (a->kind != OXIDE_ARG_TENSOR || !a->bytes)
        return bad_arg(s, i, ip, a);
    const oxide_tensor *t = a->bytes;
    const char *name = ip->name ? ip->name : "?";
    if (t->struct_size < sizeof(oxide_tensor))
        return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH,
                              "argument %u '%s': the oxide_tensor's struct_size is %zu, less than this version's %zu "
                              "(set it to sizeof(oxide_tensor))",
                              i + 1, name, t->struct_size, sizeof(oxide_tensor));
    if (t->rank != tt->rank || !tensor_elem_ok(tt->elem->kind, t->elem) || (tt->is_mutable && !t->is_mutable))
        return bad_arg(s, i, ip, a);
    bool empty = false;
    for (uint32_t d = 0; d < t->rank; d++) {
        if (t->shape[d] < 0)
            return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH, "argument %u '%s': shape[%u] is %lld; sizes are >= 0", i + 1,
                                  name, d, (long long)t->shape[d]);
        empty |= t->shape[d] == 0;
    }
    int64_t esize = (int64_t)oxide_scalar_size(t->elem);
    if (!empty && !t->data)
        return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH, "argument %u '%s': data is NULL but the tensor has elements",
                              i + 1, name);
    if (!empty && !tensor_extent_ok(t, esize))
        return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH,
                              "argument %u '%s': its shape and strides reach past the address space", i + 1, name);
    ti_slot *sl = &s->slots[((oxide_value *)s->fn->params.items[ip->first_value])->id];
    ti_tensor *x = sl->tensor = calloc(1, sizeof *x);
    if (!x)
        return oxide__ti_fail(s, OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
    x->base = (uint8_t *)(uintptr_t)(t->data + t->byte_offset);
    x->rank = t->rank;
    x->elem = tt->elem;
    for (uint32_t d = 0; d < t->rank; d++) {
        x->shape[d] = empty ? 0 : t->shape[d];
        x->strides[d] = t->strides[d];
    }
    return OXIDE_OK;
}

static oxide_status bind_args(ti_state *s, const oxide_arg *args, size_t nargs) {
    oxide_function *fn = s->fn;
    if (nargs != fn->iface.len || (nargs && !args)) {
        char list[400] = "";
        size_t used = 0;
        for (uint32_t i = 0; i < fn->iface.len && used < sizeof list - 1; i++) {
            const oxide_iface_param *ip = fn->iface.items[i];
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", ip->name ? ip->name : "?");
        }
        return oxide__ti_fail(s, OXIDE_ERROR_LAUNCH, "expects %u argument%s (%s), got %zu", fn->iface.len,
                              fn->iface.len == 1 ? "" : "s", list, args ? nargs : 0);
    }
    for (uint32_t i = 0; i < nargs; i++) {
        const oxide_iface_param *ip = fn->iface.items[i];
        const oxide_arg *a = &args[i];
        if (ip->kind == OXIDE_PARAM_TENSOR) {
            oxide_status st = bind_tensor(s, i, ip, a);
            if (st)
                return st;
            continue;
        }
        if (a->kind != OXIDE_ARG_SCALAR || a->type != ip->scalar)
            return bad_arg(s, i, ip, a);
        ti_slot *sl;
        oxide_status st = oxide__ti_def(s, fn->params.items[ip->first_value], &sl);
        if (st)
            return st;
        uint64_t size = oxide_scalar_size(ip->scalar),
                 bits = size >= 8 ? a->value : a->value & ((1ull << (8 * size)) - 1);
        sl->data[0] = oxide__ti_from_bits(ti_kind(sl->type), bits);
    }
    return OXIDE_OK;
}

/* ---- the entry point ---- */

static oxide_status read_options(const oxide_interp_options *o, ti_state *s) {
    s->max_steps = DEFAULT_MAX_STEPS;
    s->max_bytes = DEFAULT_MAX_MEMORY;
    if (!o)
        return OXIDE_OK;
    if (o->struct_size < offsetof(oxide_interp_options, user) + sizeof o->user)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_tile_interpret: options struct_size is %zu; set it to sizeof(oxide_interp_options)",
                           o->struct_size);
    s->print = o->print;
    s->user = o->user;
    if (o->struct_size >= offsetof(oxide_interp_options, max_steps) + sizeof o->max_steps && o->max_steps)
        s->max_steps = o->max_steps;
    if (o->struct_size >= offsetof(oxide_interp_options, max_memory) + sizeof o->max_memory && o->max_memory)
        s->max_bytes = o->max_memory;
    return OXIDE_OK;
}

static oxide_status find_kernel(oxide_module *mod, const char *kernel, oxide_function **out) {
    oxide_function *fn = oxide__module_find_function(mod, kernel);
    if (!fn)
        return oxide__fail(OXIDE_ERROR_NOT_FOUND, "interpret: module %s has no kernel @%s", mod->name, kernel);
    if (!fn->is_tile)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "interpret @%s: it is a %s, and the interpreter runs tile kernels only (tile_kernel)",
                           kernel, fn->is_kernel ? "SIMT kernel" : "device function");
    *out = fn;
    return OXIDE_OK;
}

static oxide_status run_grid(ti_state *s) {
    for (uint32_t z = 0; z < s->grid[2]; z++)
        for (uint32_t y = 0; y < s->grid[1]; y++)
            for (uint32_t x = 0; x < s->grid[0]; x++) {
                s->pid[0] = x, s->pid[1] = y, s->pid[2] = z;
                oxide_status st = run_program(s);
                if (st)
                    return st;
            }
    return OXIDE_OK;
}

oxide_status oxide_tile_interpret(oxide_module *mod, const char *kernel, const uint32_t grid[3], const oxide_arg *args,
                                  size_t nargs, const oxide_interp_options *opts) {
    if (!mod || !kernel || !grid)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_tile_interpret: module, kernel or grid is NULL");
    ti_state s = {0};
    oxide_status st = read_options(opts, &s);
    if (st || (st = find_kernel(mod, kernel, &s.fn)))
        return st;
    for (int d = 0; d < 3; d++)
        if (!grid[d] || grid[d] > MAX_GRID)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "interpret @%s: grid is %ux%ux%u; each dim must be 1 to 2^31-1", kernel, grid[0],
                               grid[1], grid[2]);
    if ((st = oxide__verify(mod, NULL)))
        return oxide__fail_prefix(st, "interpret @%s", kernel);
    memcpy(s.grid, grid, sizeof s.grid);
    if (!(st = number_values(&s))) {
        set_slot_types(&s);
        if (!(st = bind_args(&s, args, nargs)))
            st = run_grid(&s);
    }
    free_state(&s);
    return st;
}
