/* The IR text parser (docs/ir.md). It builds the module through the builder, so text gets
 * exactly the checks that API users get; any failure becomes PARSE with "line:col: message"
 * and the partial module is destroyed.
 *
 * Work is done in passes over a token array: (1) the module header, globals and every
 * function's signature, so calls and global.addr may name symbols defined further down;
 * (2) per function, the block headers, so branches may name later blocks; (3) per function,
 * the instructions, one block at a time in an order where a block that uses a value comes
 * after the block defining it. That order exists for every valid function (a use's block is
 * dominated by the definition's), so modules whose blocks were created out of dominance order
 * still read back, while the builder, which needs operand types, only ever sees defined
 * values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

typedef struct {
    oxide_block *b;
    uint32_t start, end; /* token range of its instructions */
    uint32_t nparams;
    oxide_value **vals;
    uint32_t *keytok; /* token of each parameter's %name */
} pblock;

typedef struct {
    oxide_function *fn;
    uint32_t body, end;  /* tokens after "{" NL, up to the closing "}" */
    oxide_strmap vals;   /* %key -> oxide_value */
    oxide_strmap blocks; /* ^key -> pblock */
    oxide_strmap owner;  /* %key -> 1 + index of the block defining it */
} pfunc;

/* The name after a sigil (%x, ^x, @x), NUL-terminated, in scratch memory. */
static char *sym_name(P *p, const tok *t) { return oxide__strndup(&p->scratch, txt(p, t) + 1, t->len - 1); }

/* ---- maps ---- */

/* Insert or overwrite. Keys must outlive the map (they point into the source or scratch). */
static oxide_status map_put(P *p, oxide_strmap *m, const char *k, uint32_t n, void *v) {
    return oxide__strmap_put(&p->scratch, m, k, n, v) ? OXIDE_OK : oom();
}

/* ---- types ---- */

static const struct {
    const char *name;
    oxide_type_kind kind;
    int as; /* -1: not a pointer */
} simple_types[] = {
    {"void", OXIDE_TYPE_VOID, -1},
    {"i1", OXIDE_TYPE_I1, -1},
    {"i8", OXIDE_TYPE_I8, -1},
    {"i16", OXIDE_TYPE_I16, -1},
    {"i32", OXIDE_TYPE_I32, -1},
    {"i64", OXIDE_TYPE_I64, -1},
    {"i128", OXIDE_TYPE_I128, -1},
    {"f16", OXIDE_TYPE_F16, -1},
    {"bf16", OXIDE_TYPE_BF16, -1},
    {"f32", OXIDE_TYPE_F32, -1},
    {"f64", OXIDE_TYPE_F64, -1},
    {"f8e4m3", OXIDE_TYPE_F8E4M3, -1},
    {"f8e5m2", OXIDE_TYPE_F8E5M2, -1},
    {"ptr", OXIDE_TYPE_PTR, OXIDE_AS_GENERIC},
    {"ptr.global", OXIDE_TYPE_PTR, OXIDE_AS_GLOBAL},
    {"ptr.shared", OXIDE_TYPE_PTR, OXIDE_AS_SHARED},
    {"ptr.constant", OXIDE_TYPE_PTR, OXIDE_AS_CONSTANT},
    {"ptr.local", OXIDE_TYPE_PTR, OXIDE_AS_LOCAL},
    {"ptr.param", OXIDE_TYPE_PTR, OXIDE_AS_PARAM},
};

/* A tile's dims, one token: "128", "64x64", "2x64x64". */
static oxide_status tile_dims(P *p, uint32_t shape[3], uint32_t *rank) {
    char d[48];
    tok *t = cur(p);
    const char *s = txt(p, t);
    uint32_t i = 0, r = 0;
    while (t->k == T_NUM && i < t->len) {
        uint32_t start = i;
        uint64_t v;
        while (i < t->len && is_digit(s[i]))
            i++;
        if (r == 3)
            return perr(t, "a tile has rank 1 to 3, got more dims in %s", describe(p, t, d));
        if (!num_u64(s + start, i - start, &v) || v > UINT32_MAX || (i < t->len && (s[i] != 'x' || i + 1 == t->len)))
            break;
        shape[r++] = (uint32_t)v;
        i += i < t->len;
    }
    if (t->k != T_NUM || i < t->len || !r)
        return perr(t, "expected tile dims such as 128 or 64x64, found %s", describe(p, t, d));
    *rank = r;
    adv(p);
    return OXIDE_OK;
}

static oxide_status parse_type(P *p, int depth, oxide_type **out);

/* "x TYPE>": the element part of vec, array, tile and tensor types. */
static oxide_status elem_tail(P *p, int depth, oxide_type **elem) {
    char d[48];
    oxide_status st;
    if (!is_word(p, cur(p), "x"))
        return perr(cur(p), "expected 'x', found %s", describe(p, cur(p), d));
    adv(p);
    if ((st = parse_type(p, depth + 1, elem)) || (st = expect(p, '>')))
        return st;
    return OXIDE_OK;
}

/* "tile<64x64 x f32>", "tensor<2 x bf16>", "tensor<mut 2 x f32>" */
static oxide_status tile_type(P *p, int depth, oxide_type **out) {
    oxide_status st;
    tok *t = cur(p);
    bool tensor = is_word(p, t, "tensor"), mut = false;
    uint32_t shape[3] = {0, 0, 0}, rank = 0;
    oxide_type *elem;
    adv(p);
    if ((st = expect(p, '<')))
        return st;
    if (tensor && is_word(p, cur(p), "mut")) {
        mut = true;
        adv(p);
    }
    if ((st = tensor ? get_u32(p, &rank) : tile_dims(p, shape, &rank)))
        return st;
    if ((st = elem_tail(p, depth, &elem)))
        return st;
    st = tensor ? oxide_type_tensor(p->ctx, elem, rank, mut, out) : oxide_type_tile(p->ctx, elem, rank, shape, out);
    return st ? berr(t, st) : OXIDE_OK;
}

static oxide_status parse_type(P *p, int depth, oxide_type **out) {
    char d[48];
    tok *t = cur(p);
    oxide_status st;
    if (depth > 32)
        return perr(t, "type nested more than 32 deep");
    if (t->k != T_IDENT)
        return perr(t, "expected a type, found %s", describe(p, t, d));
    for (size_t i = 0; i < sizeof simple_types / sizeof simple_types[0]; i++)
        if (is_word(p, t, simple_types[i].name)) {
            adv(p);
            st = simple_types[i].as < 0 ? oxide_type_scalar(p->ctx, simple_types[i].kind, out)
                                        : oxide_type_pointer(p->ctx, (oxide_addrspace)simple_types[i].as, out);
            return st ? berr(t, st) : OXIDE_OK;
        }
    bool vec = is_word(p, t, "vec");
    if (vec || is_word(p, t, "array")) {
        uint64_t count;
        oxide_type *elem;
        adv(p);
        if ((st = expect(p, '<')) || (st = get_u64(p, vec ? UINT32_MAX : UINT64_MAX, &count)))
            return st;
        if ((st = elem_tail(p, depth, &elem)))
            return st;
        st = vec ? oxide_type_vector(p->ctx, elem, (uint32_t)count, out) : oxide_type_array(p->ctx, elem, count, out);
        return st ? berr(t, st) : OXIDE_OK;
    }
    if (is_word(p, t, "tile") || is_word(p, t, "tensor"))
        return tile_type(p, depth, out);
    if (is_word(p, t, "struct")) {
        oxide_vec fields = {0};
        adv(p);
        if ((st = expect(p, '<')))
            return st;
        do {
            oxide_type *f;
            if ((st = parse_type(p, depth + 1, &f)))
                return st;
            if (!oxide__vec_push(&p->scratch, &fields, f))
                return oom();
        } while (is_punct(p, cur(p), ',') && (adv(p), true));
        if ((st = expect(p, '>')))
            return st;
        st = oxide_type_struct(p->ctx, (oxide_type *const *)fields.items, fields.len, out);
        return st ? berr(t, st) : OXIDE_OK;
    }
    return perr(t, "unknown type %s", describe(p, t, d));
}

/* ---- values ---- */

/* %123 is an unnamed value (the printer's numbering); %name sets a name. */
static oxide_status value_key(P *p, const tok *t, const char **name) {
    char d[48];
    const char *s = txt(p, t) + 1;
    uint32_t n = t->len - 1, digits = 0;
    while (digits < n && is_digit(s[digits]))
        digits++;
    if (digits == n) {
        *name = NULL;
        return OXIDE_OK;
    }
    if (!is_alpha(s[0]))
        return perr(t, "bad value name %s: names start with a letter or '_', numbers are all digits",
                    describe(p, t, d));
    *name = sym_name(p, t);
    return *name ? OXIDE_OK : oom();
}

static oxide_status define(P *p, pfunc *pf, const tok *t, const char *key, uint32_t n, oxide_value *v) {
    if (oxide__strmap_get(&pf->vals, key, n))
        return perr(t, "'%%%.*s' is already defined", (int)(n > 64 ? 64 : n), key);
    return map_put(p, &pf->vals, key, n, v);
}

/* Checked before the builder sees the name, so that the message points at the name. */
static oxide_status fresh(P *p, pfunc *pf, const tok *t) {
    char d[48];
    if (oxide__strmap_get(&pf->vals, txt(p, t) + 1, t->len - 1))
        return perr(t, "%s is already defined", describe(p, t, d));
    return OXIDE_OK;
}

static oxide_status define_tok(P *p, pfunc *pf, const tok *t, oxide_value *v) {
    return define(p, pf, t, txt(p, t) + 1, t->len - 1, v);
}

static oxide_status use_value(P *p, pfunc *pf, oxide_value **out) {
    char d[48];
    tok *t = cur(p);
    if (t->k != T_VAL)
        return perr(t, "expected a value '%%name', found %s", describe(p, t, d));
    *out = oxide__strmap_get(&pf->vals, txt(p, t) + 1, t->len - 1);
    if (!*out)
        return perr(t,
                    oxide__strmap_get(&pf->owner, txt(p, t) + 1, t->len - 1)
                        ? "%s is used where its definition does not come first (nor dominate)"
                        : "use of undefined value %s",
                    describe(p, t, d));
    adv(p);
    return OXIDE_OK;
}

/* ---- module level: globals and function signatures ---- */

static oxide_status parse_global(P *p) {
    static const char *const spaces[] = {"global", "shared", "constant"};
    static const oxide_addrspace as_of[] = {OXIDE_AS_GLOBAL, OXIDE_AS_SHARED, OXIDE_AS_CONSTANT};
    char d[48];
    oxide_status st;
    oxide_type *type;
    uint32_t align = 0;
    uint8_t *init = NULL;
    size_t init_size = 0;
    int space = -1;
    adv(p);
    tok *name = cur(p);
    if (name->k != T_SYM)
        return perr(name, "expected a global name '@name', found %s", describe(p, name, d));
    adv(p);
    if ((st = expect(p, ':')) || (st = parse_type(p, 0, &type)))
        return st;
    for (int i = 0; i < 3; i++)
        if (is_word(p, cur(p), spaces[i]))
            space = i;
    if (space < 0)
        return perr(cur(p), "expected global, shared or constant, found %s", describe(p, cur(p), d));
    adv(p);
    if (is_word(p, cur(p), "align")) {
        adv(p);
        if ((st = get_u32(p, &align)))
            return st;
    }
    if (is_word(p, cur(p), "init")) {
        adv(p);
        tok *h = cur(p);
        const char *s = txt(p, h);
        bool ok = h->k == T_NUM && h->len >= 2 && h->len % 2 == 0 && s[0] == '0' && s[1] == 'x';
        init_size = ok ? (h->len - 2) / 2 : 0;
        init = oxide__alloc(&p->scratch, init_size + 1);
        if (!init)
            return oom();
        for (size_t i = 0; ok && i < 2 * init_size; i++) {
            int v = hexval(s[2 + i]);
            ok = v >= 0;
            init[i / 2] = (uint8_t)(init[i / 2] << 4 | (v & 15));
        }
        if (!ok)
            return perr(h, "expected the initial bytes as 0x followed by pairs of hex digits");
        adv(p);
    }
    if ((st = expect_eol(p)))
        return st;
    char *cname = sym_name(p, name);
    oxide_global *g;
    if (!cname)
        return oom();
    st = oxide_module_add_global(p->mod, cname, type, as_of[space], align, init, init_size, &g);
    return st ? berr(name, st) : OXIDE_OK;
}

static oxide_status scalar_of(P *p, oxide_scalar *s) {
    char d[48];
    if (cur(p)->k != T_IDENT || !oxide__scalar_by_name(txt(p, cur(p)), cur(p)->len, s))
        return perr(cur(p), "expected a scalar type (bool, i8..i64, u8..u64, f16, bf16, f32, f64), found %s",
                    describe(p, cur(p), d));
    adv(p);
    return OXIDE_OK;
}

/* One kernel parameter: "%name: KIND". A slice defines two values, %name and %name.len. */
static oxide_status kernel_param(P *p, pfunc *pf) {
    char d[48];
    oxide_status st;
    tok *key = cur(p);
    const char *name;
    oxide_value *v[2] = {NULL, NULL};
    oxide_scalar s;
    if (key->k != T_VAL)
        return perr(key, "expected a parameter '%%name', found %s", describe(p, key, d));
    if ((st = value_key(p, key, &name)) || (st = fresh(p, pf, key)))
        return st;
    adv(p);
    if ((st = expect(p, ':')))
        return st;
    tok *kind = cur(p);
    bool slice = is_word(p, kind, "slice");
    if (slice || is_word(p, kind, "ptr")) {
        adv(p);
        if ((st = expect(p, '<')))
            return st;
        bool mut = is_word(p, cur(p), "mut");
        if (mut)
            adv(p);
        if ((st = scalar_of(p, &s)) || (st = expect(p, '>')))
            return st;
        st = slice ? oxide_kernel_add_slice_param(pf->fn, name, s, mut, &v[0], &v[1])
                   : oxide_kernel_add_ptr_param(pf->fn, name, s, mut, &v[0]);
    } else if (is_word(p, kind, "bytes")) {
        uint32_t size, align;
        adv(p);
        if ((st = expect(p, '<')) || (st = get_u32(p, &size)) || (st = expect(p, ',')) || (st = get_u32(p, &align)) ||
            (st = expect(p, '>')))
            return st;
        st = oxide_kernel_add_bytes_param(pf->fn, name, size, align, &v[0]);
    } else if (is_word(p, kind, "tma_desc")) {
        adv(p);
        st = oxide_kernel_add_tma_desc_param(pf->fn, name, &v[0]);
    } else if (is_word(p, kind, "tensor")) {
        oxide_type *tt;
        if ((st = parse_type(p, 0, &tt)))
            return st;
        st = oxide_kernel_add_tensor_param(pf->fn, name, tt, &v[0]);
    } else if (kind->k == T_IDENT && oxide__scalar_by_name(txt(p, kind), kind->len, &s)) {
        adv(p);
        st = oxide_kernel_add_scalar_param(pf->fn, name, s, &v[0]);
    } else {
        return perr(kind,
                    "expected a kernel parameter kind (a scalar, slice<T>, ptr<T>, bytes<SIZE, ALIGN>, "
                    "tma_desc or tensor<RANK x T>), found %s",
                    describe(p, kind, d));
    }
    if (st)
        return berr(kind, st);
    if ((st = define_tok(p, pf, key, v[0])))
        return st;
    /* The length has no token of its own: it goes by the name the builder gave it, "NAME.len"
     * (kernel parameters always have names); so do a SIMT kernel's tensor dims and strides. */
    if (v[1] && v[1]->name)
        st = define(p, pf, key, v[1]->name, (uint32_t)strlen(v[1]->name), v[1]);
    const oxide_iface_param *ip = pf->fn->iface.len ? pf->fn->iface.items[pf->fn->iface.len - 1] : NULL;
    if (!st && !pf->fn->is_tile && ip && ip->kind == OXIDE_PARAM_TENSOR)
        for (uint32_t i = ip->first_value + 1; !st && i < pf->fn->params.len; i++) {
            oxide_value *x = pf->fn->params.items[i];
            st = define(p, pf, key, x->name, (uint32_t)strlen(x->name), x);
        }
    return st;
}

static oxide_status func_param(P *p, pfunc *pf) {
    char d[48];
    oxide_status st;
    tok *key = cur(p);
    const char *name;
    oxide_type *type;
    oxide_value *v;
    if (key->k != T_VAL)
        return perr(key, "expected a parameter '%%name', found %s", describe(p, key, d));
    if ((st = value_key(p, key, &name)) || (st = fresh(p, pf, key)))
        return st;
    adv(p);
    if ((st = expect(p, ':')) || (st = parse_type(p, 0, &type)))
        return st;
    if ((st = oxide_function_add_param(pf->fn, name, type, &v)))
        return berr(key, st);
    return define_tok(p, pf, key, v);
}

static oxide_status kernel_attrs(P *p, oxide_function *fn) {
    static const char *const names[] = {"launch_bounds", "cluster", "dyn_smem"};
    static const unsigned nargs[] = {2, 3, 1};
    unsigned seen = 0;
    for (;;) {
        tok *t = cur(p);
        int a = -1;
        for (int i = 0; i < 3; i++)
            if (is_word(p, t, names[i]))
                a = i;
        if (a < 0)
            return OXIDE_OK;
        if (seen & (1u << a))
            return perr(t, "%s is given twice", names[a]);
        seen |= 1u << a;
        adv(p);
        uint32_t v[3] = {0, 0, 0};
        oxide_status st = expect(p, '(');
        for (unsigned i = 0; !st && i < nargs[a]; i++)
            if (!i || !(st = expect(p, ',')))
                st = get_u32(p, &v[i]);
        if (st || (st = expect(p, ')')))
            return st;
        st = a == 0   ? oxide_kernel_set_launch_bounds(fn, v[0], v[1])
             : a == 1 ? oxide_kernel_set_cluster(fn, v[0], v[1], v[2])
                      : oxide_kernel_set_dyn_smem(fn, v[0]);
        if (st)
            return berr(t, st);
    }
}

/* "hints(warps=4, stages=3)" after a tile kernel's parameters; optional, keys in any order. */
static oxide_status tile_hints(P *p, oxide_function *fn) {
    char d[48];
    oxide_status st;
    unsigned seen = 0;
    if (!is_word(p, cur(p), "hints"))
        return OXIDE_OK;
    adv(p);
    if ((st = expect(p, '(')))
        return st;
    while (!is_punct(p, cur(p), ')')) {
        if (seen && (st = expect(p, ',')))
            return st;
        tok *k = cur(p);
        unsigned h = 0;
        uint32_t v;
        while (h < OXIDE__TILE_NHINTS && !is_word(p, k, oxide__tile_hint_names[h]))
            h++;
        if (h == OXIDE__TILE_NHINTS)
            return perr(k, "unknown hint %s (hints: warps, stages, group, persistent, consumer_groups, cluster)",
                        describe(p, k, d));
        if (seen & (1u << h))
            return perr(k, "hint %s is given twice", oxide__tile_hint_names[h]);
        seen |= 1u << h;
        adv(p);
        if ((st = expect(p, '=')) || (st = get_u32(p, &v)))
            return st;
        if ((st = oxide_tile_kernel_set_hint(fn, (oxide_tile_hint)h, v)))
            return berr(k, st);
    }
    adv(p);
    return OXIDE_OK;
}

/* "kernel @name(params) attrs {" or "func @name(params) [-> type] {", then find the body's
 * closing "}": the first one that starts a line (attribute braces never do). */
static oxide_status parse_header(P *p, oxide_vec *funcs) {
    char d[48];
    oxide_status st;
    bool tile = is_word(p, cur(p), "tile_kernel"), kernel = tile || is_word(p, cur(p), "kernel");
    adv(p);
    tok *name = cur(p);
    if (name->k != T_SYM)
        return perr(name, "expected a function name '@name', found %s", describe(p, name, d));
    char *cname = sym_name(p, name);
    pfunc *pf = oxide__alloc(&p->scratch, sizeof *pf);
    if (!cname || !pf || !oxide__vec_push(&p->scratch, funcs, pf))
        return oom();
    adv(p);
    if ((st = expect(p, '(')))
        return st;
    uint32_t params = p->i, after = 0;
    if (kernel) {
        st = tile ? oxide_module_add_tile_kernel(p->mod, cname, &pf->fn)
                  : oxide_module_add_kernel(p->mod, cname, &pf->fn);
    } else {
        /* The return type comes after the parameters but the function needs it up front. */
        oxide_type *ret;
        while (cur(p)->k != T_EOF && !is_punct(p, cur(p), ')') && !is_punct(p, cur(p), '{'))
            adv(p);
        if ((st = expect(p, ')')))
            return st;
        if (cur(p)->k == T_ARROW) {
            adv(p);
            if ((st = parse_type(p, 0, &ret)))
                return st;
        } else if ((st = oxide_type_scalar(p->ctx, OXIDE_TYPE_VOID, &ret))) {
            return berr(name, st);
        }
        after = p->i;
        p->i = params;
        st = oxide_module_add_function(p->mod, cname, ret, &pf->fn);
    }
    if (st)
        return berr(name, st);
    while (!is_punct(p, cur(p), ')')) {
        if (p->i != params && (st = expect(p, ',')))
            return st;
        if ((st = kernel ? kernel_param(p, pf) : func_param(p, pf)))
            return st;
    }
    adv(p);
    if (kernel)
        st = tile ? tile_hints(p, pf->fn) : kernel_attrs(p, pf->fn);
    else
        p->i = after;
    if (st || (st = expect(p, '{')))
        return st;
    tok *open = &p->t[p->i - 1];
    if (cur(p)->k != T_NL)
        return perr(cur(p), "expected end of line after '{', found %s", describe(p, cur(p), d));
    adv(p);
    pf->body = p->i;
    while (cur(p)->k != T_EOF && !(is_punct(p, cur(p), '}') && p->t[p->i - 1].k == T_NL))
        adv(p);
    if (cur(p)->k == T_EOF)
        return perr(open, "@%s has no closing '}' at the start of a line", cname);
    pf->end = p->i;
    adv(p);
    return expect_eol(p);
}

/* ---- function bodies ---- */

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

static oxide_status parse_body(P *p, pfunc *pf) {
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

static oxide_status parse_module(P *p) {
    char d[48];
    oxide_status st;
    oxide_vec funcs = {0};
    skip_nl(p);
    if (!is_word(p, cur(p), "module"))
        return perr(cur(p), "expected 'module @name', found %s", describe(p, cur(p), d));
    adv(p);
    tok *name = cur(p);
    if (name->k != T_SYM)
        return perr(name, "expected a module name '@name', found %s", describe(p, name, d));
    char *cname = sym_name(p, name);
    if (!cname)
        return oom();
    if ((st = oxide_module_create(p->ctx, cname, &p->mod)))
        return berr(name, st);
    adv(p);
    if ((st = expect_eol(p)))
        return st;
    for (;;) {
        skip_nl(p);
        tok *t = cur(p);
        if (t->k == T_EOF)
            break;
        if (is_word(p, t, "global"))
            st = parse_global(p);
        else if (is_word(p, t, "kernel") || is_word(p, t, "tile_kernel") || is_word(p, t, "func"))
            st = parse_header(p, &funcs);
        else
            st = perr(t, "expected 'global', 'kernel', 'tile_kernel' or 'func', found %s", describe(p, t, d));
        if (st)
            return st;
    }
    for (uint32_t i = 0; i < funcs.len; i++)
        if ((st = parse_body(p, funcs.items[i])))
            return st;
    return OXIDE_OK;
}

oxide_status oxide_module_parse(oxide_context *ctx, const char *text, size_t len, oxide_module **out) {
    if (!ctx || !out || (!text && len))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_parse: NULL argument");
    if (len >= UINT32_MAX / 2)
        return oxide__fail(OXIDE_ERROR_PARSE, "1:1: input of %zu bytes is too large", len);
    P p = {.ctx = ctx, .src = text ? text : "", .len = len};
    oxide_status st = lex(&p);
    if (!st)
        st = parse_module(&p);
    if (st) {
        if (p.mod) /* destroying does not touch the recorded message */
            oxide_module_destroy(p.mod);
    } else {
        *out = p.mod;
    }
    free(p.t);
    oxide__arena_free(&p.scratch);
    return st;
}
