"""The tile interpreter (oxide.interpret) running every kernel of examples/tile on random data with
ragged shapes (M, N, K not multiples of the tiles), against NumPy references written from the
semantics of docs/tile.md: tile.dot adds a*b in f32 in k order, so the matmul references repeat
that order and must match bit for bit; references with libm math (exp, erf) allow for the last
bits of the math function and the bf16 rounding they can flip."""
import math
from pathlib import Path

import numpy as np
import pytest

import oxide

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "tile"
rng = np.random.default_rng(20240611)


def load(name):
    ctx = oxide.Context()
    return ctx, ctx.parse((EXAMPLES / f"{name}.oxir").read_text())


# ---- bf16, fp8: bit patterns in uint16 / uint8 arrays ----

def to_bf16(x):
    """float32 -> bf16 bits, to nearest even."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def e4m3_values():
    """The value of each of the 256 f8e4m3 codes (bias 7, no infinity, S.1111.111 is NaN)."""
    out = np.empty(256, np.float64)
    for code in range(256):
        s, e, m = code >> 7, (code >> 3) & 15, code & 7
        v = math.nan if (e == 15 and m == 7) else (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
        out[code] = -v if s else v
    return out


def random_bf16(*shape, scale=1.0):
    return to_bf16(rng.standard_normal(shape).astype(np.float32) * np.float32(scale))


def dot_f32(a, b, acc=None):
    """acc + sum_k a[:, k] * b[k, :] in f32, one rounding per addition, in k order."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    c = np.zeros((a.shape[0], b.shape[1]), np.float32) if acc is None else acc.astype(np.float32)
    for k in range(a.shape[1]):
        c = (c + a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)
    return c


def grid(m, n, tm=64, tn=64, z=1):
    return (-(-m // tm), -(-n // tn), z)


# ---- the examples ----

def test_matmul_bf16_ragged_and_strided():
    ctx, mod = load("matmul_bf16")
    M, N, K = 100, 70, 90
    at = random_bf16(K, M)  # A given as a transposed view: strides (1, M)
    a = at.T
    b = random_bf16(K, N)
    big = np.full((M + 9, N + 7), 0x1234, np.uint16)  # C is a window of a larger buffer
    c = big[5:5 + M, 3:3 + N]
    oxide.interpret(mod, "matmul_bf16", grid(M, N), a, b, c)
    ref = to_bf16(dot_f32(from_bf16(a), from_bf16(b)))
    np.testing.assert_array_equal(c, ref)
    outside = np.ones_like(big, bool)
    outside[5:5 + M, 3:3 + N] = False
    assert (big[outside] == 0x1234).all(), "the store wrote outside C"


def test_matmul_fp8_scaled():
    ctx, mod = load("matmul_fp8")
    M, N, K = 80, 100, 130
    vals = e4m3_values()
    finite = np.array([c for c in range(256) if not math.isnan(vals[c])], np.uint8)
    a = rng.choice(finite, (M, K)).astype(np.uint8)
    bt = rng.choice(finite, (N, K)).astype(np.uint8)  # B as stored: N x K
    c = np.zeros((M, N), np.uint16)
    sa, sb = 0.0173, 0.31
    oxide.interpret(mod, "matmul_fp8", grid(M, N), a, bt, c, sa, sb)
    acc = dot_f32(vals[a].astype(np.float32), vals[bt].T.astype(np.float32))
    scale = np.float32(np.float32(sa) * np.float32(sb))
    np.testing.assert_array_equal(c, to_bf16((acc * scale).astype(np.float32)))


def test_softmax_f32():
    ctx, mod = load("softmax_f32")
    M, N = 37, 300
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    y = np.zeros_like(x)
    oxide.interpret(mod, "softmax_f32", (-(-M // 16), 1, 1), x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)


def test_layernorm_bf16():
    ctx, mod = load("layernorm_bf16")
    M, N = 21, 200
    x = random_bf16(M, N, scale=2.0)
    w, b = random_bf16(N), random_bf16(N)
    y = np.zeros((M, N), np.uint16)
    oxide.interpret(mod, "layernorm_bf16", (2, 1, 1), x, w, b, y, 1e-5)
    xf = from_bf16(x).astype(np.float64)
    mean = xf.mean(axis=1, keepdims=True)
    var = ((xf - mean) ** 2).mean(axis=1, keepdims=True)
    ref = (xf - mean) / np.sqrt(var + 1e-5) * from_bf16(w) + from_bf16(b)
    got = from_bf16(y)
    np.testing.assert_allclose(got, ref, rtol=2 ** -7, atol=1e-2)


def test_matmul_bias_gelu():
    ctx, mod = load("matmul_bias_gelu")
    M, N, K = 70, 130, 75
    a, b = random_bf16(M, K), random_bf16(K, N)
    bias = rng.standard_normal(N).astype(np.float32)
    y = np.zeros((M, N), np.uint16)
    oxide.interpret(mod, "matmul_bias_gelu", grid(M, N), a, b, bias, y)
    x = (dot_f32(from_bf16(a), from_bf16(b)) + bias).astype(np.float64)
    erf = np.vectorize(math.erf)
    ref = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    np.testing.assert_allclose(from_bf16(y), ref, rtol=2 ** -7, atol=1e-3)


def test_matmul_transposed_operand_f16():
    ctx, mod = load("matmul_at")
    M, N, K = 90, 66, 100
    at = rng.standard_normal((K, M)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    oxide.interpret(mod, "matmul_at", grid(M, N), at, b, c)
    np.testing.assert_array_equal(c, dot_f32(at.T, b))


def test_column_sum():
    ctx, mod = load("column_sum")
    M, N = 150, 100
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros(N, np.float32)
    oxide.interpret(mod, "column_sum", (2, 1, 1), x, out)
    acc = np.zeros(N, np.float32)
    for m0 in range(0, M, 64):  # each 64-row tile summed in row order, then added to the total
        tile = x[m0:m0 + 64]
        s = tile[0].copy()
        for r in tile[1:]:
            s = (s + r).astype(np.float32)
        acc = (acc + s).astype(np.float32)
    np.testing.assert_array_equal(out, acc)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-4)


def test_bmm_bf16_3d_grid():
    ctx, mod = load("bmm_bf16")
    B, M, N, K = 3, 70, 65, 40
    a, b = random_bf16(B, M, K), random_bf16(B, K, N)
    c = np.zeros((B, M, N), np.float32)
    oxide.interpret(mod, "bmm_bf16", grid(M, N, z=B), a, b, c)
    for i in range(B):
        np.testing.assert_array_equal(c[i], dot_f32(from_bf16(a[i]), from_bf16(b[i])))


def test_swiglu_two_dots_one_tile():
    ctx, mod = load("swiglu_bf16")
    M, N, K = 65, 90, 50
    x, wg, wu = random_bf16(M, K), random_bf16(K, N, scale=0.3), random_bf16(K, N, scale=0.3)
    y = np.zeros((M, N), np.uint16)
    oxide.interpret(mod, "swiglu_bf16", grid(M, N), x, wg, wu, y)
    g = dot_f32(from_bf16(x), from_bf16(wg)).astype(np.float64)
    u = dot_f32(from_bf16(x), from_bf16(wu)).astype(np.float64)
    ref = g / (1 + np.exp(-g)) * u
    np.testing.assert_allclose(from_bf16(y), ref, rtol=2 ** -7, atol=1e-4)


# ---- the wrapper's conversions and the library's refusals ----

def test_print_and_scalars():
    ctx = oxide.Context()
    mod = ctx.parse("""module @p
tile_kernel @p(%x: tensor<1 x i32>, %n: u32, %f: f32) {
^0:
  %t = tile.load %x, %n {pad=-5} : tile<4 x i32>
  tile.print %t {str="t"}
  %h = mul %f, %f : f32
  tile.print %h {str="h"}
  ret
}
""")
    x = rng.integers(-1000, 1000, 6).astype(np.int32)
    lines = []
    oxide.interpret(mod, "p", 1, x, 4, 1.5, print=lines.append)
    assert lines == [f"pid(0,0,0) t[0] = {x[4]}\n", f"pid(0,0,0) t[1] = {x[5]}\n", "pid(0,0,0) t[2] = -5\n",
                     "pid(0,0,0) t[3] = -5\n", "pid(0,0,0) h = 2.25\n"]


def test_refusals():
    ctx, mod = load("matmul_bf16")
    a, b = random_bf16(16, 16), random_bf16(16, 16)
    c = np.zeros((16, 16), np.uint16)
    with pytest.raises(oxide.LaunchError, match="argument 1 'a' is a read-only tensor<2 x bf16>, got a mutable "
                                                "rank-2 tensor of f32"):
        oxide.interpret(mod, "matmul_bf16", 1, a.astype(np.float32), b, c)
    c.flags.writeable = False
    with pytest.raises(oxide.LaunchError, match="argument 3 'c'.*set is_mutable"):
        oxide.interpret(mod, "matmul_bf16", 1, a, b, c)
    with pytest.raises(oxide.LaunchError, match=r"expects 3 arguments \(a, b, c\), got 2"):
        oxide.interpret(mod, "matmul_bf16", 1, a, b)
    with pytest.raises(oxide.NotFoundError, match="no kernel @nope"):
        oxide.interpret(mod, "nope", 1)
    c = np.zeros((16, 16), np.uint16)
    with pytest.raises(oxide.UnsupportedError, match="budget of 1000 element operations"):
        oxide.interpret(mod, "matmul_bf16", 1, a, b, c, max_steps=1000)
    with pytest.raises(TypeError, match="pass a NumPy array"):
        oxide.interpret(mod, "matmul_bf16", 1, [1, 2], b, c)
