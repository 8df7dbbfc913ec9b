"""fp8 (e4m3) matmul with per-tensor scales: a is M x K, b is given N x K (so c = a @ b.T), both
fp8; c = scale_a * scale_b * (a @ b.T), in bf16."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4)
def matmul_fp8(a, b, c, scale_a, scale_b, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[1], BK):
        x = ot.load(a, (pm * BM, k), (BM, BK))
        w = ot.load(b, (pn * BN, k), (BN, BK))
        acc = ot.dot(x, w.T, acc)
    ot.store(c, (pm * BM, pn * BN), (acc * (scale_a * scale_b)).to(ot.bfloat16))


M, N, K = 96, 80, 128


def gpu_case(torch):
    a = (torch.randn(M, K, device="cuda") * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(N, K, device="cuda") * 4).to(torch.float8_e4m3fn)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    return Case((ot.cdiv(M, 64), ot.cdiv(N, 64)), (a, b, c, 0.25, 0.5), dict(BM=64, BN=64, BK=64), c,
                0.125 * (a.float() @ b.float().T), 2e-2, 1e-1)


def interp(np):
    rng = np.random.default_rng(2)
    f8 = np_dtype("float8_e4m3fn")
    a = (rng.standard_normal((M, K)) * 4).astype(f8)
    b = (rng.standard_normal((N, K)) * 4).astype(f8)
    c = np.zeros((M, N), np_dtype("bfloat16"))
    matmul_fp8.interpret((ot.cdiv(M, 64), ot.cdiv(N, 64)), a, b, c, 0.25, 0.5, BM=64, BN=64, BK=64)
    check("matmul_fp8", c, 0.125 * (a.astype(np.float32) @ b.astype(np.float32).T), 2e-2, 1e-1)


if __name__ == "__main__":
    main("tile_matmul_fp8", matmul_fp8, gpu_case, interp)
