/* compile_dump: every example kernel and each text-IR FILE compiled for sm_80, sm_89, sm_90a and
 * sm_100a at levels 0-3 and at 3 with fast-math, in one process, and what each compile gives
 * written out: DIR/rR/NAME.TARGET.V.ptx and .ll (the LLVM IR oxide_module_get_llvm_ir returns),
 * or .err (the message). Two builds of liboxide that must compile alike are compared with
 * `diff -r` of their DIRs (docs/pipeline.md, "Where a compile's time goes").
 *
 * Usage: compile_dump DIR ROUNDS FRESH [FILE.oxir...]
 *   ROUNDS: how many times over (round r > 0 in reverse order); FRESH 1: a context per compile,
 *   0: one context for everything, so that what the context keeps across compiles is exercised. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oxide.h"
#include "oxide_examples.h"

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *b = malloc(cap + 1);
    while (b && (got = fread(b + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap) {
            char *bigger = realloc(b, (cap *= 2) + 1);
            if (!bigger)
                free(b);
            b = bigger;
        }
    fclose(f);
    if (b)
        b[len] = 0, *n = len;
    return b;
}

static int put(const char *path, const char *s, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(s, 1, n, f) == n;
    if (f && fclose(f))
        ok = 0;
    if (!ok)
        fprintf(stderr, "compile_dump: cannot write %s\n", path);
    return ok;
}

/* Compiles input j (an example, then the files) for one target and variant; 0 when a file could
 * not be written or read. */
static int dump_one(oxide_context *ctx, const char *dir, int j, char **files, const char *target, int v) {
    oxide_options *o;
    if (oxide_options_create(&o) || oxide_options_set_target(o, target) ||
        oxide_options_set_opt_level(o, v < 4 ? v : 3) || (v == 4 && oxide_options_set_fast_math(o, 1)))
        return fprintf(stderr, "compile_dump: options: %s\n", oxide_last_error()), 0;
    oxide_module *m = NULL;
    oxide_status st;
    const char *name;
    int ok = 1;
    if (j < (int)oxide_example_kernel_count) {
        name = oxide_example_kernels[j].name;
        st = oxide_example_module(ctx, name, &m);
    } else {
        const char *path = files[j - (int)oxide_example_kernel_count];
        size_t len;
        char *text = slurp(path, &len);
        name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (!text) {
            oxide_options_destroy(o);
            return fprintf(stderr, "compile_dump: cannot read %s: %s\n", path, strerror(errno)), 0;
        }
        st = oxide_module_parse(ctx, text, len, &m);
        free(text);
    }
    const char *ptx, *ir;
    size_t len = 0;
    char path[4096];
    if (!st)
        st = oxide_module_compile(m, o, &ptx, &len);
    int n = snprintf(path, sizeof path - 8, "%s/%s.%s.%c", dir, name, target, v < 4 ? '0' + v : 'f');
    if (st) {
        strcpy(path + n, ".err");
        ok = put(path, oxide_last_error(), strlen(oxide_last_error()));
    } else {
        strcpy(path + n, ".ptx");
        ok = put(path, ptx, len);
        strcpy(path + n, ".ll");
        if (ok && !oxide_module_get_llvm_ir(m, &ir))
            ok = put(path, ir, strlen(ir));
    }
    oxide_module_destroy(m);
    oxide_options_destroy(o);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR ROUNDS FRESH [FILE.oxir...]\n", argv[0]);
        return 2;
    }
    static const char *const targets[] = {"sm_80", "sm_89", "sm_90a", "sm_100a"};
    int rounds = atoi(argv[2]), fresh = atoi(argv[3]), ninputs = (int)oxide_example_kernel_count + argc - 4;
    oxide_context *ctx = NULL;
    if (oxide_context_create(&ctx) || (mkdir(argv[1], 0755) && errno != EEXIST))
        return fprintf(stderr, "compile_dump: cannot start in %s\n", argv[1]), 1;
    long compiles = 0;
    for (int r = 0; r < rounds; r++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/r%d", argv[1], r);
        if (mkdir(dir, 0755) && errno != EEXIST)
            return fprintf(stderr, "compile_dump: cannot make %s\n", dir), 1;
        for (int i = 0; i < ninputs; i++)
            for (int t = 0; t < 4; t++)
                for (int v = 0; v < 5; v++, compiles++) {
                    if (fresh && (oxide_context_destroy(ctx), oxide_context_create(&ctx)))
                        return fprintf(stderr, "compile_dump: %s\n", oxide_last_error()), 1;
                    if (!dump_one(ctx, dir, r ? ninputs - 1 - i : i, argv + 4, targets[t], v))
                        return 1;
                }
    }
    oxide_context_destroy(ctx);
    printf("%ld compiles\n", compiles);
    return 0;
}
