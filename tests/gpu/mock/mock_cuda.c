/* The tests' one fake CUDA driver (libcuda.so.1, found through OXIDE_CUDA_DRIVER), so that GPU
 * code paths run on machines without a GPU: the runtime's logic -- argument binding, streams,
 * events, tasks, joins, stream capture, graphs, the fault policy, load errors -- in the GPU tests
 * (ctest label `mock`), and the bindings' plumbing (C++ `*_fakedriver` tests, scripts/test-python).
 *
 * It is no model of the hardware: work runs synchronously when it is queued (a valid order of
 * any stream schedule) and device memory is zeroed host memory. The kernels of
 * tests/gpu/data/kernels.cu, test_gpu_tensor.c's, the bindings' vecadd, saxpy, Rust map and Rust
 * tile matmul_bf16 kernels, those of examples/rust's graph_replay, pinned_copy and slices, and
 * examples/c's gemm_mma (for multi_gpu_gemm) are re-implemented in C; any other PTX entry loads,
 * with the parameters its PTX declares, and launches as a no-op. Returning an error where CUDA
 * would is part of the contract: sticky faults, bad launch shapes, cooperative grids that do not
 * fit, PTX the JIT would refuse.
 *
 * OXIDE_MOCK_DEVICES=N (1..4, default 1) makes it N devices, each with its own primary context.
 * Every allocation remembers the device whose context was current, so that peer copies, peer
 * access and cuPointerGetAttributes answer as on a machine of N GPUs; OXIDE_MOCK_PEER=0 makes
 * peer access impossible between every pair (as between GPUs on separate PCIe roots). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

#define EXPORT __attribute__((visibility("default")))
#define SMS 132
#define SMEM_OPTIN 232448

static CUresult sticky; /* a fault poisons the context until the primary context is reset */

#define MAX_DEVICES 4
struct CUctx_st {
    int ordinal;
};
static struct CUctx_st primary[MAX_DEVICES] = {{0}, {1}, {2}, {3}};
static _Thread_local CUcontext current;

static int ndevices(void) {
    const char *v = getenv("OXIDE_MOCK_DEVICES");
    int n = v ? atoi(v) : 1;
    return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}
static int current_device(void) { return current ? current->ordinal : 0; }

/* ---- which device each allocation lives on ---- */

typedef struct allocation {
    uintptr_t base;
    size_t size;
    int device;
} allocation;
static allocation *allocs;
static size_t nallocs, cap_allocs;
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static int peer_enabled[MAX_DEVICES][MAX_DEVICES]; /* [from][to]: from's kernels may touch to's memory */

static void remember(uintptr_t base, size_t size, int device) {
    pthread_mutex_lock(&allocs_lock);
    if (nallocs == cap_allocs) {
        size_t cap = cap_allocs ? cap_allocs * 2 : 64;
        allocation *a = realloc(allocs, cap * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&allocs_lock);
            return;
        }
        allocs = a;
        cap_allocs = cap;
    }
    allocs[nallocs++] = (allocation){base, size, device};
    pthread_mutex_unlock(&allocs_lock);
}
static void forget(uintptr_t base) {
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < nallocs; i++)
        if (allocs[i].base == base) {
            allocs[i] = allocs[--nallocs];
            break;
        }
    pthread_mutex_unlock(&allocs_lock);
}
/* The device of the allocation holding [p, p + n), or -1 (host memory, or not one allocation). */
static int device_of(uintptr_t p, size_t n) {
    int d = -1;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < nallocs && d < 0; i++)
        if (p >= allocs[i].base && p - allocs[i].base + n <= allocs[i].size)
            d = allocs[i].device;
    pthread_mutex_unlock(&allocs_lock);
    return d;
}

/* ---- kernels on the CPU ---- */

typedef struct dims {
    unsigned grid[3], block[3], cluster[3];
    unsigned smem;
} dims;

typedef void (*kernel_fn)(void **p, const dims *d);

static double as_f64(const void *p, int size, int is_float, int is_signed) {
    if (is_float)
        return size == 4 ? *(const float *)p : *(const double *)p;
    switch (size) {
    case 1: return is_signed ? (double)*(const int8_t *)p : (double)*(const uint8_t *)p;
    case 2: return is_signed ? (double)*(const int16_t *)p : (double)*(const uint16_t *)p;
    case 4: return is_signed ? (double)*(const int32_t *)p : (double)*(const uint32_t *)p;
    default: return is_signed ? (double)*(const int64_t *)p : (double)*(const uint64_t *)p;
    }
}

#define P(i, T) (*(T *)p[i])
static uint64_t threads(const dims *d) {
    return (uint64_t)d->grid[0] * d->grid[1] * d->grid[2] * d->block[0] * d->block[1] * d->block[2];
}

static void k_vecadd(void **p, const dims *d) {
    const float *a = P(0, const float *), *b = P(2, const float *);
    float *out = P(4, float *);
    uint64_t n = threads(d), la = P(1, uint64_t), lb = P(3, uint64_t), lo = P(5, uint64_t);
    for (uint64_t i = 0; i < n; i++)
        if (i < la && i < lb && i < lo)
            out[i] = a[i] + b[i];
}

static void k_scalars(void **p, const dims *d) {
    (void)d;
    double *out = P(13, double *);
    static const int size[13] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 2, 2};
    static const int flt[13] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0};
    static const int sgn[13] = {1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 13; i++)
        out[i] = as_f64(p[i], size[i], flt[i], sgn[i]);
    out[10] = *(const uint8_t *)p[10] ? 1.0 : 0.0;
}

static void k_affine(void **p, const dims *d) {
    const unsigned char *bytes = p[0];
    float a;
    double b;
    memcpy(&a, bytes, 4);
    memcpy(&b, bytes + 8, 8);
    const float *x = P(1, const float *);
    float *y = P(3, float *);
    uint64_t n = threads(d), lx = P(2, uint64_t), ly = P(4, uint64_t);
    for (uint64_t i = 0; i < n; i++)
        if (i < lx && i < ly)
            y[i] = a * x[i] + (float)b;
}

static void k_inc(void **p, const dims *d) {
    float *x = P(0, float *);
    uint64_t n = threads(d), len = P(1, uint64_t);
    for (uint64_t i = 0; i < n && i < len; i++)
        x[i] += 1.0f;
}

static void k_cluster_ranks(void **p, const dims *d) {
    uint32_t *out = P(0, uint32_t *);
    unsigned size = d->cluster[0] * d->cluster[1] * d->cluster[2];
    for (unsigned b = 0; b < d->grid[0]; b++)
        out[b] = (b % d->cluster[0]) | size << 16;
}

static void k_all_resident(void **p, const dims *d) {
    uint32_t *counter = P(0, uint32_t *), *out = P(1, uint32_t *);
    *counter += d->grid[0];
    for (unsigned b = 0; b < d->grid[0]; b++)
        out[b] = *counter;
}

static void k_smem_sum(void **p, const dims *d) {
    uint32_t words = P(0, uint32_t);
    uint64_t *out = P(1, uint64_t *);
    *out = words * 4 <= d->smem ? (uint64_t)words * (words - 1) / 2 : 0;
}

static void k_spin(void **p, const dims *d) {
    (void)d;
    uint64_t cycles = P(0, uint64_t);
    struct timespec ts = {(time_t)(cycles / 2000000000ull), (long)(cycles % 2000000000ull / 2)};
    nanosleep(&ts, NULL);
}

static void k_oob(void **p, const dims *d) {
    (void)p, (void)d;
    sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
}

static void k_tma_echo(void **p, const dims *d) {
    (void)d;
    memcpy(P(1, uint64_t *), p[0], 128);
}

static void k_empty(void **p, const dims *d) { (void)p, (void)d; }

/* tests/gpu/test_gpu_tensor.c: the tensor's PTX parameters (n of them), then the block shape,
 * into the u64 slice after them. */
static void tensor_echo(void **p, const dims *d, int n) {
    uint64_t *out = P(n, uint64_t *);
    for (int i = 0; i < n; i++)
        out[i] = P(i, uint64_t);
    for (int i = 0; i < 3; i++)
        out[5 + i] = d->block[i];
}
static void k_tensor_echo(void **p, const dims *d) { tensor_echo(p, d, 5); }
static void k_tensor_echo8(void **p, const dims *d) { tensor_echo(p, d, 3); }
static void k_grid_echo(void **p, const dims *d) { /* the launched grid, then the grid parameters */
    uint64_t *out = P(0, uint64_t *);
    for (int i = 0; i < 3; i++)
        out[i] = d->grid[i], out[3 + i] = *(const uint32_t *)p[2 + i];
}

static void k_contract_fill(void **p, const dims *d) { /* tests/gpu/data/contract.ptx */
    uint32_t *out = P(0, uint32_t *);
    uint64_t n = threads(d), len = P(1, uint64_t);
    for (uint64_t i = 0; i < n && i < len; i++)
        out[i] = (uint32_t)(3 * i + 1);
}

/* The bindings' kernels (tests/bindings/python/kernels.py and the Rust examples). */
static void k_saxpy(void **p, const dims *d) { /* a, x, xlen, y, ylen, n */
    float a = P(0, float), *x = P(1, float *), *y = P(3, float *);
    uint64_t n = threads(d), len = P(5, uint64_t);
    for (uint64_t i = 0; i < n && i < len; i++)
        y[i] = a * x[i] + y[i];
}

static void k_map_f32(void **p, const dims *d) { /* Rust map::<f32>(move |x| x * k + 1.0) */
    float k = P(0, float), *x = P(1, float *), *o = P(3, float *);
    uint64_t n = threads(d), len = P(4, uint64_t);
    for (uint64_t i = 0; i < n && i < len; i++)
        o[i] = x[i] * k + 1.0f;
}

/* Rust matmul_bf16 (examples/rust/tile_matmul's tile kernel): C = A·B over bf16 tensors, each a
 * pointer, 2 dims and 2 strides (in elements); f32 sums, rounded to the nearest even bf16. Any
 * grid: the whole product at once. */
static float bf16_value(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float x;
    memcpy(&x, &b, 4);
    return x;
}

static void k_matmul_bf16(void **p, const dims *d) {
    (void)d;
    const uint16_t *a = P(0, const uint16_t *), *b = P(5, const uint16_t *);
    uint16_t *c = P(10, uint16_t *);
    int64_t m = P(11, int64_t), n = P(12, int64_t), k = P(2, int64_t);
    int64_t as0 = P(3, int64_t), as1 = P(4, int64_t), bs0 = P(8, int64_t), bs1 = P(9, int64_t);
    int64_t cs0 = P(13, int64_t), cs1 = P(14, int64_t);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float sum = 0;
            for (int64_t x = 0; x < k; x++)
                sum += bf16_value(a[i * as0 + x * as1]) * bf16_value(b[x * bs0 + j * bs1]);
            uint32_t u;
            memcpy(&u, &sum, 4);
            c[i * cs0 + j * cs1] = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        }
}

static void k_map_f64(void **p, const dims *d) { /* Rust map::<f64>(move |x| x * kd - 2.0) */
    double k = P(0, double), *x = P(1, double *), *o = P(3, double *);
    uint64_t n = threads(d), len = P(4, uint64_t);
    for (uint64_t i = 0; i < n && i < len; i++)
        o[i] = x[i] * k - 2.0;
}

/* examples/rust: graph_replay's axpy (a, x, y: y += a * x) and bump (k, x: x = x * k + 1),
 * pinned_copy's scale_shift (k, x: x = x * k - 3), slices' affine (a, x, out: out = a * x +
 * len(x)); a slice is its pointer and length. */
static uint64_t min2(uint64_t a, uint64_t b) { return a < b ? a : b; }
static void k_axpy(void **p, const dims *d) {
    float a = P(0, float), *x = P(1, float *), *y = P(3, float *);
    for (uint64_t i = 0, n = min2(min2(threads(d), P(2, uint64_t)), P(4, uint64_t)); i < n; i++)
        y[i] += a * x[i];
}
static void k_bump(void **p, const dims *d) {
    float k = P(0, float), *x = P(1, float *);
    for (uint64_t i = 0, n = min2(threads(d), P(2, uint64_t)); i < n; i++)
        x[i] = x[i] * k + 1.0f;
}
static void k_scale_shift(void **p, const dims *d) {
    float k = P(0, float), *x = P(1, float *);
    for (uint64_t i = 0, n = min2(threads(d), P(2, uint64_t)); i < n; i++)
        x[i] = x[i] * k - 3.0f;
}
static void k_affine_len(void **p, const dims *d) {
    float a = P(0, float), *x = P(1, float *), *o = P(3, float *);
    uint64_t xl = P(2, uint64_t);
    for (uint64_t i = 0, n = min2(min2(threads(d), xl), P(4, uint64_t)); i < n; i++)
        o[i] = a * x[i] + (float)xl;
}

/* examples/c's gemm_mma (a, b: bf16 slices, c: f32 slice, m, n, k): C = A B, accumulated in f32
 * in order of k, the whole product at once whatever the grid. */
static float bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void k_gemm_bf16(void **p, const dims *d) {
    (void)d;
    const uint16_t *a = P(0, const uint16_t *), *b = P(2, const uint16_t *);
    float *c = P(4, float *);
    uint32_t m = P(6, uint32_t), n = P(7, uint32_t), k = P(8, uint32_t);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            float acc = 0;
            for (uint32_t l = 0; l < k; l++)
                acc += bf16(a[(size_t)i * k + l]) * bf16(b[(size_t)l * n + j]);
            c[(size_t)i * n + j] = acc;
        }
}

/* Entries emulated by the start of their name (Rust's generic kernels carry a hash, which
 * tests/bindings/data/regen.sh prints: keep the two map entries here in step with it). */
static const struct {
    const char *prefix;
    kernel_fn fn;
} by_prefix[] = {
    {"saxpy", k_saxpy}, {"map_5a26f0cf", k_map_f32},    {"map_fb0c0cb7", k_map_f64}, {"axpy", k_axpy},
    {"bump", k_bump},   {"scale_shift", k_scale_shift}, {"affine", k_affine_len},    {"gemm_mma", k_gemm_bf16}};

#define MAX_PARAMS 32
struct CUfunc_st {
    const char *name;
    kernel_fn fn;
    int nparams;
    int sizes[MAX_PARAMS];
    int max_dyn_smem;
    int nonportable;
    char *owned_name; /* an entry found in the PTX only: its name, freed with the module */
};

static const struct CUfunc_st kernels[] = {
    {"vecadd", k_vecadd, 6, {8, 8, 8, 8, 8, 8}, 0, 0, NULL},
    {"scalars", k_scalars, 14, {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 2, 2, 8}, 0, 0, NULL},
    {"affine_bytes", k_affine, 5, {16, 8, 8, 8, 8}, 0, 0, NULL},
    {"inc", k_inc, 2, {8, 8}, 0, 0, NULL},
    {"cluster_ranks", k_cluster_ranks, 1, {8}, 0, 0, NULL},
    {"all_resident", k_all_resident, 2, {8, 8}, 0, 0, NULL},
    {"smem_sum", k_smem_sum, 2, {4, 8}, 0, 0, NULL},
    {"spin", k_spin, 1, {8}, 0, 0, NULL},
    {"oob_write", k_oob, 1, {8}, 0, 0, NULL},
    {"tma_echo", k_tma_echo, 2, {128, 8}, 0, 0, NULL},
    {"empty", k_empty, 0, {0}, 0, 0, NULL},
    {"tensor_echo", k_tensor_echo, 7, {8, 8, 8, 8, 8, 8, 8}, 0, 0, NULL},
    {"tensor_echo8", k_tensor_echo8, 5, {8, 8, 8, 8, 8}, 0, 0, NULL},
    {"grid_echo", k_grid_echo, 5, {8, 8, 4, 4, 4}, 0, 0, NULL},
    {"contract_fill", k_contract_fill, 2, {8, 8}, 0, 0, NULL},
    {"matmul_bf16", k_matmul_bf16, 15, {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, 0, 0, NULL},
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

struct CUmod_st {
    struct CUfunc_st *funcs;
    size_t n;
};

/* The byte size of one PTX parameter declaration ".param [.align N] .TYPE name[[COUNT]]". */
static int ptx_param_size(const char *decl, const char *end) {
    int elem = 0;
    for (const char *t = decl; t < end && !elem; t++) {
        if (*t != '.' || (t[1] != 'u' && t[1] != 's' && t[1] != 'b' && t[1] != 'f'))
            continue;
        int bits = atoi(t + 2);
        elem = bits == 8 || bits == 16 || bits == 32 || bits == 64 ? bits / 8 : 0;
    }
    const char *br = memchr(decl, '[', (size_t)(end - decl));
    return br ? elem * atoi(br + 1) : elem;
}

/* The entries of a PTX text: the test kernels as the table has them, any other one with the
 * parameter sizes its declaration gives. Returns 0, or CUDA_ERROR_INVALID_PTX. */
static CUresult ptx_entries(struct CUmod_st *mod, const char *text) {
    for (const char *at = text; (at = strstr(at, ".entry ")); at++) {
        const char *name = at + 7, *open = strchr(name, '('), *close = open ? strchr(open, ')') : NULL;
        if (!close)
            return CUDA_ERROR_INVALID_PTX;
        struct CUfunc_st f = {.fn = k_empty};
        size_t len = (size_t)(open - name);
        for (size_t k = 0; k < NKERNELS && !f.name; k++)
            if (strlen(kernels[k].name) == len && !strncmp(kernels[k].name, name, len))
                f = kernels[k];
        if (!f.name) {
            f.name = f.owned_name = strndup(name, len);
            if (!f.name)
                return CUDA_ERROR_OUT_OF_MEMORY;
            for (size_t k = 0; k < sizeof by_prefix / sizeof by_prefix[0]; k++)
                if (!strncmp(name, by_prefix[k].prefix, strlen(by_prefix[k].prefix)))
                    f.fn = by_prefix[k].fn;
            for (const char *d = open; (d = strstr(d, ".param")) && d < close; d++) {
                const char *e = d + 6;
                while (e < close && *e != ',')
                    e++;
                if (f.nparams == MAX_PARAMS)
                    return CUDA_ERROR_INVALID_PTX;
                f.sizes[f.nparams++] = ptx_param_size(d + 6, e);
            }
        }
        mod->funcs[mod->n++] = f;
    }
    return CUDA_SUCCESS;
}

static void free_module(struct CUmod_st *m) {
    for (size_t k = 0; k < m->n; k++)
        free(m->funcs[k].owned_name);
    free(m->funcs);
    free(m);
}

/* ---- queued work: run now, or recorded while a stream is captured ---- */

typedef enum { OP_COPY, OP_SET, OP_KERNEL, OP_HOST, OP_CALLBACK } op_kind;
typedef struct op {
    op_kind kind;
    void *dst;
    const void *src;
    size_t n;
    uint32_t value;
    unsigned elem;
    struct CUfunc_st *f;
    dims d;
    unsigned char *pbuf; /* captured parameter values */
    CUhostFn host;
    CUstreamCallback callback;
    void *user;
} op;

struct CUgraph_st {
    op *ops;
    size_t n, cap;
    int invalid; /* an unsafe call was made during the capture (CUDA's CAPTURE_INVALIDATED) */
};
struct CUgraphExec_st {
    struct CUgraph_st g;
};

struct CUstream_st {
    struct CUgraph_st *capture;
};
struct CUevent_st {
    double t;
    struct CUgraph_st *capture;
    unsigned flags;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void run_op(const op *o) {
    switch (o->kind) {
    case OP_COPY: memmove(o->dst, o->src, o->n); break;
    case OP_SET:
        for (size_t i = 0; i < o->n; i++) {
            if (o->elem == 1)
                ((uint8_t *)o->dst)[i] = (uint8_t)o->value;
            else if (o->elem == 2)
                ((uint16_t *)o->dst)[i] = (uint16_t)o->value;
            else
                ((uint32_t *)o->dst)[i] = o->value;
        }
        break;
    case OP_KERNEL: {
        void *params[MAX_PARAMS];
        size_t off = 0;
        for (int i = 0; i < o->f->nparams; i++) {
            params[i] = o->pbuf + off;
            off += ((size_t)o->f->sizes[i] + 7) & ~(size_t)7;
        }
        o->f->fn(params, &o->d);
        break;
    }
    case OP_HOST: o->host(o->user); break;
    case OP_CALLBACK: o->callback(NULL, sticky, o->user); break;
    }
}

/* CUDA's rule for captures not begun in relaxed mode: while one is in progress, the thread that
 * began it must make no "potentially unsafe" call (freeing memory or a graph, for instance)
 * unless it has swapped its own mode to relaxed (cuThreadExchangeStreamCaptureMode); such a call
 * invalidates the capture. The mock tracks the captures this thread began. */
static void free_graph(struct CUgraph_st *g);
static _Thread_local struct CUgraph_st *th_captures[16];
static _Thread_local int th_ncaptures, th_mode; /* th_mode: CU_STREAM_CAPTURE_MODE_* */
static void unsafe_call(void) {
    if (th_mode != 2)
        for (int i = 0; i < th_ncaptures; i++)
            th_captures[i]->invalid = 1;
}
EXPORT CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
    int old = th_mode;
    th_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

static CUresult submit(CUstream s, op *o) {
    if (s && s->capture) {
        struct CUgraph_st *g = s->capture;
        if (g->invalid)
            return 901; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 16;
            g->ops = realloc(g->ops, g->cap * sizeof *g->ops);
        }
        g->ops[g->n++] = *o;
        return CUDA_SUCCESS;
    }
    run_op(o);
    if (o->kind == OP_KERNEL)
        free(o->pbuf);
    return CUDA_SUCCESS;
}

#define STICKY()                                                                                                       \
    do {                                                                                                               \
        if (sticky)                                                                                                    \
            return sticky;                                                                                             \
    } while (0)

/* ---- the API ---- */

EXPORT CUresult cuGetErrorName(CUresult r, const char **s) {
    static const struct {
        int code;
        const char *name, *text;
    } names[] = {
        {0, "CUDA_SUCCESS", "no error"},
        {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
        {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
        {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
        {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
        {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
        {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
        {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
        {600, "CUDA_ERROR_NOT_READY", "device not ready"},
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
        {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
        {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"},
        {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
        {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == r) {
            *s = names[i].name;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s) {
    static const char *texts[] = {"invalid argument", "an illegal memory access was encountered"};
    if (r == 700) {
        *s = texts[1];
        return CUDA_SUCCESS;
    }
    if (r == 1) {
        *s = texts[0];
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuInit(unsigned flags) {
    (void)flags;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v) {
    *v = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *d, int i) {
    if (i < 0 || i >= ndevices())
        return CUDA_ERROR_INVALID_DEVICE;
    *d = i;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *n) {
    *n = ndevices();
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    if (d)
        snprintf(name, (size_t)len, "oxide mock GPU %d (CPU)", d);
    else
        snprintf(name, (size_t)len, "oxide mock GPU (CPU)");
    return CUDA_SUCCESS;
}
/* The compute capability: 9.0 (an H200), or OXIDE_MOCK_CC ("8.6"), for the tests of loading
 * that depends on it. */
static int mock_cc(int part) {
    const char *cc = getenv("OXIDE_MOCK_CC");
    int major = 9, minor = 0;
    if (cc && sscanf(cc, "%d.%d", &major, &minor) != 2)
        major = 9, minor = 0;
    return part ? minor : major;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    (void)d;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = SMS; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = mock_cc(0); return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = mock_cc(1); return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = SMEM_OPTIN; return CUDA_SUCCESS;
    default:
        if (attr < 0 || attr > 200)
            return CUDA_ERROR_INVALID_VALUE;
        *v = 1;
        return CUDA_SUCCESS;
    }
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
    (void)d;
    *b = (size_t)80 << 30;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    STICKY();
    if (d < 0 || d >= ndevices())
        return CUDA_ERROR_INVALID_DEVICE;
    *c = &primary[d];
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    (void)d;
    return CUDA_SUCCESS;
}
/* The real driver (580, CUDA 13.0, on an H200) keeps a sticky fault for the whole process: the
 * reset succeeds, the next retain returns the fault. OXIDE_MOCK_RECOVERABLE=1 models drivers
 * that do recover, so that both outcomes of oxide_device_reset are tested. */
EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) {
    (void)d;
    const char *recover = getenv("OXIDE_MOCK_RECOVERABLE");
    if (recover && *recover == '1')
        sticky = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) {
    *c = current;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
    current = c;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void) { return sticky; }

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    STICKY();
    *s = calloc(1, sizeof **s);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamDestroy_v2(CUstream s) {
    free(s);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream s) {
    (void)s;
    return sticky;
}
EXPORT CUresult cuStreamQuery(CUstream s) {
    (void)s;
    return sticky;
}
/* Streams that joined a capture through an event leave it when the capture ends. */
static struct CUstream_st *joined[1024];
static size_t njoined;

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
    (void)flags;
    STICKY();
    if (e->capture && !s)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot join a capture */
    if (e->capture && s->capture != e->capture) {     /* the stream joins the capture, as in CUDA */
        s->capture = e->capture;
        if (njoined < sizeof joined / sizeof joined[0])
            joined[njoined++] = s;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
    if (!s)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s->capture)
        return 401;
    s->capture = calloc(1, sizeof *s->capture);
    if (mode != 2 && th_ncaptures < 16)
        th_captures[th_ncaptures++] = s->capture;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g) {
    if (!s || !s->capture)
        return 401;
    struct CUgraph_st *c = s->capture;
    for (size_t i = 0; i < njoined; i++)
        if (joined[i]->capture == c)
            joined[i]->capture = NULL;
    njoined = 0;
    s->capture = NULL;
    for (int i = 0; i < th_ncaptures; i++)
        if (th_captures[i] == c)
            th_captures[i] = th_captures[--th_ncaptures];
    if (c->invalid) {
        free_graph(c);
        free(c);
        *g = NULL;
        return 901;
    }
    *g = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags) {
    STICKY();
    *e = calloc(1, sizeof **e);
    (*e)->flags = flags;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventDestroy_v2(CUevent e) {
    free(e);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
    STICKY();
    e->t = now_ms();
    e->capture = s ? s->capture : NULL;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventSynchronize(CUevent e) {
    (void)e;
    return sticky;
}
EXPORT CUresult cuEventQuery(CUevent e) {
    (void)e;
    return sticky;
}
EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        return 400;
    *ms = (float)(b->t - a->t);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return cuEventElapsedTime_v2(ms, a, b); }

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    STICKY();
    size_t size = (n + 255) & ~(size_t)255;
    void *m = aligned_alloc(256, size ? size : 256);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(m, 0, size); /* so that reading memory nothing wrote gives the same bytes every run */
    *p = (CUdeviceptr)(uintptr_t)m;
    remember((uintptr_t)m, size ? size : 256, current_device());
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    unsafe_call();
    forget((uintptr_t)p);
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemGetInfo_v2(size_t *f, size_t *t) {
    STICKY();
    *f = (size_t)70 << 30;
    *t = (size_t)80 << 30;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
    (void)flags;
    STICKY();
    *p = malloc(n);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult cuMemFreeHost(void *p) {
    free(p);
    return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t n, CUstream s) {
    STICKY();
    op o = {.kind = OP_COPY, .dst = dst, .src = src, .n = n};
    return submit(s, &o);
}
#define D(p) ((void *)(uintptr_t)(p))
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { return copy(D(d), h, n, NULL); }
EXPORT CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { return copy(h, D(d), n, NULL); }
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr a, CUdeviceptr b, size_t n) { return copy(D(a), D(b), n, NULL); }
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s) { return copy(D(d), h, n, s); }
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s) { return copy(h, D(d), n, s); }
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr a, CUdeviceptr b, size_t n, CUstream s) {
    return copy(D(a), D(b), n, s);
}
static CUresult set(CUdeviceptr d, uint32_t v, size_t n, unsigned elem, CUstream s) {
    STICKY();
    op o = {.kind = OP_SET, .dst = D(d), .value = v, .n = n, .elem = elem};
    return submit(s, &o);
}
EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return set(d, v, n, 1, NULL); }
EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return set(d, v, n, 2, NULL); }
EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return set(d, v, n, 4, NULL); }
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return set(d, v, n, 1, s); }
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return set(d, v, n, 2, s); }
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return set(d, v, n, 4, s); }

EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *opts, void **vals) {
    STICKY();
    char *error_log = NULL;
    size_t error_size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER)
            error_log = vals[i];
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            error_size = (size_t)(uintptr_t)vals[i];
    }
    const char *text = image;
    int elf = !memcmp(image,
                      "\x7f"
                      "ELF",
                      4);
    if (!elf && !strstr(text, ".version"))
        return CUDA_ERROR_INVALID_IMAGE;
    if (!elf && strstr(text, ".version 9.9")) {
        if (error_log)
            snprintf(error_log, error_size, "ptxas fatal   : Unsupported .version 9.9; current version is '9.0'");
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    if (!elf && strstr(text, "bogus.instruction")) {
        if (error_log)
            snprintf(error_log, error_size,
                     "ptxas application ptx input, line 493; error   : Unknown instruction 'bogus.instruction'");
        return CUDA_ERROR_INVALID_PTX;
    }
    struct CUmod_st *mod = calloc(1, sizeof *mod);
    size_t entries = NKERNELS;
    for (const char *at = elf ? NULL : text; at && (at = strstr(at, ".entry ")); at++)
        entries++;
    if (mod)
        mod->funcs = calloc(entries, sizeof *mod->funcs);
    if (!mod || !mod->funcs) {
        free(mod);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (elf) { /* a cubin of the test kernels */
        for (size_t k = 0; k < NKERNELS; k++)
            mod->funcs[mod->n++] = kernels[k];
    } else {
        CUresult r = ptx_entries(mod, text);
        if (r) {
            free_module(mod);
            return r;
        }
    }
    *m = mod;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleUnload(CUmodule m) {
    free_module(m);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    for (size_t k = 0; k < m->n; k++)
        if (!strcmp(m->funcs[k].name, name)) {
            *f = &m->funcs[k];
            return CUDA_SUCCESS;
        }
    /* as cuFuncGetParamInfo's probe below: a failed lookup is an API error to compute-sanitizer,
     * and the runtime knows a PTX module's entries, so asking for one it lacks ends the test */
    fprintf(stderr, "mock libcuda: cuModuleGetFunction(%s): the module has no such entry\n", name);
    abort();
}
EXPORT CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
    switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 16; break;
    case 5: /* PTX_VERSION */
    case 6: /* BINARY_VERSION */ *v = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = f->max_dyn_smem; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *v = f->nonportable; break;
    default: *v = 0;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
    if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (v < 0 || v > SMEM_OPTIN)
            return CUDA_ERROR_INVALID_VALUE;
        f->max_dyn_smem = v;
    } else if (attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
        f->nonportable = v;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size) {
    /* compute-sanitizer reports this error in the caller's program: the runtime must know the
     * parameter count instead of probing for it, so a probe ends the test. */
    if (i >= (size_t)f->nparams) {
        fprintf(stderr, "mock libcuda: cuFuncGetParamInfo(%s, %zu) probes past the last of its %d parameters\n",
                f->name, i, f->nparams);
        abort();
    }
    size_t o = 0;
    for (size_t j = 0; j < i; j++)
        o += (size_t)f->sizes[j];
    *off = o;
    *size = (size_t)f->sizes[i];
    return CUDA_SUCCESS;
}

/* Parameters are kept 8-byte aligned, as the PTX parameter space keeps them. */
static size_t param_bytes(const struct CUfunc_st *f) {
    size_t total = 64;
    for (int i = 0; i < f->nparams; i++)
        total += ((size_t)f->sizes[i] + 7) & ~(size_t)7;
    return (total + 63) & ~(size_t)63;
}

static int occupancy(int block) { return block > 0 ? (2048 / block > 32 ? 32 : 2048 / block) : 0; }

static CUresult launch(CUfunction f, const dims *d, CUstream s, void **params, int cooperative) {
    STICKY();
    unsigned bt = d->block[0] * d->block[1] * d->block[2];
    if (!bt || bt > 1024 || !d->grid[0] || !d->grid[1] || !d->grid[2])
        return CUDA_ERROR_INVALID_VALUE;
    if (d->smem > 48 * 1024 && (int)d->smem > f->max_dyn_smem)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned cs = d->cluster[0] * d->cluster[1] * d->cluster[2];
    if (d->grid[0] % d->cluster[0] || (cs > 8 && !f->nonportable))
        return 912; /* CUDA_ERROR_INVALID_CLUSTER_SIZE */
    if (cooperative && d->grid[0] * d->grid[1] * d->grid[2] > (unsigned)(occupancy((int)bt) * SMS))
        return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    op o = {.kind = OP_KERNEL, .f = f, .d = *d};
    o.pbuf = aligned_alloc(64, param_bytes(f));
    size_t off = 0;
    for (int i = 0; i < f->nparams; i++) {
        memcpy(o.pbuf + off, params[i], (size_t)f->sizes[i]);
        off += ((size_t)f->sizes[i] + 7) & ~(size_t)7;
    }
    return submit(s, &o);
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, CUstream s, void **params, void **extra) {
    (void)extra;
    dims d = {{gx, gy, gz}, {bx, by, bz}, {1, 1, 1}, smem};
    return launch(f, &d, s, params, 0);
}
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
    (void)extra;
    dims d = {{c->gridDimX, c->gridDimY, c->gridDimZ},
              {c->blockDimX, c->blockDimY, c->blockDimZ},
              {1, 1, 1},
              c->sharedMemBytes};
    int coop = 0;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            d.cluster[0] = c->attrs[i].value.clusterDim.x;
            d.cluster[1] = c->attrs[i].value.clusterDim.y;
            d.cluster[2] = c->attrs[i].value.clusterDim.z;
        } else if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
            coop = c->attrs[i].value.cooperative;
        }
    }
    return launch(f, &d, c->hStream, params, coop);
}
EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user) {
    STICKY();
    op o = {.kind = OP_HOST, .host = fn, .user = user};
    return submit(s, &o);
}
/* As in CUDA, not capturable. */
EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback fn, void *user, unsigned flags) {
    STICKY();
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (s && s->capture)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    op o = {.kind = OP_CALLBACK, .callback = fn, .user = user};
    return submit(s, &o);
}
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t smem) {
    (void)f, (void)smem;
    *n = occupancy(block);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *grid, int *block, CUfunction f, CUoccupancyB2DSize fn,
                                                 size_t smem, int limit) {
    (void)f, (void)fn, (void)smem, (void)limit;
    *grid = 2 * SMS;
    *block = 1024;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) {
    (void)flags;
    *e = calloc(1, sizeof **e);
    (*e)->g.n = g->n;
    (*e)->g.ops = malloc((g->n ? g->n : 1) * sizeof *g->ops);
    for (size_t i = 0; i < g->n; i++) {
        (*e)->g.ops[i] = g->ops[i];
        if (g->ops[i].kind == OP_KERNEL) {
            size_t total = param_bytes(g->ops[i].f);
            (*e)->g.ops[i].pbuf = aligned_alloc(64, total);
            memcpy((*e)->g.ops[i].pbuf, g->ops[i].pbuf, total);
        }
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
    STICKY();
    if (s && s->capture)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    for (size_t i = 0; i < e->g.n; i++)
        run_op(&e->g.ops[i]);
    return sticky;
}
static void free_graph(struct CUgraph_st *g) {
    for (size_t i = 0; i < g->n; i++)
        if (g->ops[i].kind == OP_KERNEL)
            free(g->ops[i].pbuf);
    free(g->ops);
}
EXPORT CUresult cuGraphDestroy(CUgraph g) {
    free_graph(g);
    free(g);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecDestroy(CUgraphExec e) {
    unsafe_call();
    free_graph(&e->g);
    free(e);
    return CUDA_SUCCESS;
}

/* ---- several devices ---- */

static int peer_possible(CUdevice a, CUdevice b) {
    const char *v = getenv("OXIDE_MOCK_PEER");
    return a != b && !(v && *v == '0');
}
EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
    if (dev < 0 || dev >= ndevices() || peer < 0 || peer >= ndevices())
        return CUDA_ERROR_INVALID_DEVICE;
    *can = peer_possible(dev, peer);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
    STICKY();
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags || !peer || peer == current)
        return CUDA_ERROR_INVALID_VALUE;
    if (!peer_possible(current->ordinal, peer->ordinal))
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (peer_enabled[current->ordinal][peer->ordinal])
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    peer_enabled[current->ordinal][peer->ordinal] = 1;
    return CUDA_SUCCESS;
}
/* As CUDA does, without peer access the copy still works (staged through the host). */
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                                  CUstream s) {
    STICKY();
    if (!dst_ctx || !src_ctx || device_of(dst, n) != dst_ctx->ordinal || device_of(src, n) != src_ctx->ordinal)
        return CUDA_ERROR_INVALID_VALUE;
    return copy(D(dst), D(src), n, s);
}
EXPORT CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr p) {
    int device = device_of(p, 1);
    for (unsigned i = 0; i < n; i++) {
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data[i] = device < 0 ? 0 : CU_MEMORYTYPE_DEVICE; break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = device < 0 ? -2 : device; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}
