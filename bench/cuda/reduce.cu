// reduce: out[0] += sum(x) -- the CUDA C++ twin of examples/c/kernels/reduce.c: grid-stride
// partial sums, a shfl.down tree per warp, per-warp partials in shared memory, the first warp
// combines them, one atomic per block. Blocks of 256 threads.
__device__ __forceinline__ float warp_sum_down(float v) {
#pragma unroll
    for (int d = 16; d >= 1; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

extern "C" __global__ void __launch_bounds__(256) reduce(const float *__restrict__ x, unsigned long long n,
                                                         float *__restrict__ out, unsigned long long outlen) {
    __shared__ float partials[32];
    unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + tid; i < n; i += stride)
        acc += x[i];
    float wsum = warp_sum_down(acc);
    if (lane == 0)
        partials[warp] = wsum;
    __syncthreads();
    if (warp == 0) {
        float pv = partials[lane];
        pv = lane < nwarps ? pv : 0.0f;
        float total = warp_sum_down(pv);
        if (lane == 0 && outlen != 0)
            atomicAdd(out, total);
    }
}
