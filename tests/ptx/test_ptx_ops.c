/* Every op of lib/ops.def, in every type/attribute variant the verifier accepts, compiled to
 * PTX for sm_80 and sm_90a at opt levels 0, 2 and 3 and assembled by ptxas.
 *
 * Variants come from the op's row (operand letters, attributes) plus a generator for the ops
 * whose operands the row cannot describe (casts, memory, control flow, ...). Each variant is
 * first built alone and verified; accepted ones become one kernel each in a module per
 * (target, level), which is compiled once and handed to ptxas once. A ptxas error is mapped
 * back to the kernel (and so the op and variant) by its line number. Ops above the target SM
 * must fail verification. Exits 77 (skipped) without ptxas.
 *
 * This file is the driver (the table, ptxas, the runs per target and level); the generators that
 * build each op's variants are in ptx_ops_gen.c (ptx_ops.h between them). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx_ops.h"

/* the table itself, for operand letters and minimum SMs */
const struct row rows[] = {
#define OP(ID, NAME, OPERANDS, RESULT, ATTRS, SM, LOWER, TIER, TMPL) {NAME, OPERANDS, RESULT, ATTRS, SM, LOWER},
#include "ops.def"
#undef OP
};
_Static_assert(sizeof rows / sizeof rows[0] == OXIDE_OP_COUNT_, "ops.def and oxide.h disagree");

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

static int failures;

static void failf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

/* ---- ptxas ---- */

static char ptxas[1024];
static const char *keep_dir; /* --keep DIR: also write each module's PTX there */
static int verbose;          /* -v: accepted variants per op */

/* Runs ptxas on ptx; returns 0 if it assembles. On failure prints its output with the kernel
 * each error line falls in. */
static int assemble(const char *ptx, size_t len, const char *arch, char **kernel_names, int nk,
                    const char *const *what) {
    char path[] = "/tmp/oxide_ptx_ops_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        failf("mkstemp failed");
        return 1;
    }
    if (write(fd, ptx, len) != (ssize_t)len) {
        close(fd);
        unlink(path);
        failf("writing %s failed", path);
        return 1;
    }
    close(fd);
    char cmd[2300];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o /dev/null 2>&1", ptxas, arch, path);
    FILE *pp = popen(cmd, "r");
    char line[4096];
    int bad = 0;
    while (pp && fgets(line, sizeof line, pp)) {
        /* performance notes (e.g. C7508 about setmaxnreg) are not errors */
        if (strstr(line, "ptxas info"))
            continue;
        bad = 1;
        fprintf(stderr, "ptxas: %s", line);
        const char *lp = strstr(line, ", line ");
        if (lp) {
            long ln = strtol(lp + 7, NULL, 10);
            /* find the .entry that encloses line ln */
            long cur = 1;
            const char *entry = NULL;
            for (const char *s = ptx; s < ptx + len && cur <= ln; s++) {
                if (!strncmp(s, ".visible .entry ", 16) || !strncmp(s, ".entry ", 7))
                    entry = strstr(s, "entry ") + 6;
                if (*s == '\n')
                    cur++;
            }
            if (entry) {
                for (int k = 0; k < nk; k++) {
                    size_t n = strlen(kernel_names[k]);
                    if (!strncmp(entry, kernel_names[k], n) && entry[n] == '(')
                        fprintf(stderr, "  -> in kernel %s: %s\n", kernel_names[k], what[k]);
                }
            }
        }
    }
    int rc = pp ? pclose(pp) : -1;
    if (rc != 0)
        bad = 1;
    unlink(path);
    return bad;
}

/* ---- driver ---- */

/* MIN_SM 901 in ops.def: the arch-specific sm_90a only */
static bool op_missing(int o, const char *target, unsigned sm) {
    return rows[o].min_sm == 901 ? strcmp(target, "sm_90a") != 0 : rows[o].min_sm > sm;
}

static const char *sm_name(unsigned min_sm) {
    static char buf[16];
    if (min_sm == 901)
        return "sm_90a";
    snprintf(buf, sizeof buf, "sm_%u", min_sm);
    return buf;
}

/* Plain sm_90 (PTX 7.8 by default): the sm_90a-only ops must fail verification saying they need
 * sm_90a, and the Hopper ops that need PTX 8.0 must fail until it is asked for. */
static void check_plain_sm90(oxide_context *ctx) {
    G g = {.ctx = ctx};
    types(&g);
    oxide_options *o78, *o80;
    oxide_options_create(&o78);
    oxide_options_create(&o80);
    oxide_options_set_target(o78, "sm_90");
    oxide_options_set_target(o80, "sm_90");
    oxide_options_set_ptx_version(o80, 8, 0);
    int checked = 0;
    for (int o = OXIDE_OP_CP_ASYNC_CA; o < OXIDE_OP_COUNT_; o++) {
        if (rows[o].min_sm < 90)
            continue;
        G probe = g;
        if (new_module(&probe, "probe") || begin_kernel(&probe, "k", (oxide_op)o) || !gen(&probe, (oxide_op)o, 0) ||
            probe.st) {
            failf("%s: building variant 0 failed: %s", rows[o].name, oxide_last_error());
            continue;
        }
        oxide_status s78 = oxide_module_verify(probe.mod, o78);
        const char *m78 = oxide_last_error();
        bool a_only = rows[o].min_sm == 901;
        /* PTX 7.8 has these already */
        bool ptx78 = o == OXIDE_OP_STMATRIX || o == OXIDE_OP_STMATRIX_TRANS || o == OXIDE_OP_MBARRIER_TRY_WAIT_PARITY;
        if (ptx78) {
            if (s78 != OXIDE_OK)
                failf("%s on sm_90 (PTX 7.8): %s", rows[o].name, m78);
        } else if (s78 != OXIDE_ERROR_VERIFY || !strstr(m78, a_only ? "needs sm_90a" : "needs PTX ISA 8.0"))
            failf("%s on sm_90 (PTX 7.8): expected a verify error saying it needs %s, got %s: %s", rows[o].name,
                  a_only ? "sm_90a" : "PTX 8.0", oxide_status_name(s78), s78 ? m78 : "");
        oxide_status s80 = oxide_module_verify(probe.mod, o80);
        if (a_only ? s80 != OXIDE_ERROR_VERIFY : s80 != OXIDE_OK)
            failf("%s on sm_90 with PTX 8.0: got %s (%s)", rows[o].name, oxide_status_name(s80),
                  s80 ? oxide_last_error() : "verified");
        oxide_module_destroy(probe.mod);
        checked++;
    }
    printf("sm_90: %d Hopper ops checked: refused without sm_90a / PTX 8.0 where they need it\n", checked);
    oxide_options_destroy(o78);
    oxide_options_destroy(o80);
}

typedef struct variant {
    oxide_op op;
    int v;
} variant;

static int run_target(oxide_context *ctx, const char *target, unsigned sm, int level) {
    G g = {.ctx = ctx};
    types(&g);
    oxide_options *opts;
    oxide_options_create(&opts);
    oxide_options_set_target(opts, target);
    oxide_options_set_opt_level(opts, level);
    int cap = 4096, nk = 0, accepted_ops = 0;
    variant *vs = malloc(cap * sizeof *vs);
    char **names = malloc(cap * sizeof *names);
    char **what = malloc(cap * sizeof *what);
    G big = g;
    if (new_module(&big, "ops")) {
        failf("scaffolding: %s", oxide_last_error());
        return 1;
    }
    for (int o = 0; o < OXIDE_OP_COUNT_; o++) {
        int ok = 0, tried = 0;
        if (rows[o].lower == L_TILE)
            continue; /* tile ops reach PTX through the tile compiler, in tile kernels only */
        for (int v = 0; v < 200 && nk < cap; v++) {
            /* build alone first: the builder or the verifier may refuse this combination */
            G probe = g;
            if (new_module(&probe, "probe") || begin_kernel(&probe, "k", (oxide_op)o)) {
                failf("scaffolding: %s", oxide_last_error());
                return 1;
            }
            int r = gen(&probe, (oxide_op)o, v);
            if (!r) {
                oxide_module_destroy(probe.mod);
                break;
            }
            tried++;
            oxide_status st = probe.st ? probe.st : oxide_module_verify(probe.mod, opts);
            if (st == OXIDE_OK && op_missing(o, target, sm))
                failf("%s variant %d verifies for %s, but the op needs %s", rows[o].name, v, target,
                      sm_name(rows[o].min_sm));
            oxide_module_destroy(probe.mod);
            if (st)
                continue;
            /* and the variant alone must compile (so that a failure names it) */
            G one = g;
            const char *ptx;
            new_module(&one, "one");
            begin_kernel(&one, "k", (oxide_op)o);
            gen(&one, (oxide_op)o, v);
            st = one.st ? one.st : oxide_module_compile(one.mod, opts, &ptx, NULL);
            if (st) {
                failf("%s variant %d (%s, O%d): verified but did not compile: %s: %s", rows[o].name, v, target, level,
                      oxide_status_name(st), oxide_last_error());
                oxide_module_destroy(one.mod);
                continue;
            }
            oxide_module_destroy(one.mod);
            char name[32], desc[96];
            snprintf(name, sizeof name, "k%d", nk);
            snprintf(desc, sizeof desc, "op %s variant %d", rows[o].name, v);
            if (begin_kernel(&big, name, (oxide_op)o) || (gen(&big, (oxide_op)o, v), big.st)) {
                failf("%s variant %d: rebuilding failed: %s", rows[o].name, v, oxide_last_error());
                return 1;
            }
            vs[nk] = (variant){(oxide_op)o, v};
            names[nk] = strdup(name);
            what[nk] = strdup(desc);
            nk++;
            ok++;
        }
        if (verbose)
            printf("  %s %s: %d of %d variants\n", target, rows[o].name, ok, tried);
        if (op_missing(o, target, sm)) {
            if (ok)
                failf("%s: %d variants accepted for %s below its min SM", rows[o].name, ok, target);
            if (!tried)
                failf("%s: no variants generated", rows[o].name);
        } else if (!ok) {
            failf("%s: no variant verified and compiled for %s (tried %d)", rows[o].name, target, tried);
        } else {
            accepted_ops++;
        }
    }
    const char *ptx;
    size_t len;
    oxide_status st = oxide_module_compile(big.mod, opts, &ptx, &len);
    int rc = 0;
    if (!st && keep_dir) {
        char path[1200];
        snprintf(path, sizeof path, "%s/ops_%s_O%d.ptx", keep_dir, target, level);
        FILE *f = fopen(path, "w");
        if (f) {
            fwrite(ptx, 1, len, f);
            fclose(f);
        }
    }
    if (st) {
        failf("%s O%d: the module of all %d variants did not compile: %s", target, level, nk, oxide_last_error());
        rc = 1;
    } else if (assemble(ptx, len, target, names, nk, (const char *const *)what)) {
        failf("%s O%d: ptxas rejected the PTX", target, level);
        rc = 1;
    }
    printf("%s O%d: %d ops, %d kernels, %zu bytes of PTX: %s\n", target, level, accepted_ops, nk, st ? 0 : len,
           rc ? "FAILED" : "ptxas ok");
    for (int k = 0; k < nk; k++) {
        free(names[k]);
        free(what[k]);
    }
    free(vs);
    free(names);
    free(what);
    oxide_module_destroy(big.mod);
    oxide_options_destroy(opts);
    return rc;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep_dir = argv[++i];
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
    }
    const char *home = getenv("CUDA_HOME");
    snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", home && *home ? home : OXIDE_CUDA_HOME);
    if (access(ptxas, X_OK) != 0) {
        printf("skipped: no ptxas at %s\n", ptxas);
        return 77;
    }
    oxide_context *ctx;
    if (oxide_context_create(&ctx))
        return 1;
    static const struct {
        const char *name;
        unsigned sm;
    } targets[] = {{"sm_80", 80}, {"sm_90a", 90}};
    /* 0: no IR passes, fast codegen; 2: the GPU pipeline, fast codegen; 3: both optimised */
    static const int levels[] = {0, 2, 3};
    for (int t = 0; t < 2; t++)
        for (int l = 0; l < 3; l++)
            run_target(ctx, targets[t].name, targets[t].sm, levels[l]);
    check_plain_sm90(ctx);
    oxide_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
