"""A tile kernel written in Rust (examples/rust/tile_matmul's #[tile_kernel], exported by
`cargo oxide build --module`: tests/bindings/data/regen.sh) loaded and launched from Python on
PyTorch tensors. The manifest test needs no GPU; the launch skips, saying why, where there is none."""
from pathlib import Path

import numpy as np
import pytest

import oxide

PTX = Path(__file__).resolve().parents[1] / "data" / "rust_tile_matmul.ptx"


def test_rust_tile_module_manifest():
    m = oxide.Manifest.from_ptx(PTX.read_text())
    k = m["matmul_bf16"]
    assert [(p.name, p.kind, p.rank, p.mutable) for p in k.params] == [
        ("a", "tensor", 2, False), ("b", "tensor", 2, False), ("c", "tensor", 2, True)]
    assert all(str(p.type) == "bf16" for p in k.params), k.params
    assert tuple(k.block) == (128, 1, 1)  # 4 warps, the kernel's #[tile_kernel(warps = 4)]


def test_rust_tile_matmul_on_torch(device):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    mod = oxide.Module.load(str(PTX))
    m, n, k = 200, 136, 72  # ragged: not multiples of the 64x64x32 tiles
    g = torch.Generator(device="cuda").manual_seed(5)
    a = (torch.rand(m, k, device="cuda", generator=g) * 4 - 2).to(torch.bfloat16)
    b = (torch.rand(k, n, device="cuda", generator=g) * 4 - 2).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    mod.matmul_bf16(a, b, c, grid=((m + 63) // 64, (n + 63) // 64))
    torch.cuda.synchronize()
    want = (a.float() @ b.float()).cpu().numpy()
    mag = (a.float().abs() @ b.float().abs()).cpu().numpy()
    # summation order (8 K^2 2^-24 of the magnitude) and the bf16 rounding of the result
    tol = 8 * k * k * 2.0**-24 * mag + np.abs(want) / 128 + 1e-6
    got = c.float().cpu().numpy()
    assert np.all(np.abs(got - want) <= tol), float(np.max(np.abs(got - want) / tol))
    # a transposed view of A is a tensor like any other: strides travel with it
    at = a.t().contiguous().t()
    c2 = torch.zeros_like(c)
    mod.matmul_bf16(at, b, c2, grid=((m + 63) // 64, (n + 63) // 64))
    torch.cuda.synchronize()
    assert torch.equal(c2, c)
    with pytest.raises(oxide.LaunchError):  # f32 where the kernel takes bf16
        mod.matmul_bf16(a.float(), b, c, grid=(1, 1))
    device.check()
