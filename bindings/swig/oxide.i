/* oxide.i -- SWIG interface to liboxide for further languages (Java first).
 *
 * The raw C functions take out-parameters and return statuses, which map poorly onto most target
 * languages, so this interface exposes the header's enums and structs as they are and, instead of
 * the C functions, a small set of `oxj_*` wrappers that return their result and raise the target
 * language's exception (Java: oxide.OxideException, carrying the status name and liboxide's
 * message) when a call fails. They cover the builder, compile to PTX, and manifest reading.
 * Handles are opaque pointers; destroy contexts with oxj_context_destroy. */
%module oxide

%include "enums.swg"   /* C enums as Java enums */
%include "stdint.i"
%ignore oxide_attr;
%ignore oxide_arg;
%ignore oxide_launch_config;

%{
#include <stdio.h>
#include <string.h>
#include "oxide.h"

/* The last failure on this thread; %exception below turns it into an exception. */
static __thread int oxj_failed;
static __thread char oxj_message[2048];
static __thread int oxj_status;

static int oxj_check(oxide_status st) {
    if (st != OXIDE_OK) {
        oxj_failed = 1;
        oxj_status = (int)st;
        snprintf(oxj_message, sizeof oxj_message, "%s: %s", oxide_status_name(st), oxide_last_error());
    }
    return st == OXIDE_OK;
}
%}

#if defined(SWIGJAVA)
%exception {
    oxj_failed = 0;
    $action
    if (oxj_failed) {
        jclass cls = (*jenv)->FindClass(jenv, "oxide/OxideException");
        if (cls)
            (*jenv)->ThrowNew(jenv, cls, oxj_message);
        return $null;
    }
}
%typemap(javaimports) SWIGTYPE "import oxide.OxideException;"
#endif

/* Enums and structs from the header; its functions are replaced by the oxj_ wrappers. */
%rename("$ignore", %$isfunction, regextarget=1) "^oxide_";
#define __attribute__(x)
%include "oxide.h"

%inline %{
typedef struct oxj_slice {
    oxide_value *ptr; /* ptr.global to the first element */
    oxide_value *len; /* i64 element count */
} oxj_slice;

const char *oxj_version(void) { return oxide_version(); }
const char *oxj_status_name(int status) { return oxide_status_name((oxide_status)status); }
/* Status of the last failure on this thread (0 if none). */
int oxj_last_status(void) { return oxj_status; }

oxide_context *oxj_context_create(void) {
    oxide_context *c = NULL;
    oxj_check(oxide_context_create(&c));
    return c;
}
void oxj_context_destroy(oxide_context *c) { oxide_context_destroy(c); }

oxide_type *oxj_type_scalar(oxide_context *c, oxide_type_kind k) {
    oxide_type *t = NULL;
    oxj_check(oxide_type_scalar(c, k, &t));
    return t;
}
oxide_type *oxj_type_pointer(oxide_context *c, oxide_addrspace as) {
    oxide_type *t = NULL;
    oxj_check(oxide_type_pointer(c, as, &t));
    return t;
}
const char *oxj_type_name(oxide_type *t) { return oxide_type_get_name(t); }

oxide_module *oxj_module_create(oxide_context *c, const char *name) {
    oxide_module *m = NULL;
    oxj_check(oxide_module_create(c, name, &m));
    return m;
}
oxide_module *oxj_module_parse(oxide_context *c, const char *text) {
    oxide_module *m = NULL;
    oxj_check(oxide_module_parse(c, text, strlen(text), &m));
    return m;
}
oxide_function *oxj_add_kernel(oxide_module *m, const char *name) {
    oxide_function *f = NULL;
    oxj_check(oxide_module_add_kernel(m, name, &f));
    return f;
}
oxj_slice oxj_slice_param(oxide_function *k, const char *name, oxide_scalar elem, int is_mutable) {
    oxj_slice s = {NULL, NULL};
    oxj_check(oxide_kernel_add_slice_param(k, name, elem, is_mutable, &s.ptr, &s.len));
    return s;
}
oxide_value *oxj_scalar_param(oxide_function *k, const char *name, oxide_scalar type) {
    oxide_value *v = NULL;
    oxj_check(oxide_kernel_add_scalar_param(k, name, type, &v));
    return v;
}
oxide_value *oxj_ptr_param(oxide_function *k, const char *name, oxide_scalar elem, int is_mutable) {
    oxide_value *v = NULL;
    oxj_check(oxide_kernel_add_ptr_param(k, name, elem, is_mutable, &v));
    return v;
}
oxide_block *oxj_add_block(oxide_function *f) {
    oxide_block *b = NULL;
    oxj_check(oxide_function_add_block(f, NULL, 0, &b, NULL));
    return b;
}
/* An op with up to three operands (NULL for fewer), an explicit result type (NULL if the op has
 * none) and at most one integer attribute (attr_key < 0: none). */
oxide_value *oxj_op(oxide_block *b, oxide_op op, oxide_value *x, oxide_value *y, oxide_value *z,
                    oxide_type *result, int attr_key, long long attr_value) {
    oxide_value *ops[3] = {x, y, z};
    size_t n = z ? 3 : y ? 2 : x ? 1 : 0;
    oxide_attr a;
    memset(&a, 0, sizeof a);
    a.key = (oxide_attr_key)(attr_key < 0 ? 0 : attr_key);
    a.i = attr_value;
    oxide_value *out = NULL;
    oxj_check(oxide_build_op(b, op, ops, n, result, attr_key < 0 ? NULL : &a, attr_key < 0 ? 0 : 1, &out));
    return out;
}
oxide_value *oxj_offset(oxide_block *b, oxide_value *ptr, oxide_value *index, oxide_type *elem) {
    oxide_value *ops[2] = {ptr, index};
    oxide_attr a;
    memset(&a, 0, sizeof a);
    a.key = OXIDE_ATTR_ELEM;
    a.t = elem;
    oxide_value *out = NULL;
    oxj_check(oxide_build_op(b, OXIDE_OP_OFFSET, ops, 2, NULL, &a, 1, &out));
    return out;
}
oxide_value *oxj_const_int(oxide_block *b, oxide_type *t, long long v) {
    oxide_value *out = NULL;
    oxj_check(oxide_build_const_int(b, t, v, &out));
    return out;
}
oxide_value *oxj_const_float(oxide_block *b, oxide_type *t, double v) {
    oxide_value *out = NULL;
    oxj_check(oxide_build_const_float(b, t, v, &out));
    return out;
}
void oxj_br(oxide_block *b, oxide_block *dest) { oxj_check(oxide_build_br(b, dest, NULL, 0)); }
void oxj_cond_br(oxide_block *b, oxide_value *cond, oxide_block *t, oxide_block *f) {
    oxj_check(oxide_build_cond_br(b, cond, t, NULL, 0, f, NULL, 0));
}
void oxj_ret(oxide_block *b) { oxj_check(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL)); }

void oxj_verify(oxide_module *m) { oxj_check(oxide_module_verify(m, NULL)); }
const char *oxj_print(oxide_module *m) {
    const char *s = NULL;
    return oxj_check(oxide_module_print(m, &s)) ? s : NULL;
}
/* PTX (with its manifest) for target ("sm_90a", ...). */
const char *oxj_compile(oxide_module *m, const char *target) {
    oxide_options *o = NULL;
    const char *ptx = NULL;
    if (!oxj_check(oxide_options_create(&o)))
        return NULL;
    if (oxj_check(oxide_options_set_target(o, target)))
        oxj_check(oxide_module_compile(m, o, &ptx, NULL));
    oxide_options_destroy(o);
    return ptx;
}

oxide_manifest *oxj_manifest_parse(const char *ptx) {
    oxide_manifest *m = NULL;
    oxj_check(oxide_manifest_parse(ptx, strlen(ptx), &m));
    return m;
}
void oxj_manifest_destroy(oxide_manifest *m) { oxide_manifest_destroy(m); }
const char *oxj_manifest_target(oxide_manifest *m) { return oxide_manifest_target(m); }
long long oxj_manifest_kernel_count(oxide_manifest *m) { return (long long)oxide_manifest_kernel_count(m); }
const char *oxj_manifest_kernel_name(oxide_manifest *m, long long k) { return oxide_manifest_kernel_name(m, (size_t)k); }
long long oxj_manifest_param_count(oxide_manifest *m, long long k) {
    return (long long)oxide_manifest_param_count(m, (size_t)k);
}
/* "name: kind<...>" for parameter p of kernel k, e.g. "out: slice<mut f32>". */
const char *oxj_manifest_param(oxide_manifest *m, long long k, long long p) {
    static __thread char buf[256];
    const char *name = NULL;
    oxide_param_kind kind;
    oxide_scalar s;
    int mut = 0;
    uint32_t size = 0, align = 0;
    if (!oxj_check(oxide_manifest_param(m, (size_t)k, (size_t)p, &name, &kind, &s, &mut, &size, &align)))
        return NULL;
    if (kind == OXIDE_PARAM_SCALAR)
        snprintf(buf, sizeof buf, "%s: %s", name, oxide_scalar_name(s));
    else if (kind == OXIDE_PARAM_SLICE || kind == OXIDE_PARAM_PTR)
        snprintf(buf, sizeof buf, "%s: %s<%s%s>", name, oxide_param_kind_name(kind), mut ? "mut " : "",
                 oxide_scalar_name(s));
    else if (kind == OXIDE_PARAM_BYTES)
        snprintf(buf, sizeof buf, "%s: bytes<%u, %u>", name, size, align);
    else
        snprintf(buf, sizeof buf, "%s: %s", name, oxide_param_kind_name(kind));
    return buf;
}
%}
