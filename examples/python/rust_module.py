"""A module written in Rust, launched from Python on NumPy, CuPy and PyTorch data.

The module is the PTX `cargo oxide build -p vecadd --module vecadd.ptx` makes from
examples/rust/vecadd (a copy is checked in as tests/bindings/data/rust_vecadd.ptx); its manifest
gives the kernel's checked signature, vecadd(a: slice<f32>, b: slice<f32>, c: slice<mut f32>).

    python3 examples/python/rust_module.py [MODULE.ptx]
"""
from __future__ import annotations

import os
import sys

import numpy as np
from _example import REPO, check, gpu_or_skip, optional

import oxide

N = 100_000


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "bindings", "data", "rust_vecadd.ptx")
    manifest = oxide.Manifest.from_ptx(open(path).read())
    print(f"rust_module: {os.path.basename(path)}: {', '.join(k.signature() for k in manifest.kernels)}")
    device = gpu_or_skip("rust_module")
    mod = oxide.Module.load(path, device)
    rng = np.random.default_rng(2026)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    grid, block = (N + 255) // 256, 256
    done = ["NumPy"]

    # NumPy: copy in, launch, copy back.
    da, db, dc = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b), oxide.DeviceArray.zeros(N)
    mod.vecadd(da, db, dc, grid=grid, block=block)
    check("rust_module (NumPy)", dc.to_numpy(), a + b)

    # CuPy arrays go as they are, on CuPy's current stream.
    cp = optional("cupy")
    if cp is not None:
        ca, cb = cp.asarray(a), cp.asarray(b)
        cc = cp.empty_like(ca)
        mod.vecadd(ca, cb, cc, grid=grid, block=block)
        check("rust_module (CuPy)", cp.asnumpy(cc), a + b)
        done.append("CuPy")

    # torch tensors too, on torch's current stream (here a side stream).
    torch = optional("torch")
    if torch is not None and torch.cuda.is_available():
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tc = torch.empty_like(ta)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            mod.vecadd(ta, tb, tc, grid=grid, block=block)
        side.synchronize()
        check("rust_module (torch)", tc.cpu().numpy(), a + b)
        done.append("torch")

    # A mistake is an exception that names the argument, not a crash.
    try:
        mod.vecadd(da, db, oxide.DeviceArray.from_numpy(a, readonly=True), grid=grid, block=block)
        raise SystemExit("rust_module: FAILED, a read-only output was accepted")
    except oxide.LaunchError as e:
        assert "'c'" in str(e), e
    missing = [name for name, m in (("CuPy", cp), ("torch", torch)) if m is None]
    print(f"rust_module: ok on the GPU, matches NumPy ({', '.join(done)} data"
          f"{'; not installed: ' + ', '.join(missing) if missing else ''})")


if __name__ == "__main__":
    main()
