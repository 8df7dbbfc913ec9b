"""Row softmax in f32: each program normalises R rows of up to C columns."""
from _tile_common import Case, check, main

import oxide.tile as ot


@ot.kernel(warps=8)
def softmax(x, y, R: ot.constexpr, C: ot.constexpr):
    r0 = ot.program_id(0) * R
    t = ot.load(x, (r0, 0), (R, C), padding=float("-inf"))  # padding never wins the max
    e = ot.exp(t - ot.max(t, axis=1)[:, None])
    ot.store(y, (r0, 0), e / ot.sum(e, axis=1)[:, None])


M, N = 123, 300


def reference(np, a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gpu_case(torch):
    a = torch.randn(M, N, device="cuda")
    out = torch.empty_like(a)
    return Case(ot.cdiv(M, 16), (a, out), dict(R=16, C=512), out, torch.softmax(a, dim=1), 1e-5, 1e-6)


def interp(np):
    a = np.random.default_rng(3).standard_normal((M, N)).astype(np.float32) * 3
    out = np.zeros_like(a)
    softmax.interpret(ot.cdiv(M, 16), a, out, R=16, C=512)
    check("softmax", out, reference(np, a), 1e-5, 1e-6)


if __name__ == "__main__":
    main("tile_softmax", softmax, gpu_case, interp)
