/* vecadd: out = a + b on the GPU, checked element by element against the CPU. */
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "vecadd");
    /* Not a multiple of the block size, so the bounds check is exercised. */
    size_t n = (1u << 20) + 12345;
    float *a = ex_malloc(&env, n * 4), *b = ex_malloc(&env, n * 4), *out = ex_malloc(&env, n * 4);
    ex_fill_f32(a, n, -100.0f, 100.0f);
    ex_fill_f32(b, n, -100.0f, 100.0f);
    oxide_buffer *da = ex_upload(&env, a, n * 4), *db = ex_upload(&env, b, n * 4), *dout = ex_upload(&env, NULL, n * 4);

    oxide_arg args[] = {oxide_arg_from_buffer(da, OXIDE_SCALAR_F32, 0), oxide_arg_from_buffer(db, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 1)};
    const size_t per_block = 256 * OXIDE_EXAMPLE_VECADD_PER_THREAD;
    uint32_t block[3] = {256, 1, 1}, grid[3] = {(uint32_t)((n + per_block - 1) / per_block), 1, 1};
    ex_launch(&env, grid, block, args, 3);
    ex_download(&env, out, dout, n * 4);

    for (size_t i = 0; i < n; i++)
        if (out[i] != a[i] + b[i])
            ex_fail(&env, "out[%zu] = %.9g, expected %.9g + %.9g = %.9g", i, out[i], a[i], b[i], a[i] + b[i]);
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dout);
    ex_teardown(&env);
    free(a);
    free(b);
    free(out);
    return ex_pass(&env, "%zu sums exact", n);
}
