/* NVPTX codegen with oxide's choice of passes, the IR pipeline, and IR printing (lib/emit_codegen.cpp, the one C++
 * file; this header is both languages'). */
#ifndef OXIDE_CODEGEN_H
#define OXIDE_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/TargetMachine.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A codegen pass manager kept with its target machine for the next module (see
 * oxide__codegen). */
typedef struct oxide_codegen oxide_codegen;

/* m's PTX through tm, malloc'd and NUL-terminated, its length in *len; NULL when out of memory or
 * when tm cannot emit assembly. LLVM reports codegen errors as diagnostics of m's context. *kept
 * (NULL at first) is the pass manager kept for tm: m runs through it, made when missing, when m
 * is a module it can be reused for, else through one of its own. vectorise: run the load/store
 * vectoriser, for code oxide did not lower itself (imported bitcode, libdevice); oxide's own IR
 * spells its vector accesses, and the vectoriser changed none of its PTX. A kept manager serves
 * one value of vectorise (lib/llvm.h keeps one of each). */
char *oxide__codegen(LLVMTargetMachineRef tm, oxide_codegen **kept, LLVMModuleRef m, bool vectorise, size_t *len);
/* NULL does nothing. */
void oxide__codegen_destroy(oxide_codegen *cg);
/* The IR pipeline's pass builder, analysis managers and parsed pipeline, kept with a target
 * machine for the next module (see oxide__run_pipeline). */
typedef struct oxide_passes oxide_passes;

/* Runs the pass pipeline text (a string that lives as long as the process: it is told apart from
 * others by its address) over m for tm, as LLVMRunPasses does, through *kept (NULL at first: made
 * here). NULL on success, else the error, malloc'd. */
char *oxide__run_pipeline(LLVMTargetMachineRef tm, oxide_passes **kept, LLVMModuleRef m, const char *pipeline);
/* NULL does nothing. */
void oxide__passes_destroy(oxide_passes *p);
/* m as LLVM IR text (what LLVMPrintModuleToString gives), malloc'd; NULL when out of memory. */
char *oxide__print_ir(LLVMModuleRef m);

#ifdef __cplusplus
}
#endif

#endif
