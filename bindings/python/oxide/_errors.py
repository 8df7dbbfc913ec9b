"""Exceptions: every failed liboxide call raises an OxideError subclass carrying the C status
(its number and stable name) and the library's message (oxide_last_error)."""
from __future__ import annotations

from typing import Dict, Optional, Type

from ._ffi import ffi, lib


class OxideError(Exception):
    """A liboxide call failed. `status` is the oxide_status number, `status_name` its stable name
    (e.g. "OXIDE_ERROR_LAUNCH"), `message` the library's message."""

    status: Optional[int] = None

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        if status is not None:
            self.status = status
        self.status_name = ffi.string(lib.oxide_status_name(self.status)).decode() if self.status is not None else ""
        self.message = message
        super().__init__(f"{self.status_name}: {message}" if self.status_name else message)


class InvalidArgumentError(OxideError, ValueError):
    """NULL or out-of-range argument."""
    status = lib.OXIDE_ERROR_INVALID_ARGUMENT


class TypeMismatchError(OxideError, TypeError):
    """An operand's type does not fit the op."""
    status = lib.OXIDE_ERROR_TYPE_MISMATCH


class VerifyError(OxideError):
    """The IR breaks a verifier rule."""
    status = lib.OXIDE_ERROR_VERIFY


class ParseError(OxideError):
    """Text IR, manifest or bitcode could not be read."""
    status = lib.OXIDE_ERROR_PARSE


class UnsupportedError(OxideError):
    """Valid request the target cannot do."""
    status = lib.OXIDE_ERROR_UNSUPPORTED


class CodegenError(OxideError):
    """LLVM failed to produce PTX."""
    status = lib.OXIDE_ERROR_CODEGEN


class NotFoundError(OxideError, LookupError):
    """A named thing is absent."""
    status = lib.OXIDE_ERROR_NOT_FOUND


class OutOfMemoryError(OxideError, MemoryError):
    """Out of (device) memory."""
    status = lib.OXIDE_ERROR_OUT_OF_MEMORY


class IOError_(OxideError, OSError):
    """A file could not be read or written."""
    status = lib.OXIDE_ERROR_IO


IOError_.__name__ = IOError_.__qualname__ = "IOError"  # oxide.IOError; the trailing _ keeps the builtin here


class NoDriverError(OxideError):
    """libcuda.so.1 could not be loaded."""
    status = lib.OXIDE_ERROR_NO_DRIVER


class NoDeviceError(OxideError):
    """The driver sees no (such) GPU."""
    status = lib.OXIDE_ERROR_NO_DEVICE


class CudaError(OxideError):
    """The CUDA driver returned an error."""
    status = lib.OXIDE_ERROR_CUDA


class LaunchError(OxideError, TypeError):
    """Launch arguments do not match the kernel's manifest."""
    status = lib.OXIDE_ERROR_LAUNCH


class DeviceFailedError(OxideError):
    """A kernel faulted earlier; reset the device to go on."""
    status = lib.OXIDE_ERROR_DEVICE_FAILED


class ManifestError(OxideError):
    """PTX has no or a malformed oxide manifest."""
    status = lib.OXIDE_ERROR_MANIFEST


class StateError(OxideError):
    """Call made in the wrong state."""
    status = lib.OXIDE_ERROR_STATE


_BY_STATUS: Dict[Optional[int], Type[OxideError]] = {c.status: c for c in (InvalidArgumentError, TypeMismatchError, VerifyError, ParseError,
                                    UnsupportedError, CodegenError, NotFoundError, OutOfMemoryError, IOError_,
                                    NoDriverError, NoDeviceError, CudaError, LaunchError, DeviceFailedError,
                                    ManifestError, StateError)}


def error_for(status: int, message: Optional[str] = None) -> OxideError:
    """The exception for a failed status; message defaults to oxide_last_error()."""
    if message is None:
        message = str(ffi.string(lib.oxide_last_error()).decode("utf-8", "replace"))
    cls = _BY_STATUS.get(status)
    if cls is None:
        return OxideError(message, status)
    return cls(message)


def check(status: int) -> None:
    """Raise the matching OxideError when status is not OXIDE_OK."""
    if status:
        raise error_for(status)
