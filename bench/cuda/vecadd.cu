// vecadd: out[i] = a[i] + b[i], one element per thread -- the CUDA C++ twin of
// examples/c/kernels/vecadd.c (same interface: every slice is a pointer and a u64 length).
extern "C" __global__ void vecadd(const float *__restrict__ a, unsigned long long alen,
                                  const float *__restrict__ b, unsigned long long blen,
                                  float *__restrict__ out, unsigned long long olen) {
    unsigned long long n = min(min(alen, blen), olen);
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}
