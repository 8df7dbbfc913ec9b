"""cffi builder for oxide's Python extension (API mode: a compiled C extension that calls liboxide
directly, so a launch costs one C call and no libffi marshalling).

The C declarations are read from include/oxide.h itself, so the binding never drifts from the
header: comments, preprocessor lines, `OXIDE_API` and the header's `static inline` helpers are
stripped, and integer `#define`s become `#define NAME ...` (values filled in by the compiler).

Where liboxide is found (first match wins):
  OXIDE_INCLUDE_DIR / OXIDE_LIB_DIR      explicit directories (oxide.h / liboxide.so)
  OXIDE_PREFIX                           an installed prefix (PREFIX/include, PREFIX/lib)
  the checkout around this file           ../../include and ../../build*/liboxide.so (newest)
  pkg-config oxide                       an installed prefix on PKG_CONFIG_PATH
  /usr/local, /usr                       system prefixes
"""
import os
import re
import subprocess
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# The oldest CPython the package supports (requires-python in pyproject.toml): the extension is
# compiled against the stable ABI of that version (Py_LIMITED_API) and setup.py tags the wheel
# cpXY-abi3 with it, so every later CPython accepts the same wheel.
LIMITED_API = (3, 9)


def _pkg_config(var):
    try:
        out = subprocess.run(["pkg-config", f"--variable={var}", "oxide"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def find_oxide():
    """Return (include_dir, lib_dir) holding oxide.h and liboxide.so."""
    inc = os.environ.get("OXIDE_INCLUDE_DIR")
    lib = os.environ.get("OXIDE_LIB_DIR")
    prefix = os.environ.get("OXIDE_PREFIX")
    if prefix:
        inc = inc or os.path.join(prefix, "include")
        if not lib:
            for sub in ("lib", "lib64", "lib/x86_64-linux-gnu"):
                if os.path.exists(os.path.join(prefix, sub, "liboxide.so")):
                    lib = os.path.join(prefix, sub)
                    break
    if not inc and (REPO / "include" / "oxide.h").exists():
        inc = str(REPO / "include")
    if not lib:
        builds = sorted(REPO.glob("build*/liboxide.so"), key=lambda p: p.stat().st_mtime, reverse=True)
        preferred = [p for p in builds if p.parent.name == "build"]
        pick = (preferred or builds or [None])[0]
        if pick is not None:
            lib = str(pick.parent)
    if not inc or not lib:
        pinc, plib = _pkg_config("includedir"), _pkg_config("libdir")
        inc, lib = inc or pinc, lib or plib
    for prefix in ("/usr/local", "/usr"):
        if not inc and os.path.exists(f"{prefix}/include/oxide.h"):
            inc = f"{prefix}/include"
        if not lib and os.path.exists(f"{prefix}/lib/liboxide.so"):
            lib = f"{prefix}/lib"
    if not inc or not os.path.exists(os.path.join(inc, "oxide.h")):
        raise RuntimeError("oxide.h not found: set OXIDE_INCLUDE_DIR (or OXIDE_PREFIX) to the folder holding it")
    if not lib or not os.path.exists(os.path.join(lib, "liboxide.so")):
        raise RuntimeError("liboxide.so not found: build oxide (cmake -S . -B build && cmake --build build) "
                           "or set OXIDE_LIB_DIR (or OXIDE_PREFIX)")
    return inc, lib


def header_cdef(text):
    """Turn oxide.h into declarations cffi's cdef accepts."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)
    defines = []
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+(OXIDE_[A-Z0-9_]+)\s+\S+", s)
            if m and m.group(1) not in ("OXIDE_API", "OXIDE_H"):
                defines.append(f"#define {m.group(1)} ...")
            continue
        lines.append(line)
    text = "\n".join(lines)
    text = text.replace("OXIDE_API ", "")
    # Drop `static inline` helper definitions (brace-matched bodies).
    out, i = [], 0
    while True:
        j = text.find("static inline", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k = text.index("{", j)
        depth = 0
        while True:
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1
    return "\n".join(sorted(set(defines))) + "\n" + "".join(out)


# DLPack: the v0.8 ABI (the one every producer supports) for consuming __dlpack__ capsules, and
# the versioned one of DLPack 1.0 for producing them when the consumer takes it: cffi needs the
# layouts in both the declarations and the compiled source, so one text serves both.
DLPACK = """
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data; DLDevice device; int32_t ndim; DLDataType dtype;
    int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version; void *manager_ctx; void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags; DLTensor dl_tensor;
} DLManagedTensorVersioned;
"""

# Producing DLPack capsules (DeviceArray.__dlpack__): the deleters are Python functions cffi
# compiles into C entry points (they drop the exported array's reference), and the capsule's
# destructor, which must be C, calls the deleter of a capsule no consumer took. The capsule
# names are C literals because a capsule keeps the pointer to its name.
DLPACK_EXPORT_DECL = """
extern "Python" void oxide_py_dl_deleter(DLManagedTensor *);
extern "Python" void oxide_py_dlv_deleter(DLManagedTensorVersioned *);
void oxide_py_capsule_destructor(void *capsule);
const char *oxide_py_capsule_name(int versioned);
"""
DLPACK_EXPORT = """
static void oxide_py_dl_deleter(DLManagedTensor *);
static void oxide_py_dlv_deleter(DLManagedTensorVersioned *);
const char *oxide_py_capsule_name(int versioned) { return versioned ? "dltensor_versioned" : "dltensor"; }
void oxide_py_capsule_destructor(void *capsule) {
    PyObject *cap = (PyObject *)capsule;
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter)
            m->deleter(m);
    } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && m->deleter)
            m->deleter(m);
    }
}
"""


# The launch path's packing, in C: Python hands over, per argument, four integers (the oxide
# scalar, is_mutable, then the value, pointer or bytes address, then the length or byte size) in
# one list, which cffi converts in one step, instead of packing 56-byte rows in Python. kinds[i]
# is the oxide_arg_kind of parameter i, fixed per kernel. Up to PY_MAX_ARGS arguments are
# packed on the stack, more on the heap. oxide_py_fill alone gives ArgPacker.pack its rows.
PYLAUNCH_DECL = """
void oxide_py_fill(const uint32_t *kinds, const uint64_t *vals, size_t n, oxide_arg *out);
oxide_status oxide_py_launch(oxide_kernel *k, oxide_stream *s, const uint32_t *grid, const uint32_t *block,
                             uint32_t smem, const oxide_launch_config *cfg, const uint32_t *kinds,
                             const uint64_t *vals, size_t n);
"""
PYLAUNCH = """
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define PY_MAX_ARGS 32
void oxide_py_fill(const uint32_t *kinds, const uint64_t *vals, size_t n, oxide_arg *out) {
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++, vals += 4) {
        oxide_arg *a = &out[i];
        a->kind = (oxide_arg_kind)kinds[i];
        a->type = (oxide_scalar)vals[0];
        a->is_mutable = (uint32_t)vals[1];
        if (a->kind == OXIDE_ARG_SCALAR) {
            a->value = vals[2];
        } else if (a->kind == OXIDE_ARG_BUFFER) {
            a->ptr = vals[2];
            a->len = vals[3];
        } else {
            a->bytes = (const void *)(uintptr_t)vals[2];
            a->size = (size_t)vals[3];
        }
    }
}
oxide_status oxide_py_launch(oxide_kernel *k, oxide_stream *s, const uint32_t *grid, const uint32_t *block,
                             uint32_t smem, const oxide_launch_config *cfg, const uint32_t *kinds,
                             const uint64_t *vals, size_t n) {
    oxide_arg stack[PY_MAX_ARGS], *args = n <= PY_MAX_ARGS ? stack : malloc(n * sizeof *args);
    if (!args)
        return OXIDE_ERROR_OUT_OF_MEMORY;
    oxide_py_fill(kinds, vals, n, args);
    oxide_status st = cfg ? oxide_kernel_launch_ex(k, s, cfg, args, n)
                          : oxide_kernel_launch(k, s, grid, block, smem, args, n);
    if (args != stack)
        free(args);
    return st;
}
"""


# The launch path's fast lane (oxide.Kernel's __call__, the whole launch in C for the arguments
# met most): oxide_fast.c, compiled into the extension after PYLAUNCH (it uses PY_MAX_ARGS).
FAST_DECL = """
int oxide_py_fast_install(void);
"""
FAST = (HERE / "oxide_fast.c").read_text()


def make_builder():
    inc, lib = find_oxide()
    header = Path(inc, "oxide.h").read_text()
    ffibuilder = FFI()
    ffibuilder.cdef(header_cdef(header) + DLPACK + DLPACK_EXPORT_DECL + PYLAUNCH_DECL + FAST_DECL)
    rpaths = ["$ORIGIN"]
    if os.environ.get("OXIDE_BUNDLE", "1") == "0":
        rpaths.append(os.path.abspath(lib))
    ffibuilder.set_source(
        "oxide._oxide_cffi",
        '#include "oxide.h"\n' + DLPACK + DLPACK_EXPORT + PYLAUNCH + FAST,
        include_dirs=[inc],
        library_dirs=[lib],
        libraries=["oxide", "m"],  # m: the fast lane rounds f16 with frexp and ldexp
        extra_compile_args=["-O2"],
        define_macros=[("Py_LIMITED_API", "0x%02x%02x0000" % LIMITED_API)],
        py_limited_api=True,
        extra_link_args=[f"-Wl,-rpath,{r}" for r in rpaths],
    )
    return ffibuilder


ffibuilder = make_builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
