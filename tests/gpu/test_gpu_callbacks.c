/* Stream callbacks (oxide_stream_add_callback): a callback runs once, after the work queued
 * before it (a 0.1 s spin, then an increment whose result the test checks), in the order added,
 * while the waiting thread sleeps on a condition variable; misuse is refused with a message.
 * Figure: when the callback ran after the launch, and the process CPU time the wait cost. */
#include "gpu_test.h"

#include <pthread.h>
#include <sys/resource.h>

static oxide_device *dev;
static oxide_loaded_module *lm;

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls;
    oxide_status status;
    double at_us;
} waiter;

static void on_done(void *user, oxide_status status) {
    waiter *w = user;
    pthread_mutex_lock(&w->mu);
    w->calls++;
    w->status = status;
    w->at_us = now_us();
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Sleeps until the callback has run or 10 s have passed; 1 if it ran. */
static int wait_for(waiter *w) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->calls && rc == 0)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    int ran = w->calls > 0;
    pthread_mutex_unlock(&w->mu);
    return ran;
}

static double cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static oxide_kernel *kernel(const char *name) {
    oxide_kernel *k = NULL;
    MUST(oxide_loaded_module_get_kernel(lm, name, &k));
    return k;
}

static void test_after_work(char *figure, size_t fsize) {
    const size_t n = 4096;
    float *in = malloc(n * 4), *out = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        in[i] = rng_f32();
    oxide_buffer *d;
    MUST(oxide_buffer_alloc(dev, n * 4, &d));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(d), in, n * 4));
    oxide_stream *s;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s));
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, 0};
    const uint32_t one[3] = {1, 1, 1}, grid[3] = {(uint32_t)(n / 256), 1, 1}, block[3] = {256, 1, 1};
    oxide_arg spin = oxide_arg_u64(200000000ull); /* ~0.1 s at ~2 GHz */
    oxide_arg inc = oxide_arg_from_buffer(d, OXIDE_SCALAR_F32, 1);
    double t0 = now_us(), cpu0 = cpu_ms();
    OK(oxide_kernel_launch(kernel("spin"), s, one, one, 0, &spin, 1));
    OK(oxide_kernel_launch(kernel("inc"), s, grid, block, 0, &inc, 1));
    OK(oxide_stream_add_callback(s, on_done, &w));
    CHECK(wait_for(&w), "the callback did not run within 10 s");
    double cpu = cpu_ms() - cpu0, after_ms = (w.at_us - t0) / 1e3;
    CHECK(w.calls == 1 && w.status == OXIDE_OK, "calls %d, status %s", w.calls, oxide_status_name(w.status));
    CHECK(after_ms > 50.0, "the callback ran %.1f ms after the launch, before the 0.1 s spin ended", after_ms);
    int done = 0;
    OK(oxide_stream_query(s, &done));
    CHECK(done == 1);
    OK(oxide_memcpy_dtoh(dev, out, oxide_buffer_ptr(d), n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += out[i] != in[i] + 1.0f;
    CHECK(bad == 0, "%zu of %zu values not incremented when the callback ran", bad, n);
    snprintf(figure, fsize, "callback %.1f ms after the launch of a 0.1 s spin, %.2f ms CPU while waiting", after_ms,
             cpu);
    oxide_stream_destroy(s);
    oxide_buffer_free(d);
    free(in), free(out);
}

typedef struct order {
    pthread_mutex_t mu;
    int seen[64];
    int n;
} order;
typedef struct order_slot {
    order *o;
    int index;
} order_slot;

static void note(void *user, oxide_status status) {
    order_slot *sl = user;
    pthread_mutex_lock(&sl->o->mu);
    if (sl->o->n < 64)
        sl->o->seen[sl->o->n++] = status == OXIDE_OK ? sl->index : -1;
    pthread_mutex_unlock(&sl->o->mu);
}

static void test_order(void) {
    oxide_stream *s;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s));
    order o = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};
    order_slot slots[64];
    const uint32_t one[3] = {1, 1, 1};
    oxide_arg spin = oxide_arg_u64(2000000ull);
    for (int i = 0; i < 64; i++) {
        slots[i] = (order_slot){&o, i};
        if (i % 8 == 0)
            OK(oxide_kernel_launch(kernel("spin"), s, one, one, 0, &spin, 1));
        OK(oxide_stream_add_callback(s, note, &slots[i]));
    }
    OK(oxide_stream_synchronize(s));
    /* a callback that has started may still be running when synchronize returns */
    for (int tries = 0; tries < 1000; tries++) {
        pthread_mutex_lock(&o.mu);
        int n = o.n;
        pthread_mutex_unlock(&o.mu);
        if (n == 64)
            break;
        usleep(1000);
    }
    CHECK(o.n == 64, "%d of 64 callbacks ran", o.n);
    int in_order = 1;
    for (int i = 0; i < o.n; i++)
        in_order &= o.seen[i] == i;
    CHECK(in_order, "the callbacks ran out of order");
    oxide_stream_destroy(s);
}

static void test_misuse(void) {
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, 0};
    oxide_stream *s, *def;
    MUST(oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s));
    FAILS_WITH(oxide_stream_add_callback(NULL, on_done, &w), OXIDE_ERROR_INVALID_ARGUMENT, "stream is NULL");
    FAILS_WITH(oxide_stream_add_callback(s, NULL, &w), OXIDE_ERROR_INVALID_ARGUMENT, "fn is NULL");
    oxide_buffer *b;
    MUST(oxide_buffer_alloc(dev, 256, &b));
    OK(oxide_stream_begin_capture(s));
    OK(oxide_memset_async(s, oxide_buffer_ptr(b), 0, 64, 4)); /* a capture with work in it */
    FAILS_WITH(oxide_stream_add_callback(s, on_done, &w), OXIDE_ERROR_STATE, "capturing", "oxide_task_host_fn");
    oxide_graph *g = NULL;
    OK(oxide_stream_end_capture(s, &g));
    oxide_graph_destroy(g);
    oxide_buffer_free(b);
    CHECK(w.calls == 0, "a refused callback ran");
    /* the default stream takes callbacks too */
    MUST(oxide_stream_default(dev, &def));
    OK(oxide_stream_add_callback(def, on_done, &w));
    CHECK(wait_for(&w) && w.status == OXIDE_OK);
    oxide_stream_destroy(s);
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_get(0, &dev));
    lm = gpu_load_test_kernels(dev);
    char figure[200] = "";
    test_after_work(figure, sizeof figure);
    test_order();
    test_misuse();
    oxide_loaded_module_destroy(lm);
    return finish("stream callbacks", figure);
}
