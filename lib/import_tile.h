/* Internal interface between the two files of the tile import (lib/import_tile.c: descriptors,
 * the module's preparation and the entry point; lib/import_tile_lift.c: the lift of one
 * entry's body). Not installed. */
#ifndef OXIDE_IMPORT_TILE_H
#define OXIDE_IMPORT_TILE_H

#include <stdlib.h>
#include <string.h>

#include "import.h"

/* ---- a map from LLVM values (and blocks) to oxide values (and blocks) ---- */

typedef struct vmap {
    const void **keys;
    void **vals;
    size_t cap, len;
} vmap;

static inline size_t vm_slot(const vmap *m, const void *k) {
    size_t h = ((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
        if (!m->keys[i] || m->keys[i] == k)
            return i;
}

static inline void *vm_get(const vmap *m, const void *k) {
    if (!m->cap)
        return NULL;
    size_t i = vm_slot(m, k);
    return m->keys[i] ? m->vals[i] : NULL;
}

static inline bool vm_put(vmap *m, const void *k, void *v) {
    if ((m->len + 1) * 2 > m->cap) {
        vmap g = {calloc(m->cap ? m->cap * 2 : 256, sizeof *g.keys), calloc(m->cap ? m->cap * 2 : 256, sizeof *g.vals),
                  m->cap ? m->cap * 2 : 256, 0};
        if (!g.keys || !g.vals) {
            free(g.keys), free(g.vals);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                vm_put(&g, m->keys[i], m->vals[i]);
        free(m->keys), free(m->vals);
        *m = g;
    }
    size_t i = vm_slot(m, k);
    if (!m->keys[i])
        m->len++;
    m->keys[i] = k, m->vals[i] = v;
    return true;
}

static inline void vm_free(vmap *m) { free(m->keys), free(m->vals), memset(m, 0, sizeof *m); }

/* ---- a kernel as its descriptor gives it (cuda_tile::__private::TileKernelDesc) ---- */

typedef struct tparam {
    char name[64];
    uint32_t kind, elem, rank, mut;
} tparam;

typedef struct tdesc {
    char name[200];
    uint32_t warps, nparams;
    tparam params[32];
} tdesc;

/* ---- one kernel's lift ---- */

/* A loop rustc's optimiser rotated, lifted with its test at the top (lib/import_tile_loop.c). */
typedef struct tile_loop {
    LLVMBasicBlockRef body, exit;
    LLVMValueRef test;     /* the bottom test: lifted only where something else uses it */
    LLVMValueRef ub;       /* from outside the loop */
    unsigned iv;           /* the induction variable is the body's phi number iv */
    LLVMIntPredicate pred; /* the loop goes on while iv PRED ub */
    oxide_block *head, *block;
} tile_loop;

typedef struct lift {
    oxide_module *mod;
    oxide_context *ctx;
    oxide_function *k;
    const char *kname;
    LLVMValueRef fn;
    tdesc *d;
    oxide_value *params[32]; /* descriptor order */
    vmap vals;               /* LLVM value -> oxide_value */
    vmap tiles;              /* LLVM value -> its tile type (a tile handle) */
    vmap blocks;             /* LLVM block -> oxide_block */
    LLVMBasicBlockRef *rpo;
    size_t nrpo;
    tile_loop *loops; /* the rotated loops, given a head again */
    size_t nloops;
} lift;

/* "tile kernel NAME at FILE:LINE" (the line where debug info has one) into buf. */

/* The element type of an oxide_scalar code (bool is i1), or NULL. */
oxide_type *oxide__tile_scalar_of_code(oxide_context *ctx, uint32_t code);
/* Whether the stub named so is a query of the launch (a scalar result: program_id, dim, ...). */
bool oxide__tile_stub_is_query(const char *name);
/* OUT_OF_MEMORY, naming the tile import. */
oxide_status oxide__tile_oom(void);
/* L's body (its entry function, inlined and cleaned) as the blocks of L->k. */
oxide_status oxide__tile_lift_body(lift *L);
/* The rotated loops of L->rpo into L->loops; the one whose body is b, or NULL. */
oxide_status oxide__tile_find_loops(lift *L);
tile_loop *oxide__tile_loop_of(const lift *L, LLVMBasicBlockRef b);
/* What phi receives from block from, or NULL; the number of b's phi whose value for the next
 * iteration is x, or -1. */
LLVMValueRef oxide__tile_incoming(LLVMValueRef phi, LLVMBasicBlockRef from);
int oxide__tile_carried(LLVMBasicBlockRef b, LLVMValueRef x);

#endif
