/* Verifier tests: every rule of lib/verify.c has a module that breaks exactly that rule (and the
 * verifier must answer OXIDE_ERROR_VERIFY with a message naming the problem), and valid modules
 * must pass.
 *
 * Most broken modules are built through the public builder, which accepts them because the
 * rule is not local to one call (dominance, terminators, ret types, SM, address spaces...).
 * Where the builder itself refuses a mistake, the test checks that refusal (the "checks at the
 * boundary" contract: a status and a message naming the op), and then makes the same mistake
 * by editing the built IR through lib/ir.h's structs -- as a buggy pass or front end would --
 * to prove the verifier catches it too. No internal function is called: liboxide hides them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "check.h"
#include "oxide.h"
#include "oxide_examples.h"

static oxide_context *C;
static oxide_options *SM80, *SM90;
static oxide_type *tvoid, *ti1, *ti8, *ti16, *ti32, *ti64, *ti128, *tf16, *tbf16, *tf32, *tf64;
static oxide_type *tptr, *tgptr, *tsptr, *tcptr, *tlptr, *tpptr, *tv4f32, *tv4i32, *tv2f32, *tv2f64, *tarr2f32;

/* ---- building helpers: a failing builder call is a test failure at the caller's line ---- */

static oxide_value *build(int line, oxide_block *b, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt,
                          const oxide_attr *attrs, size_t nattrs) {
    oxide_value *r = NULL;
    oxide_status st = oxide_build_op(b, op, ops, n, rt, attrs, nattrs, &r);
    if (st) {
        check_failed++;
        printf("FAIL %s:%d: building '%s': %s: %s\n", __FILE__, line, oxide_op_name(op), oxide_status_name(st),
               oxide_last_error());
    }
    return r;
}

#define VALS(...) ((oxide_value *const[]){__VA_ARGS__})
#define NVALS(...) (sizeof((oxide_value *const[]){__VA_ARGS__}) / sizeof(oxide_value *))
/* op with operands, result type (or NULL) */
#define OP(b, op, rt, ...) build(__LINE__, b, op, VALS(__VA_ARGS__), NVALS(__VA_ARGS__), rt, NULL, 0)
#define OP0(b, op, rt) build(__LINE__, b, op, NULL, 0, rt, NULL, 0)
/* op with one attribute */
#define OPA(b, op, rt, attr, ...) build(__LINE__, b, op, VALS(__VA_ARGS__), NVALS(__VA_ARGS__), rt, &(attr), 1)
#define OPA0(b, op, rt, attr) build(__LINE__, b, op, NULL, 0, rt, &(attr), 1)

#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        if (st_) {                                                                                                     \
            check_failed++;                                                                                            \
            printf("FAIL %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, oxide_status_name(st_), oxide_last_error()); \
        }                                                                                                              \
    } while (0)

static oxide_value *ci32(oxide_block *b, int64_t v) {
    oxide_value *r = NULL;
    MUST(oxide_build_const_int(b, ti32, v, &r));
    return r;
}
static oxide_value *ci64(oxide_block *b, int64_t v) {
    oxide_value *r = NULL;
    MUST(oxide_build_const_int(b, ti64, v, &r));
    return r;
}
static oxide_value *cf32(oxide_block *b, double v) {
    oxide_value *r = NULL;
    MUST(oxide_build_const_float(b, tf32, v, &r));
    return r;
}
static oxide_value *cflt(oxide_block *b, oxide_type *t, double v) {
    oxide_value *r = NULL;
    MUST(oxide_build_const_float(b, t, v, &r));
    return r;
}
static void ret(oxide_block *b) { OP0(b, OXIDE_OP_RET, NULL); }

static oxide_attr attr_i(oxide_attr_key k, int64_t i) { return (oxide_attr){.key = k, .i = i}; }
static oxide_attr attr_s(oxide_attr_key k, const char *s) { return (oxide_attr){.key = k, .s = s}; }
static oxide_attr attr_t(oxide_attr_key k, oxide_type *t) { return (oxide_attr){.key = k, .t = t}; }

/* A module "m" with a kernel "k"; the entry block comes from entry(). */
typedef struct fx {
    oxide_module *m;
    oxide_function *f;
    oxide_block *e;
} fx;

static fx kernel_begin(void) {
    fx x = {0};
    MUST(oxide_module_create(C, "m", &x.m));
    MUST(oxide_module_add_kernel(x.m, "k", &x.f));
    return x;
}
static oxide_block *block(oxide_function *f) {
    oxide_block *b = NULL;
    MUST(oxide_function_add_block(f, NULL, 0, &b, NULL));
    return b;
}
static oxide_block *block1(oxide_function *f, oxide_type *t, oxide_value **param) {
    oxide_block *b = NULL;
    MUST(oxide_function_add_block(f, &t, 1, &b, param));
    return b;
}
static fx kernel(void) {
    fx x = kernel_begin();
    x.e = block(x.f);
    return x;
}

/* Pointers in each space, built in block b of a kernel (adds globals named after the space). */
static oxide_value *alloca_ptr(oxide_block *b, oxide_type *elem) {
    oxide_attr a = attr_t(OXIDE_ATTR_ELEM, elem);
    return OPA0(b, OXIDE_OP_ALLOCA, NULL, a);
}
static oxide_value *global_ptr(oxide_module *m, oxide_block *b, const char *name, oxide_addrspace as, oxide_type *rt) {
    oxide_global *g;
    MUST(oxide_module_add_global(m, name, tarr2f32, as, 0, NULL, 0, &g));
    oxide_attr a = attr_s(OXIDE_ATTR_SYM, name);
    return OPA0(b, OXIDE_OP_GLOBAL_ADDR, rt, a);
}
static oxide_value *param_ptr(oxide_block *b) { return OP(b, OXIDE_OP_INTTOPTR, tpptr, ci64(b, 0)); }
static oxide_value *local_ptr(oxide_block *b) { return OP(b, OXIDE_OP_ADDRSPACECAST, tlptr, alloca_ptr(b, tf32)); }

/* ---- verdicts ---- */

static void expect_ok_at(int line, oxide_module *m, const oxide_options *o, const char *what) {
    oxide_status st = oxide_module_verify(m, o);
    if (st == OXIDE_OK) {
        check_passed++;
        return;
    }
    check_failed++;
    printf("FAIL %s:%d: %s: expected OK, got %s: %s\n", __FILE__, line, what, oxide_status_name(st),
           oxide_last_error());
}

static void expect_verify_at(int line, oxide_module *m, const oxide_options *o, const char *phrase) {
    oxide_status st = oxide_module_verify(m, o);
    const char *msg = oxide_last_error();
    if (st == OXIDE_ERROR_VERIFY && strstr(msg, phrase) && !strncmp(msg, "verify: ", 8)) {
        if (getenv("OXIDE_TEST_VERBOSE"))
            printf("line %d: %s\n", line, msg);
        check_passed++;
        return;
    }
    check_failed++;
    printf("FAIL %s:%d: expected VERIFY with \"%s\", got %s: %s\n", __FILE__, line, phrase, oxide_status_name(st),
           st ? msg : "");
}

/* The builder refuses at the boundary: status st and a message mentioning phrase (the op). */
static void expect_build_at(int line, oxide_status got, oxide_status want, const char *phrase) {
    const char *msg = oxide_last_error();
    if (got == want && strstr(msg, phrase)) {
        check_passed++;
        return;
    }
    check_failed++;
    printf("FAIL %s:%d: expected builder %s with \"%s\", got %s: %s\n", __FILE__, line, oxide_status_name(want), phrase,
           oxide_status_name(got), got ? msg : "");
}

#define EXPECT_OK(m, o, what) expect_ok_at(__LINE__, m, o, what)
#define EXPECT_VERIFY(m, o, phrase) expect_verify_at(__LINE__, m, o, phrase)
#define EXPECT_BUILD(call, want, phrase) expect_build_at(__LINE__, (call), want, phrase)

static oxide_inst *last_inst(oxide_block *b) { return b->insts.items[b->insts.len - 1]; }
static oxide_inst *inst_at(oxide_block *b, uint32_t i) { return b->insts.items[i]; }

/* ======================================================================================
 * valid modules
 * ====================================================================================== */

/* out[i] = a[i] + b[i] -- the shape of every simple kernel. */
static oxide_module *build_vecadd(void) {
    fx x = kernel_begin();
    oxide_value *a, *alen, *b, *blen, *out, *olen;
    MUST(oxide_kernel_add_slice_param(x.f, "a", OXIDE_SCALAR_F32, 0, &a, &alen));
    MUST(oxide_kernel_add_slice_param(x.f, "b", OXIDE_SCALAR_F32, 0, &b, &blen));
    MUST(oxide_kernel_add_slice_param(x.f, "out", OXIDE_SCALAR_F32, 1, &out, &olen));
    MUST(oxide_kernel_set_launch_bounds(x.f, 256, 2));
    x.e = block(x.f);
    oxide_block *body = block(x.f), *done = block(x.f);
    oxide_value *tid = OP0(x.e, OXIDE_OP_TID_X, NULL);
    oxide_value *bid = OP0(x.e, OXIDE_OP_CTAID_X, NULL);
    oxide_value *bdim = OP0(x.e, OXIDE_OP_NTID_X, NULL);
    oxide_value *base =
        OP(x.e, OXIDE_OP_MUL, NULL, OP(x.e, OXIDE_OP_ZEXT, ti64, bid), OP(x.e, OXIDE_OP_ZEXT, ti64, bdim));
    oxide_value *i = OP(x.e, OXIDE_OP_ADD, NULL, base, OP(x.e, OXIDE_OP_ZEXT, ti64, tid));
    MUST(oxide_value_set_name(i, "i"));
    oxide_attr ult = attr_i(OXIDE_ATTR_PRED, OXIDE_PRED_ULT);
    oxide_value *in = OPA(x.e, OXIDE_OP_ICMP, NULL, ult, i, olen);
    MUST(oxide_build_cond_br(x.e, in, body, NULL, 0, done, NULL, 0));
    oxide_attr ef = attr_t(OXIDE_ATTR_ELEM, tf32);
    oxide_value *pa = OPA(body, OXIDE_OP_OFFSET, NULL, ef, a, i);
    oxide_value *pb = OPA(body, OXIDE_OP_OFFSET, NULL, ef, b, i);
    oxide_value *po = OPA(body, OXIDE_OP_OFFSET, NULL, ef, out, i);
    oxide_attr al = attr_i(OXIDE_ATTR_ALIGN, 4);
    oxide_value *va = OPA(body, OXIDE_OP_LOAD, tf32, al, pa);
    oxide_value *vb = OPA(body, OXIDE_OP_LOAD, tf32, al, pb);
    oxide_value *sum = OP(body, OXIDE_OP_ADD, NULL, va, vb);
    OPA(body, OXIDE_OP_STORE, NULL, al, sum, po);
    MUST(oxide_build_br(body, done, NULL, 0));
    ret(done);
    return x.m;
}

static void test_valid_vecadd(void) {
    oxide_module *m = build_vecadd();
    EXPECT_OK(m, NULL, "vecadd, default target");
    EXPECT_OK(m, SM80, "vecadd, sm_80");
    EXPECT_OK(m, SM90, "vecadd, sm_90a");
    oxide_module_destroy(m);
}

/* Loops with block parameters, a device function and a call, switch, shared and constant
 * globals, atomics, barriers, warp ops, fences, math, printf and assert. */
static void test_valid_everything(void) {
    oxide_module *m;
    MUST(oxide_module_create(C, "all", &m));
    /* float twice(float x) { return x + x; } */
    oxide_function *twice;
    MUST(oxide_module_add_function(m, "twice", tf32, &twice));
    oxide_value *xp;
    MUST(oxide_function_add_param(twice, "x", tf32, &xp));
    oxide_block *tb = block(twice);
    oxide_value *tx = OP(tb, OXIDE_OP_ADD, NULL, xp, xp);
    OP(tb, OXIDE_OP_RET, NULL, tx);
    /* void nothing(void) {} */
    oxide_function *nothing;
    MUST(oxide_module_add_function(m, "nothing", tvoid, &nothing));
    ret(block(nothing));

    oxide_global *g;
    MUST(oxide_module_add_global(m, "tile", tarr2f32, OXIDE_AS_SHARED, 16, NULL, 0, &g));
    float init[2] = {1.0f, 2.0f};
    MUST(oxide_module_add_global(m, "coef", tarr2f32, OXIDE_AS_CONSTANT, 0, init, sizeof init, &g));

    oxide_function *k;
    MUST(oxide_module_add_kernel(m, "k", &k));
    oxide_value *data, *dlen, *n, *bytes;
    MUST(oxide_kernel_add_slice_param(k, "data", OXIDE_SCALAR_F32, 1, &data, &dlen));
    MUST(oxide_kernel_add_scalar_param(k, "n", OXIDE_SCALAR_U32, &n));
    MUST(oxide_kernel_add_bytes_param(k, "cap", 24, 8, &bytes));
    MUST(oxide_kernel_set_dyn_smem(k, 1024));
    oxide_block *e = block(k);
    oxide_value *iv, *accv;
    oxide_type *lt[2] = {ti32, tf32};
    oxide_value *lp[2];
    oxide_block *head;
    MUST(oxide_function_add_block(k, lt, 2, &head, lp));
    iv = lp[0];
    accv = lp[1];
    oxide_block *body = block(k), *exit = block(k), *c0 = block(k), *c1 = block(k), *join = block(k);
    oxide_value *zero = ci32(e, 0);
    oxide_value *fz = cf32(e, 0.0);
    MUST(oxide_build_br(e, head, VALS(zero, fz), 2));
    /* head: if i < n goto body else exit */
    oxide_attr ult = attr_i(OXIDE_ATTR_PRED, OXIDE_PRED_ULT);
    oxide_value *more = OPA(head, OXIDE_OP_ICMP, NULL, ult, iv, n);
    MUST(oxide_build_cond_br(head, more, body, NULL, 0, exit, NULL, 0));
    /* body: acc = twice(acc) + sqrt(data[i]); i += 1 */
    oxide_attr ef = attr_t(OXIDE_ATTR_ELEM, tf32);
    oxide_value *p = OPA(body, OXIDE_OP_OFFSET, NULL, ef, data, iv);
    oxide_value *v = OP(body, OXIDE_OP_LOAD, tf32, p);
    oxide_attr sym = attr_s(OXIDE_ATTR_SYM, "twice");
    oxide_value *t = OPA(body, OXIDE_OP_CALL, tf32, sym, accv);
    oxide_attr sym2 = attr_s(OXIDE_ATTR_SYM, "nothing");
    build(__LINE__, body, OXIDE_OP_CALL, NULL, 0, NULL, &sym2, 1);
    oxide_value *s = OP(body, OXIDE_OP_SQRT, NULL, v);
    oxide_value *e2 = OP(body, OXIDE_OP_EXP, NULL, s);
    oxide_value *ap = OP(body, OXIDE_OP_SIN_APPROX, NULL, e2);
    oxide_value *acc2 = OP(body, OXIDE_OP_FMA, NULL, t, ap, s);
    oxide_value *i2 = OP(body, OXIDE_OP_ADD, NULL, iv, ci32(body, 1));
    MUST(oxide_build_br(body, head, VALS(i2, acc2), 2));
    /* exit: shared/constant memory, atomics, warp ops, switch */
    oxide_value *sp = global_ptr(m, exit, "tile2", OXIDE_AS_SHARED, tsptr);
    oxide_attr csym = attr_s(OXIDE_ATTR_SYM, "coef");
    oxide_value *cp = OPA0(exit, OXIDE_OP_GLOBAL_ADDR, tcptr, csym);
    oxide_value *cv = OP(exit, OXIDE_OP_LOAD, tf32, cp);
    OP(exit, OXIDE_OP_STORE, NULL, cv, sp);
    oxide_attr bar = attr_i(OXIDE_ATTR_IMM, 0);
    OPA0(exit, OXIDE_OP_BARRIER, NULL, bar);
    OP(exit, OXIDE_OP_ATOMIC_ADD, NULL, sp, accv);
    OP(exit, OXIDE_OP_ATOMIC_ADD, NULL, data, accv);
    OP(exit, OXIDE_OP_ATOMIC_ADD, NULL, data, cflt(exit, tf64, 1.0));
    oxide_value *ip = OP(exit, OXIDE_OP_BITCAST, tsptr, sp);
    OP(exit, OXIDE_OP_ATOMIC_MAX, NULL, ip, iv);
    OP(exit, OXIDE_OP_ATOMIC_CAS, NULL, ip, iv, zero);
    oxide_attr acq = attr_i(OXIDE_ATTR_ORDER, OXIDE_ORDER_ACQUIRE);
    OPA(exit, OXIDE_OP_ATOMIC_LOAD, ti32, acq, ip);
    oxide_attr rel = attr_i(OXIDE_ATTR_ORDER, OXIDE_ORDER_RELEASE);
    OPA(exit, OXIDE_OP_ATOMIC_STORE, NULL, rel, iv, ip);
    oxide_attr acqrel = attr_i(OXIDE_ATTR_ORDER, OXIDE_ORDER_ACQ_REL);
    OPA0(exit, OXIDE_OP_FENCE, NULL, acqrel);
    oxide_value *sh = OP(exit, OXIDE_OP_SHFL_DOWN, NULL, accv, ci32(exit, 16));
    oxide_value *d64 = OP(exit, OXIDE_OP_FPEXT, tf64, sh);
    OP(exit, OXIDE_OP_SHFL_XOR, NULL, d64, ci32(exit, 1));
    OP(exit, OXIDE_OP_REDUX_ADD, NULL, iv);
    OP(exit, OXIDE_OP_MATCH_ANY, NULL, OP(exit, OXIDE_OP_ZEXT, ti64, iv));
    oxide_value *dyn = OP0(exit, OXIDE_OP_DYN_SMEM, tsptr);
    OP(exit, OXIDE_OP_LOAD, tv4f32, dyn);
    OP(exit, OXIDE_OP_LOAD, ti8, bytes);
    oxide_value *vec = OP(exit, OXIDE_OP_LOAD, tv4f32, dyn);
    oxide_attr i2a = attr_i(OXIDE_ATTR_IMM, 2);
    oxide_value *el = OPA(exit, OXIDE_OP_EXTRACT, tf32, i2a, vec);
    OPA(exit, OXIDE_OP_INSERT, NULL, i2a, vec, el);
    OP(exit, OXIDE_OP_SITOFP, tv4f32, OP(exit, OXIDE_OP_LOAD, tv4i32, dyn));
    OP(exit, OXIDE_OP_ADDRSPACECAST, tptr, sp);
    OP(exit, OXIDE_OP_PTRTOINT, ti64, sp);
    OP(exit, OXIDE_OP_TRUNC, ti16, iv);
    OP(exit, OXIDE_OP_FPTOSI, ti64, accv);
    OP(exit, OXIDE_OP_BITCAST, ti32, accv);
    oxide_attr fmt = attr_s(OXIDE_ATTR_STR, "i=%d acc=%f p=%p\n");
    OPA(exit, OXIDE_OP_PRINTF, NULL, fmt, iv, d64, sp);
    oxide_attr msg = attr_s(OXIDE_ATTR_STR, "n is positive");
    OPA(exit, OXIDE_OP_ASSERT, NULL, msg, more);
    int64_t cases[2] = {1, 7};
    oxide_block *dests[2] = {c0, c1};
    MUST(oxide_build_switch(exit, iv, join, cases, dests, 2));
    MUST(oxide_build_br(c0, join, NULL, 0));
    OP0(c1, OXIDE_OP_TRAP, NULL);
    ret(join);
    EXPECT_OK(m, SM80, "loops, calls, memory, atomics, warp ops at sm_80");
    EXPECT_OK(m, NULL, "the same at the default target");
    oxide_module_destroy(m);
}

/* Every example kernel verifies at the oldest target it is meant for, and at the default. */
static void test_valid_examples(void) {
    CHECK(oxide_example_kernel_count >= 8, "expected the example kernels, found %zu", oxide_example_kernel_count);
    for (const oxide_example_kernel *k = oxide_example_kernels; k->name; k++) {
        oxide_module *m = NULL;
        oxide_status st = oxide_example_module(C, k->name, &m);
        CHECK(st == OXIDE_OK, "building example %s: %s", k->name, oxide_last_error());
        if (st)
            continue;
        EXPECT_OK(m, k->min_sm >= 90 ? SM90 : SM80, k->name);
        EXPECT_OK(m, NULL, k->name);
        if (k->min_sm >= 90)
            EXPECT_VERIFY(m, SM80, "needs sm_90 or newer; target is sm_80");
        oxide_module_destroy(m);
    }
}

static void test_valid_cluster(void) {
    fx x = kernel();
    MUST(oxide_kernel_set_cluster(x.f, 2, 2, 2));
    OP0(x.e, OXIDE_OP_CLUSTER_SYNC, NULL);
    oxide_value *r = OP0(x.e, OXIDE_OP_CLUSTER_CTARANK, NULL);
    oxide_value *sp = global_ptr(x.m, x.e, "buf", OXIDE_AS_SHARED, tsptr);
    OP(x.e, OXIDE_OP_MAP_SHARED, NULL, sp, r);
    oxide_attr cl = attr_i(OXIDE_ATTR_SCOPE, OXIDE_SCOPE_CLUSTER);
    OPA(x.e, OXIDE_OP_ATOMIC_ADD, NULL, cl, sp, cf32(x.e, 1.0));
    ret(x.e);
    EXPECT_OK(x.m, SM90, "cluster kernel at sm_90a");
    oxide_module_destroy(x.m);
}

/* Rule 2's stated policy: uses in unreachable blocks are checked for local order only. */
static void test_unreachable_policy(void) {
    fx x = kernel();
    oxide_block *b1 = block(x.f), *b2 = block(x.f), *dead = block(x.f);
    oxide_value *c = OP(x.e, OXIDE_OP_ICMP, NULL, ci32(x.e, 0), ci32(x.e, 1));
    MUST(oxide_build_cond_br(x.e, c, b1, NULL, 0, b2, NULL, 0));
    oxide_value *v1 = ci32(b1, 5); /* ^1 does not dominate ^3 */
    ret(b1);
    ret(b2);
    OP(dead, OXIDE_OP_ADD, NULL, v1, v1);
    ret(dead);
    EXPECT_OK(x.m, NULL, "unreachable block using a value of a non-dominating block");
    oxide_module_destroy(x.m);

    /* an unreachable block's value never reaches a reachable use */
    x = kernel();
    oxide_block *r = block(x.f), *u = block(x.f);
    MUST(oxide_build_br(x.e, r, NULL, 0));
    oxide_value *dv = ci32(u, 1);
    MUST(oxide_build_br(u, r, NULL, 0));
    OP(r, OXIDE_OP_ADD, NULL, dv, dv);
    ret(r);
    EXPECT_VERIFY(x.m, NULL,
                  "kernel @k ^1 #0 'add': operand 0 (the result of ^2 #0 'const') is defined in ^2, "
                  "which does not dominate ^1");
    oxide_module_destroy(x.m);

    /* inside an unreachable block, a use before the definition is still an error */
    x = kernel();
    oxide_block *d2 = block(x.f);
    ret(x.e);
    oxide_value *a = ci32(d2, 1);
    oxide_value *s = OP(d2, OXIDE_OP_ADD, NULL, a, a);
    OP(d2, OXIDE_OP_MUL, NULL, s, s);
    ret(d2);
    oxide_inst *t = d2->insts.items[1];
    d2->insts.items[1] = d2->insts.items[2];
    d2->insts.items[2] = t;
    EXPECT_VERIFY(x.m, NULL, "is used before its definition at #2 of the same block");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 1: types
 * ====================================================================================== */

static void test_types_recheck(void) {
    /* builder boundary */
    fx x = kernel();
    oxide_value *f = cf32(x.e, 1.0), *i = ci32(x.e, 1), *r = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_ADD, VALS(f, i), 2, NULL, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH,
                 "'add'");
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_LOAD, VALS(f), 1, tf32, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH,
                 "'load'");
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_REDUX_ADD, VALS(ci64(x.e, 1)), 1, NULL, NULL, 0, &r),
                 OXIDE_ERROR_TYPE_MISMATCH, "'redux.add'");
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_ASSERT, VALS(i), 1, NULL, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH,
                 "'assert'");
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_LOAD, VALS(alloca_ptr(x.e, tf32)), 1, NULL, NULL, 0, &r),
                 OXIDE_ERROR_TYPE_MISMATCH, "'load'");
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_CONST, NULL, 0, tptr, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH, "'const'");
    oxide_value *s = OP(x.e, OXIDE_OP_ADD, NULL, f, f);
    oxide_value *p = alloca_ptr(x.e, tf32);
    oxide_value *l = OP(x.e, OXIDE_OP_LOAD, tf32, p);
    oxide_value *cmp = OP(x.e, OXIDE_OP_FCMP, NULL, f, f);
    OP(x.e, OXIDE_OP_ASSERT, NULL, cmp);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "before mutation");

    /* the same mistakes, made by editing IR after it was built */
    oxide_inst *add = s->def;
    add->operands[1] = i;
    EXPECT_VERIFY(x.m, NULL, "'add': operand 1 has type i32, expected f32");
    add->operands[1] = f;
    l->def->operands[0] = f;
    EXPECT_VERIFY(x.m, NULL, "'load': operand 0 must be a pointer, got f32");
    l->def->operands[0] = p;
    s->type = ti32; /* add's result no longer its operands' type */
    EXPECT_VERIFY(x.m, NULL, "'add': produces f32, but result type i32 was given");
    s->type = tf32;
    l->type = tvoid;
    EXPECT_VERIFY(x.m, NULL, "'load': needs an explicit result type");
    l->type = tf32;
    cmp->def->operands[0] = i;
    EXPECT_VERIFY(x.m, NULL, "'fcmp'");
    cmp->def->operands[0] = f;
    oxide_inst *as = inst_at(x.e, x.e->insts.len - 2);
    as->operands[0] = i;
    EXPECT_VERIFY(x.m, NULL, "'assert': operand 0 must be i1, got i32");
    as->operands[0] = cmp;
    f->type = tptr;
    EXPECT_VERIFY(x.m, NULL, "#0 'const': a constant must be an integer or float scalar, got ptr");
    f->type = tf32;
    i->def->ivalue = 1ll << 40;
    EXPECT_VERIFY(x.m, NULL, "'const': value 1099511627776 does not fit in i32");
    i->def->ivalue = 1;
    EXPECT_OK(x.m, NULL, "after undoing every mutation");
    oxide_module_destroy(x.m);
}

typedef struct cast_case {
    oxide_op op;
    oxide_type **from, **to;
    const char *phrase; /* NULL: valid */
} cast_case;

static void test_casts(void) {
    const cast_case cases[] = {
        {OXIDE_OP_TRUNC, &ti64, &ti32, NULL},
        {OXIDE_OP_TRUNC, &ti32, &ti64, "'trunc' needs an integer to a narrower integer"},
        {OXIDE_OP_TRUNC, &ti32, &ti32, "narrower integer"},
        {OXIDE_OP_ZEXT, &ti1, &ti32, NULL},
        {OXIDE_OP_ZEXT, &ti64, &ti32, "'zext' needs an integer to a wider integer"},
        {OXIDE_OP_SEXT, &tf32, &ti64, "'sext' needs an integer to a wider integer"},
        {OXIDE_OP_FPTRUNC, &tf64, &tbf16, NULL},
        {OXIDE_OP_FPTRUNC, &tf32, &tf64, "'fptrunc' needs a float to a narrower float"},
        {OXIDE_OP_FPTRUNC, &tf16, &tbf16, "narrower float"},
        {OXIDE_OP_FPEXT, &tf16, &tf32, NULL},
        {OXIDE_OP_FPEXT, &tf64, &tf32, "'fpext' needs a float to a wider float"},
        {OXIDE_OP_FPTOUI, &tf16, &ti8, NULL},
        {OXIDE_OP_FPTOUI, &ti32, &ti32, "'fptoui' needs a float to an integer"},
        {OXIDE_OP_FPTOSI, &tf32, &ti128, "to i128 is not supported"},
        {OXIDE_OP_UITOFP, &ti1, &tf16, NULL},
        {OXIDE_OP_UITOFP, &tf32, &tf32, "'uitofp' needs an integer to a float"},
        {OXIDE_OP_SITOFP, &ti128, &tf32, "from i128 is not supported"},
        {OXIDE_OP_PTRTOINT, &tgptr, &ti64, NULL},
        {OXIDE_OP_PTRTOINT, &tf32, &ti64, "'ptrtoint' needs a pointer to an integer"},
        {OXIDE_OP_INTTOPTR, &ti64, &tsptr, NULL},
        {OXIDE_OP_INTTOPTR, &ti64, &tf32, "'inttoptr' needs an integer to a pointer"},
        {OXIDE_OP_BITCAST, &tf32, &ti32, NULL},
        {OXIDE_OP_BITCAST, &tv2f32, &ti64, NULL},
        {OXIDE_OP_BITCAST, &ti32, &ti64, "sizes differ"},
        {OXIDE_OP_BITCAST, &tgptr, &ti64, "use ptrtoint"},
        {OXIDE_OP_BITCAST, &tarr2f32, &ti64, "non-aggregate"},
        {OXIDE_OP_ADDRSPACECAST, &tgptr, &tptr, NULL},
        {OXIDE_OP_ADDRSPACECAST, &tptr, &tsptr, NULL},
        {OXIDE_OP_ADDRSPACECAST, &tgptr, &tsptr, "needs one side to be the generic space"},
        {OXIDE_OP_ADDRSPACECAST, &tgptr, &tgptr, "needs two different address spaces"},
        {OXIDE_OP_SITOFP, &tv4i32, &tv4f32, NULL},
        {OXIDE_OP_SITOFP, &tv4i32, &tv2f32, "a vector casts to a vector of the same length"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fx x = kernel();
        /* a value of the source type: loaded from local memory, so any type works */
        oxide_value *src = OP(x.e, OXIDE_OP_LOAD, *cases[c].from, alloca_ptr(x.e, tf64));
        oxide_value *r = NULL;
        oxide_status st = oxide_build_op(x.e, cases[c].op, &src, 1, *cases[c].to, NULL, 0, &r);
        CHECK(st == OXIDE_OK, "cast case %zu: the builder leaves cast rules to the verifier, got %s: %s", c,
              oxide_status_name(st), oxide_last_error());
        ret(x.e);
        if (cases[c].phrase)
            EXPECT_VERIFY(x.m, NULL, cases[c].phrase);
        else
            EXPECT_OK(x.m, NULL, oxide_op_name(cases[c].op));
        oxide_module_destroy(x.m);
    }
}

static void test_aggregates_and_memory_results(void) {
    /* extract/insert bounds and element types */
    fx x = kernel();
    oxide_value *vec = OP(x.e, OXIDE_OP_LOAD, tv4f32, alloca_ptr(x.e, tv4f32));
    oxide_attr i4 = attr_i(OXIDE_ATTR_IMM, 4);
    OPA(x.e, OXIDE_OP_EXTRACT, tf32, i4, vec);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'extract': cannot extract element 4 from vec<4 x f32>: index out of bounds");
    oxide_module_destroy(x.m);

    x = kernel();
    vec = OP(x.e, OXIDE_OP_LOAD, tv4f32, alloca_ptr(x.e, tv4f32));
    oxide_attr i1a = attr_i(OXIDE_ATTR_IMM, 1);
    OPA(x.e, OXIDE_OP_EXTRACT, ti32, i1a, vec);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "element 1 of vec<4 x f32> is f32, but the result is i32");
    oxide_module_destroy(x.m);

    x = kernel();
    oxide_type *fields[2] = {ti32, tf64};
    oxide_type *st;
    MUST(oxide_type_struct(C, fields, 2, &st));
    oxide_value *sv = OP(x.e, OXIDE_OP_LOAD, st, alloca_ptr(x.e, st));
    OPA(x.e, OXIDE_OP_EXTRACT, tf64, i1a, sv);
    OPA(x.e, OXIDE_OP_INSERT, NULL, i1a, sv, ci32(x.e, 3));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'insert': element 1 of struct<i32, f64> is f64, but operand 1 is i32");
    oxide_module_destroy(x.m);

    x = kernel();
    OPA(x.e, OXIDE_OP_EXTRACT, ti32, i1a, ci32(x.e, 3));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "not a vector, array or struct");
    oxide_module_destroy(x.m);

    /* global.addr: result in the global's space; dyn_smem: ptr.shared */
    x = kernel();
    global_ptr(x.m, x.e, "sh", OXIDE_AS_SHARED, tgptr);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL,
                  "'global.addr': the address of @sh (a shared global) is a ptr.shared, but the result is "
                  "ptr.global");
    oxide_module_destroy(x.m);

    x = kernel();
    OP0(x.e, OXIDE_OP_DYN_SMEM, tgptr);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'dyn_smem': dynamic shared memory is addressed by a ptr.shared");
    oxide_module_destroy(x.m);

    /* offset: a sized element, an integer index */
    x = kernel();
    oxide_value *p = alloca_ptr(x.e, tf32);
    oxide_attr ef = attr_t(OXIDE_ATTR_ELEM, tf32);
    oxide_value *r = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_OFFSET, VALS(p, ci32(x.e, 1)), 2, NULL,
                                (oxide_attr[]){attr_t(OXIDE_ATTR_ELEM, tvoid)}, 1, &r),
                 OXIDE_ERROR_INVALID_ARGUMENT, "'offset'");
    oxide_value *o = OPA(x.e, OXIDE_OP_OFFSET, NULL, ef, p, ci32(x.e, 1));
    OPA(x.e, OXIDE_OP_OFFSET, NULL, ef, p, cf32(x.e, 1.0));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'offset': operand 1: the index must be an integer of up to 64 bits, got f32");
    o->def->elem = tvoid;
    EXPECT_VERIFY(x.m, NULL, "offset needs a sized element type (attribute elem), got void");
    oxide_module_destroy(x.m);

    /* alloca: a sized element */
    x = kernel();
    oxide_value *a = alloca_ptr(x.e, tf32);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "alloca");
    a->def->elem = tvoid;
    EXPECT_VERIFY(x.m, NULL, "'alloca': alloca needs a sized element type");
    a->def->elem = tf32;
    a->type = tlptr;
    EXPECT_VERIFY(x.m, NULL, "'alloca': produces ptr, but result type ptr.local was given");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 2: dominance
 * ====================================================================================== */

static void test_dominance(void) {
    /* a diamond: a value of one arm used at the join */
    fx x = kernel();
    oxide_block *l = block(x.f), *r = block(x.f), *j = block(x.f);
    oxide_value *c = OP(x.e, OXIDE_OP_ICMP, NULL, ci32(x.e, 0), ci32(x.e, 1));
    MUST(oxide_build_cond_br(x.e, c, l, NULL, 0, r, NULL, 0));
    oxide_value *lv = ci32(l, 7);
    MUST(oxide_value_set_name(lv, "seven"));
    MUST(oxide_build_br(l, j, NULL, 0));
    MUST(oxide_build_br(r, j, NULL, 0));
    OP(j, OXIDE_OP_ADD, NULL, lv, lv);
    ret(j);
    EXPECT_VERIFY(x.m, NULL,
                  "verify: kernel @k ^3 #0 'add': operand 0 (%seven) is defined in ^1, which does not "
                  "dominate ^3");
    oxide_module_destroy(x.m);

    /* the same diamond passing the value as a block argument is fine */
    x = kernel();
    l = block(x.f);
    r = block(x.f);
    oxide_value *jp;
    j = block1(x.f, ti32, &jp);
    c = OP(x.e, OXIDE_OP_ICMP, NULL, ci32(x.e, 0), ci32(x.e, 1));
    MUST(oxide_build_cond_br(x.e, c, l, NULL, 0, r, NULL, 0));
    lv = ci32(l, 7);
    MUST(oxide_build_br(l, j, &lv, 1));
    oxide_value *rv = ci32(r, 8);
    MUST(oxide_build_br(r, j, &rv, 1));
    OP(j, OXIDE_OP_ADD, NULL, jp, ci32(j, 1));
    ret(j);
    EXPECT_OK(x.m, NULL, "diamond with a block parameter");
    /* ...but an arm's argument may not come from the other arm */
    inst_at(r, 1)->succ[0].args[0] = lv;
    EXPECT_VERIFY(x.m, NULL,
                  "^2 #1 'br': successor 0 argument 0 (the result of ^1 #0 'const') is defined in ^1, "
                  "which does not dominate ^2");
    oxide_module_destroy(x.m);

    /* a loop: the body's value is not available in the header */
    x = kernel();
    oxide_value *hp;
    oxide_block *h = block1(x.f, ti32, &hp), *body = block(x.f), *exit = block(x.f);
    MUST(oxide_build_br(x.e, h, VALS(ci32(x.e, 0)), 1));
    oxide_value *lt = OP(h, OXIDE_OP_ICMP, NULL, hp, ci32(h, 10));
    MUST(oxide_build_cond_br(h, lt, body, NULL, 0, exit, NULL, 0));
    oxide_value *next = OP(body, OXIDE_OP_ADD, NULL, hp, ci32(body, 1));
    MUST(oxide_build_br(body, h, &next, 1));
    ret(exit);
    EXPECT_OK(x.m, NULL, "counted loop");
    ((oxide_inst *)h->insts.items[1])->operands[0] = next;
    EXPECT_VERIFY(x.m, NULL,
                  "^1 #1 'icmp': operand 0 (the result of ^2 #1 'add') is defined in ^2, which does not "
                  "dominate ^1");
    oxide_module_destroy(x.m);

    /* a block parameter used outside the blocks its block dominates */
    x = kernel();
    oxide_value *bp;
    oxide_block *b1 = block1(x.f, ti32, &bp), *b2 = block(x.f);
    c = OP(x.e, OXIDE_OP_ICMP, NULL, ci32(x.e, 0), ci32(x.e, 1));
    MUST(oxide_build_cond_br(x.e, c, b1, VALS(ci32(x.e, 3)), 1, b2, NULL, 0));
    ret(b1);
    OP(b2, OXIDE_OP_NEG, NULL, bp);
    ret(b2);
    EXPECT_VERIFY(x.m, NULL,
                  "^2 #0 'neg': operand 0 (parameter 0 of ^1) is a parameter of ^1, which does not "
                  "dominate ^2");
    oxide_module_destroy(x.m);

    /* use before definition in one block, and an instruction using its own result */
    x = kernel();
    oxide_value *a = ci32(x.e, 1);
    oxide_value *s = OP(x.e, OXIDE_OP_ADD, NULL, a, a);
    ret(x.e);
    s->def->operands[1] = s;
    EXPECT_VERIFY(x.m, NULL, "^0 #1 'add': operand 1 is this instruction's own result");
    s->def->operands[1] = a;
    x.e->insts.items[0] = s->def;
    x.e->insts.items[1] = a->def;
    EXPECT_VERIFY(x.m, NULL, "^0 #0 'add': operand 0 (the result of ^0 #1 'const') is used before its definition");
    oxide_module_destroy(x.m);

    /* values of another function */
    x = kernel();
    oxide_function *g;
    MUST(oxide_module_add_function(x.m, "g", tvoid, &g));
    oxide_value *gp;
    MUST(oxide_function_add_param(g, "q", ti32, &gp));
    ret(block(g));
    oxide_value *mine = ci32(x.e, 1), *out = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_ADD, VALS(mine, gp), 2, NULL, NULL, 0, &out),
                 OXIDE_ERROR_INVALID_ARGUMENT, "'add': operand 1 belongs to another function");
    s = OP(x.e, OXIDE_OP_ADD, NULL, mine, mine);
    ret(x.e);
    s->def->operands[1] = gp;
    EXPECT_VERIFY(x.m, NULL, "'add': operand 1 (%q) belongs to another function");
    oxide_module_destroy(x.m);

    /* an instruction removed from its block while still used */
    x = kernel();
    a = ci32(x.e, 1);
    s = OP(x.e, OXIDE_OP_ADD, NULL, a, a);
    OP(x.e, OXIDE_OP_MUL, NULL, s, s);
    ret(x.e);
    x.e->insts.items[1] = x.e->insts.items[2];
    x.e->insts.items[2] = x.e->insts.items[3];
    x.e->insts.len--;
    EXPECT_VERIFY(x.m, NULL,
                  "^0 #1 'mul': operand 0 (the result of a detached 'add') is not defined by an "
                  "instruction of this function");
    oxide_module_destroy(x.m);

    /* a NULL operand */
    x = kernel();
    a = ci32(x.e, 1);
    s = OP(x.e, OXIDE_OP_ADD, NULL, a, a);
    ret(x.e);
    s->def->operands[0] = NULL;
    EXPECT_VERIFY(x.m, NULL, "'add': operand 0 is missing (NULL)");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 3: terminators and successors
 * ====================================================================================== */

static void test_terminators(void) {
    fx x = kernel();
    OP(x.e, OXIDE_OP_ADD, NULL, ci32(x.e, 1), ci32(x.e, 2));
    EXPECT_VERIFY(x.m, NULL, "verify: kernel @k ^0: the block does not end in a terminator (it ends in 'add')");
    oxide_module_destroy(x.m);

    x = kernel();
    oxide_block *b1 = block(x.f);
    (void)b1;
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "verify: kernel @k ^1: the block is empty");
    oxide_module_destroy(x.m);

    x = kernel_begin();
    EXPECT_VERIFY(x.m, NULL, "verify: kernel @k: the function has no blocks");
    oxide_module_destroy(x.m);

    /* nothing can follow a terminator: the builder says so, the verifier too */
    x = kernel();
    oxide_value *one = ci32(x.e, 1);
    ret(x.e);
    oxide_value *r = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_ADD, VALS(one, one), 2, NULL, NULL, 0, &r), OXIDE_ERROR_STATE,
                 "'add': block ^0 of @k already ends in a terminator");
    oxide_inst *t = x.e->insts.items[0];
    x.e->insts.items[0] = x.e->insts.items[1];
    x.e->insts.items[1] = t;
    EXPECT_VERIFY(x.m, NULL, "terminator 'ret' at #0 is not the last instruction (1 follow)");
    oxide_module_destroy(x.m);

    /* successor argument count and types */
    x = kernel();
    oxide_value *p;
    b1 = block1(x.f, ti32, &p);
    oxide_value *f = cf32(x.e, 1.0), *i = ci32(x.e, 1);
    EXPECT_BUILD(oxide_build_br(x.e, b1, NULL, 0), OXIDE_ERROR_TYPE_MISMATCH, "'br': block ^1 takes 1 argument");
    EXPECT_BUILD(oxide_build_br(x.e, b1, &f, 1), OXIDE_ERROR_TYPE_MISMATCH, "'br'");
    MUST(oxide_build_br(x.e, b1, &i, 1));
    ret(b1);
    EXPECT_OK(x.m, NULL, "br with one argument");
    oxide_inst *br = last_inst(x.e);
    br->succ[0].nargs = 0;
    EXPECT_VERIFY(x.m, NULL, "^0 #2 'br': successor 0 (^1) takes 1 argument, got 0");
    br->succ[0].nargs = 1;
    br->succ[0].args[0] = f;
    EXPECT_VERIFY(x.m, NULL, "^0 #2 'br': successor 0 (^1) argument 0 must be i32, got f32");
    br->succ[0].args[0] = i;
    /* successor in another function, and the entry block as a target */
    oxide_function *g;
    MUST(oxide_module_add_function(x.m, "g", tvoid, &g));
    oxide_block *g0 = block(g), *g1 = block(g);
    ret(g0);
    ret(g1);
    EXPECT_BUILD(oxide_build_br(b1, g1, NULL, 0), OXIDE_ERROR_STATE, "'br'"); /* b1 is already terminated */
    br->succ[0].block = g1;
    EXPECT_VERIFY(x.m, NULL, "'br': successor 0 is a block of another function");
    br->succ[0].block = x.e;
    EXPECT_VERIFY(x.m, NULL, "'br': successor 0 is the entry block ^0, which cannot be a branch target");
    br->succ[0].block = b1;
    br->nsucc = 0;
    EXPECT_VERIFY(x.m, NULL, "'br': needs 1 successor, has 0");
    br->nsucc = 1;
    EXPECT_OK(x.m, NULL, "after undoing");
    oxide_module_destroy(x.m);

    /* branching to the entry and entry parameters: the builder refuses both */
    x = kernel();
    oxide_block *e2 = block(x.f);
    EXPECT_BUILD(oxide_build_br(e2, x.e, NULL, 0), OXIDE_ERROR_INVALID_ARGUMENT, "'br': cannot branch to the entry");
    oxide_block *bad;
    oxide_type *pt = ti32;
    fx y = kernel_begin();
    EXPECT_BUILD(oxide_function_add_block(y.f, &pt, 1, &bad, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "entry block");
    oxide_module_destroy(y.m);
    oxide_value *bp;
    oxide_block *b2 = block1(x.f, ti32, &bp);
    ret(x.e);
    ret(e2);
    ret(b2);
    x.e->params = b2->params; /* the entry now lists b2's parameter */
    EXPECT_VERIFY(x.m, NULL, "^0: the entry block has 1 parameter; it must have none");
    oxide_module_destroy(x.m);

    /* switch: duplicate cases (the builder refuses; an edit slips one in) */
    x = kernel();
    oxide_block *d = block(x.f), *c1 = block(x.f), *c2 = block(x.f);
    oxide_value *sv = ci32(x.e, 3);
    int64_t dup[2] = {4, 4};
    oxide_block *dests[2] = {c1, c2};
    EXPECT_BUILD(oxide_build_switch(x.e, sv, d, dup, dests, 2), OXIDE_ERROR_INVALID_ARGUMENT,
                 "'switch': case 4 appears twice");
    int64_t ok[2] = {4, 5};
    MUST(oxide_build_switch(x.e, sv, d, ok, dests, 2));
    ret(d);
    ret(c1);
    ret(c2);
    EXPECT_OK(x.m, NULL, "switch");
    last_inst(x.e)->succ[2].case_value = 4;
    EXPECT_VERIFY(x.m, NULL, "'switch': case 4 appears twice");
    last_inst(x.e)->succ[2].case_value = 1ll << 33;
    EXPECT_VERIFY(x.m, NULL, "'switch': case 8589934592 does not fit in i32");
    oxide_module_destroy(x.m);

    /* a non-terminator with successors */
    x = kernel();
    oxide_block *t1 = block(x.f);
    MUST(oxide_build_br(x.e, t1, NULL, 0));
    oxide_value *a = ci32(t1, 1);
    ret(t1);
    a->def->succ = last_inst(x.e)->succ;
    a->def->nsucc = 1;
    EXPECT_VERIFY(x.m, NULL, "^1 #0 'const': not a terminator, but has successors");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 4: ret
 * ====================================================================================== */

static void test_ret(void) {
    fx x = kernel();
    OP(x.e, OXIDE_OP_RET, NULL, ci32(x.e, 0));
    EXPECT_VERIFY(x.m, NULL, "verify: kernel @k ^0 #1 'ret': a kernel returns nothing, but ret has 1 operand");
    oxide_module_destroy(x.m);

    oxide_module *m;
    MUST(oxide_module_create(C, "m", &m));
    oxide_function *f;
    MUST(oxide_module_add_function(m, "f", tf32, &f));
    oxide_block *b = block(f);
    ret(b);
    EXPECT_VERIFY(m, NULL, "verify: func @f ^0 #0 'ret': the function returns f32, but ret has 0 operands");
    oxide_module_destroy(m);

    MUST(oxide_module_create(C, "m", &m));
    MUST(oxide_module_add_function(m, "f", tf32, &f));
    b = block(f);
    OP(b, OXIDE_OP_RET, NULL, ci32(b, 0));
    EXPECT_VERIFY(m, NULL, "'ret': the function returns f32, but ret's operand is i32");
    oxide_module_destroy(m);

    MUST(oxide_module_create(C, "m", &m));
    MUST(oxide_module_add_function(m, "f", tf32, &f));
    b = block(f);
    oxide_value *one = cf32(b, 1);
    OP(b, OXIDE_OP_RET, NULL, one, one);
    EXPECT_VERIFY(m, NULL, "'ret': the function returns f32, but ret has 2 operands");
    oxide_module_destroy(m);

    MUST(oxide_module_create(C, "m", &m));
    MUST(oxide_module_add_function(m, "f", tvoid, &f));
    b = block(f);
    OP(b, OXIDE_OP_RET, NULL, ci32(b, 0));
    EXPECT_VERIFY(m, NULL, "'ret': the function returns void, but ret has 1 operand");
    oxide_module_destroy(m);
}

/* ======================================================================================
 * rule 5: address spaces
 * ====================================================================================== */

static void test_address_spaces(void) {
    /* loads are allowed from every space */
    fx x = kernel();
    OP(x.e, OXIDE_OP_LOAD, tf32, global_ptr(x.m, x.e, "c", OXIDE_AS_CONSTANT, tcptr));
    OP(x.e, OXIDE_OP_LOAD, tf32, param_ptr(x.e));
    oxide_value *lp = local_ptr(x.e);
    OP(x.e, OXIDE_OP_LOAD, tf32, lp);
    OP(x.e, OXIDE_OP_STORE, NULL, cf32(x.e, 1), lp);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "loads from constant, param and local; store to local");
    oxide_module_destroy(x.m);

    x = kernel();
    oxide_value *cp = global_ptr(x.m, x.e, "c", OXIDE_AS_CONSTANT, tcptr);
    OP(x.e, OXIDE_OP_STORE, NULL, cf32(x.e, 1), cp);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL,
                  "'store': operand 1: cannot store through a ptr.constant pointer (constant memory is "
                  "read-only)");
    oxide_module_destroy(x.m);

    x = kernel();
    OP(x.e, OXIDE_OP_STORE, NULL, cf32(x.e, 1), param_ptr(x.e));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "cannot store through a ptr.param pointer (param memory is read-only)");
    oxide_module_destroy(x.m);

    x = kernel();
    cp = global_ptr(x.m, x.e, "c", OXIDE_AS_CONSTANT, tcptr);
    OP(x.e, OXIDE_OP_ATOMIC_ADD, NULL, cp, cf32(x.e, 1));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL,
                  "'atomic.add': operand 0: atomics need a generic, global or shared pointer, got "
                  "ptr.constant");
    oxide_module_destroy(x.m);

    x = kernel();
    OP(x.e, OXIDE_OP_ATOMIC_EXCH, NULL, local_ptr(x.e), ci32(x.e, 1));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL,
                  "'atomic.exch': operand 0: atomics need a generic, global or shared pointer, got "
                  "ptr.local");
    oxide_module_destroy(x.m);

    x = kernel();
    OP(x.e, OXIDE_OP_ATOMIC_STORE, NULL, ci32(x.e, 1), param_ptr(x.e));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'atomic.store': operand 1: atomics need a generic, global or shared pointer");
    oxide_module_destroy(x.m);

    x = kernel();
    OP(x.e, OXIDE_OP_ATOMIC_LOAD, ti32, global_ptr(x.m, x.e, "c", OXIDE_AS_CONSTANT, tcptr));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'atomic.load': operand 0: atomics need a generic, global or shared pointer");
    oxide_module_destroy(x.m);

    /* module variables */
    oxide_module *m;
    MUST(oxide_module_create(C, "m", &m));
    oxide_global *g;
    float init[2] = {0, 0};
    EXPECT_BUILD(oxide_module_add_global(m, "s", tarr2f32, OXIDE_AS_SHARED, 0, init, sizeof init, &g),
                 OXIDE_ERROR_INVALID_ARGUMENT, "shared @s cannot have an initializer");
    EXPECT_BUILD(oxide_module_add_global(m, "l", tarr2f32, OXIDE_AS_LOCAL, 0, NULL, 0, &g),
                 OXIDE_ERROR_INVALID_ARGUMENT, "@l must live in global, shared or constant space");
    MUST(oxide_module_add_global(m, "s", tarr2f32, OXIDE_AS_SHARED, 0, NULL, 0, &g));
    EXPECT_OK(m, NULL, "a module with only a shared variable");
    g->init = (uint8_t *)init;
    g->init_size = sizeof init;
    EXPECT_VERIFY(m, NULL, "verify: global @s: shared memory cannot have an initializer");
    g->init = NULL;
    g->init_size = 0;
    g->as = OXIDE_AS_LOCAL;
    EXPECT_VERIFY(m, NULL, "global @s: module variables live in global, shared or constant space, not local");
    g->as = OXIDE_AS_GLOBAL;
    g->init = (uint8_t *)init;
    g->init_size = 4;
    EXPECT_VERIFY(m, NULL, "global @s: the initializer has 4 bytes, but array<2 x f32> has 8");
    g->init = NULL;
    g->init_size = 0;
    EXPECT_OK(m, NULL, "after undoing");
    oxide_module_destroy(m);
}

/* ======================================================================================
 * rule 6: the target SM
 * ====================================================================================== */

static void test_sm(void) {
    fx x = kernel();
    OP0(x.e, OXIDE_OP_CLUSTER_SYNC, NULL);
    ret(x.e);
    EXPECT_VERIFY(x.m, SM80,
                  "verify: kernel @k ^0 #0 'cluster.sync': op 'cluster.sync' needs sm_90 or newer; "
                  "target is sm_80");
    EXPECT_OK(x.m, SM90, "cluster.sync at sm_90a");
    EXPECT_OK(x.m, NULL, "cluster.sync at the default target");
    oxide_module_destroy(x.m);

    x = kernel();
    OP0(x.e, OXIDE_OP_CLUSTERID_X, NULL);
    ret(x.e);
    EXPECT_VERIFY(x.m, SM80, "op 'clusterid.x' needs sm_90 or newer; target is sm_80");
    oxide_module_destroy(x.m);

    x = kernel();
    MUST(oxide_kernel_set_cluster(x.f, 2, 1, 1));
    ret(x.e);
    EXPECT_VERIFY(x.m, SM80,
                  "verify: kernel @k: kernel attribute cluster(2,1,1) needs sm_90 or newer; target is "
                  "sm_80");
    EXPECT_OK(x.m, SM90, "cluster(2,1,1) at sm_90a");
    oxide_module_destroy(x.m);

    x = kernel();
    oxide_attr cl = attr_i(OXIDE_ATTR_SCOPE, OXIDE_SCOPE_CLUSTER);
    OPA(x.e, OXIDE_OP_ATOMIC_ADD, NULL, cl, alloca_ptr(x.e, ti32), ci32(x.e, 1));
    ret(x.e);
    EXPECT_VERIFY(x.m, SM80, "'atomic.add': scope 'cluster' needs sm_90 or newer; target is sm_80");
    EXPECT_OK(x.m, SM90, "cluster scope at sm_90a");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 7: op-specific limits
 * ====================================================================================== */

typedef struct unary_case {
    oxide_op op;
    oxide_type **type;
    const char *phrase; /* NULL: valid */
} unary_case;

static void test_type_limits(void) {
    const unary_case cases[] = {
        {OXIDE_OP_SIN_APPROX, &tf32, NULL},
        {OXIDE_OP_SIN_APPROX, &tf64, "'sin.approx': computes in f32 (PTX has only .f32 approximations), got f64"},
        {OXIDE_OP_RCP_APPROX, &tf16, NULL},
        {OXIDE_OP_TANH_APPROX, &tv4f32, NULL},
        {OXIDE_OP_EXP2_APPROX, &tv2f64,
         "'exp2.approx': computes in f32 (PTX has only .f32 approximations), got "
         "vec<2 x f64>"},
        {OXIDE_OP_EXP, &tf64, NULL},
        {OXIDE_OP_EXP, &tf16, NULL},
        {OXIDE_OP_ERF, &tv4f32, NULL},
        {OXIDE_OP_SQRT, &tv4f32, NULL},
        {OXIDE_OP_REDUX_ADD, &ti32, NULL},
        {OXIDE_OP_MATCH_ANY, &ti64, NULL},
        {OXIDE_OP_MATCH_ANY, &ti16, NULL},
        {OXIDE_OP_MATCH_ANY, &ti128, "'match.any': supports integers of up to 64 bits, got i128"},
        {OXIDE_OP_MATCH_ANY, &tv4i32, "'match.any': supports integers of up to 64 bits, got vec<4 x i32>"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fx x = kernel();
        oxide_value *v = OP(x.e, OXIDE_OP_LOAD, *cases[c].type, alloca_ptr(x.e, tf64));
        OP(x.e, cases[c].op, NULL, v);
        ret(x.e);
        if (cases[c].phrase)
            EXPECT_VERIFY(x.m, NULL, cases[c].phrase);
        else
            EXPECT_OK(x.m, NULL, oxide_op_name(cases[c].op));
        oxide_module_destroy(x.m);
    }

    /* shuffles: anything of up to 64 bits that is not an aggregate */
    const unary_case shfl[] = {
        {OXIDE_OP_SHFL_IDX, &ti32, NULL},
        {OXIDE_OP_SHFL_UP, &tf32, NULL},
        {OXIDE_OP_SHFL_DOWN, &ti64, NULL},
        {OXIDE_OP_SHFL_XOR, &tf64, NULL},
        {OXIDE_OP_SHFL_IDX, &ti16, NULL},
        {OXIDE_OP_SHFL_XOR, &tgptr, NULL},
        {OXIDE_OP_SHFL_UP, &tv2f32, NULL},
        {OXIDE_OP_SHFL_DOWN, &tv4f32,
         "'shfl.down': moves at most 64 bits (an integer, float, pointer or small "
         "vector), got vec<4 x f32>"},
        {OXIDE_OP_SHFL_IDX, &ti128, "'shfl.idx': moves at most 64 bits"},
        {OXIDE_OP_SHFL_IDX, &tarr2f32, "'shfl.idx': moves at most 64 bits"},
    };
    for (size_t c = 0; c < sizeof shfl / sizeof shfl[0]; c++) {
        fx x = kernel();
        oxide_value *v = OP(x.e, OXIDE_OP_LOAD, *shfl[c].type, alloca_ptr(x.e, tf64));
        OP(x.e, shfl[c].op, NULL, v, ci32(x.e, 1));
        ret(x.e);
        if (shfl[c].phrase)
            EXPECT_VERIFY(x.m, NULL, shfl[c].phrase);
        else
            EXPECT_OK(x.m, NULL, oxide_op_name(shfl[c].op));
        oxide_module_destroy(x.m);
    }

    /* atomics: which value types */
    const unary_case atom[] = {
        {OXIDE_OP_ATOMIC_ADD, &tf32, NULL},
        {OXIDE_OP_ATOMIC_ADD, &tf64, NULL},
        {OXIDE_OP_ATOMIC_ADD, &ti64, NULL},
        {OXIDE_OP_ATOMIC_ADD, &ti16, NULL},
        {OXIDE_OP_ATOMIC_ADD, &tf16, "'atomic.add': supports integers of 8 to 64 bits, f32 and f64, got f16"},
        {OXIDE_OP_ATOMIC_ADD, &tbf16, "'atomic.add': supports integers of 8 to 64 bits, f32 and f64, got bf16"},
        {OXIDE_OP_ATOMIC_ADD, &ti128, "'atomic.add': supports integers of 8 to 64 bits, f32 and f64, got i128"},
        {OXIDE_OP_ATOMIC_ADD, &tv4f32, "got vec<4 x f32>"},
        {OXIDE_OP_ATOMIC_UMIN, &ti8, NULL},
        {OXIDE_OP_ATOMIC_UMIN, &ti1, "'atomic.umin': supports integers of 8 to 64 bits, got i1"},
        {OXIDE_OP_ATOMIC_EXCH, &tf64, NULL},
        {OXIDE_OP_ATOMIC_EXCH, &tgptr, NULL},
        {OXIDE_OP_ATOMIC_EXCH, &tv2f32,
         "'atomic.exch': supports integers of 8 to 64 bits, floats and pointers, "
         "got vec<2 x f32>"},
    };
    for (size_t c = 0; c < sizeof atom / sizeof atom[0]; c++) {
        fx x = kernel();
        oxide_value *v = OP(x.e, OXIDE_OP_LOAD, *atom[c].type, alloca_ptr(x.e, tf64));
        OP(x.e, atom[c].op, NULL, alloca_ptr(x.e, tf64), v);
        ret(x.e);
        if (atom[c].phrase)
            EXPECT_VERIFY(x.m, NULL, atom[c].phrase);
        else
            EXPECT_OK(x.m, NULL, oxide_op_name(atom[c].op));
        oxide_module_destroy(x.m);
    }

    /* atomic loads and stores: orderings and types */
    fx x = kernel();
    oxide_attr rel = attr_i(OXIDE_ATTR_ORDER, OXIDE_ORDER_RELEASE);
    OPA(x.e, OXIDE_OP_ATOMIC_LOAD, ti32, rel, alloca_ptr(x.e, ti32));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'atomic.load': an atomic load cannot have release ordering");
    oxide_module_destroy(x.m);

    x = kernel();
    oxide_attr acq = attr_i(OXIDE_ATTR_ORDER, OXIDE_ORDER_ACQUIRE);
    OPA(x.e, OXIDE_OP_ATOMIC_STORE, NULL, acq, ci32(x.e, 1), alloca_ptr(x.e, ti32));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'atomic.store': an atomic store cannot have acquire ordering");
    oxide_module_destroy(x.m);

    x = kernel();
    OP(x.e, OXIDE_OP_ATOMIC_LOAD, ti128, alloca_ptr(x.e, ti32));
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "an atomic load needs an integer (8 to 64 bits), float or pointer result, got i128");
    oxide_module_destroy(x.m);

    /* a relaxed fence is valid (a no-op in C11 terms; the lowering strengthens it) */
    x = kernel();
    OP0(x.e, OXIDE_OP_FENCE, NULL);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "fence with the default order");
    oxide_module_destroy(x.m);

    /* comparisons yield one i1 */
    x = kernel();
    oxide_value *v = OP(x.e, OXIDE_OP_LOAD, tv4i32, alloca_ptr(x.e, tv4i32));
    OP(x.e, OXIDE_OP_ICMP, NULL, v, v);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'icmp': cannot compare vectors (vec<4 x i32>)");
    oxide_module_destroy(x.m);

    /* cluster.map_shared takes this CTA's shared memory */
    x = kernel();
    oxide_value *gp = global_ptr(x.m, x.e, "g", OXIDE_AS_GLOBAL, tgptr);
    OP(x.e, OXIDE_OP_MAP_SHARED, NULL, gp, ci32(x.e, 0));
    ret(x.e);
    EXPECT_VERIFY(x.m, SM90,
                  "'cluster.map_shared': operand 0 must be a ptr.shared or generic pointer, got "
                  "ptr.global");
    oxide_module_destroy(x.m);

    /* redux: the builder refuses a non-i32; an edit slips one in */
    x = kernel();
    oxide_value *i64v = ci64(x.e, 1);
    oxide_value *rv = OP(x.e, OXIDE_OP_REDUX_MAX, NULL, ci32(x.e, 1));
    ret(x.e);
    rv->def->operands[0] = i64v;
    EXPECT_VERIFY(x.m, NULL, "'redux.max': operand 0 must be i32, got i64");
    oxide_module_destroy(x.m);
}

static void test_attributes(void) {
    fx x = kernel();
    oxide_value *r = NULL;
    EXPECT_BUILD(
        oxide_build_op(x.e, OXIDE_OP_BARRIER, NULL, 0, NULL, (oxide_attr[]){attr_i(OXIDE_ATTR_IMM, 16)}, 1, &r),
        OXIDE_ERROR_INVALID_ARGUMENT, "'barrier': barrier id must be 0..15");
    oxide_attr b3 = attr_i(OXIDE_ATTR_IMM, 3);
    OPA0(x.e, OXIDE_OP_BARRIER, NULL, b3);
    oxide_value *p = alloca_ptr(x.e, ti32);
    oxide_value *l = OP(x.e, OXIDE_OP_LOAD, ti32, p);
    oxide_value *a = OP(x.e, OXIDE_OP_ATOMIC_ADD, NULL, p, l);
    oxide_value *s = OP(x.e, OXIDE_OP_SHFL_IDX, NULL, l, l);
    oxide_value *c = OP(x.e, OXIDE_OP_ICMP, NULL, l, l);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "attributes in range");
    oxide_inst *bar = inst_at(x.e, 0);
    bar->imm = 16;
    EXPECT_VERIFY(x.m, NULL, "^0 #0 'barrier': barrier id 16 is outside 0..15");
    bar->imm = 3;
    l->def->align = 3;
    EXPECT_VERIFY(x.m, NULL, "'load': align 3 is not a power of two up to 65536");
    l->def->align = 0;
    a->def->scope = (oxide_scope)9;
    EXPECT_VERIFY(x.m, NULL, "'atomic.add': scope 9 is not a scope");
    a->def->scope = OXIDE_SCOPE_GPU;
    a->def->order = (oxide_order)7;
    EXPECT_VERIFY(x.m, NULL, "'atomic.add': order 7 is not a memory order");
    a->def->order = OXIDE_ORDER_RELAXED;
    s->def->imm = 1ll << 32;
    EXPECT_VERIFY(x.m, NULL, "'shfl.idx': lane mask 0x100000000 does not fit in 32 bits");
    s->def->imm = 0xffffffff;
    c->def->pred = OXIDE_PRED_OLT;
    EXPECT_VERIFY(x.m, NULL, "'icmp': predicate 12 is not an integer comparison");
    c->def->pred = OXIDE_PRED_EQ;
    EXPECT_OK(x.m, NULL, "after undoing");
    oxide_module_destroy(x.m);
}

static void test_calls(void) {
    oxide_module *m;
    MUST(oxide_module_create(C, "m", &m));
    oxide_function *f, *k, *v;
    MUST(oxide_module_add_function(m, "f", tf32, &f));
    oxide_value *fa;
    MUST(oxide_function_add_param(f, "a", ti32, &fa));
    oxide_block *fb = block(f);
    OP(fb, OXIDE_OP_RET, NULL, OP(fb, OXIDE_OP_SITOFP, tf32, fa));
    MUST(oxide_module_add_function(m, "v", tvoid, &v));
    ret(block(v));
    MUST(oxide_module_add_kernel(m, "kern", &k));
    ret(block(k));
    MUST(oxide_module_add_kernel(m, "k", &k));
    oxide_block *b = block(k);
    oxide_value *i = ci32(b, 1), *fl = cf32(b, 1);
    oxide_attr to_f = attr_s(OXIDE_ATTR_SYM, "f");
    oxide_value *call = OPA(b, OXIDE_OP_CALL, tf32, to_f, i);
    ret(b);
    EXPECT_OK(m, NULL, "a valid call");
    oxide_inst *in = call->def;

    in->sym = "nosuch";
    EXPECT_VERIFY(m, NULL, "verify: kernel @k ^0 #2 'call': call to @nosuch: no function of that name in module @m");
    in->sym = "kern";
    EXPECT_VERIFY(m, NULL, "call to @kern: it is a kernel; only device functions can be called");
    in->sym = "f";
    in->noperands = 0;
    EXPECT_VERIFY(m, NULL, "call to @f: expected 1 argument, got 0");
    in->noperands = 1;
    in->operands[0] = fl;
    EXPECT_VERIFY(m, NULL, "call to @f: operand 0 must be i32, got f32");
    in->operands[0] = i;
    call->type = ti32;
    EXPECT_VERIFY(m, NULL, "call to @f: result must be f32, got i32");
    call->type = tf32;
    in->result = NULL;
    EXPECT_VERIFY(m, NULL, "call to @f: the function returns f32, but the call has no result");
    in->result = call;
    in->sym = "v";
    EXPECT_VERIFY(m, NULL, "call to @v: expected 0 arguments, got 1");
    in->noperands = 0;
    EXPECT_VERIFY(m, NULL, "call to @v: the function returns nothing, but the call has a f32 result");
    in->sym = "f";
    in->noperands = 1;
    EXPECT_OK(m, NULL, "after undoing");
    oxide_module_destroy(m);

    /* built directly through the API: unknown callee, wrong result */
    MUST(oxide_module_create(C, "m", &m));
    MUST(oxide_module_add_kernel(m, "k", &k));
    b = block(k);
    oxide_attr to_g = attr_s(OXIDE_ATTR_SYM, "g");
    build(__LINE__, b, OXIDE_OP_CALL, NULL, 0, NULL, &to_g, 1);
    ret(b);
    EXPECT_VERIFY(m, NULL, "call to @g: no function of that name");
    oxide_module_destroy(m);

    /* global.addr of an unknown global */
    fx x = kernel();
    oxide_attr sym = attr_s(OXIDE_ATTR_SYM, "nosuch");
    OPA0(x.e, OXIDE_OP_GLOBAL_ADDR, tgptr, sym);
    ret(x.e);
    EXPECT_VERIFY(x.m, NULL, "'global.addr': no global named @nosuch in module @m");
    oxide_module_destroy(x.m);
}

static void test_printf_assert(void) {
    const unary_case cases[] = {
        {OXIDE_OP_PRINTF, &ti8, NULL},
        {OXIDE_OP_PRINTF, &tf16, NULL},
        {OXIDE_OP_PRINTF, &tsptr, NULL},
        {OXIDE_OP_PRINTF, &ti1,
         "operand 0: printf arguments must be integers of 8 to 64 bits, floats or pointers, "
         "got i1"},
        {OXIDE_OP_PRINTF, &ti128, "printf arguments must be integers of 8 to 64 bits, floats or pointers, got i128"},
        {OXIDE_OP_PRINTF, &tv4f32, "got vec<4 x f32>"},
    };
    oxide_attr fmt = attr_s(OXIDE_ATTR_STR, "%d\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fx x = kernel();
        oxide_value *v = OP(x.e, OXIDE_OP_LOAD, *cases[c].type, alloca_ptr(x.e, tf64));
        OPA(x.e, OXIDE_OP_PRINTF, NULL, fmt, v);
        ret(x.e);
        if (cases[c].phrase)
            EXPECT_VERIFY(x.m, NULL, cases[c].phrase);
        else
            EXPECT_OK(x.m, NULL, "printf");
        oxide_module_destroy(x.m);
    }
    fx x = kernel();
    OPA0(x.e, OXIDE_OP_PRINTF, NULL, fmt);
    ret(x.e);
    EXPECT_OK(x.m, NULL, "printf without arguments");
    inst_at(x.e, 0)->str = NULL;
    EXPECT_VERIFY(x.m, NULL, "'printf': printf has no format string");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * rule 8: kernel interface and attributes
 * ====================================================================================== */

static void test_interface(void) {
    oxide_module *m = build_vecadd();
    oxide_function *k;
    MUST(oxide_module_get_function(m, "k", &k));
    oxide_value *len = k->params.items[1];
    len->type = ti32;
    EXPECT_VERIFY(m, NULL, "verify: kernel @k: kernel parameter 0 (a, slice): value 1 must be i64, got i32");
    len->type = ti64;
    oxide_value *a0 = k->params.items[0];
    a0->type = tsptr;
    EXPECT_VERIFY(m, NULL, "kernel parameter 0 (a, slice): value 0 must be ptr.global, got ptr.shared");
    a0->type = tgptr;
    oxide_iface_param *p1 = k->iface.items[1];
    p1->first_value = 3;
    EXPECT_VERIFY(m, NULL, "kernel parameter 1 (b) starts at value 3, expected 2");
    p1->first_value = 2;
    k->iface.len--;
    EXPECT_VERIFY(m, NULL, "the kernel has 6 parameter values, but its interface accounts for 4");
    k->iface.len++;
    p1->kind = OXIDE_PARAM_SCALAR;
    EXPECT_VERIFY(m, NULL, "kernel parameter 1 (b, scalar): value 0 must be f32, got ptr.global");
    p1->kind = OXIDE_PARAM_SLICE;
    EXPECT_OK(m, NULL, "after undoing");

    /* launch bounds */
    EXPECT_BUILD(oxide_kernel_set_launch_bounds(k, 0, 2), OXIDE_ERROR_INVALID_ARGUMENT,
                 "oxide_kernel_set_launch_bounds");
    k->launch_bounds[0] = 0;
    EXPECT_VERIFY(m, NULL, "verify: kernel @k: launch bounds: min blocks (2) needs max threads to be set");
    k->launch_bounds[0] = 2048;
    EXPECT_VERIFY(m, NULL, "launch bounds: max threads 2048 exceeds 1024");
    k->launch_bounds[0] = 256;

    /* clusters: every dimension >= 1, at most 8 blocks (the portable limit) */
    MUST(oxide_kernel_set_cluster(k, 4, 2, 1));
    EXPECT_OK(m, SM90, "cluster of 8");
    MUST(oxide_kernel_set_cluster(k, 4, 4, 1));
    EXPECT_VERIFY(m, SM90, "cluster(4,4,1) has 16 blocks; the portable maximum is 8");
    k->cluster[1] = 0;
    EXPECT_VERIFY(m, SM90, "cluster(4,0,1): every dimension must be at least 1");
    k->cluster[0] = k->cluster[1] = k->cluster[2] = 0;
    EXPECT_OK(m, SM80, "no cluster at sm_80");
    oxide_module_destroy(m);

    /* device functions carry no kernel attributes or interface */
    MUST(oxide_module_create(C, "m", &m));
    oxide_function *f;
    MUST(oxide_module_add_function(m, "f", tvoid, &f));
    ret(block(f));
    EXPECT_BUILD(oxide_kernel_set_cluster(f, 2, 1, 1), OXIDE_ERROR_INVALID_ARGUMENT, "not a kernel");
    f->dyn_smem = 64;
    EXPECT_VERIFY(m, NULL, "verify: func @f: a device function has kernel attributes");
    oxide_module_destroy(m);
}

/* ======================================================================================
 * rule 9: names
 * ====================================================================================== */

static void test_names(void) {
    fx x = kernel();
    oxide_value *a = ci32(x.e, 1), *b = ci32(x.e, 2);
    MUST(oxide_value_set_name(a, "a"));
    EXPECT_BUILD(oxide_value_set_name(b, "a"), OXIDE_ERROR_STATE, "already has a value named %a");
    MUST(oxide_value_set_name(b, "b"));
    ret(x.e);
    EXPECT_OK(x.m, NULL, "distinct value names");
    b->name = "a";
    EXPECT_VERIFY(x.m, NULL, "verify: kernel @k ^0: the name %a is used twice");
    b->name = "b";

    oxide_function *f;
    EXPECT_BUILD(oxide_module_add_function(x.m, "k", tvoid, &f), OXIDE_ERROR_STATE, "already used");
    oxide_global *g;
    EXPECT_BUILD(oxide_module_add_global(x.m, "k", ti32, OXIDE_AS_GLOBAL, 0, NULL, 0, &g), OXIDE_ERROR_STATE,
                 "already used");
    MUST(oxide_module_add_function(x.m, "f", tvoid, &f));
    ret(block(f));
    MUST(oxide_module_add_global(x.m, "g", ti32, OXIDE_AS_GLOBAL, 0, NULL, 0, &g));
    EXPECT_OK(x.m, NULL, "distinct symbols");
    f->name = "k";
    EXPECT_VERIFY(x.m, NULL, "verify: module @m: the symbol @k is defined twice");
    f->name = "f";
    g->name = "f";
    EXPECT_VERIFY(x.m, NULL, "the symbol @f is defined twice");
    g->name = "g";
    EXPECT_OK(x.m, NULL, "after undoing");
    oxide_module_destroy(x.m);
}

/* Renaming frees the old name. Enough renames to make the function's name table collide and
 * grow, so that a removal which lost a colliding entry would show as a missed duplicate. */
static void test_renames(void) {
    fx x = kernel();
    enum { N = 2000 };
    oxide_value *v[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        v[i] = ci32(x.e, i);
        snprintf(name, sizeof name, "v%d", i);
        MUST(oxide_value_set_name(v[i], name));
    }
    for (int i = 0; i < N; i += 2) {
        snprintf(name, sizeof name, "w%d", i);
        MUST(oxide_value_set_name(v[i], name));
        MUST(oxide_value_set_name(v[i], name)); /* to its own name: no change */
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "v%d", i);
        oxide_value *other = v[(i + 1) % N];
        if (i % 2) /* still taken by v[i] */
            EXPECT_BUILD(oxide_value_set_name(other, name), OXIDE_ERROR_STATE, "already has a value named");
        else /* freed by the rename; take it back */
            MUST(oxide_value_set_name(v[i], name));
    }
    ret(x.e);
    EXPECT_OK(x.m, NULL, "after renames");
    oxide_module_destroy(x.m);
}

/* ======================================================================================
 * reporting
 * ====================================================================================== */

static void test_reporting(void) {
    CHECK(oxide_module_verify(NULL, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL module");

    /* every error is reported, first one first, one per line */
    fx x = kernel();
    oxide_block *b1 = block(x.f);
    OP(x.e, OXIDE_OP_RET, NULL, ci32(x.e, 1));
    OP0(b1, OXIDE_OP_CLUSTER_SYNC, NULL);
    ret(b1);
    oxide_status st = oxide_module_verify(x.m, SM80);
    const char *msg = oxide_last_error();
    const char *first = strstr(msg, "a kernel returns nothing");
    const char *second = strstr(msg, "^1 #0 'cluster.sync': op 'cluster.sync' needs sm_90");
    CHECK(st == OXIDE_ERROR_VERIFY && first && second && first < second && strchr(msg, '\n'),
          "two errors, in order, on two lines: %s", msg);

    /* many errors: the message stays bounded and says how many were left out */
    oxide_module_destroy(x.m);
    x = kernel();
    for (int i = 0; i < 200; i++)
        OP0(x.e, OXIDE_OP_CLUSTER_SYNC, NULL);
    ret(x.e);
    st = oxide_module_verify(x.m, SM80);
    msg = oxide_last_error();
    CHECK(st == OXIDE_ERROR_VERIFY && strstr(msg, "more errors not shown") && strlen(msg) < 2048,
          "200 errors summarised: %zu bytes", strlen(msg));
    oxide_module_destroy(x.m);

    /* verification leaves a valid module's last error untouched and does not change the IR */
    oxide_module *m = build_vecadd();
    oxide_module_verify(NULL, NULL);
    char before[256];
    snprintf(before, sizeof before, "%s", oxide_last_error());
    st = oxide_module_verify(m, NULL);
    CHECK(st == OXIDE_OK && !strcmp(before, oxide_last_error()), "success keeps the last error");
    oxide_module_destroy(m);
}

/* ======================================================================================
 * tier 2: tensor-core, async-copy and Hopper ops
 * ====================================================================================== */

/* One kernel holding one tier-2 op built by fn; returns the module (caller destroys). */
static oxide_module *tier2_module(void (*fn)(fx *x, int v), int v) {
    fx x = kernel();
    fn(&x, v);
    ret(x.e);
    return x.m;
}

static oxide_value *shared_at(fx *x) { return global_ptr(x->m, x->e, "sm", OXIDE_AS_SHARED, tsptr); }

static void build_cp_async(fx *x, int v) {
    /* v: 0 ca 8 bytes (ok), 1 ca 12 bytes, 2 cg 8 bytes, 3 source in shared memory */
    oxide_value *s = shared_at(x);
    oxide_value *g = v == 3 ? s : OP(x->e, OXIDE_OP_INTTOPTR, tgptr, ci64(x->e, 0));
    oxide_attr a = attr_i(OXIDE_ATTR_IMM, v == 1 ? 12 : 8);
    OPA(x->e, v == 2 ? OXIDE_OP_CP_ASYNC_CG : OXIDE_OP_CP_ASYNC_CA, NULL, a, s, g);
}

static void build_ldmatrix(fx *x, int v) {
    oxide_type *v8;
    oxide_type_vector(C, ti32, 8, &v8);
    OP(x->e, OXIDE_OP_LDMATRIX, v == 0 ? tv4i32 : v == 1 ? v8 : tv4f32, shared_at(x));
}

static void build_mma(fx *x, int v) {
    oxide_type *v2i32;
    oxide_type_vector(C, ti32, 2, &v2i32);
    oxide_value *s = shared_at(x);
    oxide_value *a = OP(x->e, OXIDE_OP_LOAD, tv4i32, s), *b = OP(x->e, OXIDE_OP_LOAD, v == 1 ? tv4i32 : v2i32, s);
    oxide_value *c = OP(x->e, OXIDE_OP_LOAD, v == 2 ? tv2f32 : tv4f32, s);
    OP(x->e, OXIDE_OP_MMA_BF16, NULL, a, b, c);
}

static void build_wgmma(fx *x, int v) {
    /* v: 0 N=128 (ok), 1 N=12 (array<6 x f32>), 2 vec accumulator, 3 mode 16 */
    oxide_type *acc_t = NULL;
    if (v == 2)
        acc_t = tv4f32;
    else
        oxide_type_array(C, tf32, v == 1 ? 6 : 64, &acc_t);
    oxide_value *s = shared_at(x);
    oxide_attr sw = attr_i(OXIDE_ATTR_IMM, 128);
    oxide_value *d = OPA(x->e, OXIDE_OP_WGMMA_DESC, NULL, sw, s, ci32(x->e, 16), ci32(x->e, 1024));
    oxide_value *acc = OP(x->e, OXIDE_OP_LOAD, acc_t, s);
    oxide_attr mode = attr_i(OXIDE_ATTR_IMM, v == 3 ? 16 : 3);
    OP0(x->e, OXIDE_OP_WGMMA_FENCE, NULL);
    OPA(x->e, OXIDE_OP_WGMMA_BF16, NULL, mode, acc, d, d, OP(x->e, OXIDE_OP_TRUNC, ti1, ci32(x->e, 1)));
}

static void build_tma(fx *x, int v) {
    /* v: 0 2-D load (ok), 1 no coordinates, 2 six coordinates, 3 an i64 coordinate, 4 tensor map in shared */
    oxide_value *s = shared_at(x);
    oxide_value *desc = v == 4 ? s : OP(x->e, OXIDE_OP_INTTOPTR, tptr, ci64(x->e, 0));
    oxide_value *ops[9] = {s, desc, s};
    size_t n = 3, dims = v == 1 ? 0 : v == 2 ? 6 : 2;
    for (size_t i = 0; i < dims; i++)
        ops[n++] = v == 3 && i == 1 ? ci64(x->e, 1) : ci32(x->e, (int64_t)i);
    build(__LINE__, x->e, OXIDE_OP_TMA_LOAD, ops, n, NULL, NULL, 0);
}

static void build_setmaxnreg(fx *x, int v) {
    oxide_attr a = attr_i(OXIDE_ATTR_IMM, v == 0 ? 240 : v == 1 ? 244 : 16);
    OPA0(x->e, OXIDE_OP_SETMAXNREG_INC, NULL, a);
}

static void build_desc(fx *x, int v) {
    oxide_attr a = attr_i(OXIDE_ATTR_IMM, v == 0 ? 64 : 48);
    OPA(x->e, OXIDE_OP_WGMMA_DESC, NULL, a, shared_at(x), ci32(x->e, 16), ci32(x->e, 1024));
}

static void test_tier2(void) {
    oxide_options *sm90;
    MUST(oxide_options_create(&sm90));
    MUST(oxide_options_set_target(sm90, "sm_90"));
    oxide_module *m;

    m = tier2_module(build_cp_async, 0);
    EXPECT_OK(m, SM80, "cp.async.ca of 8 bytes");
    oxide_module_destroy(m);
    m = tier2_module(build_cp_async, 1);
    EXPECT_VERIFY(m, SM80, "'cp.async.ca': copies 4, 8 or 16 bytes (imm), got 12");
    oxide_module_destroy(m);
    m = tier2_module(build_cp_async, 2);
    EXPECT_VERIFY(m, SM80, "'cp.async.cg': copies 16 bytes (imm), got 8");
    oxide_module_destroy(m);
    m = tier2_module(build_cp_async, 3);
    EXPECT_VERIFY(m, SM80, "operand 1: the source must be a ptr.global, got ptr.shared");
    oxide_module_destroy(m);

    m = tier2_module(build_ldmatrix, 0);
    EXPECT_OK(m, SM80, "ldmatrix x4");
    oxide_module_destroy(m);
    for (int v = 1; v <= 2; v++) {
        m = tier2_module(build_ldmatrix, v);
        EXPECT_VERIFY(m, SM80, "the result must be i32, vec<2 x i32> or vec<4 x i32> (x1, x2, x4)");
        oxide_module_destroy(m);
    }

    m = tier2_module(build_mma, 0);
    EXPECT_OK(m, SM80, "mma.m16n8k16.bf16");
    oxide_module_destroy(m);
    m = tier2_module(build_mma, 1);
    EXPECT_VERIFY(m, SM80, "operand 1 (B: two registers of two packed 16-bit values) must be vec<2 x i32>");
    oxide_module_destroy(m);
    m = tier2_module(build_mma, 2);
    EXPECT_VERIFY(m, SM80, "operand 2 (the f32 accumulator) must be vec<4 x f32>, got vec<2 x f32>");
    oxide_module_destroy(m);

    m = tier2_module(build_wgmma, 0);
    EXPECT_OK(m, SM90, "wgmma m64n128k16 at sm_90a");
    EXPECT_VERIFY(m, sm90,
                  "'wgmma.fence': op 'wgmma.fence' needs sm_90a (the arch-specific Hopper target); "
                  "target is sm_90");
    EXPECT_VERIFY(m, SM80, "op 'wgmma.desc' needs sm_90 or newer; target is sm_80");
    oxide_module_destroy(m);
    m = tier2_module(build_wgmma, 1);
    EXPECT_VERIFY(m, SM90, "the accumulator must be array<N/2 x f32> for an m64nNk16 shape");
    oxide_module_destroy(m);
    m = tier2_module(build_wgmma, 2);
    EXPECT_VERIFY(m, SM90, "got vec<4 x f32>");
    oxide_module_destroy(m);
    m = tier2_module(build_wgmma, 3);
    EXPECT_VERIFY(m, SM90, "the mode bits (imm) must be 0..15, got 16");
    oxide_module_destroy(m);

    m = tier2_module(build_tma, 0);
    EXPECT_OK(m, SM90, "2-D tma.load");
    EXPECT_VERIFY(m, sm90, "op 'tma.load' needs PTX ISA 8.0; target sm_90 uses 7.8");
    MUST(oxide_options_set_ptx_version(sm90, 8, 0));
    EXPECT_OK(m, sm90, "2-D tma.load at sm_90 with PTX 8.0");
    MUST(oxide_options_set_ptx_version(sm90, 0, 0));
    oxide_module_destroy(m);
    m = tier2_module(build_tma, 1);
    EXPECT_VERIFY(m, SM90, "a tensor copy takes 1 to 5 coordinates (one per dimension), got 0");
    oxide_module_destroy(m);
    m = tier2_module(build_tma, 2);
    EXPECT_VERIFY(m, SM90, "a tensor copy takes 1 to 5 coordinates (one per dimension), got 6");
    oxide_module_destroy(m);
    m = tier2_module(build_tma, 3);
    EXPECT_VERIFY(m, SM90, "operand 4: coordinates are i32, got i64");
    oxide_module_destroy(m);
    m = tier2_module(build_tma, 4);
    EXPECT_VERIFY(m, SM90, "operand 1: the tensor map must be in parameter, constant or global memory");
    oxide_module_destroy(m);

    m = tier2_module(build_setmaxnreg, 0);
    EXPECT_OK(m, SM90, "setmaxnreg.inc 240");
    oxide_module_destroy(m);
    for (int v = 1; v <= 2; v++) {
        m = tier2_module(build_setmaxnreg, v);
        EXPECT_VERIFY(m, SM90, "the register count (imm) must be a multiple of 8 in 24..256");
        oxide_module_destroy(m);
    }
    m = tier2_module(build_desc, 0);
    EXPECT_OK(m, SM90, "wgmma.desc with a 64-byte swizzle");
    oxide_module_destroy(m);
    m = tier2_module(build_desc, 1);
    EXPECT_VERIFY(m, SM90, "the swizzle (imm) must be 0 (none), 32, 64 or 128 bytes, got 48");
    oxide_module_destroy(m);

    /* operand classes are the builder's: a global pointer where mbarrier wants shared memory */
    fx x = kernel();
    oxide_value *gp = OP(x.e, OXIDE_OP_INTTOPTR, tgptr, ci64(x.e, 0));
    oxide_value *r = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_MBARRIER_ARRIVE, &gp, 1, NULL, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH,
                 "'mbarrier.arrive': operand 0 must be a shared-memory pointer, got ptr.global");
    oxide_module_destroy(x.m);
    oxide_options_destroy(sm90);
}

int main(void) {
    if (oxide_context_create(&C) || oxide_options_create(&SM80) || oxide_options_create(&SM90) ||
        oxide_options_set_target(SM80, "sm_80") || oxide_options_set_target(SM90, "sm_90a")) {
        printf("setup failed: %s\n0 passed, 1 failed\n", oxide_last_error());
        return 1;
    }
    oxide_type_scalar(C, OXIDE_TYPE_VOID, &tvoid);
    oxide_type_scalar(C, OXIDE_TYPE_I1, &ti1);
    oxide_type_scalar(C, OXIDE_TYPE_I8, &ti8);
    oxide_type_scalar(C, OXIDE_TYPE_I16, &ti16);
    oxide_type_scalar(C, OXIDE_TYPE_I32, &ti32);
    oxide_type_scalar(C, OXIDE_TYPE_I64, &ti64);
    oxide_type_scalar(C, OXIDE_TYPE_I128, &ti128);
    oxide_type_scalar(C, OXIDE_TYPE_F16, &tf16);
    oxide_type_scalar(C, OXIDE_TYPE_BF16, &tbf16);
    oxide_type_scalar(C, OXIDE_TYPE_F32, &tf32);
    oxide_type_scalar(C, OXIDE_TYPE_F64, &tf64);
    oxide_type_pointer(C, OXIDE_AS_GENERIC, &tptr);
    oxide_type_pointer(C, OXIDE_AS_GLOBAL, &tgptr);
    oxide_type_pointer(C, OXIDE_AS_SHARED, &tsptr);
    oxide_type_pointer(C, OXIDE_AS_CONSTANT, &tcptr);
    oxide_type_pointer(C, OXIDE_AS_LOCAL, &tlptr);
    oxide_type_pointer(C, OXIDE_AS_PARAM, &tpptr);
    oxide_type_vector(C, tf32, 4, &tv4f32);
    oxide_type_vector(C, ti32, 4, &tv4i32);
    oxide_type_vector(C, tf32, 2, &tv2f32);
    oxide_type_vector(C, tf64, 2, &tv2f64);
    oxide_type_array(C, tf32, 2, &tarr2f32);

    test_valid_vecadd();
    test_valid_everything();
    test_valid_examples();
    test_valid_cluster();
    test_unreachable_policy();
    test_types_recheck();
    test_casts();
    test_aggregates_and_memory_results();
    test_dominance();
    test_terminators();
    test_ret();
    test_address_spaces();
    test_sm();
    test_tier2();
    test_type_limits();
    test_attributes();
    test_calls();
    test_printf_assert();
    test_interface();
    test_names();
    test_renames();
    test_reporting();

    oxide_options_destroy(SM80);
    oxide_options_destroy(SM90);
    oxide_context_destroy(C);
    return check_report("test_verify");
}
