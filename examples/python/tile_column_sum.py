"""Column reduction: out[j] = sum over i of x[i, j], f32; each program sums BN columns, walking
down the rows BM at a time."""
from _tile_common import Case, check, main

import oxide.tile as ot


@ot.kernel(warps=4)
def column_sum(x, out, BM: ot.constexpr, BN: ot.constexpr):
    c0 = ot.program_id(0) * BN
    acc = ot.zeros((BN,), ot.float32)
    for r in range(0, x.shape[0], BM):
        acc += ot.sum(ot.load(x, (r, c0), (BM, BN)), axis=0)
    ot.store(out, (c0,), acc)


M, N = 1000, 300


def gpu_case(torch):
    x = torch.randn(M, N, device="cuda")
    out = torch.empty(N, device="cuda")
    return Case(ot.cdiv(N, 64), (x, out), dict(BM=32, BN=64), out, x.sum(dim=0), 1e-4, 1e-3)


def interp(np):
    x = np.random.default_rng(7).standard_normal((M, N)).astype(np.float32)
    out = np.zeros(N, np.float32)
    column_sum.interpret(ot.cdiv(N, 64), x, out, BM=32, BN=64)
    check("column_sum", out, x.astype(np.float64).sum(axis=0), 1e-4, 1e-3)


if __name__ == "__main__":
    main("tile_column_sum", column_sum, gpu_case, interp)
