#!/usr/bin/env python3
"""Regenerate everything derived from oxide's tables (lib/ops.def, lib/scalars.def,
lib/status.def, lib/contract.def, VERSION): the C header sections, docs/ir-reference.md, and the Python, C++ and
Rust views. `gen.py --check` writes nothing and exits 1 when a checked-in file is out of date."""
import sys

import gen_ops
import gen_python_ops
import gen_rust_intrinsics
import gen_rust_tile
import gen_tables
from oxide_tables import emit


def main():
    check = "--check" in sys.argv
    # one after another: gen_tables rewrites sections of include/oxide.h that gen_ops also reads
    stale = emit(gen_tables.targets(), check, gen_tables.SOURCE)
    for gen in (gen_ops, gen_python_ops, gen_rust_intrinsics, gen_rust_tile):
        stale += emit(gen.targets(), check, "lib/ops.def")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
