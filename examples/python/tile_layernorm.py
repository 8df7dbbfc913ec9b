"""bf16 layernorm forward: y = (x - mean) / sqrt(var + eps) * w + b over each row, in f32."""
from _tile_common import Case, check, main, np_dtype

import oxide.tile as ot


@ot.kernel(warps=4)
def layernorm(x, w, b, y, eps, R: ot.constexpr, BN: ot.constexpr):
    r0 = ot.program_id(0) * R
    n = x.shape[1]
    t = ot.load(x, (r0, 0), (R, BN)).to(ot.float32)
    mean = ot.sum(t, axis=1) / n
    inside = ot.arange(BN)[None, :] < n
    d = ot.where(inside, t - mean[:, None], 0.0)
    rstd = ot.rsqrt(ot.sum(d * d, axis=1) / n + eps)
    wt = ot.load(w, (0,), (BN,)).to(ot.float32)
    bt = ot.load(b, (0,), (BN,)).to(ot.float32)
    ot.store(y, (r0, 0), (d * rstd[:, None] * wt[None, :] + bt[None, :]).to(ot.bfloat16))


M, N = 77, 200


def reference(np, x, w, b, eps):
    x, w, b = (v.astype(np.float32) for v in (x, w, b))
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gpu_case(torch):
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    want = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
    return Case(ot.cdiv(M, 4), (x, w, b, y, 1e-5), dict(R=4, BN=256), y, want, 2e-2, 3e-2)


def interp(np):
    rng = np.random.default_rng(4)
    bf16 = np_dtype("bfloat16")
    x = rng.standard_normal((M, N)).astype(bf16)
    w, b = rng.standard_normal(N).astype(bf16), rng.standard_normal(N).astype(bf16)
    y = np.zeros((M, N), bf16)
    layernorm.interpret(ot.cdiv(M, 4), x, w, b, y, 1e-5, R=4, BN=256)
    check("layernorm", y, reference(np, x, w, b, 1e-5), 2e-2, 3e-2)


if __name__ == "__main__":
    main("tile_layernorm", layernorm, gpu_case, interp)
