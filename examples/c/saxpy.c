/* saxpy: y = alpha * x + y (one fused multiply-add), checked exactly against fmaf on the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "saxpy");
    size_t n = (1u << 20) + 777;
    float alpha = ex_rand_f32(-4.0f, 4.0f);
    float *x = ex_malloc(&env, n * 4), *y = ex_malloc(&env, n * 4), *got = ex_malloc(&env, n * 4);
    ex_fill_f32(x, n, -10.0f, 10.0f);
    ex_fill_f32(y, n, -10.0f, 10.0f);
    oxide_buffer *dx = ex_upload(&env, x, n * 4), *dy = ex_upload(&env, y, n * 4);

    oxide_arg args[] = {oxide_arg_f32(alpha), oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(dy, OXIDE_SCALAR_F32, 1)};
    uint32_t block[3] = {256, 1, 1}, grid[3] = {(uint32_t)((n + 255) / 256), 1, 1};
    ex_launch(&env, grid, block, args, 3);
    ex_download(&env, got, dy, n * 4);

    for (size_t i = 0; i < n; i++) {
        float want = fmaf(alpha, x[i], y[i]);
        if (got[i] != want)
            ex_fail(&env, "y[%zu] = %.9g, expected fma(%.9g, %.9g, %.9g) = %.9g", i, got[i], alpha, x[i], y[i], want);
    }
    oxide_buffer_free(dx);
    oxide_buffer_free(dy);
    ex_teardown(&env);
    free(x);
    free(y);
    free(got);
    return ex_pass(&env, "%zu elements exact (alpha %.6g)", n, alpha);
}
