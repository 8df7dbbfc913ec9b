/* The benchmarks' small shared helpers: allocation that gives up loudly, medians, whole files. */
#ifndef OXIDE_BENCH_UTIL_H
#define OXIDE_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* A benchmark cannot go on without its buffers: say FAILED (the line gpu-check reads) and stop. */
static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FAILED: out of host memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static inline double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The whole file, NUL-terminated (free it); NULL if it cannot be read. */
static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? xmalloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

#endif
