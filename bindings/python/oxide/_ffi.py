"""The compiled cffi extension (API mode). It links liboxide.so.0, which the package carries beside
it (or which the build linked with an rpath when built with OXIDE_BUNDLE=0)."""
try:
    from ._oxide_cffi import ffi as ffi, lib as lib  # noqa: F401
except ImportError as e:  # pragma: no cover - explains a broken install
    raise ImportError(
        "oxide's compiled extension could not be loaded (%s). Install the package with "
        "`pip install ./bindings/python` after building liboxide, or set OXIDE_LIB_DIR." % e) from e
