/* Async composition on a GPU: lazy tasks (launch, copy, memset, host function) composed with
 * sequence and join, run by submit/sync, captured once as a CUDA graph and replayed; stream
 * capture of plain launches. Figure: host+GPU time per iteration of a 32-launch chain, submitted
 * task by task against one graph replay. */
#include "gpu_test.h"

#include <stdatomic.h>

static oxide_device *dev;
static oxide_loaded_module *lm;
static atomic_int host_calls;

static void count_call(void *user) {
    (void)user;
    atomic_fetch_add(&host_calls, 1);
}

static oxide_kernel *kernel(const char *name) {
    oxide_kernel *k = NULL;
    MUST(oxide_loaded_module_get_kernel(lm, name, &k));
    return k;
}

static void read_back(float *dst, oxide_buffer *b, size_t n) {
    OK(oxide_memcpy_dtoh(dev, dst, oxide_buffer_ptr(b), n * 4));
}

static size_t count_not(const float *v, size_t n, float want) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += v[i] != want;
    return bad;
}

static void test_compose(void) {
    const size_t n = 1 << 20;
    float *in = NULL, *out = NULL, *tmp = malloc(n * 4);
    MUST(oxide_host_alloc(dev, n * 4, (void **)&in));
    MUST(oxide_host_alloc(dev, n * 4, (void **)&out));
    for (size_t i = 0; i < n; i++)
        in[i] = rng_f32();
    oxide_buffer *x, *y, *z;
    MUST(oxide_buffer_alloc(dev, n * 4, &x));
    MUST(oxide_buffer_alloc(dev, n * 4, &y));
    MUST(oxide_buffer_alloc(dev, n * 4, &z));
    OK(oxide_memset(dev, oxide_buffer_ptr(y), 0, n, 4));
    oxide_launch_config cfg = {{(uint32_t)(n / 256), 1, 1}, {256, 1, 1}, 0, {0, 0, 0}, 0};
    oxide_arg ax = oxide_arg_from_buffer(x, OXIDE_SCALAR_F32, 1), ay = oxide_arg_from_buffer(y, OXIDE_SCALAR_F32, 1),
              az = oxide_arg_from_buffer(z, OXIDE_SCALAR_F32, 1);
    oxide_task *up, *inc_x, *inc_y, *set_z, *inc_z, *host, *down, *z_chain, *both, *whole;
    MUST(oxide_task_copy_htod(dev, oxide_buffer_ptr(x), in, n * 4, &up));
    MUST(oxide_task_launch(kernel("inc"), &cfg, &ax, 1, &inc_x));
    MUST(oxide_task_launch(kernel("inc"), &cfg, &ay, 1, &inc_y));
    MUST(oxide_task_memset(dev, oxide_buffer_ptr(z), 0x3f800000u /* 1.0f */, n, 4, &set_z));
    MUST(oxide_task_launch(kernel("inc"), &cfg, &az, 1, &inc_z));
    MUST(oxide_task_host_fn(dev, count_call, NULL, &host));
    MUST(oxide_task_copy_dtoh(dev, out, oxide_buffer_ptr(x), n * 4, &down));
    oxide_task *zc[2] = {set_z, inc_z};
    MUST(oxide_task_sequence(zc, 2, &z_chain));
    oxide_task *par[2] = {inc_y, z_chain};
    MUST(oxide_task_join(par, 2, &both));
    oxide_task *all[5] = {up, inc_x, both, host, down};
    MUST(oxide_task_sequence(all, 5, &whole));
    /* the composite holds its parts */
    oxide_task *parts[] = {up, inc_x, inc_y, set_z, inc_z, host, down, z_chain, both};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        oxide_task_destroy(parts[i]);
    CHECK(atomic_load(&host_calls) == 0); /* nothing ran yet: tasks are lazy */

    oxide_stream *s;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s));
    OK(oxide_task_sync(whole, s));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += out[i] != in[i] + 1.0f;
    CHECK(bad == 0);
    CHECK(atomic_load(&host_calls) == 1);
    read_back(tmp, y, n);
    CHECK(count_not(tmp, n, 1.0f) == 0);
    read_back(tmp, z, n);
    CHECK(count_not(tmp, n, 2.0f) == 0);

    /* again, submitted on the default stream */
    OK(oxide_task_submit(whole, NULL));
    OK(oxide_device_synchronize(dev));
    CHECK(atomic_load(&host_calls) == 2);
    read_back(tmp, y, n);
    CHECK(count_not(tmp, n, 2.0f) == 0);

    /* captured once, replayed ten times */
    oxide_graph *g;
    MUST(oxide_graph_create(whole, &g));
    CHECK(atomic_load(&host_calls) == 2); /* capturing runs nothing */
    for (int i = 0; i < 10; i++)
        OK(oxide_graph_launch(g, s));
    OK(oxide_stream_synchronize(s));
    CHECK(atomic_load(&host_calls) == 12);
    read_back(tmp, y, n);
    CHECK(count_not(tmp, n, 12.0f) == 0);
    read_back(tmp, z, n);
    CHECK(count_not(tmp, n, 2.0f) == 0);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += out[i] != in[i] + 1.0f;
    CHECK(bad == 0);
    OK(oxide_graph_launch(g, NULL)); /* and on the default stream */
    OK(oxide_device_synchronize(dev));
    CHECK(atomic_load(&host_calls) == 13);
    oxide_graph_destroy(g);
    oxide_task_destroy(whole);

    /* arguments are checked when the task is made */
    oxide_task *badt = NULL;
    oxide_arg ro = oxide_arg_from_buffer(x, OXIDE_SCALAR_F32, 0);
    FAILS_WITH(oxide_task_launch(kernel("inc"), &cfg, &ro, 1, &badt), OXIDE_ERROR_LAUNCH,
               "launch inc: argument 1 'x' is a mutable slice of f32, got a read-only buffer of f32");
    CHECK(badt == NULL);
    /* and a NULL out is refused by every kind of task */
    const oxide_status inv = OXIDE_ERROR_INVALID_ARGUMENT;
    uint64_t xp = oxide_buffer_ptr(x);
    FAILS_WITH(oxide_task_launch(kernel("inc"), &cfg, &ax, 1, NULL), inv, "oxide_task_launch: out is NULL");
    FAILS_WITH(oxide_task_copy_htod(dev, xp, in, 4, NULL), inv, "oxide_task_copy_htod: out is NULL");
    FAILS_WITH(oxide_task_copy_dtoh(dev, out, xp, 4, NULL), inv, "oxide_task_copy_dtoh: out is NULL");
    FAILS_WITH(oxide_task_copy_dtod(dev, xp, xp, 4, NULL), inv, "oxide_task_copy_dtod: out is NULL");
    FAILS_WITH(oxide_task_memset(dev, xp, 0, 1, 4, NULL), inv, "oxide_task_memset: out is NULL");
    FAILS_WITH(oxide_task_host_fn(dev, count_call, NULL, NULL), inv, "oxide_task_host_fn: out is NULL");
    oxide_task *part;
    MUST(oxide_task_host_fn(dev, count_call, NULL, &part));
    FAILS_WITH(oxide_task_sequence(&part, 1, NULL), inv, "oxide_task_sequence: out is NULL");
    FAILS_WITH(oxide_task_join(&part, 1, NULL), inv, "oxide_task_join: out is NULL");
    oxide_task_destroy(part);

    /* a copy from pageable memory inside a capture: refused or captured, never a crash, and the
     * runtime stays usable */
    oxide_task *pageable;
    MUST(oxide_task_copy_htod(dev, oxide_buffer_ptr(x), tmp, n * 4, &pageable));
    oxide_graph *pg = NULL;
    oxide_status st = oxide_graph_create(pageable, &pg);
    printf("note: capturing a copy from pageable memory: %s%s%s\n", oxide_status_name(st), st ? ": " : "",
           st ? oxide_last_error() : "");
    oxide_graph_destroy(pg);
    oxide_task_destroy(pageable);
    OK(oxide_device_check(dev));

    oxide_stream_destroy(s);
    oxide_buffer_free(x);
    oxide_buffer_free(y);
    oxide_buffer_free(z);
    OK(oxide_host_free(in));
    OK(oxide_host_free(out));
    free(tmp);
}

/* Stream capture of ordinary launches, and the figure: per-iteration cost of a 32-launch chain. */
static void test_capture(char *figure, size_t fsize) {
    const size_t n = 1 << 12;
    oxide_buffer *x;
    MUST(oxide_buffer_alloc(dev, n * 4, &x));
    OK(oxide_memset(dev, oxide_buffer_ptr(x), 0, n, 4));
    oxide_stream *s;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s));
    oxide_arg ax = oxide_arg_from_buffer(x, OXIDE_SCALAR_F32, 1);
    uint32_t grid[3] = {(uint32_t)(n / 256), 1, 1}, block[3] = {256, 1, 1};
    OK(oxide_stream_begin_capture(s));
    FAILS_WITH(oxide_stream_begin_capture(s), OXIDE_ERROR_STATE, "already capturing");
    for (int i = 0; i < 3; i++)
        OK(oxide_kernel_launch(kernel("inc"), s, grid, block, 0, &ax, 1));
    oxide_graph *g = NULL;
    OK(oxide_stream_end_capture(s, &g));
    FAILS_WITH(oxide_stream_end_capture(s, &g), OXIDE_ERROR_STATE, "not capturing");
    float *tmp = malloc(n * 4);
    read_back(tmp, x, n);
    CHECK(count_not(tmp, n, 0.0f) == 0); /* captured, not run */
    OK(oxide_graph_launch(g, s));
    OK(oxide_graph_launch(g, s));
    OK(oxide_stream_synchronize(s));
    read_back(tmp, x, n);
    CHECK(count_not(tmp, n, 6.0f) == 0);
    oxide_graph_destroy(g);

    enum { CHAIN = 32, ITERS = 200 };
    oxide_launch_config cfg = {{grid[0], 1, 1}, {256, 1, 1}, 0, {0, 0, 0}, 0};
    oxide_task *steps[CHAIN], *chain;
    for (int i = 0; i < CHAIN; i++)
        MUST(oxide_task_launch(kernel("inc"), &cfg, &ax, 1, &steps[i]));
    MUST(oxide_task_sequence(steps, CHAIN, &chain));
    for (int i = 0; i < CHAIN; i++)
        oxide_task_destroy(steps[i]);
    MUST(oxide_graph_create(chain, &g));
    double best_task = 1e30, best_graph = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_us();
        for (int i = 0; i < ITERS; i++)
            OK(oxide_task_submit(chain, s));
        OK(oxide_stream_synchronize(s));
        double t1 = now_us();
        for (int i = 0; i < ITERS; i++)
            OK(oxide_graph_launch(g, s));
        OK(oxide_stream_synchronize(s));
        double t2 = now_us();
        if ((t1 - t0) / ITERS < best_task)
            best_task = (t1 - t0) / ITERS;
        if ((t2 - t1) / ITERS < best_graph)
            best_graph = (t2 - t1) / ITERS;
    }
    read_back(tmp, x, n);
    CHECK(count_not(tmp, n, 6.0f + 3 * 2 * ITERS * CHAIN) == 0);
    snprintf(figure, fsize, "%d-launch chain: %.1f us/iter submitted, %.1f us/iter as a graph", CHAIN, best_task,
             best_graph);
    oxide_graph_destroy(g);
    oxide_task_destroy(chain);
    oxide_stream_destroy(s);
    oxide_buffer_free(x);
    free(tmp);
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_get(0, &dev));
    lm = gpu_load_test_kernels(dev);
    test_compose();
    char figure[200] = "";
    test_capture(figure, sizeof figure);
    oxide_loaded_module_destroy(lm);
    return finish("tasks and graphs", figure);
}
