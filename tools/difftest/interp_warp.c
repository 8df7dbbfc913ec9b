/* The reference interpreter's warp ops (shuffles, ldmatrix, mma.sync), which the 32 threads of a
 * warp complete together, and cp.async, whose copies land at a later wait (interp.h). Written
 * from PTX's definitions of the fragments, not from the tile compiler's use of them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "interp_priv.h"

#define failf dt__failf

bool dt__is_warp_op(oxide_op op) {
    switch (op) {
    case OXIDE_OP_SHFL_IDX:
    case OXIDE_OP_SHFL_UP:
    case OXIDE_OP_SHFL_DOWN:
    case OXIDE_OP_SHFL_XOR:
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS:
    case OXIDE_OP_MMA_F16:
    case OXIDE_OP_MMA_BF16: return true;
    default: return false;
    }
}

/* As PTX's shfl.sync computes them with a full mask and full-warp segments: source lane j from the
 * lane operand's low 5 bits (idx: it; up: lane - it; down: lane + it; xor: lane ^ it), a j
 * outside the warp reads the thread's own value. */
static int shuffle(interp *I, thread *t, const oxide_inst *in) {
    if ((uint32_t)in->imm != 0xffffffffu)
        return failf(I, in, "lane masks other than all lanes are not modelled");
    uint32_t src = vidx(in->operands[0]), lane = vidx(in->operands[1]), dst = vidx(in->result);
    uint64_t val[32];
    uint8_t tol[32];
    for (uint32_t l = 0; l < 32; l++) {
        uint32_t b = (uint32_t)t[l].regs[lane] & 31, j;
        switch (in->op) {
        case OXIDE_OP_SHFL_IDX: j = b; break;
        case OXIDE_OP_SHFL_UP: j = l >= b ? l - b : l; break;
        case OXIDE_OP_SHFL_DOWN: j = l + b <= 31 ? l + b : l; break;
        default: j = l ^ b; break;
        }
        val[l] = t[j].regs[src];
        tol[l] = t[j].tol[src];
    }
    for (uint32_t l = 0; l < 32; l++) {
        t[l].regs[dst] = val[l];
        t[l].regs[dst + 1] = 0;
        t[l].tol[dst] = tol[l];
    }
    return 0;
}

/* ldmatrix.m8n8.xN.b16 (N = the result's i32 count): lanes 8i..8i+7 give the rows of matrix i
 * (16 bytes each); register i of lane l is row l/4, columns 2(l%4) and +1 of matrix i, or with
 * .trans rows 2(l%4) and +1 of column l/4. */
static int ldmatrix(interp *I, thread *t, const oxide_inst *in) {
    const oxide_type *rt = in->result->type;
    uint32_t n = rt->kind == OXIDE_TYPE_VECTOR ? (uint32_t)rt->count : 1;
    if ((n != 1 && n != 2 && n != 4) || (rt->kind == OXIDE_TYPE_VECTOR && rt->elem->kind != OXIDE_TYPE_I32))
        return failf(I, in, "ldmatrix into %s is not modelled", rt->name);
    uint16_t m[4][8][8];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t r = 0; r < 8; r++)
            if (dt__read(I, in, t[8 * i + r].regs[vidx(in->operands[0])], 16, m[i][r]))
                return -1;
    bool tr = in->op == OXIDE_OP_LDMATRIX_TRANS;
    uint32_t dst = vidx(in->result);
    for (uint32_t l = 0; l < 32; l++) {
        uint32_t w[4] = {0};
        for (uint32_t i = 0; i < n; i++) {
            uint32_t g = l / 4, c = 2 * (l % 4);
            uint16_t lo = tr ? m[i][c][g] : m[i][g][c], hi = tr ? m[i][c + 1][g] : m[i][g][c + 1];
            w[i] = (uint32_t)lo | (uint32_t)hi << 16;
        }
        memcpy(&t[l].regs[dst], w, sizeof w);
        t[l].tol[dst] = 0;
    }
    return 0;
}

static double half_value(bool bf, uint16_t b) {
    if (bf)
        return dt_f32((uint32_t)b << 16);
    _Float16 h;
    memcpy(&h, &b, 2);
    return (double)h;
}

/* mma.sync.m16n8k16.row.col.f32 with f16 or bf16 A (16 x 16) and B (16 x 8); group g = lane / 4,
 * t = lane % 4: A registers {row g, row g + 8} x {k 2t.., k 2t + 8..}, in the order (g, k),
 * (g + 8, k), (g, k + 8), (g + 8, k + 8); B registers k 2t.. and k 2t + 8.. of column g; C and D
 * rows g and g + 8, columns 2t and 2t + 1. */
static int mma(thread *t, const oxide_inst *in) {
    bool bf = in->op == OXIDE_OP_MMA_BF16;
    double A[16][16], B[16][8], C[16][8];
    uint32_t ia = vidx(in->operands[0]), ib = vidx(in->operands[1]), ic = vidx(in->operands[2]);
    for (uint32_t l = 0; l < 32; l++) {
        uint32_t g = l / 4, q = l % 4, a[4], b[2], c[4];
        memcpy(a, &t[l].regs[ia], 16);
        memcpy(b, &t[l].regs[ib], 8);
        memcpy(c, &t[l].regs[ic], 16);
        for (uint32_t r = 0; r < 4; r++)
            for (uint32_t h = 0; h < 2; h++)
                A[g + 8 * (r % 2)][2 * q + h + 8 * (r / 2)] = half_value(bf, (uint16_t)(a[r] >> 16 * h));
        for (uint32_t r = 0; r < 2; r++)
            for (uint32_t h = 0; h < 2; h++)
                B[2 * q + h + 8 * r][g] = half_value(bf, (uint16_t)(b[r] >> 16 * h));
        for (uint32_t r = 0; r < 4; r++)
            C[g + 8 * (r / 2)][2 * q + r % 2] = dt_f32(c[r]);
    }
    uint32_t dst = vidx(in->result);
    for (uint32_t l = 0; l < 32; l++) {
        uint32_t g = l / 4, q = l % 4, d[4];
        for (uint32_t r = 0; r < 4; r++) {
            uint32_t i = g + 8 * (r / 2), j = 2 * q + r % 2;
            double acc = C[i][j];
            for (uint32_t k = 0; k < 16; k++)
                acc += A[i][k] * B[k][j]; /* products of halves are exact in double */
            d[r] = dt_b32((float)acc);
        }
        memcpy(&t[l].regs[dst], d, sizeof d);
        t[l].tol[dst] = 0;
    }
    return 0;
}

int dt__resolve_warps(interp *I, thread *th, uint32_t nthreads) {
    for (uint32_t w = 0; w * 32 < nthreads; w++) {
        thread *t = &th[w * 32];
        uint32_t n = 0;
        for (uint32_t l = 0; l < 32 && w * 32 + l < nthreads; l++)
            n += t[l].state == T_WARP;
        if (!n)
            continue;
        const oxide_inst *in = t[0].state == T_WARP ? t[0].block->insts.items[t[0].pc] : NULL;
        if (n != 32 || !in)
            return failf(I, in,
                         "a warp op reached by %u of the 32 threads of warp %u (divergent, returned or a "
                         "partial warp)",
                         n, w);
        for (uint32_t l = 1; l < 32; l++)
            if (t[l].block->insts.items[t[l].pc] != in)
                return failf(I, in, "lane %u of warp %u is at another warp op", l, w);
        for (uint32_t i = 0; i < in->noperands; i++)
            for (uint32_t l = 0; l < 32; l++)
                if (t[l].tol[vidx(in->operands[i])] && in->op != OXIDE_OP_SHFL_IDX && in->op != OXIDE_OP_SHFL_XOR &&
                    in->op != OXIDE_OP_SHFL_UP && in->op != OXIDE_OP_SHFL_DOWN)
                    return failf(I, in, "uses an approximate math result; its error cannot be bounded");
        int rc = in->op == OXIDE_OP_LDMATRIX || in->op == OXIDE_OP_LDMATRIX_TRANS ? ldmatrix(I, t, in)
                 : in->op == OXIDE_OP_MMA_F16 || in->op == OXIDE_OP_MMA_BF16      ? mma(t, in)
                                                                                  : shuffle(I, t, in);
        if (rc)
            return -1;
        for (uint32_t l = 0; l < 32; l++) {
            t[l].state = T_RUN;
            t[l].pc++;
        }
    }
    return 0;
}

/* Lands the copies of every committed group but the keep most recent. */
static int land(interp *I, thread *t, const oxide_inst *in, uint32_t keep) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->ncopies; i++) {
        dt_copy *c = &t->copies[i];
        if (c->group + keep >= t->groups) {
            t->copies[kept++] = *c;
            continue;
        }
        uint64_t off;
        region *g = dt__resolve(I, in, c->dst, c->size, &off);
        if (!g)
            return -1;
        memcpy(g->data + off, c->data, c->size);
        if (g->written)
            memset(g->written + off, 1, c->size);
    }
    t->ncopies = kept;
    return 0;
}

int dt__exec_copy(interp *I, thread *t, const oxide_inst *in) {
    switch (in->op) {
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL: {
        bool zfill = in->op == OXIDE_OP_CP_ASYNC_CA_ZFILL || in->op == OXIDE_OP_CP_ASYNC_CG_ZFILL;
        uint64_t size = (uint64_t)in->imm, src = zfill ? t->regs[vidx(in->operands[2])] & 0xffffffffu : size;
        if ((size != 4 && size != 8 && size != 16) || src > size)
            return failf(I, in, "a copy of %llu of %llu bytes", (unsigned long long)src, (unsigned long long)size);
        if (t->ncopies == t->capcopies) {
            uint32_t cap = t->capcopies ? 2 * t->capcopies : 64;
            dt_copy *c = cap <= (1u << 20) ? realloc(t->copies, cap * sizeof *c) : NULL;
            if (!c)
                return failf(I, in, "too many copies in flight");
            t->copies = c, t->capcopies = cap;
        }
        dt_copy *c = &t->copies[t->ncopies];
        *c = (dt_copy){.dst = t->regs[vidx(in->operands[0])], .size = (uint32_t)size, .group = t->groups};
        uint64_t off;
        /* the destination is checked now, the source read now (a zero-byte copy reads nothing) */
        if (!dt__resolve(I, in, c->dst, size, &off) ||
            (src && dt__read(I, in, t->regs[vidx(in->operands[1])], src, c->data)))
            return -1;
        t->ncopies++;
        return 0;
    }
    case OXIDE_OP_CP_ASYNC_COMMIT: t->groups++; return 0;
    case OXIDE_OP_CP_ASYNC_WAIT: return land(I, t, in, (uint32_t)in->imm);
    default: return 1;
    }
}
