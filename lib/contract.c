/* Launch contracts (include/oxide.h, oxide_launch_contract): what makes one well formed, and
 * whether a launch shape keeps one. One place for the rules, because three readers meet them:
 * the Rust importer (the kernel's descriptor), the manifest reader (any PTX) and every launch.
 * The messages use the names the Rust attribute gives the fields (`block = (256, 1, 1)`), which
 * are also the manifest's keys. No LLVM: part of liboxide_runtime too. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

#define ALL_FIELDS                                                                                                     \
    (OXIDE_CONTRACT_DOMAIN | OXIDE_CONTRACT_BLOCK | OXIDE_CONTRACT_SMEM | OXIDE_CONTRACT_SMEM_ALIGN |                  \
     OXIDE_CONTRACT_MIN_CC)

bool oxide__contract_invalid(const oxide_launch_contract *c, char *why, size_t size) {
    const uint32_t *b = c->block;
    if (c->fields & ~ALL_FIELDS)
        snprintf(why, size, "unknown contract fields 0x%x", c->fields & ~ALL_FIELDS);
    else if ((c->fields & OXIDE_CONTRACT_DOMAIN) && (c->domain < 1 || c->domain > 3))
        snprintf(why, size, "domain = %u (a launch domain has 1, 2 or 3 dimensions)", c->domain);
    /* each dimension is bounded before the product, which could otherwise wrap in 32 bits */
    else if ((c->fields & OXIDE_CONTRACT_BLOCK) &&
             (!b[0] || !b[1] || !b[2] || b[0] > 1024 || b[1] > 1024 || b[2] > 64 || b[0] * b[1] * b[2] > 1024))
        snprintf(why, size,
                 "block = (%u, %u, %u) (a block has 1 to 1024 threads in all, at most 1024, 1024 and 64 in x, y "
                 "and z, and none of 0)",
                 b[0], b[1], b[2]);
    else if ((c->fields & (OXIDE_CONTRACT_DOMAIN | OXIDE_CONTRACT_BLOCK)) ==
                 (OXIDE_CONTRACT_DOMAIN | OXIDE_CONTRACT_BLOCK) &&
             ((c->domain < 3 && b[2] != 1) || (c->domain < 2 && b[1] != 1)))
        snprintf(why, size, "block = (%u, %u, %u) has more dimensions than domain = %u", b[0], b[1], b[2], c->domain);
    else if ((c->fields & OXIDE_CONTRACT_SMEM) && c->smem_min > c->smem_max)
        snprintf(why, size, "dynamic_shared_range = (%u, %u) (the smallest size comes first)", c->smem_min,
                 c->smem_max);
    else if ((c->fields & OXIDE_CONTRACT_SMEM_ALIGN) &&
             (!c->smem_align || (c->smem_align & (c->smem_align - 1)) || c->smem_align > 4096))
        snprintf(why, size, "dynamic_shared_alignment = %u (a power of two from 1 to 4096)", c->smem_align);
    else if ((c->fields & OXIDE_CONTRACT_MIN_CC) && (c->min_cc[0] < 1 || c->min_cc[0] > 99 || c->min_cc[1] > 9))
        snprintf(why, size, "min_compute_capability = (%u, %u) (a major version from 1 to 99 and a minor from 0 to 9)",
                 c->min_cc[0], c->min_cc[1]);
    else
        return false;
    return true;
}

static const char *dims_name(uint32_t domain) { return domain == 1 ? "y and z" : "z"; }

oxide_status oxide__contract_check(const char *kernel, const oxide_launch_contract *c, const uint32_t grid[3],
                                   const uint32_t block[3], uint32_t smem, int cc_major, int cc_minor) {
    const uint32_t f = c->fields;
    if (f & OXIDE_CONTRACT_BLOCK && memcmp(block, c->block, sizeof c->block))
        return oxide__fail(
            OXIDE_ERROR_LAUNCH,
            "launch %s: block %ux%ux%u breaks the launch contract's block = (%u, %u, %u) (the kernel is compiled for "
            "exactly that block: launch with it)",
            kernel, block[0], block[1], block[2], c->block[0], c->block[1], c->block[2]);
    if (f & OXIDE_CONTRACT_DOMAIN && c->domain < 3) {
        bool bad_grid = grid[2] != 1 || (c->domain == 1 && grid[1] != 1);
        if (bad_grid || block[2] != 1 || (c->domain == 1 && block[1] != 1))
            return oxide__fail(
                OXIDE_ERROR_LAUNCH,
                "launch %s: %s %ux%ux%u breaks the launch contract's domain = %u (a %u-dimensional launch has %s of 1 "
                "in the grid and the block)",
                kernel, bad_grid ? "grid" : "block", bad_grid ? grid[0] : block[0], bad_grid ? grid[1] : block[1],
                bad_grid ? grid[2] : block[2], c->domain, c->domain, dims_name(c->domain));
    }
    if (f & OXIDE_CONTRACT_SMEM && (smem < c->smem_min || smem > c->smem_max)) {
        if (c->smem_min == c->smem_max)
            return oxide__fail(
                OXIDE_ERROR_LAUNCH,
                "launch %s: %u bytes of dynamic shared memory break the launch contract's dynamic_shared = %u", kernel,
                smem, c->smem_min);
        return oxide__fail(
            OXIDE_ERROR_LAUNCH,
            "launch %s: %u bytes of dynamic shared memory break the launch contract's dynamic_shared_range = (%u, %u)",
            kernel, smem, c->smem_min, c->smem_max);
    }
    if (f & OXIDE_CONTRACT_MIN_CC &&
        (cc_major < (int)c->min_cc[0] || (cc_major == (int)c->min_cc[0] && cc_minor < (int)c->min_cc[1])))
        return oxide__fail(
            OXIDE_ERROR_LAUNCH,
            "launch %s: the device's compute capability %d.%d breaks the launch contract's min_compute_capability = "
            "(%u, %u) (run it on a newer GPU)",
            kernel, cc_major, cc_minor, c->min_cc[0], c->min_cc[1]);
    return OXIDE_OK;
}
