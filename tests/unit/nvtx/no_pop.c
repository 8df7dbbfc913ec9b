/* A library with nvtxRangePushA but no nvtxRangePop: test_nvtx checks that the loader refuses a
 * half NVTX (ranges it could open but never close) and falls back to doing nothing. */
#define EXPORT __attribute__((visibility("default")))

EXPORT int nvtxRangePushA(const char *message) { return message ? 0 : -1; }
