"""NVTX ranges: named spans of host time that Nsight Systems shows on its timeline (and projects
onto the GPU work launched inside them). liboxide opens the NVTX library at the first call
(OXIDE_NVTX_LIBRARY, else CUDA's libnvtx3interop.so.1 or libnvToolsExt.so.1); without one, ranges
do nothing and cost next to nothing, so code can leave them in (docs/runtime.md, "NVTX ranges").

    with oxide.nvtx.range("step"):
        mod.vecadd(a, b, out, grid=4, block=256)

    @oxide.nvtx.range("solve")          # also a decorator
    def solve(): ...

    oxide.nvtx.launch_ranges(True)      # every launch in a range named after its kernel
"""
from __future__ import annotations

import contextlib
from typing import Optional

from ._errors import check
from ._ffi import lib

__all__ = ["Range", "available", "launch_ranges", "pop", "push", "range"]


def push(name: str) -> None:
    """Open a range named name on this thread (close it with pop(); `with range(name):` does both)."""
    if not isinstance(name, str):
        raise TypeError(f"an NVTX range is named by a str, got {type(name).__name__}")
    check(lib.oxide_nvtx_push(name.encode()))


def pop() -> None:
    """Close the innermost range this thread opened (StateError when none is open)."""
    check(lib.oxide_nvtx_pop())


class Range(contextlib.ContextDecorator):
    """A range around a `with` block, or around every call of a function it decorates. The range
    is closed when the block ends, exception or not."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"an NVTX range is named by a str, got {type(name).__name__}")
        self.name = name

    def __enter__(self) -> Range:
        push(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        pop()

    def __repr__(self) -> str:
        return f"<oxide.nvtx.Range {self.name!r}>"


def range(name: str) -> Range:  # noqa: A001 -- oxide.nvtx.range, as NVTX and torch.cuda.nvtx spell it
    """A Range named name: `with oxide.nvtx.range("step"): ...` or `@oxide.nvtx.range("step")`."""
    return Range(name)


def available() -> bool:
    """True when an NVTX library was found (ranges then reach a profiler that injects itself)."""
    return bool(lib.oxide_nvtx_available())


def launch_ranges(on: Optional[bool] = None) -> bool:
    """Whether every launch runs inside a range named after its kernel; with on, set it first.
    The default comes from the environment variable OXIDE_NVTX_LAUNCHES (set and not "0": on)."""
    if on is not None:
        lib.oxide_nvtx_set_launch_ranges(1 if on else 0)
    return bool(lib.oxide_nvtx_launch_ranges())
