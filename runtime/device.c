/* Devices, their primary contexts, and the fault policy of docs/design.md section 6: a sticky CUDA
 * error marks the device failed; only an explicit oxide_device_reset() clears it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static pthread_once_t devices_once = PTHREAD_ONCE_INIT;
static oxide_device *devices;
static int ndevices;
static oxide_status devices_status;
static char devices_message[512];

static void init_devices(void) {
    int n = 0;
    CUresult r = oxide__cu.DeviceGetCount(&n);
    char text[160];
    if (r != CUDA_SUCCESS) {
        devices_status = OXIDE_ERROR_CUDA;
        snprintf(devices_message, sizeof devices_message, "cuDeviceGetCount: %s",
                 oxide__cuda_error_text(r, text, sizeof text));
        return;
    }
    if (n <= 0) {
        devices_status = OXIDE_ERROR_NO_DEVICE;
        snprintf(devices_message, sizeof devices_message, "no GPU: the CUDA driver sees no device");
        return;
    }
    devices = calloc((size_t)n, sizeof *devices);
    if (!devices) {
        devices_status = OXIDE_ERROR_OUT_OF_MEMORY;
        snprintf(devices_message, sizeof devices_message, "out of memory listing the GPUs");
        return;
    }
    for (int i = 0; i < n; i++) {
        oxide_device *d = &devices[i];
        d->index = i;
        if ((r = oxide__cu.DeviceGet(&d->cu_dev, i)) != CUDA_SUCCESS ||
            (r = oxide__cu.DeviceGetName(d->name, (int)sizeof d->name, d->cu_dev)) != CUDA_SUCCESS ||
            (r = oxide__cu.DeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->cu_dev)) !=
                CUDA_SUCCESS ||
            (r = oxide__cu.DeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->cu_dev)) !=
                CUDA_SUCCESS ||
            (r = oxide__cu.DeviceGetAttribute(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->cu_dev)) !=
                CUDA_SUCCESS ||
            (r = oxide__cu.DeviceGetAttribute(&d->max_smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                              d->cu_dev)) != CUDA_SUCCESS ||
            (r = oxide__cu.DeviceTotalMem(&d->total_mem, d->cu_dev)) != CUDA_SUCCESS) {
            devices_status = OXIDE_ERROR_CUDA;
            snprintf(devices_message, sizeof devices_message, "reading the properties of device %d: %s", i,
                     oxide__cuda_error_text(r, text, sizeof text));
            return;
        }
        d->name[sizeof d->name - 1] = 0;
        pthread_mutex_init(&d->lock, NULL);
        d->default_stream.magic = RT_STREAM;
        d->default_stream.is_default = true;
        d->default_stream.dev = d;
        d->default_stream.cu = NULL;
        d->magic = RT_DEVICE;
    }
    ndevices = n;
    devices_status = OXIDE_OK;
}

static oxide_status load_devices(void) {
    oxide_status st = oxide__driver();
    if (st != OXIDE_OK)
        return st;
    pthread_once(&devices_once, init_devices);
    if (devices_status != OXIDE_OK)
        return oxide__fail(devices_status, "%s", devices_message);
    return OXIDE_OK;
}

oxide_status oxide__rt_devices(oxide_device **list, int *n) {
    oxide_status st = load_devices();
    if (st != OXIDE_OK)
        return st;
    *list = devices;
    *n = ndevices;
    return OXIDE_OK;
}

oxide_status oxide_driver_version(int *version) {
    if (!version)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_driver_version: version is NULL");
    oxide_status st = oxide__driver();
    if (st != OXIDE_OK)
        return st;
    *version = oxide__cu.version;
    return OXIDE_OK;
}

oxide_status oxide_device_count(int *count) {
    if (!count)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_count: count is NULL");
    oxide_status st = load_devices();
    if (st != OXIDE_OK)
        return st;
    *count = ndevices;
    return OXIDE_OK;
}

oxide_status oxide_device_get(int index, oxide_device **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_get: out is NULL");
    oxide_status st = load_devices();
    if (st != OXIDE_OK)
        return st;
    if (index < 0 || index >= ndevices)
        return oxide__fail(OXIDE_ERROR_NO_DEVICE, "oxide_device_get: no device %d (the driver sees %d)", index,
                           ndevices);
    oxide_device *d = &devices[index];
    pthread_mutex_lock(&d->lock);
    if (!d->retained) {
        CUresult r = oxide__cu.DevicePrimaryCtxRetain(&d->ctx, d->cu_dev);
        if (r != CUDA_SUCCESS) {
            pthread_mutex_unlock(&d->lock);
            return oxide__rt_cuda(d, r, NULL, "retaining the primary context of device %d (%s)", index, d->name);
        }
        d->retained = true;
        oxide__rt_note_retained();
    }
    pthread_mutex_unlock(&d->lock);
    *out = d;
    return OXIDE_OK;
}

oxide_status oxide__rt_check_device(const oxide_device *dev) {
    if (!dev)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "device is NULL");
    if (dev->magic != RT_DEVICE)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "not a device handle");
    return OXIDE_OK;
}

#define CHECK_DEV(dev, fn)                                                                                             \
    do {                                                                                                               \
        if (oxide__rt_check_device(dev) != OXIDE_OK)                                                                   \
            return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s", fn);                                         \
    } while (0)

oxide_status oxide_device_name(const oxide_device *dev, const char **name) {
    CHECK_DEV(dev, "oxide_device_name");
    if (!name)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_name: name is NULL");
    *name = dev->name;
    return OXIDE_OK;
}

oxide_status oxide_device_index(const oxide_device *dev, int *index) {
    CHECK_DEV(dev, "oxide_device_index");
    if (!index)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_index: index is NULL");
    *index = dev->index;
    return OXIDE_OK;
}

oxide_status oxide_device_compute_capability(const oxide_device *dev, int *major, int *minor) {
    CHECK_DEV(dev, "oxide_device_compute_capability");
    if (!major || !minor)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_compute_capability: %s is NULL",
                           !major ? "major" : "minor");
    *major = dev->cc_major;
    *minor = dev->cc_minor;
    return OXIDE_OK;
}

oxide_status oxide_device_sm_count(const oxide_device *dev, int *count) {
    CHECK_DEV(dev, "oxide_device_sm_count");
    if (!count)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_sm_count: count is NULL");
    *count = dev->sm_count;
    return OXIDE_OK;
}

oxide_status oxide_device_total_memory(const oxide_device *dev, size_t *bytes) {
    CHECK_DEV(dev, "oxide_device_total_memory");
    if (!bytes)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_total_memory: bytes is NULL");
    *bytes = dev->total_mem;
    return OXIDE_OK;
}

oxide_status oxide_device_memory_info(oxide_device *dev, size_t *free_bytes, size_t *total_bytes) {
    CHECK_DEV(dev, "oxide_device_memory_info");
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    size_t f = 0, t = 0;
    CUresult r = oxide__cu.MemGetInfo(&f, &t);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, NULL, "oxide_device_memory_info");
    if (free_bytes)
        *free_bytes = f;
    if (total_bytes)
        *total_bytes = t;
    return OXIDE_OK;
}

oxide_status oxide_device_attribute(const oxide_device *dev, int cu_attribute, int *value) {
    CHECK_DEV(dev, "oxide_device_attribute");
    if (!value)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_attribute: value is NULL");
    int v = 0;
    CUresult r = oxide__cu.DeviceGetAttribute(&v, cu_attribute, dev->cu_dev);
    if (r != CUDA_SUCCESS) {
        char text[160];
        return oxide__fail(r == CUDA_ERROR_INVALID_VALUE ? OXIDE_ERROR_INVALID_ARGUMENT : OXIDE_ERROR_CUDA,
                           "oxide_device_attribute: attribute %d of device %d: %s", cu_attribute, dev->index,
                           oxide__cuda_error_text(r, text, sizeof text));
    }
    *value = v;
    return OXIDE_OK;
}

oxide_status oxide_device_synchronize(oxide_device *dev) {
    CHECK_DEV(dev, "oxide_device_synchronize");
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.CtxSynchronize();
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, atomic_load_explicit(&dev->last_kernel, memory_order_relaxed),
                              "oxide_device_synchronize (device %d)", dev->index);
    return OXIDE_OK;
}

oxide_status oxide_device_check(const oxide_device *dev) {
    CHECK_DEV(dev, "oxide_device_check");
    if (atomic_load_explicit(&dev->failed, memory_order_acquire))
        return oxide__rt_failed((oxide_device *)dev);
    return OXIDE_OK;
}

oxide_status oxide_device_native(const oxide_device *dev, int *cu_device, void **cu_context) {
    CHECK_DEV(dev, "oxide_device_native");
    if (cu_device)
        *cu_device = dev->cu_dev;
    if (cu_context)
        *cu_context = dev->ctx;
    return OXIDE_OK;
}

oxide_status oxide_device_make_current(oxide_device *dev) {
    CHECK_DEV(dev, "oxide_device_make_current");
    return oxide__rt_enter(dev);
}

/* After a reset the driver did not recover from: the device stays failed, and says why. */
static oxide_status unrecoverable(oxide_device *dev, CUresult r, const char *step) {
    char text[160];
    pthread_mutex_lock(&dev->lock);
    snprintf(dev->failed_msg, sizeof dev->failed_msg, "after cuDevicePrimaryCtxReset, %s failed with %s", step,
             oxide__cuda_error_text(r, text, sizeof text));
    dev->unrecoverable = true;
    atomic_store_explicit(&dev->failed, 1, memory_order_release);
    pthread_mutex_unlock(&dev->lock);
    return oxide__rt_failed(dev);
}

oxide_status oxide_device_reset(oxide_device *dev) {
    CHECK_DEV(dev, "oxide_device_reset");
    pthread_mutex_lock(&dev->lock);
    CUresult r = oxide__cu.DevicePrimaryCtxReset(dev->cu_dev);
    if (r != CUDA_SUCCESS) {
        pthread_mutex_unlock(&dev->lock);
        char text[160];
        return oxide__fail(OXIDE_ERROR_CUDA, "oxide_device_reset: resetting device %d (%s): %s", dev->index, dev->name,
                           oxide__cuda_error_text(r, text, sizeof text));
    }
    /* The reset destroyed every stream, event, allocation and module of the context: the handles
     * oxide gave out are stale from here on, and the pools hold nothing valid. */
    atomic_fetch_add_explicit(&dev->gen, 1, memory_order_acq_rel);
    oxide__rt_peer_forget(dev);
    dev->free_streams.len = 0;
    dev->free_events.len = 0;
    atomic_store_explicit(&dev->last_kernel, NULL, memory_order_relaxed);
    atomic_store_explicit(&dev->default_stream.last_kernel, NULL, memory_order_relaxed);
    dev->failed_msg[0] = 0;
    dev->unrecoverable = false;
    atomic_store_explicit(&dev->failed, 0, memory_order_release);
    /* A reset keeps the retain count but may give the context a new handle: ask again, and drop
     * the extra reference so that oxide still holds exactly one. */
    CUcontext ctx = dev->ctx;
    if (dev->retained && (r = oxide__cu.DevicePrimaryCtxRetain(&ctx, dev->cu_dev)) == CUDA_SUCCESS)
        oxide__cu.DevicePrimaryCtxRelease(dev->cu_dev);
    dev->ctx = ctx;
    pthread_mutex_unlock(&dev->lock);
    /* CUDA documents sticky errors as lasting for the process, and drivers differ: check that
     * this one recovered rather than hand back a context that fails at the next call. */
    if (r != CUDA_SUCCESS)
        return unrecoverable(dev, r, "retaining the primary context");
    if ((r = oxide__cu.CtxSetCurrent(dev->ctx)) != CUDA_SUCCESS)
        return unrecoverable(dev, r, "making the context current");
    if ((r = oxide__cu.CtxSynchronize()) != CUDA_SUCCESS)
        return unrecoverable(dev, r, "synchronizing the context");
    return OXIDE_OK;
}

/* ---- used by every runtime file ---- */

oxide_status oxide__rt_failed(oxide_device *dev) {
    if (dev->unrecoverable)
        return oxide__fail(OXIDE_ERROR_DEVICE_FAILED,
                           "device %d (%s) failed, and the CUDA driver cannot recover it in this process (%s): "
                           "restart the process to use it again",
                           dev->index, dev->name, dev->failed_msg);
    return oxide__fail(OXIDE_ERROR_DEVICE_FAILED,
                       "device %d (%s) failed earlier and is unusable until oxide_device_reset(): %s", dev->index,
                       dev->name, dev->failed_msg);
}

oxide_status oxide__rt_enter(oxide_device *dev) {
    if (atomic_load_explicit(&dev->failed, memory_order_acquire))
        return oxide__rt_failed(dev);
    CUcontext cur = NULL;
    if (oxide__cu.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == dev->ctx)
        return OXIDE_OK;
    CUresult r = oxide__cu.CtxSetCurrent(dev->ctx);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, NULL, "making device %d's context current", dev->index);
    return OXIDE_OK;
}

oxide_status oxide__rt_check_gen(oxide_device *dev, uint32_t gen, const char *what) {
    if (gen == oxide__rt_gen(dev))
        return OXIDE_OK;
    return oxide__fail(OXIDE_ERROR_STATE,
                       "%s was made before oxide_device_reset() of device %d and is no longer valid (destroy it)", what,
                       dev->index);
}

bool oxide__rt_is_sticky(CUresult r) {
    switch (r) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case 226: /* CUDA_ERROR_CONTAINED */
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: return true;
    default: return false;
    }
}

oxide_status oxide__rt_cuda(oxide_device *dev, CUresult r, const struct oxide_kernel *kernel, const char *fmt, ...) {
    char what[768], text[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    oxide__cuda_error_text(r, text, sizeof text);
    if (dev && oxide__rt_is_sticky(r)) {
        /* The first thread to see the fault records it; others report the failed state. */
        pthread_mutex_lock(&dev->lock);
        bool first = !atomic_load_explicit(&dev->failed, memory_order_acquire);
        if (first) {
            if (kernel)
                snprintf(dev->failed_msg, sizeof dev->failed_msg, "%s in kernel '%s' (the last one launched there)",
                         text, kernel->name);
            else
                snprintf(dev->failed_msg, sizeof dev->failed_msg, "%s", text);
            atomic_store_explicit(&dev->failed, 1, memory_order_release);
        }
        pthread_mutex_unlock(&dev->lock);
        if (!first)
            return oxide__rt_failed(dev);
        if (kernel)
            return oxide__fail(OXIDE_ERROR_CUDA,
                               "%s: %s in kernel '%s' (the last one launched on that stream); device %d (%s) is now "
                               "marked failed: later calls return OXIDE_ERROR_DEVICE_FAILED until "
                               "oxide_device_reset()",
                               what, text, kernel->name, dev->index, dev->name);
        return oxide__fail(OXIDE_ERROR_CUDA,
                           "%s: %s; device %d (%s) is now marked failed: later calls return "
                           "OXIDE_ERROR_DEVICE_FAILED until oxide_device_reset()",
                           what, text, dev->index, dev->name);
    }
    oxide_status st = OXIDE_ERROR_CUDA;
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        st = OXIDE_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE)
        st = OXIDE_ERROR_NO_DEVICE;
    return oxide__fail(st, "%s: %s", what, text);
}

oxide_status oxide__rt_stream(oxide_device *dev, oxide_stream *stream, CUstream *cu, oxide_stream **eff) {
    if (!stream) {
        *cu = NULL;
        *eff = &dev->default_stream;
        return OXIDE_OK;
    }
    if (stream->magic != RT_STREAM)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "not a stream handle");
    if (stream->dev != dev)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "the stream belongs to device %d, the work to device %d",
                           stream->dev->index, dev->index);
    if (!stream->is_default && stream->gen != oxide__rt_gen(dev))
        return oxide__rt_check_gen(dev, stream->gen, "the stream");
    *cu = stream->cu;
    *eff = stream;
    return OXIDE_OK;
}

/* ---- pools of helper streams and events ---- */

static bool pool_pop(oxide_device *dev, rt_pool *pool, void **out) {
    pthread_mutex_lock(&dev->lock);
    bool ok = pool->len > 0;
    if (ok)
        *out = pool->items[--pool->len];
    pthread_mutex_unlock(&dev->lock);
    return ok;
}

static void pool_push(oxide_device *dev, rt_pool *pool, void *item, uint32_t gen) {
    pthread_mutex_lock(&dev->lock);
    /* An item from before a reset is gone with its context. */
    if (gen == oxide__rt_gen(dev)) {
        if (pool->len == pool->cap) {
            size_t cap = pool->cap ? pool->cap * 2 : 8;
            void **items = realloc(pool->items, cap * sizeof *items);
            if (items) {
                pool->items = items;
                pool->cap = cap;
            }
        }
        if (pool->len < pool->cap)
            pool->items[pool->len++] = item;
        else if (pool == &dev->free_streams)
            oxide__cu.StreamDestroy((CUstream)item);
        else
            oxide__cu.EventDestroy((CUevent)item);
    }
    pthread_mutex_unlock(&dev->lock);
}

oxide_status oxide__rt_pool_stream(oxide_device *dev, CUstream *out) {
    void *item;
    if (pool_pop(dev, &dev->free_streams, &item)) {
        *out = (CUstream)item;
        return OXIDE_OK;
    }
    CUresult r = oxide__cu.StreamCreate(out, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, NULL, "creating a helper stream on device %d", dev->index);
    return OXIDE_OK;
}

oxide_status oxide__rt_pool_event(oxide_device *dev, CUevent *out) {
    void *item;
    if (pool_pop(dev, &dev->free_events, &item)) {
        *out = (CUevent)item;
        return OXIDE_OK;
    }
    CUresult r = oxide__cu.EventCreate(out, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, NULL, "creating a helper event on device %d", dev->index);
    return OXIDE_OK;
}

void oxide__rt_unpool_stream(oxide_device *dev, CUstream s, uint32_t gen) {
    pool_push(dev, &dev->free_streams, s, gen);
}

void oxide__rt_unpool_event(oxide_device *dev, CUevent e, uint32_t gen) { pool_push(dev, &dev->free_events, e, gen); }
