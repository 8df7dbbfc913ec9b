/* Writes the manifest line that compiled PTX carries (docs/design.md section 5).
 *
 * Contract with the reader (lib/manifest.c), beyond the shape in docs/design.md:
 *  - one line: "// oxide.manifest.v1 " then the JSON object then "\n"; keys in the fixed order
 *    oxide, target, kernels; per kernel name, entry, params, launch_bounds, cluster, dyn_smem[, block].
 *  - "launch_bounds" is always present; [0,0] means "not set" (oxide_manifest_kernel_attrs'
 *    (0,0)). A min_blocks of 0 with a max_threads set is written as is.
 *  - "cluster" is always present; an unset cluster (or any 0 component) is written as 1, so
 *    [1,1,1] means "no cluster launch needed".
 *  - "block" (after dyn_smem) only when the compiler chose the block shape (lowered tile
 *    kernels); a 0 component of a chosen block is written as 1. Absent: the launch gives it.
 *  - "tma_entry" (a lowered tile kernel's TMA variant: its entry), "tma_only" (true: this is
 *    one) and "persistent" (true: three u32 PTX parameters after the interface's take the
 *    launch's grid), after "block", only when set (iface.h).
 *  - "contract" (last) only when the kernel declares a launch contract: an object with the
 *    declared fields only, in the order domain, block, dynamic_shared ([min,max]: equal for an
 *    exact size), dynamic_shared_alignment, min_compute_capability ([major,minor]).
 *  - a tensor parameter: "elem", "rank" (1..4) and "mut", in that order, then "tma" (the box,
 *    rank numbers) only when the kernel may read it through TMA (iface.h).
 *  - strings: '"' and '\\' escaped, control bytes and DEL as \u00XX (\n \t \r \b \f short
 *    forms), valid UTF-8 passed through, and every byte of an invalid UTF-8 sequence as \ufffd,
 *    so the line is always valid UTF-8 JSON.
 * The output depends only on the arguments, so equal inputs give byte-identical PTX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm.h"

static void put_json_string(oxide_sbuf *b, const char *str) {
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    oxide__sbuf_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            oxide__sbuf_put(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': oxide__sbuf_puts(b, "\\n"); break;
            case '\t': oxide__sbuf_puts(b, "\\t"); break;
            case '\r': oxide__sbuf_puts(b, "\\r"); break;
            case '\b': oxide__sbuf_puts(b, "\\b"); break;
            case '\f': oxide__sbuf_puts(b, "\\f"); break;
            default: oxide__sbuf_printf(b, "\\u%04x", c);
            }
            i++;
        } else if (c < 0x80) {
            oxide__sbuf_put(b, (const char *)s + i, 1);
            i++;
        } else {
            size_t len = oxide__utf8_len(s + i, n - i);
            if (len) {
                oxide__sbuf_put(b, (const char *)s + i, len);
                i += len;
            } else {
                oxide__sbuf_puts(b, "\\ufffd");
                i++;
            }
        }
    }
    oxide__sbuf_put(b, "\"", 1);
}

static void put_contract(oxide_sbuf *b, const oxide_launch_contract *c) {
    const char *sep = "";
    oxide__sbuf_puts(b, ",\"contract\":{");
    if (c->fields & OXIDE_CONTRACT_DOMAIN)
        oxide__sbuf_printf(b, "\"domain\":%u", c->domain), sep = ",";
    if (c->fields & OXIDE_CONTRACT_BLOCK)
        oxide__sbuf_printf(b, "%s\"block\":[%u,%u,%u]", sep, c->block[0], c->block[1], c->block[2]), sep = ",";
    if (c->fields & OXIDE_CONTRACT_SMEM)
        oxide__sbuf_printf(b, "%s\"dynamic_shared\":[%u,%u]", sep, c->smem_min, c->smem_max), sep = ",";
    if (c->fields & OXIDE_CONTRACT_SMEM_ALIGN)
        oxide__sbuf_printf(b, "%s\"dynamic_shared_alignment\":%u", sep, c->smem_align), sep = ",";
    if (c->fields & OXIDE_CONTRACT_MIN_CC)
        oxide__sbuf_printf(b, "%s\"min_compute_capability\":[%u,%u]", sep, c->min_cc[0], c->min_cc[1]);
    oxide__sbuf_puts(b, "}");
}

static void put_param(oxide_sbuf *b, const oxide_iface_param *p) {
    oxide__sbuf_puts(b, "{\"name\":");
    put_json_string(b, p->name);
    oxide__sbuf_puts(b, ",\"kind\":");
    const char *kind = oxide_param_kind_name(p->kind);
    put_json_string(b, kind ? kind : "unknown");
    const char *scalar = oxide_scalar_name(p->scalar);
    switch (p->kind) {
    case OXIDE_PARAM_SCALAR:
        oxide__sbuf_puts(b, ",\"type\":");
        put_json_string(b, scalar ? scalar : "unknown");
        break;
    case OXIDE_PARAM_SLICE:
    case OXIDE_PARAM_PTR:
        oxide__sbuf_puts(b, ",\"elem\":");
        put_json_string(b, scalar ? scalar : "unknown");
        oxide__sbuf_puts(b, p->is_mutable ? ",\"mut\":true" : ",\"mut\":false");
        break;
    case OXIDE_PARAM_BYTES: oxide__sbuf_printf(b, ",\"size\":%u,\"align\":%u", p->size, p->align); break;
    case OXIDE_PARAM_TMA_DESC: break;
    case OXIDE_PARAM_TENSOR: {
        const char *elem = oxide_scalar_name(p->elem);
        oxide__sbuf_puts(b, ",\"elem\":");
        put_json_string(b, elem ? elem : "unknown");
        oxide__sbuf_printf(b, ",\"rank\":%u,\"mut\":%s", p->rank, p->is_mutable ? "true" : "false");
        for (uint32_t d = 0; p->tma && d < p->rank; d++)
            oxide__sbuf_printf(b, "%s%u%s", d ? "," : ",\"tma\":[", p->tma_box[d], d + 1 == p->rank ? "]" : "");
        break;
    }
    }
    oxide__sbuf_puts(b, "}");
}

char *oxide__manifest_json(const oxide_options *opts, const oxide_iface_kernel *k, size_t n) {
    oxide_sbuf b = {0};
    oxide__sbuf_puts(&b, "// oxide.manifest.v1 {\"oxide\":");
    put_json_string(&b, oxide_version());
    oxide__sbuf_puts(&b, ",\"target\":");
    put_json_string(&b, opts->target);
    oxide__sbuf_puts(&b, ",\"kernels\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            oxide__sbuf_puts(&b, ",");
        oxide__sbuf_puts(&b, "{\"name\":");
        put_json_string(&b, k[i].name);
        oxide__sbuf_puts(&b, ",\"entry\":");
        put_json_string(&b, k[i].entry);
        oxide__sbuf_puts(&b, ",\"params\":[");
        for (uint32_t p = 0; p < k[i].nparams; p++) {
            if (p)
                oxide__sbuf_puts(&b, ",");
            put_param(&b, &k[i].params[p]);
        }
        uint32_t cl[3];
        for (int d = 0; d < 3; d++)
            cl[d] = k[i].cluster[d] ? k[i].cluster[d] : 1;
        oxide__sbuf_printf(&b, "],\"launch_bounds\":[%u,%u],\"cluster\":[%u,%u,%u],\"dyn_smem\":%u",
                           k[i].launch_bounds[0], k[i].launch_bounds[1], cl[0], cl[1], cl[2], k[i].dyn_smem);
        if (k[i].block[0] | k[i].block[1] | k[i].block[2])
            oxide__sbuf_printf(&b, ",\"block\":[%u,%u,%u]", k[i].block[0] ? k[i].block[0] : 1,
                               k[i].block[1] ? k[i].block[1] : 1, k[i].block[2] ? k[i].block[2] : 1);
        if (k[i].tma_entry) {
            oxide__sbuf_puts(&b, ",\"tma_entry\":");
            put_json_string(&b, k[i].tma_entry);
        }
        if (k[i].tma_only)
            oxide__sbuf_puts(&b, ",\"tma_only\":true");
        if (k[i].persistent)
            oxide__sbuf_puts(&b, ",\"persistent\":true");
        if (k[i].contract.fields)
            put_contract(&b, &k[i].contract);
        oxide__sbuf_puts(&b, "}");
    }
    oxide__sbuf_puts(&b, "]}\n");
    return oxide__sbuf_take(&b);
}
