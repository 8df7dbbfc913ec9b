/* cluster_dsmem (sm_90): each cluster's rank-0 block sums the shared arrays of all the
 * cluster's blocks through distributed shared memory; checked exactly against the CPU, which
 * adds in the same order. */
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "cluster_dsmem");
    const uint32_t cs = OXIDE_EXAMPLE_CLUSTER_SIZE, t = OXIDE_EXAMPLE_CLUSTER_THREADS, clusters = 300;
    /* x ends 100 elements before the last block does: those read as 0. */
    size_t n = (size_t)clusters * cs * t - 100, nout = (size_t)clusters * t;
    float *x = ex_malloc(&env, n * 4), *out = ex_malloc(&env, nout * 4);
    ex_fill_f32(x, n, -50.0f, 50.0f);
    oxide_buffer *dx = ex_upload(&env, x, n * 4), *dout = ex_upload(&env, NULL, nout * 4);

    oxide_arg args[] = {oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 1)};
    /* The cluster shape comes from the kernel's manifest. */
    uint32_t block[3] = {t, 1, 1}, grid[3] = {clusters * cs, 1, 1};
    ex_launch(&env, grid, block, args, 2);
    ex_download(&env, out, dout, nout * 4);

    for (uint32_t c = 0; c < clusters; c++)
        for (uint32_t i = 0; i < t; i++) {
            float want = 0.0f;
            for (uint32_t r = 0; r < cs; r++) {
                size_t g = ((size_t)c * cs + r) * t + i;
                want += g < n ? x[g] : 0.0f;
            }
            if (out[(size_t)c * t + i] != want)
                ex_fail(&env, "cluster %u, thread %u: %.9g, expected %.9g", c, i, out[(size_t)c * t + i], want);
        }
    oxide_buffer_free(dx);
    oxide_buffer_free(dout);
    ex_teardown(&env);
    free(x);
    free(out);
    return ex_pass(&env, "%u clusters of %u blocks summed through distributed shared memory", clusters, cs);
}
