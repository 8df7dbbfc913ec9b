/* Limits that the rest of the toolchain would meet later, or that cost out of proportion to the
 * input: the kernel parameter space per PTX ISA version, reserved names, cluster shapes whose
 * block count does not fit 32 bits, options given no handle, and deeply nested types (whose
 * names, sizes and alignments must not grow exponentially with the nesting). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "harness.h"
#include "oxide.h"

static oxide_context *ctx;

static oxide_options *options(const char *target, int major, int minor) {
    oxide_options *o = NULL;
    CHECK(oxide_options_create(&o) == OXIDE_OK);
    CHECK(oxide_options_set_target(o, target) == OXIDE_OK);
    if (major)
        CHECK(oxide_options_set_ptx_version(o, major, minor) == OXIDE_OK, "%d.%d", major, minor);
    return o;
}

/* A kernel "k" with bytes parameters of the given sizes (0 ends the list), returning nothing. */
static oxide_module *kernel_with_bytes(const char *name, const uint32_t *sizes) {
    oxide_module *m = NULL;
    oxide_function *k = NULL;
    oxide_block *b = NULL;
    CHECK(oxide_module_create(ctx, "limits", &m) == OXIDE_OK);
    CHECK(oxide_module_add_kernel(m, name, &k) == OXIDE_OK);
    for (int i = 0; sizes[i]; i++) {
        char pname[16];
        oxide_value *v;
        snprintf(pname, sizeof pname, "p%d", i);
        CHECK(oxide_kernel_add_bytes_param(k, pname, sizes[i], 8, &v) == OXIDE_OK, "%s", pname);
    }
    CHECK(oxide_function_add_block(k, NULL, 0, &b, NULL) == OXIDE_OK);
    CHECK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL) == OXIDE_OK);
    return m;
}

static void expect_verify(oxide_module *m, const oxide_options *o, const char *want, const char *what) {
    oxide_status st = oxide_module_verify(m, o);
    CHECK(st == (want ? OXIDE_ERROR_VERIFY : OXIDE_OK) && (!want || strstr(oxide_last_error(), want)), "%s: %s: %s",
          what, oxide_status_name(st), oxide_last_error());
}

/* ptxas refuses an entry with more than 4,352 bytes of parameters up to PTX ISA 8.0, and more
 * than 32,764 from 8.1: the verifier says so before LLVM and ptxas are involved. */
static void test_param_space(void) {
    static const uint32_t over_small[] = {4096, 264, 0}; /* 4,360 bytes */
    static const uint32_t at_small[] = {4096, 256, 0};   /* 4,352 bytes */
    static const uint32_t over_large[] = {4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 0};
    oxide_options *v80 = options("sm_90", 8, 0), *v81 = options("sm_90", 8, 1), *def = options("sm_80", 0, 0);
    oxide_module *m = kernel_with_bytes("k", over_small);
    expect_verify(m, v80, "4360 bytes of parameters; PTX ISA 8.0 allows at most 4352", "4360 bytes at 8.0");
    expect_verify(m, def, "allows at most 4352", "4360 bytes at sm_80's default PTX");
    expect_verify(m, v81, NULL, "4360 bytes at 8.1");
    const char *ptx = NULL;
    CHECK(oxide_module_compile(m, v80, &ptx, NULL) == OXIDE_ERROR_VERIFY, "compile refuses it too");
    oxide_module_destroy(m);
    m = kernel_with_bytes("k", at_small);
    expect_verify(m, v80, NULL, "4352 bytes at 8.0");
    oxide_module_destroy(m);
    m = kernel_with_bytes("k", over_large);
    expect_verify(m, v81, "32768 bytes of parameters; PTX ISA 8.1 allows at most 32764", "32768 bytes at 8.1");
    oxide_module_destroy(m);
    oxide_options_destroy(v80);
    oxide_options_destroy(v81);
    oxide_options_destroy(def);
}

/* verify refuses what compile refuses: names that PTX or LLVM reserve. */
static void test_reserved_names(void) {
    static const uint32_t none[] = {0};
    static const char *const names[] = {"vprintf", "llvm.foo", "__nv_sinf", "__nvvm_reflect"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        oxide_module *m = kernel_with_bytes(names[i], none);
        expect_verify(m, NULL, "the name is reserved", names[i]);
        oxide_module_destroy(m);
    }
}

/* A cluster whose block count wraps around in 64 bits (2^31 x 2^31 x 4) is no small cluster. */
static void test_cluster_overflow(void) {
    oxide_module *m = NULL;
    oxide_function *k = NULL;
    CHECK(oxide_module_create(ctx, "c", &m) == OXIDE_OK);
    CHECK(oxide_module_add_kernel(m, "k", &k) == OXIDE_OK);
    CHECK(oxide_kernel_set_cluster(k, 0x80000000u, 0x80000000u, 4) == OXIDE_ERROR_INVALID_ARGUMENT);
    oxide_module_destroy(m);
    static const char text[] = "module @c\n\nkernel @k() cluster(2147483648, 2147483648, 4) {\n^0:\n  ret\n}\n";
    oxide_options *o = options("sm_90a", 0, 0);
    if (oxide_module_parse(ctx, text, sizeof text - 1, &m) == OXIDE_OK) {
        expect_verify(m, o, "cluster(2147483648,2147483648,4)", "wrapping cluster");
        oxide_module_destroy(m);
    } else {
        CHECK(strstr(oxide_last_error(), "cluster"), "parse refused it: %s", oxide_last_error());
    }
    oxide_options_destroy(o);
}

static void test_null_options(void) {
    CHECK(oxide_options_set_opt_level(NULL, 1) == OXIDE_ERROR_INVALID_ARGUMENT &&
              !strcmp(oxide_last_error(), "oxide_options_set_opt_level: opts is NULL"),
          "%s", oxide_last_error());
    oxide_options *o = options("sm_90", 0, 0);
    CHECK(oxide_options_set_opt_level(o, 7) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "level must be 0..3, got 7"));
    oxide_options_destroy(o);
}

static long rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Each level is a struct of two copies of the level below: the text form doubles per level, so
 * names are kept short and sizes are computed once per type. 40 levels would be a terabyte of
 * text and, recomputed per use, 2^40 steps. */
static void test_nested_types(void) {
    long before = rss_kib(), grew = 0;
    oxide_type *t = NULL, *i8, *f32;
    oxide_type_scalar(ctx, OXIDE_TYPE_I8, &i8);
    oxide_type_scalar(ctx, OXIDE_TYPE_F32, &f32);
    t = i8;
    oxide_type *mid = NULL, *lv16 = NULL; /* levels 32 and 16 */
    int depth = 0;
    for (; depth < 40; depth++) {
        oxide_type *fields[2] = {t, t}, *next = NULL;
        /* stop early where the cost has run away (rather than exhausting the machine) */
        if ((grew = rss_kib() - before) > 64 * 1024 || oxide_type_struct(ctx, fields, 2, &next) != OXIDE_OK)
            break;
        t = next;
        if (depth + 1 == 32)
            mid = t;
        if (depth + 1 == 16)
            lv16 = t;
    }
    /* level 40 is 2^40 bytes, the largest a type may be */
    CHECK(depth == 40, "nesting stopped at level %d (%ld KiB): %s", depth, grew, oxide_last_error());
    const char *name = oxide_type_get_name(t);
    CHECK(name && strlen(name) <= 512 && !strncmp(name, "struct<struct<", 14), "%.80s (%zu bytes)", name ? name : "",
          name ? strlen(name) : 0);
    grew = rss_kib() - before;
    CHECK(grew < 64 * 1024, "the nested types took %ld KiB", grew);
    /* a module using it: printing writes the full text, which is too long to be printed */
    oxide_module *m = NULL;
    oxide_global *g = NULL;
    const char *text = NULL;
    CHECK(oxide_module_create(ctx, "deep", &m) == OXIDE_OK);
    CHECK(oxide_module_add_global(m, "g", t, OXIDE_AS_GLOBAL, 0, NULL, 0, &g) == OXIDE_OK);
    oxide_status st = oxide_module_print(m, &text);
    CHECK(st != OXIDE_OK && strstr(oxide_last_error(), "too long"), "print: %s: %s", oxide_status_name(st),
          oxide_last_error());
    oxide_module_destroy(m);
    CHECK(rss_kib() - before < 256 * 1024, "printing took %ld KiB", rss_kib() - before);
    /* lowering costs one step per level: a level of 2^32 bytes, lowered through every use of
     * its fields, took 2^32 steps before the lowering kept the types it had made; and LLVM's
     * code generator visits every scalar field, so past 2^16 of them the type is refused */
    CHECK(oxide_module_create(ctx, "deep_lowered", &m) == OXIDE_OK);
    CHECK(oxide_module_add_global(m, "g", mid, OXIDE_AS_GLOBAL, 0, NULL, 0, &g) == OXIDE_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *ptx = NULL;
    size_t ptx_len = 0;
    st = oxide_module_compile(m, NULL, &ptx, &ptx_len);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(st == OXIDE_ERROR_UNSUPPORTED && strstr(oxide_last_error(), "at most 65536") && secs < 10,
          "compiling a 32-level type: %s in %.1f s: %s", oxide_status_name(st), secs, oxide_last_error());
    oxide_module_destroy(m);
    CHECK(oxide_module_create(ctx, "deep16", &m) == OXIDE_OK);
    CHECK(oxide_module_add_global(m, "g", lv16, OXIDE_AS_GLOBAL, 0, NULL, 0, &g) == OXIDE_OK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = oxide_module_compile(m, NULL, &ptx, &ptx_len);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(st == OXIDE_OK && secs < 10, "compiling a 16-level type: %s in %.1f s: %s", oxide_status_name(st), secs,
          oxide_last_error());
    oxide_module_destroy(m);
    /* a shallow one prints in full */
    oxide_type *fields[2] = {f32, f32}, *s2 = NULL;
    CHECK(oxide_type_struct(ctx, fields, 2, &s2) == OXIDE_OK && !strcmp(oxide_type_get_name(s2), "struct<f32, f32>"));
}

int main(void) {
    if (oxide_context_create(&ctx) != OXIDE_OK) {
        printf("no context: %s\n0 passed, 1 failed\n", oxide_last_error());
        return 1;
    }
    test_param_space();
    test_reserved_names();
    test_cluster_overflow();
    test_null_options();
    test_nested_types();
    oxide_context_destroy(ctx);
    return check_report("test_limits");
}
