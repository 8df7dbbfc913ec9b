/* Streams, events and stream capture. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static oxide_status check_stream(const oxide_stream *s, const char *fn) {
    if (!s)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
    if (s->magic != RT_STREAM)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: not a stream handle", fn);
    return OXIDE_OK;
}

/* A usable stream: not stale, device not failed, context current. */
static oxide_status enter_stream(oxide_stream *s, const char *fn) {
    oxide_status st = check_stream(s, fn);
    if (st != OXIDE_OK)
        return st;
    if (!s->is_default && s->gen != oxide__rt_gen(s->dev))
        return oxide__rt_check_gen(s->dev, s->gen, "the stream");
    return oxide__rt_enter(s->dev);
}

static oxide_status check_event(const oxide_event *e, const char *fn) {
    if (!e)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: event is NULL", fn);
    if (e->magic != RT_EVENT)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: not an event handle", fn);
    return OXIDE_OK;
}

static oxide_status enter_event(oxide_event *e, const char *fn) {
    oxide_status st = check_event(e, fn);
    if (st != OXIDE_OK)
        return st;
    if (e->gen != oxide__rt_gen(e->dev))
        return oxide__rt_check_gen(e->dev, e->gen, "the event");
    return oxide__rt_enter(e->dev);
}

static const struct oxide_kernel *last_kernel(const oxide_stream *s) {
    return atomic_load_explicit(&s->last_kernel, memory_order_relaxed);
}

oxide_status oxide_stream_create(oxide_device *dev, unsigned flags, oxide_stream **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_create: %s is NULL or invalid",
                           !out ? "out" : "dev");
    if (flags & ~OXIDE_STREAM_NON_BLOCKING)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_create: unknown flags 0x%x", flags);
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    oxide_stream *s = calloc(1, sizeof *s);
    if (!s)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_stream_create: out of memory");
    CUresult r = oxide__cu.StreamCreate(&s->cu, (flags & OXIDE_STREAM_NON_BLOCKING) ? CU_STREAM_NON_BLOCKING : 0);
    if (r != CUDA_SUCCESS) {
        free(s);
        return oxide__rt_cuda(dev, r, NULL, "oxide_stream_create on device %d", dev->index);
    }
    s->magic = RT_STREAM;
    s->dev = dev;
    s->gen = oxide__rt_gen(dev);
    *out = s;
    return OXIDE_OK;
}

oxide_status oxide_stream_default(oxide_device *dev, oxide_stream **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_default: %s is NULL or invalid",
                           !out ? "out" : "dev");
    *out = &dev->default_stream;
    return OXIDE_OK;
}

oxide_status oxide_stream_wrap(oxide_device *dev, void *cu_stream, oxide_stream **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_wrap: %s is NULL or invalid",
                           !out ? "out" : "dev");
    if (!cu_stream)
        return oxide_stream_default(dev, out);
    oxide_stream *s = calloc(1, sizeof *s);
    if (!s)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_stream_wrap: out of memory");
    s->magic = RT_STREAM;
    s->is_foreign = true;
    s->dev = dev;
    s->gen = oxide__rt_gen(dev);
    s->cu = (CUstream)cu_stream;
    *out = s;
    return OXIDE_OK;
}

void oxide_stream_destroy(oxide_stream *s) {
    if (!s || s->magic != RT_STREAM || s->is_default)
        return;
    if (!s->is_foreign && s->gen == oxide__rt_gen(s->dev) && oxide__rt_enter(s->dev) == OXIDE_OK)
        OXIDE__RELAXED(oxide__cu.StreamDestroy(s->cu));
    s->magic = 0;
    free(s);
}

oxide_status oxide_stream_synchronize(oxide_stream *s) {
    oxide_status st = enter_stream(s, "oxide_stream_synchronize");
    if (st != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.StreamSynchronize(s->cu);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(s->dev, r, last_kernel(s), "oxide_stream_synchronize (device %d)", s->dev->index);
    return OXIDE_OK;
}

oxide_status oxide_stream_query(oxide_stream *s, int *done) {
    oxide_status st = enter_stream(s, "oxide_stream_query");
    if (st != OXIDE_OK)
        return st;
    if (!done)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_query: done is NULL");
    CUresult r = oxide__cu.StreamQuery(s->cu);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
        *done = r == CUDA_SUCCESS;
        return OXIDE_OK;
    }
    return oxide__rt_cuda(s->dev, r, last_kernel(s), "oxide_stream_query (device %d)", s->dev->index);
}

oxide_status oxide_stream_wait_event(oxide_stream *s, oxide_event *e) {
    oxide_status st = enter_stream(s, "oxide_stream_wait_event");
    if (st != OXIDE_OK)
        return st;
    if ((st = check_event(e, "oxide_stream_wait_event")) != OXIDE_OK)
        return st;
    /* The event may belong to another device: CUDA orders streams across contexts this way. */
    if (e->gen != oxide__rt_gen(e->dev))
        return oxide__rt_check_gen(e->dev, e->gen, "the event");
    CUresult r = oxide__cu.StreamWaitEvent(s->cu, e->cu, 0);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(s->dev, r, NULL, "oxide_stream_wait_event (device %d)", s->dev->index);
    return OXIDE_OK;
}

oxide_status oxide_stream_native(const oxide_stream *s, void **cu_stream) {
    oxide_status st = check_stream(s, "oxide_stream_native");
    if (st != OXIDE_OK)
        return st;
    if (!cu_stream)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_native: cu_stream is NULL");
    *cu_stream = s->cu;
    return OXIDE_OK;
}

oxide_device *oxide_stream_get_device(const oxide_stream *s) { return s && s->magic == RT_STREAM ? s->dev : NULL; }

oxide_status oxide_stream_begin_capture(oxide_stream *s) {
    oxide_status st = enter_stream(s, "oxide_stream_begin_capture");
    if (st != OXIDE_OK)
        return st;
    if (s->is_default)
        return oxide__fail(OXIDE_ERROR_STATE,
                           "oxide_stream_begin_capture: the default stream cannot be captured (CUDA's rule); use a "
                           "stream from oxide_stream_create");
    if (s->capturing)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_stream_begin_capture: the stream is already capturing");
    /* Thread-local mode: other threads' unrelated driver calls stay legal during the capture. */
    CUresult r = oxide__cu.StreamBeginCapture(s->cu, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(s->dev, r, NULL, "oxide_stream_begin_capture (device %d)", s->dev->index);
    s->capturing = true;
    return OXIDE_OK;
}

oxide_status oxide_stream_end_capture(oxide_stream *s, oxide_graph **out) {
    oxide_status st = enter_stream(s, "oxide_stream_end_capture");
    if (st != OXIDE_OK)
        return st;
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_end_capture: out is NULL");
    if (!s->capturing)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_stream_end_capture: the stream is not capturing");
    CUgraph g = NULL;
    CUresult r = oxide__cu.StreamEndCapture(s->cu, &g);
    s->capturing = false;
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(s->dev, r, NULL,
                              "oxide_stream_end_capture (device %d): the captured work was not valid for a graph",
                              s->dev->index);
    st = oxide__rt_graph_from(s->dev, g, out);
    oxide__cu.GraphDestroy(g);
    return st;
}

/* The caller's function and pointer, carried through the driver's callback and freed there: the
 * driver runs each callback exactly once, also after a fault. */
typedef struct stream_callback {
    oxide_stream_callback fn;
    void *user;
} stream_callback;

static void run_stream_callback(CUstream cs, CUresult r, void *p) {
    (void)cs;
    stream_callback c = *(stream_callback *)p;
    free(p);
    c.fn(c.user, r == CUDA_SUCCESS ? OXIDE_OK : OXIDE_ERROR_CUDA);
}

oxide_status oxide_stream_add_callback(oxide_stream *s, oxide_stream_callback fn, void *user) {
    oxide_status st = enter_stream(s, "oxide_stream_add_callback");
    if (st != OXIDE_OK)
        return st;
    if (!fn)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_stream_add_callback: fn is NULL");
    if (s->capturing)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_stream_add_callback: the stream is capturing, and CUDA cannot "
                                              "capture a stream callback; use oxide_task_host_fn in captured work");
    if (!oxide__cu.StreamAddCallback)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "oxide_stream_add_callback: the driver has no cuStreamAddCallback; wait with "
                           "oxide_stream_synchronize or poll oxide_stream_query instead");
    stream_callback *c = malloc(sizeof *c);
    if (!c)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_stream_add_callback: out of memory");
    c->fn = fn;
    c->user = user;
    CUresult r = oxide__cu.StreamAddCallback(s->cu, run_stream_callback, c, 0);
    if (r != CUDA_SUCCESS) {
        free(c);
        return oxide__rt_cuda(s->dev, r, last_kernel(s), "oxide_stream_add_callback (device %d)", s->dev->index);
    }
    return OXIDE_OK;
}

/* ---- events ---- */

oxide_status oxide_event_create(oxide_device *dev, unsigned flags, oxide_event **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_event_create: %s is NULL or invalid",
                           !out ? "out" : "dev");
    if (flags & ~(OXIDE_EVENT_DISABLE_TIMING | OXIDE_EVENT_BLOCKING_SYNC))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_event_create: unknown flags 0x%x", flags);
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    oxide_event *e = calloc(1, sizeof *e);
    if (!e)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_event_create: out of memory");
    unsigned cf = 0;
    if (flags & OXIDE_EVENT_DISABLE_TIMING)
        cf |= CU_EVENT_DISABLE_TIMING;
    if (flags & OXIDE_EVENT_BLOCKING_SYNC)
        cf |= CU_EVENT_BLOCKING_SYNC;
    CUresult r = oxide__cu.EventCreate(&e->cu, cf);
    if (r != CUDA_SUCCESS) {
        free(e);
        return oxide__rt_cuda(dev, r, NULL, "oxide_event_create on device %d", dev->index);
    }
    e->magic = RT_EVENT;
    e->dev = dev;
    e->gen = oxide__rt_gen(dev);
    e->flags = flags;
    *out = e;
    return OXIDE_OK;
}

void oxide_event_destroy(oxide_event *e) {
    if (!e || e->magic != RT_EVENT)
        return;
    if (e->gen == oxide__rt_gen(e->dev) && oxide__rt_enter(e->dev) == OXIDE_OK)
        OXIDE__RELAXED(oxide__cu.EventDestroy(e->cu));
    e->magic = 0;
    free(e);
}

oxide_status oxide_event_record(oxide_event *e, oxide_stream *stream) {
    oxide_status st = enter_event(e, "oxide_event_record");
    if (st != OXIDE_OK)
        return st;
    CUstream cs;
    oxide_stream *eff;
    if ((st = oxide__rt_stream(e->dev, stream, &cs, &eff)) != OXIDE_OK)
        return oxide__fail_prefix(st, "oxide_event_record");
    CUresult r = oxide__cu.EventRecord(e->cu, cs);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(e->dev, r, NULL, "oxide_event_record (device %d)", e->dev->index);
    return OXIDE_OK;
}

oxide_status oxide_event_synchronize(oxide_event *e) {
    oxide_status st = enter_event(e, "oxide_event_synchronize");
    if (st != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.EventSynchronize(e->cu);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(e->dev, r, atomic_load_explicit(&e->dev->last_kernel, memory_order_relaxed),
                              "oxide_event_synchronize (device %d)", e->dev->index);
    return OXIDE_OK;
}

oxide_status oxide_event_query(oxide_event *e, int *done) {
    oxide_status st = enter_event(e, "oxide_event_query");
    if (st != OXIDE_OK)
        return st;
    if (!done)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_event_query: done is NULL");
    CUresult r = oxide__cu.EventQuery(e->cu);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
        *done = r == CUDA_SUCCESS;
        return OXIDE_OK;
    }
    return oxide__rt_cuda(e->dev, r, atomic_load_explicit(&e->dev->last_kernel, memory_order_relaxed),
                          "oxide_event_query (device %d)", e->dev->index);
}

oxide_status oxide_event_elapsed_ms(oxide_event *start, oxide_event *end, float *ms) {
    oxide_status st = enter_event(start, "oxide_event_elapsed_ms");
    if (st != OXIDE_OK)
        return st;
    if ((st = enter_event(end, "oxide_event_elapsed_ms")) != OXIDE_OK)
        return st;
    if (!ms)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_event_elapsed_ms: ms is NULL");
    if ((start->flags | end->flags) & OXIDE_EVENT_DISABLE_TIMING)
        return oxide__fail(OXIDE_ERROR_STATE,
                           "oxide_event_elapsed_ms: an event was created with OXIDE_EVENT_DISABLE_TIMING");
    float v = 0;
    CUresult r = oxide__cu.EventElapsedTime(&v, start->cu, end->cu);
    if (r == CUDA_ERROR_NOT_READY)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_event_elapsed_ms: an event has not completed yet (synchronize "
                                              "the end event first)");
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(start->dev, r, NULL, "oxide_event_elapsed_ms (were both events recorded?)");
    *ms = v;
    return OXIDE_OK;
}
