/* Statuses, the thread-local last error, version. No LLVM: also part of liboxide_runtime. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

static _Thread_local char last_error[2048];

oxide_status oxide__vfail(oxide_status st, const char *fmt, va_list ap) {
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    return st;
}

oxide_status oxide__fail(oxide_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    oxide__vfail(st, fmt, ap);
    va_end(ap);
    return st;
}

oxide_status oxide__fail_prefix(oxide_status st, const char *fmt, ...) {
    /* The message being prefixed lives in the buffer about to be written: copy it out first. */
    char cause[sizeof last_error];
    memcpy(cause, last_error, sizeof cause);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n < sizeof last_error ? (size_t)n : sizeof last_error - 1;
    snprintf(last_error + used, sizeof last_error - used, ": %s", cause);
    return st;
}

const char *oxide_last_error(void) { return last_error; }

const char *oxide_status_name(oxide_status status) {
    static const char *const names[] = {
        "OXIDE_OK",
        "OXIDE_ERROR_INVALID_ARGUMENT",
        "OXIDE_ERROR_TYPE_MISMATCH",
        "OXIDE_ERROR_VERIFY",
        "OXIDE_ERROR_PARSE",
        "OXIDE_ERROR_UNSUPPORTED",
        "OXIDE_ERROR_CODEGEN",
        "OXIDE_ERROR_NOT_FOUND",
        "OXIDE_ERROR_OUT_OF_MEMORY",
        "OXIDE_ERROR_IO",
        "OXIDE_ERROR_NO_DRIVER",
        "OXIDE_ERROR_NO_DEVICE",
        "OXIDE_ERROR_CUDA",
        "OXIDE_ERROR_LAUNCH",
        "OXIDE_ERROR_DEVICE_FAILED",
        "OXIDE_ERROR_MANIFEST",
        "OXIDE_ERROR_STATE",
    };
    if ((unsigned)status < sizeof names / sizeof names[0])
        return names[status];
    return "OXIDE_STATUS_UNKNOWN";
}

#define STR2(x) #x
#define STR(x) STR2(x)
const char *oxide_version(void) {
    return STR(OXIDE_VERSION_MAJOR) "." STR(OXIDE_VERSION_MINOR) "." STR(OXIDE_VERSION_PATCH);
}
