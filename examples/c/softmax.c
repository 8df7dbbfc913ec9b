/* softmax: row-wise softmax of a 1000 x 777 matrix against a double-precision CPU version. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "softmax");
    /* cols is not a multiple of 32, so the last lanes of each pass have nothing to do. */
    uint32_t rows = 1000, cols = 777;
    uint32_t rows_per_block = OXIDE_EXAMPLE_SOFTMAX_THREADS / 32;
    uint32_t block[3] = {OXIDE_EXAMPLE_SOFTMAX_THREADS, 1, 1},
             grid[3] = {(rows + rows_per_block - 1) / rows_per_block, 1, 1};
    float *x, *y;
    ex_run_matrix(&env, rows, cols, -8.0f, 8.0f, grid, block, &x, &y);

    double worst = 0;
    for (uint32_t r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        double m = -INFINITY, s = 0;
        for (uint32_t c = 0; c < cols; c++)
            m = fmax(m, xr[c]);
        for (uint32_t c = 0; c < cols; c++)
            s += exp(xr[c] - m);
        for (uint32_t c = 0; c < cols; c++) {
            double want = exp(xr[c] - m) / s, got = y[(size_t)r * cols + c];
            double rel = fabs(got - want) / want;
            if (!(rel < 2e-5))
                ex_fail(&env, "y[%u][%u] = %.9g, expected %.9g", r, c, got, want);
            if (rel > worst)
                worst = rel;
        }
    }
    ex_teardown(&env);
    free(x);
    free(y);
    return ex_pass(&env, "%ux%u rows match (worst relative error %.2g)", rows, cols, worst);
}
