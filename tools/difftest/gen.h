/* Random kernels for the differential tester, deterministic from a seed.
 *
 * Each program is one kernel in oxide IR text: integer (i1..i64) and float (f32, f64) arithmetic,
 * casts, loads from 1-3 random input slices and a scalar, two- and three-way branches (cond_br,
 * switch) and bounded loops (nested up to two deep; branches may diverge), and, in the kernel's
 * uniform top-level code, shared-memory exchanges between barriers and warp shuffles. Each
 * thread writes its own elements of one output slice.
 *
 * The generator never produces what LLVM leaves undefined or open, or what the GPU computes
 * differently from IEEE: divisors are made non-zero and positive, shift amounts are masked,
 * float-to-integer conversions are clamped first, fmin/fmax results get + 0.0 (LLVM leaves the
 * sign of a zero result open), float add/sub never take a mul or fdiv, or a value LLVM may reduce
 * to one (its negation, fabs, floor, ...), as an operand (so contraction into fma, which oxide
 * enables, changes nothing), and libdevice math results (approximate) only go straight to the
 * output, with a tolerance. */
#ifndef OXIDE_DIFFTEST_GEN_H
#define OXIDE_DIFFTEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "oxide.h"

#define DT_MAX_INPUTS 3

typedef struct dt_input {
    oxide_scalar elem; /* I32, I64, F32 or F64 */
    uint32_t len;
    uint8_t *data; /* len elements, never all zero */
} dt_input;

typedef struct dt_program {
    uint64_t seed;
    char name[32];
    char *text; /* the kernel and its shared global, without a module line (malloc) */
    uint32_t ninputs;
    dt_input in[DT_MAX_INPUTS];
    uint32_t scalar; /* the i32 scalar argument */
    oxide_scalar out_elem;
    uint32_t out_len; /* grid * block * outputs per thread */
    uint32_t grid, block;
} dt_program;

/* Generate the program of seed, its kernel named name. Returns 0, -1 on out of memory. */
int dt_generate(uint64_t seed, const char *name, dt_program *p);
void dt_program_free(dt_program *p);
uint32_t dt_scalar_size(oxide_scalar s);

#endif
