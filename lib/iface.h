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
} oxide_iface_param;

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
} oxide_iface_kernel;

#endif
