/* The stage times every oxide_module_compile records (docs/pipeline.md, "Timing a compile"):
 * the stages' names and their query. Reading the clock twice a stage costs well under a
 * microsecond against the tens of microseconds of the cheapest stage, so it is always on: a
 * slow compile can be explained after the fact, with no rebuild and no environment. */
#include <time.h>

#include "ir.h"

/* Indexed by oxide__stage; the names are the API's, so they never change. */
static const char *const stage_names[OXIDE__STAGES] = {
    [OXIDE__STAGE_TILE] = "tile",           [OXIDE__STAGE_VERIFY] = "verify",
    [OXIDE__STAGE_LOWER] = "lower",         [OXIDE__STAGE_IMPORT] = "import",
    [OXIDE__STAGE_TARGET] = "target",       [OXIDE__STAGE_LEGALIZE] = "legalize",
    [OXIDE__STAGE_LIBDEVICE] = "libdevice", [OXIDE__STAGE_LLVM_VERIFY] = "llvm-verify",
    [OXIDE__STAGE_PASSES] = "passes",       [OXIDE__STAGE_LLVM_IR] = "llvm-ir",
    [OXIDE__STAGE_CODEGEN] = "codegen",     [OXIDE__STAGE_PTX] = "ptx",
};

double oxide__now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

oxide_status oxide_module_get_compile_time(oxide_module *mod, size_t i, const char **stage, double *ms) {
    if (!mod || !stage || !ms)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_get_compile_time: %s is NULL",
                           !mod     ? "mod"
                           : !stage ? "stage"
                                    : "ms");
    if (i >= OXIDE__STAGES)
        return oxide__fail(OXIDE_ERROR_NOT_FOUND,
                           "oxide_module_get_compile_time: a compile has %d stages (0..%d), not stage %zu",
                           (int)OXIDE__STAGES, (int)OXIDE__STAGES - 1, i);
    *stage = stage_names[i];
    *ms = mod->stage_ms[i];
    return OXIDE_OK;
}
