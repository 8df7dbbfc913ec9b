/* Tensor arguments (docs/runtime.md): a tensor parameter of rank r is 1 + 2r PTX parameters
 * (pointer = data + byte_offset, shape, strides), checked against the manifest; a kernel whose
 * manifest fixes the block launches with it. The module is written by hand (PTX and manifest),
 * since tile kernels are not lowered yet: each entry stores the PTX parameters it was given and
 * its %ntid into an output slice, so the test reads back exactly what the launch packed. On the
 * mock driver the same entries are re-implemented in C (tests/gpu/mock). */
#include "gpu_test.h"

/* tests/gpu/data/tensor_echo.ptx: tensor_echo(t: tensor<mut 2 x f32>, out: slice<mut u64>), whose
 * manifest fixes block 64x2x1, and tensor_echo8(t: tensor<1 x f8e4m3>, out: slice<mut u64>). */
static oxide_device *dev;
static oxide_loaded_module *lm;
static oxide_buffer *data, *out;
static const uint32_t ONE[3] = {1, 1, 1};

static oxide_kernel *kernel(const char *name) {
    oxide_kernel *k = NULL;
    MUST(oxide_loaded_module_get_kernel(lm, name, &k));
    return k;
}

/* A random rank-2 view into data: non-zero offset, shape and strides (one of them negative). */
static oxide_tensor random_tensor(void) {
    oxide_tensor t = {.struct_size = sizeof(oxide_tensor), .data = oxide_buffer_ptr(data), .elem = OXIDE_SCALAR_F32};
    t.byte_offset = 4 * (1 + rng_u32() % 64);
    t.rank = 2;
    t.shape[0] = 1 + rng_u32() % 1000, t.shape[1] = 1 + rng_u32() % 1000;
    t.strides[0] = -(int64_t)(1 + rng_u32() % 5000), t.strides[1] = 1 + rng_u32() % 7;
    t.is_mutable = 1;
    return t;
}

static void read_out(uint64_t got[8]) {
    memset(got, 0, 8 * sizeof *got);
    OK(oxide_device_synchronize(dev));
    OK(oxide_memcpy_dtoh(dev, got, oxide_buffer_ptr(out), 8 * sizeof *got));
}

/* The packed PTX parameters, byte for byte, and the block the kernel ran with. */
static void check_echo(const oxide_tensor *t, const uint32_t block[3]) {
    uint64_t got[8];
    read_out(got);
    uint64_t want[8] = {t->data + t->byte_offset,
                        (uint64_t)t->shape[0],
                        (uint64_t)t->shape[1],
                        (uint64_t)t->strides[0],
                        (uint64_t)t->strides[1],
                        block[0],
                        block[1],
                        block[2]};
    CHECK(!memcmp(got, want, sizeof want), "got %llx %llu %llu %lld %lld %llu %llu %llu", (unsigned long long)got[0],
          (unsigned long long)got[1], (unsigned long long)got[2], (long long)got[3], (long long)got[4],
          (unsigned long long)got[5], (unsigned long long)got[6], (unsigned long long)got[7]);
    OK(oxide_memset(dev, oxide_buffer_ptr(out), 0, 64, 1));
}

static void test_launch(void) {
    oxide_kernel *k = kernel("tensor_echo");
    const uint32_t chosen[3] = {64, 2, 1}, zeros[3] = {0, 0, 0};
    oxide_tensor t = random_tensor();
    oxide_arg args[2] = {oxide_arg_tensor(&t), oxide_arg_from_buffer(out, OXIDE_SCALAR_U64, 1)};
    OK(oxide_kernel_launch(k, NULL, ONE, NULL, 0, args, 2));
    check_echo(&t, chosen);
    t = random_tensor();
    OK(oxide_kernel_launch(k, NULL, ONE, zeros, 0, args, 2));
    check_echo(&t, chosen);
    t = random_tensor();
    OK(oxide_kernel_launch(k, NULL, ONE, chosen, 0, args, 2));
    check_echo(&t, chosen);
    oxide_launch_config cfg = {.grid = {1, 1, 1}};
    t = random_tensor();
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, args, 2));
    check_echo(&t, chosen);
    const uint32_t other[3] = {32, 1, 1};
    FAILS_WITH(oxide_kernel_launch(k, NULL, ONE, other, 0, args, 2), OXIDE_ERROR_LAUNCH, "launch tensor_echo",
               "block 32x1x1 asked for", "compiler chose block 64x2x1");
    /* A kernel without a chosen block takes the launch's, and needs one. */
    oxide_kernel *k8 = kernel("tensor_echo8");
    oxide_tensor t8 = {.struct_size = sizeof t8,
                       .data = oxide_buffer_ptr(data),
                       .byte_offset = 1 + rng_u32() % 99,
                       .elem = OXIDE_SCALAR_F8E4M3,
                       .rank = 1,
                       .is_mutable = 1}; /* mutable passes as read-only */
    t8.shape[0] = 1 + rng_u32() % 4096, t8.strides[0] = -(int64_t)(1 + rng_u32() % 9);
    oxide_arg args8[2] = {oxide_arg_tensor(&t8), oxide_arg_from_buffer(out, OXIDE_SCALAR_U64, 1)};
    const uint32_t b8[3] = {96, 1, 1};
    OK(oxide_kernel_launch(k8, NULL, ONE, b8, 0, args8, 2));
    uint64_t got[8];
    read_out(got);
    CHECK(got[0] == t8.data + t8.byte_offset && got[1] == (uint64_t)t8.shape[0] && got[2] == (uint64_t)t8.strides[0] &&
          got[5] == 96 && got[6] == 1 && got[7] == 1);
    FAILS_WITH(oxide_kernel_launch(k8, NULL, ONE, NULL, 0, args8, 2), OXIDE_ERROR_INVALID_ARGUMENT,
               "launch tensor_echo8: grid or block is NULL");
}

/* A task copies the tensor when it is made: the caller's struct may change or go afterwards. */
static void test_task(void) {
    oxide_kernel *k = kernel("tensor_echo");
    oxide_tensor t = random_tensor(), kept = t;
    oxide_arg args[2] = {oxide_arg_tensor(&t), oxide_arg_from_buffer(out, OXIDE_SCALAR_U64, 1)};
    oxide_launch_config cfg = {.grid = {1, 1, 1}};
    oxide_task *task = NULL;
    OK(oxide_task_launch(k, &cfg, args, 2, &task));
    t = random_tensor();
    t.rank = 3; /* would be refused, were it read again */
    OK(oxide_task_submit(task, NULL));
    const uint32_t chosen[3] = {64, 2, 1};
    check_echo(&kept, chosen);
    oxide_graph *g = NULL;
    OK(oxide_graph_create(task, &g));
    OK(oxide_graph_launch(g, NULL));
    check_echo(&kept, chosen);
    oxide_graph_destroy(g);
    oxide_task_destroy(task);
    t = random_tensor();
    t.elem = OXIDE_SCALAR_BF16;
    FAILS_WITH(oxide_task_launch(k, &cfg, args, 2, &task), OXIDE_ERROR_LAUNCH,
               "argument 1 't' is a tensor of f32, got a tensor of bf16");
}

/* Each mismatch is refused before the driver sees the launch, naming the kernel, the parameter
 * and what was expected and given. */
static void test_refusals(void) {
    oxide_kernel *k = kernel("tensor_echo");
    oxide_tensor t = random_tensor();
    oxide_arg args[2] = {oxide_arg_tensor(&t), oxide_arg_from_buffer(out, OXIDE_SCALAR_U64, 1)};
#define REFUSED(...) FAILS_WITH(oxide_kernel_launch(k, NULL, ONE, NULL, 0, args, 2), OXIDE_ERROR_LAUNCH, __VA_ARGS__)
    args[0] = oxide_arg_from_buffer(data, OXIDE_SCALAR_F32, 1);
    REFUSED("launch tensor_echo: argument 1 't' is a mutable tensor of rank 2 of f32, got a mutable buffer of f32");
    args[0] = oxide_arg_tensor(NULL);
    REFUSED("argument 1 't' is a mutable tensor of rank 2 of f32, got a tensor at NULL");
    args[0] = oxide_arg_tensor(&t);
    t.rank = 3;
    REFUSED("argument 1 't' is a tensor of rank 2, got rank 3");
    t = random_tensor(), t.elem = OXIDE_SCALAR_F16;
    REFUSED("argument 1 't' is a tensor of f32, got a tensor of f16");
    t = random_tensor(), t.is_mutable = 0;
    REFUSED("argument 1 't' is a mutable tensor (the kernel writes it), got a read-only one");
    t = random_tensor(), t.shape[1] = -1;
    REFUSED("argument 1 't': the tensor's shape[1] is -1");
    t = random_tensor(), t.struct_size = 8;
    REFUSED("argument 1 't': the oxide_tensor's struct_size is 8, less than the");
    t = random_tensor(), t.shape[0] = 0; /* empty is fine */
    OK(oxide_kernel_launch(k, NULL, ONE, NULL, 0, args, 2));
    t = random_tensor(), t.struct_size = sizeof t + 64; /* a later, longer version */
    OK(oxide_kernel_launch(k, NULL, ONE, NULL, 0, args, 2));
    /* a tensor where a slice goes */
    args[1] = oxide_arg_tensor(&t);
    REFUSED("argument 2 'out' is a mutable slice of u64, got a tensor");
#undef REFUSED
}

/* A persistent entry (grid_echo): the launch runs at most as many blocks as the device holds at
 * once, in x, and passes the grid it was given as the entry's last three parameters. */
static void test_persistent(void) {
    oxide_kernel *k = kernel("grid_echo");
    oxide_arg args[1] = {oxide_arg_from_buffer(out, OXIDE_SCALAR_U64, 8)};
    int sms = 0;
    OK(oxide_device_sm_count(dev, &sms));
    const uint32_t small[3] = {5, 3, 2}, big[3] = {1000, 100, 7};
    uint64_t got[8];
    OK(oxide_kernel_launch(k, NULL, small, NULL, 0, args, 1));
    read_out(got);
    CHECK(got[0] == 30 && got[1] == 1 && got[2] == 1 && got[3] == 5 && got[4] == 3 && got[5] == 2,
          "small grid: launched %llu %llu %llu, parameters %llu %llu %llu", (unsigned long long)got[0],
          (unsigned long long)got[1], (unsigned long long)got[2], (unsigned long long)got[3],
          (unsigned long long)got[4], (unsigned long long)got[5]);
    oxide_launch_config cfg = {.grid = {1000, 100, 7}};
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, args, 1));
    read_out(got);
    /* a whole number of blocks per SM, the SMs full (32 threads, no shared memory: many each) */
    CHECK(got[0] >= (uint64_t)sms && got[0] < 700000 && got[0] % (uint64_t)sms == 0 && got[1] == 1 && got[2] == 1 &&
              got[3] == big[0] && got[4] == big[1] && got[5] == big[2],
          "big grid: launched %llu %llu %llu on %d SMs, parameters %llu %llu %llu", (unsigned long long)got[0],
          (unsigned long long)got[1], (unsigned long long)got[2], sms, (unsigned long long)got[3],
          (unsigned long long)got[4], (unsigned long long)got[5]);
    const uint32_t huge[3] = {65536, 65535, 1};
    FAILS_WITH(oxide_kernel_launch(k, NULL, huge, NULL, 0, args, 1), OXIDE_ERROR_LAUNCH,
               "launch grid_echo: grid 65536x65535x1 has 4294901760 blocks; this persistent entry walks at most");
    void *raw[5] = {0};
    FAILS_WITH(oxide_kernel_launch_raw(k, NULL, &cfg, raw), OXIDE_ERROR_LAUNCH,
               "launch grid_echo: a persistent entry takes the launch's grid as parameters");
}

int main(void) {
    gpu_require();
    rng_seed();
    MUST(oxide_device_get(0, &dev));
    size_t len = 0;
    char *ptx = read_data("tensor_echo.ptx", &len);
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    free(ptx);
    MUST(oxide_buffer_alloc(dev, 1 << 16, &data));
    MUST(oxide_buffer_alloc(dev, 64, &out));
    test_launch();
    test_task();
    test_refusals();
    test_persistent();
    oxide_buffer_free(data);
    oxide_buffer_free(out);
    oxide_loaded_module_destroy(lm);
    return finish("tensor arguments", "");
}
