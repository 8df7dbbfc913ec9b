/* Verifier rules about limits that later stages would otherwise meet: names that LLVM or PTX
 * reserve (lowering refuses them too, so `oxide verify` and compile agree), the kernel parameter
 * space that ptxas allows for the PTX ISA version being emitted, and cluster dimensions. */
#include <stdio.h>
#include <string.h>

#include "llvm.h"

/* Most bytes of .param space an entry may use (ptxas: 0x1100 up to PTX ISA 8.0, 0x7ffc from
 * 8.1, the version in which CUDA 12.1 raised the kernel parameter limit). */
static uint32_t param_space_limit(int ptx) { return ptx >= 81 ? 32764u : 4352u; }

static bool reserved(const char *n) {
    return !strncmp(n, "llvm.", 5) || !strncmp(n, "__nv_", 5) || !strcmp(n, "vprintf") || !strcmp(n, "__nvvm_reflect");
}

/* The entry's parameters as PTX lays them out: each at its alignment, a slice as two u64. */
static uint64_t param_space(const oxide_function *fn) {
    uint64_t off = 0;
    for (uint32_t i = 0; i < fn->iface.len; i++) {
        const oxide_iface_param *p = fn->iface.items[i];
        uint64_t size, align;
        switch ((int)p->kind) {
        case OXIDE_PARAM_SCALAR: size = align = oxide_scalar_size(p->scalar); break;
        case OXIDE_PARAM_SLICE: size = 16, align = 8; break;
        case OXIDE_PARAM_PTR: size = align = 8; break;
        case OXIDE_PARAM_TMA_DESC: size = 128, align = 64; break;
        case OXIDE_PARAM_TENSOR:
            size = 8 + 16 * (p->tensor ? p->tensor->rank : 0), align = p->tma ? 64 : 8;
            size = p->tma ? (size + 63) / 64 * 64 + 128 : size; /* then the descriptor */
            break;
        default: size = p->size, align = p->align ? p->align : 1; break;
        }
        off = (off + align - 1) / align * align + size;
    }
    return off;
}

void oxide__verify_limits(const oxide_function *fn, const oxide_options *opts, void (*report)(void *, const char *),
                          void *v) {
    char msg[256];
    if (reserved(fn->name)) {
        report(v, "the name is reserved (llvm.*, __nv_*, vprintf, __nvvm_reflect)");
        return;
    }
    if (!fn->is_kernel)
        return;
    /* Each dimension is held to the hardware's largest cluster (16) before any product is taken,
     * so the block count cannot wrap around. */
    const uint32_t *c = fn->cluster;
    if (c[0] > 16 || c[1] > 16 || c[2] > 16) {
        snprintf(msg, sizeof msg, "cluster(%u,%u,%u): a cluster has at most 16 blocks", c[0], c[1], c[2]);
        report(v, msg);
    }
    int major, minor;
    char saved[2048];
    /* an unknown target is compile's to report; keep the thread's last error as it was */
    snprintf(saved, sizeof saved, "%s", oxide_last_error());
    if (oxide__ptx_version(opts, &major, &minor) != OXIDE_OK) {
        oxide__fail(OXIDE_OK, "%s", saved);
        return;
    }
    uint64_t used = param_space(fn), limit = param_space_limit(major * 10 + minor);
    if (used > limit) {
        snprintf(msg, sizeof msg,
                 "the kernel has %llu bytes of parameters; PTX ISA %d.%d allows at most %llu (pass large data in a "
                 "buffer%s)",
                 (unsigned long long)used, major, minor, (unsigned long long)limit,
                 limit < 32764 ? ", or emit PTX ISA 8.1 or newer, which allows 32764" : "");
        report(v, msg);
    }
}
