#!/usr/bin/env python3
"""Write weak do-nothing definitions of every driver function runtime/driver.h resolves (the
hand-written ones in fake_cuda.c override them)."""
import re
import sys
from pathlib import Path

src = Path(sys.argv[1]).read_text()
block = src[src.index("#define OXIDE_CUDA_FUNCTIONS(X)"):]
block = block[: block.index("\n\n")].replace("\\\n", " ")
out = ['#include "driver.h"', ""]
# Optional symbols left out, so the runtime takes its no-such-function path.
SKIP = {"cuFuncGetParamInfo", "cuLaunchKernelEx"}
for m in re.finditer(r'X\(\w+,\s*"(\w+)",\s*\d,\s*CUresult,\s*\((.*?)\)\)', block):
    sym, params = m.group(1), m.group(2).strip()
    if sym in SKIP:
        continue
    if params == "void":
        out.append(f"__attribute__((weak)) CUresult {sym}(void) {{ return 0; }}")
        continue
    depth, cur, parts = 0, "", []
    for ch in params:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur)
    named = ", ".join(f"{p.strip()} a{i}" for i, p in enumerate(parts))
    voids = " ".join(f"(void)a{i};" for i in range(len(parts)))
    out.append(f"__attribute__((weak)) CUresult {sym}({named}) {{ {voids} return 0; }}")
Path(sys.argv[2]).write_text("\n".join(out) + "\n")
