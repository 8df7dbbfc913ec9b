/* What the reference interpreter's files (interp.c: threads, memory, scalar ops; interp_warp.c:
 * the ops a warp or a thread's copy queue completes together) share. Not installed. */
#ifndef OXIDE_DIFFTEST_INTERP_PRIV_H
#define OXIDE_DIFFTEST_INTERP_PRIV_H

#include <stdbool.h>

#include "interp.h"
#include "ir.h"

/* A pointer is (region << 40) | byte offset; region 0 is null. Regions: the arguments' buffers,
 * then the module's globals, then dynamic shared memory. */
#define REGION_SHIFT 40
#define OFFSET_MASK ((1ull << REGION_SHIFT) - 1)

/* Where dynamic shared memory starts in its region: 16-byte aligned only, as it may be on the GPU,
 * so that code aligning it further is tested. */
#define DYN_SMEM_AT 16u

/* Each value takes two 64-bit slots (a 128-bit vector both, anything else the first). */
#define SLOTS 2

typedef struct region {
    uint8_t *data;
    uint8_t *written; /* shared memory: 1 where a thread of this block stored */
    uint8_t *tol;     /* argument buffers: the caller's tolerance map (per element) */
    uint64_t size;
    uint32_t elem_size;
    bool is_shared;
} region;

enum { T_RUN, T_WAIT, T_WARP, T_DONE }; /* WAIT: at a barrier; WARP: at a warp op */

/* A cp.async copy in flight: its bytes (read when issued) and where they land. */
typedef struct dt_copy {
    uint64_t dst;
    uint8_t data[16];
    uint32_t size;
    uint32_t group; /* the commit group; the open group is thread.groups */
} dt_copy;

typedef struct thread {
    uint64_t *regs;
    uint8_t *tol;
    oxide_block *block;
    uint32_t pc;
    int state;
    uint32_t tid[3];
    dt_copy *copies;
    uint32_t ncopies, capcopies, groups;
} thread;

typedef struct interp {
    oxide_function *fn;
    const dt_launch *L;
    region *regions;
    uint32_t nregions, first_global, dyn_region;
    uint32_t nvals;
    uint64_t steps, step_limit, mem, mem_limit;
    uint32_t ctaid[3];
    char *err;
    size_t errlen;
    bool failed;
    bool unmodelled;  /* the failure is a construct the interpreter does not model */
    uint64_t *argtmp; /* branch arguments are read before any parameter is written */
    uint8_t *argtol;
    thread *threads;
    uint64_t nthreads;
} interp;

static inline uint32_t vidx(const oxide_value *v) { return SLOTS * (uint32_t)(uintptr_t)v->scratch; }

/* Records the first failure (naming the instruction when in is not NULL); returns -1. */
int dt__failf(interp *I, const oxide_inst *in, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The region behind ptr with size bytes at *off, or NULL after failing. */
region *dt__resolve(interp *I, const oxide_inst *in, uint64_t ptr, uint64_t size, uint64_t *off);
/* size bytes at ptr into out (shared memory: every byte written before). Returns 0 or -1. */
int dt__read(interp *I, const oxide_inst *in, uint64_t ptr, uint64_t size, void *out);

/* ---- interp_warp.c ---- */
bool dt__is_warp_op(oxide_op op);
/* The warp ops every thread of th waits at, warp by warp. Returns 0 or -1. */
int dt__resolve_warps(interp *I, thread *th, uint32_t nthreads);
/* cp.async, its commit and its wait (a thread's own queue). Returns 0, -1, or 1: not one of them. */
int dt__exec_copy(interp *I, thread *t, const oxide_inst *in);

#endif
