/* kbuild: a thin, error-latching layer over oxide's builder, private to the example kernels.
 *
 * Kernels are long straight-line sequences of builder calls; checking every status by hand
 * would bury the algorithm. Each helper here does nothing once a call has failed, so a kernel
 * builder checks one status at the end and oxide_last_error() still names the first failure.
 *
 * Helpers nest (kb_op2(b, ADD, kb_op2(b, MUL, x, y), z)); where two arguments of one call both
 * build ops, C leaves their order to the compiler, so the op order in the printed IR may differ
 * between C compilers. Every order is valid SSA and gives an equivalent kernel; statements
 * are kept separate where the order is visible (loop bodies). */
#ifndef OXIDE_EXAMPLES_KBUILD_H
#define OXIDE_EXAMPLES_KBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "oxide.h"

typedef struct kb {
    oxide_context *ctx;
    oxide_module *mod;
    oxide_function *fn;
    oxide_block *cur; /* where ops are appended */
    oxide_status st;  /* first failure, or OXIDE_OK */
    oxide_type *void_, *i1, *i8, *i32, *i64, *f32, *v4f32;
    oxide_type *gptr, *sptr, *ptr; /* ptr.global, ptr.shared, generic ptr */
} kb;

/* Start a kernel named name in mod. Parameters come next (kb_*_param), then kb_entry. */
void kb_begin(kb *b, oxide_context *ctx, oxide_module *mod, const char *name);
oxide_value *kb_scalar_param(kb *b, const char *name, oxide_scalar type);
/* Returns the pointer; *len (if not NULL) gets the i64 element count. */
oxide_value *kb_slice_param(kb *b, const char *name, oxide_scalar elem, int is_mutable, oxide_value **len);
/* The kernel's launch bounds (oxide_kernel_set_launch_bounds), before kb_entry. */
void kb_launch_bounds(kb *b, unsigned max_threads, unsigned min_blocks);
/* Adds the entry block and makes it current. */
void kb_entry(kb *b);
/* The status of the whole build (OXIDE_OK if every call succeeded). */
oxide_status kb_end(kb *b);

/* ---- blocks and control flow ---- */
oxide_block *kb_block(kb *b, size_t nparams, oxide_type *const *types, oxide_value **params);
void kb_set(kb *b, oxide_block *blk);
void kb_br(kb *b, oxide_block *dest, oxide_value *const *args, size_t nargs);
void kb_cond_br(kb *b, oxide_value *cond, oxide_block *t, oxide_value *const *targs, size_t nt, oxide_block *f,
                oxide_value *const *fargs, size_t nf);
void kb_ret(kb *b);
/* if (cond) { ... }: makes the then block current and returns the join block; kb_end_if(b, join)
 * ends the then block there and makes join current. */
oxide_block *kb_if(kb *b, oxide_value *cond);
void kb_end_if(kb *b, oxide_block *join);

/* The GEMM kernels' interface (oxide_examples.h): a, b: [elem]; c: mut [f32]; m, n, k: u32. */
typedef struct kb_gemm {
    oxide_value *a, *b, *c, *m, *n, *k;
    oxide_value *alen, *blen, *clen; /* the slices' i64 element counts */
} kb_gemm;
void kb_gemm_params(kb *b, oxide_scalar elem, kb_gemm *g);

/* The row-matrix kernels' interface (oxide_examples.h: softmax, transpose): x: [f32];
 * y: mut [f32]; rows, cols: u32. */
typedef struct kb_matrix {
    oxide_value *x, *y, *rows, *cols;
    oxide_value *xlen, *ylen; /* the slices' i64 element counts */
} kb_matrix;
void kb_matrix_params(kb *b, kb_matrix *m);
/* The end of a GEMM kernel's entry checks: when bad (an i1: a shape the tiling does not cover) or
 * a slice shorter than m x k, k x n or m x n (m64, n64, k64: the sizes as i64), the kernel does
 * nothing rather than touch memory outside its slices. Leaves the block that does the work
 * current and returns the block to end in (it is left empty). */
oxide_block *kb_gemm_guard(kb *b, const kb_gemm *g, oxide_value *bad, oxide_value *m64, oxide_value *n64,
                           oxide_value *k64);

/* A loop whose block parameters are n accumulators of type t, all starting at init, then an i32
 * counter from 0; it runs the body while counter < limit (the k loops of the GEMM kernels). From
 * the current block it branches into the header and leaves the body current; params[0..n] gets
 * the header's parameters (the accumulators, then the counter), results[0..n-1] the exit block's
 * (the final accumulators). The body ends with kb_br(b, loop.head, next, n + 1), and the code
 * after the loop starts with kb_set(b, loop.exit). */
typedef struct kb_loop {
    oxide_block *head, *exit;
    oxide_value *i, *step; /* kb_for's */
} kb_loop;
kb_loop kb_acc_loop(kb *b, size_t n, oxide_type *t, oxide_value *init, oxide_value *limit, oxide_value **params,
                    oxide_value **results);
/* for (i = start; i < limit; i += step), i (loop.i) of type t the header's one parameter: from the
 * current block it branches into the header and leaves the body current, which ends with
 * kb_for_end (or branches to loop.head with kb_for_next itself). The loop leaves to exit, or
 * (exit NULL) to a new loop.exit. */
kb_loop kb_for(kb *b, oxide_type *t, oxide_value *start, oxide_value *limit, oxide_value *step, oxide_block *exit);
/* i + step, and the branch back to the header with it. */
oxide_value *kb_for_next(kb *b, const kb_loop *l);
void kb_for_end(kb *b, const kb_loop *l);

/* ---- values ---- */
oxide_value *kb_op(kb *b, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt, const oxide_attr *attrs,
                   size_t nattrs);
oxide_value *kb_op0(kb *b, oxide_op op); /* special registers */
oxide_value *kb_op1(kb *b, oxide_op op, oxide_value *x);
oxide_value *kb_op2(kb *b, oxide_op op, oxide_value *x, oxide_value *y);
oxide_value *kb_op3(kb *b, oxide_op op, oxide_value *x, oxide_value *y, oxide_value *z);
oxide_value *kb_cast(kb *b, oxide_op op, oxide_value *x, oxide_type *to);
oxide_value *kb_i32(kb *b, int64_t v);
oxide_value *kb_i64(kb *b, int64_t v);
oxide_value *kb_f32(kb *b, double v);
oxide_value *kb_icmp(kb *b, oxide_pred p, oxide_value *x, oxide_value *y);
oxide_value *kb_fcmp(kb *b, oxide_pred p, oxide_value *x, oxide_value *y);
oxide_value *kb_select(kb *b, oxide_value *c, oxide_value *x, oxide_value *y);

/* ---- memory ---- */
/* &p[idx] with elements of type elem. */
oxide_value *kb_gep(kb *b, oxide_value *p, oxide_value *idx, oxide_type *elem);
oxide_value *kb_load(kb *b, oxide_type *t, oxide_value *p, unsigned align);
void kb_store(kb *b, oxide_value *v, oxide_value *p, unsigned align);
/* Adds a module-level shared array and returns its address (ptr.shared) in the current block. */
oxide_value *kb_shared_array(kb *b, const char *name, oxide_type *elem, uint64_t count, unsigned align);
oxide_value *kb_atomic(kb *b, oxide_op op, oxide_value *p, oxide_value *v, oxide_scope scope);
void kb_barrier(kb *b);
/* Warp shuffle over the full warp (mask 0xffffffff). */
oxide_value *kb_shfl(kb *b, oxide_op op, oxide_value *v, oxide_value *lane);
void kb_void(kb *b, oxide_op op); /* ops with no operands and no result (cluster.sync, ...) */

/* Global thread index as i64: ctaid.x * ntid.x + tid.x, computed without 32-bit overflow. */
oxide_value *kb_global_id_x(kb *b);

#endif
