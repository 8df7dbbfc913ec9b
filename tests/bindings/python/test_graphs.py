"""Graphs (stream capture and tasks), lazy tasks and pinned host arrays, on a GPU or the fake
driver: each replay does the captured work again, checked against NumPy."""
import numpy as np
import pytest

import kernels
import oxide

N = 500


@pytest.fixture(scope="module")
def mods(device):
    return (oxide.Module.from_ptx(kernels.compiled(kernels.vecadd, device.target), device),
            oxide.Module.from_ptx(kernels.compiled(kernels.saxpy, device.target), device))


def data(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def test_capture_and_replay(mods, device):
    vecadd, saxpy = mods[0].vecadd, mods[1].saxpy
    a, b = data(1)
    da, db, out = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b), oxide.DeviceArray.zeros(N)
    s = oxide.Stream(device, non_blocking=True)
    with s.capture() as cap:
        vecadd(da, db, out, grid=2, block=256, stream=s)  # out = a + b
        saxpy(2.0, da, out, N, grid=2, block=256, stream=s)  # out += 2 a
    assert (out.to_numpy() == 0).all()  # captured, not run
    want = a + b + np.float32(2) * a
    for _ in range(3):  # each replay recomputes out from a and b
        cap.graph.launch(s)
        s.synchronize()
        np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6)
    with pytest.raises(oxide.StateError):
        s.end_capture()  # not capturing
    with pytest.raises(oxide.StateError):
        device.default_stream.begin_capture()  # the default stream cannot be captured


def test_failed_block_ends_the_capture(mods, device):
    s = oxide.Stream(device, non_blocking=True)
    with pytest.raises(oxide.LaunchError, match="takes 3 arguments"):
        with s.capture() as cap:
            mods[0].vecadd(grid=1, block=1, stream=s)
    assert cap.graph is None
    with s.capture() as cap2:  # the stream can capture again
        pass
    cap2.graph.launch(s)


def test_tasks_pinned_copies_and_task_graphs(mods, device):
    vecadd = mods[0].vecadd
    a, b = data(2)
    ha, hb, hout = oxide.HostArray.from_numpy(a), oxide.HostArray.from_numpy(b), oxide.HostArray(N, "f32")
    assert hout.numpy().shape == (N,) and hout.dtype == np.float32 and hout.nbytes == 4 * N
    da, db, dout = oxide.DeviceArray.empty(N), oxide.DeviceArray.empty(N), oxide.DeviceArray.empty(N)
    work = oxide.Task.sequence(
        oxide.Task.join(oxide.Task.copy(da, ha), oxide.Task.copy(db, hb)),
        oxide.Task.memset(dout, 0),
        vecadd.task(da, db, dout, grid=2, block=256),
        oxide.Task.copy(hout, dout))
    work.sync()
    np.testing.assert_array_equal(hout.numpy(), a + b)
    g = work.graph()
    a2, b2 = data(3)
    ha.numpy()[:] = a2  # the graph reads the pinned arrays each time it runs
    hb.numpy()[:] = b2
    s = oxide.Stream(device)
    g.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(hout.numpy(), a2 + b2)


def test_async_pinned_copies(device):
    x = np.random.default_rng(5).standard_normal((7, 9)).astype(np.float64)
    h = oxide.HostArray.from_numpy(x)
    d = oxide.DeviceArray.empty((7, 9), "f64")
    back = oxide.HostArray((7, 9), "f64")
    s = oxide.Stream(device, non_blocking=True)
    d.copy_from_host(h, stream=s)
    d.copy_to_host(back, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back.numpy(), x)
    np.testing.assert_array_equal(d.copy_to_host(oxide.HostArray((7, 9), "f64")).numpy(), x)  # synchronous
    with pytest.raises(TypeError, match="takes an oxide.HostArray"):
        d.copy_from_host(x, stream=s)
    with pytest.raises(ValueError, match="size mismatch"):
        d.copy_to_host(oxide.HostArray(3, "f64"))


def test_task_refusals(mods, device):
    d = oxide.DeviceArray.empty(N)
    with pytest.raises(TypeError, match="copy a NumPy array into an oxide.HostArray first"):
        oxide.Task.copy(d, np.zeros(N, np.float32))
    with pytest.raises(ValueError, match="size mismatch"):
        oxide.Task.copy(d, oxide.HostArray(N + 1))
    with pytest.raises(ValueError, match="0..255"):
        oxide.Task.memset(d, 256)
    with pytest.raises(ValueError, match="at least one task"):
        oxide.Task.sequence()
    with pytest.raises(TypeError, match="takes Tasks, got int"):
        oxide.Task.join(3)
    with pytest.raises(oxide.LaunchError, match="f32 elements, got a DeviceArray of f64"):
        mods[0].vecadd.task(d, d, oxide.DeviceArray.empty(N, "f64"), grid=1, block=1)
    with pytest.raises(oxide.LaunchError):  # the C check: a read-only array for the mutable 'out'
        mods[0].vecadd.task(d, d, oxide.DeviceArray(N, readonly=True), grid=1, block=1)
    with pytest.raises(TypeError, match="grid="):
        mods[0].vecadd.task(d, d, d)
