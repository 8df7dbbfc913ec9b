/* Device buffers, pinned host memory, copies and memset. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define CHECK_DEV(dev, fn)                                                                                             \
    do {                                                                                                               \
        if (oxide__rt_check_device(dev) != OXIDE_OK)                                                                   \
            return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s", fn);                                         \
    } while (0)

static oxide_status enter_stream(oxide_stream *s, const char *fn, CUstream *cs) {
    if (!s)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: stream is NULL (use oxide_stream_default)", fn);
    if (s->magic != RT_STREAM)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: not a stream handle", fn);
    if (!s->is_default && s->gen != oxide__rt_gen(s->dev))
        return oxide__rt_check_gen(s->dev, s->gen, "the stream");
    *cs = s->cu;
    return oxide__rt_enter(s->dev);
}

oxide_status oxide_buffer_alloc(oxide_device *dev, size_t bytes, oxide_buffer **out) {
    CHECK_DEV(dev, "oxide_buffer_alloc");
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_buffer_alloc: out is NULL");
    if (!bytes)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_buffer_alloc: size 0");
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    oxide_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_buffer_alloc: out of host memory");
    CUresult r = oxide__cu.MemAlloc(&b->ptr, bytes);
    if (r != CUDA_SUCCESS) {
        free(b);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            size_t f = 0, t = 0;
            oxide__cu.MemGetInfo(&f, &t);
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY,
                               "oxide_buffer_alloc: %zu bytes on device %d (%s): out of memory (%zu of %zu bytes free)",
                               bytes, dev->index, dev->name, f, t);
        }
        return oxide__rt_cuda(dev, r, NULL, "oxide_buffer_alloc of %zu bytes on device %d", bytes, dev->index);
    }
    b->magic = RT_BUFFER;
    b->dev = dev;
    b->gen = oxide__rt_gen(dev);
    b->size = bytes;
    *out = b;
    return OXIDE_OK;
}

oxide_status oxide_buffer_wrap(oxide_device *dev, uint64_t device_ptr, size_t bytes, oxide_buffer **out) {
    CHECK_DEV(dev, "oxide_buffer_wrap");
    if (!out || !device_ptr)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_buffer_wrap: %s is NULL", !out ? "out" : "device_ptr");
    oxide_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_buffer_wrap: out of memory");
    b->magic = RT_BUFFER;
    b->is_foreign = true;
    b->dev = dev;
    b->gen = oxide__rt_gen(dev);
    b->ptr = device_ptr;
    b->size = bytes;
    *out = b;
    return OXIDE_OK;
}

void oxide_buffer_free(oxide_buffer *b) {
    if (!b || b->magic != RT_BUFFER)
        return;
    /* After a fault the context is gone anyway; after a reset the memory already is. */
    if (!b->is_foreign && b->gen == oxide__rt_gen(b->dev) && oxide__rt_enter(b->dev) == OXIDE_OK)
        OXIDE__RELAXED(oxide__cu.MemFree(b->ptr));
    b->magic = 0;
    free(b);
}

uint64_t oxide_buffer_ptr(const oxide_buffer *b) { return b && b->magic == RT_BUFFER ? b->ptr : 0; }

size_t oxide_buffer_size(const oxide_buffer *b) { return b && b->magic == RT_BUFFER ? b->size : 0; }

oxide_device *oxide_buffer_get_device(const oxide_buffer *b) { return b && b->magic == RT_BUFFER ? b->dev : NULL; }

/* ---- pinned host memory ---- */

oxide_status oxide_host_alloc(oxide_device *dev, size_t bytes, void **out) {
    CHECK_DEV(dev, "oxide_host_alloc");
    if (!out || !bytes)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_host_alloc: %s", !out ? "out is NULL" : "size 0");
    oxide_status st = oxide__rt_enter(dev);
    if (st != OXIDE_OK)
        return st;
    rt_pinned *node = malloc(sizeof *node);
    if (!node)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_host_alloc: out of memory");
    void *p = NULL;
    CUresult r = oxide__cu.MemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        free(node);
        return oxide__rt_cuda(dev, r, NULL, "oxide_host_alloc of %zu pinned bytes", bytes);
    }
    pthread_mutex_lock(&dev->lock);
    node->ptr = p;
    node->gen = oxide__rt_gen(dev);
    node->next = dev->pinned;
    dev->pinned = node;
    pthread_mutex_unlock(&dev->lock);
    *out = p;
    return OXIDE_OK;
}

oxide_status oxide_host_free(void *ptr) {
    if (!ptr)
        return OXIDE_OK;
    oxide_device *list;
    int n;
    oxide_status st = oxide__rt_devices(&list, &n);
    if (st != OXIDE_OK)
        return st;
    for (int i = 0; i < n; i++) {
        oxide_device *dev = &list[i];
        pthread_mutex_lock(&dev->lock);
        for (rt_pinned **pp = &dev->pinned; *pp; pp = &(*pp)->next) {
            rt_pinned *node = *pp;
            if (node->ptr != ptr)
                continue;
            *pp = node->next;
            bool live = node->gen == oxide__rt_gen(dev);
            pthread_mutex_unlock(&dev->lock);
            free(node);
            if (!live)
                return OXIDE_OK; /* the reset freed it */
            if ((st = oxide__rt_enter(dev)) != OXIDE_OK)
                return st;
            CUresult r;
            OXIDE__RELAXED(r = oxide__cu.MemFreeHost(ptr));
            if (r != CUDA_SUCCESS)
                return oxide__rt_cuda(dev, r, NULL, "oxide_host_free");
            return OXIDE_OK;
        }
        pthread_mutex_unlock(&dev->lock);
    }
    return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_host_free: %p was not allocated by oxide_host_alloc", ptr);
}

/* ---- copies ---- */

#define SYNC_COPY(fn, call, desc)                                                                                      \
    CHECK_DEV(dev, fn);                                                                                                \
    if (!bytes)                                                                                                        \
        return OXIDE_OK;                                                                                               \
    if (!dst || !src)                                                                                                  \
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !dst ? "dst" : "src");                  \
    oxide_status st = oxide__rt_enter(dev);                                                                            \
    if (st != OXIDE_OK)                                                                                                \
        return st;                                                                                                     \
    CUresult r = call;                                                                                                 \
    if (r != CUDA_SUCCESS)                                                                                             \
        return oxide__rt_cuda(dev, r, atomic_load_explicit(&dev->last_kernel, memory_order_relaxed),                   \
                              "%s of %zu bytes " desc " on device %d", fn, bytes, dev->index);                         \
    return OXIDE_OK;

oxide_status oxide_memcpy_htod(oxide_device *dev, uint64_t dst, const void *src, size_t bytes){
    SYNC_COPY("oxide_memcpy_htod", oxide__cu.MemcpyHtoD(dst, src, bytes), "host to device")}

oxide_status oxide_memcpy_dtoh(oxide_device *dev, void *dst, uint64_t src, size_t bytes){
    SYNC_COPY("oxide_memcpy_dtoh", oxide__cu.MemcpyDtoH(dst, src, bytes), "device to host")}

oxide_status oxide_memcpy_dtod(oxide_device *dev, uint64_t dst, uint64_t src, size_t bytes){
    SYNC_COPY("oxide_memcpy_dtod", oxide__cu.MemcpyDtoD(dst, src, bytes), "device to device")}

#define ASYNC_COPY(fn, call, desc)                                                                                     \
    CUstream cs;                                                                                                       \
    oxide_status st = enter_stream(stream, fn, &cs);                                                                   \
    if (st != OXIDE_OK)                                                                                                \
        return st;                                                                                                     \
    if (!bytes)                                                                                                        \
        return OXIDE_OK;                                                                                               \
    if (!dst || !src)                                                                                                  \
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !dst ? "dst" : "src");                  \
    CUresult r = call;                                                                                                 \
    if (r != CUDA_SUCCESS)                                                                                             \
        return oxide__rt_cuda(stream->dev, r, atomic_load_explicit(&stream->last_kernel, memory_order_relaxed),        \
                              "%s of %zu bytes " desc " on device %d", fn, bytes, stream->dev->index);                 \
    return OXIDE_OK;

oxide_status oxide_memcpy_htod_async(oxide_stream *stream, uint64_t dst, const void *src, size_t bytes){
    ASYNC_COPY("oxide_memcpy_htod_async", oxide__cu.MemcpyHtoDAsync(dst, src, bytes, cs), "host to device")}

oxide_status oxide_memcpy_dtoh_async(oxide_stream *stream, void *dst, uint64_t src, size_t bytes){
    ASYNC_COPY("oxide_memcpy_dtoh_async", oxide__cu.MemcpyDtoHAsync(dst, src, bytes, cs), "device to host")}

oxide_status oxide_memcpy_dtod_async(oxide_stream *stream, uint64_t dst, uint64_t src, size_t bytes) {
    ASYNC_COPY("oxide_memcpy_dtod_async", oxide__cu.MemcpyDtoDAsync(dst, src, bytes, cs), "device to device")
}

/* ---- memset ---- */

static oxide_status memset_args(const char *fn, uint64_t dst, uint32_t value, unsigned elem_size) {
    if (!dst)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    if (elem_size != 1 && elem_size != 2 && elem_size != 4)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: elem_size %u (must be 1, 2 or 4)", fn, elem_size);
    if ((elem_size == 1 && value > 0xff) || (elem_size == 2 && value > 0xffff))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: value 0x%x does not fit in %u byte(s)", fn, value,
                           elem_size);
    if (dst % elem_size)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: dst 0x%llx is not aligned to %u bytes", fn,
                           (unsigned long long)dst, elem_size);
    return OXIDE_OK;
}

CUresult oxide__rt_memset(uint64_t dst, uint32_t value, size_t count, unsigned elem_size, CUstream cs, bool async) {
    if (async) {
        if (elem_size == 1)
            return oxide__cu.MemsetD8Async(dst, (unsigned char)value, count, cs);
        if (elem_size == 2)
            return oxide__cu.MemsetD16Async(dst, (unsigned short)value, count, cs);
        return oxide__cu.MemsetD32Async(dst, value, count, cs);
    }
    if (elem_size == 1)
        return oxide__cu.MemsetD8(dst, (unsigned char)value, count);
    if (elem_size == 2)
        return oxide__cu.MemsetD16(dst, (unsigned short)value, count);
    return oxide__cu.MemsetD32(dst, value, count);
}

oxide_status oxide_memset(oxide_device *dev, uint64_t dst, uint32_t value, size_t count, unsigned elem_size) {
    CHECK_DEV(dev, "oxide_memset");
    oxide_status st = memset_args("oxide_memset", dst, value, elem_size);
    if (st != OXIDE_OK)
        return st;
    if (!count)
        return OXIDE_OK;
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK)
        return st;
    CUresult r = oxide__rt_memset(dst, value, count, elem_size, NULL, false);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, atomic_load_explicit(&dev->last_kernel, memory_order_relaxed),
                              "oxide_memset of %zu elements on device %d", count, dev->index);
    return OXIDE_OK;
}

oxide_status oxide_memset_async(oxide_stream *stream, uint64_t dst, uint32_t value, size_t count, unsigned elem_size) {
    CUstream cs;
    oxide_status st = enter_stream(stream, "oxide_memset_async", &cs);
    if (st != OXIDE_OK)
        return st;
    if ((st = memset_args("oxide_memset_async", dst, value, elem_size)) != OXIDE_OK)
        return st;
    if (!count)
        return OXIDE_OK;
    CUresult r = oxide__rt_memset(dst, value, count, elem_size, cs, true);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(stream->dev, r, NULL, "oxide_memset_async of %zu elements on device %d", count,
                              stream->dev->index);
    return OXIDE_OK;
}
