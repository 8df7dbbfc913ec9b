/* Tile kernels on the GPU: text IR compiled in-process through the tile compiler's general
 * lowering for the GPU's own target, launched on random data (ragged shapes, strided and offset
 * views) and compared with references computed here on the CPU. Each case names the lowering
 * path it exercises: blocked loads and stores with bounds, mma.sync dot with a loop-carried
 * accumulator, reductions through shuffles and shared memory, broadcasts, permutes, batches. */
#include "../gpu_test.h"

static oxide_device *dev;
static const char *examples = OXIDE_TILE_EXAMPLES_DIR; /* argv[1]: examples/tile */
static oxide_context *ctx;
static char target[16];

/* Compiles ir and loads kernel name. */
static oxide_kernel *load(const char *ir, const char *name, oxide_loaded_module **lm) {
    oxide_module *m = NULL;
    oxide_kernel *k = NULL;
    oxide_status st = oxide_module_parse(ctx, ir, strlen(ir), &m);
    if (!st)
        k = gpu_compile_load(dev, m, target, name, lm, &st);
    if (st)
        CHECK(0, "compiling @%s: %s: %s", name, oxide_status_name(st), oxide_last_error());
    oxide_module_destroy(m);
    return k;
}

typedef struct {
    oxide_buffer *buf;
    oxide_tensor t;
} view;

static view upload(const void *host, size_t bytes, oxide_scalar elem, uint32_t rank, const int64_t *dim,
                   const int64_t *stride, size_t offset_bytes) {
    view v = {0};
    MUST(oxide_buffer_alloc(dev, bytes, &v.buf));
    MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(v.buf), host, bytes));
    v.t = (oxide_tensor){.struct_size = sizeof v.t,
                         .data = oxide_buffer_ptr(v.buf),
                         .byte_offset = offset_bytes,
                         .elem = elem,
                         .rank = rank,
                         .is_mutable = 1};
    for (uint32_t i = 0; i < rank; i++)
        v.t.shape[i] = dim[i], v.t.strides[i] = stride[i];
    return v;
}

static uint64_t addr(const view *v) { return v->t.data + v->t.byte_offset; }

/* A checked launch on the grid: the block is the one the tile compiler chose (the manifest's). */
static void run(oxide_kernel *k, const uint32_t grid[3], view *const *views, size_t nviews, const oxide_arg *extra,
                size_t nextra) {
    oxide_arg args[8];
    size_t n = 0;
    for (size_t i = 0; i < nviews; i++)
        args[n++] = oxide_arg_tensor(&views[i]->t);
    for (size_t i = 0; i < nextra; i++)
        args[n++] = extra[i];
    OK(oxide_kernel_launch(k, NULL, grid, NULL, 0, args, n));
    OK(oxide_device_synchronize(dev));
}

/* z = x + y on a ragged 100 x 70 f32 grid; x is an offset view with row stride 80. */
static void test_add(void) {
    static const char ir[] = "module @t\n"
                             "tile_kernel @add(%x: tensor<2 x f32>, %y: tensor<2 x f32>, %z: tensor<mut 2 x f32>) {\n"
                             "^0:\n"
                             "  %pm = tile.program_id {imm=0} : i32\n"
                             "  %pn = tile.program_id {imm=1} : i32\n"
                             "  %c64 = const {value=64} : i32\n"
                             "  %om = mul %pm, %c64 : i32\n"
                             "  %on = mul %pn, %c64 : i32\n"
                             "  %a = tile.load %x, %om, %on {pad=0} : tile<64x64 x f32>\n"
                             "  %b = tile.load %y, %om, %on {pad=0} : tile<64x64 x f32>\n"
                             "  %s = add %a, %b : tile<64x64 x f32>\n"
                             "  tile.store %z, %om, %on, %s\n"
                             "  ret\n"
                             "}\n";
    enum { M = 100, N = 70, LD = 80, OFF = 3 };
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(ir, "add", &lm);
    if (!k)
        return;
    static float x[OFF + M * LD], y[M * N], z[M * N + 64], want[M * N];
    for (size_t i = 0; i < sizeof x / 4; i++)
        x[i] = rng_f32();
    for (size_t i = 0; i < M * N; i++)
        y[i] = rng_f32(), z[i] = 12345.0f;
    for (size_t i = M * N; i < M * N + 64; i++)
        z[i] = 777.0f; /* past the end: must survive */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            want[i * N + j] = x[OFF + i * LD + j] + y[i * N + j];
    int64_t dx[2] = {M, N}, sx[2] = {LD, 1}, sy[2] = {N, 1};
    view vx = upload(x, sizeof x, OXIDE_SCALAR_F32, 2, dx, sx, OFF * 4),
         vy = upload(y, sizeof y, OXIDE_SCALAR_F32, 2, dx, sy, 0),
         vz = upload(z, sizeof z, OXIDE_SCALAR_F32, 2, dx, sy, 0);
    view *vs[3] = {&vx, &vy, &vz};
    uint32_t grid[3] = {(M + 63) / 64, (N + 63) / 64, 1};
    run(k, grid, vs, 3, NULL, 0);
    OK(oxide_memcpy_dtoh(dev, z, addr(&vz), sizeof z));
    int bad = 0;
    for (int i = 0; i < M * N; i++)
        bad += z[i] != want[i];
    for (int i = M * N; i < M * N + 64; i++)
        bad += z[i] != 777.0f;
    CHECK(bad == 0, "add: %d of %d elements wrong (z[0] = %g, want %g)", bad, M * N + 64, z[0], want[0]);
    oxide_buffer_free(vx.buf), oxide_buffer_free(vy.buf), oxide_buffer_free(vz.buf);
    oxide_loaded_module_destroy(lm);
}

/* C = alpha * A B in bf16 (f32 accumulation), M, N, K not multiples of the tiles; warps varies
 * the mma warp grid. */
static void test_matmul(uint32_t warps, uint32_t BM, uint32_t BN, uint32_t BK, int M, int N, int K) {
    char ir[4096];
    snprintf(ir, sizeof ir,
             "module @t\n"
             "tile_kernel @matmul(%%a: tensor<2 x bf16>, %%b: tensor<2 x bf16>, %%c: tensor<mut 2 x bf16>, %%alpha: "
             "f32) hints(warps=%u) {\n"
             "^0:\n"
             "  %%pm = tile.program_id {imm=0} : i32\n"
             "  %%pn = tile.program_id {imm=1} : i32\n"
             "  %%cm = const {value=%u} : i32\n"
             "  %%cn = const {value=%u} : i32\n"
             "  %%ck = const {value=%u} : i32\n"
             "  %%zero = const {value=0} : i32\n"
             "  %%om = mul %%pm, %%cm : i32\n"
             "  %%on = mul %%pn, %%cn : i32\n"
             "  %%k64 = tile.dim %%a {imm=1} : i64\n"
             "  %%k = trunc %%k64 : i32\n"
             "  %%acc0 = tile.full {value=0} : tile<%ux%u x f32>\n"
             "  br ^1(%%zero, %%acc0)\n"
             "^1(%%kk: i32, %%acc: tile<%ux%u x f32>):\n"
             "  %%more = icmp %%kk, %%k {pred=slt} : i1\n"
             "  cond_br %%more, ^2, ^3\n"
             "^2:\n"
             "  %%ta = tile.load %%a, %%om, %%kk {pad=0} : tile<%ux%u x bf16>\n"
             "  %%tb = tile.load %%b, %%kk, %%on {pad=0} : tile<%ux%u x bf16>\n"
             "  %%acc1 = tile.dot %%ta, %%tb, %%acc : tile<%ux%u x f32>\n"
             "  %%next = add %%kk, %%ck : i32\n"
             "  br ^1(%%next, %%acc1)\n"
             "^3:\n"
             "  %%sa = tile.splat %%alpha : tile<%ux%u x f32>\n"
             "  %%scaled = mul %%acc, %%sa : tile<%ux%u x f32>\n"
             "  %%out = tile.cast %%scaled : tile<%ux%u x bf16>\n"
             "  tile.store %%c, %%om, %%on, %%out\n"
             "  ret\n"
             "}\n",
             warps, BM, BN, BK, BM, BN, BM, BN, BM, BK, BK, BN, BM, BN, BM, BN, BM, BN, BM, BN);
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(ir, "matmul", &lm);
    if (!k)
        return;
    uint16_t *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N), *c = malloc(sizeof *c * M * N);
    float *want = calloc((size_t)M * N, sizeof *want), alpha = 0.75f;
    for (int i = 0; i < M * K; i++)
        a[i] = bf16_from_f32(rng_f32());
    for (int i = 0; i < K * N; i++)
        b[i] = bf16_from_f32(rng_f32());
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int q = 0; q < K; q++)
                s += (double)f32_from_bf16(a[i * K + q]) * f32_from_bf16(b[q * N + j]);
            want[i * N + j] = (float)(s * alpha);
        }
    memset(c, 0x55, sizeof *c * M * N);
    int64_t da[2] = {M, K}, sa[2] = {K, 1}, db[2] = {K, N}, sb[2] = {N, 1}, dc[2] = {M, N}, sc[2] = {N, 1};
    view va = upload(a, sizeof *a * M * K, OXIDE_SCALAR_BF16, 2, da, sa, 0),
         vb = upload(b, sizeof *b * K * N, OXIDE_SCALAR_BF16, 2, db, sb, 0),
         vc = upload(c, sizeof *c * M * N, OXIDE_SCALAR_BF16, 2, dc, sc, 0);
    view *vs[3] = {&va, &vb, &vc};
    uint32_t grid[3] = {(M + BM - 1) / BM, (N + BN - 1) / BN, 1};
    oxide_arg al = oxide_arg_f32(alpha);
    run(k, grid, vs, 3, &al, 1);
    OK(oxide_memcpy_dtoh(dev, c, addr(&vc), sizeof *c * M * N));
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < M * N; i++) {
        double err = fabs(f32_from_bf16(c[i]) - want[i]) / (fabs(want[i]) + 1.0);
        worst = err > worst ? err : worst;
        bad += err > 1.6e-2;
    }
    CHECK(bad == 0, "matmul warps=%u %ux%ux%u on %dx%dx%d: %d of %d wrong (worst relative error %.3g)", warps, BM, BN,
          BK, M, N, K, bad, M * N, worst);
    free(a), free(b), free(c), free(want);
    oxide_buffer_free(va.buf), oxide_buffer_free(vb.buf), oxide_buffer_free(vc.buf);
    oxide_loaded_module_destroy(lm);
}

/* Row softmax of a 40 x 1000 f32 matrix, 16 rows per program (the reductions cross warps). */
static void test_softmax(void) {
    static const char ir[] = "module @t\n"
                             "tile_kernel @softmax(%x: tensor<2 x f32>, %y: tensor<mut 2 x f32>) hints(warps=8) {\n"
                             "^0:\n"
                             "  %row = tile.program_id {imm=0} : i32\n"
                             "  %c16 = const {value=16} : i32\n"
                             "  %r0 = mul %row, %c16 : i32\n"
                             "  %zero = const {value=0} : i32\n"
                             "  %t = tile.load %x, %r0, %zero {pad=-inf} : tile<16x1024 x f32>\n"
                             "  %m = tile.reduce %t {imm=1, kind=max} : tile<16 x f32>\n"
                             "  %m2 = tile.expand_dims %m {imm=1} : tile<16x1 x f32>\n"
                             "  %mb = tile.broadcast %m2 : tile<16x1024 x f32>\n"
                             "  %d = sub %t, %mb : tile<16x1024 x f32>\n"
                             "  %e = exp %d : tile<16x1024 x f32>\n"
                             "  %s = tile.reduce %e {imm=1, kind=sum} : tile<16 x f32>\n"
                             "  %s2 = tile.expand_dims %s {imm=1} : tile<16x1 x f32>\n"
                             "  %sb = tile.broadcast %s2 : tile<16x1024 x f32>\n"
                             "  %p = fdiv %e, %sb : tile<16x1024 x f32>\n"
                             "  tile.store %y, %r0, %zero, %p\n"
                             "  ret\n"
                             "}\n";
    enum { R = 40, C = 1000 };
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(ir, "softmax", &lm);
    if (!k)
        return;
    static float x[R * C], y[R * C], want[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = 3 * rng_f32();
    for (int i = 0; i < R; i++) {
        double mx = -INFINITY, s = 0;
        for (int j = 0; j < C; j++)
            mx = x[i * C + j] > mx ? x[i * C + j] : mx;
        for (int j = 0; j < C; j++)
            s += exp(x[i * C + j] - mx);
        for (int j = 0; j < C; j++)
            want[i * C + j] = (float)(exp(x[i * C + j] - mx) / s);
    }
    int64_t d[2] = {R, C}, s[2] = {C, 1};
    view vx = upload(x, sizeof x, OXIDE_SCALAR_F32, 2, d, s, 0), vy = upload(y, sizeof y, OXIDE_SCALAR_F32, 2, d, s, 0);
    view *vs[2] = {&vx, &vy};
    uint32_t grid[3] = {(R + 15) / 16, 1, 1};
    run(k, grid, vs, 2, NULL, 0);
    OK(oxide_memcpy_dtoh(dev, y, addr(&vy), sizeof y));
    int bad = 0;
    for (int i = 0; i < R * C; i++)
        bad += fabs(y[i] - want[i]) > 1e-5 * fabs(want[i]) + 1e-9;
    CHECK(bad == 0, "softmax: %d of %d wrong (y[0] = %g, want %g)", bad, R * C, y[0], want[0]);
    oxide_buffer_free(vx.buf), oxide_buffer_free(vy.buf);
    oxide_loaded_module_destroy(lm);
}

/* Column sums of a 50 x 70 i32 matrix through a permuted tile: y[j] = sum_i x[i, j]. */
static void test_colsum(void) {
    static const char ir[] = "module @t\n"
                             "tile_kernel @colsum(%x: tensor<2 x i32>, %y: tensor<mut 1 x i32>) {\n"
                             "^0:\n"
                             "  %pn = tile.program_id {imm=0} : i32\n"
                             "  %c32 = const {value=32} : i32\n"
                             "  %on = mul %pn, %c32 : i32\n"
                             "  %zero = const {value=0} : i32\n"
                             "  %t = tile.load %x, %zero, %on {pad=0} : tile<64x32 x i32>\n"
                             "  %tt = tile.permute %t {perm=[1,0]} : tile<32x64 x i32>\n"
                             "  %s = tile.reduce %tt {imm=1, kind=sum} : tile<32 x i32>\n"
                             "  tile.store %y, %on, %s\n"
                             "  ret\n"
                             "}\n";
    enum { R = 50, C = 70 };
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(ir, "colsum", &lm);
    if (!k)
        return;
    static int32_t x[R * C], y[C], want[C];
    for (int i = 0; i < R * C; i++)
        x[i] = (int32_t)(rng_u32() % 2001) - 1000;
    for (int j = 0; j < C; j++) {
        want[j] = 0;
        for (int i = 0; i < R; i++)
            want[j] += x[i * C + j];
    }
    int64_t d[2] = {R, C}, s[2] = {C, 1}, d1[1] = {C}, s1[1] = {1};
    view vx = upload(x, sizeof x, OXIDE_SCALAR_I32, 2, d, s, 0),
         vy = upload(y, sizeof y, OXIDE_SCALAR_I32, 1, d1, s1, 0);
    view *vs[2] = {&vx, &vy};
    uint32_t grid[3] = {(C + 31) / 32, 1, 1};
    run(k, grid, vs, 2, NULL, 0);
    OK(oxide_memcpy_dtoh(dev, y, addr(&vy), sizeof y));
    int bad = 0;
    for (int j = 0; j < C; j++)
        bad += y[j] != want[j];
    CHECK(bad == 0, "colsum: %d of %d wrong (y[0] = %d, want %d)", bad, C, y[0], want[0]);
    oxide_buffer_free(vx.buf), oxide_buffer_free(vy.buf);
    oxide_loaded_module_destroy(lm);
}

/* examples/tile/attention_fwd.oxir against attention computed here in double, for S not a
 * multiple of the 64-row blocks, causal and not. */
static void test_attention(int causal) {
    enum { BH = 3, S = 200, D = 64 };
    size_t len;
    char path[4096];
    snprintf(path, sizeof path, "%s/attention_fwd.oxir", examples);
    char *ir = check_read_file(path, &len);
    if (!ir) {
        CHECK(0, "cannot read %s (give the examples' folder as the argument)", path);
        return;
    }
    oxide_loaded_module *lm = NULL;
    oxide_kernel *k = load(ir, "attention_fwd", &lm);
    free(ir);
    if (!k)
        return;
    size_t n = (size_t)BH * S * D;
    uint16_t *q = malloc(2 * n), *kk = malloc(2 * n), *v = malloc(2 * n), *o = malloc(2 * n);
    for (size_t i = 0; i < n; i++)
        q[i] = bf16_from_f32(rng_f32()), kk[i] = bf16_from_f32(rng_f32()), v[i] = bf16_from_f32(rng_f32()),
        o[i] = 0x7fc0;
    int64_t d[3] = {BH, S, D}, st[3] = {(int64_t)S * D, D, 1};
    view vq = upload(q, 2 * n, OXIDE_SCALAR_BF16, 3, d, st, 0), vk = upload(kk, 2 * n, OXIDE_SCALAR_BF16, 3, d, st, 0),
         vv = upload(v, 2 * n, OXIDE_SCALAR_BF16, 3, d, st, 0), vo = upload(o, 2 * n, OXIDE_SCALAR_BF16, 3, d, st, 0);
    view *vs[4] = {&vq, &vk, &vv, &vo};
    oxide_arg extra[2] = {oxide_arg_f32((float)(1.4426950408889634 / sqrt((double)D))), oxide_arg_i32(causal)};
    uint32_t grid[3] = {(S + 63) / 64, BH, 1};
    run(k, grid, vs, 4, extra, 2);
    OK(oxide_memcpy_dtoh(dev, o, addr(&vo), 2 * n));
    int bad = 0;
    double worst = 0, *p = malloc(sizeof *p * S);
    for (int h = 0; h < BH; h++)
        for (int i = 0; i < S; i++) {
            const uint16_t *qi = q + ((size_t)h * S + i) * D;
            double mx = -INFINITY, sum = 0;
            int last = causal ? i : S - 1;
            for (int j = 0; j <= last; j++) {
                const uint16_t *kj = kk + ((size_t)h * S + j) * D;
                double dot = 0;
                for (int c = 0; c < D; c++)
                    dot += (double)f32_from_bf16(qi[c]) * f32_from_bf16(kj[c]);
                p[j] = dot / sqrt((double)D);
                mx = p[j] > mx ? p[j] : mx;
            }
            for (int j = 0; j <= last; j++)
                sum += p[j] = exp(p[j] - mx);
            for (int c = 0; c < D; c++) {
                double acc = 0;
                for (int j = 0; j <= last; j++)
                    acc += p[j] * f32_from_bf16(v[((size_t)h * S + j) * D + c]);
                double want = acc / sum, got = f32_from_bf16(o[((size_t)h * S + i) * D + c]);
                /* p is rounded to bf16 before the second dot and the output to bf16: two bf16
                 * ulps of the output, and 0.02 for the sum of the p roundings (|v| < 2) */
                double err = fabs(got - want) / (2.0 / 128 * fabs(want) + 0.02);
                worst = err > worst ? err : worst;
                bad += !(err <= 1);
            }
        }
    CHECK(bad == 0, "attention (causal %d): %d of %zu wrong (worst error %.3g of the tolerance)", causal, bad, n,
          worst);
    free(p), free(q), free(kk), free(v), free(o);
    oxide_buffer_free(vq.buf), oxide_buffer_free(vk.buf), oxide_buffer_free(vv.buf), oxide_buffer_free(vo.buf);
    oxide_loaded_module_destroy(lm);
}

int main(int argc, char **argv) {
    if (argc > 1)
        examples = argv[1];
    gpu_require();
    rng_seed();
    dev = gpu_device_target(target, sizeof target);
    MUST(oxide_context_create(&ctx));
    test_add();
    test_matmul(4, 64, 64, 32, 100, 130, 80);
    test_matmul(8, 128, 128, 32, 300, 260, 200);
    test_matmul(2, 32, 64, 16, 33, 65, 17);
    test_matmul(1, 16, 16, 16, 16, 16, 16);
    test_softmax();
    test_colsum();
    test_attention(0);
    test_attention(1);
    oxide_context_destroy(ctx);
    char fig[64];
    snprintf(fig, sizeof fig, "tile kernels on %s", target);
    return finish("test_gpu_tile", fig);
}
