"""oxide: build GPU kernels as IR, compile them to PTX, load modules (written in Rust, C, C++ or
Python) and launch their kernels on NumPy, CuPy or PyTorch data, with arguments checked against
the module's manifest.

    import oxide, numpy as np
    mod = oxide.Module.load("vecadd.ptx")
    a = oxide.DeviceArray.from_numpy(np.ones(1024, np.float32))
    b = oxide.DeviceArray.from_numpy(np.ones(1024, np.float32))
    out = oxide.DeviceArray.empty(1024, "f32")
    mod.vecadd(a, b, out, grid=4, block=256)
    print(out.to_numpy())
"""
from __future__ import annotations

from ._ffi import ffi as _ffi, lib as _lib
from ._errors import (CodegenError, CudaError, DeviceFailedError, InvalidArgumentError, IOError_ as IOError,
                      LaunchError, ManifestError, NoDeviceError, NoDriverError, NotFoundError, OutOfMemoryError,
                      OxideError, ParseError, StateError, TypeMismatchError, UnsupportedError, VerifyError)
from ._manifest import KernelInfo, Manifest, Param
from ._args import ArgPacker
from ._runtime import (Device, DeviceArray, Event, Kernel, Module, Stream, device_count, devices,
                       driver_version, is_available, no_gpu_reason, synchronize)
from ._builder import Block, Context, Function, IRModule, Options, Type, Value
from ._interp import interpret
from ._graph import Capture, Graph, HostArray, Task
from ._tables import VERSION as __version__
from . import nvtx
from ._types import SCALARS


def version() -> str:
    """Version of the loaded liboxide, "MAJOR.MINOR.PATCH" (__version__ for a matching build)."""
    return str(_ffi.string(_lib.oxide_version()).decode())


def status_name(status: int) -> str:
    """The stable name of an oxide_status number ("OXIDE_ERROR_LAUNCH"), as OxideError.status_name gives it."""
    return str(_ffi.string(_lib.oxide_status_name(status)).decode())


__all__ = ["ArgPacker", "Block", "Capture", "CodegenError", "Context", "CudaError", "Device", "DeviceArray",
           "DeviceFailedError", "Event", "Function", "Graph", "HostArray", "IOError", "IRModule",
           "InvalidArgumentError", "Kernel", "KernelInfo", "LaunchError", "Manifest", "ManifestError", "Module",
           "NoDeviceError", "NoDriverError", "NotFoundError", "Options", "OutOfMemoryError", "OxideError", "Param",
           "ParseError", "SCALARS", "StateError", "Stream", "Task", "Type", "TypeMismatchError", "UnsupportedError",
           "Value", "VerifyError", "device_count", "devices", "driver_version", "interpret", "is_available",
           "no_gpu_reason", "nvtx", "status_name", "synchronize", "version"]
