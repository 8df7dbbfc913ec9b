/* The tile IR core: the files of tests/ir/tile (valid kernels round-trip exactly and verify; files
 * starting "; expect: error LINE:COL phrase" fail there, in the parser or the verifier, with an
 * optional "; target: sm_XX" line), and the C API that builds tile kernels. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static oxide_context *ctx;

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "LINE:COL:" at the start of msg or after a space (so 7:3 does not match 17:3). */
static bool has_position(const char *msg, const char *pos) {
    char want[32];
    snprintf(want, sizeof want, "%s:", pos);
    for (const char *s = strstr(msg, want); s; s = strstr(s + 1, want))
        if (s == msg || s[-1] == ' ')
            return true;
    return false;
}

static void expect_error_file(const char *name, const char *text, size_t len) {
    char pos[32] = "", phrase[256] = "", target[16] = "sm_90a";
    const char *nl = strchr(text, '\n');
    CHECK(nl && sscanf(text, "; expect: error %31s %255[^\n]", pos, phrase) == 2, "%s: bad expect line", name);
    if (nl && !strncmp(nl + 1, "; target: ", 10))
        sscanf(nl + 11, "%15s", target);
    oxide_module *m = NULL;
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    if (st == OXIDE_OK) {
        oxide_options *o;
        oxide_options_create(&o);
        CHECK(oxide_options_set_target(o, target) == OXIDE_OK, "%s: target %s", name, target);
        st = oxide_module_verify(m, o);
        oxide_options_destroy(o);
        CHECK(st == OXIDE_ERROR_VERIFY, "%s: expected a verify error, got %s", name, oxide_status_name(st));
        oxide_module_destroy(m);
    }
    const char *msg = oxide_last_error();
    CHECK(st != OXIDE_OK && has_position(msg, pos), "%s: expected position %s in '%s'", name, pos, msg);
    CHECK(st != OXIDE_OK && strstr(msg, phrase), "%s: expected '%s' in '%s'", name, phrase, msg);
}

static void expect_valid_file(const char *name, const char *text, size_t len) {
    oxide_module *m = NULL;
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    CHECK(st == OXIDE_OK, "%s: parse: %s", name, oxide_last_error());
    if (st)
        return;
    const char *printed = NULL;
    CHECK(oxide_module_print(m, &printed) == OXIDE_OK && !strcmp(printed, text), "%s: printed text differs:\n%s", name,
          printed ? printed : "(none)");
    CHECK(oxide_module_verify(m, NULL) == OXIDE_OK, "%s: verify", name);
    const char *ptx = NULL;
    st = oxide_module_compile(m, NULL, &ptx, NULL);
    CHECK(st == OXIDE_ERROR_UNSUPPORTED && strstr(oxide_last_error(), "not lowered"),
          "%s: compiling a tile kernel must be refused cleanly, got %s", name, oxide_status_name(st));
    oxide_module_destroy(m);
}

static void test_files(void) {
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/ir/tile", OXIDE_TEST_DATA);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".oxir"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int valid = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = check_read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (text && !strncmp(text, "; expect: error ", 16)) {
            expect_error_file(names[i], text, len);
            errors++;
        } else if (text) {
            expect_valid_file(names[i], text, len);
            valid++;
        }
        free(text);
        free(names[i]);
    }
    CHECK(valid >= 7 && errors >= 20, "expected the tile samples in %s, found %d valid and %d error files", dir, valid,
          errors);
}

int main(void) {
    if (oxide_context_create(&ctx) != OXIDE_OK)
        return 1;
    test_files();
    oxide_context_destroy(ctx);
    return check_report("test_tile_ir");
}
