/* The runtime on a GPU: devices, memory, copies, streams, events, module load, kernel lookup,
 * checked and raw launches of every parameter kind, cluster and cooperative launches, dynamic
 * shared memory opt-in, resource queries. Kernels: tests/gpu/data/kernels.ptx (nvcc output with
 * an oxide manifest line). Results are checked against the CPU on random, non-zero inputs. */
#include "gpu_test.h"

static oxide_device *dev;
static oxide_loaded_module *lm;
static int sms, cc_major, cc_minor;

static oxide_kernel *kernel(const char *name) {
    oxide_kernel *k = NULL;
    MUST(oxide_loaded_module_get_kernel(lm, name, &k));
    return k;
}

static const uint32_t ONE[3] = {1, 1, 1};

static void test_device(void) {
    const char *name;
    size_t total = 0, free_b = 0, total2 = 0;
    int idx = -1, attr = 0, cu_dev = -1, version = 0;
    void *ctx = NULL;
    OK(oxide_device_name(dev, &name));
    OK(oxide_device_index(dev, &idx));
    OK(oxide_device_compute_capability(dev, &cc_major, &cc_minor));
    OK(oxide_device_sm_count(dev, &sms));
    OK(oxide_device_total_memory(dev, &total));
    OK(oxide_device_memory_info(dev, &free_b, &total2));
    OK(oxide_device_attribute(dev, 16 /* MULTIPROCESSOR_COUNT */, &attr));
    OK(oxide_device_native(dev, &cu_dev, &ctx));
    OK(oxide_driver_version(&version));
    CHECK(idx == 0 && sms > 0 && attr == sms && total > 0 && total2 == total && free_b > 0 && free_b <= total);
    CHECK(ctx != NULL && cu_dev >= 0 && version >= 12000);
    printf("device 0: %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f free), driver CUDA %d.%d\n", name, cc_major,
           cc_minor, sms, total / 1073741824.0, free_b / 1073741824.0, version / 1000, version % 1000 / 10);
    oxide_device *again = NULL;
    OK(oxide_device_get(0, &again));
    CHECK(again == dev);
    FAILS_WITH(oxide_device_get(1000, &again), OXIDE_ERROR_NO_DEVICE, "no device 1000");
    FAILS_WITH(oxide_device_attribute(dev, 100000, &attr), OXIDE_ERROR_INVALID_ARGUMENT, "attribute 100000");
    OK(oxide_device_check(dev));
}

static void test_lookup(void) {
    const oxide_manifest *m = oxide_loaded_module_manifest(lm);
    CHECK(m && oxide_manifest_kernel_count(m) == 11);
    oxide_kernel *a = kernel("affine"), *b = kernel("affine_bytes"), *c = kernel("affine");
    CHECK(a == b && a == c);
    CHECK(!strcmp(oxide_kernel_name(a), "affine") && !strcmp(oxide_kernel_entry(a), "affine_bytes"));
    void *fn = NULL;
    OK(oxide_kernel_native(a, &fn));
    CHECK(fn != NULL);
    oxide_kernel *k;
    FAILS_WITH(oxide_loaded_module_get_kernel(lm, "no_such_kernel", &k), OXIDE_ERROR_NOT_FOUND, "no_such_kernel",
               "vecadd, scalars, affine");
}

static void test_vecadd(void) {
    vecadd_io v;
    vecadd_io_make(&v, dev, (1u << 22) + 3); /* not a multiple of the block */
    const size_t n = v.n;
    float *a = v.a, *b = v.b, *out = v.out;
    oxide_buffer *da = v.da, *db = v.db, *dout = v.dout;
    const oxide_arg *args = v.args;
    const uint32_t *grid = v.grid, *block = v.block;
    CHECK(oxide_buffer_size(da) == n * 4 && oxide_buffer_ptr(da) % 256 == 0 && oxide_buffer_get_device(da) == dev);
    oxide_kernel *k = kernel("vecadd");
    OK(oxide_kernel_launch(k, NULL, grid, block, 0, args, 3));
    size_t bad = vecadd_io_wrong(&v, dev);
    CHECK(bad == 0);

    /* the same through the raw path: one pointer per PTX parameter */
    OK(oxide_memset(dev, oxide_buffer_ptr(dout), 0, n, 4));
    uint64_t pa = oxide_buffer_ptr(da), pb = oxide_buffer_ptr(db), po = oxide_buffer_ptr(dout), len = n;
    void *params[6] = {&pa, &len, &pb, &len, &po, &len};
    oxide_launch_config cfg = {{grid[0], 1, 1}, {256, 1, 1}, 0, {0, 0, 0}, 0};
    OK(oxide_kernel_launch_raw(k, NULL, &cfg, params));
    OK(oxide_memcpy_dtoh(dev, out, po, n * 4));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += out[i] != a[i] + b[i];
    CHECK(bad == 0);

    /* device-to-device copies, sync and async */
    OK(oxide_memcpy_dtod(dev, oxide_buffer_ptr(dout), oxide_buffer_ptr(da), n * 4));
    OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(dout), n * 4));
    CHECK(!memcmp(out, a, n * 4));

    /* argument checks: every message names the kernel, the argument and the mismatch */
    oxide_arg ro = oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 0);
    oxide_arg bad_args[3] = {args[0], args[1], ro};
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3), OXIDE_ERROR_LAUNCH,
               "launch vecadd: argument 3 'out' is a mutable slice of f32, got a read-only buffer of f32");
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, args, 2), OXIDE_ERROR_LAUNCH,
               "launch vecadd: expects 3 arguments (a, b, out), got 2");
    bad_args[2] = oxide_arg_from_buffer(dout, OXIDE_SCALAR_F64, 1);
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3), OXIDE_ERROR_LAUNCH,
               "argument 3 'out' is a mutable slice of f32, got a mutable buffer of f64");
    bad_args[2] = oxide_arg_f32(1.0f);
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3), OXIDE_ERROR_LAUNCH, "got a scalar f32");
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, NULL, 3), OXIDE_ERROR_LAUNCH, "expects 3 arguments");
    /* the slice contract: a mutable slice may not overlap another slice (the compiler relies on it) */
    bad_args[2] = oxide_arg_from_buffer(da, OXIDE_SCALAR_F32, 1);
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3), OXIDE_ERROR_LAUNCH,
               "argument 3 'out' is a mutable slice that overlaps argument 1 'a'");
    /* a length whose byte size wraps around must not hide the overlap */
    bad_args[2] = oxide_arg_buffer(OXIDE_SCALAR_F32, oxide_buffer_ptr(da) - 4096, UINT64_MAX, 1);
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3), OXIDE_ERROR_LAUNCH,
               "argument 3 'out' is a mutable slice that overlaps argument 1 'a'");
    bad_args[2] = args[2];
    bad_args[1] = args[0]; /* two read-only slices may overlap */
    OK(oxide_kernel_launch(k, NULL, grid, block, 0, bad_args, 3));
    OK(oxide_device_synchronize(dev));
    uint32_t huge_block[3] = {4096, 1, 1};
    FAILS_WITH(oxide_kernel_launch(k, NULL, grid, huge_block, 0, args, 3), OXIDE_ERROR_CUDA, "launch vecadd",
               "block 4096x1x1");
    OK(oxide_device_check(dev)); /* a refused launch is not a fault */
    vecadd_io_free(&v);
}

static void test_scalars_bytes_tma(void) {
    oxide_buffer *d;
    MUST(oxide_buffer_alloc(dev, 1 << 16, &d));
    double out[16];
    oxide_arg args[14] = {oxide_arg_i8(-100),          oxide_arg_i16(-30000),
                          oxide_arg_i32(-2000000000),  oxide_arg_i64(-(1ll << 50)),
                          oxide_arg_u8(250),           oxide_arg_u16(65000),
                          oxide_arg_u32(4000000000u),  oxide_arg_u64(1ull << 52),
                          oxide_arg_f32(-1.25f),       oxide_arg_f64(3.0e300),
                          oxide_arg_bool(1),           oxide_arg_f16_bits(0x3c00),
                          oxide_arg_bf16_bits(0x3f80), oxide_arg_buffer(OXIDE_SCALAR_F64, oxide_buffer_ptr(d), 16, 1)};
    OK(oxide_kernel_launch(kernel("scalars"), NULL, ONE, ONE, 0, args, 14));
    OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(d), 13 * sizeof(double)));
    const double want[13] = {
        -100, -30000, -2000000000, -(double)(1ll << 50), 250, 65000, 4000000000.0, (double)(1ull << 52), -1.25, 3.0e300,
        1,    0x3c00, 0x3f80};
    for (int i = 0; i < 13; i++)
        if (out[i] != want[i]) {
            fprintf(stderr, "scalars: parameter %d arrived as %g, sent %g\n", i + 1, out[i], want[i]);
            check_failed++;
        }
    args[3] = oxide_arg_u64(5);
    FAILS_WITH(oxide_kernel_launch(kernel("scalars"), NULL, ONE, ONE, 0, args, 14), OXIDE_ERROR_LAUNCH,
               "argument 4 'i64' is a scalar i64, got a scalar u64");

    /* bytes by value: a closure-like 16-byte struct {float a; int pad; double b} */
    const size_t n = 100003;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = rng_f32();
    struct {
        float a;
        int32_t pad;
        double b;
    } p = {1.5f, 0, 0.25};
    oxide_buffer *dx, *dy;
    MUST(oxide_buffer_alloc(dev, n * 4, &dx));
    MUST(oxide_buffer_alloc(dev, n * 4, &dy));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(dx), x, n * 4));
    oxide_arg aargs[3] = {oxide_arg_bytes(&p, sizeof p), oxide_arg_from_buffer(dx, OXIDE_SCALAR_F32, 0),
                          oxide_arg_from_buffer(dy, OXIDE_SCALAR_F32, 1)};
    uint32_t grid[3] = {(uint32_t)((n + 127) / 128), 1, 1}, block[3] = {128, 1, 1};
    OK(oxide_kernel_launch(kernel("affine"), NULL, grid, block, 0, aargs, 3));
    OK(oxide_memcpy_dtoh(dev, y, oxide_buffer_ptr(dy), n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabsf(y[i] - (1.5f * x[i] + 0.25f)) > 1e-6f * fabsf(y[i]) + 1e-7f;
    CHECK(bad == 0);
    aargs[0] = oxide_arg_bytes(&p, 12);
    FAILS_WITH(oxide_kernel_launch(kernel("affine"), NULL, grid, block, 0, aargs, 3), OXIDE_ERROR_LAUNCH,
               "argument 1 'p' is 16 bytes by value, got 12 bytes");

    /* a 128-byte TMA descriptor by value */
    uint64_t desc[16], echo[16];
    for (int i = 0; i < 16; i++)
        desc[i] = ((uint64_t)rng_u32() << 32 | rng_u32()) | 1;
    oxide_arg targs[2] = {oxide_arg_tma_desc(desc), oxide_arg_buffer(OXIDE_SCALAR_U64, oxide_buffer_ptr(d), 16, 1)};
    uint32_t b32[3] = {32, 1, 1};
    OK(oxide_kernel_launch(kernel("tma_echo"), NULL, ONE, b32, 0, targs, 2));
    OK(oxide_memcpy_dtoh(dev, echo, oxide_buffer_ptr(d), sizeof echo));
    CHECK(!memcmp(desc, echo, sizeof desc));
    targs[0] = oxide_arg_bytes(desc, 128);
    FAILS_WITH(oxide_kernel_launch(kernel("tma_echo"), NULL, ONE, b32, 0, targs, 2), OXIDE_ERROR_LAUNCH,
               "is a TMA descriptor (128 bytes), got 128 bytes");
    oxide_buffer_free(d);
    oxide_buffer_free(dx);
    oxide_buffer_free(dy);
    free(x), free(y);
}

static void test_streams_events_memory(char *figure, size_t fsize) {
    const size_t n = 1 << 20;
    float *pinned = NULL, *back = NULL;
    MUST(oxide_host_alloc(dev, n * 4, (void **)&pinned));
    MUST(oxide_host_alloc(dev, n * 4, (void **)&back));
    for (size_t i = 0; i < n; i++)
        pinned[i] = rng_f32();
    oxide_buffer *d;
    MUST(oxide_buffer_alloc(dev, n * 4, &d));
    oxide_stream *s1, *s2, *wrapped;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s1));
    MUST(oxide_stream_create(dev, 0, &s2));
    CHECK(oxide_stream_get_device(s1) == dev);
    oxide_arg inc_args[1] = {oxide_arg_from_buffer(d, OXIDE_SCALAR_F32, 1)};
    uint32_t grid[3] = {(uint32_t)(n / 256), 1, 1}, block[3] = {256, 1, 1};

    /* async copies from pinned memory around a launch on one stream */
    OK(oxide_memcpy_htod_async(s1, oxide_buffer_ptr(d), pinned, n * 4));
    OK(oxide_kernel_launch(kernel("inc"), s1, grid, block, 0, inc_args, 1));
    OK(oxide_memcpy_dtoh_async(s1, back, oxide_buffer_ptr(d), n * 4));
    OK(oxide_stream_synchronize(s1));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += back[i] != pinned[i] + 1.0f;
    CHECK(bad == 0);
    int done = 0;
    OK(oxide_stream_query(s1, &done));
    CHECK(done == 1);

    /* two streams ordered by an event: s2 reads what s1 wrote after a long spin */
    oxide_event *e, *t0, *t1, *no_timing;
    MUST(oxide_event_create(dev, OXIDE_EVENT_DISABLE_TIMING, &e));
    MUST(oxide_event_create(dev, 0, &t0));
    MUST(oxide_event_create(dev, OXIDE_EVENT_BLOCKING_SYNC, &t1));
    no_timing = e;
    oxide_arg spin_args[1] = {oxide_arg_u64(200000000ull)}; /* ~0.1 s at ~2 GHz */
    OK(oxide_memset_async(s1, oxide_buffer_ptr(d), 0x40000000u /* 2.0f */, n, 4));
    OK(oxide_event_record(t0, s1));
    OK(oxide_kernel_launch(kernel("spin"), s1, ONE, ONE, 0, spin_args, 1));
    OK(oxide_kernel_launch(kernel("inc"), s1, grid, block, 0, inc_args, 1));
    OK(oxide_event_record(e, s1));
    OK(oxide_event_record(t1, s1));
    OK(oxide_stream_wait_event(s2, e));
    OK(oxide_memcpy_dtoh_async(s2, back, oxide_buffer_ptr(d), n * 4));
    OK(oxide_stream_synchronize(s2));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += back[i] != 3.0f;
    CHECK(bad == 0);
    OK(oxide_event_synchronize(t1));
    OK(oxide_event_query(t1, &done));
    CHECK(done == 1);
    float ms = 0;
    OK(oxide_event_elapsed_ms(t0, t1, &ms));
    CHECK(ms > 1.0f);
    snprintf(figure, fsize, "spin of 2e8 cycles timed at %.1f ms", ms);
    FAILS_WITH(oxide_event_elapsed_ms(t0, no_timing, &ms), OXIDE_ERROR_STATE, "OXIDE_EVENT_DISABLE_TIMING");

    /* memset of each width */
    uint8_t bytes[64];
    OK(oxide_memset(dev, oxide_buffer_ptr(d), 0xab, 64, 1));
    OK(oxide_memcpy_dtoh(dev, bytes, oxide_buffer_ptr(d), 64));
    CHECK(bytes[0] == 0xab && bytes[63] == 0xab);
    OK(oxide_memset(dev, oxide_buffer_ptr(d), 0x1234, 32, 2));
    OK(oxide_memcpy_dtoh(dev, bytes, oxide_buffer_ptr(d), 64));
    CHECK(bytes[0] == 0x34 && bytes[1] == 0x12 && bytes[62] == 0x34);
    FAILS_WITH(oxide_memset(dev, oxide_buffer_ptr(d), 0x1234, 4, 1), OXIDE_ERROR_INVALID_ARGUMENT, "does not fit");
    FAILS_WITH(oxide_memset(dev, oxide_buffer_ptr(d) + 1, 0, 4, 4), OXIDE_ERROR_INVALID_ARGUMENT, "not aligned");

    /* a wrapped foreign CUstream works like its own and outlives the wrapper */
    void *native = NULL;
    OK(oxide_stream_native(s1, &native));
    MUST(oxide_stream_wrap(dev, native, &wrapped));
    OK(oxide_kernel_launch(kernel("inc"), wrapped, grid, block, 0, inc_args, 1));
    OK(oxide_stream_synchronize(wrapped));
    oxide_stream_destroy(wrapped);
    OK(oxide_kernel_launch(kernel("inc"), s1, grid, block, 0, inc_args, 1));
    OK(oxide_stream_synchronize(s1));

    /* the default stream, and the device-wide synchronize */
    oxide_stream *def = NULL;
    OK(oxide_stream_default(dev, &def));
    OK(oxide_kernel_launch(kernel("inc"), def, grid, block, 0, inc_args, 1));
    OK(oxide_memcpy_dtod_async(def, oxide_buffer_ptr(d), oxide_buffer_ptr(d) + n * 2, n * 2));
    OK(oxide_device_synchronize(dev));
    oxide_stream_destroy(def); /* does nothing */
    FAILS_WITH(oxide_stream_begin_capture(def), OXIDE_ERROR_STATE, "default stream cannot be captured");
    int not_pinned = 0;
    FAILS_WITH(oxide_host_free(&not_pinned), OXIDE_ERROR_INVALID_ARGUMENT, "not allocated by oxide_host_alloc");

    oxide_event_destroy(e);
    oxide_event_destroy(t0);
    oxide_event_destroy(t1);
    oxide_stream_destroy(s1);
    oxide_stream_destroy(s2);
    oxide_buffer_free(d);
    OK(oxide_host_free(pinned));
    OK(oxide_host_free(back));
}

static void test_cluster_cooperative_smem(void) {
    oxide_buffer *d, *counter;
    MUST(oxide_buffer_alloc(dev, 1 << 20, &d));
    MUST(oxide_buffer_alloc(dev, 256, &counter));
    uint32_t out[4096];
    if (cc_major >= 9) {
        /* the manifest's cluster shape (4,1,1) applies without asking */
        oxide_arg args[1] = {oxide_arg_buffer(OXIDE_SCALAR_U32, oxide_buffer_ptr(d), 64, 1)};
        uint32_t grid[3] = {64, 1, 1}, block[3] = {32, 1, 1};
        OK(oxide_kernel_launch(kernel("cluster_ranks"), NULL, grid, block, 0, args, 1));
        OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(d), 64 * 4));
        size_t bad = 0;
        for (uint32_t i = 0; i < 64; i++)
            bad += out[i] != ((i % 4) | 4u << 16);
        CHECK(bad == 0);
        /* the call's cluster shape overrides it */
        oxide_launch_config cfg = {{64, 1, 1}, {32, 1, 1}, 0, {8, 1, 1}, 0};
        OK(oxide_kernel_launch_ex(kernel("cluster_ranks"), NULL, &cfg, args, 1));
        OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(d), 64 * 4));
        bad = 0;
        for (uint32_t i = 0; i < 64; i++)
            bad += out[i] != ((i % 8) | 8u << 16);
        CHECK(bad == 0);
        /* a cluster whose block count does not fit 32 bits is refused, not launched without one */
        oxide_launch_config huge = {{64, 1, 1}, {32, 1, 1}, 0, {65536, 65536, 65536}, 0};
        FAILS_WITH(oxide_kernel_launch_ex(kernel("cluster_ranks"), NULL, &huge, args, 1), OXIDE_ERROR_LAUNCH,
                   "cluster 65536x65536x65536", "at most 16");
        oxide_launch_config zero = {{64, 1, 1}, {32, 1, 1}, 0, {2, 0, 1}, 0};
        FAILS_WITH(oxide_kernel_launch_ex(kernel("cluster_ranks"), NULL, &zero, args, 1), OXIDE_ERROR_LAUNCH,
                   "cluster 2x0x1");
    } else {
        printf("note: compute capability %d.%d has no clusters; cluster launch not tested\n", cc_major, cc_minor);
    }

    /* cooperative: every block of a full-device grid is resident at once */
    oxide_kernel *k = kernel("all_resident");
    int per_sm = 0;
    OK(oxide_kernel_occupancy(k, 128, 0, &per_sm));
    CHECK(per_sm > 0);
    uint32_t blocks = (uint32_t)(per_sm * sms);
    if (blocks > 4096)
        blocks = 4096;
    OK(oxide_memset(dev, oxide_buffer_ptr(counter), 0, 1, 4));
    oxide_arg cargs[2] = {oxide_arg_buffer(OXIDE_SCALAR_U32, oxide_buffer_ptr(counter), 1, 1),
                          oxide_arg_buffer(OXIDE_SCALAR_U32, oxide_buffer_ptr(d), blocks, 1)};
    oxide_launch_config coop = {{blocks, 1, 1}, {128, 1, 1}, 0, {0, 0, 0}, OXIDE_LAUNCH_COOPERATIVE};
    OK(oxide_kernel_launch_ex(k, NULL, &coop, cargs, 2));
    OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(d), blocks * 4));
    size_t bad = 0;
    for (uint32_t i = 0; i < blocks; i++)
        bad += out[i] != blocks;
    CHECK(bad == 0);
    coop.grid[0] = (uint32_t)(per_sm * sms) + 1;
    FAILS_WITH(oxide_kernel_launch_ex(k, NULL, &coop, cargs, 2), OXIDE_ERROR_CUDA, "COOPERATIVE_LAUNCH_TOO_LARGE",
               "launch all_resident");
    OK(oxide_device_check(dev));

    /* 64 KiB of dynamic shared memory from the manifest (opted in above 48 KiB), then 160 KiB */
    oxide_kernel *sk = kernel("smem_sum");
    uint32_t words = 65536 / 4;
    oxide_arg sargs[2] = {oxide_arg_u32(words), oxide_arg_buffer(OXIDE_SCALAR_U64, oxide_buffer_ptr(d), 1, 1)};
    uint32_t b256[3] = {256, 1, 1};
    uint64_t sum = 0;
    OK(oxide_kernel_launch(sk, NULL, ONE, b256, 0, sargs, 2));
    OK(oxide_memcpy_dtoh(dev, &sum, oxide_buffer_ptr(d), 8));
    CHECK(sum == (uint64_t)words * (words - 1) / 2);
    words = 160 * 1024 / 4;
    sargs[0] = oxide_arg_u32(words);
    OK(oxide_kernel_launch(sk, NULL, ONE, b256, 160 * 1024, sargs, 2));
    OK(oxide_memcpy_dtoh(dev, &sum, oxide_buffer_ptr(d), 8));
    CHECK(sum == (uint64_t)words * (words - 1) / 2);
    FAILS_WITH(oxide_kernel_launch(sk, NULL, ONE, b256, 1 << 20, sargs, 2), OXIDE_ERROR_LAUNCH,
               "dynamic shared memory are more than the kernel can have");
    oxide_buffer_free(d);
    oxide_buffer_free(counter);
}

static void test_attributes(char *figure, size_t fsize) {
    oxide_kernel *k = kernel("vecadd");
    int regs = 0, maxt = 0, ptxv = 0, binv = 0, local = -1, shared = -1, per_sm = 0, min_grid = 0, bs = 0;
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_NUM_REGS, &regs));
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_MAX_THREADS_PER_BLOCK, &maxt));
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_PTX_VERSION, &ptxv));
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_BINARY_VERSION, &binv));
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_LOCAL_BYTES, &local));
    OK(oxide_kernel_get_attribute(k, OXIDE_KERNEL_SHARED_BYTES, &shared));
    OK(oxide_kernel_occupancy(k, 256, 0, &per_sm));
    OK(oxide_kernel_suggest_block_size(k, 0, &min_grid, &bs));
    CHECK(regs > 0 && maxt >= 256 && ptxv >= 80 && binv == cc_major * 10 + cc_minor && local == 0 && shared == 0);
    CHECK(per_sm > 0 && min_grid > 0 && bs > 0);
    FAILS_WITH(oxide_kernel_get_attribute(k, (oxide_kernel_attr)7, &regs), OXIDE_ERROR_INVALID_ARGUMENT,
               "unknown attribute");
    snprintf(figure, fsize, "vecadd: %d registers, %d blocks of 256 per SM", regs, per_sm);
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_get(0, &dev));
    test_device();
    size_t len = 0;
    char *ptx = read_data("kernels.ptx", &len);
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    free(ptx);
    CHECK(oxide_loaded_module_jit_log(lm) != NULL);
    test_lookup();
    test_vecadd();
    test_scalars_bytes_tma();
    char f1[128] = "", f2[128] = "", figure[300];
    test_streams_events_memory(f1, sizeof f1);
    test_cluster_cooperative_smem();
    test_attributes(f2, sizeof f2);
    oxide_loaded_module_destroy(lm);
    OK(oxide_device_check(dev));
    snprintf(figure, sizeof figure, "%s; %s", f2, f1);
    return finish("runtime", figure);
}
