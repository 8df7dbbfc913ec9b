/* The compiler and the runtime together: the vecadd example kernel (examples/c/kernels), built
 * through the C API and compiled in-process for the GPU's own target, loaded from the PTX that
 * oxide_module_compile returns (manifest included) and launched with checked arguments. */
#include "gpu_test.h"
#include "oxide_examples.h"

int main(void) {
    gpu_require();
    rng_seed();
    oxide_device *dev;
    MUST(oxide_device_get(0, &dev));
    int major, minor;
    MUST(oxide_device_compute_capability(dev, &major, &minor));
    char target[16];
    snprintf(target, sizeof target, "sm_%d%d%s", major, minor, major == 9 || major == 10 ? "a" : "");

    oxide_context *ctx;
    oxide_module *mod;
    oxide_options *opts;
    MUST(oxide_context_create(&ctx));
    MUST(oxide_options_create(&opts));
    MUST(oxide_options_set_target(opts, target));
    MUST(oxide_example_module(ctx, "vecadd", &mod));
    const char *ptx;
    size_t len;
    double t0 = now_us();
    MUST(oxide_module_compile(mod, opts, &ptx, &len));
    double t1 = now_us();
    oxide_loaded_module *lm;
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    double t2 = now_us();
    oxide_kernel *k;
    MUST(oxide_loaded_module_get_kernel(lm, "vecadd", &k));

    vecadd_io v;
    vecadd_io_make(&v, dev, (1u << 24) + 17);
    OK(oxide_kernel_launch(k, NULL, v.grid, v.block, 0, v.args, 3));
    CHECK(vecadd_io_wrong(&v, dev) == 0);
    vecadd_io_free(&v);
    oxide_loaded_module_destroy(lm);
    oxide_options_destroy(opts);
    oxide_context_destroy(ctx);
    char figure[160];
    snprintf(figure, sizeof figure, "vecadd for %s: compile %.2f ms, driver load %.2f ms", target, (t1 - t0) / 1e3,
             (t2 - t1) / 1e3);
    return finish("compiled example through the runtime", figure);
}
