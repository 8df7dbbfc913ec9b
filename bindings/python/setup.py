"""Builds the cffi extension oxide._oxide_cffi against liboxide and puts a copy of liboxide.so.0
beside it (found through $ORIGIN), so an installed package or wheel carries its own library.

OXIDE_BUNDLE=0 links against the library where it was found instead of copying it (rpath to it).
OXIDE_STRIP=0 keeps the copied library's debug symbols (default: stripped, which makes the
wheel about a third as big).

The extension uses CPython's stable ABI as of the lowest version the package supports
(oxide_build.LIMITED_API, the same as requires-python in pyproject.toml), and the wheel is tagged
to match (cp39-abi3), so one wheel installs on every CPython from that version on."""
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oxide_build import LIMITED_API, find_oxide  # noqa: E402


class BuildExtWithLib(build_ext):
    def run(self):
        super().run()
        if os.environ.get("OXIDE_BUNDLE", "1") == "0":
            return
        _, libdir = find_oxide()
        src = os.path.realpath(os.path.join(libdir, "liboxide.so.0"))
        targets = [os.path.join(self.build_lib, "oxide")]
        if self.inplace:
            targets = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "oxide")]
        for t in targets:
            os.makedirs(t, exist_ok=True)
            dst = os.path.join(t, "liboxide.so.0")
            if os.path.exists(dst):
                os.remove(dst)
            if os.environ.get("OXIDE_STRIP", "1") != "0" and shutil.which("strip"):
                subprocess.run(["strip", "--strip-unneeded", "-o", dst, src], check=True)
            else:
                shutil.copy2(src, dst)

    def get_outputs(self):
        outs = super().get_outputs()
        if os.environ.get("OXIDE_BUNDLE", "1") != "0":
            outs.append(os.path.join(self.build_lib, "oxide", "liboxide.so.0"))
        return outs


setup(
    cffi_modules=["oxide_build.py:ffibuilder"],
    cmdclass={"build_ext": BuildExtWithLib},
    options={"bdist_wheel": {"py_limited_api": "cp%d%d" % LIMITED_API}},
)
