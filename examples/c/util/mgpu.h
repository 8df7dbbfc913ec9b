/* A bf16 GEMM split by rows of A over several GPUs and gathered on GPU 0: what the
 * multi_gpu_gemm example checks and bench/multi_gpu times. The gather goes through NCCL's C API,
 * opened at run time (nothing links it); without NCCL it uses oxide's peer copies instead. */
#ifndef OXIDE_EXAMPLE_MGPU_H
#define OXIDE_EXAMPLE_MGPU_H

#include "example_util.h"

#define MG_MAX_DEVICES 8

/* NCCL, found by mg_nccl_open. */
typedef struct mg_nccl {
    void *lib;
    int version; /* e.g. 22703 for 2.27.3 */
    int (*GetVersion)(int *);
    const char *(*GetErrorString)(int);
    int (*CommInitAll)(void **comms, int ndev, const int *devlist);
    int (*CommDestroy)(void *comm);
    int (*GroupStart)(void);
    int (*GroupEnd)(void);
    int (*Send)(const void *buf, size_t count, int type, int peer, void *comm, void *stream);
    int (*Recv)(void *buf, size_t count, int type, int peer, void *comm, void *stream);
    char path[512]; /* where it was found, or why not */
} mg_nccl;

/* Open libnccl.so.2: $OXIDE_NCCL_LIBRARY, else the loader's path, else the nvidia-nccl-cu13 (or
 * -cu12) wheel or torch's lib folder of the python3 on PATH. NVLink multicast is turned off first
 * (NCCL_NVLS_ENABLE=0 unless set). OXIDE_NCCL_LIBRARY=none: no NCCL. Returns 0, or -1 with the reason
 * in n->path. */
int mg_nccl_open(mg_nccl *n);

/* The split product on the first ndev devices: A (m x k bf16) in ndev row blocks, B (k x n bf16)
 * on each, C (m x n f32) gathered on device 0. Each device computes its rows in up to MG_CHUNKS
 * chunks and each chunk is sent as soon as it is done, so the gather overlaps the compute. m
 * must be a multiple of ndev * 128, n of 128. */
#define MG_CHUNKS 4
typedef struct mg_gemm {
    ex_env *env; /* ex_setup(env, "gemm_mma"): the kernel compiled and loaded on device 0 */
    int ndev, chunks;
    uint32_t m, n, k, rows; /* rows of A (and C) per device */
    /* 0: device 0 writes its rows straight into `gathered`; 1: it sends them to itself like the
     * others (through NCCL, so that one GPU still runs the NCCL path). */
    int self_send;
    oxide_device *dev[MG_MAX_DEVICES];
    oxide_loaded_module *lm[MG_MAX_DEVICES]; /* lm[0] is env->lm */
    oxide_kernel *kernel[MG_MAX_DEVICES];
    oxide_stream *stream[MG_MAX_DEVICES], *xfer[MG_MAX_DEVICES]; /* compute; sends and receives */
    oxide_event *start, *done;                                   /* on device 0 */
    oxide_event *part[MG_MAX_DEVICES][MG_CHUNKS];                /* chunk c of device d computed */
    oxide_buffer *a[MG_MAX_DEVICES], *b[MG_MAX_DEVICES], *c[MG_MAX_DEVICES];
    oxide_buffer *gathered; /* m x n f32 on device 0 */
    mg_nccl *nccl;          /* NULL: gather with oxide_memcpy_peer_async */
    void *comm[MG_MAX_DEVICES];
} mg_gemm;

/* Load the kernel on every device, upload its rows of a and all of b (host bf16), make the
 * streams, events, buffers and (nccl not NULL) one communicator per device. */
void mg_setup(mg_gemm *g, ex_env *env, int ndev, uint32_t m, uint32_t n, uint32_t k, const uint16_t *a,
              const uint16_t *b, mg_nccl *nccl, int self_send);
/* Queue one product and gather: every device waits for `start` (recorded on device 0's stream),
 * computes its rows chunk by chunk, and device 0 receives each chunk once it is done; device 0's
 * compute stream then waits for the gather (`done`). Does not wait; mg_wait does. */
void mg_run(mg_gemm *g);
void mg_wait(mg_gemm *g);
/* Milliseconds of `reps` runs each (after one warm-up), from `start` to the gather's end on
 * device 0's stream. */
double mg_time_ms(mg_gemm *g, int reps);
void mg_teardown(mg_gemm *g);

#endif
