/* A stand-in NVTX library for test_nvtx: it exports the two functions oxide's loader looks up and
 * records each call, so the test can see which ranges reached NVTX and in what order. */
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static char log_text[4096];

static void note(const char *what) {
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s;", what);
}

EXPORT int nvtxRangePushA(const char *message) {
    char buf[256];
    snprintf(buf, sizeof buf, "push %s", message);
    note(buf);
    return 0;
}

EXPORT int nvtxRangePop(void) {
    note("pop");
    return 0;
}

/* The calls so far, "push NAME;pop;..."; reading clears it. */
EXPORT const char *fake_nvtx_take(void) {
    static char out[sizeof log_text];
    memcpy(out, log_text, sizeof out);
    log_text[0] = 0;
    return out;
}
