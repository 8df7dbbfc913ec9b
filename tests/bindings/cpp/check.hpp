// Minimal checks for the C++ binding tests: CHECK(cond) records a failure and goes on.
#pragma once
#include <cstdio>

#include <oxide.h>

inline int g_failures = 0;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                              \
            g_failures++;                                                                                              \
        }                                                                                                              \
    } while (0)
#define CHECK_THROWS(status_, expr)                                                                                    \
    do {                                                                                                               \
        bool thrown_ = false;                                                                                          \
        try {                                                                                                          \
            expr;                                                                                                      \
        } catch (const oxide::Error &e_) {                                                                             \
            thrown_ = e_.status() == (status_);                                                                        \
            if (!thrown_)                                                                                              \
                std::fprintf(stderr, "%s:%d: %s threw %s\n", __FILE__, __LINE__, #expr, e_.what());                    \
        }                                                                                                              \
        if (!thrown_) {                                                                                                \
            std::fprintf(stderr, "%s:%d: %s did not throw %s\n", __FILE__, __LINE__, #expr, #status_);                 \
            g_failures++;                                                                                              \
        }                                                                                                              \
    } while (0)

// True (after printing why) when there is no GPU: the GPU tests then exit 77, ctest's "skipped".
inline bool skip_without_gpu() {
    int n = 0;
    oxide_status st = oxide_device_count(&n);
    if (st == OXIDE_OK && n > 0)
        return false;
    std::printf("SKIP: no GPU (%s: %s)\n", oxide_status_name(st), st ? oxide_last_error() : "none");
    return true;
}
