/* `oxide doctor`: is everything oxide needs here, and if not, what fixes it.
 *
 * Each check prints one line, `OK` or `MISSING` (or `WARN`), and for what is missing the fix.
 * The checks exercise the real paths rather than looking for files: LLVM is checked by
 * compiling a kernel, libdevice by compiling one that needs it, the driver and GPUs through the
 * runtime API that programs use, and each GPU by loading a kernel compiled for it.
 *
 * Exit status: 0 all found; 1 the compiler cannot work (LLVM or libdevice); 2 the compiler
 * works but no driver or GPU is usable, so kernels cannot run here (what CI machines report). */
#define _POSIX_C_SOURCE 200809L /* popen */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oxide.h"
#include "oxide_examples.h"
#include "oxide_tool.h"

static void line(const char *state, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(const char *state, const char *what, const char *fmt, ...) {
    printf("%-8s %-12s ", state, what);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void fix(const char *text) { printf("%-8s %-12s fix: %s\n", "", "", text); }

/* Compiles example `name` for sm; 0 on success, else the status (message in oxide_last_error). */
static oxide_status try_compile(const char *name, const char *sm, char **ptx_copy) {
    oxide_context *ctx;
    oxide_status st = oxide_context_create(&ctx);
    if (st)
        return st;
    oxide_module *mod;
    oxide_options *o = NULL;
    if (!(st = oxide_example_module(ctx, name, &mod)) && !(st = oxide_options_create(&o)) &&
        !(st = oxide_options_set_target(o, sm))) {
        const char *ptx;
        size_t len;
        st = oxide_module_compile(mod, o, &ptx, &len);
        if (!st && ptx_copy && !(*ptx_copy = malloc(len + 1)))
            st = OXIDE_ERROR_OUT_OF_MEMORY;
        if (!st && ptx_copy)
            memcpy(*ptx_copy, ptx, len + 1);
    }
    oxide_options_destroy(o);
    oxide_context_destroy(ctx);
    return st;
}

static int is_executable(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode) && access(path, X_OK) == 0;
}

/* ptxas from $OXIDE_CUDA_HOME, $CUDA_HOME, the build's toolkit, then PATH. */
static int find_ptxas(const char *cuda_home, char *out, size_t size) {
    const char *homes[] = {getenv("OXIDE_CUDA_HOME"), getenv("CUDA_HOME"), cuda_home};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        snprintf(out, size, "%s/bin/ptxas", homes[i]);
        if (is_executable(out))
            return 1;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(out, size, "%.*s/ptxas", (int)n, path);
        if (n && is_executable(out))
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

/* "release 13.0, V13.0.88" -> "13.0.88", from `ptxas --version`. */
static void ptxas_version(const char *ptxas, char *out, size_t size) {
    snprintf(out, size, "version unknown");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --version 2>/dev/null", ptxas);
    if (strchr(ptxas, '\''))
        return;
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) {
        char *v = strstr(buf, ", V");
        if (v) {
            v += 3;
            v[strcspn(v, "\r\n")] = 0;
            snprintf(out, size, "CUDA %s", v);
        }
    }
    pclose(p);
}

/* The target oxide should compile for on a device of compute capability major.minor. */
static void target_for(int major, int minor, char *out, size_t size) {
    if (major == 9 && minor == 0)
        snprintf(out, size, "sm_90a");
    else if (major >= 10)
        snprintf(out, size, "sm_100a");
    else
        snprintf(out, size, "sm_%d%d", major, minor);
}

int oxide_tool_doctor(const char *cuda_home) {
    int compiler_broken = 0, cannot_run = 0;
    printf("oxide %s\n", oxide_version());

    /* LLVM: the NVPTX back end inside liboxide. */
    oxide_status st = try_compile("vecadd", "sm_90a", NULL);
#ifdef OXIDE_LLVM_VERSION
    const char *llvm = "LLVM " OXIDE_LLVM_VERSION;
#else
    const char *llvm = "LLVM";
#endif
    if (!st) {
        line("OK", "LLVM", "%s: the NVPTX back end compiled a test kernel for sm_90a", llvm);
    } else {
        compiler_broken = 1;
        line("MISSING", "LLVM", "%s cannot compile: %s: %s", llvm, oxide_status_name(st), oxide_last_error());
        fix("apt-get install llvm-22-dev, then rebuild oxide against it");
    }

    /* libdevice: math functions (softmax uses exp). */
    if (!st) {
        st = try_compile("softmax", "sm_90a", NULL);
        if (!st) {
            line("OK", "libdevice", "math functions link (a kernel using exp compiled)");
        } else {
            compiler_broken = 1;
            line("MISSING", "libdevice", "%s: %s", oxide_status_name(st), oxide_last_error());
            fix("install the CUDA toolkit, which provides nvvm/libdevice/libdevice.10.bc, and rebuild oxide "
                "with -DCUDA_HOME=<toolkit>");
        }
    }

    /* ptxas: only to validate PTX offline; the driver compiles PTX itself. */
    char ptxas[4096], ver[128];
    if (find_ptxas(cuda_home, ptxas, sizeof ptxas)) {
        ptxas_version(ptxas, ver, sizeof ver);
        line("OK", "ptxas", "%s (%s)", ptxas, ver);
    } else {
        line("WARN", "ptxas", "not found (optional: only needed to check PTX without a GPU)");
        fix("install the CUDA toolkit, or set OXIDE_CUDA_HOME to it");
    }

    /* Driver and GPUs, through the runtime as programs use them. */
    int dv = 0, count = 0;
    st = oxide_driver_version(&dv);
    if (st) {
        cannot_run = 1;
        line("MISSING", "driver", "%s: %s", oxide_status_name(st), oxide_last_error());
        fix("install the NVIDIA driver (it provides libcuda.so.1), or set OXIDE_CUDA_DRIVER to its path");
        line("MISSING", "GPU", "no driver, so no GPU can be used: kernels compile here but cannot run");
    } else {
        line("OK", "driver", "libcuda supports CUDA %d.%d", dv / 1000, dv % 1000 / 10);
        st = oxide_device_count(&count);
        if (st || count == 0) {
            cannot_run = 1;
            line("MISSING", "GPU", "the driver sees no GPU (%s: %s)",
                 oxide_status_name(st ? st : OXIDE_ERROR_NO_DEVICE), st ? oxide_last_error() : "device count 0");
            fix("check `nvidia-smi` and CUDA_VISIBLE_DEVICES");
        }
        for (int i = 0; i < count; i++) {
            oxide_device *dev;
            const char *name = "?";
            int major = 0, minor = 0, sms = 0;
            size_t mem = 0;
            if ((st = oxide_device_get(i, &dev)) || (st = oxide_device_name(dev, &name)) ||
                (st = oxide_device_compute_capability(dev, &major, &minor)) ||
                (st = oxide_device_sm_count(dev, &sms)) || (st = oxide_device_total_memory(dev, &mem))) {
                cannot_run = 1;
                line("MISSING", "GPU", "device %d unusable: %s: %s", i, oxide_status_name(st), oxide_last_error());
                continue;
            }
            char target[16], what[32];
            target_for(major, minor, target, sizeof target);
            snprintf(what, sizeof what, "GPU %d", i);
            char *ptx = NULL;
            oxide_loaded_module *lm = NULL;
            if (!compiler_broken && !(st = try_compile("vecadd", target, &ptx)))
                st = oxide_loaded_module_load_ptx(dev, ptx, strlen(ptx), &lm);
            free(ptx);
            oxide_loaded_module_destroy(lm);
            if (compiler_broken) {
                line("OK", what, "%s, compute capability %d.%d (%s), %d SMs, %.1f GiB", name, major, minor, target, sms,
                     mem / 1073741824.0);
            } else if (st) {
                cannot_run = 1;
                line("MISSING", what, "%s (%s) cannot load oxide's PTX: %s: %s", name, target, oxide_status_name(st),
                     oxide_last_error());
                fix("update the NVIDIA driver, or pick an older PTX ISA with --ptx-version");
            } else {
                line("OK", what, "%s, compute capability %d.%d (%s), %d SMs, %.1f GiB; loaded a test kernel", name,
                     major, minor, target, sms, mem / 1073741824.0);
            }
        }
    }
    return compiler_broken ? 1 : cannot_run ? 2 : 0;
}
