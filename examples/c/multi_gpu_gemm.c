/* multi_gpu_gemm: C = A * B (bf16 in, f32 out, the gemm_mma kernel) split by rows of A over every
 * visible GPU, B on each, the row blocks gathered on GPU 0 through NCCL (opened at run time: see
 * util/mgpu.c) or, without NCCL, oxide's peer copies. The gathered C must equal, bit for bit, the
 * product of the same kernel on GPU 0 alone, and sampled elements a double-precision CPU product. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "mgpu.h"
#include "oxide_examples.h"

/* The gathered product of g (m x n) into out. */
static void gathered(mg_gemm *g, float *out) {
    mg_run(g);
    mg_wait(g);
    ex_check(g->env,
             oxide_memcpy_dtoh(g->dev[0], out, oxide_buffer_ptr(g->gathered), (size_t)g->m * g->n * sizeof *out),
             "copy from the device");
}

/* Elements of c that differ from ref bit for bit (NaN patterns included). */
static size_t differ(const float *c, const float *ref, size_t count) {
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += memcmp(&c[i], &ref[i], sizeof *c) != 0;
    return bad;
}

int main(void) {
    ex_env env;
    ex_setup(&env, "gemm_mma");
    env.name = "multi_gpu_gemm";
    int ndev = 0;
    ex_check(&env, oxide_device_count(&ndev), "oxide_device_count");
    ndev = ndev > MG_MAX_DEVICES ? MG_MAX_DEVICES : ndev;
    const uint32_t m = 256 * (uint32_t)ndev, n = 384, k = 192;
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    uint16_t *a = ex_malloc(&env, na * 2), *b = ex_malloc(&env, nb * 2);
    float *af = ex_malloc(&env, na * 4), *bf = ex_malloc(&env, nb * 4);
    float *c = ex_malloc(&env, nc * 4), *one = ex_malloc(&env, nc * 4), *peer = ex_malloc(&env, nc * 4);
    ex_fill_bf16(a, af, na);
    ex_fill_bf16(b, bf, nb);

    mg_nccl nccl;
    int have_nccl = mg_nccl_open(&nccl) == 0;
    if (have_nccl)
        printf("multi_gpu_gemm: NCCL %d.%d.%d from %s\n", nccl.version / 10000, nccl.version / 100 % 100,
               nccl.version % 100, nccl.path);
    else
        printf("multi_gpu_gemm: NCCL not used (%s); gathering with oxide_memcpy_peer_async\n", nccl.path);

    mg_gemm ref, split;
    mg_setup(&ref, &env, 1, m, n, k, a, b, NULL, 0);
    gathered(&ref, one);
    mg_teardown(&ref);

    mg_setup(&split, &env, ndev, m, n, k, a, b, have_nccl ? &nccl : NULL, 1);
    gathered(&split, c);
    mg_teardown(&split);
    size_t bad = differ(c, one, nc);
    if (bad)
        ex_fail(&env,
                "%zu of %zu elements gathered from %d GPU(s) differ from the one-GPU product (C[0][0] %.9g vs %.9g)",
                bad, nc, ndev, c[0], one[0]);
    if (have_nccl && ndev > 1) { /* the other gather too */
        mg_setup(&split, &env, ndev, m, n, k, a, b, NULL, 1);
        gathered(&split, peer);
        mg_teardown(&split);
        if ((bad = differ(peer, one, nc)))
            ex_fail(&env, "%zu elements gathered with peer copies differ from the one-GPU product", bad);
    }

    double worst = 0;
    for (int s = 0; s < 1024; s++) {
        uint32_t i = (uint32_t)(ex_rand_u64() % m), j = (uint32_t)(ex_rand_u64() % n);
        double mag, want = ex_gemm_ref(af, bf, n, k, i, j, &mag), err = fabs(c[(size_t)i * n + j] - want);
        if (!(err <= 2e-6 * k * mag + 1e-6))
            ex_fail(&env, "C[%u][%u] = %.9g, the CPU says %.9g (rows %u..%u are GPU %u's)", i, j, c[(size_t)i * n + j],
                    want, i / (m / ndev) * (m / ndev), (i / (m / ndev) + 1) * (m / ndev) - 1, i / (m / ndev));
        worst = err > worst ? err : worst;
    }
    if (ndev == 1)
        printf("multi_gpu_gemm: one GPU: the split is one block and the gather a copy from GPU 0 to itself; two GPUs "
               "or more split it\n");
    free(a), free(b), free(af), free(bf), free(c), free(one), free(peer);
    ex_teardown(&env);
    return ex_pass(&env,
                   "%ux%ux%u over %d GPU(s), gathered on GPU 0 with %s: equal to the one-GPU product, max error "
                   "%.2g against the CPU",
                   m, n, k, ndev, have_nccl ? "NCCL" : "oxide peer copies", worst);
}
