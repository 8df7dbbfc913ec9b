/* NVPTX codegen with oxide's choice of passes, and IR printing (lib/emit_codegen.cpp, the one C++ file; this
 * header is both languages'). */
#ifndef OXIDE_CODEGEN_H
#define OXIDE_CODEGEN_H

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
 * is a module it can be reused for, else through one of its own. */
char *oxide__codegen(LLVMTargetMachineRef tm, oxide_codegen **kept, LLVMModuleRef m, size_t *len);
/* NULL does nothing. */
void oxide__codegen_destroy(oxide_codegen *cg);
/* m as LLVM IR text (what LLVMPrintModuleToString gives), malloc'd; NULL when out of memory. */
char *oxide__print_ir(LLVMModuleRef m);

#ifdef __cplusplus
}
#endif

#endif
