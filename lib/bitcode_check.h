/* A structural check of LLVM bitcode before LLVM reads it; needs no LLVM. Internal, not
 * installed.
 *
 * LLVM's bitcode reader is not built for hostile input: sizes it reads are trusted for
 * allocations (a type table or a function's block count becomes a vector of that many entries)
 * and some malformed abbreviations reach a fatal error. This walk reads the whole bitstream once,
 * in time linear in its size and memory bounded by fixed limits, and refuses what LLVM could not
 * read safely: a bad wrapper or magic, abbreviation widths LLVM does not allow, arrays of
 * zero-width elements, blocks whose length leaves the buffer or its parent, records or arrays
 * longer than the bits that remain, nesting deeper than real bitcode, counts (type table
 * entries, a function's basic blocks, metadata strings) larger than the records that follow can
 * hold, and the numbers by which records name each other where the reader would follow one that
 * does not exist or cannot end: metadata numbers never defined (in metadata records, debug
 * locations, attachments), a compile unit's imports that are not imported entities, module
 * constants that are their own operands. Memory beyond the fixed limits grows with the unit
 * (a few bytes a metadata and a constant operand). It accepts what LLVM 22 writes. */
#ifndef OXIDE_BITCODE_CHECK_H
#define OXIDE_BITCODE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true when data[0, size) is a well-formed bitstream by the rules above. Otherwise false, with
 * "what, at byte N" in why (cap >= 1 bytes, NUL-terminated). */
bool oxide__bitcode_check(const uint8_t *data, size_t size, char *why, size_t cap);

#endif
