/* Every kernel of examples/tile on the GPU against the CPU interpreter: each case gives the
 * kernel's tensors (ragged shapes: M, N, K not multiples of the tiles; one case of transposed,
 * offset and windowed views) and scalars, fills the inputs with random non-zero values and the
 * outputs with a random sentinel, runs the kernel in oxide_tile_interpret on host copies and on
 * the GPU (compiled in-process for the device's own target), and compares: inside each output
 * view within the case's tolerance, outside it bit for bit (nothing may be written there). A
 * line per case records the shape, the largest error and the GPU kernel's time (CUDA events, the
 * mean of a few launches), so that the general path's figures are kept with the run.
 *
 * Tolerances: the interpreter adds in k order with one f32 rounding per addition; tensor cores
 * and tree reductions add in another order. Two orders of n terms differ by at most
 * 2 (n - 1) U sum|t| (U = 2^-24), and with inputs of magnitude in [0.5, 2) sum|t| <= 4n for a
 * dot (|ab| <= 4) and 2n for a sum, hence atol = 8 K^2 U for a dot's f32 result. A bf16 output
 * rounds that result: the f32 difference can flip the rounding by one ulp, at most 2^-7 of the
 * value (rtol). Math functions (exp, erf, rsqrt) differ from libm in the last f32 bits, far
 * below a bf16 ulp and within a few U of an f32 result. Each case's comment gives its figures.
 *
 * Usage: test_gpu_tile_examples [DIR] (DIR: the .oxir files; default $OXIDE_TILE_EXAMPLES, then
 * the source tree's examples/tile). Every .oxir there must have a case here. */
#include <dirent.h>

#include "../gpu_test.h"

#ifndef OXIDE_TILE_EXAMPLES_DIR
#define OXIDE_TILE_EXAMPLES_DIR "examples/tile"
#endif

#define U (1.0 / 16777216.0) /* f32 unit roundoff */
#define BF16_ULP (1.0 / 128.0)
#define MAX_T 5
#define TIMED_RUNS 10

static oxide_device *dev;
static oxide_context *ctx;
static char target[16];
static int sm;
static const char *dir;

/* One tensor parameter: its view (strides 0: row-major) inside an allocation of the view's
 * extent plus `offset` elements before and `tail` after. */
typedef struct {
    oxide_scalar elem; /* on the GPU; the interpreter takes fp8 as u8 */
    uint32_t rank;
    int64_t shape[4];
    int64_t strides[4];
    int64_t offset, tail;
    int out;
} tparam;

typedef struct {
    const char *kernel; /* also the file: examples/tile/<kernel>.oxir */
    const char *label;  /* what the case varies, for its line */
    uint32_t grid[3];
    tparam t[MAX_T];
    int nt;
    float scalar[2]; /* f32 scalars, after the tensors */
    int ns;
    double rtol, atol; /* |gpu - interp| <= rtol |interp| + atol inside the output views */
    int min_sm;
    int has_i32; /* then one i32 scalar */
    int32_t i32;
} tcase;

static size_t elem_size(oxide_scalar e) {
    switch (e) {
    case OXIDE_SCALAR_F32:
    case OXIDE_SCALAR_I32: return 4;
    case OXIDE_SCALAR_BF16:
    case OXIDE_SCALAR_F16: return 2;
    default: return 1; /* fp8 */
    }
}

static void fill_random(oxide_scalar e, void *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (e) {
        case OXIDE_SCALAR_F32: ((float *)p)[i] = rng_f32(); break;
        case OXIDE_SCALAR_I32: { /* +-[1, 1000] */
            int32_t v = (int32_t)(rng_u32() % 1000) + 1;
            ((int32_t *)p)[i] = rng_u32() & 1 ? -v : v;
            break;
        }
        case OXIDE_SCALAR_BF16: ((uint16_t *)p)[i] = bf16_from_f32(rng_f32()); break;
        case OXIDE_SCALAR_F16: {
            _Float16 h = (_Float16)rng_f32();
            memcpy((uint16_t *)p + i, &h, 2);
            break;
        }
        default: { /* e4m3 of magnitude [0.5, 3.75]: exponent field 6..8, any mantissa, any sign */
            uint32_t r = rng_u32();
            ((uint8_t *)p)[i] = (uint8_t)((r & 0x80) | (6 + r % 3) << 3 | (r >> 8 & 7));
        }
        }
    }
}

static double value(oxide_scalar e, const void *p, size_t i) {
    switch (e) {
    case OXIDE_SCALAR_F32: return ((const float *)p)[i];
    case OXIDE_SCALAR_I32: return ((const int32_t *)p)[i];
    case OXIDE_SCALAR_BF16: return f32_from_bf16(((const uint16_t *)p)[i]);
    case OXIDE_SCALAR_F16: {
        _Float16 h;
        memcpy(&h, (const uint16_t *)p + i, 2);
        return h;
    }
    default: return NAN;
    }
}

/* A tensor's allocation on both sides: host (the interpreter's), device, and the host copy the
 * GPU's result comes back to. */
typedef struct {
    const tparam *p;
    int64_t strides[4];
    size_t n, bytes;
    void *host, *back;
    unsigned char *inside; /* per element of the allocation: in the view */
    oxide_buffer *buf;
    oxide_tensor hv, dv;
} tbuf;

static int setup_tensor(tbuf *b, const tparam *p) {
    *b = (tbuf){.p = p};
    int64_t last = 0, s = 1;
    for (int d = (int)p->rank - 1; d >= 0; d--) {
        b->strides[d] = p->strides[d] ? p->strides[d] : s;
        s = b->strides[d] * p->shape[d] > s ? b->strides[d] * p->shape[d] : s;
        last += (p->shape[d] - 1) * b->strides[d];
    }
    size_t es = elem_size(p->elem);
    b->n = (size_t)(p->offset + last + 1 + p->tail);
    b->bytes = b->n * es;
    b->host = malloc(b->bytes), b->back = malloc(b->bytes), b->inside = calloc(b->n, 1);
    if (!b->host || !b->back || !b->inside)
        return 0;
    fill_random(p->elem, b->host, b->n);
    int64_t idx[4] = {0};
    for (;;) { /* mark the view's elements */
        int64_t at = p->offset;
        for (uint32_t d = 0; d < p->rank; d++)
            at += idx[d] * b->strides[d];
        b->inside[at] = 1;
        int d = (int)p->rank - 1;
        while (d >= 0 && ++idx[d] == p->shape[d])
            idx[d--] = 0;
        if (d < 0)
            break;
    }
    if (oxide_buffer_alloc(dev, b->bytes, &b->buf) ||
        oxide_memcpy_htod(dev, oxide_buffer_ptr(b->buf), b->host, b->bytes))
        return 0;
    b->hv = (oxide_tensor){.struct_size = sizeof b->hv,
                           .data = (uint64_t)(uintptr_t)b->host,
                           .byte_offset = (uint64_t)p->offset * es,
                           .elem = es == 1 ? OXIDE_SCALAR_U8 : p->elem,
                           .rank = p->rank,
                           .is_mutable = (uint32_t)p->out};
    memcpy(b->hv.shape, p->shape, sizeof b->hv.shape);
    memcpy(b->hv.strides, b->strides, sizeof b->hv.strides);
    b->dv = b->hv;
    b->dv.data = oxide_buffer_ptr(b->buf);
    b->dv.elem = p->elem;
    return 1;
}

static void free_tensor(tbuf *b) {
    free(b->host), free(b->back), free(b->inside);
    oxide_buffer_free(b->buf);
}

/* Compares one output; returns the number of elements out of tolerance (inside the view) or
 * changed (outside it), and raises *worst (error / tolerance) and *maxerr. */
static size_t compare(const tcase *c, const tbuf *b, double *worst, double *maxerr) {
    size_t bad = 0, es = elem_size(b->p->elem);
    for (size_t i = 0; i < b->n; i++) {
        if (!b->inside[i]) {
            bad += memcmp((const char *)b->host + i * es, (const char *)b->back + i * es, es) != 0;
            continue;
        }
        double r = value(b->p->elem, b->host, i), g = value(b->p->elem, b->back, i);
        double err = fabs(g - r), tol = c->rtol * fabs(r) + c->atol;
        if (isnan(r) || isnan(g)) {
            bad += !(isnan(r) && isnan(g));
            continue;
        }
        *maxerr = err > *maxerr ? err : *maxerr;
        *worst = err / tol > *worst ? err / tol : *worst;
        bad += err > tol;
    }
    return bad;
}

/* The kernel compiled for the device; NULL after a SKIP line (a refusal the case allows) or a
 * failed check. */
static oxide_kernel *compile_case(const tcase *c, oxide_module *m, oxide_loaded_module **lm, char *skip,
                                  size_t skip_len) {
    oxide_status st;
    oxide_kernel *k = gpu_compile_load(dev, m, target, c->kernel, lm, &st);
    if (st == OXIDE_ERROR_UNSUPPORTED && strstr(oxide_last_error(), "not lowered"))
        snprintf(skip, skip_len, "the lowering refuses it: %s", oxide_last_error());
    else if (st)
        CHECK(0, "%s: compiling for %s: %s: %s", c->kernel, target, oxide_status_name(st), oxide_last_error());
    return k;
}

/* Mean milliseconds of one launch over TIMED_RUNS (the outputs are written again with the same
 * values: the examples only store). */
static double time_launches(const tcase *c, oxide_kernel *k, const oxide_arg *args, size_t n) {
    oxide_event *e0 = NULL, *e1 = NULL;
    float ms = -1;
    if (oxide_event_create(dev, 0, &e0) || oxide_event_create(dev, 0, &e1)) {
        CHECK(0, "%s: events", c->kernel);
    } else {
        OK(oxide_event_record(e0, NULL));
        for (int r = 0; r < TIMED_RUNS; r++)
            OK(oxide_kernel_launch(k, NULL, c->grid, NULL, 0, args, n));
        OK(oxide_event_record(e1, NULL));
        OK(oxide_event_synchronize(e1));
        OK(oxide_event_elapsed_ms(e0, e1, &ms));
    }
    oxide_event_destroy(e0), oxide_event_destroy(e1);
    return ms / TIMED_RUNS;
}

static void shape_text(const tcase *c, char *out, size_t len) {
    size_t at = 0;
    for (int i = 0; i < c->nt && at < len; i++) {
        at += (size_t)snprintf(out + at, len - at, "%s", i ? "," : "");
        for (uint32_t d = 0; d < c->t[i].rank && at < len; d++)
            at += (size_t)snprintf(out + at, len - at, "%s%lld", d ? "x" : "", (long long)c->t[i].shape[d]);
    }
}

static int skipped;
static char skipped_names[256];

static void note_skip(const tcase *c, const char *why) {
    printf("  SKIP %-17s %-22s %s\n", c->kernel, c->label, why);
    size_t at = strlen(skipped_names);
    snprintf(skipped_names + at, sizeof skipped_names - at, "%s%s", at ? ", " : "", c->kernel);
    skipped++;
}

static int tma_direct_runs, tma_direct_refusals;

/* A kernel with TMA copies has a variant entry NAME__tma (the launch above chose between the two):
 * launched directly, it runs when the case's tensors allow TMA (the outputs again right), and is
 * refused, saying why, when one does not. */
static void direct_tma_variant(const tcase *c, oxide_loaded_module *lm, tbuf *b, const oxide_arg *dargs, size_t n) {
    char name[160];
    oxide_kernel *v = NULL;
    snprintf(name, sizeof name, "%s__tma", c->kernel);
    if (oxide_loaded_module_get_kernel(lm, name, &v) != OXIDE_OK)
        return;
    /* the outputs' views cleared (the rest as it was), so that results must come from this launch */
    for (int i = 0; i < c->nt; i++) {
        size_t es = elem_size(b[i].p->elem);
        unsigned char *clear = c->t[i].out ? malloc(b[i].bytes) : NULL;
        if (!clear)
            continue;
        memcpy(clear, b[i].host, b[i].bytes);
        for (size_t e = 0; e < b[i].n; e++)
            if (b[i].inside[e])
                memset(clear + e * es, 0, es);
        OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(b[i].buf), clear, b[i].bytes));
        free(clear);
    }
    oxide_status st = oxide_kernel_launch(v, NULL, c->grid, NULL, 0, dargs, n);
    if (st != OXIDE_OK) {
        CHECK(st == OXIDE_ERROR_LAUNCH && strstr(oxide_last_error(), "copies through TMA"),
              "%s (%s): launching %s directly: %s: %s", c->kernel, c->label, name, oxide_status_name(st),
              oxide_last_error());
        tma_direct_refusals++;
        return;
    }
    OK(oxide_device_synchronize(dev));
    double worst = 0, maxerr = 0;
    size_t bad = 0;
    for (int i = 0; i < c->nt; i++) {
        if (!c->t[i].out)
            continue;
        OK(oxide_memcpy_dtoh(dev, b[i].back, oxide_buffer_ptr(b[i].buf), b[i].bytes));
        bad += compare(c, &b[i], &worst, &maxerr);
    }
    CHECK(bad == 0, "%s (%s): its TMA variant %s launched directly: %zu elements wrong", c->kernel, c->label, name,
          bad);
    tma_direct_runs++;
}

/* Runs one case: interpreter, GPU, comparison, timing, its line. */
static void run_case(const tcase *c) {
    char path[4096], why[512] = "", shape[128];
    shape_text(c, shape, sizeof shape);
    if (sm < c->min_sm) {
        snprintf(why, sizeof why, "needs sm_%d or newer; this GPU is sm_%d", c->min_sm, sm);
        note_skip(c, why);
        return;
    }
    snprintf(path, sizeof path, "%s/%s.oxir", dir, c->kernel);
    size_t len = 0;
    char *text = check_read_file(path, &len);
    oxide_module *m = NULL;
    CHECK(text != NULL, "%s: cannot read %s", c->kernel, path);
    if (!text)
        return;
    OK(oxide_module_parse(ctx, text, len, &m));
    free(text);
    if (!m)
        return;
    tbuf b[MAX_T];
    oxide_arg hargs[MAX_T + 2], dargs[MAX_T + 2];
    int ready = 1, nb = 0;
    for (; nb < c->nt && ready; nb++)
        ready = setup_tensor(&b[nb], &c->t[nb]);
    CHECK(ready, "%s: allocating tensor %d: %s", c->kernel, nb, oxide_last_error());
    size_t n = 0;
    for (int i = 0; ready && i < c->nt; i++, n++)
        hargs[n] = oxide_arg_tensor(&b[i].hv), dargs[n] = oxide_arg_tensor(&b[i].dv);
    for (int i = 0; i < c->ns; i++, n++)
        hargs[n] = dargs[n] = oxide_arg_f32(c->scalar[i]);
    if (c->has_i32)
        hargs[n] = dargs[n] = oxide_arg_i32(c->i32), n++;
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = ready ? compile_case(c, m, &lm, why, sizeof why) : NULL;
    if (k) {
        double t0 = now_us();
        OK(oxide_tile_interpret(m, c->kernel, c->grid, hargs, n, NULL));
        double interp_s = (now_us() - t0) / 1e6;
        OK(oxide_kernel_launch(k, NULL, c->grid, NULL, 0, dargs, n));
        OK(oxide_device_synchronize(dev));
        double worst = 0, maxerr = 0;
        size_t bad = 0, all = 0;
        for (int i = 0; i < c->nt; i++) {
            if (!c->t[i].out)
                continue;
            OK(oxide_memcpy_dtoh(dev, b[i].back, oxide_buffer_ptr(b[i].buf), b[i].bytes));
            bad += compare(c, &b[i], &worst, &maxerr);
            all += b[i].n;
        }
        CHECK(bad == 0,
              "%s (%s, %s): %zu of %zu elements wrong or written outside the view (worst %.3g of the "
              "tolerance, rtol %.3g atol %.3g)",
              c->kernel, c->label, shape, bad, all, worst, c->rtol, c->atol);
        double ms = time_launches(c, k, dargs, n);
        printf("  %-4s %-17s %-22s %-26s max err %.3g (%.2f of tol)  gpu %.4f ms  interp %.2f s\n", bad ? "FAIL" : "ok",
               c->kernel, c->label, shape, maxerr, worst, ms, interp_s);
        direct_tma_variant(c, lm, b, dargs, n);
    } else if (*why)
        note_skip(c, why);
    oxide_loaded_module_destroy(lm);
    for (int i = 0; i < nb; i++)
        free_tensor(&b[i]);
    oxide_module_destroy(m);
}

#define T2(e, m, n, o)                                                                                                 \
    { e, 2, {m, n}, {0}, 0, 0, o }
#define T1(e, n, o)                                                                                                    \
    { e, 1, {n}, {0}, 0, 0, o }
#define BF OXIDE_SCALAR_BF16
#define F32 OXIDE_SCALAR_F32

/* The cases. Tolerances from the head comment: a dot of K terms, atol 8 K^2 U on its f32 sum. */
static const tcase cases[] = {
    /* bf16 out: one ulp of rounding flip, and the f32 sum's order (K = 72: 2.5e-3) */
    {"matmul_bf16",
     "ragged",
     {4, 3, 1},
     {T2(BF, 200, 72, 0), T2(BF, 72, 136, 0), T2(BF, 200, 136, 1)},
     3,
     {0},
     0,
     BF16_ULP,
     8.0 * 72 * 72 * U,
     0,
     0,
     0},
    /* A a transposed view (strides 1, M + 3) at an offset, C a window of a wider buffer with
     * elements before and after it that must survive */
    {"matmul_bf16",
     "strided+offset views",
     {2, 2, 1},
     {{BF, 2, {100, 90}, {1, 103}, 5, 0, 0}, T2(BF, 90, 70, 0), {BF, 2, {100, 70}, {77, 1}, 2 * 77 + 3, 100, 1}},
     3,
     {0},
     0,
     BF16_ULP,
     8.0 * 90 * 90 * U,
     0,
     0,
     0},
    /* the Hopper path's tiles (wgmma on sm_90a): K = 136 leaves a 16-byte chunk of 8 and a
     * chunk past the edge in the last step (zero fill); C ragged in both dims */
    {"matmul_bf16_128",
     "ragged (wgmma on sm_90a)",
     {3, 2, 1},
     {T2(BF, 300, 136, 0), T2(BF, 136, 200, 0), T2(BF, 300, 200, 1)},
     3,
     {0},
     0,
     BF16_ULP,
     8.0 * 136 * 136 * U,
     0,
     0,
     0},
    /* whole tiles, K = 512: eight k-steps through the shared tiles */
    {"matmul_bf16_128",
     "aligned, K = 512",
     {2, 2, 1},
     {T2(BF, 256, 512, 0), T2(BF, 512, 256, 0), T2(BF, 256, 256, 1)},
     3,
     {0},
     0,
     BF16_ULP,
     8.0 * 512 * 512 * U,
     0,
     0,
     0},
    /* A a transposed view and B at an odd offset: neither has contiguous, aligned rows, so both
     * copies go element by element into the same swizzled tiles */
    {"matmul_bf16_128",
     "strided+offset views",
     {1, 2, 1},
     {{BF, 2, {100, 90}, {1, 103}, 5, 0, 0}, {BF, 2, {90, 150}, {151, 1}, 3, 7, 0}, T2(BF, 100, 150, 1)},
     3,
     {0},
     0,
     BF16_ULP,
     8.0 * 90 * 90 * U,
     0,
     0,
     0},
    /* e4m3 of magnitude <= 3.75 (|ab| <= 14.1), scales 0.25 * 0.5: the f32 order term
     * 2 K^2 U 14.1 * 0.125, and the fp8 mma's narrower accumulation (about 2^-13 of each
     * 32-term partial sum; K / 32 of them), K = 200 */
    {"matmul_fp8",
     "ragged, scaled",
     {2, 2, 1},
     {T2(OXIDE_SCALAR_F8E4M3, 96, 200, 0), T2(OXIDE_SCALAR_F8E4M3, 80, 200, 0), T2(BF, 96, 80, 1)},
     3,
     {0.25f, 0.5f},
     2,
     BF16_ULP,
     0.125 * 14.1 * (2.0 * 200 * 200 * U + 200 * 0x1p-12),
     89,
     0,
     0},
    /* the Hopper path's fp8 tiles (wgmma k32 on sm_90a): K = 300 ends in a chunk of 12 bytes;
     * tolerance as matmul_fp8's at K = 300 */
    {"matmul_fp8_128",
     "ragged, scaled (wgmma on sm_90a)",
     {2, 2, 1},
     {T2(OXIDE_SCALAR_F8E4M3, 200, 300, 0), T2(OXIDE_SCALAR_F8E4M3, 150, 300, 0), T2(BF, 200, 150, 1)},
     3,
     {0.25f, 0.5f},
     2,
     BF16_ULP,
     0.125 * 14.1 * (2.0 * 300 * 300 * U + 300 * 0x1p-12),
     89,
     0,
     0},
    /* rows of 256 bytes at aligned bases: both operands come by TMA on sm_90a (M and N ragged:
     * the boxes' rows past the edge read as zeros) */
    {"matmul_fp8_128",
     "aligned rows, ragged M and N (TMA on sm_90a)",
     {2, 2, 1},
     {T2(OXIDE_SCALAR_F8E4M3, 200, 256, 0), T2(OXIDE_SCALAR_F8E4M3, 150, 256, 0), T2(BF, 200, 150, 1)},
     3,
     {0.25f, 0.5f},
     2,
     BF16_ULP,
     0.125 * 14.1 * (2.0 * 256 * 256 * U + 256 * 0x1p-12),
     89,
     0,
     0},
    /* B at an odd offset with an odd row pitch: its copy goes element by element (A's by TMA) */
    {"matmul_fp8_128",
     "B offset view",
     {1, 1, 1},
     {T2(OXIDE_SCALAR_F8E4M3, 100, 256, 0), {OXIDE_SCALAR_F8E4M3, 2, {90, 256}, {259, 1}, 3, 5, 0}, T2(BF, 100, 90, 1)},
     3,
     {0.25f, 0.5f},
     2,
     BF16_ULP,
     0.125 * 14.1 * (2.0 * 256 * 256 * U + 256 * 0x1p-12),
     89,
     0,
     0},
    /* p = e / s: each exp a few U, s's order 2 N U relative (terms <= 1, s >= 1): relative only */
    {"softmax_f32",
     "ragged rows",
     {8, 1, 1},
     {T2(F32, 123, 1000, 0), T2(F32, 123, 1000, 1)},
     2,
     {0},
     0,
     (2.0 * 1000 + 16) * U,
     1e-30,
     0,
     0,
     0},
    /* mean and variance over N = 1000 in another order (2 N U of each sum), through rstd (~0.8)
     * and |w| <= 2: under 16 N U absolute; then bf16 rounding */
    {"layernorm_bf16",
     "ragged rows",
     {5, 1, 1},
     {T2(BF, 77, 1000, 0), T1(BF, 1000, 0), T1(BF, 1000, 0), T2(BF, 77, 1000, 1)},
     4,
     {1e-5f},
     1,
     BF16_ULP,
     16.0 * 1000 * U,
     0,
     0,
     0},
    /* gelu' <= 1.13 carries the dot's order term (K = 80), erf's last bits are below it */
    {"matmul_bias_gelu",
     "ragged",
     {3, 2, 1},
     {T2(BF, 130, 80, 0), T2(BF, 80, 96, 0), T1(F32, 96, 0), T2(BF, 130, 96, 1)},
     4,
     {0},
     0,
     BF16_ULP,
     1.13 * 8.0 * 80 * 80 * U,
     0,
     0,
     0},
    /* f32 out straight from the dot: the order term alone (K = 90), and a few U */
    {"matmul_at",
     "ragged, A stored K x M",
     {2, 3, 1},
     {T2(OXIDE_SCALAR_F16, 90, 100, 0), T2(OXIDE_SCALAR_F16, 90, 150, 0), T2(F32, 100, 150, 1)},
     3,
     {0},
     0,
     4 * U,
     8.0 * 90 * 90 * U,
     0,
     0,
     0},
    /* sums of M = 300 terms of magnitude < 2: 2 M U * 2 M */
    {"column_sum",
     "ragged",
     {4, 1, 1},
     {T2(F32, 300, 200, 0), T1(F32, 200, 1)},
     2,
     {0},
     0,
     4 * U,
     4.0 * 300 * 300 * U,
     0,
     0,
     0},
    /* batched: per batch the dot's order term (K = 48) */
    {"bmm_bf16",
     "3 batches, ragged",
     {2, 2, 3},
     {{BF, 3, {3, 70, 48}, {0}, 0, 0, 0}, {BF, 3, {3, 48, 90}, {0}, 0, 0, 0}, {F32, 3, {3, 70, 90}, {0}, 0, 0, 1}},
     3,
     {0},
     0,
     4 * U,
     8.0 * 48 * 48 * U,
     0,
     0,
     0},
    /* h = silu(g) u: dh <= 1.1 |u| dg + |silu(g)| du with |g|, |u| <= 4K and dg, du the order term
     * (K = 40); then bf16 rounding */
    {"swiglu_bf16",
     "ragged",
     {2, 2, 1},
     {T2(BF, 80, 40, 0), T2(BF, 40, 112, 0), T2(BF, 40, 112, 0), T2(BF, 80, 112, 1)},
     4,
     {0},
     0,
     BF16_ULP,
     2.1 * 4 * 40 * 8.0 * 40 * 40 * U,
     0,
     0,
     0},
    /* flash attention, causal, S = 150 (ragged against the 64-row blocks), head dim 64: the
     * score dot's order term and ex2's approximation move p by a few f32 ulps, p goes to bf16
     * (one ulp flips) before the second dot, then the output's own rounding */
    {"attention_fwd",
     "causal, ragged",
     {3, 2, 1},
     {{BF, 3, {2, 150, 64}, {0}, 0, 0, 0},
      {BF, 3, {2, 150, 64}, {0}, 0, 0, 0},
      {BF, 3, {2, 150, 64}, {0}, 0, 0, 0},
      {BF, 3, {2, 150, 64}, {0}, 0, 0, 1}},
     4,
     {0.18033688f},
     1,
     2 * BF16_ULP,
     0.02,
     0,
     1,
     1},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Every example file has at least one case (a new example must add its own). */
static void check_every_example_has_a_case(void) {
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot list %s (give the examples' folder as the argument)", dir);
    if (!d)
        return;
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".oxir"))
            continue;
        files++;
        int found = 0;
        for (size_t i = 0; i < NCASES; i++)
            found |= strlen(cases[i].kernel) == n - 5 && !strncmp(cases[i].kernel, e->d_name, n - 5);
        CHECK(found, "examples/tile/%s has no case in test_gpu_tile_examples.c", e->d_name);
    }
    closedir(d);
    CHECK(files > 0, "no .oxir files in %s", dir);
}

int main(int argc, char **argv) {
    dir = argc > 1 ? argv[1] : getenv("OXIDE_TILE_EXAMPLES") ? getenv("OXIDE_TILE_EXAMPLES") : OXIDE_TILE_EXAMPLES_DIR;
    gpu_require();
    rng_seed();
    dev = gpu_device_target(target, sizeof target);
    sm = atoi(target + 3); /* "sm_90a" -> 90 */
    MUST(oxide_context_create(&ctx));
    check_every_example_has_a_case();
    printf("tile examples from %s on %s: GPU vs the interpreter\n", dir, target);
    for (size_t i = 0; i < NCASES; i++)
        run_case(&cases[i]);
    oxide_context_destroy(ctx);
    char fig[384];
    snprintf(fig, sizeof fig, "%zu of %zu cases on %s%s%s%s; TMA variants direct: %d ran, %d refused",
             NCASES - (size_t)skipped, NCASES, target, skipped ? " (SKIP: " : "", skipped_names, skipped ? ")" : "",
             tma_direct_runs, tma_direct_refusals);
    return finish("test_gpu_tile_examples", fig);
}
