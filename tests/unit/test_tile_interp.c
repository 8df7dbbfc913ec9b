/* The tile interpreter (oxide_tile_interpret, docs/tile.md "The interpreter" and "Semantics"):
 * each op on random inputs against values this file computes on its own (C arithmetic, libm,
 * _Float16, a brute-force search of the fp8 codes), then every refusal. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void) {
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
/* Uniform in [-s, s), never 0. */
static float rndf(float s) {
    float v = ((float)(rnd() & 0xffffff) / 8388608.0f - 1.0f) * s;
    return v == 0 ? s / 3 : v;
}

static oxide_module *parse(const char *text) {
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, text, strlen(text), &m));
    return m;
}

static oxide_tensor tensor(void *data, oxide_scalar elem, uint32_t rank, const int64_t *shape, int mut) {
    oxide_tensor t = {sizeof(oxide_tensor), (uint64_t)(uintptr_t)data, 0, elem, rank, {0}, {0}, mut ? 1u : 0u, 0};
    int64_t stride = 1;
    for (uint32_t d = rank; d-- > 0;) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d];
    }
    return t;
}

static const uint32_t one[3] = {1, 1, 1};

/* ---- independent references of the small formats ---- */

static uint16_t ref_bf16(float f) { /* to nearest even on the f32 bits */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static float ref_from_bf16(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t ref_f16(float f) {
    _Float16 h = (_Float16)f;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}
static float ref_from_f16(uint16_t b) {
    _Float16 h;
    memcpy(&h, &b, 2);
    return (float)h;
}
/* The value of an fp8 code, from the format's definition. */
static double fp8_value(int e4m3, unsigned code) {
    int eb = e4m3 ? 4 : 5, mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    unsigned e = (code >> mb) & ((1u << eb) - 1), m = code & ((1u << mb) - 1);
    double v;
    if (e4m3 && e == 15 && m == 7)
        v = NAN;
    else if (!e4m3 && e == 31)
        v = m ? NAN : INFINITY;
    else
        v = e ? ldexp(1.0 + m / (double)(1 << mb), (int)e - bias) : ldexp(m / (double)(1 << mb), 1 - bias);
    return code & 0x80 ? -v : v;
}
/* The code nearest to v among the finite ones (ties: the even code), saturating; NaN: a NaN. */
static unsigned ref_fp8(int e4m3, float v) {
    if (isnan(v))
        return 0x100; /* compared as "any NaN code" */
    if (isinf(v))
        return (v < 0 ? 0x80u : 0) | (e4m3 ? 0x7eu : 0x7bu); /* saturated to the largest finite value */
    unsigned best = 0;
    double bd = INFINITY;
    for (unsigned c = 0; c < 256; c++) {
        double x = fp8_value(e4m3, c);
        if (!isfinite(x) || (x == 0 && signbit(x) != signbit(v)))
            continue;
        double d = fabs(x - (double)v);
        if (d < bd || (d == bd && !(c & 1)))
            bd = d, best = c;
    }
    return best;
}

/* ---- elementwise f32, and f16/bf16 rounding after each op ---- */

static const char *k_f32 = "module @m\n"
                           "tile_kernel @k(%x: tensor<1 x f32>, %y: tensor<1 x f32>, %o: tensor<mut 2 x f32>) {\n"
                           "^0:\n"
                           "  %z = const {value=0} : i32\n"
                           "  %a = tile.load %x, %z {pad=0} : tile<256 x f32>\n"
                           "  %b = tile.load %y, %z {pad=0} : tile<256 x f32>\n"
                           "  %aa = fabs %a : tile<256 x f32>\n"
                           "  %r0 = add %a, %b : tile<256 x f32>\n"
                           "  %r1 = sub %a, %b : tile<256 x f32>\n"
                           "  %r2 = mul %a, %b : tile<256 x f32>\n"
                           "  %r3 = fdiv %a, %b : tile<256 x f32>\n"
                           "  %r4 = fmin %a, %b : tile<256 x f32>\n"
                           "  %r5 = fmax %a, %b : tile<256 x f32>\n"
                           "  %r6 = sqrt %aa : tile<256 x f32>\n"
                           "  %r7 = exp %a : tile<256 x f32>\n"
                           "  %r8 = log %aa : tile<256 x f32>\n"
                           "  %r9 = tanh %a : tile<256 x f32>\n"
                           "  %r10 = erf %a : tile<256 x f32>\n"
                           "  %r11 = pow %aa, %b : tile<256 x f32>\n"
                           "  %r12 = fma %a, %b, %a : tile<256 x f32>\n"
                           "  %r13 = floor %a : tile<256 x f32>\n"
                           "  %r14 = rsqrt %aa : tile<256 x f32>\n"
                           "  %r15 = exp2 %a : tile<256 x f32>\n"
                           "  %c = fcmp %a, %b {pred=olt} : tile<256 x i1>\n"
                           "  %r16 = select %c, %a, %b : tile<256 x f32>\n"
                           "  %r17 = neg %a : tile<256 x f32>\n"
                           "  %i0 = const {value=0} : i32\n"
                           "%STORES%"
                           "  ret\n"
                           "}\n";
#define NF32 18

static float ref_f32(int op, float a, float b) {
    float aa = fabsf(a);
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return a < b ? a : b;
    case 5: return a > b ? a : b;
    case 6: return sqrtf(aa);
    case 7: return expf(a);
    case 8: return logf(aa);
    case 9: return tanhf(a);
    case 10: return erff(a);
    case 11: return powf(aa, b);
    case 12: return fmaf(a, b, a);
    case 13: return floorf(a);
    case 14: return 1.0f / sqrtf(aa);
    case 15: return exp2f(a);
    case 16: return a < b ? a : b;
    default: return -a;
    }
}

/* Text with %STORES% replaced by one reshape + store per result row. */
static char *with_stores(const char *tmpl, int n, const char *tile, const char *row) {
    static char buf[16384];
    char stores[8192] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(stores + used, sizeof stores - used,
                                 "  %%o%d = const {value=%d} : i32\n  %%s%d = tile.reshape %%r%d : %s\n"
                                 "  tile.store %%o, %%o%d, %%i0, %%s%d\n",
                                 i, i, i, i, row, i, i);
    (void)tile;
    const char *at = strstr(tmpl, "%STORES%");
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - tmpl), tmpl, stores, at + 8);
    return buf;
}

static void test_f32_elementwise(void) {
    oxide_module *m = parse(with_stores(k_f32, NF32, "", "tile<1x256 x f32>"));
    float x[256], y[256], o[NF32][256];
    for (int i = 0; i < 256; i++)
        x[i] = rndf(4), y[i] = rndf(4);
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_F32, 1, (int64_t[]){256}, 0);
    oxide_tensor ty = tensor(y, OXIDE_SCALAR_F32, 1, (int64_t[]){256}, 0);
    oxide_tensor to = tensor(o, OXIDE_SCALAR_F32, 2, (int64_t[]){NF32, 256}, 1);
    oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty), oxide_arg_tensor(&to)};
    OK(oxide_tile_interpret(m, "k", one, args, 3, NULL));
    int bad = 0;
    for (int op = 0; op < NF32; op++)
        for (int i = 0; i < 256; i++) {
            float want = ref_f32(op, x[i], y[i]);
            if (memcmp(&want, &o[op][i], 4) && bad++ < 5)
                printf("  f32 op %d at %d: %a op %a = %a, want %a\n", op, i, x[i], y[i], o[op][i], want);
        }
    CHECK(bad == 0, "%d f32 results differ", bad);
    oxide_module_destroy(m);
}

/* add, mul, exp and fdiv of bf16 and f16 tiles: each computed in f32, rounded to the element. */
static void test_half_rounding(void) {
    static const char *names[2] = {"bf16", "f16"};
    for (int h = 0; h < 2; h++) {
        char text[2048];
        snprintf(
            text, sizeof text,
            "module @m\ntile_kernel @k(%%x: tensor<1 x %1$s>, %%y: tensor<1 x %1$s>, %%o: tensor<mut 2 x %1$s>) {\n"
            "^0:\n  %%z = const {value=0} : i32\n  %%i0 = const {value=0} : i32\n"
            "  %%a = tile.load %%x, %%z {pad=0} : tile<128 x %1$s>\n"
            "  %%b = tile.load %%y, %%z {pad=0} : tile<128 x %1$s>\n"
            "  %%r0 = add %%a, %%b : tile<128 x %1$s>\n  %%r1 = mul %%a, %%b : tile<128 x %1$s>\n"
            "  %%r2 = exp %%a : tile<128 x %1$s>\n  %%r3 = fdiv %%a, %%b : tile<128 x %1$s>\n%%STORES%%"
            "  ret\n}\n",
            names[h]);
        char row[64];
        snprintf(row, sizeof row, "tile<1x128 x %s>", names[h]);
        oxide_module *m = parse(with_stores(text, 4, "", row));
        uint16_t x[128], y[128], o[4][128];
        for (int i = 0; i < 128; i++)
            x[i] = h ? ref_f16(rndf(3)) : ref_bf16(rndf(3)), y[i] = h ? ref_f16(rndf(3)) : ref_bf16(rndf(3));
        oxide_scalar e = h ? OXIDE_SCALAR_F16 : OXIDE_SCALAR_BF16;
        oxide_tensor tx = tensor(x, e, 1, (int64_t[]){128}, 0), ty = tensor(y, e, 1, (int64_t[]){128}, 0);
        oxide_tensor to = tensor(o, e, 2, (int64_t[]){4, 128}, 1);
        oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty), oxide_arg_tensor(&to)};
        OK(oxide_tile_interpret(m, "k", one, args, 3, NULL));
        int bad = 0;
        for (int i = 0; i < 128; i++) {
            float a = h ? ref_from_f16(x[i]) : ref_from_bf16(x[i]), b = h ? ref_from_f16(y[i]) : ref_from_bf16(y[i]);
            float r[4] = {a + b, a * b, expf(a), a / b};
            for (int op = 0; op < 4; op++) {
                uint16_t want = h ? ref_f16(r[op]) : ref_bf16(r[op]);
                if (want != o[op][i] && bad++ < 5)
                    printf("  %s op %d at %d: got 0x%04x want 0x%04x\n", names[h], op, i, o[op][i], want);
            }
        }
        CHECK(bad == 0, "%d %s results differ", bad, names[h]);
        oxide_module_destroy(m);
    }
}

/* ---- integers: wrapping, division by zero, INT_MIN / -1, shifts past the width ---- */

static int32_t ref_i32(int op, int32_t a, int32_t b) {
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case 0: return (int32_t)(ua + ub);
    case 1: return (int32_t)(ua * ub);
    case 2: return b == 0 ? -1 : (a == INT32_MIN && b == -1) ? INT32_MIN : a / b;
    case 3: return b == 0 ? a : b == -1 ? 0 : a % b;
    case 4: return ub == 0 ? -1 : (int32_t)(ua / ub);
    case 5: return ub == 0 ? a : (int32_t)(ua % ub);
    case 6: return ub >= 32 ? 0 : (int32_t)(ua << ub);
    case 7: return ub >= 32 ? (a < 0 ? -1 : 0) : a >> ub;
    case 8: return ub >= 32 ? 0 : (int32_t)(ua >> ub);
    case 9: return a < b ? a : b;
    case 10: return ua > ub ? a : b;
    default: return a == INT32_MIN ? a : a < 0 ? -a : a;
    }
}

static void test_i32(void) {
    const char *tmpl = "module @m\n"
                       "tile_kernel @k(%x: tensor<1 x i32>, %y: tensor<1 x i32>, %o: tensor<mut 2 x i32>) {\n"
                       "^0:\n  %z = const {value=0} : i32\n  %i0 = const {value=0} : i32\n"
                       "  %a = tile.load %x, %z {pad=0} : tile<256 x i32>\n"
                       "  %b = tile.load %y, %z {pad=0} : tile<256 x i32>\n"
                       "  %r0 = add %a, %b : tile<256 x i32>\n  %r1 = mul %a, %b : tile<256 x i32>\n"
                       "  %r2 = sdiv %a, %b : tile<256 x i32>\n  %r3 = srem %a, %b : tile<256 x i32>\n"
                       "  %r4 = udiv %a, %b : tile<256 x i32>\n  %r5 = urem %a, %b : tile<256 x i32>\n"
                       "  %r6 = shl %a, %b : tile<256 x i32>\n  %r7 = ashr %a, %b : tile<256 x i32>\n"
                       "  %r8 = lshr %a, %b : tile<256 x i32>\n  %r9 = smin %a, %b : tile<256 x i32>\n"
                       "  %r10 = umax %a, %b : tile<256 x i32>\n  %r11 = iabs %a : tile<256 x i32>\n"
                       "%STORES%  ret\n}\n";
    oxide_module *m = parse(with_stores(tmpl, 12, "", "tile<1x256 x i32>"));
    int32_t x[256], y[256], o[12][256];
    static const int32_t special[] = {0, -1, 1, INT32_MIN, INT32_MAX, 31, 32, 33, -32};
    for (int i = 0; i < 256; i++) {
        x[i] = (int32_t)((uint32_t)rnd() * (i % 3 ? 1u : 65537u)); /* wraps, as intended */
        y[i] = i % 4 == 0 ? special[(i / 4) % 9] : i % 4 == 1 ? (int32_t)(rnd() % 40) : (int32_t)rnd();
        if (i % 16 == 5)
            x[i] = INT32_MIN, y[i] = -1;
    }
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_I32, 1, (int64_t[]){256}, 0);
    oxide_tensor ty = tensor(y, OXIDE_SCALAR_U32, 1, (int64_t[]){256}, 0); /* integers are signless */
    oxide_tensor to = tensor(o, OXIDE_SCALAR_I32, 2, (int64_t[]){12, 256}, 1);
    oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty), oxide_arg_tensor(&to)};
    OK(oxide_tile_interpret(m, "k", one, args, 3, NULL));
    int bad = 0;
    for (int op = 0; op < 12; op++)
        for (int i = 0; i < 256; i++)
            if (o[op][i] != ref_i32(op, x[i], y[i]) && bad++ < 5)
                printf("  i32 op %d: %d, %d gave %d, want %d\n", op, x[i], y[i], o[op][i], ref_i32(op, x[i], y[i]));
    CHECK(bad == 0, "%d i32 results differ", bad);
    oxide_module_destroy(m);
}

/* ---- tile.cast: fp8 (nearest even, saturating, NaN kept), float -> int, and back ---- */

static void test_casts(void) {
    oxide_module *m =
        parse("module @m\n"
              "tile_kernel @k(%x: tensor<1 x f32>, %q: tensor<mut 1 x f8e4m3>, %r: tensor<mut 1 x f8e5m2>,"
              " %i: tensor<mut 1 x i32>, %b: tensor<mut 1 x bf16>, %back: tensor<mut 1 x f32>) {\n"
              "^0:\n  %z = const {value=0} : i32\n"
              "  %a = tile.load %x, %z {pad=0} : tile<512 x f32>\n"
              "  %a8 = tile.cast %a : tile<512 x f8e4m3>\n  tile.store %q, %z, %a8\n"
              "  %b8 = tile.cast %a : tile<512 x f8e5m2>\n  tile.store %r, %z, %b8\n"
              "  %ai = tile.cast %a : tile<512 x i32>\n  tile.store %i, %z, %ai\n"
              "  %ab = tile.cast %a : tile<512 x bf16>\n  tile.store %b, %z, %ab\n"
              "  %f = tile.cast %a8 : tile<512 x f32>\n  tile.store %back, %z, %f\n"
              "  ret\n}\n");
    float x[512], back[512];
    uint8_t q[512], r[512];
    int32_t iv[512];
    uint16_t bv[512];
    static const float special[] = {NAN,  INFINITY, -INFINITY, 448,   464,  480,   1e6f,  -1e6f,   57344,     61440,
                                    3e9f, -3e9f,    0.5f,      -0.5f, 2.5f, -2.5f, 1e-9f, 0x1p-9f, 0x1.8p-9f, 0x1p-17f};
    for (int i = 0; i < 512; i++)
        x[i] = i < 20 ? special[i] : rndf(i % 2 ? 600 : 2);
    int64_t n = 512;
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_F32, 1, &n, 0), tq = tensor(q, OXIDE_SCALAR_U8, 1, &n, 1);
    oxide_tensor tr = tensor(r, OXIDE_SCALAR_U8, 1, &n, 1), ti = tensor(iv, OXIDE_SCALAR_I32, 1, &n, 1);
    oxide_tensor tb = tensor(bv, OXIDE_SCALAR_BF16, 1, &n, 1), tk = tensor(back, OXIDE_SCALAR_F32, 1, &n, 1);
    oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&tq), oxide_arg_tensor(&tr),
                        oxide_arg_tensor(&ti), oxide_arg_tensor(&tb), oxide_arg_tensor(&tk)};
    OK(oxide_tile_interpret(m, "k", one, args, 6, NULL));
    int bad = 0;
    for (int i = 0; i < 512; i++) {
        unsigned w4 = ref_fp8(1, x[i]), w5 = ref_fp8(0, x[i]);
        bool ok4 = w4 == 0x100 ? isnan(fp8_value(1, q[i])) : q[i] == w4;
        bool ok5 = w5 == 0x100 ? isnan(fp8_value(0, r[i])) : r[i] == w5;
        double t = trunc((double)x[i]);
        int32_t wi = isnan(x[i]) ? 0 : t >= 2147483648.0 ? INT32_MAX : t < -2147483648.0 ? INT32_MIN : (int32_t)t;
        bool okb = isnan(x[i]) ? isnan(ref_from_bf16(bv[i])) : bv[i] == ref_bf16(x[i]);
        double wb = fp8_value(1, q[i]);
        bool okk = isnan(wb) ? isnan(back[i]) : back[i] == (float)wb;
        if (!(ok4 && ok5 && iv[i] == wi && okb && okk) && bad++ < 8)
            printf("  cast %a: e4m3 0x%02x (want 0x%02x) e5m2 0x%02x (want 0x%02x) i32 %d (want %d) bf16 0x%04x\n",
                   x[i], q[i], w4, r[i], w5, iv[i], wi, bv[i]);
    }
    CHECK(bad == 0, "%d casts differ", bad);
    oxide_module_destroy(m);
}

/* ---- memory: pad outside the tensor, stores skip it, strides and offsets; atomic adds ---- */

static void test_load_store_bounds(void) {
    oxide_module *m = parse("module @m\n"
                            "tile_kernel @k(%x: tensor<2 x i32>, %y: tensor<mut 2 x i32>, %om: i64, %on: i32) {\n"
                            "^0:\n"
                            "  %t = tile.load %x, %om, %on {pad=-7} : tile<16x16 x i32>\n"
                            "  %one = tile.full {value=1000} : tile<16x16 x i32>\n"
                            "  %u = add %t, %one : tile<16x16 x i32>\n"
                            "  tile.store %y, %om, %on, %u\n"
                            "  ret\n}\n");
    /* x is a 10 x 12 view with strides (1, 10) of a column-major buffer; y is 10 x 12 row-major
     * inside a larger buffer whose other cells must stay as they were. */
    int32_t xs[120], ybuf[14 * 16];
    for (int i = 0; i < 120; i++)
        xs[i] = (int32_t)(rnd() % 100000) + 1;
    for (int i = 0; i < 14 * 16; i++)
        ybuf[i] = -123456;
    oxide_tensor tx = {sizeof(oxide_tensor), (uint64_t)(uintptr_t)xs, 0, OXIDE_SCALAR_I32, 2, {10, 12}, {1, 10}, 0, 0};
    oxide_tensor ty = {sizeof(oxide_tensor),
                       (uint64_t)(uintptr_t)ybuf,
                       (2 * 16 + 3) * 4,
                       OXIDE_SCALAR_I32,
                       2,
                       {10, 12},
                       {16, 1},
                       1,
                       0};
    const int64_t om = -3, on = 5;
    oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty), oxide_arg_i64(om), oxide_arg_i32((int32_t)on)};
    OK(oxide_tile_interpret(m, "k", one, args, 4, NULL));
    int bad = 0;
    for (int r = 0; r < 14; r++)
        for (int c = 0; c < 16; c++) {
            int gr = r - 2, gc = c - 3; /* y's index of this cell of the buffer */
            bool in = gr >= 0 && gr < 10 && gc >= 0 && gc < 12;
            bool written = in && gr - om >= 0 && gr - om < 16 && gc - on >= 0 && gc - on < 16;
            int32_t want = written ? xs[gr + 10 * gc] + 1000 : -123456;
            if (ybuf[r * 16 + c] != want && bad++ < 5)
                printf("  y buffer [%d,%d] = %d, want %d\n", r, c, ybuf[r * 16 + c], want);
        }
    CHECK(bad == 0, "%d cells differ", bad);
    oxide_module_destroy(m);
    /* the pad: loaded tiles' out-of-bounds elements are exactly the pad */
    m = parse("module @m\n"
              "tile_kernel @k(%x: tensor<1 x f32>, %y: tensor<mut 1 x f32>) {\n"
              "^0:\n  %z = const {value=0} : i32\n  %o = const {value=-3} : i32\n"
              "  %t = tile.load %x, %o {pad=-inf} : tile<16 x f32>\n  tile.store %y, %z, %t\n  ret\n}\n");
    float x[8], y[16];
    for (int i = 0; i < 8; i++)
        x[i] = rndf(10);
    int64_t n8 = 8, n16 = 16;
    oxide_tensor a = tensor(x, OXIDE_SCALAR_F32, 1, &n8, 0), b = tensor(y, OXIDE_SCALAR_F32, 1, &n16, 1);
    oxide_arg args2[] = {oxide_arg_tensor(&a), oxide_arg_tensor(&b)};
    OK(oxide_tile_interpret(m, "k", one, args2, 2, NULL));
    bad = 0;
    for (int i = 0; i < 16; i++) {
        float want = i >= 3 && i < 11 ? x[i - 3] : -INFINITY;
        bad += memcmp(&want, &y[i], 4) != 0;
    }
    CHECK(bad == 0, "%d padded elements differ", bad);
    oxide_module_destroy(m);
}

static void test_atomic_add(void) {
    oxide_module *m = parse("module @m\n"
                            "tile_kernel @k(%x: tensor<2 x f32>, %s: tensor<mut 1 x f32>, %c: tensor<mut 1 x i32>) {\n"
                            "^0:\n  %p = tile.program_id {imm=0} : i32\n  %z = const {value=0} : i32\n"
                            "  %t = tile.load %x, %p, %z {pad=0} : tile<1x32 x f32>\n"
                            "  %r = tile.reshape %t : tile<32 x f32>\n  tile.atomic_add %s, %z, %r\n"
                            "  %ones = tile.full {value=1} : tile<32 x i32>\n  %o = const {value=-8} : i32\n"
                            "  tile.atomic_add %c, %o, %ones\n  ret\n}\n");
    float x[5][32], s[32];
    int32_t c[24];
    for (int i = 0; i < 32; i++)
        s[i] = rndf(1);
    for (int i = 0; i < 24; i++)
        c[i] = (int32_t)rnd() % 50;
    for (int p = 0; p < 5; p++)
        for (int i = 0; i < 32; i++)
            x[p][i] = rndf(100);
    float want[32];
    int32_t wantc[24];
    for (int i = 0; i < 32; i++) { /* program 0's add lands first, then 1, ... */
        want[i] = s[i];
        for (int p = 0; p < 5; p++)
            want[i] = want[i] + x[p][i];
    }
    for (int i = 0; i < 24; i++)
        wantc[i] = c[i] + 5;
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_F32, 2, (int64_t[]){5, 32}, 0);
    oxide_tensor ts = tensor(s, OXIDE_SCALAR_F32, 1, (int64_t[]){32}, 1);
    oxide_tensor tc = tensor(c, OXIDE_SCALAR_I32, 1, (int64_t[]){24}, 1);
    oxide_arg args[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ts), oxide_arg_tensor(&tc)};
    OK(oxide_tile_interpret(m, "k", (uint32_t[]){5, 1, 1}, args, 3, NULL));
    CHECK(!memcmp(s, want, sizeof s), "f32 atomic sums differ");
    CHECK(!memcmp(c, wantc, sizeof c), "i32 atomic counts differ (only the 24 in-bounds elements count)");
    oxide_module_destroy(m);
}

/* ---- tile.dot: acc + sum_k a*b in f32, in k order (bf16, f16, fp8), batched ---- */

static void test_dot(void) {
    oxide_module *m = parse("module @m\n"
                            "tile_kernel @k(%a: tensor<2 x bf16>, %b: tensor<2 x bf16>, %c: tensor<mut 2 x f32>,"
                            " %a8: tensor<2 x f8e5m2>, %b8: tensor<2 x f8e4m3>, %c8: tensor<mut 2 x f32>) {\n"
                            "^0:\n  %z = const {value=0} : i32\n"
                            "  %ta = tile.load %a, %z, %z {pad=0} : tile<32x64 x bf16>\n"
                            "  %tb = tile.load %b, %z, %z {pad=0} : tile<64x16 x bf16>\n"
                            "  %acc = tile.load %c, %z, %z {pad=0} : tile<32x16 x f32>\n"
                            "  %d = tile.dot %ta, %tb, %acc : tile<32x16 x f32>\n  tile.store %c, %z, %z, %d\n"
                            "  %ta8 = tile.load %a8, %z, %z {pad=0} : tile<16x32 x f8e5m2>\n"
                            "  %tb8 = tile.load %b8, %z, %z {pad=0} : tile<32x16 x f8e4m3>\n"
                            "  %acc8 = tile.full {value=0.25} : tile<16x16 x f32>\n"
                            "  %d8 = tile.dot %ta8, %tb8, %acc8 : tile<16x16 x f32>\n  tile.store %c8, %z, %z, %d8\n"
                            "  ret\n}\n");
    uint16_t a[32 * 64], b[64 * 16];
    float c[32 * 16], want[32 * 16], c8[16 * 16];
    uint8_t a8[16 * 32], b8[32 * 16];
    for (int i = 0; i < 32 * 64; i++)
        a[i] = ref_bf16(rndf(2));
    for (int i = 0; i < 64 * 16; i++)
        b[i] = ref_bf16(rndf(2));
    for (int i = 0; i < 32 * 16; i++)
        c[i] = rndf(5);
    for (int i = 0; i < 16 * 32; i++) {
        do
            a8[i] = (uint8_t)rnd();
        while (!isfinite(fp8_value(0, a8[i])));
        do
            b8[i] = (uint8_t)rnd();
        while (isnan(fp8_value(1, b8[i])));
    }
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 16; j++) {
            float s = c[i * 16 + j];
            for (int k = 0; k < 64; k++)
                s = s + ref_from_bf16(a[i * 64 + k]) * ref_from_bf16(b[k * 16 + j]);
            want[i * 16 + j] = s;
        }
    oxide_tensor ta = tensor(a, OXIDE_SCALAR_BF16, 2, (int64_t[]){32, 64}, 0);
    oxide_tensor tb = tensor(b, OXIDE_SCALAR_BF16, 2, (int64_t[]){64, 16}, 0);
    oxide_tensor tc = tensor(c, OXIDE_SCALAR_F32, 2, (int64_t[]){32, 16}, 1);
    oxide_tensor ta8 = tensor(a8, OXIDE_SCALAR_U8, 2, (int64_t[]){16, 32}, 0);
    oxide_tensor tb8 = tensor(b8, OXIDE_SCALAR_U8, 2, (int64_t[]){32, 16}, 0);
    oxide_tensor tc8 = tensor(c8, OXIDE_SCALAR_F32, 2, (int64_t[]){16, 16}, 1);
    oxide_arg args[] = {oxide_arg_tensor(&ta),  oxide_arg_tensor(&tb),  oxide_arg_tensor(&tc),
                        oxide_arg_tensor(&ta8), oxide_arg_tensor(&tb8), oxide_arg_tensor(&tc8)};
    OK(oxide_tile_interpret(m, "k", one, args, 6, NULL));
    CHECK(!memcmp(c, want, sizeof c), "bf16 dot differs from the k-order f32 sums");
    int bad = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0.25f;
            for (int k = 0; k < 32; k++)
                s = s + (float)(fp8_value(0, a8[i * 32 + k]) * fp8_value(1, b8[k * 16 + j]));
            bad += memcmp(&s, &c8[i * 16 + j], 4) != 0;
        }
    CHECK(bad == 0, "%d fp8 dot results differ", bad);
    oxide_module_destroy(m);
}

/* ---- tile.reduce (sum in f32 for bf16, NaN through max), and the shape ops ---- */

static void test_reduce_and_shapes(void) {
    oxide_module *m = parse("module @m\n"
                            "tile_kernel @k(%x: tensor<2 x bf16>, %f: tensor<2 x f32>, %s: tensor<mut 1 x bf16>,"
                            " %mx: tensor<mut 1 x f32>, %mn: tensor<mut 1 x f32>, %p: tensor<mut 3 x f32>) {\n"
                            "^0:\n  %z = const {value=0} : i32\n"
                            "  %t = tile.load %x, %z, %z {pad=0} : tile<8x64 x bf16>\n"
                            "  %rs = tile.reduce %t {imm=1, kind=sum} : tile<8 x bf16>\n  tile.store %s, %z, %rs\n"
                            "  %g = tile.load %f, %z, %z {pad=0} : tile<16x8 x f32>\n"
                            "  %rm = tile.reduce %g {imm=0, kind=max} : tile<8 x f32>\n  tile.store %mx, %z, %rm\n"
                            "  %r1 = tile.reshape %g : tile<128 x f32>\n"
                            "  %rn = tile.reduce %r1 {imm=0, kind=min} : f32\n"
                            "  %sn = tile.splat %rn : tile<2 x f32>\n  tile.store %mn, %z, %sn\n"
                            "  %pt = tile.permute %g {perm=[1,0]} : tile<8x16 x f32>\n"
                            "  %e = tile.expand_dims %pt {imm=0} : tile<1x8x16 x f32>\n"
                            "  %bc = tile.broadcast %e : tile<2x8x16 x f32>\n"
                            "  %ar = tile.arange : tile<256 x i32>\n  %arf = tile.cast %ar : tile<256 x f32>\n"
                            "  %ar3 = tile.reshape %arf : tile<2x8x16 x f32>\n"
                            "  %sum3 = add %bc, %ar3 : tile<2x8x16 x f32>\n"
                            "  %p3 = tile.permute %sum3 {perm=[2,0,1]} : tile<16x2x8 x f32>\n"
                            "  tile.store %p, %z, %z, %z, %p3\n  ret\n}\n");
    uint16_t x[8 * 64], s[8];
    float f[16 * 8], mx[8], mn[2], p[16 * 2 * 8];
    for (int i = 0; i < 8 * 64; i++)
        x[i] = ref_bf16(rndf(8));
    for (int i = 0; i < 16 * 8; i++)
        f[i] = rndf(50);
    f[5 * 8 + 3] = NAN; /* column 3's max is NaN */
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_BF16, 2, (int64_t[]){8, 64}, 0);
    oxide_tensor tf = tensor(f, OXIDE_SCALAR_F32, 2, (int64_t[]){16, 8}, 0);
    oxide_tensor ts = tensor(s, OXIDE_SCALAR_BF16, 1, (int64_t[]){8}, 1);
    oxide_tensor tmx = tensor(mx, OXIDE_SCALAR_F32, 1, (int64_t[]){8}, 1);
    oxide_tensor tmn = tensor(mn, OXIDE_SCALAR_F32, 1, (int64_t[]){2}, 1);
    oxide_tensor tp = tensor(p, OXIDE_SCALAR_F32, 3, (int64_t[]){16, 2, 8}, 1);
    oxide_arg args[] = {oxide_arg_tensor(&tx),  oxide_arg_tensor(&tf),  oxide_arg_tensor(&ts),
                        oxide_arg_tensor(&tmx), oxide_arg_tensor(&tmn), oxide_arg_tensor(&tp)};
    OK(oxide_tile_interpret(m, "k", one, args, 6, NULL));
    int bad = 0;
    for (int r = 0; r < 8; r++) {
        float acc = ref_from_bf16(x[r * 64]);
        for (int c = 1; c < 64; c++)
            acc += ref_from_bf16(x[r * 64 + c]);
        bad += s[r] != ref_bf16(acc);
    }
    CHECK(bad == 0, "%d bf16 row sums differ from f32 accumulation rounded once", bad);
    bad = 0;
    float least = INFINITY;
    for (int c = 0; c < 8; c++) {
        float w = -INFINITY;
        bool nan = false;
        for (int r = 0; r < 16; r++) {
            nan |= isnan(f[r * 8 + c]);
            w = f[r * 8 + c] > w ? f[r * 8 + c] : w;
            least = f[r * 8 + c] < least ? f[r * 8 + c] : least;
        }
        bad += nan ? !isnan(mx[c]) : mx[c] != w;
    }
    CHECK(bad == 0, "%d column maxima differ (NaN propagates)", bad);
    CHECK(isnan(mn[0]) && isnan(mn[1]), "min over a tile holding NaN is NaN, got %g", mn[0]);
    bad = 0;
    for (int i = 0; i < 16; i++)
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 8; j++) { /* p[i,b,j] = bc[b,j,i] + (b*128 + j*16 + i); bc[b,j,i] = f[i,j] */
                float want = f[i * 8 + j] + (float)(b * 128 + j * 16 + i), got = p[(i * 2 + b) * 8 + j];
                bad += isnan(want) ? !isnan(got) : want != got;
            }
    CHECK(bad == 0, "%d permuted/broadcast elements differ", bad);
    (void)least;
    oxide_module_destroy(m);
}

/* ---- the grid, loops carrying tiles, parallel block arguments, scalars, tile.print ---- */

static const char *k_loop = "module @m\n"
                            "tile_kernel @k(%o: tensor<mut 3 x i32>, %n: u32, %h: f16) {\n"
                            "^0:\n"
                            "  %px = tile.program_id {imm=0} : i32\n  %py = tile.program_id {imm=1} : i32\n"
                            "  %pz = tile.program_id {imm=2} : i32\n  %nx = tile.num_programs {imm=0} : i32\n"
                            "  %z = const {value=0} : i32\n  %one = const {value=1} : i32\n"
                            "  %a0 = tile.full {value=1} : tile<1x1x4 x i32>\n"
                            "  %b0 = tile.full {value=0} : tile<1x1x4 x i32>\n"
                            "  br ^1(%z, %a0, %b0)\n"
                            "^1(%i: i32, %a: tile<1x1x4 x i32>, %b: tile<1x1x4 x i32>):\n"
                            "  %more = icmp %i, %n {pred=ult} : i1\n"
                            "  cond_br %more, ^2, ^3\n"
                            "^2:\n"
                            "  %s = add %a, %b : tile<1x1x4 x i32>\n"
                            "  %i2 = add %i, %one : i32\n"
                            "  br ^1(%i2, %s, %a)\n"
                            "^3:\n"
                            "  %pxs = tile.splat %px : tile<1x1x4 x i32>\n"
                            "  %w = mul %pxs, %pxs : tile<1x1x4 x i32>\n"
                            "  %q = add %b, %w : tile<1x1x4 x i32>\n"
                            "  %hh = fpext %h : f32\n"
                            "  %hi = fptosi %hh : i32\n"
                            "  %his = tile.splat %hi : tile<1x1x4 x i32>\n"
                            "  %nxs = tile.splat %nx : tile<1x1x4 x i32>\n"
                            "  %q2 = add %q, %his : tile<1x1x4 x i32>\n"
                            "  %q3 = add %q2, %nxs : tile<1x1x4 x i32>\n"
                            "  %c4 = const {value=4} : i32\n  %ox = mul %px, %c4 : i32\n"
                            "  tile.store %o, %pz, %py, %ox, %q3\n"
                            "  tile.print %q3 {str=\"q\"}\n"
                            "  ret\n}\n";

typedef struct {
    char text[4096];
    size_t len;
    int calls;
} printed;

static void on_print(void *user, const char *text) {
    printed *p = user;
    p->calls++;
    size_t n = strlen(text);
    if (p->len + n < sizeof p->text) {
        memcpy(p->text + p->len, text, n + 1);
        p->len += n;
    }
}

static void test_grid_loop_print(void) {
    oxide_module *m = parse(k_loop);
    int32_t o[2][3][4][4];
    memset(o, 0x55, sizeof o);
    uint32_t n = 10 + rnd() % 10;
    oxide_tensor to = tensor(o, OXIDE_SCALAR_I32, 3, (int64_t[]){2, 3, 16}, 1);
    _Float16 h = (_Float16)-6.75f;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    oxide_arg args[] = {oxide_arg_tensor(&to), oxide_arg_u32(n), oxide_arg_f16_bits(hb)};
    printed pr = {.len = 0};
    oxide_interp_options opts = {sizeof opts, on_print, &pr, 0, 0};
    OK(oxide_tile_interpret(m, "k", (uint32_t[]){4, 3, 2}, args, 3, &opts));
    int32_t fa = 1, fb = 0; /* (a, b) <- (a + b, a): b ends as Fibonacci(n) */
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = fa + fb;
        fb = fa, fa = t;
    }
    int bad = 0;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++)
                for (int e = 0; e < 4; e++)
                    bad += o[z][y][x][e] != fb + x * x - 6 + 4;
    CHECK(bad == 0, "%d grid results differ (fib %d)", bad, fb);
    CHECK(pr.calls == 24 * 4, "tile.print made %d calls, want one per element of 24 programs", pr.calls);
    char first[128];
    snprintf(first, sizeof first, "pid(0,0,0) q[0,0,0] = %d\npid(0,0,0) q[0,0,1] = %d\n", fb - 2, fb - 2);
    CHECK(!strncmp(pr.text, first, strlen(first)), "printed: %.120s", pr.text);
    /* NULL print drops the output; the same run works without options */
    OK(oxide_tile_interpret(m, "k", (uint32_t[]){4, 3, 2}, args, 3, NULL));
    oxide_module_destroy(m);
}

/* ---- refusals: each names the kernel and what to fix ---- */

static bool has(const char *what) {
    bool ok = strstr(oxide_last_error(), what) != NULL;
    if (!ok)
        printf("  message lacks \"%s\": %s\n", what, oxide_last_error());
    return ok;
}

#define REFUSED(call, status, text) CHECK((call) == (status) && has(text))

static void test_argument_refusals(void) {
    oxide_module *m = parse("module @m\n"
                            "tile_kernel @k(%x: tensor<2 x f32>, %y: tensor<mut 1 x f8e4m3>, %n: i32) {\n"
                            "^0:\n  %z = const {value=0} : i32\n"
                            "  %t = tile.load %x, %z, %n {pad=0} : tile<16x16 x f32>\n"
                            "  %r = tile.reshape %t : tile<256 x f32>\n  %q = tile.cast %r : tile<256 x f8e4m3>\n"
                            "  tile.store %y, %z, %q\n  ret\n}\n");
    float x[64];
    uint8_t y[64];
    for (int i = 0; i < 64; i++)
        x[i] = rndf(1);
    oxide_tensor tx = tensor(x, OXIDE_SCALAR_F32, 2, (int64_t[]){8, 8}, 0);
    oxide_tensor ty = tensor(y, OXIDE_SCALAR_U8, 1, (int64_t[]){64}, 1);
    oxide_arg good[] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty), oxide_arg_i32(0)};
    OK(oxide_tile_interpret(m, "k", one, good, 3, NULL));
    REFUSED(oxide_tile_interpret(m, "k", one, good, 2, NULL), OXIDE_ERROR_LAUNCH,
            "interpret @k: expects 3 arguments (x, y, n), got 2");
    REFUSED(oxide_tile_interpret(m, "k", one, NULL, 3, NULL), OXIDE_ERROR_LAUNCH, "got 0");
    oxide_arg a[3];
    memcpy(a, good, sizeof a);
    a[2] = oxide_arg_u32(0);
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH,
            "argument 3 'n' is a scalar i32, got a scalar u32");
    memcpy(a, good, sizeof a);
    a[0] = oxide_arg_f32(1);
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH,
            "argument 1 'x' is a read-only tensor<2 x f32>, got a scalar f32");
    oxide_tensor bad = tx;
    bad.rank = 1;
    a[0] = oxide_arg_tensor(&bad);
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "got a read-only rank-1 tensor of f32");
    bad = tx, bad.elem = OXIDE_SCALAR_F16;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "rank-2 tensor of f16");
    bad = tx, bad.struct_size = 16;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "struct_size is 16");
    bad = tx, bad.shape[1] = -1;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "shape[1] is -1");
    bad = tx, bad.data = 0;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "'x': data is NULL");
    bad = tx, bad.strides[0] = INT64_MAX / 2;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "reach past the address space");
    a[0] = oxide_arg_tensor(&tx);
    oxide_tensor ro = ty;
    ro.is_mutable = 0;
    a[1] = oxide_arg_tensor(&ro);
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "(set is_mutable in the oxide_tensor)");
    ro = ty, ro.elem = OXIDE_SCALAR_I8;
    REFUSED(oxide_tile_interpret(m, "k", one, a, 3, NULL), OXIDE_ERROR_LAUNCH, "fp8 tensor is passed with elem u8");
    /* an empty tensor needs no data: every element is outside it */
    bad = tx, bad.data = 0, bad.shape[0] = 0;
    a[0] = oxide_arg_tensor(&bad), a[1] = oxide_arg_tensor(&ty);
    OK(oxide_tile_interpret(m, "k", one, a, 3, NULL));
    REFUSED(oxide_tile_interpret(m, "nope", one, good, 3, NULL), OXIDE_ERROR_NOT_FOUND, "module m has no kernel @nope");
    REFUSED(oxide_tile_interpret(m, "k", NULL, good, 3, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "grid is NULL");
    REFUSED(oxide_tile_interpret(m, "k", (uint32_t[]){1, 0, 1}, good, 3, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
            "grid is 1x0x1");
    oxide_interp_options small = {4, NULL, NULL, 0, 0};
    REFUSED(oxide_tile_interpret(m, "k", one, good, 3, &small), OXIDE_ERROR_INVALID_ARGUMENT, "struct_size is 4");
    oxide_module_destroy(m);
}

static void test_kernel_refusals(void) {
    oxide_module *m = parse("module @m\n"
                            "kernel @simt(%n: i32) {\n^0:\n  ret\n}\n"
                            "tile_kernel @spin(%n: i32) {\n^0:\n  %z = const {value=0} : i32\n  br ^1(%z)\n"
                            "^1(%i: i32):\n  %i2 = add %i, %n : i32\n  br ^1(%i2)\n}\n"
                            "tile_kernel @big(%n: i32) {\n^0:\n"
                            "  %a = tile.full {value=1} : tile<1024x1024 x f32>\n"
                            "  %b = add %a, %a : tile<1024x1024 x f32>\n  ret\n}\n");
    oxide_arg n = oxide_arg_i32(1);
    REFUSED(oxide_tile_interpret(m, "simt", one, &n, 1, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
            "interpret @simt: it is a SIMT kernel, and the interpreter runs tile kernels only");
    oxide_interp_options o = {sizeof o, NULL, NULL, 100000, 0};
    REFUSED(oxide_tile_interpret(m, "spin", one, &n, 1, &o), OXIDE_ERROR_UNSUPPORTED,
            "the run passed its budget of 100000 element operations");
    CHECK(has("interpret @spin, program (0,0,0): ^1 #"));
    OK(oxide_tile_interpret(m, "big", one, &n, 1, NULL));
    o.max_steps = 0, o.max_memory = 12u << 20; /* one 8 MiB tile fits, two do not */
    REFUSED(oxide_tile_interpret(m, "big", one, &n, 1, &o), OXIDE_ERROR_OUT_OF_MEMORY,
            "^0 #1 'add' at 17:8: tile storage would reach 16777224 bytes, past the interpreter's limit of 12582912");
    oxide_module_destroy(m);
    /* the module is verified first: here a use that its definition does not dominate */
    m = parse("module @m\ntile_kernel @k(%y: tensor<mut 1 x i32>) {\n^0:\n  %z = const {value=0} : i32\n"
              "  %c = const {value=1} : i1\n  cond_br %c, ^1, ^2\n^1:\n  %a = const {value=5} : i32\n  br ^2\n"
              "^2:\n  %t = tile.splat %a : tile<16 x i32>\n  tile.store %y, %z, %t\n  ret\n}\n");
    int32_t y[16];
    oxide_tensor ty = tensor(y, OXIDE_SCALAR_I32, 1, (int64_t[]){16}, 1);
    oxide_arg a = oxide_arg_tensor(&ty);
    REFUSED(oxide_tile_interpret(m, "k", one, &a, 1, NULL), OXIDE_ERROR_VERIFY,
            "interpret @k: verify: tile_kernel @k ^2 #0 'tile.splat' at 11:8: operand 0 (%a) is defined in ^1");
    oxide_module_destroy(m);
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    test_f32_elementwise();
    test_half_rounding();
    test_i32();
    test_casts();
    test_load_store_bounds();
    test_atomic_add();
    test_dot();
    test_reduce_and_shapes();
    test_grid_loop_print();
    test_argument_refusals();
    test_kernel_refusals();
    oxide_context_destroy(ctx);
    return check_report("test_tile_interp");
}
