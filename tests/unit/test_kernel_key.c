/* oxide_bitcode_kernel_key (lib/import_key.c, lib/cache.c): the key of bitcode units depends on
 * what their kernels reach and nothing else. tests/unit/bitcode/kernels_*.bc are one unit with a
 * kernel entry (kernels.ll.in) in four versions: b edits only host code (main's helper and its
 * string) and must keep a's key; c changes a constant the kernel reads and d an instruction of
 * a function it calls, and each must change it. kernels_split_*.bc (kernels_split.ll.in) are a
 * crate compiled as two codegen units (k: the kernel's, h: main's and the function the kernel
 * calls) and a library crate: an edit to host code in either codegen unit, the units in another
 * order under other names (rustc numbers a crate's units by size), ThinLTO's `.llvm.HASH`
 * suffix on the function the kernel calls (a hash of its unit's text) and a unit it does not
 * reach at all keep the key; the called function, the library function it calls in turn,
 * another byte of that library (a library the kernels reach counts by its bytes) change it. */
#include <stdbool.h>
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

/* The key of the split crate's units k and h (in that order, or h first under other names) and
 * the library unit lib, with unit.bc, which nothing reaches, beside them. */
static void split_key(const unitfile *k, const unitfile *h, const unitfile *lib, const unitfile *other, bool swapped,
                      const oxide_options *o, char key[65]) {
    oxide_bitcode_ref r[4] = {{"app-1.app.x-cgu.0.rcgu.bc", k->data, k->size},
                              {"app-1.app.x-cgu.1.rcgu.bc", h->data, h->size},
                              {"lib-2.bc", lib->data, lib->size},
                              {"other-3.bc", other->data, other->size}};
    if (swapped) {
        oxide_bitcode_ref t = r[0];
        r[0] = r[1], r[1] = t;
        r[0].name = "app-1.app.x-cgu.0.rcgu.bc", r[1].name = "app-1.app.x-cgu.1.rcgu.bc";
    }
    MUST(oxide_bitcode_kernel_key(r, 4, o, key));
}

static void split_crate(const oxide_options *o, const unitfile *other) {
    unitfile k = load("kernels_split_k.bc"), ha = load("kernels_split_h_a.bc"), hb = load("kernels_split_h_b.bc");
    unitfile hd = load("kernels_split_h_d.bc"), la = load("kernels_split_lib_a.bc");
    unitfile lb = load("kernels_split_lib_b.bc"), lc = load("kernels_split_lib_c.bc");
    char ka[65], kb[65], ks[65], kd[65], klb[65], klc[65];
    split_key(&k, &ha, &la, other, false, o, ka);
    split_key(&k, &hb, &la, other, false, o, kb);
    CHECK(!strcmp(ka, kb), "split crate: an edit to host code in the unit the kernel calls into keeps the key");
    split_key(&k, &ha, &la, other, true, o, ks);
    CHECK(!strcmp(ka, ks), "split crate: its units in another order under other names keep the key");
    /* a library the kernels reach counts by its bytes (reading it costs more than hashing it),
     * and so do the units it could call into, other than the kernels' crate's */
    split_key(&k, &ha, &lb, other, false, o, klb);
    CHECK(strcmp(ka, klb), "split crate: the library the kernel reaches changed elsewhere: a new key");
    unitfile other2 = {malloc(other->size), other->size};
    memcpy(other2.data, other->data, other->size);
    other2.data[other->size / 2] ^= 1;
    char kot[65];
    split_key(&k, &ha, &la, &other2, false, o, kot);
    CHECK(strcmp(ka, kot), "split crate: with a library reached, another library's byte changed: a new key");
    free(other2.data);
    /* ThinLTO's suffix on the called function, a hash of h's whole text, host code too */
    unitfile kp = load("kernels_split_k_p.bc"), hp = load("kernels_split_h_p.bc");
    char kps[65];
    split_key(&kp, &hp, &la, other, false, o, kps);
    CHECK(!strcmp(ka, kps), "split crate: ThinLTO's .llvm.HASH suffix on the called function keeps the key");
    free(kp.data), free(hp.data);
    split_key(&k, &hd, &la, other, false, o, kd);
    CHECK(strcmp(ka, kd), "split crate: the function the kernel calls in the other unit changed: a new key");
    split_key(&k, &ha, &lc, other, false, o, klc);
    CHECK(strcmp(ka, klc) && strcmp(kd, klc), "split crate: the library function it calls in turn changed: a new key");
    free(k.data), free(ha.data), free(hb.data), free(hd.data), free(la.data), free(lb.data), free(lc.data);
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

    /* a unit the kernels do not reach (unit.bc defines nothing they use) is not part of it */
    unitfile lib2 = {malloc(lib.size), lib.size};
    memcpy(lib2.data, lib.data, lib.size);
    lib2.data[lib.size / 2] ^= 1;
    char kl[65];
    key_of(&a, &lib2, o, kl);
    CHECK(!strcmp(ka, kl), "a changed unit the kernels do not reach keeps the key");
    char kn[65];
    key_of(&a, NULL, o, kn);
    CHECK(!strcmp(ka, kn), "a unit the kernels do not reach left out keeps the key");
    split_crate(o, &lib);

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
