/* Line tables for imported Rust code (`cargo oxide build --lineinfo`, oxide_options_set_line_info):
 * the PTX gets .file/.loc for the Rust lines and no other debug information, as nvcc -lineinfo
 * gives, so ncu's source view and compute-sanitizer's reports show Rust file:line.
 *
 * Two things stood in the way. NVPTX writes .loc only in functions that have a DISubprogram, and
 * the ptx_kernel wrappers import_kernels.c makes had none: the Rust code inlined into them lost
 * its lines. And rustc's compile units ask for full DWARF (dev) or line tables (LineTablesOnly),
 * both of which make NVPTX write `.target sm_XX, debug` and DWARF sections, which ptxas compiles
 * as device-debug code; only DebugDirectivesOnly means "lines only", and LLVM-C cannot change a
 * compile unit, so the module is printed, its units' kinds rewritten and parsed again. */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>

#include "import.h"

/* 3 = DICompileUnit::DebugDirectivesOnly (lower.c uses it the same way; the C enum stops at
 * LineTablesOnly but the value maps straight through). */
#define DIRECTIVES_ONLY ((LLVMDWARFEmissionKind)3)

void oxide__wrapper_lines(LLVMModuleRef m, const oxide_found_kernel *ks, size_t n) {
    LLVMDIBuilderRef dib = NULL;
    for (size_t i = 0; i < n; i++) {
        LLVMMetadataRef esp = LLVMGetSubprogram(ks[i].entry);
        LLVMValueRef w = LLVMGetNamedFunction(m, ks[i].desc.entry);
        LLVMBasicBlockRef bb = w ? LLVMGetFirstBasicBlock(w) : NULL;
        LLVMValueRef call = bb ? LLVMGetFirstInstruction(bb) : NULL;
        LLVMMetadataRef efile = esp ? LLVMDIScopeGetFile(esp) : NULL;
        if (!efile || !call || !LLVMIsACallInst(call) || LLVMGetSubprogram(w))
            continue;
        unsigned fl, dl;
        const char *fname = LLVMDIFileGetFilename(efile, &fl), *dir = LLVMDIFileGetDirectory(efile, &dl);
        if (!dib)
            dib = LLVMCreateDIBuilder(m);
        LLVMMetadataRef file =
            LLVMDIBuilderCreateFile(dib, fname ? fname : "", fname ? fl : 0, dir ? dir : "", dir ? dl : 0);
        LLVMMetadataRef cu = LLVMDIBuilderCreateCompileUnit(dib, LLVMDWARFSourceLanguageRust, file, "oxide", 5, 1, "",
                                                            0, 0, "", 0, DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
        unsigned line = LLVMDISubprogramGetLine(esp);
        LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(dib, file, NULL, 0, LLVMDIFlagZero);
        const char *name = ks[i].desc.name, *entry = ks[i].desc.entry;
        LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(dib, cu, name, strlen(name), entry, strlen(entry), file, line,
                                                         ty, 0, 1, line, LLVMDIFlagZero, 1);
        LLVMSetSubprogram(w, sp);
        /* the call carries a location in the wrapper, so what is inlined into it keeps its own
         * lines with the wrapper as the place it was inlined at */
        LLVMInstructionSetDebugLoc(call, LLVMDIBuilderCreateDebugLocation(LLVMGetModuleContext(m), line, 0, sp, NULL));
    }
    if (dib) {
        LLVMDIBuilderFinalize(dib);
        LLVMDisposeDIBuilder(dib);
    }
}

/* text with each metadata line's "emissionKind: FullDebug" / "emissionKind: LineTablesOnly" made
 * "emissionKind: DebugDirectivesOnly"; malloc'd, NULL without memory. */
static char *directives_only(const char *text, size_t *len) {
    static const char *const from[] = {"emissionKind: FullDebug", "emissionKind: LineTablesOnly"};
    const char *to = "emissionKind: DebugDirectivesOnly";
    size_t n = strlen(text), extra = 0;
    for (size_t k = 0; k < 2; k++)
        for (const char *p = strstr(text, from[k]); p; p = strstr(p + 1, from[k]))
            extra += strlen(to);
    char *out = malloc(n + extra + 1), *o = out;
    if (!out)
        return NULL;
    bool md = false; /* in a metadata line ("!12 = ..."): a string constant is left alone */
    for (const char *p = text; *p;) {
        if (p == text || p[-1] == '\n')
            md = *p == '!';
        size_t k = 0;
        while (md && k < 2 && strncmp(p, from[k], strlen(from[k])))
            k++;
        if (md && k < 2) {
            memcpy(o, to, strlen(to));
            o += strlen(to);
            p += strlen(from[k]);
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    *len = (size_t)(o - out);
    return out;
}

oxide_status oxide__import_line_tables(LLVMModuleRef *m) {
    char *text = LLVMPrintModuleToString(*m);
    size_t len = 0;
    char *lines = text ? directives_only(text, &len) : NULL;
    LLVMDisposeMessage(text);
    if (!lines)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory making the line tables");
    LLVMContextRef c = LLVMGetModuleContext(*m);
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(lines, len, "lines");
    free(lines);
    LLVMModuleRef out = NULL;
    char *err = NULL;
    if (LLVMParseIRInContext(c, mb, &out, &err)) { /* consumes mb */
        oxide_status st = oxide__fail(OXIDE_ERROR_CODEGEN, "internal: the module with line tables does not parse: %s",
                                      err ? err : "");
        LLVMDisposeMessage(err);
        return st;
    }
    LLVMDisposeModule(*m);
    *m = out;
    return OXIDE_OK;
}
