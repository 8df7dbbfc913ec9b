/* The tile IR core: the files of tests/ir/tile (valid kernels round-trip exactly and verify; files
 * starting "; expect: error LINE:COL phrase" fail there, in the parser or the verifier, with an
 * optional "; target: sm_XX" line), and the C API that builds tile kernels. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir.h"

static oxide_context *ctx;

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The value of a leading "; key: value" line (NUL-terminated copy in out), or NULL. */
static const char *directive(const char *line, const char *key, char *out, size_t cap) {
    size_t k = strlen(key), n = strcspn(line, "\n");
    if (strncmp(line, "; ", 2) || strncmp(line + 2, key, k) || line[2 + k] != ':' || line[3 + k] != ' ')
        return NULL;
    snprintf(out, cap, "%.*s", (int)(n - 4 - k), line + 4 + k);
    return out;
}

static void expect_parse_error(const char *name, const char *text, size_t len, const char *want) {
    unsigned line = 0, col = 0;
    int n = 0;
    char pos[32];
    CHECK(sscanf(want, "%u:%u %n", &line, &col, &n) == 2 && n > 0, "%s: write 'error LINE:COL phrase'", name);
    snprintf(pos, sizeof pos, "%u:%u: ", line, col);
    oxide_module *m = NULL;
    oxide_status st = oxide_module_parse(ctx, text, len, &m);
    const char *msg = st ? oxide_last_error() : "";
    CHECK(st == OXIDE_ERROR_PARSE && !strncmp(msg, pos, strlen(pos)) && strstr(msg, want + n),
          "%s: expected PARSE with \"%s%s\", got %s: %s", name, pos, want + n, oxide_status_name(st), msg);
    if (!st)
        oxide_module_destroy(m);
}

/* ok: verifies at the target, prints back exactly and compiles (or names what is not lowered yet);
 * verify PHRASE: the verifier's message holds PHRASE ("at LINE:COL: ..." for the position). */
static void expect_verdict(const char *name, oxide_module *m, const char *target, const char *want) {
    oxide_options *o;
    oxide_options_create(&o);
    CHECK(oxide_options_set_target(o, target) == OXIDE_OK, "%s: target %s", name, target);
    oxide_status st = oxide_module_verify(m, o);
    const char *msg = st ? oxide_last_error() : "";
    if (!strcmp(want, "ok")) {
        CHECK(st == OXIDE_OK, "%s: expected OK at %s, got %s", name, target, msg);
        const char *ptx = NULL;
        st = oxide_module_compile(m, o, &ptx, NULL);
        /* the tile compiler lowers it, or names the op it does not lower yet */
        CHECK(st == OXIDE_OK || (st == OXIDE_ERROR_UNSUPPORTED && (strstr(oxide_last_error(), "not lowered") ||
                                                                   strstr(oxide_last_error(), "in this version"))),
              "%s: compiling it: %s: %s", name, oxide_status_name(st), st ? oxide_last_error() : "");
    } else {
        CHECK(!strncmp(want, "verify ", 7) && st == OXIDE_ERROR_VERIFY && strstr(msg, want + 7),
              "%s: expected '%s' at %s, got %s", name, want, target, msg);
    }
    oxide_options_destroy(o);
}

/* One file: leading "; target: sm_XX" and "; expect: ..." lines, then the module (in printed
 * form, unless it is expected not to parse). */
static void run_file(const char *name, const char *text, size_t len, int *valid, int *errors) {
    const char *body = text;
    char v[512], target[32] = "sm_90a";
    bool parse_error = false;
    while (*body == ';') {
        parse_error |= directive(body, "expect", v, sizeof v) && !strncmp(v, "error ", 6);
        body += strcspn(body, "\n") + (body[strcspn(body, "\n")] != 0);
    }
    CHECK(body != text, "%s: needs '; expect: ...' lines", name);
    oxide_module *m = NULL;
    if (!parse_error) {
        const char *out = NULL;
        oxide_status st = oxide_module_parse(ctx, text, len, &m);
        CHECK(st == OXIDE_OK, "%s: parse: %s", name, oxide_last_error());
        if (st)
            return;
        CHECK(oxide_module_print(m, &out) == OXIDE_OK && !strcmp(out, body), "%s: prints differently:\n%s", name,
              out ? out : "");
    }
    for (const char *l = text; l < body; l += strcspn(l, "\n") + 1) {
        char t[32];
        if (directive(l, "target", t, sizeof t))
            snprintf(target, sizeof target, "%s", t);
        else if (directive(l, "expect", v, sizeof v) && parse_error)
            expect_parse_error(name, text, len, v + 6), ++*errors;
        else if (directive(l, "expect", v, sizeof v))
            expect_verdict(name, m, target, v), strcmp(v, "ok") ? ++*errors : ++*valid;
    }
    oxide_module_destroy(m);
}

static void test_files(void) {
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/ir/tile", OXIDE_TEST_DATA);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".oxir"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int valid = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = check_read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (text)
            run_file(names[i], text, len, &valid, &errors);
        free(text);
        free(names[i]);
    }
    CHECK(valid >= 8 && errors >= 30, "expected the tile samples in %s, found %d ok and %d error expectations", dir,
          valid, errors);
}

static oxide_type *scalar(oxide_type_kind k) {
    oxide_type *t = NULL;
    oxide_type_scalar(ctx, k, &t);
    return t;
}

static void test_types(void) {
    oxide_type *f32 = scalar(OXIDE_TYPE_F32), *t1, *t2, *bad = NULL;
    const uint32_t s64[] = {64, 64}, s48[] = {48}, s0[] = {16, 0}, sbig[] = {2048, 1024}, s4[] = {2, 2, 2, 2};
    CHECK(oxide_type_tile(ctx, f32, 2, s64, &t1) == OXIDE_OK && !strcmp(oxide_type_get_name(t1), "tile<64x64 x f32>"));
    CHECK(oxide_type_tile(ctx, f32, 2, s64, &t2) == OXIDE_OK && t1 == t2, "equal tiles are one interned type");
    CHECK(oxide_type_get_kind(t1) == OXIDE_TYPE_TILE);
    CHECK(oxide_type_tile(ctx, f32, 1, s64, &t2) == OXIDE_OK && t1 != t2 &&
          !strcmp(oxide_type_get_name(t2), "tile<64 x f32>"));
    CHECK(oxide_type_tile(ctx, f32, 1, s48, &bad) == OXIDE_ERROR_INVALID_ARGUMENT && !bad &&
          strstr(oxide_last_error(), "power of two"));
    CHECK(oxide_type_tile(ctx, f32, 2, s0, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_tile(ctx, f32, 2, sbig, &bad) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "2^20"));
    CHECK(oxide_type_tile(ctx, f32, 4, s4, &bad) == OXIDE_ERROR_INVALID_ARGUMENT && strstr(oxide_last_error(), "rank"));
    CHECK(oxide_type_tile(ctx, f32, 0, s4, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_tile(ctx, scalar(OXIDE_TYPE_F64), 1, s64, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_tile(ctx, t1, 1, s64, &bad) == OXIDE_ERROR_INVALID_ARGUMENT, "no tiles of tiles");
    CHECK(oxide_type_tile(ctx, NULL, 1, s64, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);

    oxide_type *e4 = scalar(OXIDE_TYPE_F8E4M3), *e5 = scalar(OXIDE_TYPE_F8E5M2), *tm, *tc;
    CHECK(e4 && e5 && e4 != e5 && !strcmp(oxide_type_get_name(e4), "f8e4m3") &&
          !strcmp(oxide_type_get_name(e5), "f8e5m2") && scalar(OXIDE_TYPE_F8E4M3) == e4);
    CHECK(oxide_type_tensor(ctx, e4, 2, 1, &tm) == OXIDE_OK &&
          !strcmp(oxide_type_get_name(tm), "tensor<mut 2 x f8e4m3>"));
    CHECK(oxide_type_tensor(ctx, e4, 2, 0, &tc) == OXIDE_OK && tc != tm &&
          !strcmp(oxide_type_get_name(tc), "tensor<2 x f8e4m3>"));
    CHECK(oxide_type_tensor(ctx, scalar(OXIDE_TYPE_I1), 1, 0, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_tensor(ctx, f32, 5, 0, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);

    /* no C layout: no arrays, structs or globals of them */
    oxide_type *fields[] = {f32, t1};
    CHECK(oxide_type_array(ctx, t1, 4, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_array(ctx, e4, 4, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_struct(ctx, fields, 2, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_type_vector(ctx, e4, 4, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    oxide_module *m;
    oxide_global *g;
    CHECK(oxide_module_create(ctx, "layout", &m) == OXIDE_OK);
    CHECK(oxide_module_add_global(m, "g", t1, OXIDE_AS_SHARED, 0, NULL, 0, &g) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "no memory layout"));
    CHECK(oxide_module_add_global(m, "h", tm, OXIDE_AS_GLOBAL, 0, NULL, 0, &g) == OXIDE_ERROR_INVALID_ARGUMENT);
    oxide_module_destroy(m);
}

/* The spec's example kernel through the C API prints exactly as tests/ir/tile/add2d.oxir. */
static void test_build_add2d(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/ir/tile/add2d.oxir", OXIDE_TEST_DATA);
    char *want = check_read_file(path, NULL);
    CHECK(want != NULL, "cannot read %s", path);
    oxide_type *f32 = scalar(OXIDE_TYPE_F32), *i32 = scalar(OXIDE_TYPE_I32), *tin, *tout, *tile;
    const uint32_t shape[] = {64, 64};
    oxide_type_tensor(ctx, f32, 2, 0, &tin);
    oxide_type_tensor(ctx, f32, 2, 1, &tout);
    oxide_type_tile(ctx, f32, 2, shape, &tile);
    oxide_module *m;
    oxide_function *k;
    oxide_value *x, *y, *z, *pm, *pn, *c64, *om, *on, *a, *b, *s;
    oxide_block *bl;
    oxide_status st = oxide_module_create(ctx, "add2d", &m);
    CHECK(st == OXIDE_OK && oxide_module_add_tile_kernel(m, "add", &k) == OXIDE_OK);
    CHECK(oxide_kernel_add_tensor_param(k, "x", tin, &x) == OXIDE_OK);
    CHECK(oxide_kernel_add_tensor_param(k, "y", tin, &y) == OXIDE_OK);
    CHECK(oxide_kernel_add_tensor_param(k, "z", tout, &z) == OXIDE_OK);
    CHECK(oxide_function_add_block(k, NULL, 0, &bl, NULL) == OXIDE_OK);
    oxide_attr axis0 = {.key = OXIDE_ATTR_IMM, .i = 0}, axis1 = {.key = OXIDE_ATTR_IMM, .i = 1};
    oxide_attr pad = {.key = OXIDE_ATTR_PAD, .f = 0};
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_PROGRAM_ID, NULL, 0, NULL, &axis0, 1, &pm) == OXIDE_OK);
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_PROGRAM_ID, NULL, 0, NULL, &axis1, 1, &pn) == OXIDE_OK);
    CHECK(oxide_build_const_int(bl, i32, 64, &c64) == OXIDE_OK);
    oxide_value *mo[] = {pm, c64}, *no[] = {pn, c64};
    CHECK(oxide_build_op(bl, OXIDE_OP_MUL, mo, 2, NULL, NULL, 0, &om) == OXIDE_OK);
    CHECK(oxide_build_op(bl, OXIDE_OP_MUL, no, 2, NULL, NULL, 0, &on) == OXIDE_OK);
    oxide_value *lx[] = {x, om, on}, *ly[] = {y, om, on};
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_LOAD, lx, 3, tile, &pad, 1, &a) == OXIDE_OK);
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_LOAD, ly, 3, tile, &pad, 1, &b) == OXIDE_OK);
    oxide_value *ab[] = {a, b};
    CHECK(oxide_build_op(bl, OXIDE_OP_ADD, ab, 2, NULL, NULL, 0, &s) == OXIDE_OK && oxide_value_get_type(s) == tile);
    oxide_value *sz[] = {z, om, on, s};
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_STORE, sz, 4, NULL, NULL, 0, NULL) == OXIDE_OK);
    CHECK(oxide_build_op(bl, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL) == OXIDE_OK);
    const char *names[] = {"pm", "pn", "c64", "om", "on", "a", "b", "s"};
    oxide_value *vals[] = {pm, pn, c64, om, on, a, b, s};
    for (int i = 0; i < 8; i++)
        oxide_value_set_name(vals[i], names[i]);
    const char *text = NULL;
    const char *body = want ? strstr(want, "module @") : NULL; /* after the "; expect: ok" line */
    CHECK(oxide_module_print(m, &text) == OXIDE_OK && body && !strcmp(text, body), "built:\n%s", text ? text : "");
    CHECK(oxide_module_verify(m, NULL) == OXIDE_OK);

    /* docs/tile.md shows the same kernel, so the doc cannot drift */
    snprintf(path, sizeof path, "%s/docs/tile.md", OXIDE_SOURCE_DIR);
    char *doc = check_read_file(path, NULL);
    const char *start = doc ? strstr(doc, "```\n") : NULL, *end = start ? strstr(start + 4, "```\n") : NULL;
    CHECK(body && end && (size_t)(end - start - 4) == strlen(body) && !memcmp(start + 4, body, strlen(body)),
          "the example in docs/tile.md differs from tests/ir/tile/add2d.oxir");
    free(doc);

    /* what the builder refuses, op by op, naming the op */
    oxide_value *bad = NULL;
    CHECK(oxide_build_op(bl, OXIDE_OP_TILE_DIM, &x, 1, NULL, &axis0, 1, &bad) == OXIDE_ERROR_STATE,
          "the block is terminated");
    oxide_block *b2;
    CHECK(oxide_function_add_block(k, NULL, 0, &b2, NULL) == OXIDE_OK);
    oxide_attr dim5 = {.key = OXIDE_ATTR_IMM, .i = 5};
    CHECK(oxide_build_op(b2, OXIDE_OP_TILE_DIM, &x, 1, NULL, &dim5, 1, &bad) == OXIDE_ERROR_TYPE_MISMATCH &&
          strstr(oxide_last_error(), "'tile.dim': dim 5 is out of range for tensor<2 x f32> (rank 2)"));
    CHECK(oxide_build_op(b2, OXIDE_OP_TILE_PERMUTE, &a, 1, tile, NULL, 0, &bad) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "needs a perm attribute"));
    oxide_attr perm = {.key = OXIDE_ATTR_PERM, .i = 0x01}, kind = {.key = OXIDE_ATTR_KIND, .i = 7};
    CHECK(oxide_build_op(b2, OXIDE_OP_TILE_PERMUTE, &a, 1, tile, &perm, 1, &bad) == OXIDE_OK, "[1,0] of 64x64");
    CHECK(oxide_build_op(b2, OXIDE_OP_TILE_REDUCE, &a, 1, tile, &kind, 1, &bad) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_build_op(b2, OXIDE_OP_TID_X, NULL, 0, NULL, NULL, 0, &bad) == OXIDE_ERROR_UNSUPPORTED &&
          strstr(oxide_last_error(), "not allowed in a tile kernel"));
    CHECK(oxide_kernel_set_launch_bounds(k, 128, 0) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "tile kernel"));
    oxide_value *p;
    CHECK(oxide_kernel_add_slice_param(k, "late", OXIDE_SCALAR_F32, 0, &p, &p) != OXIDE_OK);
    oxide_module_destroy(m);
    free(want);
}

static void test_hints_and_kernels(void) {
    oxide_module *m;
    oxide_function *tk, *sk;
    oxide_value *v;
    uint32_t h = 0;
    oxide_type *tin;
    oxide_type_tensor(ctx, scalar(OXIDE_TYPE_BF16), 1, 0, &tin);
    CHECK(oxide_module_create(ctx, "hints", &m) == OXIDE_OK);
    CHECK(oxide_module_add_tile_kernel(m, "t", &tk) == OXIDE_OK && oxide_module_add_kernel(m, "s", &sk) == OXIDE_OK);
    CHECK(oxide_module_add_tile_kernel(m, "t", &tk) == OXIDE_ERROR_STATE, "names are unique");
    CHECK(oxide_tile_kernel_get_hint(tk, OXIDE_TILE_HINT_WARPS, &h) == OXIDE_OK && h == 4, "default warps 4");
    CHECK(oxide_tile_kernel_get_hint(tk, OXIDE_TILE_HINT_STAGES, &h) == OXIDE_OK && h == 3, "default stages 3");
    CHECK(oxide_tile_kernel_set_hint(tk, OXIDE_TILE_HINT_WARPS, 8) == OXIDE_OK);
    CHECK(oxide_tile_kernel_get_hint(tk, OXIDE_TILE_HINT_WARPS, &h) == OXIDE_OK && h == 8);
    CHECK(oxide_tile_kernel_set_hint(tk, OXIDE_TILE_HINT_WARPS, 32) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_tile_kernel_set_hint(tk, OXIDE_TILE_HINT_STAGES, 9) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_tile_kernel_set_hint(tk, OXIDE_TILE_HINT_CLUSTER, 3) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_tile_kernel_set_hint(tk, OXIDE_TILE_HINT_CONSUMER_GROUPS, 2) == OXIDE_OK);
    CHECK(oxide_tile_kernel_set_hint(tk, (oxide_tile_hint)17, 1) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_tile_kernel_set_hint(sk, OXIDE_TILE_HINT_WARPS, 4) == OXIDE_ERROR_INVALID_ARGUMENT,
          "a SIMT kernel has no hints");
    /* a SIMT kernel sees a tensor as its view: the pointer, then each dim and stride */
    CHECK(oxide_kernel_add_tensor_param(sk, "t", tin, &v) == OXIDE_OK && v &&
          oxide_value_get_type(v)->kind == OXIDE_TYPE_PTR);
    CHECK(oxide_kernel_add_tensor_param(tk, "t", scalar(OXIDE_TYPE_F32), &v) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_kernel_add_tensor_param(tk, "t", tin, &v) == OXIDE_OK);
    /* fp8 is a tensor element only: no fp8 scalar, slice or ptr parameter, in either kind of kernel */
    CHECK(oxide_kernel_add_scalar_param(tk, "h", OXIDE_SCALAR_F8E4M3, &v) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "parameter 'h' of @t: f8e4m3 is a tensor element type only"));
    oxide_value *v2;
    CHECK(oxide_kernel_add_slice_param(sk, "s8", OXIDE_SCALAR_F8E5M2, 0, &v, &v2) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_kernel_add_ptr_param(sk, "p8", OXIDE_SCALAR_F8E4M3, 1, &v) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_kernel_add_scalar_param(tk, "n", OXIDE_SCALAR_U32, &v) == OXIDE_OK);
    oxide_block *b;
    CHECK(oxide_function_add_block(tk, NULL, 0, &b, NULL) == OXIDE_OK);
    CHECK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL) == OXIDE_OK);
    const char *text;
    CHECK(oxide_module_print(m, &text) == OXIDE_OK &&
              strstr(text, "tile_kernel @t(%t: tensor<1 x bf16>, %n: u32) hints(warps=8, consumer_groups=2) {\n"),
          "%s", text);
    oxide_module_destroy(m);
}

/* IR changed after it was built: the verifier repeats the builder's rules and points into the text. */
static void test_verify_mutated(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/ir/tile/shapes.oxir", OXIDE_TEST_DATA);
    size_t len;
    char *text = check_read_file(path, &len);
    oxide_module *m = NULL;
    CHECK(text && oxide_module_parse(ctx, text, len, &m) == OXIDE_OK);
    free(text);
    if (!m)
        return;
    oxide_function *k = m->functions.items[0];
    oxide_block *b = k->blocks.items[0];
    oxide_inst *perm = b->insts.items[4];
    CHECK(perm->op == OXIDE_OP_TILE_PERMUTE && perm->line == 10 && perm->col == 8);
    perm->perm = 0x00; /* [0,0] */
    CHECK(oxide_module_verify(m, NULL) == OXIDE_ERROR_VERIFY &&
              strstr(oxide_last_error(),
                     "verify: tile_kernel @shapes ^0 #4 'tile.permute' at 10:8: perm [0,0] is not a "
                     "permutation of 0..1"),
          "got %s", oxide_last_error());
    perm->perm = 0x01;
    k->hints[OXIDE_TILE_HINT_WARPS] = 3;
    CHECK(oxide_module_verify(m, NULL) == OXIDE_ERROR_VERIFY && strstr(oxide_last_error(), "hint warps=3"));
    k->hints[OXIDE_TILE_HINT_WARPS] = 2;
    k->is_tile = false; /* now a SIMT kernel holding tile ops and tensor parameters */
    CHECK(oxide_module_verify(m, NULL) == OXIDE_ERROR_VERIFY &&
          strstr(oxide_last_error(), "tile ops belong in tile kernels"));
    k->is_tile = true;
    CHECK(oxide_module_verify(m, NULL) == OXIDE_OK, "%s", oxide_last_error());
    oxide_module_destroy(m);
}

int main(void) {
    if (oxide_context_create(&ctx) != OXIDE_OK)
        return 1;
    test_files();
    test_types();
    test_build_add2d();
    test_hints_and_kernels();
    test_verify_mutated();
    oxide_context_destroy(ctx);
    return check_report("test_tile_ir");
}
