/* oxide_module_compile end to end through the public API: PTX shape (entries, directives,
 * manifest), the manifest read back, determinism, options (targets, PTX version, opt levels,
 * fast-math, line info), LLVM IR access, and failures that must be statuses, not aborts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"
#include "oxide_examples.h"

static oxide_context *ctx;

static oxide_options *opts_for(const char *target, int level) {
    oxide_options *o = NULL;
    OK(oxide_options_create(&o));
    OK(oxide_options_set_target(o, target));
    OK(oxide_options_set_opt_level(o, level));
    return o;
}

/* m compiled with o (NULL: the defaults): its PTX, or NULL after a failed check naming what. */
static const char *compiled(oxide_module *m, const oxide_options *o, const char *what) {
    const char *ptx = NULL;
    oxide_status st = oxide_module_compile(m, o, &ptx, NULL);
    CHECK(st == OXIDE_OK, "%s: %s", what, oxide_last_error());
    return st ? NULL : ptx;
}

/* Compile a fresh module holding the named examples; returns a malloc'd copy of the PTX (NULL
 * on failure, with *st set). */
static char *compile_examples(const char *const *names, size_t n, const oxide_options *o, oxide_status *st_out) {
    oxide_module *m;
    OK(oxide_module_create(ctx, "m", &m));
    oxide_status st = OXIDE_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const oxide_example_kernel *k = oxide_example_find(names[i]);
        st = k ? k->build(ctx, m) : OXIDE_ERROR_NOT_FOUND;
    }
    const char *ptx = NULL;
    size_t len = 0;
    if (!st)
        st = oxide_module_compile(m, o, &ptx, &len);
    char *copy = NULL;
    if (!st) {
        CHECK(strlen(ptx) == len, "len %zu vs strlen %zu", len, strlen(ptx));
        copy = strdup(ptx);
    }
    if (st_out)
        *st_out = st;
    oxide_module_destroy(m);
    return copy;
}

static char *compile1(const char *name, const oxide_options *o) {
    oxide_status st;
    char *p = compile_examples(&name, 1, o, &st);
    CHECK(p, "compiling %s: %s: %s", name, oxide_status_name(st), oxide_last_error());
    return p;
}

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
        n++;
    return n;
}

/* ---- PTX shape and the manifest ---- */

static void test_vecadd_targets(void) {
    static const char *const targets[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a"};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        oxide_options *o = opts_for(targets[t], 3);
        char *ptx = compile1("vecadd", o);
        if (ptx) {
            char want[64];
            snprintf(want, sizeof want, ".target %s\n", targets[t]);
            CHECK(strstr(ptx, want), "%s: no '%s'", targets[t], want);
            CHECK(strstr(ptx, ".visible .entry vecadd("), "%s: no entry", targets[t]);
            /* the manifest sits between the header comments and .version */
            const char *man = strstr(ptx, "// oxide.manifest.v1 {");
            const char *ver = strstr(ptx, "\n.version ");
            CHECK(man && ver && man < ver, "%s: manifest not before .version", targets[t]);
            CHECK(man && !strncmp(ptx, "//", 2) && man[-1] == '\n', "%s: manifest not on its own line", targets[t]);
            snprintf(want, sizeof want, "\"target\":\"%s\"", targets[t]);
            CHECK(man && strstr(man, want), "%s: manifest lacks %s", targets[t], want);
            CHECK(count(ptx, "oxide.manifest.v1") == 1, "%s: one manifest line", targets[t]);
        }
        free(ptx);
        oxide_options_destroy(o);
    }
}

static void test_manifest_roundtrip(void) {
    oxide_options *o = opts_for("sm_90a", 3);
    static const char *const names[] = {"vecadd", "saxpy", "sgemm", "cluster_dsmem"};
    oxide_status st;
    char *ptx = compile_examples(names, 4, o, &st);
    CHECK(ptx, "compile: %s", oxide_last_error());
    if (!ptx) {
        oxide_options_destroy(o);
        return;
    }
    CHECK(strstr(ptx, ".maxntid 256"), "sgemm's launch bounds");
    CHECK(strstr(ptx, ".minnctapersm 2"), "sgemm's min blocks");
    CHECK(strstr(ptx, ".reqnctapercluster 4, 1, 1"), "cluster_dsmem's cluster shape");
    CHECK(strstr(ptx, "\"name\":\"saxpy\",\"entry\":\"saxpy\",\"params\":[{\"name\":\"alpha\",\"kind\":\"scalar\","
                      "\"type\":\"f32\"},{\"name\":\"x\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":false},"
                      "{\"name\":\"y\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":true}],\"launch_bounds\":[0,0],"
                      "\"cluster\":[1,1,1],\"dyn_smem\":0}"),
          "saxpy's manifest entry is exact");

    oxide_manifest *m = NULL;
    st = oxide_manifest_parse(ptx, strlen(ptx), &m);
    CHECK(st == OXIDE_OK, "oxide_manifest_parse: %s: %s", oxide_status_name(st), oxide_last_error());
    if (m) {
        CHECK(oxide_manifest_kernel_count(m) == 4, "4 kernels, got %zu", oxide_manifest_kernel_count(m));
        CHECK(!strcmp(oxide_manifest_target(m), "sm_90a"), "target");
        size_t k;
        OK(oxide_manifest_kernel_find(m, "sgemm", &k));
        CHECK(k == 2, "kernels in module order");
        CHECK(!strcmp(oxide_manifest_kernel_entry(m, k), "sgemm"), "entry");
        CHECK(oxide_manifest_param_count(m, k) == 6, "sgemm has 6 interface params");
        const char *pname;
        oxide_param_kind kind;
        oxide_scalar sc;
        int mut;
        OK(oxide_manifest_param(m, k, 2, &pname, &kind, &sc, &mut, NULL, NULL));
        CHECK(!strcmp(pname, "c") && kind == OXIDE_PARAM_SLICE && sc == OXIDE_SCALAR_F32 && mut, "sgemm param c");
        OK(oxide_manifest_param(m, k, 3, &pname, &kind, &sc, &mut, NULL, NULL));
        CHECK(!strcmp(pname, "m") && kind == OXIDE_PARAM_SCALAR && sc == OXIDE_SCALAR_U32, "sgemm param m");
        uint32_t lb[2], cl[3], dyn;
        OK(oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn));
        CHECK(lb[0] == 256 && lb[1] == 2 && cl[0] == 1 && cl[1] == 1 && cl[2] == 1 && dyn == 0, "sgemm attrs");
        OK(oxide_manifest_kernel_find(m, "cluster_dsmem", &k));
        OK(oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn));
        CHECK(cl[0] == OXIDE_EXAMPLE_CLUSTER_SIZE && cl[1] == 1 && cl[2] == 1, "cluster attrs");
        OK(oxide_manifest_kernel_find(m, "vecadd", &k));
        OK(oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn));
        CHECK(lb[0] == 0 && lb[1] == 0, "unset launch bounds read back as 0,0");
        oxide_manifest_destroy(m);
    }
    free(ptx);
    oxide_options_destroy(o);
}

/* Kernel with every interface kind and awkward names, to check the manifest writer's escaping
 * and the by-value parameter lowering. */
static void test_interface_kinds(void) {
    oxide_module *m;
    oxide_function *k;
    oxide_value *a, *alen, *n, *bytes, *desc, *p;
    OK(oxide_module_create(ctx, "iface", &m));
    OK(oxide_module_add_kernel(m, "k", &k));
    OK(oxide_kernel_add_slice_param(k, "a", OXIDE_SCALAR_F32, 0, &a, &alen));
    OK(oxide_kernel_add_scalar_param(k, "n", OXIDE_SCALAR_U64, &n));
    OK(oxide_kernel_add_bytes_param(k, "f", 16, 8, &bytes));
    OK(oxide_kernel_add_ptr_param(k, "p", OXIDE_SCALAR_F32, 1, &p));
    OK(oxide_kernel_add_tma_desc_param(k, "d", &desc));
    OK(oxide_kernel_set_dyn_smem(k, 1024));
    oxide_block *b;
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    oxide_type *f32;
    OK(oxide_type_scalar(ctx, OXIDE_TYPE_F32, &f32));
    oxide_value *x, *y;
    OK(oxide_build_op(b, OXIDE_OP_LOAD, &bytes, 1, f32, NULL, 0, &x));
    OK(oxide_build_op(b, OXIDE_OP_LOAD, &a, 1, f32, NULL, 0, &y));
    oxide_value *sum, *ops[2] = {x, y};
    OK(oxide_build_op(b, OXIDE_OP_ADD, ops, 2, NULL, NULL, 0, &sum));
    oxide_value *st_ops[2] = {sum, p};
    OK(oxide_build_op(b, OXIDE_OP_STORE, st_ops, 2, NULL, NULL, 0, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    oxide_options *o = opts_for("sm_90a", 3);
    const char *ptx = compiled(m, o, "compile");
    if (ptx) {
        CHECK(strstr(ptx, ".param .align 8 .b8 k_param_3[16]"), "bytes param is .align 8 .b8 [16]");
        CHECK(strstr(ptx, ".param .align 64 .b8 k_param_5[128]"), "tma_desc param is .align 64 .b8 [128]");
        CHECK(strstr(ptx, "{\"name\":\"f\",\"kind\":\"bytes\",\"size\":16,\"align\":8}"), "bytes in manifest");
        CHECK(strstr(ptx, "{\"name\":\"p\",\"kind\":\"ptr\",\"elem\":\"f32\",\"mut\":true}"), "ptr in manifest");
        CHECK(strstr(ptx, "{\"name\":\"d\",\"kind\":\"tma_desc\"}"), "tma_desc in manifest");
        CHECK(strstr(ptx, "{\"name\":\"n\",\"kind\":\"scalar\",\"type\":\"u64\"}"), "scalar in manifest");
        CHECK(strstr(ptx, "\"dyn_smem\":1024"), "dyn_smem in manifest");
    }
    oxide_options_destroy(o);
    oxide_module_destroy(m);
}

/* ---- determinism ---- */

static void test_determinism(void) {
    oxide_options *o = opts_for("sm_90a", 3);
    static const char *const names[] = {"softmax", "reduce", "histogram"};
    oxide_status st;
    char *a = compile_examples(names, 3, o, &st);
    char *b = compile_examples(names, 3, o, &st);
    /* and from another context, with other work compiled in between */
    oxide_context *saved = ctx;
    OK(oxide_context_create(&ctx));
    free(compile1("sgemm", o));
    char *c = compile_examples(names, 3, o, &st);
    oxide_context_destroy(ctx);
    ctx = saved;
    CHECK(a && b && !strcmp(a, b), "same module compiled twice gives the same PTX");
    CHECK(a && c && !strcmp(a, c), "same module in another context gives the same PTX");
    /* the same module object compiled twice */
    oxide_module *m;
    OK(oxide_example_module(ctx, "transpose", &m));
    const char *p1, *p2;
    OK(oxide_module_compile(m, o, &p1, NULL));
    char *copy = strdup(p1);
    OK(oxide_module_compile(m, o, &p2, NULL));
    CHECK(!strcmp(copy, p2), "recompiling one module is stable");
    free(copy);
    oxide_module_destroy(m);
    free(a), free(b), free(c);
    oxide_options_destroy(o);
}

/* ---- options ---- */

/* y = x / z, sqrt(x), exp(x): exact forms by default, approximate ones under fast-math */
static char *math_kernel(int fast) {
    oxide_module *m;
    oxide_function *k;
    oxide_value *x, *xl, *y, *yl;
    OK(oxide_module_create(ctx, "fm", &m));
    OK(oxide_module_add_kernel(m, "fm", &k));
    OK(oxide_kernel_add_slice_param(k, "x", OXIDE_SCALAR_F32, 0, &x, &xl));
    OK(oxide_kernel_add_slice_param(k, "y", OXIDE_SCALAR_F32, 1, &y, &yl));
    oxide_block *b;
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    oxide_type *f32, *i64;
    oxide_type_scalar(ctx, OXIDE_TYPE_F32, &f32);
    oxide_type_scalar(ctx, OXIDE_TYPE_I64, &i64);
    oxide_value *v0, *v1, *one, *p1, *q, *s, *e, *t, *u;
    OK(oxide_build_op(b, OXIDE_OP_LOAD, &x, 1, f32, NULL, 0, &v0));
    OK(oxide_build_const_int(b, i64, 1, &one));
    oxide_attr elem = {.key = OXIDE_ATTR_ELEM, .t = f32};
    OK(oxide_build_op(b, OXIDE_OP_OFFSET, (oxide_value *[]){x, one}, 2, NULL, &elem, 1, &p1));
    OK(oxide_build_op(b, OXIDE_OP_LOAD, &p1, 1, f32, NULL, 0, &v1));
    OK(oxide_build_op(b, OXIDE_OP_FDIV, (oxide_value *[]){v0, v1}, 2, NULL, NULL, 0, &q));
    OK(oxide_build_op(b, OXIDE_OP_SQRT, &v0, 1, NULL, NULL, 0, &s));
    OK(oxide_build_op(b, OXIDE_OP_EXP, &v1, 1, NULL, NULL, 0, &e));
    OK(oxide_build_op(b, OXIDE_OP_ADD, (oxide_value *[]){q, s}, 2, NULL, NULL, 0, &t));
    OK(oxide_build_op(b, OXIDE_OP_ADD, (oxide_value *[]){t, e}, 2, NULL, NULL, 0, &u));
    OK(oxide_build_op(b, OXIDE_OP_STORE, (oxide_value *[]){u, y}, 2, NULL, NULL, 0, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    oxide_options *o = opts_for("sm_90a", 3);
    OK(oxide_options_set_fast_math(o, fast));
    const char *ptx = compiled(m, o, fast ? "fast=1" : "fast=0");
    char *copy = ptx ? strdup(ptx) : NULL;
    oxide_options_destroy(o);
    oxide_module_destroy(m);
    return copy;
}

static void test_fast_math(void) {
    char *exact = math_kernel(0), *fast = math_kernel(1);
    if (exact && fast) {
        CHECK(strstr(exact, "div.rn.f32"), "IEEE division by default");
        CHECK(strstr(exact, "sqrt.rn.f32"), "IEEE sqrt by default");
        CHECK(!strstr(exact, "div.approx") && !strstr(exact, "sqrt.approx"), "no approximations by default");
        CHECK(!strstr(fast, "div.rn.f32") && (strstr(fast, "div.approx") || strstr(fast, "div.full")),
              "approximate division under fast-math");
        CHECK(strstr(fast, "sqrt.approx"), "approximate sqrt under fast-math");
        CHECK(strstr(fast, "ex2.approx.ftz.f32"), "fast exp under fast-math");
        CHECK(strcmp(exact, fast) != 0, "fast-math changes the PTX");
    }
    free(exact);
    free(fast);
}

static void test_opt_levels_and_ptx_version(void) {
    char *ptx[4] = {0};
    for (int l = 0; l < 4; l++) {
        oxide_options *o = opts_for("sm_90a", l);
        ptx[l] = compile1("reduce", o);
        oxide_options_destroy(o);
    }
    CHECK(ptx[0] && ptx[3] && strcmp(ptx[0], ptx[3]), "O0 and O3 differ");
    for (int l = 0; l < 4; l++)
        free(ptx[l]);

    oxide_options *o = opts_for("sm_90a", 3);
    char *p = compile1("vecadd", o);
    CHECK(p && strstr(p, ".version 8.0\n"), "sm_90a defaults to PTX 8.0");
    free(p);
    OK(oxide_options_set_ptx_version(o, 8, 5));
    p = compile1("vecadd", o);
    CHECK(p && strstr(p, ".version 8.5\n"), "PTX 8.5 when asked");
    free(p);
    /* below what sm_90a needs: a status, not an LLVM error */
    OK(oxide_options_set_ptx_version(o, 7, 0));
    oxide_status st;
    const char *name = "vecadd";
    p = compile_examples(&name, 1, o, &st);
    CHECK(!p && st == OXIDE_ERROR_INVALID_ARGUMENT, "PTX 7.0 for sm_90a: %s", oxide_status_name(st));
    CHECK(strstr(oxide_last_error(), "8.0"), "message names the needed version: %s", oxide_last_error());
    free(p);
    oxide_options_destroy(o);
    o = opts_for("sm_80", 3);
    p = compile1("vecadd", o);
    CHECK(p && strstr(p, ".version 7.0\n"), "sm_80 defaults to PTX 7.0");
    free(p);
    oxide_options_destroy(o);
}

static void test_line_info(void) {
    oxide_options *o = opts_for("sm_90a", 3);
    OK(oxide_options_set_line_info(o, 1));
    char *p = compile1("saxpy", o);
    CHECK(p && strstr(p, ".file") && strstr(p, ".loc"), "line info gives .file and .loc");
    CHECK(p && strstr(p, "\"m.oxide\""), "the file is the module's text form");
    free(p);
    oxide_options_destroy(o);
    o = opts_for("sm_90a", 3);
    p = compile1("saxpy", o);
    CHECK(p && !strstr(p, ".loc"), "no line info by default");
    free(p);
    oxide_options_destroy(o);
}

static void test_llvm_ir(void) {
    oxide_module *m;
    const char *ir;
    OK(oxide_example_module(ctx, "vecadd", &m));
    oxide_status st = oxide_module_get_llvm_ir(m, &ir);
    CHECK(st == OXIDE_ERROR_STATE, "LLVM IR before compiling: %s", oxide_status_name(st));
    const char *ptx;
    OK(oxide_module_compile(m, NULL, &ptx, NULL));
    OK(oxide_module_get_llvm_ir(m, &ir));
    CHECK(ir && strstr(ir, "define ptx_kernel void @vecadd("), "optimised IR has the kernel");
    CHECK(ir && strstr(ir, "nvptx64-nvidia-cuda"), "and the triple");
    oxide_module_destroy(m);
}

/* vecadd's optimised LLVM IR at level, from a module of its own, malloc'd. */
static char *vecadd_ir(int level) {
    oxide_module *m;
    const char *ptx, *ir;
    oxide_options *o = opts_for("sm_90a", level);
    OK(oxide_example_module(ctx, "vecadd", &m));
    OK(oxide_module_compile(m, o, &ptx, NULL));
    OK(oxide_module_get_llvm_ir(m, &ir));
    char *copy = strdup(ir);
    oxide_module_destroy(m);
    oxide_options_destroy(o);
    return copy;
}

/* The IR is made when asked for, after the compile: it must be the compile's even when the
 * module changes in between, the options change, or a later compile fails. */
static void test_llvm_ir_of_last_compile(void) {
    char *o0 = vecadd_ir(0), *o3 = vecadd_ir(3);
    CHECK(strcmp(o0, o3) != 0, "levels 0 and 3 give different IR");
    oxide_module *m;
    oxide_function *k;
    oxide_block *b;
    const char *ptx, *ir;
    oxide_options *o = opts_for("sm_90a", 0);
    OK(oxide_example_module(ctx, "vecadd", &m));
    OK(oxide_module_compile(m, o, &ptx, NULL));
    OK(oxide_module_add_kernel(m, "extra", &k));
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    OK(oxide_module_get_llvm_ir(m, &ir));
    CHECK(!strcmp(ir, o0), "IR asked for after an edit is the compile's (level 0)");
    oxide_options_destroy(o);
    o = opts_for("sm_90a", 3);
    OK(oxide_module_compile(m, o, &ptx, NULL));
    OK(oxide_module_get_llvm_ir(m, &ir));
    CHECK(strstr(ir, "@extra(") && strcmp(ir, o3) != 0, "a new compile gives the edited module's IR");
    char *with_extra = strdup(ir);
    OK(oxide_options_set_ptx_version(o, 6, 0));
    CHECK(oxide_module_compile(m, o, &ptx, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "PTX 6.0 is refused for sm_90a");
    OK(oxide_module_get_llvm_ir(m, &ir));
    CHECK(!strcmp(ir, with_extra), "a failed compile leaves the last one's IR");
    free(with_extra);
    oxide_options_destroy(o);
    oxide_module_destroy(m);
    free(o0);
    free(o3);
}

/* ---- failures are statuses ---- */

static void test_failures(void) {
    const char *ptx;
    CHECK(oxide_module_compile(NULL, NULL, &ptx, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL module");
    oxide_module *m;
    OK(oxide_example_module(ctx, "vecadd", &m));
    CHECK(oxide_module_compile(m, NULL, NULL, NULL) == OXIDE_ERROR_INVALID_ARGUMENT, "NULL ptx out");
    oxide_module_destroy(m);

    /* an op above the target SM is caught by the verifier */
    oxide_options *o = opts_for("sm_80", 3);
    const char *name = "cluster_dsmem";
    oxide_status st;
    char *p = compile_examples(&name, 1, o, &st);
    CHECK(!p && st == OXIDE_ERROR_VERIFY, "cluster ops on sm_80: %s", oxide_status_name(st));
    CHECK(strstr(oxide_last_error(), "sm_90"), "message names the SM: %s", oxide_last_error());
    free(p);
    oxide_options_destroy(o);

    /* a block without a terminator */
    OK(oxide_module_create(ctx, "bad", &m));
    oxide_function *k;
    oxide_block *b;
    OK(oxide_module_add_kernel(m, "k", &k));
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    st = oxide_module_compile(m, NULL, &ptx, NULL);
    CHECK(st == OXIDE_ERROR_VERIFY, "unterminated block: %s", oxide_status_name(st));
    oxide_module_destroy(m);

    /* imported bitcode that is not bitcode: a status whatever the importer does with it */
    OK(oxide_module_create(ctx, "imp", &m));
    static const char junk[] = "this is not LLVM bitcode";
    st = oxide_module_import_bitcode(m, junk, sizeof junk, "junk");
    if (st == OXIDE_OK)
        st = oxide_module_compile(m, NULL, &ptx, NULL);
    CHECK(st != OXIDE_OK, "junk bitcode fails with a status");
    oxide_module_destroy(m);
}

/* IR names may hold '.', which PTX identifiers cannot: the PTX spells them its way and the
 * manifest's entry says how. Names LLVM reserves are refused. */
static void test_symbol_names(void) {
    oxide_module *m;
    oxide_function *k;
    oxide_block *b;
    oxide_global *g;
    oxide_type *i32;
    oxide_type_scalar(ctx, OXIDE_TYPE_I32, &i32);
    OK(oxide_module_create(ctx, "names", &m));
    OK(oxide_module_add_global(m, "tab.le", i32, OXIDE_AS_GLOBAL, 0, NULL, 0, &g));
    OK(oxide_module_add_kernel(m, "my.kernel", &k));
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    const char *ptx = compiled(m, NULL, "dotted names");
    if (ptx) {
        CHECK(strstr(ptx, ".entry my_$_kernel("), "entry spelled for PTX");
        CHECK(strstr(ptx, "\"name\":\"my.kernel\",\"entry\":\"my_$_kernel\""), "manifest maps name to entry");
        CHECK(strstr(ptx, "tab_$_le") && !strstr(ptx, " tab.le"), "global spelled for PTX");
    }
    oxide_module_destroy(m);

    /* "a.b" is spelled a_$_b for PTX, which another kernel already is: each manifest entry is
     * the distinct .entry emitted for its own kernel (told apart by their parameter counts). */
    static const char *const clash[] = {"a.b", "a_$_b", "a_$_b1"};
    oxide_value *pv;
    OK(oxide_module_create(ctx, "clash", &m));
    for (int i = 0; i < 3; i++) {
        OK(oxide_module_add_kernel(m, clash[i], &k));
        for (int j = 0; j < i; j++)
            OK(oxide_kernel_add_scalar_param(k, j ? "y" : "x", OXIDE_SCALAR_U32, &pv));
        OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
        OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    }
    size_t len = 0;
    oxide_status st = oxide_module_compile(m, NULL, &ptx, &len);
    CHECK(st == OXIDE_OK, "clashing names: %s", oxide_last_error());
    oxide_manifest *man = NULL;
    if (!st && oxide_manifest_parse(ptx, len, &man) == OXIDE_OK) {
        for (size_t i = 0; i < 3; i++) {
            size_t ki = 0;
            OK(oxide_manifest_kernel_find(man, clash[i], &ki));
            const char *entry = oxide_manifest_kernel_entry(man, ki);
            for (size_t j = 0; j < i; j++) {
                size_t kj = 0;
                OK(oxide_manifest_kernel_find(man, clash[j], &kj));
                CHECK(strcmp(entry, oxide_manifest_kernel_entry(man, kj)), "'%s' and '%s' share entry %s", clash[i],
                      clash[j], entry);
            }
            char head[64];
            snprintf(head, sizeof head, ".entry %s(", entry);
            const char *at = strstr(ptx, head), *end = at ? strchr(at, ')') : NULL;
            CHECK(at && end, "kernel '%s': no '%s' in the PTX", clash[i], head);
            int params = 0;
            for (const char *q = at; end && (q = strstr(q, ".param")) && q < end; q++)
                params++;
            CHECK(params == (int)i, "kernel '%s' -> entry %s with %d parameters, want %zu", clash[i], entry, params, i);
        }
        oxide_manifest_destroy(man);
    }
    oxide_module_destroy(m);

    OK(oxide_module_create(ctx, "reserved", &m));
    OK(oxide_module_add_kernel(m, "vprintf", &k));
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    /* the verifier refuses it, so that `oxide verify` and compile agree */
    st = oxide_module_compile(m, NULL, &ptx, NULL);
    CHECK(st == OXIDE_ERROR_VERIFY && strstr(oxide_last_error(), "reserved"), "a kernel named vprintf: %s",
          oxide_status_name(st));
    oxide_module_destroy(m);
}

/* printf and assert lower to vprintf (and trap) */
static void test_printf_assert(void) {
    oxide_module *m;
    oxide_function *k;
    oxide_value *x, *xl;
    OK(oxide_module_create(ctx, "dbg", &m));
    OK(oxide_module_add_kernel(m, "dbg", &k));
    OK(oxide_kernel_add_slice_param(k, "x", OXIDE_SCALAR_F32, 0, &x, &xl));
    oxide_block *b;
    OK(oxide_function_add_block(k, NULL, 0, &b, NULL));
    oxide_type *f32, *i64;
    oxide_type_scalar(ctx, OXIDE_TYPE_F32, &f32);
    oxide_type_scalar(ctx, OXIDE_TYPE_I64, &i64);
    oxide_value *v, *zero, *c;
    OK(oxide_build_op(b, OXIDE_OP_LOAD, &x, 1, f32, NULL, 0, &v));
    oxide_attr fmt = {.key = OXIDE_ATTR_STR, .s = "x[0] = %f, len %llu\n"};
    OK(oxide_build_op(b, OXIDE_OP_PRINTF, (oxide_value *[]){v, xl}, 2, NULL, &fmt, 1, NULL));
    OK(oxide_build_const_int(b, i64, 0, &zero));
    oxide_attr ne = {.key = OXIDE_ATTR_PRED, .i = OXIDE_PRED_NE};
    OK(oxide_build_op(b, OXIDE_OP_ICMP, (oxide_value *[]){xl, zero}, 2, NULL, &ne, 1, &c));
    oxide_attr msg = {.key = OXIDE_ATTR_STR, .s = "x is not empty"};
    OK(oxide_build_op(b, OXIDE_OP_ASSERT, &c, 1, NULL, &msg, 1, NULL));
    OK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL));
    const char *ptx;
    OK(oxide_module_compile(m, NULL, &ptx, NULL));
    CHECK(count(ptx, "call.uni (retval0), vprintf") + count(ptx, "vprintf,") >= 2, "printf and assert call vprintf");
    CHECK(strstr(ptx, "trap;"), "assert traps");
    oxide_module_destroy(m);
}

int main(void) {
    if (oxide_context_create(&ctx) != OXIDE_OK) {
        fprintf(stderr, "no context: %s\n", oxide_last_error());
        return 1;
    }
    test_vecadd_targets();
    test_manifest_roundtrip();
    test_interface_kinds();
    test_determinism();
    test_fast_math();
    test_opt_levels_and_ptx_version();
    test_line_info();
    test_llvm_ir();
    test_llvm_ir_of_last_compile();
    test_failures();
    test_printf_assert();
    test_symbol_names();
    oxide_context_destroy(ctx);
    return check_report("test_compile");
}
