"""The base of the classes that own one liboxide handle (contexts, options, IR modules, streams,
events, device arrays, loaded modules): releasing it is written once, here."""


from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple, TypeVar

if TYPE_CHECKING:
    from ._runtime import Device

_T = TypeVar("_T", bound="Owned")


class Owned:
    """Owns the liboxide handle in `_h`. `_close()` gives it to `_release` once and forgets it, so
    a second call, or one on an object whose __init__ failed, does nothing; the garbage collector
    and `with` blocks call it. Subclasses name the public method (close, destroy, free, unload)."""

    __slots__ = ()

    def _release(self, h: Any) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        h = getattr(self, "_h", None)
        self._h = None  # type: ignore[misc]  # each subclass has _h in its __slots__
        if h is not None:
            self._release(h)

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()


class Layout:
    """What device arrays and pinned host arrays both have: the address of the first element,
    the shape, the oxide scalar type, the element and byte counts and the device. The attributes
    live in each subclass's __slots__."""

    __slots__ = ()
    ptr: int
    shape: Tuple[int, ...]
    scalar: str
    size: int
    nbytes: int
    device: Device
