/* The example kernels end to end on the CPU: each builds, verifies, round-trips through the text
 * form, compiles for sm_80 (unless it needs sm_90) and sm_90a, passes ptxas, and carries a
 * manifest that names it and its parameters' interface kinds. The GPU runs are examples/c. */
#define _GNU_SOURCE /* mkstemps, popen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"
#include "oxide_examples.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

#define CHECK_OK(st, what)                                                                                             \
    CHECK((st) == OXIDE_OK, "%s: %s: %s", what, oxide_status_name(st), (st) ? oxide_last_error() : "")

/* What the manifest must say about each kernel's interface. */
typedef struct {
    const char *name;
    oxide_param_kind kind;
    oxide_scalar type;
    int is_mutable;
} pexp;

typedef struct {
    const char *kernel;
    pexp params[8];
    size_t nparams;
    uint32_t launch_bounds[2];
    uint32_t cluster[3];
    const char *ptx_must_have[4]; /* instructions the algorithm is built on */
} kexp;

#define SL(n, t, m)                                                                                                    \
    { n, OXIDE_PARAM_SLICE, OXIDE_SCALAR_##t, m }
#define SC(n, t)                                                                                                       \
    { n, OXIDE_PARAM_SCALAR, OXIDE_SCALAR_##t, 0 }

static const kexp expected[] = {
    {"vecadd", {SL("a", F32, 0), SL("b", F32, 0), SL("out", F32, 1)}, 3, {0, 0}, {1, 1, 1}, {"add.f32"}},
    {"saxpy", {SC("alpha", F32), SL("x", F32, 0), SL("y", F32, 1)}, 3, {0, 0}, {1, 1, 1}, {"fma.rn.f32"}},
    {"reduce",
     {SL("x", F32, 0), SL("out", F32, 1)},
     2,
     {256, 0},
     {1, 1, 1},
     {"shfl.sync.down", "bar.sync", ".add.f32"}},
    {"sgemm",
     {SL("a", F32, 0), SL("b", F32, 0), SL("c", F32, 1), SC("m", U32), SC("n", U32), SC("k", U32)},
     6,
     {256, 2},
     {1, 1, 1},
     {"ld.shared.v4", "ld.global.nc.v4", "fma.rn.f32", "bar.sync"}},
    {"softmax",
     {SL("x", F32, 0), SL("y", F32, 1), SC("rows", U32), SC("cols", U32)},
     4,
     {256, 0},
     {1, 1, 1},
     {"shfl.sync.bfly", "max.f32"}},
    {"transpose",
     {SL("x", F32, 0), SL("y", F32, 1), SC("rows", U32), SC("cols", U32)},
     4,
     {256, 0},
     {1, 1, 1},
     {"st.shared", "ld.shared", "bar.sync"}},
    {"histogram", {SL("data", U8, 0), SL("bins", U32, 1)}, 2, {256, 0}, {1, 1, 1}, {".shared.add", ".global.add"}},
    {"cluster_dsmem",
     {SL("x", F32, 0), SL("out", F32, 1)},
     2,
     {256, 0},
     {4, 1, 1},
     {"mapa", "barrier.cluster.arrive", "barrier.cluster.wait"}},
    {"gemm_mma",
     {SL("a", BF16, 0), SL("b", BF16, 0), SL("c", F32, 1), SC("m", U32), SC("n", U32), SC("k", U32)},
     6,
     {256, 2},
     {1, 1, 1},
     {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "ldmatrix.sync.aligned.m8n8.x4.trans",
      "cp.async.cg.shared.global", "cp.async.wait_group"}},
};
#define NEXPECTED (sizeof expected / sizeof expected[0])

static const kexp *find_expected(const char *name) {
    for (size_t i = 0; i < NEXPECTED; i++)
        if (!strcmp(expected[i].kernel, name))
            return &expected[i];
    return NULL;
}

static int have_ptxas;
static char ptxas_path[512];

/* Runs ptxas on the PTX; returns its exit status (0 = accepted) and keeps its output in log. */
static int ptxas(const char *ptx, size_t len, const char *sm, char *log, size_t logsize) {
    char path[] = "/tmp/oxide_test_examples_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        return -1;
    }
    int bad = fwrite(ptx, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (bad) {
        unlink(path);
        return -1;
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v '%s' -o /dev/null 2>&1", ptxas_path, sm, path);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    log[0] = 0;
    if (p) {
        char buf[512];
        while (fgets(buf, sizeof buf, p)) {
            size_t l = strlen(buf);
            if (n + l + 1 < logsize) {
                memcpy(log + n, buf, l + 1);
                n += l;
            }
        }
    }
    int rc = p ? pclose(p) : -1;
    unlink(path);
    return rc;
}

static void check_manifest(const char *ptx, size_t len, const char *target, const char *only) {
    oxide_manifest *m = NULL;
    oxide_status st = oxide_manifest_parse(ptx, len, &m);
    CHECK_OK(st, "oxide_manifest_parse");
    if (st)
        return;
    CHECK(!strcmp(oxide_manifest_target(m), target), "manifest target %s, want %s", oxide_manifest_target(m), target);
    size_t nk = oxide_manifest_kernel_count(m);
    if (only)
        CHECK(nk == 1, "%s: manifest has %zu kernels, want 1", only, nk);
    for (size_t k = 0; k < nk; k++) {
        const char *name = oxide_manifest_kernel_name(m, k);
        const kexp *e = find_expected(name);
        CHECK(e != NULL, "manifest names unknown kernel '%s'", name);
        if (!e)
            continue;
        CHECK(!only || !strcmp(name, only), "manifest kernel %s, want %s", name, only);
        CHECK(!strcmp(oxide_manifest_kernel_entry(m, k), name), "%s: entry '%s'", name,
              oxide_manifest_kernel_entry(m, k));
        size_t idx = 99;
        CHECK(oxide_manifest_kernel_find(m, name, &idx) == OXIDE_OK && idx == k, "%s: kernel_find gives %zu", name,
              idx);
        size_t np = oxide_manifest_param_count(m, k);
        CHECK(np == e->nparams, "%s: %zu params, want %zu", name, np, e->nparams);
        for (size_t p = 0; p < np && p < e->nparams; p++) {
            const char *pn = NULL;
            oxide_param_kind kind;
            oxide_scalar type;
            int mut = -1;
            st = oxide_manifest_param(m, k, p, &pn, &kind, &type, &mut, NULL, NULL);
            CHECK_OK(st, "oxide_manifest_param");
            if (st)
                continue;
            const pexp *w = &e->params[p];
            CHECK(!strcmp(pn, w->name), "%s param %zu named %s, want %s", name, p, pn, w->name);
            CHECK(kind == w->kind, "%s.%s kind %s, want %s", name, w->name, oxide_param_kind_name(kind),
                  oxide_param_kind_name(w->kind));
            CHECK(type == w->type, "%s.%s type %s, want %s", name, w->name, oxide_scalar_name(type),
                  oxide_scalar_name(w->type));
            if (w->kind == OXIDE_PARAM_SLICE)
                CHECK(mut == w->is_mutable, "%s.%s mut %d, want %d", name, w->name, mut, w->is_mutable);
        }
        uint32_t lb[2], cl[3], dyn = 99;
        st = oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn);
        CHECK_OK(st, "oxide_manifest_kernel_attrs");
        if (!st) {
            CHECK(lb[0] == e->launch_bounds[0] && lb[1] == e->launch_bounds[1], "%s: launch bounds %u,%u", name, lb[0],
                  lb[1]);
            CHECK(cl[0] == e->cluster[0] && cl[1] == e->cluster[1] && cl[2] == e->cluster[2], "%s: cluster %u,%u,%u",
                  name, cl[0], cl[1], cl[2]);
            uint32_t want_dyn = !strcmp(name, "gemm_mma") ? OXIDE_EXAMPLE_GEMM_MMA_SMEM : 0;
            CHECK(dyn == want_dyn, "%s: dyn_smem %u", name, dyn);
        }
    }
    oxide_manifest_destroy(m);
}

/* One example on one target: verify, compile twice (same bytes), ptxas, manifest, key instructions. */
static void check_target(oxide_context *ctx, const oxide_example_kernel *ex, const char *sm) {
    oxide_module *mod = NULL;
    oxide_status st = oxide_example_module(ctx, ex->name, &mod);
    CHECK_OK(st, ex->name);
    if (st)
        return;
    oxide_options *o = NULL;
    CHECK_OK(oxide_options_create(&o), "oxide_options_create");
    CHECK_OK(oxide_options_set_target(o, sm), sm);
    st = oxide_module_verify(mod, o);
    CHECK_OK(st, ex->name);
    const char *ptx = NULL;
    size_t len = 0;
    st = oxide_module_compile(mod, o, &ptx, &len);
    CHECK(st == OXIDE_OK, "%s for %s: %s: %s", ex->name, sm, oxide_status_name(st), oxide_last_error());
    if (st) {
        oxide_options_destroy(o);
        oxide_module_destroy(mod);
        return;
    }
    CHECK(len == strlen(ptx), "%s: length %zu vs strlen %zu", ex->name, len, strlen(ptx));
    char *first = strdup(ptx);
    const char *again = NULL;
    size_t len2 = 0;
    CHECK_OK(oxide_module_compile(mod, o, &again, &len2), "second compile");
    CHECK(again && first && len2 == len && !strcmp(first, again), "%s for %s: recompiling changed the PTX", ex->name,
          sm);
    const kexp *e = find_expected(ex->name);
    for (int i = 0; e && i < 4 && e->ptx_must_have[i]; i++)
        CHECK(strstr(first, e->ptx_must_have[i]) != NULL, "%s for %s: PTX lacks '%s'", ex->name, sm,
              e->ptx_must_have[i]);
    check_manifest(first, len, sm, ex->name);
    if (have_ptxas) {
        char log[8192];
        int rc = ptxas(first, len, sm, log, sizeof log);
        CHECK(rc == 0, "ptxas -arch=%s rejected %s (status %d):\n%s", sm, ex->name, rc, log);
        /* A spilling micro-tile would be a different (slower) kernel than its nvcc twin. */
        if (rc == 0 && !strcmp(ex->name, "sgemm"))
            CHECK(strstr(log, " 0 bytes spill stores") != NULL, "sgemm spills on %s:\n%s", sm, log);
    }
    free(first);
    oxide_options_destroy(o);
    oxide_module_destroy(mod);
}

/* The text form of each example parses back to a module that prints the same. */
static void check_round_trip(oxide_context *ctx, const oxide_example_kernel *ex) {
    oxide_module *mod = NULL, *back = NULL;
    if (oxide_example_module(ctx, ex->name, &mod))
        return;
    const char *text = NULL, *text2 = NULL;
    oxide_status st = oxide_module_print(mod, &text);
    CHECK_OK(st, "oxide_module_print");
    if (!st) {
        st = oxide_module_parse(ctx, text, strlen(text), &back);
        CHECK(st == OXIDE_OK, "%s: parse of its printed form: %s: %s", ex->name, oxide_status_name(st),
              oxide_last_error());
    }
    if (back) {
        CHECK_OK(oxide_module_print(back, &text2), "print again");
        CHECK(text2 && !strcmp(text, text2), "%s: print(parse(print(m))) differs", ex->name);
        CHECK_OK(oxide_module_verify(back, NULL), "verify parsed module");
        oxide_module_destroy(back);
    }
    oxide_module_destroy(mod);
}

/* Every example in one module: they coexist (distinct shared-array names) and all reach the manifest. */
static void check_all_in_one(oxide_context *ctx) {
    oxide_module *mod = NULL;
    CHECK_OK(oxide_module_create(ctx, "all_examples", &mod), "oxide_module_create");
    if (!mod)
        return;
    for (size_t i = 0; i < oxide_example_kernel_count; i++)
        CHECK_OK(oxide_example_kernels[i].build(ctx, mod), oxide_example_kernels[i].name);
    /* Building one twice into the same module is refused, not a crash or a duplicate. */
    oxide_status st = oxide_example_vecadd(ctx, mod);
    CHECK(st == OXIDE_ERROR_STATE, "second vecadd: %s", oxide_status_name(st));
    const char *ptx = NULL;
    size_t len = 0;
    st = oxide_module_compile(mod, NULL, &ptx, &len);
    CHECK_OK(st, "compile all examples");
    if (!st) {
        oxide_manifest *m = NULL;
        CHECK_OK(oxide_manifest_parse(ptx, len, &m), "manifest of all examples");
        if (m) {
            CHECK(oxide_manifest_kernel_count(m) == oxide_example_kernel_count, "%zu kernels in the manifest",
                  oxide_manifest_kernel_count(m));
            oxide_manifest_destroy(m);
        }
        check_manifest(ptx, len, "sm_90a", NULL);
    }
    oxide_module_destroy(mod);
}

static void check_misuse(oxide_context *ctx) {
    oxide_module *mod = NULL;
    CHECK(oxide_example_vecadd(NULL, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL context and module");
    CHECK(oxide_example_sgemm(ctx, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL module");
    CHECK(oxide_example_module(ctx, "no_such_kernel", &mod) == OXIDE_ERROR_NOT_FOUND && mod == NULL,
          "unknown example name");
    CHECK(strstr(oxide_last_error(), "no_such_kernel") != NULL, "message: %s", oxide_last_error());
    CHECK(oxide_example_find("sgemm") && !oxide_example_find("nope") && !oxide_example_find(NULL), "find");
    CHECK(oxide_example_kernels[oxide_example_kernel_count].name == NULL, "table ends with a NULL name");
    CHECK(oxide_example_kernel_count == NEXPECTED, "%zu examples, test knows %zu", oxide_example_kernel_count,
          NEXPECTED);

    /* An sm_90 kernel is refused for sm_80 with a status, by the verifier and by compile. */
    if (oxide_example_module(ctx, "cluster_dsmem", &mod) == OXIDE_OK) {
        oxide_options *o = NULL;
        oxide_options_create(&o);
        oxide_options_set_target(o, "sm_80");
        oxide_status st = oxide_module_verify(mod, o);
        CHECK(st == OXIDE_ERROR_VERIFY, "cluster_dsmem on sm_80 verify: %s", oxide_status_name(st));
        const char *ptx;
        st = oxide_module_compile(mod, o, &ptx, NULL);
        CHECK(st != OXIDE_OK, "cluster_dsmem compiled for sm_80");
        oxide_options_destroy(o);
        oxide_module_destroy(mod);
    }
}

int main(void) {
    snprintf(ptxas_path, sizeof ptxas_path, "%s/bin/ptxas", OXIDE_CUDA_HOME);
    have_ptxas = access(ptxas_path, X_OK) == 0;
    if (!have_ptxas)
        printf("note: %s not found; PTX is not checked with ptxas\n", ptxas_path);
    oxide_context *ctx = NULL;
    if (oxide_context_create(&ctx)) {
        printf("FAIL: oxide_context_create: %s\n", oxide_last_error());
        return 1;
    }
    for (size_t i = 0; i < oxide_example_kernel_count; i++) {
        const oxide_example_kernel *ex = &oxide_example_kernels[i];
        if (ex->min_sm <= 80)
            check_target(ctx, ex, "sm_80");
        check_target(ctx, ex, "sm_90a");
        check_round_trip(ctx, ex);
    }
    check_all_in_one(ctx);
    check_misuse(ctx);
    oxide_context_destroy(ctx);
    return check_report("test_examples");
}
