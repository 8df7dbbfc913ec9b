/* The slice of the CUDA driver API the runtime uses, declared here so that oxide builds without
 * the CUDA headers and loads libcuda.so.1 with dlopen (docs/design.md section 6). Types and values
 * are those of cuda.h (CUDA 12.0 ABI and later); only what the runtime calls is declared. */
#ifndef OXIDE_RUNTIME_DRIVER_H
#define OXIDE_RUNTIME_DRIVER_H

#include <stddef.h>

#include "oxide.h"

typedef int CUresult; /* an enum in cuda.h: int-sized on every ABI CUDA supports */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef void (*CUhostFn)(void *userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);
typedef size_t (*CUoccupancyB2DSize)(int blockSize);

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_UNKNOWN = 999
};

enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120
};

enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
};

typedef int CUjit_option;
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_LOG_VERBOSE = 12,
    CU_JIT_GENERATE_LINE_INFO = 13
};

/* cuPointerGetAttributes, for the device a launch argument's memory lives on (runtime/peer.c). */
enum {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
};
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2 };

enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_BLOCKING_SYNC = 1, CU_EVENT_DISABLE_TIMING = 2 };
enum { CU_MEMHOSTALLOC_PORTABLE = 1 };
enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1, CU_STREAM_CAPTURE_MODE_RELAXED = 2 };

typedef int CUlaunchAttributeID;
enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

typedef union CUlaunchAttributeValue {
    char pad[64];
    void *align_; /* cuda.h's union holds pointers: 8-byte aligned */
    int cooperative;
    struct {
        unsigned int x, y, z;
    } clusterDim;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute {
    CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

/* X(field, symbol, required, return type, parameters). The symbol is the versioned one that
 * cuda.h's macros select (cuMemAlloc -> cuMemAlloc_v2), so dlsym finds the current ABI. Optional
 * entries may be missing from older drivers; the features that need them say so. */
#define OXIDE_CUDA_FUNCTIONS(X)                                                                                        \
    X(GetErrorName, "cuGetErrorName", 1, CUresult, (CUresult, const char **))                                          \
    X(GetErrorString, "cuGetErrorString", 1, CUresult, (CUresult, const char **))                                      \
    X(Init, "cuInit", 1, CUresult, (unsigned int))                                                                     \
    X(DriverGetVersion, "cuDriverGetVersion", 1, CUresult, (int *))                                                    \
    X(DeviceGet, "cuDeviceGet", 1, CUresult, (CUdevice *, int))                                                        \
    X(DeviceGetCount, "cuDeviceGetCount", 1, CUresult, (int *))                                                        \
    X(DeviceGetName, "cuDeviceGetName", 1, CUresult, (char *, int, CUdevice))                                          \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", 1, CUresult, (int *, int, CUdevice))                                 \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", 1, CUresult, (size_t *, CUdevice))                                        \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1, CUresult, (CUcontext *, CUdevice))                        \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1, CUresult, (CUdevice))                                \
    X(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", 1, CUresult, (CUdevice))                                    \
    X(CtxGetCurrent, "cuCtxGetCurrent", 1, CUresult, (CUcontext *))                                                    \
    X(CtxSetCurrent, "cuCtxSetCurrent", 1, CUresult, (CUcontext))                                                      \
    X(CtxSynchronize, "cuCtxSynchronize", 1, CUresult, (void))                                                         \
    X(StreamCreate, "cuStreamCreate", 1, CUresult, (CUstream *, unsigned int))                                         \
    X(StreamDestroy, "cuStreamDestroy_v2", 1, CUresult, (CUstream))                                                    \
    X(StreamSynchronize, "cuStreamSynchronize", 1, CUresult, (CUstream))                                               \
    X(StreamQuery, "cuStreamQuery", 1, CUresult, (CUstream))                                                           \
    X(StreamWaitEvent, "cuStreamWaitEvent", 1, CUresult, (CUstream, CUevent, unsigned int))                            \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", 1, CUresult, (CUstream, int))                                     \
    X(StreamEndCapture, "cuStreamEndCapture", 1, CUresult, (CUstream, CUgraph *))                                      \
    X(EventCreate, "cuEventCreate", 1, CUresult, (CUevent *, unsigned int))                                            \
    X(EventDestroy, "cuEventDestroy_v2", 1, CUresult, (CUevent))                                                       \
    X(EventRecord, "cuEventRecord", 1, CUresult, (CUevent, CUstream))                                                  \
    X(EventSynchronize, "cuEventSynchronize", 1, CUresult, (CUevent))                                                  \
    X(EventQuery, "cuEventQuery", 1, CUresult, (CUevent))                                                              \
    X(EventElapsedTime, "cuEventElapsedTime_v2", 0, CUresult, (float *, CUevent, CUevent))                             \
    X(EventElapsedTimeV1, "cuEventElapsedTime", 0, CUresult, (float *, CUevent, CUevent))                              \
    X(MemAlloc, "cuMemAlloc_v2", 1, CUresult, (CUdeviceptr *, size_t))                                                 \
    X(MemFree, "cuMemFree_v2", 1, CUresult, (CUdeviceptr))                                                             \
    X(MemGetInfo, "cuMemGetInfo_v2", 1, CUresult, (size_t *, size_t *))                                                \
    X(MemHostAlloc, "cuMemHostAlloc", 1, CUresult, (void **, size_t, unsigned int))                                    \
    X(MemFreeHost, "cuMemFreeHost", 1, CUresult, (void *))                                                             \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", 1, CUresult, (CUdeviceptr, const void *, size_t))                                 \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", 1, CUresult, (void *, CUdeviceptr, size_t))                                       \
    X(MemcpyDtoD, "cuMemcpyDtoD_v2", 1, CUresult, (CUdeviceptr, CUdeviceptr, size_t))                                  \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 1, CUresult, (CUdeviceptr, const void *, size_t, CUstream))             \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 1, CUresult, (void *, CUdeviceptr, size_t, CUstream))                   \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 1, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream))              \
    X(MemsetD8, "cuMemsetD8_v2", 1, CUresult, (CUdeviceptr, unsigned char, size_t))                                    \
    X(MemsetD16, "cuMemsetD16_v2", 1, CUresult, (CUdeviceptr, unsigned short, size_t))                                 \
    X(MemsetD32, "cuMemsetD32_v2", 1, CUresult, (CUdeviceptr, unsigned int, size_t))                                   \
    X(MemsetD8Async, "cuMemsetD8Async", 1, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream))                   \
    X(MemsetD16Async, "cuMemsetD16Async", 1, CUresult, (CUdeviceptr, unsigned short, size_t, CUstream))                \
    X(MemsetD32Async, "cuMemsetD32Async", 1, CUresult, (CUdeviceptr, unsigned int, size_t, CUstream))                  \
    X(ModuleLoadDataEx, "cuModuleLoadDataEx", 1, CUresult,                                                             \
      (CUmodule *, const void *, unsigned int, CUjit_option *, void **))                                               \
    X(ModuleUnload, "cuModuleUnload", 1, CUresult, (CUmodule))                                                         \
    X(ModuleGetFunction, "cuModuleGetFunction", 1, CUresult, (CUfunction *, CUmodule, const char *))                   \
    X(FuncGetAttribute, "cuFuncGetAttribute", 1, CUresult, (int *, int, CUfunction))                                   \
    X(FuncSetAttribute, "cuFuncSetAttribute", 1, CUresult, (CUfunction, int, int))                                     \
    X(FuncGetParamInfo, "cuFuncGetParamInfo", 0, CUresult, (CUfunction, size_t, size_t *, size_t *))                   \
    X(LaunchKernel, "cuLaunchKernel", 1, CUresult,                                                                     \
      (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,   \
       CUstream, void **, void **))                                                                                    \
    X(LaunchKernelEx, "cuLaunchKernelEx", 0, CUresult, (const CUlaunchConfig *, CUfunction, void **, void **))         \
    X(LaunchHostFunc, "cuLaunchHostFunc", 1, CUresult, (CUstream, CUhostFn, void *))                                   \
    X(StreamAddCallback, "cuStreamAddCallback", 0, CUresult, (CUstream, CUstreamCallback, void *, unsigned int))       \
    X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", 0, CUresult,                                                     \
      (void *, int, unsigned int, void *, const unsigned long long *, const unsigned long long *,                      \
       const unsigned int *, const unsigned int *, int, int, int, int))                                                \
    X(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 1, CUresult,           \
      (int *, CUfunction, int, size_t))                                                                                \
    X(OccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", 1, CUresult,                                 \
      (int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int))                                                     \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", 1, CUresult, (CUgraphExec *, CUgraph, unsigned long long))      \
    X(GraphLaunch, "cuGraphLaunch", 1, CUresult, (CUgraphExec, CUstream))                                              \
    X(GraphDestroy, "cuGraphDestroy", 1, CUresult, (CUgraph))                                                          \
    X(GraphExecDestroy, "cuGraphExecDestroy", 1, CUresult, (CUgraphExec))                                              \
    X(DeviceCanAccessPeer, "cuDeviceCanAccessPeer", 0, CUresult, (int *, CUdevice, CUdevice))                          \
    X(CtxEnablePeerAccess, "cuCtxEnablePeerAccess", 0, CUresult, (CUcontext, unsigned int))                            \
    X(MemcpyPeerAsync, "cuMemcpyPeerAsync", 0, CUresult,                                                               \
      (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))                                              \
    X(PointerGetAttributes, "cuPointerGetAttributes", 0, CUresult, (unsigned int, int *, void **, CUdeviceptr))        \
    X(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", 0, CUresult, (int *))

typedef struct oxide_cuda {
#define OXIDE_CUDA_FIELD(field, sym, req, ret, params) ret(*field) params;
    OXIDE_CUDA_FUNCTIONS(OXIDE_CUDA_FIELD)
#undef OXIDE_CUDA_FIELD
    int version; /* cuDriverGetVersion, e.g. 13000 */
} oxide_cuda;

/* The loaded driver. Valid only after oxide__driver() returned OXIDE_OK. */
extern oxide_cuda oxide__cu;

/* A release (a free, destroy or unload) made by a thread while it captures a stream is one of
 * CUDA's "potentially unsafe" calls, which invalidates the capture; a garbage collector (Python's,
 * a C++ destructor) releases at any moment, also inside a capture of unrelated work. So releases
 * run with the thread's capture mode relaxed for the call, as the driver provides for libraries
 * (cuThreadExchangeStreamCaptureMode), and the caller's mode put back. */
#define OXIDE__RELAXED(call)                                                                                           \
    do {                                                                                                               \
        int mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;                                                                    \
        if (oxide__cu.ThreadExchangeStreamCaptureMode)                                                                 \
            oxide__cu.ThreadExchangeStreamCaptureMode(&mode_);                                                         \
        call;                                                                                                          \
        if (oxide__cu.ThreadExchangeStreamCaptureMode)                                                                 \
            oxide__cu.ThreadExchangeStreamCaptureMode(&mode_);                                                         \
    } while (0)

/* Load and initialise the driver once per process (thread-safe). Returns OK, or NO_DRIVER /
 * NO_DEVICE / CUDA with the reason as the thread's last error; the same answer every time. */
oxide_status oxide__driver(void);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" into buf. */
const char *oxide__cuda_error_text(CUresult r, char *buf, size_t size);

#endif
