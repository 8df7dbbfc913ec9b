/* Several GPUs: a module loaded on each device, launches there, peer access, copies between
 * devices ordered by an event of another device, and the refusals (a bad device index, peer
 * access with itself or between devices that cannot reach each other, a copy naming the wrong
 * device, a launch given memory of a device it cannot reach). With one GPU the same calls run on
 * device 0 alone (a peer copy from device 0 to itself) and the line before PASSED says what needs
 * two. The fake driver runs it as 2 and 4 devices, with and without peer access (ctest mock_*). */
#include "gpu_test.h"

#define N 3000

static int ndev;
static oxide_device *devs[8];
static oxide_loaded_module *mods[8];

static oxide_kernel *vecadd_on(int d) {
    oxide_kernel *k = NULL;
    MUST(oxide_loaded_module_get_kernel(mods[d], "vecadd", &k));
    return k;
}

static void launch_vecadd(int d, oxide_stream *s, uint64_t a, uint64_t b, uint64_t out) {
    oxide_arg args[3] = {oxide_arg_buffer(OXIDE_SCALAR_F32, a, N, 0), oxide_arg_buffer(OXIDE_SCALAR_F32, b, N, 0),
                         oxide_arg_buffer(OXIDE_SCALAR_F32, out, N, 1)};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    OK(oxide_kernel_launch(vecadd_on(d), s, grid, block, 0, args, 3));
}

/* Each device computes a + b with its own module: the kernels are distinct handles. */
static void test_per_device(void) {
    size_t len = 0;
    char *ptx = read_data("kernels.ptx", &len);
    for (int d = 0; d < ndev; d++) {
        MUST(oxide_device_get(d, &devs[d]));
        int idx = -1;
        OK(oxide_device_index(devs[d], &idx));
        CHECK(idx == d);
        MUST(oxide_loaded_module_load_ptx(devs[d], ptx, len, &mods[d]));
        vecadd_io v;
        vecadd_io_make(&v, devs[d], N);
        OK(oxide_kernel_launch(vecadd_on(d), NULL, v.grid, v.block, 0, v.args, 3));
        CHECK(vecadd_io_wrong(&v, devs[d]) == 0, "vecadd on device %d", d);
        vecadd_io_free(&v);
        if (d)
            CHECK(vecadd_on(d) != vecadd_on(0));
    }
    free(ptx);
    oxide_device *none = NULL;
    char want[32];
    snprintf(want, sizeof want, "no device %d", ndev);
    FAILS_WITH(oxide_device_get(ndev, &none), OXIDE_ERROR_NO_DEVICE, want);
    FAILS_WITH(oxide_device_get(-1, &none), OXIDE_ERROR_NO_DEVICE, "no device -1");
}

static void test_refusals_one_device(void) {
    oxide_device *d0 = devs[0];
    int can = 7, enabled = 7;
    OK(oxide_device_can_access_peer(d0, d0, &can));
    CHECK(can == 0);
    OK(oxide_device_peer_access_enabled(d0, d0, &enabled));
    CHECK(enabled == 0);
    FAILS_WITH(oxide_device_enable_peer_access(d0, d0), OXIDE_ERROR_INVALID_ARGUMENT, "both device 0",
               "two different devices");
    FAILS_WITH(oxide_device_enable_peer_access(d0, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "peer");
    FAILS_WITH(oxide_device_can_access_peer(d0, d0, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "can is NULL");
    FAILS_WITH(oxide_memcpy_peer(d0, 0, d0, 256, 4), OXIDE_ERROR_INVALID_ARGUMENT, "dst is NULL");
}

/* A peer copy from device 0 to itself, on a stream that waited for an event: the code path of
 * two devices with one. */
static void test_copy_one_device(void) {
    oxide_device *d0 = devs[0];
    float host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = rng_f32();
    oxide_buffer *a, *b;
    MUST(oxide_buffer_alloc(d0, sizeof host, &a));
    MUST(oxide_buffer_alloc(d0, sizeof host, &b));
    OK(oxide_memcpy_htod(d0, oxide_buffer_ptr(a), host, sizeof host));
    oxide_stream *s1, *s2;
    oxide_event *e;
    MUST(oxide_stream_create(d0, OXIDE_STREAM_NON_BLOCKING, &s1));
    MUST(oxide_stream_create(d0, OXIDE_STREAM_NON_BLOCKING, &s2));
    MUST(oxide_event_create(d0, OXIDE_EVENT_DISABLE_TIMING, &e));
    OK(oxide_event_record(e, s1));
    OK(oxide_stream_wait_event(s2, e));
    OK(oxide_memcpy_peer_async(s2, d0, oxide_buffer_ptr(b), d0, oxide_buffer_ptr(a), sizeof host));
    OK(oxide_stream_synchronize(s2));
    OK(oxide_memcpy_dtoh(d0, back, oxide_buffer_ptr(b), sizeof back));
    CHECK(!memcmp(back, host, sizeof host), "peer copy from device 0 to itself");
    memset(back, 0, sizeof back);
    OK(oxide_memcpy_peer(d0, oxide_buffer_ptr(a), d0, oxide_buffer_ptr(b), sizeof host));
    OK(oxide_memcpy_dtoh(d0, back, oxide_buffer_ptr(a), sizeof back));
    CHECK(!memcmp(back, host, sizeof host));
    oxide_event_destroy(e);
    oxide_stream_destroy(s1);
    oxide_stream_destroy(s2);
    oxide_buffer_free(a);
    oxide_buffer_free(b);
}

/* Device src computes x + y; dst waits for it with src's event, copies the sum over and adds z;
 * the result comes back to src with a synchronous peer copy. */
static void test_pair(int dst, int src, int *peer_pairs) {
    oxide_device *dd = devs[dst], *ds = devs[src];
    static float x[N], y[N], z[N], want[N], got[N];
    for (int i = 0; i < N; i++)
        x[i] = rng_f32(), y[i] = rng_f32(), z[i] = rng_f32(), want[i] = (x[i] + y[i]) + z[i];
    oxide_buffer *bx, *by, *bsum, *bcopy, *bz, *bout, *bback;
    MUST(oxide_buffer_alloc(ds, sizeof x, &bx));
    MUST(oxide_buffer_alloc(ds, sizeof x, &by));
    MUST(oxide_buffer_alloc(ds, sizeof x, &bsum));
    MUST(oxide_buffer_alloc(ds, sizeof x, &bback));
    MUST(oxide_buffer_alloc(dd, sizeof x, &bcopy));
    MUST(oxide_buffer_alloc(dd, sizeof x, &bz));
    MUST(oxide_buffer_alloc(dd, sizeof x, &bout));
    OK(oxide_memcpy_htod(ds, oxide_buffer_ptr(bx), x, sizeof x));
    OK(oxide_memcpy_htod(ds, oxide_buffer_ptr(by), y, sizeof y));
    OK(oxide_memcpy_htod(dd, oxide_buffer_ptr(bz), z, sizeof z));
    oxide_stream *ss, *sd, *sother = NULL;
    oxide_event *done;
    MUST(oxide_stream_create(ds, OXIDE_STREAM_NON_BLOCKING, &ss));
    MUST(oxide_stream_create(dd, OXIDE_STREAM_NON_BLOCKING, &sd));
    MUST(oxide_event_create(ds, OXIDE_EVENT_DISABLE_TIMING, &done));
    launch_vecadd(src, ss, oxide_buffer_ptr(bx), oxide_buffer_ptr(by), oxide_buffer_ptr(bsum));
    OK(oxide_event_record(done, ss));
    OK(oxide_stream_wait_event(sd, done)); /* an event of device src, a stream of device dst */
    OK(oxide_memcpy_peer_async(sd, dd, oxide_buffer_ptr(bcopy), ds, oxide_buffer_ptr(bsum), sizeof x));
    launch_vecadd(dst, sd, oxide_buffer_ptr(bcopy), oxide_buffer_ptr(bz), oxide_buffer_ptr(bout));
    OK(oxide_stream_synchronize(sd));
    OK(oxide_memcpy_dtoh(dd, got, oxide_buffer_ptr(bout), sizeof got));
    CHECK(!memcmp(got, want, sizeof got), "device %d's sum copied to device %d", src, dst);
    OK(oxide_memcpy_peer(ds, oxide_buffer_ptr(bback), dd, oxide_buffer_ptr(bout), sizeof x));
    memset(got, 0, sizeof got);
    OK(oxide_memcpy_dtoh(ds, got, oxide_buffer_ptr(bback), sizeof got));
    CHECK(!memcmp(got, want, sizeof got), "copied back from device %d to device %d", dst, src);

    char want_msg[64], stream_msg[64];
    snprintf(want_msg, sizeof want_msg, "is memory of device %d", src);
    /* a kernel of one device on another's stream, an event recorded on another device's stream */
    snprintf(stream_msg, sizeof stream_msg, "the stream belongs to device %d", src);
    oxide_arg own[3] = {oxide_arg_from_buffer(bcopy, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(bz, OXIDE_SCALAR_F32, 0),
                        oxide_arg_from_buffer(bout, OXIDE_SCALAR_F32, 1)};
    uint32_t g1[3] = {(N + 255) / 256, 1, 1}, b1[3] = {256, 1, 1};
    FAILS_WITH(oxide_kernel_launch(vecadd_on(dst), ss, g1, b1, 0, own, 3), OXIDE_ERROR_INVALID_ARGUMENT, stream_msg);
    oxide_event *other;
    MUST(oxide_event_create(dd, OXIDE_EVENT_DISABLE_TIMING, &other));
    FAILS_WITH(oxide_event_record(other, ss), OXIDE_ERROR_INVALID_ARGUMENT, stream_msg);
    oxide_event_destroy(other);
    FAILS_WITH(oxide_memcpy_peer_async(sd, dd, oxide_buffer_ptr(bsum), ds, oxide_buffer_ptr(bsum), 4),
               OXIDE_ERROR_INVALID_ARGUMENT, "dst", want_msg, "not of dst_dev");
    if (ndev > 2) {
        int third = -1;
        for (int t = 0; t < ndev && third < 0; t++)
            if (t != dst && t != src)
                third = t;
        MUST(oxide_stream_create(devs[third], 0, &sother));
        FAILS_WITH(oxide_memcpy_peer_async(sother, dd, oxide_buffer_ptr(bcopy), ds, oxide_buffer_ptr(bsum), 4),
                   OXIDE_ERROR_INVALID_ARGUMENT, "neither dst_dev");
        oxide_stream_destroy(sother);
    }

    /* A kernel on dst given src's memory: refused until dst may reach src. */
    int can = -1, enabled = -1;
    OK(oxide_device_can_access_peer(dd, ds, &can));
    OK(oxide_device_peer_access_enabled(dd, ds, &enabled));
    char launch_msg[96];
    snprintf(launch_msg, sizeof launch_msg, "runs on device %d", dst);
    oxide_arg args[3] = {oxide_arg_from_buffer(bsum, OXIDE_SCALAR_F32, 0),
                         oxide_arg_from_buffer(bz, OXIDE_SCALAR_F32, 0),
                         oxide_arg_from_buffer(bout, OXIDE_SCALAR_F32, 1)};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    if (!enabled)
        FAILS_WITH(oxide_kernel_launch(vecadd_on(dst), sd, grid, block, 0, args, 3), OXIDE_ERROR_LAUNCH, "argument 1",
                   want_msg, launch_msg, "oxide_device_enable_peer_access");
    if (!can) {
        FAILS_WITH(oxide_device_enable_peer_access(dd, ds), OXIDE_ERROR_UNSUPPORTED, "cannot access", want_msg + 13,
                   launch_msg + 8, "oxide_memcpy_peer");
    } else {
        OK(oxide_device_enable_peer_access(dd, ds));
        OK(oxide_device_enable_peer_access(dd, ds)); /* again: no error */
        OK(oxide_device_peer_access_enabled(dd, ds, &enabled));
        CHECK(enabled == 1);
        OK(oxide_kernel_launch(vecadd_on(dst), sd, grid, block, 0, args, 3)); /* reads src's memory directly */
        OK(oxide_stream_synchronize(sd));
        OK(oxide_memcpy_dtoh(dd, got, oxide_buffer_ptr(bout), sizeof got));
        CHECK(!memcmp(got, want, sizeof got), "device %d reading device %d's memory", dst, src);
        ++*peer_pairs;
    }
    oxide_event_destroy(done);
    oxide_stream_destroy(ss);
    oxide_stream_destroy(sd);
    oxide_buffer *all[] = {bx, by, bsum, bcopy, bz, bout, bback};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        oxide_buffer_free(all[i]);
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_count(&ndev));
    if (ndev > 8)
        ndev = 8;
    test_per_device();
    test_refusals_one_device();
    test_copy_one_device();
    int pairs = 0, peer_pairs = 0;
    for (int a = 0; a < ndev; a++)
        for (int b = 0; b < ndev; b++)
            if (a != b) {
                test_pair(a, b, &peer_pairs);
                pairs++;
            }
    for (int d = 0; d < ndev; d++) {
        oxide_loaded_module_destroy(mods[d]);
        OK(oxide_device_check(devs[d]));
    }
    char figure[200];
    if (ndev == 1) {
        printf("not run (one GPU): copies and events between two devices, peer access, the launch refusal of another "
               "device's memory\n");
        snprintf(figure, sizeof figure, "1 device: per-device module, peer copy on device 0, refusals");
    } else {
        snprintf(figure, sizeof figure, "%d devices: %d ordered pairs copied, %d with peer access", ndev, pairs,
                 peer_pairs);
    }
    return finish("multi", figure);
}
