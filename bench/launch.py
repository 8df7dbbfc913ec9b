#!/usr/bin/env python3
"""Launch overhead (bench/launch in bench/README.md), medians of interleaved rounds:

    launch_py oxide_us cupy_us ratio        an empty kernel from Python: oxide against CuPy RawKernel
    launch_py_args oxide_us cupy_us ratio   vecadd(a, b, out) on CuPy arrays: oxide against RawKernel
    launch_py_torch oxide_us cupy_us ratio  vecadd on torch tensors: oxide against RawKernel on CuPy
                                            views of the same memory (needs torch with CUDA)
    launch_cpp oxide_us c_us ratio          oxide.hpp against the C API (runs bench/launch_cpp)

Both Python sides launch on the legacy default stream (oxide's launch with no stream= goes on
the framework's current stream, which is that one here) and time only the host loop (the GPU
drains empty kernels faster than either can queue them). The argument rows pass the arrays as
they are, through oxide's direct reading of CuPy arrays and torch tensors. Without a GPU (or CuPy) it says so and
exits 0. Options: --rounds N --iters N --cpp PATH (the launch_cpp binary; default: build*/bench)."""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters * 1e6


def compare(name, a, b, rounds, iters, sync):
    a(), b()
    sync()
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(timed(a, iters))
        sync()
        tb.append(timed(b, iters))
        sync()
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(f"{name} {ma:.3f} {mb:.3f} {ma / mb:.3f}", flush=True)


def python_rows(rounds, iters):
    import oxide
    reason = oxide.no_gpu_reason()
    if reason:
        print(f"launch_py: skipped, no GPU ({reason})")
        return
    try:
        import cupy as cp
    except ImportError:
        print("launch_py: skipped, CuPy is not installed")
        return
    dev = oxide.Device(0)
    ctx = oxide.Context()
    m = ctx.create_module("bench")
    m.add_kernel("empty").block().ret()
    k = m.add_kernel("vecadd")
    a, alen = k.slice_param("a", "f32")
    b, _ = k.slice_param("b", "f32")
    out, _ = k.slice_param("out", "f32", mut=True)
    e, body, done = k.block(), k.block(), k.block()
    i = e.global_id_x()
    e.cond_br(e.icmp(i, alen, pred="ult"), body, done)
    s = body.add(body.load(body.offset(a, i, elem="f32"), "f32", align=4),
                 body.load(body.offset(b, i, elem="f32"), "f32", align=4))
    body.store(s, body.offset(out, i, elem="f32"), align=4)
    body.br(done)
    done.ret()
    mod = oxide.Module.from_ptx(m.compile(target=dev.target), dev)
    ox_empty, ox_vecadd = mod.empty, mod.vecadd

    src = r'''
    extern "C" __global__ void empty() {}
    extern "C" __global__ void vecadd(const float *a, unsigned long long na, const float *b,
                                      unsigned long long nb, float *out, unsigned long long no) {
        unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
        if (i < na) out[i] = a[i] + b[i];
    }'''
    cmod = cp.RawModule(code=src)
    cp_empty, cp_vecadd = cmod.get_function("empty"), cmod.get_function("vecadd")
    sync = cp.cuda.Device().synchronize
    compare("launch_py", lambda: ox_empty(grid=1, block=1), lambda: cp_empty((1,), (1,), ()), rounds, iters, sync)

    n = 256
    xa, xb, xo = cp.ones(n, cp.float32), cp.ones(n, cp.float32), cp.zeros(n, cp.float32)
    nn = cp.uint64(n)
    compare("launch_py_args", lambda: ox_vecadd(xa, xb, xo, grid=1, block=256),
            lambda: cp_vecadd((1,), (256,), (xa, nn, xb, nn, xo, nn)), rounds, iters, sync)
    assert (xo.get() == 2).all()
    torch_row(ox_vecadd, cp, cp_vecadd, n, rounds, iters, sync)


def torch_row(ox_vecadd, cp, cp_vecadd, n, rounds, iters, sync):
    try:
        import torch
    except ImportError:
        print("launch_py_torch: skipped, PyTorch is not installed")
        return
    if not torch.cuda.is_available():
        print("launch_py_torch: skipped, torch sees no GPU")
        return
    ta, tb, to = torch.ones(n, device="cuda"), torch.ones(n, device="cuda"), torch.zeros(n, device="cuda")
    va, vb, vo = cp.asarray(ta), cp.asarray(tb), cp.asarray(to)  # the same memory, as CuPy arrays
    nn = cp.uint64(n)
    compare("launch_py_torch", lambda: ox_vecadd(ta, tb, to, grid=1, block=256),
            lambda: cp_vecadd((1,), (256,), (va, nn, vb, nn, vo, nn)), rounds, iters, sync)
    torch.cuda.synchronize()
    assert (to == 2).all().item()


def cpp_row(path, rounds, iters):
    if path is None:
        found = sorted(glob.glob(str(ROOT / "build*/bench/launch_cpp")), key=os.path.getmtime, reverse=True)
        path = found[0] if found else None
    if path is None or not os.path.exists(path):
        print("launch_cpp: skipped, build bench/launch_cpp first (cmake --build build --target launch_cpp)")
        return
    r = subprocess.run([path, str(rounds), str(iters)], capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("launch_cpp")]
    if r.returncode == 77:
        print(f"launch_cpp: skipped, {r.stdout.strip()}")
    elif line:
        print(line[0], flush=True)
    else:
        print(f"launch_cpp: failed (exit {r.returncode}): {r.stdout} {r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--cpp", default=None)
    ap.add_argument("--skip-cpp", action="store_true")
    args = ap.parse_args()
    python_rows(args.rounds, args.iters)
    if not args.skip_cpp:
        cpp_row(args.cpp, args.rounds, args.iters)


if __name__ == "__main__":
    sys.exit(main())
