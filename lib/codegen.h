/* NVPTX codegen with oxide's choice of passes (lib/emit_codegen.cpp, the one C++ file; this
 * header is both languages'). */
#ifndef OXIDE_CODEGEN_H
#define OXIDE_CODEGEN_H

#include <stddef.h>

#include <llvm-c/TargetMachine.h>

#ifdef __cplusplus
extern "C" {
#endif

/* m's PTX through tm, malloc'd and NUL-terminated, its length in *len; NULL when out of memory or
 * when tm cannot emit assembly. LLVM reports codegen errors as diagnostics of m's context. */
char *oxide__codegen(LLVMTargetMachineRef tm, LLVMModuleRef m, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
