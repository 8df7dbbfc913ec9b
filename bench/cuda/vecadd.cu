// vecadd: out[i] = a[i] + b[i], two elements per thread a block width apart -- the CUDA C++
// twin of examples/c/kernels/vecadd.c (same interface: every slice is a pointer and a u64 length).
extern "C" __global__ void vecadd(const float *__restrict__ a, unsigned long long alen,
                                  const float *__restrict__ b, unsigned long long blen,
                                  float *__restrict__ out, unsigned long long olen) {
    const int K = 2;
    unsigned long long n = min(min(alen, blen), olen);
    unsigned long long s = blockDim.x;
    unsigned long long base = (unsigned long long)blockIdx.x * s * K + threadIdx.x;
    if (base + s * (K - 1) < n) {
        float x[K], y[K];
        for (int j = 0; j < K; j++)
            x[j] = a[base + s * j];
        for (int j = 0; j < K; j++)
            y[j] = b[base + s * j];
        for (int j = 0; j < K; j++)
            out[base + s * j] = x[j] + y[j];
    } else {
        for (unsigned long long k = 0; k < K && base + s * k < n; k++)
            out[base + s * k] = a[base + s * k] + b[base + s * k];
    }
}
