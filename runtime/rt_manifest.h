/* Layout of a parsed manifest (lib/manifest.c), read directly by the runtime. Not installed. */
#ifndef OXIDE_RUNTIME_RT_MANIFEST_H
#define OXIDE_RUNTIME_RT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iface.h"
#include "oxide.h"
#include "util.h"

struct oxide_manifest {
    const char *oxide_version; /* "" if absent */
    const char *target;        /* "" if absent */
    oxide_iface_kernel *kernels;
    size_t nkernels;
    uint32_t line;     /* 1-based PTX line that held it */
    oxide_arena arena; /* everything above lives here */
};

/* Like oxide_manifest_parse, but PTX without a manifest line is OXIDE_OK with *out = NULL. */
oxide_status oxide__manifest_read(const char *ptx, size_t len, oxide_manifest **out);

#endif
