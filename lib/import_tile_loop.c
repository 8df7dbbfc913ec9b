/* Loops of a tile kernel from Rust, given back the shape the tile compiler pipelines.
 *
 * rustc's optimiser rotates loops (LLVM's loop-rotate): `while i < n { body; i += step }` reaches
 * the lift as a guard `if 0 < n` and a block that ends `i += step; if i < n { again }`, the test
 * at the bottom. The tile compiler issues the loads of a counted loop ahead of the iteration that
 * uses them (lib/tile/emit_wgmma.c, find_loop) only where a head block tests the induction
 * variable and the body branches back to it: the shape text IR and Python kernels have, and
 * Rust dev builds too. So the lift (lib/import_tile_lift.c) gives such a loop a head again, where
 * that is the same program:
 *
 *   - the loop is one block B whose bottom test is `next PRED ub` (either operand order, either
 *     branch sense), next = iv + step for a phi iv of B and a constant step > 0, ub from outside;
 *   - B is entered only from P, whose branch goes to B or to B's exit E on a guard that is that
 *     same test on iv's first value (so the head's first test is the guard's);
 *   - what E receives from B is a value B carries to its next iteration, or one from outside it
 *     (at the head, the carried values are the head's parameters).
 *
 * Then B's phis become the parameters of a new head H, which tests `iv PRED ub` and goes to B or
 * E; B branches back to H; P's branch into B goes to H. Anything else is lifted as it is (and
 * runs, unpipelined). */
#include "import_tile.h"

static LLVMIntPredicate swapped(LLVMIntPredicate p) {
    switch (p) {
    case LLVMIntSLT: return LLVMIntSGT;
    case LLVMIntSGT: return LLVMIntSLT;
    case LLVMIntSLE: return LLVMIntSGE;
    case LLVMIntSGE: return LLVMIntSLE;
    case LLVMIntULT: return LLVMIntUGT;
    case LLVMIntUGT: return LLVMIntULT;
    case LLVMIntULE: return LLVMIntUGE;
    case LLVMIntUGE: return LLVMIntULE;
    default: return p; /* eq, ne */
    }
}

static LLVMIntPredicate inverse(LLVMIntPredicate p) {
    switch (p) {
    case LLVMIntEQ: return LLVMIntNE;
    case LLVMIntNE: return LLVMIntEQ;
    case LLVMIntSLT: return LLVMIntSGE;
    case LLVMIntSGE: return LLVMIntSLT;
    case LLVMIntSLE: return LLVMIntSGT;
    case LLVMIntSGT: return LLVMIntSLE;
    case LLVMIntULT: return LLVMIntUGE;
    case LLVMIntUGE: return LLVMIntULT;
    case LLVMIntULE: return LLVMIntUGT;
    default: return LLVMIntULE; /* ugt */
    }
}

/* The same value: one value, or integer constants of one type and value (the guard and the phi
 * may hold two copies of a 0). */
static bool same(LLVMValueRef a, LLVMValueRef b) {
    return a == b || (a && b && LLVMIsAConstantInt(a) && LLVMIsAConstantInt(b) && LLVMTypeOf(a) == LLVMTypeOf(b) &&
                      LLVMConstIntGetSExtValue(a) == LLVMConstIntGetSExtValue(b));
}

static bool in_block(LLVMValueRef v, LLVMBasicBlockRef b) {
    return v && LLVMIsAInstruction(v) && LLVMGetInstructionParent(v) == b;
}

/* What phi receives from block from, or NULL. */
LLVMValueRef oxide__tile_incoming(LLVMValueRef phi, LLVMBasicBlockRef from) {
    for (unsigned j = 0; j < LLVMCountIncoming(phi); j++)
        if (LLVMGetIncomingBlock(phi, j) == from)
            return LLVMGetIncomingValue(phi, j);
    return NULL;
}

/* Whether c (negated where neg) is `x pred y`. */
static bool is_test(LLVMValueRef c, bool neg, LLVMValueRef x, LLVMValueRef y, LLVMIntPredicate pred) {
    if (!c || !LLVMIsAICmpInst(c))
        return false;
    LLVMIntPredicate p = neg ? inverse(LLVMGetICmpPredicate(c)) : LLVMGetICmpPredicate(c);
    LLVMValueRef a = LLVMGetOperand(c, 0), b = LLVMGetOperand(c, 1);
    return (p == pred && same(a, x) && same(b, y)) || (p == swapped(pred) && same(a, y) && same(b, x));
}

/* The number of B's phi whose value for the next iteration is x, or -1. */
int oxide__tile_carried(LLVMBasicBlockRef b, LLVMValueRef x) {
    int i = 0;
    for (LLVMValueRef p = LLVMGetFirstInstruction(b); p && LLVMIsAPHINode(p); p = LLVMGetNextInstruction(p), i++)
        if (oxide__tile_incoming(p, b) == x)
            return i;
    return -1;
}

/* Whether everything E receives from B is carried by B (a back-edge value) or from outside B. */
static bool exits_carried(LLVMBasicBlockRef b, LLVMBasicBlockRef e) {
    for (LLVMValueRef p = LLVMGetFirstInstruction(e); p && LLVMIsAPHINode(p); p = LLVMGetNextInstruction(p)) {
        LLVMValueRef x = oxide__tile_incoming(p, b);
        if (!x || (in_block(x, b) && oxide__tile_carried(b, x) < 0))
            return false;
    }
    return true;
}

/* B as a rotated loop whose bottom test compares operand k of its test (next) with the other (ub). */
static bool rotated_on(LLVMBasicBlockRef b, LLVMBasicBlockRef pre, LLVMBasicBlockRef exit, unsigned k, tile_loop *out) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(b), pt = LLVMGetBasicBlockTerminator(pre);
    LLVMValueRef c = LLVMGetCondition(t), next = LLVMGetOperand(c, k), ub = LLVMGetOperand(c, 1 - k);
    if (!in_block(next, b) || LLVMGetInstructionOpcode(next) != LLVMAdd || in_block(ub, b))
        return false;
    int iv = oxide__tile_carried(b, next);
    LLVMValueRef phi = LLVMGetFirstInstruction(b);
    for (int i = 0; i < iv; i++)
        phi = LLVMGetNextInstruction(phi);
    LLVMValueRef o0 = LLVMGetOperand(next, 0), o1 = LLVMGetOperand(next, 1);
    LLVMValueRef step = iv < 0 ? NULL : o0 == phi ? o1 : o1 == phi ? o0 : NULL;
    if (!step || !LLVMIsAConstantInt(step) || LLVMConstIntGetSExtValue(step) <= 0)
        return false;
    /* the loop goes on while next PRED ub */
    LLVMIntPredicate pred = k ? swapped(LLVMGetICmpPredicate(c)) : LLVMGetICmpPredicate(c);
    if (LLVMGetSuccessor(t, 0) != b)
        pred = inverse(pred);
    if (!is_test(LLVMGetCondition(pt), LLVMGetSuccessor(pt, 0) != b, oxide__tile_incoming(phi, pre), ub, pred))
        return false;
    *out = (tile_loop){.body = b, .exit = exit, .test = c, .ub = ub, .iv = (unsigned)iv, .pred = pred};
    return true;
}

/* B as a rotated loop, into out. */
static bool rotated(LLVMBasicBlockRef b, tile_loop *out) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(b), first = LLVMGetFirstInstruction(b);
    if (!t || LLVMGetInstructionOpcode(t) != LLVMBr || !LLVMIsConditional(t) || !LLVMIsAICmpInst(LLVMGetCondition(t)))
        return false;
    LLVMBasicBlockRef s0 = LLVMGetSuccessor(t, 0), s1 = LLVMGetSuccessor(t, 1);
    if ((s0 == b) == (s1 == b) || !first || !LLVMIsAPHINode(first) || LLVMCountIncoming(first) != 2)
        return false;
    LLVMBasicBlockRef exit = s0 == b ? s1 : s0;
    LLVMBasicBlockRef pre = LLVMGetIncomingBlock(first, LLVMGetIncomingBlock(first, 0) == b ? 1 : 0);
    LLVMValueRef pt = LLVMGetBasicBlockTerminator(pre);
    if (pre == b || !pt || LLVMGetInstructionOpcode(pt) != LLVMBr || !LLVMIsConditional(pt))
        return false;
    LLVMBasicBlockRef p0 = LLVMGetSuccessor(pt, 0), p1 = LLVMGetSuccessor(pt, 1);
    if (!((p0 == b && p1 == exit) || (p1 == b && p0 == exit)) || !exits_carried(b, exit))
        return false;
    return rotated_on(b, pre, exit, 0, out) || rotated_on(b, pre, exit, 1, out);
}

oxide_status oxide__tile_find_loops(lift *L) {
    for (size_t i = 0; i < L->nrpo; i++) {
        tile_loop lp;
        if (!rotated(L->rpo[i], &lp))
            continue;
        if (!L->loops && !(L->loops = calloc(L->nrpo, sizeof *L->loops)))
            return oxide__tile_oom();
        L->loops[L->nloops++] = lp;
    }
    return OXIDE_OK;
}

tile_loop *oxide__tile_loop_of(const lift *L, LLVMBasicBlockRef b) {
    for (size_t i = 0; i < L->nloops; i++)
        if (L->loops[i].body == b)
            return &L->loops[i];
    return NULL;
}
