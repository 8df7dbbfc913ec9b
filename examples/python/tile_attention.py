"""Flash attention forward: O = softmax(Q K^T * sm_scale) V and LSE = log(sum(exp(Q K^T * sm_scale)))
per row, bf16 Q/K/V/O with f32 statistics and accumulator, one program per BM query rows.

Grouped-query attention packs the GROUP = H_q / H_kv query heads that share a K/V head into the
rows of one tile: Q [B, H_q, S_q, D] (contiguous) is viewed as [B * H_kv, GROUP * S_q, D], row
g * S_q + s being query s of head h_kv * GROUP + g, so every row of a program reads the same K/V
head and one K tile and one V tile serve them all. Decode (S_q = 1) is the same kernel: the
GROUP heads are the rows (BM = 16, the least M a tile.dot takes), K/V read once per group.

    q, o: [B * H_kv, GROUP * S_q, D] bf16      k, v: [B * H_kv, S_kv, D] bf16
    lse:  [B * H_kv, GROUP * S_q] f32 (natural log)   grid: (cdiv(GROUP * S_q, BM), B * H_kv)

CAUSAL lets query s see keys j <= s (torch's is_causal: aligned at the top left) and stops the
key walk at the block's last query. D (64, 128) is the head dim; S_q and S_kv are any size >= 1."""
import math

from _tile_common import Case, main, np_dtype

import oxide.tile as ot

LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e)): the scale carries log2(e)


@ot.kernel(warps=4)
def attention(q, k, v, o, lse, sm_scale, GROUP: ot.constexpr, D: ot.constexpr, BM: ot.constexpr,
              BN: ot.constexpr, CAUSAL: ot.constexpr):
    pm, bh = ot.program_id(0), ot.program_id(1)
    r0 = pm * BM
    s_q, s_kv = q.shape[1] // GROUP, k.shape[1]
    qt = ot.reshape(ot.load(q, (bh, r0, 0), (1, BM, D)), (BM, D))
    pos = (r0 + ot.arange(BM)) % s_q  # each row's query position
    qk_scale = sm_scale * LOG2E
    m = ot.full((BM,), float("-inf"), ot.float32)  # running row max (log2 units)
    l = ot.zeros((BM,), ot.float32)  # running row sum of exp2(s - m)
    acc = ot.zeros((BM, D), ot.float32)
    end = s_kv
    if CAUSAL:  # no key past the block's last query (a block that wraps into the next head ends at s_q)
        end = min(r0 % s_q + BM, s_q, s_kv)
    for kb in range(0, end, BN):
        kt = ot.reshape(ot.load(k, (bh, kb, 0), (1, BN, D)), (BN, D))
        s = ot.dot(qt, kt.T) * qk_scale
        key = kb + ot.arange(BN)
        keep = key[None, :] < s_kv  # the ragged last key block
        if CAUSAL:
            keep = keep & (key[None, :] <= pos[:, None])
        s = ot.where(keep, s, float("-inf"))  # key 0 is always kept, so m is finite after the first block
        m_new = ot.maximum(m, ot.max(s, axis=1))
        p = ot.exp2(s - m_new[:, None])
        alpha = ot.exp2(m - m_new)  # rescales what was summed under the old max
        l = l * alpha + ot.sum(p, axis=1)
        vt = ot.reshape(ot.load(v, (bh, kb, 0), (1, BN, D)), (BN, D))
        acc = ot.dot(p.to(ot.bfloat16), vt, acc * alpha[:, None])
        m = m_new
    ot.store(o, (bh, r0, 0), ot.reshape(acc / l[:, None], (1, BM, D)))
    ot.store(lse, (bh, r0), ot.reshape((m + ot.log2(l)) * math.log(2), (1, BM)))


# ---- the host side: views, grid, tile sizes ----

def config(S_q):
    """(BM, BN): decode puts the group's heads in one 16-row tile; prefill takes 64 rows."""
    return (16, 64) if S_q == 1 else (64, 64)


def _contiguous(x):
    c = getattr(x, "is_contiguous", None)  # torch; NumPy arrays have flags
    return c() if c is not None else x.flags.c_contiguous


def views(q, k, v, o, lse):
    """The kernel's rank-3 views of [B, H, S, D] tensors (and lse [B, H_q, S_q]), group packed.
    The outputs must be contiguous: a reshape that copies would leave them unwritten."""
    for name, x in (("o", o), ("lse", lse)):
        if not _contiguous(x):
            raise ValueError(f"attention: {name} must be contiguous (the kernel writes the group-packed view of it)")
    B, H_q, S_q, D = q.shape
    H_kv, S_kv = k.shape[1], k.shape[2]
    group = H_q // H_kv
    return (q.reshape(B * H_kv, group * S_q, D), k.reshape(B * H_kv, S_kv, D), v.reshape(B * H_kv, S_kv, D),
            o.reshape(B * H_kv, group * S_q, D), lse.reshape(B * H_kv, group * S_q)), group


def call(q, k, v, o, lse, causal, sm_scale=None, tiles=None):
    """(grid, args, constexprs) of the launch writing o and lse: kernel[grid](*args, **constexprs).
    tiles: (BM, BN), by default config(S_q)."""
    B, H_q, S_q, D = q.shape
    if H_q % k.shape[1]:
        raise ValueError(f"attention: {H_q} query heads are not a multiple of {k.shape[1]} K/V heads")
    args, group = views(q, k, v, o, lse)
    BM, BN = tiles or config(S_q)
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    grid = (ot.cdiv(group * S_q, BM), B * k.shape[1])
    return grid, args + (scale,), dict(GROUP=group, D=D, BM=BM, BN=BN, CAUSAL=bool(causal))


# ---- the reference and its tolerance ----

def reference(np, q, k, v, causal, sm_scale, diag=0):
    """float64 scaled_dot_product_attention of [B, H, S, D] float arrays (GQA by repeating K/V
    heads): (O, LSE, P @ |V|), the last for the tolerance. causal: query s sees keys up to
    s + diag."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * sm_scale
    if causal:
        s = np.where(np.arange(k.shape[2])[None, :] <= np.arange(q.shape[2])[:, None] + diag, s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    p = e / e.sum(axis=-1, keepdims=True)
    lse = (mx + np.log(e.sum(axis=-1, keepdims=True)))[..., 0]
    return p @ v, lse, p @ np.abs(v)


def tolerance(np, q, k, sm_scale, ref_o, ref_lse, p_absv):
    """Bounds on |O - ref| and |LSE - ref| from the roundings the kernel makes. O: P is rounded to
    bf16 before the P.V dot (relative 2^-8 on each p >= 0, so at most 2^-8 * (P @ |V|) after
    dividing by the unrounded row sum), and O itself is rounded to bf16 (2^-8 * |O|). The f32
    parts: a score's dot of D products has error below D * 2^-24 * (|q| . |k|) (times the scale),
    which moves p by that much relatively; the row sums and the rescaled accumulator add
    S_kv * 2^-24 each. LSE is f32: the same score error, the sum's, and its own roundings."""
    u, eps = 2.0 ** -8, 2.0 ** -24
    q, k = (np.abs(np.asarray(x, np.float64)) for x in (q, k))
    group = q.shape[1] // k.shape[1]
    score_err = (2 * q.shape[-1] + 4) * eps * sm_scale * np.einsum("bhqd,bhkd->bhqk", q, np.repeat(k, group, axis=1)
                                                                  ).max(axis=-1) + 8 * eps
    s_kv = k.shape[2]
    f32_rel = 4 * score_err + 8 * s_kv * eps  # p_j and the row sum both move
    o_tol = u * p_absv + u * np.abs(ref_o) + f32_rel[..., None] * p_absv
    return o_tol, score_err + 4 * s_kv * eps + 4 * eps * np.abs(ref_lse)


# ---- the self-checks: torch on the GPU, NumPy in the interpreter ----

def gpu_case(torch):
    """GQA (4 query heads over 2 K/V heads), causal, a ragged S: against torch's float32 SDPA."""
    B, H_q, H_kv, S, D = 2, 4, 2, 200, 64
    q, k, v = (torch.randn(B, h, S, D, device="cuda", dtype=torch.bfloat16) for h in (H_q, H_kv, H_kv))
    o = torch.empty_like(q)
    lse = torch.empty(B, H_q, S, device="cuda")
    grid, args, consts = call(q, k, v, o, lse, causal=True)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    kr, vr = (x.float().repeat_interleave(H_q // H_kv, dim=1) for x in (k, v))
    want = sdpa(q.float(), kr, vr, is_causal=True)
    p_absv = sdpa(q.float(), kr, vr.abs(), is_causal=True)
    # twice the bf16 bounds of tolerance(): the GPU and the interpreter are each within them
    u = 2.0 ** -8
    return Case(grid, args, consts, args[3], want.reshape(args[3].shape), 2 * u,
                2 * u * p_absv.max().item() + 1e-3)


def interp(np):
    rng = np.random.default_rng(12)
    bf16 = np_dtype("bfloat16")
    B, H_q, H_kv, S, D = 1, 4, 2, 77, 64
    q, k, v = (rng.standard_normal((B, h, S, D)).astype(bf16) for h in (H_q, H_kv, H_kv))
    o, lse = np.zeros_like(q), np.zeros((B, H_q, S), np.float32)
    grid, args, consts = call(q, k, v, o, lse, causal=True)
    attention.interpret(grid, *args, **consts)
    scale = 1.0 / math.sqrt(D)
    ref_o, ref_lse, p_absv = reference(np, q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), True,
                                       scale)
    o_tol, lse_tol = tolerance(np, q.astype(np.float32), k.astype(np.float32), scale, ref_o, ref_lse, p_absv)
    err = np.abs(o.astype(np.float64) - ref_o)
    if not (err <= o_tol).all():
        raise SystemExit(f"attention: FAILED, O off by {(err / o_tol).max():.3g} of its tolerance")
    if not (np.abs(lse - ref_lse) <= lse_tol).all():
        off = (np.abs(lse - ref_lse) / lse_tol).max()
        raise SystemExit(f"attention: FAILED, LSE off by {off:.3g} of its tolerance")


if __name__ == "__main__":
    main("tile_attention", attention, gpu_case, interp)
