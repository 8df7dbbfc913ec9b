/* Checking a launch shape before launching (include/oxide.h, oxide_launch_contract_check): the
 * contract's rules (lib/contract.c, which every launch also applies), then what the device
 * allows. Rust's prepare_NAME calls it once, so that the launches it prepares need no check
 * beyond the contract's cheap one. */
#include <stdio.h>
#include <string.h>

#include "rt.h"

/* The same on every GPU since compute capability 3.0. */
static const uint32_t MAX_GRID[3] = {2147483647u, 65535u, 65535u};
static const uint32_t MAX_BLOCK[3] = {1024u, 1024u, 64u};

static oxide_status check_limits(oxide_device *dev, const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                                 uint32_t smem, int max_threads) {
    static const char axis[3] = {'x', 'y', 'z'};
    for (int d = 0; d < 3; d++) {
        if (!grid[d] || grid[d] > MAX_GRID[d])
            return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: grid %ux%ux%u: %c must be 1 to %u", kernel, grid[0],
                               grid[1], grid[2], axis[d], MAX_GRID[d]);
        if (!block[d] || block[d] > MAX_BLOCK[d])
            return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: block %ux%ux%u: %c must be 1 to %u", kernel, block[0],
                               block[1], block[2], axis[d], MAX_BLOCK[d]);
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > (uint64_t)max_threads)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: block %ux%ux%u has %llu threads; %s allows at most %d in a block", kernel,
                           block[0], block[1], block[2], (unsigned long long)threads,
                           max_threads < 1024 ? "the kernel (its registers and launch bounds)" : "a GPU", max_threads);
    if (smem > (uint32_t)dev->max_smem_optin)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: %u bytes of dynamic shared memory; device %d (%s) allows at most %d a block",
                           kernel, smem, dev->index, dev->name, dev->max_smem_optin);
    return OXIDE_OK;
}

oxide_status oxide_launch_contract_check(oxide_device *dev, const char *kernel, const oxide_launch_contract *contract,
                                         const oxide_launch_config *cfg) {
    if (oxide__rt_check_device(dev) != OXIDE_OK)
        return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_launch_contract_check");
    if (!kernel || !contract || !cfg)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_launch_contract_check: %s is NULL",
                           !kernel     ? "kernel"
                           : !contract ? "contract"
                                       : "cfg");
    char why[200];
    if (oxide__contract_invalid(contract, why, sizeof why))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_launch_contract_check: %s: the contract has %s", kernel,
                           why);
    oxide_status st =
        oxide__contract_check(kernel, contract, cfg->grid, cfg->block, cfg->smem, dev->cc_major, dev->cc_minor);
    return st != OXIDE_OK ? st : check_limits(dev, kernel, cfg->grid, cfg->block, cfg->smem, 1024);
}

oxide_status oxide_kernel_check_launch(oxide_kernel *k, const oxide_launch_config *cfg) {
    oxide_status st = oxide__rt_check_kernel(k);
    if (st != OXIDE_OK)
        return oxide__fail_prefix(st, "oxide_kernel_check_launch");
    if (!cfg)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_check_launch: cfg is NULL");
    if ((st = oxide__rt_check_gen(k->dev, k->gen, "the kernel")) != OXIDE_OK || (st = oxide__rt_enter(k->dev)))
        return st;
    const uint32_t *block = k->block[0] && !(cfg->block[0] | cfg->block[1] | cfg->block[2]) ? k->block : cfg->block;
    uint32_t smem = cfg->smem ? cfg->smem : k->dyn_smem;
    if (k->contract.fields && (st = oxide__contract_check(k->name, &k->contract, cfg->grid, block, smem,
                                                          k->dev->cc_major, k->dev->cc_minor)) != OXIDE_OK)
        return st;
    int max_threads = 1024;
    CUresult r = oxide__cu.FuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(k->dev, r, NULL, "oxide_kernel_check_launch: the threads per block of '%s'", k->name);
    return check_limits(k->dev, k->name, cfg->grid, block, smem, max_threads);
}
