/* The IR text format: exact round trips (every op, every sample in tests/ir), modules built
 * through the API, and bad input (truncations, corruptions, binary bytes) that must give PARSE
 * with a "line:col: " message and never crash or leak. Public API only. Hand-written parse
 * errors are files in tests/ir/parse. */
#define _POSIX_C_SOURCE 200809L /* strdup, opendir */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"

static oxide_context *ctx;
static int op_seen[OXIDE_OP_COUNT_];

/* Note which ops a printed module uses: the word after the indent and any "%x = ". */
static void note_ops(const char *text) {
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "  ", 2))
            continue;
        const char *w = line + 2, *eq = strstr(w, " = "), *nl = strchr(w, '\n');
        if (eq && (!nl || eq < nl) && *w == '%')
            w = eq + 3;
        size_t n = strcspn(w, " \n");
        for (int op = 0; op < OXIDE_OP_COUNT_; op++)
            if (strlen(oxide_op_name((oxide_op)op)) == n && !strncmp(oxide_op_name((oxide_op)op), w, n))
                op_seen[op] = 1;
    }
}

/* parse -> print must give text back exactly; parse(print) -> print must be stable. */
static void roundtrip(const char *what, const char *text, size_t len) {
    oxide_module *m = NULL, *m2 = NULL;
    const char *out = NULL, *out2 = NULL;
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    CHECK(st == OXIDE_OK, "%s: parse: %s: %s", what, oxide_status_name(st), oxide_last_error());
    if (st)
        return;
    CHECK(oxide_module_print(m, &out) == OXIDE_OK, "%s: print", what);
    CHECK(strlen(out) == len && !memcmp(out, text, len), "%s: print(parse(x)) != x; got:\n%s", what, out);
    note_ops(out);
    st = oxide_module_parse(ctx, out, strlen(out), &m2);
    CHECK(st == OXIDE_OK, "%s: reparse: %s", what, oxide_last_error());
    if (!st) {
        CHECK(oxide_module_print(m2, &out2) == OXIDE_OK && !strcmp(out, out2), "%s: second round trip differs", what);
        oxide_module_destroy(m2);
    }
    oxide_module_destroy(m);
}

static bool msg_has_position(const char *msg) {
    unsigned line, col;
    int n = 0;
    return sscanf(msg, "%u:%u: %n", &line, &col, &n) == 2 && n > 0 && line >= 1 && col >= 1 && msg[n];
}

/* Any input: OK (then it must print and round-trip stably) or PARSE with a positioned message,
 * and *out untouched. Returns false on a violation, describing it once. */
static bool robust(const char *what, const char *text, size_t len) {
    oxide_module *m = (oxide_module *)&robust; /* sentinel: must stay as is on failure */
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    if (st) {
        const char *msg = oxide_last_error();
        if (st != OXIDE_ERROR_PARSE || !msg_has_position(msg) || m != (oxide_module *)&robust) {
            printf("  %s: status %s, message '%s'\n  input: '%.*s'\n", what, oxide_status_name(st), msg,
                   (int)(len > 300 ? 300 : len), text);
            return false;
        }
        return true;
    }
    const char *out, *out2;
    oxide_module *m2;
    bool ok = oxide_module_print(m, &out) == OXIDE_OK && oxide_module_parse(ctx, out, strlen(out), &m2) == OXIDE_OK;
    if (ok) {
        ok = oxide_module_print(m2, &out2) == OXIDE_OK && !strcmp(out, out2);
        oxide_module_destroy(m2);
    }
    if (!ok)
        printf("  %s: accepted input does not round-trip (%s)\n", what, oxide_last_error());
    oxide_module_destroy(m);
    return ok;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/* Line boundaries of text: returns the number of lines; starts[i] .. starts[i + 1]. */
static size_t lines_of(const char *text, size_t len, size_t *starts, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < max; i++)
        if (i == 0 || text[i - 1] == '\n')
            starts[n++] = i;
    starts[n] = len;
    return n;
}

static const char *const junk[] = {
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    ",",
    ":",
    "=",
    "->",
    "%",
    "^",
    "@",
    "\"",
    "\"\\x",
    "\"\\x0",
    "\\",
    "%0",
    "%999999",
    "^0",
    "^9",
    "@nope",
    "@0bad",
    "%a.len",
    "%.x",
    "%1x",
    "i32",
    "void",
    "ptr.nowhere",
    "vec<3 x f32>",
    "vec<4 x i1>",
    "array<0 x i8>",
    "array<99999999999999999999 x i8>",
    "struct<>",
    "struct<void>",
    "bytes<0, 3>",
    "slice<mut>",
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999999999999999999",
    "1e999",
    "-inf",
    "nan",
    "0x",
    "0x1",
    "0xzz",
    "1.5",
    "-",
    "--",
    "{value=}",
    "{value=1, value=2}",
    "{bogus=1}",
    "{align=3}",
    "{pred=olt}",
    "{imm=-1}",
    "{sym=@}",
    "{str=\"\\q\"}",
    "{str=\"\\x00\"}",
    "frobnicate",
    "const",
    "br",
    "ret",
    "switch",
    "cond_br",
    "call",
    "kernel",
    "func",
    "global",
    "module",
    "launch_bounds(2000, 1)",
    "cluster(0, 1, 1)",
    "dyn_smem(999999)",
    "\n",
    "\n^0:\n",
    "\n^x(%p: i32):\n",
    "\n}\n",
    ";",
    "\t",
    "\r",
    "\x01",
    "\x7f",
    "\xff",
    "\xc3\xa9",
};
#define NJUNK (sizeof junk / sizeof junk[0])

static void corrupt_file(const char *name, const char *text, size_t len) {
    char what[256];
    size_t starts[4096];
    size_t nlines = lines_of(text, len, starts, 4096);
    char *buf = malloc(len * 2 + 256);
    int bad = 0;

    /* Every prefix. */
    for (size_t n = 0; n <= len && bad < 5; n++) {
        snprintf(what, sizeof what, "%s truncated to %zu bytes", name, n);
        bad += !robust(what, text, n);
    }
    /* Every line deleted, and every line duplicated. */
    for (size_t l = 0; l < nlines && bad < 5; l++) {
        size_t a = starts[l], b = starts[l + 1], n = 0;
        memcpy(buf, text, a);
        memcpy(buf + a, text + b, len - b);
        snprintf(what, sizeof what, "%s without line %zu", name, l + 1);
        bad += !robust(what, buf, len - (b - a));
        memcpy(buf, text, b);
        memcpy(buf + b, text + a, b - a);
        memcpy(buf + b + (b - a), text + b, len - b);
        n = len + (b - a);
        snprintf(what, sizeof what, "%s with line %zu twice", name, l + 1);
        bad += !robust(what, buf, n);
    }
    /* Random byte flips, junk insertions, token swaps. */
    for (int k = 0; k < 3000 && bad < 5; k++) {
        size_t n = len;
        memcpy(buf, text, len);
        switch (k % 4) {
        case 0: { /* one byte set to anything, NUL and high bytes included */
            size_t at = rnd((unsigned)len);
            buf[at] = (char)rnd(256);
            snprintf(what, sizeof what, "%s with byte %zu = 0x%02x", name, at, (unsigned char)buf[at]);
            break;
        }
        case 1: { /* a junk token inserted anywhere */
            size_t at = rnd((unsigned)len + 1);
            const char *j = junk[rnd(NJUNK)];
            size_t jn = strlen(j);
            memcpy(buf + at, j, jn);
            memcpy(buf + at + jn, text + at, len - at);
            n = len + jn;
            snprintf(what, sizeof what, "%s with '%s' at %zu", name, j, at);
            break;
        }
        case 2: { /* a junk token replacing the word at a position */
            size_t at = rnd((unsigned)len), end = at;
            while (end < len && text[end] != ' ' && text[end] != '\n')
                end++;
            const char *j = junk[rnd(NJUNK)];
            size_t jn = strlen(j);
            memcpy(buf + at, j, jn);
            memcpy(buf + at + jn, text + end, len - end);
            n = len - (end - at) + jn;
            snprintf(what, sizeof what, "%s with '%s' replacing bytes %zu..%zu", name, j, at, end);
            break;
        }
        default: { /* two space-separated words of one line swapped */
            size_t l = rnd((unsigned)nlines), a = starts[l], b = starts[l + 1];
            size_t sp[64], ns = 0;
            for (size_t i = a; i < b && ns < 64; i++)
                if (text[i] == ' ')
                    sp[ns++] = i;
            if (ns < 3)
                continue;
            size_t w = rnd((unsigned)ns - 2);
            size_t s1 = sp[w] + 1, e1 = sp[w + 1], s2 = sp[w + 1] + 1, e2 = sp[w + 2];
            size_t o = s1;
            memcpy(buf + o, text + s2, e2 - s2);
            o += e2 - s2;
            buf[o++] = ' ';
            memcpy(buf + o, text + s1, e1 - s1);
            snprintf(what, sizeof what, "%s line %zu with words %zu and %zu swapped", name, l + 1, w, w + 1);
            break;
        }
        }
        bad += !robust(what, buf, n);
    }
    CHECK(bad == 0, "%s: %d corrupted inputs misbehaved (see above)", name, bad);
    free(buf);
}

/* Round-trips and corrupts the samples of one directory; those expecting a parse error are skipped. */
static int sample_dir(const char *sub) {
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/%s", OXIDE_TEST_DATA, sub);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return 0;
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name), len;
        if (n < 6 || strcmp(e->d_name + n - 5, ".oxir"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = check_read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (!text)
            continue;
        const char *body = text; /* after the leading "; expect: ..." lines of tests/ir/tile */
        while (*body == ';' && strchr(body, '\n'))
            body = strchr(body, '\n') + 1;
        if (!strstr(text, "; expect: error")) {
            files++;
            roundtrip(e->d_name, body, len - (size_t)(body - text));
            corrupt_file(e->d_name, body, len - (size_t)(body - text));
        }
        free(text);
    }
    closedir(d);
    return files;
}

static void test_samples(void) {
    int files = sample_dir("ir");
    CHECK(files >= 5, "expected the sample files in tests/ir, found %d", files);
    files = sample_dir("ir/tile");
    CHECK(files >= 5, "expected the tile samples in tests/ir/tile, found %d", files);
    for (int op = 0; op < OXIDE_OP_COUNT_; op++)
        CHECK(op_seen[op],
              "op '%s' appears in no round-tripped sample: add it to tests/ir/ops.oxir (tile ops: tests/ir/tile)",
              oxide_op_name((oxide_op)op));
}

/* ---- hand-written errors: position and the gist of the message. They live as files in
 * tests/ir/parse (run by tests/ir/run_cases.c); here are only those whose input holds control
 * or non-ASCII bytes, which do not belong in a text file. ---- */

static void expect_error(const char *text, const char *pos, const char *gist) {
    oxide_module *m = NULL;
    oxide_status st = oxide_module_parse(ctx, text, strlen(text), &m);
    const char *msg = oxide_last_error();
    CHECK(st == OXIDE_ERROR_PARSE, "expected PARSE for:\n%s\ngot %s", text, oxide_status_name(st));
    if (st == OXIDE_OK) {
        oxide_module_destroy(m);
        return;
    }
    CHECK(!strncmp(msg, pos, strlen(pos)) && msg[strlen(pos)] == ':', "expected position %s, got '%s' for:\n%s", pos,
          msg, text);
    CHECK(strstr(msg, gist) != NULL, "expected '%s' in '%s' for:\n%s", gist, msg, text);
}

#define FN(body) "module @m\n\nfunc @f(%x: i32, %y: f32) {\n^0:\n" body "}\n"

static void test_errors(void) {
    expect_error(FN("  printf {str=\"a\x01\"}\n"), "5:17", "control character");
    expect_error("module @m\n\x01", "2:1", "unexpected byte 0x01");
    expect_error("module @m\n\xc3\xa9", "2:1", "unexpected byte 0xc3");
}

/* Nesting, huge numbers, long names: rejected cleanly, no stack overflow. */
static void test_limits(void) {
    size_t depth = 100000, n = 0;
    char *s = malloc(depth * 12 + 100);
    n += (size_t)sprintf(s, "module @m\nglobal @g : ");
    for (size_t i = 0; i < depth; i++)
        n += (size_t)sprintf(s + n, "array<1 x ");
    n += (size_t)sprintf(s + n, "i8");
    for (size_t i = 0; i < depth; i++)
        s[n++] = '>';
    n += (size_t)sprintf(s + n, " global\n");
    CHECK(robust("deeply nested array", s, n), "deeply nested array");
    expect_error(
        "module @m\nglobal @g : struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<"
        "struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<"
        "struct<struct<struct<struct<struct<struct<struct<struct<struct<struct<i8>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>"
        " global\n",
        "2:244", "nested more than 32 deep");
    /* 32 levels are fine. */
    n = (size_t)sprintf(s, "module @m\n\nglobal @g : ");
    for (int i = 0; i < 32; i++)
        n += (size_t)sprintf(s + n, "array<2 x ");
    n += (size_t)sprintf(s + n, "i8");
    for (int i = 0; i < 32; i++)
        s[n++] = '>';
    n += (size_t)sprintf(s + n, " global align 0\n");
    CHECK(robust("32-deep array", s, n), "32-deep array");
    /* Long names and long lines. */
    n = (size_t)sprintf(s, "module @");
    memset(s + n, 'a', 100000);
    n += 100000;
    s[n++] = '\n';
    CHECK(robust("100000-char module name", s, n), "long name");
    memset(s, '(', 100000);
    CHECK(robust("100000 parens", s, 100000), "parens");
    memset(s, '%', 100000);
    CHECK(robust("100000 percent signs", s, 100000), "percents");
    n = (size_t)sprintf(s, "module @m\nfunc @f() {\n^0:\n  ret");
    for (int i = 0; i < 20000; i++)
        n += (size_t)sprintf(s + n, " %%%d,", i);
    CHECK(robust("long operand list", s, n), "long operand list");
    /* The longest value name the builder allows prints whole (it once came back cut to 127). */
    char name[257];
    memset(name, 'v', 256);
    name[256] = 0;
    n = (size_t)sprintf(s, "module @m\n\nfunc @f() -> i32 {\n^0:\n  %%%s = const {value=1} : i32\n  ret %%%s\n}\n",
                        name, name);
    roundtrip("256-character value name", s, n);
    free(s);
    /* Not NUL-terminated: bytes past len are never read (ASan would see them otherwise). */
    const char *t = "module @m\n";
    char *exact = malloc(strlen(t));
    memcpy(exact, t, strlen(t));
    oxide_module *m;
    CHECK(oxide_module_parse(ctx, exact, strlen(t), &m) == OXIDE_OK, "unterminated buffer: %s", oxide_last_error());
    oxide_module_destroy(m);
    CHECK(oxide_module_parse(ctx, exact, strlen(t) - 1, &m) == OXIDE_OK, "prefix without newline");
    oxide_module_destroy(m);
    free(exact);
    CHECK(oxide_module_parse(ctx, NULL, 0, &m) == OXIDE_ERROR_PARSE, "empty input is a parse error");
    CHECK(oxide_module_parse(NULL, "x", 1, &m) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL ctx");
    CHECK(oxide_module_parse(ctx, "x", 1, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL out");
    CHECK(oxide_module_parse(ctx, NULL, 3, &m) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL text");
    const char *out;
    CHECK(oxide_module_print(NULL, &out) == OXIDE_ERROR_INVALID_ARGUMENT, "print NULL module");
}

/* Non-canonical input: comments, blank lines, named blocks, wrapped parameter lists, omitted
 * attributes and result types all read, and print canonically. */
static void test_canonical(void) {
    const char *in = "; leading comment\n"
                     "module @m   ; the module\n"
                     "\n\n"
                     "kernel @k(%a: slice<f32>,\n"
                     "          %n: u32)   dyn_smem(0) {\n"
                     "^entry:\n"
                     "  %i = tid.x\n"
                     "  %p = offset %a, %i {elem=f32}\n"
                     "  %v = load %p : f32\n"
                     "  %c = icmp %i, %n {pred=ult}\n"
                     "  %w = shfl.down %i, %i\n"
                     "  cond_br %c, ^yes(\n    %v), ^no\n"
                     "^no:\n"
                     "  ret\n"
                     "^yes(%x: f32):\n"
                     "  store %x, %p {volatile=1}\n"
                     "  switch %i, ^no\n"
                     "}\n";
    const char *want = "module @m\n"
                       "\n"
                       "kernel @k(%a: slice<f32>, %n: u32) {\n"
                       "^0:\n"
                       "  %i = tid.x : i32\n"
                       "  %p = offset %a, %i {elem=f32} : ptr.global\n"
                       "  %v = load %p {align=0, volatile=0} : f32\n"
                       "  %c = icmp %i, %n {pred=ult} : i1\n"
                       "  %w = shfl.down %i, %i {imm=4294967295} : i32\n"
                       "  cond_br %c, ^2(%v), ^1\n"
                       "^1:\n"
                       "  ret\n"
                       "^2(%x: f32):\n"
                       "  store %x, %p {align=0, volatile=1}\n"
                       "  switch %i, ^1 []\n"
                       "}\n";
    oxide_module *m;
    const char *out;
    oxide_status st = oxide_module_parse(ctx, in, strlen(in), &m);
    CHECK(st == OXIDE_OK, "non-canonical input: %s", oxide_last_error());
    if (st)
        return;
    CHECK(oxide_module_print(m, &out) == OXIDE_OK && !strcmp(out, want), "canonical form differs:\n%s", out);
    oxide_module_destroy(m);
    roundtrip("canonical form", want, strlen(want));
}

/* Modules built through the API print and read back identically: blocks created out of
 * dominance order, unnamed values, every double and every string byte. */
static void test_api_built(void) {
    oxide_module *m;
    oxide_function *f;
    oxide_block *b0, *b1, *b2;
    oxide_type *i32, *f64, *f32, *i1;
    oxide_value *x, *v, *w, *c;
    oxide_type_scalar(ctx, OXIDE_TYPE_I32, &i32);
    oxide_type_scalar(ctx, OXIDE_TYPE_F64, &f64);
    oxide_type_scalar(ctx, OXIDE_TYPE_F32, &f32);
    oxide_type_scalar(ctx, OXIDE_TYPE_I1, &i1);
    CHECK(oxide_module_create(ctx, "api", &m) == OXIDE_OK, "module");
    oxide_module_add_function(m, "f", i32, &f);
    oxide_function_add_param(f, NULL, i32, &x);
    oxide_function_add_block(f, NULL, 0, &b0, NULL);
    oxide_function_add_block(f, &i32, 1, &b1, &w); /* uses a value defined in b2 */
    oxide_function_add_block(f, NULL, 0, &b2, NULL);
    oxide_build_br(b0, b2, NULL, 0);
    oxide_value *ops[2] = {x, x};
    oxide_build_op(b2, OXIDE_OP_MUL, ops, 2, NULL, NULL, 0, &v);
    oxide_value *args[1] = {v};
    oxide_build_br(b2, b1, args, 1);
    ops[0] = w;
    ops[1] = v;
    oxide_build_op(b1, OXIDE_OP_ADD, ops, 2, NULL, NULL, 0, &c);
    CHECK(oxide_build_op(b1, OXIDE_OP_RET, &c, 1, NULL, NULL, 0, NULL) == OXIDE_OK, "ret: %s", oxide_last_error());

    /* Doubles: edge cases and random bit patterns. */
    oxide_function *g;
    oxide_block *gb;
    oxide_type *void_t;
    oxide_type_scalar(ctx, OXIDE_TYPE_VOID, &void_t);
    oxide_module_add_function(m, "consts", void_t, &g);
    oxide_function_add_block(g, NULL, 0, &gb, NULL);
    double specials[] = {0.0,      -0.0,      1.0,          -1.0,        0.1,  1.0 / 3, DBL_MAX,
                         -DBL_MAX, DBL_MIN,   DBL_TRUE_MIN, DBL_EPSILON, 1e21, 1e-7,    123456789012345678.0,
                         INFINITY, -INFINITY, NAN,          65504.0};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        CHECK(oxide_build_const_float(gb, f64, specials[i], NULL) == OXIDE_OK, "const %g", specials[i]);
    for (int i = 0; i < 2000; i++) {
        unsigned long long bits =
            ((unsigned long long)rnd(1u << 31) << 33) ^ ((unsigned long long)rnd(1u << 31) << 2) ^ rnd(4);
        double d;
        memcpy(&d, &bits, sizeof d);
        oxide_build_const_float(gb, i % 2 ? f64 : f32, d, NULL);
    }
    int64_t ints[] = {0, 1, -1, INT64_MAX, INT64_MIN, 4294967295ll};
    oxide_type *i64;
    oxide_type_scalar(ctx, OXIDE_TYPE_I64, &i64);
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        CHECK(oxide_build_const_int(gb, i64, ints[i], NULL) == OXIDE_OK, "const int");
    /* A string with every byte 1..255. */
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = 0;
    oxide_attr sa = {.key = OXIDE_ATTR_STR, .s = all};
    CHECK(oxide_build_op(gb, OXIDE_OP_PRINTF, NULL, 0, NULL, &sa, 1, NULL) == OXIDE_OK, "printf: %s",
          oxide_last_error());
    oxide_build_op(gb, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL);

    const char *out;
    CHECK(oxide_module_print(m, &out) == OXIDE_OK, "print api module");
    char *copy = strdup(out);
    roundtrip("API-built module", copy, strlen(copy));
    CHECK(strstr(copy, "^1(%1: i32):\n  %2 = add %1, %3 : i32\n") != NULL, "numbering across blocks:\n%s", copy);
    CHECK(strstr(copy, "value=nan") && strstr(copy, "value=-inf") && strstr(copy, "value=-0}") &&
              strstr(copy, "value=5e-324}") && strstr(copy, "value=0.1}"),
          "float spellings:\n%.2000s", copy);
    /* Printing twice gives the same text; a second print replaces the first. */
    const char *out2;
    CHECK(oxide_module_print(m, &out2) == OXIDE_OK && !strcmp(out2, copy), "print is repeatable");
    free(copy);
    oxide_module_destroy(m);
    (void)f32;
    (void)i1;
}

/* The example at the top of docs/ir.md is canonical text, so the doc cannot drift. */
static void test_doc_example(void) {
    char path[2048];
    size_t len;
    snprintf(path, sizeof path, "%s/docs/ir.md", OXIDE_SOURCE_DIR);
    char *doc = check_read_file(path, &len);
    CHECK(doc != NULL, "cannot read %s", path);
    if (!doc)
        return;
    char *start = strstr(doc, "```\nmodule @"), *end = start ? strstr(start + 4, "```") : NULL;
    CHECK(start && end, "no example module in %s", path);
    if (start && end)
        roundtrip("docs/ir.md example", start + 4, (size_t)(end - start - 4));
    free(doc);
}

int main(void) {
    if (oxide_context_create(&ctx) != OXIDE_OK) {
        printf("cannot create a context: %s\n", oxide_last_error());
        return 1;
    }
    test_samples();
    test_errors();
    test_limits();
    test_canonical();
    test_api_built();
    test_doc_example();
    oxide_context_destroy(ctx);
    return check_report("test_text");
}
