"""The launch path's direct reading of CuPy arrays and torch tensors (tests/bindings/python/fakes.py
stands in for both): the same oxide_arg rows as their __cuda_array_interface__ gives, without
reading it; the same refusals; and a launch given no stream= going on the framework's current
stream (checked on a GPU or the fake driver by capturing that stream: the launch is recorded, not
run, until the graph is replayed)."""
import random

import numpy as np
import pytest

import fakes
import kernels
import oxide
from test_args import FakeCuda, unpack

PTR = 0x7F0000000000


@pytest.fixture(scope="module")
def vecadd():
    return oxide.ArgPacker(oxide.Manifest.from_ptx(kernels.compiled(kernels.vecadd))["vecadd"])


@pytest.fixture
def fw(monkeypatch):
    return fakes.install(monkeypatch)


def test_rows_match_the_interface_without_reading_it(vecadd, fw):
    cp, torch = fw
    rng = random.Random(11)
    for _ in range(20):
        ptrs = [PTR + 256 * rng.randint(1, 10**6) for _ in range(3)]
        shapes = [tuple(rng.randint(1, 40) for _ in range(rng.randint(1, 3))) for _ in range(3)]
        want = unpack(vecadd.pack([FakeCuda(s, "<f4", ptr=p) for s, p in zip(shapes, ptrs)]), 3)
        got_cp = unpack(vecadd.pack([cp.ndarray(p, s) for s, p in zip(shapes, ptrs)]), 3)
        got_t = unpack(vecadd.pack([torch.Tensor(p, s) for s, p in zip(shapes, ptrs)]), 3)
        assert got_cp == want and got_t == want
        assert all(r[5] == p and r[2] == 1 for r, p in zip(want, ptrs))
    assert cp.cai_reads == 0 and torch.cai_reads == 0


def test_mixed_arguments(vecadd, fw):
    cp, torch = fw
    d = FakeCuda((7,), "<f4", ptr=PTR + 4096, readonly=True)
    rows = unpack(vecadd.pack([d, cp.ndarray(PTR, 7), torch.Tensor(PTR + 64, 7)]), 3)
    assert [r[2] for r in rows] == [0, 1, 1] and [r[6] for r in rows] == [7, 7, 7]


def test_refusals_are_the_general_paths(vecadd, fw):
    cp, torch = fw
    ok = [FakeCuda((4,)), FakeCuda((4,))]
    for bad in (cp.ndarray(PTR, 4, np.float64), torch.Tensor(PTR, 4, torch.float64)):
        with pytest.raises(oxide.LaunchError) as ei:
            vecadd.pack([bad] + ok)
        assert "argument 1 'a' (slice<f32>) takes f32 elements, got an array of f64" in str(ei.value)
        assert "astype(numpy.float32)" in str(ei.value)
    # strided: through the interface, which says why
    for bad in (cp.ndarray(PTR, (4, 4), strides=(4, 16)), torch.Tensor(PTR, (4, 4), stride=(1, 4))):
        with pytest.raises(oxide.LaunchError, match="needs contiguous memory"):
            vecadd.pack([bad] + ok)
    with pytest.raises(oxide.LaunchError, match=r"needs device memory, but got host memory \(torch.Tensor\)"):
        vecadd.pack([torch.Tensor(PTR, 4, cuda=False)] + ok)
    with pytest.raises(oxide.LaunchError, match="element type '<c8'"):
        vecadd.pack([cp.ndarray(PTR, 4, np.complex64)] + ok)
    assert cp.cai_reads >= 2 and torch.cai_reads >= 2


def test_empty_arrays_take_the_general_path(vecadd, fw):
    cp, torch = fw
    rows = unpack(vecadd.pack([cp.ndarray(PTR, 0), torch.Tensor(PTR, 0), FakeCuda((0,), ptr=0)]), 3)
    assert [(r[5], r[6]) for r in rows] == [(0, 0)] * 3
    assert cp.cai_reads == 1 and torch.cai_reads == 1


def test_torch_dtypes_without_a_typestr(fw):
    """bf16 has no __cuda_array_interface__ type string; read directly, a bf16 tensor passes."""
    cp, torch = fw
    p = oxide.ArgPacker(oxide.Manifest.from_ptx(kernels.compiled(lambda c: kernels.vecadd(c, elem="bf16")))["vecadd"])
    rows = unpack(p.pack([torch.Tensor(PTR, 9, torch.bfloat16)] * 3), 3)
    assert rows[0][1] == oxide._lib.OXIDE_SCALAR_BF16 and rows[0][6] == 9
    with pytest.raises(oxide.LaunchError, match="takes bf16 elements, got an array of f32"):
        p.pack([torch.Tensor(PTR, 9)] * 3)


def test_not_a_framework_array(vecadd, fw):
    class ndarray:  # noqa: N801 - CuPy's class name, in another module
        __module__ = "mylib"
    with pytest.raises(oxide.LaunchError, match="needs device memory: an oxide.DeviceArray"):
        vecadd.pack([ndarray(), FakeCuda((4,)), FakeCuda((4,))])


# ---- streams (GPU or fake driver) ----


@pytest.fixture
def setup(device):
    mod = oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, device.target), device)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    return mod.vecadd, a, b, oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)


@pytest.mark.parametrize("which", ["cupy", "torch"])
def test_launch_goes_on_the_frameworks_current_stream(setup, device, fw, which):
    k, a, b, da, db = setup
    cp, torch = fw
    out = oxide.DeviceArray.zeros(300, "f32")
    s = oxide.Stream(device, non_blocking=True)
    fwmod = cp if which == "cupy" else torch
    fwmod.current = s.handle
    make = (lambda d: cp.ndarray(d.ptr, d.size)) if which == "cupy" else (lambda d: torch.Tensor(d.ptr, d.size))
    with s.capture() as cap:
        k(make(da), make(db), make(out), grid=2, block=256)  # no stream=: the framework's
    assert (out.to_numpy() == 0).all()  # recorded into the graph, not run
    cap.graph.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    if which == "torch":
        assert torch.stream_calls == [device.index]
    else:
        assert cp.stream_calls == 1
    assert fwmod.cai_reads == 0


def test_explicit_stream_and_device_arrays_leave_the_framework_alone(setup, device, fw):
    k, a, b, da, db = setup
    cp, torch = fw
    out = oxide.DeviceArray.zeros(300, "f32")
    torch.current = 12345  # not a stream: using it would fail the launch
    k(da, db, out, grid=2, block=256)
    s = oxide.Stream(device)
    k(torch.Tensor(da.ptr, 300), torch.Tensor(db.ptr, 300), torch.Tensor(out.ptr, 300), grid=2, block=256, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    assert torch.stream_calls == [] and cp.stream_calls == 0


def test_cupy_array_on_another_stream_is_waited_for(setup, device, fw):
    """CuPy's interface names its current stream as the array's: a launch on another stream waits
    for it (here: that stream is being captured, so the launch joins the capture)."""
    k, a, b, da, db = setup
    cp, _ = fw
    out = oxide.DeviceArray.zeros(300, "f32")
    producer, consumer = oxide.Stream(device, non_blocking=True), oxide.Stream(device, non_blocking=True)
    cp.current = producer.handle
    with producer.capture() as cap:
        k(cp.ndarray(da.ptr, 300), db, out, grid=2, block=256, stream=consumer)
        waiter = oxide.Event(device, timing=False).record(consumer)  # the consumer rejoins the producer
        producer.wait(waiter)
    assert cp.stream_calls == 1
    assert (out.to_numpy() == 0).all()
    cap.graph.launch(producer)
    producer.synchronize()
    np.testing.assert_array_equal(out.to_numpy(), a + b)


# ---- the real frameworks (on the GPU machine) ----


def test_torch_current_stream_and_cuda_graph(setup):
    """Inside torch.cuda.graph a launch on torch tensors goes on torch's capture stream."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    k, a, b, _, _ = setup
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = torch.zeros_like(ta)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # on s, without saying so
        k(ta, tb, out, grid=2, block=256)
    s.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), a + b)
    out.zero_()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(ta, tb, out, grid=2, block=256)
    torch.cuda.synchronize()
    assert (out == 0).all().item()  # captured, not run
    g.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), a + b)


def test_cupy_current_stream_capture(setup):
    cp = pytest.importorskip("cupy")
    k, a, b, _, _ = setup
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        ca, cb, out = cp.asarray(a), cp.asarray(b), cp.zeros(a.size, cp.float32)
        s.synchronize()
        s.begin_capture()
        k(ca, cb, out, grid=2, block=256)  # on CuPy's current stream, s
        g = s.end_capture()
        assert not bool((out != 0).any())
        g.launch(stream=s)
        s.synchronize()
        np.testing.assert_array_equal(cp.asnumpy(out), a + b)
