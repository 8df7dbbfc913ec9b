"""A kernel built in Python with oxide's IR builder, compiled in-process to PTX and launched.

    y[i] = a * x[i] + y[i]   for i < n

Without a GPU it still builds, verifies and compiles the kernel (and prints its manifest), then
says why it did not launch it.
"""
from __future__ import annotations

import numpy as np
from _example import check, gpu_or_skip

import oxide


def build_saxpy(ctx: oxide.Context) -> oxide.IRModule:
    """saxpy(a: f32, x: slice<f32>, y: slice<mut f32>, n: u64)."""
    m = ctx.create_module("saxpy")
    k = m.add_kernel("saxpy")
    a = k.scalar_param("a", "f32")
    x, _ = k.slice_param("x", "f32")
    y, _ = k.slice_param("y", "f32", mut=True)
    n = k.scalar_param("n", "u64")
    entry, body, done = k.block(), k.block(), k.block()
    i = entry.global_id_x()
    entry.cond_br(entry.icmp(i, n, pred="ult"), body, done)
    py = body.offset(y, i, elem="f32")
    xv = body.load(body.offset(x, i, elem="f32"), "f32", align=4)
    body.store(body.fma(a, xv, body.load(py, "f32", align=4)), py, align=4)
    body.br(done)
    done.ret()
    return m


def main() -> None:
    ctx = oxide.Context()
    module = build_saxpy(ctx)
    module.verify()
    reason = oxide.no_gpu_reason()
    target = oxide.Device(0).target if reason is None else "sm_90a"
    ptx = module.compile(target=target)
    print(f"builder_kernel: {len(ptx)} bytes of PTX for {target}: {oxide.Manifest.from_ptx(ptx)['saxpy'].signature()}")
    device = gpu_or_skip("builder_kernel")
    mod = oxide.Module.from_ptx(ptx, device)
    n = 1 << 20
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy = oxide.DeviceArray.from_numpy(x), oxide.DeviceArray.from_numpy(y)
    a = np.float32(2.5)
    mod.saxpy(float(a), dx, dy, n, grid=(n + 255) // 256, block=256)
    check("builder_kernel", dy.to_numpy(), a * x + y, rtol=1e-6, atol=1e-6)
    print(f"builder_kernel: ok on the GPU, matches NumPy ({n} elements, {mod.saxpy.attribute('num_regs')} registers)")


if __name__ == "__main__":
    main()
