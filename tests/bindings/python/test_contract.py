"""Launch contracts from Python: a kernel whose manifest declares one (tests/gpu/data/contract.ptx:
out[i] = 3 i + 1, domain 1, exactly 128 threads a block, 256 bytes of dynamic shared memory)
launches when the shape keeps it and is refused by the runtime, naming the kernel, the contract
field and the value given, when it breaks it. Runs on the GPU, or on the fake driver of
tests/gpu/mock (scripts/test-python)."""
import pytest

import oxide


@pytest.fixture(scope="module")
def fill(device, root):
    ptx = (root / "tests" / "gpu" / "data" / "contract.ptx").read_text()
    return oxide.Module.from_ptx(ptx, device).contract_fill


def test_kept_contract_launches(device, fill):
    np = pytest.importorskip("numpy")
    n = 128 * 11 + 3
    out = oxide.DeviceArray.from_numpy(np.random.default_rng(5).integers(1, 2**31, n, dtype=np.uint32), device)
    fill(out, grid=(n + 127) // 128, block=128)
    assert (out.to_numpy() == 3 * np.arange(n, dtype=np.uint32) + 1).all()


@pytest.mark.parametrize("grid, block, smem, message", [
    (4, 64, 0, r"launch contract_fill: block 64x1x1 breaks the launch contract's block = \(128, 1, 1\)"),
    ((4, 2), 128, 0, r"grid 4x2x1 breaks the launch contract's domain = 1"),
    (4, 128, 512, r"512 bytes of dynamic shared memory break the launch contract's dynamic_shared = 256"),
])
def test_broken_contract_is_refused(device, fill, grid, block, smem, message):
    out = oxide.DeviceArray.zeros(512, "u32", device)
    with pytest.raises(oxide.LaunchError, match=message):
        fill(out, grid=grid, block=block, smem=smem)
