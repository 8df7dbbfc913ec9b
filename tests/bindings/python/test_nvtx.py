"""oxide.nvtx: ranges as context managers and decorators, their errors, and what reaches NVTX: a
child process points liboxide at the tests' fake NVTX library (tests/unit/nvtx/fake_nvtx.c, which
records each call) and, for the launch ranges, at the fake CUDA driver."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oxide

ROOT = Path(__file__).resolve().parents[3]


def _built(rel):
    """A file of the CMake build (OXIDE_LIB_DIR, as scripts/test-python sets it, else build/)."""
    for base in (os.environ.get("OXIDE_LIB_DIR"), ROOT / "build"):
        if base and (Path(base) / rel).exists():
            return Path(base) / rel
    pytest.skip(f"{rel} is not built (build the CMake tree, or set OXIDE_LIB_DIR to it)")


def test_ranges_nest_and_close():
    with oxide.nvtx.range("outer") as r:
        assert isinstance(r, oxide.nvtx.Range) and r.name == "outer"
        with oxide.nvtx.range("inner"):
            pass
    with pytest.raises(oxide.StateError, match="no range is open"):
        oxide.nvtx.pop()  # both ranges were closed


def test_a_range_closes_when_its_block_raises():
    with pytest.raises(KeyError):
        with oxide.nvtx.range("failing"):
            raise KeyError("inside")
    with pytest.raises(oxide.StateError):
        oxide.nvtx.pop()


def test_decorator_and_push_pop():
    @oxide.nvtx.range("double")
    def double(x):
        return 2 * x

    assert double(21) == 42 and double(-3) == -6
    oxide.nvtx.push("manual")
    oxide.nvtx.pop()
    with pytest.raises(oxide.StateError):
        oxide.nvtx.pop()


def test_misuse():
    with pytest.raises(TypeError, match="named by a str"):
        oxide.nvtx.range(7)
    with pytest.raises(TypeError, match="named by a str"):
        oxide.nvtx.push(None)
    assert isinstance(oxide.nvtx.available(), bool)
    before = oxide.nvtx.launch_ranges()
    try:
        assert oxide.nvtx.launch_ranges(True) is True
        assert oxide.nvtx.launch_ranges() is True
        assert oxide.nvtx.launch_ranges(False) is False
    finally:
        oxide.nvtx.launch_ranges(before)


CHILD = r"""
import ctypes, sys
import numpy as np
import oxide
sys.path.insert(0, sys.argv[2])
import kernels
log = ctypes.CDLL(sys.argv[1]).fake_nvtx_take  # the library liboxide opened: the same handle
log.restype = ctypes.c_char_p
def taken():
    return log().decode()
assert oxide.nvtx.available()
with oxide.nvtx.range("step"):
    with oxide.nvtx.range("inner"):
        pass
print("ranges", taken())
mod = oxide.Module.from_ptx(kernels.compiled(kernels.vecadd))
rng = np.random.default_rng(7)
a, b = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
da, db, out = oxide.DeviceArray.from_numpy(a), oxide.DeviceArray.from_numpy(b), oxide.DeviceArray.zeros(300)
taken()
mod.vecadd(da, db, out, grid=2, block=256)
print("off", taken())
oxide.nvtx.launch_ranges(True)
mod.vecadd(da, db, out, grid=2, block=256)
mod.vecadd.task(da, db, out, grid=2, block=256).sync()
print("on", taken())
assert np.array_equal(out.to_numpy(), a + b)
"""


def test_ranges_reach_nvtx():
    fake = _built("tests/nvtx/liboxide_test_fake_nvtx.so")
    driver = _built("tests/gpu/mock/libcuda.so.1")
    env = dict(os.environ, OXIDE_NVTX_LIBRARY=str(fake), OXIDE_CUDA_DRIVER=str(driver))
    env.pop("OXIDE_NVTX_LAUNCHES", None)
    p = subprocess.run([sys.executable, "-c", CHILD, str(fake), str(Path(__file__).parent)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = dict(line.split(" ", 1) for line in p.stdout.splitlines() if " " in line)
    assert lines["ranges"] == "push step;push inner;pop;pop;"
    assert lines["off"] == ""  # launch ranges are off unless asked for
    assert lines["on"] == "push vecadd;pop;push vecadd;pop;"


def test_launch_ranges_from_the_environment():
    fake = _built("tests/nvtx/liboxide_test_fake_nvtx.so")
    driver = _built("tests/gpu/mock/libcuda.so.1")
    code = "import oxide; print(oxide.nvtx.launch_ranges())"
    for value, want in (("1", "True"), ("0", "False"), ("", "False")):
        env = dict(os.environ, OXIDE_NVTX_LIBRARY=str(fake), OXIDE_CUDA_DRIVER=str(driver), OXIDE_NVTX_LAUNCHES=value)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == want, (value, p.stdout)
