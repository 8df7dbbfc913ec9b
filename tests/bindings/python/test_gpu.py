"""GPU tests: launches from Python on NumPy data (through DeviceArray), CuPy and PyTorch arrays,
DLPack, foreign streams, and a module written in Rust, each checked against a CPU reference.
They skip, saying why, where there is no GPU."""
import struct
from pathlib import Path

import numpy as np
import pytest

import oxide
import kernels

DATA = Path(__file__).resolve().parent.parent / "data"
N = 1000


@pytest.fixture(scope="module")
def vecadd_mod(device):
    return oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, device.target), device)


@pytest.fixture(scope="module")
def saxpy_mod(device):
    return oxide.Module.from_ptx(kernels.compiled(kernels.saxpy, device.target), device)


def ab():
    rng = np.random.default_rng(1)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def test_device_properties(device):
    assert device.name
    assert device.compute_capability >= (8, 0)
    assert device.sm_count > 0 and device.total_memory > 0
    free, total = device.memory_info()
    assert 0 < free <= total
    assert oxide.devices()[0] is device
    assert oxide.driver_version() >= 12000


def test_device_array_roundtrip(device):
    x = np.arange(N, dtype=np.float64)
    d = oxide.DeviceArray.from_numpy(x)
    assert d.shape == (N,) and d.dtype == np.float64 and d.scalar == "f64" and d.nbytes == 8 * N
    np.testing.assert_array_equal(d.to_numpy(), x)
    z = oxide.DeviceArray.zeros((4, 5), "i32")
    assert (z.to_numpy() == 0).all() and z.to_numpy().shape == (4, 5)
    c = d.copy()
    np.testing.assert_array_equal(c.to_numpy(), x)


def test_vecadd_numpy_through_device_arrays(vecadd_mod):
    a, b = ab()
    da, db = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)
    out = oxide.DeviceArray.empty(N, "f32")
    vecadd_mod.vecadd(da, db, out, grid=(N + 255) // 256, block=256)
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    out.zero()
    vecadd_mod.vecadd[(N + 127) // 128, 128](da, db, out)
    np.testing.assert_array_equal(out.to_numpy(), a + b)


def test_scalars_and_kernel_attributes(saxpy_mod):
    x = np.linspace(0, 1, N, dtype=np.float32)
    y = np.ones(N, np.float32)
    dx, dy = oxide.DeviceArray.from_numpy(x), oxide.DeviceArray.from_numpy(y)
    k = saxpy_mod.saxpy
    k(2.5, dx, dy, N, grid=4, block=256)
    np.testing.assert_allclose(dy.to_numpy(), 2.5 * x + 1, rtol=1e-6)
    assert k.attribute("num_regs") > 0
    assert k.occupancy(256) > 0
    assert k.suggest_block_size()[1] > 0


def test_numpy_array_raises_with_the_copy_to_make(vecadd_mod):
    a, b = ab()
    out = oxide.DeviceArray.empty(N, "f32")
    with pytest.raises(oxide.LaunchError) as ei:
        vecadd_mod.vecadd(a, oxide.DeviceArray.from_numpy(b), out, grid=4, block=256)
    assert "argument 1 'a'" in str(ei.value) and "oxide.DeviceArray.from_numpy(a)" in str(ei.value)


def test_wrong_arguments_are_errors_not_crashes(vecadd_mod, device):
    a, b = ab()
    da, db = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)
    with pytest.raises(oxide.LaunchError, match="takes 3 arguments"):
        vecadd_mod.vecadd(da, db, grid=1, block=1)
    with pytest.raises(oxide.LaunchError, match="f32 elements, got a DeviceArray of f64"):
        vecadd_mod.vecadd(da, db, oxide.DeviceArray.empty(N, "f64"), grid=1, block=1)
    ro = oxide.DeviceArray.from_numpy(a, readonly=True)
    with pytest.raises(oxide.LaunchError) as ei:  # read-only buffer for a mutable slice: the C check
        vecadd_mod.vecadd(da, db, ro, grid=1, block=1)
    assert "'out'" in ei.value.message and ei.value.status_name == "OXIDE_ERROR_LAUNCH"
    with pytest.raises(TypeError, match="grid="):
        vecadd_mod.vecadd(da, db, da)
    with pytest.raises(AttributeError, match="it has: vecadd"):
        vecadd_mod.nope
    device.check()  # nothing faulted


def test_streams_and_events(vecadd_mod, device):
    a, b = ab()
    da, db = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)
    out = oxide.DeviceArray.empty(N, "f32")
    s = oxide.Stream(device, non_blocking=True)
    start, end = oxide.Event(device), oxide.Event(device)
    start.record(s)
    for _ in range(10):
        vecadd_mod.vecadd(da, db, out, grid=4, block=256, stream=s)
    end.record(s)
    end.synchronize()
    assert s.query()
    assert start.elapsed_ms(end) >= 0
    np.testing.assert_array_equal(out.to_numpy(stream=s), a + b)
    # a raw handle and the __cuda_stream__ protocol name the same stream
    vecadd_mod.vecadd(da, db, out, grid=4, block=256, stream=s.handle)
    vecadd_mod.vecadd(da, db, out, grid=4, block=256, stream=oxide.Stream.wrap(s))
    s.synchronize()


class OnStream:
    """Device memory whose producer says (CAI v3) it is written on a given stream."""

    def __init__(self, arr, stream):
        cai = dict(arr.__cuda_array_interface__)
        cai["stream"] = stream
        self.__cuda_array_interface__ = cai
        self.arr = arr


def test_cai_stream_is_honoured(vecadd_mod, device):
    a, b = ab()
    producer, consumer = oxide.Stream(device, non_blocking=True), oxide.Stream(device, non_blocking=True)
    da, db = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)
    out = oxide.DeviceArray.zeros(N, "f32")
    vecadd_mod.vecadd(OnStream(da, producer.handle), OnStream(db, 1), OnStream(out, consumer.handle), grid=4,
                      block=256, stream=consumer)
    consumer.synchronize()
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    vecadd_mod.vecadd(OnStream(da, producer.handle), db, out, grid=4, block=256)  # default stream consumer
    device.synchronize()


def test_module_load_from_file(tmp_path, device):
    p = tmp_path / "vecadd.ptx"
    p.write_text(kernels.compiled(kernels.vecadd, device.target))
    mod = oxide.Module.load(str(p))
    assert mod.kernels == ("vecadd",)
    assert mod.vecadd.signature() == "vecadd(a: slice<f32>, b: slice<f32>, out: slice<mut f32>)"


def test_empty_kernel(device):
    mod = oxide.Module.from_ptx(kernels.compiled(kernels.empty, device.target))
    for _ in range(100):
        mod.empty(grid=1, block=1)
    device.synchronize()


# ---- CuPy ----

def test_cupy_arrays_and_streams(vecadd_mod):
    cp = pytest.importorskip("cupy")
    a, b = ab()
    ca, cb = cp.asarray(a), cp.asarray(b)
    cout = cp.zeros(N, cp.float32)
    vecadd_mod.vecadd(ca, cb, cout, grid=4, block=256)
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(cout), a + b)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        cx = cp.asarray(a) * 2  # produced on s: the CAI names s; oxide orders its launch after it
    cout2 = cp.zeros(N, cp.float32)
    vecadd_mod.vecadd(cx, cb, cout2, grid=4, block=256, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(cout2), 2 * a + b)
    with pytest.raises(oxide.LaunchError, match="got an array of f64"):
        vecadd_mod.vecadd(ca.astype(cp.float64), cb, cout, grid=4, block=256)
    # a DeviceArray is a CuPy array without a copy
    d = oxide.DeviceArray.from_numpy(a)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(d)), a)


# ---- PyTorch ----

def test_torch_tensors_streams_and_dlpack(vecadd_mod):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    a, b = ab()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tout = torch.zeros(N, device="cuda")
    vecadd_mod.vecadd(ta, tb, tout, grid=4, block=256, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tout.cpu().numpy(), a + b)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        tx = ta * 3
        tout2 = torch.empty_like(ta)
        vecadd_mod.vecadd(tx, tb, tout2, grid=4, block=256, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(tout2.cpu().numpy(), 3 * a + b)

    class OnlyDLPack:  # force the DLPack path
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    tout3 = torch.zeros(N, device="cuda")
    vecadd_mod.vecadd(OnlyDLPack(ta), OnlyDLPack(tb), OnlyDLPack(tout3), grid=4, block=256)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tout3.cpu().numpy(), a + b)
    with pytest.raises(oxide.LaunchError, match="contiguous"):
        m = torch.zeros((64, 64), device="cuda")
        vecadd_mod.vecadd(m.t(), m, m, grid=1, block=1)
    # DeviceArray <-> torch without copies
    d = oxide.DeviceArray.from_numpy(a)
    np.testing.assert_array_equal(torch.as_tensor(d, device="cuda").cpu().numpy(), a)
    np.testing.assert_array_equal(oxide.DeviceArray.wrap(ta).to_numpy(), a)


# ---- a module written in Rust (cargo oxide build --module) ----

def test_rust_vecadd_module(device):
    mod = oxide.Module.load(str(DATA / "rust_vecadd.ptx"))
    a, b = ab()
    da, db = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)
    c = oxide.DeviceArray.zeros(N, "f32")
    mod.vecadd(da, db, c, grid=(N + 255) // 256, block=256)
    np.testing.assert_array_equal(c.to_numpy(), a + b)
    with pytest.raises(oxide.LaunchError):  # read-only buffer for the DisjointSlice
        mod.vecadd(da, db, oxide.DeviceArray.from_numpy(a, readonly=True), grid=4, block=256)
    device.check()


def test_rust_generic_closure_module(device):
    mod = oxide.Module.load(str(DATA / "rust_generics.ptx"))
    k = mod.map_f32_scale  # map::<f32, _>(move |x| x * k + 1.0), k captured (4 bytes)
    assert [p.kind for p in k.params] == ["bytes", "slice", "slice"]
    x = np.linspace(-4, 4, N, dtype=np.float32)
    dx, out = oxide.DeviceArray.from_numpy(x), oxide.DeviceArray.zeros(N, "f32")
    k(struct.pack("<f", 3.0), dx, out, grid=(N + 255) // 256, block=256)
    np.testing.assert_allclose(out.to_numpy(), x * np.float32(3.0) + 1, rtol=1e-6)
    name = [n for n in mod.kernels if n.startswith("map<f64")][0]
    xd = np.arange(N, dtype=np.float64)
    dd, od = oxide.DeviceArray.from_numpy(xd), oxide.DeviceArray.zeros(N, "f64")
    mod[name](struct.pack("<d", 1.5), dd, od, grid=4, block=256)  # map::<f64>(move |x| x * kd - 2.0)
    np.testing.assert_allclose(od.to_numpy(), xd * 1.5 - 2.0)


def test_rust_module_with_cupy_and_torch(device):
    mod = oxide.Module.load(str(DATA / "rust_vecadd.ptx"))
    a, b = ab()
    try:
        import cupy as cp
        c = cp.zeros(N, cp.float32)
        mod.vecadd(cp.asarray(a), cp.asarray(b), c, grid=4, block=256)
        np.testing.assert_array_equal(cp.asnumpy(c), a + b)
    except ImportError:
        pass
    try:
        import torch
        t = torch.zeros(N, device="cuda")
        mod.vecadd(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), t, grid=4, block=256)
        np.testing.assert_array_equal(t.cpu().numpy(), a + b)
    except ImportError:
        pass
