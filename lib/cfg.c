/* lib/cfg.h: the CFG, reverse postorder and dominators (Cooper, Harvey & Kennedy's iterative
 * algorithm over the reverse postorder). Walks use explicit stacks: deep CFGs must not
 * overflow the C stack. */
#include "cfg.h"

#include <stdlib.h>

void oxide__cfg_free(oxide_cfg *g) {
    free(g->succ_start);
    free(g->succ);
    free(g->pred_start);
    free(g->pred);
    free(g->order);
    free(g->rpo_num);
    free(g->idom);
    free(g->pre);
    free(g->post);
    *g = (oxide_cfg){0};
}

/* Successors are taken from every instruction of a block, not just the last: on malformed IR
 * (a terminator in mid-block, which the verifier reports) this keeps dominance meaningful. */
static size_t count_edges(const oxide_function *fn) {
    size_t nedges = 0;
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        for (uint32_t i = 0; blk && i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (in && in->succ)
                nedges += in->nsucc;
        }
    }
    return nedges;
}

static void fill_edges(oxide_cfg *g, const oxide_function *fn, uint32_t *cursor) {
    uint32_t n = g->n, e = 0;
    for (uint32_t b = 0; b < n; b++) {
        g->succ_start[b] = e;
        const oxide_block *blk = fn->blocks.items[b];
        for (uint32_t i = 0; blk && i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (!in || !in->succ)
                continue;
            for (uint32_t s = 0; s < in->nsucc; s++)
                if (oxide__block_in_fn(fn, in->succ[s].block))
                    g->succ[e++] = in->succ[s].block->index;
        }
    }
    g->succ_start[n] = e;
    for (uint32_t i = 0; i < e; i++)
        g->pred_start[g->succ[i] + 1]++;
    for (uint32_t b = 0; b < n; b++)
        g->pred_start[b + 1] += g->pred_start[b];
    for (uint32_t b = 0; b < n; b++)
        cursor[b] = g->pred_start[b];
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t i = g->succ_start[b]; i < g->succ_start[b + 1]; i++)
            g->pred[cursor[g->succ[i]]++] = b;
}

/* Postorder by DFS from the entry, successors in order, then reversed into g->order. */
static void reverse_postorder(oxide_cfg *g, uint32_t *stack, uint32_t *cursor) {
    uint32_t n = g->n, npost = 0, sp = 0;
    for (uint32_t b = 0; b < n; b++) {
        g->rpo_num[b] = UINT32_MAX;
        cursor[b] = g->succ_start[b];
    }
    if (n) {
        stack[sp++] = 0;
        g->rpo_num[0] = 0; /* marks "visited" until the real numbers are assigned */
    }
    while (sp) {
        uint32_t b = stack[sp - 1];
        if (cursor[b] < g->succ_start[b + 1]) {
            uint32_t s = g->succ[cursor[b]++];
            if (g->rpo_num[s] == UINT32_MAX) {
                g->rpo_num[s] = 0;
                stack[sp++] = s;
            }
        } else {
            g->order[npost++] = b;
            sp--;
        }
    }
    for (uint32_t i = 0; i < npost / 2; i++) {
        uint32_t t = g->order[i];
        g->order[i] = g->order[npost - 1 - i];
        g->order[npost - 1 - i] = t;
    }
    for (uint32_t i = 0; i < npost; i++)
        g->rpo_num[g->order[i]] = i;
    g->nreach = npost;
}

static uint32_t intersect(const oxide_cfg *g, uint32_t a, uint32_t b) {
    while (a != b) {
        while (g->rpo_num[a] > g->rpo_num[b])
            a = g->idom[a];
        while (g->rpo_num[b] > g->rpo_num[a])
            b = g->idom[b];
    }
    return a;
}

static void immediate_dominators(oxide_cfg *g) {
    for (uint32_t b = 0; b < g->n; b++)
        g->idom[b] = UINT32_MAX;
    if (!g->n)
        return;
    g->idom[0] = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 1; i < g->nreach; i++) {
            uint32_t b = g->order[i], nd = UINT32_MAX;
            for (uint32_t p = g->pred_start[b]; p < g->pred_start[b + 1]; p++) {
                uint32_t q = g->pred[p];
                if (g->idom[q] == UINT32_MAX)
                    continue; /* unreachable or not processed yet */
                nd = nd == UINT32_MAX ? q : intersect(g, q, nd);
            }
            if (nd != UINT32_MAX && g->idom[b] != nd) {
                g->idom[b] = nd;
                changed = true;
            }
        }
    }
}

/* The dominator tree as child lists, then pre/post numbers by DFS. */
static void dominator_intervals(oxide_cfg *g, uint32_t *stack, uint32_t *cursor, uint32_t *child_start,
                                uint32_t *child) {
    uint32_t n = g->n;
    for (uint32_t b = 1; b < n; b++)
        if (g->idom[b] != UINT32_MAX)
            child_start[g->idom[b] + 1]++;
    for (uint32_t b = 0; b <= n; b++)
        child_start[b + 1] += child_start[b];
    for (uint32_t b = 0; b < n; b++)
        cursor[b] = child_start[b];
    for (uint32_t b = 1; b < n; b++)
        if (g->idom[b] != UINT32_MAX)
            child[cursor[g->idom[b]]++] = b;
    for (uint32_t b = 0; b < n; b++) {
        cursor[b] = child_start[b];
        g->pre[b] = g->post[b] = UINT32_MAX;
    }
    uint32_t clock = 0, sp = 0;
    if (n) {
        stack[sp++] = 0;
        g->pre[0] = clock++;
    }
    while (sp) {
        uint32_t b = stack[sp - 1];
        if (cursor[b] < child_start[b + 1]) {
            uint32_t c = child[cursor[b]++];
            g->pre[c] = clock++;
            stack[sp++] = c;
        } else {
            g->post[b] = clock++;
            sp--;
        }
    }
}

bool oxide__cfg_build(oxide_cfg *g, const oxide_function *fn) {
    *g = (oxide_cfg){0};
    uint32_t n = g->n = fn->blocks.len;
    size_t nedges = count_edges(fn);
    g->succ_start = calloc(n + 1, sizeof *g->succ_start);
    g->succ = malloc((nedges + 1) * sizeof *g->succ);
    g->pred_start = calloc(n + 1, sizeof *g->pred_start);
    g->pred = malloc((nedges + 1) * sizeof *g->pred);
    g->order = malloc((n + 1) * sizeof *g->order);
    g->rpo_num = malloc((n + 1) * sizeof *g->rpo_num);
    g->idom = malloc((n + 1) * sizeof *g->idom);
    g->pre = malloc((n + 1) * sizeof *g->pre);
    g->post = malloc((n + 1) * sizeof *g->post);
    uint32_t *stack = malloc((n + 1) * sizeof *stack);
    uint32_t *cursor = calloc(n + 1, sizeof *cursor);
    uint32_t *child_start = calloc(n + 2, sizeof *child_start);
    uint32_t *child = malloc((n + 1) * sizeof *child);
    bool ok = g->succ_start && g->succ && g->pred_start && g->pred && g->order && g->rpo_num && g->idom && g->pre &&
              g->post && stack && cursor && child_start && child;
    if (ok) {
        fill_edges(g, fn, cursor);
        reverse_postorder(g, stack, cursor);
        immediate_dominators(g);
        dominator_intervals(g, stack, cursor, child_start, child);
    }
    free(stack);
    free(cursor);
    free(child_start);
    free(child);
    return ok;
}
