"""The base of the classes that own one liboxide handle (contexts, options, IR modules, streams,
events, device arrays, loaded modules): releasing it is written once, here."""


class Owned:
    """Owns the liboxide handle in `_h`. `_close()` gives it to `_release` once and forgets it, so
    a second call, or one on an object whose __init__ failed, does nothing; the garbage collector
    and `with` blocks call it. Subclasses name the public method (close, destroy, free, unload)."""

    __slots__ = ()

    def _release(self, h):
        raise NotImplementedError

    def _close(self):
        h = getattr(self, "_h", None)
        self._h = None
        if h is not None:
            self._release(h)

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._close()
