/* libFuzzer target for the bitcode import's structural check (lib/bitcode_check.c and
 * lib/bitcode_check_refs.c), which runs on every unit before LLVM reads it. The check needs no
 * LLVM, so unlike the import it is built here with coverage and ASan/UBSan: it must answer every
 * input without a sanitizer report, and every refusal must say why. Seeds: the units of
 * tests/unit/bitcode. The LLVM side is covered by test_bitcode's mutation runs instead
 * (docs/reliability.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bitcode_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* a copy of exactly size bytes, so that ASan sees a read past the input */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    char why[256];
    if (!oxide__bitcode_check(copy, size, why, sizeof why) && !why[0])
        __builtin_trap(); /* a refusal without a reason */
    free(copy);
    return 0;
}
