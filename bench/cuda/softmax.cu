// Twin of examples/c/kernels/softmax.c: one warp per row, three lane-strided passes.
extern "C" __global__ void __launch_bounds__(256)
    softmax(const float *__restrict__ x, unsigned long long x_len, float *__restrict__ y, unsigned long long y_len,
            unsigned rows, unsigned cols) {
    unsigned tid = threadIdx.x, lane = tid & 31;
    unsigned row = blockIdx.x * (blockDim.x >> 5) + (tid >> 5);
    unsigned long long size = (unsigned long long)rows * cols;
    if (row >= rows || size > x_len || size > y_len)
        return;
    unsigned long long base = (unsigned long long)row * cols;
    const float *xrow = x + base;
    float *yrow = y + base;
    float m = -__int_as_float(0x7f800000);
    for (unsigned c = lane; c < cols; c += 32)
        m = fmaxf(m, xrow[c]);
    for (int d = 16; d >= 1; d /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
    float s = 0.0f;
    for (unsigned c = lane; c < cols; c += 32)
        s += expf(xrow[c] - m);
    for (int d = 16; d >= 1; d /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, d);
    float inv = 1.0f / s;
    for (unsigned c = lane; c < cols; c += 32)
        yrow[c] = expf(xrow[c] - m) * inv;
}
