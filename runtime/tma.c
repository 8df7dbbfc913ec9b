/* TMA (bulk tensor copy) descriptors: cuTensorMapEncodeTiled through the loaded driver. The
 * descriptor is 128 opaque bytes that a kernel reads through a tma_desc parameter or from global
 * memory (docs/gemm.md, Hopper kernel). */
#include "rt.h"

#include <stdint.h>
#include <string.h>

/* oxide_scalar -> CUtensorMapDataType (cuda.h); -1 where TMA has no such type */
static int tma_dtype(int s, unsigned *size) {
    switch (s) {
    case OXIDE_SCALAR_U8:
    case OXIDE_SCALAR_I8:
    case OXIDE_SCALAR_F8E4M3:
    case OXIDE_SCALAR_F8E5M2:
    case OXIDE_SCALAR_BOOL: *size = 1; return 0;
    case OXIDE_SCALAR_U16:
    case OXIDE_SCALAR_I16: *size = 2; return 1;
    case OXIDE_SCALAR_U32: *size = 4; return 2;
    case OXIDE_SCALAR_I32: *size = 4; return 3;
    case OXIDE_SCALAR_U64: *size = 8; return 4;
    case OXIDE_SCALAR_I64: *size = 8; return 5;
    case OXIDE_SCALAR_F16: *size = 2; return 6;
    case OXIDE_SCALAR_F32: *size = 4; return 7;
    case OXIDE_SCALAR_F64: *size = 8; return 8;
    case OXIDE_SCALAR_BF16: *size = 2; return 9;
    default: return -1;
    }
}

oxide_status oxide_tma_desc_encode_tiled(oxide_device *dev, void *desc128, int dtype, uint32_t rank,
                                         uint64_t global_addr, const uint64_t *dims, const uint64_t *strides_bytes,
                                         const uint32_t *box, const uint32_t *elem_strides, int swizzle_bytes) {
    const char *fn = "oxide_tma_desc_encode_tiled";
    if (oxide__rt_check_device(dev) != OXIDE_OK)
        return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s", fn);
    if (!desc128 || !dims || !box || (rank > 1 && !strides_bytes))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor, dims, strides or box", fn);
    if (((uintptr_t)desc128 & 63) != 0)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: the descriptor must be 64-byte aligned", fn);
    if (rank < 1 || rank > 5)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: rank %u (TMA takes 1 to 5 dimensions)", fn, rank);
    unsigned esize = 0;
    int ct = tma_dtype(dtype, &esize);
    if (ct < 0)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: element type %d has no TMA data type", fn, dtype);
    int sw = swizzle_bytes == 0 ? 0 : swizzle_bytes == 32 ? 1 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 128 ? 3 : -1;
    if (sw < 0)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: swizzle %d bytes (0, 32, 64 or 128)", fn, swizzle_bytes);
    /* the driver's own checks answer only CUDA_ERROR_INVALID_VALUE: say which rule is broken */
    if (global_addr & 15)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: global address 0x%llx is not 16-byte aligned", fn,
                           (unsigned long long)global_addr);
    for (uint32_t i = 0; i + 1 < rank; i++)
        if (strides_bytes[i] % 16 || strides_bytes[i] >= (1ull << 40))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "%s: stride %u is %llu bytes (a multiple of 16 below 2^40)", fn, i + 1,
                               (unsigned long long)strides_bytes[i]);
    for (uint32_t i = 0; i < rank; i++) {
        if (!dims[i] || dims[i] > (1ull << 32))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: dimension %u is %llu (1 to 2^32)", fn, i,
                               (unsigned long long)dims[i]);
        if (!box[i] || box[i] > 256)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: box dimension %u is %u (1 to 256)", fn, i, box[i]);
        if (elem_strides && (!elem_strides[i] || elem_strides[i] > 8))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: element stride %u is %u (1 to 8)", fn, i,
                               elem_strides[i]);
    }
    if ((box[0] * esize) % 16)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: the box's inner row is %u bytes (a multiple of 16)", fn,
                           box[0] * esize);
    if (sw && box[0] * esize > (unsigned)swizzle_bytes)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "%s: the box's inner row is %u bytes, more than the %d-byte swizzle span", fn,
                           box[0] * esize, swizzle_bytes);
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    if (!oxide__cu.TensorMapEncodeTiled)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: the driver has no cuTensorMapEncodeTiled (CUDA 12 or newer)",
                           fn);
    unsigned int es[5] = {1, 1, 1, 1, 1};
    if (elem_strides)
        memcpy(es, elem_strides, rank * sizeof *es);
    /* interleave none, L2 promotion 128 bytes, out-of-bounds elements read as zero */
    CUresult r = oxide__cu.TensorMapEncodeTiled(desc128, ct, rank, (void *)(uintptr_t)global_addr,
                                                (const unsigned long long *)dims,
                                                (const unsigned long long *)strides_bytes, box, es, 0, sw, 2, 0);
    if (r != CUDA_SUCCESS) {
        char text[160];
        return oxide__fail(OXIDE_ERROR_CUDA, "%s: cuTensorMapEncodeTiled (rank %u, box %u x %u): %s", fn, rank, box[0],
                           rank > 1 ? box[1] : 1, oxide__cuda_error_text(r, text, sizeof text));
    }
    return OXIDE_OK;
}

/* A tensor parameter read through TMA (iface.h): true with the descriptor for the launch's
 * tensor; false when the tensor does not allow TMA (or the driver refuses it), and the launch
 * takes the variant that copies without TMA -- slower, never wrong, so nothing here fails. */
bool oxide__rt_tma_bind(const oxide_iface_param *mp, const oxide_tensor *t, void *desc128) {
    unsigned es = 0;
    int ct = tma_dtype(mp->elem, &es);
    uint32_t r = mp->rank;
    uint64_t addr = t->data + t->byte_offset, dims[4], strides[3];
    uint32_t box[4], ones[4] = {1, 1, 1, 1};
    if (ct < 0 || (addr & 15) || t->strides[r - 1] != 1 || !oxide__cu.TensorMapEncodeTiled)
        return false;
    for (uint32_t d = 0; d < r; d++) {
        /* innermost first */
        uint32_t i = r - 1 - d;
        if (t->shape[i] < 1 || t->shape[i] >= (1ll << 31))
            return false;
        dims[d] = (uint64_t)t->shape[i];
        box[d] = mp->tma_box[i];
        if (d && (t->strides[i] < 1 || (uint64_t)t->strides[i] * es % 16 || (uint64_t)t->strides[i] >= (1ull << 36)))
            return false;
        if (d)
            strides[d - 1] = (uint64_t)t->strides[i] * es;
    }
    /* interleave none, 128-byte swizzle, L2 promotion 256 bytes, out-of-bounds elements zero */
    CUresult res =
        oxide__cu.TensorMapEncodeTiled(desc128, ct, r, (void *)(uintptr_t)addr, (const unsigned long long *)dims,
                                       (const unsigned long long *)strides, box, ones, 0, 3, 3, 0);
    return res == CUDA_SUCCESS;
}
