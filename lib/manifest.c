/* Reads the manifest line that oxide PTX carries (docs/design.md section 5):
 *
 *     // oxide.manifest.v1 {JSON}
 *
 * The JSON reader is strict (RFC 8259 grammar, valid UTF-8, no trailing garbage) because a
 * manifest that is read wrongly turns into a kernel launched with wrong arguments; it ignores
 * unknown keys so that newer writers stay readable. Input is untrusted: every read is bounded by
 * len, nesting is limited, and any failure is a status, never a crash.
 * No LLVM here: this file is part of liboxide_runtime too. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "rt_manifest.h"

#define MAX_DEPTH 64

/* ---- the JSON reader ---- */

typedef struct parser {
    const char *s; /* the JSON text: from '{' to the end of the line */
    size_t n, pos;
    uint32_t line; /* PTX line, for messages */
    size_t col0;   /* column of s[0] in that line (0-based) */
    oxide_manifest *m;
    oxide_status st; /* first failure */
    char msg[512];
    int depth;
} parser;

static bool fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(parser *p, const char *fmt, ...) {
    if (p->st != OXIDE_OK)
        return false;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    p->st = OXIDE_ERROR_MANIFEST;
    snprintf(p->msg, sizeof p->msg, "oxide manifest (PTX line %u, column %zu): %s", p->line,
             p->col0 + (p->pos < p->n ? p->pos : p->n) + 1, what);
    return false;
}

static bool oom(parser *p) {
    if (p->st == OXIDE_OK) {
        p->st = OXIDE_ERROR_OUT_OF_MEMORY;
        snprintf(p->msg, sizeof p->msg, "out of memory reading the oxide manifest");
    }
    return false;
}

/* What is at the cursor, for messages: 'x', "end of line". */
static const char *found(parser *p, char *buf, size_t size) {
    if (p->pos >= p->n)
        return "the end of the line";
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

static void ws(parser *p) {
    while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool expect(parser *p, char c) {
    ws(p);
    if (p->pos < p->n && p->s[p->pos] == c) {
        p->pos++;
        return true;
    }
    char b[16];
    return fail(p, "expected '%c', found %s", c, found(p, b, sizeof b));
}

/* Consume c if it is next (after whitespace). */
static bool accept(parser *p, char c) {
    ws(p);
    if (p->pos < p->n && p->s[p->pos] == c) {
        p->pos++;
        return true;
    }
    return false;
}

static int hex(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_u4(parser *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = p->pos < p->n ? hex(p->s[p->pos]) : -1;
        if (h < 0)
            return fail(p, "expected 4 hex digits after \\u");
        v = v << 4 | (unsigned)h;
        p->pos++;
    }
    *out = v;
    return true;
}

static size_t put_utf8(char *d, unsigned cp) {
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xc0 | cp >> 6);
        d[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | cp >> 12);
        d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (char)(0xf0 | cp >> 18);
    d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A JSON string, decoded into the manifest's storage (out may be NULL to only check it). */
static bool string(parser *p, const char **out) {
    ws(p);
    if (p->pos >= p->n || p->s[p->pos] != '"') {
        char b[16];
        return fail(p, "expected a string, found %s", found(p, b, sizeof b));
    }
    size_t start = ++p->pos;
    /* Decoding never makes a string longer than its escaped form. */
    size_t end = start;
    while (end < p->n && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    char *d = NULL;
    size_t len = 0;
    if (out) {
        d = oxide__alloc(&p->m->arena, (end < p->n ? end : p->n) - start + 1);
        if (!d)
            return oom(p);
    }
    for (;;) {
        if (p->pos >= p->n)
            return fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return fail(p, "control byte 0x%02x in a string (it must be escaped)", c);
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->n)
                return fail(p, "unterminated escape in a string");
            char e = p->s[p->pos++];
            unsigned cp;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                if (!read_u4(p, &cp))
                    return false;
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    unsigned lo;
                    if (p->pos + 1 >= p->n || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                        return fail(p, "unpaired UTF-16 surrogate \\u%04x", cp);
                    p->pos += 2;
                    if (!read_u4(p, &lo))
                        return false;
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return fail(p, "unpaired UTF-16 surrogate \\u%04x", cp);
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                    return fail(p, "unpaired UTF-16 surrogate \\u%04x", cp);
                }
                if (cp == 0)
                    return fail(p, "\\u0000 in a string (names cannot hold NUL)");
                break;
            default: p->pos--; return fail(p, "invalid escape '\\%c' in a string", e >= 0x20 && e < 0x7f ? e : '?');
            }
            if (d)
                len += put_utf8(d + len, cp);
            continue;
        }
        if (c < 0x80) {
            if (d)
                d[len++] = (char)c;
            p->pos++;
            continue;
        }
        size_t n = oxide__utf8_len((const unsigned char *)p->s + p->pos, p->n - p->pos);
        if (!n)
            return fail(p, "invalid UTF-8 in a string");
        if (d)
            memcpy(d + len, p->s + p->pos, n), len += n;
        p->pos += n;
    }
    if (out) {
        d[len] = 0;
        *out = d;
    }
    return true;
}

/* A JSON number. *is_uint32 (and *value) when it is a plain integer 0..UINT32_MAX. */
static bool number(parser *p, bool *is_uint32, uint32_t *value) {
    ws(p);
    bool neg = false, integral = true;
    if (p->pos < p->n && p->s[p->pos] == '-')
        neg = true, p->pos++;
    if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
        char b[16];
        return fail(p, "expected a number, found %s", found(p, b, sizeof b));
    }
    uint64_t v = 0;
    bool big = false;
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            return fail(p, "numbers cannot have leading zeros");
    } else {
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
            v = v * 10 + (uint64_t)(p->s[p->pos] - '0');
            if (v > UINT32_MAX)
                big = true, v = UINT32_MAX + (uint64_t)1;
            p->pos++;
        }
    }
    if (p->pos < p->n && p->s[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9')
            return fail(p, "expected a digit after '.'");
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->n && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->n && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9')
            return fail(p, "expected a digit in the exponent");
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    *is_uint32 = integral && !neg && !big;
    *value = (uint32_t)v;
    return true;
}

static bool literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->n - p->pos >= n && !memcmp(p->s + p->pos, word, n)) {
        p->pos += n;
        return true;
    }
    return fail(p, "expected a JSON value");
}

/* Any JSON value, checked and dropped (values of unknown keys). */
static bool skip_value(parser *p) {
    ws(p);
    if (p->pos >= p->n)
        return fail(p, "expected a value, found the end of the line");
    if (++p->depth > MAX_DEPTH)
        return fail(p, "nesting deeper than %d levels", MAX_DEPTH);
    bool ok = true;
    char c = p->s[p->pos];
    if (c == '{') {
        p->pos++;
        if (!accept(p, '}')) {
            do {
                ok = string(p, NULL) && expect(p, ':') && skip_value(p);
            } while (ok && accept(p, ','));
            ok = ok && expect(p, '}');
        }
    } else if (c == '[') {
        p->pos++;
        if (!accept(p, ']')) {
            do {
                ok = skip_value(p);
            } while (ok && accept(p, ','));
            ok = ok && expect(p, ']');
        }
    } else if (c == '"') {
        ok = string(p, NULL);
    } else if (c == ']' || c == '}' || c == ',' || c == ':') {
        char b[16];
        ok = fail(p, "expected a value, found %s", found(p, b, sizeof b));
    } else if (c == 't') {
        ok = literal(p, "true");
    } else if (c == 'f') {
        ok = literal(p, "false");
    } else if (c == 'n') {
        ok = literal(p, "null");
    } else {
        bool u;
        uint32_t v;
        ok = number(p, &u, &v);
    }
    p->depth--;
    return ok;
}

static bool uint_value(parser *p, const char *key, uint32_t *out) {
    bool is_u;
    uint32_t v;
    size_t at = p->pos;
    if (!number(p, &is_u, &v))
        return false;
    if (!is_u) {
        p->pos = at;
        ws(p);
        return fail(p, "\"%s\" must be an integer from 0 to 4294967295", key);
    }
    *out = v;
    return true;
}

static bool bool_value(parser *p, const char *key, bool *out) {
    ws(p);
    if (p->n - p->pos >= 4 && !memcmp(p->s + p->pos, "true", 4)) {
        p->pos += 4;
        *out = true;
        return true;
    }
    if (p->n - p->pos >= 5 && !memcmp(p->s + p->pos, "false", 5)) {
        p->pos += 5;
        *out = false;
        return true;
    }
    return fail(p, "\"%s\" must be true or false", key);
}

static bool uint_array(parser *p, const char *key, uint32_t *out, size_t n) {
    if (!expect(p, '['))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (i && !accept(p, ','))
            return fail(p, "\"%s\" must be an array of %zu integers", key, n);
        if (!uint_value(p, key, &out[i]))
            return false;
    }
    if (!accept(p, ']'))
        return fail(p, "\"%s\" must be an array of %zu integers", key, n);
    return true;
}

/* Walk an object: for each key, call on_key with the cursor at its value. */
typedef bool (*key_fn)(parser *p, const char *key, void *ctx);

static bool object(parser *p, key_fn on_key, void *ctx) {
    if (++p->depth > MAX_DEPTH)
        return fail(p, "nesting deeper than %d levels", MAX_DEPTH);
    if (!expect(p, '{'))
        return false;
    if (!accept(p, '}')) {
        do {
            const char *key;
            if (!string(p, &key) || !expect(p, ':') || !on_key(p, key, ctx))
                return false;
        } while (accept(p, ','));
        if (!expect(p, '}'))
            return false;
    }
    p->depth--;
    return true;
}

/* Keys seen in one object, to refuse duplicates of the keys we read. */
static bool once(parser *p, unsigned *seen, unsigned bit, const char *key) {
    if (*seen & bit)
        return fail(p, "duplicate key \"%s\"", key);
    *seen |= bit;
    return true;
}

static bool scalar_by_name(const char *name, oxide_scalar *out) {
    return oxide__scalar_by_name(name, strlen(name), out);
}

typedef struct param_ctx {
    oxide_iface_param *prm;
    unsigned seen;
    const char *type, *elem, *kind;
    size_t kind_pos, type_pos, elem_pos, rank_pos, tma_pos;
} param_ctx;

enum {
    P_NAME = 1,
    P_KIND = 2,
    P_TYPE = 4,
    P_ELEM = 8,
    P_MUT = 16,
    P_SIZE = 32,
    P_ALIGN = 64,
    P_RANK = 128,
    P_TMA = 256
};

static bool param_key(parser *p, const char *key, void *vctx) {
    param_ctx *c = vctx;
    ws(p);
    if (!strcmp(key, "name"))
        return once(p, &c->seen, P_NAME, key) && string(p, &c->prm->name);
    if (!strcmp(key, "kind"))
        return once(p, &c->seen, P_KIND, key) && (c->kind_pos = p->pos, string(p, &c->kind));
    if (!strcmp(key, "type"))
        return once(p, &c->seen, P_TYPE, key) && (c->type_pos = p->pos, string(p, &c->type));
    if (!strcmp(key, "elem"))
        return once(p, &c->seen, P_ELEM, key) && (c->elem_pos = p->pos, string(p, &c->elem));
    if (!strcmp(key, "mut"))
        return once(p, &c->seen, P_MUT, key) && bool_value(p, key, &c->prm->is_mutable);
    if (!strcmp(key, "size"))
        return once(p, &c->seen, P_SIZE, key) && uint_value(p, key, &c->prm->size);
    if (!strcmp(key, "align"))
        return once(p, &c->seen, P_ALIGN, key) && uint_value(p, key, &c->prm->align);
    if (!strcmp(key, "rank"))
        return once(p, &c->seen, P_RANK, key) && (c->rank_pos = p->pos, uint_value(p, key, &c->prm->rank));
    if (!strcmp(key, "tma")) {
        /* a box per dim: the writer puts it after "rank" */
        if (!once(p, &c->seen, P_TMA, key))
            return false;
        c->tma_pos = p->pos;
        if (!(c->seen & P_RANK) || c->prm->rank < 1 || c->prm->rank > OXIDE__TENSOR_MAX_RANK)
            return fail(p, "\"tma\" of parameter '%s' must follow a \"rank\" of 1 to %u", c->prm->name,
                        OXIDE__TENSOR_MAX_RANK);
        c->prm->tma = true;
        return uint_array(p, key, c->prm->tma_box, c->prm->rank);
    }
    return skip_value(p);
}

/* A tensor parameter: a known tensor element type and a rank of 1..4 (the launch lays out
 * 1 + 2 * rank PTX parameters from it, so a wrong rank would shift every later argument). */
static bool tensor_param(parser *p, param_ctx *c, size_t start) {
    oxide_iface_param *prm = c->prm;
    if (!c->elem) {
        p->pos = start;
        return fail(p, "tensor parameter '%s' has no \"elem\"", prm->name);
    }
    if (!scalar_by_name(c->elem, &prm->elem) || !oxide__tensor_elem_ok(prm->elem)) {
        p->pos = c->elem_pos;
        return fail(p,
                    "tensor parameter '%s' has element type \"%s\" (a tensor holds i8, i32, i64, f16, bf16, f32, "
                    "f8e4m3 or f8e5m2)",
                    prm->name, c->elem);
    }
    if (!(c->seen & P_RANK)) {
        p->pos = start;
        return fail(p, "tensor parameter '%s' has no \"rank\"", prm->name);
    }
    if (prm->rank < 1 || prm->rank > OXIDE__TENSOR_MAX_RANK) {
        p->pos = c->rank_pos;
        return fail(p, "tensor parameter '%s' has \"rank\" %u (a tensor has rank 1 to %u)", prm->name, prm->rank,
                    OXIDE__TENSOR_MAX_RANK);
    }
    int32_t bad = oxide__iface_tma_bad_dim(prm);
    if (bad >= 0) {
        p->pos = c->tma_pos;
        return fail(p, "tensor parameter '%s' has a \"tma\" box of %u elements in dim %d (" OXIDE__TMA_BOX_RULE ")",
                    prm->name, prm->tma_box[bad], bad);
    }
    prm->scalar = prm->elem;
    prm->size = 8;
    prm->align = 8;
    return true;
}

static bool param(parser *p, oxide_iface_param *prm, uint32_t index) {
    param_ctx c = {.prm = prm};
    size_t start = (ws(p), p->pos);
    if (!object(p, param_key, &c))
        return false;
    size_t end = p->pos;
    if (!(c.seen & P_NAME)) {
        p->pos = start;
        return fail(p, "parameter %u has no \"name\"", index + 1);
    }
    if (!(c.seen & P_KIND)) {
        p->pos = start;
        return fail(p, "parameter %u '%s' has no \"kind\"", index + 1, prm->name);
    }
    size_t k = 0;
    const char *known;
    while ((known = oxide_param_kind_name((oxide_param_kind)k)) && strcmp(c.kind, known))
        k++;
    if (!known) {
        p->pos = c.kind_pos;
        return fail(p,
                    "parameter '%s' has unknown kind \"%s\" (this reader knows scalar, slice, ptr, bytes, "
                    "tma_desc, tensor; a newer oxide wrote it?)",
                    prm->name, c.kind);
    }
    prm->kind = (oxide_param_kind)k;
    switch (prm->kind) {
    case OXIDE_PARAM_SCALAR:
        if (!c.type) {
            p->pos = start;
            return fail(p, "scalar parameter '%s' has no \"type\"", prm->name);
        }
        if (!scalar_by_name(c.type, &prm->scalar)) {
            p->pos = c.type_pos;
            return fail(p, "parameter '%s' has unknown type \"%s\"", prm->name, c.type);
        }
        if (oxide__scalar_is_fp8(prm->scalar)) {
            p->pos = c.type_pos;
            return fail(p, "scalar parameter '%s' has type %s, which is a tensor element type only", prm->name, c.type);
        }
        prm->size = prm->align = (uint32_t)oxide_scalar_size(prm->scalar);
        prm->is_mutable = false;
        break;
    case OXIDE_PARAM_SLICE:
    case OXIDE_PARAM_PTR:
        if (!c.elem) {
            p->pos = start;
            return fail(p, "%s parameter '%s' has no \"elem\"", known, prm->name);
        }
        if (!scalar_by_name(c.elem, &prm->scalar)) {
            p->pos = c.elem_pos;
            return fail(p, "parameter '%s' has unknown element type \"%s\"", prm->name, c.elem);
        }
        if (oxide__scalar_is_fp8(prm->scalar)) {
            p->pos = c.elem_pos;
            return fail(p, "%s parameter '%s' has element type %s, which only tensor parameters may have", known,
                        prm->name, c.elem);
        }
        prm->size = prm->kind == OXIDE_PARAM_SLICE ? 16 : 8;
        prm->align = 8;
        break;
    case OXIDE_PARAM_BYTES:
        if (!(c.seen & P_SIZE) || prm->size == 0) {
            p->pos = start;
            return fail(p, "bytes parameter '%s' needs a \"size\" of at least 1", prm->name);
        }
        if (!(c.seen & P_ALIGN))
            prm->align = 1;
        if (prm->align == 0 || (prm->align & (prm->align - 1)) || prm->align > 4096) {
            p->pos = start;
            return fail(p, "bytes parameter '%s' has \"align\" %u (must be a power of two up to 4096)", prm->name,
                        prm->align);
        }
        prm->scalar = OXIDE_SCALAR_U8;
        prm->is_mutable = false;
        break;
    case OXIDE_PARAM_TMA_DESC:
        prm->size = 128;
        prm->align = 64;
        prm->scalar = OXIDE_SCALAR_U8;
        prm->is_mutable = false;
        break;
    case OXIDE_PARAM_TENSOR:
        if (!tensor_param(p, &c, start))
            return false;
        break;
    }
    if (prm->kind != OXIDE_PARAM_TENSOR)
        prm->rank = 0, prm->elem = OXIDE_SCALAR_BOOL, prm->tma = false;
    p->pos = end;
    return true;
}

typedef struct kernel_ctx {
    oxide_iface_kernel *k;
    unsigned seen;
    size_t cluster_pos, block_pos, contract_pos;
} kernel_ctx;

enum {
    K_NAME = 1,
    K_ENTRY = 2,
    K_PARAMS = 4,
    K_BOUNDS = 8,
    K_CLUSTER = 16,
    K_SMEM = 32,
    K_BLOCK = 64,
    K_CONTRACT = 128,
    K_TMA_ENTRY = 256,
    K_TMA_ONLY = 512,
    K_PERSISTENT = 1024
};

/* "contract": its keys set their OXIDE_CONTRACT_* bit, which also refuses duplicates. */
static bool contract_key(parser *p, const char *key, void *vc) {
    oxide_launch_contract *c = vc;
    if (!strcmp(key, "domain"))
        return once(p, &c->fields, OXIDE_CONTRACT_DOMAIN, key) && uint_value(p, key, &c->domain);
    if (!strcmp(key, "block"))
        return once(p, &c->fields, OXIDE_CONTRACT_BLOCK, key) && uint_array(p, key, c->block, 3);
    if (!strcmp(key, "dynamic_shared")) {
        uint32_t r[2];
        if (!once(p, &c->fields, OXIDE_CONTRACT_SMEM, key) || !uint_array(p, key, r, 2))
            return false;
        c->smem_min = r[0], c->smem_max = r[1];
        return true;
    }
    if (!strcmp(key, "dynamic_shared_alignment"))
        return once(p, &c->fields, OXIDE_CONTRACT_SMEM_ALIGN, key) && uint_value(p, key, &c->smem_align);
    if (!strcmp(key, "min_compute_capability"))
        return once(p, &c->fields, OXIDE_CONTRACT_MIN_CC, key) && uint_array(p, key, c->min_cc, 2);
    return skip_value(p);
}

static bool params_array(parser *p, oxide_iface_kernel *k) {
    if (!expect(p, '['))
        return false;
    uint32_t cap = 0;
    if (accept(p, ']'))
        return true;
    do {
        if (k->nparams == cap) {
            if (cap >= 1u << 20)
                return fail(p, "too many parameters");
            cap = cap ? cap * 2 : 8;
            oxide_iface_param *np = oxide__alloc(&p->m->arena, cap * sizeof *np);
            if (!np)
                return oom(p);
            if (k->nparams)
                memcpy(np, k->params, k->nparams * sizeof *np);
            k->params = np;
        }
        if (!param(p, &k->params[k->nparams], k->nparams))
            return false;
        const oxide_iface_param *prm = &k->params[k->nparams];
        k->params[k->nparams].first_value = k->nptx;
        k->nptx += oxide__iface_ptx_parts(prm);
        k->nparams++;
    } while (accept(p, ','));
    return expect(p, ']');
}

static bool kernel_key(parser *p, const char *key, void *vctx) {
    kernel_ctx *c = vctx;
    oxide_iface_kernel *k = c->k;
    ws(p);
    if (!strcmp(key, "name"))
        return once(p, &c->seen, K_NAME, key) && string(p, &k->name);
    if (!strcmp(key, "entry"))
        return once(p, &c->seen, K_ENTRY, key) && string(p, &k->entry);
    if (!strcmp(key, "params"))
        return once(p, &c->seen, K_PARAMS, key) && params_array(p, k);
    if (!strcmp(key, "launch_bounds"))
        return once(p, &c->seen, K_BOUNDS, key) && uint_array(p, key, k->launch_bounds, 2);
    if (!strcmp(key, "cluster"))
        return once(p, &c->seen, K_CLUSTER, key) && (c->cluster_pos = p->pos, uint_array(p, key, k->cluster, 3));
    if (!strcmp(key, "dyn_smem"))
        return once(p, &c->seen, K_SMEM, key) && uint_value(p, key, &k->dyn_smem);
    if (!strcmp(key, "block"))
        return once(p, &c->seen, K_BLOCK, key) && (c->block_pos = p->pos, uint_array(p, key, k->block, 3));
    if (!strcmp(key, "contract"))
        return once(p, &c->seen, K_CONTRACT, key) && (c->contract_pos = p->pos, object(p, contract_key, &k->contract));
    if (!strcmp(key, "tma_entry"))
        return once(p, &c->seen, K_TMA_ENTRY, key) && string(p, &k->tma_entry);
    if (!strcmp(key, "tma_only"))
        return once(p, &c->seen, K_TMA_ONLY, key) && bool_value(p, key, &k->tma_only);
    if (!strcmp(key, "persistent"))
        return once(p, &c->seen, K_PERSISTENT, key) && bool_value(p, key, &k->persistent);
    return skip_value(p);
}

static bool kernel(parser *p, oxide_iface_kernel *k, size_t index) {
    kernel_ctx c = {.k = k};
    k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
    size_t start = (ws(p), p->pos);
    if (!object(p, kernel_key, &c))
        return false;
    size_t end = p->pos;
    p->pos = start;
    if (!(c.seen & K_NAME) || !*k->name)
        return fail(p, "kernel %zu has no \"name\"", index + 1);
    if (!(c.seen & K_ENTRY))
        k->entry = k->name;
    if (!*k->entry)
        return fail(p, "kernel '%s' has an empty \"entry\"", k->name);
    if (!(c.seen & K_PARAMS))
        return fail(p, "kernel '%s' has no \"params\"", k->name);
    if (!k->cluster[0] || !k->cluster[1] || !k->cluster[2]) {
        p->pos = c.cluster_pos;
        return fail(p, "kernel '%s' has a 0 in \"cluster\" (each dimension is at least 1)", k->name);
    }
    /* Each dimension is bounded before the product, which could otherwise wrap in 32 bits. */
    const uint32_t *b = k->block;
    if ((c.seen & K_BLOCK) &&
        (!b[0] || !b[1] || !b[2] || b[0] > 1024 || b[1] > 1024 || b[2] > 64 || b[0] * b[1] * b[2] > 1024)) {
        p->pos = c.block_pos;
        return fail(p,
                    "kernel '%s' has \"block\" [%u,%u,%u] (a block has 1 to 1024 threads in all, at most 1024, "
                    "1024 and 64 in x, y and z, and none of 0)",
                    k->name, b[0], b[1], b[2]);
    }
    if (k->persistent)
        k->nptx += 3; /* the grid's, after the interface's (iface.h) */
    char why[200];
    if (oxide__contract_invalid(&k->contract, why, sizeof why)) {
        p->pos = c.contract_pos;
        return fail(p, "kernel '%s' has a \"contract\" with %s", k->name, why);
    }
    p->pos = end;
    return true;
}

typedef struct root_ctx {
    unsigned seen;
} root_ctx;

/* Kernel names and entries seen so far, for the duplicate checks: open addressing over kernel
 * indices, so a manifest of n kernels costs O(n), not O(n^2). */
typedef struct name_set {
    uint32_t *slot; /* kernel index + 1; 0 is empty */
    size_t cap;     /* a power of two, at least twice the entries */
} name_set;

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *key_of(const oxide_iface_kernel *k, bool entry) { return entry ? k->entry : k->name; }

/* Add kernel i under its name (or entry); *other gets an earlier kernel with the same one. */
static bool set_add(name_set *set, const oxide_iface_kernel *ks, size_t i, bool entry, size_t *other) {
    if ((i + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 64;
        uint32_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return false;
        for (size_t j = 0; j < set->cap; j++)
            if (set->slot[j]) {
                size_t h = (size_t)name_hash(key_of(&ks[set->slot[j] - 1], entry)) & (cap - 1);
                while (slot[h])
                    h = (h + 1) & (cap - 1);
                slot[h] = set->slot[j];
            }
        free(set->slot);
        set->slot = slot;
        set->cap = cap;
    }
    const char *key = key_of(&ks[i], entry);
    size_t h = (size_t)name_hash(key) & (set->cap - 1);
    for (; set->slot[h]; h = (h + 1) & (set->cap - 1))
        if (!strcmp(key_of(&ks[set->slot[h] - 1], entry), key)) {
            *other = set->slot[h] - 1;
            return true;
        }
    set->slot[h] = (uint32_t)(i + 1);
    *other = i;
    return true;
}

/* Refuse kernel i if an earlier one has its name, or its entry (two names for one .entry would
 * let one kernel's name launch another's code). */
static bool check_unique(parser *p, name_set sets[2], size_t i) {
    const oxide_iface_kernel *ks = p->m->kernels;
    size_t other;
    if (!set_add(&sets[0], ks, i, false, &other))
        return oom(p);
    if (other != i)
        return fail(p, "two kernels are named '%s'", ks[i].name);
    if (!set_add(&sets[1], ks, i, true, &other))
        return oom(p);
    if (other != i)
        return fail(p, "kernels '%s' and '%s' have the same entry '%s'", ks[other].name, ks[i].name, ks[i].entry);
    return true;
}

static bool kernels_items(parser *p, name_set sets[2]) {
    oxide_manifest *m = p->m;
    size_t cap = 0;
    do {
        if (m->nkernels == cap) {
            if (cap >= 1u << 20)
                return fail(p, "too many kernels");
            cap = cap ? cap * 2 : 8;
            oxide_iface_kernel *nk = oxide__alloc(&m->arena, cap * sizeof *nk);
            if (!nk)
                return oom(p);
            if (m->nkernels)
                memcpy(nk, m->kernels, m->nkernels * sizeof *nk);
            m->kernels = nk;
        }
        size_t start = (ws(p), p->pos);
        if (!kernel(p, &m->kernels[m->nkernels], m->nkernels))
            return false;
        size_t end = p->pos;
        p->pos = start;
        if (!check_unique(p, sets, m->nkernels))
            return false;
        p->pos = end;
        m->nkernels++;
    } while (accept(p, ','));
    return true;
}

static bool kernels_array(parser *p) {
    if (!expect(p, '['))
        return false;
    if (accept(p, ']'))
        return true;
    name_set sets[2] = {{0}};
    bool ok = kernels_items(p, sets);
    free(sets[0].slot);
    free(sets[1].slot);
    return ok && expect(p, ']');
}

enum { R_OXIDE = 1, R_TARGET = 2, R_KERNELS = 4 };

static bool root_key(parser *p, const char *key, void *vctx) {
    root_ctx *c = vctx;
    ws(p);
    if (!strcmp(key, "oxide"))
        return once(p, &c->seen, R_OXIDE, key) && string(p, &p->m->oxide_version);
    if (!strcmp(key, "target"))
        return once(p, &c->seen, R_TARGET, key) && string(p, &p->m->target);
    if (!strcmp(key, "kernels"))
        return once(p, &c->seen, R_KERNELS, key) && kernels_array(p);
    return skip_value(p);
}

static bool root(parser *p) {
    root_ctx c = {0};
    ws(p);
    if (p->pos >= p->n || p->s[p->pos] != '{') {
        char b[16];
        return fail(p, "expected '{' to start the manifest's JSON object, found %s", found(p, b, sizeof b));
    }
    if (!object(p, root_key, &c))
        return false;
    ws(p);
    if (p->pos < p->n) {
        char b[16];
        return fail(p, "unexpected %s after the manifest's JSON object", found(p, b, sizeof b));
    }
    if (!(c.seen & R_KERNELS)) {
        p->pos = 0;
        return fail(p, "the manifest has no \"kernels\"");
    }
    if (!p->m->oxide_version)
        p->m->oxide_version = "";
    if (!p->m->target)
        p->m->target = "";
    return true;
}

/* ---- finding the line ---- */

static const char PREFIX[] = "oxide.manifest.v";

/* If line (without its newline) is a manifest line, *version gets its major and *json the
 * offset of what follows the tag. */
static bool is_manifest_line(const char *line, size_t n, unsigned *version, size_t *json) {
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (n - i < 2 || line[i] != '/' || line[i + 1] != '/')
        return false;
    i += 2;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t pl = sizeof PREFIX - 1;
    if (n - i < pl || memcmp(line + i, PREFIX, pl))
        return false;
    i += pl;
    if (i >= n || line[i] < '0' || line[i] > '9')
        return false;
    unsigned v = 0;
    while (i < n && line[i] >= '0' && line[i] <= '9') {
        if (v < 100000)
            v = v * 10 + (unsigned)(line[i] - '0');
        i++;
    }
    /* The tag ends at whitespace or the line's end: "oxide.manifest.v1x" is not a manifest. */
    if (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
        return false;
    *version = v;
    *json = i;
    return true;
}

oxide_status oxide__manifest_read(const char *ptx, size_t len, oxide_manifest **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_parse: out is NULL");
    if (!ptx && len)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_parse: ptx is NULL");
    const char *line1 = NULL;
    size_t n1 = 0, json1 = 0;
    uint32_t lineno = 0, found_line = 0, other_line = 0;
    unsigned other_version = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(ptx + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - ptx) : len;
        lineno++;
        unsigned v;
        size_t json;
        if (is_manifest_line(ptx + pos, end - pos, &v, &json)) {
            if (v == 1) {
                if (line1)
                    return oxide__fail(OXIDE_ERROR_MANIFEST,
                                       "oxide manifest: two manifest lines (PTX lines %u and %u); a module has one",
                                       found_line, lineno);
                line1 = ptx + pos;
                n1 = end - pos;
                json1 = json;
                found_line = lineno;
            } else if (!other_line) {
                other_line = lineno;
                other_version = v;
            }
        }
        pos = end + 1;
    }
    if (!line1) {
        if (other_line)
            return oxide__fail(OXIDE_ERROR_MANIFEST,
                               "oxide manifest (PTX line %u): version %u, which this oxide (%s, reads version 1) "
                               "does not know; use a newer oxide",
                               other_line, other_version, oxide_version());
        *out = NULL;
        return OXIDE_OK;
    }
    oxide_manifest *m = calloc(1, sizeof *m);
    if (!m)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory reading the oxide manifest");
    m->line = found_line;
    parser p = {.s = line1 + json1, .n = n1 - json1, .line = found_line, .col0 = json1, .m = m};
    if (!root(&p)) {
        oxide_manifest_destroy(m);
        return oxide__fail(p.st, "%s", p.msg);
    }
    *out = m;
    return OXIDE_OK;
}

/* ---- public API (the queries: lib/manifest_query.c) ---- */

oxide_status oxide_manifest_parse(const char *ptx, size_t len, oxide_manifest **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_parse: out is NULL");
    oxide_manifest *m = NULL;
    oxide_status st = oxide__manifest_read(ptx, len, &m);
    if (st != OXIDE_OK)
        return st;
    if (!m)
        return oxide__fail(OXIDE_ERROR_MANIFEST,
                           "no oxide manifest in the PTX (a line '// oxide.manifest.v1 {...}'): was it made by "
                           "oxide?");
    *out = m;
    return OXIDE_OK;
}
