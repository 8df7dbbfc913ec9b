// The same algorithms as examples/rust/{vecadd,reduce,matmul}, in CUDA C++ (nvcc -O3 -arch=sm_90a).
extern "C" __global__ void vecadd(const float *a, const float *b, float *c, unsigned long long n) {
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void __launch_bounds__(256) block_sum(const float *x, unsigned long long n, float *sums) {
    __shared__ float tile[256];
    unsigned t = threadIdx.x;
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned s = 128; s > 0; s >>= 1) {
        if (t < s) tile[t] += tile[t + s];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = tile[0];
}

#define TILE 16
extern "C" __global__ void __launch_bounds__(256) matmul(const float *a, const float *b, float *c, unsigned n) {
    __shared__ float as[TILE * TILE], bs[TILE * TILE];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (unsigned t = 0; t < n; t += TILE) {
        as[ty * TILE + tx] = (row < n && t + tx < n) ? a[row * n + t + tx] : 0.0f;
        bs[ty * TILE + tx] = (col < n && t + ty < n) ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc = fmaf(as[ty * TILE + k], bs[k * TILE + tx], acc);
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}
