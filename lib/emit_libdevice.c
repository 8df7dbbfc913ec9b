/* libdevice (CUDA's math library as LLVM bitcode), linked into a compile only with what it calls
 * (docs/pipeline.md, "libdevice").
 *
 * Reading even lazily from libdevice.10.bc's 470 KB means a module of some 350 function headers
 * and their metadata per compile, then linking against all of them: 1.0 ms of a 5 ms softmax
 * compile, warm. So each process keeps, for each set of functions compiles have asked for, the
 * bitcode of a small module holding just those functions and what they call, made once from the
 * file the same way the compile used to link it (so the linked code is the same); a compile then
 * parses and links only that piece. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Linker.h>

#include "llvm.h"

#ifndef OXIDE_LIBDEVICE_PATH
#define OXIDE_LIBDEVICE_PATH "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
#endif

typedef struct piece {
    char *names; /* the functions it was made for: "__nv_expf,__nv_logf" */
    char *bitcode;
    size_t size;
} piece;

/* A program that asks for more distinct sets than this gets the later ones made afresh each time
 * (as every compile did before), so the cache cannot grow without bound. */
enum { MAX_PIECES = 64 };

/* libdevice.10.bc's bytes, read once and never changed, and the pieces made from them; a failed
 * read is retried by the next compile that needs libdevice. */
static struct {
    pthread_mutex_t lock;
    char *data;
    size_t size;
    piece pieces[MAX_PIECES];
    size_t npieces;
} libdevice = {.lock = PTHREAD_MUTEX_INITIALIZER};

static oxide_status read_libdevice(void) {
    FILE *fp = fopen(OXIDE_LIBDEVICE_PATH, "rb");
    if (!fp)
        return oxide__fail(OXIDE_ERROR_NOT_FOUND,
                           "math functions need libdevice, which is not at %s (install the CUDA toolkit)",
                           OXIDE_LIBDEVICE_PATH);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *data = size > 0 ? malloc((size_t)size) : NULL;
    if (!data || fread(data, 1, (size_t)size, fp) != (size_t)size) {
        free(data);
        fclose(fp);
        return oxide__fail(OXIDE_ERROR_IO, "could not read libdevice from %s", OXIDE_LIBDEVICE_PATH);
    }
    fclose(fp);
    libdevice.data = data;
    libdevice.size = (size_t)size;
    return OXIDE_OK;
}

/* Every definition linkonce_odr, so that a link pulls in just the functions referenced. */
static void make_linkonce(LLVMModuleRef lib) {
    for (LLVMValueRef f = LLVMGetFirstFunction(lib); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage)
            LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
}

/* The __nv_* functions m calls, in module order, as "a,b,c" (malloc); "" when none. */
static char *needed_names(LLVMModuleRef m) {
    oxide_sbuf b = {0};
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (LLVMIsDeclaration(f) && LLVMGetFirstUse(f) && oxide__starts(name, "__nv_"))
            oxide__sbuf_printf(&b, "%s%s", b.len ? "," : "", name);
    }
    if (!b.len && !b.oom)
        return strdup("");
    return oxide__sbuf_take(&b);
}

/* The piece for names, made in a context of its own: libdevice read lazily, linked into an empty
 * module that declares those functions (like m's declarations), and written out as bitcode. m
 * gives the target and the declarations' types. */
static oxide_status make_piece(LLVMModuleRef m, const char *names, piece *out) {
    LLVMContextRef c = LLVMContextCreate();
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRange(libdevice.data, libdevice.size, "libdevice.10.bc", 0);
    LLVMModuleRef lib, dst = LLVMModuleCreateWithNameInContext("libdevice", c);
    oxide_status st = OXIDE_OK;
    if (LLVMGetBitcodeModuleInContext2(c, buf, &lib)) {
        st = oxide__fail(OXIDE_ERROR_PARSE, "LLVM 22 could not read %s", OXIDE_LIBDEVICE_PATH);
    } else {
        LLVMSetTarget(lib, LLVMGetTarget(m));
        LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(m));
        LLVMSetTarget(dst, LLVMGetTarget(m));
        LLVMSetDataLayout(dst, LLVMGetDataLayoutStr(m));
        make_linkonce(lib);
        /* a declaration with libdevice's own type: what makes the linker take the definition */
        char *list = strdup(names);
        for (char *save, *n = list ? strtok_r(list, ",", &save) : NULL; n; n = strtok_r(NULL, ",", &save)) {
            LLVMValueRef f = LLVMGetNamedFunction(lib, n);
            if (f)
                LLVMAddFunction(dst, n, LLVMGlobalGetValueType(f));
        }
        free(list);
        if (LLVMLinkModules2(dst, lib))
            st = oxide__fail(OXIDE_ERROR_CODEGEN, "linking libdevice failed");
    }
    if (!st) {
        LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(dst);
        size_t n = bc ? LLVMGetBufferSize(bc) : 0;
        out->bitcode = n ? malloc(n) : NULL;
        out->names = strdup(names);
        if (!out->bitcode || !out->names) {
            free(out->bitcode);
            free(out->names);
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory linking libdevice");
        } else {
            memcpy(out->bitcode, LLVMGetBufferStart(bc), n);
            out->size = n;
        }
        if (bc)
            LLVMDisposeMemoryBuffer(bc);
    }
    LLVMDisposeModule(dst);
    LLVMContextDispose(c);
    return st;
}

/* The cached piece for names, made if missing (*own set when it is not kept: the caller frees it). */
static oxide_status find_piece(LLVMModuleRef m, const char *names, piece *out, bool *own) {
    pthread_mutex_lock(&libdevice.lock);
    oxide_status st = libdevice.data ? OXIDE_OK : read_libdevice();
    *own = false;
    for (size_t i = 0; !st && i < libdevice.npieces; i++)
        if (!strcmp(libdevice.pieces[i].names, names)) {
            *out = libdevice.pieces[i];
            pthread_mutex_unlock(&libdevice.lock);
            return OXIDE_OK;
        }
    if (!st && !(st = make_piece(m, names, out))) {
        if (libdevice.npieces < MAX_PIECES)
            libdevice.pieces[libdevice.npieces++] = *out;
        else
            *own = true;
    }
    pthread_mutex_unlock(&libdevice.lock);
    return st;
}

oxide_status oxide__libdevice_link(LLVMModuleRef m) {
    char *names = needed_names(m);
    if (!names)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory linking libdevice");
    piece p;
    bool own;
    oxide_status st = find_piece(m, names, &p, &own);
    free(names);
    if (st)
        return st;
    LLVMContextRef llctx = LLVMGetModuleContext(m);
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(p.bitcode, p.size, "libdevice", 0);
    LLVMModuleRef lib;
    if (LLVMParseBitcodeInContext2(llctx, buf, &lib)) {
        st = oxide__fail(OXIDE_ERROR_PARSE, "LLVM 22 could not read back its own piece of %s", OXIDE_LIBDEVICE_PATH);
    } else {
        make_linkonce(lib);
        if (LLVMLinkModules2(m, lib))
            st = oxide__fail(OXIDE_ERROR_CODEGEN, "linking libdevice failed");
    }
    LLVMDisposeMemoryBuffer(buf);
    if (own) {
        free(p.names);
        free(p.bitcode);
    }
    return st;
}
