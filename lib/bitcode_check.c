/* The structural check of LLVM bitcode (see bitcode_check.h). The bitstream format: abbreviation
 * ids of the enclosing block's width; ENTER_SUBBLOCK [id vbr8, width vbr4, align32, length in
 * words]; END_BLOCK [align32]; DEFINE_ABBREV [count vbr5, operands]; UNABBREV_RECORD [code vbr6,
 * count vbr6, operands vbr6]; ids from 4 name the block's abbreviations, those the BLOCKINFO
 * block gave its id first. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitcode_check.h"

enum { END_BLOCK = 0, ENTER_SUBBLOCK = 1, DEFINE_ABBREV = 2, UNABBREV_RECORD = 3, FIRST_ABBREV = 4 };
enum { OP_LIT = 0, OP_FIXED = 1, OP_VBR = 2, OP_ARRAY = 3, OP_CHAR6 = 4, OP_BLOB = 5 };
enum {
    BLOCKINFO_BLOCK = 0,
    MODULE_BLOCK = 8,
    PARAMATTR_GROUP_BLOCK = 10,
    CONSTANTS_BLOCK = 11,
    METADATA_ATTACHMENT_BLOCK = 16,
    FUNCTION_BLOCK = 12,
    METADATA_BLOCK = 15,
    TYPE_BLOCK = 17
};
enum { SETBID = 1, NUMENTRY = 1, DECLAREBLOCKS = 1, ATTR_GROUP_ENTRY = 3, METADATA_STRINGS = 35, FUNC_DEBUG_LOC = 35 };
/* An attribute group's index: the return value (0), a parameter (1 + its number) or the
 * function (~0u); LLVM sizes an array by it. */
enum { MAX_ATTR_INDEX = 1 << 16 };

/* Real bitcode nests 4 deep and defines a few dozen abbreviations of under 20 operands; these
 * limits only bound what a crafted stream can make the check (and LLVM) hold. */
enum { MD_KEPT_OPS = 24 }; /* a metadata record's operands kept for the layouts its size decides */
enum { MAX_DEPTH = 32, MAX_WIDTH = 32, MAX_ABBREV_OPS = 256, MAX_POOL_OPS = 1 << 20, MAX_LIVE_ABBREVS = 1 << 16 };

typedef struct bc_op {
    uint8_t kind, width;
    uint64_t lit;
} bc_op;

/* Abbreviations live in two pools: those the BLOCKINFO block defines last the whole stream;
 * those a block defines go when it ends. A reference is (pool << 31 | index of the first op). */
typedef struct bc_pool {
    bc_op *ops;
    uint32_t n, cap;
} bc_pool;

typedef struct bc_info {
    uint32_t block_id, ref;
} bc_info;

typedef struct bc_frame {
    uint64_t end; /* bit position where the block's length says it ends */
    unsigned width;
    uint32_t block_id;
    uint32_t cur_base, local_mark;
    uint64_t records, declared; /* records seen; entries a count record asked for */
    /* a METADATA block: the metadata it defines, the highest number its records name (plus one,
     * 0: none) and the byte of the record that names it */
    uint64_t md_defined, md_named, md_named_at;
    bool md_module;             /* a module-level METADATA block */
    uint32_t md_start;          /* a METADATA block: the number of its first metadata kept */
    uint32_t md_mark, ops_mark; /* a FUNCTION block: the kept metadata and node operands before it */
    uint64_t insts;             /* a FUNCTION block: its instructions so far */
} bc_frame;

typedef struct bc {
    const uint8_t *p;
    uint64_t nbits, pos, limit;
    bool bad;
    char *why;
    size_t cap;
    size_t base; /* byte offset of p in the caller's buffer (a wrapper's header) */
    bc_pool pool[2];
    uint32_t *cur; /* the abbreviations of the open blocks, innermost last */
    uint32_t ncur, capcur;
    bc_info *info;
    uint32_t ninfo, capinfo;
    bc_frame frames[MAX_DEPTH];
    int depth;
    bool seen_blockinfo;
    int64_t setbid;
    uint64_t module_mds; /* metadata the module-level METADATA blocks defined so far */
    /* the metadata record being read: its code, first operands and first byte */
    uint64_t rec_code, rec_ops[MD_KEPT_OPS], rec_at;
    /* an attachment record's first operand and largest operands at odd, even positions */
    uint64_t att_first, att_odd, att_even;
    /* the module's values so far (globals, functions, aliases, its constants), and the constants
     * of the module-level CONSTANTS block being read: for each, where its operands start in
     * cst_ops (numbers relative to the block's first constant) */
    uint64_t module_values, cst_base;
    uint32_t *cst_first, ncst, capcst;
    uint32_t *cst_ops, ncstops, capcstops;
    /* the module-level metadata: each one's record code and where its operands (a node's) start
     * in md_ops; the imported entities (operand 13) of each compile unit */
    uint8_t *md_code;
    uint32_t *md_first, nmd, capmd, capmdfirst;
    /* a location's scope and inlined-at, a lexical block's scope (each its number plus one) */
    uint32_t *md_scope, *md_inlined, capmdscope, capmdinlined;
    uint32_t *md_ops, nmdops, capmdops, rec_ops_start;
    uint64_t *cu_imports;
    uint32_t ncu, capcu;
    uint64_t *rec_all; /* the operands of the constants record being read */
    uint32_t nrec_all, caprec_all;
} bc;

static bool fail(bc *s, const char *fmt, ...) {
    if (s->bad)
        return false;
    s->bad = true;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->why, s->cap, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < s->cap)
        snprintf(s->why + n, s->cap - (size_t)n, ", at byte %llu", (unsigned long long)(s->base + s->pos / 8));
    return false;
}

static uint64_t bits(bc *s, unsigned n) {
    if (s->bad)
        return 0;
    if (n > s->limit - s->pos) {
        fail(s, "the bitstream ends inside a %u-bit field (truncated)", n);
        return 0;
    }
    uint64_t v = 0;
    for (unsigned got = 0; got < n;) {
        unsigned at = (unsigned)(s->pos & 7), take = 8 - at;
        if (take > n - got)
            take = n - got;
        v |= (uint64_t)((s->p[s->pos >> 3] >> at) & ((1u << take) - 1)) << got;
        got += take;
        s->pos += take;
    }
    return v;
}

/* A variable-width field of w-bit chunks whose value must fit in max_bits (LLVM reads counts and
 * ids as 32-bit, record operands as 64-bit). */
static uint64_t vbr(bc *s, unsigned w, unsigned max_bits) {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += w - 1) {
        if (shift >= max_bits) {
            fail(s, "a variable-width field runs past %u bits", max_bits);
            return 0;
        }
        uint64_t chunk = bits(s, w);
        if (s->bad)
            return 0;
        v |= (chunk & ((1ull << (w - 1)) - 1)) << shift;
        if (!(chunk >> (w - 1)))
            return v;
    }
}

static void align32(bc *s) {
    uint64_t to = (s->pos + 31) & ~(uint64_t)31;
    if (to > s->limit)
        fail(s, "the bitstream ends inside block padding (truncated)");
    else
        s->pos = to;
}

static bool grow(void **items, uint32_t *cap, uint32_t need, size_t size, uint32_t most) {
    if (need <= *cap)
        return true;
    if (need > most)
        return false;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p)
        return false;
    *items = p;
    *cap = ncap;
    return true;
}

static const bc_op *abbrev_ops(const bc *s, uint32_t ref, uint32_t *n) {
    const bc_pool *pl = &s->pool[ref >> 31];
    const bc_op *first = &pl->ops[ref & 0x7fffffff];
    *n = (uint32_t)first->lit; /* the first slot holds the operand count */
    return first + 1;
}

static bool push_cur(bc *s, uint32_t ref) {
    if (!grow((void **)&s->cur, &s->capcur, s->ncur + 1, sizeof *s->cur, MAX_LIVE_ABBREVS))
        return fail(s, "more than %d abbreviations in scope", MAX_LIVE_ABBREVS);
    s->cur[s->ncur++] = ref;
    return true;
}

/* DEFINE_ABBREV: the operands go to the pool; the rules are those LLVM's reader assumes. */
static void define_abbrev(bc *s, bool in_blockinfo) {
    uint64_t n = vbr(s, 5, 32);
    if (s->bad)
        return;
    if (n == 0 || n > MAX_ABBREV_OPS) {
        fail(s, "an abbreviation of %llu operands", (unsigned long long)n);
        return;
    }
    bc_pool *pl = &s->pool[in_blockinfo];
    uint32_t at = pl->n;
    if (!grow((void **)&pl->ops, &pl->cap, at + (uint32_t)n + 1, sizeof *pl->ops, MAX_POOL_OPS)) {
        fail(s, "more than %d abbreviation operands", MAX_POOL_OPS);
        return;
    }
    bc_op *ops = &pl->ops[at + 1];
    for (uint64_t i = 0; i < n && !s->bad; i++) {
        bc_op *o = &ops[i];
        o->width = 0;
        o->lit = 0;
        if (bits(s, 1)) {
            o->kind = OP_LIT;
            o->lit = vbr(s, 8, 64);
            continue;
        }
        o->kind = (uint8_t)bits(s, 3);
        if (o->kind == OP_FIXED || o->kind == OP_VBR) {
            uint64_t w = vbr(s, 5, 32);
            if (w > MAX_WIDTH || (o->kind == OP_VBR && w == 1))
                fail(s, "an abbreviation field of width %llu", (unsigned long long)w);
            else if (w == 0)
                o->kind = OP_LIT; /* as LLVM reads it: a zero-width field is the literal 0 */
            o->width = (uint8_t)w;
        } else if (o->kind == OP_ARRAY) {
            if (i != n - 2)
                fail(s, "an array that is not the abbreviation's last but one operand");
        } else if (o->kind == OP_BLOB) {
            if (i != n - 1)
                fail(s, "a blob that is not the abbreviation's last operand");
        } else if (o->kind != OP_CHAR6) {
            fail(s, "an abbreviation operand of unknown encoding %u", o->kind);
        }
    }
    if (s->bad)
        return;
    if (ops[0].kind == OP_ARRAY || ops[0].kind == OP_BLOB) {
        fail(s, "an abbreviation that starts with an array or a blob");
        return;
    }
    if (n >= 2 && ops[n - 2].kind == OP_ARRAY &&
        !(ops[n - 1].kind == OP_FIXED || ops[n - 1].kind == OP_VBR || ops[n - 1].kind == OP_CHAR6)) {
        fail(s, "an array whose elements are not a fixed, variable or char6 field");
        return;
    }
    pl->ops[at] = (bc_op){.kind = OP_LIT, .lit = n};
    pl->n = at + (uint32_t)n + 1;
    uint32_t ref = (uint32_t)in_blockinfo << 31 | at;
    if (!in_blockinfo) {
        push_cur(s, ref);
        return;
    }
    if (s->setbid < 0) {
        fail(s, "an abbreviation in BLOCKINFO before its SETBID");
        return;
    }
    if (!grow((void **)&s->info, &s->capinfo, s->ninfo + 1, sizeof *s->info, MAX_LIVE_ABBREVS)) {
        fail(s, "more than %d BLOCKINFO abbreviations", MAX_LIVE_ABBREVS);
        return;
    }
    s->info[s->ninfo++] = (bc_info){(uint32_t)s->setbid, ref};
}

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

static void md_record_begin(bc *s, uint64_t code) {
    s->rec_code = code;
    memset(s->rec_ops, 0, sizeof s->rec_ops);
    s->rec_ops_start = s->nmdops;
}

/* n module-level metadata defined by a record of this code. */
static void md_keep(bc *s, uint64_t code, uint64_t n) {
    uint32_t need = s->nmd + (uint32_t)n;
    if (n > MAX_MODULE_MDS || !grow((void **)&s->md_code, &s->capmd, need, 1, MAX_MODULE_MDS) ||
        !grow((void **)&s->md_first, &s->capmdfirst, need, sizeof *s->md_first, MAX_MODULE_MDS) ||
        !grow((void **)&s->md_scope, &s->capmdscope, need, sizeof *s->md_scope, MAX_MODULE_MDS) ||
        !grow((void **)&s->md_inlined, &s->capmdinlined, need, sizeof *s->md_inlined, MAX_MODULE_MDS)) {
        fail(s, "more than %d metadata in the module", MAX_MODULE_MDS);
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

static void md_operand(bc *s, bc_frame *f, uint64_t i, uint64_t v) {
    if (i < MD_KEPT_OPS)
        s->rec_ops[i] = v;
    md_name(s, f, md_ref_kind(s, i), v);
    if (f->md_module && (s->rec_code == 3 || s->rec_code == 5)) { /* a node: its operands, kept */
        if (!grow((void **)&s->md_ops, &s->capmdops, s->nmdops + 1, sizeof *s->md_ops, MAX_MODULE_MDS))
            fail(s, "more than %d metadata operands", MAX_MODULE_MDS);
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

static void md_record_end(bc *s, bc_frame *f, uint64_t nops) {
    md_sized_refs(s, f, nops);
    uint64_t n = s->rec_code == MD_STRINGS && nops >= 1 ? s->rec_ops[0] : md_defines(s->rec_code);
    f->md_defined += n;
    if (!f->md_module && !(s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK))
        return; /* kept: the module's metadata, and a function's until its end */
    md_keep(s, s->rec_code, n);
    if (f->md_module && s->rec_code == MD_COMPILE_UNIT && nops > 13 && s->rec_ops[13]) {
        if (!grow((void **)&s->cu_imports, &s->capcu, s->ncu + 1, sizeof *s->cu_imports, MAX_MODULE_MDS))
            fail(s, "more than %d compile units", MAX_MODULE_MDS);
        else
            s->cu_imports[s->ncu++] = s->rec_ops[13];
    }
}

/* The reader's upgrade of a compile unit's imports (upgradeCULocals, on every read) casts them
 * unchecked: operand 13 to a tuple, its elements to imported entities. */
static void md_check_imports(bc *s) {
    for (uint32_t c = 0; c < s->ncu && !s->bad; c++) {
        uint64_t list = s->cu_imports[c] - 1;
        if (list >= s->nmd || (s->md_code[list] != 3 && s->md_code[list] != 5)) {
            fail(s, "a compile unit whose imports (metadata %llu) are not a tuple", (unsigned long long)list);
            break;
        }
        uint32_t end = list + 1 < s->nmd ? s->md_first[list + 1] : s->nmdops;
        for (uint32_t k = s->md_first[list]; k < end; k++) {
            if (!s->md_ops[k]) {
                fail(s, "a compile unit's imports (metadata %llu) hold a null", (unsigned long long)list);
                break;
            }
            uint64_t e = (uint64_t)s->md_ops[k] - 1;
            if (e >= s->nmd || s->md_code[e] != MD_IMPORTED_ENTITY) {
                fail(s, "a compile unit's imports (metadata %llu) hold metadata %llu, not an imported entity",
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
        fail(s, "no memory to check %u metadata", n);
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
                fail(s, "metadata %u (a %s) whose scope is not a subprogram or lexical block", c,
                     code == MD_LOCATION ? "location" : "lexical block");
            else if (inlined && (inlined - 1 >= s->nmd || s->md_code[inlined - 1] != MD_LOCATION))
                fail(s, "metadata %u (a location) inlined at metadata %llu, not a location", c,
                     (unsigned long long)inlined - 1);
            c = inlined ? (uint32_t)(inlined - 1) : (uint32_t)scope; /* a location's chain, then its scope's */
        }
        if (!s->bad && IN_BLOCK(c) && mark[c - first] == 1)
            fail(s, "metadata %u: a chain of %u locations and lexical blocks that comes back to itself", c, steps);
        for (uint32_t k = id; IN_BLOCK(k) && mark[k - first] == 1;) { /* the chain walked: checked */
            mark[k - first] = 2;
            k = s->md_code[k] == MD_LOCATION && s->md_inlined[k] ? s->md_inlined[k] - 1 : s->md_scope[k] - 1;
        }
    }
#undef IN_BLOCK
    free(mark);
}

/* At a METADATA block's end: every number named must have been defined. */
static void md_block_end(bc *s, bc_frame *f) {
    bool module_level = f->md_module;
    if (module_level)
        s->module_mds += f->md_defined;
    else if (s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK)
        s->frames[s->depth - 2].md_defined += f->md_defined; /* what the function's attachments may name */
    uint64_t defined = module_level ? s->module_mds : s->module_mds + f->md_defined;
    if (f->md_named > defined)
        fail(s, "a metadata record at byte %llu names metadata %llu, but only %llu are defined",
             (unsigned long long)(s->base + f->md_named_at), (unsigned long long)(f->md_named - 1),
             (unsigned long long)defined);
    else if (module_level)
        md_check_imports(s);
    if (!s->bad)
        md_check_scopes(s, f->md_start);
}

/* A function's METADATA_ATTACHMENT records, [n x [kind, node]] for the function and [instruction,
 * n x [kind, node]] for an instruction, name nodes by number too, and the reader resolves them
 * the same way (parseMetadataAttachment): each must be the module's or the function's. */
static void att_operand(bc *s, uint64_t i, uint64_t v) {
    if (i == 0)
        s->att_first = v;
    if (i % 2 && v > s->att_odd)
        s->att_odd = v;
    else if (i && i % 2 == 0 && v > s->att_even)
        s->att_even = v;
}

static void att_record_end(bc *s, uint64_t nops) {
    const bc_frame *fn =
        s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK ? &s->frames[s->depth - 2] : NULL;
    uint64_t node = nops % 2 ? s->att_even : s->att_odd, defined = s->module_mds + (fn ? fn->md_defined : 0);
    bool any = nops % 2 ? nops >= 3 : nops >= 2;
    /* the reader indexes the function's instructions by an instruction attachment's first operand
     * unchecked */
    if (nops % 2 && s->att_first >= (fn ? fn->insts : 0))
        fail(s, "a metadata attachment for instruction %llu of a function of %llu", (unsigned long long)s->att_first,
             (unsigned long long)(fn ? fn->insts : 0));
    else if (any && node >= defined)
        fail(s, "a metadata attachment names metadata %llu, but only %llu are defined", (unsigned long long)node,
             (unsigned long long)defined);
    s->att_first = s->att_odd = s->att_even = 0;
}

/* Whether a FUNCTION block record makes an instruction: all but the block count, debug
 * locations, operand bundles, block-address users and debug records (others the reader refuses). */
static bool is_instruction(uint64_t code) {
    return code != DECLAREBLOCKS && code != 33 && code != FUNC_DEBUG_LOC && code != 55 && code != 60 &&
           !(code >= 61 && code <= 66);
}

/* An instruction's debug location, [line, column, scope, inlined-at, ...] (0: none, n: n - 1):
 * a number never defined stays a forward reference that the attachments' resolution then reads
 * through the missing index. */
static void debug_loc(bc *s, const bc_frame *fn, uint64_t nops, const uint64_t *op) {
    uint64_t defined = s->module_mds + fn->md_defined;
    for (unsigned k = 2; k < 4 && k < nops && !s->bad; k++)
        if (op[k] > defined)
            fail(s, "a debug location names metadata %llu, but only %llu are defined", (unsigned long long)op[k] - 1,
                 (unsigned long long)defined);
    /* the reader builds a location of these: a local scope, inlined at a location */
    if (!s->bad && nops >= 4 && (!op[2] || !md_local_scope(s, op[2] - 1)))
        fail(s, "a debug location whose scope (metadata %lld) is not a subprogram or lexical block",
             (long long)op[2] - 1);
    else if (!s->bad && nops >= 4 && op[3] && (op[3] - 1 >= s->nmd || s->md_code[op[3] - 1] != MD_LOCATION))
        fail(s, "a debug location inlined at metadata %llu, not a location", (unsigned long long)op[3] - 1);
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

static bool cst_block(const bc *s, const bc_frame *f) {
    return f->block_id == CONSTANTS_BLOCK && s->depth >= 2 && s->frames[s->depth - 2].block_id == MODULE_BLOCK;
}

static void cst_record_begin(bc *s, uint64_t code) {
    s->rec_code = code;
    s->nrec_all = 0;
}

static void cst_operand(bc *s, uint64_t v) {
    if (!grow((void **)&s->rec_all, &s->caprec_all, s->nrec_all + 1, sizeof *s->rec_all, MAX_CONSTANT_OPS)) {
        fail(s, "a constant of more than %d operands", MAX_CONSTANT_OPS);
        return;
    }
    s->rec_all[s->nrec_all++] = v;
}

static void cst_edge(bc *s, uint64_t value) {
    if (value < s->cst_base || value - s->cst_base >= UINT32_MAX)
        return; /* a global, or no constant of this block */
    if (!grow((void **)&s->cst_ops, &s->capcstops, s->ncstops + 1, sizeof *s->cst_ops, MAX_CONSTANT_OPS)) {
        fail(s, "more than %d constant operands", MAX_CONSTANT_OPS);
        return;
    }
    s->cst_ops[s->ncstops++] = (uint32_t)(value - s->cst_base);
}

/* The operands of a constants record that are value numbers, as LLVM 22's parseConstants reads
 * them: every operand of an aggregate, the (type, value) pairs' values of a GEP, the fixed
 * positions of the other expressions. */
static void cst_record_end(bc *s) {
    uint64_t code = s->rec_code, n = s->nrec_all;
    const uint64_t *op = s->rec_all;
    if (code == 1) /* SETTYPE defines no value */
        return;
    s->module_values++;
    if (!grow((void **)&s->cst_first, &s->capcst, s->ncst + 1, sizeof *s->cst_first, MAX_CONSTANT_OPS)) {
        fail(s, "more than %d constants", MAX_CONSTANT_OPS);
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
static void cst_block_end(bc *s) {
    uint32_t n = s->ncst;
    uint8_t *color = calloc(n ? n : 1, 1); /* 0 unseen, 1 on the path, 2 done */
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack), *next = malloc((n ? n : 1) * sizeof *next);
    if (!color || !stack || !next)
        fail(s, "no memory to check %u constants", n);
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
                fail(s,
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

/* What LLVM sizes from a record's values must be backed by records that follow. */
static void check_record(bc *s, bc_frame *f, uint64_t code, uint64_t nvals, const uint64_t *v, int64_t blob) {
    f->records++;
    if (f->block_id == MODULE_BLOCK && (code == 7 || code == 8 || code == 9 || code == 14 || code == 18))
        s->module_values++; /* GLOBALVAR, FUNCTION, ALIAS_OLD, ALIAS, IFUNC */
    if (f->block_id == BLOCKINFO_BLOCK && code == SETBID && nvals >= 1) {
        if (v[0] > UINT32_MAX)
            fail(s, "SETBID %llu", (unsigned long long)v[0]);
        s->setbid = (int64_t)v[0];
    } else if ((f->block_id == TYPE_BLOCK && code == NUMENTRY) ||
               (f->block_id == FUNCTION_BLOCK && code == DECLAREBLOCKS)) {
        if (nvals >= 1 && v[0] > f->declared)
            f->declared = v[0];
    } else if (f->block_id == FUNCTION_BLOCK && code == FUNC_DEBUG_LOC) {
        debug_loc(s, f, nvals, v);
    } else if (f->block_id == FUNCTION_BLOCK && is_instruction(code)) {
        f->insts++;
    } else if (f->block_id == PARAMATTR_GROUP_BLOCK && code == ATTR_GROUP_ENTRY && nvals >= 2) {
        if (v[1] >= MAX_ATTR_INDEX && v[1] != UINT32_MAX)
            fail(s, "an attribute group for parameter index %llu", (unsigned long long)v[1]);
    } else if (f->block_id == METADATA_BLOCK && code == METADATA_STRINGS && nvals >= 2 && blob >= 0) {
        /* [count, offset] blob: count lengths of 6 bits or more before offset */
        if (v[1] > (uint64_t)blob || v[0] > v[1] * 8 / 6)
            fail(s, "%llu metadata strings in a blob of %lld bytes", (unsigned long long)v[0], (long long)blob);
    }
}

static void unabbrev_record(bc *s, bc_frame *f) {
    uint64_t code = vbr(s, 6, 32), n = vbr(s, 6, 32), v[4] = {0, 0, 0, 0};
    if (!s->bad && n > (s->limit - s->pos) / 6) {
        fail(s, "a record of %llu operands, more than the block holds", (unsigned long long)n);
        return;
    }
    bool md = f->block_id == METADATA_BLOCK, cst = cst_block(s, f), att = f->block_id == METADATA_ATTACHMENT_BLOCK;
    if (md)
        md_record_begin(s, code);
    if (cst)
        cst_record_begin(s, code);
    for (uint64_t i = 0; i < n && !s->bad; i++) {
        uint64_t x = vbr(s, 6, 64);
        if (i < 4)
            v[i] = x;
        if (md)
            md_operand(s, f, i, x);
        if (cst && !s->bad)
            cst_operand(s, x);
        if (att)
            att_operand(s, i, x);
    }
    if (!s->bad && md)
        md_record_end(s, f, n);
    if (!s->bad && cst)
        cst_record_end(s);
    if (!s->bad && att)
        att_record_end(s, n);
    if (!s->bad)
        check_record(s, f, code, n, v, -1);
}

static uint64_t field(bc *s, const bc_op *o) {
    switch (o->kind) {
    case OP_LIT: return o->lit;
    case OP_FIXED: return bits(s, o->width);
    case OP_VBR: return vbr(s, o->width, 64);
    default: return bits(s, 6); /* char6 */
    }
}

/* One value of an abbreviated record: the first is its code, the rest its operands. */
static void abbrev_value(bc *s, bc_frame *f, bool md, bool cst, uint64_t x, uint64_t *vals, uint64_t *nvals) {
    if (f->block_id == METADATA_ATTACHMENT_BLOCK && *nvals)
        att_operand(s, *nvals - 1, x);
    if (*nvals < 5)
        vals[*nvals] = x;
    if (md && *nvals == 0)
        md_record_begin(s, x);
    else if (md)
        md_operand(s, f, *nvals - 1, x);
    if (cst && *nvals == 0)
        cst_record_begin(s, x);
    else if (cst)
        cst_operand(s, x);
    (*nvals)++;
}

static void abbrev_record(bc *s, bc_frame *f, uint64_t id) {
    uint64_t idx = id - FIRST_ABBREV;
    if (idx >= s->ncur - f->cur_base) {
        fail(s, "abbreviation id %llu is not defined in this block", (unsigned long long)id);
        return;
    }
    uint32_t n;
    const bc_op *ops = abbrev_ops(s, s->cur[f->cur_base + idx], &n);
    uint64_t vals[5] = {0, 0, 0, 0, 0}, nvals = 0; /* the code and the first four operands */
    int64_t blob = -1;
    bool md = f->block_id == METADATA_BLOCK, cst = cst_block(s, f);
    for (uint32_t i = 0; i < n && !s->bad; i++) {
        const bc_op *o = &ops[i];
        if (o->kind == OP_ARRAY) {
            const bc_op *e = &ops[++i];
            uint64_t len = vbr(s, 6, 32), min_bits = e->kind == OP_CHAR6 ? 6 : e->width;
            if (!s->bad && len * min_bits > s->limit - s->pos) {
                fail(s, "an array of %llu elements, more than the block holds", (unsigned long long)len);
                return;
            }
            for (uint64_t k = 0; k < len && !s->bad; k++)
                abbrev_value(s, f, md, cst, field(s, e), vals, &nvals);
        } else if (o->kind == OP_BLOB) {
            uint64_t len = vbr(s, 6, 32);
            align32(s);
            if (!s->bad && len > (s->limit - s->pos) / 8) {
                fail(s, "a blob of %llu bytes, more than the block holds", (unsigned long long)len);
                return;
            }
            s->pos += len * 8;
            align32(s);
            blob = (int64_t)len;
        } else {
            uint64_t x = field(s, o);
            if (!s->bad)
                abbrev_value(s, f, md, cst, x, vals, &nvals);
        }
    }
    if (!s->bad && md)
        md_record_end(s, f, nvals ? nvals - 1 : 0);
    if (!s->bad && cst)
        cst_record_end(s);
    if (!s->bad && f->block_id == METADATA_ATTACHMENT_BLOCK)
        att_record_end(s, nvals ? nvals - 1 : 0);
    if (!s->bad)
        check_record(s, f, vals[0], nvals ? nvals - 1 : 0, vals + 1, blob);
}

static void enter_block(bc *s) {
    uint64_t id = vbr(s, 8, 32), width = vbr(s, 4, 32);
    align32(s);
    uint64_t words = bits(s, 32);
    if (s->bad)
        return;
    if (width == 0 || width > MAX_WIDTH) {
        fail(s, "block %llu has abbreviation ids of %llu bits", (unsigned long long)id, (unsigned long long)width);
        return;
    }
    if (words * 32 > s->limit - s->pos) {
        fail(s, "block %llu claims %llu bytes, %llu remain (truncated or corrupt length)", (unsigned long long)id,
             (unsigned long long)words * 4, (unsigned long long)(s->limit - s->pos) / 8);
        return;
    }
    if (s->depth == MAX_DEPTH) {
        fail(s, "blocks nested deeper than %d", MAX_DEPTH);
        return;
    }
    if (id == BLOCKINFO_BLOCK) {
        if (s->seen_blockinfo) {
            fail(s, "a second BLOCKINFO block");
            return;
        }
        s->seen_blockinfo = true;
        s->setbid = -1;
    }
    bc_frame *f = &s->frames[s->depth++];
    *f = (bc_frame){.end = s->pos + words * 32,
                    .width = (unsigned)width,
                    .block_id = (uint32_t)id,
                    .cur_base = s->ncur,
                    .local_mark = s->pool[0].n};
    s->limit = f->end;
    f->md_module = id == METADATA_BLOCK && s->depth >= 2 && s->frames[s->depth - 2].block_id == MODULE_BLOCK;
    f->md_start = s->nmd;
    f->md_mark = s->nmd, f->ops_mark = s->nmdops;
    if (cst_block(s, f)) {
        s->cst_base = s->module_values;
        s->ncst = s->ncstops = 0;
    }
    for (uint32_t i = 0; i < s->ninfo && !s->bad; i++)
        if (s->info[i].block_id == id)
            push_cur(s, s->info[i].ref);
}

static void end_block(bc *s) {
    bc_frame *f = &s->frames[s->depth - 1];
    align32(s);
    if (s->bad)
        return;
    if (s->pos != f->end) {
        fail(s, "block %u ends %lld bytes before its length says", f->block_id, (long long)(f->end - s->pos) / 8);
        return;
    }
    if (f->declared > f->records) {
        fail(s, "block %u declares %llu entries but holds %llu records", f->block_id, (unsigned long long)f->declared,
             (unsigned long long)f->records);
        return;
    }
    if (f->block_id == METADATA_BLOCK)
        md_block_end(s, f);
    if (cst_block(s, f))
        cst_block_end(s);
    if (f->block_id == FUNCTION_BLOCK) /* a function's metadata are numbered only inside it */
        s->nmd = f->md_mark, s->nmdops = f->ops_mark;
    if (s->bad)
        return;
    s->ncur = f->cur_base;
    s->pool[0].n = f->local_mark;
    s->depth--;
    s->limit = s->depth ? s->frames[s->depth - 1].end : s->nbits;
}

static bool walk(bc *s) {
    while (!s->bad) {
        if (s->depth == 0 && s->pos == s->nbits)
            return true;
        bc_frame *f = s->depth ? &s->frames[s->depth - 1] : NULL;
        s->rec_at = s->pos / 8;
        uint64_t id = bits(s, f ? f->width : 2);
        if (s->bad)
            break;
        if (id == ENTER_SUBBLOCK)
            enter_block(s);
        else if (!f)
            fail(s, "top-level entry %llu that is not a block", (unsigned long long)id);
        else if (id == END_BLOCK)
            end_block(s);
        else if (id == DEFINE_ABBREV)
            define_abbrev(s, f->block_id == BLOCKINFO_BLOCK);
        else if (id == UNABBREV_RECORD)
            unabbrev_record(s, f);
        else
            abbrev_record(s, f, id);
    }
    return false;
}

static uint32_t le32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

bool oxide__bitcode_check(const uint8_t *data, size_t size, char *why, size_t cap) {
    bc s = {.why = why, .cap = cap, .setbid = -1};
    why[0] = 0;
    if (size >= 4 && le32(data) == 0x0B17C0DEu) { /* the wrapper: magic, version, offset, size, cpu */
        uint32_t off = size >= 20 ? le32(data + 8) : 0, len = size >= 20 ? le32(data + 12) : 0;
        if (size < 20 || off > size || len > size - off)
            return fail(&s, "a bitcode wrapper whose offset and size leave the buffer");
        s.base = off;
        data += off;
        size = len;
    }
    if (size < 4 || data[0] != 'B' || data[1] != 'C' || data[2] != 0xC0 || data[3] != 0xDE)
        return fail(&s, "no 'BC' magic");
    if (size % 4)
        return fail(&s, "a length of %zu bytes, not a multiple of 4 (truncated)", size);
    s.p = data;
    s.nbits = s.limit = (uint64_t)size * 8;
    s.pos = 32;
    bool ok = walk(&s);
    free(s.pool[0].ops);
    free(s.pool[1].ops);
    free(s.cur);
    free(s.info);
    free(s.cst_first);
    free(s.cst_ops);
    free(s.rec_all);
    free(s.md_code);
    free(s.md_first);
    free(s.md_scope);
    free(s.md_inlined);
    free(s.md_ops);
    free(s.cu_imports);
    return ok;
}
