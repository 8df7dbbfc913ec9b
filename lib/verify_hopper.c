/* The verifier's rules for the tier-2 ops of ops.def: asynchronous copies, tensor cores and
 * the Hopper (sm_90) async machinery. */
#include <stdio.h>

#include "llvm.h"
#include "verify.h"

/* ---- tier-2 helpers ---- */

static bool is_vec(const oxide_type *t, oxide_type_kind elem, uint64_t n) {
    return is_kind(t, OXIDE_TYPE_VECTOR) && t->count == n && is_kind(t->elem, elem);
}

/* ldmatrix/stmatrix fragments: one b16x2 register per 8x8 matrix (x1, x2, x4). */
static unsigned matrix_count(const oxide_type *t) {
    return is_kind(t, OXIDE_TYPE_I32) ? 1 : is_vec(t, OXIDE_TYPE_I32, 2) ? 2 : is_vec(t, OXIDE_TYPE_I32, 4) ? 4 : 0;
}

/* The N of a wgmma m64nNk16 f32 accumulator array<N/2 x f32> (0 if t is not one). PTX has every
 * N that is a multiple of 8 up to 256 for f16/bf16 inputs. */
static unsigned wgmma_n(const oxide_type *t) {
    if (!is_kind(t, OXIDE_TYPE_ARRAY) || !is_kind(t->elem, OXIDE_TYPE_F32))
        return 0;
    uint64_t n = t->count * 2;
    return n >= 8 && n <= 256 && n % 8 == 0 ? (unsigned)n : 0;
}

/* The tensor map of a TMA copy lives in kernel-parameter, constant or global memory, reached
 * through a generic address (a tma_desc parameter is one). */
static bool check_tensor_map(verifier *v, const oxide_type *t, unsigned operand) {
    if (is_ptr(t) && (t->addrspace == OXIDE_AS_SHARED || t->addrspace == OXIDE_AS_LOCAL)) {
        verify_report(v, "operand %u: the tensor map must be in parameter, constant or global memory, got %s", operand,
                      tname(t));
        return false;
    }
    return true;
}

static bool check_coords(verifier *v, const oxide_inst *in, unsigned first) {
    unsigned n = in->noperands > first ? in->noperands - first : 0;
    if (n < 1 || n > 5) {
        verify_report(v, "a tensor copy takes 1 to 5 coordinates (one per dimension), got %u", n);
        return false;
    }
    for (unsigned i = first; i < in->noperands; i++)
        if (!is_kind(in->operands[i]->type, OXIDE_TYPE_I32)) {
            verify_report(v, "operand %u: coordinates are i32, got %s", i, tname(in->operands[i]->type));
            return false;
        }
    return true;
}

static bool check_imm_range(verifier *v, const oxide_inst *in, int64_t lo, int64_t hi, const char *what) {
    if (in->imm < lo || in->imm > hi) {
        verify_report(v, "%s must be %lld..%lld, got %lld", what, (long long)lo, (long long)hi, (long long)in->imm);
        return false;
    }
    return true;
}
/* t must be the scalar k (n 0) or vec<n x k>. */
static bool check_type(verifier *v, const oxide_type *t, oxide_type_kind k, uint64_t n, const char *what) {
    if (n ? is_vec(t, k, n) : is_kind(t, k))
        return true;
    const char *kn = v->mod->ctx ? tname(v->mod->ctx->scalars[k]) : "?";
    if (n)
        verify_report(v, "%s must be vec<%llu x %s>, got %s", what, (unsigned long long)n, kn, tname(t));
    else
        verify_report(v, "%s must be %s, got %s", what, kn, tname(t));
    return false;
}

/* The fp8 rows need a newer PTX ISA than some targets start at (mma: 8.4 everywhere; cvt: 8.1 on
 * sm_89). Left unset, the emitter raises the version to what the module calls; an explicit
 * version below it would make LLVM end the process in instruction selection. */
static bool check_fp8_ptx(verifier *v, const oxide_inst *in) {
    const oxide_options *o = v->opts;
    int asked = o->ptx_major * 10 + o->ptx_minor, need = oxide__intrinsic_min_ptx(oxide_ops[in->op].tmpl, o->sm);
    if (!asked || asked >= need)
        return true;
    verify_report(v,
                  "op '%s' needs PTX ISA %d.%d on %s; %d.%d was asked for (set %d.%d or newer, or leave the "
                  "version unset and oxide picks it)",
                  oxide_ops[in->op].name, need / 10, need % 10, o->target, o->ptx_major, o->ptx_minor, need / 10,
                  need % 10);
    return false;
}

/* mma.sync: A and B are packed registers whatever the input type, C and D four f32. */
static bool check_mma_sync(verifier *v, const oxide_inst *in, const oxide_type *t0, const oxide_type *t1,
                           const oxide_type *row) {
    const oxide_op op = in->op;
    const char *packed = op >= OXIDE_OP_MMA_E4M3_E4M3 ? "four packed fp8" : "two packed 16-bit";
    if (!is_vec(t0, OXIDE_TYPE_I32, 4)) {
        verify_report(v, "operand 0 (A: four registers of %s values) must be vec<4 x i32>, got %s", packed, tname(t0));
        return false;
    }
    if (!is_vec(t1, OXIDE_TYPE_I32, 2)) {
        verify_report(v, "operand 1 (B: two registers of %s values) must be vec<2 x i32>, got %s", packed, tname(t1));
        return false;
    }
    if (!is_vec(row, OXIDE_TYPE_F32, 4)) {
        verify_report(v, "operand 2 (the f32 accumulator) must be vec<4 x f32>, got %s", tname(row));
        return false;
    }
    return op < OXIDE_OP_MMA_E4M3_E4M3 || check_fp8_ptx(v, in);
}

bool verify_hopper_op(verifier *v, const oxide_inst *in, const oxide_type *row) {
    const oxide_op op = in->op;
    const oxide_type *res = result_type(in), *t0 = operand_type(in, 0), *t1 = operand_type(in, 1);
    switch (op) {
    case OXIDE_OP_CP_ASYNC_CA:
    case OXIDE_OP_CP_ASYNC_CG:
    case OXIDE_OP_CP_ASYNC_CA_ZFILL:
    case OXIDE_OP_CP_ASYNC_CG_ZFILL: {
        bool cg = op == OXIDE_OP_CP_ASYNC_CG || op == OXIDE_OP_CP_ASYNC_CG_ZFILL;
        /* cp.async.cg (L2 only) moves 16 bytes; .ca also 4 and 8 */
        if (cg ? in->imm != 16 : in->imm != 4 && in->imm != 8 && in->imm != 16) {
            verify_report(v, "copies %s bytes (imm), got %lld", cg ? "16" : "4, 8 or 16", (long long)in->imm);
            return false;
        }
        if (!is_ptr(t1) || t1->addrspace != OXIDE_AS_GLOBAL) {
            verify_report(v, "operand 1: the source must be a ptr.global, got %s", tname(t1));
            return false;
        }
        return true;
    }
    case OXIDE_OP_CP_ASYNC_WAIT:
    case OXIDE_OP_BULK_WAIT:
    case OXIDE_OP_BULK_WAIT_READ:
    case OXIDE_OP_WGMMA_WAIT:
        /* ptxas takes any small constant; 0..63 covers every pipeline depth that fits in shared memory */
        return check_imm_range(v, in, 0, 63, "the number of pending groups (imm)");
    case OXIDE_OP_LDMATRIX:
    case OXIDE_OP_LDMATRIX_TRANS:
        if (!matrix_count(res)) {
            verify_report(v, "the result must be i32, vec<2 x i32> or vec<4 x i32> (x1, x2, x4), got %s", tname(res));
            return false;
        }
        return true;
    case OXIDE_OP_STMATRIX:
    case OXIDE_OP_STMATRIX_TRANS:
        if (!matrix_count(t1)) {
            verify_report(v, "operand 1 must be i32, vec<2 x i32> or vec<4 x i32> (x1, x2, x4), got %s", tname(t1));
            return false;
        }
        return true;
    OXIDE_CASE_MMA_SYNC:
        return check_mma_sync(v, in, t0, t1, row);
    case OXIDE_OP_CVT_E4M3X2_F32:
    case OXIDE_OP_CVT_E5M2X2_F32:
        return check_type(v, row, OXIDE_TYPE_F32, 0, "operands 0 and 1 (element 0 and 1 of the pair)") &&
               check_type(v, res, OXIDE_TYPE_I16, 0, "the result (the fp8 pair, element 0 in the low byte)") &&
               check_fp8_ptx(v, in);
    case OXIDE_OP_CVT_E4M3X2_F16X2:
    case OXIDE_OP_CVT_E5M2X2_F16X2:
        return check_type(v, t0, OXIDE_TYPE_F16, 2, "operand 0 (the f16 pair)") &&
               check_type(v, res, OXIDE_TYPE_I16, 0, "the result (the fp8 pair, element 0 in the low byte)") &&
               check_fp8_ptx(v, in);
    case OXIDE_OP_CVT_F16X2_E4M3X2:
    case OXIDE_OP_CVT_F16X2_E5M2X2:
        return check_type(v, t0, OXIDE_TYPE_I16, 0, "operand 0 (the fp8 pair, element 0 in the low byte)") &&
               check_type(v, res, OXIDE_TYPE_F16, 2, "the result (the f16 pair)") && check_fp8_ptx(v, in);
    case OXIDE_OP_ELECT_SYNC:
        if (in->imm == 0) {
            verify_report(v, "the lane mask must name at least one lane");
            return false;
        }
        return true;
    case OXIDE_OP_TMA_LOAD: return check_tensor_map(v, t1, 1) && check_coords(v, in, 3);
    case OXIDE_OP_TMA_LOAD_MULTICAST: return check_tensor_map(v, t1, 1) && check_coords(v, in, 4);
    case OXIDE_OP_TMA_STORE: return check_tensor_map(v, t0, 0) && check_coords(v, in, 2);
    case OXIDE_OP_TMA_PREFETCH_DESC: return check_tensor_map(v, t0, 0);
    case OXIDE_OP_WGMMA_WAIT_ACC:
        if (!wgmma_n(row)) {
            verify_report(v, "the accumulator must be array<N/2 x f32> of an m64nNk16 shape, got %s", tname(row));
            return false;
        }
        return check_imm_range(v, in, 0, 63, "the number of pending groups (imm)");
    case OXIDE_OP_WGMMA_BF16_RS:
    case OXIDE_OP_WGMMA_F16_RS:
        if (!wgmma_n(row)) {
            verify_report(v, "the accumulator must be array<N/2 x f32> of an m64nNk16 shape, got %s", tname(row));
            return false;
        }
        if (!check_type(v, t1, OXIDE_TYPE_I32, 4, "operand 1 (the A fragment: four packed pairs)"))
            return false;
        /* from registers A is K-major: bit 1 transposes B, bit 2 negates A, bit 3 negates B */
        if (in->imm & 1) {
            verify_report(v, "mode bit 1 (transpose A) needs A in shared memory; A from registers is K-major");
            return false;
        }
        return check_imm_range(v, in, 0, 15, "the mode bits (imm)");
    case OXIDE_OP_WGMMA_E4M3_E4M3:
    case OXIDE_OP_WGMMA_E4M3_E5M2:
    case OXIDE_OP_WGMMA_E5M2_E4M3:
    case OXIDE_OP_WGMMA_E5M2_E5M2:
        if (!wgmma_n(row)) {
            verify_report(v, "the accumulator must be array<N/2 x f32> of an m64nNk32 shape, got %s", tname(row));
            return false;
        }
        if (in->imm & 3) {
            verify_report(v, "mode bits 1 and 2 (transposes) do not exist for fp8: both operands are K-major");
            return false;
        }
        return check_imm_range(v, in, 0, 15, "the mode bits (imm)");
    case OXIDE_OP_WGMMA_BF16:
    case OXIDE_OP_WGMMA_F16:
        if (!wgmma_n(row)) {
            verify_report(v,
                          "the accumulator must be array<N/2 x f32> for an m64nNk16 shape (N a multiple of 8 up to "
                          "256, e.g. array<64 x f32> for N = 128), got %s",
                          tname(row));
            return false;
        }
        /* bit 0: transpose A, bit 1: transpose B, bit 2: negate A, bit 3: negate B */
        return check_imm_range(v, in, 0, 15, "the mode bits (imm)");
    case OXIDE_OP_WGMMA_DESC:
        if (in->imm != 0 && in->imm != 32 && in->imm != 64 && in->imm != 128) {
            verify_report(v, "the swizzle (imm) must be 0 (none), 32, 64 or 128 bytes, got %lld", (long long)in->imm);
            return false;
        }
        return true;
    case OXIDE_OP_SETMAXNREG_INC:
    case OXIDE_OP_SETMAXNREG_DEC:
        if (in->imm < 24 || in->imm > 256 || in->imm % 8) {
            verify_report(v, "the register count (imm) must be a multiple of 8 in 24..256, got %lld",
                          (long long)in->imm);
            return false;
        }
        return true;
    default: return true;
    }
}
