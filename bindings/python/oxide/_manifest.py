"""The manifest a module's PTX carries: its kernels, their parameters and launch attributes."""
from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Optional, Tuple, Union

from ._errors import check
from ._ffi import ffi, lib
from ._tables import PARAM_KINDS as KINDS
from ._tables import SCALARS


def _s(p: Any) -> str:
    return str(ffi.string(p).decode()) if p != ffi.NULL else ""


class Param:
    """One kernel parameter: name, kind ("scalar", "slice", "ptr", "bytes", "tma_desc", "tensor"),
    type (the scalar type of a scalar, the element type of a slice, ptr or tensor, else None),
    mutable, size, align, rank (a tensor's, else 0)."""

    __slots__ = ("name", "kind", "type", "mutable", "size", "align", "rank")

    def __init__(self, name: str, kind: str, type: Optional[str], mutable: bool, size: int, align: int,
                 rank: int = 0) -> None:
        self.name, self.kind, self.type, self.mutable, self.size, self.align = name, kind, type, mutable, size, align
        self.rank = rank

    def describe(self) -> str:
        """The parameter's type as the manifest and error messages spell it ("slice<mut f32>")."""
        if self.kind == "scalar":
            return str(self.type)
        if self.kind in ("slice", "ptr"):
            return f"{self.kind}<{'mut ' if self.mutable else ''}{self.type}>"
        if self.kind == "bytes":
            return f"bytes<{self.size}, {self.align}>"
        if self.kind == "tensor":
            return f"tensor<{'mut ' if self.mutable else ''}{self.rank} x {self.type}>"
        return self.kind

    def __repr__(self) -> str:
        return f"Param({self.name}: {self.describe()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Param) and all(getattr(self, a) == getattr(other, a) for a in self.__slots__)


class KernelInfo:
    """A kernel as the manifest declares it. block: the block shape the compiler chose (tile
    kernels; launches default to it), or None when the launch gives it."""

    __slots__ = ("name", "entry", "params", "launch_bounds", "cluster", "dyn_smem", "block")

    def __init__(self, name: str, entry: str, params: Tuple[Param, ...], launch_bounds: Tuple[int, int],
                 cluster: Tuple[int, int, int], dyn_smem: int, block: Optional[Tuple[int, ...]] = None) -> None:
        self.name, self.entry, self.params = name, entry, params
        self.launch_bounds, self.cluster, self.dyn_smem, self.block = launch_bounds, cluster, dyn_smem, block

    def signature(self) -> str:
        """"name(a: slice<f32>, n: u64)", as the kernel is declared."""
        return f"{self.name}({', '.join(f'{p.name}: {p.describe()}' for p in self.params)})"

    def __repr__(self) -> str:
        return f"<KernelInfo {self.signature()}>"


def read_manifest(m: Any) -> Tuple[str, List[KernelInfo]]:
    """Read a C oxide_manifest into (target, [KernelInfo])."""
    kernels: List[KernelInfo] = []
    name_p, kind_p, scalar_p = ffi.new("const char **"), ffi.new("oxide_param_kind *"), ffi.new("oxide_scalar *")
    mut_p, size_p, align_p = ffi.new("int *"), ffi.new("uint32_t *"), ffi.new("uint32_t *")
    lb, cl, ds = ffi.new("uint32_t[2]"), ffi.new("uint32_t[3]"), ffi.new("uint32_t *")
    rank_p, block = ffi.new("uint32_t *"), ffi.new("uint32_t[3]")
    for k in range(lib.oxide_manifest_kernel_count(m)):
        params: List[Param] = []
        for p in range(lib.oxide_manifest_param_count(m, k)):
            check(lib.oxide_manifest_param(m, k, p, name_p, kind_p, scalar_p, mut_p, size_p, align_p))
            check(lib.oxide_manifest_param_rank(m, k, p, rank_p))
            kind = KINDS[kind_p[0]]
            typed = kind in ("scalar", "slice", "ptr", "tensor")
            params.append(Param(_s(name_p[0]), kind, SCALARS[scalar_p[0]] if typed else None, bool(mut_p[0]),
                                size_p[0], align_p[0], rank_p[0]))
        check(lib.oxide_manifest_kernel_attrs(m, k, lb, cl, ds))
        check(lib.oxide_manifest_kernel_block(m, k, block))
        kernels.append(KernelInfo(_s(lib.oxide_manifest_kernel_name(m, k)), _s(lib.oxide_manifest_kernel_entry(m, k)),
                                  tuple(params), (lb[0], lb[1]), (cl[0], cl[1], cl[2]), ds[0],
                                  tuple(block) if block[0] else None))
    return _s(lib.oxide_manifest_target(m)), kernels


class Manifest:
    """The manifest of PTX text: `Manifest.from_ptx(ptx)`; `.target`, `.kernels`, `m["name"]`."""

    def __init__(self, target: str, kernels: Iterable[KernelInfo]) -> None:
        self.target = target
        self.kernels = tuple(kernels)
        self._by_name = {k.name: k for k in self.kernels}

    @classmethod
    def from_ptx(cls, ptx: Union[str, bytes]) -> Manifest:
        """The manifest line of PTX text (ManifestError if it has none or a malformed one)."""
        data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
        out = ffi.new("oxide_manifest **")
        check(lib.oxide_manifest_parse(data, len(data), out))
        try:
            return cls(*read_manifest(out[0]))
        finally:
            lib.oxide_manifest_destroy(out[0])

    def __getitem__(self, name: str) -> KernelInfo:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no kernel {name!r} in the manifest; it has: {', '.join(self._by_name)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[KernelInfo]:
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def __repr__(self) -> str:
        return f"<Manifest target={self.target} kernels=[{', '.join(k.signature() for k in self.kernels)}]>"
