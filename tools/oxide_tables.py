"""The one reader of oxide's tables: lib/ops.def, lib/scalars.def, lib/status.def,
lib/contract.def and VERSION.
Every generator (tools/gen_*.py, run together by tools/gen.py) takes its rows from here, and
writes or checks its outputs through `emit`."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_STR = r'"((?:[^"\\]|\\.)*)"'
_OP = re.compile(r"^OP\((\w+),\s*" + r",\s*".join([_STR] * 3) + r",\s*([^,]+),\s*(\d+),\s*(\w+),\s*([123]),\s*" + _STR + r"\)")
_SCALAR = re.compile(r"^SCALAR\((\w+),\s*" + _STR + r",\s*(\d+),\s*" + _STR + r",\s*" + _STR + r"\)")
_PARAM_KIND = re.compile(r"^PARAM_KIND\((\w+),\s*" + _STR + r",\s*" + _STR + r"\)")
_STATUS = re.compile(r"^STATUS\((\w+),\s*" + _STR + r"\)")
_CONTRACT = re.compile(r"^CONTRACT\((\w+),\s*" + _STR + r"\)")


def _rows(path, macro, pattern, make):
    """The rows of one X-macro in a .def file; a row that does not parse stops the generator."""
    out = []
    for number, line in enumerate((ROOT / path).read_text().splitlines(), 1):
        if line.startswith(macro + "("):
            m = pattern.match(line)
            if not m:
                raise SystemExit(f"{path}:{number}: malformed row: {line}")
            out.append(make(m))
    return out


def ops():
    """lib/ops.def in order: dicts with id, name, operands, result, attrs, sm, lower, tier, tmpl."""
    return _rows("lib/ops.def", "OP", _OP, lambda m: dict(id=m[1], name=m[2], operands=m[3], result=m[4],
                                                    attrs=m[5].strip(), sm=int(m[6]), lower=m[7],
                                                    tier=int(m[8]), tmpl=m[9]))


def scalars():
    """lib/scalars.def's SCALAR rows in enum order: dicts with id, name, size, cxx, numpy."""
    return _rows("lib/scalars.def", "SCALAR", _SCALAR,
                 lambda m: dict(id=m[1], name=m[2], size=int(m[3]), cxx=m[4], numpy=m[5]))


def param_kinds():
    """lib/scalars.def's PARAM_KIND rows in enum order: dicts with id, name, doc."""
    return _rows("lib/scalars.def", "PARAM_KIND", _PARAM_KIND, lambda m: dict(id=m[1], name=m[2], doc=m[3]))


def statuses():
    """lib/status.def in value order: dicts with id (without OXIDE_) and doc."""
    return _rows("lib/status.def", "STATUS", _STATUS, lambda m: dict(id=m[1], doc=m[2]))


def contract_fields():
    """lib/contract.def in bit order: dicts with id (without OXIDE_CONTRACT_), doc and bit."""
    rows = _rows("lib/contract.def", "CONTRACT", _CONTRACT, lambda m: dict(id=m[1], doc=m[2]))
    for i, r in enumerate(rows):
        r["bit"] = 1 << i
    return rows


def version():
    """VERSION as (major, minor, patch)."""
    text = (ROOT / "VERSION").read_text().strip()
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text)
    if not m:
        raise SystemExit(f"VERSION: expected MAJOR.MINOR.PATCH, found {text!r}")
    return tuple(int(x) for x in m.groups())


def version_string():
    return "%d.%d.%d" % version()


def replace_between(text, begin, end, block, path):
    """text with the lines from `begin` through `end` replaced by block (which carries both)."""
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no {begin} ... {end} section")
    return pattern.sub(lambda _: block, text, count=1)


def emit(targets, check, source):
    """Write each path of targets (path -> text) that differs; with check, only report them.
    Returns the number of stale files."""
    stale = [p for p, t in targets.items() if not p.exists() or p.read_text() != t]
    for p in stale:
        if check:
            print(f"{p.relative_to(ROOT)} is out of date with {source}: run tools/gen.py")
        else:
            p.write_text(targets[p])
    return len(stale)
