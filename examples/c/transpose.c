/* transpose: a 1000 x 1500 matrix (not a multiple of the 32 x 32 tile), checked exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "transpose");
    uint32_t rows = 1000, cols = 1500;
    size_t n = (size_t)rows * cols;
    float *x = ex_malloc(&env, n * 4), *y = ex_malloc(&env, n * 4);
    ex_fill_f32(x, n, -1000.0f, 1000.0f);
    oxide_buffer *dx = ex_upload(&env, x, n * 4), *dy = ex_upload(&env, NULL, n * 4);

    oxide_arg args[] = {oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0), oxide_arg_from_buffer(dy, OXIDE_SCALAR_F32, 1),
                        oxide_arg_u32(rows), oxide_arg_u32(cols)};
    const uint32_t t = OXIDE_EXAMPLE_TRANSPOSE_TILE;
    uint32_t block[3] = {t, OXIDE_EXAMPLE_TRANSPOSE_ROWS, 1}, grid[3] = {(cols + t - 1) / t, (rows + t - 1) / t, 1};
    ex_launch(&env, grid, block, args, 4);
    ex_download(&env, y, dy, n * 4);

    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            if (y[(size_t)c * rows + r] != x[(size_t)r * cols + c])
                ex_fail(&env, "y[%u][%u] = %.9g, expected x[%u][%u] = %.9g", c, r, y[(size_t)c * rows + r], r, c,
                        x[(size_t)r * cols + c]);
    oxide_buffer_free(dx);
    oxide_buffer_free(dy);
    ex_teardown(&env);
    free(x);
    free(y);
    return ex_pass(&env, "%ux%u transposed exactly", rows, cols);
}
