/* A load-and-launch program built against the installed prefix with only liboxide_runtime
 * (pkg-config oxide_runtime, CMake oxide::oxide_runtime): it reads the manifest of PTX that
 * liboxide made elsewhere and asks for the GPUs, which works without a driver (a status). */
#include <oxide.h>
#include <stdio.h>
#include <string.h>

static const char ptx[] =
    "// oxide.manifest.v1 {\"oxide\":\"0.1.0\",\"target\":\"sm_90a\",\"kernels\":[{\"name\":\"vecadd\","
    "\"entry\":\"vecadd\",\"params\":[{\"name\":\"a\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":false},"
    "{\"name\":\"b\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":false},{\"name\":\"out\",\"kind\":\"slice\","
    "\"elem\":\"f32\",\"mut\":true}],\"launch_bounds\":[0,0],\"cluster\":[1,1,1],\"dyn_smem\":0}]}\n"
    ".version 8.0\n.target sm_90a\n.address_size 64\n";

int main(void) {
    oxide_manifest *m;
    size_t k;
    if (oxide_manifest_parse(ptx, sizeof ptx - 1, &m) || oxide_manifest_kernel_find(m, "vecadd", &k)) {
        fprintf(stderr, "consumer_runtime: %s\n", oxide_last_error());
        return 1;
    }
    size_t params = oxide_manifest_param_count(m, k);
    int gpus = 0;
    oxide_status st = oxide_device_count(&gpus);
    if (st)
        printf("consumer_runtime: liboxide_runtime %s, kernel vecadd(%zu params) for %s; no GPU here (%s)\n",
               oxide_version(), params, oxide_manifest_target(m), oxide_status_name(st));
    else
        printf("consumer_runtime: liboxide_runtime %s, kernel vecadd(%zu params) for %s; %d GPUs\n", oxide_version(),
               params, oxide_manifest_target(m), gpus);
    int ok = params == 3 && !strcmp(oxide_manifest_target(m), "sm_90a") && !strcmp(oxide_version(), "0.1.0");
    oxide_manifest_destroy(m);
    return ok ? 0 : 1;
}
