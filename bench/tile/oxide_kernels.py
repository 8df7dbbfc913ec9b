"""oxide's side of bench/tile: the example kernels of examples/python/tile_*.py, imported (never
copied), with the tile sizes and warps a user would pick for each benchmark shape.

The examples' decorators carry the hints their small self-checks need; where a benchmark shape
wants other hints (8 warps for a 128x128 matmul tile) the same function is wrapped again with
ot.Kernel(fn, **hints), so the kernel body is still the example's."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples", "python")

# The choices, stated (bench/README.md repeats them):
# (128x256x64 with 4 stages: 0.84-0.91 of cuBLAS on the H200 where 128x128x64 gave 0.70-0.73 with
# 4 stages and 0.58-0.61 with 3; grouped tile order, 8 row blocks wide: 0.817-0.948 against
# 0.816-0.908 in the same run; fp8 128x256x128 with 4 stages 0.80-0.88, 128x128x128 0.73-0.77:
# docs/results.md, "H200, 2026-12-02"); persistent programs, with the epilogue through shared memory
# and TMA store: bf16 0.972-1.011 of cuBLAS against 0.950-1.001 one block a program, fp8
# 0.971-0.994 against 0.955-0.961 in the same run (docs/results.md, "H200, 2026-12-03 (2)")
MATMUL_BF16 = dict(BM=128, BN=256, BK=64, warps=8, stages=4, group=8, persistent=1)
MATMUL_FP8 = dict(BM=128, BN=256, BK=128, warps=8, stages=4, persistent=1)
SOFTMAX_TILE = 4096      # elements per program: R = SOFTMAX_TILE // C rows of C columns
# layernorm: one row per program, the whole row in one tile; softmax and layernorm: warps
# autotuned over the Triton peer's own set (peers_triton.py)
ROW_WARPS = (4, 8, 16)
# attention: 128 query rows a program (two warpgroups of 64), 8 warps; keys 128 at a time for
# head dim 128, 64 for head dim 64 (on the H200: D 128 386 against 330 TFLOP/s with 64, D 64 270
# against 246 with 128). Decode: the 4 query heads of a K/V head in one 64-row tile, so the dots
# take wgmma and K/V come by TMA, 4 warps, 2 stages (0.95 of a copy; 0.76 with 3 stages, whose
# 112 KB of shared memory leave one program an SM; 0.60 with 16-row tiles on mma.sync, whose
# K/V loads were not pipelined)
ATTENTION = {128: dict(BM=128, BN=128, warps=8), 64: dict(BM=128, BN=64, warps=8)}
ATTENTION_DECODE = dict(BM=64, BN=64, warps=4, stages=2)


def _examples():
    # oxide itself must be imported first: _tile_common puts bindings/python on sys.path, and the
    # installed package (with its compiled extension) has to be the one already loaded.
    import oxide  # noqa: F401
    import oxide.tile  # noqa: F401
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    import tile_attention
    import tile_layernorm
    import tile_matmul
    import tile_matmul_fp8
    import tile_softmax
    return tile_matmul, tile_matmul_fp8, tile_softmax, tile_layernorm, tile_attention


def pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


class Kernels:
    """The oxide kernels, each with a `..._call(...)` taking torch tensors (or, for the dry run,
    shaped ot.TensorSpec stand-ins) and giving the launch (kernel, grid, args, constexprs)."""

    def __init__(self):
        import oxide.tile as ot
        self.ot = ot
        mm, mm8, sm, ln, self.attn = _examples()
        hints = lambda d: {k: d[k] for k in ("warps", "stages", "group", "persistent") if k in d}  # noqa: E731
        self.matmul = ot.Kernel(mm.matmul.fn, **dict(mm.matmul.hints, **hints(MATMUL_BF16)))
        self.matmul_fp8 = ot.Kernel(mm8.matmul_fp8.fn, **dict(mm8.matmul_fp8.hints, **hints(MATMUL_FP8)))
        rows = lambda k: ot.autotune(configs=[ot.Config(warps=w) for w in ROW_WARPS], key=["x"])(k)  # noqa: E731
        self.softmax = rows(sm.softmax)
        self.layernorm = rows(ln.layernorm)
        fn, own = self.attn.attention.fn, self.attn.attention.hints
        self.attention = ot.Kernel(fn, **dict(own, **hints(ATTENTION[128])))  # the same hints for every D
        self.attention_decode = ot.Kernel(fn, **dict(own, **hints(ATTENTION_DECODE)))

    # ---- arguments: (kernel, grid, args, constexprs) ----
    def matmul_call(self, a, b, c):
        M, N = c.shape
        t = MATMUL_BF16
        grid = (self.ot.cdiv(M, t["BM"]), self.ot.cdiv(N, t["BN"]))
        return self.matmul, grid, (a, b, c), dict(BM=t["BM"], BN=t["BN"], BK=t["BK"])

    def matmul_fp8_call(self, a, b, c, scale_a, scale_b):
        M, N = c.shape
        t = MATMUL_FP8
        grid = (self.ot.cdiv(M, t["BM"]), self.ot.cdiv(N, t["BN"]))
        return self.matmul_fp8, grid, (a, b, c, scale_a, scale_b), dict(BM=t["BM"], BN=t["BN"], BK=t["BK"])

    def softmax_call(self, x, y):
        rows, cols = x.shape
        C = pow2(cols)
        R = max(1, SOFTMAX_TILE // C)
        return self.softmax, self.ot.cdiv(rows, R), (x, y), dict(R=R, C=C)

    def layernorm_call(self, x, w, b, y, eps):
        rows, cols = x.shape
        return self.layernorm, rows, (x, w, b, y, eps), dict(R=1, BN=pow2(cols))

    def attention_call(self, q, k, v, o, lse, causal):
        """q, k, v, o [B, H, S, D], lse [B, H_q, S_q]; S_q = 1 is decode (its own tiles and warps)."""
        decode = q.shape[2] == 1
        t = ATTENTION_DECODE if decode else ATTENTION[q.shape[-1]]
        grid, args, consts = self.attn.call(q, k, v, o, lse, causal, tiles=(t["BM"], t["BN"]))
        return self.attention_decode if decode else self.attention, grid, args, consts

    @staticmethod
    def launch(call):
        kern, grid, args, consts = call
        kern[grid](*args, **consts)

    # ---- the same calls on stand-ins, for the dry run ----
    def dry_calls(self, shape_rows):
        """[(row name, call)] with ot.TensorSpec stand-ins: what kernel.ir / compile need."""
        ot = self.ot
        S = ot.TensorSpec

        class Shaped(S):
            def __init__(self, dtype, shape):
                super().__init__(dtype, len(shape))
                self.shape = tuple(shape)

            def reshape(self, *shape):  # the attention call's group-packed views
                return Shaped(self.dtype, shape)

            def is_contiguous(self):
                return True

        out = []
        for name, kind, dims in shape_rows:
            if kind == "matmul_bf16":
                M, N, K = dims
                call = self.matmul_call(Shaped(ot.bfloat16, (M, K)), Shaped(ot.bfloat16, (K, N)),
                                        Shaped(ot.bfloat16, (M, N)))
            elif kind == "matmul_fp8":
                M, N, K = dims
                call = self.matmul_fp8_call(Shaped(ot.float8_e4m3, (M, K)), Shaped(ot.float8_e4m3, (N, K)),
                                            Shaped(ot.bfloat16, (M, N)), 0.5, 0.25)
            elif kind == "softmax":
                call = self.softmax_call(Shaped(ot.float32, dims), Shaped(ot.float32, dims))
            elif kind in ("attention", "attention_decode"):
                B, H_q, H_kv, S_q, S_kv, D, causal = attention_dims(kind, dims)
                bf = lambda h, s: Shaped(ot.bfloat16, (B, h, s, D))  # noqa: E731
                call = self.attention_call(bf(H_q, S_q), bf(H_kv, S_kv), bf(H_kv, S_kv), bf(H_q, S_q),
                                           Shaped(ot.float32, (B, H_q, S_q)), causal)
            else:
                R, C = dims
                call = self.layernorm_call(Shaped(ot.bfloat16, dims), Shaped(ot.bfloat16, (C,)),
                                           Shaped(ot.bfloat16, (C,)), Shaped(ot.bfloat16, dims), 1e-5)
            out.append((name, call))
        return out


def attention_dims(kind, dims):
    """(B, H_q, H_kv, S_q, S_kv, D, causal) of an attention row's dims: (B, H, S, D, causal) for
    the forward rows, (B, H_q, H_kv, S_kv, D) for decode."""
    if kind == "attention":
        B, H, S, D, causal = dims
        return B, H, H, S, S, D, causal
    B, H_q, H_kv, S_kv, D = dims
    return B, H_q, H_kv, 1, S_kv, D, False


def describe():
    """One line naming oxide's choices, for the bench's header comment."""
    m, f, d = MATMUL_BF16, MATMUL_FP8, ATTENTION_DECODE
    a = " and ".join(f"{t['BM']}x{t['BN']} for D {k}" for k, t in ATTENTION.items())
    return (f"oxide: bf16 matmul {m['BM']}x{m['BN']}x{m['BK']} tiles, {m['warps']} warps, {m['stages']} stages, "
            f"group {m['group']}, persistent {m.get('persistent', 0)}; "
            f"fp8 matmul {f['BM']}x{f['BN']}x{f['BK']}, {f['warps']} warps, persistent {f.get('persistent', 0)}; softmax {SOFTMAX_TILE // 1024}K "
            f"elements per program, warps tuned over {ROW_WARPS}; layernorm one row per program, warps tuned; attention "
            f"{a} (query rows x keys), {ATTENTION[128]['warps']} warps; decode {d['BM']}x{d['BN']}, "
            f"{d['warps']} warps, {d['stages']} stages")

