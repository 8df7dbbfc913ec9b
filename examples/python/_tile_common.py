"""What every tile example does once its kernel is defined: on a GPU it launches the kernel on
torch tensors (kernel[grid](...)) and compares with torch; without one it runs the kernel in
oxide's tile interpreter on NumPy arrays and compares with NumPy; where neither can run it says
why and exits 0. Each example's gpu_case(torch) returns the Case of its launch, which
tests/bindings/python/test_tile_gpu.py runs too (on the GPU and, on the same inputs, in the
interpreter)."""
import os
import sys

import numpy as np

try:
    import oxide  # noqa: F401  (an installed oxide: pip install ./bindings/python, or the GPU pack's wheel)
except ImportError:  # the checkout's package, where its extension was built in place
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))


def np_dtype(name):
    """NumPy's bfloat16 / float8_e4m3fn come from ml_dtypes."""
    if name in ("float32", "int32"):
        return np.dtype(name)
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))


def check(name, got, want, rtol, atol):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.abs(got - want).max()
        raise SystemExit(f"{name}: FAILED, max abs error {err:.4g} (rtol {rtol}, atol {atol})")


class Case:
    """One launch: kernel[grid](*args, **kwargs) writes out (one of args), which should match want
    (computed by torch on the same inputs) within rtol and atol."""

    def __init__(self, grid, args, kwargs, out, want, rtol, atol):
        self.grid, self.args, self.kwargs, self.out = grid, args, kwargs, out
        self.want, self.rtol, self.atol = want, rtol, atol


def run_gpu(name, kernel, case, torch):
    """Launches the case and checks its output against torch's."""
    kernel[case.grid](*case.args, **case.kwargs)
    torch.cuda.synchronize()
    check(name, case.out.float().cpu(), case.want.float().cpu(), case.rtol, case.atol)


def main(name, kernel, gpu_case, interp):
    """gpu_case(torch) makes the GPU launch (run_gpu checks it), interp(np) runs the kernel in the
    interpreter and checks it; each raises on a mismatch."""
    import oxide
    reason = oxide.no_gpu_reason()
    if reason is None:
        try:
            import torch
        except ImportError:
            reason = "torch is not installed"
        else:
            run_gpu(name, kernel, gpu_case(torch), torch)
            print(f"{name}: ok on the GPU, matches torch")
            return
    if not hasattr(oxide, "interpret"):
        print(f"{name}: skipped: no GPU ({reason}) and this oxide has no tile interpreter (oxide.interpret)")
        return
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        print(f"{name}: skipped: no GPU ({reason}), and NumPy needs ml_dtypes for bf16/fp8 arrays")
        return
    interp(np)
    print(f"{name}: ok in the interpreter, matches NumPy")
