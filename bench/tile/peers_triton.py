"""The Triton peers of bench/tile, written for this benchmark in the style of Triton's tutorials:
an autotuned blocked matmul with a GROUP_M swizzle, a persistent matmul over TMA tensor
descriptors (tl.make_tensor_descriptor), a row softmax and a layernorm forward. Each host
wrapper takes torch tensors, writes into the output it is given and returns it."""
import torch
import triton
import triton.language as tl


def _mm_config(bm, bn, bk, stages, warps):
    return triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps)


# The tutorial's CUDA list (its H100-class picks first: 128x256x64 and 256x128x64 at 8 warps),
# plus deeper-pipelined 128x128x64 and 128x256x64 variants that suit the H200's 227 KB of shared
# memory.
BLOCKED_CONFIGS = [_mm_config(*c) for c in (
    (128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 8),
    (128, 128, 64, 3, 4), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2))]

TMA_CONFIGS = [_mm_config(*c) for c in (
    (128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
    (128, 128, 128, 3, 8), (128, 256, 64, 4, 8))]


@triton.jit
def _swizzle(tile, grid_m, grid_n, GROUP_M: tl.constexpr):
    """(pm, pn) of a linear tile index, GROUP_M row tiles at a time, so that neighbouring
    programs share their A rows and B columns in L2."""
    per_group = GROUP_M * grid_n
    first_m = (tile // per_group) * GROUP_M
    size_m = tl.minimum(grid_m - first_m, GROUP_M)
    pm = first_m + (tile % per_group) % size_m
    pn = (tile % per_group) // size_m
    return pm, pn


@triton.autotune(configs=BLOCKED_CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_blocked_kernel(a, b, c, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn, BM: tl.constexpr,
                          BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pm, pn = _swizzle(tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN), GROUP_M)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Rows and columns past the edge wrap around instead of being masked: their results are
    # never stored, and the loads stay unmasked along M and N.
    lm = tl.max_contiguous(tl.multiple_of(rm % M, BM), BM)
    ln = tl.max_contiguous(tl.multiple_of(rn % N, BN), BN)
    pa = a + lm[:, None] * s_am + rk[None, :] * s_ak
    pb = b + rk[:, None] * s_bk + ln[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        x = tl.load(pa, mask=rk[None, :] < left, other=0.0)
        y = tl.load(pb, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(x, y, acc)
        pa += BK * s_ak
        pb += BK * s_bk
    pc = c + rm[:, None] * s_cm + rn[None, :] * s_cn
    tl.store(pc, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_blocked(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    matmul_blocked_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1))
    return c


@triton.autotune(configs=TMA_CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_tma_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    # Row-major A (M x K), B (K x N) and C (M x N); TMA pads loads past the edge with zeros and
    # clips stores, so ragged shapes need no masks.
    da = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    dc = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    for tile in tl.range(tl.program_id(0), grid_m * grid_n, NUM_SMS, flatten=True):
        pm, pn = _swizzle(tile, grid_m, grid_n, GROUP_M)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(k_tiles):
            acc = tl.dot(da.load([pm * BM, k * BK]), db.load([k * BK, pn * BN]), acc)
        dc.store([pm * BM, pn * BN], acc.to(c.dtype.element_ty))


_SMS = {}


def _alloc(size, alignment, stream):
    """Global scratch for descriptors made on the device (triton.set_allocator)."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


def matmul_tma(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    if not (a.is_contiguous() and b.is_contiguous() and c.is_contiguous()):
        raise ValueError("matmul_tma takes row-major contiguous a, b and c")
    triton.set_allocator(_alloc)
    dev = a.device.index or 0
    sms = _SMS.get(dev) or _SMS.setdefault(dev, torch.cuda.get_device_properties(dev).multi_processor_count)
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"])),)  # noqa: E731
    matmul_tma_kernel[grid](a, b, c, M, N, K, NUM_SMS=sms)
    return c


def _warps_configs():
    return [triton.Config({}, num_warps=w) for w in (4, 8, 16)]


@triton.autotune(configs=_warps_configs(), key=["n_cols"])
@triton.jit
def softmax_kernel(x, y, n_cols, s_x, s_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    v = tl.load(x + row * s_x + cols, mask=inside, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * s_y + cols, e / tl.sum(e, axis=0), mask=inside)


def softmax(x, y):
    rows, cols = x.shape
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols))
    return y


@triton.autotune(configs=_warps_configs(), key=["n_cols"])
@triton.jit
def layernorm_kernel(x, w, b, y, n_cols, s_x, s_y, eps, BLOCK: tl.constexpr):
    # The whole row stays in registers: one read of x, one write of y.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    v = tl.load(x + row * s_x + cols, mask=inside, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n_cols
    d = tl.where(inside, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    wt = tl.load(w + cols, mask=inside, other=0.0).to(tl.float32)
    bt = tl.load(b + cols, mask=inside, other=0.0).to(tl.float32)
    tl.store(y + row * s_y + cols, (d * rstd * wt + bt).to(y.dtype.element_ty), mask=inside)


def layernorm(x, w, b, y, eps):
    rows, cols = x.shape
    layernorm_kernel[(rows,)](x, w, b, y, cols, x.stride(0), y.stride(0), eps, BLOCK=triton.next_power_of_2(cols))
    return y
