"""Matmul with a transposed operand: b is stored N x K (a linear layer's weight), c = a @ b.T."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4)
def matmul_nt(a, b, c, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[1], BK):
        x = ot.load(a, (pm * BM, k), (BM, BK))
        w = ot.load(b, (pn * BN, k), (BN, BK))  # rows of b are columns of b.T
        acc = ot.dot(x, w.T, acc)
    ot.store(c, (pm * BM, pn * BN), acc.to(ot.bfloat16))


M, N, K = 100, 150, 96


def gpu_case(torch):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    return Case((ot.cdiv(M, 64), ot.cdiv(N, 64)), (a, b, c), dict(BM=64, BN=64, BK=32), c, a.float() @ b.float().T,
                2e-2, 5e-2)


def interp(np):
    rng = np.random.default_rng(6)
    bf16 = np_dtype("bfloat16")
    a, b = rng.standard_normal((M, K)).astype(bf16), rng.standard_normal((N, K)).astype(bf16)
    c = np.zeros((M, N), bf16)
    matmul_nt.interpret((ot.cdiv(M, 64), ot.cdiv(N, 64)), a, b, c, BM=64, BN=64, BK=32)
    check("matmul_nt", c, a.astype(np.float32) @ b.astype(np.float32).T, 2e-2, 5e-2)


if __name__ == "__main__":
    main("tile_matmul_transposed", matmul_nt, gpu_case, interp)
