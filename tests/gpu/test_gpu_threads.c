/* Runtime handles used from several threads at once: one module and its kernels shared by all,
 * each thread with its own stream and buffer, launching, composing joins (which share the
 * device's pool of helper streams) and synchronising. A thread's first call makes the device's
 * context current on it. Results are checked per thread. */
#include "gpu_test.h"

#include <pthread.h>

enum { THREADS = 8, ROUNDS = 50, N = 1 << 16 };

static oxide_device *dev;
static oxide_kernel *inc;
static int thread_failures[THREADS];

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    int *bad = &thread_failures[id];
    oxide_stream *s;
    oxide_buffer *x, *y;
    if (oxide_stream_create(dev, OXIDE_STREAM_NON_BLOCKING, &s) || oxide_buffer_alloc(dev, N * 4, &x) ||
        oxide_buffer_alloc(dev, N * 4, &y)) {
        fprintf(stderr, "thread %d: setup: %s\n", id, oxide_last_error());
        (*bad)++;
        return NULL;
    }
    oxide_launch_config cfg = {{N / 256, 1, 1}, {256, 1, 1}, 0, {0, 0, 0}, 0};
    oxide_arg ax = oxide_arg_from_buffer(x, OXIDE_SCALAR_F32, 1), ay = oxide_arg_from_buffer(y, OXIDE_SCALAR_F32, 1);
    oxide_task *tx, *ty, *both;
    if (oxide_memset_async(s, oxide_buffer_ptr(x), 0, N, 4) || oxide_memset_async(s, oxide_buffer_ptr(y), 0, N, 4) ||
        oxide_task_launch(inc, &cfg, &ax, 1, &tx) || oxide_task_launch(inc, &cfg, &ay, 1, &ty)) {
        fprintf(stderr, "thread %d: tasks: %s\n", id, oxide_last_error());
        (*bad)++;
        return NULL;
    }
    oxide_task *parts[2] = {tx, ty};
    if (oxide_task_join(parts, 2, &both)) {
        (*bad)++;
        return NULL;
    }
    for (int r = 0; r < ROUNDS; r++) {
        if (oxide_kernel_launch(inc, s, cfg.grid, cfg.block, 0, &ax, 1) != OXIDE_OK ||
            oxide_task_submit(both, s) != OXIDE_OK) {
            fprintf(stderr, "thread %d round %d: %s\n", id, r, oxide_last_error());
            (*bad)++;
            break;
        }
    }
    if (oxide_stream_synchronize(s) != OXIDE_OK) {
        fprintf(stderr, "thread %d: sync: %s\n", id, oxide_last_error());
        (*bad)++;
    }
    float *hx = malloc(N * 4), *hy = malloc(N * 4);
    if (oxide_memcpy_dtoh(dev, hx, oxide_buffer_ptr(x), N * 4) ||
        oxide_memcpy_dtoh(dev, hy, oxide_buffer_ptr(y), N * 4))
        (*bad)++;
    for (int i = 0; i < N; i++)
        if (hx[i] != 2.0f * ROUNDS || hy[i] != (float)ROUNDS) {
            fprintf(stderr, "thread %d: element %d is %g/%g, want %g/%g\n", id, i, hx[i], hy[i], 2.0 * ROUNDS,
                    (double)ROUNDS);
            (*bad)++;
            break;
        }
    free(hx), free(hy);
    oxide_task_destroy(tx);
    oxide_task_destroy(ty);
    oxide_task_destroy(both);
    oxide_buffer_free(x);
    oxide_buffer_free(y);
    oxide_stream_destroy(s);
    return NULL;
}

int main(void) {
    gpu_require();
    MUST(oxide_device_get(0, &dev));
    size_t len = 0;
    char *ptx = read_data("kernels.ptx", &len);
    oxide_loaded_module *lm;
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    free(ptx);
    MUST(oxide_loaded_module_get_kernel(lm, "inc", &inc));
    pthread_t t[THREADS];
    double t0 = now_us();
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    double t1 = now_us();
    for (int i = 0; i < THREADS; i++)
        CHECK(thread_failures[i] == 0);
    OK(oxide_device_check(dev));
    oxide_loaded_module_destroy(lm);
    char figure[128];
    snprintf(figure, sizeof figure, "%d threads x %d rounds of a launch and a 2-way join in %.1f ms", THREADS, ROUNDS,
             (t1 - t0) / 1e3);
    return finish("threads", figure);
}
