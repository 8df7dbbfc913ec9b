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

    const size_t n = (1u << 24) + 17;
    float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        a[i] = rng_f32(), b[i] = rng_f32();
    oxide_buffer *da, *db, *dout;
    MUST(oxide_buffer_alloc(dev, n * 4, &da));
    MUST(oxide_buffer_alloc(dev, n * 4, &db));
    MUST(oxide_buffer_alloc(dev, n * 4, &dout));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(da), a, n * 4));
    OK(oxide_memcpy_htod(dev, oxide_buffer_ptr(db), b, n * 4));
    oxide_arg args[3] = {oxide_arg_from_buffer(da, OXIDE_SCALAR_F32, 0), oxide_arg_from_buffer(db, OXIDE_SCALAR_F32, 0),
                         oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 1)};
    uint32_t grid[3] = {(uint32_t)((n + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
    OK(oxide_kernel_launch(k, NULL, grid, block, 0, args, 3));
    OK(oxide_memcpy_dtoh(dev, o, oxide_buffer_ptr(dout), n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += o[i] != a[i] + b[i];
    CHECK(bad == 0);
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dout);
    oxide_loaded_module_destroy(lm);
    oxide_options_destroy(opts);
    oxide_context_destroy(ctx);
    free(a), free(b), free(o);
    char figure[160];
    snprintf(figure, sizeof figure, "vecadd for %s: compile %.2f ms, driver load %.2f ms", target, (t1 - t0) / 1e3,
             (t2 - t1) / 1e3);
    return finish("compiled example through the runtime", figure);
}
