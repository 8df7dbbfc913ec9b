/* The table of example kernels and the one-kernel module helper. */
#include <string.h>

#include "oxide_examples.h"

const oxide_example_kernel oxide_example_kernels[] = {
    {"vecadd", oxide_example_vecadd, 80, "out[i] = a[i] + b[i]"},
    {"saxpy", oxide_example_saxpy, 80, "y[i] = alpha * x[i] + y[i]"},
    {"reduce", oxide_example_reduce, 80, "out[0] += sum(x): warp shuffles, shared memory, atomics"},
    {"sgemm", oxide_example_sgemm, 80, "C = A * B, 128x128 shared tiles, 8x8 register micro-tiles"},
    {"softmax", oxide_example_softmax, 80, "row softmax, one warp per row"},
    {"transpose", oxide_example_transpose, 80, "transpose through a padded 32x33 shared tile"},
    {"histogram", oxide_example_histogram, 80, "256-bin byte histogram: shared then global atomics"},
    {"cluster_dsmem", oxide_example_cluster_dsmem, 90, "cluster-wide sum through distributed shared memory"},
    {"gemm_mma", oxide_example_gemm_mma, 80, "bf16 C = A * B on tensor cores: cp.async stages, ldmatrix, mma.sync"},
    {NULL, NULL, 0, NULL},
};

const size_t oxide_example_kernel_count = sizeof oxide_example_kernels / sizeof oxide_example_kernels[0] - 1;

const oxide_example_kernel *oxide_example_find(const char *name) {
    for (size_t i = 0; name && i < oxide_example_kernel_count; i++)
        if (!strcmp(oxide_example_kernels[i].name, name))
            return &oxide_example_kernels[i];
    return NULL;
}

oxide_status oxide_example_module(oxide_context *ctx, const char *name, oxide_module **out) {
    const oxide_example_kernel *k = oxide_example_find(name);
    oxide_module *mod = NULL;
    oxide_status st = oxide_module_create(ctx, k ? k->name : "oxide_examples", &mod);
    if (st)
        return st;
    if (!k) {
        /* The library's own lookup records a NOT_FOUND message naming the kernel. */
        oxide_function *fn;
        st = oxide_module_get_function(mod, name ? name : "(null)", &fn);
        oxide_module_destroy(mod);
        return st ? st : OXIDE_ERROR_NOT_FOUND;
    }
    if (!out) {
        oxide_module_destroy(mod);
        return oxide_module_get_function(NULL, NULL, NULL);
    }
    st = k->build(ctx, mod);
    if (st) {
        oxide_module_destroy(mod);
        return st;
    }
    *out = mod;
    return OXIDE_OK;
}
