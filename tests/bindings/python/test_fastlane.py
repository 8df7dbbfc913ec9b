"""The launch path's C lane (oxide.Kernel's __call__: LaunchBase, bindings/python/oxide_fast.c):
the launches it takes (DeviceArrays, CuPy arrays and torch tensors of a dtype accepted before,
Python ints, floats and bools) give the results NumPy gives; every check still refuses through
it (element type, mutability, aliasing, count, contiguity, host memory, scalar ranges, the
driver's limits); and what it leaves (other argument types, cluster=, foreign streams, new
dtypes) reaches Kernel._call, the Python lane. Runs on a GPU or on the fake driver of tests/gpu/mock; skips without either.
CuPy and torch are tests/bindings/python/fakes.py where not installed."""
import math
import random

import numpy as np
import pytest

import fakes
import kernels
import oxide
from oxide._runtime import Kernel

N = 300


@pytest.fixture
def vecadd(device):
    return oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, device.target), device).vecadd


@pytest.fixture
def data_ptx(root, device):
    return oxide.Module.load(str(root / "tests" / "gpu" / "data" / "kernels.ptx"), device)


@pytest.fixture
def lanes(monkeypatch):
    """The arguments of each call that reached the Python lane."""
    calls = []
    python_lane = Kernel._call

    def counted(self, *args, **kw):
        calls.append((self.name, args, kw))
        return python_lane(self, *args, **kw)
    monkeypatch.setattr(Kernel, "_call", counted)
    return calls


@pytest.fixture
def fw(monkeypatch):
    return fakes.install(monkeypatch)


def arrays(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    return a, b, oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b)


def test_device_arrays_take_the_c_lane(vecadd, lanes, device):
    a, b, da, db = arrays(1)
    out = oxide.DeviceArray.zeros(N, "f32")
    s = oxide.Stream(device)
    for shape in (dict(grid=2, block=256), dict(grid=(2,), block=(256, 1)), dict(grid=(2, 1, 1), block=(256,)),
                  dict(grid=2, block=256, stream=s, smem=0), dict(grid=2, block=256, stream=s.handle),
                  dict(grid=2, block=256, stream=0)):
        out.zero()
        vecadd(da, db, out, **shape)
        s.synchronize()
        np.testing.assert_array_equal(out.to_numpy(), a + b)
    # they go on the stream given: captured there, they run when the graph does
    c = oxide.Stream(device, non_blocking=True)
    for given in (c, c.handle):
        out.zero()
        with c.capture() as cap:
            vecadd(da, db, out, grid=2, block=256, stream=given)
        assert (out.to_numpy() == 0).all()
        cap.graph.launch(c)
        c.synchronize()
        np.testing.assert_array_equal(out.to_numpy(), a + b)
    assert lanes == []


@pytest.mark.parametrize("which", ["cupy", "torch"])
def test_framework_arrays_take_the_c_lane_once_their_dtype_is_known(vecadd, lanes, fw, which):
    cp, torch = fw
    a, b, da, db = arrays(2)
    out = oxide.DeviceArray.zeros(N, "f32")
    make = (lambda d: cp.ndarray(d.ptr, d.size)) if which == "cupy" else (lambda d: torch.Tensor(d.ptr, d.size))
    xs = (make(da), make(db), make(out))
    vecadd(*xs, grid=2, block=256)  # the first: the Python lane learns the type and the dtype
    assert len(lanes) == 1
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    out.zero()
    vecadd(*xs, grid=2, block=256)
    vecadd(make(db), make(da), make(out), grid=2, block=256)  # other arrays, the same dtype
    assert len(lanes) == 1
    np.testing.assert_array_equal(out.to_numpy(), a + b)
    assert cp.cai_reads == 0 and torch.cai_reads == 0


def test_refusals_through_the_c_lane(vecadd, lanes, device):
    a, b, da, db = arrays(3)
    out = oxide.DeviceArray.zeros(N, "f32")
    vecadd(da, db, out, grid=2, block=256)
    assert lanes == []
    with pytest.raises(oxide.LaunchError, match="takes f32 elements, got a DeviceArray of f64"):
        vecadd(da, db, oxide.DeviceArray.zeros(N, "f64"), grid=2, block=256)
    with pytest.raises(oxide.LaunchError, match="takes 3 arguments"):
        vecadd(da, db, grid=2, block=256)
    ro = oxide.DeviceArray.from_numpy(a, readonly=True)
    with pytest.raises(oxide.LaunchError, match=r"argument 3 'out' is a mutable slice of f32, got a read-only"):
        vecadd(da, db, ro, grid=2, block=256)
    with pytest.raises(oxide.LaunchError, match="argument 3 'out' is a mutable slice that overlaps argument 1 'a'"):
        vecadd(da, db, da, grid=2, block=256)
    with pytest.raises(oxide.LaunchError, match=r"needs device memory, but got a NumPy array"):
        vecadd(a, db, out, grid=2, block=256)
    with pytest.raises(oxide.CudaError, match=r"launch vecadd \(grid 1x1x1, block 4096x1x1"):
        vecadd(da, db, out, grid=1, block=4096)
    with pytest.raises(ValueError, match="must be >= 1"):
        vecadd(da, db, out, grid=0, block=256)
    with pytest.raises(TypeError, match="give the launch shape"):
        vecadd(da, db, out, grid=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'blocks'"):
        vecadd(da, db, out, grid=2, blocks=256)
    device.check()  # refused launches are not faults
    # none ran: out still holds the first launch's sum
    np.testing.assert_array_equal(out.to_numpy(), a + b)


def test_framework_refusals_after_the_dtype_is_known(vecadd, fw):
    cp, torch = fw
    _, _, da, db = arrays(4)
    out = oxide.DeviceArray.zeros(N, "f32")
    for make in (lambda d, **kw: cp.ndarray(d.ptr, d.size, **kw), lambda d, **kw: torch.Tensor(d.ptr, d.size, **kw)):
        vecadd(make(da), make(db), make(out), grid=2, block=256)  # teaches f32
    bad = [(cp.ndarray(da.ptr, N, np.float64), "takes f32 elements, got an array of f64"),
           (torch.Tensor(da.ptr, N, torch.float64), "takes f32 elements, got an array of f64"),
           (cp.ndarray(da.ptr, (10, 10), strides=(4, 40)), "needs contiguous memory"),
           (torch.Tensor(da.ptr, (10, 10), stride=(1, 10)), "needs contiguous memory"),
           (torch.Tensor(da.ptr, N, cuda=False), r"needs device memory, but got host memory \(torch.Tensor\)")]
    for x, message in bad:
        with pytest.raises(oxide.LaunchError, match=message):
            vecadd(x, db, out, grid=2, block=256)
    # a tensor whose dtype changed since it was last passed is checked again
    t = torch.Tensor(da.ptr, N)
    vecadd(t, db, out, grid=2, block=256)
    t.dtype = torch.int32
    with pytest.raises(oxide.LaunchError, match="takes f32 elements, got an array of i32"):
        vecadd(t, db, out, grid=2, block=256)
    # empty arrays are passed (through the Python lane) and the kernel does nothing
    out_np = out.to_numpy()
    vecadd(cp.ndarray(da.ptr, 0), torch.Tensor(db.ptr, 0), out, grid=2, block=256)
    np.testing.assert_array_equal(out.to_numpy(), out_np)


def _f32(x):
    return float(np.float32(x))


def _bf16_exact(rng):
    """A random float that bf16 holds exactly (8 significant bits), and its bits."""
    x = np.float32(rng.randint(-255, 255) * 2.0 ** rng.randint(-20, 20))
    return float(x), int(x.view(np.uint32)) >> 16


def test_scalars_through_the_c_lane(data_ptx, lanes):
    """Every scalar type at random values and at both ends of its range arrive as sent through the
    C lane (ints for floats too), and as through the Python lane (a NumPy scalar sends it there)."""
    k = data_ptx.scalars
    out = oxide.DeviceArray.zeros(16, "f64")
    ints = [("i8", -(1 << 7), 1 << 7), ("i16", -(1 << 15), 1 << 15), ("i32", -(1 << 31), 1 << 31),
            ("i64", -(1 << 63), 1 << 63), ("u8", 0, 1 << 8), ("u16", 0, 1 << 16), ("u32", 0, 1 << 32),
            ("u64", 0, 1 << 64)]
    rng = random.Random(5)
    for trial in range(12):
        pick = [lo if trial == 0 else hi - 1 if trial == 1 else rng.randrange(lo, hi) for _, lo, hi in ints]
        f32, f64, h = rng.uniform(-1e30, 1e30), rng.uniform(-1e300, 1e300), rng.uniform(-6e4, 6e4)
        bh, bh_bits = _bf16_exact(rng)
        if trial == 2:
            f32, f64, h = rng.randint(-1000, 1000), rng.randint(-(1 << 60), 1 << 60), rng.randint(-2048, 2048)
        flag = trial % 2 == 0
        n = len(lanes)
        k(*pick, f32, f64, flag, h, bh, out, grid=1, block=1)
        assert len(lanes) == n, "a launch of Python ints, floats and bools left the C lane"
        got = list(out.to_numpy()[:13])
        # f16 and bf16 arrive as their bits (the kernel passes them on as integers)
        want = [float(v) for v in pick] + [_f32(f32), float(f64), float(flag),
                                           float(np.float16(h).view(np.uint16)), float(bh_bits)]
        assert got == want, f"trial {trial}: sent {want}, the kernel saw {got}"
        out.zero()
        k(np.int8(pick[0]), *pick[1:], f32, f64, flag, h, bh, out, grid=1, block=1)
        assert len(lanes) == n + 1
        assert list(out.to_numpy()[:13]) == want, f"trial {trial}: the Python lane sent another value"
    # rounding to bf16 and f16 is the Python lane's: random values, f16 ties, and values a hair off
    # a tie (which rounding through f32 first would take for the tie)
    xs = [float(np.float32(rng.uniform(-1e4, 1e4))) for _ in range(100)]
    xs += [0.0, -0.0, 2.0 ** -24, 1.5 * 2.0 ** -25, 2.0 ** -26, 6.1e-5, 2.0 ** -14, 65504.0, 65519.0, -65519.0]
    for h in (rng.randrange(0, 0x7BFF) for _ in range(100)):
        lo, hi = (float(np.uint16(v).view(np.float16)) for v in (h, h + 1))
        mid = (lo + hi) / 2
        xs += [mid, -mid, mid + (hi - lo) * 2.0 ** -30, mid - (hi - lo) * 2.0 ** -30]
    for x in xs:
        k(*[0] * 8, 0.0, 0.0, False, x, x, out, grid=1, block=1)
        c_lane = list(out.to_numpy()[11:13])
        k(np.int8(0), *[0] * 7, 0.0, 0.0, False, x, x, out, grid=1, block=1)
        assert list(out.to_numpy()[11:13]) == c_lane, f"{x!r} rounds otherwise in the C lane"


def test_scalar_refusals_through_the_c_lane(data_ptx):
    k = data_ptx.scalars
    out = oxide.DeviceArray.zeros(16, "f64")
    ok = [1, 2, 3, 4, 5, 6, 7, 8, 1.5, 2.5, True, 1.0, 1.0, out]
    names = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
    ranges = [(-(1 << 7), 1 << 7), (-(1 << 15), 1 << 15), (-(1 << 31), 1 << 31), (-(1 << 63), 1 << 63), (0, 1 << 8),
              (0, 1 << 16), (0, 1 << 32), (0, 1 << 64)]
    for i, (name, (lo, hi)) in enumerate(zip(names, ranges)):
        for v in (lo - 1, hi):
            args = list(ok)
            args[i] = v
            with pytest.raises(OverflowError, match=rf"argument {i + 1} '{name}' \({name}\) is {name}, and {v} is out of"):
                k(*args, grid=1, block=1)
        args = list(ok)
        args[i] = 2.0
        with pytest.raises(TypeError, match=rf"argument {i + 1} '{name}' \({name}\) is an integer \({name}\), got the float"):
            k(*args, grid=1, block=1)
    for bad, err in ((1e40, OverflowError), (math.inf * 0, None), (None, TypeError)):
        args = list(ok)
        args[8] = bad
        if err is None:  # NaN passes, as a NaN
            k(*args, grid=1, block=1)
            assert math.isnan(out.to_numpy()[8])
        else:
            with pytest.raises(err):
                k(*args, grid=1, block=1)
    args = list(ok)
    args[9] = [1.0]
    with pytest.raises(TypeError, match=r"argument 10 'f64' \(f64\) is a float \(f64\), got list"):
        k(*args, grid=1, block=1)
    for i, big in ((11, 7e4), (12, 1e40)):  # past f16's range; past f32's, which bf16 is rounded from
        args = list(ok)
        args[i] = big
        with pytest.raises(OverflowError):
            k(*args, grid=1, block=1)
    args = list(ok)
    args[10] = 2
    k(*args, grid=1, block=1)  # an int for a bool: the Python lane takes it as true
    assert out.to_numpy()[10] == 1.0


class Foreign:
    """A stream of another library, by the CUDA stream protocol."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_what_the_c_lane_leaves(vecadd, lanes, device):
    """Each of these launches reaches the Python lane once, and runs."""
    a, b, da, db = arrays(6)
    out = oxide.DeviceArray.zeros(N, "f32")
    s = oxide.Stream(device)
    from test_args import FakeCuda
    calls = [dict(args=(FakeCuda((N,), ptr=da.ptr), db, out), kw=dict(grid=2, block=256)),  # an interface
             dict(args=(da, db, out), kw=dict(grid=[2], block=256)),  # a list
             dict(args=(da, db, out), kw=dict(grid=2, block=256, stream=Foreign(s.handle))),
             dict(args=(da, db, out), kw=dict(grid=2, block=256, cluster=None)),
             dict(args=(da, db, out), kw=dict(grid=2, block=256, smem=np.uint32(0)))]
    for i, c in enumerate(calls):
        out.zero()
        vecadd(*c["args"], **c["kw"])
        s.synchronize()
        device.synchronize()
        assert len(lanes) == i + 1, f"call {i} did not reach the Python lane"
        np.testing.assert_array_equal(out.to_numpy(), a + b)
    s.close()
    with pytest.raises(Exception):
        vecadd(da, db, out, grid=2, block=256, stream=s)  # a closed stream: the Python lane's answer
    assert len(lanes) == len(calls) + 1


def test_c_lane_launches_on_the_frameworks_current_stream(data_ptx, device, fw):
    """inc(x) adds 1: launched twice under capture on torch's current stream (first through the
    Python lane, then through the C lane), nothing runs until the graph is replayed."""
    _, torch = fw
    k = data_ptx.inc
    x = oxide.DeviceArray.zeros(N, "f32")
    t = torch.Tensor(x.ptr, N)
    for _ in range(2):  # the second stream is first met by the C lane
        s = oxide.Stream(device, non_blocking=True)
        torch.current = s.handle
        x.zero()
        with s.capture() as cap:
            k(t, grid=2, block=256)
            k(t, grid=2, block=256)
        assert (x.to_numpy() == 0).all()
        cap.graph.launch(s)
        s.synchronize()
        np.testing.assert_array_equal(x.to_numpy(), np.full(N, 2, np.float32))
    assert torch.stream_calls == [device.index] * 4


def test_cupy_arrays_needing_stream_order_reach_the_python_lane(vecadd, lanes, fw, device):
    """A CuPy array's stream is CuPy's current one: on an explicit stream, or after a torch tensor
    chose torch's stream, the launch waits for it, which the Python lane arranges."""
    cp, torch = fw
    a, b, da, db = arrays(7)
    out = oxide.DeviceArray.zeros(N, "f32")
    xs = (cp.ndarray(da.ptr, N), cp.ndarray(db.ptr, N), torch.Tensor(out.ptr, N))
    vecadd(*xs, grid=2, block=256)  # teaches both types and f32
    vecadd(*xs, grid=2, block=256)  # CuPy first: CuPy's stream, no order to keep: the C lane
    assert len(lanes) == 1
    s = oxide.Stream(device)
    for call in (lambda: vecadd(*xs, grid=2, block=256, stream=s),
                 lambda: vecadd(torch.Tensor(da.ptr, N), xs[1], xs[2], grid=2, block=256)):
        out.zero()
        n = len(lanes)
        call()
        s.synchronize()
        device.synchronize()
        assert len(lanes) == n + 1
        np.testing.assert_array_equal(out.to_numpy(), a + b)


def test_c_lane_launches_from_several_threads(vecadd, lanes, device):
    """The rows live on each call's stack and the GIL is let go around the launch: threads
    launching at once each get their own sums."""
    import threading
    work = []
    for seed in range(4):
        a, b, da, db = arrays(10 + seed)
        work.append((a + b, da, db, oxide.DeviceArray.zeros(N, "f32"), oxide.Stream(device)))
    errors = []

    def run(want, da, db, out, s):
        try:
            for _ in range(200):
                vecadd(da, db, out, grid=2, block=256, stream=s)
            s.synchronize()
            np.testing.assert_array_equal(out.to_numpy(), want)
        except Exception as e:  # reported below, from the main thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=w) for w in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert lanes == []
