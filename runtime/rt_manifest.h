/* Layout of a parsed manifest (lib/manifest.c), read directly by the runtime. Not installed. */
#ifndef OXIDE_RUNTIME_RT_MANIFEST_H
#define OXIDE_RUNTIME_RT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oxide.h"
#include "util.h"

typedef struct rt_mparam {
    const char *name;
    oxide_param_kind kind;
    oxide_scalar scalar; /* SCALAR: type; SLICE, PTR: element */
    bool is_mutable;
    uint32_t size, align; /* BYTES as written; others derived */
} rt_mparam;

typedef struct rt_mkernel {
    const char *name, *entry;
    rt_mparam *params;
    uint32_t nparams;
    uint32_t nptx; /* PTX parameters: a slice is two */
    uint32_t launch_bounds[2];
    uint32_t cluster[3];
    uint32_t dyn_smem;
} rt_mkernel;

struct oxide_manifest {
    const char *oxide_version; /* "" if absent */
    const char *target;        /* "" if absent */
    rt_mkernel *kernels;
    size_t nkernels;
    uint32_t line; /* 1-based PTX line that held it */
    oxide_arena arena; /* everything above lives here */
};

/* Like oxide_manifest_parse, but PTX without a manifest line is OXIDE_OK with *out = NULL. */
oxide_status oxide__manifest_read(const char *ptx, size_t len, oxide_manifest **out);

#endif
