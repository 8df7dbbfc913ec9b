/* bench/multi_gpu (GPU): several GPUs (bench/README.md, "multi_gpu").
 *
 * Rows (stdout; notes go to stderr):
 *   multi_gpu_gemm_N t1_ms tN_ms efficiency    a 16384x16384x16384 bf16 product (gemm_mma, f32 C)
 *                                              with A's rows split over N GPUs and B on each,
 *                                              timed on GPU 0 from the inputs resident to C
 *                                              gathered there (NCCL send/recv, else oxide peer
 *                                              copies); efficiency = t1 / (N tN). N = 1, 2, 4, 8
 *                                              as far as the GPUs go; with one GPU the N = 2 row
 *                                              is n/a.
 *   peer_copy_GBps oxide cuda_memcpy_peer ratio   1 GiB from GPU 1 to GPU 0 (peer access on
 *                                              where possible): oxide_memcpy_peer_async against
 *                                              cuMemcpyPeerAsync called directly, medians of
 *                                              interleaved rounds; n/a with one GPU, which prints
 *                                              peer_copy_same_device_GBps (GPU 0 to itself)
 *                                              instead so that the path still runs.
 * Every N's gathered C must equal the one-GPU C bit for bit (same kernel, same sums), and a few
 * elements a double-precision CPU product, else the row says WRONG. An argument MxNxK runs that
 * shape instead (e.g. on the tests' fake driver). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "mgpu.h"
#include "oxide_examples.h"

#define REPS 5
#define COPY_BYTES ((size_t)1 << 30)
#define COPY_ROUNDS 10

/* Random bf16 in +-[2^-7, 1): never zero, no float copies of the 16384^2 inputs needed. */
static void fill_bf16(uint16_t *x, size_t n) {
    for (size_t i = 0; i < n; i += 4) {
        uint64_t r = ex_rand_u64();
        for (size_t j = i; j < n && j < i + 4; j++, r >>= 16)
            x[j] = (uint16_t)((r & 0x8000u) | (uint16_t)(120u + (r >> 7) % 7u) << 7 | (r & 0x7fu));
    }
}

static double spot(const uint16_t *a, const uint16_t *b, uint32_t n, uint32_t k, uint32_t i, uint32_t j, double *mag) {
    double s = 0, m = 0;
    for (uint32_t l = 0; l < k; l++) {
        double p = (double)ex_from_bf16(a[(size_t)i * k + l]) * ex_from_bf16(b[(size_t)l * n + j]);
        s += p, m += fabs(p);
    }
    *mag = m;
    return s;
}

/* NULL when c is right (equal to ref, if given, and to the CPU at a few elements), else why. */
static const char *wrong(const float *c, const float *ref, const uint16_t *a, const uint16_t *b, uint32_t m, uint32_t n,
                         uint32_t k) {
    static char why[160];
    if (ref && memcmp(c, ref, (size_t)m * n * 4)) {
        snprintf(why, sizeof why, "the gathered C differs from the one-GPU C");
        return why;
    }
    for (int s = 0; s < 16; s++) {
        uint32_t i = (uint32_t)(ex_rand_u64() % m), j = (uint32_t)(ex_rand_u64() % n);
        double mag, want = spot(a, b, n, k, i, j, &mag), got = c[(size_t)i * n + j];
        if (!(fabs(got - want) <= 2e-6 * k * mag + 1e-6)) {
            snprintf(why, sizeof why, "C[%u][%u] = %.9g, the CPU says %.9g", i, j, got, want);
            return why;
        }
    }
    return NULL;
}

static double time_split(ex_env *env, int ndev, uint32_t m, uint32_t n, uint32_t k, const uint16_t *a,
                         const uint16_t *b, mg_nccl *nccl, float *out) {
    mg_gemm g;
    mg_setup(&g, env, ndev, m, n, k, a, b, nccl, 0);
    double ms = mg_time_ms(&g, REPS);
    ex_check(env, oxide_memcpy_dtoh(g.dev[0], out, oxide_buffer_ptr(g.gathered), (size_t)m * n * 4), "download");
    mg_teardown(&g);
    return ms;
}

typedef int (*peer_fn)(unsigned long long, void *, unsigned long long, void *, size_t, void *);

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* oxide_memcpy_peer_async and cuMemcpyPeerAsync from src to dst (GPU 0) in interleaved rounds. */
static void peer_copy_row(ex_env *env, int src, const char *row) {
    oxide_device *d0, *ds;
    ex_check(env, oxide_device_get(0, &d0), "device");
    ex_check(env, oxide_device_get(src, &ds), "device");
    int can = 0;
    if (src && oxide_device_can_access_peer(d0, ds, &can) == OXIDE_OK && can) {
        ex_check(env, oxide_device_enable_peer_access(d0, ds), "peer access");
        ex_check(env, oxide_device_enable_peer_access(ds, d0), "peer access");
    }
    const char *drv = getenv("OXIDE_CUDA_DRIVER");
    void *lib = dlopen(drv && *drv ? drv : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    peer_fn cu_peer = lib ? (peer_fn)dlsym(lib, "cuMemcpyPeerAsync") : NULL;
    if (!cu_peer) {
        printf("%s UNSUPPORTED: cuMemcpyPeerAsync not found in the CUDA driver\n", row);
        return;
    }
    oxide_buffer *bd, *bs;
    oxide_stream *s;
    oxide_event *e0, *e1;
    void *ctx0, *ctxs, *cs;
    ex_check(env, oxide_buffer_alloc(d0, COPY_BYTES, &bd), "alloc");
    ex_check(env, oxide_buffer_alloc(ds, COPY_BYTES, &bs), "alloc");
    ex_check(env, oxide_memset(ds, oxide_buffer_ptr(bs), 0x3f80u, COPY_BYTES / 2, 2), "memset");
    ex_check(env, oxide_stream_create(d0, OXIDE_STREAM_NON_BLOCKING, &s), "stream");
    ex_check(env, oxide_event_create(d0, 0, &e0), "event");
    ex_check(env, oxide_event_create(d0, 0, &e1), "event");
    ex_check(env, oxide_device_native(d0, NULL, &ctx0), "native");
    ex_check(env, oxide_device_native(ds, NULL, &ctxs), "native");
    ex_check(env, oxide_stream_native(s, &cs), "native");
    double t[2][COPY_ROUNDS];
    for (int r = -1; r < COPY_ROUNDS; r++) /* round -1 warms both up */
        for (int w = 0; w < 2; w++) {
            float ms = 0;
            ex_check(env, oxide_event_record(e0, s), "record");
            if (w == 0)
                ex_check(env,
                         oxide_memcpy_peer_async(s, d0, oxide_buffer_ptr(bd), ds, oxide_buffer_ptr(bs), COPY_BYTES),
                         "oxide_memcpy_peer_async");
            else if (cu_peer(oxide_buffer_ptr(bd), ctx0, oxide_buffer_ptr(bs), ctxs, COPY_BYTES, cs))
                ex_fail(env, "cuMemcpyPeerAsync failed");
            ex_check(env, oxide_event_record(e1, s), "record");
            ex_check(env, oxide_event_synchronize(e1), "sync");
            ex_check(env, oxide_event_elapsed_ms(e0, e1, &ms), "elapsed");
            if (r >= 0)
                t[w][r] = ms > 0 ? COPY_BYTES / (ms * 1e6) : 0;
        }
    qsort(t[0], COPY_ROUNDS, sizeof(double), cmp);
    qsort(t[1], COPY_ROUNDS, sizeof(double), cmp);
    double ox = t[0][COPY_ROUNDS / 2], cu = t[1][COPY_ROUNDS / 2];
    printf("%s %.1f %.1f %.3f\n", row, ox, cu, cu > 0 ? ox / cu : 0);
    fprintf(stderr, "%s: GPU %d to GPU 0, peer access %s\n", row, src, can ? "on" : "off (staged)");
    oxide_event_destroy(e0), oxide_event_destroy(e1), oxide_stream_destroy(s);
    oxide_buffer_free(bd), oxide_buffer_free(bs);
}

int main(int argc, char **argv) {
    ex_env env;
    ex_setup(&env, "gemm_mma");
    env.name = "bench/multi_gpu";
    uint32_t m = 16384, n = 16384, k = 16384;
    if (argc > 1 && sscanf(argv[1], "%ux%ux%u", &m, &n, &k) != 3)
        ex_fail(&env, "the argument is MxNxK, not %s", argv[1]);
    int ndev = 0;
    ex_check(&env, oxide_device_count(&ndev), "device count");
    ndev = ndev > MG_MAX_DEVICES ? MG_MAX_DEVICES : ndev;
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *a = ex_malloc(&env, na * 2), *b = ex_malloc(&env, nb * 2);
    float *ref = ex_malloc(&env, nc * 4), *got = ex_malloc(&env, nc * 4);
    fill_bf16(a, na);
    fill_bf16(b, nb);
    mg_nccl nccl;
    int have = mg_nccl_open(&nccl) == 0;
    fprintf(stderr, "bench/multi_gpu: %ux%ux%u on %d GPU(s), gathered with %s%s%s\n", m, n, k, ndev,
            have ? "NCCL from " : "oxide peer copies (no NCCL: ", nccl.path, have ? "" : ")");
    double t1 = time_split(&env, 1, m, n, k, a, b, have ? &nccl : NULL, ref);
    const char *why = wrong(ref, NULL, a, b, m, n, k);
    if (why)
        printf("multi_gpu_gemm_1 WRONG: %s\n", why);
    else
        printf("multi_gpu_gemm_1 %.3f %.3f 1.000\n", t1, t1);
    for (int g = 2; g <= MG_MAX_DEVICES; g *= 2) {
        if (g > ndev) {
            if (g == 2)
                printf("multi_gpu_gemm_2 n/a n/a n/a\n");
            break;
        }
        if (m % ((uint32_t)g * OXIDE_EXAMPLE_GEMM_MMA_BM))
            continue;
        double tg = time_split(&env, g, m, n, k, a, b, have ? &nccl : NULL, got);
        if ((why = wrong(got, ref, a, b, m, n, k)))
            printf("multi_gpu_gemm_%d WRONG: %s\n", g, why);
        else
            printf("multi_gpu_gemm_%d %.3f %.3f %.3f\n", g, t1, tg, t1 / (g * tg));
    }
    if (ndev == 1)
        fprintf(stderr, "bench/multi_gpu: one GPU: multi_gpu_gemm_2 and peer_copy_GBps are n/a\n");
    free(a), free(b), free(ref), free(got);
    if (ndev > 1) {
        peer_copy_row(&env, 1, "peer_copy_GBps");
    } else {
        printf("peer_copy_GBps n/a n/a n/a\n");
        peer_copy_row(&env, 0, "peer_copy_same_device_GBps");
    }
    ex_teardown(&env);
    return 0;
}
