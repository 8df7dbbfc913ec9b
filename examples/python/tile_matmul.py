"""bf16 matmul of any shape: c[M, N] = a[M, K] @ b[K, N], accumulated in f32."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4, stages=3)
def matmul(a, b, c, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[1], BK):
        x = ot.load(a, (pm * BM, k), (BM, BK))  # out of bounds: 0, so ragged edges add nothing
        y = ot.load(b, (k, pn * BN), (BK, BN))
        acc = ot.dot(x, y, acc)
    ot.store(c, (pm * BM, pn * BN), acc.to(ot.bfloat16))


def grid(M, N, BM=64, BN=64):
    return (ot.cdiv(M, BM), ot.cdiv(N, BN))


M, N, K = 200, 136, 72


def gpu_case(torch):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    return Case(grid(M, N), (a, b, c), dict(BM=64, BN=64, BK=32), c, a.float() @ b.float(), 2e-2, 5e-2)


def interp(np):
    rng = np.random.default_rng(1)
    bf16 = np_dtype("bfloat16")
    a = rng.standard_normal((M, K)).astype(bf16)
    b = rng.standard_normal((K, N)).astype(bf16)
    c = np.zeros((M, N), bf16)
    matmul.interpret(grid(M, N), a, b, c, BM=64, BN=64, BK=32)
    check("matmul", c, a.astype(np.float32) @ b.astype(np.float32), 2e-2, 5e-2)


if __name__ == "__main__":
    main("tile_matmul", matmul, gpu_case, interp)
