/* bench/gemm (GPU): oxide's bf16 tensor-core GEMM against cuBLAS.
 *
 * Rows (stdout, one per line, bench/README.md's form; a '#' comment line comes first,
 * diagnostics go to stderr):
 *   mma_SHAPE oxide_tflops cublas_tflops ratio     SHAPE = MxNxK: 4096x4096x4096, 8192x8192x8192,
 *                                                  8192x8192x2048
 *
 * oxide's kernel is the gemm_mma example (examples/c/kernels/gemm_mma.c: cp.async pipeline,
 * ldmatrix, mma.sync m16n8k16), the Ampere-style stepping stone; its rows carry the mma_ prefix
 * so that they are not taken for the goal's rows, which bench/gemm_hopper prints for the Rust
 * Hopper kernel (wgmma, TMA, warp specialisation) with bf16 C. gemm_mma computes
 * C = A * B row-major with bf16 A and B, f32 accumulation and f32 C, so the peer gets exactly
 * that: bf16 in, CUBLAS_COMPUTE_32F, f32 out, row-major through the usual operand swap
 * (C^T = B^T A^T in column-major terms, with no transposes). The peer is given its best settings:
 * cublasGemmEx with CUBLAS_GEMM_DEFAULT and cublasLtMatmul with the heuristic's first choice,
 * both with a 32 MiB workspace; the faster of the two is the cuBLAS column (stderr shows both).
 *
 * cuBLAS is opened with dlopen (libcublas.so.13, .12, then libcublas.so; $OXIDE_CUBLAS first if
 * set, and the CUDA toolkit's lib64 as a fallback) so that nothing links it; without it the
 * benchmark prints SKIPPED and exits 77. It shares oxide's stream and the device's primary
 * context (oxide retains and makes current the same context the CUDA runtime uses).
 *
 * Per shape: fresh random bf16 inputs in [-1, 1) (never zero; seed from time and pid, or
 * $OXIDE_SEED, printed on stderr). Correctness comes first: oxide's C (written over a NaN fill,
 * so unwritten elements show) must be within a relative Frobenius error of 1e-2 of cuBLAS's C
 * (both accumulate in f32 over the same bf16 products, so ~1e-6 is expected), else FAILED and
 * exit 1 with the first mismatching elements; a few elements of both are also checked against a
 * double-precision CPU product. Then WARMUP launches of each, and RUNS rounds in which oxide,
 * cublasGemmEx and cublasLt run one after another (so clock and thermal drift hit all alike),
 * each timed with CUDA events; the figure is the median. TFLOP/s = 2 M N K / time.
 *
 * An optional argument MxNxK runs that one shape instead (e.g. under ncu).
 *
 * Without a GPU it prints `SKIPPED: no GPU (...)` and exits 77. */
#define _GNU_SOURCE /* getpid */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench/gemm"
#include "bench_util.h"
#include "oxide.h"
#include "oxide_examples.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

#define WARMUP 3
#define RUNS 20
#define WORKSPACE ((size_t)32 << 20) /* what NVIDIA recommends for cuBLAS on Hopper */
#define TOLERANCE 1e-2               /* relative Frobenius error; bf16 inputs, f32 sums */
#define SPOTS 64                     /* elements checked against the CPU */

static oxide_device *dev;
static oxide_stream *stream;
static oxide_event *ev0, *ev1;
static oxide_kernel *kernel;

/* ---- cuBLAS, declared here rather than included so that the benchmark builds without its
 * headers; the values and layouts are cuBLAS's stable ABI (cublas_api.h, cublasLt.h,
 * library_types.h of CUDA 12 and 13) ---- */

enum {
    CUBLAS_OP_N = 0,
    CUDA_R_32F = 0,
    CUDA_R_16BF = 14,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_GEMM_DEFAULT = -1,
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1, /* uint64_t */
};
typedef struct {
    uint64_t data[8];
} lt_algo; /* cublasLtMatmulAlgo_t */
typedef struct {
    lt_algo algo;
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} lt_heuristic; /* cublasLtMatmulHeuristicResult_t */

static struct {
    const char *path;
    int (*create)(void **handle);
    int (*set_stream)(void *handle, void *stream);
    int (*set_workspace)(void *handle, void *ws, size_t bytes);
    int (*gemm_ex)(void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int atype,
                   int lda, const void *b, int btype, int ldb, const void *beta, void *c, int ctype, int ldc,
                   int compute, int algo);
    int (*lt_create)(void **handle);
    int (*lt_desc_create)(void **desc, int compute, int scale_type);
    int (*lt_desc_destroy)(void *desc);
    int (*lt_layout_create)(void **layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
    int (*lt_layout_destroy)(void *layout);
    int (*lt_pref_create)(void **pref);
    int (*lt_pref_set)(void *pref, int attr, const void *buf, size_t size);
    int (*lt_pref_destroy)(void *pref);
    int (*lt_heuristic)(void *handle, void *desc, void *a, void *b, void *c, void *d, void *pref, int requested,
                        lt_heuristic *results, int *returned);
    int (*lt_matmul)(void *handle, void *desc, const void *alpha, const void *a, void *adesc, const void *b,
                     void *bdesc, const void *beta, const void *c, void *cdesc, void *d, void *ddesc,
                     const lt_algo *algo, void *ws, size_t ws_bytes, void *stream);
} cb;

static void *cublas_open(void) {
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    const char *env = getenv("OXIDE_CUBLAS");
    void *lib = NULL;
    if (env && *env && (lib = dlopen(env, RTLD_NOW | RTLD_GLOBAL)))
        cb.path = env;
    for (size_t i = 0; !lib && i < sizeof names / sizeof *names; i++)
        if ((lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL)))
            cb.path = names[i];
    /* The toolkit's lib64 is often not on the loader's path; libcublas finds its libcublasLt
     * next to itself ($ORIGIN). */
    const char *homes[] = {getenv("CUDA_HOME"), OXIDE_CUDA_HOME, "/usr/local/cuda"};
    static char path[4096];
    for (size_t h = 0; !lib && h < sizeof homes / sizeof *homes; h++)
        for (size_t i = 0; !lib && homes[h] && *homes[h] && i < 2; i++) {
            snprintf(path, sizeof path, "%s/lib64/%s", homes[h], names[i]);
            if ((lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL)))
                cb.path = path;
        }
    return lib;
}

/* Resolves cuBLAS; 0 if a function cuBLAS cannot do without is missing. cublasLt's functions
 * are looked up through libcublas's handle (dlsym searches its dependencies, libcublasLt among
 * them); without them the benchmark uses cublasGemmEx alone. */
static int cublas_load(void *lib) {
#define SYM(field, name) *(void **)&cb.field = dlsym(lib, name)
    SYM(create, "cublasCreate_v2");
    SYM(set_stream, "cublasSetStream_v2");
    SYM(set_workspace, "cublasSetWorkspace_v2");
    SYM(gemm_ex, "cublasGemmEx");
    SYM(lt_create, "cublasLtCreate");
    SYM(lt_desc_create, "cublasLtMatmulDescCreate");
    SYM(lt_desc_destroy, "cublasLtMatmulDescDestroy");
    SYM(lt_layout_create, "cublasLtMatrixLayoutCreate");
    SYM(lt_layout_destroy, "cublasLtMatrixLayoutDestroy");
    SYM(lt_pref_create, "cublasLtMatmulPreferenceCreate");
    SYM(lt_pref_set, "cublasLtMatmulPreferenceSetAttribute");
    SYM(lt_pref_destroy, "cublasLtMatmulPreferenceDestroy");
    SYM(lt_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    SYM(lt_matmul, "cublasLtMatmul");
#undef SYM
    if (!cb.lt_create || !cb.lt_desc_create || !cb.lt_desc_destroy || !cb.lt_layout_create || !cb.lt_layout_destroy ||
        !cb.lt_pref_create || !cb.lt_pref_set || !cb.lt_pref_destroy || !cb.lt_heuristic || !cb.lt_matmul)
        cb.lt_create = NULL;
    return cb.create && cb.set_stream && cb.set_workspace && cb.gemm_ex;
}

/* ---- inputs ---- */

/* n random bf16 in [-1, 1), none zero: an f32 rounded to nearest even */
static void random_bf16(uint16_t *h, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float f = bench_f32(-1, 1);
        uint32_t u;
        memcpy(&u, &f, 4);
        u += 0x7fff + ((u >> 16) & 1);
        h[i] = (uint16_t)(u >> 16);
    }
}

static double bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- timing ---- */

/* One problem: device operands and the three ways of computing it. */
typedef struct problem {
    uint32_t m, n, k;
    oxide_buffer *a, *b, *c_ox, *c_cb, *c_lt, *ws;
    void *cublas, *lt;
    /* cublasLt's plan for this shape; lt_ok 0: none (cublasGemmEx alone) */
    int lt_ok;
    void *desc, *la, *lb, *lc;
    lt_heuristic heur;
} problem;

static void fail_cublas(const char *what, int status) {
    printf("FAILED: bench/gemm: %s returned cuBLAS status %d\n", what, status);
    exit(1);
}

static void launch_oxide(const problem *p) {
    oxide_arg args[] = {oxide_arg_from_buffer(p->a, OXIDE_SCALAR_BF16, 0),
                        oxide_arg_from_buffer(p->b, OXIDE_SCALAR_BF16, 0),
                        oxide_arg_from_buffer(p->c_ox, OXIDE_SCALAR_F32, 1),
                        oxide_arg_u32(p->m),
                        oxide_arg_u32(p->n),
                        oxide_arg_u32(p->k)};
    uint32_t grid[3] = {p->n / OXIDE_EXAMPLE_GEMM_MMA_BN, p->m / OXIDE_EXAMPLE_GEMM_MMA_BM, 1};
    uint32_t block[3] = {OXIDE_EXAMPLE_GEMM_MMA_THREADS, 1, 1};
    /* smem 0: the manifest's dynamic shared memory, opted in above 48 KiB by the launch */
    TRY(oxide_kernel_launch(kernel, stream, grid, block, 0, args, 6), "launching gemm_mma");
}

/* Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's "A" is our B (n x k, ld n), its
 * "B" our A (k x m, ld k), its C ours (n x m, ld n); no transposes. */
static void launch_gemm_ex(const problem *p) {
    const float alpha = 1.0f, beta = 0.0f;
    int st = cb.gemm_ex(p->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)p->n, (int)p->m, (int)p->k, &alpha,
                        (const void *)(uintptr_t)oxide_buffer_ptr(p->b), CUDA_R_16BF, (int)p->n,
                        (const void *)(uintptr_t)oxide_buffer_ptr(p->a), CUDA_R_16BF, (int)p->k, &beta,
                        (void *)(uintptr_t)oxide_buffer_ptr(p->c_cb), CUDA_R_32F, (int)p->n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
    if (st)
        fail_cublas("cublasGemmEx", st);
}

static void launch_lt(const problem *p) {
    const float alpha = 1.0f, beta = 0.0f;
    void *cs = NULL;
    TRY(oxide_stream_native(stream, &cs), "native stream");
    void *c = (void *)(uintptr_t)oxide_buffer_ptr(p->c_lt);
    int st = cb.lt_matmul(p->lt, p->desc, &alpha, (const void *)(uintptr_t)oxide_buffer_ptr(p->b), p->la,
                          (const void *)(uintptr_t)oxide_buffer_ptr(p->a), p->lb, &beta, c, p->lc, c, p->lc,
                          &p->heur.algo, (void *)(uintptr_t)oxide_buffer_ptr(p->ws), WORKSPACE, cs);
    if (st)
        fail_cublas("cublasLtMatmul", st);
}

/* cublasLt's plan: the same operand swap as cublasGemmEx, the heuristic's first choice. */
static void lt_plan(problem *p) {
    p->lt_ok = 0;
    if (!p->lt)
        return;
    uint64_t ws = WORKSPACE;
    void *pref = NULL;
    int got = 0, st = cb.lt_desc_create(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (!st)
        st = cb.lt_layout_create(&p->la, CUDA_R_16BF, p->n, p->k, p->n);
    if (!st)
        st = cb.lt_layout_create(&p->lb, CUDA_R_16BF, p->k, p->m, p->k);
    if (!st)
        st = cb.lt_layout_create(&p->lc, CUDA_R_32F, p->n, p->m, p->n);
    if (!st)
        st = cb.lt_pref_create(&pref);
    if (!st)
        st = cb.lt_pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (!st)
        st = cb.lt_heuristic(p->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &p->heur, &got);
    if (pref)
        cb.lt_pref_destroy(pref);
    if (st || got < 1 || p->heur.state) {
        fprintf(stderr,
                "bench/gemm: cublasLt has no plan for %ux%ux%u (status %d, %d algorithms): cublasGemmEx alone\n", p->m,
                p->n, p->k, st, got);
        return;
    }
    p->lt_ok = 1;
}

static void lt_release(problem *p) {
    if (p->lc)
        cb.lt_layout_destroy(p->lc);
    if (p->lb)
        cb.lt_layout_destroy(p->lb);
    if (p->la)
        cb.lt_layout_destroy(p->la);
    if (p->desc)
        cb.lt_desc_destroy(p->desc);
    p->la = p->lb = p->lc = p->desc = NULL;
}

typedef void (*launcher)(const problem *);

static double time_one(launcher f, const problem *p) {
    TRY(oxide_event_record(ev0, stream), "event");
    f(p);
    TRY(oxide_event_record(ev1, stream), "event");
    TRY(oxide_event_synchronize(ev1), "kernel run");
    float ms;
    TRY(oxide_event_elapsed_ms(ev0, ev1, &ms), "elapsed time");
    return ms;
}

static float *download(const oxide_buffer *b, size_t n) {
    float *h = xmalloc(n * 4);
    TRY(oxide_stream_synchronize(stream), "kernel run");
    TRY(oxide_memcpy_dtoh(dev, h, oxide_buffer_ptr(b), n * 4), "download");
    return h;
}

/* sqrt(sum (x - y)^2) / sqrt(sum y^2); NaN anywhere in x makes it NaN */
static double rel_frobenius(const float *x, const float *y, size_t n) {
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)x[i] - y[i];
        d += e * e;
        r += (double)y[i] * y[i];
    }
    return sqrt(d) / sqrt(r);
}

/* What a failed comparison needs to be understood from one run's log: how many elements are
 * off and where, NaN (never written) among them, and the first few with their values. */
static void report_mismatch(const problem *p, const float *x, const float *y) {
    size_t n = (size_t)p->m * p->n, bad = 0, nans = 0, shown = 0;
    double rms = 0;
    for (size_t i = 0; i < n; i++)
        rms += (double)y[i] * y[i];
    rms = sqrt(rms / (double)n);
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            nans++;
        if (!(fabs((double)x[i] - y[i]) <= 1e-3 * rms)) {
            if (shown++ < 12) {
                uint32_t r = (uint32_t)(i / p->n), c = (uint32_t)(i % p->n);
                printf("  C[%u][%u] (block tile %u,%u, in tile %u,%u): oxide %.7g, cuBLAS %.7g\n", r, c,
                       r / OXIDE_EXAMPLE_GEMM_MMA_BM, c / OXIDE_EXAMPLE_GEMM_MMA_BN, r % OXIDE_EXAMPLE_GEMM_MMA_BM,
                       c % OXIDE_EXAMPLE_GEMM_MMA_BN, x[i], y[i]);
            }
            bad++;
        }
    }
    printf("  %zu of %zu elements differ by more than 1e-3 of C's rms (%.4g); %zu are NaN (unwritten)\n", bad, n, rms,
           nans);
}

/* Largest |C - exact| / sum |a b| over SPOTS random elements, against a double CPU product. */
static double spot_check(const problem *p, const uint16_t *a, const uint16_t *b, const float *c) {
    double worst = 0;
    for (int s = 0; s < SPOTS; s++) {
        uint32_t i = (uint32_t)(bench_u64() % p->m), j = (uint32_t)(bench_u64() % p->n);
        double want = 0, mag = 0;
        for (uint32_t q = 0; q < p->k; q++) {
            double t = bf16_value(a[(size_t)i * p->k + q]) * bf16_value(b[(size_t)q * p->n + j]);
            want += t;
            mag += fabs(t);
        }
        double e = fabs(c[(size_t)i * p->n + j] - want) / mag;
        if (!(e <= worst))
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

static oxide_buffer *alloc(size_t bytes) {
    oxide_buffer *b;
    TRY(oxide_buffer_alloc(dev, bytes, &b), "allocating");
    return b;
}

static void bench_shape(uint32_t m, uint32_t n, uint32_t k, void *cublas, void *lt, oxide_buffer *ws) {
    problem p = {.m = m, .n = n, .k = k, .cublas = cublas, .lt = lt, .ws = ws};
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *ha = xmalloc(na * 2), *hb = xmalloc(nb * 2);
    random_bf16(ha, na);
    random_bf16(hb, nb);
    p.a = alloc(na * 2);
    p.b = alloc(nb * 2);
    p.c_ox = alloc(nc * 4);
    p.c_cb = alloc(nc * 4);
    p.c_lt = alloc(nc * 4);
    TRY(oxide_memcpy_htod(dev, oxide_buffer_ptr(p.a), ha, na * 2), "upload");
    TRY(oxide_memcpy_htod(dev, oxide_buffer_ptr(p.b), hb, nb * 2), "upload");
    lt_plan(&p);

    /* correctness first: oxide against cublasGemmEx (and cublasLt against cublasGemmEx) */
    TRY(oxide_memset(dev, oxide_buffer_ptr(p.c_ox), 0x7fc00000u, nc, 4), "memset"); /* NaN: unwritten shows */
    /* The copies and the memset went to the default stream, which a non-blocking stream does
     * not wait for, and may still be in flight: finish them before the kernels start. */
    TRY(oxide_device_synchronize(dev), "upload");
    launch_oxide(&p);
    float *x = download(p.c_ox, nc);
    launch_gemm_ex(&p);
    float *y = download(p.c_cb, nc);
    double err = rel_frobenius(x, y, nc);
    uint64_t spots = bench_rng; /* the same elements for both: replay the generator */
    double spot_ox = spot_check(&p, ha, hb, x);
    bench_rng = spots;
    double spot_cb = spot_check(&p, ha, hb, y);
    fprintf(stderr,
            "bench/gemm: %ux%ux%u: oxide vs cublasGemmEx: relative Frobenius error %.3g; worst of %d elements vs the "
            "CPU, in units of sum |a b|: oxide %.3g, cuBLAS %.3g\n",
            m, n, k, err, SPOTS, spot_ox, spot_cb);
    if (!(err < TOLERANCE)) {
        printf("FAILED: bench/gemm: %ux%ux%u: oxide's C differs from cuBLAS's: relative Frobenius error %.4g (limit "
               "%g; CPU spot check: oxide %.3g, cuBLAS %.3g of sum |a b|)\n",
               m, n, k, err, TOLERANCE, spot_ox, spot_cb);
        report_mismatch(&p, x, y);
        exit(1);
    }
    if (p.lt_ok) {
        launch_lt(&p);
        float *z = download(p.c_lt, nc);
        double e = rel_frobenius(z, y, nc);
        if (!(e < TOLERANCE)) {
            fprintf(stderr, "bench/gemm: WARNING: cublasLt differs from cublasGemmEx (%.3g): left out\n", e);
            p.lt_ok = 0;
        }
        free(z);
    }
    free(x);
    free(y);

    double t_ox[RUNS], t_cb[RUNS], t_lt[RUNS];
    for (int i = 0; i < WARMUP; i++) {
        time_one(launch_oxide, &p);
        time_one(launch_gemm_ex, &p);
        if (p.lt_ok)
            time_one(launch_lt, &p);
    }
    for (int i = 0; i < RUNS; i++) {
        t_ox[i] = time_one(launch_oxide, &p);
        t_cb[i] = time_one(launch_gemm_ex, &p);
        t_lt[i] = p.lt_ok ? time_one(launch_lt, &p) : INFINITY;
    }
    double flop = 2.0 * m * n * k;
    double ms_ox = median(t_ox, RUNS), ms_cb = median(t_cb, RUNS), ms_lt = median(t_lt, RUNS);
    double tf_ox = flop / (ms_ox * 1e9), tf_cb = flop / (ms_cb * 1e9), tf_lt = flop / (ms_lt * 1e9);
    double peer = tf_lt > tf_cb ? tf_lt : tf_cb;
    fprintf(stderr,
            "bench/gemm: %ux%ux%u: oxide %.3f ms (%.1f TFLOP/s), cublasGemmEx %.3f ms (%.1f), cublasLt %.3f ms "
            "(%.1f; workspace %zu of %zu bytes)\n",
            m, n, k, ms_ox, tf_ox, ms_cb, tf_cb, ms_lt, tf_lt, p.lt_ok ? p.heur.workspace_size : 0, WORKSPACE);
    printf("mma_%ux%ux%u %.1f %.1f %.3f\n", m, n, k, tf_ox, peer, tf_ox / peer);
    fflush(stdout);

    lt_release(&p);
    oxide_buffer_free(p.a);
    oxide_buffer_free(p.b);
    oxide_buffer_free(p.c_ox);
    oxide_buffer_free(p.c_cb);
    oxide_buffer_free(p.c_lt);
    free(ha);
    free(hb);
}

static void compile_kernel(const char *target, oxide_loaded_module **lm) {
    oxide_context *ctx;
    oxide_module *mod;
    oxide_options *o;
    const char *ptx;
    size_t len;
    TRY(oxide_context_create(&ctx), "context");
    TRY(oxide_example_module(ctx, "gemm_mma", &mod), "building gemm_mma");
    TRY(oxide_options_create(&o), "options");
    TRY(oxide_options_set_target(o, target), "target");
    TRY(oxide_module_compile(mod, o, &ptx, &len), "compiling gemm_mma");
    TRY(oxide_loaded_module_load_ptx(dev, ptx, len, lm), "loading gemm_mma");
    oxide_options_destroy(o);
    oxide_context_destroy(ctx);
    TRY(oxide_loaded_module_get_kernel(*lm, "gemm_mma", &kernel), "gemm_mma");
}

int main(int argc, char **argv) {
    /* Optional argument: one shape, MxNxK, instead of the three (for profiling one of them). */
    uint32_t only[3] = {0, 0, 0};
    if (argc > 1 && (sscanf(argv[1], "%ux%ux%u", &only[0], &only[1], &only[2]) != 3 ||
                     only[0] % OXIDE_EXAMPLE_GEMM_MMA_BM || only[1] % OXIDE_EXAMPLE_GEMM_MMA_BN ||
                     only[2] % OXIDE_EXAMPLE_GEMM_MMA_BK || !only[0] || !only[1] || !only[2])) {
        fprintf(stderr, "usage: %s [MxNxK]   (M, N multiples of %d, K of %d)\n", argv[0], OXIDE_EXAMPLE_GEMM_MMA_BM,
                OXIDE_EXAMPLE_GEMM_MMA_BK);
        return 2;
    }
    bench_gpu gpu;
    bench_gpu_open(&gpu);
    dev = gpu.dev;
    if (gpu.major * 10 + gpu.minor < 80) {
        printf("SKIPPED: bench/gemm needs sm_80 or later for mma.sync bf16 (the GPU is %s)\n", gpu.target);
        return 77;
    }
    void *lib = cublas_open();
    if (!lib || !cublas_load(lib)) {
        printf("SKIPPED: cuBLAS not found (%s; set OXIDE_CUBLAS to libcublas.so's path)\n",
               lib ? "cublasCreate_v2, cublasSetStream_v2, cublasSetWorkspace_v2 or cublasGemmEx missing" : dlerror());
        return 77;
    }

    const char *s = getenv("OXIDE_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    bench_rng = seed ? seed : 0x9E3779B97F4A7C15ull;
    fprintf(stderr, "bench/gemm: %s (%s, %d SMs), cuBLAS from %s%s; seed %llu; median of %d runs after %d warm-up\n",
            gpu.name, gpu.target, gpu.sms, cb.path, cb.lt_create ? " (with cublasLt)" : " (no cublasLt)",
            (unsigned long long)seed, RUNS, WARMUP);

    oxide_loaded_module *lm;
    compile_kernel(gpu.target, &lm);
    int regs = 0, spill = 0;
    oxide_kernel_get_attribute(kernel, OXIDE_KERNEL_NUM_REGS, &regs);
    oxide_kernel_get_attribute(kernel, OXIDE_KERNEL_LOCAL_BYTES, &spill);
    fprintf(stderr, "bench/gemm: gemm_mma: %d registers, %d bytes of local memory a thread\n", regs, spill);

    TRY(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &stream), "stream");
    TRY(oxide_event_create(dev, 0, &ev0), "event");
    TRY(oxide_event_create(dev, 0, &ev1), "event");
    oxide_buffer *ws = alloc(WORKSPACE);
    /* cuBLAS's runtime picks up the context current on this thread: oxide's, the primary one */
    TRY(oxide_device_make_current(dev), "make current");
    void *cublas = NULL, *lt = NULL, *cs = NULL;
    int cst = cb.create(&cublas);
    if (cst)
        fail_cublas("cublasCreate", cst);
    TRY(oxide_stream_native(stream, &cs), "native stream");
    if ((cst = cb.set_stream(cublas, cs)))
        fail_cublas("cublasSetStream", cst);
    if ((cst = cb.set_workspace(cublas, (void *)(uintptr_t)oxide_buffer_ptr(ws), WORKSPACE)))
        fail_cublas("cublasSetWorkspace", cst);
    if (cb.lt_create && (cst = cb.lt_create(&lt))) {
        fprintf(stderr, "bench/gemm: cublasLtCreate returned %d: cublasGemmEx alone\n", cst);
        lt = NULL;
    }

    printf("# oxide = gemm_mma, the mma.sync + ldmatrix + cp.async stepping stone (bf16 in, f32 accumulate, f32 out), "
           "not the wgmma/TMA warp-specialised kernel the goal is for; cuBLAS = the faster of cublasGemmEx and "
           "cublasLt with the same types and layouts\n");
    fflush(stdout);
    static const uint32_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 2048}};
    if (only[0])
        bench_shape(only[0], only[1], only[2], cublas, lt, ws);
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes && !only[0]; i++)
        bench_shape(shapes[i][0], shapes[i][1], shapes[i][2], cublas, lt, ws);

    /* the cuBLAS handles die with the process: their destructors would need the context, which
     * oxide owns */
    oxide_buffer_free(ws);
    oxide_event_destroy(ev0);
    oxide_event_destroy(ev1);
    oxide_stream_destroy(stream);
    oxide_loaded_module_destroy(lm);
    return 0;
}
