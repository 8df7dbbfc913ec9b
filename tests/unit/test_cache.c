/* The on-disk module cache (lib/cache.c): a hit returns the PTX a miss compiled; changed text,
 * options or liboxide version change the key (checked against sha256sum of the documented key
 * text, an independent SHA-256); a corrupt or truncated entry is recompiled and replaced; a
 * directory that cannot be made or written degrades to compiling. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"

static const char *TEXT = "module @m\n"
                          "\n"
                          "kernel @scale(%x: slice<mut f32>, %s: f32) {\n"
                          "^0:\n"
                          "  %0 = tid.x : i32\n"
                          "  %1 = zext %0 : i64\n"
                          "  %c = icmp %1, %x.len {pred=ult} : i1\n"
                          "  cond_br %c, ^1, ^2\n"
                          "^1:\n"
                          "  %p = offset %x, %1 {elem=f32} : ptr.global\n"
                          "  %v = load %p {align=4, volatile=0} : f32\n"
                          "  %w = mul %v, %s : f32\n"
                          "  store %w, %p {align=4, volatile=0}\n"
                          "  br ^2\n"
                          "^2:\n"
                          "  ret\n"
                          "}\n";

static oxide_context *ctx;
static char dir[256];

static oxide_module *parse(const char *text) {
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, text, strlen(text), &m));
    return m;
}

/* Compile text through the cache in d; returns *hit (-1 on failure) and a copy of the PTX. */
static int compile(const char *text, const oxide_options *o, const char *d, char **ptx_out) {
    oxide_module *m = parse(text);
    const char *ptx = NULL;
    size_t len = 0;
    int hit = -1;
    oxide_status st = oxide_module_compile_cached(m, o, d, &ptx, &len, &hit);
    CHECK(st == OXIDE_OK, "%s", oxide_status_name(st));
    if (st)
        hit = -1;
    else
        CHECK(strlen(ptx) == len && strstr(ptx, "// oxide.manifest.v1 ") && strstr(ptx, ".entry scale"));
    if (ptx_out)
        *ptx_out = st ? NULL : strdup(ptx);
    oxide_module_destroy(m);
    return hit;
}

static char *entry_path(const char *text, const oxide_options *o) {
    oxide_module *m = parse(text);
    char key[65];
    OK(oxide_module_cache_key(m, o, key));
    oxide_module_destroy(m);
    static char path[512];
    snprintf(path, sizeof path, "%s/%s.ptx", dir, key);
    return path;
}

static void spit(const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "wb");
    MUST(f ? OXIDE_OK : OXIDE_ERROR_IO);
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_hit_and_miss(void) {
    char *first, *second;
    CHECK(compile(TEXT, NULL, dir, &first) == 0, "an empty cache misses");
    CHECK(compile(TEXT, NULL, dir, &second) == 1, "the same text and options hit");
    CHECK(first && second && !strcmp(first, second), "a hit gives the PTX the miss compiled");
    struct stat st;
    CHECK(!stat(entry_path(TEXT, NULL), &st) && S_ISREG(st.st_mode), "the entry is DIR/KEY.ptx");
    CHECK((st.st_mode & 0777) == 0600, "entries are private: mode %o", st.st_mode & 0777);

    /* a hit leaves no LLVM IR behind: it would describe some other compile */
    oxide_module *m = parse(TEXT);
    const char *ptx, *ir;
    int hit = -1;
    OK(oxide_module_compile_cached(m, NULL, dir, &ptx, NULL, &hit));
    CHECK(hit == 1);
    FAILS_WITH(oxide_module_get_llvm_ir(m, &ir), OXIDE_ERROR_STATE, "not been compiled");
    oxide_module_destroy(m);

    /* changed text */
    const char *text2_tail = strstr(TEXT, "  %w = mul");
    char text2[2048];
    snprintf(text2, sizeof text2, "%.*s  %%w = add %%v, %%s : f32\n%s", (int)(text2_tail - TEXT), TEXT,
             strchr(text2_tail, '\n') + 1);
    char *third;
    CHECK(compile(text2, NULL, dir, &third) == 0, "changed text misses");
    CHECK(third && strstr(third, "add.f32") && !strstr(third, "mul.f32"), "and compiles the new text");
    CHECK(compile(text2, NULL, dir, NULL) == 1);

    /* changed options: each one is part of the key */
    oxide_options *o;
    MUST(oxide_options_create(&o));
    OK(oxide_options_set_target(o, "sm_80"));
    CHECK(compile(TEXT, o, dir, NULL) == 0, "changed target misses");
    CHECK(compile(TEXT, o, dir, NULL) == 1);
    OK(oxide_options_set_opt_level(o, 1));
    CHECK(compile(TEXT, o, dir, NULL) == 0, "changed opt level misses");
    OK(oxide_options_set_fast_math(o, 1));
    CHECK(compile(TEXT, o, dir, NULL) == 0, "changed fast math misses");
    OK(oxide_options_set_line_info(o, 1));
    CHECK(compile(TEXT, o, dir, NULL) == 0, "changed line info misses");
    OK(oxide_options_set_ptx_version(o, 8, 5));
    char *p85;
    CHECK(compile(TEXT, o, dir, &p85) == 0, "changed PTX version misses");
    CHECK(p85 && strstr(p85, ".version 8.5"), "and compiles for it");
    CHECK(compile(TEXT, o, dir, NULL) == 1);
    oxide_options_destroy(o);
    free(first);
    free(second);
    free(third);
    free(p85);
}

/* The key is the SHA-256 of the text docs/c-api.md documents; sha256sum computes it here. So
 * the library's version (and build) is in the key: a different liboxide never reads this
 * entry. */
static void test_key_formula(void) {
    oxide_module *m = parse(TEXT);
    const char *printed;
    char key[65];
    OK(oxide_module_cache_key(m, NULL, key));
    OK(oxide_module_print(m, &printed)); /* after: each print replaces the text of the last */
    Dl_info info;
    struct stat st;
    char build[96] = "unknown";
    if (dladdr((const void *)oxide_version(), &info) && info.dli_fname && !stat(info.dli_fname, &st))
        snprintf(build, sizeof build, "%lld.%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 (long)st.st_mtim.tv_nsec);
    const char *versions[] = {oxide_version(), "99.0.0"};
    char sums[2][65] = {{0}};
    for (int v = 0; v < 2; v++) {
        char path[300], cmd[400];
        snprintf(path, sizeof path, "%s/preimage", dir);
        FILE *f = fopen(path, "wb");
        MUST(f ? OXIDE_OK : OXIDE_ERROR_IO);
        fprintf(f,
                "oxide-cache-key 1\nliboxide %s %s\ntarget sm_90a\nptx 0.0\nopt 3\nfast_math 0\nline_info 0\n"
                "tile_variants 3\nbitcode 0\nmodule %zu\n%s",
                versions[v], build, strlen(printed), printed);
        fclose(f);
        snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
        FILE *p = popen(cmd, "r");
        if (!p || fscanf(p, "%64s", sums[v]) != 1) {
            printf("test_cache: sha256sum is not available; the key formula is not checked\n");
            if (p)
                pclose(p);
            oxide_module_destroy(m);
            return;
        }
        pclose(p);
        unlink(path);
    }
    CHECK(!strcmp(key, sums[0]), "key %s, sha256sum of the documented text %s", key, sums[0]);
    CHECK(strcmp(key, sums[1]), "another liboxide version gives another key");
    oxide_module_destroy(m);
}

static void test_corrupt_entries(void) {
    char *good;
    compile(TEXT, NULL, dir, &good);
    const char *path = entry_path(TEXT, NULL);
    size_t n;
    char *entry = check_read_file(path, &n);
    MUST(entry && n > 100 ? OXIDE_OK : OXIDE_ERROR_IO);
    char *ptx_at = strstr(entry, "//");
    MUST(ptx_at ? OXIDE_OK : OXIDE_ERROR_IO);

    /* one flipped byte in the PTX: the checksum fails */
    char *bad = malloc(n);
    memcpy(bad, entry, n);
    bad[n - 10] ^= 0x20;
    spit(path, bad, n);
    char *got;
    CHECK(compile(TEXT, NULL, dir, &got) == 0, "a corrupt entry is a miss");
    CHECK(got && good && !strcmp(got, good), "and is recompiled");
    free(got);
    size_t n2;
    char *fixed = check_read_file(path, &n2);
    CHECK(fixed && n2 == n && !memcmp(fixed, entry, n), "and replaced by a good entry");
    free(fixed);
    CHECK(compile(TEXT, NULL, dir, NULL) == 1);

    /* truncated (a crash mid-write on a file system that reorders), empty, garbage header */
    size_t cuts[] = {n - 1, (size_t)(ptx_at - entry) + 5, 20, 0};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        spit(path, entry, cuts[i]);
        CHECK(compile(TEXT, NULL, dir, NULL) == 0, "an entry cut to %zu bytes is a miss", cuts[i]);
        CHECK(compile(TEXT, NULL, dir, NULL) == 1);
    }
    spit(path, "garbage\n", 8);
    CHECK(compile(TEXT, NULL, dir, NULL) == 0, "a foreign file is a miss");

    /* an entry of another version, or filed under another key, is refused even with a good sum */
    memcpy(bad, entry, n);
    char *ver = strstr(bad, "liboxide ") + 9;
    *ver = *ver == '9' ? '8' : '9';
    spit(path, bad, n);
    CHECK(compile(TEXT, NULL, dir, NULL) == 0, "an entry written by another version is a miss");
    memcpy(bad, entry, n);
    char *k = strstr(bad, "key ") + 4;
    *k = *k == 'a' ? 'b' : 'a';
    spit(path, bad, n);
    CHECK(compile(TEXT, NULL, dir, NULL) == 0, "an entry naming another key is a miss");
    CHECK(compile(TEXT, NULL, dir, NULL) == 1);

    /* a directory where the entry should be */
    unlink(path);
    mkdir(path, 0700);
    CHECK(compile(TEXT, NULL, dir, NULL) == 0, "a directory in the entry's place is a miss, not an error");
    rmdir(path);
    free(bad);
    free(entry);
    free(good);
}

static void test_unusable_dirs(void) {
    char file[300], under[320];
    snprintf(file, sizeof file, "%s/not-a-dir", dir);
    spit(file, "x", 1);
    snprintf(under, sizeof under, "%s/sub", file);
    CHECK(compile(TEXT, NULL, under, NULL) == 0, "a directory that cannot be made: compile");
    CHECK(compile(TEXT, NULL, under, NULL) == 0, "and nothing is cached");
    /* /proc/self exists and nobody, root included, creates files in it */
    CHECK(compile(TEXT, NULL, "/proc/self", NULL) == 0, "a directory that cannot be written: compile");
    CHECK(compile(TEXT, NULL, "", NULL) == 0, "\"\" turns the cache off");
    CHECK(compile(TEXT, NULL, "", NULL) == 0);
    unlink(file);

    /* NULL: $OXIDE_CACHE_DIR, created when missing */
    char envdir[300];
    snprintf(envdir, sizeof envdir, "%s/env/nested", dir);
    setenv("OXIDE_CACHE_DIR", envdir, 1);
    CHECK(compile(TEXT, NULL, NULL, NULL) == 0);
    CHECK(compile(TEXT, NULL, NULL, NULL) == 1, "$OXIDE_CACHE_DIR is the default directory");
    struct stat st;
    CHECK(!stat(envdir, &st) && (st.st_mode & 0777) == 0700, "made private");
    unsetenv("OXIDE_CACHE_DIR");

    /* no temporary file is left behind by a successful write */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '^\\.tmp-' >/dev/null", dir);
    CHECK(system(cmd) != 0, "temporary files are renamed or removed");
}

static void test_bad_args(void) {
    oxide_module *m = parse(TEXT);
    const char *ptx;
    char key[65] = {0};
    FAILS_WITH(oxide_module_compile_cached(NULL, NULL, dir, &ptx, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "oxide_module_compile_cached: mod is NULL");
    FAILS_WITH(oxide_module_compile_cached(m, NULL, dir, NULL, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "ptx is NULL");
    FAILS_WITH(oxide_module_cache_key(m, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "key is NULL");
    FAILS_WITH(oxide_module_cache_key(NULL, NULL, key), OXIDE_ERROR_INVALID_ARGUMENT, "mod is NULL");
    oxide_module_destroy(m);
    /* a module that does not verify is an error, as for oxide_module_compile, and caches nothing */
    m = parse("module @m\n\nglobal @sm : array<2 x f32> shared align 0\n\nkernel @k() {\n^0:\n"
              "  %0 = global.addr {sym=@sm} : ptr.shared\n  %1 = const {value=0} : i64\n"
              "  %2 = inttoptr %1 : ptr.global\n  cp.async.ca %0, %2 {imm=12}\n  ret\n}\n");
    int hit = 7;
    oxide_status st = oxide_module_compile_cached(m, NULL, dir, &ptx, NULL, &hit);
    CHECK(st == OXIDE_ERROR_VERIFY && strstr(oxide_last_error(), "cp.async.ca") && hit == 7,
          "a failed compile is its error, and *hit is left alone (%s)", oxide_status_name(st));
    oxide_module_destroy(m);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/oxide-test-cache-XXXXXX");
    MUST(mkdtemp(dir) ? OXIDE_OK : OXIDE_ERROR_IO);
    MUST(oxide_context_create(&ctx));
    test_hit_and_miss();
    test_key_formula();
    test_corrupt_entries();
    test_unusable_dirs();
    test_bad_args();
    oxide_context_destroy(ctx);
    check_remove_dir("test_cache", dir);
    return check_report("test_cache");
}
