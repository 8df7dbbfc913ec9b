/* The tile interpreter's state, shared by its files (docs/tile.md, "The interpreter"):
 * interp.c (the entry point, argument checks, the block walker), interp_elem.c (constants, the
 * SIMT rows on scalars and tiles, scalar casts), interp_mem.c (tensor access and tile.print) and
 * interp_shape.c (tile.dot, tile.reduce, tile.cast and the shape ops). Not installed. */
#ifndef OXIDE_TILE_INTERP_H
#define OXIDE_TILE_INTERP_H

#include "../ir.h"
#include "floatfmt.h"

/* One element: integers sign-extended to 64 bits (i1 is 0 or 1), floats as the double of their
 * value (exact for every element type; f16, bf16 and fp8 are rounded to their format). */
typedef union ti_cell {
    int64_t i;
    double f;
} ti_cell;

typedef struct ti_tensor {
    uint8_t *base; /* element [0, .., 0]: data + byte_offset */
    int64_t shape[4], strides[4];
    uint32_t rank;
    const oxide_type *elem;
} ti_tensor;

/* The storage of one SSA value: n cells (1 for a scalar), allocated at its first definition and
 * reused by later ones (a loop redefines its values each iteration). */
typedef struct ti_slot {
    const oxide_type *type;
    ti_cell *data;
    ti_cell *spare;    /* block parameters: the incoming value while a branch copies its arguments */
    ti_tensor *tensor; /* tensor parameters */
    uint64_t n;
} ti_slot;

typedef struct ti_state {
    oxide_function *fn;
    ti_slot *slots; /* indexed by oxide_value.id */
    uint32_t nslots;
    uint32_t pid[3], grid[3];
    uint64_t steps, max_steps, bytes, max_bytes;
    void (*print)(void *user, const char *text);
    void *user;
    const oxide_inst *in; /* the op being run (messages name it) */
} ti_state;

/* Fail naming the kernel, the program instance and the op being run. */
oxide_status oxide__ti_fail(ti_state *s, oxide_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The slot of v, its storage allocated (n cells) within the memory budget. */
oxide_status oxide__ti_def(ti_state *s, const oxide_value *v, ti_slot **out);
static inline ti_slot *ti_get(ti_state *s, const oxide_value *v) { return &s->slots[v->id]; }

/* The element (or scalar) type kind of a value's type. */
static inline oxide_type_kind ti_kind(const oxide_type *t) { return oxide__tile_scalar(t)->kind; }
bool oxide__ti_is_float(oxide_type_kind k);
unsigned oxide__ti_bits(oxide_type_kind k); /* integer width (i1: 1) */
/* x (any bits) as the canonical cell of an integer kind: sign-extended, i1 0 or 1. */
int64_t oxide__ti_wrap(oxide_type_kind k, uint64_t x);
/* v rounded to a float kind (f16/bf16/f32: to nearest even, overflow to infinity; fp8: saturated). */
double oxide__ti_round(oxide_type_kind k, double v);
/* tile.cast of one element from kind a to kind b (docs/tile.md, "Semantics"). */
ti_cell oxide__ti_convert(oxide_type_kind a, oxide_type_kind b, ti_cell x);
/* The cell of a scalar of kind k from its bit pattern (f16, bf16: their 16 bits). */
ti_cell oxide__ti_from_bits(oxide_type_kind k, uint64_t bits);
/* Printable text of a cell of kind k. */
void oxide__ti_format(oxide_type_kind k, ti_cell x, char *out, size_t cap);

/* Each runs one op of its group; in is s->in. */
oxide_status oxide__ti_simt(ti_state *s, const oxide_inst *in);
oxide_status oxide__ti_mem(ti_state *s, const oxide_inst *in);
oxide_status oxide__ti_shape(ti_state *s, const oxide_inst *in);

#endif
