/* Writes the manifest line that compiled PTX carries (docs/design.md section 5).
 *
 * Contract with the reader (lib/manifest.c), beyond the shape in docs/design.md:
 *  - one line: "// oxide.manifest.v1 " then the JSON object then "\n"; keys in the fixed order
 *    oxide, target, kernels; per kernel name, entry, params, launch_bounds, cluster, dyn_smem.
 *  - "launch_bounds" is always present; [0,0] means "not set" (oxide_manifest_kernel_attrs'
 *    (0,0)). A min_blocks of 0 with a max_threads set is written as is.
 *  - "cluster" is always present; an unset cluster (or any 0 component) is written as 1, so
 *    [1,1,1] means "no cluster launch needed".
 *  - strings: '"' and '\\' escaped, control bytes and DEL as \u00XX (\n \t \r \b \f short
 *    forms), valid UTF-8 passed through, and every byte of an invalid UTF-8 sequence as \ufffd,
 *    so the line is always valid UTF-8 JSON.
 * The output depends only on the arguments, so equal inputs give byte-identical PTX. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm.h"

#ifndef OXIDE_VERSION_STRING
#define OXIDE_VERSION_STRING "0.1.0"
#endif

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static void putf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(sbuf *b, const char *fmt, ...) {
    char tmp[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_json_string(sbuf *b, const char *str) {
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': puts_(b, "\\n"); break;
            case '\t': puts_(b, "\\t"); break;
            case '\r': puts_(b, "\\r"); break;
            case '\b': puts_(b, "\\b"); break;
            case '\f': puts_(b, "\\f"); break;
            default: putf(b, "\\u%04x", c);
            }
            i++;
        } else if (c < 0x80) {
            put(b, (const char *)s + i, 1);
            i++;
        } else {
            size_t len = oxide__utf8_len(s + i, n - i);
            if (len) {
                put(b, (const char *)s + i, len);
                i += len;
            } else {
                puts_(b, "\\ufffd");
                i++;
            }
        }
    }
    put(b, "\"", 1);
}

static void put_param(sbuf *b, const oxide_iface_param *p) {
    puts_(b, "{\"name\":");
    put_json_string(b, p->name);
    puts_(b, ",\"kind\":");
    const char *kind = oxide_param_kind_name(p->kind);
    put_json_string(b, kind ? kind : "unknown");
    const char *scalar = oxide_scalar_name(p->scalar);
    switch (p->kind) {
    case OXIDE_PARAM_SCALAR:
        puts_(b, ",\"type\":");
        put_json_string(b, scalar ? scalar : "unknown");
        break;
    case OXIDE_PARAM_SLICE:
    case OXIDE_PARAM_PTR:
        puts_(b, ",\"elem\":");
        put_json_string(b, scalar ? scalar : "unknown");
        puts_(b, p->is_mutable ? ",\"mut\":true" : ",\"mut\":false");
        break;
    case OXIDE_PARAM_BYTES: putf(b, ",\"size\":%u,\"align\":%u", p->size, p->align); break;
    case OXIDE_PARAM_TMA_DESC: break;
    }
    puts_(b, "}");
}

char *oxide__manifest_json(const oxide_options *opts, const oxide_kernel_desc *k, size_t n) {
    sbuf b = {0};
    puts_(&b, "// oxide.manifest.v1 {\"oxide\":");
    put_json_string(&b, OXIDE_VERSION_STRING);
    puts_(&b, ",\"target\":");
    put_json_string(&b, opts->target);
    puts_(&b, ",\"kernels\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            puts_(&b, ",");
        puts_(&b, "{\"name\":");
        put_json_string(&b, k[i].name);
        puts_(&b, ",\"entry\":");
        put_json_string(&b, k[i].entry);
        puts_(&b, ",\"params\":[");
        for (uint32_t p = 0; p < k[i].nparams; p++) {
            if (p)
                puts_(&b, ",");
            put_param(&b, &k[i].params[p]);
        }
        uint32_t cl[3];
        for (int d = 0; d < 3; d++)
            cl[d] = k[i].cluster[d] ? k[i].cluster[d] : 1;
        putf(&b, "],\"launch_bounds\":[%u,%u],\"cluster\":[%u,%u,%u],\"dyn_smem\":%u}", k[i].launch_bounds[0],
             k[i].launch_bounds[1], cl[0], cl[1], cl[2], k[i].dyn_smem);
    }
    puts_(&b, "]}\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
