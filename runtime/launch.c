/* Kernel launch: arguments checked against the manifest, then cuLaunchKernel (or cuLaunchKernelEx
 * for clusters and cooperative launches). This is the hot path: no allocation, no string
 * comparison, the parameter pointers point straight at the caller's oxide_arg values. */
#include <stdio.h>
#include <string.h>

#include "rt.h"

/* The most blocks a cluster can have on any GPU (sm_90 and sm_100 allow 16 with the
 * non-portable attribute, 8 without). */
#define MAX_CLUSTER 16

/* Where a scalar's bytes start inside oxide_arg.value (which holds them in its low-order bits). */
static inline void *scalar_bytes(const oxide_arg *a, uint32_t size) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (char *)&a->value + (8 - size);
#else
    (void)size;
    return (void *)&a->value;
#endif
}

/* ---- messages (cold) ---- */

static const char *scalar_name(unsigned s) {
    const char *n = oxide_scalar_name((oxide_scalar)s);
    return n ? n : "?";
}

static void describe_param(const oxide_iface_param *p, char *buf, size_t size) {
    switch ((oxide_param_kind)p->kind) {
    case OXIDE_PARAM_SCALAR: snprintf(buf, size, "a scalar %s", scalar_name(p->scalar)); break;
    case OXIDE_PARAM_SLICE:
        snprintf(buf, size, "a %s slice of %s", p->is_mutable ? "mutable" : "read-only", scalar_name(p->scalar));
        break;
    case OXIDE_PARAM_PTR:
        snprintf(buf, size, "a %s pointer to %s", p->is_mutable ? "mutable" : "read-only", scalar_name(p->scalar));
        break;
    case OXIDE_PARAM_BYTES: snprintf(buf, size, "%u bytes by value", p->size); break;
    case OXIDE_PARAM_TMA_DESC: snprintf(buf, size, "a TMA descriptor (128 bytes)"); break;
    case OXIDE_PARAM_TENSOR:
        snprintf(buf, size, "a %s tensor of rank %u of %s", p->is_mutable ? "mutable" : "read-only", p->rank,
                 scalar_name(p->elem));
        break;
    default: snprintf(buf, size, "a parameter of unknown kind %u", p->kind);
    }
}

static void describe_arg(const oxide_arg *a, char *buf, size_t size) {
    switch (a->kind) {
    case OXIDE_ARG_SCALAR: snprintf(buf, size, "a scalar %s", scalar_name(a->type)); break;
    case OXIDE_ARG_BUFFER:
        snprintf(buf, size, "a %s buffer of %s", a->is_mutable ? "mutable" : "read-only", scalar_name(a->type));
        break;
    case OXIDE_ARG_BYTES: snprintf(buf, size, "%zu bytes%s", a->size, a->bytes ? "" : " at NULL"); break;
    case OXIDE_ARG_TMA_DESC:
        snprintf(buf, size, "a TMA descriptor of %zu bytes%s", a->size, a->bytes ? "" : " at NULL");
        break;
    case OXIDE_ARG_TENSOR: snprintf(buf, size, "a tensor%s", a->bytes ? "" : " at NULL"); break;
    default: snprintf(buf, size, "an argument of unknown kind %d", (int)a->kind);
    }
}

static oxide_status bad_arg(const struct oxide_kernel *k, uint32_t i, const oxide_arg *a) {
    char want[96], got[96];
    describe_param(&k->params[i], want, sizeof want);
    describe_arg(a, got, sizeof got);
    const char *hint = "";
    if (k->params[i].kind == OXIDE_PARAM_SLICE || k->params[i].kind == OXIDE_PARAM_PTR) {
        if (a->kind == OXIDE_ARG_BUFFER && a->type == k->params[i].scalar && !a->is_mutable)
            hint = " (pass the buffer as mutable: oxide_arg_buffer(..., 1))";
    }
    return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: argument %u '%s' is %s, got %s%s", k->name, i + 1,
                       k->mk->params[i].name, want, got, hint);
}

/* Why tensor t does not fit tensor parameter i (cold: only after a mismatch). */
static oxide_status bad_tensor(const struct oxide_kernel *k, uint32_t i, const oxide_tensor *t) {
    const oxide_iface_param *mp = &k->params[i];
    const char *name = k->mk->params[i].name;
    if (t->struct_size < RT_TENSOR_V1_SIZE)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: argument %u '%s': the oxide_tensor's struct_size is %zu, less than the %zu "
                           "bytes of its first version (set it to sizeof(oxide_tensor))",
                           k->name, i + 1, name, t->struct_size, (size_t)RT_TENSOR_V1_SIZE);
    if (t->rank != mp->rank)
        return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: argument %u '%s' is a tensor of rank %u, got rank %u",
                           k->name, i + 1, name, mp->rank, t->rank);
    if (t->elem != mp->elem)
        return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: argument %u '%s' is a tensor of %s, got a tensor of %s",
                           k->name, i + 1, name, scalar_name(mp->elem), scalar_name(t->elem));
    if (mp->is_mutable && !t->is_mutable)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: argument %u '%s' is a mutable tensor (the kernel writes it), got a read-only "
                           "one (set is_mutable)",
                           k->name, i + 1, name);
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->shape[d] < 0)
            return oxide__fail(OXIDE_ERROR_LAUNCH,
                               "launch %s: argument %u '%s': the tensor's shape[%u] is %lld (a dimension is >= 0)",
                               k->name, i + 1, name, d, (long long)t->shape[d]);
    return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: argument %u '%s': the tensor does not fit", k->name, i + 1,
                       name);
}

/* A tensor parameter's 1 + 2 * rank PTX parameters (iface.h): the element pointer, which is
 * computed into *ptr, then the shape and the strides, straight from the caller's struct; with
 * TMA, the descriptor and its flag, encoded into b. */
static inline oxide_status bind_tensor(const struct oxide_kernel *k, uint32_t i, const oxide_arg *a, void ***pp,
                                       uint64_t *ptr, rt_bound *b, uint32_t *ntma) {
    const oxide_iface_param *mp = &k->params[i];
    const oxide_tensor *t = a->bytes;
    if (__builtin_expect(a->kind != OXIDE_ARG_TENSOR || !t, 0))
        return bad_arg(k, i, a);
    bool neg = false;
    for (uint32_t d = 0; d < mp->rank && d < 4; d++)
        neg |= t->shape[d] < 0;
    if (__builtin_expect(t->struct_size < RT_TENSOR_V1_SIZE || t->rank != mp->rank || t->elem != mp->elem ||
                             (mp->is_mutable && !t->is_mutable) || neg,
                         0))
        return bad_tensor(k, i, t);
    void **p = *pp;
    *ptr = t->data + t->byte_offset;
    *p++ = ptr;
    for (uint32_t d = 0; d < mp->rank; d++)
        *p++ = (void *)&t->shape[d];
    for (uint32_t d = 0; d < mp->rank; d++)
        *p++ = (void *)&t->strides[d];
    /* a TMA variant is compiled for a contiguous last dim in every tensor (lib/tile/emit_mem.c) */
    b->tma_all &= mp->rank == 0 || t->strides[mp->rank - 1] == 1;
    if (mp->tma) {
        if (__builtin_expect(*ntma == RT_MAX_TMA, 0))
            return oxide__fail(OXIDE_ERROR_LAUNCH,
                               "launch %s: argument %u '%s': the kernel reads more than %d tensors through TMA, more "
                               "than oxide's launch encodes",
                               k->name, i + 1, k->mk->params[i].name, RT_MAX_TMA);
        b->tma_all &= oxide__rt_tma_bind(mp, t, b->tma[*ntma]);
        *p++ = b->tma[(*ntma)++];
    }
    *pp = p;
    return OXIDE_OK;
}

/* The slice contract (docs/ir.md): compiled code treats slices as noalias, so a mutable slice
 * must not overlap any other slice of the launch; a violation would be a silent data race. */
/* One past a slice's last byte; a length whose byte size passes the end of the address space
 * reaches that end (wrapping around would make the range look small and hide an overlap). */
static uint64_t slice_end(uint64_t ptr, uint64_t len, oxide_scalar elem) {
    uint64_t bytes, end;
    if (__builtin_mul_overflow(len, (uint64_t)oxide_scalar_size(elem), &bytes) ||
        __builtin_add_overflow(ptr, bytes, &end))
        return UINT64_MAX;
    return end;
}

static oxide_status check_slice_overlap(const struct oxide_kernel *k, const oxide_arg *args, size_t nargs) {
    for (uint32_t i = 0; i < nargs; i++) {
        const oxide_iface_param *mi = &k->params[i];
        if (mi->kind != OXIDE_PARAM_SLICE || !mi->is_mutable || !args[i].len)
            continue;
        uint64_t lo = args[i].ptr, hi = slice_end(lo, args[i].len, (oxide_scalar)mi->scalar);
        for (uint32_t j = 0; j < nargs; j++) {
            const oxide_iface_param *mj = &k->params[j];
            if (j == i || mj->kind != OXIDE_PARAM_SLICE || !args[j].len)
                continue;
            uint64_t lo2 = args[j].ptr, hi2 = slice_end(lo2, args[j].len, (oxide_scalar)mj->scalar);
            if (lo < hi2 && lo2 < hi)
                return oxide__fail(OXIDE_ERROR_LAUNCH,
                                   "launch %s: argument %u '%s' is a mutable slice that overlaps argument %u '%s'; a "
                                   "mutable slice may not alias another slice (declare the parameters as ptr to "
                                   "allow aliasing)",
                                   k->name, i + 1, k->mk->params[i].name, j + 1, k->mk->params[j].name);
        }
    }
    return OXIDE_OK;
}

static oxide_status bad_count(const struct oxide_kernel *k, size_t nargs) {
    char list[400];
    size_t used = 0;
    list[0] = 0;
    for (uint32_t i = 0; i < k->nparams && used < sizeof list - 1; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", k->mk->params[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: expects %u argument%s (%s), got %zu", k->name, k->nparams,
                       k->nparams == 1 ? "" : "s", list, nargs);
}

/* ---- binding ---- */

oxide_status oxide__rt_bind(const struct oxide_kernel *k, const oxide_arg *args, size_t nargs, rt_bound *b) {
    if (__builtin_expect(!k->mk, 0))
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: the module has no oxide manifest for this kernel, so its arguments cannot be "
                           "checked; use oxide_kernel_launch_raw",
                           k->name);
    if (__builtin_expect(nargs != k->nparams || (nargs && !args), 0))
        return bad_count(k, args ? nargs : 0);
    if (__builtin_expect(k->nptx > RT_MAX_PTX_PARAMS - 3, 0)) /* 3: a persistent variant's grid */
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: %u PTX parameters are more than oxide checks (%d); use "
                           "oxide_kernel_launch_raw",
                           k->name, k->nptx, RT_MAX_PTX_PARAMS);
    void **p = b->params;
    uint64_t *ptr = b->ptrs;
    uint32_t ntma = 0;
    b->tma_all = true;
    for (uint32_t i = 0; i < nargs; i++) {
        const oxide_iface_param *mp = &k->params[i];
        const oxide_arg *a = &args[i];
        switch (mp->kind) {
        case OXIDE_PARAM_SCALAR:
            if (a->kind != OXIDE_ARG_SCALAR || a->type != (oxide_scalar)mp->scalar)
                return bad_arg(k, i, a);
            *p++ = scalar_bytes(a, mp->size);
            break;
        case OXIDE_PARAM_SLICE:
            if (a->kind != OXIDE_ARG_BUFFER || a->type != (oxide_scalar)mp->scalar ||
                (mp->is_mutable && !a->is_mutable))
                return bad_arg(k, i, a);
            *p++ = (void *)&a->ptr;
            *p++ = (void *)&a->len;
            break;
        case OXIDE_PARAM_PTR:
            if (a->kind != OXIDE_ARG_BUFFER || a->type != (oxide_scalar)mp->scalar ||
                (mp->is_mutable && !a->is_mutable))
                return bad_arg(k, i, a);
            *p++ = (void *)&a->ptr;
            break;
        case OXIDE_PARAM_BYTES:
            if (a->kind != OXIDE_ARG_BYTES || a->size != mp->size || !a->bytes)
                return bad_arg(k, i, a);
            *p++ = (void *)a->bytes;
            break;
        case OXIDE_PARAM_TMA_DESC:
            if (a->kind != OXIDE_ARG_TMA_DESC || a->size != 128 || !a->bytes)
                return bad_arg(k, i, a);
            *p++ = (void *)a->bytes;
            break;
        case OXIDE_PARAM_TENSOR: {
            oxide_status st = bind_tensor(k, i, a, &p, ptr++, b, &ntma);
            if (st != OXIDE_OK)
                return st;
            break;
        }
        }
    }
    b->ntma = ntma;
    b->nparams = (uint32_t)(p - b->params);
    oxide_status st = check_slice_overlap(k, args, nargs);
    /* One relaxed load in a process of one device; see runtime/peer.c. */
    if (__builtin_expect(st == OXIDE_OK && atomic_load_explicit(&oxide__rt_several_devices, memory_order_relaxed), 0))
        st = oxide__rt_check_arg_devices(k, args, nargs);
    return st;
}

oxide_status oxide__rt_pick(struct oxide_kernel **k, rt_bound *b, const uint32_t grid[3]) {
    if (__builtin_expect(b->ntma != 0, 0)) {
        if ((*k)->tma && b->tma_all)
            *k = (*k)->tma;
        else if ((*k)->mk->tma_only && !b->tma_all)
            return oxide__fail(OXIDE_ERROR_LAUNCH,
                               "launch %s: this entry copies through TMA, and a tensor argument does not allow it "
                               "(every tensor's last dim contiguous; the TMA tensors' bases 16-byte aligned, row "
                               "pitches in multiples of 16 bytes); "
                               "launch the variant with general copies (the kernel's own name, without __tma, which "
                               "chooses; or a module compiled with OXIDE_TILE_VARIANTS_PLAIN or _ALL)",
                               (*k)->name);
    }
    if (__builtin_expect((*k)->mk->persistent, 0))
        for (int i = 0; i < 3; i++) {
            b->grid[i] = grid ? grid[i] : 0;
            b->params[b->nparams + i] = &b->grid[i];
        }
    return OXIDE_OK;
}

/* ---- launching ---- */

static oxide_status launch_failed(struct oxide_kernel *k, CUresult r, const uint32_t grid[3], const uint32_t block[3],
                                  uint32_t smem, const uint32_t *cluster, uint32_t flags) {
    char extra[320] = "";
    if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || r == CUDA_ERROR_INVALID_VALUE) {
        int regs = 0, maxt = 0, shared = 0;
        oxide__cu.FuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k->fn);
        oxide__cu.FuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn);
        oxide__cu.FuncGetAttribute(&shared, 1 /* SHARED_SIZE_BYTES */, k->fn);
        snprintf(extra, sizeof extra,
                 " (the kernel uses %d registers per thread and %d bytes of static shared memory, allowing at most %d "
                 "threads per block; the device allows %d bytes of shared memory per block)",
                 regs, shared, maxt, k->dev->max_smem_optin);
    } else if (r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
        int per_sm = 0;
        oxide__cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn, (int)(block[0] * block[1] * block[2]),
                                                            smem);
        snprintf(extra, sizeof extra,
                 " (a cooperative grid must fit on the device at once: at most %d blocks of this "
                 "size, %d per SM on %d SMs)",
                 per_sm * k->dev->sm_count, per_sm, k->dev->sm_count);
    }
    char shape[160] = "";
    if (cluster)
        snprintf(shape, sizeof shape, ", cluster %ux%ux%u", cluster[0], cluster[1], cluster[2]);
    return oxide__rt_cuda(k->dev, r, oxide__rt_is_sticky(r) ? atomic_load(&k->dev->last_kernel) : NULL,
                          "launch %s (grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic shared memory%s%s)%s", k->name,
                          grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, shape,
                          (flags & OXIDE_LAUNCH_COOPERATIVE) ? ", cooperative" : "", extra);
}

/* A persistent entry's blocks (iface.h): as many as the device holds at once, or fewer when the
 * grid has fewer; each walks the grid's linear block ids from its own by the launched count. */
static oxide_status persistent_grid(struct oxide_kernel *k, const uint32_t grid[3], const uint32_t block[3],
                                    uint32_t smem, uint32_t out[3]) {
    uint64_t total = (uint64_t)grid[0] * grid[1] * grid[2];
    if (!total) { /* the launch refuses it, naming the grid given */
        memcpy(out, grid, 3 * sizeof *grid);
        return OXIDE_OK;
    }
    if (total > INT32_MAX)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: grid %ux%ux%u has %llu blocks; this persistent entry walks at most %d (launch "
                           "fewer programs, or compile with persistent=0)",
                           k->name, grid[0], grid[1], grid[2], (unsigned long long)total, INT32_MAX);
    uint32_t resident = smem == k->dyn_smem ? atomic_load_explicit(&k->resident, memory_order_relaxed) : 0;
    if (!resident) {
        int per_sm = 0;
        CUresult r = oxide__cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn,
                                                                         (int)(block[0] * block[1] * block[2]), smem);
        /* none fits: launch one an SM, whose launch then reports why */
        resident = (uint32_t)(r == CUDA_SUCCESS && per_sm > 0 ? per_sm : 1) * (uint32_t)k->dev->sm_count;
        if (smem == k->dyn_smem)
            atomic_store_explicit(&k->resident, resident, memory_order_relaxed);
    }
    out[0] = total < resident ? (uint32_t)total : resident, out[1] = out[2] = 1;
    return OXIDE_OK;
}

/* Kernels asking for more than the default 48 KiB of dynamic shared memory must opt in. */
static oxide_status opt_in_smem(struct oxide_kernel *k, uint32_t smem) {
    CUresult r = oxide__cu.FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (r != CUDA_SUCCESS) {
        char text[160];
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: %u bytes of dynamic shared memory are more than the kernel can have on device "
                           "%d (%s allows %d per block, less the kernel's static shared memory): %s",
                           k->name, smem, k->dev->index, k->dev->name, k->dev->max_smem_optin,
                           oxide__cuda_error_text(r, text, sizeof text));
    }
    atomic_store_explicit(&k->smem_optin, smem, memory_order_relaxed);
    return OXIDE_OK;
}

static oxide_status launch_now(struct oxide_kernel *k, CUstream cs, oxide_stream *track, const uint32_t grid[3],
                               const uint32_t block[3], uint32_t smem, const uint32_t *cluster, uint32_t flags,
                               void **params) {
    oxide_device *dev = k->dev;
    if (__builtin_expect(atomic_load_explicit(&dev->failed, memory_order_acquire), 0))
        return oxide__rt_failed(dev);
    if (__builtin_expect(k->gen != atomic_load_explicit(&dev->gen, memory_order_relaxed), 0))
        return oxide__rt_check_gen(dev, k->gen, "the kernel");
    oxide_status st = oxide__rt_enter(dev);
    if (__builtin_expect(st != OXIDE_OK, 0))
        return st;
    if (k->block[0] && (!block || !(block[0] | block[1] | block[2])))
        block = k->block;
    if (!grid || !block)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "launch %s: grid or block is NULL", k->name);
    if (__builtin_expect(k->block[0] && block != k->block && memcmp(block, k->block, sizeof k->block), 0))
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: block %ux%ux%u asked for, but the compiler chose block %ux%ux%u for this "
                           "kernel (pass no block: NULL or {0,0,0})",
                           k->name, block[0], block[1], block[2], k->block[0], k->block[1], k->block[2]);
    if (!smem)
        smem = k->dyn_smem;
    if (__builtin_expect(k->contract.fields != 0, 0) &&
        (st = oxide__contract_check(k->name, &k->contract, grid, block, smem, dev->cc_major, dev->cc_minor)) !=
            OXIDE_OK)
        return st;
    if (__builtin_expect(smem > 48 * 1024 && smem > atomic_load_explicit(&k->smem_optin, memory_order_relaxed), 0) &&
        (st = opt_in_smem(k, smem)) != OXIDE_OK)
        return st;
    uint32_t walked[3];
    if (__builtin_expect(k->mk && k->mk->persistent, 0)) {
        if ((st = persistent_grid(k, grid, block, smem, walked)) != OXIDE_OK)
            return st;
        grid = walked;
    }
    const uint32_t *cl = cluster && (cluster[0] | cluster[1] | cluster[2]) ? cluster : k->cluster;
    /* Each dimension is bounded before the product, which could otherwise wrap to 0 or 1 in
     * 32 bits and launch without a cluster. */
    if (__builtin_expect(cl[0] > MAX_CLUSTER || cl[1] > MAX_CLUSTER || cl[2] > MAX_CLUSTER ||
                             cl[0] * cl[1] * cl[2] > MAX_CLUSTER || !cl[0] || !cl[1] || !cl[2],
                         0))
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: cluster %ux%ux%u: a cluster has 1 to %d blocks in all (more than 8 is "
                           "non-portable), at most %d in each dimension and none of 0",
                           k->name, cl[0], cl[1], cl[2], MAX_CLUSTER, MAX_CLUSTER);
    bool want_cluster = cl[0] * cl[1] * cl[2] > 1;
    if (cl != k->cluster && k->cluster_fixed && memcmp(cl, k->cluster, sizeof k->cluster))
        return oxide__fail(OXIDE_ERROR_LAUNCH, "launch %s: cluster %ux%ux%u asked for, but the PTX fixes %ux%ux%u",
                           k->name, cl[0], cl[1], cl[2], k->cluster[0], k->cluster[1], k->cluster[2]);
    CUresult r;
    if (__builtin_expect(!(flags & OXIDE_LAUNCH_COOPERATIVE) && (!want_cluster || k->cluster_fixed), 1)) {
        r = oxide__cu.LaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, cs, params,
                                   NULL);
    } else {
        if (!oxide__cu.LaunchKernelEx)
            return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                               "launch %s: cluster and cooperative launches need "
                               "cuLaunchKernelEx (a driver for CUDA 12.0 or later)",
                               k->name);
        CUlaunchAttribute attrs[2];
        unsigned n = 0;
        memset(attrs, 0, sizeof attrs);
        if (want_cluster && !k->cluster_fixed) {
            /* More than 8 blocks per cluster is "non-portable" and must be allowed per kernel. */
            if (cl[0] * cl[1] * cl[2] > 8 && !atomic_load_explicit(&k->nonportable, memory_order_relaxed)) {
                oxide__cu.FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
                atomic_store_explicit(&k->nonportable, 1, memory_order_relaxed);
            }
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[n].value.clusterDim.x = cl[0];
            attrs[n].value.clusterDim.y = cl[1];
            attrs[n].value.clusterDim.z = cl[2];
            n++;
        }
        if (flags & OXIDE_LAUNCH_COOPERATIVE) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            attrs[n].value.cooperative = 1;
            n++;
        }
        CUlaunchConfig lc = {grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, cs, attrs, n};
        r = oxide__cu.LaunchKernelEx(&lc, k->fn, params, NULL);
    }
    if (__builtin_expect(r != CUDA_SUCCESS, 0))
        return launch_failed(k, r, grid, block, smem, want_cluster ? cl : NULL, flags);
    if (track)
        atomic_store_explicit(&track->last_kernel, k, memory_order_relaxed);
    atomic_store_explicit(&dev->last_kernel, k, memory_order_relaxed);
    return OXIDE_OK;
}

oxide_status oxide__rt_launch(struct oxide_kernel *k, CUstream cs, oxide_stream *track, const uint32_t grid[3],
                              const uint32_t block[3], uint32_t smem, const uint32_t *cluster, uint32_t flags,
                              void **params) {
    /* One relaxed load when ranges are off, the hot path's usual case. */
    if (__builtin_expect(atomic_load_explicit(&oxide__nvtx_launch_ranges, memory_order_relaxed) != 0, 0) &&
        oxide_nvtx_launch_ranges()) {
        oxide__nvtx_launch_push(k->name);
        oxide_status st = launch_now(k, cs, track, grid, block, smem, cluster, flags, params);
        oxide__nvtx_launch_pop();
        return st;
    }
    return launch_now(k, cs, track, grid, block, smem, cluster, flags, params);
}

static oxide_status resolve(oxide_kernel *k, oxide_stream *stream, CUstream *cs, oxide_stream **track, const char *fn) {
    oxide_status st = oxide__rt_check_kernel(k);
    if (__builtin_expect(st != OXIDE_OK, 0))
        return oxide__fail_prefix(st, "%s", fn);
    if (__builtin_expect(!stream, 0)) {
        *cs = NULL;
        *track = &k->dev->default_stream;
        return OXIDE_OK;
    }
    if (__builtin_expect(
            stream->magic == RT_STREAM && stream->dev == k->dev &&
                (stream->is_default || stream->gen == atomic_load_explicit(&k->dev->gen, memory_order_relaxed)),
            1)) {
        *cs = stream->cu;
        *track = stream;
        return OXIDE_OK;
    }
    st = oxide__rt_stream(k->dev, stream, cs, track);
    return oxide__fail_prefix(st, "launch %s", k->name);
}

oxide_status oxide_kernel_launch(oxide_kernel *k, oxide_stream *stream, const uint32_t grid[3], const uint32_t block[3],
                                 uint32_t smem, const oxide_arg *args, size_t nargs) {
    CUstream cs;
    oxide_stream *track;
    oxide_status st = resolve(k, stream, &cs, &track, "oxide_kernel_launch");
    if (__builtin_expect(st != OXIDE_OK, 0))
        return st;
    rt_bound b;
    if (__builtin_expect((st = oxide__rt_bind(k, args, nargs, &b)) != OXIDE_OK, 0) ||
        __builtin_expect((st = oxide__rt_pick(&k, &b, grid)) != OXIDE_OK, 0))
        return st;
    return oxide__rt_launch(k, cs, track, grid, block, smem, NULL, 0, b.params);
}

oxide_status oxide_kernel_launch_ex(oxide_kernel *k, oxide_stream *stream, const oxide_launch_config *cfg,
                                    const oxide_arg *args, size_t nargs) {
    CUstream cs;
    oxide_stream *track;
    oxide_status st = resolve(k, stream, &cs, &track, "oxide_kernel_launch_ex");
    if (st != OXIDE_OK)
        return st;
    if (!cfg)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "launch %s: cfg is NULL", k->name);
    if (cfg->flags & ~OXIDE_LAUNCH_COOPERATIVE)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "launch %s: unknown flags 0x%x", k->name, cfg->flags);
    rt_bound b;
    if ((st = oxide__rt_bind(k, args, nargs, &b)) != OXIDE_OK || (st = oxide__rt_pick(&k, &b, cfg->grid)) != OXIDE_OK)
        return st;
    return oxide__rt_launch(k, cs, track, cfg->grid, cfg->block, cfg->smem, cfg->cluster, cfg->flags, b.params);
}

oxide_status oxide_kernel_launch_raw(oxide_kernel *k, oxide_stream *stream, const oxide_launch_config *cfg,
                                     void **params) {
    CUstream cs;
    oxide_stream *track;
    oxide_status st = resolve(k, stream, &cs, &track, "oxide_kernel_launch_raw");
    if (__builtin_expect(st != OXIDE_OK, 0))
        return st;
    if (__builtin_expect(!cfg, 0))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "launch %s: cfg is NULL", k->name);
    if (!params && k->nptx)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "launch %s: params is NULL", k->name);
    if (k->mk && k->mk->persistent)
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: a persistent entry takes the launch's grid as parameters that "
                           "oxide_kernel_launch and _ex set; launch it with one of those",
                           k->name);
    return oxide__rt_launch(k, cs, track, cfg->grid, cfg->block, cfg->smem, cfg->cluster, cfg->flags, params);
}
