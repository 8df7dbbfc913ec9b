/* The Rust tile kernels lifted from bitcode, run on the CPU (tests/rust/run.sh; no GPU needed).
 *
 *   tile_lift KERNEL OUT.oxir UNIT.bc...
 *   tile_lift --refused OUT UNIT.bc...   (bitcode whose tile kernel the lift must refuse)
 *
 * imports the crates' bitcode units, lifts their #[tile_kernel]s (oxide_module_import_tile_kernels),
 * writes the module's text to OUT.oxir, parses that text into a fresh module and runs KERNEL
 * (matmul_bf16, matmul_fp8, softmax_f32, layernorm_bf16, row_sums for both instances of
 * tile_mixed's generic kernel, attention for the six of tile_attention's: examples/rust/tile_*; or
 * loops, of tests/rust/crates/tile_ops) in the tile interpreter on random inputs of ragged shapes,
 * against a CPU reference; then compiles the reparsed module to PTX (OUT.oxir.ptx, for ptxas).
 * Prints one line per check and a closing "tile_lift: N passed, N failed" line. */
#include <math.h>
#include <stdint.h>

#include "../harness.h"

/* The test cannot go on without cond: say why and stop. */
static void need(int cond, const char *what, const char *arg) {
    if (!cond) {
        printf("FAILED: %s%s (last error: %s)\n", what, arg ? arg : "", oxide_last_error());
        exit(1);
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

/* Random in [lo, hi), never zero. */
static float rnd(float lo, float hi) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    float v = lo + (float)(rng >> 40) / (float)(1u << 24) * (hi - lo);
    return fabsf(v) < 1e-3f ? 0.5f : v;
}

static uint16_t to_bf16(float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    return (uint16_t)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float x;
    memcpy(&x, &b, 4);
    return x;
}

static oxide_tensor view(void *data, oxide_scalar elem, int64_t rows, int64_t cols, int mut) {
    oxide_tensor t = {sizeof t, (uint64_t)(uintptr_t)data, 0, elem, 2, {rows, cols}, {cols, 1}, (uint32_t)mut, 0};
    return t;
}

/* C = A·B, bf16 in and out: M, N, K not multiples of the 64x64x32 tiles. */
static void check_matmul(oxide_module *m) {
    enum { M = 100, N = 72, K = 40 };
    uint16_t *a = malloc(M * K * 2), *b = malloc(K * N * 2), *c = malloc(M * N * 2);
    need(a && b && c, "out of memory", NULL);
    for (int i = 0; i < M * K; i++)
        a[i] = to_bf16(rnd(-2, 2));
    for (int i = 0; i < K * N; i++)
        b[i] = to_bf16(rnd(-2, 2));
    for (int i = 0; i < M * N; i++)
        c[i] = 0x7fc1; /* a NaN sentinel: every element must be written */
    oxide_tensor ta = view(a, OXIDE_SCALAR_BF16, M, K, 0), tb = view(b, OXIDE_SCALAR_BF16, K, N, 0);
    oxide_tensor tc = view(c, OXIDE_SCALAR_BF16, M, N, 1);
    oxide_arg args[3] = {oxide_arg_tensor(&ta), oxide_arg_tensor(&tb), oxide_arg_tensor(&tc)};
    uint32_t grid[3] = {(M + 63) / 64, (N + 63) / 64, 1};
    OK(oxide_tile_interpret(m, "matmul_bf16", grid, args, 3, NULL));
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                float p = from_bf16(a[i * K + k]) * from_bf16(b[k * N + j]);
                want += p, mag += fabsf(p);
            }
            double tol = 8.0 * K * K * mag / (1 << 24) + fabsf(want) / 128 + 1e-6;
            double e = fabs(from_bf16(c[i * N + j]) - want) / tol;
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
    CHECK(worst <= 1.0, "matmul_bf16: worst error %.3f of the tolerance", worst);
    printf("matmul_bf16 %dx%dx%d in the interpreter: worst error %.3f of the tolerance\n", M, N, K, worst);
    free(a), free(b), free(c);
}

/* Row softmax, N <= 1024: rows past M and columns past N are the kernel's padding. */
static void check_softmax(oxide_module *m) {
    enum { M = 40, N = 1000 };
    float *x = malloc(M * N * 4), *y = malloc(M * N * 4);
    need(x && y, "out of memory", NULL);
    for (int i = 0; i < M * N; i++)
        x[i] = rnd(-4, 4), y[i] = NAN;
    oxide_tensor tx = view(x, OXIDE_SCALAR_F32, M, N, 0), ty = view(y, OXIDE_SCALAR_F32, M, N, 1);
    oxide_arg args[2] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty)};
    uint32_t grid[3] = {(M + 15) / 16, 1, 1};
    OK(oxide_tile_interpret(m, "softmax_f32", grid, args, 2, NULL));
    double worst = 0;
    for (int r = 0; r < M; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; c++)
            mx = fmax(mx, x[r * N + c]);
        for (int c = 0; c < N; c++)
            sum += exp(x[r * N + c] - mx);
        for (int c = 0; c < N; c++) {
            double want = exp(x[r * N + c] - mx) / sum, tol = want * (8.0 + 2.0 * N) * 0x1p-23 + 1e-12;
            double e = fabs(y[r * N + c] - want) / tol;
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
    }
    CHECK(worst <= 1.0, "softmax_f32: worst error %.3f of the tolerance", worst);
    printf("softmax_f32 %dx%d in the interpreter: worst error %.3f of the tolerance\n", M, N, worst);
    free(x), free(y);
}

/* Layer norm over rows (N <= 1024) with weight, bias and a scalar eps: bf16 in and out. */
static void check_layernorm(oxide_module *m) {
    enum { M = 20, N = 700 };
    uint16_t *x = malloc(M * N * 2), *y = malloc(M * N * 2), w[N], b[N];
    need(x && y, "out of memory", NULL);
    for (int i = 0; i < M * N; i++)
        x[i] = to_bf16(rnd(-3, 3)), y[i] = 0x7fc1;
    for (int i = 0; i < N; i++)
        w[i] = to_bf16(rnd(0.5f, 1.5f)), b[i] = to_bf16(rnd(-1, 1));
    float eps = 1e-5f;
    oxide_tensor tx = view(x, OXIDE_SCALAR_BF16, M, N, 0), ty = view(y, OXIDE_SCALAR_BF16, M, N, 1);
    oxide_tensor tw = view(w, OXIDE_SCALAR_BF16, 1, N, 0), tb = view(b, OXIDE_SCALAR_BF16, 1, N, 0);
    tw.rank = tb.rank = 1, tw.shape[0] = tb.shape[0] = N, tw.strides[0] = tb.strides[0] = 1;
    oxide_arg args[5] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&tw), oxide_arg_tensor(&tb), oxide_arg_tensor(&ty),
                         oxide_arg_f32(eps)};
    uint32_t grid[3] = {(M + 15) / 16, 1, 1};
    OK(oxide_tile_interpret(m, "layernorm_bf16", grid, args, 5, NULL));
    double worst = 0;
    for (int r = 0; r < M; r++) {
        double mean = 0, var = 0;
        for (int c = 0; c < N; c++)
            mean += from_bf16(x[r * N + c]) / (double)N;
        for (int c = 0; c < N; c++)
            var += (from_bf16(x[r * N + c]) - mean) * (from_bf16(x[r * N + c]) - mean) / N;
        for (int c = 0; c < N; c++) {
            double d = from_bf16(x[r * N + c]) - mean;
            double want = d / sqrt(var + eps) * from_bf16(w[c]) + from_bf16(b[c]);
            double tol = fabs(want) / 128 + 1e-4 * (1 + fabs(d)), e = fabs(from_bf16(y[r * N + c]) - want) / tol;
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
    }
    CHECK(worst <= 1.0, "layernorm_bf16: worst error %.3f of the tolerance", worst);
    printf("layernorm_bf16 %dx%d in the interpreter: worst error %.3f of the tolerance\n", M, N, worst);
    free(x), free(y);
}

/* The value of an e4m3 byte (4 exponent bits, bias 7, 3 mantissa bits; 0x7f/0xff are NaN). */
static float from_e4m3(uint8_t b) {
    int e = (b >> 3) & 15, m = b & 7;
    float v = e ? ldexpf(1.0f + m / 8.0f, e - 7) : ldexpf(m / 8.0f, -6);
    return b & 0x80 ? -v : v;
}

/* C = (A·Bᵀ)·sa·sb: A M x K and B N x K e4m3 (u8 tensors, as the interpreter takes fp8), C bf16. */
static void check_matmul_fp8(oxide_module *m) {
    enum { M = 80, N = 72, K = 96 };
    uint8_t *a = malloc(M * K), *b = malloc(N * K);
    uint16_t *c = malloc(M * N * 2);
    need(a && b && c, "out of memory", NULL);
    for (int i = 0; i < M * K + N * K; i++) {
        uint8_t v;
        do /* |x| in [2^-3, 4): no NaN, no zero, no subnormal */
            v = (uint8_t)(rnd(0, 255.99f));
        while (((v >> 3) & 15) < 4 || ((v >> 3) & 15) > 8);
        (i < M * K ? a : b)[i < M * K ? i : i - M * K] = v;
    }
    for (int i = 0; i < M * N; i++)
        c[i] = 0x7fc1;
    float sa = 0.5f, sb = 0.25f;
    oxide_tensor ta = view(a, OXIDE_SCALAR_U8, M, K, 0), tb = view(b, OXIDE_SCALAR_U8, N, K, 0);
    oxide_tensor tc = view(c, OXIDE_SCALAR_BF16, M, N, 1);
    oxide_arg args[5] = {oxide_arg_tensor(&ta), oxide_arg_tensor(&tb), oxide_arg_tensor(&tc), oxide_arg_f32(sa),
                         oxide_arg_f32(sb)};
    uint32_t grid[3] = {(M + 63) / 64, (N + 63) / 64, 1};
    OK(oxide_tile_interpret(m, "matmul_fp8", grid, args, 5, NULL));
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)from_e4m3(a[i * K + k]) * from_e4m3(b[j * K + k]);
                want += p, mag += fabs(p);
            }
            want *= sa * sb, mag *= sa * sb;
            double tol = 2.0 * K * K * 0x1p-24 * mag + fabs(want) / 128 + 1e-6;
            double e = fabs(from_bf16(c[i * N + j]) - want) / tol;
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
    CHECK(worst <= 1.0, "matmul_fp8: worst error %.3f of the tolerance", worst);
    printf("matmul_fp8 %dx%dx%d in the interpreter: worst error %.3f of the tolerance\n", M, N, K, worst);
    free(a), free(b), free(c);
}

/* Each instance row_sums_<hash> of the generic row_sums::<R> (examples/rust/tile_mixed): sums of
 * the rows of an M x N f32 matrix, R rows a program, a rank-1 tile carried through the column
 * loop. R is read from the instance's tile type. Returns how many instances it ran. */
static int check_row_sums(oxide_module *m, const char *text) {
    enum { M = 70, N = 600 };
    float *y = malloc(M * N * 4), sums[M];
    need(y != NULL, "out of memory", NULL);
    for (int i = 0; i < M * N; i++)
        y[i] = rnd(-1, 1);
    int seen = 0;
    for (const char *at = strstr(text, "tile_kernel @row_sums_"); at; at = strstr(at + 1, "tile_kernel @row_sums_")) {
        char name[64];
        int r = 0;
        const char *body = strstr(at, "tile<");
        if (sscanf(at, "tile_kernel @%63[a-z0-9_]", name) != 1 || !body || sscanf(body, "tile<%d", &r) != 1 || r < 1)
            continue;
        for (int i = 0; i < M; i++)
            sums[i] = NAN;
        oxide_tensor ty = view(y, OXIDE_SCALAR_F32, M, N, 0), ts = view(sums, OXIDE_SCALAR_F32, 1, M, 1);
        ts.rank = 1, ts.shape[0] = M, ts.strides[0] = 1;
        oxide_arg args[2] = {oxide_arg_tensor(&ty), oxide_arg_tensor(&ts)};
        uint32_t grid[3] = {(uint32_t)((M + r - 1) / r), 1, 1};
        OK(oxide_tile_interpret(m, name, grid, args, 2, NULL));
        double worst = 0;
        for (int i = 0; i < M; i++) {
            double want = 0, mag = 0;
            for (int c = 0; c < N; c++)
                want += y[i * N + c], mag += fabs(y[i * N + c]);
            double e = fabs(sums[i] - want) / (2.0 * N * 0x1p-24 * mag + 1e-6);
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
        CHECK(worst <= 1.0, "%s: worst error %.3f of the tolerance", name, worst);
        printf("%s (%d rows a program) %dx%d in the interpreter: worst error %.3f of the tolerance\n", name, r, M, N,
               worst);
        seen++;
    }
    free(y);
    return seen;
}

/* How many loops of kernel's text have a head: a block with parameters whose first instruction
 * compares one of them (`%P = icmp %x, ...` where the header declares %x) and whose second
 * branches on it. The lift gives rustc's rotated loops one again (lib/import_tile_loop.c). */
static int heads(const char *text, const char *kernel) {
    char at[96];
    snprintf(at, sizeof at, "tile_kernel @%s(", kernel);
    const char *k = strstr(text, at), *end = k ? strstr(k + 1, "tile_kernel @") : NULL;
    int n = 0;
    for (const char *l = k; l && *l && (!end || l < end); l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char var[32], cond[32], br[32];
        const char *nl = strchr(l, '\n'), *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
        if (*l != '^' || !strchr(l, '(') || !nl || !nl2 || sscanf(nl + 1, "  %31s = icmp %31[^,]", cond, var) != 2 ||
            sscanf(nl2 + 1, "  cond_br %31[^,]", br) != 1)
            continue;
        char decl[40];
        snprintf(decl, sizeof decl, "%s:", var);
        const char *hit = strstr(l, decl);
        n += hit && hit < nl && !strcmp(br, cond);
    }
    return n;
}

/* One attention launch: q, o [planes, group * s_q, d], k, v [planes, s_kv, d], lse [planes, group * s_q]. */
typedef struct attn_shape {
    int planes, group, s_q, s_kv, d, causal;
} attn_shape;

/* The worst error of O (returned) and of LSE (*lse_worst) as fractions of the bounds of
 * examples/python/tile_attention.py's tolerance(), against attention in double of the same bf16
 * inputs: P rounded to bf16 before the P.V dot and O to bf16 (2^-8 of P.|V| and of |O|), a
 * score's f32 dot off by (2d + 4) 2^-24 scale |q|.|k|, the row sums by s_kv 2^-24. */
static double attention_worst(const attn_shape *sh, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                              const uint16_t *o, const float *lse, double scale, double *lse_worst) {
    int d = sh->d, rows = sh->planes * sh->group * sh->s_q;
    double *sc = malloc(sizeof *sc * (size_t)sh->s_kv), *acc = malloc(sizeof *acc * 2 * (size_t)d), worst = 0;
    need(sc && acc, "out of memory", NULL);
    *lse_worst = 0;
    for (int r = 0; r < rows; r++) {
        int s = r % sh->s_q, plane = r / (sh->group * sh->s_q);
        int n = sh->causal ? (s + 1 < sh->s_kv ? s + 1 : sh->s_kv) : sh->s_kv;
        double mx = -INFINITY, qk = 0, sum = 0;
        for (int j = 0; j < n; j++) {
            double dp = 0, mag = 0;
            for (int x = 0; x < d; x++) {
                double t = (double)from_bf16(q[r * d + x]) * from_bf16(k[(plane * sh->s_kv + j) * d + x]);
                dp += t, mag += fabs(t);
            }
            sc[j] = dp * scale, mx = fmax(mx, sc[j]), qk = fmax(qk, mag);
        }
        memset(acc, 0, sizeof *acc * 2 * (size_t)d);
        for (int j = 0; j < n; j++)
            sum += exp(sc[j] - mx);
        for (int j = 0; j < n; j++)
            for (int x = 0; x < d; x++) {
                double p = exp(sc[j] - mx) / sum, vv = from_bf16(v[(plane * sh->s_kv + j) * d + x]);
                acc[x] += p * vv, acc[d + x] += p * fabs(vv);
            }
        double score_err = (2.0 * d + 4) * 0x1p-24 * scale * qk + 8 * 0x1p-24;
        double f32_rel = 4 * score_err + 8.0 * sh->s_kv * 0x1p-24;
        for (int x = 0; x < d; x++) {
            double tol = 0x1p-8 * acc[d + x] + 0x1p-8 * fabs(acc[x]) + f32_rel * acc[d + x];
            double e = fabs(from_bf16(o[r * d + x]) - acc[x]) / tol;
            worst = isnan(e) || e > worst ? (isnan(e) ? INFINITY : e) : worst;
        }
        double want = mx + log(sum), tol = score_err + 4.0 * sh->s_kv * 0x1p-24 + 4 * 0x1p-24 * fabs(want);
        double e = fabs(lse[r] - want) / tol;
        *lse_worst = isnan(e) || e > *lse_worst ? (isnan(e) ? INFINITY : e) : *lse_worst;
    }
    free(sc), free(acc);
    return worst;
}

static oxide_tensor view3(void *data, oxide_scalar elem, int64_t a, int64_t b, int64_t c, int mut) {
    oxide_tensor t = {sizeof t, (uint64_t)(uintptr_t)data, 0, elem, 3, {a, b, c}, {b * c, c, 1}, (uint32_t)mut, 0};
    return t;
}

/* Each instance attention_<hash> of examples/rust/tile_attention's generic kernel, on a shape its
 * tiles suit: its BM and D read from the tile type of its Q load, causal where it compares key
 * <= position (`pred=sle`, which nothing else in the kernel does). 16-row instances are decode
 * (S_q = 1, the group's heads in the rows). Returns how many instances it ran. */
static int check_attention(oxide_module *m, const char *text) {
    int seen = 0;
    for (const char *at = strstr(text, "tile_kernel @attention_"); at; at = strstr(at + 1, "tile_kernel @attention_")) {
        char name[64];
        int bm = 0, d = 0;
        const char *load = strstr(at, "tile.load %q"), *next = strstr(at + 1, "tile_kernel @");
        const char *ty = load ? strstr(load, "tile<1x") : NULL, *sle = strstr(at, "{pred=sle}");
        if (sscanf(at, "tile_kernel @%63[a-z0-9_]", name) != 1 || !ty || sscanf(ty, "tile<1x%dx%d", &bm, &d) != 2)
            continue;
        int causal = sle && (!next || sle < next);
        CHECK(heads(text, name) == 1, "%s: the key loop has a head (the shape the pipeliner takes)", name);
        attn_shape sh = bm == 16 ? (attn_shape){2, 4, 1, 100, d, 0}
                        : causal ? (attn_shape){2, 2, 77, 77, d, 1}
                                 : (attn_shape){1, 2, 40, 90, d, 0};
        int rows = sh.group * sh.s_q;
        size_t nq = (size_t)sh.planes * rows * d, nk = (size_t)sh.planes * sh.s_kv * d;
        uint16_t *q = malloc(nq * 2), *o = malloc(nq * 2), *k = malloc(nk * 2), *v = malloc(nk * 2);
        float *lse = malloc(sizeof *lse * (size_t)sh.planes * rows);
        need(q && o && k && v && lse, "out of memory", NULL);
        for (size_t i = 0; i < nq; i++)
            q[i] = to_bf16(rnd(-2, 2)), o[i] = 0x7fc1;
        for (size_t i = 0; i < nk; i++)
            k[i] = to_bf16(rnd(-2, 2)), v[i] = to_bf16(rnd(-2, 2));
        for (int i = 0; i < sh.planes * rows; i++)
            lse[i] = NAN;
        float scale = 1.0f / sqrtf((float)d);
        oxide_tensor tq = view3(q, OXIDE_SCALAR_BF16, sh.planes, rows, d, 0);
        oxide_tensor tk = view3(k, OXIDE_SCALAR_BF16, sh.planes, sh.s_kv, d, 0);
        oxide_tensor tv = view3(v, OXIDE_SCALAR_BF16, sh.planes, sh.s_kv, d, 0);
        oxide_tensor to = view3(o, OXIDE_SCALAR_BF16, sh.planes, rows, d, 1);
        oxide_tensor tl = view(lse, OXIDE_SCALAR_F32, sh.planes, rows, 1);
        oxide_arg args[7] = {oxide_arg_tensor(&tq),  oxide_arg_tensor(&tk), oxide_arg_tensor(&tv),
                             oxide_arg_tensor(&to),  oxide_arg_tensor(&tl), oxide_arg_f32(scale),
                             oxide_arg_i32(sh.group)};
        uint32_t grid[3] = {(uint32_t)((rows + bm - 1) / bm), (uint32_t)sh.planes, 1};
        OK(oxide_tile_interpret(m, name, grid, args, 7, NULL));
        double lw, ow = attention_worst(&sh, q, k, v, o, lse, scale, &lw);
        CHECK(ow <= 1.0 && lw <= 1.0, "%s: worst error O %.3f, LSE %.3f of the tolerance", name, ow, lw);
        printf("%s (BM %d, D %d%s) group %d, S_q %d, S_kv %d in the interpreter: worst error O %.3f, LSE %.3f of "
               "the tolerance\n",
               name, bm, d, causal ? ", causal" : "", sh.group, sh.s_q, sh.s_kv, ow, lw);
        free(q), free(o), free(k), free(v), free(lse);
        seen++;
    }
    return seen;
}

/* tile_ops' `loops` (tests/rust/crates/tile_ops): a while loop (ceil(n/2) steps), a loop that
 * runs once before its test (at least one step) and the same behind `if n > -5`. */
static void check_loops(oxide_module *m) {
    static const int ns[] = {3, 0, -2, -7};
    for (int t = 0; t < 4; t++) {
        int n = ns[t], steps = n > 0 ? (n + 1) / 2 : 0, once = steps > 1 ? steps : 1;
        float y[96];
        for (int i = 0; i < 96; i++)
            y[i] = NAN;
        oxide_tensor ty = view(y, OXIDE_SCALAR_F32, 1, 96, 1);
        ty.rank = 1, ty.shape[0] = 96, ty.strides[0] = 1;
        oxide_arg args[2] = {oxide_arg_tensor(&ty), oxide_arg_i32(n)};
        uint32_t grid[3] = {1, 1, 1};
        OK(oxide_tile_interpret(m, "loops", grid, args, 2, NULL));
        int bad = 0;
        for (int i = 0; i < 32; i++)
            bad += y[i] != (float)steps || y[32 + i] != (float)once || y[64 + i] != (float)(n > -5 ? once : 0);
        CHECK(bad == 0, "loops(n = %d): %g %g %g, not %d %d %d", n, y[0], y[32], y[64], steps, once, n > -5 ? once : 0);
    }
    printf("loops in the interpreter: while, loop-then-test and a guarded loop-then-test, n = 3, 0, -2, -7\n");
}

/* Whether a block header (a line "^N(...):") has a parameter of type ty: a loop-carried tile. */
static int block_param(const char *text, const char *ty) {
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n');
        const char *hit = strstr(l, ty);
        if (*l == '^' && hit && (!end || hit < end))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: tile_lift KERNEL OUT.oxir UNIT.bc... | tile_lift --refused OUT UNIT.bc...\n");
        return 2;
    }
    oxide_context *ctx;
    oxide_module *mod, *re;
    MUST(oxide_context_create(&ctx));
    FAILS_WITH(oxide_module_import_tile_kernels(NULL), OXIDE_ERROR_INVALID_ARGUMENT, "mod is NULL");
    MUST(oxide_module_create(ctx, "lifted", &mod));
    for (int i = 3; i < argc; i++) {
        size_t n;
        char *bc = check_read_file(argv[i], &n);
        need(bc && n, "cannot read ", argv[i]);
        OK(oxide_module_import_bitcode(mod, bc, n, argv[i]));
        free(bc);
    }
    if (!strcmp(argv[1], "--refused")) {
        /* bitcode the lift refuses: the same error every time, and the module left as it was */
        oxide_status st = oxide_module_import_tile_kernels(mod);
        char first[1024];
        snprintf(first, sizeof first, "%s", oxide_last_error());
        CHECK(st == OXIDE_ERROR_UNSUPPORTED || st == OXIDE_ERROR_TYPE_MISMATCH, "%s", oxide_status_name(st));
        CHECK(strstr(first, "tile kernel ") == first, "%s", first);
        const char *text;
        MUST(oxide_module_print(mod, &text));
        CHECK(strstr(text, "tile_kernel") == NULL, "a half-lifted kernel stayed: %s", text);
        CHECK(oxide_module_import_tile_kernels(mod) == st && !strcmp(oxide_last_error(), first));
        const char *ptx;
        CHECK(oxide_module_compile(mod, NULL, &ptx, NULL) == st && !strcmp(oxide_last_error(), first));
        printf("refused: %s\n", first);
        oxide_module_destroy(mod);
        oxide_context_destroy(ctx);
        return check_report("tile_lift");
    }
    OK(oxide_module_import_tile_kernels(mod));
    OK(oxide_module_import_tile_kernels(mod)); /* once per module: the second call adds nothing */
    oxide_function *k = NULL;
    const char *text;
    MUST(oxide_module_print(mod, &text));
    /* generic kernels are instances named KERNEL_<hash>: row_sums and attention stand for all of their own */
    int generic = !strcmp(argv[1], "row_sums") || !strcmp(argv[1], "attention");
    need(oxide_module_get_function(mod, argv[1], &k) == OXIDE_OK || generic, "no tile kernel lifted named ", argv[1]);
    FILE *out = fopen(argv[2], "w");
    need(out != NULL, "cannot write ", argv[2]);
    fputs(text, out);
    fclose(out);
    CHECK(strstr(text, "tile_kernel @") != NULL && strstr(text, "tile.store") != NULL);
    /* the printed text is the kernel: it parses and runs on its own */
    MUST(oxide_module_parse(ctx, text, strlen(text), &re));
    if (!strcmp(argv[1], "matmul_bf16")) {
        CHECK(strstr(text, "tile.dot") && block_param(text, "tile<64x64 x f32>"), "the K loop carries the accumulator");
        CHECK(heads(text, "matmul_bf16") == 1, "the K loop has a head (the shape the pipeliner takes)");
        check_matmul(re);
    } else if (!strcmp(argv[1], "softmax_f32")) {
        CHECK(strstr(text, "tile.reduce") && strstr(text, "pad=-inf"));
        check_softmax(re);
    } else if (!strcmp(argv[1], "row_sums")) {
        CHECK(check_row_sums(re, text) == 2, "examples/rust/tile_mixed launches two instances");
    } else if (!strcmp(argv[1], "attention")) {
        /* the online softmax's running max, sum and accumulator are carried by the key loop */
        CHECK(strstr(text, "exp2") && block_param(text, "tile<64 x f32>") && block_param(text, "tile<64x64 x f32>"));
        CHECK(check_attention(re, text) == 6, "examples/rust/tile_attention launches six instances");
    } else if (!strcmp(argv[1], "loops")) {
        /* the while loop gets its head back; the two that test at the bottom keep their shape */
        CHECK(heads(text, "loops") == 1, "loops: %d loops with a head, not 1", heads(text, "loops"));
        check_loops(re);
    } else if (!strcmp(argv[1], "matmul_fp8")) {
        CHECK(strstr(text, "tile.permute") && strstr(text, "x f8e4m3>"));
        check_matmul_fp8(re);
    } else if (!strcmp(argv[1], "layernorm_bf16")) {
        CHECK(strstr(text, "%eps: f32") && strstr(text, "tile.arange") && strstr(text, "select"));
        check_layernorm(re);
    } else {
        need(0, "no reference for ", argv[1]);
    }
    const char *ptx;
    size_t len;
    OK(oxide_module_compile(re, NULL, &ptx, &len));
    char path[4096];
    snprintf(path, sizeof path, "%s.ptx", argv[2]);
    if ((out = fopen(path, "w"))) {
        fwrite(ptx, 1, len, out);
        fclose(out);
    }
    /* the original module compiles too (lifted once, the SIMT import skipped: no #[kernel]);
     * tile_mixed's #[kernel] needs the standard library's units in dev builds, which only cargo
     * oxide's linker wrapper offers (and its build compiles the module) */
    if (strcmp(argv[1], "row_sums"))
        OK(oxide_module_compile(mod, NULL, &ptx, &len));
    oxide_module_destroy(re);
    oxide_module_destroy(mod);
    oxide_context_destroy(ctx);
    return check_report("tile_lift");
}
