/* gemm_mma: C = A * B with bf16 A and B and f32 C on the tensor cores, for two shapes (square and
 * not), against a double-precision CPU product of the same bf16 inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

/* Returns 0 when every element matches; else prints what is wrong and returns 1, so that the
 * other shapes still run and the log shows which of them fail. */
static int run(ex_env *env, uint32_t m, uint32_t n, uint32_t k) {
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *a = ex_malloc(env, na * 2), *b = ex_malloc(env, nb * 2);
    float *af = ex_malloc(env, na * 4), *bf = ex_malloc(env, nb * 4), *c = ex_malloc(env, nc * 4);
    ex_fill_bf16(a, af, na);
    ex_fill_bf16(b, bf, nb);
    oxide_buffer *da = ex_upload(env, a, na * 2), *db = ex_upload(env, b, nb * 2), *dc = ex_upload(env, NULL, nc * 4);
    /* NaN everywhere first, so that elements the kernel never writes show as such */
    ex_check(env, oxide_memset(env->dev, oxide_buffer_ptr(dc), 0x7fc00000u, nc, 4), "memset");

    /* the manifest's dynamic shared memory: more than 48 KiB, opted in by the launch */
    ex_launch_gemm(env, da, db, dc, OXIDE_SCALAR_BF16, m, n, k, OXIDE_EXAMPLE_GEMM_MMA_BM, OXIDE_EXAMPLE_GEMM_MMA_BN,
                   OXIDE_EXAMPLE_GEMM_MMA_THREADS);
    ex_download(env, c, dc, nc * 4);

    /* Every element is checked before the verdict, and the first few misses are printed with
     * where they sit in the tiling: one failed run on a GPU should say what went wrong. */
    double worst = 0;
    size_t bad = 0, nans = 0;
    uint32_t bi = 0, bj = 0;
    double bwant = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            double mag, want = ex_gemm_ref(af, bf, n, k, i, j, &mag);
            /* bf16 products are exact in f32; k f32 additions (the tensor cores' rounding is not
             * quite round-to-nearest) err by about k * 2^-23 * sum |a*b| at worst. */
            float got = c[(size_t)i * n + j];
            double err = fabs(got - want), tol = 2e-6 * k * mag + 1e-6;
            if (!(err <= tol)) {
                if (bad < 8)
                    printf("gemm_mma: %ux%ux%u: C[%u][%u] = %.9g, expected %.9g (block tile %u,%u; row %u, column %u "
                           "in it)\n",
                           m, n, k, i, j, got, want, i / OXIDE_EXAMPLE_GEMM_MMA_BM, j / OXIDE_EXAMPLE_GEMM_MMA_BN,
                           i % OXIDE_EXAMPLE_GEMM_MMA_BM, j % OXIDE_EXAMPLE_GEMM_MMA_BN);
                if (!bad++)
                    bi = i, bj = j, bwant = want;
                nans += isnan(got) != 0;
            } else if (mag > 0 && err / mag > worst) {
                worst = err / mag;
            }
        }
    if (bad)
        printf("gemm_mma: %ux%ux%u: %zu of %zu elements wrong (%zu NaN: never written); first C[%u][%u] = %.9g, "
               "expected %.9g\n",
               m, n, k, bad, nc, nans, bi, bj, c[(size_t)bi * n + bj], bwant);
    else
        printf("gemm_mma: %ux%ux%u ok (worst error %.2g of sum |a*b|)\n", m, n, k, worst);
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dc);
    free(a);
    free(b);
    free(af);
    free(bf);
    free(c);
    return bad != 0;
}

int main(void) {
    ex_env env;
    ex_setup(&env, "gemm_mma");
    int failed = run(&env, 512, 512, 512);
    failed += run(&env, 384, 256, 544); /* 17 k steps: the pipeline's tail, uneven tiles */
    failed += run(&env, 128, 128, 32);  /* one k step: the prologue's zero-filled copies */
    ex_teardown(&env);
    if (failed)
        ex_fail(&env, "%d of 3 shapes wrong (see above)", failed);
    return ex_pass(&env, "512x512x512, 384x256x544 and 128x128x32 match the CPU");
}
