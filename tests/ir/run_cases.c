/* Runs every .oxir file of the folders named on the command line (tests/ir/parse, tests/ir/verify)
 * against the expectations written in its leading comment lines:
 *
 *   ; expect: ok                     parses and verifies
 *   ; expect: verify PHRASE          parses; the verifier fails with a message containing PHRASE
 *                                    (its messages place themselves: "kernel @k ^1 #0 'add': ...")
 *   ; expect: error LINE:COL PHRASE  the parser fails at LINE:COL (of this file) with PHRASE
 *   ; target: sm_80                  the target of the expectations below it ("default": none)
 *   ; ptx: 8.0                       the PTX ISA version of the expectations below it
 *
 * Other leading comment lines describe the case. A file may hold several ok/verify expectations
 * (the same module at several targets); an error expectation stands alone. Every file that
 * parses must also be in printed form after its comment lines: print(parse(file)) gives the
 * text back exactly, so the cases double as round-trip tests. Adding a verifier or parser test
 * means adding a file. OXIDE_TEST_VERBOSE=1 prints every message. */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"

static oxide_context *ctx;
static bool verbose;

typedef struct options_state {
    char target[32];
    int ptx_major, ptx_minor;
} options_state;

/* The options of one expectation; NULL when the file names no target and no PTX version. */
static oxide_options *make_options(const char *file, const options_state *os) {
    if (!os->target[0] && !os->ptx_major)
        return NULL;
    oxide_options *o = NULL;
    MUST(oxide_options_create(&o));
    if (os->target[0] && oxide_options_set_target(o, os->target)) {
        printf("FAIL %s: target %s: %s\n", file, os->target, oxide_last_error());
        check_failed++;
    }
    if (os->ptx_major && oxide_options_set_ptx_version(o, os->ptx_major, os->ptx_minor)) {
        printf("FAIL %s: ptx %d.%d: %s\n", file, os->ptx_major, os->ptx_minor, oxide_last_error());
        check_failed++;
    }
    return o;
}

static void expect_parse_error(const char *file, const char *text, size_t len, const char *want) {
    unsigned line = 0, col = 0;
    int n = 0;
    if (sscanf(want, "%u:%u %n", &line, &col, &n) != 2 || !n || !want[n]) {
        CHECK(false, "%s: write '; expect: error LINE:COL phrase', got 'error %s'", file, want);
        return;
    }
    char pos[32];
    snprintf(pos, sizeof pos, "%u:%u: ", line, col);
    oxide_module *m = (oxide_module *)&ctx; /* a sentinel: a failed parse must leave it alone */
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    const char *msg = st ? oxide_last_error() : "";
    if (verbose)
        printf("%s: %s\n", file, msg);
    CHECK(st == OXIDE_ERROR_PARSE && !strncmp(msg, pos, strlen(pos)) && strstr(msg, want + n) &&
              m == (oxide_module *)&ctx,
          "%s: expected PARSE with \"%s%s\", got %s: %s", file, pos, want + n, oxide_status_name(st), msg);
    if (st == OXIDE_OK)
        oxide_module_destroy(m);
}

static void expect_verdict(const char *file, oxide_module *m, const options_state *os, const char *want) {
    oxide_options *o = make_options(file, os);
    oxide_status st = oxide_module_verify(m, o);
    const char *msg = st ? oxide_last_error() : "";
    if (verbose && st)
        printf("%s: %s\n", file, msg);
    const char *at = os->target[0] ? os->target : "the default target";
    if (!strcmp(want, "ok"))
        CHECK(st == OXIDE_OK, "%s: expected OK at %s, got %s: %s", file, at, oxide_status_name(st), msg);
    else if (!strncmp(want, "verify ", 7))
        CHECK(st == OXIDE_ERROR_VERIFY && !strncmp(msg, "verify: ", 8) && strstr(msg, want + 7),
              "%s: expected VERIFY with \"%s\" at %s, got %s: %s", file, want + 7, at, oxide_status_name(st), msg);
    else
        CHECK(false, "%s: unknown expectation '%s' (ok, verify PHRASE or error LINE:COL PHRASE)", file, want);
    oxide_options_destroy(o);
}

/* print(parse(text)) must be the text after the leading comment lines. */
static void expect_round_trip(const char *file, oxide_module *m, const char *body) {
    const char *out = NULL;
    oxide_status st = oxide_module_print(m, &out);
    CHECK(st == OXIDE_OK && !strcmp(out, body),
          "%s: the text after the comment lines is not what prints; it prints:\n%s", file, st ? "" : out);
}

/* The value of a leading "; key: value" line, or NULL. */
static const char *directive(const char *line, const char *key) {
    size_t k = strlen(key);
    return !strncmp(line, "; ", 2) && !strncmp(line + 2, key, k) && line[2 + k] == ':' && line[3 + k] == ' '
               ? line + 4 + k
               : NULL;
}

/* The newline ending the line at l, or the end of the comment lines when the file ends there. */
static const char *line_end(const char *l, const char *body) {
    const char *nl = strchr(l, '\n');
    return nl && nl < body ? nl : body;
}

static void run_file(const char *file, const char *text, size_t len) {
    /* The leading comment lines. */
    const char *body = text;
    while (*body == ';') {
        const char *nl = strchr(body, '\n');
        body = nl ? nl + 1 : body + strlen(body);
    }
    int nexpect = 0, nerror = 0;
    for (const char *l = text; l < body; l = line_end(l, body) + 1) {
        const char *v = directive(l, "expect");
        nexpect += v != NULL;
        nerror += v && !strncmp(v, "error ", 6);
    }
    if (nexpect == 0 || (nerror && nexpect > 1)) {
        CHECK(false, "%s: needs '; expect: ...' lines: one 'error', or any number of 'ok' and 'verify'", file);
        return;
    }
    oxide_module *m = NULL;
    if (!nerror) {
        oxide_status st = oxide_module_parse(ctx, text, len, &m);
        CHECK(st == OXIDE_OK, "%s: expected the module to parse, got %s: %s", file, oxide_status_name(st),
              oxide_last_error());
        if (st)
            return;
        expect_round_trip(file, m, body);
    }
    options_state os = {0};
    char line[1024];
    for (const char *l = text; l < body; l = line_end(l, body) + 1) {
        snprintf(line, sizeof line, "%.*s", (int)(line_end(l, body) - l), l);
        const char *v;
        if ((v = directive(line, "target")))
            snprintf(os.target, sizeof os.target, "%s", strcmp(v, "default") ? v : "");
        else if ((v = directive(line, "ptx")) && sscanf(v, "%d.%d", &os.ptx_major, &os.ptx_minor) != 2)
            CHECK(false, "%s: write '; ptx: MAJOR.MINOR', got '%s'", file, v);
        else if ((v = directive(line, "expect")) && nerror)
            expect_parse_error(file, text, len, v + 6);
        else if (v)
            expect_verdict(file, m, &os, v);
    }
    oxide_module_destroy(m);
}

static int filter_oxir(const struct dirent *e) {
    size_t n = strlen(e->d_name);
    return n > 5 && !strcmp(e->d_name + n - 5, ".oxir");
}

int main(int argc, char **argv) {
    verbose = getenv("OXIDE_TEST_VERBOSE") != NULL;
    MUST(oxide_context_create(&ctx));
    for (int a = 1; a < argc; a++) {
        struct dirent **names = NULL;
        int n = scandir(argv[a], &names, filter_oxir, alphasort);
        CHECK(n > 0, "no .oxir files in %s", argv[a]);
        for (int i = 0; i < n; i++) {
            char path[4096];
            size_t len = 0;
            snprintf(path, sizeof path, "%s/%s", argv[a], names[i]->d_name);
            char *text = check_read_file(path, &len);
            CHECK(text != NULL, "cannot read %s", path);
            if (text)
                run_file(path, text, len);
            free(text);
            free(names[i]);
        }
        free(names);
    }
    oxide_context_destroy(ctx);
    return check_report("ir_cases");
}
