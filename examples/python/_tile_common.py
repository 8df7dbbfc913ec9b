"""What every tile example does once its kernel is defined: on a GPU it runs the kernel on torch
tensors and compares with torch; without one it runs the kernel in oxide's tile interpreter on
NumPy arrays and compares with NumPy; where neither can run it says why and exits 0."""
import os
import sys

import numpy as np

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


def main(name, gpu, interp):
    """gpu(torch) and interp(np) run the kernel and check it; each raises on a mismatch."""
    import oxide
    reason = oxide.no_gpu_reason()
    if reason is None:
        try:
            import torch
        except ImportError:
            reason = "torch is not installed"
        else:
            gpu(torch)
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
