/* Failures on a GPU, each with the status and message a caller gets:
 *  - a kernel that writes out of bounds: the status names the kernel and the CUDA error, the
 *    device is marked failed (later calls: DEVICE_FAILED), and only oxide_device_reset() may
 *    recover, invalidating the device's handles (docs/design.md section 6). Where the driver cannot
 *    recover in-process (driver 580 on the H200: every retain/reset/new-context sequence fails
 *    after the fault), the reset must say so and the device must stay failed; the mock driver
 *    covers the recovering branch. Run in a child process forked before this process touches
 *    CUDA, so that the fault cannot leak into the other checks;
 *  - PTX for a newer ISA than the driver accepts, PTX for another SM, PTX that does not
 *    assemble (the JIT log comes back), manifests that contradict their PTX, PTX without a
 *    manifest (raw launches only), a cubin with and without a manifest. */
#include "gpu_test.h"

#include <sys/wait.h>

static const uint32_t ONE[3] = {1, 1, 1};

static char *replace(const char *text, const char *from, const char *to, size_t *len) {
    const char *at = strstr(text, from);
    if (!at) {
        printf("FAILED: test data lacks \"%s\"\n", from);
        exit(1);
    }
    size_t a = (size_t)(at - text), fl = strlen(from), tl = strlen(to), rest = strlen(at + fl);
    char *out = malloc(a + tl + rest + 1);
    memcpy(out, text, a);
    memcpy(out + a, to, tl);
    memcpy(out + a + tl, at + fl, rest + 1);
    *len = a + tl + rest;
    return out;
}

/* vecadd on fresh random data through module lm; returns the number of wrong elements. */
static size_t run_vecadd(oxide_device *dev, oxide_loaded_module *lm, int raw) {
    const size_t n = 65537;
    float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        a[i] = rng_f32(), b[i] = rng_f32();
    oxide_buffer *da, *db, *dout;
    oxide_kernel *k;
    MUST(oxide_loaded_module_get_kernel(lm, "vecadd", &k));
    MUST(oxide_buffer_alloc(dev, n * 4, &da));
    MUST(oxide_buffer_alloc(dev, n * 4, &db));
    MUST(oxide_buffer_alloc(dev, n * 4, &dout));
    MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(da), a, n * 4));
    MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(db), b, n * 4));
    uint32_t grid[3] = {(uint32_t)((n + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
    if (raw) {
        uint64_t pa = oxide_buffer_ptr(da), pb = oxide_buffer_ptr(db), po = oxide_buffer_ptr(dout), len = n;
        void *params[6] = {&pa, &len, &pb, &len, &po, &len};
        oxide_launch_config cfg = {{grid[0], 1, 1}, {256, 1, 1}, 0, {0, 0, 0}, 0};
        MUST(oxide_kernel_launch_raw(k, NULL, &cfg, params));
    } else {
        oxide_arg args[3] = {oxide_arg_from_buffer(da, OXIDE_SCALAR_F32, 0),
                             oxide_arg_from_buffer(db, OXIDE_SCALAR_F32, 0),
                             oxide_arg_from_buffer(dout, OXIDE_SCALAR_F32, 1)};
        MUST(oxide_kernel_launch(k, NULL, grid, block, 0, args, 3));
    }
    MUST(oxide_memcpy_dtoh(dev, o, oxide_buffer_ptr(dout), n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += o[i] != a[i] + b[i];
    oxide_buffer_free(da);
    oxide_buffer_free(db);
    oxide_buffer_free(dout);
    free(a), free(b), free(o);
    return bad;
}

/* The child: fault, failed state, reset, recovery. Exit 0 recovered, 2 the driver could not
 * recover in-process (reported, not hidden), 1 failure, 77 no GPU. */
static int fault_child(void) {
    gpu_require();
    rng_seed();
    oxide_device *dev;
    oxide_loaded_module *lm;
    MUST(oxide_device_get(0, &dev));
    size_t len;
    char *ptx = read_data("kernels.ptx", &len);
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    CHECK(run_vecadd(dev, lm, 0) == 0);
    oxide_buffer *buf;
    MUST(oxide_buffer_alloc(dev, 4096, &buf));
    oxide_stream *s;
    MUST(oxide_stream_create(dev, 0, &s));
    oxide_kernel *oob, *vecadd;
    MUST(oxide_loaded_module_get_kernel(lm, "oob_write", &oob));
    MUST(oxide_loaded_module_get_kernel(lm, "vecadd", &vecadd));
    oxide_arg arg = oxide_arg_from_buffer(buf, OXIDE_SCALAR_F32, 1);
    uint32_t block[3] = {32, 1, 1};
    OK(oxide_kernel_launch(oob, s, ONE, block, 0, &arg, 1)); /* the fault comes later */
    oxide_status st = oxide_stream_synchronize(s);
    printf("fault reported as: %s: %s\n", oxide_status_name(st), oxide_last_error());
    CHECK(st == OXIDE_ERROR_CUDA);
    CHECK(strstr(oxide_last_error(), "'oob_write'") != NULL);
    CHECK(strstr(oxide_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS") ||
          strstr(oxide_last_error(), "CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(strstr(oxide_last_error(), "marked failed") != NULL);
    /* every later call on the device says so, without calling the driver */
    FAILS_WITH(oxide_device_check(dev), OXIDE_ERROR_DEVICE_FAILED, "oob_write", "oxide_device_reset");
    oxide_buffer *b2 = NULL;
    FAILS_WITH(oxide_buffer_alloc(dev, 16, &b2), OXIDE_ERROR_DEVICE_FAILED, "failed earlier");
    FAILS_WITH(oxide_kernel_launch(vecadd, NULL, ONE, ONE, 0, &arg, 0), OXIDE_ERROR_LAUNCH, "expects 3 arguments");
    /* valid arguments: two read-only views of the buffer's halves and a mutable one of the rest */
    oxide_arg args[3] = {arg, arg, arg};
    args[0].is_mutable = args[1].is_mutable = 0;
    args[0].len = args[1].len = args[2].len = 512;
    args[2].ptr += 512 * 4;
    FAILS_WITH(oxide_kernel_launch(vecadd, NULL, ONE, ONE, 0, args, 3), OXIDE_ERROR_DEVICE_FAILED, "failed earlier");
    FAILS_WITH(oxide_stream_synchronize(s), OXIDE_ERROR_DEVICE_FAILED, "failed earlier");
    FAILS_WITH(oxide_device_synchronize(dev), OXIDE_ERROR_DEVICE_FAILED, "failed earlier");
    oxide_loaded_module *lm2 = NULL;
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, ptx, len, &lm2), OXIDE_ERROR_DEVICE_FAILED, "failed earlier");

    /* only an explicit reset recovers; it invalidates the device's handles */
    st = oxide_device_reset(dev);
    if (st != OXIDE_OK) {
        printf("reset: %s: %s\n", oxide_status_name(st), oxide_last_error());
        CHECK(st == OXIDE_ERROR_DEVICE_FAILED && strstr(oxide_last_error(), "restart"));
        FAILS_WITH(oxide_device_check(dev), OXIDE_ERROR_DEVICE_FAILED, "cannot recover it in this process",
                   "restart the process");
        FAILS_WITH(oxide_buffer_alloc(dev, 16, &b2), OXIDE_ERROR_DEVICE_FAILED, "restart the process");
        return check_failed ? 1 : 2;
    }
    OK(oxide_device_check(dev));
    oxide_kernel *k;
    FAILS_WITH(oxide_loaded_module_get_kernel(lm, "vecadd", &k), OXIDE_ERROR_STATE, "oxide_device_reset");
    FAILS_WITH(oxide_kernel_launch(vecadd, NULL, ONE, ONE, 0, args, 3), OXIDE_ERROR_STATE, "no longer valid");
    FAILS_WITH(oxide_stream_synchronize(s), OXIDE_ERROR_STATE, "no longer valid");
    oxide_stream_destroy(s);         /* host-only now */
    oxide_buffer_free(buf);          /* host-only now */
    oxide_loaded_module_destroy(lm); /* host-only now */
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    CHECK(run_vecadd(dev, lm, 0) == 0);
    oxide_loaded_module_destroy(lm);
    free(ptx);
    return check_failed ? 1 : 0;
}

static void test_load_failures(oxide_device *dev, const char *ptx) {
    size_t len;
    oxide_loaded_module *lm = NULL;
    char *t;

    /* a newer PTX ISA than the driver accepts */
    t = replace(ptx, ".version 9.0", ".version 9.9", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_UNSUPPORTED,
               "PTX ISA 9.9 is newer than this driver accepts", "--ptx-version", "update the driver");
    printf("newer ISA reported as: %s\n", oxide_last_error());
    free(t);

    /* a target the device cannot run */
    t = replace(ptx, ".target sm_90a", ".target sm_100a", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_UNSUPPORTED, "targets sm_100a",
               "cannot run");
    free(t);

    /* PTX that does not assemble: the driver's JIT error log comes back */
    t = replace(ptx, ".visible .entry empty()\n{\n", ".visible .entry empty()\n{\n\tbogus.instruction %r99;\n", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_CUDA, "JIT error log");
    printf("bad PTX reported as: %.300s\n", oxide_last_error());
    free(t);

    /* manifests that contradict the PTX */
    t = replace(ptx, "{\"name\":\"out\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":true}],\"launch_bounds\"",
                "{\"name\":\"out\",\"kind\":\"ptr\",\"elem\":\"f32\",\"mut\":true}],\"launch_bounds\"", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_MANIFEST, "kernel 'vecadd'",
               "does not match its PTX entry");
    free(t);
    t = replace(ptx, "\"entry\":\"spin\"", "\"entry\":\"spin_nowhere\"", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_MANIFEST, "spin_nowhere", "no such .entry");
    free(t);
    t = replace(ptx, "\"kernels\":[", "\"kernels\":[[", &len);
    FAILS_WITH(oxide_loaded_module_load_ptx(dev, t, len, &lm), OXIDE_ERROR_MANIFEST, "PTX line 8");
    free(t);
    OK(oxide_device_check(dev));

    /* PTX without a manifest: kernels by .entry name, raw launches only */
    t = replace(ptx, "// oxide.manifest.v1", "// (no manifest)", &len);
    MUST(oxide_loaded_module_load_ptx(dev, t, len, &lm));
    CHECK(oxide_loaded_module_manifest(lm) == NULL);
    oxide_kernel *k;
    MUST(oxide_loaded_module_get_kernel(lm, "vecadd", &k));
    oxide_arg none[3] = {oxide_arg_u32(0), oxide_arg_u32(0), oxide_arg_u32(0)};
    FAILS_WITH(oxide_kernel_launch(k, NULL, ONE, ONE, 0, none, 3), OXIDE_ERROR_LAUNCH, "no oxide manifest",
               "oxide_kernel_launch_raw");
    FAILS_WITH(oxide_loaded_module_get_kernel(lm, "nowhere", &k), OXIDE_ERROR_NOT_FOUND, "no .entry 'nowhere'");
    CHECK(run_vecadd(dev, lm, 1) == 0);
    oxide_loaded_module_destroy(lm);
    free(t);

    /* a cubin (ptxas at build time), with the manifest from its PTX, then without */
    size_t cubin_len = 0;
    char *cubin = read_data("kernels.cubin", &cubin_len);
    MUST(oxide_loaded_module_load_cubin(dev, cubin, cubin_len, ptx, strlen(ptx), &lm));
    CHECK(oxide_loaded_module_manifest(lm) != NULL);
    CHECK(run_vecadd(dev, lm, 0) == 0);
    oxide_loaded_module_destroy(lm);
    MUST(oxide_loaded_module_load_cubin(dev, cubin, cubin_len, NULL, 0, &lm));
    CHECK(run_vecadd(dev, lm, 1) == 0);
    oxide_loaded_module_destroy(lm);
    FAILS_WITH(oxide_loaded_module_load_cubin(dev, "garbage", 7, NULL, 0, &lm), OXIDE_ERROR_CUDA, "load cubin");
    free(cubin);
    OK(oxide_device_check(dev));
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    /* Fork before anything here touches CUDA: a CUDA context does not survive fork. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fault_child();
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        printf("FAILED: the fault-test child did not exit normally (status 0x%x)\n", status);
        return 1;
    }
    int rc = WEXITSTATUS(status);
    if (rc == 77)
        return 77; /* it printed SKIPPED */
    const char *recovery = rc == 0   ? "fault reported, device failed, reset recovered"
                           : rc == 2 ? "fault reported, device failed; the driver could not recover in-process"
                                     : NULL;
    if (!recovery) {
        printf("FAILED: fault test (child exit %d)\n", rc);
        check_failed++;
    }
    gpu_require();
    rng_seed();
    oxide_device *dev;
    MUST(oxide_device_get(0, &dev));
    size_t len;
    char *ptx = read_data("kernels.ptx", &len);
    test_load_failures(dev, ptx);
    free(ptx);
    return finish("faults and load errors", recovery ? recovery : "fault test failed");
}
