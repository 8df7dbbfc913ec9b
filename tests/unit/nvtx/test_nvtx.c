/* The NVTX loader (runtime/nvtx.c) against a fake NVTX library (fake_nvtx.c, which records the
 * calls that reach it), and the ranges around launches against the tests' fake CUDA driver. The
 * library is chosen once per process, so each case runs in its own child with its environment.
 * Arguments: the fake NVTX library, the one lacking nvtxRangePop, the fake libcuda.so.1, and
 * tests/gpu/data/kernels.ptx. */
#define _POSIX_C_SOURCE 200809L /* setenv, fork */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"

static const char *fake_path, *no_pop_path, *cuda_path, *ptx_path;

/* What reached the fake library since the last call ("push NAME;pop;..."). */
static const char *taken(void) {
    void *lib = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return "(fake NVTX not loaded)";
    const char *(*take)(void);
    void *sym = dlsym(lib, "fake_nvtx_take");
    memcpy(&take, &sym, sizeof sym);
    const char *s = take ? take() : "(no fake_nvtx_take)";
    dlclose(lib);
    return s;
}

#define LOG_IS(want)                                                                                                   \
    do {                                                                                                               \
        const char *got_ = taken();                                                                                    \
        CHECK(!strcmp(got_, want), "NVTX saw \"%s\", expected \"%s\"", got_, want);                                    \
    } while (0)

static void case_absent(void) {
    setenv("OXIDE_NVTX_LIBRARY", "/nonexistent/libnvToolsExt.so.1", 1);
    CHECK(!oxide_nvtx_available());
    OK(oxide_nvtx_push("no library"));
    OK(oxide_nvtx_pop());
    FAILS_WITH(oxide_nvtx_pop(), OXIDE_ERROR_STATE, "oxide_nvtx_pop", "no range is open");
    FAILS_WITH(oxide_nvtx_push(NULL), OXIDE_ERROR_INVALID_ARGUMENT, "name is NULL");
}

static void case_half(void) {
    setenv("OXIDE_NVTX_LIBRARY", no_pop_path, 1);
    CHECK(!oxide_nvtx_available(), "a library without nvtxRangePop was taken");
    OK(oxide_nvtx_push("half"));
    OK(oxide_nvtx_pop());
}

static void *pop_elsewhere(void *arg) {
    *(oxide_status *)arg = oxide_nvtx_pop();
    return NULL;
}

static void case_fake(void) {
    setenv("OXIDE_NVTX_LIBRARY", fake_path, 1);
    CHECK(oxide_nvtx_available());
    OK(oxide_nvtx_push("outer"));
    OK(oxide_nvtx_push("inner"));
    OK(oxide_nvtx_pop());
    OK(oxide_nvtx_pop());
    LOG_IS("push outer;push inner;pop;pop;");
    FAILS_WITH(oxide_nvtx_pop(), OXIDE_ERROR_STATE, "no range is open");
    FAILS_WITH(oxide_nvtx_push(NULL), OXIDE_ERROR_INVALID_ARGUMENT, "name is NULL");
    LOG_IS(""); /* refused calls never reach NVTX */
    /* Ranges belong to their thread, as NVTX's do: another thread cannot close this one. */
    OK(oxide_nvtx_push("mine"));
    oxide_status other = OXIDE_OK;
    pthread_t t;
    pthread_create(&t, NULL, pop_elsewhere, &other);
    pthread_join(t, NULL);
    CHECK(other == OXIDE_ERROR_STATE, "a pop on another thread returned %s", oxide_status_name(other));
    OK(oxide_nvtx_pop());
    LOG_IS("push mine;pop;");
}

/* env: OXIDE_NVTX_LAUNCHES for the child (NULL: unset); ranges: whether launches get ranges
 * before any call sets them. */
static void case_launches(const char *env, int ranges) {
    setenv("OXIDE_NVTX_LIBRARY", fake_path, 1);
    setenv("OXIDE_CUDA_DRIVER", cuda_path, 1);
    if (env)
        setenv("OXIDE_NVTX_LAUNCHES", env, 1);
    else
        unsetenv("OXIDE_NVTX_LAUNCHES");
    CHECK(oxide_nvtx_available());
    size_t len;
    char *ptx = check_read_file(ptx_path, &len);
    if (!ptx) {
        printf("FAILED: cannot read %s\n", ptx_path);
        exit(1);
    }
    oxide_device *dev;
    oxide_loaded_module *lm;
    oxide_kernel *k;
    MUST(oxide_device_get(0, &dev));
    MUST(oxide_loaded_module_load_ptx(dev, ptx, len, &lm));
    MUST(oxide_loaded_module_get_kernel(lm, "empty", &k));
    free(ptx);
    oxide_launch_config cfg = {{2, 1, 1}, {32, 1, 1}, 0, {0, 0, 0}, 0};
    CHECK(oxide_nvtx_launch_ranges() == ranges, "OXIDE_NVTX_LAUNCHES=%s gave %d", env ? env : "(unset)",
          oxide_nvtx_launch_ranges());
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, NULL, 0));
    LOG_IS(ranges ? "push empty;pop;" : "");

    oxide_nvtx_set_launch_ranges(1);
    CHECK(oxide_nvtx_launch_ranges() == 1);
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, NULL, 0));
    OK(oxide_kernel_launch_raw(k, NULL, &cfg, NULL));
    LOG_IS("push empty;pop;push empty;pop;");
    /* A launch the driver refuses still closes its range. */
    oxide_launch_config bad = {{0, 1, 1}, {32, 1, 1}, 0, {0, 0, 0}, 0};
    CHECK(oxide_kernel_launch_ex(k, NULL, &bad, NULL, 0) != OXIDE_OK, "a grid of 0 blocks launched");
    LOG_IS("push empty;pop;");
    /* An argument the check refuses launches nothing, so it opens no range. */
    int32_t extra = 7;
    oxide_arg arg = oxide_arg_i32(extra);
    FAILS_WITH(oxide_kernel_launch(k, NULL, cfg.grid, cfg.block, 0, &arg, 1), OXIDE_ERROR_LAUNCH, "empty");
    LOG_IS("");
    /* A task's launch happens at submit, and gets its range then. */
    oxide_task *task;
    OK(oxide_task_launch(k, &cfg, NULL, 0, &task));
    LOG_IS("");
    OK(oxide_task_sync(task, NULL));
    LOG_IS("push empty;pop;");
    oxide_task_destroy(task);
    /* User ranges and launch ranges nest. */
    OK(oxide_nvtx_push("step"));
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, NULL, 0));
    OK(oxide_nvtx_pop());
    LOG_IS("push step;push empty;pop;pop;");

    oxide_nvtx_set_launch_ranges(0);
    OK(oxide_kernel_launch_ex(k, NULL, &cfg, NULL, 0));
    LOG_IS("");
    oxide_loaded_module_destroy(lm);
}

static void in_child(const char *name, void (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        check_passed = check_failed = 0; /* the child reports its own checks */
        fn();
        exit(check_report(name));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "case %s failed (status %d)", name, status);
}

static void launches_unset(void) { case_launches(NULL, 0); }
static void launches_on(void) { case_launches("1", 1); }
static void launches_zero(void) { case_launches("0", 0); }

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: test_nvtx FAKE_NVTX NO_POP_NVTX FAKE_LIBCUDA KERNELS_PTX\n");
        return 2;
    }
    fake_path = argv[1], no_pop_path = argv[2], cuda_path = argv[3], ptx_path = argv[4];
    in_child("absent", case_absent);
    in_child("half", case_half);
    in_child("fake", case_fake);
    in_child("launches_unset", launches_unset);
    in_child("launches_on", launches_on);
    in_child("launches_zero", launches_zero);
    return check_report("test_nvtx");
}
