/* The verifier: checks a module's IR against the rules every later stage relies on (types,
 * dominance, terminators, address spaces, the target SM, op-specific limits, kernel metadata).
 *
 * It runs at the API boundary (compile calls it first) and between passes, so it must never
 * trust the IR it is given: IR may have been mutated after it was built, or come from the
 * parser or another front end. Nothing here dereferences a pointer it has not checked, and the
 * IR is never modified (not even the values' scratch fields, which passes may be using).
 *
 * Every rule that would otherwise make LLVM abort the process or miscompile (docs/design.md
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

#include "cfg.h"
#include "verify.h"

/* The portable cluster size: CUDA guarantees 8 CTAs per cluster on every SM that has clusters;
 * more needs cudaFuncAttributeNonPortableClusterSizeAllowed, which oxide does not set. */
#define MAX_PORTABLE_CLUSTER 8u
#define MAX_THREADS_PER_BLOCK 1024u

/* ---- reporting ---- */

void verify_report(verifier *v, const char *fmt, ...) {
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

static void report_text(void *v, const char *msg) { verify_report(v, "%s", msg); }

/* ---- small helpers ---- */

/* Type equality. Types are interned per context, but compare structurally so that a type
 * from another context (a bug, yet not one to crash on) is judged by what it is. */
bool verify_type_eq(const oxide_type *a, const oxide_type *b) {
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind)
        return false;
    switch (a->kind) {
    case OXIDE_TYPE_PTR: return a->addrspace == b->addrspace;
    case OXIDE_TYPE_VECTOR:
    case OXIDE_TYPE_ARRAY: return a->count == b->count && verify_type_eq(a->elem, b->elem);
    case OXIDE_TYPE_TILE:
    case OXIDE_TYPE_TENSOR: return oxide__tile_shape_eq(a, b) && verify_type_eq(a->elem, b->elem);
    case OXIDE_TYPE_STRUCT:
        if (a->nfields != b->nfields)
            return false;
        for (uint32_t i = 0; i < a->nfields; i++)
            if (!verify_type_eq(a->fields[i], b->fields[i]))
                return false;
        return true;
    default: return true;
    }
}

const char *verify_as_name(uint32_t as) {
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
    oxide_strmap map;
    oxide_arena arena;
    bool oom; /* checked once the set is filled */
} name_set;

/* Returns false if name was already in the set. */
static bool name_set_add(name_set *s, const char *name) {
    size_t n = strlen(name);
    if (oxide__strmap_get(&s->map, name, n))
        return false;
    if (!oxide__strmap_put(&s->arena, &s->map, name, n, (void *)name))
        s->oom = true;
    return true;
}

/* ---- per-function state ---- */

typedef struct fn_state {
    const oxide_function *fn;
    inst_map insts;
    oxide_cfg g;
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
                            const char *what_fmt, unsigned a, unsigned b) {
    /* what the use is ("operand 2") is written only into a report: this runs for every operand */
    char what[48];
#define WHAT (snprintf(what, sizeof what, what_fmt, a, b), what)
    const oxide_function *fn = fs->fn;
    const oxide_cfg *g = &fs->g;
    char d[160];
    if (!val) {
        verify_report(v, "%s is missing (NULL)", WHAT);
        return false;
    }
    if (val->fn != fn) {
        verify_report(v, "%s (%s) belongs to another function", WHAT, describe(fs, val, d, sizeof d));
        return false;
    }
    switch (val->kind) {
    case VAL_PARAM:
        if (val->index >= fn->params.len || fn->params.items[val->index] != val) {
            verify_report(v, "%s (%s) is not a parameter of this function", WHAT, describe(fs, val, d, sizeof d));
            return false;
        }
        return true;
    case VAL_BLOCK_PARAM: {
        const oxide_block *ob = val->block;
        if (!oxide__block_in_fn(fn, ob) || val->index >= ob->params.len || ob->params.items[val->index] != val) {
            verify_report(v, "%s (%s) is a block parameter of no block of this function", WHAT,
                          describe(fs, val, d, sizeof d));
            return false;
        }
        if (ob->index == ub || !oxide__cfg_reachable(g, ub))
            return true;
        if (!oxide__cfg_reachable(g, ob->index) || !oxide__cfg_dominates(g, ob->index, ub)) {
            verify_report(v, "%s (%s) is a parameter of ^%u, which does not dominate ^%u", WHAT,
                          describe(fs, val, d, sizeof d), ob->index, ub);
            return false;
        }
        return true;
    }
    case VAL_INST: {
        uint32_t db, dp;
        if (!val->def || val->def->result != val || !inst_map_get(&fs->insts, val->def, &db, &dp)) {
            verify_report(v,
                          "%s (%s) is not defined by an instruction of this function (removed, or moved "
                          "from elsewhere)",
                          WHAT, describe(fs, val, d, sizeof d));
            return false;
        }
        if (db == ub) {
            if (dp < upos)
                return true;
            if (dp == upos)
                verify_report(v, "%s is this instruction's own result", WHAT);
            else
                verify_report(v, "%s (%s) is used before its definition at #%u of the same block", WHAT,
                              describe(fs, val, d, sizeof d), dp);
            return false;
        }
        if (!oxide__cfg_reachable(g, ub))
            return true;
        if (!oxide__cfg_reachable(g, db) || !oxide__cfg_dominates(g, db, ub)) {
            verify_report(v, "%s (%s) is defined in ^%u, which does not dominate ^%u", WHAT,
                          describe(fs, val, d, sizeof d), db, ub);
            return false;
        }
        return true;
    }
    default: verify_report(v, "%s has an unknown value kind %d", WHAT, (int)val->kind); return false;
    }
}
#undef WHAT

/* ---- rule 6: the target SM ---- */

bool verify_need_sm(verifier *v, unsigned sm, const char *what) {
    if (v->opts->sm >= sm)
        return true;
    verify_report(v, "%s needs sm_%u or newer; target is %s", what, sm, v->opts->target);
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
    if (info->min_sm == MIN_SM_90A) {
        if (v->opts->sm == 90 && v->opts->arch_specific)
            return true;
        verify_report(v, "op '%s' needs sm_90a (the arch-specific Hopper target); target is %s", info->name,
                      v->opts->target);
        return false;
    }
    if (info->min_sm > v->opts->sm) {
        char what[64];
        snprintf(what, sizeof what, "op '%s'", info->name);
        return verify_need_sm(v, info->min_sm, what);
    }
    /* The Hopper async ops (TMA, expect_tx, elect.sync, fence.proxy.async, ...) came with PTX 8.0
     * (stmatrix and try_wait.parity with 7.8); LLVM aborts the process when an intrinsic's PTX
     * version is missing ("Cannot select"). */
    bool ptx78 = op == OXIDE_OP_STMATRIX || op == OXIDE_OP_STMATRIX_TRANS || op == OXIDE_OP_MBARRIER_TRY_WAIT_PARITY;
    if ((info->tier == 2 || op == OXIDE_OP_FENCE_PROXY_ASYNC) && info->min_sm >= 90 && !ptx78 &&
        effective_ptx(v->opts) < 80) {
        verify_report(v,
                      "op '%s' needs PTX ISA 8.0; target %s uses %d.%d (set the PTX version to 8.0, or target sm_90a)",
                      info->name, v->opts->target, effective_ptx(v->opts) / 10, effective_ptx(v->opts) % 10);
        return false;
    }
    return true;
}

/* ---- rule 1: the result a row promises ---- */

static bool check_result(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_op_info *info = &oxide_ops[in->op];
    const oxide_value *r = in->result;
    if (r && (r->kind != VAL_INST || r->def != in)) {
        verify_report(v, "the result value does not point back to this instruction");
        return false;
    }
    if (r && r->block != in->block) {
        verify_report(v, "the result value records another block");
        return false;
    }
    if (info->result == '-') {
        if (r) {
            verify_report(v, "'%s' has no result, but a %s result is attached", info->name, tname(r->type));
            return false;
        }
        return true;
    }
    if (info->result == '?')
        return true; /* call: checked against the callee */
    if (!r) {
        verify_report(v, "'%s' needs a result, but none is attached", info->name);
        return false;
    }
    const oxide_type *want = NULL, *got = r->type;
    oxide_context *ctx = v->mod->ctx;
    switch (info->result) {
    case 'x':
        if (!is_sized(got)) {
            verify_report(v, "the result type must be a value type, got %s", tname(got));
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
            verify_report(v, "the result must be an i1 tile of the shape of %s, got %s", tname(row), tname(got));
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
        verify_report(v, "the result must be ptr (generic), got %s", tname(got));
        return false;
    default: return true;
    }
    if (want && !verify_type_eq(want, got)) {
        verify_report(v, "the result must be %s, got %s", tname(want), tname(got));
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
        verify_report(v, "unknown op %d", (int)in->op);
        return;
    }
    if (in->block != blk) {
        verify_report(v, "the instruction records another block as its owner");
        return;
    }
    if (in->noperands && !in->operands) {
        verify_report(v, "%u operands listed but the operand array is missing", in->noperands);
        return;
    }
    /* rule 2 first: a missing or foreign operand makes the type checks meaningless */
    for (uint32_t i = 0; i < in->noperands; i++) {
        if (!check_available(v, fs, in->operands[i], blk->index, pos, "operand %u", i, 0))
            return;
        if (!in->operands[i]->type) {
            verify_report(v, "operand %u has no type", i);
            return;
        }
    }
    if (in->result && !in->result->type) {
        verify_report(v, "the result has no type");
        return;
    }

    /* rule 1: the same operand rules as the builder */
    const oxide_op_info *info = &oxide_ops[in->op];
    oxide_type *row = NULL;
    if (oxide__check_operands(v->mod->ctx, in->op, in->operands, in->noperands, in->result ? in->result->type : NULL,
                              &row) != OXIDE_OK) {
        verify_report(v, "%s", strip_op_prefix(oxide_last_error(), info->name));
        return;
    }
    /* check_operands hands back the result type; the row type is what the operands share */
    row = row_type(in);
    if (!check_result(v, in, row))
        return;
    if (oxide__tile_check_inst(in, v->opts->sm) != OXIDE_OK) {
        verify_report(v, "%s", strip_op_prefix(oxide_last_error(), info->name));
        return;
    }

    /* rule 6: the op exists on the target */
    if (!op_on_target(v, in->op))
        return;

    /* rules 5 and 7 */
    if (!verify_op_specific(v, in, row))
        return;

    /* rule 3 (the successor part) and rule 4 */
    bool term = info->lower == L_TERM;
    if (!term && in->nsucc) {
        verify_report(v, "not a terminator, but has successors");
        return;
    }
    if (in->nsucc && !in->succ) {
        verify_report(v, "%u successors listed but the successor array is missing", in->nsucc);
        return;
    }
    uint32_t want_succ = in->op == OXIDE_OP_BR ? 1 : in->op == OXIDE_OP_COND_BR ? 2 : 0;
    if (in->op == OXIDE_OP_SWITCH ? in->nsucc < 1 : term && in->nsucc != want_succ) {
        if (in->op == OXIDE_OP_SWITCH)
            verify_report(v, "switch needs a default destination");
        else
            verify_report(v, "needs %u successor%s, has %u", want_succ, plural(want_succ), in->nsucc);
        return;
    }
    for (uint32_t s = 0; s < in->nsucc; s++) {
        const oxide_succ *sc = &in->succ[s];
        const oxide_block *dst = sc->block;
        if (!dst) {
            verify_report(v, "successor %u is missing (NULL)", s);
            return;
        }
        if (!oxide__block_in_fn(fn, dst)) {
            verify_report(v, "successor %u is a block of another function", s);
            return;
        }
        if (dst->index == 0) {
            verify_report(v, "successor %u is the entry block ^0, which cannot be a branch target", s);
            return;
        }
        if (sc->nargs != dst->params.len) {
            verify_report(v, "successor %u (^%u) takes %u argument%s, got %u", s, dst->index, dst->params.len,
                          plural(dst->params.len), sc->nargs);
            return;
        }
        if (sc->nargs && !sc->args) {
            verify_report(v, "successor %u lists %u arguments but the argument array is missing", s, sc->nargs);
            return;
        }
        for (uint32_t a = 0; a < sc->nargs; a++) {
            if (!check_available(v, fs, sc->args[a], blk->index, pos, "successor %u argument %u", s, a))
                return;
            const oxide_value *p = dst->params.items[a];
            if (!p || !verify_type_eq(sc->args[a]->type, p->type)) {
                verify_report(v, "successor %u (^%u) argument %u must be %s, got %s", s, dst->index, a,
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
                    verify_report(v, "case %lld does not fit in %s", (long long)c, tname(row));
                    return;
                }
            }
            uint64_t mask = b >= 64 ? ~0ull : ((1ull << b) - 1);
            for (uint32_t t = 1; t < s; t++)
                if (((uint64_t)in->succ[t].case_value & mask) == ((uint64_t)c & mask)) {
                    verify_report(v, "case %lld appears twice", (long long)c);
                    return;
                }
        }
    }
    if (in->op == OXIDE_OP_RET) {
        const oxide_type *ret = fn->ret;
        bool is_void = fn->is_kernel || !ret || ret->kind == OXIDE_TYPE_VOID;
        if (fn->is_kernel && in->noperands)
            verify_report(v, "a kernel returns nothing, but ret has %u operand%s", in->noperands,
                          plural(in->noperands));
        else if (is_void && in->noperands)
            verify_report(v, "the function returns void, but ret has %u operand%s", in->noperands,
                          plural(in->noperands));
        else if (!is_void && in->noperands != 1)
            verify_report(v, "the function returns %s, but ret has %u operand%s", tname(ret), in->noperands,
                          plural(in->noperands));
        else if (!is_void && !verify_type_eq(in->operands[0]->type, ret))
            verify_report(v, "the function returns %s, but ret's operand is %s", tname(ret),
                          tname(in->operands[0]->type));
    }
}

/* ---- rule 8: the kernel interface ---- */

static void check_interface(verifier *v, const oxide_function *fn) {
    oxide_context *ctx = v->mod->ctx;
    if (oxide__tile_check_function(fn) != OXIDE_OK)
        verify_report(v, "%s", oxide_last_error());
    if (fn->is_tile)
        return;
    if (!fn->is_kernel) {
        if (fn->iface.len)
            verify_report(v, "a device function has kernel parameter kinds");
        if (fn->launch_bounds[0] || fn->launch_bounds[1] || fn->cluster[0] || fn->cluster[1] || fn->cluster[2] ||
            fn->dyn_smem)
            verify_report(v,
                          "a device function has kernel attributes (launch bounds, cluster or dynamic shared memory)");
        return;
    }
    if (fn->ret && fn->ret->kind != OXIDE_TYPE_VOID)
        verify_report(v, "a kernel returns nothing, but its return type is %s", tname(fn->ret));
    uint32_t next = 0;
    for (uint32_t i = 0; i < fn->iface.len; i++) {
        const oxide_iface_param *ip = fn->iface.items[i];
        if (!ip) {
            verify_report(v, "kernel parameter %u is missing (NULL)", i);
            return;
        }
        const char *nm = ip->name ? ip->name : "?";
        if (ip->first_value != next) {
            verify_report(v, "kernel parameter %u (%s) starts at value %u, expected %u", i, nm, ip->first_value, next);
            return;
        }
        /* The IR values each interface kind is passed as (oxide.h: oxide_kernel_add_*_param):
         * want[k] is value k's type, or want_ptr the space of value 0's pointer. */
        const oxide_type *want[2 + 2 * OXIDE__TENSOR_MAX_RANK] = {NULL};
        int want_ptr = -1;
        uint32_t nvals = 1;
        switch ((int)ip->kind) {
        case OXIDE_PARAM_SCALAR:
            want[0] = ctx ? oxide__scalar_ir_type(ctx, ip->scalar) : NULL;
            if (!oxide_scalar_name(ip->scalar)) {
                verify_report(v, "kernel parameter %u (%s): unknown scalar type %d", i, nm, (int)ip->scalar);
                return;
            }
            break;
        case OXIDE_PARAM_SLICE:
        case OXIDE_PARAM_PTR:
            if (!oxide_scalar_name(ip->scalar)) {
                verify_report(v, "kernel parameter %u (%s): unknown element type %d", i, nm, (int)ip->scalar);
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
                verify_report(v,
                              "kernel parameter %u (%s): bytes need size 1..4096 and a power-of-two align up to 16, "
                              "got size %u align %u",
                              i, nm, ip->size, ip->align);
                return;
            }
            /* fall through */
        case OXIDE_PARAM_TMA_DESC: want_ptr = OXIDE_AS_GENERIC; break;
        case OXIDE_PARAM_TENSOR:
            /* a lowered tile kernel's view: the element pointer, then each dim's size and stride */
            if (!ip->tensor || ip->tensor->kind != OXIDE_TYPE_TENSOR) {
                verify_report(v, "kernel parameter %u (%s): a tensor parameter without a tensor type", i, nm);
                return;
            }
            want_ptr = OXIDE_AS_GLOBAL;
            nvals = 1 + 2 * ip->tensor->rank;
            for (uint32_t k = 1; k < nvals; k++)
                want[k] = ctx ? ctx->scalars[OXIDE_TYPE_I64] : NULL;
            if (ip->tma) {
                int32_t d = oxide__iface_tma_bad_dim(ip);
                if (d >= 0) {
                    verify_report(v,
                                  "kernel parameter %u (%s): TMA box dim %d is %u elements (" OXIDE__TMA_BOX_RULE ")",
                                  i, nm, d, ip->tma_box[d]);
                    return;
                }
                nvals += 1; /* then the TMA descriptor's address (checked below) */
            }
            break;
        default: verify_report(v, "kernel parameter %u (%s): unknown interface kind %d", i, nm, (int)ip->kind); return;
        }
        for (uint32_t k = 0; k < nvals; k++) {
            if (next + k >= fn->params.len) {
                verify_report(v, "kernel parameter %u (%s, %s) needs %u values, but the kernel has %u", i, nm,
                              oxide_param_kind_name(ip->kind), nvals, fn->params.len);
                return;
            }
            const oxide_value *pv = fn->params.items[next + k];
            bool tma_desc = ip->kind == OXIDE_PARAM_TENSOR && ip->tma && k == nvals - 1;
            bool ok = !pv || (k == 0 && want_ptr >= 0 ? is_ptr(pv->type) && pv->type->addrspace == (uint32_t)want_ptr
                              : tma_desc              ? is_ptr(pv->type) && pv->type->addrspace == OXIDE_AS_GENERIC
                                                      : !want[k] || verify_type_eq(pv->type, want[k]));
            if (!ok) {
                char wname[32];
                if (k == 0 && want_ptr >= 0)
                    snprintf(wname, sizeof wname, want_ptr == OXIDE_AS_GENERIC ? "ptr" : "ptr.%s",
                             verify_as_name(want_ptr));
                if (tma_desc)
                    snprintf(wname, sizeof wname, "ptr");
                verify_report(v, "kernel parameter %u (%s, %s): value %u must be %s, got %s", i, nm,
                              oxide_param_kind_name(ip->kind), k,
                              (k == 0 && want_ptr >= 0) || tma_desc ? wname : tname(want[k]), tname(pv->type));
                return;
            }
        }
        next += nvals;
    }
    /* a persistent kernel's grid: three i32 values after the interface's (iface.h) */
    for (uint32_t k = 0; fn->persistent && k < 3; k++, next++)
        if (next >= fn->params.len ||
            !verify_type_eq(((const oxide_value *)fn->params.items[next])->type, fn->mod->ctx->scalars[OXIDE_TYPE_I32]))
            verify_report(v, "a persistent kernel's last three parameters are its grid, i32 values");
    if (next != fn->params.len)
        verify_report(v, "the kernel has %u parameter values, but its interface accounts for %u", fn->params.len, next);

    if (fn->launch_bounds[1] && !fn->launch_bounds[0])
        verify_report(v, "launch bounds: min blocks (%u) needs max threads to be set", fn->launch_bounds[1]);
    if (fn->launch_bounds[0] > MAX_THREADS_PER_BLOCK)
        verify_report(v, "launch bounds: max threads %u exceeds %u", fn->launch_bounds[0], MAX_THREADS_PER_BLOCK);
    const uint32_t *c = fn->cluster;
    if (c[0] || c[1] || c[2]) {
        char what[80];
        snprintf(what, sizeof what, "kernel attribute cluster(%u,%u,%u)", c[0], c[1], c[2]);
        if (!c[0] || !c[1] || !c[2])
            verify_report(v, "cluster(%u,%u,%u): every dimension must be at least 1", c[0], c[1], c[2]);
        else if ((uint64_t)c[0] * c[1] * c[2] > MAX_PORTABLE_CLUSTER)
            verify_report(v, "cluster(%u,%u,%u) has %llu blocks; the portable maximum is %u", c[0], c[1], c[2],
                          (unsigned long long)c[0] * c[1] * c[2], MAX_PORTABLE_CLUSTER);
        else
            verify_need_sm(v, 90, what);
    }
}

/* ---- one function ---- */

static oxide_status check_function(verifier *v, oxide_function *fn) {
    v->fn = fn;
    v->block = UINT32_MAX;
    v->inst = NULL;
    check_interface(v, fn);
    oxide__verify_limits(fn, v->opts, report_text, v);

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
    if (!inst_map_init(&fs.insts, nvalues)) {
        st = OXIDE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const oxide_value *p = fn->params.items[i];
        if (!p || p->kind != VAL_PARAM || p->fn != fn || p->index != i) {
            verify_report(v, "parameter %u is not recorded as this function's parameter %u", i, i);
            continue;
        }
        if (!is_sized(p->type))
            verify_report(v, "parameter %u has type %s; parameters need a value type", i, tname(p->type));
        if (p->name && !name_set_add(&names, p->name))
            verify_report(v, "the name %%%s is used twice", p->name);
    }

    if (fn->blocks.len == 0) {
        verify_report(v, "the function has no blocks");
        goto out;
    }

    /* structure, rule 3 (shape) and the instruction positions for rule 2 */
    for (uint32_t b = 0; b < fn->blocks.len; b++) {
        const oxide_block *blk = fn->blocks.items[b];
        v->block = b;
        v->inst = NULL;
        if (!blk || blk->fn != fn || blk->index != b) {
            verify_report(v, "the block is not recorded as block %u of this function", b);
            continue;
        }
        if (b == 0 && blk->params.len)
            verify_report(v, "the entry block has %u parameter%s; it must have none", blk->params.len,
                          plural(blk->params.len));
        for (uint32_t i = 0; i < blk->params.len; i++) {
            const oxide_value *p = blk->params.items[i];
            if (!p || p->kind != VAL_BLOCK_PARAM || p->block != blk || p->index != i || p->fn != fn) {
                verify_report(v, "block parameter %u is not recorded as this block's parameter %u", i, i);
                continue;
            }
            if (!is_sized(p->type))
                verify_report(v, "block parameter %u has type %s; parameters need a value type", i, tname(p->type));
            if (p->name && !name_set_add(&names, p->name))
                verify_report(v, "the name %%%s is used twice", p->name);
        }
        if (blk->insts.len == 0) {
            verify_report(v, "the block is empty; every block ends in a terminator");
            continue;
        }
        for (uint32_t i = 0; i < blk->insts.len; i++) {
            const oxide_inst *in = blk->insts.items[i];
            if (!in) {
                verify_report(v, "instruction #%u is missing (NULL)", i);
                continue;
            }
            if (!inst_map_put(&fs.insts, in, b, i))
                verify_report(v, "instruction #%u ('%s') appears twice in the function", i, op_name(in->op));
            if (in->result && in->result->name && !name_set_add(&names, in->result->name))
                verify_report(v, "the name %%%s is used twice", in->result->name);
            bool last = i + 1 == blk->insts.len;
            if (op_is_term(in->op) && !last)
                verify_report(v, "terminator '%s' at #%u is not the last instruction (%u follow)", op_name(in->op), i,
                              blk->insts.len - 1 - i);
            else if (last && !op_is_term(in->op))
                verify_report(v, "the block does not end in a terminator (it ends in '%s')", op_name(in->op));
        }
    }

    /* rules 1-7 per instruction; block order does not matter, dominance comes from the CFG */
    if (names.oom || !oxide__cfg_build(&fs.g, fn)) {
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
    oxide__cfg_free(&fs.g);
    inst_map_free(&fs.insts);
    oxide__arena_free(&names.arena);
    v->fn = NULL;
    v->block = UINT32_MAX;
    v->inst = NULL;
    return st;
}

/* ---- globals and rule 9 (symbols) ---- */

static void check_global(verifier *v, const oxide_global *g) {
    v->global = g;
    if (g->as != OXIDE_AS_GLOBAL && g->as != OXIDE_AS_SHARED && g->as != OXIDE_AS_CONSTANT)
        verify_report(v, "module variables live in global, shared or constant space, not %s", verify_as_name(g->as));
    else if (!is_sized(g->type))
        verify_report(v, "the variable needs a sized type, got %s", tname(g->type));
    else if (g->as == OXIDE_AS_SHARED && g->init)
        verify_report(v, "shared memory cannot have an initializer (it is undefined at kernel start)");
    else if (g->init && g->init_size != oxide__type_size(g->type))
        verify_report(v, "the initializer has %zu bytes, but %s has %llu", g->init_size, tname(g->type),
                      (unsigned long long)oxide__type_size(g->type));
    else if (g->align && !is_pow2(g->align))
        verify_report(v, "align %u is not a power of two", g->align);
    v->global = NULL;
}

oxide_status oxide__verify(oxide_module *mod, const oxide_options *opts) {
    if (!mod)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "verify: module is NULL");
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    verifier *v = calloc(1, sizeof *v);
    if (!v)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "verify: out of memory");
    v->mod = mod;
    v->opts = opts;
    v->block = UINT32_MAX;

    oxide_status st = OXIDE_OK;
    name_set syms = {0};
    /* One namespace: PTX (and the LLVM module) hold functions and variables in one symbol table. */
    for (uint32_t i = 0; i < mod->globals.len; i++) {
        const oxide_global *g = mod->globals.items[i];
        if (!g || !g->name) {
            verify_report(v, "global %u is missing or unnamed", i);
            continue;
        }
        if (!name_set_add(&syms, g->name))
            verify_report(v, "the symbol @%s is defined twice", g->name);
        check_global(v, g);
    }
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        const oxide_function *fn = mod->functions.items[i];
        if (!fn || !fn->name || fn->mod != mod) {
            verify_report(v, "function %u is missing, unnamed or recorded in another module", i);
            continue;
        }
        if (!name_set_add(&syms, fn->name))
            verify_report(v, "the symbol @%s is defined twice", fn->name);
    }
    if (syms.oom)
        st = OXIDE_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < mod->functions.len && st == OXIDE_OK; i++) {
        oxide_function *fn = mod->functions.items[i];
        if (fn && fn->name && fn->mod == mod)
            st = check_function(v, fn);
    }
    oxide__arena_free(&syms.arena);
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
