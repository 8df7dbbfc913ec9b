/* The verifier: checks a module's IR against the rules every later stage relies on (types,
 * dominance, terminators, address spaces, the target SM, op-specific limits, kernel metadata).
 *
 * It runs at the API boundary (compile calls it first) and between passes, so it must never
 * trust the IR it is given: IR may have been mutated after it was built, or come from the
 * parser or another front end. Nothing here dereferences a pointer it has not checked, and the
 * IR is never modified (not even the values' scratch fields, which passes may be using).
 *
 * Every rule that would otherwise make LLVM abort the process or miscompile (DESIGN.md
 * section 2: "liboxide never hands LLVM what it cannot lower") belongs here; each such rule
 * says which failure it prevents.
 *
 * Errors are collected (one per instruction, so a single mistake does not cascade) and reported
 * together, first one first, joined by newlines:
 *   verify: kernel @vecadd ^2 #3 'load': operand 0 must be a pointer, got f32
 * Blocks are numbered by their index in the function (^0 is the entry), instructions by their
 * index in the block, operands from 0 -- the same numbering the builder's messages use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* oxide_last_error() holds 2048 bytes; leave room for the "more errors" line. */
#define MSG_CAP 1900
/* The portable cluster size: CUDA guarantees 8 CTAs per cluster on every SM that has clusters;
 * more needs cudaFuncAttributeNonPortableClusterSizeAllowed, which oxide does not set. */
#define MAX_PORTABLE_CLUSTER 8u
#define MAX_THREADS_PER_BLOCK 1024u

typedef struct verifier {
    oxide_module *mod;
    const oxide_options *opts;
    /* where we are, for message prefixes (NULL / UINT32_MAX: not inside one) */
    const oxide_function *fn;
    uint32_t block;
    uint32_t pos;
    const oxide_inst *inst;
    const oxide_global *global;
    /* collected messages */
    char msg[MSG_CAP];
    size_t len;
    unsigned nerrors, dropped;
} verifier;

/* ---- reporting ---- */

static const char *op_name(oxide_op op) { return (unsigned)op < OXIDE_OP_COUNT_ ? oxide_ops[op].name : "?"; }

static const char *tname(const oxide_type *t) { return t && t->name ? t->name : "<null type>"; }

static void report(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(verifier *v, const char *fmt, ...) {
    char one[1024];
    size_t n = 0;
    n += (size_t)snprintf(one + n, sizeof one - n, "verify: ");
    if (v->fn) {
        n += (size_t)snprintf(one + n, sizeof one - n, "%s @%s",
                              v->fn->is_tile     ? "tile_kernel"
                              : v->fn->is_kernel ? "kernel"
                                                 : "func",
                              v->fn->name ? v->fn->name : "<unnamed>");
        if (n < sizeof one && v->block != UINT32_MAX)
            n += (size_t)snprintf(one + n, sizeof one - n, " ^%u", v->block);
        if (n < sizeof one && v->inst)
            n += (size_t)snprintf(one + n, sizeof one - n, " #%u '%s'", v->pos, op_name(v->inst->op));
        /* tile kernels are written as text; their messages point into it */
        if (n < sizeof one && v->inst && v->inst->line && v->fn->is_tile)
            n += (size_t)snprintf(one + n, sizeof one - n, " at %u:%u", v->inst->line, v->inst->col);
    } else if (v->global) {
        n += (size_t)snprintf(one + n, sizeof one - n, "global @%s", v->global->name ? v->global->name : "<unnamed>");
    } else {
        n += (size_t)snprintf(one + n, sizeof one - n, "module @%s", v->mod->name ? v->mod->name : "<unnamed>");
    }
    if (n < sizeof one)
        n += (size_t)snprintf(one + n, sizeof one - n, ": ");
    if (n < sizeof one) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(one + n, sizeof one - n, fmt, ap);
        va_end(ap);
    }
    v->nerrors++;
    size_t need = strlen(one) + (v->len ? 1 : 0);
    if (v->len + need >= sizeof v->msg) {
        v->dropped++;
        return;
    }
    if (v->len)
        v->msg[v->len++] = '\n';
    memcpy(v->msg + v->len, one, strlen(one) + 1);
    v->len += strlen(one);
}

/* ---- small helpers ---- */

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static bool is_int(const oxide_type *t) { return t && oxide__type_is_int(t); }
static bool is_float(const oxide_type *t) { return t && oxide__type_is_float(t); }
static bool is_ptr(const oxide_type *t) { return t && t->kind == OXIDE_TYPE_PTR; }
static bool is_kind(const oxide_type *t, oxide_type_kind k) { return t && t->kind == k; }
static bool is_sized(const oxide_type *t) { return t && t->kind != OXIDE_TYPE_VOID; }
static unsigned bits(const oxide_type *t) { return t ? oxide__type_bits(t) : 0; }

/* Type equality. Types are interned per context, but compare structurally so that a type
 * from another context (a bug, yet not one to crash on) is judged by what it is. */
static bool type_eq(const oxide_type *a, const oxide_type *b) {
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind)
        return false;
    switch (a->kind) {
    case OXIDE_TYPE_PTR: return a->addrspace == b->addrspace;
    case OXIDE_TYPE_VECTOR:
    case OXIDE_TYPE_ARRAY: return a->count == b->count && type_eq(a->elem, b->elem);
    case OXIDE_TYPE_TILE:
    case OXIDE_TYPE_TENSOR: return oxide__tile_shape_eq(a, b) && type_eq(a->elem, b->elem);
    case OXIDE_TYPE_STRUCT:
        if (a->nfields != b->nfields)
            return false;
        for (uint32_t i = 0; i < a->nfields; i++)
            if (!type_eq(a->fields[i], b->fields[i]))
                return false;
        return true;
    default: return true;
    }
}

static const char *as_name(uint32_t as) {
    switch (as) {
    case OXIDE_AS_GENERIC: return "generic";
    case OXIDE_AS_GLOBAL: return "global";
    case OXIDE_AS_SHARED: return "shared";
    case OXIDE_AS_CONSTANT: return "constant";
    case OXIDE_AS_LOCAL: return "local";
    case OXIDE_AS_PARAM: return "param";
    default: return "unknown";
    }
}

static bool op_is_term(oxide_op op) { return (unsigned)op < OXIDE_OP_COUNT_ && oxide_ops[op].lower == L_TERM; }

static bool block_in_fn(const oxide_function *fn, const oxide_block *b) {
    return b && b->fn == fn && b->index < fn->blocks.len && fn->blocks.items[b->index] == b;
}

/* ---- instruction positions: inst -> (block, index), without touching the IR ---- */

typedef struct inst_map {
    const oxide_inst **keys;
    uint32_t *block, *pos;
    size_t mask;
} inst_map;

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static bool inst_map_init(inst_map *m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->block = malloc(cap * sizeof *m->block);
    m->pos = malloc(cap * sizeof *m->pos);
    m->mask = cap - 1;
    return m->keys && m->block && m->pos;
}

static void inst_map_free(inst_map *m) {
    free(m->keys);
    free(m->block);
    free(m->pos);
}

/* Returns false if the instruction was already there (listed twice in the function). */
static bool inst_map_put(inst_map *m, const oxide_inst *in, uint32_t b, uint32_t p) {
    size_t i = hash_ptr(in) & m->mask;
    while (m->keys[i]) {
        if (m->keys[i] == in)
            return false;
        i = (i + 1) & m->mask;
    }
    m->keys[i] = in;
    m->block[i] = b;
    m->pos[i] = p;
    return true;
}

static bool inst_map_get(const inst_map *m, const oxide_inst *in, uint32_t *b, uint32_t *p) {
    if (!in)
        return false;
    size_t i = hash_ptr(in) & m->mask;
    while (m->keys[i]) {
        if (m->keys[i] == in) {
            *b = m->block[i];
            *p = m->pos[i];
            return true;
        }
        i = (i + 1) & m->mask;
    }
    return false;
}

/* ---- name sets (value names per function; symbol names per module) ---- */

typedef struct name_set {
    const char **keys;
    size_t mask;
} name_set;

static size_t hash_str(const char *s) {
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool name_set_init(name_set *s, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    s->keys = calloc(cap, sizeof *s->keys);
    s->mask = cap - 1;
    return s->keys != NULL;
}

/* Returns false if name was already in the set. */
static bool name_set_add(name_set *s, const char *name) {
    size_t i = hash_str(name) & s->mask;
    while (s->keys[i]) {
        if (!strcmp(s->keys[i], name))
            return false;
        i = (i + 1) & s->mask;
    }
    s->keys[i] = name;
    return true;
}

/* ---- dominators (Cooper, Harvey & Kennedy's iterative algorithm over the reverse postorder) ---- */

typedef struct cfg {
    uint32_t n;
    uint32_t *succ_start, *succ; /* CSR successor lists (only edges to blocks of this function) */
    uint32_t *pred_start, *pred;
    uint32_t *rpo_num; /* UINT32_MAX: unreachable from the entry */
    uint32_t *idom;
    uint32_t *pre, *post; /* dominator-tree DFS interval: a dominates b iff b's lies in a's */
} cfg;

static void cfg_free(cfg *g) {
    free(g->succ_start);
    free(g->succ);
    free(g->pred_start);
    free(g->pred);
    free(g->rpo_num);
    free(g->idom);
    free(g->pre);
    free(g->post);
}

static uint32_t intersect(const cfg *g, uint32_t a, uint32_t b) {
    while (a != b) {
        while (g->rpo_num[a] > g->rpo_num[b])
            a = g->idom[a];
        while (g->rpo_num[b] > g->rpo_num[a])
            b = g->idom[b];
    }
    return a;
}

/* Successors are taken from every instruction of a block, not just the last: on malformed IR
 * (a terminator in mid-block, reported elsewhere) this keeps the dominance errors meaningful. */
static bool cfg_build(cfg *g, const oxide_function *fn) {
    uint32_t n = g->n = fn->blocks.len;
    size_t nedges = 0;
    for (uint32_t b = 0; b < n; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        if (!blk)
            continue;
        for (uint32_t i = 0; i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (in && in->succ)
                nedges += in->nsucc;
        }
    }
    g->succ_start = calloc(n + 1, sizeof *g->succ_start);
    g->succ = malloc((nedges + 1) * sizeof *g->succ);
    g->pred_start = calloc(n + 1, sizeof *g->pred_start);
    g->pred = malloc((nedges + 1) * sizeof *g->pred);
    g->rpo_num = malloc((n + 1) * sizeof *g->rpo_num);
    g->idom = malloc((n + 1) * sizeof *g->idom);
    g->pre = malloc((n + 1) * sizeof *g->pre);
    g->post = malloc((n + 1) * sizeof *g->post);
    uint32_t *order = malloc((n + 1) * sizeof *order);
    uint32_t *stack = malloc((n + 1) * sizeof *stack);
    uint32_t *cursor = calloc(n + 1, sizeof *cursor);
    uint32_t *child_start = calloc(n + 2, sizeof *child_start);
    uint32_t *child = malloc((n + 1) * sizeof *child);
    bool ok = g->succ_start && g->succ && g->pred_start && g->pred && g->rpo_num && g->idom && g->pre && g->post &&
              order && stack && cursor && child_start && child;
    if (!ok)
        goto out;

    /* successor lists */
    uint32_t e = 0;
    for (uint32_t b = 0; b < n; b++) {
        g->succ_start[b] = e;
        const oxide_block *blk = fn->blocks.items[b];
        if (!blk)
            continue;
        for (uint32_t i = 0; i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (!in || !in->succ)
                continue;
            for (uint32_t s = 0; s < in->nsucc; s++)
                if (block_in_fn(fn, in->succ[s].block))
                    g->succ[e++] = in->succ[s].block->index;
        }
    }
    g->succ_start[n] = e;
    /* predecessor lists */
    for (uint32_t i = 0; i < e; i++)
        g->pred_start[g->succ[i] + 1]++;
    for (uint32_t b = 0; b < n; b++)
        g->pred_start[b + 1] += g->pred_start[b];
    for (uint32_t b = 0; b < n; b++)
        cursor[b] = g->pred_start[b];
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t i = g->succ_start[b]; i < g->succ_start[b + 1]; i++)
            g->pred[cursor[g->succ[i]]++] = b;

    /* postorder by an explicit-stack DFS from the entry (deep CFGs must not overflow the C stack) */
    for (uint32_t b = 0; b < n; b++) {
        g->rpo_num[b] = UINT32_MAX;
        g->idom[b] = UINT32_MAX;
        cursor[b] = g->succ_start[b];
    }
    uint32_t npost = 0, sp = 0;
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
            order[npost++] = b;
            sp--;
        }
    }
    /* reverse postorder numbers; order[] becomes the RPO sequence */
    for (uint32_t i = 0; i < npost / 2; i++) {
        uint32_t t = order[i];
        order[i] = order[npost - 1 - i];
        order[npost - 1 - i] = t;
    }
    for (uint32_t i = 0; i < npost; i++)
        g->rpo_num[order[i]] = i;

    if (n) {
        g->idom[0] = 0;
        for (bool changed = true; changed;) {
            changed = false;
            for (uint32_t i = 1; i < npost; i++) {
                uint32_t b = order[i], nd = UINT32_MAX;
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

    /* dominator tree as child lists, then pre/post numbers by an explicit-stack DFS */
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
    uint32_t clock = 0;
    sp = 0;
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
out:
    free(order);
    free(stack);
    free(cursor);
    free(child_start);
    free(child);
    return ok;
}

static bool reachable(const cfg *g, uint32_t b) { return b < g->n && g->rpo_num[b] != UINT32_MAX; }

/* a dominates b (both reachable) */
static bool dominates(const cfg *g, uint32_t a, uint32_t b) {
    return g->pre[a] <= g->pre[b] && g->post[b] <= g->post[a];
}

/* ---- per-function state ---- */

typedef struct fn_state {
    const oxide_function *fn;
    inst_map insts;
    cfg g;
} fn_state;

/* A short description of a value for messages. */
static const char *describe(const fn_state *fs, const oxide_value *val, char *buf, size_t cap) {
    if (!val)
        return "<null>";
    if (val->name) {
        snprintf(buf, cap, "%%%s", val->name);
        return buf;
    }
    uint32_t b, p;
    switch (val->kind) {
    case VAL_PARAM: snprintf(buf, cap, "function parameter %u", val->index); break;
    case VAL_BLOCK_PARAM:
        snprintf(buf, cap, "parameter %u of ^%u", val->index, val->block ? val->block->index : 0);
        break;
    default:
        if (inst_map_get(&fs->insts, val->def, &b, &p))
            snprintf(buf, cap, "the result of ^%u #%u '%s'", b, p, op_name(val->def->op));
        else
            snprintf(buf, cap, val->def ? "the result of a detached '%s'" : "a value with no definition",
                     val->def ? op_name(val->def->op) : "");
    }
    return buf;
}

/* ---- rule 2: operands are defined before use ----
 *
 * Reachable uses follow SSA dominance: the defining block dominates the using block, or the
 * definition comes earlier in the same block; a block's own parameters and the function's
 * parameters are always available.
 *
 * Uses in blocks unreachable from the entry are checked for local order only (a value from
 * the same block must come earlier; one from another block of this function is accepted),
 * which is LLVM's and MLIR's rule: dominance means nothing where control never arrives, and
 * passes that cut an edge should not have to clean up the dead side before the next verify.
 * The lowering therefore may not assume unreachable blocks are well-ordered; it should drop
 * them. A value defined in an unreachable block never dominates a reachable use.
 *
 * Returns false (after reporting) if the operand is not available. */
static bool check_available(verifier *v, const fn_state *fs, const oxide_value *val, uint32_t ub, uint32_t upos,
                            const char *what) {
    const oxide_function *fn = fs->fn;
    const cfg *g = &fs->g;
    char d[160];
    if (!val) {
        report(v, "%s is missing (NULL)", what);
        return false;
    }
    if (val->fn != fn) {
        report(v, "%s (%s) belongs to another function", what, describe(fs, val, d, sizeof d));
        return false;
    }
    switch (val->kind) {
    case VAL_PARAM:
        if (val->index >= fn->params.len || fn->params.items[val->index] != val) {
            report(v, "%s (%s) is not a parameter of this function", what, describe(fs, val, d, sizeof d));
            return false;
        }
        return true;
    case VAL_BLOCK_PARAM: {
        const oxide_block *ob = val->block;
        if (!block_in_fn(fn, ob) || val->index >= ob->params.len || ob->params.items[val->index] != val) {
            report(v, "%s (%s) is a block parameter of no block of this function", what,
                   describe(fs, val, d, sizeof d));
            return false;
        }
        if (ob->index == ub || !reachable(g, ub))
            return true;
        if (!reachable(g, ob->index) || !dominates(g, ob->index, ub)) {
            report(v, "%s (%s) is a parameter of ^%u, which does not dominate ^%u", what,
                   describe(fs, val, d, sizeof d), ob->index, ub);
            return false;
        }
        return true;
    }
    case VAL_INST: {
        uint32_t db, dp;
        if (!val->def || val->def->result != val || !inst_map_get(&fs->insts, val->def, &db, &dp)) {
            report(v,
                   "%s (%s) is not defined by an instruction of this function (removed, or moved "
                   "from elsewhere)",
                   what, describe(fs, val, d, sizeof d));
            return false;
        }
        if (db == ub) {
            if (dp < upos)
                return true;
            if (dp == upos)
                report(v, "%s is this instruction's own result", what);
            else
                report(v, "%s (%s) is used before its definition at #%u of the same block", what,
                       describe(fs, val, d, sizeof d), dp);
            return false;
        }
        if (!reachable(g, ub))
            return true;
        if (!reachable(g, db) || !dominates(g, db, ub)) {
            report(v, "%s (%s) is defined in ^%u, which does not dominate ^%u", what, describe(fs, val, d, sizeof d),
                   db, ub);
            return false;
        }
        return true;
    }
    default: report(v, "%s has an unknown value kind %d", what, (int)val->kind); return false;
    }
}

/* ---- rule 1: result types of ops whose result the builder gives explicitly ---- */

/* The rule one cast applies to scalars (or to vector elements); NULL if from -> to is fine. */
static const char *cast_rule(oxide_op op, const oxide_type *from, const oxide_type *to) {
    unsigned fb = bits(from), tb = bits(to);
    switch (op) {
    case OXIDE_OP_TRUNC: return is_int(from) && is_int(to) && tb < fb ? NULL : "needs an integer to a narrower integer";
    case OXIDE_OP_ZEXT:
    case OXIDE_OP_SEXT: return is_int(from) && is_int(to) && tb > fb ? NULL : "needs an integer to a wider integer";
    case OXIDE_OP_FPTRUNC:
        return is_float(from) && is_float(to) && tb < fb ? NULL : "needs a float to a narrower float";
    case OXIDE_OP_FPEXT: return is_float(from) && is_float(to) && tb > fb ? NULL : "needs a float to a wider float";
    case OXIDE_OP_FPTOUI:
    case OXIDE_OP_FPTOSI:
        if (!is_float(from) || !is_int(to))
            return "needs a float to an integer";
        /* LLVM 22's NVPTX backend aborts the process ("unsupported library call operation"):
         * there is no i128 conversion routine on the GPU. */
        return tb > 64 ? "to i128 is not supported on NVPTX" : NULL;
    case OXIDE_OP_UITOFP:
    case OXIDE_OP_SITOFP:
        if (!is_int(from) || !is_float(to))
            return "needs an integer to a float";
        return fb > 64 ? "from i128 is not supported on NVPTX" : NULL;
    case OXIDE_OP_PTRTOINT: return is_ptr(from) && is_int(to) ? NULL : "needs a pointer to an integer";
    case OXIDE_OP_INTTOPTR: return is_int(from) && is_ptr(to) ? NULL : "needs an integer to a pointer";
    case OXIDE_OP_ADDRSPACECAST:
        if (!is_ptr(from) || !is_ptr(to))
            return "needs a pointer to a pointer";
        if (from->addrspace == to->addrspace)
            return "needs two different address spaces";
        /* NVPTX converts between a specific space and generic only (cvta / cvta.to). */
        if (from->addrspace != OXIDE_AS_GENERIC && to->addrspace != OXIDE_AS_GENERIC)
            return "needs one side to be the generic space (cast through ptr)";
        return NULL;
    default: return NULL;
    }
}

static void check_cast(verifier *v, const oxide_inst *in, const oxide_type *from, const oxide_type *to) {
    if (in->op == OXIDE_OP_BITCAST) {
        bool fp = is_ptr(from) || (is_kind(from, OXIDE_TYPE_VECTOR) && is_ptr(from->elem));
        bool tp = is_ptr(to) || (is_kind(to, OXIDE_TYPE_VECTOR) && is_ptr(to->elem));
        bool fagg = is_kind(from, OXIDE_TYPE_ARRAY) || is_kind(from, OXIDE_TYPE_STRUCT) || !is_sized(from);
        bool tagg = is_kind(to, OXIDE_TYPE_ARRAY) || is_kind(to, OXIDE_TYPE_STRUCT) || !is_sized(to);
        if (fagg || tagg)
            report(v, "cannot bitcast %s to %s: bitcast needs non-aggregate types", tname(from), tname(to));
        else if (fp || tp) {
            /* LLVM rejects pointer <-> non-pointer bitcasts; those are ptrtoint/inttoptr. */
            if (!(is_ptr(from) && is_ptr(to) && from->addrspace == to->addrspace))
                report(v, "cannot bitcast %s to %s: use ptrtoint, inttoptr or addrspacecast for pointers", tname(from),
                       tname(to));
        } else if (oxide__type_size(from) * 8 != oxide__type_size(to) * 8 ||
                   (bits(from) && bits(to) && bits(from) != bits(to)))
            report(v, "cannot bitcast %s to %s: sizes differ", tname(from), tname(to));
        return;
    }
    const oxide_type *fe = from, *te = to;
    if (is_kind(from, OXIDE_TYPE_VECTOR) || is_kind(to, OXIDE_TYPE_VECTOR)) {
        if (!is_kind(from, OXIDE_TYPE_VECTOR) || !is_kind(to, OXIDE_TYPE_VECTOR) || from->count != to->count) {
            report(v, "cannot cast %s to %s: a vector casts to a vector of the same length", tname(from), tname(to));
            return;
        }
        fe = from->elem;
        te = to->elem;
    }
    const char *why = cast_rule(in->op, fe, te);
    if (why)
        report(v, "cannot cast %s to %s: '%s' %s", tname(from), tname(to), op_name(in->op), why);
}

/* Element type at index idx of an aggregate, or NULL (with *why set). */
static const oxide_type *aggregate_elem(const oxide_type *agg, int64_t idx, const char **why) {
    if (!agg || (agg->kind != OXIDE_TYPE_VECTOR && agg->kind != OXIDE_TYPE_ARRAY && agg->kind != OXIDE_TYPE_STRUCT)) {
        *why = "not a vector, array or struct";
        return NULL;
    }
    uint64_t n = agg->kind == OXIDE_TYPE_STRUCT ? agg->nfields : agg->count;
    if (idx < 0 || (uint64_t)idx >= n) {
        *why = "index out of bounds";
        return NULL;
    }
    return agg->kind == OXIDE_TYPE_STRUCT ? agg->fields[idx] : agg->elem;
}

/* ---- rule 5: what each address space allows ---- */

typedef enum { ACC_LOAD, ACC_STORE, ACC_ATOMIC } access_kind;

static bool check_space(verifier *v, const oxide_type *ptr, access_kind acc, unsigned operand) {
    if (!is_ptr(ptr))
        return true; /* type errors are reported by the operand check */
    uint32_t as = ptr->addrspace;
    switch (acc) {
    case ACC_LOAD: return true;
    case ACC_STORE:
        if (as == OXIDE_AS_CONSTANT || as == OXIDE_AS_PARAM) {
            report(v, "operand %u: cannot store through a %s pointer (%s memory is read-only)", operand, tname(ptr),
                   as_name(as));
            return false;
        }
        return true;
    case ACC_ATOMIC:
        /* PTX atom/red address generic, global and shared memory only; LLVM aborts on an
         * atomicrmw in constant space ("Cannot select: AtomicLoadAdd"). */
        if (as != OXIDE_AS_GENERIC && as != OXIDE_AS_GLOBAL && as != OXIDE_AS_SHARED) {
            report(v, "operand %u: atomics need a generic, global or shared pointer, got %s", operand, tname(ptr));
            return false;
        }
        return true;
    }
    return true;
}

/* ---- rule 6: the target SM ---- */

static bool need_sm(verifier *v, unsigned sm, const char *what) {
    if (v->opts->sm >= sm)
        return true;
    report(v, "%s needs sm_%u or newer; target is %s", what, sm, v->opts->target);
    return false;
}

/* MIN_SM 901 in ops.def: the op exists on the arch-specific sm_90a target only (wgmma and
 * setmaxnreg are not part of sm_90, nor of the sm_100 family). */
#define MIN_SM_90A 901u

/* The PTX ISA version the compile will use (lib/emit.c picks the lowest the target accepts:
 * 7.8 for plain sm_90, at least 8.0 for every later or arch-specific target). */
static int effective_ptx(const oxide_options *o) {
    if (o->ptx_major || o->ptx_minor)
        return o->ptx_major * 10 + o->ptx_minor;
    return o->sm == 90 && !o->arch_specific ? 78 : o->sm < 90 ? 70 : 80;
}

static bool op_on_target(verifier *v, oxide_op op) {
    const oxide_op_info *info = &oxide_ops[op];
    char what[64];
    snprintf(what, sizeof what, "op '%s'", info->name);
    if (info->min_sm == MIN_SM_90A) {
        if (v->opts->sm == 90 && v->opts->arch_specific)
            return true;
        report(v, "%s needs sm_90a (the arch-specific Hopper target); target is %s", what, v->opts->target);
        return false;
    }
    if (info->min_sm > v->opts->sm)
        return need_sm(v, info->min_sm, what);
    /* The Hopper async ops (TMA, expect_tx, elect.sync, fence.proxy.async, ...) came with PTX 8.0
     * (stmatrix and try_wait.parity with 7.8); LLVM aborts the process when an intrinsic's PTX
     * version is missing ("Cannot select"). */
    bool ptx78 = op == OXIDE_OP_STMATRIX || op == OXIDE_OP_STMATRIX_TRANS || op == OXIDE_OP_MBARRIER_TRY_WAIT_PARITY;
    if (op >= OXIDE_OP_CP_ASYNC_CA && info->min_sm >= 90 && !ptx78 && effective_ptx(v->opts) < 80) {
        report(v, "%s needs PTX ISA 8.0; target %s uses %d.%d (set the PTX version to 8.0, or target sm_90a)", what,
               v->opts->target, effective_ptx(v->opts) / 10, effective_ptx(v->opts) % 10);
        return false;
    }
    return true;
}

/* ---- rule 7: op-specific checks ---- */

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !memcmp(s + n - m, suffix, m);
}

static bool is_lane_mask_op(oxide_op op) {
    return (op >= OXIDE_OP_SHFL_IDX && op <= OXIDE_OP_MATCH_ANY) ||
           (op >= OXIDE_OP_REDUX_ADD && op <= OXIDE_OP_REDUX_XOR) || op == OXIDE_OP_ELECT_SYNC;
}

static const oxide_type *elem_type(const oxide_type *t) {
    return is_kind(t, OXIDE_TYPE_VECTOR) && t->elem ? t->elem : t;
}

/* Integers PTX atomics and warp matches work on (narrower ones are widened or emulated by the
 * lowering; i1 has no memory form and nothing here is 128 bits wide on sm_80). */
static bool is_int_8_to_64(const oxide_type *t) { return is_int(t) && bits(t) >= 8 && bits(t) <= 64; }
static bool is_f32_or_f64(const oxide_type *t) { return is_kind(t, OXIDE_TYPE_F32) || is_kind(t, OXIDE_TYPE_F64); }

/* Scalar types an atomic load/store/exchange moves in one PTX access: integers of 8 to 64 bits,
 * floats, pointers. (i1 has no memory form; i128 atomics are "unsupported atomic load" in
 * LLVM 22.) */
static bool atomic_mem_type(const oxide_type *t) { return is_int_8_to_64(t) || is_float(t) || is_ptr(t); }

static void check_call(verifier *v, const oxide_inst *in) {
    if (!in->sym) {
        report(v, "call has no callee (attribute sym is missing)");
        return;
    }
    oxide_function *callee = oxide__module_find_function(v->mod, in->sym);
    if (!callee) {
        report(v, "call to @%s: no function of that name in module @%s", in->sym, v->mod->name ? v->mod->name : "");
        return;
    }
    if (callee->is_kernel) {
        report(v, "call to @%s: it is a kernel; only device functions can be called", in->sym);
        return;
    }
    if (in->noperands != callee->params.len) {
        report(v, "call to @%s: expected %u argument%s, got %u", in->sym, callee->params.len,
               plural(callee->params.len), in->noperands);
        return;
    }
    for (uint32_t i = 0; i < in->noperands; i++) {
        const oxide_value *a = in->operands[i], *p = callee->params.items[i];
        if (a && p && !type_eq(a->type, p->type)) {
            report(v, "call to @%s: operand %u must be %s, got %s", in->sym, i, tname(p->type), tname(a->type));
            return;
        }
    }
    bool is_void = !callee->ret || callee->ret->kind == OXIDE_TYPE_VOID;
    if (is_void && in->result)
        report(v, "call to @%s: the function returns nothing, but the call has a %s result", in->sym,
               tname(in->result->type));
    else if (!is_void && !in->result)
        report(v, "call to @%s: the function returns %s, but the call has no result", in->sym, tname(callee->ret));
    else if (!is_void && !type_eq(in->result->type, callee->ret))
        report(v, "call to @%s: result must be %s, got %s", in->sym, tname(callee->ret), tname(in->result->type));
}

/* ---- tier-2 helpers ---- */

static bool is_vec(const oxide_type *t, oxide_type_kind elem, uint64_t n) {
    return is_kind(t, OXIDE_TYPE_VECTOR) && t->count == n && is_kind(t->elem, elem);
}

/* ldmatrix/stmatrix fragments: one b16x2 register per 8x8 matrix (x1, x2, x4). */
static unsigned matrix_count(const oxide_type *t) {
    return is_kind(t, OXIDE_TYPE_I32) ? 1 : is_vec(t, OXIDE_TYPE_I32, 2) ? 2 : is_vec(t, OXIDE_TYPE_I32, 4) ? 4 : 0;
}

/* The N of a wgmma m64nNk16 f32 accumulator array<N/2 x f32> (0 if t is not one). PTX has every
 * N that is a multiple of 8 up to 256 for f16/bf16 inputs. */
static unsigned wgmma_n(const oxide_type *t) {
    if (!is_kind(t, OXIDE_TYPE_ARRAY) || !is_kind(t->elem, OXIDE_TYPE_F32))
        return 0;
    uint64_t n = t->count * 2;
    return n >= 8 && n <= 256 && n % 8 == 0 ? (unsigned)n : 0;
}

/* The tensor map of a TMA copy lives in kernel-parameter, constant or global memory, reached
 * through a generic address (a tma_desc parameter is one). */
static bool check_tensor_map(verifier *v, const oxide_type *t, unsigned operand) {
    if (is_ptr(t) && (t->addrspace == OXIDE_AS_SHARED || t->addrspace == OXIDE_AS_LOCAL)) {
        report(v, "operand %u: the tensor map must be in parameter, constant or global memory, got %s", operand,
               tname(t));
        return false;
    }
    return true;
}

static bool check_coords(verifier *v, const oxide_inst *in, unsigned first) {
    unsigned n = in->noperands > first ? in->noperands - first : 0;
    if (n < 1 || n > 5) {
        report(v, "a tensor copy takes 1 to 5 coordinates (one per dimension), got %u", n);
        return false;
    }
    for (unsigned i = first; i < in->noperands; i++)
        if (!is_kind(in->operands[i]->type, OXIDE_TYPE_I32)) {
            report(v, "operand %u: coordinates are i32, got %s", i, tname(in->operands[i]->type));
            return false;
        }
    return true;
}

static bool check_imm_range(verifier *v, const oxide_inst *in, int64_t lo, int64_t hi, const char *what) {
    if (in->imm < lo || in->imm > hi) {
        report(v, "%s must be %lld..%lld, got %lld", what, (long long)lo, (long long)hi, (long long)in->imm);
        return false;
    }
    return true;
}

/* Returns false after reporting the instruction's first problem. */
static bool check_op_specific(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_op op = in->op;
    const oxide_op_info *info = &oxide_ops[op];
    const oxide_type *res = in->result ? in->result->type : NULL;
    const oxide_type *t0 = in->noperands > 0 ? in->operands[0]->type : NULL;
    const oxide_type *t1 = in->noperands > 1 ? in->operands[1]->type : NULL;
    unsigned e0 = v->nerrors;

    /* attribute ranges (IR from elsewhere may hold anything) */
    if ((info->attrs & A_SCOPE) && (unsigned)in->scope > OXIDE_SCOPE_SYS)
        report(v, "scope %d is not a scope", (int)in->scope);
    else if ((info->attrs & A_ORDER) && (unsigned)in->order > OXIDE_ORDER_SEQ_CST)
        report(v, "order %d is not a memory order", (int)in->order);
    else if (op == OXIDE_OP_ICMP && (unsigned)in->pred > OXIDE_PRED_UGE)
        report(v, "predicate %d is not an integer comparison", (int)in->pred);
    else if (op == OXIDE_OP_FCMP && ((unsigned)in->pred < OXIDE_PRED_OEQ || (unsigned)in->pred > OXIDE_PRED_FUGE))
        report(v, "predicate %d is not a float comparison", (int)in->pred);
    else if ((info->attrs & A_ALIGN) && in->align && (!is_pow2(in->align) || in->align > 65536))
        report(v, "align %u is not a power of two up to 65536", in->align);
    else if ((info->attrs & A_SCOPE) && in->scope == OXIDE_SCOPE_CLUSTER)
        need_sm(v, 90, "scope 'cluster'");
    else if (is_lane_mask_op(op) && (in->imm < 0 || in->imm > (int64_t)UINT32_MAX))
        report(v, "lane mask 0x%llx does not fit in 32 bits", (unsigned long long)in->imm);
    if (v->nerrors != e0)
        return false;

    /* The PTX approximations exist in .f32 only. The lowering computes f16/bf16 in f32, which
     * loses nothing, but would silently cut f64 to f32. */
    if (ends_with(info->name, ".approx") && row && elem_type(row)->kind == OXIDE_TYPE_F64) {
        report(v,
               "computes in f32 (PTX has only .f32 approximations), got %s; use the exact op or convert "
               "explicitly",
               tname(row));
        return false;
    }

    switch (op) {
    case OXIDE_OP_CONST:
        if (!is_int(res) && !is_float(res)) {
            report(v, "a constant must be an integer or float scalar, got %s", tname(res));
            return false;
        }
        if (is_int(res) && bits(res) < 64) {
            unsigned b = bits(res);
            int64_t lo = b == 1 ? -1 : -((int64_t)1 << (b - 1));
            int64_t hi = (int64_t)(((uint64_t)1 << b) - 1);
            if (in->ivalue < lo || in->ivalue > hi) {
                report(v, "value %lld does not fit in %s", (long long)in->ivalue, tname(res));
                return false;
            }
        }
        return true;
    case OXIDE_OP_ICMP:
    case OXIDE_OP_FCMP:
        if (row && row->kind == OXIDE_TYPE_VECTOR) {
            report(v, "cannot compare vectors (%s): the result is a single i1", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_TRUNC:
    case OXIDE_OP_ZEXT:
    case OXIDE_OP_SEXT:
    case OXIDE_OP_FPTRUNC:
    case OXIDE_OP_FPEXT:
    case OXIDE_OP_FPTOUI:
    case OXIDE_OP_FPTOSI:
    case OXIDE_OP_UITOFP:
    case OXIDE_OP_SITOFP:
    case OXIDE_OP_PTRTOINT:
    case OXIDE_OP_INTTOPTR:
    case OXIDE_OP_BITCAST:
    case OXIDE_OP_ADDRSPACECAST: check_cast(v, in, t0, res); return v->nerrors == e0;
    case OXIDE_OP_EXTRACT: {
        const char *why = NULL;
        const oxide_type *el = aggregate_elem(t0, in->imm, &why);
        if (!el)
            report(v, "cannot extract element %lld from %s: %s", (long long)in->imm, tname(t0), why);
        else if (!type_eq(el, res))
            report(v, "element %lld of %s is %s, but the result is %s", (long long)in->imm, tname(t0), tname(el),
                   tname(res));
        return v->nerrors == e0;
    }
    case OXIDE_OP_INSERT: {
        const char *why = NULL;
        const oxide_type *el = aggregate_elem(t0, in->imm, &why);
        if (!el)
            report(v, "cannot insert element %lld into %s: %s", (long long)in->imm, tname(t0), why);
        else if (!type_eq(el, t1))
            report(v, "element %lld of %s is %s, but operand 1 is %s", (long long)in->imm, tname(t0), tname(el),
                   tname(t1));
        return v->nerrors == e0;
    }
    case OXIDE_OP_LOAD:
        if (!is_sized(res)) {
            report(v, "a load needs a sized result type, got %s", tname(res));
            return false;
        }
        return check_space(v, t0, ACC_LOAD, 0);
    case OXIDE_OP_STORE:
        if (!is_sized(t0)) {
            report(v, "operand 0: cannot store a value of type %s", tname(t0));
            return false;
        }
        return check_space(v, t1, ACC_STORE, 1);
    case OXIDE_OP_OFFSET:
        if (!is_sized(in->elem)) {
            report(v, "offset needs a sized element type (attribute elem), got %s", tname(in->elem));
            return false;
        }
        if (!is_int(t1) || bits(t1) > 64) {
            report(v, "operand 1: the index must be an integer of up to 64 bits, got %s", tname(t1));
            return false;
        }
        return true;
    case OXIDE_OP_ALLOCA:
        if (!is_sized(in->elem)) {
            report(v, "alloca needs a sized element type (attribute elem), got %s", tname(in->elem));
            return false;
        }
        return true;
    case OXIDE_OP_GLOBAL_ADDR: {
        if (!in->sym) {
            report(v, "global.addr has no symbol (attribute sym is missing)");
            return false;
        }
        const oxide_global *g = oxide__module_find_global(v->mod, in->sym);
        if (!g) {
            report(v, "no global named @%s in module @%s", in->sym, v->mod->name ? v->mod->name : "");
            return false;
        }
        if (!is_ptr(res) || res->addrspace != (uint32_t)g->as) {
            report(v, "the address of @%s (a %s global) is a ptr.%s, but the result is %s", in->sym, as_name(g->as),
                   as_name(g->as), tname(res));
            return false;
        }
        return true;
    }
    case OXIDE_OP_DYN_SMEM:
        if (!is_ptr(res) || res->addrspace != OXIDE_AS_SHARED) {
            report(v, "dynamic shared memory is addressed by a ptr.shared, but the result is %s", tname(res));
            return false;
        }
        return true;
    case OXIDE_OP_CALL: check_call(v, in); return v->nerrors == e0;
    case OXIDE_OP_BARRIER:
    case OXIDE_OP_BARRIER_COUNT:
        /* PTX has 16 named barriers per CTA. */
        if (in->imm < 0 || in->imm > 15) {
            report(v, "barrier id %lld is outside 0..15", (long long)in->imm);
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_ADD:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        /* PTX atom.add has f32 and f64 (f16 only as packed f16x2, which oxide does not model) */
        if (is_float(row) ? !is_f32_or_f64(row) : !is_int_8_to_64(row)) {
            report(v, "supports integers of 8 to 64 bits, f32 and f64, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_SUB:
    case OXIDE_OP_ATOMIC_AND:
    case OXIDE_OP_ATOMIC_OR:
    case OXIDE_OP_ATOMIC_XOR:
    case OXIDE_OP_ATOMIC_MIN:
    case OXIDE_OP_ATOMIC_MAX:
    case OXIDE_OP_ATOMIC_UMIN:
    case OXIDE_OP_ATOMIC_UMAX:
    case OXIDE_OP_ATOMIC_CAS:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!is_int_8_to_64(row)) {
            report(v, "supports integers of 8 to 64 bits, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_EXCH:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!atomic_mem_type(row)) {
            report(v, "supports integers of 8 to 64 bits, floats and pointers, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_LOAD:
        if (!check_space(v, t0, ACC_ATOMIC, 0))
            return false;
        if (!atomic_mem_type(res)) {
            report(v, "an atomic load needs an integer (8 to 64 bits), float or pointer result, got %s", tname(res));
            return false;
        }
        if (in->order == OXIDE_ORDER_RELEASE || in->order == OXIDE_ORDER_ACQ_REL) {
            report(v, "an atomic load cannot have %s ordering", oxide__order_names[in->order]);
            return false;
        }
        return true;
    case OXIDE_OP_ATOMIC_STORE:
        if (!check_space(v, t1, ACC_ATOMIC, 1))
            return false;
        if (!atomic_mem_type(t0)) {
            report(v, "an atomic store needs an integer (8 to 64 bits), float or pointer value, got %s", tname(t0));
            return false;
        }
        if (in->order == OXIDE_ORDER_ACQUIRE || in->order == OXIDE_ORDER_ACQ_REL) {
            report(v, "an atomic store cannot have %s ordering", oxide__order_names[in->order]);
            return false;
        }
        return true;
    case OXIDE_OP_SHFL_IDX:
    case OXIDE_OP_SHFL_UP:
    case OXIDE_OP_SHFL_DOWN:
    case OXIDE_OP_SHFL_XOR:
        /* shfl.sync moves a 32-bit register; the lowering widens narrower values and splits
         * 64-bit ones in two, and has nothing for wider ones. */
        if (!(is_int(row) || is_float(row) || is_ptr(row) || is_kind(row, OXIDE_TYPE_VECTOR)) ||
            oxide__type_size(row) > 8) {
            report(v, "moves at most 64 bits (an integer, float, pointer or small vector), got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_MATCH_ANY:
        /* match.any.sync has .b32 and .b64 forms; narrower integers are widened */
        if (!is_int(row) || bits(row) > 64) {
            report(v, "supports integers of up to 64 bits, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_MAP_SHARED:
        /* mapa takes a shared-window or generic address of this CTA's shared memory. */
        if (is_ptr(t0) && t0->addrspace != OXIDE_AS_SHARED && t0->addrspace != OXIDE_AS_GENERIC) {
            report(v, "operand 0 must be a ptr.shared or generic pointer, got %s", tname(t0));
            return false;
        }
        return true;
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL: {
        bool cg = op == OXIDE_OP_CP_ASYNC_CG || op == OXIDE_OP_CP_ASYNC_CG_ZFILL;
        /* cp.async.cg (L2 only) moves 16 bytes; .ca also 4 and 8 */
        if (cg ? in->imm != 16 : in->imm != 4 && in->imm != 8 && in->imm != 16) {
            report(v, "copies %s bytes (imm), got %lld", cg ? "16" : "4, 8 or 16", (long long)in->imm);
            return false;
        }
        if (!is_ptr(t1) || t1->addrspace != OXIDE_AS_GLOBAL) {
            report(v, "operand 1: the source must be a ptr.global, got %s", tname(t1));
            return false;
        }
        return true;
    }
    case OXIDE_OP_CP_ASYNC_WAIT:
    case OXIDE_OP_BULK_WAIT:
    case OXIDE_OP_BULK_WAIT_READ:
    case OXIDE_OP_WGMMA_WAIT:
        /* ptxas takes any small constant; 0..63 covers every pipeline depth that fits in shared memory */
        return check_imm_range(v, in, 0, 63, "the number of pending groups (imm)");
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS:
        if (!matrix_count(res)) {
            report(v, "the result must be i32, vec<2 x i32> or vec<4 x i32> (x1, x2, x4), got %s", tname(res));
            return false;
        }
        return true;
    case OXIDE_OP_STMATRIX:
    case OXIDE_OP_STMATRIX_TRANS:
        if (!matrix_count(t1)) {
            report(v, "operand 1 must be i32, vec<2 x i32> or vec<4 x i32> (x1, x2, x4), got %s", tname(t1));
            return false;
        }
        return true;
    case OXIDE_OP_MMA_BF16:
    case OXIDE_OP_MMA_F16:
        if (!is_vec(t0, OXIDE_TYPE_I32, 4)) {
            report(v, "operand 0 (A: four registers of two packed 16-bit values) must be vec<4 x i32>, got %s",
                   tname(t0));
            return false;
        }
        if (!is_vec(t1, OXIDE_TYPE_I32, 2)) {
            report(v, "operand 1 (B: two registers of two packed 16-bit values) must be vec<2 x i32>, got %s",
                   tname(t1));
            return false;
        }
        if (!is_vec(row, OXIDE_TYPE_F32, 4)) {
            report(v, "operand 2 (the f32 accumulator) must be vec<4 x f32>, got %s", tname(row));
            return false;
        }
        return true;
    case OXIDE_OP_ELECT_SYNC:
        if (in->imm == 0) {
            report(v, "the lane mask must name at least one lane");
            return false;
        }
        return true;
    case OXIDE_OP_TMA_LOAD: return check_tensor_map(v, t1, 1) && check_coords(v, in, 3);
    case OXIDE_OP_TMA_LOAD_MULTICAST: return check_tensor_map(v, t1, 1) && check_coords(v, in, 4);
    case OXIDE_OP_TMA_STORE: return check_tensor_map(v, t0, 0) && check_coords(v, in, 2);
    case OXIDE_OP_TMA_PREFETCH_DESC: return check_tensor_map(v, t0, 0);
    case OXIDE_OP_WGMMA_BF16:
    case OXIDE_OP_WGMMA_F16:
        if (!wgmma_n(row)) {
            report(v,
                   "the accumulator must be array<N/2 x f32> for an m64nNk16 shape (N a multiple of 8 up to "
                   "256, e.g. array<64 x f32> for N = 128), got %s",
                   tname(row));
            return false;
        }
        /* bit 0: transpose A, bit 1: transpose B, bit 2: negate A, bit 3: negate B */
        return check_imm_range(v, in, 0, 15, "the mode bits (imm)");
    case OXIDE_OP_WGMMA_DESC:
        if (in->imm != 0 && in->imm != 32 && in->imm != 64 && in->imm != 128) {
            report(v, "the swizzle (imm) must be 0 (none), 32, 64 or 128 bytes, got %lld", (long long)in->imm);
            return false;
        }
        return true;
    case OXIDE_OP_SETMAXNREG_INC:
    case OXIDE_OP_SETMAXNREG_DEC:
        if (in->imm < 24 || in->imm > 256 || in->imm % 8) {
            report(v, "the register count (imm) must be a multiple of 8 in 24..256, got %lld", (long long)in->imm);
            return false;
        }
        return true;
    case OXIDE_OP_PRINTF:
        if (!in->str) {
            report(v, "printf has no format string (attribute str is missing)");
            return false;
        }
        for (uint32_t i = 0; i < in->noperands; i++) {
            const oxide_type *t = in->operands[i]->type;
            /* vprintf takes a buffer of C-promoted scalars: nothing wider than 64 bits, no i1. */
            bool ok = (is_int(t) && bits(t) >= 8 && bits(t) <= 64) || is_float(t) || is_ptr(t);
            if (!ok) {
                report(v,
                       "operand %u: printf arguments must be integers of 8 to 64 bits, floats or pointers, "
                       "got %s",
                       i, tname(t));
                return false;
            }
        }
        return true;
    default: return true;
    }
}

/* ---- rule 1: the result a row promises ---- */

static bool check_result(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_op_info *info = &oxide_ops[in->op];
    const oxide_value *r = in->result;
    if (r && (r->kind != VAL_INST || r->def != in)) {
        report(v, "the result value does not point back to this instruction");
        return false;
    }
    if (r && r->block != in->block) {
        report(v, "the result value records another block");
        return false;
    }
    if (info->result == '-') {
        if (r) {
            report(v, "'%s' has no result, but a %s result is attached", info->name, tname(r->type));
            return false;
        }
        return true;
    }
    if (info->result == '?')
        return true; /* call: checked against the callee */
    if (!r) {
        report(v, "'%s' needs a result, but none is attached", info->name);
        return false;
    }
    const oxide_type *want = NULL, *got = r->type;
    oxide_context *ctx = v->mod->ctx;
    switch (info->result) {
    case 'x':
        if (!is_sized(got)) {
            report(v, "the result type must be a value type, got %s", tname(got));
            return false;
        }
        return true;
    case 'T':
    case 'I':
    case 'F':
    case 'N': want = row; break;
    case 'b':
        want = ctx ? ctx->scalars[OXIDE_TYPE_I1] : NULL;
        if (is_kind(row, OXIDE_TYPE_TILE) &&
            !(is_kind(got, OXIDE_TYPE_TILE) && oxide__tile_shape_eq(got, row) && is_kind(got->elem, OXIDE_TYPE_I1))) {
            report(v, "the result must be an i1 tile of the shape of %s, got %s", tname(row), tname(got));
            return false;
        }
        if (is_kind(row, OXIDE_TYPE_TILE))
            return true;
        break;
    case 'i': want = ctx ? ctx->scalars[OXIDE_TYPE_I32] : NULL; break;
    case 'l': want = ctx ? ctx->scalars[OXIDE_TYPE_I64] : NULL; break;
    case 'p': want = in->noperands ? in->operands[0]->type : NULL; break;
    case 'g':
        if (is_ptr(got) && got->addrspace == OXIDE_AS_GENERIC)
            return true;
        report(v, "the result must be ptr (generic), got %s", tname(got));
        return false;
    default: return true;
    }
    if (want && !type_eq(want, got)) {
        report(v, "the result must be %s, got %s", tname(want), tname(got));
        return false;
    }
    return true;
}

/* ---- one instruction ---- */

/* The builder's messages start with the op's name ("'load': operand 0 ..."), which our prefix
 * already gives. */
static const char *strip_op_prefix(const char *msg, const char *name) {
    size_t n = strlen(name);
    if (msg[0] == '\'' && !strncmp(msg + 1, name, n) && msg[n + 1] == '\'') {
        msg += n + 2;
        if (*msg == ':')
            msg++;
        if (*msg == ' ')
            msg++;
    }
    return msg;
}

/* The type every T/I/F/N operand of the row shares (NULL if the row has none). */
static oxide_type *row_type(const oxide_inst *in) {
    const char *sig = oxide_ops[in->op].operands;
    for (uint32_t i = 0; sig[i] && sig[i] != '*' && i < in->noperands; i++)
        if (strchr("TIFN", sig[i]))
            return in->operands[i]->type;
    return NULL;
}

static void check_inst(verifier *v, fn_state *fs, const oxide_block *blk, const oxide_inst *in, uint32_t pos) {
    const oxide_function *fn = fs->fn;
    if ((unsigned)in->op >= OXIDE_OP_COUNT_) {
        report(v, "unknown op %d", (int)in->op);
        return;
    }
    if (in->block != blk) {
        report(v, "the instruction records another block as its owner");
        return;
    }
    if (in->noperands && !in->operands) {
        report(v, "%u operands listed but the operand array is missing", in->noperands);
        return;
    }
    /* rule 2 first: a missing or foreign operand makes the type checks meaningless */
    char what[48];
    for (uint32_t i = 0; i < in->noperands; i++) {
        snprintf(what, sizeof what, "operand %u", i);
        if (!check_available(v, fs, in->operands[i], blk->index, pos, what))
            return;
        if (!in->operands[i]->type) {
            report(v, "operand %u has no type", i);
            return;
        }
    }
    if (in->result && !in->result->type) {
        report(v, "the result has no type");
        return;
    }

    /* rule 1: the same operand rules as the builder */
    const oxide_op_info *info = &oxide_ops[in->op];
    oxide_type *row = NULL;
    if (oxide__check_operands(v->mod->ctx, in->op, in->operands, in->noperands, in->result ? in->result->type : NULL,
                              &row) != OXIDE_OK) {
        report(v, "%s", strip_op_prefix(oxide_last_error(), info->name));
        return;
    }
    /* check_operands hands back the result type; the row type is what the operands share */
    row = row_type(in);
    if (!check_result(v, in, row))
        return;
    if (oxide__tile_check_inst(in, v->opts->sm) != OXIDE_OK) {
        report(v, "%s", strip_op_prefix(oxide_last_error(), info->name));
        return;
    }

    /* rule 6: the op exists on the target */
    if (!op_on_target(v, in->op))
        return;

    /* rules 5 and 7 */
    if (!check_op_specific(v, in, row))
        return;

    /* rule 3 (the successor part) and rule 4 */
    bool term = info->lower == L_TERM;
    if (!term && in->nsucc) {
        report(v, "not a terminator, but has successors");
        return;
    }
    if (in->nsucc && !in->succ) {
        report(v, "%u successors listed but the successor array is missing", in->nsucc);
        return;
    }
    uint32_t want_succ = in->op == OXIDE_OP_BR ? 1 : in->op == OXIDE_OP_COND_BR ? 2 : 0;
    if (in->op == OXIDE_OP_SWITCH ? in->nsucc < 1 : term && in->nsucc != want_succ) {
        if (in->op == OXIDE_OP_SWITCH)
            report(v, "switch needs a default destination");
        else
            report(v, "needs %u successor%s, has %u", want_succ, plural(want_succ), in->nsucc);
        return;
    }
    for (uint32_t s = 0; s < in->nsucc; s++) {
        const oxide_succ *sc = &in->succ[s];
        const oxide_block *dst = sc->block;
        if (!dst) {
            report(v, "successor %u is missing (NULL)", s);
            return;
        }
        if (!block_in_fn(fn, dst)) {
            report(v, "successor %u is a block of another function", s);
            return;
        }
        if (dst->index == 0) {
            report(v, "successor %u is the entry block ^0, which cannot be a branch target", s);
            return;
        }
        if (sc->nargs != dst->params.len) {
            report(v, "successor %u (^%u) takes %u argument%s, got %u", s, dst->index, dst->params.len,
                   plural(dst->params.len), sc->nargs);
            return;
        }
        if (sc->nargs && !sc->args) {
            report(v, "successor %u lists %u arguments but the argument array is missing", s, sc->nargs);
            return;
        }
        for (uint32_t a = 0; a < sc->nargs; a++) {
            snprintf(what, sizeof what, "successor %u argument %u", s, a);
            if (!check_available(v, fs, sc->args[a], blk->index, pos, what))
                return;
            const oxide_value *p = dst->params.items[a];
            if (!p || !type_eq(sc->args[a]->type, p->type)) {
                report(v, "successor %u (^%u) argument %u must be %s, got %s", s, dst->index, a,
                       tname(p ? p->type : NULL), tname(sc->args[a]->type));
                return;
            }
        }
    }
    if (in->op == OXIDE_OP_SWITCH && row) {
        /* LLVM rejects duplicate cases; compare them as the switch type's width sees them. */
        unsigned b = bits(row);
        for (uint32_t s = 1; s < in->nsucc; s++) {
            int64_t c = in->succ[s].case_value;
            if (b < 64) {
                int64_t lo = b == 1 ? -1 : -((int64_t)1 << (b - 1));
                int64_t hi = (int64_t)(((uint64_t)1 << b) - 1);
                if (c < lo || c > hi) {
                    report(v, "case %lld does not fit in %s", (long long)c, tname(row));
                    return;
                }
            }
            uint64_t mask = b >= 64 ? ~0ull : ((1ull << b) - 1);
            for (uint32_t t = 1; t < s; t++)
                if (((uint64_t)in->succ[t].case_value & mask) == ((uint64_t)c & mask)) {
                    report(v, "case %lld appears twice", (long long)c);
                    return;
                }
        }
    }
    if (in->op == OXIDE_OP_RET) {
        const oxide_type *ret = fn->ret;
        bool is_void = fn->is_kernel || !ret || ret->kind == OXIDE_TYPE_VOID;
        if (fn->is_kernel && in->noperands)
            report(v, "a kernel returns nothing, but ret has %u operand%s", in->noperands, plural(in->noperands));
        else if (is_void && in->noperands)
            report(v, "the function returns void, but ret has %u operand%s", in->noperands, plural(in->noperands));
        else if (!is_void && in->noperands != 1)
            report(v, "the function returns %s, but ret has %u operand%s", tname(ret), in->noperands,
                   plural(in->noperands));
        else if (!is_void && !type_eq(in->operands[0]->type, ret))
            report(v, "the function returns %s, but ret's operand is %s", tname(ret), tname(in->operands[0]->type));
    }
}

/* ---- rule 8: the kernel interface ---- */

static void check_interface(verifier *v, const oxide_function *fn) {
    oxide_context *ctx = v->mod->ctx;
    if (oxide__tile_check_function(fn) != OXIDE_OK)
        report(v, "%s", oxide_last_error());
    if (fn->is_tile)
        return;
    if (!fn->is_kernel) {
        if (fn->iface.len)
            report(v, "a device function has kernel parameter kinds");
        if (fn->launch_bounds[0] || fn->launch_bounds[1] || fn->cluster[0] || fn->cluster[1] || fn->cluster[2] ||
            fn->dyn_smem)
            report(v, "a device function has kernel attributes (launch bounds, cluster or dynamic shared memory)");
        return;
    }
    if (fn->ret && fn->ret->kind != OXIDE_TYPE_VOID)
        report(v, "a kernel returns nothing, but its return type is %s", tname(fn->ret));
    uint32_t next = 0;
    for (uint32_t i = 0; i < fn->iface.len; i++) {
        const oxide_iface_param *ip = fn->iface.items[i];
        if (!ip) {
            report(v, "kernel parameter %u is missing (NULL)", i);
            return;
        }
        const char *nm = ip->name ? ip->name : "?";
        if (ip->first_value != next) {
            report(v, "kernel parameter %u (%s) starts at value %u, expected %u", i, nm, ip->first_value, next);
            return;
        }
        /* The IR values each interface kind is passed as (oxide.h: oxide_kernel_add_*_param):
         * want[k] is value k's type, or want_ptr the space of value 0's pointer. */
        const oxide_type *want[2] = {NULL, NULL};
        int want_ptr = -1;
        uint32_t nvals = 1;
        switch (ip->kind) {
        case OXIDE_PARAM_SCALAR:
            want[0] = ctx ? oxide__scalar_ir_type(ctx, ip->scalar) : NULL;
            if (!oxide_scalar_name(ip->scalar)) {
                report(v, "kernel parameter %u (%s): unknown scalar type %d", i, nm, (int)ip->scalar);
                return;
            }
            break;
        case OXIDE_PARAM_SLICE:
        case OXIDE_PARAM_PTR:
            if (!oxide_scalar_name(ip->scalar)) {
                report(v, "kernel parameter %u (%s): unknown element type %d", i, nm, (int)ip->scalar);
                return;
            }
            want_ptr = OXIDE_AS_GLOBAL;
            if (ip->kind == OXIDE_PARAM_SLICE) {
                want[1] = ctx ? ctx->scalars[OXIDE_TYPE_I64] : NULL;
                nvals = 2;
            }
            break;
        case OXIDE_PARAM_BYTES:
            if (ip->size < 1 || ip->size > 4096 || !is_pow2(ip->align) || ip->align > 16) {
                report(v,
                       "kernel parameter %u (%s): bytes need size 1..4096 and a power-of-two align up to 16, "
                       "got size %u align %u",
                       i, nm, ip->size, ip->align);
                return;
            }
            /* fall through */
        case OXIDE_PARAM_TMA_DESC: want_ptr = OXIDE_AS_GENERIC; break;
        default: report(v, "kernel parameter %u (%s): unknown interface kind %d", i, nm, (int)ip->kind); return;
        }
        for (uint32_t k = 0; k < nvals; k++) {
            if (next + k >= fn->params.len) {
                report(v, "kernel parameter %u (%s, %s) needs %u values, but the kernel has %u", i, nm,
                       oxide_param_kind_name(ip->kind), nvals, fn->params.len);
                return;
            }
            const oxide_value *pv = fn->params.items[next + k];
            bool ok = !pv || (k == 0 && want_ptr >= 0 ? is_ptr(pv->type) && pv->type->addrspace == (uint32_t)want_ptr
                                                      : !want[k] || type_eq(pv->type, want[k]));
            if (!ok) {
                char wname[32];
                if (k == 0 && want_ptr >= 0)
                    snprintf(wname, sizeof wname, want_ptr == OXIDE_AS_GENERIC ? "ptr" : "ptr.%s", as_name(want_ptr));
                report(v, "kernel parameter %u (%s, %s): value %u must be %s, got %s", i, nm,
                       oxide_param_kind_name(ip->kind), k, k == 0 && want_ptr >= 0 ? wname : tname(want[k]),
                       tname(pv->type));
                return;
            }
        }
        next += nvals;
    }
    if (next != fn->params.len)
        report(v, "the kernel has %u parameter values, but its interface accounts for %u", fn->params.len, next);

    if (fn->launch_bounds[1] && !fn->launch_bounds[0])
        report(v, "launch bounds: min blocks (%u) needs max threads to be set", fn->launch_bounds[1]);
    if (fn->launch_bounds[0] > MAX_THREADS_PER_BLOCK)
        report(v, "launch bounds: max threads %u exceeds %u", fn->launch_bounds[0], MAX_THREADS_PER_BLOCK);
    const uint32_t *c = fn->cluster;
    if (c[0] || c[1] || c[2]) {
        char what[80];
        snprintf(what, sizeof what, "kernel attribute cluster(%u,%u,%u)", c[0], c[1], c[2]);
        if (!c[0] || !c[1] || !c[2])
            report(v, "cluster(%u,%u,%u): every dimension must be at least 1", c[0], c[1], c[2]);
        else if ((uint64_t)c[0] * c[1] * c[2] > MAX_PORTABLE_CLUSTER)
            report(v, "cluster(%u,%u,%u) has %llu blocks; the portable maximum is %u", c[0], c[1], c[2],
                   (unsigned long long)c[0] * c[1] * c[2], MAX_PORTABLE_CLUSTER);
        else
            need_sm(v, 90, what);
    }
}

/* ---- one function ---- */

static oxide_status check_function(verifier *v, oxide_function *fn) {
    v->fn = fn;
    v->block = UINT32_MAX;
    v->inst = NULL;
    check_interface(v, fn);

    /* rule 9 (values) and parameter bookkeeping */
    size_t nvalues = fn->params.len;
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        if (blk)
            nvalues += blk->params.len + blk->insts.len;
    }
    fn_state fs = {.fn = fn};
    name_set names = {0};
    oxide_status st = OXIDE_OK;
    if (!inst_map_init(&fs.insts, nvalues) || !name_set_init(&names, nvalues)) {
        st = OXIDE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const oxide_value *p = fn->params.items[i];
        if (!p || p->kind != VAL_PARAM || p->fn != fn || p->index != i) {
            report(v, "parameter %u is not recorded as this function's parameter %u", i, i);
            continue;
        }
        if (!is_sized(p->type))
            report(v, "parameter %u has type %s; parameters need a value type", i, tname(p->type));
        if (p->name && !name_set_add(&names, p->name))
            report(v, "the name %%%s is used twice", p->name);
    }

    if (fn->blocks.len == 0) {
        report(v, "the function has no blocks");
        goto out;
    }

    /* structure, rule 3 (shape) and the instruction positions for rule 2 */
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        v->block = b;
        v->inst = NULL;
        if (!blk || blk->fn != fn || blk->index != b) {
            report(v, "the block is not recorded as block %u of this function", b);
            continue;
        }
        if (b == 0 && blk->params.len)
            report(v, "the entry block has %u parameter%s; it must have none", blk->params.len,
                   plural(blk->params.len));
        for (uint32_t i = 0; i < blk->params.len; i++) {
            const oxide_value *p = blk->params.items[i];
            if (!p || p->kind != VAL_BLOCK_PARAM || p->block != blk || p->index != i || p->fn != fn) {
                report(v, "block parameter %u is not recorded as this block's parameter %u", i, i);
                continue;
            }
            if (!is_sized(p->type))
                report(v, "block parameter %u has type %s; parameters need a value type", i, tname(p->type));
            if (p->name && !name_set_add(&names, p->name))
                report(v, "the name %%%s is used twice", p->name);
        }
        if (blk->insts.len == 0) {
            report(v, "the block is empty; every block ends in a terminator");
            continue;
        }
        for (uint32_t i = 0; i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (!in) {
                report(v, "instruction #%u is missing (NULL)", i);
                continue;
            }
            if (!inst_map_put(&fs.insts, in, b, i))
                report(v, "instruction #%u ('%s') appears twice in the function", i, op_name(in->op));
            if (in->result && in->result->name && !name_set_add(&names, in->result->name))
                report(v, "the name %%%s is used twice", in->result->name);
            bool last = i + 1 == blk->insts.len;
            if (op_is_term(in->op) && !last)
                report(v, "terminator '%s' at #%u is not the last instruction (%u follow)", op_name(in->op), i,
                       blk->insts.len - 1 - i);
            else if (last && !op_is_term(in->op))
                report(v, "the block does not end in a terminator (it ends in '%s')", op_name(in->op));
        }
    }

    /* rules 1-7 per instruction; block order does not matter, dominance comes from the CFG */
    if (!cfg_build(&fs.g, fn)) {
        st = OXIDE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        if (!blk || blk->fn != fn || blk->index != b)
            continue;
        v->block = b;
        for (uint32_t i = 0; i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (!in)
                continue;
            v->inst = in;
            v->pos = i;
            check_inst(v, &fs, blk, in, i);
        }
        v->inst = NULL;
    }
out:
    cfg_free(&fs.g);
    inst_map_free(&fs.insts);
    free(names.keys);
    v->fn = NULL;
    v->block = UINT32_MAX;
    v->inst = NULL;
    return st;
}

/* ---- globals and rule 9 (symbols) ---- */

static void check_global(verifier *v, const oxide_global *g) {
    v->global = g;
    if (g->as != OXIDE_AS_GLOBAL && g->as != OXIDE_AS_SHARED && g->as != OXIDE_AS_CONSTANT)
        report(v, "module variables live in global, shared or constant space, not %s", as_name(g->as));
    else if (!is_sized(g->type))
        report(v, "the variable needs a sized type, got %s", tname(g->type));
    else if (g->as == OXIDE_AS_SHARED && g->init)
        report(v, "shared memory cannot have an initializer (it is undefined at kernel start)");
    else if (g->init && g->init_size != oxide__type_size(g->type))
        report(v, "the initializer has %zu bytes, but %s has %llu", g->init_size, tname(g->type),
               (unsigned long long)oxide__type_size(g->type));
    else if (g->align && !is_pow2(g->align))
        report(v, "align %u is not a power of two", g->align);
    v->global = NULL;
}

oxide_status oxide__verify(oxide_module *mod, const oxide_options *opts) {
    if (!mod)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "verify: module is NULL");
    oxide_options defaults;
    if (!opts) {
        oxide__options_default(&defaults);
        opts = &defaults;
    }
    verifier *v = calloc(1, sizeof *v);
    if (!v)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "verify: out of memory");
    v->mod = mod;
    v->opts = opts;
    v->block = UINT32_MAX;

    oxide_status st = OXIDE_OK;
    name_set syms = {0};
    if (!name_set_init(&syms, (size_t)mod->functions.len + mod->globals.len)) {
        st = OXIDE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    /* One namespace: PTX (and the LLVM module) hold functions and variables in one symbol table. */
    for (uint32_t i = 0; i < mod->globals.len; i++) {
        const oxide_global *g = mod->globals.items[i];
        if (!g || !g->name) {
            report(v, "global %u is missing or unnamed", i);
            continue;
        }
        if (!name_set_add(&syms, g->name))
            report(v, "the symbol @%s is defined twice", g->name);
        check_global(v, g);
    }
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        const oxide_function *fn = mod->functions.items[i];
        if (!fn || !fn->name || fn->mod != mod) {
            report(v, "function %u is missing, unnamed or recorded in another module", i);
            continue;
        }
        if (!name_set_add(&syms, fn->name))
            report(v, "the symbol @%s is defined twice", fn->name);
    }
    for (uint32_t i = 0; i < mod->functions.len && st == OXIDE_OK; i++) {
        oxide_function *fn = mod->functions.items[i];
        if (fn && fn->name && fn->mod == mod)
            st = check_function(v, fn);
    }
out:
    free(syms.keys);
    if (st != OXIDE_OK) {
        free(v);
        return oxide__fail(st, "verify: out of memory");
    }
    if (v->nerrors) {
        if (v->dropped)
            oxide__fail(OXIDE_ERROR_VERIFY, "%s\n(%u more errors not shown)", v->msg, v->dropped);
        else
            oxide__fail(OXIDE_ERROR_VERIFY, "%s", v->msg);
        st = OXIDE_ERROR_VERIFY;
    }
    free(v);
    return st;
}

oxide_status oxide_module_verify(oxide_module *mod, const oxide_options *opts) {
    if (!mod)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_verify: module is NULL");
    return oxide__verify(mod, opts);
}
