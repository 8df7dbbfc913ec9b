"""oxide kernels inside a torch.distributed program: one process per GPU (spawned with
torch.multiprocessing, no torchrun), the NCCL backend. Each rank runs an oxide kernel (the
builder example's saxpy, loaded on its own GPU) on its share of a vector held in a torch tensor,
zeros elsewhere, and all_reduce(SUM) puts the whole result on every rank, which checks it
against NumPy. With one GPU the world has one rank. NVLink multicast stays off
(NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1).
"""
from __future__ import annotations

import os
import socket
from typing import Any, Tuple

import numpy as np
from _example import check, gpu_or_skip, optional
from builder_kernel import build_saxpy

import oxide

N = 1 << 20
A = 2.5

for var, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ.setdefault(var, value)


def inputs() -> Tuple[Any, Any]:
    rng = np.random.default_rng(11)  # the same on every rank
    return rng.uniform(0.5, 2.0, N).astype(np.float32), rng.uniform(-2.0, -0.5, N).astype(np.float32)


def worker(rank: int, world: int, port: int, ptx: str) -> None:
    torch: Any = optional("torch")
    dist: Any = optional("torch.distributed")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        x, y = inputs()
        lo, hi = rank * N // world, (rank + 1) * N // world
        dev = torch.device("cuda", rank)
        tx = torch.from_numpy(x).to(dev)
        out = torch.zeros(N, dtype=torch.float32, device=dev)
        out[lo:hi] = torch.from_numpy(y[lo:hi]).to(dev)
        mod = oxide.Module.from_ptx(ptx, oxide.Device(rank))  # this rank's GPU
        n = hi - lo
        # on torch's current stream of this GPU: out[lo:hi] = A * x[lo:hi] + out[lo:hi]
        mod.saxpy(A, tx[lo:hi], out[lo:hi], n, grid=(n + 255) // 256, block=256)
        dist.all_reduce(out, op=dist.ReduceOp.SUM)
        check(f"multi_gpu_torch rank {rank}", out.cpu().numpy(), np.float32(A) * x + y, rtol=1e-6, atol=1e-6)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    gpu_or_skip("multi_gpu_torch")
    torch: Any = optional("torch")
    if torch is None or not torch.cuda.is_available():
        print("multi_gpu_torch: skipped: no PyTorch with CUDA")
        return
    dist: Any = optional("torch.distributed")
    mp: Any = optional("torch.multiprocessing")
    if dist is None or not dist.is_available() or not dist.is_nccl_available():
        print("multi_gpu_torch: skipped: this PyTorch has no NCCL backend")
        return
    world = torch.cuda.device_count()
    ptx = build_saxpy(oxide.Context()).compile(target=oxide.Device(0).target)
    mp.spawn(worker, args=(world, free_port(), ptx), nprocs=world, join=True)  # raises if a rank failed
    print(f"multi_gpu_torch: ok on the GPU, {world} rank(s) each ran saxpy on its {N // world} elements, "
          f"all_reduce combined them (matches NumPy)")


if __name__ == "__main__":
    main()
