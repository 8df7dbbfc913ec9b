/* sgemm: C = A * B for two shapes (square and not), against a double-precision CPU product. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

static void run(ex_env *env, uint32_t m, uint32_t n, uint32_t k) {
    float *a = ex_malloc(env, (size_t)m * k * 4), *b = ex_malloc(env, (size_t)k * n * 4);
    float *c = ex_malloc(env, (size_t)m * n * 4);
    ex_fill_f32(a, (size_t)m * k, -1.0f, 1.0f);
    ex_fill_f32(b, (size_t)k * n, -1.0f, 1.0f);
    oxide_buffer *da = ex_upload(env, a, (size_t)m * k * 4), *db = ex_upload(env, b, (size_t)k * n * 4);
    oxide_buffer *dc = ex_upload(env, NULL, (size_t)m * n * 4);

    ex_launch_gemm(env, da, db, dc, OXIDE_SCALAR_F32, m, n, k, OXIDE_EXAMPLE_SGEMM_BM, OXIDE_EXAMPLE_SGEMM_BN,
                   OXIDE_EXAMPLE_SGEMM_THREADS);
    ex_download(env, c, dc, (size_t)m * n * 4);

    double worst = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            double mag, want = ex_gemm_ref(a, b, n, k, i, j, &mag);
            /* k fused multiply-adds in f32: error bounded by about k * 2^-24 * sum |a*b|. */
            double err = fabs(c[(size_t)i * n + j] - want), tol = 1e-6 * k * mag + 1e-6;
            if (!(err <= tol))
                ex_fail(env, "%ux%ux%u: C[%u][%u] = %.9g, expected %.9g", m, n, k, i, j, c[(size_t)i * n + j], want);
            if (mag > 0 && err / mag > worst)
                worst = err / mag;
        }
    printf("sgemm: %ux%ux%u ok (worst error %.2g of sum |a*b|)\n", m, n, k, worst);
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dc);
    free(a);
    free(b);
    free(c);
}

int main(void) {
    ex_env env;
    ex_setup(&env, "sgemm");
    run(&env, 512, 512, 512);
    run(&env, 384, 256, 520);
    ex_teardown(&env);
    return ex_pass(&env, "512x512x512 and 384x256x520 match the CPU");
}
