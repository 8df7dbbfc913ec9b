/* The IR text printer. Its output is the canonical text form: lib/parse.c reads it back to an
 * identical module, so every choice here (spacing, attribute order, number formats) is part of
 * the format that docs/ir.md describes. The line layout is relied on too: lib/lower.c points
 * debug line info at this text, counting one line per function header, block label and op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The text so far, and the first type whose text was too long to print. */
typedef struct {
    oxide_sbuf s;
    const oxide_type *too_long; /* a type whose text is longer than TYPE_TEXT_MAX */
} buf;

/* A type's text is its name unless the name was cut short; then it is written from the
 * structure, up to TYPE_TEXT_MAX bytes (nested types can have text exponential in their depth). */
#define TYPE_TEXT_MAX (16u << 20)

static void put_type_text(buf *b, const oxide_type *t, size_t start) {
    if (b->s.oom || b->too_long)
        return;
    if (b->s.len - start > TYPE_TEXT_MAX) {
        b->too_long = t;
        return;
    }
    if (!t->name_cut) {
        oxide__sbuf_puts(&b->s, t->name);
    } else if (t->kind == OXIDE_TYPE_STRUCT) {
        oxide__sbuf_puts(&b->s, "struct<");
        for (uint32_t i = 0; i < t->nfields; i++) {
            if (i)
                oxide__sbuf_puts(&b->s, ", ");
            put_type_text(b, t->fields[i], start);
        }
        oxide__sbuf_puts(&b->s, ">");
    } else {
        oxide__sbuf_printf(&b->s, "%s<%llu x ", t->kind == OXIDE_TYPE_VECTOR ? "vec" : "array",
                           (unsigned long long)t->count);
        put_type_text(b, t->elem, start);
        oxide__sbuf_puts(&b->s, ">");
    }
}

static void put_type(buf *b, const oxide_type *t) {
    if (!t)
        oxide__sbuf_puts(&b->s, "void");
    else
        put_type_text(b, t, b->s.len);
}

static void put_value(buf *b, const oxide_value *v) {
    if (!v)
        oxide__sbuf_puts(&b->s, "%<null>");
    else if (v->name)
        oxide__sbuf_printf(&b->s, "%%%s", v->name);
    else
        oxide__sbuf_printf(&b->s, "%%%u", v->id);
}

static void put_values(buf *b, oxide_value *const *vals, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            oxide__sbuf_puts(&b->s, ", ");
        put_value(b, vals[i]);
    }
}

static void put_succ(buf *b, const oxide_succ *s) {
    oxide__sbuf_printf(&b->s, "^%u", s->block ? s->block->index : 0);
    if (s->nargs) {
        oxide__sbuf_puts(&b->s, "(");
        put_values(b, s->args, s->nargs);
        oxide__sbuf_puts(&b->s, ")");
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
    oxide__sbuf_puts(&b->s, "\"");
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '\\' || *c == '"')
            oxide__sbuf_printf(&b->s, "\\%c", *c);
        else if (*c == '\n')
            oxide__sbuf_puts(&b->s, "\\n");
        else if (*c == '\t')
            oxide__sbuf_puts(&b->s, "\\t");
        else if (*c < 0x20 || *c >= 0x7f)
            oxide__sbuf_printf(&b->s, "\\x%02x", *c);
        else
            oxide__sbuf_put(&b->s, (const char *)c, 1);
    }
    oxide__sbuf_puts(&b->s, "\"");
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
        oxide__sbuf_printf(&b->s, "%s%s=%s", sep, key, num);
    } else {
        oxide__sbuf_printf(&b->s, "%s%s=%lld", sep, key, (long long)in->ivalue);
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
        oxide__sbuf_printf(&b->s, "%ssym=@", sep);
        oxide__sbuf_puts(&b->s, in->sym);
        sep = ", ";
    }
    if (mask & A_PRED) {
        oxide__sbuf_printf(&b->s, "%spred=%s", sep, name_or(oxide__pred_names, 24, in->pred));
        sep = ", ";
    }
    if ((mask & A_ELEM) && in->elem) {
        oxide__sbuf_printf(&b->s, "%selem=", sep);
        put_type(b, in->elem);
        sep = ", ";
    }
    if (mask & A_ALIGN) {
        oxide__sbuf_printf(&b->s, "%salign=%u", sep, in->align);
        sep = ", ";
    }
    if (mask & A_VOLATILE) {
        oxide__sbuf_printf(&b->s, "%svolatile=%d", sep, in->is_volatile ? 1 : 0);
        sep = ", ";
    }
    if (mask & A_SCOPE) {
        oxide__sbuf_printf(&b->s, "%sscope=%s", sep, name_or(oxide__scope_names, 4, in->scope));
        sep = ", ";
    }
    if (mask & A_ORDER) {
        oxide__sbuf_printf(&b->s, "%sorder=%s", sep, name_or(oxide__order_names, 5, in->order));
        sep = ", ";
    }
    if (mask & A_IMM) {
        oxide__sbuf_printf(&b->s, "%simm=%lld", sep, (long long)in->imm);
        sep = ", ";
    }
    if (mask & A_VALUE) {
        put_number_attr(b, sep, "value", in);
        sep = ", ";
    }
    if (mask & A_STR) {
        oxide__sbuf_printf(&b->s, "%sstr=", sep);
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
        oxide__sbuf_printf(&b->s, "%sperm=%s", sep, text);
        sep = ", ";
    }
    if (mask & A_KIND) {
        static const char *const kinds[] = {"sum", "max", "min"};
        oxide__sbuf_printf(&b->s, "%skind=%s", sep, name_or(kinds, 3, in->kind));
        sep = ", ";
    }
    if (sep[0] == ',')
        oxide__sbuf_puts(&b->s, "}");
}

static void put_inst(buf *b, const oxide_inst *in) {
    oxide__sbuf_puts(&b->s, "  ");
    if (in->result) {
        put_value(b, in->result);
        oxide__sbuf_puts(&b->s, " = ");
    }
    oxide__sbuf_puts(&b->s, oxide_ops[in->op].name);
    switch (in->op) {
    case OXIDE_OP_BR:
        if (in->nsucc) {
            oxide__sbuf_puts(&b->s, " ");
            put_succ(b, &in->succ[0]);
        }
        break;
    case OXIDE_OP_COND_BR:
        oxide__sbuf_puts(&b->s, " ");
        put_values(b, in->operands, in->noperands);
        for (uint32_t i = 0; i < in->nsucc; i++) {
            oxide__sbuf_puts(&b->s, ", ");
            put_succ(b, &in->succ[i]);
        }
        break;
    case OXIDE_OP_SWITCH:
        oxide__sbuf_puts(&b->s, " ");
        put_values(b, in->operands, in->noperands);
        if (in->nsucc) {
            oxide__sbuf_puts(&b->s, ", ");
            put_succ(b, &in->succ[0]);
        }
        oxide__sbuf_puts(&b->s, " [");
        for (uint32_t i = 1; i < in->nsucc; i++) {
            oxide__sbuf_printf(&b->s, "%s%lld: ", i > 1 ? ", " : "", (long long)in->succ[i].case_value);
            put_succ(b, &in->succ[i]);
        }
        oxide__sbuf_puts(&b->s, "]");
        break;
    default:
        if (in->noperands) {
            oxide__sbuf_puts(&b->s, " ");
            put_values(b, in->operands, in->noperands);
        }
        put_attrs(b, in);
        if (in->result) {
            oxide__sbuf_puts(&b->s, " : ");
            put_type(b, in->result->type);
        }
    }
    oxide__sbuf_puts(&b->s, "\n");
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
    oxide__sbuf_puts(&b->s, ": ");
    const char *scalar = oxide_scalar_name(p->scalar);
    switch (p->kind) {
    case OXIDE_PARAM_TENSOR:
        put_type(b, p->tensor);
        for (uint32_t d = 0; p->tma && d < p->rank; d++)
            oxide__sbuf_printf(&b->s, "%s%u%s", d ? ", " : " tma(", p->tma_box[d], d + 1 == p->rank ? ")" : "");
        break;
    case OXIDE_PARAM_SCALAR: oxide__sbuf_puts(&b->s, scalar ? scalar : "?"); break;
    case OXIDE_PARAM_SLICE:
    case OXIDE_PARAM_PTR:
        oxide__sbuf_printf(&b->s, "%s<%s%s>", p->kind == OXIDE_PARAM_SLICE ? "slice" : "ptr",
                           p->is_mutable ? "mut " : "", scalar ? scalar : "?");
        break;
    case OXIDE_PARAM_BYTES: oxide__sbuf_printf(&b->s, "bytes<%u, %u>", p->size, p->align); break;
    case OXIDE_PARAM_TMA_DESC: oxide__sbuf_puts(&b->s, "tma_desc"); break;
    }
}

static void put_function(buf *b, oxide_function *fn) {
    number_values(fn);
    oxide__sbuf_printf(&b->s, "%s @", fn->is_tile ? "tile_kernel" : fn->is_kernel ? "kernel" : "func");
    oxide__sbuf_puts(&b->s, fn->name);
    oxide__sbuf_puts(&b->s, "(");
    if (fn->is_kernel) {
        for (uint32_t i = 0; i < fn->iface.len; i++) {
            if (i)
                oxide__sbuf_puts(&b->s, ", ");
            put_iface_param(b, fn, fn->iface.items[i]);
        }
        oxide__sbuf_puts(&b->s, ")");
        if (fn->launch_bounds[0])
            oxide__sbuf_printf(&b->s, " launch_bounds(%u, %u)", fn->launch_bounds[0], fn->launch_bounds[1]);
        if (fn->cluster[0])
            oxide__sbuf_printf(&b->s, " cluster(%u, %u, %u)", fn->cluster[0], fn->cluster[1], fn->cluster[2]);
        if (fn->dyn_smem)
            oxide__sbuf_printf(&b->s, " dyn_smem(%u)", fn->dyn_smem);
        if (fn->tma_entry)
            oxide__sbuf_printf(&b->s, " tma_entry(@%s)", fn->tma_entry);
        if (fn->tma_only)
            oxide__sbuf_puts(&b->s, " tma_only");
        if (fn->persistent)
            oxide__sbuf_puts(&b->s, " persistent");
        for (unsigned h = 0, n = 0; h < OXIDE__TILE_NHINTS; h++)
            if (fn->hints_set & (1u << h))
                oxide__sbuf_printf(&b->s, "%s%s=%u", n++ ? ", " : " hints(", oxide__tile_hint_names[h], fn->hints[h]);
        if (fn->hints_set)
            oxide__sbuf_puts(&b->s, ")");
    } else {
        for (uint32_t i = 0; i < fn->params.len; i++) {
            oxide_value *v = fn->params.items[i];
            if (i)
                oxide__sbuf_puts(&b->s, ", ");
            put_value(b, v);
            oxide__sbuf_puts(&b->s, ": ");
            put_type(b, v->type);
        }
        oxide__sbuf_puts(&b->s, ")");
        if (fn->ret && fn->ret->kind != OXIDE_TYPE_VOID) {
            oxide__sbuf_puts(&b->s, " -> ");
            put_type(b, fn->ret);
        }
    }
    oxide__sbuf_puts(&b->s, " {\n");
    for (uint32_t i = 0; i < fn->blocks.len; i++) {
        oxide_block *bl = fn->blocks.items[i];
        oxide__sbuf_printf(&b->s, "^%u", bl->index);
        if (bl->params.len) {
            oxide__sbuf_puts(&b->s, "(");
            for (uint32_t j = 0; j < bl->params.len; j++) {
                oxide_value *v = bl->params.items[j];
                if (j)
                    oxide__sbuf_puts(&b->s, ", ");
                put_value(b, v);
                oxide__sbuf_puts(&b->s, ": ");
                put_type(b, v->type);
            }
            oxide__sbuf_puts(&b->s, ")");
        }
        oxide__sbuf_puts(&b->s, ":\n");
        for (uint32_t j = 0; j < bl->insts.len; j++)
            put_inst(b, bl->insts.items[j]);
    }
    oxide__sbuf_puts(&b->s, "}\n");
}

static void put_global(buf *b, const oxide_global *g) {
    static const char *const spaces[] = {
        [OXIDE_AS_GLOBAL] = "global", [OXIDE_AS_SHARED] = "shared", [OXIDE_AS_CONSTANT] = "constant"};
    const char *space = (unsigned)g->as <= OXIDE_AS_CONSTANT ? spaces[g->as] : NULL;
    oxide__sbuf_puts(&b->s, "global @");
    oxide__sbuf_puts(&b->s, g->name);
    oxide__sbuf_puts(&b->s, " : ");
    put_type(b, g->type);
    oxide__sbuf_printf(&b->s, " %s align %u", space ? space : "?", g->align);
    if (g->init) {
        oxide__sbuf_puts(&b->s, " init 0x");
        for (size_t i = 0; i < g->init_size; i++)
            oxide__sbuf_printf(&b->s, "%02x", g->init[i]);
    }
    oxide__sbuf_puts(&b->s, "\n");
}

oxide_status oxide_module_print(oxide_module *mod, const char **out) {
    if (!mod || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_print: %s is NULL", !mod ? "mod" : "out");
    buf b = {0};
    oxide__sbuf_puts(&b.s, "module @");
    oxide__sbuf_puts(&b.s, mod->name);
    oxide__sbuf_puts(&b.s, "\n");
    if (mod->globals.len)
        oxide__sbuf_puts(&b.s, "\n");
    for (uint32_t i = 0; i < mod->globals.len; i++)
        put_global(&b, mod->globals.items[i]);
    for (uint32_t i = 0; i < mod->functions.len; i++) {
        oxide__sbuf_puts(&b.s, "\n");
        put_function(&b, mod->functions.items[i]);
    }
    char *text = oxide__sbuf_take(&b.s);
    if (!text)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_module_print: out of memory");
    if (b.too_long) {
        free(text);
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "oxide_module_print: the text of type %s is too long to print (over %u MiB)",
                           b.too_long->name, TYPE_TEXT_MAX >> 20);
    }
    free(mod->printed);
    mod->printed = text;
    *out = text;
    return OXIDE_OK;
}
