// Twin of examples/c/kernels/histogram.c: 256 byte bins, block-scope shared atomics, then one
// device-scope atomic per non-empty bin.
#define BINS 256

extern "C" __global__ void __launch_bounds__(256)
    histogram(const unsigned char *__restrict__ data, unsigned long long n, unsigned *__restrict__ bins,
              unsigned long long nbins) {
    if (nbins < BINS)
        return;
    __shared__ unsigned hist[BINS];
    unsigned tid = threadIdx.x, nt = blockDim.x;
    unsigned long long stride = (unsigned long long)gridDim.x * nt;
    for (unsigned i = tid; i < BINS; i += nt)
        hist[i] = 0;
    __syncthreads();
    for (unsigned long long i = (unsigned long long)blockIdx.x * nt + tid; i < n; i += stride)
        atomicAdd_block(&hist[data[i]], 1u);
    __syncthreads();
    for (unsigned i = tid; i < BINS; i += nt) {
        unsigned count = hist[i];
        if (count != 0)
            atomicAdd(&bins[i], count);
    }
}
