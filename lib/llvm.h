/* Internal interface between the files that use LLVM: lowering (lower*.c), bitcode import
 * (import.c), PTX emission (emit.c) and the compile entry points (compile.c). Not installed. */
#ifndef OXIDE_LLVM_H
#define OXIDE_LLVM_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "codegen.h"
#include "ir.h"

/* LLVM's process-wide setup (targets, options, the fatal-error handler), once; every entry that
 * calls LLVM calls this first. */
void oxide__llvm_init(void);

/* Lower every function and global of mod into a new LLVM module in llctx with the nvptx64
 * triple and the target machine's datalayout. The caller owns *out. */
oxide_status oxide__lower(oxide_module *mod, LLVMContextRef llctx, const oxide_options *opts, LLVMModuleRef *out);

/* Link mod's imported bitcode units into dst, retarget them, wrap their kernels and append their
 * descriptors to *kernels (malloc'd array, grown with realloc; *nkernels updated). Implemented by
 * the Rust front end in import.c; called only when mod->bitcode.len > 0. */
oxide_status oxide__import_link(oxide_module *mod, LLVMModuleRef dst, const oxide_options *opts,
                                oxide_iface_kernel **kernels, size_t *nkernels);
/* With line info: *m (disposed) replaced by the same module whose compile units all ask for
 * lines only (import_lineinfo.c), so the PTX has .file/.loc and no DWARF. */
oxide_status oxide__import_line_tables(LLVMModuleRef *m);
/* oxide_bitcode_kernel_key's material for the units, handed to put (import_key.c). */
oxide_status oxide__kernel_key_material(const oxide_bitcode_ref *units, size_t n, bool line_info,
                                        void (*put)(void *, const void *, size_t), void *ctx);

/* Legalise, optimise and emit m (consumed: disposed on every path) as PTX carrying the manifest
 * line for kernels. imported: m holds code linked from bitcode, not lowered by oxide (codegen then
 * runs the load/store vectoriser, lib/codegen.h). *ptx_out is malloc'd and NUL-terminated (ptx_out
 * NULL: no codegen at all); *llvm_ir_out (when the pointer is not NULL) receives the optimised LLVM
 * IR text, malloc'd. The time of each stage from TARGET on is written to ms[stage] (indexed by
 * oxide__stage). */
oxide_status oxide__emit_ptx(oxide_context *ctx, LLVMModuleRef m, const oxide_options *opts, bool imported,
                             const oxide_iface_kernel *kernels, size_t nkernels, char **ptx_out, size_t *len_out,
                             char **llvm_ir_out, double *ms);

/* Links into m the libdevice functions m calls (declared __nv_* functions with uses), as
 * linkonce_odr definitions (lib/emit_libdevice.c). A name libdevice lacks stays declared. Errors:
 * NOT_FOUND, IO (libdevice missing or unreadable: named), PARSE, CODEGEN, OUT_OF_MEMORY. */
oxide_status oxide__libdevice_link(LLVMModuleRef m);

/* The target machine for opts, held by ctx (drawn from the process-wide pool, lib/target.c). Errors:
 * INVALID_ARGUMENT (a target/PTX combination this LLVM cannot emit), CODEGEN. */
oxide_status oxide__target_machine(oxide_context *ctx, const oxide_options *opts, LLVMTargetMachineRef *out);
/* What a target machine keeps for the next module: codegen's pass managers (oxide__codegen; cg_vec
 * runs the load/store vectoriser) and the IR pipeline's (oxide__run_pipeline). */
typedef struct oxide_kept {
    oxide_codegen *cg, *cg_vec;
    oxide_passes *ir;
} oxide_kept;
/* Destroys what k keeps and empties it. */
void oxide__kept_clear(oxide_kept *k);
/* The same, and *kept: what is kept with that machine (valid until ctx takes another machine). */
oxide_status oxide__target_codegen(oxide_context *ctx, const oxide_options *opts, LLVMTargetMachineRef *out,
                                   oxide_kept **kept);

/* The PTX ISA version oxide emits for opts (the explicit option, or chosen from the target). */
oxide_status oxide__ptx_version(const oxide_options *opts, int *major, int *minor);

/* The lowest PTX ISA (major*10+minor) that has the NVVM intrinsic name on target sm, where that
 * is above every target's minimum (fp8 mma and conversions); 0 for the rest. */
int oxide__intrinsic_min_ptx(const char *name, unsigned sm);

/* "// oxide.manifest.v1 {...}\n" (malloc'd), or NULL when out of memory. */
char *oxide__manifest_json(const oxide_options *opts, const oxide_iface_kernel *k, size_t n);

/* The target triple of everything oxide emits. */
#define OXIDE_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* Every integer negation (sub 0, x) left in the optimised module m, whatever made it (oxide's
 * neg, a Rust wrapping_neg, LLVM's own folds), as not + 1 in oxide's inline asm, which nothing
 * folds back: ptxas fuses negations into min/max wrongly (lower_ops.c). */
void oxide__opaque_negations(LLVMModuleRef m);

/* Metadata kind that marks inline asm oxide itself generated (the legality check refuses any
 * other inline asm). */
#define OXIDE_ASM_MD "oxide.asm"

#endif
