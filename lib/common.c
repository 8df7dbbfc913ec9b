/* Interface scalar names and UTF-8 checking: shared by compiler and runtime (no LLVM). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The enums in oxide.h are generated from scalars.def (tools/gen.py); prove they match row by row. */
enum {
#define SCALAR(ID, NAME, SIZE, CXX, NUMPY) SCALAR_ROW_##ID,
#include "scalars.def"
    NSCALARS
};
enum {
#define PARAM_KIND(ID, NAME, DOC) PARAM_ROW_##ID,
#include "scalars.def"
    NPARAM_KINDS
};
#define SCALAR(ID, NAME, SIZE, CXX, NUMPY)                                                                             \
    _Static_assert(OXIDE_SCALAR_##ID == (int)SCALAR_ROW_##ID, "include/oxide.h is stale: run tools/gen.py");
#define PARAM_KIND(ID, NAME, DOC)                                                                                      \
    _Static_assert(OXIDE_PARAM_##ID == (int)PARAM_ROW_##ID, "include/oxide.h is stale: run tools/gen.py");
#include "scalars.def"

static const struct {
    const char *name;
    size_t size;
} scalars[NSCALARS] = {
#define SCALAR(ID, NAME, SIZE, CXX, NUMPY) {NAME, SIZE},
#include "scalars.def"
};

const char *oxide_scalar_name(oxide_scalar s) { return (unsigned)s < NSCALARS ? scalars[s].name : NULL; }
size_t oxide_scalar_size(oxide_scalar s) { return (unsigned)s < NSCALARS ? scalars[s].size : 0; }

bool oxide__scalar_by_name(const char *name, size_t len, oxide_scalar *out) {
    for (unsigned i = 0; i < NSCALARS; i++)
        if (strlen(scalars[i].name) == len && !memcmp(scalars[i].name, name, len)) {
            *out = (oxide_scalar)i;
            return true;
        }
    return false;
}

bool oxide__scalar_is_fp8(oxide_scalar s) { return s == OXIDE_SCALAR_F8E4M3 || s == OXIDE_SCALAR_F8E5M2; }

bool oxide__tensor_elem_ok(oxide_scalar s) {
    switch (s) {
    case OXIDE_SCALAR_I8:
    case OXIDE_SCALAR_I32:
    case OXIDE_SCALAR_I64:
    case OXIDE_SCALAR_F16:
    case OXIDE_SCALAR_BF16:
    case OXIDE_SCALAR_F32:
    case OXIDE_SCALAR_F8E4M3:
    case OXIDE_SCALAR_F8E5M2: return true;
    default: return false;
    }
}

const char *oxide_param_kind_name(oxide_param_kind k) {
    static const char *const names[NPARAM_KINDS] = {
#define PARAM_KIND(ID, NAME, DOC) NAME,
#include "scalars.def"
    };
    return (unsigned)k < NPARAM_KINDS ? names[k] : NULL;
}

size_t oxide__utf8_len(const unsigned char *s, size_t avail) {
    unsigned c = s[0], min;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    if (avail < n)
        return 0;
    unsigned cp = c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8 */
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}
