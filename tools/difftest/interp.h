/* A reference interpreter for oxide's SIMT IR: the oracle of the differential tester.
 *
 * It reads the IR structures of lib/ir.h (a module from oxide_module_parse) and shares no code
 * with the lowering or LLVM. Semantics:
 *  - One launch runs its blocks one after another. In a block, threads run in barrier-separated
 *    phases: each thread runs until it reaches `barrier` or returns, then the next thread; a
 *    barrier releases when every thread of the block waits at the same barrier. Threads that
 *    return while others wait, or wait at different barriers, are an error (divergent barrier).
 *  - Warp shuffles (full mask) meet like a barrier of the warp's 32 threads; a shuffle that some
 *    lanes do not reach is an error.
 *  - Shared memory (shared globals, dyn_smem) is per block; reading a shared byte that no thread
 *    of the block wrote is an error. Global memory is the caller's buffers, bounds-checked.
 *  - Integer ops are bit-exact with LLVM's semantics; where LLVM gives poison or undefined
 *    behaviour (division by zero, sdiv INT_MIN / -1, shifts >= the width, fptosi out of range)
 *    the run stops with an error, so a generator bug never passes as a result.
 *  - Float ops are IEEE in the op's type (C float/double, round to nearest even). Math functions
 *    that libdevice computes approximately (exp, log, sin, ...) are computed with the C library
 *    and their results carry a tolerance in ulps (DT_MATH_ULPS), which a store records in the
 *    buffer's tolerance map so that the comparison knows which elements are approximate.
 *  - Bounded: step and memory limits; exceeding one is an error, never a hang.
 *  - Vectors of up to 128 bits and i128 are values like any other (loads, stores, insert,
 *    extract, bitcast). f16 and bf16 are bit patterns that only moves, compares and conversions
 *    (fpext, fptrunc, int to float) touch; arithmetic on them is not modelled.
 *  - Atomic adds are a read, an add and a write (threads run one at a time).
 *  - Warp ops (shuffles, ldmatrix, mma.sync m16n8k16 f16/bf16) meet like a barrier of the warp:
 *    each computes what PTX defines for the 32 lanes at once. mma accumulates in double and
 *    rounds once (tensor cores round differently: compare dot results with a tolerance).
 *  - cp.async copies read their source when issued and land in shared memory only at a
 *    cp.async.wait_group that covers their group, so a read the wait does not cover sees the
 *    old bytes, as it may on the GPU.
 * Unsupported constructs (calls, other atomics and warp ops, wgmma, TMA) are errors that name the
 * op. */
#ifndef OXIDE_DIFFTEST_INTERP_H
#define OXIDE_DIFFTEST_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "oxide.h"

/* Tolerance of the libdevice math functions, in ulps of the result type: libdevice's documented
 * maximum error (at most 2 ulps for exp, exp2, log, log2, sin, cos, tanh, erf in f32 and f64)
 * plus glibc's (at most 2 ulps for these). IEEE ops (add, sub, mul, fdiv, fma, sqrt, ...) and the
 * exact libdevice ones (round) have tolerance 0. */
#define DT_MATH_ULPS 4

typedef struct dt_buffer {
    uint8_t *data;
    uint64_t len;       /* elements */
    uint32_t elem_size; /* bytes */
    uint8_t *tol;       /* per element: ulps a store left there (NULL: not recorded) */
} dt_buffer;

typedef struct dt_arg {
    int is_buffer;
    uint64_t bits;  /* scalar: the value, zero-extended */
    dt_buffer *buf; /* slice, ptr or tensor parameter */
    /* tensor parameter: the view of buf (strides in elements, any sign) */
    uint32_t rank;
    const int64_t *shape, *strides;
    uint64_t byte_offset; /* of element [0, ..] in buf */
} dt_arg;

typedef struct dt_launch {
    uint32_t grid[3], block[3];
    uint32_t dyn_smem;
    uint64_t step_limit; /* instructions over all threads; 0: 100 million */
    uint64_t mem_limit;  /* bytes of interpreter state; 0: 256 MiB */
    /* math results carry no tolerance (the caller has its own bound for them), so they may feed
     * any op */
    int untracked_math;
} dt_launch;

/* Run kernel fn (one per interface parameter in args) over the launch. Returns 0, or -1 with a
 * message in err naming the instruction (block index and op) and what went wrong, or -2 (with
 * the message) when the kernel uses what the interpreter does not model. */
int dt_interp_run(oxide_function *fn, const dt_launch *launch, const dt_arg *args, size_t nargs, char *err,
                  size_t errlen);

#endif
