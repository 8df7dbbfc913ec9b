/* gemm_mma: C = A * B with bf16 A and B and f32 C on the tensor cores, for two shapes (square and
 * not), against a double-precision CPU product of the same bf16 inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "oxide_examples.h"

/* f32 -> bf16 bits, rounding to nearest even (the inputs are finite) */
static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void run(ex_env *env, uint32_t m, uint32_t n, uint32_t k) {
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *a = ex_malloc(env, na * 2), *b = ex_malloc(env, nb * 2);
    float *af = ex_malloc(env, na * 4), *bf = ex_malloc(env, nb * 4), *c = ex_malloc(env, nc * 4);
    ex_fill_f32(af, na, -1.0f, 1.0f);
    ex_fill_f32(bf, nb, -1.0f, 1.0f);
    for (size_t i = 0; i < na; i++)
        af[i] = from_bf16(a[i] = to_bf16(af[i]));
    for (size_t i = 0; i < nb; i++)
        bf[i] = from_bf16(b[i] = to_bf16(bf[i]));
    oxide_buffer *da = ex_upload(env, a, na * 2), *db = ex_upload(env, b, nb * 2), *dc = ex_upload(env, NULL, nc * 4);

    oxide_arg args[] = {oxide_arg_from_buffer(da, OXIDE_SCALAR_BF16, 0),
                        oxide_arg_from_buffer(db, OXIDE_SCALAR_BF16, 0),
                        oxide_arg_from_buffer(dc, OXIDE_SCALAR_F32, 1),
                        oxide_arg_u32(m),
                        oxide_arg_u32(n),
                        oxide_arg_u32(k)};
    uint32_t block[3] = {OXIDE_EXAMPLE_GEMM_MMA_THREADS, 1, 1};
    uint32_t grid[3] = {n / OXIDE_EXAMPLE_GEMM_MMA_BN, m / OXIDE_EXAMPLE_GEMM_MMA_BM, 1};
    /* smem 0: the manifest's dynamic shared memory (more than 48 KiB, opted in by the launch) */
    ex_check(env, oxide_kernel_launch(env->kernel, NULL, grid, block, 0, args, 6), "launch");
    ex_check(env, oxide_device_synchronize(env->dev), "synchronize");
    ex_download(env, c, dc, nc * 4);

    double worst = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (uint32_t p = 0; p < k; p++) {
                double t = (double)af[(size_t)i * k + p] * bf[(size_t)p * n + j];
                want += t;
                mag += fabs(t);
            }
            /* bf16 products are exact in f32; k f32 additions (the tensor cores' rounding is not
             * quite round-to-nearest) err by about k * 2^-23 * sum |a*b| at worst. */
            double err = fabs(c[(size_t)i * n + j] - want), tol = 2e-6 * k * mag + 1e-6;
            if (!(err <= tol))
                ex_fail(env, "%ux%ux%u: C[%u][%u] = %.9g, expected %.9g", m, n, k, i, j, c[(size_t)i * n + j], want);
            if (mag > 0 && err / mag > worst)
                worst = err / mag;
        }
    printf("gemm_mma: %ux%ux%u ok (worst error %.2g of sum |a*b|)\n", m, n, k, worst);
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dc);
    free(a);
    free(b);
    free(af);
    free(bf);
    free(c);
}

int main(void) {
    ex_env env;
    ex_setup(&env, "gemm_mma");
    run(&env, 512, 512, 512);
    run(&env, 384, 256, 544); /* 17 k steps: the pipeline's tail, uneven tiles */
    run(&env, 128, 128, 32);  /* one k step: the prologue's zero-filled copies */
    ex_teardown(&env);
    return ex_pass(&env, "512x512x512, 384x256x544 and 128x128x32 match the CPU");
}
