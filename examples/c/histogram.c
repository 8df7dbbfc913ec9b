/* histogram: 256-bin histogram of 10 million random bytes, checked exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "oxide_examples.h"

int main(void) {
    ex_env env;
    ex_setup(&env, "histogram");
    size_t n = 10000000 + 17;
    unsigned char *data = ex_malloc(&env, n);
    uint32_t want[256] = {0}, got[256];
    /* Skewed, so some bins are hot (contention on the shared atomics) and some stay rare. */
    for (size_t i = 0; i < n; i++) {
        uint64_t r = ex_rand_u64();
        data[i] = (unsigned char)((r >> 60) < 4 ? (r >> 32) & 7 : r >> 40);
        want[data[i]]++;
    }
    const size_t nb = OXIDE_EXAMPLE_HISTOGRAM_BINS;
    oxide_buffer *dd = ex_upload(&env, data, n), *db = ex_upload(&env, NULL, nb * 4);
    ex_check(&env, oxide_memset(env.dev, oxide_buffer_ptr(db), 0, nb, 4), "memset");

    oxide_arg args[] = {oxide_arg_from_buffer(dd, OXIDE_SCALAR_U8, 0), oxide_arg_from_buffer(db, OXIDE_SCALAR_U32, 1)};
    int sms = 0;
    ex_check(&env, oxide_device_sm_count(env.dev, &sms), "SM count");
    uint32_t block[3] = {OXIDE_EXAMPLE_HISTOGRAM_THREADS, 1, 1}, grid[3] = {(uint32_t)sms * 4, 1, 1};
    ex_launch(&env, grid, block, args, 2);
    ex_download(&env, got, db, sizeof got);

    for (int i = 0; i < 256; i++)
        if (got[i] != want[i])
            ex_fail(&env, "bin %d holds %u, expected %u", i, got[i], want[i]);
    oxide_buffer_free(dd);
    oxide_buffer_free(db);
    ex_teardown(&env);
    free(data);
    return ex_pass(&env, "%zu bytes counted exactly", n);
}
