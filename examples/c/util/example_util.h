/* What the runnable examples share: find a GPU (or skip), compile one example kernel for it and
 * load it, fresh random inputs, device buffers, and the PASSED / FAILED / SKIPPED verdict.
 *
 * Examples are programs, not libraries, so a failed call ends the process: it prints
 * `FAILED: <example>: <what>: <status>: <message>` and exits 1. */
#ifndef OXIDE_EXAMPLE_UTIL_H
#define OXIDE_EXAMPLE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "oxide.h"

#define EX_SKIP 77 /* ctest's SKIP_RETURN_CODE for these tests */

typedef struct ex_env {
    const char *name; /* example (and kernel) name */
    oxide_device *dev;
    char target[16]; /* e.g. "sm_90a" */
    oxide_loaded_module *lm;
    oxide_kernel *kernel;
    uint64_t seed;
    char *ptx; /* the compiled PTX, for loading on more devices (multi_gpu_gemm) */
    size_t ptx_len;
} ex_env;

/* Finds device 0 (or prints SKIPPED and exits 77), compiles example `name` for it, loads it
 * and looks up its kernel. Picks the random seed (OXIDE_SEED, else time and pid) and prints it. */
void ex_setup(ex_env *env, const char *name);
/* Unloads the module. */
void ex_teardown(ex_env *env);

/* Exits with FAILED if st is not OXIDE_OK. */
void ex_check(ex_env *env, oxide_status st, const char *what);
/* Prints FAILED with the message and exits 1. */
void ex_fail(ex_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* Prints `PASSED: <name>: <message>`; returns 0 for main to return. */
int ex_pass(ex_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Uniform random numbers from the seeded generator. Floats are never exactly zero. */
uint64_t ex_rand_u64(void);
float ex_rand_f32(float lo, float hi);
void ex_fill_f32(float *x, size_t n, float lo, float hi);

/* Launches the example's kernel (dynamic shared memory as its manifest says) and waits for it. */
void ex_launch(ex_env *env, const uint32_t grid[3], const uint32_t block[3], const oxide_arg *args, size_t nargs);
/* The GEMM examples' interface, (a, b, c: mut f32, m, n, k) with A and B of type elem: one block of
 * `threads` per bm x bn tile of C (m x n). */
void ex_launch_gemm(ex_env *env, const oxide_buffer *a, const oxide_buffer *b, const oxide_buffer *c, oxide_scalar elem,
                    uint32_t m, uint32_t n, uint32_t k, uint32_t bm, uint32_t bn, uint32_t threads);
/* The row-matrix examples' interface (x, y: mut, both rows x cols f32, rows, cols: u32), as softmax
 * and transpose have it: *x gets rows * cols values in [lo, hi), the kernel runs on grid and
 * block, *y gets what it wrote (both malloc'd, the caller frees them). */
void ex_run_matrix(ex_env *env, uint32_t rows, uint32_t cols, float lo, float hi, const uint32_t grid[3],
                   const uint32_t block[3], float **x, float **y);

/* The CPU reference for one element of a row-major GEMM: C[i][j] of A (. x k) * B (k x n) in
 * double precision; *mag gets sum |a b|, the scale of the kernel's rounding error. */
double ex_gemm_ref(const float *a, const float *b, uint32_t n, uint32_t k, uint32_t i, uint32_t j, double *mag);

/* n random bf16 values in [-1, 1) into bits, and the same values as floats into f. */
void ex_fill_bf16(uint16_t *bits, float *f, size_t n);

/* bf16 from f32, rounded to nearest even (for finite inputs), and back (exact). */
uint16_t ex_to_bf16(float f);
float ex_from_bf16(uint16_t h);

/* Device buffer holding n bytes copied from host (host may be NULL: left uninitialised). */
oxide_buffer *ex_upload(ex_env *env, const void *host, size_t bytes);
void ex_download(ex_env *env, void *host, const oxide_buffer *buf, size_t bytes);
/* malloc that exits with FAILED on failure. */
void *ex_malloc(ex_env *env, size_t bytes);

#endif
