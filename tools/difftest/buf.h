/* Small pieces the difftest generators share: a growing text buffer and the seeded random stream. */
#ifndef OXIDE_DIFFTEST_BUF_H
#define OXIDE_DIFFTEST_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Text that grows as it is printed to; on out of memory it stops growing and sets oom, so a
 * generator checks once at the end instead of after every line. */
typedef struct dt_buf {
    char *p;
    size_t len, cap;
    bool oom;
} dt_buf;

void dt_buf_printf(dt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends another buffer's text. */
void dt_buf_append(dt_buf *b, const dt_buf *from);

/* splitmix64: the stream every program's choices come from, so a seed names one program. */
static inline uint64_t dt_splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
