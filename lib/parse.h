/* What the text parser's files share: lib/parse_lex.c (tokens, numbers, error messages),
 * lib/parse.c (the module level: types, values, globals, signatures) and lib/parse_body.c
 * (function bodies: blocks and instructions). Not installed. */
#ifndef OXIDE_PARSE_H
#define OXIDE_PARSE_H

#include "ir.h"

typedef enum { T_EOF, T_NL, T_IDENT, T_NUM, T_VAL, T_BLK, T_SYM, T_STR, T_ARROW, T_PUNCT } tkind;

typedef struct {
    tkind k;
    uint32_t pos, len, line, col;
} tok;

typedef struct {
    oxide_context *ctx;
    oxide_module *mod;
    const char *src;
    size_t len;
    tok *t;
    uint32_t nt, cap, i;
    oxide_arena scratch; /* everything temporary; freed in one go */
} P;

/* A PARSE error at t ("line:col: message"). */
oxide_status perr(const tok *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
oxide_status oom(void);
/* A builder call failed: keep its message, add the position. */
oxide_status berr(const tok *t, oxide_status st);
/* t for messages: 'text' (cut at 32 characters), "end of line", ... out holds the text. */
const char *describe(P *p, const tok *t, char out[48]);
/* Splits p->src into p->t, ending with T_EOF. */
oxide_status lex(P *p);
void skip_nl(P *p);
oxide_status expect(P *p, char c);
oxide_status expect_eol(P *p);
/* Number tokens: each fails naming what it found. */
bool num_u64(const char *s, uint32_t n, uint64_t *out); /* decimal digits only, no overflow */
oxide_status get_u64(P *p, uint64_t max, uint64_t *out);
oxide_status get_u32(P *p, uint32_t *out);
oxide_status get_i64(P *p, int64_t *out);
oxide_status get_double(P *p, double *out);

/* One function while its text is read: lib/parse.c fills it from the signature, lib/parse_body.c
 * reads the body. */
typedef struct {
    oxide_function *fn;
    uint32_t body, end;  /* tokens after "{" NL, up to the closing "}" */
    oxide_strmap vals;   /* %key -> oxide_value */
    oxide_strmap blocks; /* ^key -> pblock (lib/parse_body.c) */
    oxide_strmap owner;  /* %key -> 1 + index of the block defining it */
} pfunc;

/* lib/parse.c, for the bodies. */
/* The name after a sigil (%x, ^x, @x), NUL-terminated, in scratch memory. */
char *sym_name(P *p, const tok *t);
/* Insert or overwrite. Keys must outlive the map (they point into the source or scratch). */
oxide_status map_put(P *p, oxide_strmap *m, const char *k, uint32_t n, void *v);
oxide_status parse_type(P *p, int depth, oxide_type **out);
/* %123 is an unnamed value (the printer's numbering, *name = NULL); %name sets a name. */
oxide_status value_key(P *p, const tok *t, const char **name);
/* Fails if t's %name is already defined; checked before the builder sees the name, so that the
 * message points at the name. */
oxide_status fresh(P *p, pfunc *pf, const tok *t);
oxide_status define_tok(P *p, pfunc *pf, const tok *t, oxide_value *v);
/* Reads a %name and finds its value. */
oxide_status use_value(P *p, pfunc *pf, oxide_value **out);
/* lib/parse_body.c: the blocks and instructions of pf, once every signature is known. */
oxide_status parse_body(P *p, pfunc *pf);

static inline bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static inline bool is_digit(int c) { return c >= '0' && c <= '9'; }
static inline int hexval(char c) {
    int l = c | 32;
    return is_digit(c) ? c - '0' : l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

static inline tok *cur(P *p) { return &p->t[p->i]; }
static inline tok *peek(P *p) { return &p->t[p->i + (p->t[p->i].k != T_EOF)]; }
static inline void adv(P *p) {
    if (p->t[p->i].k != T_EOF)
        p->i++;
}
static inline const char *txt(P *p, const tok *t) { return p->src + t->pos; }
static inline bool is_punct(P *p, const tok *t, char c) { return t->k == T_PUNCT && p->src[t->pos] == c; }
static inline bool is_word(P *p, const tok *t, const char *w) {
    return t->k == T_IDENT && strlen(w) == t->len && !memcmp(txt(p, t), w, t->len);
}

#endif
