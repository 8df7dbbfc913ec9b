#!/usr/bin/env python3
"""Regenerate the code derived from lib/ops.def: the op enum in include/oxide.h and
docs/ir-reference.md. `gen_ops.py --check` exits 1 when a checked-in copy is out of date."""
import sys

from oxide_tables import ROOT, emit, ops as rows, replace_between


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
        tmpl = f" `{op['tmpl']}`" if op["tmpl"] else ""
        sm = "sm_90a" if op["sm"] == 901 else f"sm_{op['sm']}"
        out.append(f"| `{op['name']}` | {operands} | {LETTERS[op['result']]} | {attrs} | {sm} | {how}{tmpl} |")
    return "\n".join(out) + "\n"


def targets():
    ops = rows()
    header = ROOT / "include/oxide.h"
    new = replace_between(header.read_text(), "/* BEGIN GENERATED OPS */", "/* END GENERATED OPS */",
                          header_block(ops), header)
    return {header: new, ROOT / "docs/ir-reference.md": reference(ops)}


def main():
    return 1 if emit(targets(), "--check" in sys.argv, "lib/ops.def") else 0


if __name__ == "__main__":
    sys.exit(main())
