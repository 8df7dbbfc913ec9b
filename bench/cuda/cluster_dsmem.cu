// Twin of examples/c/kernels/cluster_dsmem.c: clusters of 4 blocks of 256 threads; rank 0 sums
// the cluster's shared arrays through distributed shared memory.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define CS 4
#define T 256

extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(T)
    cluster_dsmem(const float *__restrict__ x, unsigned long long n, float *__restrict__ out,
                  unsigned long long out_len) {
    __shared__ float buf[T];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned tid = threadIdx.x;
    unsigned long long gid = (unsigned long long)blockIdx.x * blockDim.x + tid;
    buf[tid] = gid < n ? x[gid] : 0.0f;
    cluster.sync();
    if (cluster.block_rank() == 0) {
        float sum = 0.0f;
#pragma unroll
        for (int r = 0; r < CS; r++)
            sum += *cluster.map_shared_rank(&buf[tid], r);
        unsigned long long o = (unsigned long long)(blockIdx.x / CS) * T + tid;
        if (o < out_len)
            out[o] = sum;
    }
    cluster.sync();
}
