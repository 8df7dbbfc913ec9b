/* The one harness of the C tests. CHECK, OK and FAILS_WITH count a check and, on failure, print
 * "FAIL file:line: ..." with the library's last error and go on; MUST stops the test where it
 * cannot go on. check_report prints the closing "NAME: N passed, N failed" line that CI reads
 * and gives the exit code (tests/gpu/gpu_test.h closes GPU tests with its own PASSED line). */
#ifndef OXIDE_TEST_HARNESS_H
#define OXIDE_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oxide.h"

static int check_passed, check_failed;

/* The optional message of a failed CHECK (a function, so that an empty one is allowed). */
static inline void check_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* CHECK(cond) or CHECK(cond, "format", args...). */
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

/* The call must return OXIDE_OK. */
#define OK(call)                                                                                                       \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_ == OXIDE_OK) {                                                                                         \
            check_passed++;                                                                                            \
        } else {                                                                                                       \
            check_failed++;                                                                                            \
            printf("FAIL %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, oxide_status_name(st_), oxide_last_error()); \
        }                                                                                                              \
    } while (0)

/* The call must succeed, or the test cannot go on: it reports and exits 1. Not a check. */
#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_ != OXIDE_OK) {                                                                                         \
            printf("FAILED: %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, oxide_status_name(st_),                   \
                   oxide_last_error());                                                                                \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* The call must fail with status want and a message containing every given fragment. */
#define FAILS_WITH(call, want, ...)                                                                                    \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        const char *frags_[] = {__VA_ARGS__, NULL};                                                                    \
        int ok_ = st_ == (want);                                                                                       \
        for (int i_ = 0; ok_ && frags_[i_]; i_++)                                                                      \
            ok_ = strstr(oxide_last_error(), frags_[i_]) != NULL;                                                      \
        if (ok_) {                                                                                                     \
            check_passed++;                                                                                            \
        } else {                                                                                                       \
            check_failed++;                                                                                            \
            printf("FAIL %s:%d: %s: wanted %s, got %s: \"%s\"\n", __FILE__, __LINE__, #call, oxide_status_name(want),  \
                   oxide_status_name(st_), oxide_last_error());                                                        \
        }                                                                                                              \
    } while (0)

static inline int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed != 0;
}

/* Removes a test's scratch directory and everything in it; one that stays is reported, not
 * counted as a failure. */
static inline void check_remove_dir(const char *name, const char *dir) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        printf("%s: could not remove %s\n", name, dir);
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

/* The SIMT IR the tile compiler makes of the text IR for target, building the given variants
 * (oxide_options_set_tile_variants); malloc, NULL after a failed check. */
static inline char *check_lower_tile(oxide_context *ctx, const char *ir, const char *target, int variants) {
    oxide_module *m = NULL, *low = NULL;
    oxide_options *o;
    MUST(oxide_options_create(&o));
    MUST(oxide_options_set_target(o, target));
    MUST(oxide_options_set_tile_variants(o, variants));
    OK(oxide_module_parse(ctx, ir, strlen(ir), &m));
    if (m)
        OK(oxide_module_lower_tile(m, o, &low));
    const char *text = NULL;
    if (low)
        OK(oxide_module_print(low, &text));
    char *copy = text ? malloc(strlen(text) + 1) : NULL;
    if (copy)
        memcpy(copy, text, strlen(text) + 1);
    oxide_module_destroy(low);
    oxide_module_destroy(m);
    oxide_options_destroy(o);
    return copy;
}

#endif
