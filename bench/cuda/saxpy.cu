// saxpy: y[i] = alpha * x[i] + y[i] -- the CUDA C++ twin of examples/c/kernels/saxpy.c.
extern "C" __global__ void saxpy(float alpha, const float *__restrict__ x, unsigned long long xlen,
                                 float *__restrict__ y, unsigned long long ylen) {
    unsigned long long n = min(xlen, ylen);
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaf(alpha, x[i], y[i]);
}
