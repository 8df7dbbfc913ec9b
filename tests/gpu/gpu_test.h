/* Helpers shared by the runtime's GPU tests: skip without a GPU, find test data, check results.
 * Each test prints "PASSED: <what, with its key figure>" or "FAILED: ..." and exits 0 or 1;
 * without a driver or GPU it prints "SKIPPED: ..." and exits 77 (ctest's SKIP_RETURN_CODE). */
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

#include "oxide.h"

#ifndef OXIDE_GPU_DATA_DIR
#define OXIDE_GPU_DATA_DIR "tests/gpu/data"
#endif
#ifndef OXIDE_GPU_BUILD_DIR
#define OXIDE_GPU_BUILD_DIR "."
#endif

static int failures, checks;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,                    \
                    oxide_last_error());                                                                               \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* The call must succeed; on failure report and go on. */
#define OK(call)                                                                                                       \
    do {                                                                                                               \
        checks++;                                                                                                      \
        oxide_status st_ = (call);                                                                                     \
        if (st_ != OXIDE_OK) {                                                                                         \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, oxide_status_name(st_),                  \
                    oxide_last_error());                                                                               \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* The call must succeed, or the test cannot go on. */
#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_ != OXIDE_OK) {                                                                                         \
            printf("FAILED: %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, oxide_status_name(st_),                   \
                   oxide_last_error());                                                                                \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* The call must fail with status want and a message containing every given fragment. */
#define FAILS_WITH(call, want, ...)                                                                                    \
    do {                                                                                                               \
        checks++;                                                                                                      \
        oxide_status st_ = (call);                                                                                     \
        const char *frags_[] = {__VA_ARGS__, NULL};                                                                    \
        int ok_ = st_ == (want);                                                                                       \
        for (int i_ = 0; ok_ && frags_[i_]; i_++)                                                                      \
            ok_ = strstr(oxide_last_error(), frags_[i_]) != NULL;                                                      \
        if (!ok_) {                                                                                                    \
            fprintf(stderr, "%s:%d: %s: wanted %s, got %s: \"%s\"\n", __FILE__, __LINE__, #call,                       \
                    oxide_status_name(want), oxide_status_name(st_), oxide_last_error());                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

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
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)size + 1);
        size_t got = buf ? fread(buf, 1, (size_t)size, f) : 0;
        fclose(f);
        if (!buf || got != (size_t)size) {
            free(buf);
            continue;
        }
        buf[size] = 0;
        *len = (size_t)size;
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
static inline void rng_seed(void) { rng_state ^= (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull; }

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int finish(const char *name, const char *figure) {
    if (failures) {
        printf("FAILED: %s: %d of %d checks failed\n", name, failures, checks);
        return 1;
    }
    printf("PASSED: %s: %d checks%s%s\n", name, checks, figure && *figure ? "; " : "", figure ? figure : "");
    return 0;
}

#endif
