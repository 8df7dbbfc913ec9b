/* The lift of one tile kernel entry (lib/import_tile.c prepares it): tile handles typed, each
 * LLVM block an oxide block whose parameters are its phis, each stub call one tile op (the table
 * lib/tile_intrinsics.inc, generated from lib/ops.def by tools/gen_rust_tile.py), each scalar
 * instruction its oxide op. What does not lift is refused naming the kernel, the Rust source line
 * where the bitcode has debug info, and what to write instead. */
#include <stdio.h>

#include <llvm-c/DebugInfo.h>

#include "import_tile.h"

typedef struct oxide_tile_stub {
    const char *name;
    oxide_op op;
    const char *args;
    char result;
} oxide_tile_stub;

#include "tile_intrinsics.inc"

#define NSTUBS (sizeof oxide__tile_stubs / sizeof oxide__tile_stubs[0])

/* The file of a debug scope. */
static const char *scope_file(LLVMMetadataRef scope, unsigned *len) {
    LLVMMetadataRef f = scope ? LLVMDIScopeGetFile(scope) : NULL;
    return f ? LLVMDIFileGetFilename(f, len) : NULL;
}

/* The user's line for inst: of the places it was inlined from (a cuda-tile method, inlined into
 * the user's function, inlined into the entry), the innermost in the file of the kernel's own
 * function; a value with no place of its own (an alloca) borrows its first user's. */
static bool user_line(const lift *L, LLVMValueRef inst, const char **file, unsigned *flen, unsigned *line) {
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
    for (LLVMUseRef u = LLVMGetFirstUse(inst); !loc && u; u = LLVMGetNextUse(u))
        if (LLVMIsAInstruction(LLVMGetUser(u)))
            loc = LLVMInstructionGetDebugLoc(LLVMGetUser(u));
    unsigned klen = 0;
    LLVMMetadataRef sp = LLVMGetSubprogram(L->fn);
    const char *kfile = sp ? scope_file(sp, &klen) : NULL;
    for (LLVMMetadataRef l = loc; l; l = LLVMDILocationGetInlinedAt(l)) {
        *file = scope_file(LLVMDILocationGetScope(l), flen);
        *line = LLVMDILocationGetLine(l);
        if (*file && *line && (!kfile || (*flen == klen && !memcmp(*file, kfile, klen))))
            return true;
    }
    return loc && *file && *line; /* no place in the kernel's file: the innermost one */
}

/* "tile kernel NAME at FILE:LINE" (the line where debug info has one) into buf. */
static const char *where(const lift *L, LLVMValueRef inst, char *buf, size_t cap) {
    const char *file = NULL;
    unsigned fl = 0, line = 0;
    if (inst && LLVMIsAInstruction(inst) && user_line(L, inst, &file, &fl, &line))
        snprintf(buf, cap, "tile kernel %s at %.*s:%u", L->kname, (int)fl, file, line);
    else
        snprintf(buf, cap, "tile kernel %s", L->kname);
    return buf;
}

static oxide_status refuse(const lift *L, LLVMValueRef inst, const char *fmt, const char *arg) {
    char w[512], msg[512];
    snprintf(msg, sizeof msg, fmt, arg ? arg : "");
    return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: %s", where(L, inst, w, sizeof w), msg);
}

oxide_status oxide__tile_oom(void) {
    return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory lifting tile kernels");
}

static oxide_status oom(void) { return oxide__tile_oom(); }

oxide_type *oxide__tile_scalar_of_code(oxide_context *ctx, uint32_t code) {
    static const oxide_type_kind kinds[] = {
        [OXIDE_SCALAR_BOOL] = OXIDE_TYPE_I1,      [OXIDE_SCALAR_I8] = OXIDE_TYPE_I8,
        [OXIDE_SCALAR_I16] = OXIDE_TYPE_I16,      [OXIDE_SCALAR_I32] = OXIDE_TYPE_I32,
        [OXIDE_SCALAR_I64] = OXIDE_TYPE_I64,      [OXIDE_SCALAR_U8] = OXIDE_TYPE_I8,
        [OXIDE_SCALAR_U16] = OXIDE_TYPE_I16,      [OXIDE_SCALAR_U32] = OXIDE_TYPE_I32,
        [OXIDE_SCALAR_U64] = OXIDE_TYPE_I64,      [OXIDE_SCALAR_F16] = OXIDE_TYPE_F16,
        [OXIDE_SCALAR_BF16] = OXIDE_TYPE_BF16,    [OXIDE_SCALAR_F32] = OXIDE_TYPE_F32,
        [OXIDE_SCALAR_F64] = OXIDE_TYPE_F64,      [OXIDE_SCALAR_F8E4M3] = OXIDE_TYPE_F8E4M3,
        [OXIDE_SCALAR_F8E5M2] = OXIDE_TYPE_F8E5M2};
    oxide_type *t = NULL;
    if (code < sizeof kinds / sizeof kinds[0] && oxide_type_scalar(ctx, kinds[code], &t) == OXIDE_OK)
        return t;
    return NULL;
}

/* The tile type cuda_tile::tile_type packed into a u64. */
static oxide_status tile_type(lift *L, LLVMValueRef inst, LLVMValueRef c, oxide_type **out) {
    if (!LLVMIsAConstantInt(c))
        return refuse(L, inst, "a tile type that is not a constant%s (internal: cuda-tile passes it as one)", NULL);
    uint64_t ty = LLVMConstIntGetZExtValue(c);
    uint32_t rank = (ty >> 8) & 3, shape[3];
    for (uint32_t i = 0; i < rank; i++)
        shape[i] = (uint32_t)(ty >> (10 + 17 * i)) & 0x1ffff;
    oxide_type *elem = oxide__tile_scalar_of_code(L->ctx, ty & 0xff);
    oxide_status st = elem ? oxide_type_tile(L->ctx, elem, rank, shape, out) : OXIDE_ERROR_TYPE_MISMATCH;
    if (st) {
        char w[512];
        return oxide__fail_prefix(st ? st : OXIDE_ERROR_TYPE_MISMATCH, "%s", where(L, inst, w, sizeof w));
    }
    return OXIDE_OK;
}

bool oxide__tile_stub_is_query(const char *name) {
    for (size_t i = 0; i < NSTUBS; i++)
        if (!strcmp(name, oxide__tile_stubs[i].name))
            return oxide__tile_stubs[i].result == 's';
    return false;
}

static const oxide_tile_stub *stub_of(LLVMValueRef call) {
    LLVMValueRef callee = LLVMGetCalledValue(call);
    if (!callee || !LLVMIsAFunction(callee))
        return NULL;
    size_t n;
    const char *name = LLVMGetValueName2(callee, &n);
    /* a stub declared with other arguments (not cuda-tile's) is no stub: a call, refused as one */
    for (size_t i = 0; i < NSTUBS; i++)
        if (!strcmp(name, oxide__tile_stubs[i].name))
            return (size_t)LLVMGetNumArgOperands(call) == strlen(oxide__tile_stubs[i].args) ? &oxide__tile_stubs[i]
                                                                                            : NULL;
    return NULL;
}

/* The oxide scalar type of an LLVM first-class type, or NULL. */
static oxide_type *scalar_type(oxide_context *ctx, LLVMTypeRef t) {
    oxide_type_kind k;
    switch (LLVMGetTypeKind(t)) {
    case LLVMIntegerTypeKind:
        switch (LLVMGetIntTypeWidth(t)) {
        case 1: k = OXIDE_TYPE_I1; break;
        case 8: k = OXIDE_TYPE_I8; break;
        case 16: k = OXIDE_TYPE_I16; break;
        case 32: k = OXIDE_TYPE_I32; break;
        case 64: k = OXIDE_TYPE_I64; break;
        default: return NULL;
        }
        break;
    case LLVMHalfTypeKind: k = OXIDE_TYPE_F16; break;
    case LLVMBFloatTypeKind: k = OXIDE_TYPE_BF16; break;
    case LLVMFloatTypeKind: k = OXIDE_TYPE_F32; break;
    case LLVMDoubleTypeKind: k = OXIDE_TYPE_F64; break;
    default: return NULL;
    }
    oxide_type *out = NULL;
    return oxide_type_scalar(ctx, k, &out) ? NULL : out;
}

/* ---- types: which i32 values are tiles, and of what type ---- */

static oxide_type *tile_of(const lift *L, LLVMValueRef v) { return vm_get(&L->tiles, v); }

/* The tile type of a stub call's result, where its operands' types are known. */
static oxide_status call_tile_type(lift *L, LLVMValueRef call, const oxide_tile_stub *s, oxide_type **out) {
    *out = NULL;
    size_t n = strlen(s->args);
    if (s->result == 'h')
        return tile_type(L, call, LLVMGetOperand(call, (unsigned)n - 1), out);
    if (s->result != 'e')
        return OXIDE_OK;
    /* elementwise: the operands' type (select: its second), a comparison gives i1 of that shape */
    oxide_type *t = tile_of(L, LLVMGetOperand(call, s->op == OXIDE_OP_SELECT ? 1 : 0));
    if (t && (s->op == OXIDE_OP_ICMP || s->op == OXIDE_OP_FCMP)) {
        oxide_type *i1 = NULL;
        oxide_status st = oxide_type_scalar(L->ctx, OXIDE_TYPE_I1, &i1);
        if (!st)
            st = oxide_type_tile(L->ctx, i1, t->rank, t->shape, &t);
        if (st)
            return st;
    }
    *out = t;
    return OXIDE_OK;
}

/* Types every tile handle, in reverse postorder until nothing changes (a loop's phi learns its
 * type from the value entering the loop, then the body from the phi). */
static oxide_status infer_tiles(lift *L) {
    for (int round = 0; round < 8; round++) {
        bool changed = false;
        for (size_t b = 0; b < L->nrpo; b++)
            for (LLVMValueRef i = LLVMGetFirstInstruction(L->rpo[b]); i; i = LLVMGetNextInstruction(i)) {
                if (tile_of(L, i))
                    continue;
                oxide_type *t = NULL;
                const oxide_tile_stub *s = LLVMIsACallInst(i) ? stub_of(i) : NULL;
                if (s) {
                    oxide_status st = call_tile_type(L, i, s, &t);
                    if (st)
                        return st;
                } else if (LLVMIsAPHINode(i) || LLVMIsAFreezeInst(i) || LLVMIsASelectInst(i)) {
                    unsigned n = LLVMIsAPHINode(i) ? LLVMCountIncoming(i) : (unsigned)LLVMGetNumOperands(i);
                    for (unsigned j = LLVMIsASelectInst(i) ? 1 : 0; j < n && !t; j++)
                        t = tile_of(L, LLVMIsAPHINode(i) ? LLVMGetIncomingValue(i, j) : LLVMGetOperand(i, j));
                }
                if (t) {
                    if (!vm_put(&L->tiles, i, t))
                        return oom();
                    changed = true;
                }
            }
        if (!changed)
            return OXIDE_OK;
    }
    return OXIDE_OK;
}

/* ---- operands ---- */

static bool is_undef(LLVMValueRef v) { return LLVMIsAUndefValue(v) || LLVMIsAPoisonValue(v); }

/* A constant of type t (a scalar) built in block b. */
static oxide_status constant(lift *L, oxide_block *b, LLVMValueRef c, oxide_type *t, oxide_value **out) {
    if (is_undef(c))
        return oxide__type_is_float(t) ? oxide_build_const_float(b, t, 0, out) : oxide_build_const_int(b, t, 0, out);
    if (LLVMIsAConstantInt(c))
        return oxide_build_const_int(b, t, LLVMConstIntGetSExtValue(c), out);
    if (LLVMIsAConstantFP(c)) {
        LLVMBool lost;
        return oxide_build_const_float(b, t, LLVMConstRealGetDouble(c, &lost), out);
    }
    return refuse(L, NULL, "a constant expression it cannot lift%s (use a plain number)", NULL);
}

/* The oxide value of LLVM value v used by inst in block b; a tile where want_tile, else a scalar. */
static oxide_status operand(lift *L, oxide_block *b, LLVMValueRef inst, LLVMValueRef v, bool want_tile,
                            oxide_value **out) {
    oxide_type *tt = tile_of(L, v);
    if (want_tile && !tt)
        return refuse(L, inst,
                      "a tile operand that does not come from a tile op%s: tiles are made by cuda-tile's "
                      "functions (load, full, zeros, splat, arange, ...), never from numbers",
                      NULL);
    if (!want_tile && tt)
        return refuse(L, inst,
                      LLVMIsAStoreInst(inst) ? "a tile stored to memory%s: keep tiles in variables (a loop carries "
                                               "them in its variables), and store them to a TensorMut"
                                             : "a tile used as a number%s: use the tile ops (cmp, select, sum, ...)",
                      NULL);
    oxide_value *m = vm_get(&L->vals, v);
    if (m) {
        *out = m;
        return OXIDE_OK;
    }
    if (tt && is_undef(v)) /* an uninitialised tile variable: zeros */
        return oxide_build_op(b, OXIDE_OP_TILE_FULL, NULL, 0, tt, NULL, 0, out);
    if (LLVMIsAConstant(v)) {
        oxide_type *t = scalar_type(L->ctx, LLVMTypeOf(v));
        if (!t)
            return refuse(L, inst, "a constant of a type tile kernels do not have%s (pointers, aggregates)", NULL);
        return constant(L, b, v, t, out);
    }
    return refuse(L, inst, "a value it has not lifted%s (it comes from code it refused or could not reach)", NULL);
}

/* ---- instructions ---- */

static oxide_status built(lift *L, LLVMValueRef inst, oxide_status st) {
    char w[512];
    return st ? oxide__fail_prefix(st, "%s", where(L, inst, w, sizeof w)) : OXIDE_OK;
}

/* A stub call: its arguments become operands and attributes as the table's letters say. */
static oxide_status lift_stub(lift *L, oxide_block *b, LLVMValueRef call, const oxide_tile_stub *s) {
    oxide_value *ops[8];
    oxide_attr attrs[4];
    size_t nops = 0, nattrs = 0;
    oxide_type *rt = NULL, *elem_of_tensor = NULL;
    oxide_status st = OXIDE_OK;
    for (unsigned i = 0; s->args[i] && !st; i++) {
        LLVMValueRef a = LLVMGetOperand(call, i);
        char c = s->args[i];
        if (c == 'h' || c == 's') {
            st = operand(L, b, call, a, c == 'h', &ops[nops++]);
            continue;
        }
        if (c == 'y') {
            st = tile_type(L, call, a, &rt);
            continue;
        }
        bool is_fp = c == 'p' || c == 'v';
        if (is_fp ? !LLVMIsAConstantFP(a) : !LLVMIsAConstantInt(a))
            return refuse(L, call,
                          c == 'v'   ? "Tile::full takes a constant%s; for a value computed at run time use Tile::splat"
                          : c == 'T' ? "a tensor that is not one of the kernel's parameters%s: pass the parameter "
                                       "itself (tensors cannot be chosen at run time)"
                                     : "an attribute that is not a constant%s (an axis, a kind, a pad value)",
                          NULL);
        LLVMBool lost;
        double f = is_fp ? LLVMConstRealGetDouble(a, &lost) : 0;
        uint64_t u = is_fp ? 0 : LLVMConstIntGetZExtValue(a);
        switch (c) {
        case 'T':
            if (u >= L->d->nparams || L->d->params[u].kind != OXIDE_PARAM_TENSOR)
                return refuse(L, call, "a tensor index that names no tensor parameter%s", NULL);
            ops[nops++] = L->params[u];
            elem_of_tensor = L->params[u]->type->elem;
            break;
        case 'i': attrs[nattrs++] = (oxide_attr){.key = OXIDE_ATTR_IMM, .i = (int64_t)u}; break;
        case 'k': attrs[nattrs++] = (oxide_attr){.key = OXIDE_ATTR_KIND, .i = (int64_t)u}; break;
        case 'm': attrs[nattrs++] = (oxide_attr){.key = OXIDE_ATTR_PERM, .i = (int64_t)u}; break;
        case 'r': attrs[nattrs++] = (oxide_attr){.key = OXIDE_ATTR_PRED, .i = (int64_t)u}; break;
        case 'p':
        case 'v': {
            /* an integer element takes the value as an integer */
            oxide_attr at = {.key = c == 'p' ? OXIDE_ATTR_PAD : OXIDE_ATTR_VALUE, .f = f, .i = (int64_t)f};
            attrs[nattrs++] = at;
            break;
        }
        default: return refuse(L, call, "internal: unknown stub letter in %s", s->name);
        }
    }
    if (st)
        return st;
    /* the element a pad or value is given for: the tensor's (load) or the result's (full) */
    oxide_type *elem = elem_of_tensor ? elem_of_tensor : rt ? rt->elem : NULL;
    for (size_t i = 0; i < nattrs; i++)
        if ((attrs[i].key == OXIDE_ATTR_PAD || attrs[i].key == OXIDE_ATTR_VALUE) && elem &&
            !oxide__type_is_float(elem) && elem->kind != OXIDE_TYPE_F8E4M3 && elem->kind != OXIDE_TYPE_F8E5M2)
            attrs[i].f = 0;
    if (s->result == 'e' || s->result == 's')
        rt = NULL;
    else if (s->result == 'x' && !(rt = scalar_type(L->ctx, LLVMTypeOf(call))))
        return refuse(L, call, "internal: %s returns a type tile kernels do not have", s->name);
    oxide_value *res = NULL;
    st = built(L, call, oxide_build_op(b, s->op, ops, nops, rt, attrs, nattrs, s->result == '-' ? NULL : &res));
    if (!st && res && !vm_put(&L->vals, call, res))
        st = oom();
    return st;
}

/* LLVM intrinsics with an oxide row, and those that mean nothing here. */
static const struct {
    const char *prefix;
    oxide_op op; /* OXIDE_OP_COUNT_: dropped */
} intrinsics[] = {
    {"llvm.smin.", OXIDE_OP_SMIN},        {"llvm.smax.", OXIDE_OP_SMAX},
    {"llvm.umin.", OXIDE_OP_UMIN},        {"llvm.umax.", OXIDE_OP_UMAX},
    {"llvm.fma.", OXIDE_OP_FMA},          {"llvm.fmuladd.", OXIDE_OP_FMA},
    {"llvm.sqrt.", OXIDE_OP_SQRT},        {"llvm.fabs.", OXIDE_OP_FABS},
    {"llvm.minnum.", OXIDE_OP_FMIN},      {"llvm.maxnum.", OXIDE_OP_FMAX},
    {"llvm.floor.", OXIDE_OP_FLOOR},      {"llvm.ceil.", OXIDE_OP_CEIL},
    {"llvm.exp.", OXIDE_OP_EXP},          {"llvm.exp2.", OXIDE_OP_EXP2},
    {"llvm.log.", OXIDE_OP_LOG},          {"llvm.log2.", OXIDE_OP_LOG2},
    {"llvm.lifetime.", OXIDE_OP_COUNT_},  {"llvm.assume", OXIDE_OP_COUNT_},
    {"llvm.dbg.", OXIDE_OP_COUNT_},       {"llvm.experimental.noalias", OXIDE_OP_COUNT_},
    {"llvm.sideeffect", OXIDE_OP_COUNT_},
};

static oxide_status lift_call(lift *L, oxide_block *b, LLVMValueRef call) {
    const oxide_tile_stub *s = stub_of(call);
    if (s)
        return lift_stub(L, b, call, s);
    LLVMValueRef callee = LLVMGetCalledValue(call);
    size_t n = 0;
    const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &n) : "";
    for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++) {
        if (!oxide__starts(name, intrinsics[i].prefix))
            continue;
        if (intrinsics[i].op == OXIDE_OP_COUNT_)
            return OXIDE_OK;
        unsigned nargs = (unsigned)LLVMGetNumArgOperands(call);
        oxide_value *ops[3];
        if (nargs > 3)
            break;
        for (unsigned j = 0; j < nargs; j++) {
            oxide_status st = operand(L, b, call, LLVMGetOperand(call, j), false, &ops[j]);
            if (st)
                return st;
        }
        oxide_value *res;
        oxide_status st = built(L, call, oxide_build_op(b, intrinsics[i].op, ops, nargs, NULL, NULL, 0, &res));
        return st ? st : vm_put(&L->vals, call, res) ? OXIDE_OK : oom();
    }
    char rb[512];
    const char *rust =
        callee && LLVMIsAFunction(callee) ? oxide__rust_name(callee, rb, sizeof rb) : "a function pointer";
    return refuse(L, call,
                  "calls %s, which stays a call (recursive, or not in the bitcode): a tile kernel is inlined whole; "
                  "call only cuda-tile's functions and your own non-recursive ones",
                  rust);
}

static oxide_op binary_op(LLVMOpcode o) {
    switch (o) {
    case LLVMAdd:
    case LLVMFAdd: return OXIDE_OP_ADD;
    case LLVMSub:
    case LLVMFSub: return OXIDE_OP_SUB;
    case LLVMMul:
    case LLVMFMul: return OXIDE_OP_MUL;
    case LLVMSDiv: return OXIDE_OP_SDIV;
    case LLVMUDiv: return OXIDE_OP_UDIV;
    case LLVMSRem: return OXIDE_OP_SREM;
    case LLVMURem: return OXIDE_OP_UREM;
    case LLVMFDiv: return OXIDE_OP_FDIV;
    case LLVMFRem: return OXIDE_OP_FREM;
    case LLVMAnd: return OXIDE_OP_AND;
    case LLVMOr: return OXIDE_OP_OR;
    case LLVMXor: return OXIDE_OP_XOR;
    case LLVMShl: return OXIDE_OP_SHL;
    case LLVMLShr: return OXIDE_OP_LSHR;
    case LLVMAShr: return OXIDE_OP_ASHR;
    case LLVMTrunc: return OXIDE_OP_TRUNC;
    case LLVMZExt: return OXIDE_OP_ZEXT;
    case LLVMSExt: return OXIDE_OP_SEXT;
    case LLVMFPTrunc: return OXIDE_OP_FPTRUNC;
    case LLVMFPExt: return OXIDE_OP_FPEXT;
    case LLVMFPToUI: return OXIDE_OP_FPTOUI;
    case LLVMFPToSI: return OXIDE_OP_FPTOSI;
    case LLVMUIToFP: return OXIDE_OP_UITOFP;
    case LLVMSIToFP: return OXIDE_OP_SITOFP;
    case LLVMBitCast: return OXIDE_OP_BITCAST;
    case LLVMFNeg: return OXIDE_OP_NEG;
    case LLVMSelect: return OXIDE_OP_SELECT;
    default: return OXIDE_OP_COUNT_;
    }
}

static oxide_pred int_pred(LLVMIntPredicate ip) {
    static const oxide_pred p[] = {
        [LLVMIntEQ] = OXIDE_PRED_EQ,   [LLVMIntNE] = OXIDE_PRED_NE,   [LLVMIntUGT] = OXIDE_PRED_UGT,
        [LLVMIntUGE] = OXIDE_PRED_UGE, [LLVMIntULT] = OXIDE_PRED_ULT, [LLVMIntULE] = OXIDE_PRED_ULE,
        [LLVMIntSGT] = OXIDE_PRED_SGT, [LLVMIntSGE] = OXIDE_PRED_SGE, [LLVMIntSLT] = OXIDE_PRED_SLT,
        [LLVMIntSLE] = OXIDE_PRED_SLE};
    return p[ip];
}

static oxide_pred pred_of(LLVMValueRef i) {
    if (LLVMIsAICmpInst(i))
        return int_pred(LLVMGetICmpPredicate(i));
    static const oxide_pred f[] = {
        [LLVMRealOEQ] = OXIDE_PRED_OEQ,  [LLVMRealOGT] = OXIDE_PRED_OGT,  [LLVMRealOGE] = OXIDE_PRED_OGE,
        [LLVMRealOLT] = OXIDE_PRED_OLT,  [LLVMRealOLE] = OXIDE_PRED_OLE,  [LLVMRealONE] = OXIDE_PRED_ONE,
        [LLVMRealORD] = OXIDE_PRED_ORD,  [LLVMRealUNO] = OXIDE_PRED_UNO,  [LLVMRealUEQ] = OXIDE_PRED_UEQ,
        [LLVMRealUGT] = OXIDE_PRED_FUGT, [LLVMRealUGE] = OXIDE_PRED_FUGE, [LLVMRealULT] = OXIDE_PRED_FULT,
        [LLVMRealULE] = OXIDE_PRED_FULE, [LLVMRealUNE] = OXIDE_PRED_UNE};
    LLVMRealPredicate rp = LLVMGetFCmpPredicate(i);
    return rp < sizeof f / sizeof f[0] ? f[rp] : OXIDE_PRED_OEQ;
}

/* `if c { a } else { b }` on tiles, which the host optimiser makes a select on a scalar: the IR's
 * select takes an i1 tile, so the condition is splatted to one. */
static oxide_status lift_tile_select(lift *L, oxide_block *b, LLVMValueRef i) {
    oxide_type *tt = tile_of(L, i), *i1 = NULL, *ct = NULL;
    oxide_value *ops[3], *res;
    oxide_status st = operand(L, b, i, LLVMGetOperand(i, 0), false, &ops[0]);
    for (unsigned j = 1; j < 3 && !st; j++)
        st = operand(L, b, i, LLVMGetOperand(i, j), true, &ops[j]);
    if (!st && !(st = oxide_type_scalar(L->ctx, OXIDE_TYPE_I1, &i1)))
        st = oxide_type_tile(L->ctx, i1, tt->rank, tt->shape, &ct);
    if (!st)
        st = built(L, i, oxide_build_op(b, OXIDE_OP_TILE_SPLAT, ops, 1, ct, NULL, 0, &ops[0]));
    if (!st)
        st = built(L, i, oxide_build_op(b, OXIDE_OP_SELECT, ops, 3, NULL, NULL, 0, &res));
    return st ? st : vm_put(&L->vals, i, res) ? OXIDE_OK : oom();
}

static oxide_status lift_inst(lift *L, oxide_block *b, LLVMValueRef i) {
    if (LLVMIsACallInst(i))
        return lift_call(L, b, i);
    if (LLVMIsAPHINode(i))
        return OXIDE_OK; /* a block parameter */
    if (LLVMIsAFreezeInst(i)) {
        oxide_value *v;
        oxide_status st = operand(L, b, i, LLVMGetOperand(i, 0), tile_of(L, i) != NULL, &v);
        return st ? st : vm_put(&L->vals, i, v) ? OXIDE_OK : oom();
    }
    if (LLVMIsAStoreInst(i) || LLVMIsALoadInst(i) || LLVMIsAAllocaInst(i) || LLVMIsAGetElementPtrInst(i) ||
        LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i)) {
        if (LLVMIsAStoreInst(i) && tile_of(L, LLVMGetOperand(i, 0)))
            return refuse(L, i,
                          "a tile stored to memory%s: keep tiles in local variables (not arrays, structs or "
                          "references), and write results with TensorMut::store",
                          NULL);
        return refuse(L, i,
                      "reads or writes memory%s: a tile kernel reaches memory only through its tensors "
                      "(Tile::load, TensorMut::store); keep values in local variables, not arrays or references",
                      NULL);
    }
    if (LLVMIsASelectInst(i) && tile_of(L, i))
        return lift_tile_select(L, b, i);
    oxide_op op = LLVMIsAICmpInst(i)   ? OXIDE_OP_ICMP
                  : LLVMIsAFCmpInst(i) ? OXIDE_OP_FCMP
                                       : binary_op(LLVMGetInstructionOpcode(i));
    if (op == OXIDE_OP_COUNT_) {
        char *text = LLVMPrintValueToString(i);
        char shown[96];
        snprintf(shown, sizeof shown, "%s", text ? text : "?");
        LLVMDisposeMessage(text);
        return refuse(L, i,
                      "an instruction tile kernels do not have (`%s`): only scalar arithmetic, comparisons, "
                      "casts and control flow lift beside the tile ops",
                      shown);
    }
    unsigned n = (unsigned)LLVMGetNumOperands(i);
    oxide_value *ops[3];
    for (unsigned j = 0; j < n && j < 3; j++) {
        oxide_status st = operand(L, b, i, LLVMGetOperand(i, j), false, &ops[j]);
        if (st)
            return st;
    }
    bool is_cast = op >= OXIDE_OP_TRUNC && op <= OXIDE_OP_BITCAST;
    oxide_type *rt = is_cast ? scalar_type(L->ctx, LLVMTypeOf(i)) : NULL;
    if (is_cast && !rt)
        return refuse(L, i, "a cast to a type tile kernels do not have%s (pointers, vectors, i128)", NULL);
    oxide_attr pa = {.key = OXIDE_ATTR_PRED, .i = (op == OXIDE_OP_ICMP || op == OXIDE_OP_FCMP) ? pred_of(i) : 0};
    bool cmp = op == OXIDE_OP_ICMP || op == OXIDE_OP_FCMP;
    oxide_value *res;
    oxide_status st = built(L, i, oxide_build_op(b, op, ops, n, rt, cmp ? &pa : NULL, cmp ? 1 : 0, &res));
    return st ? st : vm_put(&L->vals, i, res) ? OXIDE_OK : oom();
}

/* The arguments a branch from `from` passes to `to`: the incoming values of to's phis. */
static oxide_status edge_args(lift *L, oxide_block *b, LLVMValueRef term, LLVMBasicBlockRef from, LLVMBasicBlockRef to,
                              oxide_value **args, size_t *n) {
    *n = 0;
    for (LLVMValueRef p = LLVMGetFirstInstruction(to); p && LLVMIsAPHINode(p); p = LLVMGetNextInstruction(p)) {
        if (*n == 64)
            return refuse(L, term, "a block with more than 64 phis%s", NULL);
        LLVMValueRef in = NULL;
        for (unsigned j = 0; j < LLVMCountIncoming(p) && !in; j++)
            if (LLVMGetIncomingBlock(p, j) == from)
                in = LLVMGetIncomingValue(p, j);
        oxide_type *tt = tile_of(L, p);
        oxide_status st;
        if (in && tt && is_undef(in))
            st = oxide_build_op(b, OXIDE_OP_TILE_FULL, NULL, 0, tt, NULL, 0, &args[*n]);
        else
            st = in ? operand(L, b, term, in, tt != NULL, &args[*n])
                    : refuse(L, term, "internal: a phi without %s", "its edge");
        if (st)
            return st;
        (*n)++;
    }
    return OXIDE_OK;
}

static oxide_status lift_term(lift *L, oxide_block *b, LLVMBasicBlockRef bb) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    oxide_value *a[64], *c[64], *cond = NULL;
    size_t na = 0, nc = 0;
    oxide_status st = OXIDE_OK;
    switch (t ? LLVMGetInstructionOpcode(t) : LLVMUnreachable) {
    case LLVMRet: return built(L, t, oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    case LLVMBr:
        if (!LLVMIsConditional(t)) {
            LLVMBasicBlockRef to = LLVMGetSuccessor(t, 0);
            if (!(st = edge_args(L, b, t, bb, to, a, &na)))
                st = built(L, t, oxide_build_br(b, vm_get(&L->blocks, to), a, na));
            return st;
        }
        if ((st = operand(L, b, t, LLVMGetCondition(t), false, &cond)) ||
            (st = edge_args(L, b, t, bb, LLVMGetSuccessor(t, 0), a, &na)) ||
            (st = edge_args(L, b, t, bb, LLVMGetSuccessor(t, 1), c, &nc)))
            return st;
        return built(L, t,
                     oxide_build_cond_br(b, cond, vm_get(&L->blocks, LLVMGetSuccessor(t, 0)), a, na,
                                         vm_get(&L->blocks, LLVMGetSuccessor(t, 1)), c, nc));
    case LLVMSwitch: return refuse(L, t, "a `match` or switch on a number%s: write it as if/else", NULL);
    default:
        return refuse(L, t,
                      "code that always panics or never ends%s (an unreachable point): the tile kernel must "
                      "return normally",
                      NULL);
    }
}

/* ---- blocks ---- */

static oxide_status order_blocks(lift *L) {
    unsigned nb = LLVMCountBasicBlocks(L->fn);
    LLVMBasicBlockRef *stack = malloc(nb * sizeof *stack), *post = malloc(nb * sizeof *post);
    unsigned *next = calloc(nb, sizeof *next);
    vmap seen = {0};
    if (!stack || !post || !next) {
        free(stack), free(post), free(next);
        return oom();
    }
    /* iterative DFS; a block's index in `stack` gives its successor cursor */
    size_t sp = 0, np = 0;
    bool ok = true;
    stack[sp++] = LLVMGetEntryBasicBlock(L->fn);
    ok &= vm_put(&seen, stack[0], (void *)1);
    while (sp && ok) {
        LLVMBasicBlockRef bb = stack[sp - 1];
        LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
        unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
        if (next[sp - 1] < ns) {
            LLVMBasicBlockRef s = LLVMGetSuccessor(t, next[sp - 1]++);
            if (!vm_get(&seen, s)) {
                ok &= vm_put(&seen, s, (void *)1);
                next[sp] = 0;
                stack[sp++] = s;
            }
        } else {
            post[np++] = bb;
            sp--;
        }
    }
    vm_free(&seen);
    free(stack), free(next);
    if (!ok) {
        free(post);
        return oom();
    }
    for (size_t i = 0; i < np / 2; i++) {
        LLVMBasicBlockRef x = post[i];
        post[i] = post[np - 1 - i], post[np - 1 - i] = x;
    }
    L->rpo = post, L->nrpo = np;
    return OXIDE_OK;
}

/* One oxide block per reachable LLVM block, its phis as parameters. */
static oxide_status make_blocks(lift *L) {
    for (size_t i = 0; i < L->nrpo; i++) {
        oxide_type *pt[64];
        LLVMValueRef phis[64];
        size_t np = 0;
        for (LLVMValueRef p = LLVMGetFirstInstruction(L->rpo[i]); p && LLVMIsAPHINode(p);
             p = LLVMGetNextInstruction(p)) {
            if (np == 64)
                return refuse(L, p, "a block with more than 64 phis%s", NULL);
            pt[np] = tile_of(L, p);
            if (!pt[np] && !(pt[np] = scalar_type(L->ctx, LLVMTypeOf(p))))
                return refuse(L, p, "a variable of a type tile kernels do not have%s (pointers, arrays, structs)",
                              NULL);
            phis[np++] = p;
        }
        oxide_block *b;
        oxide_value *pv[64];
        /* a rotated loop: its phis are the parameters of its new head, where branches to it go */
        tile_loop *lp = oxide__tile_loop_of(L, L->rpo[i]);
        oxide_status st = oxide_function_add_block(L->k, pt, np, &b, pv);
        if (!st && lp)
            lp->head = b, st = oxide_function_add_block(L->k, NULL, 0, &lp->block, NULL);
        if (st)
            return st;
        if (!vm_put(&L->blocks, L->rpo[i], b))
            return oom();
        for (size_t j = 0; j < np; j++)
            if (!vm_put(&L->vals, phis[j], pv[j]))
                return oom();
    }
    return OXIDE_OK;
}

/* A tile stored anywhere is the reason the body touches memory: say so before anything else. */
static oxide_status find_stored_tiles(lift *L) {
    for (size_t b = 0; b < L->nrpo; b++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(L->rpo[b]); i; i = LLVMGetNextInstruction(i))
            if (LLVMIsAStoreInst(i) && tile_of(L, LLVMGetOperand(i, 0)))
                return refuse(L, i,
                              "a tile stored to memory%s: keep tiles in local variables (not arrays, structs or "
                              "references), and write results with TensorMut::store",
                              NULL);
    return OXIDE_OK;
}

/* The head of a rotated loop: `iv PRED ub`, to the body or out with the values the loop carries
 * (the head's parameters) or ones from outside it. */
static oxide_status lift_head(lift *L, tile_loop *lp) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(lp->body);
    const oxide_block *h = lp->head;
    oxide_value *ops[2] = {h->params.items[lp->iv], NULL}, *c, *args[64];
    oxide_status st = operand(L, lp->head, term, lp->ub, false, &ops[1]);
    oxide_attr pa = {.key = OXIDE_ATTR_PRED, .i = int_pred(lp->pred)};
    if (!st)
        st = built(L, term, oxide_build_op(lp->head, OXIDE_OP_ICMP, ops, 2, NULL, &pa, 1, &c));
    size_t n = 0;
    for (LLVMValueRef p = LLVMGetFirstInstruction(lp->exit); p && LLVMIsAPHINode(p) && !st;
         p = LLVMGetNextInstruction(p), n++) {
        LLVMValueRef x = oxide__tile_incoming(p, lp->body);
        int j =
            LLVMIsAInstruction(x) && LLVMGetInstructionParent(x) == lp->body ? oxide__tile_carried(lp->body, x) : -1;
        if (n == 64)
            st = refuse(L, term, "a block with more than 64 phis%s", NULL);
        else if (j >= 0)
            args[n] = h->params.items[j];
        else if (tile_of(L, p) && is_undef(x))
            st = oxide_build_op(lp->head, OXIDE_OP_TILE_FULL, NULL, 0, tile_of(L, p), NULL, 0, &args[n]);
        else
            st = operand(L, lp->head, term, x, tile_of(L, p) != NULL, &args[n]);
    }
    if (!st)
        st =
            built(L, term, oxide_build_cond_br(lp->head, c, lp->block, NULL, 0, vm_get(&L->blocks, lp->exit), args, n));
    return st;
}

/* Block bb into its oxide block; a rotated loop's head first, its body branching back to it,
 * and its bottom test dropped where nothing else uses it. */
static oxide_status lift_block(lift *L, LLVMBasicBlockRef bb) {
    tile_loop *lp = oxide__tile_loop_of(L, bb);
    oxide_block *b = lp ? lp->block : vm_get(&L->blocks, bb);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    oxide_status st = lp ? lift_head(L, lp) : OXIDE_OK;
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in && in != term && !st; in = LLVMGetNextInstruction(in)) {
        LLVMUseRef u = lp && in == lp->test ? LLVMGetFirstUse(in) : NULL;
        if (!u || LLVMGetNextUse(u))
            st = lift_inst(L, b, in);
    }
    if (st || !lp)
        return st ? st : lift_term(L, b, bb);
    oxide_value *a[64];
    size_t na = 0;
    if (!(st = edge_args(L, b, term, bb, bb, a, &na)))
        st = built(L, term, oxide_build_br(b, lp->head, a, na));
    return st;
}

oxide_status oxide__tile_lift_body(lift *L) {
    oxide_status st = order_blocks(L);
    if (!st)
        st = infer_tiles(L);
    if (!st)
        st = find_stored_tiles(L);
    if (!st)
        st = oxide__tile_find_loops(L);
    if (!st)
        st = make_blocks(L);
    for (size_t i = 0; i < L->nrpo && !st; i++)
        st = lift_block(L, L->rpo[i]);
    return st;
}
