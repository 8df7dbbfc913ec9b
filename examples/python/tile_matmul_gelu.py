"""Matmul + bias + GELU (the erf form), bf16 in and out: c = gelu(a @ b + bias)."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4)
def matmul_gelu(a, b, bias, c, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    acc = ot.zeros((BM, BN), ot.float32)
    for k in range(0, a.shape[1], BK):
        acc = ot.dot(ot.load(a, (pm * BM, k), (BM, BK)), ot.load(b, (k, pn * BN), (BK, BN)), acc)
    h = acc + ot.load(bias, (pn * BN,), (BN,)).to(ot.float32)[None, :]
    g = 0.5 * h * (1.0 + ot.erf(h * 0.7071067811865476))
    ot.store(c, (pm * BM, pn * BN), g.to(ot.bfloat16))


M, N, K = 130, 96, 64


def reference(np, a, b, bias):
    from math import erf
    h = a.astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32)
    return 0.5 * h * (1.0 + np.vectorize(erf)(h / np.sqrt(2.0)))


def gpu_case(torch):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    want = torch.nn.functional.gelu(a.float() @ b.float() + bias.float())
    return Case((ot.cdiv(M, 64), ot.cdiv(N, 64)), (a, b, bias, c), dict(BM=64, BN=64, BK=32), c, want, 2e-2, 5e-2)


def interp(np):
    rng = np.random.default_rng(5)
    bf16 = np_dtype("bfloat16")
    a, b = rng.standard_normal((M, K)).astype(bf16), rng.standard_normal((K, N)).astype(bf16)
    bias = rng.standard_normal(N).astype(bf16)
    c = np.zeros((M, N), bf16)
    matmul_gelu.interpret((ot.cdiv(M, 64), ot.cdiv(N, 64)), a, b, bias, c, BM=64, BN=64, BK=32)
    check("matmul_gelu", c, reference(np, a, b, bias), 2e-2, 5e-2)


if __name__ == "__main__":
    main("tile_matmul_gelu", matmul_gelu, gpu_case, interp)
