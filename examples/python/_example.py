"""What the non-tile examples share: finding the oxide package, checking a result against NumPy,
and the closing line each prints ("NAME: ok ..." or "NAME: skipped: ..."; a mismatch exits 1).
Without a GPU an example says why and exits 0."""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any, Optional

import numpy as np

try:
    import oxide  # an installed oxide: pip install ./bindings/python, or the GPU pack's wheel
except ImportError:  # the checkout's package, where its extension was built in place
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
    import oxide

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def check(name: str, got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Exit 1 with the largest error unless got matches want (NumPy's allclose)."""
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol):
        err = np.abs(g - w).max() if g.shape == w.shape else float("nan")
        raise SystemExit(f"{name}: FAILED, shape {g.shape} vs {w.shape}, max abs error {err:.4g}")


def optional(module: str) -> Optional[ModuleType]:
    """The module if it is installed (CuPy, torch), else None."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def gpu_or_skip(name: str) -> oxide.Device:
    """Device 0, or print why there is none and exit 0."""
    reason = oxide.no_gpu_reason()
    if reason is not None:
        print(f"{name}: skipped: no GPU ({reason})")
        raise SystemExit(0)
    return oxide.Device(0)
