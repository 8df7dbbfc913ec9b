/* Opens the CUDA driver with dlopen at first use: liboxide must load, compile and test on machines
 * without a GPU or driver, and say clearly when one is missing (docs/design.md section 6). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "ir.h"

oxide_cuda oxide__cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static oxide_status load_status;
static char load_message[1024];

static void load_failed(oxide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void load_failed(oxide_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_message, sizeof load_message, fmt, ap);
    va_end(ap);
    load_status = st;
}

static void load_driver(void) {
    const char *path = getenv("OXIDE_CUDA_DRIVER");
    if (!path || !*path)
        path = "libcuda.so.1";
    /* RTLD_LOCAL: the driver's symbols must not satisfy anyone else's undefined references. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        load_failed(OXIDE_ERROR_NO_DRIVER,
                    "no CUDA driver: %s could not be loaded (%s); install the NVIDIA driver, or set "
                    "OXIDE_CUDA_DRIVER to the driver library's path",
                    path, why ? why : "unknown reason");
        return;
    }
    oxide_cuda cu;
    void *sym_;
    memset(&cu, 0, sizeof cu);
#define OXIDE_CUDA_LOAD(field, sym, req, ret, params)                                                                  \
    sym_ = dlsym(lib, sym);                                                                                            \
    memcpy(&cu.field, &sym_, sizeof sym_); /* ISO C cannot convert void * to a function pointer */                     \
    if (!sym_ && req) {                                                                                                \
        load_failed(OXIDE_ERROR_NO_DRIVER,                                                                             \
                    "the CUDA driver %s is too old: it lacks %s (oxide needs a driver for CUDA 12.0 or "               \
                    "later)",                                                                                          \
                    path, sym);                                                                                        \
        return;                                                                                                        \
    }
    OXIDE_CUDA_FUNCTIONS(OXIDE_CUDA_LOAD)
#undef OXIDE_CUDA_LOAD
    if (!cu.EventElapsedTime)
        cu.EventElapsedTime = cu.EventElapsedTimeV1;

    CUresult r = cu.Init(0);
    if (r != CUDA_SUCCESS) {
        char text[160];
        oxide__cu = cu; /* for the error names */
        oxide__cuda_error_text(r, text, sizeof text);
        if (r == CUDA_ERROR_NO_DEVICE)
            load_failed(OXIDE_ERROR_NO_DEVICE, "no GPU: the CUDA driver (%s) sees no device (cuInit: %s)", path, text);
        else if (r == CUDA_ERROR_STUB_LIBRARY)
            load_failed(OXIDE_ERROR_NO_DRIVER,
                        "no CUDA driver: %s is the CUDA toolkit's stub library, not a driver (cuInit: %s)", path, text);
        else if (r == CUDA_ERROR_INSUFFICIENT_DRIVER)
            load_failed(OXIDE_ERROR_NO_DRIVER, "the CUDA driver %s is older than its libraries need (cuInit: %s)", path,
                        text);
        else
            load_failed(OXIDE_ERROR_CUDA, "the CUDA driver (%s) failed to initialise (cuInit: %s)", path, text);
        return;
    }
    if (cu.DriverGetVersion(&cu.version) != CUDA_SUCCESS)
        cu.version = 0;
    oxide__cu = cu;
    load_status = OXIDE_OK;
}

oxide_status oxide__driver(void) {
    pthread_once(&load_once, load_driver);
    if (load_status != OXIDE_OK)
        return oxide__fail(load_status, "%s", load_message);
    return OXIDE_OK;
}

const char *oxide__cuda_error_text(CUresult r, char *buf, size_t size) {
    const char *name = NULL, *text = NULL;
    if (oxide__cu.GetErrorName && oxide__cu.GetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (oxide__cu.GetErrorString && oxide__cu.GetErrorString(r, &text) != CUDA_SUCCESS)
        text = NULL;
    if (name && text)
        snprintf(buf, size, "%s (%s)", name, text);
    else if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "CUDA error %d", (int)r);
    return buf;
}
