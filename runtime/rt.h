/* Internal structures of the host runtime, shared by the files in runtime/. Not installed. */
#ifndef OXIDE_RUNTIME_RT_H
#define OXIDE_RUNTIME_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.h"
#include "ir.h"
#include "rt_manifest.h"

/* Each handle starts with a magic word so that a NULL, freed or wrong kind of handle is an
 * INVALID_ARGUMENT status instead of a crash, as far as that can be detected. */
enum {
    RT_DEVICE = 0x6f786476,
    RT_STREAM = 0x6f787374,
    RT_EVENT = 0x6f786576,
    RT_BUFFER = 0x6f786266,
    RT_MODULE = 0x6f786d6f,
    RT_KERNEL = 0x6f786b6e,
    RT_TASK = 0x6f787461,
    RT_GRAPH = 0x6f786772
};

/* Launches keep pointers to the caller's values in a stack array of this many PTX parameters:
 * no allocation per launch. */
#define RT_MAX_PTX_PARAMS 1024

/* The first oxide_tensor's size: a caller's struct_size must be at least this (later versions
 * only append fields). */
#define RT_TENSOR_V1_SIZE (offsetof(oxide_tensor, reserved) + sizeof(uint32_t))

/* A checked launch's PTX parameter pointers, and the values the binding computes for them (a
 * tensor's data + byte_offset), which must live until the launch is made. A tensor is at least
 * three PTX parameters. */
/* TMA descriptors a checked launch encodes (iface.h; lowered tile kernels use one per tensor) */
#define RT_MAX_TMA 8
typedef struct rt_bound {
    void *params[RT_MAX_PTX_PARAMS];
    uint64_t ptrs[RT_MAX_PTX_PARAMS / 3];
    _Alignas(64) unsigned char tma[RT_MAX_TMA][128];
    uint32_t ntma;    /* descriptors encoded */
    bool tma_all;     /* every TMA tensor of the launch allows TMA */
    uint32_t nparams; /* params filled from the arguments */
    uint32_t grid[3]; /* a persistent entry's grid parameters (oxide__rt_pick) */
} rt_bound;
bool oxide__rt_tma_bind(const oxide_iface_param *mp, const oxide_tensor *t, void *desc128);
/* The entry a bound launch of k over grid runs: its TMA variant when every TMA tensor allows TMA;
 * an error for a TMA variant launched directly with one that does not (launch.c). A persistent
 * entry gets grid as its last parameters. */
oxide_status oxide__rt_pick(struct oxide_kernel **k, rt_bound *b, const uint32_t grid[3]);

struct oxide_stream {
    uint32_t magic;
    bool is_default; /* the legacy NULL stream: survives resets, cannot be destroyed */
    bool is_foreign; /* wrapped: destroy leaves the CUstream alone */
    oxide_device *dev;
    uint32_t gen;
    CUstream cu;
    /* Kernel last launched here: CUDA reports a fault at a later synchronisation without saying
     * which kernel caused it, so the report names the most likely one. */
    _Atomic(const struct oxide_kernel *) last_kernel;
    bool capturing;
};

typedef struct rt_pinned {
    void *ptr;
    uint32_t gen;
    struct rt_pinned *next;
} rt_pinned;

typedef struct rt_pool {
    void **items;
    size_t len, cap;
} rt_pool;

struct oxide_device {
    uint32_t magic;
    int index;
    CUdevice cu_dev;
    CUcontext ctx; /* primary context, retained once by oxide */
    bool retained;
    char name[256];
    int cc_major, cc_minor, sm_count, max_smem_optin;
    size_t total_mem;
    /* Bumped by oxide_device_reset: handles made under an older generation are stale. */
    _Atomic uint32_t gen;
    /* Set (release) after failed_msg is written; cleared by reset. */
    _Atomic int failed;
    char failed_msg[1536];
    bool unrecoverable; /* a reset did not clear the fault: only a new process can */
    _Atomic(const struct oxide_kernel *) last_kernel;
    struct oxide_stream default_stream;
    pthread_mutex_t lock; /* retain, reset, failure, pools, pinned list */
    rt_pool free_streams; /* non-blocking CUstreams for joins and captures */
    rt_pool free_events;  /* timing-disabled CUevents */
    rt_pinned *pinned;
};

struct oxide_event {
    uint32_t magic;
    oxide_device *dev;
    uint32_t gen;
    unsigned flags;
    CUevent cu;
};

struct oxide_buffer {
    uint32_t magic;
    bool is_foreign;
    oxide_device *dev;
    uint32_t gen;
    CUdeviceptr ptr;
    size_t size;
};

struct oxide_kernel {
    uint32_t magic;
    oxide_device *dev;
    uint32_t gen;
    CUfunction fn;
    struct oxide_loaded_module *lm;
    const char *name, *entry;
    const oxide_iface_kernel *mk;    /* NULL: no manifest, raw launches only */
    const oxide_iface_param *params; /* mk's parameters */
    uint32_t nparams;                /* manifest parameters */
    uint32_t nptx;                   /* PTX parameters (a slice is two, a tensor 1 + 2 * rank) */
    uint32_t block[3];               /* the block the compiler chose (tile kernels); 0: the launch's */
    uint32_t cluster[3];             /* from the manifest; {1,1,1} if none */
    bool cluster_fixed;              /* the PTX fixes the cluster shape (.reqnctapercluster) */
    uint32_t dyn_smem;
    oxide_launch_contract contract; /* from the manifest; fields 0: none */
    _Atomic uint32_t smem_optin;    /* MAX_DYNAMIC_SHARED_SIZE_BYTES set so far */
    _Atomic int nonportable;        /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED set */
    struct oxide_kernel *next;      /* module's list of kernels found by entry name */
    struct oxide_kernel *tma;       /* the manifest's tma_entry: the TMA variant, or NULL */
    /* persistent (iface.h): the most blocks the device holds at once, found at the first launch */
    _Atomic uint32_t resident;
};

struct oxide_loaded_module {
    uint32_t magic;
    oxide_device *dev;
    uint32_t gen;
    CUmodule cu;
    oxide_manifest *manifest;     /* NULL if none */
    struct oxide_kernel *kernels; /* one per manifest kernel */
    struct oxide_kernel *extra;   /* found by entry name, made on demand */
    pthread_mutex_t lock;         /* extra */
    char *jit_log;
    /* A PTX module's entries, sorted by name, their names in entry_names (NULL: not PTX), so that
     * asking for a name it lacks is answered without a driver call that fails (an API error to
     * sanitizers). */
    struct ptx_entry *entries;
    size_t nentries;
    char *entry_names;
};

struct oxide_graph {
    uint32_t magic;
    oxide_device *dev;
    uint32_t gen;
    CUgraphExec exec;
};

/* ---- bundle.c ---- */

/* True when data starts with a PTX bundle's header. */
bool oxide__is_ptx_bundle(const char *data, size_t len);
/* How well PTX for target ("sm_90a") runs on compute capability major.minor: 0 not at all; more
 * is better (the exact arch-specific target, then the newest target at or below it). */
unsigned oxide__target_rank(const char *target, int major, int minor);

/* ---- device.c ---- */

/* INVALID_ARGUMENT unless dev is a device handle. */
oxide_status oxide__rt_check_device(const oxide_device *dev);
/* Before driver work on dev: DEVICE_FAILED if it failed, else make its context current. */
oxide_status oxide__rt_enter(oxide_device *dev);
/* STATE if a handle of generation gen predates a reset of dev. */
oxide_status oxide__rt_check_gen(oxide_device *dev, uint32_t gen, const char *what);
/* DEVICE_FAILED with the stored reason. */
oxide_status oxide__rt_failed(oxide_device *dev);
/* Turn a driver error into a status and message "<what>: <CUDA error>". A sticky error (a kernel
 * fault) marks dev failed and names kernel (may be NULL) as the likely culprit. */
oxide_status oxide__rt_cuda(oxide_device *dev, CUresult r, const struct oxide_kernel *kernel, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Resolve stream (NULL: default) for work on dev: checks ownership and staleness. */
oxide_status oxide__rt_stream(oxide_device *dev, oxide_stream *stream, CUstream *cu, oxide_stream **eff);
/* Pools of helper streams and events (non-blocking / no timing) for joins and captures. */
oxide_status oxide__rt_pool_stream(oxide_device *dev, CUstream *out);
oxide_status oxide__rt_pool_event(oxide_device *dev, CUevent *out);
void oxide__rt_unpool_stream(oxide_device *dev, CUstream s, uint32_t gen);
void oxide__rt_unpool_event(oxide_device *dev, CUevent e, uint32_t gen);
bool oxide__rt_is_sticky(CUresult r);
/* The device table (loads the driver); used to find which device a pinned pointer came from. */
oxide_status oxide__rt_devices(oxide_device **list, int *n);

/* ---- memory.c ---- */

CUresult oxide__rt_memset(uint64_t dst, uint32_t value, size_t count, unsigned elem_size, CUstream cs, bool async);

static inline uint32_t oxide__rt_gen(oxide_device *dev) {
    return atomic_load_explicit(&dev->gen, memory_order_acquire);
}

/* ---- launch.c ---- */

/* Check args against k's manifest and point b->params at their values (and at b->ptrs). */
oxide_status oxide__rt_bind(const struct oxide_kernel *k, const oxide_arg *args, size_t nargs, rt_bound *b);
/* Launch on a resolved stream; track (may be NULL) records the kernel for fault reports. block
 * may be NULL or {0,0,0} for a kernel whose manifest fixes the block. */
oxide_status oxide__rt_launch(struct oxide_kernel *k, CUstream cs, oxide_stream *track, const uint32_t grid[3],
                              const uint32_t block[3], uint32_t smem, const uint32_t *cluster, uint32_t flags,
                              void **params);
oxide_status oxide__rt_check_kernel(const struct oxide_kernel *k);

/* ---- peer.c ---- */

/* Non-zero once two devices were retained: launches then check where their memory lives. */
extern _Atomic int oxide__rt_several_devices;
/* Called by oxide_device_get each time it retains a device's primary context. */
void oxide__rt_note_retained(void);
/* After a reset of dev: the peer access it had is gone. */
void oxide__rt_peer_forget(oxide_device *dev);
/* LAUNCH when a buffer or tensor argument is memory of another device that k's device cannot
 * reach (no peer access enabled by oxide). */
oxide_status oxide__rt_check_arg_devices(const struct oxide_kernel *k, const oxide_arg *args, size_t nargs);

/* ---- task.c ---- */

/* Wrap an executable graph instantiated from graph (which the caller still owns). */
oxide_status oxide__rt_graph_from(oxide_device *dev, CUgraph graph, oxide_graph **out);

/* ---- nvtx.c ---- */

/* -1 until the first launch reads OXIDE_NVTX_LAUNCHES, then 0 or 1 (oxide_nvtx_set_launch_ranges). */
extern _Atomic int oxide__nvtx_launch_ranges;
/* The range around one launch, named after its kernel; outside the per-thread count that
 * oxide_nvtx_pop checks. */
void oxide__nvtx_launch_push(const char *kernel);
void oxide__nvtx_launch_pop(void);

#endif
