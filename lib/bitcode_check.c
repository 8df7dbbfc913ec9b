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
#include "bitcode_check_impl.h"

bool bc_fail(bc *s, const char *fmt, ...) {
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
        bc_fail(s, "the bitstream ends inside a %u-bit field (truncated)", n);
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
            bc_fail(s, "a variable-width field runs past %u bits", max_bits);
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
        bc_fail(s, "the bitstream ends inside block padding (truncated)");
    else
        s->pos = to;
}

bool bc_grow(void **items, uint32_t *cap, uint32_t need, size_t size, uint32_t most) {
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
    if (!bc_grow((void **)&s->cur, &s->capcur, s->ncur + 1, sizeof *s->cur, MAX_LIVE_ABBREVS))
        return bc_fail(s, "more than %d abbreviations in scope", MAX_LIVE_ABBREVS);
    s->cur[s->ncur++] = ref;
    return true;
}

/* DEFINE_ABBREV: the operands go to the pool; the rules are those LLVM's reader assumes. */
static void define_abbrev(bc *s, bool in_blockinfo) {
    uint64_t n = vbr(s, 5, 32);
    if (s->bad)
        return;
    if (n == 0 || n > MAX_ABBREV_OPS) {
        bc_fail(s, "an abbreviation of %llu operands", (unsigned long long)n);
        return;
    }
    bc_pool *pl = &s->pool[in_blockinfo];
    uint32_t at = pl->n;
    if (!bc_grow((void **)&pl->ops, &pl->cap, at + (uint32_t)n + 1, sizeof *pl->ops, MAX_POOL_OPS)) {
        bc_fail(s, "more than %d abbreviation operands", MAX_POOL_OPS);
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
                bc_fail(s, "an abbreviation field of width %llu", (unsigned long long)w);
            else if (w == 0)
                o->kind = OP_LIT; /* as LLVM reads it: a zero-width field is the literal 0 */
            o->width = (uint8_t)w;
        } else if (o->kind == OP_ARRAY) {
            if (i != n - 2)
                bc_fail(s, "an array that is not the abbreviation's last but one operand");
        } else if (o->kind == OP_BLOB) {
            if (i != n - 1)
                bc_fail(s, "a blob that is not the abbreviation's last operand");
        } else if (o->kind != OP_CHAR6) {
            bc_fail(s, "an abbreviation operand of unknown encoding %u", o->kind);
        }
    }
    if (s->bad)
        return;
    if (ops[0].kind == OP_ARRAY || ops[0].kind == OP_BLOB) {
        bc_fail(s, "an abbreviation that starts with an array or a blob");
        return;
    }
    if (n >= 2 && ops[n - 2].kind == OP_ARRAY &&
        !(ops[n - 1].kind == OP_FIXED || ops[n - 1].kind == OP_VBR || ops[n - 1].kind == OP_CHAR6)) {
        bc_fail(s, "an array whose elements are not a fixed, variable or char6 field");
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
        bc_fail(s, "an abbreviation in BLOCKINFO before its SETBID");
        return;
    }
    if (!bc_grow((void **)&s->info, &s->capinfo, s->ninfo + 1, sizeof *s->info, MAX_LIVE_ABBREVS)) {
        bc_fail(s, "more than %d BLOCKINFO abbreviations", MAX_LIVE_ABBREVS);
        return;
    }
    s->info[s->ninfo++] = (bc_info){(uint32_t)s->setbid, ref};
}

/* What LLVM sizes from a record's values must be backed by records that follow. */
static void check_record(bc *s, bc_frame *f, uint64_t code, uint64_t nvals, const uint64_t *v, int64_t blob) {
    f->records++;
    if (f->block_id == MODULE_BLOCK && (code == 7 || code == 8 || code == 9 || code == 14 || code == 18))
        s->module_values++; /* GLOBALVAR, FUNCTION, ALIAS_OLD, ALIAS, IFUNC */
    if (f->block_id == BLOCKINFO_BLOCK && code == SETBID && nvals >= 1) {
        if (v[0] > UINT32_MAX)
            bc_fail(s, "SETBID %llu", (unsigned long long)v[0]);
        s->setbid = (int64_t)v[0];
    } else if ((f->block_id == TYPE_BLOCK && code == NUMENTRY) ||
               (f->block_id == FUNCTION_BLOCK && code == DECLAREBLOCKS)) {
        if (nvals >= 1 && v[0] > f->declared)
            f->declared = v[0];
    } else if (f->block_id == FUNCTION_BLOCK && code == FUNC_DEBUG_LOC) {
        bc_debug_loc(s, f, nvals, v);
    } else if (f->block_id == FUNCTION_BLOCK && bc_is_instruction(code)) {
        f->insts++;
    } else if (f->block_id == PARAMATTR_GROUP_BLOCK && code == ATTR_GROUP_ENTRY && nvals >= 2) {
        if (v[1] >= MAX_ATTR_INDEX && v[1] != UINT32_MAX)
            bc_fail(s, "an attribute group for parameter index %llu", (unsigned long long)v[1]);
    } else if (f->block_id == METADATA_BLOCK && code == METADATA_STRINGS && nvals >= 2 && blob >= 0) {
        /* [count, offset] blob: count lengths of 6 bits or more before offset */
        if (v[1] > (uint64_t)blob || v[0] > v[1] * 8 / 6)
            bc_fail(s, "%llu metadata strings in a blob of %lld bytes", (unsigned long long)v[0], (long long)blob);
    }
}

static void unabbrev_record(bc *s, bc_frame *f) {
    uint64_t code = vbr(s, 6, 32), n = vbr(s, 6, 32), v[4] = {0, 0, 0, 0};
    if (!s->bad && n > (s->limit - s->pos) / 6) {
        bc_fail(s, "a record of %llu operands, more than the block holds", (unsigned long long)n);
        return;
    }
    bool md = f->block_id == METADATA_BLOCK || f->block_id == METADATA_KIND_BLOCK, cst = bc_cst_block(s, f),
         att = f->block_id == METADATA_ATTACHMENT_BLOCK;
    if (md)
        bc_md_record_begin(s, code);
    if (cst)
        bc_cst_record_begin(s, code);
    for (uint64_t i = 0; i < n && !s->bad; i++) {
        uint64_t x = vbr(s, 6, 64);
        if (i < 4)
            v[i] = x;
        if (md)
            bc_md_operand(s, f, i, x);
        if (cst && !s->bad)
            bc_cst_operand(s, x);
        if (att)
            bc_att_operand(s, i, x);
    }
    if (!s->bad && md)
        bc_md_record_end(s, f, n);
    if (!s->bad && cst)
        bc_cst_record_end(s);
    if (!s->bad && att)
        bc_att_record_end(s, n);
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
        bc_att_operand(s, *nvals - 1, x);
    if (*nvals < 5)
        vals[*nvals] = x;
    if (md && *nvals == 0)
        bc_md_record_begin(s, x);
    else if (md)
        bc_md_operand(s, f, *nvals - 1, x);
    if (cst && *nvals == 0)
        bc_cst_record_begin(s, x);
    else if (cst)
        bc_cst_operand(s, x);
    (*nvals)++;
}

static void abbrev_record(bc *s, bc_frame *f, uint64_t id) {
    uint64_t idx = id - FIRST_ABBREV;
    if (idx >= s->ncur - f->cur_base) {
        bc_fail(s, "abbreviation id %llu is not defined in this block", (unsigned long long)id);
        return;
    }
    uint32_t n;
    const bc_op *ops = abbrev_ops(s, s->cur[f->cur_base + idx], &n);
    uint64_t vals[5] = {0, 0, 0, 0, 0}, nvals = 0; /* the code and the first four operands */
    int64_t blob = -1;
    bool md = f->block_id == METADATA_BLOCK || f->block_id == METADATA_KIND_BLOCK, cst = bc_cst_block(s, f);
    for (uint32_t i = 0; i < n && !s->bad; i++) {
        const bc_op *o = &ops[i];
        if (o->kind == OP_ARRAY) {
            const bc_op *e = &ops[++i];
            uint64_t len = vbr(s, 6, 32), min_bits = e->kind == OP_CHAR6 ? 6 : e->width;
            if (!s->bad && len * min_bits > s->limit - s->pos) {
                bc_fail(s, "an array of %llu elements, more than the block holds", (unsigned long long)len);
                return;
            }
            for (uint64_t k = 0; k < len && !s->bad; k++)
                abbrev_value(s, f, md, cst, field(s, e), vals, &nvals);
        } else if (o->kind == OP_BLOB) {
            uint64_t len = vbr(s, 6, 32);
            align32(s);
            if (!s->bad && len > (s->limit - s->pos) / 8) {
                bc_fail(s, "a blob of %llu bytes, more than the block holds", (unsigned long long)len);
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
        bc_md_record_end(s, f, nvals ? nvals - 1 : 0);
    if (!s->bad && cst)
        bc_cst_record_end(s);
    if (!s->bad && f->block_id == METADATA_ATTACHMENT_BLOCK)
        bc_att_record_end(s, nvals ? nvals - 1 : 0);
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
        bc_fail(s, "block %llu has abbreviation ids of %llu bits", (unsigned long long)id, (unsigned long long)width);
        return;
    }
    if (words * 32 > s->limit - s->pos) {
        bc_fail(s, "block %llu claims %llu bytes, %llu remain (truncated or corrupt length)", (unsigned long long)id,
                (unsigned long long)words * 4, (unsigned long long)(s->limit - s->pos) / 8);
        return;
    }
    if (s->depth == MAX_DEPTH) {
        bc_fail(s, "blocks nested deeper than %d", MAX_DEPTH);
        return;
    }
    if (id == BLOCKINFO_BLOCK) {
        if (s->seen_blockinfo) {
            bc_fail(s, "a second BLOCKINFO block");
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
    f->md_kept =
        f->md_module || (id == METADATA_BLOCK && s->depth >= 2 && s->frames[s->depth - 2].block_id == FUNCTION_BLOCK);
    f->md_start = s->nmd;
    f->md_mark = s->nmd, f->ops_mark = s->nmdops;
    if (bc_cst_block(s, f)) {
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
        bc_fail(s, "block %u ends %lld bytes before its length says", f->block_id, (long long)(f->end - s->pos) / 8);
        return;
    }
    if (f->declared > f->records) {
        bc_fail(s, "block %u declares %llu entries but holds %llu records", f->block_id,
                (unsigned long long)f->declared, (unsigned long long)f->records);
        return;
    }
    if (f->block_id == METADATA_BLOCK)
        bc_md_block_end(s, f);
    if (bc_cst_block(s, f))
        bc_cst_block_end(s);
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
            bc_fail(s, "top-level entry %llu that is not a block", (unsigned long long)id);
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
    bc s = {.why = why,
            .cap = cap,
            .setbid = -1,
            .kind_alias_scope = UINT64_MAX,
            .kind_noalias = UINT64_MAX,
            .kind_tbaa = UINT64_MAX};
    why[0] = 0;
    if (size >= 4 && le32(data) == 0x0B17C0DEu) { /* the wrapper: magic, version, offset, size, cpu */
        uint32_t off = size >= 20 ? le32(data + 8) : 0, len = size >= 20 ? le32(data + 12) : 0;
        if (size < 20 || off > size || len > size - off)
            return bc_fail(&s, "a bitcode wrapper whose offset and size leave the buffer");
        s.base = off;
        data += off;
        size = len;
    }
    if (size < 4 || data[0] != 'B' || data[1] != 'C' || data[2] != 0xC0 || data[3] != 0xDE)
        return bc_fail(&s, "no 'BC' magic");
    if (size % 4)
        return bc_fail(&s, "a length of %zu bytes, not a multiple of 4 (truncated)", size);
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
    free(s.flags);
    return ok;
}
