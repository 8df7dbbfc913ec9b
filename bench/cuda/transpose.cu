// Twin of examples/c/kernels/transpose.c: 32 x 32 tiles padded to 33, blocks of 32 x 8.
#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(256)
    transpose(const float *__restrict__ x, unsigned long long x_len, float *__restrict__ y, unsigned long long y_len,
              unsigned rows, unsigned cols) {
    unsigned long long size = (unsigned long long)rows * cols;
    if (size > x_len || size > y_len)
        return;
    __shared__ float tile[TILE * (TILE + 1)];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
    unsigned c_in = bx + tx;
    bool c_ok = c_in < cols;
#pragma unroll
    for (unsigned j = 0; j < TILE; j += ROWS) {
        unsigned tr = ty + j, r = by + tr;
        if (c_ok & (r < rows))
            tile[tr * (TILE + 1) + tx] = x[(unsigned long long)r * cols + c_in];
    }
    __syncthreads();
    unsigned c_out = by + tx;
    bool c_out_ok = c_out < rows;
#pragma unroll
    for (unsigned j = 0; j < TILE; j += ROWS) {
        unsigned tr = ty + j, r = bx + tr;
        if (c_out_ok & (r < cols))
            y[(unsigned long long)r * rows + c_out] = tile[tx * (TILE + 1) + tr];
    }
}
