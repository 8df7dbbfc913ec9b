"""A PTX bundle (one PTX per target, as `cargo oxide build --sm sm_80,sm_90a` writes for --module)
loaded from Python: the loader picks the text for the device (sm_90a on compute capability 9.0,
sm_80 on 8.x), here told apart by the kernel names of tests/gpu/data/contract.ptx's two copies;
the chosen kernel's values are checked against NumPy. Runs on the GPU or the fake driver."""
import pytest

import oxide


def test_bundle_loads_the_text_for_the_device(device, root):
    np = pytest.importorskip("numpy")
    ptx = (root / "tests" / "gpu" / "data" / "contract.ptx").read_text()
    sm80 = ptx.replace('"name":"contract_fill"', '"name":"fill_sm_80"')
    sm90a = (ptx.replace('"name":"contract_fill"', '"name":"fill_sm_90a"')
             .replace(".target sm_80", ".target sm_90a").replace('"target":"sm_80"', '"target":"sm_90a"'))
    bundle = (f"// oxide.ptx-bundle.v1 sm_80:{len(sm80.encode())} sm_90a:{len(sm90a.encode())}\n" + sm80 + sm90a)
    major, minor = device.compute_capability
    want = "fill_sm_90a" if (major, minor) == (9, 0) else "fill_sm_80"
    mod = oxide.Module.from_ptx(bundle, device)
    k = getattr(mod, want)
    with pytest.raises(Exception):
        getattr(mod, "fill_sm_80" if want == "fill_sm_90a" else "fill_sm_90a")
    n = 128 * 5 + 9
    out = oxide.DeviceArray.from_numpy(np.full(n, 7, np.uint32), device)
    k(out, grid=(n + 127) // 128, block=128)
    assert (out.to_numpy() == 3 * np.arange(n, dtype=np.uint32) + 1).all()
