/* libFuzzer target for the manifest reader (oxide_manifest_parse), which the runtime runs on
 * every PTX it loads. Whatever the bytes, it must return (no crash, hang or leak), fail only with
 * MANIFEST or OUT_OF_MEMORY and a message, and every accessor of a manifest it accepts must
 * answer for every kernel and parameter it reports, with strings that are NUL-terminated.
 *
 * Seeds: tests/fuzz/manifest-seeds/, manifest lines written by the compiler (tests/ir modules
 * and the example kernels compiled by `oxide compile`). CI runs it for 20 seconds
 * (scripts/test); by hand:
 *   build-fuzz/tests/fuzz/fuzz_manifest -max_total_time=300 -max_len=65536 -timeout=10 \
 *       build-fuzz/manifest-corpus tests/fuzz/manifest-seeds
 * A crash leaves crash-<sha1> in the working directory; replay it with
 *   build-fuzz/tests/fuzz/fuzz_manifest crash-<sha1>
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oxide.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reading every byte of s makes ASan catch a string that is not NUL-terminated in its block. */
static size_t touch(const char *s) {
    if (!s)
        __builtin_trap();
    return strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    oxide_manifest *m = NULL;
    oxide_status st = oxide_manifest_parse((const char *)data, size, &m);
    if (st != OXIDE_OK) {
        if ((st != OXIDE_ERROR_MANIFEST && st != OXIDE_ERROR_OUT_OF_MEMORY) || !oxide_last_error()[0] || m)
            __builtin_trap();
        return 0;
    }
    size_t n = oxide_manifest_kernel_count(m), sum = touch(oxide_manifest_target(m));
    for (size_t k = 0; k < n; k++) {
        const char *name = oxide_manifest_kernel_name(m, k);
        sum += touch(name) + touch(oxide_manifest_kernel_entry(m, k));
        size_t found;
        /* Names are unique (the reader refuses duplicates), so a name finds its own kernel. */
        if (oxide_manifest_kernel_find(m, name, &found) != OXIDE_OK || found != k)
            __builtin_trap();
        uint32_t lb[2], cl[3], dyn;
        if (oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn) != OXIDE_OK)
            __builtin_trap();
        uint32_t block[3];
        if (oxide_manifest_kernel_block(m, k, block) != OXIDE_OK ||
            (block[0] && (uint64_t)block[0] * block[1] * block[2] > 1024))
            __builtin_trap();
        size_t np = oxide_manifest_param_count(m, k);
        for (size_t p = 0; p < np; p++) {
            const char *pname;
            oxide_param_kind kind;
            oxide_scalar scalar;
            int mut;
            uint32_t psize, palign;
            if (oxide_manifest_param(m, k, p, &pname, &kind, &scalar, &mut, &psize, &palign) != OXIDE_OK)
                __builtin_trap();
            sum += touch(pname);
            /* a tensor's rank is what the launch lays out 1 + 2 * rank PTX parameters from */
            uint32_t rank = 99;
            if (oxide_manifest_param_rank(m, k, p, &rank) != OXIDE_OK ||
                (kind == OXIDE_PARAM_TENSOR ? rank < 1 || rank > 4 : rank != 0))
                __builtin_trap();
        }
        if (oxide_manifest_param(m, k, np, NULL, NULL, NULL, NULL, NULL, NULL) == OXIDE_OK)
            __builtin_trap(); /* one past the last parameter must be refused */
    }
    if (oxide_manifest_kernel_attrs(m, n, NULL, NULL, NULL) == OXIDE_OK)
        __builtin_trap();
    oxide_manifest_destroy(m);
    return sum == (size_t)-1; /* keeps the reads */
}
