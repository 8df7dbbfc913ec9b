/* A fake CUDA driver for exercising the bindings' GPU code paths on a machine without a GPU
 * (OXIDE_CUDA_DRIVER=.../libfakecuda.so). Memory is host memory; a few kernels are emulated by
 * their .entry name (vecadd, saxpy, empty, and Rust-built map_f32_scale by its manifest); every
 * other launch does nothing. It checks Python/C++ plumbing, not GPU behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

CUresult cuGetErrorName(CUresult e, const char **s) {
    (void)e;
    *s = "CUDA_ERROR_FAKE";
    return 0;
}
CUresult cuGetErrorString(CUresult e, const char **s) {
    (void)e;
    *s = "fake driver error";
    return 0;
}
CUresult cuDriverGetVersion(int *v) {
    *v = 13000;
    return 0;
}
CUresult cuDeviceGetCount(int *n) {
    *n = 1;
    return 0;
}
CUresult cuDeviceGet(CUdevice *d, int i) {
    if (i != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return 0;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void)d;
    strncpy(name, "Fake GPU", (size_t)len);
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    (void)d;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    default: *v = 1024;
    }
    return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
    (void)d;
    *b = (size_t)1 << 34;
    return 0;
}
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) {
    *f = (size_t)1 << 33;
    *t = (size_t)1 << 34;
    return 0;
}
static char ctx_storage;
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    (void)d;
    *c = (CUcontext)&ctx_storage;
    return 0;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
    *c = (CUcontext)&ctx_storage;
    return 0;
}
CUresult cuStreamCreate(CUstream *s, unsigned f) {
    (void)f;
    *s = (CUstream)malloc(16);
    return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) {
    free(s);
    return 0;
}
CUresult cuEventCreate(CUevent *e, unsigned f) {
    (void)f;
    *e = (CUevent)malloc(16);
    return 0;
}
CUresult cuEventDestroy_v2(CUevent e) {
    free(e);
    return 0;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    (void)a, (void)b;
    *ms = 0.25f;
    return 0;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return cuEventElapsedTime_v2(ms, a, b); }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    void *m = calloc(1, n + 256);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
    free((void *)(uintptr_t)p);
    return 0;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) {
    (void)f;
    *p = malloc(n);
    return 0;
}
CUresult cuMemFreeHost(void *p) {
    free(p);
    return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    memcpy((void *)(uintptr_t)d, s, n);
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    memcpy(d, (void *)(uintptr_t)s, n);
    return 0;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) {
    (void)st;
    return cuMemcpyHtoD_v2(d, s, n);
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) {
    (void)st;
    return cuMemcpyDtoH_v2(d, s, n);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    (void)st;
    return cuMemcpyDtoD_v2(d, s, n);
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
    memset((void *)(uintptr_t)d, v, n);
    return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
    (void)s;
    return cuMemsetD8_v2(d, v, n);
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
    for (size_t i = 0; i < n; i++)
        ((unsigned *)(uintptr_t)d)[i] = v;
    return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
    (void)s;
    return cuMemsetD32_v2(d, v, n);
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v) {
    (void)n, (void)o, (void)v;
    *m = (CUmodule)strdup((const char *)img); /* the PTX text, to find .entry names in */
    return 0;
}
CUresult cuModuleUnload(CUmodule m) {
    free(m);
    return 0;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    char want[256];
    snprintf(want, sizeof want, ".entry %s(", name);
    if (!strstr((const char *)m, want))
        return CUDA_ERROR_NOT_FOUND;
    /* Interned names, so that function handles need no freeing (as with a real driver). */
    static char names[64][128];
    static int used;
    for (int i = 0; i < used; i++)
        if (!strcmp(names[i], name)) {
            *f = (CUfunction)names[i];
            return 0;
        }
    if (used == 64)
        return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(names[used], sizeof names[used], "%s", name);
    *f = (CUfunction)names[used++];
    return 0;
}
CUresult cuFuncGetAttribute(int *v, int a, CUfunction f) {
    (void)f;
    *v = a >= CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH && a <= CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH ? 0 : 32;
    return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int b, size_t s) {
    (void)f, (void)b, (void)s;
    *n = 8;
    return 0;
}
CUresult cuOccupancyMaxPotentialBlockSize(int *g, int *b, CUfunction f, CUoccupancyB2DSize fn, size_t s, int l) {
    (void)f, (void)fn, (void)s, (void)l;
    *g = 264;
    *b = 1024;
    return 0;
}

#define P(i, T) (*(T *)params[i])
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream s, void **params, void **extra) {
    (void)gy, (void)gz, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
    const char *name = (const char *)f;
    uint64_t threads = (uint64_t)gx * bx;
    if (!strcmp(name, "vecadd")) { /* a, alen, b, blen, out, olen */
        float *a = P(0, float *), *b = P(2, float *), *o = P(4, float *);
        uint64_t n = P(5, uint64_t);
        n = n < P(1, uint64_t) ? n : P(1, uint64_t);
        n = n < P(3, uint64_t) ? n : P(3, uint64_t);
        for (uint64_t i = 0; i < n && i < threads; i++)
            o[i] = a[i] + b[i];
    } else if (!strcmp(name, "saxpy")) { /* a, x, xlen, y, ylen, n */
        float a = P(0, float), *x = P(1, float *), *y = P(3, float *);
        uint64_t n = P(5, uint64_t);
        for (uint64_t i = 0; i < n && i < threads; i++)
            y[i] = a * x[i] + y[i];
    } else if (!strncmp(name, "map_dcd01ef8", 12)) { /* Rust map::<f32>(move |x| x * k + 1.0) */
        float k = P(0, float), *x = P(1, float *), *o = P(3, float *);
        uint64_t n = P(4, uint64_t);
        for (uint64_t i = 0; i < n && i < threads; i++)
            o[i] = x[i] * k + 1.0f;
    } else if (!strncmp(name, "map_44cdc478", 12)) { /* Rust map::<f64>(move |x| x * kd - 2.0) */
        double k = P(0, double), *x = P(1, double *), *o = P(3, double *);
        uint64_t n = P(4, uint64_t);
        for (uint64_t i = 0; i < n && i < threads; i++)
            o[i] = x[i] * k - 2.0;
    }
    return 0;
}
