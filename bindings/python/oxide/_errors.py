"""Exceptions: every failed liboxide call raises an OxideError subclass carrying the C status
(its number and stable name) and the library's message (oxide_last_error)."""
from ._ffi import ffi, lib


class OxideError(Exception):
    """A liboxide call failed. `status` is the oxide_status number, `status_name` its stable name
    (e.g. "OXIDE_ERROR_LAUNCH"), `message` the library's message."""

    status = None

    def __init__(self, message, status=None):
        if status is not None:
            self.status = status
        self.status_name = ffi.string(lib.oxide_status_name(self.status)).decode() if self.status is not None else ""
        self.message = message
        super().__init__(f"{self.status_name}: {message}" if self.status_name else message)


def _sub(name, status, doc, *bases):
    return type(name, bases or (OxideError,), {"status": status, "__doc__": doc})


InvalidArgumentError = _sub("InvalidArgumentError", lib.OXIDE_ERROR_INVALID_ARGUMENT, "NULL or out-of-range argument.",
                            OxideError, ValueError)
TypeMismatchError = _sub("TypeMismatchError", lib.OXIDE_ERROR_TYPE_MISMATCH, "An operand's type does not fit the op.",
                         OxideError, TypeError)
VerifyError = _sub("VerifyError", lib.OXIDE_ERROR_VERIFY, "The IR breaks a verifier rule.")
ParseError = _sub("ParseError", lib.OXIDE_ERROR_PARSE, "Text IR, manifest or bitcode could not be read.")
UnsupportedError = _sub("UnsupportedError", lib.OXIDE_ERROR_UNSUPPORTED, "Valid request the target cannot do.")
CodegenError = _sub("CodegenError", lib.OXIDE_ERROR_CODEGEN, "LLVM failed to produce PTX.")
NotFoundError = _sub("NotFoundError", lib.OXIDE_ERROR_NOT_FOUND, "A named thing is absent.", OxideError, LookupError)
OutOfMemoryError = _sub("OutOfMemoryError", lib.OXIDE_ERROR_OUT_OF_MEMORY, "Out of (device) memory.",
                        OxideError, MemoryError)
IOError_ = _sub("IOError", lib.OXIDE_ERROR_IO, "A file could not be read or written.", OxideError, OSError)
NoDriverError = _sub("NoDriverError", lib.OXIDE_ERROR_NO_DRIVER, "libcuda.so.1 could not be loaded.")
NoDeviceError = _sub("NoDeviceError", lib.OXIDE_ERROR_NO_DEVICE, "The driver sees no (such) GPU.")
CudaError = _sub("CudaError", lib.OXIDE_ERROR_CUDA, "The CUDA driver returned an error.")
LaunchError = _sub("LaunchError", lib.OXIDE_ERROR_LAUNCH,
                   "Launch arguments do not match the kernel's manifest.", OxideError, TypeError)
DeviceFailedError = _sub("DeviceFailedError", lib.OXIDE_ERROR_DEVICE_FAILED,
                         "A kernel faulted earlier; reset the device to go on.")
ManifestError = _sub("ManifestError", lib.OXIDE_ERROR_MANIFEST, "PTX has no or a malformed oxide manifest.")
StateError = _sub("StateError", lib.OXIDE_ERROR_STATE, "Call made in the wrong state.")

_BY_STATUS = {c.status: c for c in (InvalidArgumentError, TypeMismatchError, VerifyError, ParseError,
                                    UnsupportedError, CodegenError, NotFoundError, OutOfMemoryError, IOError_,
                                    NoDriverError, NoDeviceError, CudaError, LaunchError, DeviceFailedError,
                                    ManifestError, StateError)}


def error_for(status, message=None):
    """The exception for a failed status; message defaults to oxide_last_error()."""
    if message is None:
        message = ffi.string(lib.oxide_last_error()).decode("utf-8", "replace")
    cls = _BY_STATUS.get(status)
    if cls is None:
        return OxideError(message, status)
    return cls(message)


def check(status):
    """Raise the matching OxideError when status is not OXIDE_OK."""
    if status:
        raise error_for(status)
