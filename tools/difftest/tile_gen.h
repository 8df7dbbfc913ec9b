/* Random tile kernels for the differential tester, deterministic from a seed (docs/reliability.md,
 * "Tile programs").
 *
 * Each program is one tile kernel in IR text and the same program as a JSON structure (for the
 * NumPy evaluator of tests/bindings/python/test_tile_difftest.py, which never reads the IR). It
 * loads tiles of random power-of-two shapes (rank 1-3; f32, bf16, f16, i32, i8) from 1-4 tensor
 * parameters at offsets partly out of bounds (padding), combines them with elementwise
 * arithmetic, math, compares and selects, casts, broadcast / expand_dims / reshape / permute,
 * reductions over any axis, tile.dot (bf16 or f16 into f32), counted loops carrying a tile and
 * branches on a scalar, and stores the result (each program instance its own part of the
 * output), sometimes also an i32 atomic add that every instance adds into (the sum does not
 * depend on their order) or an f32 atomic add into disjoint parts.
 *
 * Every float value carries a bound on its magnitude and on how far two correct implementations
 * may differ (tolerance), computed as the program is generated: IEEE ops on values both sides
 * hold exactly agree exactly; math functions (libm vs libdevice vs NumPy), dot and sum order
 * (tensor cores, shuffles), LLVM's contraction of a product into a following add, fma, and
 * roundings of values that already differ add their error bound (docs/reliability.md gives the
 * rules). Values are kept where results are well conditioned: inputs in +-[1/8, 1], magnitudes
 * scaled back by powers of two past 8, exp only of arguments within +-4, divisors >= 1, and
 * discontinuous ops (floor, ceil, compares, float-to-int casts) only of values known exactly. */
#ifndef OXIDE_DIFFTEST_TILE_GEN_H
#define OXIDE_DIFFTEST_TILE_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TG_MAX_TENSORS 6
#define TG_MAX_INPUTS 4

typedef enum tg_elem { TG_I1, TG_I8, TG_I32, TG_F16, TG_BF16, TG_F32, TG_NELEM } tg_elem;

typedef enum tg_kind {
    TG_IN,         /* read with tile.load */
    TG_STORE,      /* tile.store, each program instance its own part */
    TG_ATOMIC_INT, /* i32 tile.atomic_add, every instance into the same elements */
    TG_ATOMIC_F32  /* f32 tile.atomic_add, each instance its own part */
} tg_kind;

typedef struct tg_tensor {
    char name[8];
    tg_elem elem;
    tg_kind kind;
    uint32_t rank;
    int64_t dim[3], stride[3]; /* strides in elements, any sign */
    int64_t base;              /* element offset of [0, ..] in the storage */
    int64_t storage;           /* elements of the buffer behind the view */
    double lo, hi;             /* values: floats +-[lo, hi], integers lo..hi (never 0) */
    double tol;                /* outputs: absolute tolerance of each written element (0: exact) */
} tg_tensor;

typedef struct tg_program {
    uint64_t seed;
    char name[32];
    char *text; /* the tile kernel, without a module line (malloc) */
    char *json; /* the program's structure, one line (malloc) */
    uint32_t ntensors;
    tg_tensor t[TG_MAX_TENSORS]; /* parameters in order; then the scalars %n: i32, %x: f32 */
    int32_t n;                   /* scalar %n: loop trips and branch conditions, 0..3 */
    float x;                     /* scalar %x, +-[1/8, 1] */
    uint32_t grid[3];
    uint32_t warps;
    uint32_t group; /* the group hint (grouped program order), 0 = none */
} tg_program;

/* Generate the program of seed, its kernel named name. Returns 0, -1 on out of memory. */
int tg_generate(uint64_t seed, const char *name, tg_program *p);
/* A blocked matmul instead (tile_dot.c: operands big enough for shared-memory staging). */
int tg_generate_dot(uint64_t seed, const char *name, tg_program *p);
void tg_program_free(tg_program *p);
uint32_t tg_elem_size(tg_elem e);
const char *tg_elem_name(tg_elem e);
bool tg_is_float(tg_elem e);

#endif
