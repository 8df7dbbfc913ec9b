#!/usr/bin/env python3
"""One cold first call, for the `tile_compile_matmul` row: `first_call.py oxide|triton` makes
the inputs, then times one bf16 matmul call of a single configuration, the same on both sides
(oxide_kernels.MATMUL_BF16: the tiles, warps and stages bench/tile measures oxide with), at
1024x1024x1024, from the call to the end of its launch, and prints
`first_call_ms MS`. tile_bench.py runs it in a fresh process with empty caches
(OXIDE_CACHE_DIR and TRITON_CACHE_DIR pointing at new folders, CUDA_CACHE_DISABLE=1), so the
time holds everything a first call does: oxide's IR generation, compile and module load, or
Triton's compile and launcher build, and the driver's PTX JIT. Imports and CUDA context
creation happen before the clock starts, for both."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 1024


def main(which):
    sys.path.insert(0, HERE)
    import torch
    from oxide_kernels import MATMUL_BF16
    if which == "oxide":
        from oxide_kernels import Kernels
        k = Kernels()
    elif which == "triton":
        import peers_triton
    else:
        sys.exit(f"first_call.py: give oxide or triton, not {which!r}")
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.empty(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if which == "oxide":
        k.launch(k.matmul_call(a, b, c))
    else:
        # the autotuned kernel's own JIT function, at one configuration: no tuning runs
        fn = peers_triton.matmul_blocked_kernel.fn
        t = MATMUL_BF16
        grid = (triton_cdiv(SIZE, t["BM"]) * triton_cdiv(SIZE, t["BN"]),)
        fn[grid](a, b, c, SIZE, SIZE, SIZE, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                 c.stride(1), BM=t["BM"], BN=t["BN"], BK=t["BK"], GROUP_M=8, num_warps=t["warps"],
                 num_stages=t["stages"])
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    want = a.float() @ b.float()
    err = ((c.float() - want).norm() / want.norm()).item()
    if not err < 1e-2:
        sys.exit(f"first_call.py {which}: wrong result, relative error {err:.3g}")
    print(f"first_call_ms {ms:.1f}")


def triton_cdiv(a, b):
    return (a + b - 1) // b


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
