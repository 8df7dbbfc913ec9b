"""The flash-attention tile kernel of examples/python/tile_attention.py: every configuration (head
dim 64 and 128, causal and not, grouped-query attention, ragged sequence lengths, decode) run in
the tile interpreter on random bf16 inputs against a float64 NumPy scaled_dot_product_attention,
within the bounds the kernel's bf16 and f32 roundings allow (tile_attention.tolerance); each
configuration compiled to PTX for sm_90a and sm_80; on a GPU, O and LSE against torch."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import oxide
import oxide.tile as ot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))
import tile_attention as ta  # noqa: E402
# NumPy has no bf16: the interpreter takes bf16 tensors as uint16 bit patterns
from tile_numpy_eval import from_bf16_bits as from_bf16, to_bf16_bits as to_bf16  # noqa: E402

# (name, B, H_q, H_kv, S_q, S_kv, D, causal, sm_scale): ragged lengths (not multiples of the
# 64-row and 64-key tiles), several key blocks, GQA groups of 2 and 4, decode against a long K/V.
CONFIGS = [
    ("d64", 2, 2, 2, 77, 77, 64, False, None),
    ("d64_causal", 1, 2, 2, 130, 130, 64, True, None),
    ("d128", 1, 2, 2, 70, 70, 128, False, 0.3),
    ("d128_causal", 1, 1, 1, 150, 150, 128, True, None),
    ("gqa2_causal", 1, 4, 2, 90, 90, 64, True, None),
    ("gqa4_d128", 2, 4, 1, 40, 40, 128, False, None),
    ("gqa4_causal_wrap", 1, 8, 2, 20, 20, 64, True, None),  # 64-row blocks span query heads
    ("cross", 1, 2, 1, 33, 150, 64, False, None),           # S_q != S_kv
    ("decode_gqa4", 3, 8, 2, 1, 300, 128, False, None),
    ("decode_gqa8_d64", 2, 16, 2, 1, 257, 64, False, 0.2),
    ("decode_mha", 1, 2, 2, 1, 100, 64, False, None),
]
IDS = [c[0] for c in CONFIGS]
rng = np.random.default_rng(20241207)


def inputs(B, H_q, H_kv, S_q, S_kv, D):
    """bf16 bits of random Q, K, V (never zero) and sentinel-filled outputs."""
    def rand(*shape):
        x = rng.standard_normal(shape)
        return to_bf16(np.where(np.abs(x) < 1e-3, 0.5, x))
    q, k, v = rand(B, H_q, S_q, D), rand(B, H_kv, S_kv, D), rand(B, H_kv, S_kv, D)
    o = np.full((B, H_q, S_q, D), to_bf16(np.float32(1234.0)), np.uint16)
    lse = np.full((B, H_q, S_q), -777.0, np.float32)
    return q, k, v, o, lse


def specs(args):
    """TensorSpec stand-ins for the kernel's arguments (bits arrays are not bf16 to NumPy)."""
    q, k, v, o, lse, scale = args
    return (ot.TensorSpec(ot.bfloat16, 3),) * 4 + (ot.TensorSpec(ot.float32, 2), scale)


def interpret(q, k, v, o, lse, causal, scale, tiles=None):
    grid, args, consts = ta.call(q, k, v, o, lse, causal, scale, tiles)
    spec = ta.attention.specialize(*specs(args), **consts)
    oxide.interpret(spec.module, "attention", grid, *args)


def check(q, k, v, o, lse, causal, scale, what, diag=0):
    qf, kf, vf = (from_bf16(x) for x in (q, k, v))
    ref_o, ref_lse, p_absv = ta.reference(np, qf, kf, vf, causal, scale, diag)
    o_tol, lse_tol = ta.tolerance(np, qf, kf, scale, ref_o, ref_lse, p_absv)
    err = np.abs(from_bf16(o).astype(np.float64) - ref_o)
    assert np.isfinite(err).all(), f"{what}: O has non-finite elements"
    assert (err <= o_tol).all(), f"{what}: O off by {(err / o_tol).max():.3g}x its tolerance"
    lerr = np.abs(lse.astype(np.float64) - ref_lse)
    assert (lerr <= lse_tol).all(), f"{what}: LSE off by {(lerr / lse_tol).max():.3g}x its tolerance"
    return (err / o_tol).max(), ref_o


@pytest.mark.parametrize("name,B,H_q,H_kv,S_q,S_kv,D,causal,scale", CONFIGS, ids=IDS)
def test_interpreter_matches_numpy(name, B, H_q, H_kv, S_q, S_kv, D, causal, scale):
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    q, k, v, o, lse = inputs(B, H_q, H_kv, S_q, S_kv, D)
    interpret(q, k, v, o, lse, causal, scale)
    check(q, k, v, o, lse, causal, scale, name)


@pytest.mark.parametrize("D,causal,tiles", [(128, True, (128, 64)), (64, False, (128, 64)), (128, False, (16, 64))])
def test_the_benchmark_tiles(D, causal, tiles):
    """bench/tile's tile sizes (bench/tile/oxide_kernels.py: 128 query rows x 64 keys, decode
    16 x 64) compute the same attention."""
    decode = tiles[0] == 16
    shape = (2, 8, 2, 1, 200, D) if decode else (1, 2, 2, 200, 200, D)
    q, k, v, o, lse = inputs(*shape)
    interpret(q, k, v, o, lse, causal, 0.1, tiles)
    check(q, k, v, o, lse, causal, 0.1, f"tiles {tiles}")


def test_tolerance_catches_a_wrong_kernel():
    """The bounds are tight enough to see the mistakes an attention kernel makes: a 2% scale
    error, the causal mask one key too far, no mask, and the last key block left out."""
    B, H, S, D = 1, 2, 100, 64
    scale = 1.0 / math.sqrt(D)
    q, k, v, o, lse = inputs(B, H, H, S, S, D)
    interpret(q, k, v, o, lse, True, scale)
    check(q, k, v, o, lse, True, scale, "right")
    for wrong in (dict(scale=scale * 1.02), dict(diag=1), dict(causal=False),
                  dict(k=k[:, :, :64], v=v[:, :, :64])):
        args = dict(dict(q=q, k=k, v=v, o=o, lse=lse, causal=True, scale=scale), **wrong)
        with pytest.raises(AssertionError):
            check(**args, what=f"wrong {sorted(wrong)}")


def test_one_program_per_kv_head_in_decode():
    """Decode packs the group's query heads into the rows of one tile: one program per (batch,
    K/V head), whose rows past the group are padding and write nothing."""
    q, k, v, o, lse = inputs(2, 8, 2, 1, 70, 64)
    grid, args, consts = ta.call(q, k, v, o, lse, False)
    assert grid == (1, 4) and consts["GROUP"] == 4 and consts["BM"] == 16
    assert args[0].shape == (4, 4, 64) and args[4].shape == (4, 4)


def test_call_refuses_a_head_count_that_is_not_a_multiple():
    q, k, v, o, lse = inputs(1, 3, 2, 4, 4, 64)
    with pytest.raises(ValueError, match="3 query heads are not a multiple of 2 K/V heads"):
        ta.call(q, k, v, o, lse, False)


def test_call_refuses_outputs_it_cannot_write_through_a_view():
    q, k, v, o, lse = inputs(1, 2, 2, 8, 8, 64)
    wide = np.zeros((1, 2, 8, 128), np.uint16)
    with pytest.raises(ValueError, match="o must be contiguous"):
        ta.call(q, k, v, wide[..., :64], lse, False)


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name,B,H_q,H_kv,S_q,S_kv,D,causal,scale", CONFIGS, ids=IDS)
def test_compiles_to_ptx(name, B, H_q, H_kv, S_q, S_kv, D, causal, scale, target):
    q, k, v, o, lse = inputs(B, H_q, H_kv, S_q, S_kv, D)
    grid, args, consts = ta.call(q, k, v, o, lse, causal, scale)
    spec = ta.attention.specialize(*specs(args), **consts)
    ptx = spec.module.compile(target=target)
    assert f".target {target}" in ptx and ".entry attention" in ptx
    assert "ex2." in ptx
    # on sm_90a blocks of 64 query rows or more take wgmma (S = Q K^T from shared memory, O += P V
    # with P from registers: docs/tile.md, "The Hopper path"); decode's 16-row blocks and sm_80
    # take mma.sync
    if target == "sm_90a" and consts["BM"] >= 64:
        assert "wgmma.mma_async.sync.aligned.m64n" in ptx and "mma.sync.aligned.m16n8k16" not in ptx
    else:
        assert "mma.sync.aligned.m16n8k16" in ptx and "wgmma" not in ptx


def test_gpu_o_and_lse_match_torch(device):
    """O and LSE on the GPU (the gpu_case launch checks only O) against torch in float32."""
    torch = pytest.importorskip("torch", reason="torch is not importable, and the GPU check compares with torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    torch.manual_seed(5)
    for B, H_q, H_kv, S_q, S_kv, D, causal in ((2, 4, 2, 200, 200, 128, True), (4, 8, 2, 1, 1000, 128, False)):
        q = torch.randn(B, H_q, S_q, D, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, H_kv, S_kv, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        o, lse = torch.empty_like(q), torch.empty(B, H_q, S_q, device="cuda")
        grid, args, consts = ta.call(q, k, v, o, lse, causal)
        ta.attention[grid](*args, **consts)
        torch.cuda.synchronize()
        qf, kf, vf = (x.double().cpu().numpy() for x in (q, k, v))
        check(*(to_bf16(x) for x in (qf, kf, vf)), to_bf16(o.float().cpu().numpy()), lse.cpu().numpy(), causal,
              1.0 / math.sqrt(D), f"GPU B={B} S_q={S_q}")
