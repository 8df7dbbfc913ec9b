/* The queries of a parsed manifest (lib/manifest.c reads it): what oxide.h's oxide_manifest_*
 * functions report. No LLVM: part of liboxide_runtime too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "rt_manifest.h"

void oxide_manifest_destroy(oxide_manifest *m) {
    if (!m)
        return;
    oxide__arena_free(&m->arena);
    free(m);
}

size_t oxide_manifest_kernel_count(const oxide_manifest *m) { return m ? m->nkernels : 0; }

const char *oxide_manifest_target(const oxide_manifest *m) { return m ? m->target : NULL; }

oxide_status oxide_manifest_kernel_find(const oxide_manifest *m, const char *name, size_t *index) {
    if (!m || !name || !index)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_kernel_find: %s is NULL",
                           !m      ? "m"
                           : !name ? "name"
                                   : "index");
    for (size_t i = 0; i < m->nkernels; i++)
        if (!strcmp(m->kernels[i].name, name)) {
            *index = i;
            return OXIDE_OK;
        }
    char list[512];
    size_t used = 0;
    list[0] = 0;
    for (size_t i = 0; i < m->nkernels && used < sizeof list - 1; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", m->kernels[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return oxide__fail(OXIDE_ERROR_NOT_FOUND, "no kernel '%s' in the manifest (it has: %s)", name,
                       m->nkernels ? list : "no kernels");
}

const char *oxide_manifest_kernel_name(const oxide_manifest *m, size_t k) {
    return m && k < m->nkernels ? m->kernels[k].name : NULL;
}

const char *oxide_manifest_kernel_entry(const oxide_manifest *m, size_t k) {
    return m && k < m->nkernels ? m->kernels[k].entry : NULL;
}

size_t oxide_manifest_param_count(const oxide_manifest *m, size_t k) {
    return m && k < m->nkernels ? m->kernels[k].nparams : 0;
}

oxide_status oxide_manifest_param(const oxide_manifest *m, size_t k, size_t p, const char **name,
                                  oxide_param_kind *kind, oxide_scalar *scalar, int *is_mutable, uint32_t *size,
                                  uint32_t *align) {
    if (!m)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_param: m is NULL");
    if (k >= m->nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_manifest_param: kernel index %zu out of range (%zu kernels)", k, m->nkernels);
    const oxide_iface_kernel *mk = &m->kernels[k];
    if (p >= mk->nparams)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_manifest_param: parameter index %zu out of range (kernel '%s' has %u)", p, mk->name,
                           mk->nparams);
    const oxide_iface_param *prm = &mk->params[p];
    if (name)
        *name = prm->name;
    if (kind)
        *kind = prm->kind;
    if (scalar)
        *scalar = prm->scalar;
    if (is_mutable)
        *is_mutable = prm->is_mutable;
    if (size)
        *size = prm->size;
    if (align)
        *align = prm->align;
    return OXIDE_OK;
}

oxide_status oxide_manifest_kernel_attrs(const oxide_manifest *m, size_t k, uint32_t launch_bounds[2],
                                         uint32_t cluster[3], uint32_t *dyn_smem) {
    if (!m)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_kernel_attrs: m is NULL");
    if (k >= m->nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_manifest_kernel_attrs: kernel index %zu out of range (%zu kernels)", k, m->nkernels);
    const oxide_iface_kernel *mk = &m->kernels[k];
    if (launch_bounds)
        memcpy(launch_bounds, mk->launch_bounds, sizeof mk->launch_bounds);
    if (cluster)
        memcpy(cluster, mk->cluster, sizeof mk->cluster);
    if (dyn_smem)
        *dyn_smem = mk->dyn_smem;
    return OXIDE_OK;
}

oxide_status oxide_manifest_param_rank(const oxide_manifest *m, size_t k, size_t p, uint32_t *rank) {
    if (!rank)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_param_rank: rank is NULL");
    if (!m || k >= m->nkernels || p >= m->kernels[k].nparams)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_param_rank: %s (kernel %zu, parameter %zu)",
                           !m ? "m is NULL" : "index out of range", k, p);
    const oxide_iface_param *prm = &m->kernels[k].params[p];
    *rank = prm->kind == OXIDE_PARAM_TENSOR ? prm->rank : 0;
    return OXIDE_OK;
}

oxide_status oxide_manifest_kernel_block(const oxide_manifest *m, size_t k, uint32_t block[3]) {
    if (!m || !block)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_kernel_block: %s is NULL", !m ? "m" : "block");
    if (k >= m->nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_manifest_kernel_block: kernel index %zu out of range (%zu kernels)", k, m->nkernels);
    memcpy(block, m->kernels[k].block, sizeof m->kernels[k].block);
    return OXIDE_OK;
}

oxide_status oxide_manifest_kernel_contract(const oxide_manifest *m, size_t k, oxide_launch_contract *out) {
    if (!m || !out || k >= m->nkernels)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_manifest_kernel_contract: %s (kernel %zu)",
                           !m     ? "m is NULL"
                           : !out ? "out is NULL"
                                  : "index out of range",
                           k);
    *out = m->kernels[k].contract;
    return OXIDE_OK;
}
