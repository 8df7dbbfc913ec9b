#!/usr/bin/env python3
"""Regenerate the code derived from lib/ops.def: the op enum in include/oxide.h and
docs/ir-reference.md. `gen_ops.py --check` exits 1 when a checked-in copy is out of date."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r'^OP\((\w+),\s*"([^"]*)",\s*"([^"]*)",\s*"([^"]*)",\s*([^,]+),\s*(\d+),\s*(\w+),\s*"((?:[^"\\]|\\.)*)"\)')


def rows():
    out = []
    for line in (ROOT / "lib/ops.def").read_text().splitlines():
        m = ROW.match(line)
        if m:
            out.append(dict(id=m[1], name=m[2], operands=m[3], result=m[4], attrs=m[5].strip(),
                            sm=int(m[6]), lower=m[7], template=m[8]))
    return out


def header_block(ops):
    lines = ["/* BEGIN GENERATED OPS */", "typedef enum oxide_op {"]
    for i, op in enumerate(ops):
        lines.append(f"    OXIDE_OP_{op['id']} = {i}, /* {op['name']} */")
    lines += [f"    OXIDE_OP_COUNT_ = {len(ops)}", "} oxide_op;", "/* END GENERATED OPS */"]
    return "\n".join(lines)


LETTERS = {"T": "T (row type)", "I": "integer T", "F": "float T", "N": "int or float T", "P": "pointer",
           "S": "shared pointer", "R": "tensor", "Y": "tile", "b": "i1", "i": "i32", "l": "i64", "x": "any", "*": "any...",
           "p": "type of operand 1", "g": "ptr", "-": "none", "?": "explicit or none"}
ATTRS = {"A_ALIGN": "align", "A_VOLATILE": "volatile", "A_SCOPE": "scope", "A_ORDER": "order",
         "A_PRED": "pred", "A_IMM": "imm", "A_VALUE": "value", "A_STR": "str", "A_ELEM": "elem",
         "A_SYM": "sym", "A_PAD": "pad", "A_PERM": "perm", "A_KIND": "kind"}


def reference(ops):
    out = ["# oxide IR reference: operations", "",
           "Generated from `lib/ops.def` by `tools/gen_ops.py`; do not edit. The text format, types",
           "and semantics are described in [ir.md](ir.md).", "",
           "| op | operands | result | attributes | min SM | lowers to |", "|---|---|---|---|---|---|"]
    for op in ops:
        operands = ", ".join(LETTERS[c] for c in op["operands"]) or "-"
        attrs = ", ".join(ATTRS[a.strip()] for a in op["attrs"].split("|") if a.strip() in ATTRS) or "-"
        how = {"L_INST": "LLVM instruction", "L_INTR": "intrinsic", "L_LIBDEV": "libdevice",
               "L_ASM": "PTX", "L_TERM": "terminator",
               "L_TILE": "tile compiler"}[op["lower"]]
        tmpl = f" `{op['template']}`" if op["template"] else ""
        sm = "sm_90a" if op["sm"] == 901 else f"sm_{op['sm']}"
        out.append(f"| `{op['name']}` | {operands} | {LETTERS[op['result']]} | {attrs} | {sm} | {how}{tmpl} |")
    return "\n".join(out) + "\n"


def main():
    ops = rows()
    header = ROOT / "include/oxide.h"
    text = header.read_text()
    new = re.sub(r"/\* BEGIN GENERATED OPS \*/.*?/\* END GENERATED OPS \*/", lambda _: header_block(ops), text,
                 flags=re.S)
    targets = {header: new, ROOT / "docs/ir-reference.md": reference(ops)}
    stale = [p for p, t in targets.items() if not p.exists() or p.read_text() != t]
    if "--check" in sys.argv:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date with lib/ops.def: run tools/gen_ops.py")
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p])
    return 0


if __name__ == "__main__":
    sys.exit(main())
