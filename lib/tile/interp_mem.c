/* The tile interpreter's tensor access (tile.load, tile.store, tile.atomic_add, tile.dim), the
 * grid ops and tile.print. Elements outside the tensor read the load's pad and are skipped by
 * stores; in-bounds elements are read and written in row-major order of the tile, so where a
 * tensor's strides map two elements to one address the later one is what remains. */
#include <stdio.h>
#include <string.h>

#include "interp.h"

static size_t elem_size(oxide_type_kind k) {
    switch (k) {
    case OXIDE_TYPE_I8:
    case OXIDE_TYPE_F8E4M3:
    case OXIDE_TYPE_F8E5M2: return 1;
    case OXIDE_TYPE_F16:
    case OXIDE_TYPE_BF16: return 2;
    case OXIDE_TYPE_I32:
    case OXIDE_TYPE_F32: return 4;
    default: return 8;
    }
}

/* Memory is read and written with memcpy: a tensor's elements need not be aligned on the host. */
static ti_cell read_elem(oxide_type_kind k, const uint8_t *p) {
    ti_cell c;
    switch (k) {
    case OXIDE_TYPE_I8: c.i = (int8_t)p[0]; break;
    case OXIDE_TYPE_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        c.i = v;
        break;
    }
    case OXIDE_TYPE_I64: memcpy(&c.i, p, 8); break;
    case OXIDE_TYPE_F32: {
        float v;
        memcpy(&v, p, 4);
        c.f = v;
        break;
    }
    case OXIDE_TYPE_F8E4M3: c.f = oxide__ffmt_decode(&oxide__ffmt_e4m3, p[0]); break;
    case OXIDE_TYPE_F8E5M2: c.f = oxide__ffmt_decode(&oxide__ffmt_e5m2, p[0]); break;
    default: { /* F16, BF16 */
        uint16_t v;
        memcpy(&v, p, 2);
        c.f = oxide__ffmt_decode(k == OXIDE_TYPE_F16 ? &oxide__ffmt_f16 : &oxide__ffmt_bf16, v);
    }
    }
    return c;
}

static void write_elem(oxide_type_kind k, uint8_t *p, ti_cell c) {
    switch (k) {
    case OXIDE_TYPE_I8: p[0] = (uint8_t)c.i; break;
    case OXIDE_TYPE_I32: {
        int32_t v = (int32_t)c.i;
        memcpy(p, &v, 4);
        break;
    }
    case OXIDE_TYPE_I64: memcpy(p, &c.i, 8); break;
    case OXIDE_TYPE_F32: {
        float v = (float)c.f;
        memcpy(p, &v, 4);
        break;
    }
    /* fp8 elements hold fp8 values already (casts rounded and saturated them): an e5m2 infinity
     * stays one, as the GPU stores the element's bits */
    case OXIDE_TYPE_F8E4M3: p[0] = (uint8_t)oxide__ffmt_encode(&oxide__ffmt_e4m3, c.f, false); break;
    case OXIDE_TYPE_F8E5M2: p[0] = (uint8_t)oxide__ffmt_encode(&oxide__ffmt_e5m2, c.f, false); break;
    default: { /* F16, BF16 */
        uint16_t v =
            (uint16_t)oxide__ffmt_encode(k == OXIDE_TYPE_F16 ? &oxide__ffmt_f16 : &oxide__ffmt_bf16, c.f, false);
        memcpy(p, &v, 2);
    }
    }
}

/* The address of tile element idx (row-major over the tile's shape) at the op's offsets, or NULL
 * where any index falls outside the tensor. The argument checks made every in-bounds address
 * computable without overflow. */
static uint8_t *address(const ti_tensor *t, const int64_t *off, const uint32_t *idx) {
    int64_t elems = 0;
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t g;
        if (__builtin_add_overflow(off[d], (int64_t)idx[d], &g) || g < 0 || g >= t->shape[d])
            return NULL;
        elems += g * t->strides[d];
    }
    return t->base + elems * (int64_t)elem_size(t->elem->kind);
}

static void next_index(const oxide_type *tile, uint32_t *idx) {
    for (uint32_t d = tile->rank; d-- > 0;) {
        if (++idx[d] < tile->shape[d])
            return;
        idx[d] = 0;
    }
}

static oxide_status access(ti_state *s, const oxide_inst *in) {
    const ti_tensor *t = ti_get(s, in->operands[0])->tensor;
    int64_t off[4] = {0};
    for (uint32_t d = 0; d < t->rank; d++)
        off[d] = ti_get(s, in->operands[1 + d])->data[0].i;
    /* a load's result was defined by oxide__ti_mem */
    ti_slot *x = ti_get(s, in->op == OXIDE_OP_TILE_LOAD ? in->result : in->operands[1 + t->rank]);
    oxide_type_kind k = t->elem->kind;
    ti_cell pad;
    if (oxide__ti_is_float(k))
        pad.f = in->fvalue;
    else
        pad.i = in->ivalue;
    uint32_t idx[3] = {0, 0, 0};
    for (uint64_t e = 0; e < x->n; e++, next_index(x->type, idx)) {
        uint8_t *p = address(t, off, idx);
        if (in->op == OXIDE_OP_TILE_LOAD) {
            x->data[e] = p ? read_elem(k, p) : pad;
        } else if (p && in->op == OXIDE_OP_TILE_STORE) {
            write_elem(k, p, x->data[e]);
        } else if (p) { /* atomic_add: f32 or i32 */
            ti_cell old = read_elem(k, p), sum;
            if (k == OXIDE_TYPE_F32)
                sum.f = (float)((float)old.f + (float)x->data[e].f);
            else
                sum.i = oxide__ti_wrap(k, (uint64_t)old.i + (uint64_t)x->data[e].i);
            write_elem(k, p, sum);
        }
    }
    return OXIDE_OK;
}

/* "pid(X,Y,Z) NAME[I,J] = VALUE", one line per element (a scalar has no index). */
static void print_value(ti_state *s, const oxide_inst *in) {
    const ti_slot *x = ti_get(s, in->operands[0]);
    const oxide_type *t = x->type;
    oxide_type_kind k = ti_kind(t);
    uint32_t idx[3] = {0, 0, 0};
    for (uint64_t e = 0; e < x->n; e++, next_index(t, idx)) {
        char line[400], val[64], where[48] = ""; /* room for the longest of each part */
        size_t n = 0;
        for (uint32_t d = 0; t->kind == OXIDE_TYPE_TILE && d < t->rank; d++)
            n += (size_t)snprintf(where + n, sizeof where - n, "%s%u", d ? "," : "[", idx[d]);
        if (n)
            snprintf(where + n, sizeof where - n, "]");
        oxide__ti_format(k, x->data[e], val, sizeof val);
        snprintf(line, sizeof line, "pid(%u,%u,%u) %.200s%s = %s\n", s->pid[0], s->pid[1], s->pid[2],
                 in->str ? in->str : "", where, val);
        s->print(s->user, line);
    }
}

oxide_status oxide__ti_mem(ti_state *s, const oxide_inst *in) {
    ti_slot *r = NULL;
    oxide_status st = in->result ? oxide__ti_def(s, in->result, &r) : OXIDE_OK;
    if (st)
        return st;
    switch (in->op) {
    case OXIDE_OP_TILE_PROGRAM_ID: r->data[0].i = s->pid[in->imm]; return OXIDE_OK;
    case OXIDE_OP_TILE_NUM_PROGRAMS: r->data[0].i = s->grid[in->imm]; return OXIDE_OK;
    case OXIDE_OP_TILE_DIM: r->data[0].i = ti_get(s, in->operands[0])->tensor->shape[in->imm]; return OXIDE_OK;
    case OXIDE_OP_TILE_PRINT:
        if (s->print)
            print_value(s, in);
        return OXIDE_OK;
    default: return access(s, in);
    }
}
