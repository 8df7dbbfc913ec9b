/* Verifier tests that need the C API. Cases that a text module can state -- "this module
 * verifies", "this module fails with this message" -- are files in tests/ir/verify, run by
 * tests/ir/run_cases.c; what stays here cannot be written as text:
 *
 * - where the builder refuses a mistake, the test checks that refusal (the "checks at the
 *   boundary" contract: a status and a message naming the op), and then makes the same mistake
 *   by editing the built IR through lib/ir.h's structs -- as a buggy pass or front end would --
 *   to prove the verifier catches it too (the parser, which builds through the builder, could
 *   not even read such a module);
 * - the example kernels, NULL arguments, and how errors are reported.
 *
 * No internal function is called: liboxide hides them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "harness.h"
#include "oxide.h"
#include "oxide_examples.h"

static oxide_context *C;
static oxide_options *SM80, *SM90;
static oxide_type *tvoid, *ti32, *ti64, *tf32;
static oxide_type *tptr, *tgptr, *tsptr, *tlptr, *tarr2f32;

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

/* A local-memory slot for one elem, as a generic pointer. */
static oxide_value *alloca_ptr(oxide_block *b, oxide_type *elem) {
    oxide_attr a = attr_t(OXIDE_ATTR_ELEM, elem);
    return OPA0(b, OXIDE_OP_ALLOCA, NULL, a);
}

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

/* Rule 2's stated policy: uses in unreachable blocks are checked for local order only; still,
 * inside an unreachable block, a use before the definition is an error. */
static void test_unreachable_policy(void) {
    fx x = kernel();
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
    EXPECT_VERIFY(x.m, NULL,
                  "#0 'const': a constant must be an integer or float scalar, or a vector or array of them, got ptr");
    oxide_type *tarr;
    MUST(oxide_type_array(C, tf32, 4, &tarr));
    f->type = tarr;
    EXPECT_VERIFY(x.m, NULL, "a constant of type array<4 x f32> must be 0");
    f->type = tf32;
    i->def->ivalue = 1ll << 40;
    EXPECT_VERIFY(x.m, NULL, "'const': value 1099511627776 does not fit in i32");
    i->def->ivalue = 1;
    EXPECT_OK(x.m, NULL, "after undoing every mutation");
    oxide_module_destroy(x.m);
}

static void test_aggregates_and_memory_results(void) {
    /* offset: a sized element, an integer index */
    fx x = kernel();
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
    /* a loop: the body's value is not available in the header */
    fx x = kernel();
    oxide_value *hp;
    oxide_block *h = block1(x.f, ti32, &hp), *body = block(x.f), *done = block(x.f);
    MUST(oxide_build_br(x.e, h, VALS(ci32(x.e, 0)), 1));
    oxide_value *lt = OP(h, OXIDE_OP_ICMP, NULL, hp, ci32(h, 10));
    MUST(oxide_build_cond_br(h, lt, body, NULL, 0, done, NULL, 0));
    oxide_value *next = OP(body, OXIDE_OP_ADD, NULL, hp, ci32(body, 1));
    MUST(oxide_build_br(body, h, &next, 1));
    ret(done);
    EXPECT_OK(x.m, NULL, "counted loop");
    ((oxide_inst *)h->insts.items[1])->operands[0] = next;
    EXPECT_VERIFY(x.m, NULL,
                  "^1 #1 'icmp': operand 0 (the result of ^2 #1 'add') is defined in ^2, which does not "
                  "dominate ^1");
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
    /* nothing can follow a terminator: the builder says so, the verifier too */
    fx x = kernel();
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
    oxide_block *b1 = block1(x.f, ti32, &p);
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
 * rule 5: address spaces
 * ====================================================================================== */

static void test_address_spaces(void) {
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
 * rule 7: op-specific limits
 * ====================================================================================== */

static void test_type_limits(void) {
    /* redux: the builder refuses a non-i32; an edit slips one in */
    fx x = kernel();
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

static void test_printf_assert(void) {
    oxide_attr fmt = attr_s(OXIDE_ATTR_STR, "%d\n");
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

/* A public function's argument errors start with the function's name and say which argument
 * (docs/design.md section 2); compared whole, so that the prefix is checked too. */
static void refused(int line, const char *call, oxide_status st, oxide_status want, const char *msg) {
    bool ok = st == want && !strcmp(oxide_last_error(), msg);
    ok ? check_passed++ : check_failed++;
    if (!ok)
        printf("FAIL %s:%d: %s: got %s \"%s\", want %s \"%s\"\n", __FILE__, line, call, oxide_status_name(st),
               oxide_last_error(), oxide_status_name(want), msg);
}
#define REFUSED(call, want, msg) refused(__LINE__, #call, (call), want, msg)

static void test_argument_messages(void) {
    const oxide_status INV = OXIDE_ERROR_INVALID_ARGUMENT;
    oxide_type *t;
    oxide_module *m;
    oxide_function *f;
    oxide_block *b;
    oxide_value *v, *v2;
    const char *s;
    REFUSED(oxide_options_set_target(SM80, NULL), INV, "oxide_options_set_target: sm is NULL");
    REFUSED(oxide_options_set_target(SM80, "sm_70"), INV,
            "oxide_options_set_target: unknown target 'sm_70': use one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a");
    REFUSED(oxide_options_set_ptx_version(SM80, 5, 0), INV,
            "oxide_options_set_ptx_version: PTX ISA version 5.0 is outside what oxide can emit (6.0 to 9.0, or 0.0 "
            "to let oxide choose)");
    REFUSED(oxide_type_scalar(NULL, OXIDE_TYPE_I32, &t), INV, "oxide_type_scalar: ctx is NULL");
    REFUSED(oxide_type_pointer(C, OXIDE_AS_GLOBAL, NULL), INV, "oxide_type_pointer: out is NULL");
    REFUSED(oxide_type_vector(C, NULL, 4, &t), INV, "oxide_type_vector: elem is NULL");
    REFUSED(oxide_type_array(C, ti32, 4, NULL), INV, "oxide_type_array: out is NULL");
    REFUSED(oxide_type_struct(C, NULL, 1, &t), INV, "oxide_type_struct: fields is NULL");
    REFUSED(oxide_type_struct(C, &ti32, 0, &t), INV, "oxide_type_struct: 0 fields (a struct has 1 to 65536)");
    REFUSED(oxide_module_create(C, "m", NULL), INV, "oxide_module_create: out is NULL");
    REFUSED(oxide_module_parse(C, NULL, 4, &m), INV, "oxide_module_parse: text (with len > 0) is NULL");
    MUST(oxide_module_create(C, "m", &m));
    REFUSED(oxide_module_add_kernel(m, "k", NULL), INV, "oxide_module_add_kernel: out is NULL");
    REFUSED(oxide_module_add_function(NULL, "g", ti32, &f), INV, "oxide_module_add_function: mod is NULL");
    REFUSED(oxide_module_get_function(m, NULL, &f), INV, "oxide_module_get_function: name is NULL");
    REFUSED(oxide_module_add_global(m, "gl", NULL, OXIDE_AS_GLOBAL, 0, NULL, 0, NULL), INV,
            "oxide_module_add_global: type is NULL");
    REFUSED(oxide_module_print(m, NULL), INV, "oxide_module_print: out is NULL");
    REFUSED(oxide_module_get_llvm_ir(m, &s), OXIDE_ERROR_STATE,
            "oxide_module_get_llvm_ir: module m has not been compiled yet: call oxide_module_compile first");
    MUST(oxide_module_add_kernel(m, "k", &f));
    REFUSED(oxide_kernel_add_scalar_param(NULL, "n", OXIDE_SCALAR_I32, &v), INV,
            "oxide_kernel_add_scalar_param: kernel is NULL");
    REFUSED(oxide_kernel_add_scalar_param(f, "n", (oxide_scalar)999, &v), INV,
            "oxide_kernel_add_scalar_param: 999 is not an oxide_scalar (use an OXIDE_SCALAR_* value)");
    REFUSED(oxide_kernel_add_slice_param(f, "x", (oxide_scalar)999, 0, &v, &v2), INV,
            "oxide_kernel_add_slice_param: 999 is not an element type (use an OXIDE_SCALAR_* value; fp8 elements "
            "are for tensors of tile kernels)");
    REFUSED(oxide_kernel_add_slice_param(f, "x", OXIDE_SCALAR_F32, 0, &v, NULL), INV,
            "oxide_kernel_add_slice_param: len_out is NULL");
    REFUSED(oxide_kernel_add_ptr_param(NULL, "p", OXIDE_SCALAR_F32, 0, &v), INV,
            "oxide_kernel_add_ptr_param: kernel is NULL");
    REFUSED(oxide_kernel_add_bytes_param(NULL, "b", 8, 8, &v), INV, "oxide_kernel_add_bytes_param: kernel is NULL");
    REFUSED(oxide_function_add_param(f, "a", NULL, &v), INV, "oxide_function_add_param: type is NULL");
    REFUSED(oxide_function_add_block(f, NULL, 1, &b, NULL), INV,
            "oxide_function_add_block: params (with nparams > 0) is NULL");
    REFUSED(oxide_build_op(NULL, OXIDE_OP_TID_X, NULL, 0, NULL, NULL, 0, &v), INV, "'tid.x': block is NULL");
    REFUSED(oxide_build_br(NULL, NULL, NULL, 0), INV, "'br': block is NULL");
    REFUSED(oxide_build_op(NULL, (oxide_op)100000, NULL, 0, NULL, NULL, 0, &v), INV,
            "oxide_build_op: unknown op 100000 (use an OXIDE_OP_* value)");
    oxide_module_destroy(m);
}

/* ======================================================================================
 * tier 2: tensor-core, async-copy and Hopper ops
 * ====================================================================================== */

static void test_tier2(void) {
    /* operand classes are the builder's: a global pointer where mbarrier wants shared memory */
    fx x = kernel();
    oxide_value *gp = OP(x.e, OXIDE_OP_INTTOPTR, tgptr, ci64(x.e, 0));
    oxide_value *r = NULL;
    EXPECT_BUILD(oxide_build_op(x.e, OXIDE_OP_MBARRIER_ARRIVE, &gp, 1, NULL, NULL, 0, &r), OXIDE_ERROR_TYPE_MISMATCH,
                 "'mbarrier.arrive': operand 0 must be a shared-memory pointer, got ptr.global");
    oxide_module_destroy(x.m);
}

int main(void) {
    if (oxide_context_create(&C) || oxide_options_create(&SM80) || oxide_options_create(&SM90) ||
        oxide_options_set_target(SM80, "sm_80") || oxide_options_set_target(SM90, "sm_90a")) {
        printf("setup failed: %s\n0 passed, 1 failed\n", oxide_last_error());
        return 1;
    }
    oxide_type_scalar(C, OXIDE_TYPE_VOID, &tvoid);
    oxide_type_scalar(C, OXIDE_TYPE_I32, &ti32);
    oxide_type_scalar(C, OXIDE_TYPE_I64, &ti64);
    oxide_type_scalar(C, OXIDE_TYPE_F32, &tf32);
    oxide_type_pointer(C, OXIDE_AS_GENERIC, &tptr);
    oxide_type_pointer(C, OXIDE_AS_GLOBAL, &tgptr);
    oxide_type_pointer(C, OXIDE_AS_SHARED, &tsptr);
    oxide_type_pointer(C, OXIDE_AS_LOCAL, &tlptr);
    oxide_type_array(C, tf32, 2, &tarr2f32);

    test_valid_examples();
    test_unreachable_policy();
    test_types_recheck();
    test_aggregates_and_memory_results();
    test_dominance();
    test_terminators();
    test_address_spaces();
    test_tier2();
    test_type_limits();
    test_attributes();
    test_printf_assert();
    test_interface();
    test_names();
    test_renames();
    test_reporting();
    test_argument_messages();

    oxide_options_destroy(SM80);
    oxide_options_destroy(SM90);
    oxide_context_destroy(C);
    return check_report("test_verify");
}
