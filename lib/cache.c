/* The on-disk module cache: compiled PTX (with its manifest) stored under a SHA-256 key of
 * everything the PTX depends on. docs/c-api.md ("The module cache") states the key, the layout
 * and the guarantees; the comments here say why the code keeps them. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "ir.h"
#include "llvm.h"

/* Entries above this size are neither read nor written: a cache file is read whole, and a
 * corrupt size field or a planted file must not make the library allocate without bound. */
#define CACHE_MAX_ENTRY ((size_t)512 << 20)

/* ---- SHA-256 (FIPS 180-4): a strong hash, so distinct inputs never share an entry ---- */

typedef struct sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t nbuf;
} sha256;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(sha256 *s, const unsigned char *p) {
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, s->h, sizeof v);
    /* the working variables in registers (a memmove of the eight each round was most of the
     * time a key of large bitcode took) */
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha_init(sha256 *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->nbuf = 0;
}

static void sha_put(sha256 *s, const void *data, size_t n) {
    const unsigned char *p = data;
    s->len += n;
    /* whole blocks straight from the input */
    while (!s->nbuf && n >= 64) {
        sha_block(s, p);
        p += 64, n -= 64;
    }
    while (n) {
        size_t k = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, k);
        s->nbuf += k, p += k, n -= k;
        if (s->nbuf == 64) {
            sha_block(s, s->buf);
            s->nbuf = 0;
        }
    }
}

static void sha_printf(sha256 *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sha_printf(sha256 *s, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sha_put(s, line, n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The digest as 64 lower-case hex digits and a NUL. */
static void sha_hex(sha256 *s, char out[65]) {
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80, zero = 0, be[8];
    sha_put(s, &pad, 1);
    while (s->nbuf != 56)
        sha_put(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        be[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_put(s, be, 8);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned)(s->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

void oxide__sha256_hex(const void *data, size_t n, char out[65]) {
    sha256 s;
    sha_init(&s);
    sha_put(&s, data, n);
    sha_hex(&s, out);
}

/* ---- the key ---- */

/* A rebuilt liboxide keeps its version number while its code generation changes, so the key
 * also names the library file itself (its size and modification time): a rebuilt or reinstalled
 * library never reads entries an older build wrote. */
static char build_id[96] = "unknown";
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static void find_build_id(void) {
    /* the address of the version string, not of a function: a PIE program's reference to an
     * exported function may be its own PLT stub, which dladdr would place in the program */
    Dl_info info;
    struct stat st;
    if (dladdr((const void *)oxide_version(), &info) && info.dli_fname && !stat(info.dli_fname, &st))
        snprintf(build_id, sizeof build_id, "%lld.%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 (long)st.st_mtim.tv_nsec);
}

/* The start of both keys: what they are, this liboxide, the options. */
static void key_header(sha256 *s, const char *kind, const oxide_options *opts) {
    pthread_once(&build_once, find_build_id);
    sha_init(s);
    sha_printf(s, "%s\nliboxide %s %s\n", kind, oxide_version(), build_id);
    sha_printf(s, "target %s\nptx %d.%d\nopt %d\nfast_math %d\nline_info %d\n", opts->target, opts->ptx_major,
               opts->ptx_minor, opts->opt_level, (int)opts->fast_math, (int)opts->line_info);
    sha_printf(s, "tile_variants %d\n", opts->tile_variants);
}

oxide_status oxide_module_cache_key(oxide_module *mod, const oxide_options *opts, char key[65]) {
    if (!mod || !key)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_cache_key: %s is NULL", mod ? "key" : "mod");
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    const char *text;
    oxide_status st = oxide_module_print(mod, &text);
    if (st)
        return st;
    sha256 s;
    key_header(&s, "oxide-cache-key 1", opts);
    /* imported bitcode is not part of the printed text, but it is part of the PTX */
    sha_printf(&s, "bitcode %u\n", mod->bitcode.len);
    for (uint32_t i = 0; i < mod->bitcode.len; i++) {
        const oxide_bitcode_unit *u = mod->bitcode.items[i];
        sha_printf(&s, "unit %zu %s %zu\n", strlen(u->name), u->name, u->size);
        sha_put(&s, u->data, u->size);
    }
    sha_printf(&s, "module %zu\n", strlen(text));
    sha_put(&s, text, strlen(text));
    sha_hex(&s, key);
    return OXIDE_OK;
}

static void sha_put_cb(void *s, const void *data, size_t n) { sha_put(s, data, n); }

oxide_status oxide_bitcode_kernel_key(const oxide_bitcode_ref *units, size_t n, const oxide_options *opts,
                                      char key[65]) {
    if ((!units && n) || !key)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_bitcode_kernel_key: %s is NULL", key ? "units" : "key");
    for (size_t i = 0; i < n; i++)
        if (!units[i].data || !units[i].size)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_bitcode_kernel_key: unit %zu (%s) is empty", i,
                               units[i].name ? units[i].name : "unnamed");
    oxide_options defaults;
    opts = oxide__options_or_default(opts, &defaults);
    sha256 s;
    key_header(&s, "oxide-kernel-key 2", opts);
    /* what the units' kernels reach (lib/import_key.c) */
    oxide_status st = oxide__kernel_key_material(units, n, opts->line_info, sha_put_cb, &s);
    if (st)
        return st;
    sha_hex(&s, key);
    return OXIDE_OK;
}

/* ---- the directory and its entries ---- */

/* The cache directory for dir (NULL: $OXIDE_CACHE_DIR, $XDG_CACHE_HOME/oxide, ~/.cache/oxide),
 * created if missing; false when there is none to use ("" turns the cache off). */
bool oxide__cache_dir(const char *dir, char *out, size_t cap) {
    const char *env;
    int n;
    if (dir)
        n = snprintf(out, cap, "%s", dir);
    else if ((env = getenv("OXIDE_CACHE_DIR")))
        n = snprintf(out, cap, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        n = snprintf(out, cap, "%s/oxide", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(out, cap, "%s/.cache/oxide", env);
    else
        return false;
    if (n <= 0 || (size_t)n >= cap)
        return false; /* "" (n == 0): the cache is off */
    /* mkdir -p; 0700 because whoever can write the directory decides what PTX is loaded */
    for (char *p = out + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            int r = mkdir(out, 0700);
            *p = c;
            if (r && errno != EEXIST)
                return false;
            if (!c)
                break;
        }
    }
    return true;
}

char *oxide__cache_read(const char *path, size_t max, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *data = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size > max ||
        !(data = malloc((size_t)st.st_size + 1)))
        goto done;
    size_t got = 0, want = (size_t)st.st_size;
    while (got < want) {
        ssize_t r = read(fd, data + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(data);
            data = NULL;
            goto done;
        }
        got += (size_t)r;
    }
    data[got] = 0;
    *len = got;
done:
    close(fd);
    return data;
}

/* The PTX of a valid entry (malloc'd) or NULL: whatever does not check out is a miss, so a
 * truncated, corrupt or foreign file is recompiled and then replaced. */
static char *read_entry(const char *path, const char key[65], size_t *len) {
    size_t got = 0;
    char *data = oxide__cache_read(path, CACHE_MAX_ENTRY + 512, &got), *ptx = NULL;
    if (!data)
        return NULL;
    char fkey[65], fsum[65], sum[65], ver[64];
    size_t size;
    int hdr = 0;
    if (sscanf(data, "oxide-cache-entry 1\nliboxide %63s\nkey %64s\nsize %zu\nsha256 %64s\n%n", ver, fkey, &size, fsum,
               &hdr) != 4 ||
        hdr <= 0 || strcmp(ver, oxide_version()) || strcmp(fkey, key) || size != got - (size_t)hdr)
        goto done;
    oxide__sha256_hex(data + hdr, size, sum);
    if (strcmp(sum, fsum) || !(ptx = malloc(size + 1)))
        goto done;
    memcpy(ptx, data + hdr, size);
    ptx[size] = 0;
    *len = size;
done:
    free(data);
    return ptx;
}

static bool write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w, n -= (size_t)w;
    }
    return true;
}

/* Write to a private temporary file, then rename it over the entry: readers see the old entry or
 * the whole new one, never a part (a crash mid-write leaves a temporary file, or an entry whose
 * checksum fails). */
bool oxide__cache_write(const char *dir, const char *path, const char *tag, const char *const *parts,
                        const size_t *lens, size_t nparts) {
    static atomic_uint counter;
    char tmp[4200];
    int n = snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%u-%.16s", dir, (long)getpid(), atomic_fetch_add(&counter, 1), tag);
    if (n <= 0 || (size_t)n >= sizeof tmp)
        return false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = true;
    for (size_t i = 0; i < nparts && ok; i++)
        ok = write_all(fd, parts[i], lens[i]);
    ok = !close(fd) && ok;
    if (!ok || rename(tmp, path)) {
        unlink(tmp);
        return false;
    }
    return true;
}

/* Failure is silent: the caller has its PTX either way. */
static void write_entry(const char *dir, const char *path, const char key[65], const char *ptx, size_t len) {
    char sum[65], hdr[300];
    if (len > CACHE_MAX_ENTRY)
        return;
    oxide__sha256_hex(ptx, len, sum);
    int h = snprintf(hdr, sizeof hdr, "oxide-cache-entry 1\nliboxide %s\nkey %s\nsize %zu\nsha256 %s\n",
                     oxide_version(), key, len, sum);
    const char *parts[2] = {hdr, ptx};
    size_t lens[2] = {(size_t)h, len};
    oxide__cache_write(dir, path, key, parts, lens, 2);
}

oxide_status oxide_module_compile_cached(oxide_module *mod, const oxide_options *opts, const char *dir,
                                         const char **ptx, size_t *len, int *hit) {
    if (!mod || !ptx)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_module_compile_cached: %s is NULL",
                           mod ? "ptx" : "mod");
    char key[65], path[4200], base[4096];
    oxide_status st = oxide_module_cache_key(mod, opts, key);
    if (st)
        return st;
    bool have_dir = oxide__cache_dir(dir, base, sizeof base);
    int n = have_dir ? snprintf(path, sizeof path, "%s/%s.ptx", base, key) : -1;
    have_dir = n > 0 && (size_t)n < sizeof path;
    size_t got = 0;
    char *cached = have_dir ? read_entry(path, key, &got) : NULL;
    if (cached) {
        free(mod->ptx);
        free(mod->llvm_ir); /* it would describe another compile */
        mod->ptx = cached;
        mod->ptx_len = got;
        mod->llvm_ir = NULL;
        mod->ir_pending = false;
        *ptx = cached;
        if (len)
            *len = got;
        if (hit)
            *hit = 1;
        return OXIDE_OK;
    }
    size_t out_len = 0;
    if ((st = oxide_module_compile(mod, opts, ptx, &out_len)))
        return st;
    if (have_dir)
        write_entry(base, path, key, *ptx, out_len);
    if (len)
        *len = out_len;
    if (hit)
        *hit = 0;
    return OXIDE_OK;
}
