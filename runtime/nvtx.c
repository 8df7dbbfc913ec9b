/* NVTX ranges (what Nsight Systems shows on its timeline), with the NVTX library opened by dlopen at
 * first use, as the driver is (driver.c): oxide needs no NVTX to build or run, and without one
 * every call here is a no-op that succeeds, so code can leave its ranges in. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef int (*nvtx_push_fn)(const char *message);
typedef int (*nvtx_pop_fn)(void);

static pthread_once_t nvtx_once = PTHREAD_ONCE_INIT;
static nvtx_push_fn nvtx_push;
static nvtx_pop_fn nvtx_pop;

/* -1: not decided yet (the environment decides at the first launch); 0 or 1 once decided. */
_Atomic int oxide__nvtx_launch_ranges = -1;

/* Ranges opened by oxide_nvtx_push and not yet closed, per thread: an unmatched pop is the
 * caller's mistake, reported instead of corrupting the range stack a profiler keeps. */
static _Thread_local unsigned open_ranges;

static void load_nvtx(void) {
    /* CUDA 13 ships NVTX 3's ABI as libnvtx3interop; CUDA 12 and the nvidia-nvtx wheels ship
     * libnvToolsExt. Either forwards to the tool Nsight injects (NVTX_INJECTION64_PATH). */
    const char *names[] = {getenv("OXIDE_NVTX_LIBRARY"), "libnvtx3interop.so.1", "libnvToolsExt.so.1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i] || !*names[i])
            continue;
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            if (i == 0)
                return; /* a library named explicitly is the one wanted: no fallback */
            continue;
        }
        void *push = dlsym(lib, "nvtxRangePushA"), *pop = dlsym(lib, "nvtxRangePop");
        if (!push || !pop) {
            dlclose(lib);
            if (i == 0)
                return;
            continue;
        }
        memcpy(&nvtx_push, &push, sizeof push); /* ISO C cannot convert void * to a function pointer */
        memcpy(&nvtx_pop, &pop, sizeof pop);
        return;
    }
}

static bool nvtx_loaded(void) {
    pthread_once(&nvtx_once, load_nvtx);
    return nvtx_push != NULL;
}

int oxide_nvtx_available(void) { return nvtx_loaded(); }

oxide_status oxide_nvtx_push(const char *name) {
    if (!name)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_nvtx_push: name is NULL (give the range a name)");
    if (nvtx_loaded())
        nvtx_push(name);
    open_ranges++;
    return OXIDE_OK;
}

oxide_status oxide_nvtx_pop(void) {
    if (!open_ranges)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_nvtx_pop: no range is open on this thread (each pop closes "
                                              "the range of an earlier oxide_nvtx_push on the same thread)");
    open_ranges--;
    if (nvtx_loaded())
        nvtx_pop();
    return OXIDE_OK;
}

void oxide_nvtx_set_launch_ranges(int on) {
    atomic_store_explicit(&oxide__nvtx_launch_ranges, on != 0, memory_order_relaxed);
}

int oxide_nvtx_launch_ranges(void) {
    int on = atomic_load_explicit(&oxide__nvtx_launch_ranges, memory_order_relaxed);
    if (on < 0) {
        const char *env = getenv("OXIDE_NVTX_LAUNCHES");
        int want = env && *env && strcmp(env, "0") != 0;
        /* A setting made meanwhile by another thread wins over the environment. */
        atomic_compare_exchange_strong(&oxide__nvtx_launch_ranges, &on, want);
        on = atomic_load_explicit(&oxide__nvtx_launch_ranges, memory_order_relaxed);
    }
    return on;
}

void oxide__nvtx_launch_push(const char *kernel) {
    if (nvtx_loaded())
        nvtx_push(kernel);
}

void oxide__nvtx_launch_pop(void) {
    if (nvtx_loaded())
        nvtx_pop();
}
