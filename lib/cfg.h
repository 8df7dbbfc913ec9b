/* The control-flow graph of one function: successor and predecessor lists, the reverse
 * postorder from the entry and the dominator tree. The verifier checks dominance with it and
 * the lowering walks blocks in its order. Not installed. */
#ifndef OXIDE_CFG_H
#define OXIDE_CFG_H

#include "ir.h"

typedef struct oxide_cfg {
    uint32_t n;                  /* blocks of the function */
    uint32_t *succ_start, *succ; /* CSR successor lists (only edges to blocks of this function) */
    uint32_t *pred_start, *pred;
    uint32_t *order;   /* the blocks reachable from the entry, in reverse postorder */
    uint32_t nreach;   /* length of order */
    uint32_t *rpo_num; /* position in order; UINT32_MAX: unreachable from the entry */
    uint32_t *idom;
    uint32_t *pre, *post; /* dominator-tree DFS interval: a dominates b iff b's lies in a's */
} oxide_cfg;

/* Builds g for fn without trusting it: NULL blocks and instructions, and successors that are
 * not blocks of fn, are skipped. False when out of memory (g is then safe to free). */
bool oxide__cfg_build(oxide_cfg *g, const oxide_function *fn);
void oxide__cfg_free(oxide_cfg *g);

static inline bool oxide__cfg_reachable(const oxide_cfg *g, uint32_t b) {
    return b < g->n && g->rpo_num[b] != UINT32_MAX;
}

/* a dominates b (both reachable) */
static inline bool oxide__cfg_dominates(const oxide_cfg *g, uint32_t a, uint32_t b) {
    return g->pre[a] <= g->pre[b] && g->post[b] <= g->post[a];
}

/* b is a block of fn, recorded where fn lists it. */
static inline bool oxide__block_in_fn(const oxide_function *fn, const oxide_block *b) {
    return b && b->fn == fn && b->index < fn->blocks.len && fn->blocks.items[b->index] == b;
}

#endif
