/* The small containers the rest of liboxide builds on: an arena, growable pointer vectors, a
 * string buffer and a string-keyed map. No LLVM: this is part of liboxide_runtime too. Not
 * installed. */
#ifndef OXIDE_UTIL_H
#define OXIDE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- arena: everything a module, context or manifest owns is freed in one go ---- */

typedef struct oxide_arena {
    struct oxide_chunk *chunks;
} oxide_arena;

void *oxide__alloc(oxide_arena *a, size_t size); /* zeroed; NULL on out-of-memory */
char *oxide__strdup(oxide_arena *a, const char *s);
char *oxide__strndup(oxide_arena *a, const char *s, size_t n);
void oxide__arena_free(oxide_arena *a);

/* Growable array of pointers living in an arena. */
typedef struct oxide_vec {
    void **items;
    uint32_t len, cap;
} oxide_vec;
bool oxide__vec_push(oxide_arena *a, oxide_vec *v, void *item);

/* ---- string buffer (malloc'd; an allocation failure is remembered, so callers check once) ---- */

typedef struct oxide_sbuf {
    char *s; /* NUL-terminated once anything was put */
    size_t len, cap;
    bool oom;
} oxide_sbuf;

void oxide__sbuf_put(oxide_sbuf *b, const char *s, size_t n);
void oxide__sbuf_puts(oxide_sbuf *b, const char *s);
void oxide__sbuf_printf(oxide_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text (the caller frees it), or NULL if any put ran out of memory; b is empty after. */
char *oxide__sbuf_take(oxide_sbuf *b);

/* ---- string-keyed map (open addressing; slots live in an arena the caller names) ---- */

typedef struct oxide_strmap {
    struct oxide_strmap_slot *slots;
    uint32_t cap, len;
} oxide_strmap;

/* The value stored under key[0..len), or NULL. */
void *oxide__strmap_get(const oxide_strmap *m, const char *key, size_t len);
/* Insert or overwrite; val must not be NULL. The key is not copied: it must outlive the map.
 * False when out of memory (the map is unchanged then). */
bool oxide__strmap_put(oxide_arena *a, oxide_strmap *m, const char *key, size_t len, void *val);
void oxide__strmap_remove(oxide_strmap *m, const char *key, size_t len);

/* ---- strings ---- */

static inline bool oxide__starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static inline bool oxide__ends(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !memcmp(s + n - m, suffix, m);
}

#endif
