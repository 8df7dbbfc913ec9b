/* The launch path's fast lane: oxide.Kernel's __call__ (LaunchBase below), the whole launch of
 * one call in C for the arguments met most: oxide.DeviceArray, CuPy arrays and torch tensors
 * (exact types, contiguous, not empty, of a dtype object the parameter's Python converter has
 * accepted before), and Python ints, floats and bools for scalars. It reads the attributes the
 * Python converters read (bindings/python/oxide/_args.py), through the C API instead of the
 * interpreter, fills the oxide_arg rows on its stack and launches; liboxide checks kind, scalar
 * and element type, mutability and aliasing, as for every launch. Anything else (another type, a
 * strided or empty array, a dtype not seen yet, a scalar out of range, a tensor parameter, a CuPy
 * array that must wait for CuPy's stream, cluster= or cooperative=) answers NotImplemented before
 * anything is done, and Kernel._call, the Python lane, takes the launch with its own checks and
 * messages. cffi has no type for Python objects, so these are CPython functions (stable ABI);
 * oxide_py_fast_install makes them and sets them on the extension module.
 *
 * oxide_build.py compiles this file into the cffi extension, after its PYLAUNCH code (whose
 * PY_MAX_ARGS bounds the rows on the stack). */
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "oxide.h"

enum { FAST_BUF, FAST_SCALAR, FAST_SLOW };
typedef struct {
    oxide_kernel *k;
    size_t n;
    int fixed_block;  /* the compiler chose the block: a launch may give none */
    PyObject *device; /* the oxide.Device, and its index (an int) */
    PyObject *index;
    PyObject *streams; /* CUstream handle -> oxide_stream address, for wrapped streams */
    PyObject *resolve; /* resolve(handle) -> address, wrapping it (a miss in streams) */
    uint8_t code[PY_MAX_ARGS];
    uint32_t eid[PY_MAX_ARGS];
    PyObject *ok[PY_MAX_ARGS]; /* [CuPy dtype, torch dtype] accepted for parameter i */
} fast_spec;

/* What the fast lane recognises (set by fast_setup), and the names it reads (interned once). */
static PyObject *f_devarray, *f_stream, *f_frameworks, *f_cupy, *f_torch, *f_raise;
static PyObject *s_grid, *s_block, *s_stream, *s_smem, *s_fast, *s_call, *s_addr, *s_arg, *s_is_cuda, *s_is_contiguous,
    *s_numel, *s_dtype, *s_data_ptr, *s_size, *s_c_contig, *s_data, *s_ptr, *s_current, *s_mod, *s_name,
    *s_current_stream;

#define FAST_NO 0
#define FAST_YES 1
#define FAST_ERR (-1)

static void spec_free(PyObject *cap) {
    fast_spec *sp = (fast_spec *)PyCapsule_GetPointer(cap, "oxide.fast_spec");
    if (!sp)
        return;
    Py_XDECREF(sp->device);
    Py_XDECREF(sp->index);
    Py_XDECREF(sp->streams);
    Py_XDECREF(sp->resolve);
    for (size_t i = 0; i < sp->n; i++)
        Py_XDECREF(sp->ok[i]);
    PyMem_Free(sp);
}

/* spec(kernel address, fixed_block, device, device index, streams dict, resolve, codes, scalar
 * ids, oks): a capsule owning the fast_spec. */
static PyObject *fast_spec_new(PyObject *self, PyObject *a) {
    PyObject *kaddr, *fixed, *device, *index, *streams, *resolve, *codes, *eids, *oks;
    (void)self;
    if (!PyArg_UnpackTuple(a, "spec", 9, 9, &kaddr, &fixed, &device, &index, &streams, &resolve, &codes, &eids, &oks))
        return NULL;
    Py_ssize_t n = PyTuple_Size(codes);
    if (n < 0 || n > PY_MAX_ARGS || PyTuple_Size(eids) != n || PyTuple_Size(oks) != n || !PyDict_Check(streams)) {
        PyErr_SetString(PyExc_ValueError, "fast_spec: codes, eids and oks differ in length or pass PY_MAX_ARGS");
        return NULL;
    }
    fast_spec *sp = (fast_spec *)PyMem_Malloc(sizeof *sp);
    if (!sp)
        return PyErr_NoMemory();
    memset(sp, 0, sizeof *sp);
    sp->k = (oxide_kernel *)PyLong_AsVoidPtr(kaddr);
    sp->fixed_block = PyObject_IsTrue(fixed) == 1;
    Py_INCREF(device);
    Py_INCREF(index);
    Py_INCREF(streams);
    Py_INCREF(resolve);
    sp->device = device;
    sp->index = index;
    sp->streams = streams;
    sp->resolve = resolve;
    for (Py_ssize_t i = 0; i < n; i++) {
        sp->code[i] = (uint8_t)PyLong_AsLong(PyTuple_GetItem(codes, i));
        sp->eid[i] = (uint32_t)PyLong_AsLong(PyTuple_GetItem(eids, i));
        sp->ok[i] = PyTuple_GetItem(oks, i);
        Py_XINCREF(sp->ok[i]);
        sp->n = (size_t)i + 1;
    }
    PyObject *cap = PyErr_Occurred() ? NULL : PyCapsule_New(sp, "oxide.fast_spec", spec_free);
    if (!cap) {
        sp->n = (size_t)n;
        Py_XDECREF(sp->device);
        Py_XDECREF(sp->index);
        Py_XDECREF(sp->streams);
        Py_XDECREF(sp->resolve);
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(sp->ok[i]);
        PyMem_Free(sp);
    }
    return cap;
}

/* An unsigned from an exact int, or FAST_NO. */
static int fast_u64(PyObject *o, uint64_t *out) {
    if (!PyLong_CheckExact(o))
        return FAST_NO;
    int over = 0; /* PyLong_AsUnsignedLongLong goes through a byte array: slow for addresses */
    long long s = PyLong_AsLongLongAndOverflow(o, &over);
    if (!over && s >= 0) {
        *out = (uint64_t)s;
        return FAST_YES;
    }
    if (s == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return FAST_NO;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return FAST_NO;
    }
    *out = v;
    return FAST_YES;
}

/* grid or block: an int or a tuple of 1 to 3 ints, each 1 to 2^32-1 (else the Python lane says why). */
static int fast_dims(PyObject *o, uint32_t d[3]) {
    uint64_t v;
    d[0] = d[1] = d[2] = 1;
    if (PyLong_CheckExact(o)) {
        if (!fast_u64(o, &v) || !v || v > UINT32_MAX)
            return FAST_NO;
        d[0] = (uint32_t)v;
        return FAST_YES;
    }
    if (!PyTuple_CheckExact(o))
        return FAST_NO;
    Py_ssize_t n = PyTuple_Size(o);
    if (n < 1 || n > 3)
        return FAST_NO;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!fast_u64(PyTuple_GetItem(o, i), &v) || !v || v > UINT32_MAX)
            return FAST_NO;
        d[i] = (uint32_t)v;
    }
    return FAST_YES;
}

/* A finite double as binary16 bits, rounded once, from the double, to nearest even (as struct's
 * "e" format rounds); FAST_NO past the largest half, where the Python lane raises OverflowError.
 * The result is units * 2^ulp, ulp being its last place: 2^(e-11) for e the double's frexp
 * exponent, at least 2^-24 (the subnormals' step); the scaling is exact, the rounding explicit. */
static int fast_half(double d, uint64_t *bits) {
    int e;
    double a = fabs(d);
    frexp(a, &e);
    int ulp = e - 11 < -24 || a == 0.0 ? -24 : e - 11;
    double q = ldexp(a, -ulp), units = floor(q), rest = q - units; /* q < 2^12: rest is exact */
    if (rest > 0.5 || (rest == 0.5 && fmod(units, 2.0) != 0.0))
        units += 1.0;
    /* subnormals and the lowest binade are the units themselves; above, the exponent field
     * starts at 1 for e = -13, and a carry into 2048 units moves it up by itself */
    uint64_t h = ulp == -24 ? (uint64_t)units : ((uint64_t)(e + 13) << 10) + (uint64_t)units;
    if (h >= 0x7C00)
        return FAST_NO;
    *bits = h | (signbit(d) ? 0x8000u : 0u);
    return FAST_YES;
}

/* A Python int or float (a bool for bool) as a scalar of type eid, rounded as _types.scalar_bits
 * rounds; anything it would convert otherwise or refuse (NumPy scalars, strings, out of range,
 * non-finite values) is FAST_NO. */
static int fast_scalar(PyObject *v, uint32_t eid, uint64_t *bits) {
    if (eid == OXIDE_SCALAR_BOOL) {
        if (v != Py_True && v != Py_False)
            return FAST_NO;
        *bits = v == Py_True;
        return FAST_YES;
    }
    if (eid == OXIDE_SCALAR_F32 || eid == OXIDE_SCALAR_F64 || eid == OXIDE_SCALAR_F16 || eid == OXIDE_SCALAR_BF16) {
        if (!PyFloat_CheckExact(v) && !PyLong_CheckExact(v))
            return FAST_NO;
        double d = PyFloat_CheckExact(v) ? PyFloat_AsDouble(v) : PyLong_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return FAST_NO;
        }
        if (!isfinite(d))
            return FAST_NO;
        if (eid == OXIDE_SCALAR_F64) {
            memcpy(bits, &d, 8);
            return FAST_YES;
        }
        if (eid == OXIDE_SCALAR_F16)
            return fast_half(d, bits);
        float f = (float)d;
        if (!isfinite(f))
            return FAST_NO;
        uint32_t u;
        memcpy(&u, &f, 4);
        /* bf16: from the f32, rounded to nearest even (_types._bf16_bits; NaN never gets here) */
        *bits = eid == OXIDE_SCALAR_F32 ? u : ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF;
        return FAST_YES;
    }
    if (!PyLong_CheckExact(v))
        return FAST_NO;
    int over = 0;
    long long s = PyLong_AsLongLongAndOverflow(v, &over);
    if (s == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return FAST_NO;
    }
    if (eid == OXIDE_SCALAR_U64) /* 2^63 and up too; fast_u64 refuses negatives */
        return over > 0 || (!over && s >= 0) ? fast_u64(v, bits) : FAST_NO;
    static const struct {
        uint32_t eid;
        long long lo, hi;
    } ranges[] = {{OXIDE_SCALAR_I8, INT8_MIN, INT8_MAX},    {OXIDE_SCALAR_I16, INT16_MIN, INT16_MAX},
                  {OXIDE_SCALAR_I32, INT32_MIN, INT32_MAX}, {OXIDE_SCALAR_I64, INT64_MIN, INT64_MAX},
                  {OXIDE_SCALAR_U8, 0, UINT8_MAX},          {OXIDE_SCALAR_U16, 0, UINT16_MAX},
                  {OXIDE_SCALAR_U32, 0, UINT32_MAX}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
        if (ranges[r].eid == eid) {
            if (over || s < ranges[r].lo || s > ranges[r].hi)
                return FAST_NO;
            *bits = (uint64_t)s;
            return FAST_YES;
        }
    return FAST_NO;
}

/* Whether v.name (an attribute) or v.name() (call) is True; an exception counts as not. */
static int fast_truth(PyObject *v, PyObject *name, int call) {
    PyObject *r = call ? PyObject_CallMethodObjArgs(v, name, NULL) : PyObject_GetAttr(v, name);
    if (!r) {
        PyErr_Clear();
        return 0;
    }
    int t = r == Py_True;
    Py_DECREF(r);
    return t;
}

/* v.name() or v.name (call 0) as an unsigned, or FAST_NO. */
static int fast_u64_of(PyObject *v, PyObject *name, int call, uint64_t *out) {
    PyObject *r = call ? PyObject_CallMethodObjArgs(v, name, NULL) : PyObject_GetAttr(v, name);
    if (!r) {
        PyErr_Clear();
        return FAST_NO;
    }
    int ok = fast_u64(r, out);
    Py_DECREF(r);
    return ok;
}

/* Whether v.dtype is the dtype object the Python lane accepted for this parameter (ok[which]). */
static int fast_dtype(PyObject *v, PyObject *ok, Py_ssize_t which) {
    PyObject *dt = PyObject_GetAttr(v, s_dtype);
    if (!dt) {
        PyErr_Clear();
        return FAST_NO;
    }
    PyObject *want = ok ? PyList_GetItem(ok, which) : NULL;
    int same = want && dt == want;
    Py_DECREF(dt);
    if (!want)
        PyErr_Clear();
    return same;
}

/* A buffer argument: the row, and the framework it belongs to (NULL: a DeviceArray). */
static int fast_buffer(PyObject *v, const fast_spec *sp, size_t i, oxide_arg *a, PyObject **fw) {
    PyTypeObject *t = Py_TYPE(v);
    a->kind = OXIDE_ARG_BUFFER;
    a->type = (oxide_scalar)sp->eid[i];
    if ((PyObject *)t == f_devarray) {
        PyObject *r = PyObject_GetAttr(v, s_arg); /* (scalar, is_mutable, ptr, len), made once */
        if (!r) {
            PyErr_Clear();
            return FAST_NO;
        }
        uint64_t x[4];
        int ok = PyTuple_CheckExact(r) && PyTuple_Size(r) == 4;
        for (Py_ssize_t j = 0; ok && j < 4; j++)
            ok = fast_u64(PyTuple_GetItem(r, j), &x[j]);
        Py_DECREF(r);
        if (!ok || x[0] != sp->eid[i])
            return FAST_NO;
        a->is_mutable = (uint32_t)x[1], a->ptr = x[2], a->len = x[3];
        *fw = NULL;
        return FAST_YES;
    }
    PyObject *f = PyDict_GetItem(f_frameworks, (PyObject *)t);
    uint64_t n, ptr;
    if (f == f_torch) {
        if (!fast_truth(v, s_is_cuda, 0) || !fast_truth(v, s_is_contiguous, 1) || !fast_dtype(v, sp->ok[i], 1) ||
            !fast_u64_of(v, s_numel, 1, &n) || !n || !fast_u64_of(v, s_data_ptr, 1, &ptr))
            return FAST_NO;
    } else if (f == f_cupy) {
        if (!fast_u64_of(v, s_size, 0, &n) || !n || !fast_truth(v, s_c_contig, 0) || !fast_dtype(v, sp->ok[i], 0))
            return FAST_NO;
        PyObject *mem = PyObject_GetAttr(v, s_data);
        int ok = mem && fast_u64_of(mem, s_ptr, 0, &ptr);
        Py_XDECREF(mem);
        if (!ok) {
            PyErr_Clear();
            return FAST_NO;
        }
    } else {
        return FAST_NO; /* not seen yet, or neither framework: the Python lane */
    }
    a->is_mutable = 1, a->ptr = ptr, a->len = n;
    *fw = f;
    return FAST_YES;
}

/* The address (an int, a new reference) of the oxide_stream for the raw CUstream handle h, 0 for
 * the legacy default one; wrapped through resolve on a miss. NULL with the exception raised. */
static PyObject *fast_handle_addr(const fast_spec *sp, PyObject *h) {
    uint64_t hv;
    if (!fast_u64(h, &hv)) {
        PyErr_SetString(PyExc_TypeError, "a CUstream handle is an int >= 0");
        return NULL;
    }
    if (hv == 0 || hv == 1) /* the legacy default stream, as CUDA and the CAI spell it */
        return PyLong_FromLong(0);
    PyObject *addr = PyDict_GetItem(sp->streams, h);
    if (addr) {
        Py_INCREF(addr);
        return addr;
    }
    return PyObject_CallFunctionObjArgs(sp->resolve, h, NULL);
}

/* The framework's current stream, as the oxide_stream to launch on (NULL: the legacy default). */
static int fast_fw_stream(const fast_spec *sp, PyObject *fw, oxide_stream **out) {
    PyObject *name = PyObject_GetAttr(fw, s_name), *cached = PyObject_GetAttr(fw, s_mod), *h = NULL;
    PyObject *mod = name ? PyDict_GetItem(PyImport_GetModuleDict(), name) : NULL;
    if (mod && mod == cached) {
        PyObject *cur = PyObject_GetAttr(fw, s_current);
        h = cur ? PyObject_CallFunctionObjArgs(cur, sp->index, NULL) : NULL;
        Py_XDECREF(cur);
    } else if (name && cached) { /* first use, or the module changed: Framework.current_stream looks again */
        h = PyObject_CallMethodObjArgs(fw, s_current_stream, sp->device, NULL);
    }
    Py_XDECREF(name);
    Py_XDECREF(cached);
    if (!h)
        return FAST_ERR;
    PyObject *addr = fast_handle_addr(sp, h);
    Py_DECREF(h);
    if (!addr)
        return FAST_ERR;
    *out = (oxide_stream *)PyLong_AsVoidPtr(addr);
    Py_DECREF(addr);
    return PyErr_Occurred() ? FAST_ERR : FAST_YES;
}

/* One launch of sp's kernel: Py_None when launched, NULL with the exception raised when liboxide
 * refused it or the driver failed, NotImplemented (before anything is done) for the Python
 * lane. stream: NULL for the first framework array's current stream (else the default), or
 * the address of the oxide_stream to launch on. */
static PyObject *fast_go(const fast_spec *sp, PyObject *args, PyObject *grid_o, PyObject *block_o, PyObject *smem_o,
                         PyObject *stream) {
    PyObject *src = NULL;
    uint32_t grid[3], block[3] = {0, 0, 0};
    uint64_t smem = 0;
    if ((size_t)PyTuple_Size(args) != sp->n || !fast_dims(grid_o, grid) ||
        (block_o == Py_None ? !sp->fixed_block : !fast_dims(block_o, block)) ||
        (smem_o && (!fast_u64(smem_o, &smem) || smem > UINT32_MAX)))
        Py_RETURN_NOTIMPLEMENTED;
    oxide_arg rows[PY_MAX_ARGS];
    memset(rows, 0, sp->n * sizeof *rows);
    for (size_t i = 0; i < sp->n; i++) {
        PyObject *v = PyTuple_GetItem(args, (Py_ssize_t)i), *fw = NULL;
        if (sp->code[i] == FAST_SCALAR) {
            rows[i].kind = OXIDE_ARG_SCALAR;
            rows[i].type = (oxide_scalar)sp->eid[i];
            if (!fast_scalar(v, sp->eid[i], &rows[i].value))
                Py_RETURN_NOTIMPLEMENTED;
            continue;
        }
        if (sp->code[i] != FAST_BUF || !fast_buffer(v, sp, i, &rows[i], &fw))
            Py_RETURN_NOTIMPLEMENTED;
        /* CuPy names its current stream as its arrays' stream: a launch elsewhere waits for it,
         * which the Python lane arranges. */
        if (fw == f_cupy && (stream || (src && src != f_cupy)))
            Py_RETURN_NOTIMPLEMENTED;
        if (!src)
            src = fw;
    }
    oxide_stream *s = NULL;
    if (stream)
        s = (oxide_stream *)PyLong_AsVoidPtr(stream);
    else if (src && fast_fw_stream(sp, src, &s) != FAST_YES)
        return NULL;
    PyThreadState *ts = PyEval_SaveThread(); /* the GIL is let go while the driver queues the launch */
    oxide_status st = oxide_kernel_launch(sp->k, s, grid, block, (uint32_t)smem, rows, sp->n);
    PyEval_RestoreThread(ts);
    if (st == OXIDE_OK)
        Py_RETURN_NONE;
    PyObject *r = PyObject_CallFunction(f_raise, "i", (int)st); /* raises the status's error */
    Py_XDECREF(r);
    return NULL;
}

/* LaunchBase.__call__, which oxide.Kernel inherits: k(*args, grid=, block=, stream=, smem=)
 * through the fast lane when it can, else through Kernel._call (the Python lane), which also
 * takes cluster= and cooperative= and says what is wrong with a call. */
static PyObject *fast_call(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *grid = Py_None, *block = Py_None, *stream = Py_None, *smem = NULL, *r = NULL;
    int fast = f_frameworks != NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    while (fast && kw && PyDict_Next(kw, &pos, &key, &val)) {
        if (key == s_grid)
            grid = val;
        else if (key == s_block)
            block = val;
        else if (key == s_stream)
            stream = val;
        else if (key == s_smem)
            smem = val;
        else
            fast = 0; /* cluster=, cooperative=, a misspelling (interned keys compare by address) */
    }
    PyObject *spec = fast ? PyObject_GetAttr(self, s_fast) : NULL;
    fast_spec *sp = spec && spec != Py_None ? (fast_spec *)PyCapsule_GetPointer(spec, "oxide.fast_spec") : NULL;
    PyObject *addr = NULL;
    if (sp && stream != Py_None) {
        if ((PyObject *)Py_TYPE(stream) == f_stream)
            addr = PyObject_GetAttr(stream, s_addr);
        else if (PyLong_CheckExact(stream))
            addr = fast_handle_addr(sp, stream); /* a raw CUstream handle */
        if (!addr || !PyLong_CheckExact(addr))
            sp = NULL; /* a foreign stream object, a closed Stream, a handle that failed (said again there) */
    }
    PyErr_Clear();
    if (sp)
        r = fast_go(sp, args, grid, block, smem, addr);
    Py_XDECREF(addr);
    Py_XDECREF(spec);
    if (r != Py_NotImplemented && (r || PyErr_Occurred()))
        return r;
    Py_XDECREF(r);
    PyObject *lane = PyObject_GetAttr(self, s_call);
    if (!lane)
        return NULL;
    r = PyObject_Call(lane, args, kw);
    Py_DECREF(lane);
    return r;
}

/* setup(DeviceArray, Stream, frameworks dict, CUPY, TORCH, raise_status): what the lane
 * recognises, and the function that raises the error of a failed launch's oxide_status. */
static PyObject *fast_setup(PyObject *self, PyObject *a) {
    (void)self;
    PyObject *d, *st, *fws, *cp, *th, *rs;
    if (!PyArg_UnpackTuple(a, "setup", 6, 6, &d, &st, &fws, &cp, &th, &rs))
        return NULL;
    if (!PyDict_Check(fws)) {
        PyErr_SetString(PyExc_TypeError, "fast_setup: the frameworks are a dict");
        return NULL;
    }
    PyObject **slots[] = {&f_devarray, &f_stream, &f_frameworks, &f_cupy, &f_torch, &f_raise},
             *vals[] = {d, st, fws, cp, th, rs};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(vals[i]);
        Py_XDECREF(*slots[i]);
        *slots[i] = vals[i];
    }
    Py_RETURN_NONE;
}

static PyMethodDef fast_methods[] = {
    {"fast_spec", fast_spec_new, METH_VARARGS, "The fast lane's description of one kernel's parameters."},
    {"fast_setup", fast_setup, METH_VARARGS, "What the fast lane recognises, and how it raises a failed status."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot launch_base_slots[] = {
    {Py_tp_call, (void *)fast_call},
    {Py_tp_doc, (void *)"The base of oxide.Kernel whose __call__ is the launch path's fast lane."},
    {0, NULL}};
static PyType_Spec launch_base_spec = {"oxide._oxide_cffi.LaunchBase", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                       launch_base_slots};

int oxide_py_fast_install(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = -1;
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {{&s_grid, "grid"},
                 {&s_block, "block"},
                 {&s_stream, "stream"},
                 {&s_smem, "smem"},
                 {&s_fast, "_fast"},
                 {&s_call, "_call"},
                 {&s_addr, "_addr"},
                 {&s_arg, "_arg"},
                 {&s_is_cuda, "is_cuda"},
                 {&s_is_contiguous, "is_contiguous"},
                 {&s_numel, "numel"},
                 {&s_dtype, "dtype"},
                 {&s_data_ptr, "data_ptr"},
                 {&s_size, "size"},
                 {&s_c_contig, "_c_contiguous"},
                 {&s_data, "data"},
                 {&s_ptr, "ptr"},
                 {&s_current, "_current"},
                 {&s_mod, "_mod"},
                 {&s_name, "name"},
                 {&s_current_stream, "current_stream"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].slot && !(*names[i].slot = PyUnicode_InternFromString(names[i].text)))
            goto out;
    PyObject *m = PyImport_ImportModule("oxide._oxide_cffi");
    if (!m)
        goto out;
    PyObject *base = PyType_FromSpec(&launch_base_spec);
    rc = base ? PyObject_SetAttrString(m, "LaunchBase", base) : -1;
    Py_XDECREF(base);
    for (PyMethodDef *def = fast_methods; def->ml_name && !rc; def++) {
        PyObject *f = PyCFunction_New(def, NULL);
        rc = f ? PyObject_SetAttrString(m, def->ml_name, f) : -1;
        Py_XDECREF(f);
    }
    Py_DECREF(m);
out:
    if (rc)
        PyErr_Clear();
    PyGILState_Release(g);
    return rc;
}
