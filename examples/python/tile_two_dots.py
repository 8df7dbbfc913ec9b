"""One tile feeding two dots (a SwiGLU feed-forward's first half): each tile of x is loaded once
and multiplied by both the gate and the up weights; out = silu(x @ wg) * (x @ wu), in bf16."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=8)
def swiglu(x, wg, wu, out, BM: ot.constexpr, BN: ot.constexpr, BK: ot.constexpr):
    pm, pn = ot.program_id(0), ot.program_id(1)
    gate = ot.zeros((BM, BN), ot.float32)
    up = ot.zeros((BM, BN), ot.float32)
    for k in range(0, x.shape[1], BK):
        t = ot.load(x, (pm * BM, k), (BM, BK))
        gate = ot.dot(t, ot.load(wg, (k, pn * BN), (BK, BN)), gate)
        up = ot.dot(t, ot.load(wu, (k, pn * BN), (BK, BN)), up)
    ot.store(out, (pm * BM, pn * BN), (gate * ot.sigmoid(gate) * up).to(ot.bfloat16))


M, N, K = 80, 112, 64


def reference(np, x, wg, wu):
    x, wg, wu = (v.astype(np.float32) for v in (x, wg, wu))
    g, u = x @ wg, x @ wu
    return g / (1.0 + np.exp(-g)) * u


def gpu_case(torch):
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wg = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    wu = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    g, u = x.float() @ wg.float(), x.float() @ wu.float()
    return Case((ot.cdiv(M, 64), ot.cdiv(N, 64)), (x, wg, wu, out), dict(BM=64, BN=64, BK=32), out,
                torch.nn.functional.silu(g) * u, 2e-2, 1e-1)


def interp(np):
    rng = np.random.default_rng(9)
    bf16 = np_dtype("bfloat16")
    x = rng.standard_normal((M, K)).astype(bf16)
    wg, wu = rng.standard_normal((K, N)).astype(bf16), rng.standard_normal((K, N)).astype(bf16)
    out = np.zeros((M, N), bf16)
    swiglu.interpret((ot.cdiv(M, 64), ot.cdiv(N, 64)), x, wg, wu, out, BM=64, BN=64, BK=32)
    check("swiglu", out, reference(np, x, wg, wu), 2e-2, 1e-1)


if __name__ == "__main__":
    main("tile_two_dots", swiglu, gpu_case, interp)
