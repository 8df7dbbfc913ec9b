/* fp8 casts, fp8 constants and pads, and tile.print on the GPU, compared with the tile
 * interpreter (oxide_tile_interpret) run on the same inputs: every output bit for bit (a NaN of
 * an f16, bf16 or f32 output only as a NaN: the bits of a float NaN are not defined). Each kernel
 * is compiled twice, for the GPU's own target (sm_89+: the cvt instructions) and for sm_80 (the
 * conversions in integer ops), and both run on the GPU. The inputs: every f16 and every bf16 bit
 * pattern, every fp8 pattern, random f32 bit patterns and f32 values near the fp8 range (ties,
 * the saturation edges, subnormals, infinities and NaNs of both signs), random i32. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "../gpu_test.h"

static oxide_device *dev;
static oxide_context *ctx;
static char target[16];

enum { N = 65536, TILE = 1024, NOUT = 11 };

/* Output tensors of @casts: name, element, bytes per element, whether it is a float (NaN
 * compares as NaN). The kernel computes them from the loaded tile %a of the source type. */
static const struct out {
    const char *name, *elem;
    oxide_scalar scalar;
    uint32_t size;
    bool is_float;
} outs[NOUT] = {
    {"o4", "f8e4m3", OXIDE_SCALAR_F8E4M3, 1, false},  {"o5", "f8e5m2", OXIDE_SCALAR_F8E5M2, 1, false},
    {"f4", "f32", OXIDE_SCALAR_F32, 4, true},         {"f5", "f32", OXIDE_SCALAR_F32, 4, true},
    {"x45", "f8e5m2", OXIDE_SCALAR_F8E5M2, 1, false}, {"x54", "f8e4m3", OXIDE_SCALAR_F8E4M3, 1, false},
    {"i4", "i32", OXIDE_SCALAR_I32, 4, false},        {"z5", "i8", OXIDE_SCALAR_I8, 1, false},
    {"h4", "bf16", OXIDE_SCALAR_BF16, 2, true},       {"h5", "f16", OXIDE_SCALAR_F16, 2, true},
    {"z", "i8", OXIDE_SCALAR_I8, 1, false},
};

static const char casts_body[] = "  %%p = tile.program_id {imm=0} : i32\n"
                                 "  %%c = const {value=%d} : i32\n"
                                 "  %%o = mul %%p, %%c : i32\n"
                                 "  %%a = tile.load %%x, %%o {pad=0} : tile<%d x %s>\n"
                                 "  %%q4 = tile.cast %%a : tile<%d x f8e4m3>\n"
                                 "  %%q5 = tile.cast %%a : tile<%d x f8e5m2>\n"
                                 "  tile.store %%o4, %%o, %%q4\n"
                                 "  tile.store %%o5, %%o, %%q5\n"
                                 "  %%v4 = tile.cast %%q4 : tile<%d x f32>\n"
                                 "  tile.store %%f4, %%o, %%v4\n"
                                 "  %%v5 = tile.cast %%q5 : tile<%d x f32>\n"
                                 "  tile.store %%f5, %%o, %%v5\n"
                                 "  %%y45 = tile.cast %%q4 : tile<%d x f8e5m2>\n"
                                 "  tile.store %%x45, %%o, %%y45\n"
                                 "  %%y54 = tile.cast %%q5 : tile<%d x f8e4m3>\n"
                                 "  tile.store %%x54, %%o, %%y54\n"
                                 "  %%j4 = tile.cast %%q4 : tile<%d x i32>\n"
                                 "  tile.store %%i4, %%o, %%j4\n"
                                 "  %%b5 = tile.cast %%q5 : tile<%d x i1>\n"
                                 "  %%w5 = tile.cast %%b5 : tile<%d x i8>\n"
                                 "  tile.store %%z5, %%o, %%w5\n"
                                 "  %%g4 = tile.cast %%q4 : tile<%d x bf16>\n"
                                 "  tile.store %%h4, %%o, %%g4\n"
                                 "  %%g5 = tile.cast %%q5 : tile<%d x f16>\n"
                                 "  tile.store %%h5, %%o, %%g5\n"
                                 "  %%ba = tile.cast %%a : tile<%d x i1>\n"
                                 "  %%wa = tile.cast %%ba : tile<%d x i8>\n"
                                 "  tile.store %%z, %%o, %%wa\n"
                                 "  ret\n"
                                 "}\n";

static void casts_ir(char *ir, size_t cap, const char *src) {
    int n = snprintf(ir, cap, "module @c\n\ntile_kernel @casts(%%x: tensor<1 x %s>", src);
    for (int i = 0; i < NOUT; i++)
        n += snprintf(ir + n, cap - (size_t)n, ", %%%s: tensor<mut 1 x %s>", outs[i].name, outs[i].elem);
    n += snprintf(ir + n, cap - (size_t)n, ") hints(warps=4) {\n^0:\n");
    snprintf(ir + n, cap - (size_t)n, casts_body, TILE, TILE, src, TILE, TILE, TILE, TILE, TILE, TILE, TILE, TILE, TILE,
             TILE, TILE, TILE, TILE);
}

/* PTX of ir for tgt, loaded; kernel name. */
static oxide_kernel *load(oxide_module *m, const char *tgt, const char *name, oxide_loaded_module **lm) {
    oxide_status st;
    oxide_kernel *k = gpu_compile_load(dev, m, tgt, name, lm, &st);
    if (st)
        CHECK(0, "compiling @%s for %s: %s: %s", name, tgt, oxide_status_name(st), oxide_last_error());
    return k;
}

static oxide_tensor host_tensor(void *data, oxide_scalar elem, int64_t n, int is_mutable) {
    return (oxide_tensor){.struct_size = sizeof(oxide_tensor),
                          .data = (uint64_t)(uintptr_t)data,
                          .elem = elem,
                          .rank = 1,
                          .shape = {n},
                          .strides = {1},
                          .is_mutable = is_mutable};
}

/* Whether the element's bits are a NaN of its float type. */
static bool is_nan(oxide_scalar t, const uint8_t *p) {
    uint32_t u = 0;
    memcpy(&u, p, t == OXIDE_SCALAR_F32 ? 4 : 2);
    if (t == OXIDE_SCALAR_F32)
        return (u & 0x7f800000) == 0x7f800000 && (u & 0x7fffff);
    if (t == OXIDE_SCALAR_BF16)
        return (u & 0x7f80) == 0x7f80 && (u & 0x7f);
    return (u & 0x7c00) == 0x7c00 && (u & 0x3ff);
}

static bool same(const struct out *o, const uint8_t *a, const uint8_t *b) {
    return !memcmp(a, b, o->size) || (o->is_float && is_nan(o->scalar, a) && is_nan(o->scalar, b));
}

/* The @casts kernel of source type src on input x (N elements of esize bytes), on the GPU for
 * tgt and in the interpreter, every output compared. */
static void run_casts(const char *src, oxide_scalar src_scalar, oxide_scalar interp_scalar, const void *x,
                      uint32_t esize, const char *tgt) {
    char ir[8192];
    casts_ir(ir, sizeof ir, src);
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, ir, strlen(ir), &m));
    uint8_t *want[NOUT], *got[NOUT];
    oxide_tensor ht[NOUT + 1];
    oxide_arg args[NOUT + 1];
    ht[0] = host_tensor((void *)x, interp_scalar, N, 0);
    for (int i = 0; i < NOUT; i++) {
        want[i] = calloc(N, outs[i].size), got[i] = calloc(N, outs[i].size);
        bool fp8 = outs[i].scalar == OXIDE_SCALAR_F8E4M3 || outs[i].scalar == OXIDE_SCALAR_F8E5M2;
        ht[i + 1] = host_tensor(want[i], fp8 ? OXIDE_SCALAR_U8 : outs[i].scalar, N, 1);
    }
    for (int i = 0; i <= NOUT; i++)
        args[i] = oxide_arg_tensor(&ht[i]);
    uint32_t grid[3] = {N / TILE, 1, 1};
    oxide_interp_options io = {sizeof io, NULL, NULL, 0, 0};
    OK(oxide_tile_interpret(m, "casts", grid, args, NOUT + 1, &io));

    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(m, tgt, "casts", &lm);
    oxide_buffer *buf[NOUT + 1] = {0};
    oxide_tensor dt[NOUT + 1];
    if (k) {
        MUST(oxide_buffer_alloc(dev, (size_t)N * esize, &buf[0]));
        MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(buf[0]), x, (size_t)N * esize));
        dt[0] = ht[0], dt[0].data = oxide_buffer_ptr(buf[0]), dt[0].elem = src_scalar;
        for (int i = 0; i < NOUT; i++) {
            MUST(oxide_buffer_alloc(dev, (size_t)N * outs[i].size, &buf[i + 1]));
            MUST(oxide_memset(dev, oxide_buffer_ptr(buf[i + 1]), 0x55, (size_t)N * outs[i].size, 1));
            dt[i + 1] = ht[i + 1], dt[i + 1].data = oxide_buffer_ptr(buf[i + 1]), dt[i + 1].elem = outs[i].scalar;
        }
        for (int i = 0; i <= NOUT; i++)
            args[i] = oxide_arg_tensor(&dt[i]);
        OK(oxide_kernel_launch(k, NULL, grid, NULL, 0, args, NOUT + 1));
        OK(oxide_device_synchronize(dev));
        for (int i = 0; i < NOUT; i++) {
            OK(oxide_memcpy_dtoh(dev, got[i], oxide_buffer_ptr(buf[i + 1]), (size_t)N * outs[i].size));
            int bad = 0, first = -1;
            for (int e = 0; e < N; e++)
                if (!same(&outs[i], got[i] + (size_t)e * outs[i].size, want[i] + (size_t)e * outs[i].size))
                    bad++, first = first < 0 ? e : first;
            char in_hex[24] = "", w[24] = "", g[24] = "";
            if (first >= 0) {
                for (uint32_t b = 0; b < esize; b++)
                    snprintf(in_hex + 2 * b, 3, "%02x", ((const uint8_t *)x)[(size_t)first * esize + esize - 1 - b]);
                for (uint32_t b = 0; b < outs[i].size; b++) {
                    snprintf(w + 2 * b, 3, "%02x", want[i][(size_t)first * outs[i].size + outs[i].size - 1 - b]);
                    snprintf(g + 2 * b, 3, "%02x", got[i][(size_t)first * outs[i].size + outs[i].size - 1 - b]);
                }
            }
            CHECK(bad == 0,
                  "%s on %s: %s -> %s (%s): %d of %d differ from the interpreter; first: input 0x%s gives 0x%s, "
                  "the interpreter 0x%s",
                  tgt, target, src, outs[i].elem, outs[i].name, bad, N, in_hex, g, w);
        }
    }
    for (int i = 0; i <= NOUT; i++)
        if (buf[i])
            oxide_buffer_free(buf[i]);
    for (int i = 0; i < NOUT; i++)
        free(want[i]), free(got[i]);
    oxide_loaded_module_destroy(lm);
    oxide_module_destroy(m);
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* f32 inputs: a quarter random bit patterns, the rest values near the fp8 range with the low
 * mantissa bits chosen to hit ties and their neighbours, and the special values. */
static void f32_inputs(float *x) {
    static const float special[] = {0.0f,     -0.0f,      INFINITY, -INFINITY, 448.0f,   464.0f,        480.0f,
                                    57344.0f, 61440.0f,   65536.0f, 0x1p-9f,   0x1p-10f, 0x1.8p-10f,    0x1p-16f,
                                    0x1p-17f, 0x1.8p-17f, 1e-40f,   -1e-40f,   3e38f,    2147483648.0f, -2147483904.0f};
    for (int i = 0; i < N; i++) {
        uint32_t r = rng_u32();
        if (i % 4 == 0)
            x[i] = bits_f32(r ^ rng_u32() << 16);
        else {
            int e = (int)(rng_u32() % 44) - 24; /* 2^-24 .. 2^19 */
            uint32_t m = rng_u32() & 0x7fffff, low = rng_u32() % 4;
            m = low == 0 ? m & ~0xfffffu : low == 1 ? (m & ~0xfffffu) | 0x80000 : low == 2 ? m | 1 : m;
            x[i] = bits_f32((r & 0x80000000u) | (uint32_t)(e + 127) << 23 | m);
        }
    }
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        x[2 * i + 1] = special[i];
    x[101] = bits_f32(0x7fc00000), x[103] = bits_f32(0xffc00000), x[105] = bits_f32(0x7f800001);
    x[107] = bits_f32(0xff812345);
}

static void test_casts(const char *tgt) {
    static float xf[N];
    static uint16_t xh[N];
    static uint8_t x8[N];
    static int32_t xi[N];
    f32_inputs(xf);
    run_casts("f32", OXIDE_SCALAR_F32, OXIDE_SCALAR_F32, xf, 4, tgt);
    for (int i = 0; i < N; i++)
        xh[i] = (uint16_t)i; /* every pattern */
    run_casts("f16", OXIDE_SCALAR_F16, OXIDE_SCALAR_F16, xh, 2, tgt);
    run_casts("bf16", OXIDE_SCALAR_BF16, OXIDE_SCALAR_BF16, xh, 2, tgt);
    for (int i = 0; i < N; i++)
        x8[i] = (uint8_t)(i ^ i >> 8);
    run_casts("f8e4m3", OXIDE_SCALAR_F8E4M3, OXIDE_SCALAR_U8, x8, 1, tgt);
    /* the interpreter keeps a loaded e5m2 NaN as a NaN of its sign, not its payload: the copy
     * (e5m2 to e5m2) is compared on the NaNs it writes back unchanged */
    for (int i = 0; i < N; i++)
        if ((x8[i] & 0x7c) == 0x7c && (x8[i] & 3))
            x8[i] |= 0x7f;
    run_casts("f8e5m2", OXIDE_SCALAR_F8E5M2, OXIDE_SCALAR_U8, x8, 1, tgt);
    for (int i = 0; i < N; i++) {
        uint32_t r = rng_u32();
        xi[i] = i % 3 ? (int32_t)(r % 140000) - 70000 : (int32_t)(r ^ rng_u32() << 16);
    }
    xi[1] = INT32_MIN, xi[3] = INT32_MAX, xi[5] = 464, xi[7] = -61440, xi[9] = 61439;
    run_casts("i32", OXIDE_SCALAR_I32, OXIDE_SCALAR_I32, xi, 4, tgt);
}

static const char consts_ir[] =
    "module @k\n\n"
    "tile_kernel @consts(%q: tensor<1 x f8e5m2>, %r: tensor<1 x f8e4m3>, %o: tensor<mut 1 x "
    "f8e5m2>, %s: tensor<mut 1 x f8e4m3>) hints(warps=1) {\n"
    "^0:\n"
    "  %m = const {value=-8} : i32\n"
    "  %c = const {value=32} : i32\n"
    "  %z = const {value=0} : i32\n"
    "  %a = tile.load %q, %m {pad=-inf} : tile<32 x f8e5m2>\n"
    "  tile.store %o, %z, %a\n"
    "  %b = tile.load %r, %m {pad=-448} : tile<32 x f8e4m3>\n"
    "  tile.store %s, %z, %b\n"
    "  %f = tile.full {value=-0.0} : tile<32 x f8e5m2>\n"
    "  tile.store %o, %c, %f\n"
    "  %g = tile.full {value=0.013671875} : tile<32 x f8e4m3>\n"
    "  tile.store %s, %c, %g\n"
    "  ret\n"
    "}\n";

/* fp8 pads (an infinity, -max) and fp8 tile.full constants (a subnormal, a negative zero), also
 * against the bits computed here by hand. */
static void test_consts(const char *tgt) {
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, consts_ir, strlen(consts_ir), &m));
    uint8_t q[64], r[64], want_o[64], want_s[64], o[64], s[64];
    for (int i = 0; i < 64; i++) {
        q[i] = (uint8_t)rng_u32(), r[i] = (uint8_t)(rng_u32() % 0x7f);
        if ((q[i] & 0x7c) == 0x7c && (q[i] & 3))
            q[i] = 0x3c; /* no NaN: the interpreter keeps no NaN payload of an fp8 load */
    }
    for (int i = 0; i < 64; i++) {
        bool in = i >= 8 && i < 32;
        want_o[i] = i < 32 ? (in ? q[i - 8] : 0xfc) : 0x80;
        want_s[i] = i < 32 ? (in ? r[i - 8] : 0xfe) : 0x07;
    }
    oxide_tensor t[4] = {host_tensor(q, OXIDE_SCALAR_U8, 64, 0), host_tensor(r, OXIDE_SCALAR_U8, 64, 0),
                         host_tensor(o, OXIDE_SCALAR_U8, 64, 1), host_tensor(s, OXIDE_SCALAR_U8, 64, 1)};
    oxide_arg args[4];
    for (int i = 0; i < 4; i++)
        args[i] = oxide_arg_tensor(&t[i]);
    uint32_t grid[3] = {1, 1, 1};
    oxide_interp_options io = {sizeof io, NULL, NULL, 0, 0};
    OK(oxide_tile_interpret(m, "consts", grid, args, 4, &io));
    CHECK(!memcmp(o, want_o, 64) && !memcmp(s, want_s, 64), "the interpreter's fp8 pads and constants");
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(m, tgt, "consts", &lm);
    if (k) {
        oxide_buffer *b[4];
        oxide_scalar el[4] = {OXIDE_SCALAR_F8E5M2, OXIDE_SCALAR_F8E4M3, OXIDE_SCALAR_F8E5M2, OXIDE_SCALAR_F8E4M3};
        void *host[4] = {q, r, o, s};
        for (int i = 0; i < 4; i++) {
            MUST(oxide_buffer_alloc(dev, 64, &b[i]));
            MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(b[i]), host[i], 64));
            t[i].data = oxide_buffer_ptr(b[i]), t[i].elem = el[i];
            args[i] = oxide_arg_tensor(&t[i]);
        }
        OK(oxide_kernel_launch(k, NULL, grid, NULL, 0, args, 4));
        OK(oxide_device_synchronize(dev));
        OK(oxide_memcpy_dtoh(dev, o, oxide_buffer_ptr(b[2]), 64));
        OK(oxide_memcpy_dtoh(dev, s, oxide_buffer_ptr(b[3]), 64));
        CHECK(!memcmp(o, want_o, 64), "%s: e5m2 pad -inf (0xfc) and full -0.0 (0x80): o[0] = 0x%02x, o[32] = 0x%02x",
              tgt, o[0], o[32]);
        CHECK(!memcmp(s, want_s, 64), "%s: e4m3 pad -448 (0xfe) and full 7*2^-9 (0x07): s[0] = 0x%02x, s[32] = 0x%02x",
              tgt, s[0], s[32]);
        for (int i = 0; i < 4; i++)
            oxide_buffer_free(b[i]);
    }
    oxide_loaded_module_destroy(lm);
    oxide_module_destroy(m);
}

/* ---- tile.print: the GPU's lines (stdout captured around the launch) against the interpreter's ---- */

typedef struct lines {
    char *text;
    size_t len, cap;
} lines;

static void collect(void *user, const char *text) {
    lines *l = user;
    size_t n = strlen(text);
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->text = realloc(l->text, l->cap);
    }
    memcpy(l->text + l->len, text, n + 1);
    l->len += n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const char print_ir[] = "module @pr\n\n"
                               "tile_kernel @pr(%x: tensor<2 x f32>, %n: i32) hints(warps=2) {\n"
                               "^0:\n"
                               "  %p = tile.program_id {imm=0} : i32\n"
                               "  %c = const {value=4} : i32\n"
                               "  %o = mul %p, %c : i32\n"
                               "  %z = const {value=0} : i32\n"
                               "  %a = tile.load %x, %o, %z {pad=-inf} : tile<4x8 x f32>\n"
                               "  tile.print %a {str=\"a%\"}\n"
                               "  %q = tile.cast %a : tile<4x8 x f8e4m3>\n"
                               "  tile.print %q {str=\"q\"}\n"
                               "  %h = tile.cast %a : tile<4x8 x bf16>\n"
                               "  tile.print %h {str=\"h\"}\n"
                               "  %i = tile.cast %a : tile<4x8 x i32>\n"
                               "  tile.print %i {str=\"i\"}\n"
                               "  %l = tile.cast %i : tile<4x8 x i64>\n"
                               "  tile.print %l {str=\"l\"}\n"
                               "  %b = fcmp %a, %a {pred=ogt} : tile<4x8 x i1>\n"
                               "  tile.print %b {str=\"b\"}\n"
                               "  %t = tile.reduce %a {imm=1, kind=max} : tile<4 x f32>\n"
                               "  tile.print %t {str=\"t\"}\n"
                               "  %f = tile.full {value=-3} : tile<2x2x2 x i8>\n"
                               "  tile.print %f {str=\"f\"}\n"
                               "  %e = tile.full {value=-inf} : tile<2 x f8e5m2>\n"
                               "  tile.print %e {str=\"e\"}\n"
                               "  %s = tile.reduce %t {imm=0, kind=sum} : f32\n"
                               "  tile.print %s {str=\"s\"}\n"
                               "  tile.print %n {str=\"n\"}\n"
                               "  ret\n"
                               "}\n";

/* The lines of text, sorted (the GPU's order across threads is not defined); returns the count. */
static size_t sorted(char *text, char ***out) {
    size_t n = 0;
    for (char *p = text; *p; p++)
        n += *p == '\n';
    char **v = calloc(n + 1, sizeof *v);
    size_t k = 0;
    for (char *p = strtok(text, "\n"); p && k < n; p = strtok(NULL, "\n"))
        v[k++] = p;
    qsort(v, k, sizeof *v, cmp_str);
    *out = v;
    return k;
}

static void test_print(const char *tgt) {
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, print_ir, strlen(print_ir), &m));
    enum { R = 6, C = 8 };
    float x[R * C];
    for (int i = 0; i < R * C; i++)
        /* multiples of 1/8 below 2^15: the printed sum of row maxima is exact in any order */
        x[i] = (float)((int)(rng_u32() % 257) - 128) / 8.0f * (float)(1 << (rng_u32() % 12));
    x[5] = 1000.0f; /* saturates in e4m3 */
    oxide_tensor t = {sizeof t, (uint64_t)(uintptr_t)x, 0, OXIDE_SCALAR_F32, 2, {R, C}, {C, 1}, 0, 0};
    oxide_arg args[2] = {oxide_arg_tensor(&t), oxide_arg_i32(-77)};
    uint32_t grid[3] = {2, 1, 1};
    lines want = {0};
    oxide_interp_options io = {sizeof io, collect, &want, 0, 0};
    OK(oxide_tile_interpret(m, "pr", grid, args, 2, &io));
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(m, tgt, "pr", &lm);
    if (k && want.text) {
        oxide_buffer *b;
        MUST(oxide_buffer_alloc(dev, sizeof x, &b));
        MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(b), x, sizeof x));
        t.data = oxide_buffer_ptr(b);
        args[0] = oxide_arg_tensor(&t);
        char path[] = "/tmp/oxide_tile_print_XXXXXX";
        int fd = mkstemp(path);
        fflush(stdout);
        int saved = dup(1);
        MUST(fd >= 0 && saved >= 0 ? OXIDE_OK : OXIDE_ERROR_INVALID_ARGUMENT);
        dup2(fd, 1);
        oxide_status launched = oxide_kernel_launch(k, NULL, grid, NULL, 0, args, 2);
        oxide_status synced = oxide_device_synchronize(dev);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        OK(launched);
        OK(synced);
        size_t len = 0;
        char *gpu = check_read_file(path, &len);
        close(fd);
        unlink(path);
        char **gv, **wv;
        size_t ng = gpu ? sorted(gpu, &gv) : 0, nw = sorted(want.text, &wv);
        CHECK(ng == nw, "%s: the GPU printed %zu lines, the interpreter %zu", tgt, ng, nw);
        size_t diff = 0, first = 0;
        for (size_t i = 0; i < ng && i < nw; i++)
            if (strcmp(gv[i], wv[i]) && !diff++)
                first = i;
        CHECK(ng && diff == 0, "%s: %zu printed lines differ; first: GPU '%s', interpreter '%s'", tgt, diff,
              ng ? gv[first] : "", nw ? wv[first] : "");
        if (gpu)
            free(gv);
        free(wv);
        free(gpu);
        oxide_buffer_free(b);
    }
    free(want.text);
    oxide_loaded_module_destroy(lm);
    oxide_module_destroy(m);
}

int main(void) {
    gpu_require();
    rng_seed();
    dev = gpu_device_target(target, sizeof target);
    MUST(oxide_context_create(&ctx));
    /* the GPU's own target (the cvt instructions from sm_89) and sm_80 (integer ops), both run here */
    const char *tgts[2] = {target, "sm_80"};
    for (int i = 0; i < 2; i++) {
        test_casts(tgts[i]);
        test_consts(tgts[i]);
        test_print(tgts[i]);
    }
    oxide_context_destroy(ctx);
    char fig[96];
    snprintf(fig, sizeof fig, "fp8 casts and tile.print for %s and sm_80 on %s", target, target);
    return finish("test_gpu_tile_casts", fig);
}
