/* PTX bundles: one PTX text per target in one blob, so that one binary (or one --module file)
 * runs on several GPU generations (include/oxide.h, oxide_ptx_bundle_select). The format is
 * text, one header line and the texts back to back:
 *
 *     // oxide.ptx-bundle.v1 sm_80:LEN sm_90a:LEN\n<LEN bytes of PTX><LEN bytes of PTX>
 *
 * Loading picks the text for the device: the arch-specific target of exactly its compute
 * capability, else the highest target it can run (the driver JIT-compiles PTX of an older
 * target). Input is untrusted: every length is checked against the blob. No LLVM here. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

static const char BUNDLE[] = "// oxide.ptx-bundle.v1 ";

bool oxide__is_ptx_bundle(const char *data, size_t len) {
    return data && len >= sizeof BUNDLE - 1 && !memcmp(data, BUNDLE, sizeof BUNDLE - 1);
}

/* How well PTX for target runs on compute capability major.minor: 0 not at all; higher is
 * better (the exact arch-specific target first, then the newest target at or below it). */
unsigned oxide__target_rank(const char *target, int major, int minor) {
    if (strncmp(target, "sm_", 3) != 0)
        return 0;
    unsigned sm = 0;
    const char *p = target + 3;
    while (*p >= '0' && *p <= '9' && sm < 10000)
        sm = sm * 10 + (unsigned)(*p++ - '0');
    char suffix = *p == 'a' || *p == 'f' ? *p : 0;
    unsigned cc = (unsigned)(major * 10 + minor);
    if (suffix == 'a') /* arch-specific code (wgmma, setmaxnreg) runs on that exact chip only */
        return sm == cc ? 100000 : 0;
    if (suffix == 'f') /* a family: the chips of that major version from it on */
        return sm / 10 == (unsigned)major && sm <= cc ? sm * 10 + 1 : 0;
    return sm && sm <= cc ? sm * 10 : 0;
}

oxide_status oxide_ptx_bundle_select(const char *data, size_t len, int major, int minor, const char **ptx,
                                     size_t *ptx_len, char *target, size_t target_cap) {
    if (!data || !ptx || !ptx_len)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_ptx_bundle_select: %s is NULL",
                           !data  ? "data"
                           : !ptx ? "ptx"
                                  : "ptx_len");
    if (!oxide__is_ptx_bundle(data, len)) {
        *ptx = data, *ptx_len = len;
        if (target && target_cap)
            target[0] = 0;
        return OXIDE_OK;
    }
    const char *eol = memchr(data, '\n', len);
    if (!eol)
        return oxide__fail(OXIDE_ERROR_PARSE, "PTX bundle: the header line has no end");
    size_t body = (size_t)(eol + 1 - data), offset = body, best_off = 0, best_len = 0;
    unsigned best = 0, n = 0;
    char best_name[32] = "", names[256] = "";
    for (const char *p = data + sizeof BUNDLE - 1; p < eol;) {
        /* TARGET:LENGTH, read within the header line only (the blob need not end in a NUL) */
        char name[32];
        size_t nl = 0;
        unsigned long long tlen = 0;
        const char *q = p;
        while (q < eol && nl < sizeof name - 1 && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
            name[nl++] = *q++;
        name[nl] = 0;
        bool digits = q + 1 < eol && *q == ':' && q[1] >= '0' && q[1] <= '9';
        /* past len the value only has to stay too big (it saturates there, never wraps) */
        for (q += digits; digits && q < eol && *q >= '0' && *q <= '9'; q++)
            tlen = tlen > len ? tlen : tlen * 10 + (unsigned)(*q - '0');
        if (!nl || !digits || (q < eol && *q != ' '))
            return oxide__fail(OXIDE_ERROR_PARSE, "PTX bundle: header entry %u is not TARGET:LENGTH", n + 1);
        size_t used = (size_t)(q - p);
        if (tlen > len - offset)
            return oxide__fail(OXIDE_ERROR_PARSE,
                               "PTX bundle: %s's %llu bytes run past the end of the bundle (%zu bytes left)", name,
                               tlen, len - offset);
        unsigned rank = oxide__target_rank(name, major, minor);
        if (rank > best)
            best = rank, best_off = offset, best_len = (size_t)tlen, snprintf(best_name, sizeof best_name, "%s", name);
        size_t used_names = strlen(names);
        snprintf(names + used_names, sizeof names - used_names, "%s%s", n ? ", " : "", name);
        offset += (size_t)tlen;
        n++;
        p += used;
        while (p < eol && *p == ' ')
            p++;
    }
    if (!n)
        return oxide__fail(OXIDE_ERROR_PARSE, "PTX bundle: no targets in the header");
    if (!best && major * 10 + minor < 80)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "the PTX bundle carries %s, none of which a GPU of compute capability %d.%d can run (oxide "
                           "compiles for sm_80 and later)",
                           names, major, minor);
    if (!best)
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED,
                           "the PTX bundle carries %s, none of which a GPU of compute capability %d.%d can run; add "
                           "sm_%d%d%s to the targets it is built for (cargo oxide build --sm LIST)",
                           names, major, minor, major, minor, major == 9 || major == 10 ? "a" : "");
    *ptx = data + best_off, *ptx_len = best_len;
    if (target && target_cap)
        snprintf(target, target_cap, "%s", best_name);
    return OXIDE_OK;
}
