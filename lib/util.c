/* The arena, vectors, string buffer and string map of lib/util.h. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- arena ---- */

struct oxide_chunk {
    struct oxide_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

/* Chunks start small, since a manifest or a tiny module needs a few hundred bytes, and double
 * up to this size, so that large modules make few allocations. */
#define CHUNK_MIN 4096
#define CHUNK_MAX 65536

void *oxide__alloc(oxide_arena *a, size_t size) {
    size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    struct oxide_chunk *c = a->chunks;
    if (!c || c->cap - c->used < size) {
        size_t cap = !c ? CHUNK_MIN : c->cap * 2 > CHUNK_MAX ? CHUNK_MAX : c->cap * 2;
        if (cap < size)
            cap = size;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->chunks;
        a->chunks = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *oxide__strndup(oxide_arena *a, const char *s, size_t n) {
    char *d = oxide__alloc(a, n + 1);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *oxide__strdup(oxide_arena *a, const char *s) { return oxide__strndup(a, s, strlen(s)); }

void oxide__arena_free(oxide_arena *a) {
    for (struct oxide_chunk *c = a->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->chunks = NULL;
}

bool oxide__vec_push(oxide_arena *a, oxide_vec *v, void *item) {
    if (v->len == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 4;
        void **items = oxide__alloc(a, cap * sizeof *items);
        if (!items)
            return false;
        if (v->len)
            memcpy(items, v->items, v->len * sizeof *items);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
    return true;
}

/* ---- string buffer ---- */

static bool sbuf_reserve(oxide_sbuf *b, size_t n) {
    if (b->oom)
        return false;
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void oxide__sbuf_put(oxide_sbuf *b, const char *s, size_t n) {
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void oxide__sbuf_puts(oxide_sbuf *b, const char *s) { oxide__sbuf_put(b, s, strlen(s)); }

void oxide__sbuf_printf(oxide_sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0 || !sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *oxide__sbuf_take(oxide_sbuf *b) {
    char *s = b->oom ? NULL : b->s;
    if (b->oom)
        free(b->s);
    *b = (oxide_sbuf){0};
    return s;
}

/* ---- string map ---- */

struct oxide_strmap_slot {
    const char *key; /* NULL: empty */
    size_t len;
    void *val;
};

static uint32_t hash(const char *k, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

/* The slot holding key, or the empty slot where it would go (cap is a power of two, never full). */
static struct oxide_strmap_slot *find(const oxide_strmap *m, const char *key, size_t len) {
    uint32_t mask = m->cap - 1;
    for (uint32_t i = hash(key, len) & mask;; i = (i + 1) & mask) {
        struct oxide_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->len == len && !memcmp(s->key, key, len)))
            return s;
    }
}

void *oxide__strmap_get(const oxide_strmap *m, const char *key, size_t len) {
    return m->cap ? find(m, key, len)->val : NULL;
}

bool oxide__strmap_put(oxide_arena *a, oxide_strmap *m, const char *key, size_t len, void *val) {
    if (2 * (m->len + 1) > m->cap) {
        uint32_t cap = m->cap ? 2 * m->cap : 16;
        oxide_strmap g = {oxide__alloc(a, cap * sizeof *g.slots), cap, m->len};
        if (!g.slots)
            return false;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->slots[i].key)
                *find(&g, m->slots[i].key, m->slots[i].len) = m->slots[i];
        *m = g;
    }
    struct oxide_strmap_slot *s = find(m, key, len);
    if (!s->key)
        m->len++;
    *s = (struct oxide_strmap_slot){key, len, val};
    return true;
}

/* Backward-shift deletion: later entries of the probe run move up, so no tombstones are needed. */
void oxide__strmap_remove(oxide_strmap *m, const char *key, size_t len) {
    if (!m->cap)
        return;
    struct oxide_strmap_slot *s = find(m, key, len);
    if (!s->key)
        return;
    uint32_t mask = m->cap - 1, hole = (uint32_t)(s - m->slots);
    m->len--;
    for (uint32_t i = (hole + 1) & mask; m->slots[i].key; i = (i + 1) & mask) {
        uint32_t home = hash(m->slots[i].key, m->slots[i].len) & mask;
        /* the entry may fill the hole if its home is not cyclically within (hole, i] */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            m->slots[hole] = m->slots[i];
            hole = i;
        }
    }
    m->slots[hole] = (struct oxide_strmap_slot){0};
}
