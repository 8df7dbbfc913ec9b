// sgemm: C = A * B (row-major f32) -- the CUDA C++ twin of examples/c/kernels/sgemm.c, line for
// line: 128x128 block tiles, BK = 8, 256 threads each owning an 8x8 micro-tile in registers,
// A's panel stored transposed in shared memory, 16-byte global and shared loads.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256, 2)
sgemm(const float *__restrict__ A, unsigned long long alen, const float *__restrict__ B, unsigned long long blen,
      float *__restrict__ C, unsigned long long clen, unsigned M, unsigned N, unsigned K) {
    if (((M & (BM - 1)) | (N & (BN - 1)) | (K & (BK - 1))) != 0 || (unsigned long long)M * K > alen ||
        (unsigned long long)K * N > blen || (unsigned long long)M * N > clen)
        return;
    __shared__ __align__(16) float As[BK * BM];
    __shared__ __align__(16) float Bs[BK * BN];
    unsigned tid = threadIdx.x;
    unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned ty = tid >> 4, tx = tid & 15;
    unsigned a_r = tid >> 1, a_c = (tid & 1) * 4;
    unsigned b_r = tid >> 5, b_c = (tid & 31) * 4;
    unsigned a_base = (row0 + a_r) * K + a_c;
    unsigned b_base = b_r * N + col0 + b_c;
    float acc[TM * TN];
#pragma unroll
    for (int i = 0; i < TM * TN; i++)
        acc[i] = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += BK) {
        float4 av = *reinterpret_cast<const float4 *>(&A[a_base + k0]);
        float4 bv = *reinterpret_cast<const float4 *>(&B[b_base + k0 * N]);
        As[(a_c + 0) * BM + a_r] = av.x;
        As[(a_c + 1) * BM + a_r] = av.y;
        As[(a_c + 2) * BM + a_r] = av.z;
        As[(a_c + 3) * BM + a_r] = av.w;
        *reinterpret_cast<float4 *>(&Bs[b_r * BN + b_c]) = bv;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float af[TM], bf[TN];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float4 a4 = *reinterpret_cast<const float4 *>(&As[ty * TM + kk * BM + h * 4]);
                float4 b4 = *reinterpret_cast<const float4 *>(&Bs[tx * TN + kk * BN + h * 4]);
                af[h * 4 + 0] = a4.x, af[h * 4 + 1] = a4.y, af[h * 4 + 2] = a4.z, af[h * 4 + 3] = a4.w;
                bf[h * 4 + 0] = b4.x, bf[h * 4 + 1] = b4.y, bf[h * 4 + 2] = b4.z, bf[h * 4 + 3] = b4.w;
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i * TN + j] = fmaf(af[i], bf[j], acc[i * TN + j]);
        }
        __syncthreads();
    }
    unsigned crow = row0 + ty * TM, ccol = col0 + tx * TN;
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            C[(crow + i) * N + ccol + j] = acc[i * TN + j];
}
