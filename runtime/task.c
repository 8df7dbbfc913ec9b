/* Lazy async work: tasks describe launches, copies, memsets and host callbacks, compose into
 * sequences and joins, and run when submitted; a composed task can be captured once as a CUDA
 * graph and replayed, which saves the per-operation launch cost of repeated work.
 *
 * A join forks onto helper streams with events and joins back, so the same code path serves
 * direct submission and stream capture (CUDA turns the event edges into graph edges). */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef enum { T_LAUNCH, T_HTOD, T_DTOH, T_DTOD, T_MEMSET, T_HOST, T_SEQ, T_JOIN } task_kind;

struct oxide_task {
    uint32_t magic;
    _Atomic int refs;
    task_kind kind;
    oxide_device *dev;
    union task_u {
        struct {
            struct oxide_kernel *k;
            oxide_launch_config cfg;
            oxide_arg *args; /* copies; BYTES, TMA_DESC and TENSOR point into bytes */
            size_t nargs;
            unsigned char *bytes;
        } launch;
        struct {
            uint64_t dst, src; /* device addresses */
            void *hdst;        /* DTOH */
            const void *hsrc;  /* HTOD */
            size_t bytes;
        } copy;
        struct {
            uint64_t dst;
            uint32_t value;
            size_t count;
            unsigned elem;
        } memset;
        struct {
            oxide_host_fn fn;
            void *user;
        } host;
        struct {
            oxide_task **parts;
            size_t n;
        } group;
    } u;
};

/* A task of kind with payload u (whole: what it owns is the task's once this succeeds), in *out. */
static oxide_status new_task(oxide_device *dev, task_kind kind, union task_u u, oxide_task **out, const char *fn) {
    if (oxide__rt_check_device(dev) != OXIDE_OK)
        return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s", fn);
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    oxide_task *t = calloc(1, sizeof *t);
    if (!t)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
    t->magic = RT_TASK;
    atomic_init(&t->refs, 1);
    t->kind = kind;
    t->dev = dev;
    t->u = u;
    *out = t;
    return OXIDE_OK;
}

static oxide_status check_task(const oxide_task *t, const char *fn) {
    if (!t)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: task is NULL", fn);
    if (t->magic != RT_TASK)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: not a task handle", fn);
    return OXIDE_OK;
}

/* The bytes a task keeps a copy of for one (already checked) argument: what it points at. */
static size_t held_size(const oxide_arg *a) {
    if (a->kind == OXIDE_ARG_BYTES || a->kind == OXIDE_ARG_TMA_DESC)
        return a->size;
    return a->kind == OXIDE_ARG_TENSOR ? sizeof(oxide_tensor) : 0;
}

oxide_status oxide_task_launch(oxide_kernel *k, const oxide_launch_config *cfg, const oxide_arg *args, size_t nargs,
                               oxide_task **out) {
    oxide_status st = oxide__rt_check_kernel(k);
    if (st != OXIDE_OK)
        return oxide__fail_prefix(st, "oxide_task_launch");
    if (!cfg)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_launch: cfg is NULL");
    if (cfg->flags & ~OXIDE_LAUNCH_COOPERATIVE)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_launch: unknown flags 0x%x", cfg->flags);
    /* Check now, so that a wrong argument is reported where the task is made. */
    rt_bound b;
    struct oxide_kernel *runs = k; /* checked now; chosen again when the task runs */
    if ((st = oxide__rt_bind(k, args, nargs, &b)) != OXIDE_OK ||
        (st = oxide__rt_pick(&runs, &b, cfg->grid)) != OXIDE_OK)
        return st;
    size_t nbytes = 0;
    for (size_t i = 0; i < nargs; i++)
        nbytes += (held_size(&args[i]) + 15) & ~(size_t)15;
    union task_u u = {.launch = {.k = k, .cfg = *cfg, .nargs = nargs}};
    u.launch.args = malloc((nargs ? nargs : 1) * sizeof *args);
    u.launch.bytes = nbytes ? malloc(nbytes) : NULL;
    if (!u.launch.args || (nbytes && !u.launch.bytes)) {
        free(u.launch.args);
        free(u.launch.bytes);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_task_launch: out of memory");
    }
    if (nargs)
        memcpy(u.launch.args, args, nargs * sizeof *args);
    size_t off = 0;
    for (size_t i = 0; i < nargs; i++)
        if (held_size(&args[i])) {
            /* A tensor is copied as this version's struct (a longer caller's tail is not read). */
            memcpy(u.launch.bytes + off, args[i].bytes, held_size(&args[i]));
            u.launch.args[i].bytes = u.launch.bytes + off;
            if (args[i].kind == OXIDE_ARG_TENSOR)
                ((oxide_tensor *)(void *)(u.launch.bytes + off))->struct_size = sizeof(oxide_tensor);
            off += (held_size(&args[i]) + 15) & ~(size_t)15;
        }
    if ((st = new_task(k->dev, T_LAUNCH, u, out, "oxide_task_launch")) != OXIDE_OK) {
        free(u.launch.args);
        free(u.launch.bytes);
    }
    return st;
}

/* The three copies differ only in which ends are host memory. */
static oxide_status new_copy(oxide_device *dev, task_kind kind, uint64_t dst, void *hdst, uint64_t src,
                             const void *hsrc, size_t bytes, oxide_task **out, const char *what) {
    if (!(dst || hdst) || !(src || hsrc))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what, !(dst || hdst) ? "dst" : "src");
    union task_u u = {.copy = {.dst = dst, .src = src, .hdst = hdst, .hsrc = hsrc, .bytes = bytes}};
    return new_task(dev, kind, u, out, what);
}

oxide_status oxide_task_copy_htod(oxide_device *dev, uint64_t dst, const void *src, size_t bytes, oxide_task **out) {
    return new_copy(dev, T_HTOD, dst, NULL, 0, src, bytes, out, "oxide_task_copy_htod");
}

oxide_status oxide_task_copy_dtoh(oxide_device *dev, void *dst, uint64_t src, size_t bytes, oxide_task **out) {
    return new_copy(dev, T_DTOH, 0, dst, src, NULL, bytes, out, "oxide_task_copy_dtoh");
}

oxide_status oxide_task_copy_dtod(oxide_device *dev, uint64_t dst, uint64_t src, size_t bytes, oxide_task **out) {
    return new_copy(dev, T_DTOD, dst, NULL, src, NULL, bytes, out, "oxide_task_copy_dtod");
}

oxide_status oxide_task_memset(oxide_device *dev, uint64_t dst, uint32_t value, size_t count, unsigned elem_size,
                               oxide_task **out) {
    if (!dst)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_memset: dst is NULL");
    if (elem_size != 1 && elem_size != 2 && elem_size != 4)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_memset: elem_size %u (must be 1, 2 or 4)",
                           elem_size);
    if ((elem_size == 1 && value > 0xff) || (elem_size == 2 && value > 0xffff))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_memset: value 0x%x does not fit in %u byte(s)",
                           value, elem_size);
    union task_u u = {.memset = {.dst = dst, .value = value, .count = count, .elem = elem_size}};
    return new_task(dev, T_MEMSET, u, out, "oxide_task_memset");
}

oxide_status oxide_task_host_fn(oxide_device *dev, oxide_host_fn fn, void *user, oxide_task **out) {
    if (!fn)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_task_host_fn: fn is NULL");
    union task_u u = {.host = {.fn = fn, .user = user}};
    return new_task(dev, T_HOST, u, out, "oxide_task_host_fn");
}

static oxide_status group(task_kind kind, oxide_task *const *tasks, size_t n, oxide_task **out, const char *fn) {
    if (!tasks || !n)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: no tasks given", fn);
    for (size_t i = 0; i < n; i++) {
        if (!tasks[i] || tasks[i]->magic != RT_TASK)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: task %zu is %s", fn, i,
                               tasks[i] ? "not a task handle" : "NULL");
        if (tasks[i]->dev != tasks[0]->dev)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "%s: task %zu runs on device %d, task 0 on device %d (a composed task uses one device)",
                               fn, i, tasks[i]->dev->index, tasks[0]->dev->index);
    }
    union task_u u = {.group = {.parts = malloc(n * sizeof *tasks), .n = n}};
    if (!u.group.parts)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
    oxide_status st = new_task(tasks[0]->dev, kind, u, out, fn);
    if (st != OXIDE_OK) {
        free(u.group.parts);
        return st;
    }
    /* The parts are held only once the group exists. */
    for (size_t i = 0; i < n; i++) {
        atomic_fetch_add_explicit(&tasks[i]->refs, 1, memory_order_relaxed);
        u.group.parts[i] = tasks[i];
    }
    return OXIDE_OK;
}

oxide_status oxide_task_sequence(oxide_task *const *tasks, size_t n, oxide_task **out) {
    return group(T_SEQ, tasks, n, out, "oxide_task_sequence");
}

oxide_status oxide_task_join(oxide_task *const *tasks, size_t n, oxide_task **out) {
    return group(T_JOIN, tasks, n, out, "oxide_task_join");
}

void oxide_task_destroy(oxide_task *t) {
    if (!t || t->magic != RT_TASK)
        return;
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (t->kind == T_LAUNCH) {
        free(t->u.launch.args);
        free(t->u.launch.bytes);
    } else if (t->kind == T_SEQ || t->kind == T_JOIN) {
        for (size_t i = 0; i < t->u.group.n; i++)
            oxide_task_destroy(t->u.group.parts[i]);
        free(t->u.group.parts);
    }
    t->magic = 0;
    free(t);
}

/* ---- running ---- */

/* Helper streams and events taken during one submission; given back only when it is complete,
 * because during a capture a helper stream belongs to the capture until it ends. */
/* Handles of one kind (streams or events) taken from the device's pools for one submission. */
typedef struct handles {
    void **items;
    size_t n, cap;
    size_t next; /* taken before a capture, handed out during it */
} handles;

typedef struct borrowed {
    oxide_device *dev;
    uint32_t gen;
    handles streams, events;
} borrowed;

static oxide_status take_stream(oxide_device *dev, void **out) {
    CUstream s;
    oxide_status st = oxide__rt_pool_stream(dev, &s);
    *out = s;
    return st;
}

static oxide_status take_event(oxide_device *dev, void **out) {
    CUevent e;
    oxide_status st = oxide__rt_pool_event(dev, &e);
    *out = e;
    return st;
}

/* The next handle: one taken ahead of time if there is one, else a new one from the pool. */
static oxide_status borrow(handles *h, oxide_status (*take)(oxide_device *, void **), oxide_device *dev, void **out) {
    if (h->next < h->n) {
        *out = h->items[h->next++];
        return OXIDE_OK;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        void **items = realloc(h->items, cap * sizeof *items);
        if (!items)
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory running a task");
        h->items = items;
        h->cap = cap;
    }
    oxide_status st = take(dev, out);
    if (st == OXIDE_OK) {
        h->items[h->n++] = *out;
        h->next = h->n;
    }
    return st;
}

static oxide_status borrow_stream(borrowed *b, CUstream *out) {
    void *h = NULL;
    oxide_status st = borrow(&b->streams, take_stream, b->dev, &h);
    *out = h;
    return st;
}

static oxide_status borrow_event(borrowed *b, CUevent *out) {
    void *h = NULL;
    oxide_status st = borrow(&b->events, take_event, b->dev, &h);
    *out = h;
    return st;
}

/* Helper streams and events a task's joins use. */
static void count_helpers(const oxide_task *t, size_t *streams, size_t *events) {
    if (t->kind != T_SEQ && t->kind != T_JOIN)
        return;
    if (t->kind == T_JOIN && t->u.group.n > 1) {
        *streams += t->u.group.n - 1;
        *events += t->u.group.n;
    }
    for (size_t i = 0; i < t->u.group.n; i++)
        count_helpers(t->u.group.parts[i], streams, events);
}

/* Creating streams and events is best kept out of a capture: take all that t needs now, to be
 * handed out again from the first one after the first `keep` streams. */
static oxide_status borrow_ahead(borrowed *b, const oxide_task *t, size_t keep) {
    size_t ns = 0, ne = 0;
    count_helpers(t, &ns, &ne);
    oxide_status st = OXIDE_OK;
    CUstream s;
    CUevent e;
    for (size_t i = 0; st == OXIDE_OK && i < ns; i++)
        st = borrow_stream(b, &s);
    for (size_t i = 0; st == OXIDE_OK && i < ne; i++)
        st = borrow_event(b, &e);
    b->streams.next = keep;
    b->events.next = 0;
    return st;
}

static void give_back(borrowed *b) {
    for (size_t i = 0; i < b->streams.n; i++)
        oxide__rt_unpool_stream(b->dev, b->streams.items[i], b->gen);
    for (size_t i = 0; i < b->events.n; i++)
        oxide__rt_unpool_event(b->dev, b->events.items[i], b->gen);
    free(b->streams.items);
    free(b->events.items);
}

static oxide_status run(const oxide_task *t, CUstream cs, oxide_stream *track, borrowed *b) {
    oxide_device *dev = t->dev;
    CUresult r = CUDA_SUCCESS;
    oxide_status st;
    switch (t->kind) {
    case T_LAUNCH: {
        rt_bound bound;
        struct oxide_kernel *k = t->u.launch.k;
        if (k->magic != RT_KERNEL)
            return oxide__fail(OXIDE_ERROR_STATE, "a task's kernel was destroyed (its module was unloaded)");
        if ((st = oxide__rt_bind(k, t->u.launch.args, t->u.launch.nargs, &bound)) != OXIDE_OK ||
            (st = oxide__rt_pick(&k, &bound, t->u.launch.cfg.grid)) != OXIDE_OK)
            return st;
        const oxide_launch_config *c = &t->u.launch.cfg;
        return oxide__rt_launch(k, cs, track, c->grid, c->block, c->smem, c->cluster, c->flags, bound.params);
    }
    case T_HTOD:
        if (t->u.copy.bytes)
            r = oxide__cu.MemcpyHtoDAsync(t->u.copy.dst, t->u.copy.hsrc, t->u.copy.bytes, cs);
        break;
    case T_DTOH:
        if (t->u.copy.bytes)
            r = oxide__cu.MemcpyDtoHAsync(t->u.copy.hdst, t->u.copy.src, t->u.copy.bytes, cs);
        break;
    case T_DTOD:
        if (t->u.copy.bytes)
            r = oxide__cu.MemcpyDtoDAsync(t->u.copy.dst, t->u.copy.src, t->u.copy.bytes, cs);
        break;
    case T_MEMSET:
        if (t->u.memset.count)
            r = oxide__rt_memset(t->u.memset.dst, t->u.memset.value, t->u.memset.count, t->u.memset.elem, cs, true);
        break;
    case T_HOST: r = oxide__cu.LaunchHostFunc(cs, t->u.host.fn, t->u.host.user); break;
    case T_SEQ:
        for (size_t i = 0; i < t->u.group.n; i++)
            if ((st = run(t->u.group.parts[i], cs, track, b)) != OXIDE_OK)
                return st;
        return OXIDE_OK;
    case T_JOIN: {
        size_t n = t->u.group.n;
        if (n == 1)
            return run(t->u.group.parts[0], cs, track, b);
        CUevent fork;
        if ((st = borrow_event(b, &fork)) != OXIDE_OK)
            return st;
        if ((r = oxide__cu.EventRecord(fork, cs)) != CUDA_SUCCESS)
            break;
        /* Part 0 runs on the caller's stream, the others on helpers that wait for the fork and
         * signal their end; the caller's stream waits for every end. */
        for (size_t i = 1; i < n; i++) {
            CUstream hs;
            CUevent done;
            if ((st = borrow_stream(b, &hs)) != OXIDE_OK || (st = borrow_event(b, &done)) != OXIDE_OK)
                return st;
            if ((r = oxide__cu.StreamWaitEvent(hs, fork, 0)) != CUDA_SUCCESS)
                break;
            if ((st = run(t->u.group.parts[i], hs, NULL, b)) != OXIDE_OK)
                return st;
            if ((r = oxide__cu.EventRecord(done, hs)) != CUDA_SUCCESS)
                break;
            if ((r = oxide__cu.StreamWaitEvent(cs, done, 0)) != CUDA_SUCCESS)
                break;
        }
        if (r != CUDA_SUCCESS)
            break;
        return run(t->u.group.parts[0], cs, track, b);
    }
    }
    if (r != CUDA_SUCCESS) {
        static const char *const names[] = {"launch",
                                            "host-to-device copy",
                                            "device-to-host copy",
                                            "device-to-device copy",
                                            "memset",
                                            "host function",
                                            "sequence",
                                            "join"};
        const char *hint = r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && (t->kind == T_HTOD || t->kind == T_DTOH)
                               ? " (during graph capture, copies need pinned host memory: oxide_host_alloc)"
                               : "";
        return oxide__rt_cuda(dev, r, NULL, "task %s on device %d%s", names[t->kind], dev->index, hint);
    }
    return OXIDE_OK;
}

static oxide_status submit(oxide_task *t, oxide_stream *stream, CUstream *cs_out, oxide_stream **track_out,
                           const char *fn) {
    oxide_status st = check_task(t, fn);
    if (st != OXIDE_OK)
        return st;
    oxide_device *dev = t->dev;
    CUstream cs;
    oxide_stream *track;
    if ((st = oxide__rt_stream(dev, stream, &cs, &track)) != OXIDE_OK)
        return oxide__fail_prefix(st, "%s", fn);
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK)
        return st;
    borrowed b = {.dev = dev, .gen = oxide__rt_gen(dev)};
    st = run(t, cs, track, &b);
    give_back(&b);
    *cs_out = cs;
    *track_out = track;
    return st;
}

oxide_status oxide_task_submit(oxide_task *t, oxide_stream *stream) {
    CUstream cs;
    oxide_stream *track;
    return submit(t, stream, &cs, &track, "oxide_task_submit");
}

oxide_status oxide_task_sync(oxide_task *t, oxide_stream *stream) {
    CUstream cs;
    oxide_stream *track;
    oxide_status st = submit(t, stream, &cs, &track, "oxide_task_sync");
    if (st != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.StreamSynchronize(cs);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(t->dev, r, atomic_load_explicit(&track->last_kernel, memory_order_relaxed),
                              "oxide_task_sync (device %d)", t->dev->index);
    return OXIDE_OK;
}

/* ---- graphs ---- */

oxide_status oxide__rt_graph_from(oxide_device *dev, CUgraph graph, oxide_graph **out) {
    oxide_graph *g = calloc(1, sizeof *g);
    if (!g)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory making a graph");
    CUresult r = oxide__cu.GraphInstantiate(&g->exec, graph, 0);
    if (r != CUDA_SUCCESS) {
        free(g);
        return oxide__rt_cuda(dev, r, NULL, "instantiating a CUDA graph on device %d", dev->index);
    }
    g->magic = RT_GRAPH;
    g->dev = dev;
    g->gen = oxide__rt_gen(dev);
    *out = g;
    return OXIDE_OK;
}

oxide_status oxide_graph_create(oxide_task *t, oxide_graph **out) {
    oxide_status st = check_task(t, "oxide_graph_create");
    if (st != OXIDE_OK)
        return st;
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_graph_create: out is NULL");
    oxide_device *dev = t->dev;
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK)
        return st;
    borrowed b = {.dev = dev, .gen = oxide__rt_gen(dev)};
    CUstream cs;
    /* streams[0] is the capture stream itself */
    if ((st = borrow_stream(&b, &cs)) != OXIDE_OK || (st = borrow_ahead(&b, t, 1)) != OXIDE_OK) {
        give_back(&b);
        return st;
    }
    CUresult r = oxide__cu.StreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS) {
        give_back(&b);
        return oxide__rt_cuda(dev, r, NULL, "oxide_graph_create: beginning a stream capture on device %d", dev->index);
    }
    st = run(t, cs, NULL, &b);
    /* The capture must end even after a failure, or the helper stream stays unusable. */
    CUgraph graph = NULL;
    r = oxide__cu.StreamEndCapture(cs, &graph);
    if (st == OXIDE_OK && r != CUDA_SUCCESS)
        st = oxide__rt_cuda(dev, r, NULL, "oxide_graph_create: capturing the task on device %d", dev->index);
    if (st == OXIDE_OK)
        st = oxide__rt_graph_from(dev, graph, out);
    if (graph)
        oxide__cu.GraphDestroy(graph);
    give_back(&b);
    return st;
}

oxide_status oxide_graph_launch(oxide_graph *g, oxide_stream *stream) {
    if (!g || g->magic != RT_GRAPH)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_graph_launch: %s",
                           g ? "not a graph handle" : "graph is NULL");
    oxide_status st = oxide__rt_check_gen(g->dev, g->gen, "the graph");
    if (st != OXIDE_OK)
        return st;
    CUstream cs;
    oxide_stream *track;
    if ((st = oxide__rt_stream(g->dev, stream, &cs, &track)) != OXIDE_OK)
        return oxide__fail_prefix(st, "oxide_graph_launch");
    if ((st = oxide__rt_enter(g->dev)) != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.GraphLaunch(g->exec, cs);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(g->dev, r, NULL, "oxide_graph_launch on device %d", g->dev->index);
    return OXIDE_OK;
}

void oxide_graph_destroy(oxide_graph *g) {
    if (!g || g->magic != RT_GRAPH)
        return;
    if (g->gen == oxide__rt_gen(g->dev) && oxide__rt_enter(g->dev) == OXIDE_OK)
        OXIDE__RELAXED(oxide__cu.GraphExecDestroy(g->exec));
    g->magic = 0;
    free(g);
}
