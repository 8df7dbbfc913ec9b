/* The IR text parser's tokens (lib/parse.h): the lexer, number tokens and error messages. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* ---- errors ---- */

oxide_status perr(const tok *t, const char *fmt, ...) {
    char msg[1024]; /* formatted first: fmt's arguments may point into the last-error buffer */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return oxide__fail(OXIDE_ERROR_PARSE, "%u:%u: %s", t->line, t->col, msg);
}

oxide_status oom(void) { return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_module_parse: out of memory"); }

oxide_status berr(const tok *t, oxide_status st) {
    if (st == OXIDE_ERROR_OUT_OF_MEMORY)
        return st;
    return perr(t, "%s", oxide_last_error());
}

const char *describe(P *p, const tok *t, char out[48]) {
    switch (t->k) {
    case T_EOF: return "end of input";
    case T_NL: return "end of line";
    case T_STR: return "a string";
    default:
        snprintf(out, 48, "'%.*s%s'", (int)(t->len > 32 ? 32 : t->len), p->src + t->pos, t->len > 32 ? "..." : "");
        return out;
    }
}

/* ---- lexer ---- */

static bool is_namec(int c) { return is_alpha(c) || is_digit(c) || c == '.'; }

static oxide_status push(P *p, tkind k, size_t pos, size_t len, uint32_t line, uint32_t col) {
    if (p->nt == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 1024;
        tok *t = realloc(p->t, cap * sizeof *t);
        if (!t)
            return oom();
        p->t = t;
        p->cap = cap;
    }
    p->t[p->nt++] = (tok){k, (uint32_t)pos, (uint32_t)len, line, col};
    return OXIDE_OK;
}

/* Newlines end items. Inside () and [] a line may break after '(', '[' or ',', so long lists
 * wrap; breaking nowhere else keeps an unclosed '(' from swallowing the lines after it. */
oxide_status lex(P *p) {
    const char *s = p->src;
    size_t n = p->len, i = 0;
    uint32_t line = 1, col = 1;
    int depth = 0;
    oxide_status st;
    while (i < n) {
        char c = s[i];
        size_t j = i + 1;
        tkind k = T_PUNCT;
        if (c == ' ' || c == '\t' || c == '\r') {
            i++, col++;
            continue;
        }
        if (c == ';') {
            while (i < n && s[i] != '\n')
                i++;
            continue;
        }
        if (c == '\n') {
            tok *last = p->nt ? &p->t[p->nt - 1] : NULL;
            bool wrap = depth > 0 && last && last->k == T_PUNCT && strchr("([,", s[last->pos]);
            if (last && last->k != T_NL && !wrap && (st = push(p, T_NL, i, 1, line, col)))
                return st;
            i++, line++, col = 1;
            continue;
        }
        tok here = {T_EOF, (uint32_t)i, 1, line, col};
        if (c == '%' || c == '^' || c == '@') {
            while (j < n && (is_namec(s[j]) || (c == '@' && s[j] == '$'))) /* '$': Rust and LLVM symbols */
                j++;
            if (j == i + 1)
                return perr(&here, "expected a name after '%c'", c);
            k = c == '%' ? T_VAL : c == '^' ? T_BLK : T_SYM;
        } else if (is_alpha(c)) {
            while (j < n && is_namec(s[j]))
                j++;
            k = T_IDENT;
        } else if (is_digit(c) || (c == '-' && j < n && (is_digit(s[j]) || is_alpha(s[j])))) {
            /* Numbers, hex blobs, floats with exponents, and -inf: read greedily, judge later. */
            bool hex = s[i + (c == '-')] == '0' && i + (c == '-') + 1 < n && (s[i + (c == '-') + 1] | 32) == 'x';
            while (j < n && (is_namec(s[j]) || ((s[j] == '+' || s[j] == '-') && !hex && (s[j - 1] | 32) == 'e')))
                j++;
            k = T_NUM;
        } else if (c == '-' && j < n && s[j] == '>') {
            j++;
            k = T_ARROW;
        } else if (c == '"') {
            while (j < n && s[j] != '"') {
                if (s[j] == '\n')
                    break;
                if ((unsigned char)s[j] < 0x20 && s[j] != '\t') {
                    tok at = {T_EOF, 0, 0, line, col + (uint32_t)(j - i)};
                    return perr(&at, "control character 0x%02x in a string: write it as \\x%02x", (unsigned char)s[j],
                                (unsigned char)s[j]);
                }
                j += s[j] == '\\' && j + 1 < n && s[j + 1] != '\n' ? 2 : 1;
            }
            if (j >= n || s[j] != '"')
                return perr(&here, "unterminated string");
            j++;
            k = T_STR;
        } else if (c && strchr("(){}[]<>,:=", c)) {
            depth += c == '(' || c == '[';
            if ((c == ')' || c == ']') && depth > 0)
                depth--;
        } else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) {
            return perr(&here, "unexpected character '%c'", c);
        } else {
            return perr(&here, "unexpected byte 0x%02x", (unsigned char)c);
        }
        if ((st = push(p, k, i, j - i, line, col)))
            return st;
        col += (uint32_t)(j - i);
        i = j;
    }
    return push(p, T_EOF, n, 0, line, col);
}

/* ---- token helpers ---- */

void skip_nl(P *p) {
    while (cur(p)->k == T_NL)
        adv(p);
}

oxide_status expect(P *p, char c) {
    char d[48];
    if (!is_punct(p, cur(p), c))
        return perr(cur(p), "expected '%c', found %s", c, describe(p, cur(p), d));
    adv(p);
    return OXIDE_OK;
}

oxide_status expect_eol(P *p) {
    char d[48];
    if (cur(p)->k == T_EOF)
        return OXIDE_OK;
    if (cur(p)->k != T_NL)
        return perr(cur(p), "expected end of line, found %s", describe(p, cur(p), d));
    adv(p);
    return OXIDE_OK;
}

/* ---- numbers ---- */

bool num_u64(const char *s, uint32_t n, uint64_t *out) {
    uint64_t v = 0;
    if (!n)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!is_digit(s[i]) || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static bool num_i64(const char *s, uint32_t n, int64_t *out) {
    bool neg = n && s[0] == '-';
    uint64_t v;
    if (!num_u64(s + neg, n - neg, &v) || v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

oxide_status get_u64(P *p, uint64_t max, uint64_t *out) {
    char d[48];
    tok *t = cur(p);
    uint64_t v;
    if (t->k != T_NUM || !num_u64(txt(p, t), t->len, &v) || v > max)
        return perr(t, "expected an integer from 0 to %llu, found %s", (unsigned long long)max, describe(p, t, d));
    adv(p);
    *out = v;
    return OXIDE_OK;
}

oxide_status get_u32(P *p, uint32_t *out) {
    uint64_t v;
    oxide_status st = get_u64(p, UINT32_MAX, &v);
    if (!st)
        *out = (uint32_t)v;
    return st;
}

oxide_status get_i64(P *p, int64_t *out) {
    char d[48];
    tok *t = cur(p);
    if (t->k != T_NUM || !num_i64(txt(p, t), t->len, out))
        return perr(t, "expected a decimal 64-bit integer, found %s", describe(p, t, d));
    adv(p);
    return OXIDE_OK;
}

/* Decimal floats as the printer writes them, plus inf, -inf and nan. strtod follows
 * LC_NUMERIC: if the host program chose a locale whose decimal point is ',', the '.' is
 * swapped and the number read again (no locale query: localeconv is not thread-safe). */
oxide_status get_double(P *p, double *out) {
    char d[48], tmp[128];
    tok *t = cur(p);
    const char *s = txt(p, t);
    bool ok = (t->k == T_NUM || t->k == T_IDENT) && t->len < sizeof tmp;
    if (ok && (is_word(p, t, "inf") || (t->len == 4 && !memcmp(s, "-inf", 4)))) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
    } else if (ok && is_word(p, t, "nan")) {
        *out = NAN;
    } else {
        for (uint32_t i = 0; ok && i < t->len; i++)
            ok = is_digit(s[i]) || strchr(".eE+-", s[i]);
        char *end = NULL;
        if (ok) {
            memcpy(tmp, s, t->len);
            tmp[t->len] = 0;
            *out = strtod(tmp, &end);
            if (*end == '.') {
                *end = ',';
                *out = strtod(tmp, &end);
            }
        }
        if (!ok || end != tmp + t->len || isinf(*out))
            return perr(t, "expected a finite decimal number, inf, -inf or nan, found %s", describe(p, t, d));
    }
    adv(p);
    return OXIDE_OK;
}
