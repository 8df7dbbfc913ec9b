/* The benchmarks' small shared helpers: failing loudly, allocation, random inputs, medians, whole
 * files. A benchmark that wants TRY defines BENCH_NAME ("bench/gemm") before including this. */
#ifndef OXIDE_BENCH_UTIL_H
#define OXIDE_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oxide.h"

/* A benchmark cannot go on without its buffers: say FAILED (the line gpu-check reads) and stop. */
static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FAILED: out of host memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

#ifdef BENCH_NAME
/* A failed call ends the benchmark with the FAILED line gpu-check reads, naming the call. */
static inline void bench_die(oxide_status st, const char *what) {
    printf("FAILED: %s: %s: %s: %s\n", BENCH_NAME, what, oxide_status_name(st), oxide_last_error());
    exit(1);
}
#define TRY(call, what)                                                                                                \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_)                                                                                                       \
            bench_die(st_, what);                                                                                      \
    } while (0)

/* The GPU a benchmark runs on: device 0, or SKIPPED and exit 77 where there is none. */
typedef struct bench_gpu {
    oxide_device *dev;
    int major, minor, sms;
    const char *name;
    char target[16]; /* what oxide compiles for there: the arch-specific target on Hopper and later */
} bench_gpu;

static inline void bench_gpu_open(bench_gpu *g) {
    int count = 0;
    oxide_status st = oxide_device_count(&count);
    if (st == OXIDE_ERROR_NO_DRIVER || st == OXIDE_ERROR_NO_DEVICE || (!st && count == 0)) {
        printf("SKIPPED: no GPU (%s)\n", st ? oxide_last_error() : "the driver sees no device");
        exit(77);
    }
    TRY(st, "device count");
    *g = (bench_gpu){.name = "?"};
    TRY(oxide_device_get(0, &g->dev), "device");
    TRY(oxide_device_compute_capability(g->dev, &g->major, &g->minor), "compute capability");
    TRY(oxide_device_sm_count(g->dev, &g->sms), "SM count");
    oxide_device_name(g->dev, &g->name);
    if (g->major == 9 && g->minor == 0)
        snprintf(g->target, sizeof g->target, "sm_90a");
    else if (g->major >= 10)
        snprintf(g->target, sizeof g->target, "sm_100a");
    else
        snprintf(g->target, sizeof g->target, "sm_%d%d", g->major, g->minor);
}
#endif

/* Random inputs: xorshift64*, one stream per benchmark (set bench_rng to reseed or replay it). */
static uint64_t bench_rng = 0x243F6A8885A308D3ull;
static inline uint64_t bench_u64(void) {
    bench_rng ^= bench_rng >> 12;
    bench_rng ^= bench_rng << 25;
    bench_rng ^= bench_rng >> 27;
    return bench_rng * 0x2545F4914F6CDD1Dull;
}
/* Uniform in [lo, hi), never exactly zero (lo instead), so that an unwritten output shows. */
static inline float bench_f32(float lo, float hi) {
    float f = lo + (hi - lo) * (float)((bench_u64() >> 40) * (1.0 / 16777216.0));
    return f != 0.0f ? f : lo;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static inline double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The whole file, NUL-terminated (free it); NULL if it cannot be read. */
static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? xmalloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

/* DIR/FILE where DIR is this executable's folder, else $ENV/FILE (when ENV is set), else
 * FALLBACK/FILE (a path relative to the checkout, for runs from its root); NULL if none reads.
 * The build puts a benchmark's data beside it, and scripts/gpu-check packs it there, so the
 * binary names no absolute path and runs from any checkout or pack. */
static inline char *read_bench_data(const char *dir, const char *file, const char *env, const char *fallback) {
    char exe[4096], path[4400];
    char *src = NULL;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(path, sizeof path, "%s/%s/%s", exe, dir, file);
        src = read_file(path);
    }
    const char *from_env = env ? getenv(env) : NULL;
    if (!src && from_env) {
        snprintf(path, sizeof path, "%s/%s", from_env, file);
        src = read_file(path);
    }
    if (!src && fallback) {
        snprintf(path, sizeof path, "%s/%s", fallback, file);
        src = read_file(path);
    }
    return src;
}

#endif
