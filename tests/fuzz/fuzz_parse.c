/* libFuzzer target for the IR text parser. Whatever the bytes, oxide_module_parse must return
 * (no crash, hang or leak), fail only with PARSE and a message, and any module it accepts must
 * print, parse back, and print to the same text. Accepted modules also go through the verifier,
 * which must return a status, whatever the module holds.
 *
 * CI runs it for about a minute from the tests/ir samples (tests/fuzz/CMakeLists.txt copies
 * them to seeds/):
 *   CC=clang-22 CXX=clang++-22 cmake -S . -B build-fuzz -DOXIDE_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_parse -j2
 *   mkdir -p build-fuzz/corpus
 *   build-fuzz/tests/fuzz/fuzz_parse -max_total_time=60 -max_len=65536 -timeout=10 \
 *       -dict=tests/fuzz/oxir.dict build-fuzz/corpus build-fuzz/tests/fuzz/seeds
 * A crash leaves crash-<sha1> in the working directory; replay it with
 *   build-fuzz/tests/fuzz/fuzz_parse crash-<sha1>
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oxide.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    oxide_context *ctx;
    oxide_module *m = NULL, *m2 = NULL;
    const char *text, *text2;
    if (oxide_context_create(&ctx) != OXIDE_OK)
        __builtin_trap();
    oxide_status st = oxide_module_parse(ctx, (const char *)data, size, &m);
    if (st != OXIDE_OK) {
        if ((st != OXIDE_ERROR_PARSE && st != OXIDE_ERROR_OUT_OF_MEMORY) || !oxide_last_error()[0] || m)
            __builtin_trap();
    } else {
        if (oxide_module_print(m, &text) != OXIDE_OK)
            __builtin_trap();
        if (oxide_module_parse(ctx, text, strlen(text), &m2) != OXIDE_OK)
            __builtin_trap(); /* printed text that does not read back */
        if (oxide_module_print(m2, &text2) != OXIDE_OK || strcmp(text, text2))
            __builtin_trap(); /* print(parse(print(x))) != print(x) */
        st = oxide_module_verify(m, NULL);
        if (st != OXIDE_OK && (st != OXIDE_ERROR_VERIFY || !oxide_last_error()[0]))
            __builtin_trap();
    }
    oxide_context_destroy(ctx); /* destroys m and m2 too */
    return 0;
}
