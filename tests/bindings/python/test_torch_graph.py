"""Launches inside torch's CUDA graph capture: with no stream=, an oxide launch on torch tensors
goes on torch's current stream, which `torch.cuda.graph` is capturing, so the launch becomes part
of torch's graph and each replay runs it again on the tensors' new contents (checked against
NumPy). Skips without a GPU or without torch."""
import numpy as np
import pytest

import kernels
import oxide

N = 4000


@pytest.fixture(scope="module")
def torch_cuda(device):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


@pytest.fixture(scope="module")
def mods(device):
    return (oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, device.target), device),
            oxide.Module.from_ptx(kernels.compiled(kernels.saxpy, device.target), device))


def test_launches_join_torch_graph_capture(torch_cuda, mods):
    torch = torch_cuda
    vecadd, saxpy = mods[0].vecadd, mods[1].saxpy
    rng = np.random.default_rng(16)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = torch.zeros(N, device="cuda")
    grid = (N + 255) // 256

    # Warm up on a side stream, as torch asks before a capture (first-launch work stays out of it).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        vecadd(ta, tb, out, grid=grid, block=256)
        saxpy(0.5, ta, out, N, grid=grid, block=256)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), a + b + np.float32(0.5) * a, rtol=1e-6)

    out.zero_()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vecadd(ta, tb, out, grid=grid, block=256)  # out = a + b
        saxpy(0.5, ta, out, N, grid=grid, block=256)  # out += a / 2
        doubled = out * 2  # torch's own work in the same graph, after oxide's
    torch.cuda.synchronize()
    assert not out.any().item(), "a captured launch ran during the capture"

    for seed in (1, 2, 3):
        r = np.random.default_rng(seed)
        na, nb = r.standard_normal(N).astype(np.float32), r.standard_normal(N).astype(np.float32)
        ta.copy_(torch.from_numpy(na))
        tb.copy_(torch.from_numpy(nb))
        g.replay()
        torch.cuda.synchronize()
        want = na + nb + np.float32(0.5) * na
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(doubled.cpu().numpy(), 2 * want, rtol=1e-6)


def test_launch_on_an_explicit_capturing_stream(torch_cuda, mods):
    # stream= naming the torch stream being captured works the same way.
    torch = torch_cuda
    vecadd = mods[0].vecadd
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    ta, tb, out = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        vecadd(ta, tb, out, grid=(N + 255) // 256, block=256, stream=torch.cuda.current_stream())
    g.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), a + b)
