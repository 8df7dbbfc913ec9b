/* See example_util.h. */
#include "example_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oxide_examples.h"

static uint64_t rng_state;

uint64_t ex_rand_u64(void) {
    /* xorshift64*: small, fast and plenty for test data; the seed reproduces a run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

float ex_rand_f32(float lo, float hi) {
    for (;;) {
        float f = lo + (hi - lo) * (float)((ex_rand_u64() >> 40) * (1.0 / 16777216.0));
        if (f != 0.0f)
            return f;
    }
}

void ex_fill_f32(float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++)
        x[i] = ex_rand_f32(lo, hi);
}

void ex_fail(ex_env *env, const char *fmt, ...) {
    printf("FAILED: %s: ", env->name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" (seed %llu)\n", (unsigned long long)env->seed);
    fflush(stdout);
    exit(1);
}

int ex_pass(ex_env *env, const char *fmt, ...) {
    printf("PASSED: %s: ", env->name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return 0;
}

void ex_check(ex_env *env, oxide_status st, const char *what) {
    if (st)
        ex_fail(env, "%s: %s: %s", what, oxide_status_name(st), oxide_last_error());
}

static void skip(const char *name, const char *why, const char *detail) {
    printf("SKIPPED: %s (%s: %s)\n", why, name, detail);
    fflush(stdout);
    exit(EX_SKIP);
}

void ex_setup(ex_env *env, const char *name) {
    memset(env, 0, sizeof *env);
    env->name = name;
    const char *s = getenv("OXIDE_SEED");
    env->seed = s && *s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    rng_state = env->seed ? env->seed : 0x9E3779B97F4A7C15ull;
    printf("%s: seed %llu (set OXIDE_SEED to repeat)\n", name, (unsigned long long)env->seed);

    int count = 0;
    oxide_status st = oxide_device_count(&count);
    if (st == OXIDE_ERROR_NO_DRIVER || st == OXIDE_ERROR_NO_DEVICE || (!st && count == 0))
        skip(name, "no GPU", st ? oxide_last_error() : "the driver sees no device");
    ex_check(env, st, "oxide_device_count");
    ex_check(env, oxide_device_get(0, &env->dev), "oxide_device_get");
    int major = 0, minor = 0;
    ex_check(env, oxide_device_compute_capability(env->dev, &major, &minor), "compute capability");
    if (major == 9 && minor == 0)
        snprintf(env->target, sizeof env->target, "sm_90a"); /* Hopper's arch-specific target */
    else if (major >= 10)
        snprintf(env->target, sizeof env->target, "sm_100a");
    else
        snprintf(env->target, sizeof env->target, "sm_%d%d", major, minor);
    const oxide_example_kernel *k = oxide_example_find(name);
    if (!k)
        ex_fail(env, "no example kernel named %s", name);
    if ((unsigned)(major * 10 + minor) < k->min_sm) {
        char why[96];
        snprintf(why, sizeof why, "needs sm_%u, the GPU is %s", k->min_sm, env->target);
        skip(name, "GPU too old", why);
    }

    oxide_context *ctx;
    oxide_module *mod;
    oxide_options *opts;
    ex_check(env, oxide_context_create(&ctx), "oxide_context_create");
    ex_check(env, oxide_example_module(ctx, name, &mod), "building the kernel");
    ex_check(env, oxide_options_create(&opts), "oxide_options_create");
    ex_check(env, oxide_options_set_target(opts, env->target), "oxide_options_set_target");
    const char *ptx;
    size_t len;
    ex_check(env, oxide_module_compile(mod, opts, &ptx, &len), "compiling to PTX");
    ex_check(env, oxide_loaded_module_load_ptx(env->dev, ptx, len, &env->lm), "loading the PTX");
    env->ptx = ex_malloc(env, len);
    memcpy(env->ptx, ptx, len);
    env->ptx_len = len;
    /* The loaded module keeps what it needs; the compiler's objects can go. */
    oxide_options_destroy(opts);
    oxide_context_destroy(ctx);
    ex_check(env, oxide_loaded_module_get_kernel(env->lm, name, &env->kernel), "oxide_loaded_module_get_kernel");
    const char *dev_name = "?";
    oxide_device_name(env->dev, &dev_name);
    printf("%s: %s on %s\n", name, env->target, dev_name);
}

void ex_teardown(ex_env *env) {
    oxide_loaded_module_destroy(env->lm);
    env->lm = NULL;
    free(env->ptx);
    env->ptx = NULL;
}

void *ex_malloc(ex_env *env, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        ex_fail(env, "out of host memory (%zu bytes)", bytes);
    return p;
}

oxide_buffer *ex_upload(ex_env *env, const void *host, size_t bytes) {
    oxide_buffer *b;
    ex_check(env, oxide_buffer_alloc(env->dev, bytes, &b), "oxide_buffer_alloc");
    if (host)
        ex_check(env, oxide_memcpy_htod(env->dev, oxide_buffer_ptr(b), host, bytes), "copy to the device");
    return b;
}

void ex_download(ex_env *env, void *host, const oxide_buffer *buf, size_t bytes) {
    ex_check(env, oxide_memcpy_dtoh(env->dev, host, oxide_buffer_ptr(buf), bytes), "copy from the device");
}

void ex_launch(ex_env *env, const uint32_t grid[3], const uint32_t block[3], const oxide_arg *args, size_t nargs) {
    ex_check(env, oxide_kernel_launch(env->kernel, NULL, grid, block, 0, args, nargs), "launch");
    ex_check(env, oxide_device_synchronize(env->dev), "synchronize");
}

void ex_launch_gemm(ex_env *env, const oxide_buffer *a, const oxide_buffer *b, const oxide_buffer *c, oxide_scalar elem,
                    uint32_t m, uint32_t n, uint32_t k, uint32_t bm, uint32_t bn, uint32_t threads) {
    oxide_arg args[] = {oxide_arg_from_buffer(a, elem, 0),
                        oxide_arg_from_buffer(b, elem, 0),
                        oxide_arg_from_buffer(c, OXIDE_SCALAR_F32, 1),
                        oxide_arg_u32(m),
                        oxide_arg_u32(n),
                        oxide_arg_u32(k)};
    uint32_t block[3] = {threads, 1, 1}, grid[3] = {n / bn, m / bm, 1};
    ex_launch(env, grid, block, args, 6);
}

void ex_run_matrix(ex_env *env, uint32_t rows, uint32_t cols, float lo, float hi, const uint32_t grid[3],
                   const uint32_t block[3], float **x, float **y) {
    size_t n = (size_t)rows * cols;
    *x = ex_malloc(env, n * 4);
    *y = ex_malloc(env, n * 4);
    ex_fill_f32(*x, n, lo, hi);
    oxide_buffer *dx = ex_upload(env, *x, n * 4), *dy = ex_upload(env, NULL, n * 4);
    oxide_arg args[] = {oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0), oxide_arg_from_buffer(dy, OXIDE_SCALAR_F32, 1),
                        oxide_arg_u32(rows), oxide_arg_u32(cols)};
    ex_launch(env, grid, block, args, 4);
    ex_download(env, *y, dy, n * 4);
    oxide_buffer_free(dx);
    oxide_buffer_free(dy);
}

void ex_fill_bf16(uint16_t *bits, float *f, size_t n) {
    ex_fill_f32(f, n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i++)
        f[i] = ex_from_bf16(bits[i] = ex_to_bf16(f[i]));
}

uint16_t ex_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float ex_from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double ex_gemm_ref(const float *a, const float *b, uint32_t n, uint32_t k, uint32_t i, uint32_t j, double *mag) {
    double want = 0, m = 0;
    for (uint32_t p = 0; p < k; p++) {
        double t = (double)a[(size_t)i * k + p] * b[(size_t)p * n + j];
        want += t;
        m += fabs(t);
    }
    *mag = m;
    return want;
}
