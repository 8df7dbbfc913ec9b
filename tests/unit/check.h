/* The unit tests' one tiny harness: CHECK counts and reports, check_report prints the closing
 * "N passed, N failed" line that CI reads and gives the exit code. */
#ifndef OXIDE_TEST_CHECK_H
#define OXIDE_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "oxide.h"

static int check_passed, check_failed;

/* The optional message of a failed CHECK (a function, so that an empty one is allowed). */
static inline void check_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* CHECK(cond) or CHECK(cond, "format", args...): on failure prints where, the condition, the
 * message and the library's last error. */
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            check_passed++;                                                                                            \
        } else {                                                                                                       \
            check_failed++;                                                                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                                     \
            check_note("" __VA_ARGS__);                                                                                \
            printf(" (last error: %s)\n", oxide_last_error());                                                         \
        }                                                                                                              \
    } while (0)

static inline int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed != 0;
}

/* The whole file, NUL-terminated (malloc); NULL if it cannot be read. */
static inline char *check_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    if (s && len)
        *len = (size_t)n;
    fclose(f);
    return s;
}

#endif
