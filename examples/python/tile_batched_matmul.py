"""Batched matmul on a 3-D grid: c[z] = a[z] @ b[z] for every batch z (program_id(2))."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4)
def bmm(a, b, c, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn, z = ot.program_id(0), ot.program_id(1), ot.program_id(2)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[2], BK):
        x = ot.reshape(ot.load(a, (z, pm * BM, k), (1, BM, BK)), (BM, BK))
        y = ot.reshape(ot.load(b, (z, k, pn * BN), (1, BK, BN)), (BK, BN))
        acc = ot.dot(x, y, acc)
    ot.store(c, (z, pm * BM, pn * BN), ot.reshape(acc.to(ot.bfloat16), (1, BM, BN)))


Z, M, N, K = 3, 70, 90, 48


def gpu_case(torch):
    a = torch.randn(Z, M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(Z, K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(Z, M, N, device="cuda", dtype=torch.bfloat16)
    return Case((ot.cdiv(M, 64), ot.cdiv(N, 64), Z), (a, b, c), dict(BM=64, BN=64, BK=16), c,
                torch.bmm(a.float(), b.float()), 2e-2, 5e-2)


def interp(np):
    rng = np.random.default_rng(8)
    bf16 = np_dtype("bfloat16")
    a, b = rng.standard_normal((Z, M, K)).astype(bf16), rng.standard_normal((Z, K, N)).astype(bf16)
    c = np.zeros((Z, M, N), bf16)
    bmm.interpret((ot.cdiv(M, 64), ot.cdiv(N, 64), Z), a, b, c, BM=64, BN=64, BK=16)
    check("bmm", c, np.matmul(a.astype(np.float32), b.astype(np.float32)), 2e-2, 5e-2)


if __name__ == "__main__":
    main("tile_batched_matmul", bmm, gpu_case, interp)
