/* The kernel of tests/gpu/data/contract.ptx (out[i] = 3 i + 1, 128 threads a block), launched
 * over n elements of out, which holds other values first; the number of values it got wrong.
 * Shared by test_gpu_contract.c and test_gpu_bundle.c. */
#ifndef OXIDE_TEST_CONTRACT_FILL_H
#define OXIDE_TEST_CONTRACT_FILL_H

#include "gpu_test.h"

static inline size_t contract_fill_wrong(oxide_device *dev, oxide_kernel *k, oxide_buffer *out, size_t n) {
    OK(oxide_memset(dev, oxide_buffer_ptr(out), 0xff, n * 4, 1));
    oxide_arg a = oxide_arg_from_buffer(out, OXIDE_SCALAR_U32, 1);
    uint32_t grid[3] = {(uint32_t)((n + 127) / 128), 1, 1}, block[3] = {128, 1, 1};
    /* smem 0 takes the manifest's dyn_smem, 256, which the contract asks for */
    OK(oxide_kernel_launch(k, NULL, grid, block, 0, &a, 1));
    OK(oxide_device_synchronize(dev));
    uint32_t *host = malloc(n * 4);
    OK(oxide_memcpy_dtoh(dev, host, oxide_buffer_ptr(out), n * 4));
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += host[i] != 3 * i + 1;
    free(host);
    return wrong;
}

#endif
