/* libFuzzer target for the manifest reader (oxide_manifest_parse), which the runtime runs on
 * every PTX it loads. Whatever the bytes, it must return (no crash, hang or leak), fail only with
 * MANIFEST or OUT_OF_MEMORY and a message, and every accessor of a manifest it accepts must
 * answer for every kernel and parameter it reports, with strings that are NUL-terminated.
 *
 * The same bytes also go to the PTX bundle reader (oxide_ptx_bundle_select, which loading runs
 * first): a status, and a chosen text that lies inside them. Launch contracts the reader
 * accepts keep their rules.
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

/* What the bundle reader makes of the bytes, on a 9.0 and an 8.6 device. */
static void bundle(const uint8_t *data, size_t size) {
    static const int cc[2][2] = {{9, 0}, {8, 6}};
    for (int i = 0; i < 2; i++) {
        const char *ptx = NULL, *at = (const char *)data;
        size_t len = 0;
        char target[32];
        oxide_status st = oxide_ptx_bundle_select(at, size, cc[i][0], cc[i][1], &ptx, &len, target, sizeof target);
        if (st == OXIDE_OK ? !ptx || ptx < at || len > size || (size_t)(ptx - at) > size - len || !memchr(target, 0, 32)
                           : (st != OXIDE_ERROR_PARSE && st != OXIDE_ERROR_UNSUPPORTED) || !oxide_last_error()[0])
            __builtin_trap();
    }
}

/* An accepted contract keeps the rules lib/contract.c gives it. */
static void contract(const oxide_manifest *m, size_t k) {
    oxide_launch_contract c;
    if (oxide_manifest_kernel_contract(m, k, &c) != OXIDE_OK || c.fields > 31)
        __builtin_trap();
    const uint32_t *b = c.block;
    if (((c.fields & OXIDE_CONTRACT_DOMAIN) && (c.domain < 1 || c.domain > 3)) ||
        ((c.fields & OXIDE_CONTRACT_BLOCK) && (!b[0] || !b[1] || !b[2] || (uint64_t)b[0] * b[1] * b[2] > 1024)) ||
        ((c.fields & OXIDE_CONTRACT_SMEM) && c.smem_min > c.smem_max) ||
        ((c.fields & OXIDE_CONTRACT_SMEM_ALIGN) && (!c.smem_align || (c.smem_align & (c.smem_align - 1)))))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bundle(data, size);
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
        contract(m, k);
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
