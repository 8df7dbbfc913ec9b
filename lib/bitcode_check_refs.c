/* The numbers by which bitcode records name each other (see bitcode_check_impl.h): what LLVM's
 * reader would follow to something that does not exist, is of another kind, or never ends. */
#include <stdlib.h>
#include <string.h>

#include "bitcode_check_impl.h"

/* ======================================================================================
 * Metadata numbering
 *
 * Metadata are numbered in the order their records define them (a strings record defines its
 * count), and records name other metadata by number, earlier or later in the block. At the
 * block's end LLVM resolves each later one it was asked for; one never defined sends it through
 * its lazy-loading index, which a plain read does not have (a read past an empty vector: the
 * crash of mutated rustc units in MetadataLoader::lazyLoadOneMetadata). So every number a
 * record names must be below the count at the block's end: the module's metadata blocks count
 * together, a function's block adds its own to the module's.
 * ====================================================================================== */

enum {
    MD_NAME = 4,
    MD_KIND = 6,
    MD_LOCATION = 7,
    MD_NAMED_NODE = 10,
    MD_COMPILE_UNIT = 20,
    MD_IMPORTED_ENTITY = 31,
    MD_STRINGS = 35,
    MD_GLOBAL_DECL_ATTACHMENT = 36,
    MD_ARG_LIST = 46
};
enum { MAX_MODULE_MDS = 1 << 24 };
enum { NOT_A_REF = 0, REF = 1, REF_OR_NULL = 2 }; /* REF_OR_NULL: 0 is null, n names n - 1 */

#define B(i) (1ull << (i))
/* The operands LLVM 22's reader reads as a metadata number (getMDOrNull and kin) in every version
 * of the record it accepts; a position whose meaning depends on the record's version or size is
 * left out unless the operands before it decide it. Indexed by record code. */
static const uint64_t md_ref_operands[50] = {
    [12] = ~(B(0) | B(1) | B(2)),                               /* GENERIC_DEBUG */
    [14] = B(2),                                                /* ENUMERATOR */
    [15] = B(2),                                                /* BASIC_TYPE */
    [16] = B(1) | B(2) | B(5),                                  /* FILE */
    [17] = B(2) | B(3) | B(5) | B(6) | B(11) | B(13),           /* DERIVED_TYPE */
    [18] = B(2) | B(3) | B(5) | B(6) | B(11) | (B(22) - B(13)), /* COMPOSITE_TYPE */
    [19] = B(2),                                                /* SUBROUTINE_TYPE */
    [20] = B(2) | B(3) | B(5) | B(7) | B(9) | B(10) | B(11) | B(12) | B(13) | B(15) | B(20) | B(21), /* CU */
    [22] = B(1) | B(2),                                                                              /* LEXICAL_BLOCK */
    [23] = B(1) | B(2),                              /* LEXICAL_BLOCK_FILE */
    [24] = B(1),                                     /* NAMESPACE */
    [25] = B(1) | B(2) | B(3),                       /* TEMPLATE_TYPE */
    [26] = B(2) | B(3) | B(4) | B(5),                /* TEMPLATE_VALUE */
    [27] = B(1) | B(2) | B(3) | B(4) | B(6) | B(10), /* GLOBAL_VAR */
    [31] = B(2) | B(3) | B(5) | B(6) | B(7),         /* IMPORTED_ENTITY */
    [33] = B(3) | B(4),                              /* MACRO */
    [34] = B(3) | B(4),                              /* MACRO_FILE */
    [37] = B(1) | B(2),                              /* GLOBAL_VAR_EXPR */
    [40] = B(1) | B(2) | B(3),                       /* LABEL */
    [41] = B(2) | B(3) | B(4),                       /* STRING_TYPE */
    [44] = B(1) | B(2) | B(3) | B(4),                /* COMMON_BLOCK */
    [45] = B(1) | B(2) | B(3) | B(4),                /* GENERIC_SUBRANGE */
};

/* How operand i of the record being read names a metadata node. */
static int md_ref_kind(const bc *s, uint64_t i) {
    uint64_t code = s->rec_code, op0 = s->rec_ops[0];
    switch (code) {
    case 3: /* NODE */
    case 5: /* DISTINCT_NODE */ return REF_OR_NULL;
    case MD_NAMED_NODE:
    case MD_ARG_LIST: return REF;
    case MD_GLOBAL_DECL_ATTACHMENT: return i >= 2 && i % 2 == 0 ? REF : NOT_A_REF; /* [value, n x [kind, node]] */
    case 7: /* LOCATION: [distinct, line, column, scope, inlined-at] */
        return i == 3 ? REF : i == 4 ? REF_OR_NULL : NOT_A_REF;
    case 13: /* SUBRANGE: its version decides */
        return (op0 >> 1 == 1 && i == 1) || (op0 >> 1 == 2 && i >= 1 && i <= 4) ? REF_OR_NULL : NOT_A_REF;
    case 16: /* FILE: the checksum (4) only with a checksum kind (3) */
        if (i == 4)
            return s->rec_ops[3] ? REF_OR_NULL : NOT_A_REF;
        break;
    case 21: /* SUBPROGRAM: the layout with DISPFlags (since LLVM 8) */
        return op0 & 4 && i < 20 &&
                       (B(i) & (B(1) | B(2) | B(3) | B(4) | B(6) | B(8) | (B(16) - B(12)) | (B(20) - B(17))))
                   ? REF_OR_NULL
                   : NOT_A_REF;
    case 27: /* GLOBAL_VAR: version 2 adds the expression-free layout's 9 and annotations 12 */
        if (op0 >> 1 == 2 && (i == 9 || i == 12))
            return REF_OR_NULL;
        break;
    case 28: /* LOCAL_VAR: the layout with alignment (no tag) */
        return op0 & 2 && i < 10 && (B(i) & (B(1) | B(2) | B(3) | B(5) | B(9))) ? REF_OR_NULL : NOT_A_REF;
    default: break;
    }
    return code < 50 && i < 64 && (md_ref_operands[code] & B(i)) ? REF_OR_NULL : NOT_A_REF;
}
#undef B

/* Whether a record of this code defines a metadata number (what the reader's parseOneMetadata
 * assigns; unknown codes it ignores). */
static bool md_defines(uint64_t code) {
    return code == 1 || code == 2 || code == 3 || code == 5 || code == 7 || code == 8 || code == 9 ||
           (code >= 12 && code <= 34) || code == 37 || code == 40 || code == 41 || (code >= 44 && code <= 49);
}

void bc_md_record_begin(bc *s, uint64_t code) {
    s->rec_code = code;
    memset(s->rec_ops, 0, sizeof s->rec_ops);
    s->rec_ops_start = s->nmdops;
}

/* n module-level metadata defined by a record of this code. */
static void md_keep(bc *s, uint64_t code, uint64_t n) {
    uint32_t need = s->nmd + (uint32_t)n;
    if (n > MAX_MODULE_MDS || !bc_grow((void **)&s->md_code, &s->capmd, need, 1, MAX_MODULE_MDS) ||
        !bc_grow((void **)&s->md_first, &s->capmdfirst, need, sizeof *s->md_first, MAX_MODULE_MDS) ||
        !bc_grow((void **)&s->md_scope, &s->capmdscope, need, sizeof *s->md_scope, MAX_MODULE_MDS) ||
        !bc_grow((void **)&s->md_inlined, &s->capmdinlined, need, sizeof *s->md_inlined, MAX_MODULE_MDS)) {
        bc_fail(s, "more than %d metadata in the module", MAX_MODULE_MDS);
        return;
    }
    for (uint64_t k = 0; k < n; k++, s->nmd++) {
        s->md_code[s->nmd] = (uint8_t)(code < 256 ? code : 0);
        s->md_first[s->nmd] = s->rec_ops_start;
        const uint64_t *op = s->rec_ops;
        uint64_t scope = code == MD_LOCATION ? op[3] + 1 : code == 22 || code == 23 ? op[1] : 0;
        s->md_scope[s->nmd] = scope > UINT32_MAX ? UINT32_MAX : (uint32_t)scope;
        s->md_inlined[s->nmd] = code == MD_LOCATION && op[4] <= UINT32_MAX ? (uint32_t)op[4] : 0;
    }
}

static void md_name(bc *s, bc_frame *f, int kind, uint64_t v) {
    uint64_t named = kind == REF ? v + 1 : kind == REF_OR_NULL ? v : 0; /* the number plus one */
    if (named > f->md_named) {
        f->md_named = named;
        f->md_named_at = s->rec_at;
    }
}

void bc_md_operand(bc *s, bc_frame *f, uint64_t i, uint64_t v) {
    if (i < MD_KEPT_OPS)
        s->rec_ops[i] = v;
    md_name(s, f, md_ref_kind(s, i), v);
    if (s->rec_code == MD_NAMED_NODE && s->named_flags && f->md_module) {
        if (!bc_grow((void **)&s->flags, &s->capflags, s->nflags + 1, sizeof *s->flags, MAX_MODULE_MDS))
            bc_fail(s, "more than %d module flags", MAX_MODULE_MDS);
        else
            s->flags[s->nflags++] = v;
    }
    if (f->md_kept && (s->rec_code == 3 || s->rec_code == 5)) { /* a node: its operands, kept */
        if (!bc_grow((void **)&s->md_ops, &s->capmdops, s->nmdops + 1, sizeof *s->md_ops, MAX_MODULE_MDS))
            bc_fail(s, "more than %d metadata operands", MAX_MODULE_MDS);
        else
            s->md_ops[s->nmdops++] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
}

/* The references of the older layouts, which the record's operand count tells apart. */
static void md_sized_refs(bc *s, bc_frame *f, uint64_t n) {
    const uint64_t *op = s->rec_ops;
    static const uint8_t old_subprogram[] = {1, 2, 3, 4, 6, 10};
    switch (s->rec_code) {
    case 24: /* NAMESPACE: [distinct, scope, name] or [distinct, scope, file, name, line] */
        if (n == 3 || n == 5)
            md_name(s, f, REF_OR_NULL, op[n == 3 ? 2 : 3]);
        break;
    case 28: /* LOCAL_VAR without alignment: a tag first when it has more than 8 operands */
        if (!(op[0] & 2) && n >= 8 && n < MD_KEPT_OPS)
            for (unsigned t = n > 8, k = 1; k <= 5; k++)
                if (k != 4)
                    md_name(s, f, REF_OR_NULL, op[k + t]);
        break;
    case 21: /* SUBPROGRAM before DISPFlags */
        if (!(op[0] & 4) && n >= 18 && n < MD_KEPT_OPS) {
            unsigned b = 2 + (n >= 19);
            for (size_t k = 0; k < sizeof old_subprogram; k++)
                md_name(s, f, REF_OR_NULL, op[old_subprogram[k]]);
            for (unsigned k = 12; k <= 15; k++)
                md_name(s, f, REF_OR_NULL, op[k + b]);
            if (n >= 21)
                md_name(s, f, REF_OR_NULL, op[17 + b]);
        }
        break;
    case 41: /* STRING_TYPE: the location expression only in the 9-operand form */
        if (n == 9)
            md_name(s, f, REF_OR_NULL, op[5]);
        break;
    case 32: /* MODULE: [distinct, (file,) scope, name, macros, include path, (sysroot,) ...] */
        if (n >= 5 && n <= 9)
            for (unsigned k = 1, last = n >= 8 ? 6 : 5; k <= last; k++)
                md_name(s, f, REF_OR_NULL, op[k]);
        break;
    default: break;
    }
}

/* Whether n operands from op spell name (one character each). */
static bool spells(const uint64_t *op, uint64_t n, const char *name) {
    uint64_t len = strlen(name), k = 0;
    while (k < len && n == len && op[k] == (uint8_t)name[k])
        k++;
    return n == len && k == len;
}

/* A METADATA_KIND record, [id, name...]: the kinds whose attachments the reader or the verifier
 * reads as alias-scope lists or TBAA tags; a METADATA_NAME record: whether the named node that
 * follows holds the module flags. */
static void md_names(bc *s, uint64_t nops) {
    const uint64_t *op = s->rec_ops;
    if (s->rec_code == MD_NAME) {
        s->named_flags = nops < MD_KEPT_OPS && spells(op, nops, "llvm.module.flags");
        return;
    }
    if (nops < 1 || nops > MD_KEPT_OPS)
        return;
    if (spells(op + 1, nops - 1, "alias.scope"))
        s->kind_alias_scope = op[0];
    else if (spells(op + 1, nops - 1, "noalias"))
        s->kind_noalias = op[0];
    else if (spells(op + 1, nops - 1, "tbaa"))
        s->kind_tbaa = op[0];
}

void bc_md_record_end(bc *s, bc_frame *f, uint64_t nops) {
    md_sized_refs(s, f, nops);
    uint64_t n = s->rec_code == MD_STRINGS && nops >= 1 ? s->rec_ops[0] : md_defines(s->rec_code);
    f->md_defined += n;
    if (s->rec_code == MD_KIND || s->rec_code == MD_NAME)
        md_names(s, nops);
    if (s->rec_code == MD_NAMED_NODE)
        s->named_flags = false;
    if (!f->md_kept)
        return; /* kept: the module's metadata, and a function's until its end */
    md_keep(s, s->rec_code, n);
    if (f->md_module && s->rec_code == MD_COMPILE_UNIT && nops > 13 && s->rec_ops[13]) {
        if (!bc_grow((void **)&s->cu_imports, &s->capcu, s->ncu + 1, sizeof *s->cu_imports, MAX_MODULE_MDS))
            bc_fail(s, "more than %d compile units", MAX_MODULE_MDS);
        else
            s->cu_imports[s->ncu++] = s->rec_ops[13];
    }
}

static bool md_tuple(const bc *s, uint64_t id) { return id < s->nmd && (s->md_code[id] == 3 || s->md_code[id] == 5); }

/* A kept node's operands (each its number plus one, 0 null). */
static const uint32_t *md_node_ops(const bc *s, uint64_t id, uint32_t *n) {
    uint32_t end = id + 1 < s->nmd ? s->md_first[id + 1] : s->nmdops;
    *n = end - s->md_first[id];
    return s->md_ops + s->md_first[id];
}

/* Module::getModuleFlag, which the import and the emitter call, casts each flag's second
 * operand to a string unchecked: each must be a tuple of 3 or more operands, the second a string. */
static void md_check_flags(bc *s) {
    for (uint32_t k = 0; k < s->nflags && !s->bad; k++) {
        uint64_t flag = s->flags[k];
        uint32_t n;
        const uint32_t *op = md_tuple(s, flag) ? md_node_ops(s, flag, &n) : NULL;
        if (!op || n < 3 || !op[1] || s->md_code[op[1] - 1] != MD_STRINGS)
            bc_fail(s, "a module flag (metadata %llu) that is not [behavior, name, value] with a string name",
                    (unsigned long long)flag);
    }
    s->nflags = 0;
}

/* The reader's upgrade of a compile unit's imports (upgradeCULocals, on every read) casts them
 * unchecked: operand 13 to a tuple, its elements to imported entities. */
static void md_check_imports(bc *s) {
    for (uint32_t c = 0; c < s->ncu && !s->bad; c++) {
        uint64_t list = s->cu_imports[c] - 1;
        if (list >= s->nmd || (s->md_code[list] != 3 && s->md_code[list] != 5)) {
            bc_fail(s, "a compile unit whose imports (metadata %llu) are not a tuple", (unsigned long long)list);
            break;
        }
        uint32_t end = list + 1 < s->nmd ? s->md_first[list + 1] : s->nmdops;
        for (uint32_t k = s->md_first[list]; k < end; k++) {
            if (!s->md_ops[k]) {
                bc_fail(s, "a compile unit's imports (metadata %llu) hold a null", (unsigned long long)list);
                break;
            }
            uint64_t e = (uint64_t)s->md_ops[k] - 1;
            if (e >= s->nmd || s->md_code[e] != MD_IMPORTED_ENTITY) {
                bc_fail(s, "a compile unit's imports (metadata %llu) hold metadata %llu, not an imported entity",
                        (unsigned long long)list, (unsigned long long)e);
                break;
            }
        }
    }
    s->ncu = 0;
}

static bool md_local_scope(const bc *s, uint64_t id) {
    return id < s->nmd && (s->md_code[id] == 21 || s->md_code[id] == 22 || s->md_code[id] == 23);
}

/* The scope links a location's or lexical block's kind requires, and that they end: the reader
 * and the verifier cast a location's scope to a local scope and its inlined-at to a location,
 * and walk both chains to the subprogram (a location that is its own inlined-at kept the
 * verifier busy forever, one whose scope was a file crashed it in DILocalScope::getSubprogram).
 * From metadata first on: those of the block just ended. */
static void md_check_scopes(bc *s, uint32_t first) {
    uint32_t n = s->nmd > first ? s->nmd - first : 0;
    uint8_t *mark = calloc(n ? n : 1, 1); /* 1: on the chain being walked, 2: checked */
    if (!mark) {
        bc_fail(s, "no memory to check %u metadata", n);
        return;
    }
    /* an earlier block's chains were checked at its end: a walk stops where it enters one */
#define IN_BLOCK(c) ((c) >= first && (c) < s->nmd)
    for (uint32_t id = first; id < s->nmd && !s->bad; id++) {
        uint32_t c = id, steps = 0;
        while (IN_BLOCK(c) && !mark[c - first] && !s->bad) {
            uint8_t code = s->md_code[c];
            if (code != MD_LOCATION && code != 22 && code != 23)
                break;
            mark[c - first] = 1;
            steps++;
            uint64_t scope = (uint64_t)s->md_scope[c] - 1, inlined = s->md_inlined[c];
            if (!s->md_scope[c] || !md_local_scope(s, scope))
                bc_fail(s, "metadata %u (a %s) whose scope is not a subprogram or lexical block", c,
                        code == MD_LOCATION ? "location" : "lexical block");
            else if (inlined && (inlined - 1 >= s->nmd || s->md_code[inlined - 1] != MD_LOCATION))
                bc_fail(s, "metadata %u (a location) inlined at metadata %llu, not a location", c,
                        (unsigned long long)inlined - 1);
            c = inlined ? (uint32_t)(inlined - 1) : (uint32_t)scope; /* a location's chain, then its scope's */
        }
        if (!s->bad && IN_BLOCK(c) && mark[c - first] == 1)
            bc_fail(s, "metadata %u: a chain of %u locations and lexical blocks that comes back to itself", c, steps);
        for (uint32_t k = id; IN_BLOCK(k) && mark[k - first] == 1;) { /* the chain walked: checked */
            mark[k - first] = 2;
            k = s->md_code[k] == MD_LOCATION && s->md_inlined[k] ? s->md_inlined[k] - 1 : s->md_scope[k] - 1;
        }
    }
#undef IN_BLOCK
    free(mark);
}

/* At a METADATA block's end: every number named must have been defined. */
void bc_md_block_end(bc *s, bc_frame *f) {
    bool module_level = f->md_module;
    if (module_level)
        s->module_mds += f->md_defined;
    else if (s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK)
        s->frames[s->depth - 2].md_defined += f->md_defined; /* what the function's attachments may name */
    uint64_t defined = module_level ? s->module_mds : s->module_mds + f->md_defined;
    if (f->md_named > defined)
        bc_fail(s, "a metadata record at byte %llu names metadata %llu, but only %llu are defined",
                (unsigned long long)(s->base + f->md_named_at), (unsigned long long)(f->md_named - 1),
                (unsigned long long)defined);
    else if (module_level)
        md_check_imports(s), md_check_flags(s);
    if (!s->bad)
        md_check_scopes(s, f->md_start);
}

/* A function's METADATA_ATTACHMENT records, [n x [kind, node]] for the function and [instruction,
 * n x [kind, node]] for an instruction, name nodes by number too, and the reader resolves them
 * the same way (parseMetadataAttachment): each must be the module's or the function's. */
/* An !alias.scope or !noalias attachment: the verifier walks the list, each scope and its
 * domain, testing operands' kinds without testing them for null (visitAliasScopeListMetadata
 * crashed on a list holding a null). The list and each scope must be tuples; the operands the
 * verifier reads (a scope's 2 or 3, a domain's 1 or 2) must not be null. */
static void md_check_scope_list(bc *s, uint64_t list) {
    if (list >= s->nmd)
        return; /* past what is defined: refused as such */
    if (!md_tuple(s, list)) {
        bc_fail(s, "an alias-scope attachment names metadata %llu, not a tuple", (unsigned long long)list);
        return;
    }
    uint32_t n, ns, nd;
    const uint32_t *op = md_node_ops(s, list, &n);
    for (uint32_t k = 0; k < n && !s->bad; k++) {
        uint64_t scope = (uint64_t)op[k] - 1;
        if (!op[k] || !md_tuple(s, scope)) {
            bc_fail(s, "an alias-scope list (metadata %llu) holding %s", (unsigned long long)list,
                    op[k] ? "a node that is not a tuple" : "a null");
            return;
        }
        const uint32_t *sop = md_node_ops(s, scope, &ns);
        if (ns < 2 || ns > 3)
            continue; /* the verifier refuses it before reading */
        bool null_op = !sop[0] || !sop[1] || (ns == 3 && !sop[2]);
        uint64_t domain = (uint64_t)sop[1] - 1;
        if (!null_op && domain < s->nmd && s->md_code[domain] != 2 && s->md_code[domain] != MD_STRINGS) {
            if (!md_tuple(s, domain)) {
                bc_fail(s, "an alias scope (metadata %llu) whose domain is not a tuple", (unsigned long long)scope);
                return;
            }
            const uint32_t *dop = md_node_ops(s, domain, &nd);
            null_op = nd >= 1 && nd <= 2 && !dop[0];
        }
        if (null_op)
            bc_fail(s, "an alias scope (metadata %llu) or its domain with a null operand", (unsigned long long)scope);
    }
}

/* A !tbaa attachment: the reader's upgrade of old tags (UpgradeTBAANode) reads its first operand's
 * kind without testing it for null, or that there is one. */
static void md_check_tbaa(bc *s, uint64_t tag) {
    uint32_t n;
    if (tag < s->nmd && (!md_tuple(s, tag) || !md_node_ops(s, tag, &n) || n == 0 || !md_node_ops(s, tag, &n)[0]))
        bc_fail(s, "a TBAA attachment (metadata %llu) that is not a tuple with a first operand",
                (unsigned long long)tag);
}

void bc_att_operand(bc *s, uint64_t i, uint64_t v) {
    if (i == 0)
        s->att_first = v, s->nrec_all = 0;
    if (!bc_grow((void **)&s->rec_all, &s->caprec_all, s->nrec_all + 1, sizeof *s->rec_all, MAX_MODULE_MDS))
        bc_fail(s, "an attachment of more than %d operands", MAX_MODULE_MDS);
    else
        s->rec_all[s->nrec_all++] = v;
    if (i % 2 && v > s->att_odd)
        s->att_odd = v;
    else if (i && i % 2 == 0 && v > s->att_even)
        s->att_even = v;
}

void bc_att_record_end(bc *s, uint64_t nops) {
    const bc_frame *fn =
        s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK ? &s->frames[s->depth - 2] : NULL;
    uint64_t node = nops % 2 ? s->att_even : s->att_odd, defined = s->module_mds + (fn ? fn->md_defined : 0);
    bool any = nops % 2 ? nops >= 3 : nops >= 2;
    /* the reader indexes the function's instructions by an instruction attachment's first operand
     * unchecked */
    if (nops % 2 && s->att_first >= (fn ? fn->insts : 0))
        bc_fail(s, "a metadata attachment for instruction %llu of a function of %llu", (unsigned long long)s->att_first,
                (unsigned long long)(fn ? fn->insts : 0));
    else if (any && node >= defined)
        bc_fail(s, "a metadata attachment names metadata %llu, but only %llu are defined", (unsigned long long)node,
                (unsigned long long)defined);
    for (uint64_t k = nops % 2; k + 1 < nops && k + 1 < s->nrec_all && !s->bad; k += 2)
        if (s->rec_all[k] == s->kind_alias_scope || s->rec_all[k] == s->kind_noalias)
            md_check_scope_list(s, s->rec_all[k + 1]);
        else if (s->rec_all[k] == s->kind_tbaa)
            md_check_tbaa(s, s->rec_all[k + 1]);
    s->att_first = s->att_odd = s->att_even = 0;
}

/* Whether a FUNCTION block record makes an instruction: all but the block count, debug
 * locations, operand bundles, block-address users and debug records (others the reader refuses). */
bool bc_is_instruction(uint64_t code) {
    return code != DECLAREBLOCKS && code != 33 && code != FUNC_DEBUG_LOC && code != 55 && code != 60 &&
           !(code >= 61 && code <= 66);
}

/* An instruction's debug location, [line, column, scope, inlined-at, ...] (0: none, n: n - 1):
 * a number never defined stays a forward reference that the attachments' resolution then reads
 * through the missing index. */
void bc_debug_loc(bc *s, const bc_frame *fn, uint64_t nops, const uint64_t *op) {
    uint64_t defined = s->module_mds + fn->md_defined;
    for (unsigned k = 2; k < 4 && k < nops && !s->bad; k++)
        if (op[k] > defined)
            bc_fail(s, "a debug location names metadata %llu, but only %llu are defined", (unsigned long long)op[k] - 1,
                    (unsigned long long)defined);
    /* the reader builds a location of these: a local scope (it dereferences a missing one), inlined
     * at a location */
    if (!s->bad && nops >= 4 && !op[2])
        bc_fail(s, "a debug location with no scope");
    else if (!s->bad && nops >= 4 && !md_local_scope(s, op[2] - 1))
        bc_fail(s, "a debug location whose scope (metadata %llu) is not a subprogram or lexical block",
                (unsigned long long)op[2] - 1);
    else if (!s->bad && nops >= 4 && op[3] && (op[3] - 1 >= s->nmd || s->md_code[op[3] - 1] != MD_LOCATION))
        bc_fail(s, "a debug location inlined at metadata %llu, not a location", (unsigned long long)op[3] - 1);
}

/* ======================================================================================
 * Module constants
 *
 * LLVM 22's reader keeps a constant expression or aggregate as its operands' numbers and builds
 * it when a global's initializer needs it, with a worklist that pushes each operand not yet built.
 * Constants that are operands of each other (A's operand is A, or A -> B -> A) keep it pushing
 * until memory runs out ("LLVM ERROR: out of memory", one mutated release unit; unbounded without
 * a limit). rustc never writes such a cycle; the check refuses one in the module's constants.
 * (A function's constants are numbered after its arguments, which only the types tell; they are
 * not checked here: a plain import does not read function bodies.)
 * ====================================================================================== */

enum { MAX_CONSTANT_OPS = 1 << 24 };

bool bc_cst_block(const bc *s, const bc_frame *f) {
    return f->block_id == CONSTANTS_BLOCK && s->depth >= 2 && s->frames[s->depth - 2].block_id == MODULE_BLOCK;
}

void bc_cst_record_begin(bc *s, uint64_t code) {
    s->rec_code = code;
    s->nrec_all = 0;
}

void bc_cst_operand(bc *s, uint64_t v) {
    if (!bc_grow((void **)&s->rec_all, &s->caprec_all, s->nrec_all + 1, sizeof *s->rec_all, MAX_CONSTANT_OPS)) {
        bc_fail(s, "a constant of more than %d operands", MAX_CONSTANT_OPS);
        return;
    }
    s->rec_all[s->nrec_all++] = v;
}

static void cst_edge(bc *s, uint64_t value) {
    if (value < s->cst_base || value - s->cst_base >= UINT32_MAX)
        return; /* a global, or no constant of this block */
    if (!bc_grow((void **)&s->cst_ops, &s->capcstops, s->ncstops + 1, sizeof *s->cst_ops, MAX_CONSTANT_OPS)) {
        bc_fail(s, "more than %d constant operands", MAX_CONSTANT_OPS);
        return;
    }
    s->cst_ops[s->ncstops++] = (uint32_t)(value - s->cst_base);
}

/* The operands of a constants record that are value numbers, as LLVM 22's parseConstants reads
 * them: every operand of an aggregate, the (type, value) pairs' values of a GEP, the fixed
 * positions of the other expressions. */
void bc_cst_record_end(bc *s) {
    uint64_t code = s->rec_code, n = s->nrec_all;
    const uint64_t *op = s->rec_all;
    if (code == 1) /* SETTYPE defines no value */
        return;
    s->module_values++;
    if (!bc_grow((void **)&s->cst_first, &s->capcst, s->ncst + 1, sizeof *s->cst_first, MAX_CONSTANT_OPS)) {
        bc_fail(s, "more than %d constants", MAX_CONSTANT_OPS);
        return;
    }
    s->cst_first[s->ncst++] = s->ncstops;
    uint64_t from = 0, step = 1, at[4];
    size_t nat = 0;
    switch (code) {
    case 7: from = 0; break;                      /* AGGREGATE [n x value] */
    case 12:                                      /* GEP_OLD */
    case 20: from = (n % 2) + 1, step = 2; break; /* INBOUNDS_GEP [(type,) n x [type, value]] */
    case 32: from = 3, step = 2; break;           /* GEP [type, flags, n x [type, value]] */
    case 10:
        at[nat++] = 1, at[nat++] = 2;
        from = n;
        break;                                                           /* BINOP [opcode, lhs, rhs, flags] */
    case 11: at[nat++] = 2, from = n; break;                             /* CAST [opcode, type, value] */
    case 25: at[nat++] = 1, from = n; break;                             /* UNOP [opcode, value] */
    case 13:                                                             /* SELECT */
    case 16: from = 0; break;                                            /* SHUFFLEVEC: three values */
    case 14: at[nat++] = 1, at[nat++] = n == 4 ? 3 : 2, from = n; break; /* EXTRACTELT */
    case 15: at[nat++] = 0, at[nat++] = 1, at[nat++] = n == 4 ? 3 : 2, from = n; break; /* INSERTELT */
    case 17: at[nat++] = 1, at[nat++] = 2, from = n; break; /* CMP [type, lhs, rhs, predicate] */
    case 19: from = 1; break;                               /* SHUFVEC_EX [type, 3 x value] */
    case 21:                                                /* BLOCKADDRESS [fnty, fn, bb] */
    case 27:                                                /* DSO_LOCAL_EQUIVALENT [type, gv] */
    case 29: at[nat++] = 1, from = n; break;                /* NO_CFI [type, fn] */
    case 33:                                                /* PTRAUTH [ptr, key, disc, addrdisc] */
    case 34: from = 0; break;                               /* PTRAUTH2 [..., deactivation symbol] */
    default: from = n; break;                               /* leaves: no operand is a value */
    }
    for (size_t k = 0; k < nat; k++)
        if (at[k] < n)
            cst_edge(s, op[at[k]]);
    if (code == 13 || code == 16)
        n = n < 3 ? n : 3;
    for (uint64_t i = from; i < n && !s->bad; i += step)
        cst_edge(s, op[i]);
}

/* At the block's end: a depth-first walk over the constants, refusing one found on its own path. */
void bc_cst_block_end(bc *s) {
    uint32_t n = s->ncst;
    uint8_t *color = calloc(n ? n : 1, 1); /* 0 unseen, 1 on the path, 2 done */
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack), *next = malloc((n ? n : 1) * sizeof *next);
    if (!color || !stack || !next)
        bc_fail(s, "no memory to check %u constants", n);
    for (uint32_t root = 0; root < n && !s->bad; root++) {
        if (color[root])
            continue;
        uint32_t depth = 0;
        stack[depth++] = root, next[root] = s->cst_first[root], color[root] = 1;
        while (depth && !s->bad) {
            uint32_t c = stack[depth - 1], end = c + 1 < n ? s->cst_first[c + 1] : s->ncstops;
            if (next[c] == end) {
                color[c] = 2;
                depth--;
                continue;
            }
            uint32_t t = s->cst_ops[next[c]++];
            if (t >= n || color[t] == 2)
                continue;
            if (color[t] == 1)
                bc_fail(s,
                        "constant %llu is its own operand, through %u others (LLVM's reader would build it without "
                        "end)",
                        (unsigned long long)(s->cst_base + t), depth - 1);
            else
                stack[depth++] = t, next[t] = s->cst_first[t], color[t] = 1;
        }
    }
    free(color);
    free(stack);
    free(next);
    s->ncst = s->ncstops = 0;
}
