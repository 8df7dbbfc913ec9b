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
 * values. Passes (1) and the shared pieces (types, values) are here; (2) and (3), the bodies, are
 * in lib/parse_body.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* The name after a sigil (%x, ^x, @x), NUL-terminated, in scratch memory. */
char *sym_name(P *p, const tok *t) { return oxide__strndup(&p->scratch, txt(p, t) + 1, t->len - 1); }

/* ---- maps ---- */

/* Insert or overwrite. Keys must outlive the map (they point into the source or scratch). */
oxide_status map_put(P *p, oxide_strmap *m, const char *k, uint32_t n, void *v) {
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

oxide_status parse_type(P *p, int depth, oxide_type **out) {
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
oxide_status value_key(P *p, const tok *t, const char **name) {
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
oxide_status fresh(P *p, pfunc *pf, const tok *t) {
    char d[48];
    if (oxide__strmap_get(&pf->vals, txt(p, t) + 1, t->len - 1))
        return perr(t, "%s is already defined", describe(p, t, d));
    return OXIDE_OK;
}

oxide_status define_tok(P *p, pfunc *pf, const tok *t, oxide_value *v) {
    return define(p, pf, t, txt(p, t) + 1, t->len - 1, v);
}

oxide_status use_value(P *p, pfunc *pf, oxide_value **out) {
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
        if (!st && is_word(p, cur(p), "tma")) {
            /* a lowered kernel's TMA box, one number per dim: tma(B0, B1, ..) */
            uint32_t box[OXIDE__TENSOR_MAX_RANK] = {0};
            tok *at = cur(p);
            adv(p);
            if ((st = expect(p, '(')))
                return st;
            for (uint32_t d = 0; d < tt->rank; d++)
                if ((d && (st = expect(p, ','))) || (st = get_u32(p, &box[d])))
                    return st;
            if ((st = expect(p, ')')))
                return st;
            oxide_value *dv;
            if ((st = oxide__kernel_tensor_tma(pf->fn, box, &dv)))
                return berr(at, st);
        }
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

static oxide_status kernel_attrs(P *p, pfunc *pf) {
    oxide_function *fn = pf->fn;
    static const char *const names[] = {"launch_bounds", "cluster", "dyn_smem"};
    static const unsigned nargs[] = {2, 3, 1};
    unsigned seen = 0;
    for (;;) {
        tok *t = cur(p);
        int a = -1;
        for (int i = 0; i < 3; i++)
            if (is_word(p, t, names[i]))
                a = i;
        if (a < 0 && is_word(p, t, "tma_only") && !fn->tma_only) {
            /* a lowered tile kernel's TMA variant, and (below) the kernel naming it (iface.h) */
            adv(p);
            fn->tma_only = true;
            continue;
        }
        if (a < 0 && is_word(p, t, "persistent") && !fn->persistent) {
            /* a lowered tile kernel's grid parameters come last, by the names the builder gave */
            oxide_value *g[3];
            oxide_status st = oxide__kernel_set_persistent(fn, g);
            if (st)
                return berr(t, st);
            for (int i = 0; !st && i < 3; i++)
                st = define(p, pf, t, g[i]->name, (uint32_t)strlen(g[i]->name), g[i]);
            if (st)
                return st;
            adv(p);
            continue;
        }
        if (a < 0 && is_word(p, t, "tma_entry") && !fn->tma_entry) {
            oxide_status st;
            adv(p);
            if ((st = expect(p, '(')))
                return st;
            tok *e = cur(p);
            if (e->k != T_SYM)
                return perr(e, "tma_entry takes the @name of the kernel's TMA variant");
            adv(p);
            if (!(fn->tma_entry = oxide__strndup(&fn->mod->arena, txt(p, e) + 1, e->len - 1)))
                return perr(e, "out of memory");
            if ((st = expect(p, ')')))
                return st;
            continue;
        }
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
            return perr(k,
                        "unknown hint %s (hints: warps, stages, group, persistent, consumer_groups, cluster, producer)",
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
        st = tile ? tile_hints(p, pf->fn) : kernel_attrs(p, pf);
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
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_parse: %s is NULL",
                           !ctx   ? "ctx"
                           : !out ? "out"
                                  : "text (with len > 0)");
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
