/* The IR text printer. Its output is the canonical text form: lib/parse.c reads it back to an
 * identical module, so every choice here (spacing, attribute order, number formats) is part of
 * the format that docs/ir.md describes. The line layout is relied on too: lib/lower.c points
 * debug line info at this text, counting one line per function header, block label and op. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s2 = realloc(b->s, cap);
        if (!s2) {
            b->oom = true;
            return;
        }
        b->s = s2;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void putf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_type(buf *b, const oxide_type *t) { puts_(b, t ? t->name : "void"); }

static void put_value(buf *b, const oxide_value *v) {
    if (!v)
        puts_(b, "%<null>");
    else if (v->name)
        putf(b, "%%%s", v->name);
    else
        putf(b, "%%%u", v->id);
}

static void put_values(buf *b, oxide_value *const *vals, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            puts_(b, ", ");
        put_value(b, vals[i]);
    }
}

static void put_succ(buf *b, const oxide_succ *s) {
    putf(b, "^%u", s->block ? s->block->index : 0);
    if (s->nargs) {
        puts_(b, "(");
        put_values(b, s->args, s->nargs);
        puts_(b, ")");
    }
}

/* Shortest "%.*g" that reads back to the same double, so the text is both exact and short;
 * inf and nan get names because printf's spelling of them is not portable. The decimal point
 * is forced to '.' afterwards in case the host program switched LC_NUMERIC. */
static void format_double(double v, char out[32]) {
    if (isnan(v)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            break;
    }
    for (char *c = out; *c; c++)
        if (*c == ',')
            *c = '.';
}

static void put_str_literal(buf *b, const char *s) {
    puts_(b, "\"");
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '\\' || *c == '"')
            putf(b, "\\%c", *c);
        else if (*c == '\n')
            puts_(b, "\\n");
        else if (*c == '\t')
            puts_(b, "\\t");
        else if (*c < 0x20 || *c >= 0x7f)
            putf(b, "\\x%02x", *c);
        else
            put(b, (const char *)c, 1);
    }
    puts_(b, "\"");
}

static bool const_is_float(const oxide_type *t) {
    if (t && (t->kind == OXIDE_TYPE_VECTOR || t->kind == OXIDE_TYPE_TILE))
        t = t->elem;
    return t && (oxide__type_is_float(t) || oxide__type_is_fp8(t));
}

/* const's value and tile.load's pad: an integer or a float, by the (element) type. */
static void put_number_attr(buf *b, const char *sep, const char *key, const oxide_inst *in) {
    if (const_is_float(in->result ? in->result->type : NULL)) {
        char num[32];
        format_double(in->fvalue, num);
        putf(b, "%s%s=%s", sep, key, num);
    } else {
        putf(b, "%s%s=%lld", sep, key, (long long)in->ivalue);
    }
}

static const char *name_or(const char *const *names, unsigned n, unsigned i) { return i < n ? names[i] : "?"; }

/* Every attribute of the op's row, always, in one fixed order, so the text is canonical. */
static void put_attrs(buf *b, const oxide_inst *in) {
    unsigned mask = oxide_ops[in->op].attrs;
    if (!mask)
        return;
    const char *sep = " {";
    if ((mask & A_SYM) && in->sym) {
        putf(b, "%ssym=@", sep);
        puts_(b, in->sym);
        sep = ", ";
    }
    if (mask & A_PRED) {
        putf(b, "%spred=%s", sep, name_or(oxide__pred_names, 24, in->pred));
        sep = ", ";
    }
    if ((mask & A_ELEM) && in->elem) {
        putf(b, "%selem=", sep);
        put_type(b, in->elem);
        sep = ", ";
    }
    if (mask & A_ALIGN) {
        putf(b, "%salign=%u", sep, in->align);
        sep = ", ";
    }
    if (mask & A_VOLATILE) {
        putf(b, "%svolatile=%d", sep, in->is_volatile ? 1 : 0);
        sep = ", ";
    }
    if (mask & A_SCOPE) {
        putf(b, "%sscope=%s", sep, name_or(oxide__scope_names, 4, in->scope));
        sep = ", ";
    }
    if (mask & A_ORDER) {
        putf(b, "%sorder=%s", sep, name_or(oxide__order_names, 5, in->order));
        sep = ", ";
    }
    if (mask & A_IMM) {
        putf(b, "%simm=%lld", sep, (long long)in->imm);
        sep = ", ";
    }
    if (mask & A_VALUE) {
        put_number_attr(b, sep, "value", in);
        sep = ", ";
    }
    if (mask & A_STR) {
        putf(b, "%sstr=", sep);
        put_str_literal(b, in->str);
        sep = ", ";
    }
    if (mask & A_PAD) { /* held like const's value */
        put_number_attr(b, sep, "pad", in);
        sep = ", ";
    }
    if (mask & A_PERM) {
        const oxide_type *x = in->noperands ? in->operands[0]->type : NULL;
        char text[32];
        oxide__tile_perm_text(in->perm, x && x->kind == OXIDE_TYPE_TILE ? x->rank : 3, text, sizeof text);
        putf(b, "%sperm=%s", sep, text);
        sep = ", ";
    }
    if (mask & A_KIND) {
        static const char *const kinds[] = {"sum", "max", "min"};
        putf(b, "%skind=%s", sep, name_or(kinds, 3, in->kind));
        sep = ", ";
    }
    if (sep[0] == ',')
        puts_(b, "}");
}

static void put_inst(buf *b, const oxide_inst *in) {
    puts_(b, "  ");
    if (in->result) {
        put_value(b, in->result);
        puts_(b, " = ");
    }
    puts_(b, oxide_ops[in->op].name);
    switch (in->op) {
    case OXIDE_OP_BR:
        if (in->nsucc) {
            puts_(b, " ");
            put_succ(b, &in->succ[0]);
        }
        break;
    case OXIDE_OP_COND_BR:
        puts_(b, " ");
        put_values(b, in->operands, in->noperands);
        for (uint32_t i = 0; i < in->nsucc; i++) {
            puts_(b, ", ");
            put_succ(b, &in->succ[i]);
        }
        break;
    case OXIDE_OP_SWITCH:
        puts_(b, " ");
        put_values(b, in->operands, in->noperands);
        if (in->nsucc) {
            puts_(b, ", ");
            put_succ(b, &in->succ[0]);
        }
        puts_(b, " [");
        for (uint32_t i = 1; i < in->nsucc; i++) {
            putf(b, "%s%lld: ", i > 1 ? ", " : "", (long long)in->succ[i].case_value);
            put_succ(b, &in->succ[i]);
        }
        puts_(b, "]");
        break;
    default:
        if (in->noperands) {
            puts_(b, " ");
            put_values(b, in->operands, in->noperands);
        }
        put_attrs(b, in);
        if (in->result) {
            puts_(b, " : ");
            put_type(b, in->result->type);
        }
    }
    puts_(b, "\n");
}

static void number(oxide_value *v, uint32_t *next) {
    if (!v->name)
        v->id = (*next)++;
}

/* Unnamed values are numbered in the order the text shows them, so the numbers read back. */
static void number_values(oxide_function *fn) {
    uint32_t next = 0;
    for (uint32_t i = 0; i < fn->params.len; i++)
        number(fn->params.items[i], &next);
    for (uint32_t i = 0; i < fn->blocks.len; i++) {
        oxide_block *bl = fn->blocks.items[i];
        for (uint32_t j = 0; j < bl->params.len; j++)
            number(bl->params.items[j], &next);
        for (uint32_t j = 0; j < bl->insts.len; j++) {
            oxide_inst *in = bl->insts.items[j];
            if (in->result)
                number(in->result, &next);
        }
    }
}

static void put_iface_param(buf *b, const oxide_function *fn, const oxide_iface_param *p) {
    put_value(b, p->first_value < fn->params.len ? fn->params.items[p->first_value] : NULL);
    puts_(b, ": ");
    if (p->kind == OXIDE__PARAM_TENSOR) {
        put_type(b, p->tensor);
        return;
    }
    const char *scalar = oxide_scalar_name(p->scalar);
    switch (p->kind) {
    case OXIDE_PARAM_SCALAR: puts_(b, scalar ? scalar : "?"); break;
    case OXIDE_PARAM_SLICE:
    case OXIDE_PARAM_PTR:
        putf(b, "%s<%s%s>", p->kind == OXIDE_PARAM_SLICE ? "slice" : "ptr", p->is_mutable ? "mut " : "",
             scalar ? scalar : "?");
        break;
    case OXIDE_PARAM_BYTES: putf(b, "bytes<%u, %u>", p->size, p->align); break;
    case OXIDE_PARAM_TMA_DESC: puts_(b, "tma_desc"); break;
    }
}

static void put_function(buf *b, oxide_function *fn) {
    number_values(fn);
    putf(b, "%s @", fn->is_tile ? "tile_kernel" : fn->is_kernel ? "kernel" : "func");
    puts_(b, fn->name);
    puts_(b, "(");
    if (fn->is_kernel) {
        for (uint32_t i = 0; i < fn->iface.len; i++) {
            if (i)
                puts_(b, ", ");
            put_iface_param(b, fn, fn->iface.items[i]);
        }
        puts_(b, ")");
        if (fn->launch_bounds[0])
            putf(b, " launch_bounds(%u, %u)", fn->launch_bounds[0], fn->launch_bounds[1]);
        if (fn->cluster[0])
            putf(b, " cluster(%u, %u, %u)", fn->cluster[0], fn->cluster[1], fn->cluster[2]);
        if (fn->dyn_smem)
            putf(b, " dyn_smem(%u)", fn->dyn_smem);
        for (unsigned h = 0, n = 0; h < OXIDE__TILE_NHINTS; h++)
            if (fn->hints_set & (1u << h))
                putf(b, "%s%s=%u", n++ ? ", " : " hints(", oxide__tile_hint_names[h], fn->hints[h]);
        if (fn->hints_set)
            puts_(b, ")");
    } else {
        for (uint32_t i = 0; i < fn->params.len; i++) {
            oxide_value *v = fn->params.items[i];
            if (i)
                puts_(b, ", ");
            put_value(b, v);
            puts_(b, ": ");
            put_type(b, v->type);
        }
        puts_(b, ")");
        if (fn->ret && fn->ret->kind != OXIDE_TYPE_VOID) {
            puts_(b, " -> ");
            put_type(b, fn->ret);
        }
    }
    puts_(b, " {\n");
    for (uint32_t i = 0; i < fn->blocks.len; i++) {
        oxide_block *bl = fn->blocks.items[i];
        putf(b, "^%u", bl->index);
        if (bl->params.len) {
            puts_(b, "(");
            for (uint32_t j = 0; j < bl->params.len; j++) {
                oxide_value *v = bl->params.items[j];
                if (j)
                    puts_(b, ", ");
                put_value(b, v);
                puts_(b, ": ");
                put_type(b, v->type);
            }
            puts_(b, ")");
        }
        puts_(b, ":\n");
        for (uint32_t j = 0; j < bl->insts.len; j++)
            put_inst(b, bl->insts.items[j]);
    }
    puts_(b, "}\n");
}

static void put_global(buf *b, const oxide_global *g) {
    static const char *const spaces[] = {
        [OXIDE_AS_GLOBAL] = "global", [OXIDE_AS_SHARED] = "shared", [OXIDE_AS_CONSTANT] = "constant"};
    const char *space = (unsigned)g->as <= OXIDE_AS_CONSTANT ? spaces[g->as] : NULL;
    puts_(b, "global @");
    puts_(b, g->name);
    puts_(b, " : ");
    put_type(b, g->type);
    putf(b, " %s align %u", space ? space : "?", g->align);
    if (g->init) {
        puts_(b, " init 0x");
        for (size_t i = 0; i < g->init_size; i++)
            putf(b, "%02x", g->init[i]);
    }
    puts_(b, "\n");
}

oxide_status oxide_module_print(oxide_module *mod, const char **out) {
    if (!mod || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_print: NULL argument");
    buf b = {0};
    puts_(&b, "module @");
    puts_(&b, mod->name);
    puts_(&b, "\n");
    if (mod->globals.len)
        puts_(&b, "\n");
    for (uint32_t i = 0; i < mod->globals.len; i++)
        put_global(&b, mod->globals.items[i]);
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        puts_(&b, "\n");
        put_function(&b, mod->functions.items[i]);
    }
    if (b.oom) {
        free(b.s);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_module_print: out of memory");
    }
    free(mod->printed);
    mod->printed = b.s;
    *out = b.s;
    return OXIDE_OK;
}
