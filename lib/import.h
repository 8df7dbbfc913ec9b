/* Internal interface between the files of the bitcode import (the Rust front end): import.c
 * (storing units, linking, the steps of oxide__import_link), import_kernels.c (kernel
 * descriptors and wrappers), import_retarget.c (host code made device code). Not installed. */
#ifndef OXIDE_IMPORT_H
#define OXIDE_IMPORT_H

#include <string.h>

#include "demangle.h"
#include "llvm.h"

#define NVPTX_DL "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"

static inline uint64_t rd64(const uint8_t *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}
static inline uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ---- import.c: the steps of storing a unit ---- */

/* The magic and the structural check (bitcode_check.c): PARSE naming uname and what is wrong. */
oxide_status oxide__bitcode_precheck(const void *data, size_t size, const char *uname);
/* LLVM reads the header (a lazy parse): UNSUPPORTED when it cannot (malformed, newer LLVM). */
oxide_status oxide__bitcode_lazy_read(const void *data, size_t size, const char *uname);
/* LLVM reads the whole unit and verifies it, as compile will: PARSE or UNSUPPORTED. */
oxide_status oxide__bitcode_full_read(const void *data, size_t size, const char *uname);
/* A copy of the unit joins mod->bitcode. */
oxide_status oxide__bitcode_store(oxide_module *mod, const void *data, size_t size, const char *uname);
/* The crates' units (not the libraries) parsed and linked into dst (import_tile.c's link). */
oxide_status oxide__link_units(oxide_module *mod, LLVMModuleRef dst);

/* ---- import_kernels.c ---- */

/* The demangled Rust name of f into buf; a kernel's generated entry is reported as the kernel. */
const char *oxide__rust_name(LLVMValueRef f, char *buf, size_t cap);

/* A constant laid out as bytes (little-endian, at most cap of them), with the addresses it holds
 * recorded as relocations against globals. */
typedef struct reloc {
    size_t off;
    LLVMValueRef global;
    int64_t addend;
} reloc;

typedef struct flat {
    uint8_t *bytes;
    size_t cap;
    reloc rel[64];
    int nrel;
    bool bad; /* a constant expression it could not lay out */
} flat;

void oxide__flatten(LLVMTargetDataRef td, LLVMValueRef c, size_t off, flat *f);
const reloc *oxide__reloc_at(const flat *f, size_t off);
/* The bytes of a string constant a relocation points at (NULL if it is not one of len bytes). */
const char *oxide__reloc_string(const reloc *r, size_t len);

typedef struct oxide_found_kernel {
    LLVMValueRef entry; /* the Rust entry instance */
    LLVMValueRef tag_call;
    oxide_iface_kernel desc;
} oxide_found_kernel;

/* The #[kernel] instances of the linked module m, their descriptors read (strings in
 * mod->arena) into a malloc'd array; the tag calls are removed. NOT_FOUND when there is none. */
oxide_status oxide__find_kernels(oxide_module *mod, LLVMModuleRef m, oxide_found_kernel **out, size_t *count);
/* A ptx_kernel wrapper with oxide's interface ABI in front of each entry. */
oxide_status oxide__make_wrappers(LLVMModuleRef m, oxide_found_kernel *ks, size_t n, unsigned sm);

/* The head both kernel descriptors start with (cuda_device's and cuda_tile's __private; x86_64
 * and nvptx64 agree): a type id, the name, whether the kernel is a generic instance, and the
 * parameter descriptors. import_tile.c reads tile kernels' with the same code. */
enum {
    DH_TID = 0,
    DH_NAME = 16,
    DH_NAME_LEN = 24,
    DH_GENERIC = 32,
    DH_NPARAMS = 36,
    DH_PARAMS = 40,
    DH_PARAMS_LEN = 48
};
typedef struct desc_head {
    const char *name; /* name_len bytes, not NUL-terminated; NULL where unreadable */
    uint64_t name_len, nparams;
    const reloc *params; /* NULL where unreadable */
    bool generic;
    uint64_t tag; /* the type id's halves xor'd */
} desc_head;
/* Flattens the constant descriptor that tag_call passes into f and reads its head; PARSE, naming
 * rust and what ("kernel descriptor"), when it is not a constant. Whether the head's values are
 * sane is left to the caller, whose limits differ. */
oxide_status oxide__desc_head(LLVMTargetDataRef td, LLVMValueRef tag_call, const char *rust, const char *what, flat *f,
                              desc_head *h);
/* The entry's name: the kernel's, and for a generic instance _ and the tag in 16 hex digits, as the
 * macros name it. */
void oxide__desc_entry(const desc_head *h, char *buf, size_t cap);
/* ---- import_targets.c ---- */
/* UNSUPPORTED, naming the kernel, the Rust function and the operation, when a kernel reaches an
 * intrinsic the target lacks; gives the dynamic shared memory the launch contracts' alignment. */
oxide_status oxide__check_targets(LLVMModuleRef m, const oxide_found_kernel *ks, size_t n, const oxide_options *opts);

/* ---- import_retarget.c ---- */

/* A unit read from host bitcode, given the GPU's triple and dst's layout, without its
 * module-level asm and the host-only globals that would clash between crates. */
void oxide__retarget_unit(LLVMModuleRef m, LLVMModuleRef dst);
void oxide__strip_host_attrs(LLVMValueRef f);
/* Why the function whose demangled name is rust never returns (a panic entry point), or NULL. */
const char *oxide__panic_reason(const char *rust, LLVMValueRef f);
/* Is this declaration one the device code may keep (intrinsics, libdevice, printf, libm)? */
bool oxide__is_known_external(const char *name);
/* Panics become a message and a trap, libm calls libdevice; any other call to a function without
 * a body, and inline asm the user wrote, is refused naming the Rust caller. */
oxide_status oxide__check_calls(LLVMModuleRef m, LLVMTargetDataRef td);
/* f (a function or an alias) replaced by a declaration of its name and type; returns it. */
LLVMValueRef oxide__declare_instead(LLVMModuleRef m, LLVMValueRef f);
/* The new pass manager's pipeline on m (CODEGEN, internal, when it fails). */
oxide_status oxide__run_passes(LLVMModuleRef m, const char *pipeline);
void oxide__drop_stub_bodies(LLVMModuleRef m);
void oxide__mark_convergent_stubs(LLVMModuleRef m);
oxide_status oxide__link_intrinsics(LLVMModuleRef m);
void oxide__move_statics(LLVMModuleRef m);

/* ---- import_legal.c ---- */

/* Refuses what NVPTX cannot select (thread-locals, 128-bit integer <-> float conversions, f128,
 * 128-bit atomics, indirect branches), naming the Rust function: UNSUPPORTED. */
oxide_status oxide__check_selectable(LLVMModuleRef m);

/* ---- import_lineinfo.c ---- */

/* Each kernel's wrapper gets a DISubprogram (in a lines-only unit) and its call of the entry a
 * location, when the entry has debug info: NVPTX writes .loc only in functions with one. */
void oxide__wrapper_lines(LLVMModuleRef m, const oxide_found_kernel *ks, size_t n);

/* ---- import_diag.c ---- */

/* UNSUPPORTED, with a message that names the kernel reaching the instruction at, the chain of
 * calls from it (with each step's file:line:col from the debug info) and the user's line, in
 * rustc's layout; the headline is the kernel, the function holding at (when it is not the
 * kernel) and the formatted reason. callee, if not NULL, ends the chain (the refused call). */
oxide_status oxide__refuse(LLVMModuleRef m, LLVMValueRef at, const char *callee, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The message of panic!("...", args) at this call of core::panicking::panic_fmt, as a vprintf
 * format (arguments shown as {}), or false when the call's template cannot be read. */
bool oxide__panic_fmt_text(LLVMValueRef call, char *out, size_t cap);

#endif
