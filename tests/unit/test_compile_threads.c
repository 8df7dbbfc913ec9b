/* Compiles from many contexts, in parallel threads and one after another: the target machines
 * a destroyed context held go back to the process's pool and serve later contexts, libdevice's
 * bytes are read once per process, and none of it may change a byte of the PTX. Each compile is
 * compared with a reference made first, in one context, before any machine was pooled. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"
#include "oxide_examples.h"

/* softmax calls exp (libdevice); three option sets are three kinds of target machine */
static const char *const kernels[] = {"softmax", "vecadd", "sgemm"};
static const struct {
    const char *target;
    int level;
} variants[] = {{"sm_90a", 3}, {"sm_80", 3}, {"sm_90a", 2}};
enum { NK = sizeof kernels / sizeof kernels[0], NV = sizeof variants / sizeof variants[0] };
enum { THREADS = 4, ROUNDS = 3, MANY_CONTEXTS = 20 };

static char *reference[NK][NV];

/* A malloc'd copy of kernel k's PTX for variant v, compiled in ctx; NULL (with a message) on
 * failure. */
static char *compile_in(oxide_context *ctx, size_t k, size_t v) {
    oxide_options *o = NULL;
    oxide_module *m = NULL;
    const char *ptx = NULL;
    oxide_status st = oxide_options_create(&o);
    if (!st)
        st = oxide_options_set_target(o, variants[v].target);
    if (!st)
        st = oxide_options_set_opt_level(o, variants[v].level);
    if (!st)
        st = oxide_example_module(ctx, kernels[k], &m);
    if (!st)
        st = oxide_module_compile(m, o, &ptx, NULL);
    char *copy = st ? NULL : strdup(ptx);
    if (st)
        fprintf(stderr, "%s for %s -O%d: %s: %s\n", kernels[k], variants[v].target, variants[v].level,
                oxide_status_name(st), oxide_last_error());
    oxide_module_destroy(m);
    oxide_options_destroy(o);
    return copy;
}

/* Every kernel and variant in a fresh context; returns how many differ from the reference. */
static int round_in_fresh_context(void) {
    oxide_context *ctx;
    if (oxide_context_create(&ctx))
        return NK * NV;
    int bad = 0;
    for (size_t k = 0; k < NK; k++)
        for (size_t v = 0; v < NV; v++) {
            char *p = compile_in(ctx, k, v);
            bad += !p || strcmp(p, reference[k][v]) != 0;
            free(p);
        }
    oxide_context_destroy(ctx);
    return bad;
}

static void *worker(void *arg) {
    int *bad = arg;
    for (int r = 0; r < ROUNDS; r++)
        *bad += round_in_fresh_context();
    return NULL;
}

static void test_parallel_contexts(void) {
    pthread_t t[THREADS];
    int bad[THREADS] = {0};
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, &bad[i]) == 0, "thread %d starts", i);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(bad[i] == 0, "thread %d: %d of %d compiles differ from the reference", i, bad[i], ROUNDS * NK * NV);
    }
}

/* More live contexts than the pool keeps: destroying them all disposes what does not fit, and
 * the contexts after that still compile the same PTX. */
static void test_more_contexts_than_the_pool(void) {
    oxide_context *ctx[MANY_CONTEXTS];
    int made = 0;
    for (int i = 0; i < MANY_CONTEXTS; i++) {
        if (oxide_context_create(&ctx[i]))
            break;
        made++;
        char *p = compile_in(ctx[i], 1, 0);
        CHECK(p && !strcmp(p, reference[1][0]), "context %d of %d compiles vecadd as the reference", i, MANY_CONTEXTS);
        free(p);
    }
    CHECK(made == MANY_CONTEXTS, "%d contexts made, want %d", made, MANY_CONTEXTS);
    for (int i = 0; i < made; i++)
        oxide_context_destroy(ctx[i]);
    CHECK(round_in_fresh_context() == 0, "a context after the pool overflowed compiles every kernel the same");
}

int main(void) {
    oxide_context *ctx;
    if (oxide_context_create(&ctx)) {
        fprintf(stderr, "no context: %s\n", oxide_last_error());
        return 1;
    }
    for (size_t k = 0; k < NK; k++)
        for (size_t v = 0; v < NV; v++)
            CHECK((reference[k][v] = compile_in(ctx, k, v)) != NULL, "reference %s for %s -O%d", kernels[k],
                  variants[v].target, variants[v].level);
    oxide_context_destroy(ctx);
    if (check_failed) /* nothing to compare with */
        return check_report("test_compile_threads");
    test_parallel_contexts();
    test_more_contexts_than_the_pool();
    for (size_t k = 0; k < NK; k++)
        for (size_t v = 0; v < NV; v++)
            free(reference[k][v]);
    return check_report("test_compile_threads");
}
