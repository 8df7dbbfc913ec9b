"""CUDA graphs from Python: a sequence of launches captured once from a stream and replayed, and
a graph of tasks that copies pinned host memory in, clears, launches twice and copies the result
out, each replay on new inputs. NVTX ranges name the steps for Nsight Systems (`nsys profile python3
graphs.py`); OXIDE_NVTX_LAUNCHES=1 also puts each launch in a range named after its kernel.
"""
from __future__ import annotations

import numpy as np
from _example import check, gpu_or_skip
from builder_kernel import build_saxpy

import oxide

N = 50_000


def main() -> None:
    device = gpu_or_skip("graphs")
    saxpy = oxide.Module.from_ptx(build_saxpy(oxide.Context()).compile(target=device.target)).saxpy
    grid, block = (N + 255) // 256, 256
    rng = np.random.default_rng(11)
    stream = oxide.Stream(device, non_blocking=True)

    # 1. Stream capture: y = 0, y += 3 x, y += 2 x, recorded once and replayed.
    x = rng.standard_normal(N).astype(np.float32)
    dx, dy = oxide.DeviceArray.from_numpy(x), oxide.DeviceArray.zeros(N)
    with oxide.nvtx.range("capture"), stream.capture() as cap:
        dy.zero(stream)
        saxpy(3.0, dx, dy, N, grid=grid, block=block, stream=stream)
        saxpy(2.0, dx, dy, N, grid=grid, block=block, stream=stream)
    assert cap.graph is not None
    check("graphs (nothing ran while capturing)", dy.to_numpy(), np.zeros(N, np.float32))
    for _ in range(3):  # each replay recomputes y from x
        with oxide.nvtx.range("replay"):
            cap.graph.launch(stream)
    stream.synchronize()
    check("graphs (captured)", dy.to_numpy(), np.float32(3) * x + np.float32(2) * x, rtol=1e-6)

    # 2. A task graph over pinned memory: copy in, y = 0, y += 0.5 x, y += x, copy out.
    hx, hy = oxide.HostArray(N, "f32"), oxide.HostArray(N, "f32")
    work = oxide.Task.sequence(
        oxide.Task.copy(dx, hx),
        oxide.Task.memset(dy, 0),
        saxpy.task(0.5, dx, dy, N, grid=grid, block=block),
        saxpy.task(1.0, dx, dy, N, grid=grid, block=block),
        oxide.Task.copy(hy, dy))
    graph = work.graph()
    for round in range(4):
        xs = rng.standard_normal(N).astype(np.float32)
        hx.numpy()[:] = xs  # the graph reads the pinned buffer when it runs
        with oxide.nvtx.range(f"round {round}"):
            graph.launch(stream)
        stream.synchronize()
        check(f"graphs (task graph, round {round})", hy.numpy(), np.float32(0.5) * xs + xs, rtol=1e-6)
    print(f"graphs: ok on the GPU, matches NumPy (3 replays of a capture, 4 of a task graph; NVTX "
          f"{'found' if oxide.nvtx.available() else 'not found: the ranges did nothing'})")


if __name__ == "__main__":
    main()
