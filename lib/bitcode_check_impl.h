/* The structural check's state, shared by its two files: bitcode_check.c walks the bitstream
 * (blocks, abbreviations, records, sizes), bitcode_check_refs.c follows the numbers by which
 * records name each other (metadata, attachments, debug locations, module constants). Internal,
 * not installed. */
#ifndef OXIDE_BITCODE_CHECK_IMPL_H
#define OXIDE_BITCODE_CHECK_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { END_BLOCK = 0, ENTER_SUBBLOCK = 1, DEFINE_ABBREV = 2, UNABBREV_RECORD = 3, FIRST_ABBREV = 4 };
enum { OP_LIT = 0, OP_FIXED = 1, OP_VBR = 2, OP_ARRAY = 3, OP_CHAR6 = 4, OP_BLOB = 5 };
enum {
    BLOCKINFO_BLOCK = 0,
    MODULE_BLOCK = 8,
    PARAMATTR_GROUP_BLOCK = 10,
    CONSTANTS_BLOCK = 11,
    METADATA_ATTACHMENT_BLOCK = 16,
    METADATA_KIND_BLOCK = 22,
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
    bool md_kept;               /* a METADATA block whose metadata are kept: the module's, a function's */
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
    uint64_t kind_alias_scope, kind_noalias, kind_tbaa; /* the attachment kinds named so (~0: none yet) */
    bool named_flags;                                   /* the named node being read is llvm.module.flags */
    uint64_t *flags;                                    /* its operands (metadata numbers) */
    uint32_t nflags, capflags;
    uint64_t *rec_all; /* the operands of the constants or attachment record being read */
    uint32_t nrec_all, caprec_all;
} bc;

/* bitcode_check.c */
bool bc_fail(bc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool bc_grow(void **items, uint32_t *cap, uint32_t need, size_t size, uint32_t most);

/* bitcode_check_refs.c: called as the walk reads each record's code and operands, and at a
 * block's end */
void bc_md_record_begin(bc *s, uint64_t code);
void bc_md_operand(bc *s, bc_frame *f, uint64_t i, uint64_t v);
void bc_md_record_end(bc *s, bc_frame *f, uint64_t nops);
void bc_md_block_end(bc *s, bc_frame *f);
void bc_att_operand(bc *s, uint64_t i, uint64_t v);
void bc_att_record_end(bc *s, uint64_t nops);
bool bc_is_instruction(uint64_t code);
void bc_debug_loc(bc *s, const bc_frame *fn, uint64_t nops, const uint64_t *op);
bool bc_cst_block(const bc *s, const bc_frame *f);
void bc_cst_record_begin(bc *s, uint64_t code);
void bc_cst_operand(bc *s, uint64_t v);
void bc_cst_record_end(bc *s);
void bc_cst_block_end(bc *s);

#endif
