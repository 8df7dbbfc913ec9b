/* What test_ptx_ops' two files share: the op table as the test reads it, the builder state the
 * generators (ptx_ops_gen.c) write into, and the calls the driver (test_ptx_ops.c) makes to
 * scaffold a module, open a kernel and build one variant of an op into it. */
#ifndef OXIDE_TEST_PTX_OPS_H
#define OXIDE_TEST_PTX_OPS_H

#include "ir.h" /* for the A_ and L_ flags the table uses; nothing internal is linked */
#include "oxide.h"

/* the table itself, for operand letters and minimum SMs (defined in test_ptx_ops.c) */
struct row {
    const char *name, *operands, *result;
    unsigned attrs, min_sm, lower;
};
extern const struct row rows[];

typedef struct G {
    oxide_context *ctx;
    oxide_module *mod;
    oxide_function *k;
    oxide_block *b;
    oxide_value *p;    /* ptr.global scratch memory: inputs are loaded from it, results stored to it */
    oxide_value *desc; /* tma_desc parameter (TMA kernels only) */
    int slot;
    oxide_status st;
    /* types */
    oxide_type *v, *i1, *i8, *i16, *i32, *i64, *f16, *bf16, *f32, *f64, *pg, *ps, *pc, *pgen;
    oxide_type *v4f32, *v2f32, *v2i32, *v2i64, *st_fi;
} G;

/* The scalar, pointer, vector and struct types the generators use, into g. */
void types(G *g);
/* A module with the globals and device functions the variants refer to, into g->mod. */
oxide_status new_module(G *g, const char *name);
/* A kernel "name" in g->mod, with the parameters op o's variants need and one open block. */
oxide_status begin_kernel(G *g, const char *name, oxide_op o);
/* Builds variant v of op o into the current kernel. 1: built (or g->st set), 0: no such variant. */
int gen(G *g, oxide_op o, int v);

#endif
