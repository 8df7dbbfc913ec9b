/* The difftest generators' text buffer (buf.h). */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool grow(dt_buf *b, size_t need) {
    if (b->oom)
        return false;
    if (need < b->cap - b->len)
        return true;
    size_t cap = b->cap * 2 + need + 256;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void dt_buf_printf(dt_buf *b, const char *fmt, ...) {
    for (size_t need = 0; grow(b, need);) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        need = (size_t)n + 1;
    }
}

void dt_buf_append(dt_buf *b, const dt_buf *from) {
    if (!from->len || !grow(b, from->len + 1))
        return;
    memcpy(b->p + b->len, from->p, from->len);
    b->len += from->len;
    b->p[b->len] = 0;
}
