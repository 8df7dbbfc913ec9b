"""Every examples/python/tile_*.py kernel on the GPU: its launch (the example's gpu_case: torch
CUDA tensors, kernel[grid](...)) checked against torch on the same inputs, then the same
specialisation run in the tile interpreter on host copies of those inputs and checked against
the GPU's result; one launch on CuPy arrays; and the front end's on-disk cache, where a second
process finds the PTX the first compiled. Skips, saying why, without a GPU or without torch."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import oxide
import oxide.tile as ot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"
NAMES = sorted(p.stem for p in EXAMPLES.glob("tile_*.py"))


@pytest.fixture(scope="module")
def torch(device):
    torch = pytest.importorskip("torch", reason="torch is not importable, and the tile GPU tests compare with torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def example(name):
    """The example's module and its kernel (the one ot.Kernel it defines)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    mod = importlib.import_module(name)
    kernels = [v for v in vars(mod).values() if isinstance(v, ot.Kernel)]
    assert len(kernels) == 1, f"{name} defines {len(kernels)} tile kernels; the test expects one"
    return mod, kernels[0]


def host(torch, t):
    """A NumPy copy of a torch tensor, strides kept: bf16 and fp8 as ml_dtypes arrays where
    ml_dtypes is installed, else as their bit patterns (uint16, uint8), as oxide.interpret takes."""
    if not isinstance(t, torch.Tensor):
        return t
    bits = {torch.bfloat16: (torch.int16, np.uint16, "bfloat16"),
            torch.float8_e4m3fn: (torch.uint8, np.uint8, "float8_e4m3fn")}.get(t.dtype)
    if bits is None:
        return t.cpu().numpy()
    a = t.view(bits[0]).cpu().numpy().view(bits[1])
    try:
        import ml_dtypes
    except ImportError:
        return a
    return a.view(getattr(ml_dtypes, bits[2]))


def as_float(a):
    """float32 values of a host array (bf16 bits widened)."""
    if a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    return np.asarray(a, np.float32)


def interpret(kernel, case, args):
    """The specialisation the launch used, run in the interpreter on host arrays."""
    if all(not isinstance(a, np.ndarray) or a.dtype not in (np.uint16, np.uint8) for a in args):
        kernel.interpret(case.grid, *args, **case.kwargs)
        return
    # no ml_dtypes: the launch's own specialisation, given bit patterns
    spec = kernel.specialize(*case.args, **case.kwargs)
    bound = kernel._bind(args, case.kwargs)
    oxide.interpret(spec.module, kernel.name, case.grid, *[bound[n] for n in spec.runtime])


@pytest.mark.parametrize("name", NAMES)
def test_example_on_gpu_matches_torch_and_interpreter(name, torch, device):
    mod, kernel = example(name)
    torch.manual_seed(sum(map(ord, name)))
    case = mod.gpu_case(torch)
    inputs = [host(torch, a) for a in case.args]  # before the launch writes the output
    try:
        kernel[case.grid](*case.args, **case.kwargs)
    except ot.CompileError as e:
        if "not lowered" in str(e):
            pytest.skip(f"{name}: the lowering refuses it: {e}")
        raise
    torch.cuda.synchronize()
    got = case.out.float().cpu().numpy()
    want = case.want.float().cpu().numpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=f"{name}: GPU vs torch")
    out = next(i for i, a in enumerate(case.args) if a is case.out)
    interpret(kernel, case, inputs)
    np.testing.assert_allclose(as_float(inputs[out]), got, rtol=case.rtol, atol=case.atol,
                               err_msg=f"{name}: interpreter vs GPU")


def test_cupy_launch(device):
    cupy = pytest.importorskip("cupy", reason="cupy is not importable (the CuPy launch)")
    _, kernel = example("tile_column_sum")
    x = np.random.default_rng(11).standard_normal((333, 150)).astype(np.float32)
    dx, dout = cupy.asarray(x), cupy.full(150, 7.0, dtype=cupy.float32)
    kernel[ot.cdiv(150, 64)](dx, dout, BM=32, BN=64)
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_allclose(cupy.asnumpy(dout), x.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-3)


CACHE_RUN = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import tile_softmax as m
case = m.gpu_case(torch)
t0 = time.perf_counter()
m.softmax[case.grid](*case.args, **case.kwargs)
torch.cuda.synchronize()
s = time.perf_counter() - t0
ok = bool(torch.allclose(case.out, case.want, rtol=case.rtol, atol=case.atol))
print(json.dumps(dict(m.softmax.stats, seconds=s, ok=ok)))
"""


def test_cache_second_process_hits(torch, tmp_path):
    env = dict(os.environ, OXIDE_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", CACHE_RUN, str(EXAMPLES)], env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["ok"] and second["ok"]
    assert (first["compiled"], first["cache_hits"]) == (1, 0), first
    assert (second["compiled"], second["cache_hits"]) == (0, 1), second
    print(f"\ntile cache: first launch {first['seconds'] * 1e3:.1f} ms (compiled), "
          f"second process {second['seconds'] * 1e3:.1f} ms (cache hit)")
