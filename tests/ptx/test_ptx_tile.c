/* Every tile kernel of examples/tile and every valid case of tests/ir/tile, compiled through the
 * general lowering for sm_80, sm_89 and sm_90a and assembled by ptxas. The only refusals allowed
 * is of fp8 tile.dot on sm_80, by the verifier, naming the target. fp8 casts compile on every
 * target (integer ops below sm_89). Exits 77 without ptxas. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, popen, opendir */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ptxas.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif
#ifndef OXIDE_SOURCE_DIR
#define OXIDE_SOURCE_DIR "."
#endif

static oxide_context *ctx;
static int assembled;

/* A tests/ir/tile case is valid for some target when one of its leading comments says so. */
static bool is_ok_case(const char *text) {
    for (const char *p = text; !strncmp(p, "; ", 2); p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
        if (!strncmp(p, "; expect: ok", 12))
            return true;
    return false;
}

/* An fp8 dot: a tile.dot in a kernel holding fp8 tiles (the operands' types are on the lines
 * defining them). */
static bool has_fp8_dot(const char *text) {
    return strstr(text, "tile.dot ") && (strstr(text, "x f8e4m3>") || strstr(text, "x f8e5m2>"));
}

static void check_kernel(const char *path, const char *text) {
    static const char *const targets[] = {"sm_80", "sm_89", "sm_90a"};
    bool fp8_dot = has_fp8_dot(text);
    for (int t = 0; t < 3; t++) {
        oxide_module *m = NULL;
        oxide_options *o = NULL;
        const char *ptx = NULL;
        size_t len = 0;
        oxide_status st = oxide_module_parse(ctx, text, strlen(text), &m);
        CHECK(st == OXIDE_OK, "%s: %s", path, oxide_last_error());
        if (st)
            return;
        MUST(oxide_options_create(&o));
        MUST(oxide_options_set_target(o, targets[t]));
        st = oxide_module_compile(m, o, &ptx, &len);
        const char *msg = st ? oxide_last_error() : "";
        if (st == OXIDE_OK) {
            int rc = ptxas_run(ptx, len, targets[t]);
            CHECK(rc == 0, "%s for %s: ptxas refused it (status %d)", path, targets[t], rc);
            assembled += rc == 0;
        } else if (fp8_dot && t == 0) {
            CHECK(st == OXIDE_ERROR_VERIFY && strstr(msg, "'tile.dot'") &&
                      strstr(msg, "fp8 tile.dot needs sm_89 or newer; the target is sm_80"),
                  "%s for sm_80: %s: %s", path, oxide_status_name(st), msg);
        } else
            CHECK(0, "%s for %s: %s: %s", path, targets[t], oxide_status_name(st), msg);
        oxide_options_destroy(o);
        oxide_module_destroy(m);
    }
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .oxir file of dir (sorted), the valid cases only when only_ok; returns the count. */
static int check_dir(const char *dir, bool only_ok) {
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return 0;
    char *names[256];
    int n = 0, checked = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".oxir"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n; i++) {
        char path[2048];
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = check_read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (text && (!only_ok || is_ok_case(text))) {
            check_kernel(path + strlen(OXIDE_SOURCE_DIR) + 1, text);
            checked++;
        }
        free(text);
        free(names[i]);
    }
    return checked;
}

int main(void) {
    if (!ptxas_find(OXIDE_CUDA_HOME))
        return 77;
    MUST(oxide_context_create(&ctx));
    int examples = check_dir(OXIDE_SOURCE_DIR "/examples/tile", false);
    int cases = check_dir(OXIDE_SOURCE_DIR "/tests/ir/tile", true);
    CHECK(examples >= 9 && cases >= 6, "found %d examples and %d valid cases", examples, cases);
    printf("test_ptx_tile: %d examples and %d cases, %d assembled\n", examples, cases, assembled);
    oxide_context_destroy(ctx);
    return check_report("test_ptx_tile");
}
