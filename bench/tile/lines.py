"""The `tile_lines_matmul rust_lines python_lines` row (CPU): lines in the tile matmul kernel
bodies, blank lines, comment-only lines and docstrings not counted.

Python: the @ot.kernel functions of examples/python/tile_matmul*.py, found through their AST;
the row's figure is the plain bf16 matmul (tile_matmul.py), the others go to a comment line.
Rust: the #[tile_kernel] of examples/rust/tile_matmul (the plain bf16 matmul, as for Python; the
row says n/a where there is none)."""
import ast
import glob
import io
import os
import tokenize

from oxide_kernels import ROOT


def _is_tile_kernel(fdef):
    for d in fdef.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if (isinstance(f, ast.Attribute) and f.attr == "kernel") or (isinstance(f, ast.Name) and f.id == "kernel"):
            return True
    return False


def _code_lines(source):
    """Line numbers holding a token other than a comment, a string statement or layout."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENDMARKER):
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def python_kernels(path):
    """[(kernel name, body lines)] for the tile kernels in one file."""
    with open(path) as f:
        source = f.read()
    code = _code_lines(source)
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and _is_tile_kernel(node):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body = body[1:]  # the docstring
            n = len({ln for s in body for ln in range(s.lineno, s.end_lineno + 1)} & code)
            out.append((node.name, n))
    return out


def rust_lines():
    """Lines of the Rust bf16 tile matmul kernel, or None while there is none."""
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "rust", "tile_matmul", "src", "*.rs")))
    return _rust_kernel_lines(files) if files else None


def _rust_kernel_lines(files):
    """Body lines of the functions under an attribute naming `tile`, by brace matching."""
    total = 0
    for path in files:
        with open(path) as f:
            lines = f.read().splitlines()
        i, pending = 0, False
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith("#[") and "tile" in s:
                pending = True
            elif pending and ("fn " in s):
                depth, j = 0, i
                while j < len(lines):
                    depth += lines[j].count("{") - lines[j].count("}")
                    if j > i and lines[j].strip() and not lines[j].strip().startswith("//") and depth > 0:
                        total += 1
                    if depth == 0 and "{" in "".join(lines[i:j + 1]):
                        break
                    j += 1
                i, pending = j, False
            i += 1
    return total


def row():
    """(row text, comment text)."""
    per_file = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "python", "tile_matmul*.py"))):
        per_file[os.path.basename(path)] = python_kernels(path)
    main = dict(per_file.get("tile_matmul.py", [])).get("matmul")
    rust = rust_lines()
    text = "tile_lines_matmul %s %s" % ("n/a" if rust is None else rust, "n/a" if main is None else main)
    detail = "; ".join(f"{f}:{k}={n}" for f, ks in per_file.items() for k, n in ks)
    return text, "tile_lines_matmul: python kernel bodies " + (detail or "none found") + \
        ("; no Rust tile matmul yet" if rust is None else "")
