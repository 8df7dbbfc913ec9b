"""Several GPUs from Python: a module on each device, a sum computed on the last device, copied to
device 0 after an event of the other device, launches refusing another device's memory, and peer
access. They skip without a GPU; with one GPU device 0 plays both parts. On the tests' fake driver
(OXIDE_CUDA_DRIVER naming tests/gpu/mock's libcuda) the test runs again as 2 and 4 fake devices,
in a subprocess with OXIDE_MOCK_DEVICES set."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oxide
import kernels

N = 3000


def test_two_devices_or_one(device):
    ndev = oxide.device_count()
    last = oxide.Device(ndev - 1)
    ptx = kernels.compiled(kernels.vecadd, device.target)
    m0, ml = oxide.Module.from_ptx(ptx, device), oxide.Module.from_ptx(ptx, last)
    rng = np.random.default_rng(7)
    a, b, c = (rng.uniform(0.5, 2.0, N).astype(np.float32) for _ in range(3))
    want = (a + b) + c
    da, db = oxide.DeviceArray.from_numpy(a, device=last), oxide.DeviceArray.from_numpy(b, device=last)
    dsum = oxide.DeviceArray.empty(N, "f32", last)
    dc, out = oxide.DeviceArray.from_numpy(c, device=device), oxide.DeviceArray.empty(N, "f32", device)
    s_last, s0 = oxide.Stream(last, non_blocking=True), oxide.Stream(device, non_blocking=True)
    grid = (N + 255) // 256
    ml.vecadd(da, db, dsum, grid=grid, block=256, stream=s_last)
    s0.wait(s_last)  # an event of the last device orders device 0's stream
    moved = dsum.to(device, stream=s0)
    assert moved.device == device
    m0.vecadd(moved, dc, out, grid=grid, block=256, stream=s0)
    s0.synchronize()
    np.testing.assert_array_equal(out.to_numpy(), want)
    back = out.to(last)
    assert back.device == last
    np.testing.assert_array_equal(back.to_numpy(), want)

    assert not device.can_access_peer(device)
    with pytest.raises(oxide.InvalidArgumentError, match="both device 0"):
        device.enable_peer_access(device)
    with pytest.raises(oxide.NoDeviceError, match=f"no device {ndev}"):
        oxide.Device(ndev)
    if ndev == 1:
        print("not run (one GPU): peer access, a launch given another device's memory")
        return
    assert not device.peer_access_enabled(last)
    with pytest.raises(oxide.LaunchError, match=f"argument 1 'a' is memory of device {ndev - 1}.*runs on device 0"):
        m0.vecadd(dsum, dc, out, grid=grid, block=256)
    if device.can_access_peer(last):
        device.enable_peer_access(last)
        assert device.peer_access_enabled(last)
        out.zero()
        m0.vecadd(dsum, dc, out, grid=grid, block=256)  # reads the last device's memory directly
        np.testing.assert_array_equal(out.to_numpy(), want)
    else:
        with pytest.raises(oxide.UnsupportedError, match=f"device 0 .* cannot access the memory of device {ndev - 1}"):
            device.enable_peer_access(last)


def _fake_driver():
    drv = os.environ.get("OXIDE_CUDA_DRIVER", "")
    return drv if drv.endswith(os.path.join("mock", "libcuda.so.1")) else None


@pytest.mark.parametrize("ndev,peer", [(2, "1"), (4, "1"), (2, "0")])
def test_on_several_fake_devices(ndev, peer):
    if not _fake_driver() or "OXIDE_MOCK_DEVICES" in os.environ:
        pytest.skip("needs the tests' fake driver (OXIDE_CUDA_DRIVER=.../tests/gpu/mock/libcuda.so.1)")
    env = dict(os.environ, OXIDE_MOCK_DEVICES=str(ndev), OXIDE_MOCK_PEER=peer)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"{__file__}::test_two_devices_or_one"], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(__file__), timeout=300)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
