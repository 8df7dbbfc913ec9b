/* reduce: the sum of 16 million floats, against a double-precision CPU sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "reduce");
    size_t n = (1u << 24) + 4321;
    float *x = ex_malloc(&env, n * 4);
    /* Positive values, so the tolerance can be relative to the sum. */
    ex_fill_f32(x, n, 0.25f, 1.75f);
    double want = 0.0;
    for (size_t i = 0; i < n; i++)
        want += x[i];
    oxide_buffer *dx = ex_upload(&env, x, n * 4), *dout = ex_upload(&env, NULL, 4);
    ex_check(&env, oxide_memset(env.dev, oxide_buffer_ptr(dout), 0, 1, 4), "memset");

    oxide_arg args[] = {oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 1)};
    int sms = 0;
    ex_check(&env, oxide_device_sm_count(env.dev, &sms), "SM count");
    /* Enough blocks to fill the GPU several times over; each thread then sums a strided run. */
    uint32_t block[3] = {OXIDE_EXAMPLE_REDUCE_THREADS, 1, 1}, grid[3] = {(uint32_t)sms * 8, 1, 1};
    ex_launch(&env, grid, block, args, 2);
    float got;
    ex_download(&env, &got, dout, 4);

    /* f32 partial sums of ~n / (blocks * threads) terms, a 5-level tree per warp, then one atomic
     * per block: error well under 1e-4 of the sum for these inputs. */
    double rel = fabs(got - want) / want;
    if (!(rel < 1e-4))
        ex_fail(&env, "sum %.9g, expected %.9g (relative error %.3g)", got, want, rel);
    oxide_buffer_free(dx);
    oxide_buffer_free(dout);
    ex_teardown(&env);
    free(x);
    return ex_pass(&env, "sum of %zu floats %.9g (relative error %.2g)", n, got, rel);
}
