/* Several GPUs in one process (docs/runtime.md, "Several GPUs"): peer access between primary
 * contexts, copies between devices, and the check that a launch's memory is reachable from the
 * device the kernel runs on. Each device keeps its own primary context, streams and modules
 * (device.c, module.c); this file only joins them. */
#include <stdio.h>
#include <string.h>

#include "rt.h"

/* Peer access oxide enabled, one bit per peer for each device: the launch check allows memory of
 * a device whose bit is set. Devices past 63 are never marked (the check then refuses their
 * memory, and says how to enable access, which keeps failing safe). */
#define RT_MAX_PEERS 64
static _Atomic uint64_t peer_enabled[RT_MAX_PEERS];

/* Set once the process has retained two devices through oxide: until then every launch's memory
 * is on its own device, and the per-argument pointer query is skipped. */
_Atomic int oxide__rt_several_devices;
static _Atomic int retained_devices;

void oxide__rt_note_retained(void) {
    if (atomic_fetch_add_explicit(&retained_devices, 1, memory_order_relaxed) + 1 >= 2)
        atomic_store_explicit(&oxide__rt_several_devices, 1, memory_order_release);
}

void oxide__rt_peer_forget(oxide_device *dev) {
    /* A reset unmaps the peers of the context: access must be enabled again. */
    if (dev->index < RT_MAX_PEERS)
        atomic_store_explicit(&peer_enabled[dev->index], 0, memory_order_release);
}

static bool is_enabled(int from, int to) {
    return from < RT_MAX_PEERS && to < RT_MAX_PEERS &&
           (atomic_load_explicit(&peer_enabled[from], memory_order_acquire) >> to & 1u);
}

static oxide_status check_pair(const oxide_device *dev, const oxide_device *peer, const char *fn) {
    if (oxide__rt_check_device(dev) != OXIDE_OK)
        return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s: dev", fn);
    if (oxide__rt_check_device(peer) != OXIDE_OK)
        return oxide__fail_prefix(OXIDE_ERROR_INVALID_ARGUMENT, "%s: peer", fn);
    return OXIDE_OK;
}

static oxide_status can_access(const oxide_device *dev, const oxide_device *peer, int *can, const char *fn) {
    if (dev == peer) {
        *can = 0;
        return OXIDE_OK;
    }
    if (!oxide__cu.DeviceCanAccessPeer)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: the CUDA driver has no cuDeviceCanAccessPeer", fn);
    CUresult r = oxide__cu.DeviceCanAccessPeer(can, dev->cu_dev, peer->cu_dev);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(NULL, r, NULL, "%s (device %d, peer %d)", fn, dev->index, peer->index);
    return OXIDE_OK;
}

oxide_status oxide_device_can_access_peer(const oxide_device *dev, const oxide_device *peer, int *can) {
    oxide_status st = check_pair(dev, peer, "oxide_device_can_access_peer");
    if (st != OXIDE_OK)
        return st;
    if (!can)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_can_access_peer: can is NULL");
    return can_access(dev, peer, can, "oxide_device_can_access_peer");
}

oxide_status oxide_device_enable_peer_access(oxide_device *dev, oxide_device *peer) {
    const char *fn = "oxide_device_enable_peer_access";
    oxide_status st = check_pair(dev, peer, fn);
    if (st != OXIDE_OK)
        return st;
    if (dev == peer)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "%s: dev and peer are both device %d (%s); a device always reaches its own memory, so "
                           "peer access is between two different devices",
                           fn, dev->index, dev->name);
    int can = 0;
    if ((st = can_access(dev, peer, &can, fn)) != OXIDE_OK)
        return st;
    if (!can)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "%s: device %d (%s) cannot access the memory of device %d (%s) (cuDeviceCanAccessPeer "
                           "says no: no NVLink or PCIe peer path between them); copy between them with "
                           "oxide_memcpy_peer instead, which the driver stages through the host",
                           fn, dev->index, dev->name, peer->index, peer->name);
    if (!oxide__cu.CtxEnablePeerAccess)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: the CUDA driver has no cuCtxEnablePeerAccess", fn);
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK)
        return st;
    CUresult r = oxide__cu.CtxEnablePeerAccess(peer->ctx, 0);
    /* Another library (NCCL, PyTorch) may have enabled it on the same primary contexts first. */
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        return oxide__rt_cuda(dev, r, NULL, "%s: device %d (%s) to device %d (%s)", fn, dev->index, dev->name,
                              peer->index, peer->name);
    if (dev->index < RT_MAX_PEERS && peer->index < RT_MAX_PEERS)
        atomic_fetch_or_explicit(&peer_enabled[dev->index], (uint64_t)1 << peer->index, memory_order_acq_rel);
    return OXIDE_OK;
}

oxide_status oxide_device_peer_access_enabled(const oxide_device *dev, const oxide_device *peer, int *enabled) {
    oxide_status st = check_pair(dev, peer, "oxide_device_peer_access_enabled");
    if (st != OXIDE_OK)
        return st;
    if (!enabled)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_device_peer_access_enabled: enabled is NULL");
    *enabled = is_enabled(dev->index, peer->index);
    return OXIDE_OK;
}

/* The device ordinal of device memory at p, or -1 for host, managed or unknown memory (which the
 * launch check leaves alone: CUDA decides where those are reachable). */
static int device_of(uint64_t p) {
    unsigned type = 0;
    int managed = 0, ordinal = -1;
    int attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[3] = {&type, &managed, &ordinal};
    if (!p || !oxide__cu.PointerGetAttributes || oxide__cu.PointerGetAttributes(3, attrs, data, p) != CUDA_SUCCESS)
        return -1;
    return type == CU_MEMORYTYPE_DEVICE && !managed ? ordinal : -1;
}

static const char *device_name(int index) {
    oxide_device *list = NULL;
    int n = 0;
    if (oxide__rt_devices(&list, &n) != OXIDE_OK || index < 0 || index >= n)
        return "?";
    return list[index].name;
}

oxide_status oxide__rt_check_arg_devices(const struct oxide_kernel *k, const oxide_arg *args, size_t nargs) {
    int here = k->dev->index;
    for (size_t i = 0; i < nargs; i++) {
        uint64_t p = 0;
        if (args[i].kind == OXIDE_ARG_BUFFER)
            p = args[i].ptr;
        else if (args[i].kind == OXIDE_ARG_TENSOR && args[i].bytes)
            p = ((const oxide_tensor *)args[i].bytes)->data;
        int there = p ? device_of(p) : -1;
        if (there < 0 || there == here || is_enabled(here, there))
            continue;
        return oxide__fail(OXIDE_ERROR_LAUNCH,
                           "launch %s: argument %zu '%s' is memory of device %d (%s), but the kernel runs on device %d "
                           "(%s); pass memory of device %d (copy it there with oxide_memcpy_peer), or call "
                           "oxide_device_enable_peer_access(device %d, device %d) first",
                           k->name, i + 1, k->mk ? k->mk->params[i].name : "?", there, device_name(there), here,
                           k->dev->name, here, here, there);
    }
    return OXIDE_OK;
}

/* INVALID_ARGUMENT unless [p, p + bytes) starts in memory of dev (when the driver can tell). */
static oxide_status check_side(const oxide_device *dev, uint64_t p, const char *side, const char *fn) {
    if (!p)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, side);
    int there = device_of(p);
    if (there >= 0 && there != dev->index)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "%s: %s 0x%llx is memory of device %d (%s), not of %s_dev, device %d (%s); pass the "
                           "device the memory was allocated on",
                           fn, side, (unsigned long long)p, there, device_name(there), side, dev->index, dev->name);
    return OXIDE_OK;
}

static oxide_status copy_peer(oxide_stream *stream, oxide_device *dst_dev, uint64_t dst, oxide_device *src_dev,
                              uint64_t src, size_t bytes, const char *fn) {
    oxide_status st = check_pair(dst_dev, src_dev, fn);
    if (st != OXIDE_OK)
        return st;
    if ((st = check_side(dst_dev, dst, "dst", fn)) != OXIDE_OK ||
        (st = check_side(src_dev, src, "src", fn)) != OXIDE_OK)
        return st;
    if (!bytes)
        return OXIDE_OK;
    if (!oxide__cu.MemcpyPeerAsync)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s: the CUDA driver has no cuMemcpyPeerAsync", fn);
    oxide_device *on = stream ? stream->dev : dst_dev;
    if (stream && (stream->magic != RT_STREAM || (on != dst_dev && on != src_dev)))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           stream->magic != RT_STREAM ? "%s: not a stream handle"
                                                      : "%s: the stream belongs to device %d, neither dst_dev (%d) "
                                                        "nor src_dev (%d)",
                           fn, stream->magic == RT_STREAM ? on->index : 0, dst_dev->index, src_dev->index);
    if ((st = oxide__rt_enter(src_dev)) != OXIDE_OK || (st = oxide__rt_enter(dst_dev)) != OXIDE_OK ||
        (st = oxide__rt_enter(on)) != OXIDE_OK)
        return st;
    CUstream cs;
    oxide_stream *eff;
    if ((st = oxide__rt_stream(on, stream, &cs, &eff)) != OXIDE_OK)
        return oxide__fail_prefix(st, "%s", fn);
    CUresult r = oxide__cu.MemcpyPeerAsync(dst, dst_dev->ctx, src, src_dev->ctx, bytes, cs);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(on, r, atomic_load_explicit(&eff->last_kernel, memory_order_relaxed),
                              "%s of %zu bytes from device %d to device %d", fn, bytes, src_dev->index, dst_dev->index);
    return OXIDE_OK;
}

oxide_status oxide_memcpy_peer_async(oxide_stream *stream, oxide_device *dst_dev, uint64_t dst, oxide_device *src_dev,
                                     uint64_t src, size_t bytes) {
    return copy_peer(stream, dst_dev, dst, src_dev, src, bytes, "oxide_memcpy_peer_async");
}

oxide_status oxide_memcpy_peer(oxide_device *dst_dev, uint64_t dst, oxide_device *src_dev, uint64_t src, size_t bytes) {
    const char *fn = "oxide_memcpy_peer";
    /* Synchronous on both sides: the source's pending writes land first, and the copy is done when
     * this returns (it is queued on dst_dev's legacy stream, which orders it after work there). */
    oxide_status st =
        bytes && oxide__rt_check_device(src_dev) == OXIDE_OK ? oxide_device_synchronize(src_dev) : OXIDE_OK;
    if (st != OXIDE_OK)
        return oxide__fail_prefix(st, "%s", fn);
    if ((st = copy_peer(NULL, dst_dev, dst, src_dev, src, bytes, fn)) != OXIDE_OK || !bytes)
        return st;
    return oxide_device_synchronize(dst_dev);
}
