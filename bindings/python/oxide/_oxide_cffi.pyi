# The compiled cffi extension (built by oxide_build.py from include/oxide.h). cffi makes its
# members at build time, so type checkers see them as Any; the Python wrappers around them carry
# the types.
from typing import Any

ffi: Any
lib: Any
