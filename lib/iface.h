/* The kernel interface: a kernel's parameters as its callers see them, and its launch
 * attributes. One type for the compiler (builder, Rust import, manifest writer) and the runtime
 * (manifest reader, launch checks), so the manifest carries exactly what both sides mean by a
 * parameter. No LLVM: the runtime includes it. Not installed. */
#ifndef OXIDE_IFACE_H
#define OXIDE_IFACE_H

#include <stdbool.h>
#include <stdint.h>

#include "oxide.h"

typedef struct oxide_iface_param {
    const char *name;
    oxide_param_kind kind;
    oxide_scalar scalar; /* SCALAR: type; SLICE, PTR: element */
    bool is_mutable;
    uint32_t size, align; /* BYTES as written, TMA_DESC 128 and 64; a manifest's others derived */
    uint32_t first_value; /* its first PTX parameter (a slice is two) = its first value in fn->params */
    oxide_type *tensor;   /* tile kernels' tensor parameters (compiler only): the tensor type */
    /* A tensor parameter of rank r is 1 + 2r PTX parameters, from first_value on: the element
     * pointer (u64: data + byte_offset), then shape[0..r-1] and strides[0..r-1] (i64, strides in
     * elements). rank and elem are then what the launch checks. */
    uint32_t rank;
    oxide_scalar elem;
    /* A lowered tile kernel's tensor that it may read through TMA (sm_90a): one more PTX
     * parameter after the strides, a 128-byte descriptor (.param .align 64) that the launch
     * encodes for boxes of tma_box[0..rank-1] elements (outermost first; 128-byte swizzle) when
     * the tensor allows TMA (a 16-byte aligned base, a contiguous last dim, row pitches in
     * multiples of 16 bytes, dims below 2^31). Which of the kernel's two variants runs depends
     * on that (oxide_iface_kernel.tma_entry). */
    bool tma;
    uint32_t tma_box[4];
} oxide_iface_param;

/* A TMA box's rule, for both readers of one (the verifier, the manifest reader): the first dim
 * of p's box that breaks it, or -1. */
#define OXIDE__TMA_BOX_RULE "1 to 256, the last dim 16 to 128 bytes in multiples of 16"
static inline int32_t oxide__iface_tma_bad_dim(const oxide_iface_param *p) {
    uint32_t es = (uint32_t)oxide_scalar_size(p->elem);
    for (uint32_t d = 0; p->tma && d < p->rank && d < 4; d++)
        if (p->tma_box[d] < 1 || p->tma_box[d] > 256 ||
            (d + 1 == p->rank && (p->tma_box[d] * es % 16 || p->tma_box[d] * es > 128)))
            return (int32_t)d;
    return -1;
}

/* The PTX parameters a parameter takes: a slice two, a tensor 1 + 2 * rank (+ 1 with TMA). */
static inline uint32_t oxide__iface_ptx_parts(const oxide_iface_param *p) {
    if (p->kind == OXIDE_PARAM_SLICE)
        return 2;
    if (p->kind == OXIDE_PARAM_TENSOR)
        return 1 + 2 * p->rank + (p->tma ? 1 : 0);
    return 1;
}

/* The byte size of PTX parameter `part` (0..oxide__iface_ptx_parts - 1) of p; a scalar's is its
 * own size (it may travel in a wider PTX parameter). */
static inline uint32_t oxide__iface_ptx_part_size(const oxide_iface_param *p, uint32_t part) {
    switch (p->kind) {
    case OXIDE_PARAM_SCALAR:
    case OXIDE_PARAM_BYTES: return p->size;
    case OXIDE_PARAM_TMA_DESC: return 128;
    case OXIDE_PARAM_TENSOR: return part <= 2 * p->rank ? 8 : 128;
    default: return 8;
    }
}

typedef struct oxide_iface_kernel {
    const char *name, *entry; /* the name launches use; the PTX .entry */
    oxide_iface_param *params;
    uint32_t nparams;
    uint32_t nptx;     /* PTX parameters: a slice is two */
    uint32_t block[3]; /* threads per block the compiler chose (lowered tile kernels); 0: the launch gives it */
    uint32_t launch_bounds[2];
    uint32_t cluster[3];
    uint32_t dyn_smem;
    oxide_launch_contract contract; /* fields 0: none */
    /* A lowered tile kernel with TMA copies is two entries: this one, which copies without TMA,
     * names the one that copies with it (tma_entry), which launches take when every TMA tensor
     * of the launch allows TMA; that one is tma_only (launched directly, such tensors only). */
    const char *tma_entry;
    bool tma_only;
    /* A persistent entry (a lowered tile kernel's TMA variant with persistent=1) walks the
     * launch's grid with fewer blocks: its last three PTX parameters (u32, counted in nptx) take
     * the grid the launch was given, and the runtime launches at most as many blocks as the
     * device holds at once (runtime/launch.c). */
    bool persistent;
} oxide_iface_kernel;

#endif
