/* Launch contracts at run time (docs/runtime.md, "Launch contracts"): a kernel whose manifest
 * declares one launches when the shape keeps it and is refused, before the driver sees it, when
 * the shape breaks it -- the message naming the kernel, the contract field and the value given.
 * oxide_kernel_check_launch and oxide_launch_contract_check check without launching (what Rust's
 * prepare_NAME does once). tests/gpu/data/contract.ptx holds the kernel (out[i] = 3 i + 1);
 * on the fake driver it is re-implemented in C (tests/gpu/mock). */
#include <stdbool.h>

#include "contract_fill.h"

static oxide_device *dev;
static oxide_kernel *k;
static oxide_buffer *out;
static const size_t N = 128 * 37 + 5; /* not a whole number of blocks */

static oxide_arg out_arg(void) { return oxide_arg_from_buffer(out, OXIDE_SCALAR_U32, 1); }

/* A launch that must be refused with LAUNCH and a message holding each of want[] (NULL-ended). */
static void refused(const uint32_t grid[3], const uint32_t block[3], uint32_t smem, const char *const *want) {
    oxide_arg a = out_arg();
    oxide_status st = oxide_kernel_launch(k, NULL, grid, block, smem, &a, 1);
    const char *msg = oxide_last_error();
    bool all = st == OXIDE_ERROR_LAUNCH && strstr(msg, "launch contract_fill: ");
    for (size_t i = 0; all && want[i]; i++)
        all = strstr(msg, want[i]) != NULL;
    CHECK(all, "grid %ux%ux%u block %ux%ux%u smem %u: %s: %s", grid[0], grid[1], grid[2], block[0], block[1], block[2],
          smem, oxide_status_name(st), msg);
    /* the check without launching says the same */
    oxide_launch_config cfg = {
        .grid = {grid[0], grid[1], grid[2]}, .block = {block[0], block[1], block[2]}, .smem = smem};
    CHECK(oxide_kernel_check_launch(k, &cfg) == OXIDE_ERROR_LAUNCH && strstr(oxide_last_error(), want[0]), "%s",
          oxide_last_error());
}

static void test_kept_and_broken(void) {
    uint32_t grid[3] = {(uint32_t)((N + 127) / 128), 1, 1}, block[3] = {128, 1, 1};
    size_t wrong = contract_fill_wrong(dev, k, out, N);
    CHECK(wrong == 0, "%zu of %zu values wrong", wrong, N);
    oxide_arg a = out_arg();
    OK(oxide_kernel_launch(k, NULL, grid, block, 256, &a, 1));
    oxide_launch_config cfg = {.grid = {grid[0], 1, 1}, .block = {128, 1, 1}, .smem = 0};
    OK(oxide_kernel_check_launch(k, &cfg));
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, &a, 1));

    const uint32_t b64[3] = {64, 1, 1}, b128x2[3] = {128, 2, 1}, g2[3] = {4, 2, 1}, g1[3] = {4, 1, 1};
    refused(g1, b64, 0, (const char *const[]){"block 64x1x1 breaks the launch contract's block = (128, 1, 1)", NULL});
    refused(g1, b128x2, 0, (const char *const[]){"block 128x2x1", "block = (128, 1, 1)", NULL});
    refused(g2, block, 0, (const char *const[]){"grid 4x2x1 breaks the launch contract's domain = 1", NULL});
    refused(g1, block, 512,
            (const char *const[]){"512 bytes of dynamic shared memory break the launch contract's dynamic_shared = 256",
                                  NULL});
    /* raw launches are checked too (the Rust layer's and the bindings' fast path) */
    uint64_t ptr = oxide_buffer_ptr(out), len = N;
    void *params[2] = {&ptr, &len};
    oxide_launch_config bad = {.grid = {4, 1, 1}, .block = {256, 1, 1}};
    CHECK(oxide_kernel_launch_raw(k, NULL, &bad, params) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "block 256x1x1 breaks the launch contract's block = (128, 1, 1)"),
          "%s", oxide_last_error());
    OK(oxide_device_synchronize(dev));
}

static void test_check_without_launching(void) {
    int major, minor;
    MUST(oxide_device_compute_capability(dev, &major, &minor));
    oxide_launch_contract c = {
        .fields = OXIDE_CONTRACT_DOMAIN | OXIDE_CONTRACT_MIN_CC, .domain = 2, .min_cc = {(uint32_t)major + 1, 0}};
    oxide_launch_config cfg = {.grid = {8, 8, 1}, .block = {16, 16, 1}};
    char want[160];
    snprintf(want, sizeof want,
             "compute capability %d.%d breaks the launch contract's min_compute_capability = (%d, 0)", major, minor,
             major + 1);
    CHECK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "launch tile2d: ") && strstr(oxide_last_error(), want),
          "%s", oxide_last_error());
    c.min_cc[0] = (uint32_t)major;
    c.min_cc[1] = (uint32_t)minor;
    OK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg));
    /* the device's limits, beyond the contract */
    cfg.grid[1] = 70000;
    CHECK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "grid 8x70000x1: y must be 1 to 65535"),
          "%s", oxide_last_error());
    cfg.grid[1] = 8;
    cfg.smem = 1u << 30;
    CHECK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "1073741824 bytes of dynamic shared memory") &&
              strstr(oxide_last_error(), "allows at most"),
          "%s", oxide_last_error());
    cfg.smem = 0;
    cfg.block[0] = 64; /* 64 x 16 = 1024 threads: kept; 65 x 16 is not */
    OK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg));
    cfg.block[0] = 65;
    CHECK(oxide_launch_contract_check(dev, "tile2d", &c, &cfg) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "1040 threads"),
          "%s", oxide_last_error());
    /* bad calls */
    oxide_launch_contract broken = {.fields = OXIDE_CONTRACT_DOMAIN, .domain = 5};
    CHECK(oxide_launch_contract_check(dev, "k", &broken, &cfg) == OXIDE_ERROR_INVALID_ARGUMENT &&
          strstr(oxide_last_error(), "domain = 5"));
    CHECK(oxide_launch_contract_check(dev, NULL, &c, &cfg) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_launch_contract_check(dev, "k", NULL, &cfg) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_launch_contract_check(dev, "k", &c, NULL) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_launch_contract_check(NULL, "k", &c, &cfg) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_kernel_check_launch(NULL, &cfg) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_kernel_check_launch(k, NULL) == OXIDE_ERROR_INVALID_ARGUMENT);
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_get(0, &dev));
    size_t len = 0;
    char *ptx = read_data("contract.ptx", &len);
    oxide_loaded_module *lm = NULL;
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    free(ptx);
    MUST(oxide_loaded_module_get_kernel(lm, "contract_fill", &k));
    MUST(oxide_buffer_alloc(dev, N * 4, &out));
    test_kept_and_broken();
    test_check_without_launching();
    oxide_buffer_free(out);
    oxide_loaded_module_destroy(lm);
    return finish("launch contracts", "6 shapes refused naming the field, the kept launch checked");
}
