// Kernels for the runtime's GPU tests (tests/gpu). kernels.ptx is made from this file with
//   nvcc -ptx -arch=sm_90a -O3 kernels.cu -o kernels.ptx
// and then given the manifest line in kernels.manifest (scripts in tests/gpu/data/README.md).
// Each slice parameter is a pointer and a u64 length, as oxide's interface kinds lower.
#include <stdint.h>

extern "C" __global__ void vecadd(const float *a, uint64_t a_len, const float *b, uint64_t b_len, float *out,
                                  uint64_t out_len) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_len && i < a_len && i < b_len)
        out[i] = a[i] + b[i];
}

// Every scalar type in, each written out as a double (f16/bf16 and bool as their bits).
extern "C" __global__ void scalars(int8_t i8, int16_t i16, int32_t i32, int64_t i64, uint8_t u8, uint16_t u16,
                                   uint32_t u32, uint64_t u64, float f32, double f64, bool b, uint16_t f16_bits,
                                   uint16_t bf16_bits, double *out) {
    out[0] = i8;
    out[1] = i16;
    out[2] = i32;
    out[3] = (double)i64;
    out[4] = u8;
    out[5] = u16;
    out[6] = u32;
    out[7] = (double)u64;
    out[8] = f32;
    out[9] = f64;
    out[10] = b ? 1.0 : 0.0;
    out[11] = f16_bits;
    out[12] = bf16_bits;
}

struct __align__(8) affine {
    float a;
    int32_t pad;
    double b;
};

// Closure-like captures passed by value as 16 bytes.
extern "C" __global__ void affine_bytes(affine p, const float *x, uint64_t x_len, float *y, uint64_t y_len) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < x_len && i < y_len)
        y[i] = p.a * x[i] + (float)p.b;
}

extern "C" __global__ void inc(float *x, uint64_t len) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len)
        x[i] += 1.0f;
}

// out[block] = its rank in the cluster and the cluster's size.
extern "C" __global__ void cluster_ranks(uint32_t *out) {
    uint32_t rank, size;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
    if (threadIdx.x == 0)
        out[blockIdx.x] = rank | size << 16;
}

// Every block waits for all others: finishes only when all blocks are resident at once, which a
// cooperative launch guarantees. A clock bound keeps a wrong launch from hanging the test.
extern "C" __global__ void all_resident(uint32_t *counter, uint32_t *out) {
    if (threadIdx.x == 0) {
        atomicAdd(counter, 1u);
        long long start = clock64();
        uint32_t seen;
        while ((seen = *(volatile uint32_t *)counter) < gridDim.x && clock64() - start < 2000000000ll)
            ;
        out[blockIdx.x] = seen;
    }
}

// Dynamic shared memory beyond the default 48 KiB: fills it and sums it.
extern "C" __global__ void smem_sum(uint32_t words, uint64_t *out) {
    extern __shared__ uint32_t smem[];
    for (uint32_t j = threadIdx.x; j < words; j += blockDim.x)
        smem[j] = j;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint64_t s = 0;
        for (uint32_t j = 0; j < words; j++)
            s += smem[j];
        *out = s;
    }
}

// Burns about `cycles` clock cycles (for timing and stream-ordering tests).
extern "C" __global__ void spin(uint64_t cycles) {
    long long start = clock64();
    while ((uint64_t)(clock64() - start) < cycles)
        ;
}

// Writes far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void oob_write(float *p) { p[(1ull << 40) + threadIdx.x] = 1.0f; }

// A 128-byte TMA descriptor by value (like CUtensorMap): echoed back to check how it travels.
struct __align__(64) tma_desc {
    uint64_t w[16];
};
extern "C" __global__ void tma_echo(tma_desc d, uint64_t *out) {
    if (threadIdx.x < 16)
        out[threadIdx.x] = d.w[threadIdx.x];
}

extern "C" __global__ void empty() {}
