/* oxide_bitcode_kernel_key (lib/import_key.c, lib/cache.c): the key of bitcode units depends on
 * what their kernels reach and nothing else. tests/unit/bitcode/kernels_*.bc are one unit with a
 * kernel entry (kernels.ll.in) in four versions: b edits only host code (main's helper and its
 * string) and must keep a's key; c changes a constant the kernel reads and d an instruction of
 * a function it calls, and each must change it. A unit without kernels counts by its bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"

static unsigned char *slurp(const char *name, size_t *n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/unit/bitcode/%s", OXIDE_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAILED: cannot read %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *d = malloc(*n);
    if (!d || fread(d, 1, *n, f) != *n) {
        printf("FAILED: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return d;
}

typedef struct unitfile {
    unsigned char *data;
    size_t size;
} unitfile;

static unitfile load(const char *name) {
    unitfile u;
    u.data = slurp(name, &u.size);
    return u;
}

/* The key of the kernel unit k (named as one crate: the name is part of the key) beside the
 * library unit lib (none when NULL). */
static void key_of(const unitfile *k, const unitfile *lib, const oxide_options *o, char key[65]) {
    oxide_bitcode_ref r[2] = {{"app-1.bc", k->data, k->size},
                              {"lib-2.bc", lib ? lib->data : NULL, lib ? lib->size : 0}};
    MUST(oxide_bitcode_kernel_key(r, lib ? 2 : 1, o, key));
}

int main(void) {
    unitfile a = load("kernels_a.bc"), b = load("kernels_b.bc"), c = load("kernels_c.bc"), d = load("kernels_d.bc");
    unitfile lib = load("unit.bc");
    CHECK(a.size != b.size || memcmp(a.data, b.data, a.size), "a and b are different bitcode");
    oxide_options *o;
    MUST(oxide_options_create(&o));
    char ka[65], ka2[65], kb[65], kc[65], kd[65];
    key_of(&a, &lib, o, ka);
    key_of(&a, &lib, o, ka2);
    CHECK(strlen(ka) == 64 && strspn(ka, "0123456789abcdef") == 64, "64 hex digits: %s", ka);
    CHECK(!strcmp(ka, ka2), "the same units give the same key");
    key_of(&b, &lib, o, kb);
    CHECK(!strcmp(ka, kb), "an edit to host-only code keeps the key (%s, %s)", ka, kb);
    key_of(&c, &lib, o, kc);
    CHECK(strcmp(ka, kc), "a constant the kernel reads changed: a new key");
    key_of(&d, &lib, o, kd);
    CHECK(strcmp(ka, kd) && strcmp(kc, kd), "a function the kernel calls changed: a new key");

    /* a unit without kernels counts by its bytes: one byte of it changed gives a new key */
    unitfile lib2 = {malloc(lib.size), lib.size};
    memcpy(lib2.data, lib.data, lib.size);
    lib2.data[lib.size / 2] ^= 1;
    char kl[65];
    key_of(&a, &lib2, o, kl);
    CHECK(strcmp(ka, kl), "a changed library unit: a new key");
    char kn[65];
    key_of(&a, NULL, o, kn);
    CHECK(strcmp(ka, kn), "a unit less: a new key");

    /* the options are part of the key */
    char ks[65], kli[65];
    MUST(oxide_options_set_target(o, "sm_80"));
    key_of(&a, &lib, o, ks);
    MUST(oxide_options_set_target(o, "sm_90a"));
    MUST(oxide_options_set_line_info(o, 1));
    key_of(&a, &lib, o, kli);
    CHECK(strcmp(ka, ks) && strcmp(ka, kli) && strcmp(ks, kli), "target and line info change the key");
    MUST(oxide_options_set_line_info(o, 0));
    char kdef[65];
    oxide_bitcode_ref r1[2] = {{"app-1.bc", a.data, a.size}, {"lib-2.bc", lib.data, lib.size}};
    OK(oxide_bitcode_kernel_key(r1, 2, NULL, kdef));
    CHECK(!strcmp(ka, kdef), "NULL options are the defaults");

    /* misuse and bad input: statuses that name the argument or the unit */
    FAILS_WITH(oxide_bitcode_kernel_key(r1, 2, o, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "key is NULL");
    FAILS_WITH(oxide_bitcode_kernel_key(NULL, 1, o, kn), OXIDE_ERROR_INVALID_ARGUMENT, "units is NULL");
    oxide_bitcode_ref empty[1] = {{"empty.bc", a.data, 0}};
    FAILS_WITH(oxide_bitcode_kernel_key(empty, 1, o, kn), OXIDE_ERROR_INVALID_ARGUMENT, "unit 0 (empty.bc) is empty");
    /* a unit that names a kernel entry but is not bitcode */
    static const char fake[] = "not bitcode, but it mentions __oxide_kernel_entry_k";
    oxide_bitcode_ref bad[1] = {{"fake.bc", fake, sizeof fake}};
    FAILS_WITH(oxide_bitcode_kernel_key(bad, 1, o, kn), OXIDE_ERROR_PARSE, "fake.bc");
    /* a kernel unit with bytes missing from its middle (its names, at the end, still there) */
    unsigned char *holed = malloc(a.size);
    size_t keep = 64, tail = a.size / 2;
    memcpy(holed, a.data, keep);
    memcpy(holed + keep, a.data + a.size - tail, tail);
    oxide_bitcode_ref hole[1] = {{"holed.bc", holed, keep + tail}};
    FAILS_WITH(oxide_bitcode_kernel_key(hole, 1, o, kn), OXIDE_ERROR_PARSE, "holed.bc");
    free(holed);
    OK(oxide_bitcode_kernel_key(NULL, 0, o, kn)); /* no units: a key all the same */

    oxide_options_destroy(o);
    free(a.data), free(b.data), free(c.data), free(d.data), free(lib.data), free(lib2.data);
    return check_report("test_kernel_key");
}
