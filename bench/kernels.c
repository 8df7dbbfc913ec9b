/* bench/kernels (GPU): oxide's example kernels against the same algorithms in CUDA C++.
 *
 * Rows (stdout, one per line, bench/README.md's form; diagnostics go to stderr):
 *   KERNEL oxide_ms nvcc_ms ratio            for every example kernel
 *   vecadd_bw oxide_GBps copy_GBps fraction
 *   launch_c oxide_us raw_us ratio
 *
 * KERNEL: the example kernel (examples/c/kernels) compiled by oxide with default options for the
 * GPU's target, against its twin bench/cuda/KERNEL.cu compiled at build time with
 * `nvcc -O3 -arch=sm_90a -ptx` (the peer's best settings). Both PTX files are loaded with
 * oxide_loaded_module_load_ptx (so the same driver JIT turns both into machine code) and launched
 * by oxide_kernel_launch with the same buffers, grid and block on the same stream; the twin's
 * PTX gets oxide's manifest line, which fits it because the twins take the same parameters in
 * the same layout. Time is measured with CUDA events around each launch; the two kernels
 * alternate launch by launch so that clock and thermal drift hit both alike; the figure is the
 * median of RUNS launches after WARMUP. Inputs are random, sizes large (vecadd 2^26 floats,
 * sgemm 4096^3, ...). Before timing, one launch of each is compared (outputs written, not
 * accumulated) so that a fast wrong kernel cannot pass unnoticed.
 *
 * vecadd_bw: vecadd moves 3 * 4 * N bytes (reads a and b, writes out). The peer is a
 * device-to-device cuMemcpyDtoDAsync of 1.5 * 4 * N bytes, which moves the same 3 * 4 * N bytes
 * (each byte read once and written once); both bandwidths count bytes read plus bytes written.
 *
 * launch_c: host cost of one launch of an empty kernel taking vecadd's parameters (three
 * slices: six PTX parameters): oxide_kernel_launch, which checks the arguments against the
 * manifest, against cuLaunchKernel called directly with the six parameter pointers. Each call is
 * timed alone with CLOCK_MONOTONIC; batches of BATCH launches alternate between the two and the
 * stream is drained between batches (untimed), so the launch queue never fills; the figure is
 * the median over LAUNCHES calls of each.
 *
 * Without a GPU it prints `SKIPPED: no GPU (...)` and exits 77. */
#define _GNU_SOURCE /* readlink, clock_gettime, RTLD_NOLOAD */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench/kernels"
#include "bench_util.h"
#include "oxide.h"
#include "oxide_examples.h"

#define WARMUP 3
#define RUNS 30
#define LAUNCHES 10000
#define BATCH 250

static oxide_device *dev;
static oxide_stream *stream;
static bench_gpu gpu;

/* ---- inputs ---- */

/* A device buffer of n random floats in [lo, hi) (or uninitialised when lo == hi). */
static oxide_buffer *random_f32(size_t n, float lo, float hi) {
    oxide_buffer *b;
    TRY(oxide_buffer_alloc(dev, n * 4, &b), "allocating");
    if (lo != hi) {
        float *h = xmalloc(n * 4);
        for (size_t i = 0; i < n; i++)
            h[i] = bench_f32(lo, hi);
        TRY(oxide_memcpy_htod(dev, oxide_buffer_ptr(b), h, n * 4), "uploading");
        free(h);
    }
    return b;
}

static oxide_buffer *random_bytes(size_t n) {
    oxide_buffer *b;
    TRY(oxide_buffer_alloc(dev, n, &b), "allocating");
    unsigned char *h = xmalloc(n);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = bench_u64();
        for (size_t j = 0; j < 8 && i + j < n; j++)
            h[i + j] = (unsigned char)(r >> (8 * j));
    }
    TRY(oxide_memcpy_htod(dev, oxide_buffer_ptr(b), h, n), "uploading");
    free(h);
    return b;
}

/* ---- one benchmark case: arguments and geometry, shared by oxide's kernel and the twin ---- */

typedef struct job {
    oxide_arg args[8];
    size_t nargs;
    uint32_t grid[3], block[3];
    oxide_buffer *bufs[4];
    size_t nbufs;
    oxide_buffer *out; /* compared between the two kernels; NULL: output accumulates */
    double tolerance;  /* relative, for the comparison */
} job;

static oxide_buffer *keep(job *j, oxide_buffer *b) {
    j->bufs[j->nbufs++] = b;
    return b;
}

static oxide_arg in_f32(job *j, size_t n, float lo, float hi) {
    return oxide_arg_from_buffer(keep(j, random_f32(n, lo, hi)), OXIDE_SCALAR_F32, 0);
}

/* bf16 in [-1, 1): the upper half of an f32's bits */
static oxide_arg in_bf16(job *j, size_t n) {
    oxide_buffer *b;
    TRY(oxide_buffer_alloc(dev, n * 2, &b), "allocating");
    uint16_t *h = xmalloc(n * 2);
    for (size_t i = 0; i < n; i++) {
        float f = bench_f32(-1, 1);
        uint32_t u;
        memcpy(&u, &f, 4);
        h[i] = (uint16_t)(u >> 16);
    }
    TRY(oxide_memcpy_htod(dev, oxide_buffer_ptr(b), h, n * 2), "uploading");
    free(h);
    return oxide_arg_from_buffer(keep(j, b), OXIDE_SCALAR_BF16, 0);
}

static oxide_arg out_f32(job *j, size_t n, int compared) {
    oxide_buffer *b = keep(j, random_f32(n, 0, 0));
    TRY(oxide_memset(dev, oxide_buffer_ptr(b), 0, n, 4), "memset");
    if (compared)
        j->out = b;
    return oxide_arg_from_buffer(b, OXIDE_SCALAR_F32, 1);
}

static void geometry(job *j, uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by) {
    j->grid[0] = gx, j->grid[1] = gy, j->grid[2] = 1;
    j->block[0] = bx, j->block[1] = by, j->block[2] = 1;
}

/* The GEMM kernels' arguments (oxide_examples.h): a and b n x n of elem (f32 or bf16), c n x n
 * f32 (compared, within tolerance), m = n = k = n. */
static void gemm_args(job *j, uint32_t n, oxide_scalar elem, double tolerance) {
    const size_t nn = (size_t)n * n;
    for (int i = 0; i < 2; i++)
        j->args[i] = elem == OXIDE_SCALAR_BF16 ? in_bf16(j, nn) : in_f32(j, nn, -1, 1);
    j->args[2] = out_f32(j, nn, 1);
    for (int i = 3; i < 6; i++)
        j->args[i] = oxide_arg_u32(n);
    j->nargs = 6;
    j->tolerance = tolerance;
}

static void prepare(const char *name, job *j) {
    memset(j, 0, sizeof *j);
    const size_t big = (size_t)1 << 26;
    if (!strcmp(name, "vecadd")) {
        j->args[0] = in_f32(j, big, -1, 1);
        j->args[1] = in_f32(j, big, -1, 1);
        j->args[2] = out_f32(j, big, 1);
        j->nargs = 3;
        geometry(j, (uint32_t)(big / (256 * OXIDE_EXAMPLE_VECADD_PER_THREAD)), 1, 256, 1);
    } else if (!strcmp(name, "saxpy")) {
        j->args[0] = oxide_arg_f32(bench_f32(0.5f, 1.5f));
        j->args[1] = in_f32(j, big, -1, 1);
        j->args[2] = oxide_arg_from_buffer(keep(j, random_f32(big, -1, 1)), OXIDE_SCALAR_F32, 1); /* in place */
        j->nargs = 3;
        geometry(j, (uint32_t)(big / 256), 1, 256, 1);
    } else if (!strcmp(name, "reduce")) {
        j->args[0] = in_f32(j, big, -1, 1);
        j->args[1] = out_f32(j, 1, 0);
        j->nargs = 2;
        geometry(j, (uint32_t)gpu.sms * 8, 1, OXIDE_EXAMPLE_REDUCE_THREADS, 1);
    } else if (!strcmp(name, "sgemm")) {
        const uint32_t n = 4096;
        gemm_args(j, n, OXIDE_SCALAR_F32, 1e-5);
        geometry(j, n / OXIDE_EXAMPLE_SGEMM_BN, n / OXIDE_EXAMPLE_SGEMM_BM, OXIDE_EXAMPLE_SGEMM_THREADS, 1);
    } else if (!strcmp(name, "gemm_mma")) {
        const uint32_t n = 4096;
        gemm_args(j, n, OXIDE_SCALAR_BF16, 1e-4);
        geometry(j, n / OXIDE_EXAMPLE_GEMM_MMA_BN, n / OXIDE_EXAMPLE_GEMM_MMA_BM, OXIDE_EXAMPLE_GEMM_MMA_THREADS, 1);
    } else if (!strcmp(name, "softmax")) {
        const uint32_t rows = 32768, cols = 2048;
        j->args[0] = in_f32(j, (size_t)rows * cols, -8, 8);
        j->args[1] = out_f32(j, (size_t)rows * cols, 1);
        j->args[2] = oxide_arg_u32(rows);
        j->args[3] = oxide_arg_u32(cols);
        j->nargs = 4;
        j->tolerance = 1e-5;
        const uint32_t per_block = OXIDE_EXAMPLE_SOFTMAX_THREADS / 32;
        geometry(j, (rows + per_block - 1) / per_block, 1, OXIDE_EXAMPLE_SOFTMAX_THREADS, 1);
    } else if (!strcmp(name, "transpose")) {
        const uint32_t rows = 8192, cols = 8192, t = OXIDE_EXAMPLE_TRANSPOSE_TILE;
        j->args[0] = in_f32(j, (size_t)rows * cols, -1, 1);
        j->args[1] = out_f32(j, (size_t)rows * cols, 1);
        j->args[2] = oxide_arg_u32(rows);
        j->args[3] = oxide_arg_u32(cols);
        j->nargs = 4;
        geometry(j, cols / t, rows / t, t, OXIDE_EXAMPLE_TRANSPOSE_ROWS);
    } else if (!strcmp(name, "histogram")) {
        const size_t n = (size_t)1 << 28;
        j->args[0] = oxide_arg_from_buffer(keep(j, random_bytes(n)), OXIDE_SCALAR_U8, 0);
        oxide_buffer *bins;
        TRY(oxide_buffer_alloc(dev, OXIDE_EXAMPLE_HISTOGRAM_BINS * 4, &bins), "allocating");
        TRY(oxide_memset(dev, oxide_buffer_ptr(bins), 0, OXIDE_EXAMPLE_HISTOGRAM_BINS, 4), "memset");
        j->args[1] = oxide_arg_from_buffer(keep(j, bins), OXIDE_SCALAR_U32, 1);
        j->nargs = 2;
        geometry(j, (uint32_t)gpu.sms * 8, 1, OXIDE_EXAMPLE_HISTOGRAM_THREADS, 1);
    } else if (!strcmp(name, "cluster_dsmem")) {
        const uint32_t t = OXIDE_EXAMPLE_CLUSTER_THREADS, cs = OXIDE_EXAMPLE_CLUSTER_SIZE;
        j->args[0] = in_f32(j, big, -1, 1);
        j->args[1] = out_f32(j, big / cs, 1);
        j->nargs = 2;
        geometry(j, (uint32_t)(big / t), 1, t, 1);
    } else {
        fprintf(stderr, "bench/kernels: no benchmark set-up for example '%s'\n", name);
        exit(1);
    }
}

static void release(job *j) {
    for (size_t i = 0; i < j->nbufs; i++)
        oxide_buffer_free(j->bufs[i]);
}

/* ---- PTX: oxide's, and the twin's with oxide's manifest line ---- */

static char *compile_example(const char *name) {
    oxide_context *ctx;
    oxide_module *mod;
    oxide_options *o;
    TRY(oxide_context_create(&ctx), "context");
    TRY(oxide_example_module(ctx, name, &mod), name);
    TRY(oxide_options_create(&o), "options");
    TRY(oxide_options_set_target(o, gpu.target), "target");
    const char *ptx;
    size_t len;
    TRY(oxide_module_compile(mod, o, &ptx, &len), name);
    char *copy = xmalloc(len + 1);
    memcpy(copy, ptx, len + 1);
    oxide_options_destroy(o);
    oxide_context_destroy(ctx);
    return copy;
}

/* The twin's PTX: next to this executable (nvcc/NAME.ptx, how the build lays it out and how it
 * travels to the GPU machine), else in $OXIDE_BENCH_NVCC_DIR, else in build/bench/nvcc. */
static char *twin_ptx(const char *name, const char *oxide_ptx) {
    char file[256];
    snprintf(file, sizeof file, "%s.ptx", name);
    char *src = read_bench_data("nvcc", file, "OXIDE_BENCH_NVCC_DIR", "build/bench/nvcc");
    if (!src)
        return NULL;
    const char *m = strstr(oxide_ptx, "// oxide.manifest.v1 ");
    size_t mlen = m ? strcspn(m, "\n") : 0;
    char *out = xmalloc(mlen + 1 + strlen(src) + 1);
    memcpy(out, m ? m : "", mlen);
    out[mlen] = '\n';
    strcpy(out + mlen + 1, src);
    free(src);
    return out;
}

/* ---- timing ---- */

static oxide_event *ev0, *ev1;

static double time_launch(oxide_kernel *k, const job *j) {
    TRY(oxide_event_record(ev0, stream), "event");
    TRY(oxide_kernel_launch(k, stream, j->grid, j->block, 0, j->args, j->nargs), "launch");
    TRY(oxide_event_record(ev1, stream), "event");
    TRY(oxide_event_synchronize(ev1), "kernel run");
    float ms;
    TRY(oxide_event_elapsed_ms(ev0, ev1, &ms), "elapsed");
    return ms;
}

/* Largest relative difference between the two kernels' outputs, one launch each. */
static double compare(oxide_kernel *a, oxide_kernel *b, const job *j) {
    size_t n = oxide_buffer_size(j->out) / 4;
    float *x = xmalloc(n * 4), *y = xmalloc(n * 4);
    TRY(oxide_kernel_launch(a, stream, j->grid, j->block, 0, j->args, j->nargs), "launch");
    TRY(oxide_stream_synchronize(stream), "kernel run");
    TRY(oxide_memcpy_dtoh(dev, x, oxide_buffer_ptr(j->out), n * 4), "download");
    TRY(oxide_memset(dev, oxide_buffer_ptr(j->out), 0x7fc00000u, n, 4), "memset"); /* NaN: unwritten shows */
    TRY(oxide_kernel_launch(b, stream, j->grid, j->block, 0, j->args, j->nargs), "launch");
    TRY(oxide_stream_synchronize(stream), "kernel run");
    TRY(oxide_memcpy_dtoh(dev, y, oxide_buffer_ptr(j->out), n * 4), "download");
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - y[i]) / fmax(fabs((double)y[i]), 1e-30);
        if (x[i] != y[i] && !(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    free(x);
    free(y);
    return worst;
}

static void bench_kernel(const char *name, double *vecadd_ms) {
    char *ox_ptx = compile_example(name), *nv_ptx = twin_ptx(name, ox_ptx);
    oxide_loaded_module *ox_mod, *nv_mod = NULL;
    oxide_kernel *ox, *nv = NULL;
    TRY(oxide_loaded_module_load_ptx(dev, ox_ptx, strlen(ox_ptx), &ox_mod), name);
    TRY(oxide_loaded_module_get_kernel(ox_mod, name, &ox), name);
    if (!nv_ptx) {
        fprintf(stderr, "bench/kernels: %s: no nvcc PTX (bench/cuda/%s.cu not built): nvcc column is nan\n", name,
                name);
    } else {
        oxide_status st = oxide_loaded_module_load_ptx(dev, nv_ptx, strlen(nv_ptx), &nv_mod);
        if (!st)
            st = oxide_loaded_module_get_kernel(nv_mod, name, &nv);
        if (st) {
            fprintf(stderr, "bench/kernels: %s: the nvcc PTX does not load: %s: %s\n", name, oxide_status_name(st),
                    oxide_last_error());
            nv = NULL;
        }
    }
    job j;
    prepare(name, &j);
    if (nv && j.out) {
        double d = compare(ox, nv, &j);
        if (d > j.tolerance)
            fprintf(stderr, "bench/kernels: WARNING: %s: oxide and nvcc outputs differ (worst relative %.3g)\n", name,
                    d);
    }
    double t_ox[RUNS], t_nv[RUNS];
    for (int i = 0; i < WARMUP; i++) {
        time_launch(ox, &j);
        if (nv)
            time_launch(nv, &j);
    }
    for (int i = 0; i < RUNS; i++) {
        t_ox[i] = time_launch(ox, &j);
        t_nv[i] = nv ? time_launch(nv, &j) : NAN;
    }
    double mo = median(t_ox, RUNS), mn = nv ? median(t_nv, RUNS) : NAN;
    printf("%s %.4f %.4f %.3f\n", name, mo, mn, mo / mn);
    fflush(stdout);
    if (!strcmp(name, "vecadd"))
        *vecadd_ms = mo;
    release(&j);
    oxide_loaded_module_destroy(nv_mod);
    oxide_loaded_module_destroy(ox_mod);
    free(nv_ptx);
    free(ox_ptx);
}

static void bench_copy(double vecadd_ms) {
    const size_t n = (size_t)1 << 26, bytes = n * 4 * 3 / 2;
    oxide_buffer *src, *dst;
    TRY(oxide_buffer_alloc(dev, bytes, &src), "allocating");
    TRY(oxide_buffer_alloc(dev, bytes, &dst), "allocating");
    TRY(oxide_memset(dev, oxide_buffer_ptr(src), 0x3f800000u, bytes / 4, 4), "memset");
    double t[RUNS];
    for (int i = -WARMUP; i < RUNS; i++) {
        TRY(oxide_event_record(ev0, stream), "event");
        TRY(oxide_memcpy_dtod_async(stream, oxide_buffer_ptr(dst), oxide_buffer_ptr(src), bytes), "copy");
        TRY(oxide_event_record(ev1, stream), "event");
        TRY(oxide_event_synchronize(ev1), "copy");
        float ms;
        TRY(oxide_event_elapsed_ms(ev0, ev1, &ms), "elapsed");
        if (i >= 0)
            t[i] = ms;
    }
    double copy_ms = median(t, RUNS);
    double moved = 3.0 * 4 * n; /* vecadd: 2 reads + 1 write; the copy: bytes read + bytes written */
    double ox = moved / (vecadd_ms * 1e6), cp = (2.0 * bytes) / (copy_ms * 1e6);
    printf("vecadd_bw %.1f %.1f %.3f\n", ox, cp, ox / cp);
    fflush(stdout);
    oxide_buffer_free(src);
    oxide_buffer_free(dst);
}

/* ---- launch overhead ---- */

typedef int (*cuLaunchKernel_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned smem, void *stream, void **params, void **extra);

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void bench_launch(void) {
    /* The empty kernel, built here through the C API: vecadd's parameters, no work. */
    oxide_context *ctx;
    oxide_module *mod;
    oxide_function *k;
    oxide_block *entry;
    oxide_value *p, *l;
    oxide_options *o;
    TRY(oxide_context_create(&ctx), "context");
    TRY(oxide_module_create(ctx, "launch", &mod), "module");
    TRY(oxide_module_add_kernel(mod, "empty", &k), "kernel");
    TRY(oxide_kernel_add_slice_param(k, "a", OXIDE_SCALAR_F32, 0, &p, &l), "param");
    TRY(oxide_kernel_add_slice_param(k, "b", OXIDE_SCALAR_F32, 0, &p, &l), "param");
    TRY(oxide_kernel_add_slice_param(k, "out", OXIDE_SCALAR_F32, 1, &p, &l), "param");
    TRY(oxide_function_add_block(k, NULL, 0, &entry, NULL), "block");
    TRY(oxide_build_op(entry, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL), "ret");
    TRY(oxide_options_create(&o), "options");
    TRY(oxide_options_set_target(o, gpu.target), "target");
    const char *ptx;
    size_t len;
    TRY(oxide_module_compile(mod, o, &ptx, &len), "compiling the empty kernel");
    oxide_loaded_module *lm;
    oxide_kernel *kern;
    TRY(oxide_loaded_module_load_ptx(dev, ptx, len, &lm), "loading the empty kernel");
    TRY(oxide_loaded_module_get_kernel(lm, "empty", &kern), "empty kernel");
    oxide_options_destroy(o);
    oxide_context_destroy(ctx);

    /* The driver oxide already opened; cuLaunchKernel straight from it. */
    const char *drv = getenv("OXIDE_CUDA_DRIVER");
    void *lib = dlopen(drv && *drv ? drv : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    cuLaunchKernel_fn raw = lib ? (cuLaunchKernel_fn)dlsym(lib, "cuLaunchKernel") : NULL;
    void *fn = NULL, *cs = NULL;
    TRY(oxide_kernel_native(kern, &fn), "native kernel");
    TRY(oxide_stream_native(stream, &cs), "native stream");
    if (!raw) {
        fprintf(stderr, "bench/kernels: cuLaunchKernel not found in the loaded driver\n");
        exit(1);
    }

    oxide_buffer *buf;
    TRY(oxide_buffer_alloc(dev, 3 * 1024 * 4, &buf), "allocating");
    uint64_t base = oxide_buffer_ptr(buf), n = 1024;
    oxide_arg args[3] = {oxide_arg_buffer(OXIDE_SCALAR_F32, base, n, 0),
                         oxide_arg_buffer(OXIDE_SCALAR_F32, base + 4096, n, 0),
                         oxide_arg_buffer(OXIDE_SCALAR_F32, base + 8192, n, 1)};
    uint64_t pv[6] = {base, n, base + 4096, n, base + 8192, n};
    void *params[6] = {&pv[0], &pv[1], &pv[2], &pv[3], &pv[4], &pv[5]};
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};

    double *t_ox = xmalloc(LAUNCHES * sizeof(double)), *t_raw = xmalloc(LAUNCHES * sizeof(double));
    TRY(oxide_device_make_current(dev), "make current");
    for (int round = -1; round < LAUNCHES / BATCH; round++) { /* round -1 warms both paths up */
        for (int i = 0; i < BATCH; i++) {
            double t0 = now_us();
            oxide_status st = oxide_kernel_launch(kern, stream, grid, block, 0, args, 3);
            double t1 = now_us();
            if (st)
                bench_die(st, "launching the empty kernel");
            if (round >= 0)
                t_ox[round * BATCH + i] = t1 - t0;
        }
        TRY(oxide_stream_synchronize(stream), "sync");
        for (int i = 0; i < BATCH; i++) {
            double t0 = now_us();
            int r = raw(fn, 1, 1, 1, 32, 1, 1, 0, cs, params, NULL);
            double t1 = now_us();
            if (r) {
                fprintf(stderr, "bench/kernels: cuLaunchKernel failed with CUDA error %d\n", r);
                exit(1);
            }
            if (round >= 0)
                t_raw[round * BATCH + i] = t1 - t0;
        }
        TRY(oxide_stream_synchronize(stream), "sync");
    }
    double mo = median(t_ox, LAUNCHES), mr = median(t_raw, LAUNCHES);
    printf("launch_c %.3f %.3f %.3f\n", mo, mr, mo / mr);
    fflush(stdout);
    free(t_ox);
    free(t_raw);
    oxide_buffer_free(buf);
    oxide_loaded_module_destroy(lm);
}

int main(int argc, char **argv) {
    /* Optional argument: one kernel name (with vecadd, also vecadd_bw), or "launch". */
    const char *only = argc > 1 ? argv[1] : NULL;
    bench_gpu_open(&gpu);
    dev = gpu.dev;
    fprintf(stderr, "bench/kernels: %s (%s, %d SMs); median of %d runs after %d warm-up\n", gpu.name, gpu.target,
            gpu.sms, RUNS, WARMUP);
    TRY(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &stream), "stream");
    TRY(oxide_event_create(dev, 0, &ev0), "event");
    TRY(oxide_event_create(dev, 0, &ev1), "event");

    double vecadd_ms = NAN;
    int launch_only = only && !strcmp(only, "launch");
    for (size_t i = 0; i < oxide_example_kernel_count && !launch_only; i++) {
        const oxide_example_kernel *k = &oxide_example_kernels[i];
        if (only && strcmp(only, k->name))
            continue;
        if ((unsigned)(gpu.major * 10 + gpu.minor) < k->min_sm) {
            fprintf(stderr, "bench/kernels: %s needs sm_%u; skipped\n", k->name, k->min_sm);
            continue;
        }
        bench_kernel(k->name, &vecadd_ms);
    }
    if (!isnan(vecadd_ms))
        bench_copy(vecadd_ms);
    if (!only || launch_only)
        bench_launch();
    oxide_event_destroy(ev0);
    oxide_event_destroy(ev1);
    oxide_stream_destroy(stream);
    return 0;
}
