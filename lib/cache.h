/* The module cache's file handling, shared with the autotuner's winner cache (lib/autotune.c),
 * which keeps its entries in the same directory with the same guarantees (docs/c-api.md, "The
 * module cache"). Not installed. */
#ifndef OXIDE_CACHE_H
#define OXIDE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* The cache directory for dir (NULL: $OXIDE_CACHE_DIR, $XDG_CACHE_HOME/oxide, ~/.cache/oxide),
 * created 0700 if missing; false when there is none to use ("" turns the cache off). */
bool oxide__cache_dir(const char *dir, char *out, size_t cap);
/* SHA-256 of data as 64 lower-case hex digits and a NUL. */
void oxide__sha256_hex(const void *data, size_t n, char out[65]);
/* A whole regular file of 1..max bytes, malloc'd and NUL-terminated (*len without the NUL), or
 * NULL for anything else. */
char *oxide__cache_read(const char *path, size_t max, size_t *len);
/* parts[0..nparts) written to path through a private temporary file in dir renamed over it, so
 * that concurrent readers see the old file or the whole new one. tag (up to 16 characters are
 * used) names the temporary file. False when it could not be written (nothing is left behind). */
bool oxide__cache_write(const char *dir, const char *path, const char *tag, const char *const *parts,
                        const size_t *lens, size_t nparts);

#endif
