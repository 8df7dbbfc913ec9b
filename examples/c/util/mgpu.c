/* See mgpu.h. */
#include "mgpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oxide_examples.h"

enum { NCCL_FLOAT32 = 7 };

static int nccl_bind(mg_nccl *n, void *lib, const char *path) {
    struct {
        void **slot;
        const char *sym;
    } fns[] = {{(void **)&n->GetVersion, "ncclGetVersion"},
               {(void **)&n->GetErrorString, "ncclGetErrorString"},
               {(void **)&n->CommInitAll, "ncclCommInitAll"},
               {(void **)&n->CommDestroy, "ncclCommDestroy"},
               {(void **)&n->GroupStart, "ncclGroupStart"},
               {(void **)&n->GroupEnd, "ncclGroupEnd"},
               {(void **)&n->Send, "ncclSend"},
               {(void **)&n->Recv, "ncclRecv"}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!(*fns[i].slot = dlsym(lib, fns[i].sym))) {
            snprintf(n->path, sizeof n->path, "%s has no %s (NCCL 2.7 or later is needed)", path, fns[i].sym);
            return -1;
        }
    n->lib = lib;
    n->GetVersion(&n->version);
    snprintf(n->path, sizeof n->path, "%s", path);
    return 0;
}

/* The libnccl.so.2 of a Python wheel: nvidia-nccl-cu13 / -cu12 put it in nvidia/nccl/lib, older
 * torch wheels in torch/lib. */
static int nccl_from_python(char *out, size_t size) {
    FILE *p = popen("python3 -c \"import sys,glob,os;c=[q for d in sys.path for s in "
                    "(('nvidia','nccl','lib'),('torch','lib')) for q in sorted(glob.glob(os.path.join(d,*s,"
                    "'libnccl.so*')))];print(c[0] if c else '')\" 2>/dev/null",
                    "r");
    if (!p)
        return -1;
    int ok = fgets(out, (int)size, p) != NULL;
    pclose(p);
    out[strcspn(out, "\n")] = 0;
    return ok && *out ? 0 : -1;
}

int mg_nccl_open(mg_nccl *n) {
    memset(n, 0, sizeof *n);
    /* NVLink multicast (NVLS) is off: see docs/runtime.md, "Several GPUs". */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    const char *env = getenv("OXIDE_NCCL_LIBRARY");
    if (env && !strcmp(env, "none")) { /* e.g. on the tests' fake driver, which NCCL cannot use */
        snprintf(n->path, sizeof n->path, "OXIDE_NCCL_LIBRARY=none");
        return -1;
    }
    char found[512] = "";
    const char *tries[3] = {env && *env ? env : NULL, "libnccl.so.2", NULL};
    if (!tries[0] && nccl_from_python(found, sizeof found) == 0)
        tries[2] = found;
    char why[256] = "not found";
    for (int i = 0; i < 3; i++) {
        void *lib = tries[i] ? dlopen(tries[i], RTLD_NOW | RTLD_LOCAL) : NULL;
        if (lib)
            return nccl_bind(n, lib, tries[i]);
        if (i == 0 && tries[0])
            snprintf(why, sizeof why, "%s", dlerror());
    }
    if (tries[0])
        snprintf(n->path, sizeof n->path, "OXIDE_NCCL_LIBRARY=%s does not load: %s", env, why);
    else
        snprintf(n->path, sizeof n->path,
                 "no libnccl.so.2 on the loader's path nor in python3's nvidia-nccl-cu13 or torch wheels; pip "
                 "install nvidia-nccl-cu13, or set OXIDE_NCCL_LIBRARY");
    return -1;
}

static void nccl_check(mg_gemm *g, int r, const char *what) {
    if (r)
        ex_fail(g->env, "%s: NCCL error %d (%s)", what, r, g->nccl->GetErrorString(r));
}

static void *native(ex_env *env, oxide_stream *stream) {
    void *s = NULL;
    ex_check(env, oxide_stream_native(stream, &s), "oxide_stream_native");
    return s;
}

static oxide_buffer *upload(mg_gemm *g, int d, const void *host, size_t bytes) {
    oxide_buffer *b;
    ex_check(g->env, oxide_buffer_alloc(g->dev[d], bytes, &b), "oxide_buffer_alloc");
    if (host)
        ex_check(g->env, oxide_memcpy_htod(g->dev[d], oxide_buffer_ptr(b), host, bytes), "copy to the device");
    return b;
}

void mg_setup(mg_gemm *g, ex_env *env, int ndev, uint32_t m, uint32_t n, uint32_t k, const uint16_t *a,
              const uint16_t *b, mg_nccl *nccl, int self_send) {
    memset(g, 0, sizeof *g);
    g->env = env, g->ndev = ndev, g->m = m, g->n = n, g->k = k, g->nccl = nccl, g->self_send = self_send;
    g->rows = ndev > 0 ? m / (uint32_t)ndev : 0;
    if (ndev < 1 || ndev > MG_MAX_DEVICES || m % ((uint32_t)ndev * OXIDE_EXAMPLE_GEMM_MMA_BM) ||
        n % OXIDE_EXAMPLE_GEMM_MMA_BN)
        ex_fail(env, "mg_setup: %d devices, m %u, n %u: m must be a multiple of %u per device and n of %u", ndev, m, n,
                OXIDE_EXAMPLE_GEMM_MMA_BM, OXIDE_EXAMPLE_GEMM_MMA_BN);
    g->chunks = MG_CHUNKS;
    while (g->rows % ((uint32_t)g->chunks * OXIDE_EXAMPLE_GEMM_MMA_BM))
        g->chunks /= 2;
    size_t part = (size_t)g->rows * k;
    for (int d = 0; d < ndev; d++) {
        ex_check(env, oxide_device_get(d, &g->dev[d]), "oxide_device_get");
        g->lm[d] = env->lm;
        if (d)
            ex_check(env, oxide_loaded_module_load_ptx(g->dev[d], env->ptx, env->ptx_len, &g->lm[d]),
                     "loading the PTX on another device");
        ex_check(env, oxide_loaded_module_get_kernel(g->lm[d], "gemm_mma", &g->kernel[d]), "get_kernel");
        ex_check(env, oxide_stream_create(g->dev[d], OXIDE_STREAM_NON_BLOCKING, &g->stream[d]), "stream");
        ex_check(env, oxide_stream_create(g->dev[d], OXIDE_STREAM_NON_BLOCKING, &g->xfer[d]), "stream");
        for (int c = 0; c < g->chunks; c++)
            ex_check(env, oxide_event_create(g->dev[d], OXIDE_EVENT_DISABLE_TIMING, &g->part[d][c]), "event");
        g->a[d] = upload(g, d, a + (size_t)d * part, part * 2);
        g->b[d] = upload(g, d, b, (size_t)k * n * 2);
        if (d || self_send)
            g->c[d] = upload(g, d, NULL, (size_t)g->rows * n * 4);
    }
    ex_check(env, oxide_event_create(g->dev[0], 0, &g->start), "event");
    ex_check(env, oxide_event_create(g->dev[0], OXIDE_EVENT_DISABLE_TIMING, &g->done), "event");
    g->gathered = upload(g, 0, NULL, (size_t)m * n * 4);
    ex_check(env, oxide_memset(g->dev[0], oxide_buffer_ptr(g->gathered), 0x7fc00000u, (size_t)m * n, 4), "memset");
    if (nccl) {
        int list[MG_MAX_DEVICES];
        for (int d = 0; d < ndev; d++)
            list[d] = d;
        nccl_check(g, nccl->CommInitAll(g->comm, ndev, list), "ncclCommInitAll");
    }
}

/* Where chunk c of device d's rows of C is computed: its own buffer, or (device 0 without
 * self_send) its place in `gathered`. */
static uint64_t chunk_out(mg_gemm *g, int d, int c) {
    uint64_t row = (uint64_t)c * (g->rows / (uint32_t)g->chunks);
    return g->c[d] ? oxide_buffer_ptr(g->c[d]) + row * g->n * 4 : oxide_buffer_ptr(g->gathered) + row * g->n * 4;
}

static void compute(mg_gemm *g, int d) {
    uint32_t cr = g->rows / (uint32_t)g->chunks;
    for (int c = 0; c < g->chunks; c++) {
        oxide_arg args[] = {oxide_arg_buffer(OXIDE_SCALAR_BF16, oxide_buffer_ptr(g->a[d]) + (uint64_t)c * cr * g->k * 2,
                                             (uint64_t)cr * g->k, 0),
                            oxide_arg_from_buffer(g->b[d], OXIDE_SCALAR_BF16, 0),
                            oxide_arg_buffer(OXIDE_SCALAR_F32, chunk_out(g, d, c), (uint64_t)cr * g->n, 1),
                            oxide_arg_u32(cr),
                            oxide_arg_u32(g->n),
                            oxide_arg_u32(g->k)};
        uint32_t block[3] = {OXIDE_EXAMPLE_GEMM_MMA_THREADS, 1, 1},
                 grid[3] = {g->n / OXIDE_EXAMPLE_GEMM_MMA_BN, cr / OXIDE_EXAMPLE_GEMM_MMA_BM, 1};
        ex_check(g->env, oxide_kernel_launch(g->kernel[d], g->stream[d], grid, block, 0, args, 6), "launch");
        ex_check(g->env, oxide_event_record(g->part[d][c], g->stream[d]), "record");
    }
}

/* Chunk c of every device that sends (all but device 0 unless self_send) to its rows on device 0. */
static void gather_chunk(mg_gemm *g, int c) {
    size_t count = (size_t)(g->rows / (uint32_t)g->chunks) * g->n;
    int first = g->self_send ? 0 : 1;
    uint64_t to = oxide_buffer_ptr(g->gathered);
    for (int d = first; d < g->ndev; d++) /* each sender's transfer stream waits for its chunk */
        ex_check(g->env, oxide_stream_wait_event(g->nccl ? g->xfer[d] : g->xfer[0], g->part[d][c]), "wait");
    if (!g->nccl) {
        for (int d = first; d < g->ndev; d++)
            ex_check(g->env,
                     oxide_memcpy_peer_async(g->xfer[0], g->dev[0], to + ((size_t)d * g->rows * g->n + c * count) * 4,
                                             g->dev[d], chunk_out(g, d, c), count * 4),
                     "oxide_memcpy_peer_async");
        return;
    }
    nccl_check(g, g->nccl->GroupStart(), "ncclGroupStart");
    for (int d = first; d < g->ndev; d++)
        nccl_check(g,
                   g->nccl->Send((void *)(uintptr_t)chunk_out(g, d, c), count, NCCL_FLOAT32, 0, g->comm[d],
                                 native(g->env, g->xfer[d])),
                   "ncclSend");
    for (int d = first; d < g->ndev; d++)
        nccl_check(g,
                   g->nccl->Recv((void *)(uintptr_t)(to + ((size_t)d * g->rows * g->n + c * count) * 4), count,
                                 NCCL_FLOAT32, d, g->comm[0], native(g->env, g->xfer[0])),
                   "ncclRecv");
    nccl_check(g, g->nccl->GroupEnd(), "ncclGroupEnd");
}

void mg_run(mg_gemm *g) {
    ex_env *env = g->env;
    ex_check(env, oxide_event_record(g->start, g->stream[0]), "record");
    for (int d = 1; d < g->ndev; d++) /* an event of device 0 orders device d's stream */
        ex_check(env, oxide_stream_wait_event(g->stream[d], g->start), "wait for the start");
    ex_check(env, oxide_stream_wait_event(g->xfer[0], g->start), "wait for the start");
    for (int d = 0; d < g->ndev; d++)
        compute(g, d);
    for (int c = 0; c < g->chunks; c++)
        gather_chunk(g, c);
    ex_check(env, oxide_event_record(g->done, g->xfer[0]), "record");
    ex_check(env, oxide_stream_wait_event(g->stream[0], g->done), "wait for the gather");
}

void mg_wait(mg_gemm *g) {
    for (int d = 0; d < g->ndev; d++) {
        ex_check(g->env, oxide_stream_synchronize(g->stream[d]), "synchronize");
        ex_check(g->env, oxide_stream_synchronize(g->xfer[d]), "synchronize");
    }
}

double mg_time_ms(mg_gemm *g, int reps) {
    oxide_event *end;
    ex_check(g->env, oxide_event_create(g->dev[0], 0, &end), "event");
    mg_run(g);
    mg_wait(g);
    double total = 0;
    for (int r = 0; r < reps; r++) {
        mg_run(g);
        ex_check(g->env, oxide_event_record(end, g->stream[0]), "record");
        mg_wait(g);
        float ms = 0;
        ex_check(g->env, oxide_event_elapsed_ms(g->start, end, &ms), "elapsed");
        total += ms;
    }
    oxide_event_destroy(end);
    return total / reps;
}

void mg_teardown(mg_gemm *g) {
    for (int d = 0; d < g->ndev; d++) {
        if (g->nccl && g->comm[d])
            g->nccl->CommDestroy(g->comm[d]);
        oxide_buffer_free(g->a[d]);
        oxide_buffer_free(g->b[d]);
        oxide_buffer_free(g->c[d]);
        for (int c = 0; c < g->chunks; c++)
            oxide_event_destroy(g->part[d][c]);
        oxide_stream_destroy(g->stream[d]);
        oxide_stream_destroy(g->xfer[d]);
        if (d)
            oxide_loaded_module_destroy(g->lm[d]);
    }
    oxide_event_destroy(g->start);
    oxide_event_destroy(g->done);
    oxide_buffer_free(g->gathered);
}
