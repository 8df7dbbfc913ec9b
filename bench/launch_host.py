#!/usr/bin/env python3
"""The host-side cost of a Python launch, on the tests' fake CUDA driver (tests/gpu/mock), where
the driver itself costs next to nothing, so what is left is oxide's own work per `kernel(...)`:

    host_empty us [py_us]          mod.empty(grid=1, block=1)
    host_args_devarray us [py_us]  vecadd(a, b, out) on three oxide.DeviceArray
    host_args_scalars us [py_us]   saxpy(2.5, x, y, n) on two DeviceArrays and two Python scalars
    host_args_cai us [py_us]       vecadd on three objects whose __cuda_array_interface__ is a
                                   property building a new dict per access (as Numba's and CuPy's do)
    host_args_cupylike us [py_us]  ... on three CuPy-like arrays (cupy.ndarray's attributes and its
                                   __cuda_array_interface__, v3 with a stream)
    host_args_torchlike us [py_us] ... on three torch-like tensors (torch.Tensor's methods and its
                                   __cuda_array_interface__, written in Python as torch's is)
    host_floor us                  the vecadd launch with its oxide_arg rows made beforehand: what
                                   liboxide and the fake driver (which runs vecadd) cost

us is a launch as users make it; py_us the same launch through Kernel._call, the Python lane that
took every launch before the C lane (bindings/python/oxide_fast.c) and still takes what
it leaves (printed where the package has one). Medians of --rounds rounds of --iters launches,
interleaved, microseconds of this process's CPU time per launch (everything here runs on the host, and CPU time leaves out the time the shared build
machine gives other processes; --wall measures wall-clock time instead). The fakes stand in for
CuPy and PyTorch where those are not installed (tests/bindings/python/fakes.py, registered as
the modules `cupy` and `torch` only then), so the rows show oxide's side of the cost; the real libraries' attribute
costs differ, and bench/launch.py measures them on the GPU. The driver is found in
build*/tests/gpu/mock (or OXIDE_CUDA_DRIVER); without it the script says so and exits 0."""
import argparse
import glob
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def find_driver():
    if os.environ.get("OXIDE_CUDA_DRIVER"):
        return os.environ["OXIDE_CUDA_DRIVER"]
    found = sorted(glob.glob(str(ROOT / "build*/tests/gpu/mock/libcuda.so.1")), key=os.path.getmtime, reverse=True)
    return found[0] if found else None


class CAIArray:
    """Device memory whose interface dict is built anew at each access."""

    def __init__(self, ptr, n):
        self.ptr, self.n = ptr, n

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.n,), "typestr": "<f4", "data": (self.ptr, False), "version": 3, "strides": None,
                "stream": None}


def framework(name):
    if name in sys.modules or importlib.util.find_spec(name) is not None:
        return None  # the real one is installed: measured on the GPU by bench/launch.py
    import fakes
    sys.modules[name] = getattr(fakes, f"{name}_module")()
    return sys.modules[name]


clock = time.process_time


def timed(fn, iters):
    t0 = clock()
    for _ in range(iters):
        fn()
    return (clock() - t0) / iters * 1e6


def row(name, fn, rounds, iters, python_lane=None):
    fns = [fn] if python_lane is None else [fn, python_lane]
    times = [[] for _ in fns]
    for f in fns:
        f()
    for _ in range(rounds):
        for f, t in zip(fns, times):
            t.append(timed(f, iters))
    print(name, " ".join(f"{statistics.median(t):.3f}" for t in times), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = ap.parse_args()
    global clock
    clock = time.perf_counter if args.wall else time.process_time
    drv = find_driver()
    if drv is None:
        print("host_launch: skipped, build the fake driver first (cmake --build build --target oxide_mock_cuda)")
        return 0
    os.environ["OXIDE_CUDA_DRIVER"] = drv
    sys.path.insert(0, str(ROOT / "tests" / "bindings" / "python"))
    import numpy as np
    import oxide
    import kernels

    dev = oxide.Device(0)
    mod = oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, dev.target), dev)
    empty = oxide.Module.from_ptx(kernels.compiled(kernels.empty, dev.target), dev).empty
    saxpy = oxide.Module.from_ptx(kernels.compiled(kernels.saxpy, dev.target), dev).saxpy
    vecadd = mod.vecadd
    lane = getattr(oxide.Kernel, "_call", None)  # the Python lane, where the package has a C one
    n = 256
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    da, db, do = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b), oxide.DeviceArray.zeros(n, "f32")
    ptrs = (da.ptr, db.ptr, do.ptr)

    def check(*xs):
        do.zero()
        vecadd(*xs, grid=1, block=n)
        assert (do.to_numpy() == a + b).all(), "vecadd on the fake driver gave a wrong sum"
        return xs

    def rows(name, k, xs):
        py = None if lane is None else lambda: lane(k, *xs, grid=1, block=n)
        row(name, lambda: k(*xs, grid=1, block=n), args.rounds, args.iters, py)

    rows("host_empty", empty, ())
    rows("host_args_devarray", vecadd, check(da, db, do))
    rows("host_args_scalars", saxpy, (2.5, da, do, n))
    rows("host_args_cai", vecadd, check(*(CAIArray(p, n) for p in ptrs)))
    cp = framework("cupy")
    if cp is not None:
        rows("host_args_cupylike", vecadd, check(*(cp.ndarray(p, n) for p in ptrs)))
    torch = framework("torch")
    if torch is not None:
        rows("host_args_torchlike", vecadd, check(*(torch.Tensor(p, n) for p in ptrs)))
    ffi, lib = oxide._ffi, oxide._lib
    vals = ffi.new("uint64_t[]", [x for d in (da, db, do) for x in d._arg])
    kinds = ffi.new("uint32_t[]", [lib.OXIDE_ARG_BUFFER] * 3)
    grid, block = ffi.new("uint32_t[3]", [1, 1, 1]), ffi.new("uint32_t[3]", [n, 1, 1])
    row("host_floor", lambda: lib.oxide_py_launch(vecadd._h, ffi.NULL, grid, block, 0, ffi.NULL, kinds, vals, 3),
        args.rounds, args.iters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
