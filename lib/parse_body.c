/* The IR text parser's function bodies (lib/parse.h): block headers, the order in which
 * blocks are read (each after the blocks whose values it uses), instructions with their
 * operands, attributes and result types, and the branch terminators. lib/parse.c reads the
 * module level (globals, types, signatures) first and hands each function's token range here. */
#include <stdint.h>
#include <string.h>

#include "parse.h"

typedef struct {
    oxide_block *b;
    uint32_t start, end; /* token range of its instructions */
    uint32_t nparams;
    oxide_value **vals;
    uint32_t *keytok; /* token of each parameter's %name */
} pblock;

/* "^name:" or "^name(%a: T, ...):" -- creates the block; its parameters get their names later,
 * when the block's turn comes, so that definitions are seen in parse order. */
static oxide_status block_header(P *p, pfunc *pf, pblock *pb) {
    char d[48];
    oxide_status st;
    oxide_vec types = {0}, keys = {0};
    tok *name = cur(p);
    adv(p);
    if (is_punct(p, cur(p), '(')) {
        adv(p);
        while (!is_punct(p, cur(p), ')')) {
            oxide_type *t;
            if (types.len && (st = expect(p, ',')))
                return st;
            if (cur(p)->k != T_VAL)
                return perr(cur(p), "expected a block parameter '%%name', found %s", describe(p, cur(p), d));
            if (!oxide__vec_push(&p->scratch, &keys, (void *)(uintptr_t)p->i))
                return oom();
            adv(p);
            if ((st = expect(p, ':')) || (st = parse_type(p, 0, &t)))
                return st;
            if (!oxide__vec_push(&p->scratch, &types, t))
                return oom();
        }
        adv(p);
    }
    if ((st = expect(p, ':')) || (st = expect_eol(p)))
        return st;
    if (oxide__strmap_get(&pf->blocks, txt(p, name) + 1, name->len - 1))
        return perr(name, "block %s is already defined", describe(p, name, d));
    pb->nparams = types.len;
    pb->vals = oxide__alloc(&p->scratch, (types.len + 1) * sizeof *pb->vals);
    pb->keytok = oxide__alloc(&p->scratch, (types.len + 1) * sizeof *pb->keytok);
    if (!pb->vals || !pb->keytok)
        return oom();
    for (uint32_t i = 0; i < types.len; i++)
        pb->keytok[i] = (uint32_t)(uintptr_t)keys.items[i];
    if ((st = oxide_function_add_block(pf->fn, (oxide_type *const *)types.items, types.len, &pb->b, pb->vals)))
        return berr(name, st);
    pb->start = p->i;
    return map_put(p, &pf->blocks, txt(p, name) + 1, name->len - 1, pb);
}

static bool defines(P *p, uint32_t i) {
    return p->t[i].k == T_VAL && p->t[i - 1].k == T_NL && is_punct(p, &p->t[i + 1], '=');
}

/* Order the blocks so that each comes after the blocks whose values it uses (Kahn's
 * algorithm, ties in text order). Blocks caught in a cycle -- only possible in invalid IR --
 * go last, in text order, and fail at the first use the parser cannot resolve. */
static oxide_status block_order(P *p, pfunc *pf, pblock **blocks, uint32_t nb, uint32_t *order) {
    oxide_status st;
    for (uint32_t b = 0; b < nb; b++) {
        for (uint32_t j = 0; j < blocks[b]->nparams; j++) {
            tok *t = &p->t[blocks[b]->keytok[j]];
            if ((st = map_put(p, &pf->owner, txt(p, t) + 1, t->len - 1, (void *)(uintptr_t)(b + 1))))
                return st;
        }
        for (uint32_t i = blocks[b]->start; i < blocks[b]->end; i++)
            if (defines(p, i) && !oxide__strmap_get(&pf->owner, txt(p, &p->t[i]) + 1, p->t[i].len - 1) &&
                (st = map_put(p, &pf->owner, txt(p, &p->t[i]) + 1, p->t[i].len - 1, (void *)(uintptr_t)(b + 1))))
                return st;
    }
    /* Edges d -> b for each use in b of a value defined in d; CSR, counted then filled. */
    uint32_t *indeg = oxide__alloc(&p->scratch, nb * sizeof *indeg);
    uint32_t *first = oxide__alloc(&p->scratch, (nb + 1) * sizeof *first);
    if (!indeg || !first)
        return oom();
    uint32_t *adj = NULL;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t b = 0; b < nb; b++)
            for (uint32_t i = blocks[b]->start; i < blocks[b]->end; i++) {
                uintptr_t d = p->t[i].k == T_VAL && !defines(p, i)
                                  ? (uintptr_t)oxide__strmap_get(&pf->owner, txt(p, &p->t[i]) + 1, p->t[i].len - 1)
                                  : 0;
                if (!d || d - 1 == b)
                    continue;
                if (pass == 0) {
                    first[d]++;
                    indeg[b]++;
                } else {
                    adj[first[d - 1]++] = b;
                }
            }
        if (pass == 0) {
            for (uint32_t b = 0; b < nb; b++)
                first[b + 1] += first[b];
            if (!(adj = oxide__alloc(&p->scratch, (first[nb] + 1) * sizeof *adj)))
                return oom();
        }
    }
    /* After filling, first[d] is the end of d's edges and first[d - 1] its start. */
    uint32_t n = 0, head = 0;
    bool *done = oxide__alloc(&p->scratch, nb + 1);
    if (!done)
        return oom();
    for (uint32_t b = 0; b < nb; b++)
        if (!indeg[b])
            order[n++] = b;
    while (head < n) {
        uint32_t d = order[head++];
        done[d] = true;
        for (uint32_t e = d ? first[d - 1] : 0; e < first[d]; e++)
            if (--indeg[adj[e]] == 0)
                order[n++] = adj[e];
    }
    for (uint32_t b = 0; b < nb; b++)
        if (!done[b])
            order[n++] = b;
    return OXIDE_OK;
}

static const struct {
    const char *name;
    unsigned bit;
    oxide_attr_key key;
} attr_names[] = {
    {"sym", A_SYM, OXIDE_ATTR_SYM},
    {"pred", A_PRED, OXIDE_ATTR_PRED},
    {"elem", A_ELEM, OXIDE_ATTR_ELEM},
    {"align", A_ALIGN, OXIDE_ATTR_ALIGN},
    {"volatile", A_VOLATILE, OXIDE_ATTR_VOLATILE},
    {"scope", A_SCOPE, OXIDE_ATTR_SCOPE},
    {"order", A_ORDER, OXIDE_ATTR_ORDER},
    {"imm", A_IMM, OXIDE_ATTR_IMM},
    {"value", A_VALUE, OXIDE_ATTR_VALUE},
    {"str", A_STR, OXIDE_ATTR_STR},
    {"pad", A_PAD, OXIDE_ATTR_PAD},
    {"perm", A_PERM, OXIDE_ATTR_PERM},
    {"kind", A_KIND, OXIDE_ATTR_KIND},
};
static const char *const reduce_kinds[] = {"sum", "max", "min"};
#define NATTRS (sizeof attr_names / sizeof attr_names[0])

static oxide_status enum_word(P *p, const char *const *names, unsigned n, int64_t *out) {
    char d[48];
    for (unsigned i = 0; i < n; i++)
        if (is_word(p, cur(p), names[i])) {
            *out = i;
            adv(p);
            return OXIDE_OK;
        }
    return perr(cur(p), "expected one of %s..%s, found %s", names[0], names[n - 1], describe(p, cur(p), d));
}

/* C-style escapes: \n \t \r \\ \" \xNN. NUL cannot be stored (strings are C strings). */
static oxide_status string_lit(P *p, char **out) {
    tok *t = cur(p);
    const char *s = txt(p, t);
    char *o = oxide__alloc(&p->scratch, t->len);
    uint32_t n = 0;
    if (!o)
        return oom();
    for (uint32_t i = 1; i + 1 < t->len; i++) {
        char c = s[i];
        if (c == '\\') {
            tok at = *t;
            at.col += i;
            char e = s[++i];
            int hi, lo;
            if (e == 'n' || e == 't' || e == 'r' || e == '\\' || e == '"') {
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
            } else if (e == 'x' && i + 2 < t->len && (hi = hexval(s[i + 1])) >= 0 && (lo = hexval(s[i + 2])) >= 0) {
                c = (char)(hi << 4 | lo);
                i += 2;
                if (!c)
                    return perr(&at, "\\x00 cannot appear in a string");
            } else {
                return perr(&at, "unknown escape in a string: use \\n \\t \\r \\\\ \\\" or \\xNN");
            }
        }
        o[n++] = c;
    }
    o[n] = 0;
    *out = o;
    adv(p);
    return OXIDE_OK;
}

/* "{key=value, ...}": the keys the op's row carries, each at most once, any order. */
static oxide_status parse_attrs(P *p, oxide_op op, oxide_attr *attrs, size_t *nattrs, tok **value) {
    char d[48];
    oxide_status st;
    unsigned seen = 0;
    adv(p);
    while (!is_punct(p, cur(p), '}')) {
        if (seen && (st = expect(p, ',')))
            return st;
        tok *k = cur(p);
        size_t a = 0;
        while (a < NATTRS && !is_word(p, k, attr_names[a].name))
            a++;
        if (a == NATTRS)
            return perr(k, "unknown attribute %s", describe(p, k, d));
        if (!(oxide_ops[op].attrs & attr_names[a].bit))
            return perr(k, "'%s' has no attribute '%s'", oxide_ops[op].name, attr_names[a].name);
        if (seen & attr_names[a].bit)
            return perr(k, "attribute '%s' is given twice", attr_names[a].name);
        seen |= attr_names[a].bit;
        adv(p);
        if ((st = expect(p, '=')))
            return st;
        oxide_attr *at = &attrs[(*nattrs)++];
        memset(at, 0, sizeof *at);
        at->key = attr_names[a].key;
        tok *v = cur(p);
        uint64_t u;
        switch (attr_names[a].bit) {
        case A_SYM:
            if (v->k != T_SYM)
                return perr(v, "expected a symbol '@name', found %s", describe(p, v, d));
            if (!(at->s = sym_name(p, v)))
                return oom();
            adv(p);
            break;
        case A_PRED: st = enum_word(p, oxide__pred_names, 24, &at->i); break;
        case A_SCOPE: st = enum_word(p, oxide__scope_names, 4, &at->i); break;
        case A_ORDER: st = enum_word(p, oxide__order_names, 5, &at->i); break;
        case A_ELEM: st = parse_type(p, 0, &at->t); break;
        case A_ALIGN:
        case A_VOLATILE:
            st = get_u64(p, attr_names[a].bit == A_ALIGN ? UINT32_MAX : 1, &u);
            at->i = (int64_t)u;
            break;
        case A_IMM: st = get_i64(p, &at->i); break;
        case A_VALUE: /* read once the result type says integer or float */
        case A_PAD:
            *value = v;
            adv(p);
            break;
        case A_KIND: st = enum_word(p, reduce_kinds, 3, &at->i); break;
        case A_PERM: /* "[1,0]": index k goes to bits 4k..4k+3 */
            if ((st = expect(p, '[')))
                return st;
            for (unsigned k = 0; !st && !is_punct(p, cur(p), ']'); k++) {
                if (k == 3)
                    return perr(cur(p), "perm has at most 3 entries (a tile's rank)");
                if (k && (st = expect(p, ',')))
                    return st;
                st = get_u64(p, 15, &u);
                at->i |= (int64_t)(u << (4 * k));
            }
            if (!st)
                adv(p);
            break;
        case A_STR: {
            if (v->k != T_STR)
                return perr(v, "expected a string, found %s", describe(p, v, d));
            char *str = NULL;
            st = string_lit(p, &str);
            at->s = str;
            break;
        }
        }
        if (st)
            return st;
    }
    adv(p);
    return OXIDE_OK;
}

static bool is_float_like(const oxide_type *t) {
    if (t && (t->kind == OXIDE_TYPE_VECTOR || t->kind == OXIDE_TYPE_TILE))
        t = t->elem;
    return t && (oxide__type_is_float(t) || oxide__type_is_fp8(t));
}

/* "^name" or "^name(%a, %b)". */
static oxide_status succ(P *p, pfunc *pf, oxide_block **b, oxide_vec *args) {
    char d[48];
    oxide_status st;
    tok *t = cur(p);
    pblock *pb = t->k == T_BLK ? oxide__strmap_get(&pf->blocks, txt(p, t) + 1, t->len - 1) : NULL;
    if (t->k != T_BLK)
        return perr(t, "expected a block '^name', found %s", describe(p, t, d));
    if (!pb)
        return perr(t, "unknown block %s", describe(p, t, d));
    *b = pb->b;
    memset(args, 0, sizeof *args);
    adv(p);
    if (!is_punct(p, cur(p), '('))
        return OXIDE_OK;
    adv(p);
    while (!is_punct(p, cur(p), ')')) {
        oxide_value *v;
        if (args->len && (st = expect(p, ',')))
            return st;
        if ((st = use_value(p, pf, &v)))
            return st;
        if (!oxide__vec_push(&p->scratch, args, v))
            return oom();
    }
    adv(p);
    return OXIDE_OK;
}

static oxide_status branch(P *p, pfunc *pf, oxide_block *bl, oxide_op op, tok *optok) {
    oxide_status st;
    oxide_block *b1, *b2;
    oxide_vec a1, a2, cases = {0}, dests = {0};
    oxide_value *v;
    if (op == OXIDE_OP_BR) {
        if ((st = succ(p, pf, &b1, &a1)) || (st = expect_eol(p)))
            return st;
        st = oxide_build_br(bl, b1, (oxide_value *const *)a1.items, a1.len);
    } else if (op == OXIDE_OP_COND_BR) {
        if ((st = use_value(p, pf, &v)) || (st = expect(p, ',')) || (st = succ(p, pf, &b1, &a1)) ||
            (st = expect(p, ',')) || (st = succ(p, pf, &b2, &a2)) || (st = expect_eol(p)))
            return st;
        st = oxide_build_cond_br(bl, v, b1, (oxide_value *const *)a1.items, a1.len, b2, (oxide_value *const *)a2.items,
                                 a2.len);
    } else {
        tok *t = NULL;
        if ((st = use_value(p, pf, &v)) || (st = expect(p, ',')) || (t = cur(p), st = succ(p, pf, &b1, &a1)))
            return st;
        if (a1.len)
            return perr(t, "switch targets take no arguments");
        if (is_punct(p, cur(p), '[')) {
            adv(p);
            while (!is_punct(p, cur(p), ']')) {
                int64_t *c = oxide__alloc(&p->scratch, sizeof *c);
                if (!c)
                    return oom();
                if ((cases.len && (st = expect(p, ','))) || (st = get_i64(p, c)) || (st = expect(p, ':')) ||
                    (t = cur(p), st = succ(p, pf, &b2, &a2)))
                    return st;
                if (a2.len)
                    return perr(t, "switch targets take no arguments");
                if (!oxide__vec_push(&p->scratch, &cases, c) || !oxide__vec_push(&p->scratch, &dests, b2))
                    return oom();
            }
            adv(p);
        }
        if ((st = expect_eol(p)))
            return st;
        int64_t *cv = oxide__alloc(&p->scratch, (cases.len + 1) * sizeof *cv);
        if (!cv)
            return oom();
        for (uint32_t i = 0; i < cases.len; i++)
            cv[i] = *(int64_t *)cases.items[i];
        st = oxide_build_switch(bl, v, b1, cv, (oxide_block *const *)dests.items, cases.len);
    }
    return st ? berr(optok, st) : OXIDE_OK;
}

/* "[%res =] op [operands] [{attrs}] [: type]" */
static oxide_status parse_inst(P *p, pfunc *pf, oxide_block *bl) {
    char d[48];
    oxide_status st;
    tok *res = NULL, *value = NULL, *ttok = NULL;
    const char *name = NULL;
    oxide_vec ops = {0};
    oxide_attr attrs[NATTRS];
    size_t nattrs = 0;
    oxide_type *rtype = NULL;
    if (cur(p)->k == T_VAL && is_punct(p, peek(p), '=')) {
        res = cur(p);
        if ((st = value_key(p, res, &name)) || (st = fresh(p, pf, res)))
            return st;
        adv(p);
        adv(p);
    }
    tok *optok = cur(p);
    if (optok->k != T_IDENT)
        return perr(optok, "expected an operation, found %s", describe(p, optok, d));
    oxide_op op = oxide__op_by_name(txt(p, optok), optok->len);
    if (op == OXIDE_OP_COUNT_)
        return perr(optok, "unknown operation %s", describe(p, optok, d));
    const char *opname = oxide_ops[op].name;
    char rl = oxide_ops[op].result;
    if (rl == '-' && res)
        return perr(res, "'%s' has no result", opname);
    adv(p);
    if (op == OXIDE_OP_BR || op == OXIDE_OP_COND_BR || op == OXIDE_OP_SWITCH)
        return branch(p, pf, bl, op, optok);
    while (cur(p)->k == T_VAL) {
        oxide_value *v;
        if ((st = use_value(p, pf, &v)))
            return st;
        if (!oxide__vec_push(&p->scratch, &ops, v))
            return oom();
        if (!is_punct(p, cur(p), ','))
            break;
        adv(p);
        if (cur(p)->k != T_VAL)
            return perr(cur(p), "expected a value after ',', found %s", describe(p, cur(p), d));
    }
    if (is_punct(p, cur(p), '{') && (st = parse_attrs(p, op, attrs, &nattrs, &value)))
        return st;
    if (is_punct(p, cur(p), ':')) {
        adv(p);
        ttok = cur(p);
        if ((st = parse_type(p, 0, &rtype)))
            return st;
    }
    if ((st = expect_eol(p)))
        return st;
    if (rl == '-' && rtype)
        return perr(ttok, "'%s' has no result", opname);
    if ((rl == 'x' || (rl == '?' && res)) && !rtype)
        return perr(optok, "'%s' needs its result type: '... : TYPE'", opname);
    if (value) {
        oxide_attr *at = NULL;
        for (size_t i = 0; i < nattrs; i++)
            if (attrs[i].key == OXIDE_ATTR_VALUE || attrs[i].key == OXIDE_ATTR_PAD)
                at = &attrs[i];
        uint32_t save = p->i;
        p->i = (uint32_t)(value - p->t);
        st = is_float_like(rtype) ? get_double(p, &at->f) : get_i64(p, &at->i);
        p->i = save;
        if (st)
            return st;
    }
    oxide_inst *in;
    bool explicit_type = rl == 'x' || rl == '?';
    st = oxide__build(bl, op, (oxide_value *const *)ops.items, ops.len, explicit_type ? rtype : NULL, attrs, nattrs,
                      &in);
    if (st)
        return berr(optok, st);
    in->line = optok->line;
    in->col = optok->col;
    if (rtype && !in->result)
        return perr(ttok, "'%s' has no result here", opname);
    if (rtype && in->result->type != rtype)
        return perr(ttok, "'%s' gives %s, not %s", opname, in->result->type->name, rtype->name);
    if (!res || !in->result)
        return OXIDE_OK;
    if (name && (st = oxide_value_set_name(in->result, name)))
        return berr(res, st);
    return define_tok(p, pf, res, in->result);
}

oxide_status parse_body(P *p, pfunc *pf) {
    char d[48];
    oxide_status st;
    oxide_vec blocks = {0};
    p->i = pf->body;
    for (;;) {
        skip_nl(p);
        if (p->i >= pf->end)
            break;
        if (cur(p)->k == T_BLK) {
            pblock *pb = oxide__alloc(&p->scratch, sizeof *pb);
            if (!pb || !oxide__vec_push(&p->scratch, &blocks, pb))
                return oom();
            if (blocks.len > 1)
                ((pblock *)blocks.items[blocks.len - 2])->end = p->i;
            if ((st = block_header(p, pf, pb)))
                return st;
        } else if (!blocks.len) {
            return perr(cur(p), "expected a block header '^name:', found %s", describe(p, cur(p), d));
        } else {
            while (cur(p)->k != T_NL && p->i < pf->end)
                adv(p);
        }
    }
    if (!blocks.len)
        return OXIDE_OK;
    ((pblock *)blocks.items[blocks.len - 1])->end = pf->end;
    uint32_t *order = oxide__alloc(&p->scratch, blocks.len * sizeof *order);
    if (!order)
        return oom();
    if ((st = block_order(p, pf, (pblock **)blocks.items, blocks.len, order)))
        return st;
    for (uint32_t k = 0; k < blocks.len; k++) {
        pblock *pb = blocks.items[order[k]];
        for (uint32_t j = 0; j < pb->nparams; j++) {
            tok *key = &p->t[pb->keytok[j]];
            const char *name;
            if ((st = value_key(p, key, &name)) || (st = fresh(p, pf, key)))
                return st;
            if (name && (st = oxide_value_set_name(pb->vals[j], name)))
                return berr(key, st);
            if ((st = define_tok(p, pf, key, pb->vals[j])))
                return st;
        }
        for (p->i = pb->start;;) {
            skip_nl(p);
            if (p->i >= pb->end)
                break;
            if ((st = parse_inst(p, pf, pb->b)))
                return st;
        }
    }
    return OXIDE_OK;
}
