"""Tensor arguments: any object with __cuda_array_interface__ or __dlpack__ (or a torch tensor)
packed as an oxide_tensor (pointer, dtype, shape, strides in elements, writability), checked
against the manifest's element, rank and mutability; kernels whose block the compiler chose launch
with a grid only. The packing is tested on a CPU through ArgPacker; the launches (GPU, or the fake
driver of tests/gpu/mock) run tests/gpu/data/tensor_echo.ptx, whose entries store the PTX
parameters they were given."""
import random
import struct

import pytest

import oxide
from test_args import ARG, FakeCuda

TENSOR = struct.Struct("<QQQII4q4qII")


@pytest.fixture(scope="module")
def echo_ptx(root):
    return (root / "tests" / "gpu" / "data" / "tensor_echo.ptx").read_text()


@pytest.fixture(scope="module")
def manifest(echo_ptx):
    return oxide.Manifest.from_ptx(echo_ptx)


def unpack_tensor(row):
    """The oxide_tensor an oxide_arg row points at."""
    kind, elem, mut, _, _, _, _, ptr, size = row
    assert kind == oxide._lib.OXIDE_ARG_TENSOR and size == TENSOR.size
    raw = bytes(oxide._ffi.buffer(oxide._ffi.cast("char *", ptr), size))
    f = TENSOR.unpack(raw)
    return dict(struct_size=f[0], data=f[1], byte_offset=f[2], elem=f[3], rank=f[4], shape=f[5:9],
                strides=f[9:13], is_mutable=f[13], arg_elem=elem, arg_mut=mut)


def test_manifest_reports_tensors_and_block(manifest):
    k = manifest["tensor_echo"]
    t = k.params[0]
    assert (t.kind, t.type, t.rank, t.mutable) == ("tensor", "f32", 2, True)
    assert t.describe() == "tensor<mut 2 x f32>"
    assert k.block == (64, 2, 1)
    k8 = manifest["tensor_echo8"]
    assert k8.params[0].describe() == "tensor<1 x f8e4m3>" and k8.block is None
    assert k8.params[1].rank == 0


def test_packs_strided_view(manifest):
    rng = random.Random(7)
    shape = (rng.randint(2, 50), rng.randint(2, 50))
    itemsize = 4
    strides = (-itemsize * rng.randint(60, 99), itemsize * rng.randint(1, 3))  # bytes, any sign
    ptr = 0x7F0000001000 + 4 * rng.randint(1, 1000)
    packer = oxide.ArgPacker(manifest["tensor_echo"])
    keep = []
    buf = packer.pack([FakeCuda(shape, "<f4", ptr=ptr, strides=strides), FakeCuda((8,), "<u8")], keep=keep)
    rows = [ARG.unpack_from(buf, i * ARG.size) for i in range(2)]
    t = unpack_tensor(rows[0])
    assert t["struct_size"] == oxide._ffi.sizeof("oxide_tensor")
    assert (t["data"], t["byte_offset"], t["rank"]) == (ptr, 0, 2)
    assert t["elem"] == t["arg_elem"] == oxide._lib.OXIDE_SCALAR_F32
    assert t["shape"][:2] == shape and t["strides"][:2] == (strides[0] // 4, strides[1] // 4)
    assert t["shape"][2:] == (0, 0) and t["is_mutable"] == 1 == t["arg_mut"]
    # C-contiguous when the interface gives no strides
    buf = packer.pack([FakeCuda((3, 5), "<f4"), FakeCuda((8,), "<u8")])
    assert unpack_tensor(ARG.unpack_from(buf, 0))["strides"][:2] == (5, 1)


class FakeTorchFp8:
    """What oxide reads of a torch CUDA tensor (torch's fp8 dtypes have no CAI type string)."""
    __module__ = "torch"

    def __init__(self, dtype, shape, stride, ptr=0x7F0000002000, cuda=True):
        self.dtype, self.shape, self._stride, self._ptr, self.is_cuda = dtype, shape, stride, ptr, cuda

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride


def test_torch_fp8(manifest):
    packer = oxide.ArgPacker(manifest["tensor_echo8"])
    buf = packer.pack([FakeTorchFp8("torch.float8_e4m3fn", (77,), (-3,)), FakeCuda((8,), "<u8")])
    t = unpack_tensor(ARG.unpack_from(buf, 0))
    assert t["elem"] == oxide._lib.OXIDE_SCALAR_F8E4M3 and t["shape"][0] == 77 and t["strides"][0] == -3
    with pytest.raises(oxide.LaunchError, match=r"argument 1 't' \(tensor<1 x f8e4m3>\) is a tensor of f8e4m3, "
                                                r"got a tensor of f8e5m2"):
        packer.pack([FakeTorchFp8("torch.float8_e5m2", (77,), (1,)), FakeCuda((8,), "<u8")])
    with pytest.raises(oxide.LaunchError, match="host memory"):
        packer.pack([FakeTorchFp8("torch.float8_e4m3fn", (77,), (1,), cuda=False), FakeCuda((8,), "<u8")])


def test_refusals(manifest):
    packer = oxide.ArgPacker(manifest["tensor_echo"])
    out = FakeCuda((8,), "<u8")
    with pytest.raises(oxide.LaunchError, match=r"tensor_echo\(\): argument 1 't' .* is a tensor of rank 2, "
                                                r"got rank 3"):
        packer.pack([FakeCuda((2, 3, 4), "<f4"), out])
    with pytest.raises(oxide.LaunchError, match="is a tensor of f32, got a tensor of f16"):
        packer.pack([FakeCuda((2, 3), "<f2"), out])
    with pytest.raises(oxide.LaunchError, match="is a mutable tensor .* got a read-only one"):
        packer.pack([FakeCuda((2, 3), "<f4", readonly=True), out])
    with pytest.raises(oxide.LaunchError, match="not whole elements of f32"):
        packer.pack([FakeCuda((2, 3), "<f4", strides=(12, 2)), out])
    np = pytest.importorskip("numpy")
    with pytest.raises(oxide.LaunchError, match="NumPy array"):
        packer.pack([np.ones((2, 3), np.float32), out])


def test_launch_packs_exactly(device, echo_ptx):
    """The pointer, shape, strides and the compiler's block arrive in the kernel as packed."""
    np = pytest.importorskip("numpy")
    mod = oxide.Module.from_ptx(echo_ptx, device)
    k = mod.tensor_echo
    data = oxide.DeviceArray((64, 64), "f32", device)
    out = oxide.DeviceArray.zeros(8, "u64", device)
    rng = random.Random(3)
    rows, cols = rng.randint(2, 30), rng.randint(2, 30)
    view = FakeCuda((rows, cols), "<f4", ptr=data.ptr + 4 * 64 * 63, strides=(-4 * 64, 4))
    k[1](view, out)
    got = out.to_numpy()
    want = np.array([data.ptr + 4 * 64 * 63, rows, cols, (-64) & (2**64 - 1), 1, 64, 2, 1], np.uint64)
    assert (got == want).all(), got
    with pytest.raises(oxide.LaunchError, match="compiler chose block 64x2x1"):
        k(view, out, grid=1, block=32)
    with pytest.raises(oxide.LaunchError, match="is a tensor of rank 2, got rank 1"):
        k[1](FakeCuda((5,), "<f4", ptr=data.ptr), out)
    k8 = mod.tensor_echo8
    with pytest.raises(TypeError, match="grid=... and block="):
        k8(FakeCuda((5,), "|u1", ptr=data.ptr), out, grid=1)
