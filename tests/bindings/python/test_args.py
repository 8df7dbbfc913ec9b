"""Launch-argument checking against the manifest, exercised without a GPU through ArgPacker (the
same converters Kernel.__call__ uses), and the runtime's answers when there is no GPU."""
import struct

import numpy as np
import pytest

import oxide
import kernels

ARG = struct.Struct("<IIIIQQQQQ")


@pytest.fixture(scope="module")
def kinds():
    return oxide.ArgPacker(oxide.Manifest.from_ptx(kernels.compiled(kernels.all_kinds))["kinds"])


@pytest.fixture(scope="module")
def vecadd():
    return oxide.ArgPacker(oxide.Manifest.from_ptx(kernels.compiled(kernels.vecadd))["vecadd"])


class FakeCuda:
    """Device memory described by __cuda_array_interface__ (as CuPy or PyTorch would)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, readonly=False, strides=None, stream=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "version": 3, "strides": strides, "stream": stream}


class FakeDLPackCPU:
    def __dlpack__(self, stream=None):
        raise AssertionError("should not be consumed")

    def __dlpack_device__(self):
        return (1, 0)


def unpack(buf, n):
    raw = buf if isinstance(buf, bytes) else bytes(oxide._ffi.buffer(buf))
    return [ARG.unpack_from(raw, i * ARG.size) for i in range(n)]


def args_for_kinds(**over):
    a = dict(n=10, s=1.5, xs=FakeCuda((10,)), ys=FakeCuda((4,), "<i4"), p=FakeCuda((2,), "<f8"),
             captures=bytes(16), desc=bytes(128))
    a.update(over)
    return [a[k] for k in ("n", "s", "xs", "ys", "p", "captures", "desc")]


def test_packs_every_kind(kinds):
    buf = kinds.pack(args_for_kinds())
    rows = unpack(buf, 7)
    assert rows[0][:2] == (oxide._lib.OXIDE_ARG_SCALAR, oxide._lib.OXIDE_SCALAR_U64) and rows[0][4] == 10
    assert rows[1][1] == oxide._lib.OXIDE_SCALAR_F32 and rows[1][4] == struct.unpack("<I", struct.pack("<f", 1.5))[0]
    kind, typ, mut, _, _, ptr, n, _, _ = rows[2]
    assert (kind, typ, mut, ptr, n) == (oxide._lib.OXIDE_ARG_BUFFER, oxide._lib.OXIDE_SCALAR_F32, 1, 0x7F0000000000, 10)
    assert rows[3][1] == oxide._lib.OXIDE_SCALAR_I32 and rows[3][6] == 4
    assert rows[5][0] == oxide._lib.OXIDE_ARG_BYTES and rows[5][8] == 16 and rows[5][7] != 0
    assert rows[6][0] == oxide._lib.OXIDE_ARG_TMA_DESC and rows[6][8] == 128


def test_wrong_count_names_the_parameters(vecadd):
    with pytest.raises(oxide.LaunchError) as ei:
        vecadd.pack([FakeCuda((4,)), FakeCuda((4,))])
    assert "takes 3 arguments (a, b, out), got 2" in str(ei.value)
    assert ei.value.status_name == "OXIDE_ERROR_LAUNCH"


def test_numpy_array_shows_the_copy_to_make(vecadd):
    x = np.ones(4, np.float32)
    with pytest.raises(oxide.LaunchError) as ei:
        vecadd.pack([FakeCuda((4,)), x, FakeCuda((4,))])
    msg = str(ei.value)
    assert "argument 2 'b'" in msg and "NumPy array" in msg
    assert "oxide.DeviceArray.from_numpy(b)" in msg


@pytest.mark.parametrize("host", [[1.0, 2.0], b"\0" * 16, FakeDLPackCPU()])
def test_other_host_memory_is_refused(vecadd, host):
    with pytest.raises(oxide.LaunchError, match="needs device memory"):
        vecadd.pack([host, FakeCuda((4,)), FakeCuda((4,))])


def test_wrong_element_type(vecadd):
    with pytest.raises(oxide.LaunchError) as ei:
        vecadd.pack([FakeCuda((4,), "<f8"), FakeCuda((4,)), FakeCuda((4,))])
    assert "takes f32 elements, got an array of f64" in str(ei.value)
    assert "astype(numpy.float32)" in str(ei.value)


def test_not_device_memory_at_all(vecadd):
    with pytest.raises(oxide.LaunchError, match="needs device memory"):
        vecadd.pack([object(), FakeCuda((4,)), FakeCuda((4,))])


def test_non_contiguous_is_refused(vecadd):
    with pytest.raises(oxide.LaunchError, match="contiguous"):
        vecadd.pack([FakeCuda((4, 4), strides=(4, 32)), FakeCuda((4,)), FakeCuda((4,))])
    # C-contiguous strides given explicitly are fine
    vecadd.pack([FakeCuda((4, 4), strides=(16, 4)), FakeCuda((4,)), FakeCuda((4,))])


def test_readonly_array_is_passed_as_read_only(vecadd):
    rows = unpack(vecadd.pack([FakeCuda((4,), readonly=True), FakeCuda((4,)), FakeCuda((4,))]), 3)
    assert rows[0][2] == 0 and rows[1][2] == 1


def test_scalar_checks(kinds):
    with pytest.raises(TypeError, match="argument 1 'n'.*integer"):
        kinds.pack(args_for_kinds(n=1.5))
    with pytest.raises(OverflowError, match="u64"):
        kinds.pack(args_for_kinds(n=-1))
    with pytest.raises(TypeError, match="argument 2 's'.*float"):
        kinds.pack(args_for_kinds(s="x"))
    kinds.pack(args_for_kinds(n=np.uint64(7), s=np.float32(2)))
    kinds.pack(args_for_kinds(s=3))  # an int where a float goes is fine


def test_bytes_checks(kinds):
    with pytest.raises(oxide.LaunchError, match="exactly 16 bytes, got 8"):
        kinds.pack(args_for_kinds(captures=bytes(8)))
    with pytest.raises(oxide.LaunchError, match="takes 16 bytes"):
        kinds.pack(args_for_kinds(captures=3))
    rec = np.zeros(1, dtype=[("f", "<f4"), ("pad", "<u4"), ("d", "<f8")])
    kinds.pack(args_for_kinds(captures=rec))
    with pytest.raises(oxide.LaunchError, match="exactly 128 bytes"):
        kinds.pack(args_for_kinds(desc=bytes(64)))


def test_half_and_bf16_bits():
    from oxide._types import scalar_bits
    assert scalar_bits("f16", 1.0, "x") == 0x3C00
    assert scalar_bits("bf16", 1.0, "x") == 0x3F80
    assert scalar_bits("i8", -1, "x") == 0xFFFFFFFFFFFFFFFF
    assert scalar_bits("f64", 1.0, "x") == 0x3FF0000000000000
    assert scalar_bits("bool", True, "x") == 1


def test_no_gpu_answers():
    if oxide.no_gpu_reason() is None:
        pytest.skip("a GPU is present")
    assert oxide.devices() == []
    assert oxide.device_count() == 0
    assert not oxide.is_available()
    with pytest.raises((oxide.NoDriverError, oxide.NoDeviceError)) as ei:
        oxide.Device(0)
    assert ei.value.status_name in ("OXIDE_ERROR_NO_DRIVER", "OXIDE_ERROR_NO_DEVICE")
    with pytest.raises((oxide.NoDriverError, oxide.NoDeviceError)):
        oxide.Module.from_ptx(kernels.compiled(kernels.vecadd))
    with pytest.raises((oxide.NoDriverError, oxide.NoDeviceError)):
        oxide.DeviceArray.from_numpy(np.ones(4, np.float32))


def test_manifest_errors():
    with pytest.raises(oxide.ManifestError):
        oxide.Manifest.from_ptx(".version 8.0\n.target sm_90a\n")
    man = oxide.Manifest.from_ptx(kernels.compiled(kernels.vecadd))
    with pytest.raises(KeyError, match="it has: vecadd"):
        man["nope"]
    assert "vecadd" in man and len(man) == 1


def test_stream_handles():
    from oxide._interop import stream_handle

    class CuPyLike:
        ptr = 1234

    class TorchLike:
        cuda_stream = 99

    class Protocol:
        def __cuda_stream__(self):
            return (0, 77)

    assert stream_handle(5) == 5
    assert stream_handle(CuPyLike()) == 1234
    assert stream_handle(TorchLike()) == 99
    assert stream_handle(Protocol()) == 77
    with pytest.raises(TypeError, match="stream="):
        stream_handle("default")


def test_rust_module_manifests(root):
    data = root / "tests" / "bindings" / "data"
    man = oxide.Manifest.from_ptx((data / "rust_vecadd.ptx").read_text())
    assert man["vecadd"].signature() == "vecadd(a: slice<f32>, b: slice<f32>, c: slice<mut f32>)"
    gen = oxide.Manifest.from_ptx((data / "rust_generics.ptx").read_text())
    k = gen["map_f32_scale"]
    assert [p.describe() for p in k.params] == ["bytes<4, 4>", "slice<f32>", "slice<mut f32>"]
    packer = oxide.ArgPacker(k)
    packer.pack([struct.pack("<f", 3.0), FakeCuda((8,)), FakeCuda((8,))])
    with pytest.raises(oxide.LaunchError, match="exactly 4 bytes"):
        packer.pack([struct.pack("<d", 3.0), FakeCuda((8,)), FakeCuda((8,))])


class FakeDLPackCUDA:
    """A DLPack producer of CUDA memory (kDLCUDA) made with cffi + PyCapsule_New, no GPU needed."""

    def __init__(self, n, code=2, bits=32, strides=None):
        import ctypes
        ffi = oxide._ffi
        self.mt = ffi.new("DLManagedTensor *")
        self.shape = ffi.new("int64_t[1]", [n])
        t = self.mt.dl_tensor
        t.data = ffi.cast("void *", 0x7F0000001000)
        t.device.device_type, t.device.device_id = 2, 0
        t.ndim = 1
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = self.shape
        self.strides = ffi.new("int64_t[1]", [strides]) if strides else ffi.NULL
        t.strides = self.strides
        t.byte_offset = 16
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._new = new
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._new(int(oxide._ffi.cast("uintptr_t", self.mt)), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)


def test_dlpack_producer_is_consumed(vecadd):
    x = FakeDLPackCUDA(6)
    rows = unpack(vecadd.pack([x, FakeCuda((4,)), FakeCuda((4,))]), 3)
    assert rows[0][5] == 0x7F0000001000 + 16 and rows[0][6] == 6 and rows[0][1] == oxide._lib.OXIDE_SCALAR_F32
    assert x.streams == [1]  # no launch stream: the legacy default stream, as the protocol spells it
    with pytest.raises(oxide.LaunchError, match="got an array of f64"):
        vecadd.pack([FakeDLPackCUDA(6, bits=64), FakeCuda((4,)), FakeCuda((4,))])
    with pytest.raises(oxide.LaunchError, match="contiguous"):
        vecadd.pack([FakeDLPackCUDA(6, strides=2), FakeCuda((4,)), FakeCuda((4,))])
