/* What the runtime's GPU tests add to tests/harness.h: skip without a GPU, find test data,
 * random inputs, the closing line. Each test prints "PASSED: <what, with its key figure>" or "FAILED: ..." and exits 0
 * or 1; without a driver or GPU it prints "SKIPPED: ..." and exits 77 (ctest's SKIP_RETURN_CODE). */
#ifndef OXIDE_GPU_TEST_H
#define OXIDE_GPU_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, fork */
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"

#ifndef OXIDE_GPU_DATA_DIR
#define OXIDE_GPU_DATA_DIR "tests/gpu/data"
#endif
#ifndef OXIDE_GPU_BUILD_DIR
#define OXIDE_GPU_BUILD_DIR "."
#endif

/* Exit 77 with a visible reason where there is no driver or no GPU. */
static inline void gpu_require(void) {
    int n = 0;
    oxide_status st = oxide_device_count(&n);
    if (st == OXIDE_ERROR_NO_DRIVER) {
        printf("SKIPPED: no CUDA driver (libcuda.so.1 not found)\n");
        fprintf(stderr, "%s\n", oxide_last_error());
        exit(77);
    }
    if (st == OXIDE_ERROR_NO_DEVICE || (st == OXIDE_OK && n == 0)) {
        printf("SKIPPED: no GPU (the CUDA driver sees no device)\n");
        fprintf(stderr, "%s\n", oxide_last_error());
        exit(77);
    }
    if (st != OXIDE_OK) {
        printf("FAILED: oxide_device_count: %s: %s\n", oxide_status_name(st), oxide_last_error());
        exit(1);
    }
}

/* Test data: $OXIDE_GPU_DATA (set by scripts/gpu-check), the build tree, the source tree. */
static inline char *read_data(const char *name, size_t *len) {
    const char *dirs[3] = {getenv("OXIDE_GPU_DATA"), OXIDE_GPU_BUILD_DIR, OXIDE_GPU_DATA_DIR};
    for (int d = 0; d < 3; d++) {
        if (!dirs[d] || !*dirs[d])
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dirs[d], name);
        char *buf = check_read_file(path, len);
        if (buf)
            return buf;
    }
    printf("FAILED: test data %s not found (set OXIDE_GPU_DATA)\n", name);
    exit(1);
}

/* Random inputs, never zero, so that a kernel that writes nothing cannot pass. */
static uint64_t rng_state = 0x243f6a8885a308d3ull;
static inline uint32_t rng_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static inline float rng_f32(void) { /* +-[0.5, 2) */
    float f = 0.5f + 1.5f * (float)(rng_u32() & 0xffffff) / (float)0x1000000;
    return (rng_u32() & 1) ? -f : f;
}

/* bf16 bit patterns of finite floats, rounded to nearest even, and back. */
static inline uint16_t bf16_from_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + (u >> 16 & 1);
    return (uint16_t)(u >> 16);
}
static inline float f32_from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void rng_seed(void) { rng_state ^= (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull; }

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The operands of a vecadd kernel (a, b, out: f32 slices; tests/gpu/data's and the example's):
 * n random floats in a and b, on the host and on the device, and a checked launch over n elements
 * in blocks of 256. */
typedef struct vecadd_io {
    size_t n;
    float *a, *b, *out;
    oxide_buffer *da, *db, *dout;
    oxide_arg args[3];
    uint32_t grid[3], block[3];
} vecadd_io;

static inline void vecadd_io_make(vecadd_io *v, oxide_device *dev, size_t n) {
    *v = (vecadd_io){.n = n, .a = malloc(n * 4), .b = malloc(n * 4), .out = malloc(n * 4)};
    if (!v->a || !v->b || !v->out) {
        printf("FAILED: out of host memory for %zu floats\n", n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        v->a[i] = rng_f32(), v->b[i] = rng_f32();
    MUST(oxide_buffer_alloc(dev, n * 4, &v->da));
    MUST(oxide_buffer_alloc(dev, n * 4, &v->db));
    MUST(oxide_buffer_alloc(dev, n * 4, &v->dout));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(v->da), v->a, n * 4));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(v->db), v->b, n * 4));
    v->args[0] = oxide_arg_from_buffer(v->da, OXIDE_SCALAR_F32, 0);
    v->args[1] = oxide_arg_from_buffer(v->db, OXIDE_SCALAR_F32, 0);
    v->args[2] = oxide_arg_from_buffer(v->dout, OXIDE_SCALAR_F32, 1);
    v->grid[0] = (uint32_t)((n + 255) / 256), v->grid[1] = v->grid[2] = 1;
    v->block[0] = 256, v->block[1] = v->block[2] = 1;
}

/* Copies out back; the number of its elements that are not a + b. */
static inline size_t vecadd_io_wrong(vecadd_io *v, oxide_device *dev) {
    OK(oxide_memcpy_dtoh(dev, v->out, oxide_buffer_ptr(v->dout), v->n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < v->n; i++)
        bad += v->out[i] != v->a[i] + v->b[i];
    return bad;
}

static inline void vecadd_io_free(vecadd_io *v) {
    oxide_buffer_free(v->da);
    oxide_buffer_free(v->db);
    oxide_buffer_free(v->dout);
    free(v->a), free(v->b), free(v->out);
}

/* Device 0, and the compile target that is its own ("sm_90a" on an H200) in target. */
static inline oxide_device *gpu_device_target(char *target, size_t cap) {
    oxide_device *dev = NULL;
    int major, minor;
    MUST(oxide_device_get(0, &dev));
    MUST(oxide_device_compute_capability(dev, &major, &minor));
    snprintf(target, cap, "sm_%d%d%s", major, minor, major == 9 || major == 10 ? "a" : "");
    return dev;
}

/* m compiled for target and loaded on dev: its kernel name (checks count the load). A compile
 * that fails returns NULL with its status in *compile_st and its message in oxide_last_error(),
 * for the caller to judge (tests linking only the runtime never call this). */
static inline oxide_kernel *gpu_compile_load(oxide_device *dev, oxide_module *m, const char *target, const char *name,
                                             oxide_loaded_module **lm, oxide_status *compile_st) {
    oxide_options *o = NULL;
    const char *ptx = NULL;
    size_t len = 0;
    oxide_kernel *k = NULL;
    *lm = NULL;
    oxide_status st = oxide_options_create(&o);
    if (!st)
        st = oxide_options_set_target(o, target);
    if (!st)
        st = oxide_module_compile(m, o, &ptx, &len);
    oxide_options_destroy(o);
    *compile_st = st;
    if (st)
        return NULL;
    OK(oxide_loaded_module_load_ptx(dev, ptx, len, lm));
    if (*lm)
        OK(oxide_loaded_module_get_kernel(*lm, name, &k));
    return k;
}

/* tests/gpu/data/kernels.ptx (the test kernels: inc, spin, vecadd, ...) loaded on dev. */
static inline oxide_loaded_module *gpu_load_test_kernels(oxide_device *dev) {
    size_t len = 0;
    char *ptx = read_data("kernels.ptx", &len);
    oxide_loaded_module *lm = NULL;
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    free(ptx);
    return lm;
}

static inline int finish(const char *name, const char *figure) {
    int checks = check_passed + check_failed;
    if (check_failed) {
        printf("FAILED: %s: %d of %d checks failed\n", name, check_failed, checks);
        return 1;
    }
    printf("PASSED: %s: %d checks%s%s\n", name, checks, figure && *figure ? "; " : "", figure ? figure : "");
    return 0;
}

#endif
