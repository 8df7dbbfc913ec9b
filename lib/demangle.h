/* Rust v0 symbol demangling; needs no LLVM. Internal, not installed. */
#ifndef OXIDE_DEMANGLE_H
#define OXIDE_DEMANGLE_H

#include <stddef.h>

/* Demangles a v0 symbol ("_R...") into buf (cap >= 1 bytes, always NUL-terminated, cut at cap);
 * a name that is not v0 or does not parse is copied as it is. Returns buf. Bounded in time and
 * stack by the input's length and a nesting limit, whatever the input. */
const char *oxide__demangle(const char *sym, char *buf, size_t cap);

#endif
