/* transpose: a 1000 x 1500 matrix (not a multiple of the 32 x 32 tile), checked exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "transpose");
    uint32_t rows = 1000, cols = 1500;
    const uint32_t t = OXIDE_EXAMPLE_TRANSPOSE_TILE;
    uint32_t block[3] = {t, OXIDE_EXAMPLE_TRANSPOSE_ROWS, 1}, grid[3] = {(cols + t - 1) / t, (rows + t - 1) / t, 1};
    float *x, *y;
    ex_run_matrix(&env, rows, cols, -1000.0f, 1000.0f, grid, block, &x, &y);

    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            if (y[(size_t)c * rows + r] != x[(size_t)r * cols + c])
                ex_fail(&env, "y[%u][%u] = %.9g, expected x[%u][%u] = %.9g", c, r, y[(size_t)c * rows + r], r, c,
                        x[(size_t)r * cols + c]);
    ex_teardown(&env);
    free(x);
    free(y);
    return ex_pass(&env, "%ux%u transposed exactly", rows, cols);
}
