/* Loading a PTX bundle (one PTX per target, as `cargo oxide build --sm sm_80,sm_90a` makes):
 * oxide_loaded_module_load_ptx picks the text for the device -- sm_90a on compute capability
 * 9.0, sm_80 (JIT-compiled) on 8.x -- and refuses a device none of them runs on, naming the
 * targets. The two texts are tests/gpu/data/contract.ptx for each target, their kernels named
 * after it, so the kernel found says which was loaded; the loaded one runs and its values are
 * checked. ctest runs it on the GPU and on the fake driver as 9.0, 8.6 and 7.5 (OXIDE_MOCK_CC). */
#include "contract_fill.h"

/* s with every from replaced by to (a new string). */
static char *replace(const char *s, const char *from, const char *to) {
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    for (const char *p = s; (p = strstr(p, from)); p += lf)
        n++;
    char *out = malloc(strlen(s) + n * lt + 1), *o = out;
    const char *p = s, *q;
    while ((q = strstr(p, from))) {
        memcpy(o, p, (size_t)(q - p)), o += q - p;
        memcpy(o, to, lt), o += lt;
        p = q + lf;
    }
    strcpy(o, p);
    return out;
}

int main(void) {
    gpu_require();
    oxide_device *dev;
    int major, minor;
    MUST(oxide_device_get(0, &dev));
    MUST(oxide_device_compute_capability(dev, &major, &minor));
    size_t len;
    char *ptx = read_data("contract.ptx", &len);
    char *named80 = replace(ptx, "\"name\":\"contract_fill\"", "\"name\":\"fill_sm_80\"");
    char *named90 = replace(ptx, "\"name\":\"contract_fill\"", "\"name\":\"fill_sm_90a\"");
    char *t90 = replace(named90, ".target sm_80", ".target sm_90a");
    char *t90m = replace(t90, "\"target\":\"sm_80\"", "\"target\":\"sm_90a\"");
    size_t cap = strlen(named80) + strlen(t90m) + 128;
    char *bundle = malloc(cap);
    int head = snprintf(bundle, cap, "// oxide.ptx-bundle.v1 sm_80:%zu sm_90a:%zu\n%s%s", strlen(named80), strlen(t90m),
                        named80, t90m);
    const char *want = major == 9 && minor == 0 ? "fill_sm_90a" : major >= 8 ? "fill_sm_80" : NULL;
    oxide_loaded_module *lm = NULL;
    oxide_status st = oxide_loaded_module_load_ptx(dev, bundle, (size_t)head, &lm);
    char figure[96];
    if (!want) {
        CHECK(st == OXIDE_ERROR_UNSUPPORTED && strstr(oxide_last_error(), "carries sm_80, sm_90a"), "%s: %s",
              oxide_status_name(st), oxide_last_error());
        snprintf(figure, sizeof figure, "compute capability %d.%d refused, naming sm_80 and sm_90a", major, minor);
    } else {
        CHECK(st == OXIDE_OK, "%s", oxide_last_error());
        oxide_kernel *k = NULL, *other = NULL;
        OK(oxide_loaded_module_get_kernel(lm, want, &k));
        CHECK(oxide_loaded_module_get_kernel(lm, strcmp(want, "fill_sm_80") ? "fill_sm_80" : "fill_sm_90a", &other) ==
              OXIDE_ERROR_NOT_FOUND);
        size_t n = 128 * 9 + 17;
        oxide_buffer *out = NULL;
        MUST(oxide_buffer_alloc(dev, n * 4, &out));
        size_t wrong = k ? contract_fill_wrong(dev, k, out, n) : n;
        CHECK(wrong == 0, "%zu of %zu values wrong", wrong, n);
        oxide_buffer_free(out);
        oxide_loaded_module_destroy(lm);
        snprintf(figure, sizeof figure, "compute capability %d.%d loaded %s", major, minor, want + 5);
    }
    free(ptx), free(named80), free(named90), free(t90), free(t90m), free(bundle);
    return finish("PTX bundle", figure);
}
