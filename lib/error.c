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
    /* ": " and as much of the cause as fits (written by hand: GCC's truncation warning cannot
     * see that the two parts share one buffer's room) */
    size_t room = sizeof last_error - 1 - used, clen = strnlen(cause, sizeof cause - 1);
    if (room >= 2) {
        memcpy(last_error + used, ": ", 2);
        used += 2, room -= 2;
        memcpy(last_error + used, cause, clen < room ? clen : room);
        used += clen < room ? clen : room;
    }
    last_error[used] = 0;
    return st;
}

const char *oxide_last_error(void) { return last_error; }

/* The enum in oxide.h is generated from status.def (tools/gen.py); prove it matches row by row. */
enum {
#define STATUS(ID, DOC) ROW_##ID,
#include "status.def"
#undef STATUS
    NSTATUS
};
#define STATUS(ID, DOC) _Static_assert(OXIDE_##ID == (int)ROW_##ID, "include/oxide.h is stale: run tools/gen.py");
#include "status.def"
#undef STATUS

const char *oxide_status_name(oxide_status status) {
    static const char *const names[NSTATUS] = {
#define STATUS(ID, DOC) "OXIDE_" #ID,
#include "status.def"
#undef STATUS
    };
    return (unsigned)status < NSTATUS ? names[status] : "OXIDE_STATUS_UNKNOWN";
}

#define STR2(x) #x
#define STR(x) STR2(x)
const char *oxide_version(void) {
    return STR(OXIDE_VERSION_MAJOR) "." STR(OXIDE_VERSION_MINOR) "." STR(OXIDE_VERSION_PATCH);
}
