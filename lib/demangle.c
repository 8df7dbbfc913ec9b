/* Rust v0 symbol demangling (rustc -C symbol-mangling-version=v0), enough for messages and
 * readable kernel names: paths, generic arguments, basic and compound types, constants and
 * back-references. Lifetimes, the impl path of inherent methods and punycode are not spelled
 * out. Needs no LLVM, so the unit tests drive it directly. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "demangle.h"

/* Real symbols take a few hundred steps; the limit only stops crafted back-reference chains. */
enum { DM_MAX_STEPS = 20000 };

typedef struct dm {
    const char *s; /* after "_R" */
    size_t n, pos;
    char *out;
    size_t cap, len;
    int depth;
    unsigned steps; /* back-references can revisit a part many times: a budget keeps it linear */
    bool bad;
} dm;

static void dm_put(dm *d, const char *s, size_t n) {
    for (size_t i = 0; i < n && d->len + 1 < d->cap; i++)
        d->out[d->len++] = s[i];
    d->out[d->len] = 0;
}
static void dm_puts(dm *d, const char *s) { dm_put(d, s, strlen(s)); }
static char dm_peek(dm *d) { return d->pos < d->n ? d->s[d->pos] : 0; }
static char dm_next(dm *d) { return d->pos < d->n ? d->s[d->pos++] : (d->bad = true, 0); }
static bool dm_eat(dm *d, char c) {
    if (dm_peek(d) == c) {
        d->pos++;
        return true;
    }
    return false;
}

static uint64_t dm_base62(dm *d) {
    if (dm_eat(d, '_'))
        return 0;
    uint64_t v = 0;
    for (;;) {
        char c = dm_next(d);
        if (c == '_')
            return v + 1;
        int x = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'z' ? c - 'a' + 10
                : c >= 'A' && c <= 'Z' ? c - 'A' + 36
                                       : -1;
        if (x < 0) {
            d->bad = true;
            return 0;
        }
        v = v * 62 + (uint64_t)x;
    }
}
static uint64_t dm_disamb(dm *d) { return dm_eat(d, 's') ? dm_base62(d) + 1 : 0; }

static void dm_ident(dm *d, const char **p, size_t *n) {
    bool puny = dm_eat(d, 'u');
    size_t len = 0;
    if (!(dm_peek(d) >= '0' && dm_peek(d) <= '9')) {
        d->bad = true;
        *p = "", *n = 0;
        return;
    }
    /* a length is "0" or has no leading zero: "03foo" is an empty name, then "3foo" */
    if (!dm_eat(d, '0'))
        while (dm_peek(d) >= '0' && dm_peek(d) <= '9')
            len = len * 10 + (size_t)(dm_next(d) - '0');
    dm_eat(d, '_');
    if (d->pos + len > d->n) {
        d->bad = true;
        len = 0;
    }
    *p = d->s + d->pos, *n = len;
    d->pos += len;
    (void)puny; /* punycode identifiers are printed raw */
}

static void dm_path(dm *d, bool in_value);
static void dm_type(dm *d);

static bool dm_backref(dm *d, void (*fn)(dm *), bool in_value, void (*pfn)(dm *, bool)) {
    if (!dm_eat(d, 'B'))
        return false;
    uint64_t at = dm_base62(d);
    if (at >= d->pos || d->depth > 40) {
        d->bad = true;
        return true;
    }
    size_t save = d->pos;
    d->pos = (size_t)at;
    d->depth++;
    if (fn)
        fn(d);
    else
        pfn(d, in_value);
    d->depth--;
    d->pos = save;
    return true;
}

static void dm_const(dm *d) {
    if (dm_backref(d, dm_const, false, NULL))
        return;
    if (dm_eat(d, 'p')) {
        dm_puts(d, "_");
        return;
    }
    char t = dm_next(d); /* type of the constant */
    bool neg = dm_eat(d, 'n');
    uint64_t v = 0;
    while (dm_peek(d) && dm_peek(d) != '_') {
        char c = dm_next(d);
        v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    dm_eat(d, '_');
    char buf[32];
    if (t == 'b')
        snprintf(buf, sizeof buf, "%s", v ? "true" : "false");
    else
        snprintf(buf, sizeof buf, "%s%llu", neg ? "-" : "", (unsigned long long)v);
    dm_puts(d, buf);
}

static void dm_generic_args(dm *d) {
    bool first = true;
    while (!d->bad && !dm_eat(d, 'E')) {
        if (dm_eat(d, 'L')) { /* lifetimes are not printed */
            dm_base62(d);
            continue;
        }
        if (!first)
            dm_puts(d, ", ");
        first = false;
        if (dm_eat(d, 'K'))
            dm_const(d);
        else
            dm_type(d);
    }
}

/* Types up to 'E', comma-separated (tuple members, fn parameters). */
static void dm_type_list(dm *d) {
    bool first = true;
    while (!d->bad && !dm_eat(d, 'E')) {
        if (!first)
            dm_puts(d, ", ");
        first = false;
        dm_type(d);
    }
}

static void dm_type(dm *d) {
    static const char *basic[26] = {"i8",    "bool", "char", "f64", "str",  "f32",  NULL,  "u8", "isize",
                                    "usize", NULL,   "i32",  "u32", "i128", "u128", "_",   NULL, NULL,
                                    "i16",   "u16",  "()",   "...", NULL,   "i64",  "u64", "!"};
    if (d->bad || d->depth > 60 || ++d->steps > DM_MAX_STEPS) {
        d->bad = true;
        return;
    }
    d->depth++;
    char c = dm_peek(d);
    if (c >= 'a' && c <= 'z' && basic[c - 'a']) {
        d->pos++;
        dm_puts(d, basic[c - 'a']);
    } else if (dm_eat(d, 'A')) {
        dm_puts(d, "[");
        dm_type(d);
        dm_puts(d, "; ");
        dm_const(d);
        dm_puts(d, "]");
    } else if (dm_eat(d, 'S')) {
        dm_puts(d, "[");
        dm_type(d);
        dm_puts(d, "]");
    } else if (dm_eat(d, 'T')) {
        dm_puts(d, "(");
        dm_type_list(d);
        dm_puts(d, ")");
    } else if (c == 'R' || c == 'Q') {
        d->pos++;
        if (dm_eat(d, 'L'))
            dm_base62(d);
        dm_puts(d, c == 'R' ? "&" : "&mut ");
        dm_type(d);
    } else if (c == 'P' || c == 'O') {
        d->pos++;
        dm_puts(d, c == 'P' ? "*const " : "*mut ");
        dm_type(d);
    } else if (dm_eat(d, 'F')) {
        if (dm_eat(d, 'G'))
            dm_base62(d);
        if (dm_eat(d, 'U'))
            dm_puts(d, "unsafe ");
        if (dm_eat(d, 'K')) {
            if (!dm_eat(d, 'C')) {
                const char *p;
                size_t n;
                dm_ident(d, &p, &n);
            }
            dm_puts(d, "extern ");
        }
        dm_puts(d, "fn(");
        dm_type_list(d);
        dm_puts(d, ") -> ");
        dm_type(d);
    } else if (dm_eat(d, 'D')) {
        dm_puts(d, "dyn ");
        if (dm_eat(d, 'G'))
            dm_base62(d);
        bool first = true;
        while (!d->bad && !dm_eat(d, 'E')) {
            if (!first)
                dm_puts(d, " + ");
            first = false;
            dm_path(d, false);
            while (dm_eat(d, 'p')) {
                const char *p;
                size_t n;
                dm_ident(d, &p, &n);
                dm_type(d);
            }
        }
        if (dm_eat(d, 'L'))
            dm_base62(d);
    } else if (!dm_backref(d, dm_type, false, NULL)) {
        dm_path(d, false);
    }
    d->depth--;
}

static void dm_path_v(dm *d, bool in_value) { dm_path(d, in_value); }

static void dm_path(dm *d, bool in_value) {
    if (d->bad || d->depth > 60 || ++d->steps > DM_MAX_STEPS) {
        d->bad = true;
        return;
    }
    d->depth++;
    char c = dm_next(d);
    const char *p;
    size_t n;
    switch (c) {
    case 'C':
        dm_disamb(d);
        dm_ident(d, &p, &n);
        dm_put(d, p, n);
        break;
    case 'M':
        dm_disamb(d);
        { /* the impl's path is not printed */
            size_t save = d->len;
            dm_path(d, false);
            d->len = save;
            d->out[d->len] = 0;
        }
        dm_puts(d, "<");
        dm_type(d);
        dm_puts(d, ">");
        break;
    case 'X':
        dm_disamb(d);
        {
            size_t save = d->len;
            dm_path(d, false);
            d->len = save;
            d->out[d->len] = 0;
        }
        /* fallthrough */
    case 'Y':
        dm_puts(d, "<");
        dm_type(d);
        dm_puts(d, " as ");
        dm_path(d, false);
        dm_puts(d, ">");
        break;
    case 'N': {
        char ns = dm_next(d);
        dm_path(d, in_value);
        uint64_t dis = dm_disamb(d);
        dm_ident(d, &p, &n);
        if (ns >= 'A' && ns <= 'Z') {
            char buf[48];
            dm_puts(d, "::{");
            dm_puts(d, ns == 'C' ? "closure" : ns == 'S' ? "shim" : "?");
            if (n) {
                dm_puts(d, ":");
                dm_put(d, p, n);
            }
            snprintf(buf, sizeof buf, "#%llu}", (unsigned long long)dis);
            dm_puts(d, buf);
        } else {
            dm_puts(d, "::");
            dm_put(d, p, n);
        }
        break;
    }
    case 'I':
        dm_path(d, in_value);
        dm_puts(d, in_value ? "::<" : "<");
        dm_generic_args(d);
        dm_puts(d, ">");
        break;
    case 'B':
        d->pos--;
        dm_backref(d, NULL, in_value, dm_path_v);
        break;
    default: d->bad = true;
    }
    d->depth--;
}

const char *oxide__demangle(const char *sym, char *buf, size_t cap) {
    size_t n = strlen(sym);
    if (n > 2 && sym[0] == '_' && sym[1] == 'R') {
        dm d = {.s = sym + 2, .n = n - 2, .out = buf, .cap = cap};
        buf[0] = 0;
        if (dm_peek(&d) >= '0' && dm_peek(&d) <= '9')
            while (dm_peek(&d) >= '0' && dm_peek(&d) <= '9')
                d.pos++;
        dm_path(&d, true);
        if (!d.bad)
            return buf;
    }
    snprintf(buf, cap, "%s", sym);
    return buf;
}
