/* Without a CUDA driver every runtime entry point returns a clean status with a message (never a
 * crash), while the compiler keeps working. The test points OXIDE_CUDA_DRIVER at a library that
 * does not exist, so it means the same on machines that have a GPU. A child process also loads
 * the toolkit's stub libcuda.so (when the toolkit is there): every driver symbol oxide needs must
 * resolve in it, and its cuInit answer must become NO_DRIVER. */
#define _POSIX_C_SOURCE 200809L /* setenv, fork */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

static int calls;

/* The call must return one of the two statuses and leave a non-empty message. */
#define EXPECT2(call, s1, s2)                                                                                          \
    do {                                                                                                               \
        oxide_status st_ = (call);                                                                                     \
        calls++;                                                                                                       \
        check_passed++;                                                                                                \
        if ((st_ != (s1) && st_ != (s2)) || !oxide_last_error()[0]) {                                                  \
            check_passed--;                                                                                            \
            fprintf(stderr, "%s:%d: %s returned %s (\"%s\")\n", __FILE__, __LINE__, #call, oxide_status_name(st_),     \
                    oxide_last_error());                                                                               \
            check_failed++;                                                                                            \
        }                                                                                                              \
    } while (0)
#define EXPECT(call, s) EXPECT2(call, s, s)

#define NOD OXIDE_ERROR_NO_DRIVER
#define INV OXIDE_ERROR_INVALID_ARGUMENT

static void host_fn(void *user) { (void)user; }
static void stream_cb(void *user, oxide_status st) { (void)user, (void)st; }

/* Zeroed memory posing as a handle of the wrong kind: must be refused, not trusted. */
static uint64_t junk[256];

static void test_no_driver(void) {
    int n = -1;
    oxide_device *dev = NULL;
    EXPECT(oxide_driver_version(&n), NOD);
    CHECK(strstr(oxide_last_error(), "no CUDA driver") && strstr(oxide_last_error(), "OXIDE_CUDA_DRIVER"));
    EXPECT(oxide_device_count(&n), NOD);
    CHECK(n == -1); /* out-parameters untouched on failure */
    EXPECT(oxide_device_get(0, &dev), NOD);
    CHECK(dev == NULL);
    EXPECT(oxide_device_get(-1, &dev), NOD);
    EXPECT(oxide_driver_version(NULL), INV);
    EXPECT(oxide_device_count(NULL), INV);
    EXPECT(oxide_device_get(0, NULL), INV);
    /* the same answer every time */
    EXPECT(oxide_device_count(&n), NOD);
    void *pinned = (void *)&n;
    EXPECT(oxide_host_free(pinned), NOD);
    CHECK(oxide_host_free(NULL) == OXIDE_OK);

    oxide_device *bad_dev = (oxide_device *)junk;
    const char *s;
    int a, b;
    size_t z;
    void *p;
    EXPECT(oxide_device_name(NULL, &s), INV);
    EXPECT(oxide_device_name(bad_dev, &s), INV);
    EXPECT(oxide_device_index(NULL, &a), INV);
    EXPECT(oxide_device_compute_capability(NULL, &a, &b), INV);
    EXPECT(oxide_device_sm_count(NULL, &a), INV);
    EXPECT(oxide_device_total_memory(NULL, &z), INV);
    EXPECT(oxide_device_memory_info(NULL, &z, &z), INV);
    EXPECT(oxide_device_attribute(NULL, 16, &a), INV);
    EXPECT(oxide_device_synchronize(NULL), INV);
    EXPECT(oxide_device_synchronize(bad_dev), INV);
    EXPECT(oxide_device_check(NULL), INV);
    EXPECT(oxide_device_reset(NULL), INV);
    EXPECT(oxide_device_reset(bad_dev), INV);
    EXPECT(oxide_device_native(NULL, &a, &p), INV);
    EXPECT(oxide_device_make_current(NULL), INV);

    oxide_stream *stream = NULL, *bad_stream = (oxide_stream *)junk;
    oxide_event *ev = NULL, *bad_ev = (oxide_event *)junk;
    oxide_graph *graph = NULL;
    EXPECT(oxide_stream_create(NULL, 0, &stream), INV);
    EXPECT(oxide_stream_create(bad_dev, 0, &stream), INV);
    EXPECT(oxide_stream_default(NULL, &stream), INV);
    EXPECT(oxide_stream_wrap(NULL, (void *)1, &stream), INV);
    oxide_stream_destroy(NULL);
    oxide_stream_destroy(bad_stream);
    EXPECT(oxide_stream_synchronize(NULL), INV);
    EXPECT(oxide_stream_synchronize(bad_stream), INV);
    EXPECT(oxide_stream_query(NULL, &a), INV);
    EXPECT(oxide_stream_wait_event(NULL, NULL), INV);
    EXPECT(oxide_stream_wait_event(bad_stream, bad_ev), INV);
    EXPECT(oxide_stream_native(NULL, &p), INV);
    CHECK(oxide_stream_get_device(NULL) == NULL && oxide_stream_get_device(bad_stream) == NULL);
    EXPECT(oxide_stream_begin_capture(NULL), INV);
    EXPECT(oxide_stream_end_capture(NULL, &graph), INV);
    EXPECT(oxide_stream_add_callback(NULL, stream_cb, NULL), INV);
    EXPECT(oxide_stream_add_callback(bad_stream, stream_cb, NULL), INV);
    EXPECT(oxide_event_create(NULL, 0, &ev), INV);
    oxide_event_destroy(NULL);
    oxide_event_destroy(bad_ev);
    EXPECT(oxide_event_record(NULL, NULL), INV);
    EXPECT(oxide_event_record(bad_ev, NULL), INV);
    EXPECT(oxide_event_synchronize(NULL), INV);
    EXPECT(oxide_event_query(NULL, &a), INV);
    float ms;
    EXPECT(oxide_event_elapsed_ms(NULL, NULL, &ms), INV);
    EXPECT(oxide_event_elapsed_ms(bad_ev, bad_ev, &ms), INV);

    oxide_buffer *buf = NULL, *bad_buf = (oxide_buffer *)junk;
    EXPECT(oxide_buffer_alloc(NULL, 16, &buf), INV);
    EXPECT(oxide_buffer_alloc(bad_dev, 16, &buf), INV);
    EXPECT(oxide_buffer_wrap(NULL, 0x1000, 16, &buf), INV);
    oxide_buffer_free(NULL);
    oxide_buffer_free(bad_buf);
    CHECK(oxide_buffer_ptr(NULL) == 0 && oxide_buffer_ptr(bad_buf) == 0);
    CHECK(oxide_buffer_size(NULL) == 0 && oxide_buffer_size(bad_buf) == 0);
    CHECK(oxide_buffer_get_device(NULL) == NULL && oxide_buffer_get_device(bad_buf) == NULL);
    EXPECT(oxide_host_alloc(NULL, 16, &p), INV);
    char host[16];
    EXPECT(oxide_memcpy_htod(NULL, 0x1000, host, 16), INV);
    EXPECT(oxide_memcpy_dtoh(NULL, host, 0x1000, 16), INV);
    EXPECT(oxide_memcpy_dtod(NULL, 0x1000, 0x2000, 16), INV);
    EXPECT(oxide_memcpy_htod_async(NULL, 0x1000, host, 16), INV);
    EXPECT(oxide_memcpy_dtoh_async(NULL, host, 0x1000, 16), INV);
    EXPECT(oxide_memcpy_dtod_async(bad_stream, 0x1000, 0x2000, 16), INV);
    EXPECT(oxide_memset(NULL, 0x1000, 0, 4, 4), INV);
    EXPECT(oxide_memset_async(NULL, 0x1000, 0, 4, 4), INV);

    static const char ptx[] = "// oxide.manifest.v1 {\"kernels\":[]}\n.version 8.0\n.target sm_80\n";
    oxide_loaded_module *lm = NULL, *bad_lm = (oxide_loaded_module *)junk;
    EXPECT(oxide_loaded_module_load_ptx(NULL, ptx, sizeof ptx - 1, &lm), INV);
    EXPECT(oxide_loaded_module_load_ptx(bad_dev, ptx, sizeof ptx - 1, &lm), INV);
    EXPECT(oxide_loaded_module_load_cubin(NULL, ptx, sizeof ptx, NULL, 0, &lm), INV);
    oxide_loaded_module_destroy(NULL);
    oxide_loaded_module_destroy(bad_lm);
    CHECK(oxide_loaded_module_manifest(NULL) == NULL && oxide_loaded_module_manifest(bad_lm) == NULL);
    CHECK(!strcmp(oxide_loaded_module_jit_log(NULL), "") && !strcmp(oxide_loaded_module_jit_log(bad_lm), ""));
    oxide_kernel *k = NULL, *bad_k = (oxide_kernel *)junk;
    EXPECT(oxide_loaded_module_get_kernel(NULL, "k", &k), INV);
    EXPECT(oxide_loaded_module_get_kernel(bad_lm, "k", &k), INV);
    CHECK(!strcmp(oxide_kernel_name(NULL), "") && !strcmp(oxide_kernel_entry(bad_k), ""));
    EXPECT(oxide_kernel_native(NULL, &p), INV);
    EXPECT(oxide_kernel_get_attribute(NULL, OXIDE_KERNEL_NUM_REGS, &a), INV);
    EXPECT(oxide_kernel_get_attribute(bad_k, OXIDE_KERNEL_NUM_REGS, &a), INV);
    EXPECT(oxide_kernel_occupancy(NULL, 128, 0, &a), INV);
    EXPECT(oxide_kernel_suggest_block_size(NULL, 0, &a, &b), INV);

    uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    oxide_arg args[2] = {oxide_arg_f32(1.0f), oxide_arg_buffer(OXIDE_SCALAR_F32, 0x1000, 4, 1)};
    oxide_launch_config cfg = {{1, 1, 1}, {32, 1, 1}, 0, {0, 0, 0}, 0};
    EXPECT(oxide_kernel_launch(NULL, NULL, grid, block, 0, args, 2), INV);
    EXPECT(oxide_kernel_launch(bad_k, NULL, grid, block, 0, args, 2), INV);
    EXPECT(oxide_kernel_launch_ex(NULL, NULL, &cfg, args, 2), INV);
    EXPECT(oxide_kernel_launch_raw(NULL, NULL, &cfg, NULL), INV);

    oxide_task *t = NULL, *bad_t = (oxide_task *)junk;
    EXPECT(oxide_task_launch(NULL, &cfg, args, 2, &t), INV);
    EXPECT(oxide_task_copy_htod(NULL, 0x1000, host, 16, &t), INV);
    EXPECT(oxide_task_copy_dtoh(NULL, host, 0x1000, 16, &t), INV);
    EXPECT(oxide_task_copy_dtod(NULL, 0x1000, 0x2000, 16, &t), INV);
    EXPECT(oxide_task_memset(NULL, 0x1000, 0, 16, 1, &t), INV);
    EXPECT(oxide_task_host_fn(NULL, host_fn, NULL, &t), INV);
    EXPECT(oxide_task_sequence(NULL, 0, &t), INV);
    EXPECT(oxide_task_sequence(&bad_t, 1, &t), INV);
    EXPECT(oxide_task_join(NULL, 2, &t), INV);
    EXPECT(oxide_task_join(&bad_t, 1, &t), INV);
    CHECK(t == NULL);
    oxide_task_destroy(NULL);
    oxide_task_destroy(bad_t);
    EXPECT(oxide_task_submit(NULL, NULL), INV);
    EXPECT(oxide_task_sync(bad_t, NULL), INV);
    EXPECT(oxide_graph_create(NULL, &graph), INV);
    EXPECT(oxide_graph_launch(NULL, NULL), INV);
    EXPECT(oxide_graph_launch((oxide_graph *)junk, NULL), INV);
    oxide_graph_destroy(NULL);
    oxide_graph_destroy((oxide_graph *)junk);
}

/* A NULL or foreign handle names the function and the argument exactly once, whatever the
 * thread's last error held before (a message formatted from that same buffer repeated itself
 * or kept stale text). */
#define EXPECT_MSG(call, want)                                                                                         \
    do {                                                                                                               \
        oxide_device_name(NULL, NULL); /* leaves a message of its own behind */                                        \
        oxide_status st_ = (call);                                                                                     \
        CHECK(st_ == INV && !strcmp(oxide_last_error(), want), "%s: \"%s\", want \"%s\"", #call, oxide_last_error(),   \
              want);                                                                                                   \
    } while (0)

static void test_null_messages(void) {
    uint32_t one[3] = {1, 1, 1};
    oxide_launch_config cfg = {{1, 1, 1}, {32, 1, 1}, 0, {0, 0, 0}, 0};
    oxide_kernel *bad_k = (oxide_kernel *)junk;
    oxide_task *t = NULL, *bad_t = (oxide_task *)junk;
    oxide_buffer *buf = NULL;
    void *p = NULL;
    int a = 0;
    char desc[128];
    uint64_t dims[1] = {16};
    uint32_t box[1] = {16};
    EXPECT_MSG(oxide_kernel_launch(NULL, NULL, one, one, 0, NULL, 0), "oxide_kernel_launch: kernel is NULL");
    EXPECT_MSG(oxide_kernel_launch(bad_k, NULL, one, one, 0, NULL, 0), "oxide_kernel_launch: not a kernel handle");
    EXPECT_MSG(oxide_kernel_launch_ex(NULL, NULL, &cfg, NULL, 0), "oxide_kernel_launch_ex: kernel is NULL");
    EXPECT_MSG(oxide_kernel_native(NULL, &p), "oxide_kernel_native: kernel is NULL");
    EXPECT_MSG(oxide_kernel_get_attribute(NULL, OXIDE_KERNEL_NUM_REGS, &a),
               "oxide_kernel_get_attribute: kernel is NULL");
    EXPECT_MSG(oxide_task_launch(NULL, &cfg, NULL, 0, &t), "oxide_task_launch: kernel is NULL");
    EXPECT_MSG(oxide_task_host_fn(NULL, host_fn, NULL, &t), "oxide_task_host_fn: device is NULL");
    EXPECT_MSG(oxide_task_sequence(&bad_t, 1, &t), "oxide_task_sequence: task 0 is not a task handle");
    EXPECT_MSG(oxide_buffer_alloc(NULL, 16, &buf), "oxide_buffer_alloc: device is NULL");
    EXPECT_MSG(oxide_device_sm_count(NULL, &a), "oxide_device_sm_count: device is NULL");
    EXPECT_MSG(oxide_tma_desc_encode_tiled(NULL, desc, 0, 1, 0x1000, dims, NULL, box, NULL, 0),
               "oxide_tma_desc_encode_tiled: device is NULL");
}

/* The argument helpers are inline: check their encoding here, where no GPU is needed. */
static void test_arg_helpers(void) {
    oxide_arg a = oxide_arg_f32(1.5f);
    CHECK(a.kind == OXIDE_ARG_SCALAR && a.type == OXIDE_SCALAR_F32 && a.value == 0x3fc00000u);
    a = oxide_arg_f64(-2.0);
    CHECK(a.type == OXIDE_SCALAR_F64 && a.value == 0xc000000000000000ull);
    a = oxide_arg_i32(-1);
    CHECK(a.type == OXIDE_SCALAR_I32 && a.value == 0xffffffffu); /* low bytes only, zero-extended */
    a = oxide_arg_i8(-2);
    CHECK(a.type == OXIDE_SCALAR_I8 && a.value == 0xfe);
    a = oxide_arg_u64(0x123456789abcdef0ull);
    CHECK(a.type == OXIDE_SCALAR_U64 && a.value == 0x123456789abcdef0ull);
    a = oxide_arg_bool(7);
    CHECK(a.type == OXIDE_SCALAR_BOOL && a.value == 1);
    a = oxide_arg_bf16_bits(0x3f80);
    CHECK(a.type == OXIDE_SCALAR_BF16 && a.value == 0x3f80);
    a = oxide_arg_buffer(OXIDE_SCALAR_I16, 0xdead0000, 12, 1);
    CHECK(a.kind == OXIDE_ARG_BUFFER && a.type == OXIDE_SCALAR_I16 && a.ptr == 0xdead0000 && a.len == 12 &&
          a.is_mutable);
    a = oxide_arg_from_buffer(NULL, OXIDE_SCALAR_F32, 0);
    CHECK(a.kind == OXIDE_ARG_BUFFER && a.ptr == 0 && a.len == 0 && !a.is_mutable);
    char bytes[24];
    a = oxide_arg_bytes(bytes, sizeof bytes);
    CHECK(a.kind == OXIDE_ARG_BYTES && a.bytes == bytes && a.size == 24);
    a = oxide_arg_tma_desc(bytes);
    CHECK(a.kind == OXIDE_ARG_TMA_DESC && a.size == 128);
}

/* The compiler works without a driver: build, compile, read the manifest back. */
static void test_compiler_still_works(void) {
    oxide_context *ctx = NULL;
    oxide_module *mod = NULL;
    oxide_function *k = NULL;
    oxide_block *b = NULL;
    oxide_value *ptr, *len;
    CHECK(oxide_context_create(&ctx) == OXIDE_OK);
    CHECK(oxide_module_create(ctx, "nogpu", &mod) == OXIDE_OK);
    CHECK(oxide_module_add_kernel(mod, "touch", &k) == OXIDE_OK);
    CHECK(oxide_kernel_add_slice_param(k, "out", OXIDE_SCALAR_F32, 1, &ptr, &len) == OXIDE_OK);
    CHECK(oxide_function_add_block(k, NULL, 0, &b, NULL) == OXIDE_OK);
    CHECK(oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL) == OXIDE_OK);
    const char *ptx = NULL;
    size_t n = 0;
    CHECK(oxide_module_compile(mod, NULL, &ptx, &n) == OXIDE_OK);
    if (ptx) {
        CHECK(strstr(ptx, ".entry touch") != NULL);
        oxide_manifest *m = NULL;
        CHECK(oxide_manifest_parse(ptx, n, &m) == OXIDE_OK);
        CHECK(oxide_manifest_param_count(m, 0) == 1);
        oxide_manifest_destroy(m);
    }
    oxide_context_destroy(ctx);
}

/* In a child (the driver is loaded once per process): the toolkit's stub library. */
static void test_stub_driver(void) {
    static const char stub[] = OXIDE_CUDA_HOME "/lib64/stubs/libcuda.so";
    if (access(stub, R_OK) != 0) {
        printf("note: %s not found; stub-driver check skipped\n", stub);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("OXIDE_CUDA_DRIVER", stub, 1);
        int n;
        oxide_status st = oxide_device_count(&n);
        int ok = st == OXIDE_ERROR_NO_DRIVER && strstr(oxide_last_error(), "stub");
        if (!ok)
            fprintf(stderr, "stub driver: %s (\"%s\")\n", oxide_status_name(st), oxide_last_error());
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
    test_stub_driver();
    setenv("OXIDE_CUDA_DRIVER", "/nonexistent/oxide-test/libcuda.so.1", 1);
    test_no_driver();
    test_null_messages();
    test_arg_helpers();
    test_compiler_still_works();
    printf("test_runtime_nogpu: %d runtime calls returned clean statuses without a driver\n", calls);
    return check_report("test_runtime_nogpu");
}
