/* The example kernels, each written once through oxide's C API. Tests, benchmarks, the CLI
 * (`oxide example NAME`) and the runnable programs in examples/c all build them from here.
 *
 * oxide_example_<name>(ctx, mod) ADDS the kernel (plus the shared arrays it uses, named
 * "<name>_*") to mod, which must belong to ctx; several examples can share one module, but
 * each only once. Returns the first failing status of the builder; oxide_last_error() says why.
 *
 * Launch geometry and interface of each kernel (slices are pointer + length, see oxide.h):
 *
 *  vecadd(a: [f32], b: [f32], out: mut [f32])
 *      out[i] = a[i] + b[i] for i < min(len(a), len(b), len(out)); each thread adds
 *      OXIDE_EXAMPLE_VECADD_PER_THREAD elements a block width apart: a 1-D grid of at least
 *      ceil(n / (block * OXIDE_EXAMPLE_VECADD_PER_THREAD)) blocks of up to 1024 threads (256 advised).
 *  saxpy(alpha: f32, x: [f32], y: mut [f32])
 *      y[i] = alpha * x[i] + y[i] (one fused multiply-add) for i < min(len(x), len(y)).
 *  reduce(x: [f32], out: mut [f32])
 *      out[0] += sum(x). Blocks of exactly OXIDE_EXAMPLE_REDUCE_THREADS threads, any grid: each
 *      thread sums a grid-stride sequence, warps combine with shfl.down, per-warp partials meet
 *      in shared memory, one atomic add per block. The caller zeroes out[0] first.
 *  sgemm(a: [f32], b: [f32], c: mut [f32], m: u32, n: u32, k: u32)
 *      C = A * B, row-major, A m x k, B k x n, C m x n. m and n multiples of
 *      OXIDE_EXAMPLE_SGEMM_BM/BN, k a multiple of OXIDE_EXAMPLE_SGEMM_BK; grid
 *      (n / BN, m / BM), blocks of OXIDE_EXAMPLE_SGEMM_THREADS threads (1-D).
 *  softmax(x: [f32], y: mut [f32], rows: u32, cols: u32)
 *      Row-wise softmax of a rows x cols row-major matrix; one warp per row, blocks of
 *      OXIDE_EXAMPLE_SOFTMAX_THREADS threads, grid ceil(rows / (threads / 32)).
 *  transpose(x: [f32], y: mut [f32], rows: u32, cols: u32)
 *      y (cols x rows) = transpose of x (rows x cols); 32 x 32 tiles padded to 33 in shared
 *      memory; blocks (32, 8), grid (ceil(cols / 32), ceil(rows / 32)).
 *  histogram(data: [u8], bins: mut [u32])
 *      bins[v] += count of v in data, 256 bins (len(bins) >= 256, zeroed by the caller);
 *      shared-memory atomics per block, then one global atomic per non-empty bin; blocks of
 *      OXIDE_EXAMPLE_HISTOGRAM_THREADS threads, any grid.
 *  cluster_dsmem(x: [f32], out: mut [f32])   (sm_90 and later)
 *      Clusters of OXIDE_EXAMPLE_CLUSTER_SIZE blocks of OXIDE_EXAMPLE_CLUSTER_THREADS threads:
 *      each block stores its slice of x in shared memory, the cluster synchronises, and rank 0
 *      reads every block's array through distributed shared memory:
 *      out[c * T + t] = sum over r of x[(c * S + r) * T + t] (c the cluster, S its size, T the
 *      block size; x past its end reads as 0). Grid: a multiple of S blocks.
 *  gemm_mma(a: [bf16], b: [bf16], c: mut [f32], m: u32, n: u32, k: u32)
 *      C = A * B, row-major, A m x k and B k x n in bf16, C m x n in f32 (f32 accumulation) on
 *      the tensor cores (cp.async pipeline, ldmatrix, mma.sync m16n8k16). m and n multiples of
 *      OXIDE_EXAMPLE_GEMM_MMA_BM/BN, k a multiple of OXIDE_EXAMPLE_GEMM_MMA_BK; grid (n / BN,
 *      m / BM), blocks of OXIDE_EXAMPLE_GEMM_MMA_THREADS threads; OXIDE_EXAMPLE_GEMM_MMA_SMEM
 *      bytes of dynamic shared memory (the manifest's dyn_smem, used when a launch passes 0).
 */
#ifndef OXIDE_EXAMPLES_H
#define OXIDE_EXAMPLES_H

#include <stddef.h>

#include "oxide.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vecadd: elements per thread; launch ceil(n / (block * this)) blocks (more is harmless). */
#define OXIDE_EXAMPLE_VECADD_PER_THREAD 2
#define OXIDE_EXAMPLE_REDUCE_THREADS 256
#define OXIDE_EXAMPLE_SGEMM_BM 128
#define OXIDE_EXAMPLE_SGEMM_BN 128
#define OXIDE_EXAMPLE_SGEMM_BK 8
#define OXIDE_EXAMPLE_SGEMM_TM 8
#define OXIDE_EXAMPLE_SGEMM_TN 8
#define OXIDE_EXAMPLE_SGEMM_THREADS 256
#define OXIDE_EXAMPLE_SOFTMAX_THREADS 256
#define OXIDE_EXAMPLE_TRANSPOSE_TILE 32
#define OXIDE_EXAMPLE_TRANSPOSE_ROWS 8
#define OXIDE_EXAMPLE_HISTOGRAM_THREADS 256
#define OXIDE_EXAMPLE_HISTOGRAM_BINS 256
#define OXIDE_EXAMPLE_CLUSTER_SIZE 4
#define OXIDE_EXAMPLE_CLUSTER_THREADS 256
#define OXIDE_EXAMPLE_GEMM_MMA_BM 128
#define OXIDE_EXAMPLE_GEMM_MMA_BN 128
#define OXIDE_EXAMPLE_GEMM_MMA_BK 32
#define OXIDE_EXAMPLE_GEMM_MMA_STAGES 3
#define OXIDE_EXAMPLE_GEMM_MMA_THREADS 256
#define OXIDE_EXAMPLE_GEMM_MMA_SMEM 56832 /* STAGES x (128 x 40 + 32 x 136) bf16 */

oxide_status oxide_example_vecadd(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_saxpy(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_reduce(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_sgemm(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_softmax(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_transpose(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_histogram(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_cluster_dsmem(oxide_context *ctx, oxide_module *mod);
oxide_status oxide_example_gemm_mma(oxide_context *ctx, oxide_module *mod);

typedef oxide_status (*oxide_example_builder)(oxide_context *ctx, oxide_module *mod);

typedef struct oxide_example_kernel {
    const char *name; /* kernel name in the module and manifest */
    oxide_example_builder build;
    unsigned min_sm;     /* lowest SM x 10 it compiles for (90: needs clusters) */
    const char *summary; /* one line, for `oxide example` listings */
} oxide_example_kernel;

/* Every example kernel, in a fixed order; ends with an entry whose name is NULL. */
extern const oxide_example_kernel oxide_example_kernels[];
extern const size_t oxide_example_kernel_count;

/* The entry named name, or NULL. */
const oxide_example_kernel *oxide_example_find(const char *name);

/* Convenience: a new module named after the kernel holding just that example.
 * Errors: NOT_FOUND (unknown name), or the builder's status. On failure *out is untouched. */
oxide_status oxide_example_module(oxide_context *ctx, const char *name, oxide_module **out);

#ifdef __cplusplus
}
#endif
#endif
