/* compile_latency: oxide IR -> PTX in-process against NVRTC compiling the same kernel from CUDA
 * C++ (bench/README.md). Prints one row per kernel on stdout:
 *
 *     KERNEL oxide_ms nvrtc_ms speedup
 *
 * oxide_ms: median over runs of building the example kernel through the C API into a fresh
 * module and compiling it for sm_90a at opt level 3 (context and target machine warm, and the
 * codegen pass manager the target machine keeps).
 * nvrtc_ms: median over runs of nvrtcCreateProgram + nvrtcCompileProgram(-arch=sm_90a
 * -default-device) + nvrtcGetPTX + nvrtcDestroyProgram on bench/cuda/KERNEL.cu. The first (cold)
 * compile of each kind goes to stderr, with the PTX sizes. The two are timed in alternating
 * blocks of five runs, so that both see the same load on a shared machine.
 *
 * Usage: compile_latency [-n RUNS] [-t TARGET] [KERNEL...]   (default: 50 runs, sm_90a, all four)
 * Without libnvrtc the nvrtc and speedup columns read "nan". */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "oxide.h"
#include "oxide_examples.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- NVRTC through dlopen (no link-time dependency on the toolkit) ---- */

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
static struct {
    void *lib;
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
} nv;

static int nvrtc_open(void) {
    const char *names[] = {OXIDE_CUDA_HOME "/lib64/libnvrtc.so", "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !nv.lib; i++)
        nv.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib)
        return 0;
    *(void **)&nv.create = dlsym(nv.lib, "nvrtcCreateProgram");
    *(void **)&nv.compile = dlsym(nv.lib, "nvrtcCompileProgram");
    *(void **)&nv.ptx_size = dlsym(nv.lib, "nvrtcGetPTXSize");
    *(void **)&nv.ptx = dlsym(nv.lib, "nvrtcGetPTX");
    *(void **)&nv.destroy = dlsym(nv.lib, "nvrtcDestroyProgram");
    *(void **)&nv.log_size = dlsym(nv.lib, "nvrtcGetProgramLogSize");
    *(void **)&nv.log = dlsym(nv.lib, "nvrtcGetProgramLog");
    return nv.create && nv.compile && nv.ptx_size && nv.ptx && nv.destroy && nv.log_size && nv.log;
}

/* One NVRTC compile; returns its wall time in ms, or -1 on failure (log to stderr). */
static double nvrtc_once(const char *src, const char *name, const char *arch_opt, size_t *ptx_len) {
    const char *opts[] = {arch_opt, "-default-device"};
    double t0 = now_ms();
    nvrtcProgram p;
    if (nv.create(&p, src, name, 0, NULL, NULL))
        return -1;
    nvrtcResult r = nv.compile(p, 2, opts);
    size_t n = 0;
    char *ptx = NULL;
    if (!r && !nv.ptx_size(p, &n) && (ptx = malloc(n)))
        r = nv.ptx(p, ptx);
    double t = now_ms() - t0;
    if (r) {
        size_t ln = 0;
        nv.log_size(p, &ln);
        char *log = malloc(ln + 1);
        if (log && !nv.log(p, log))
            fprintf(stderr, "nvrtc %s: %s\n", name, log);
        free(log);
        t = -1;
    }
    if (ptx_len)
        *ptx_len = n;
    free(ptx);
    nv.destroy(&p);
    return t;
}

/* ---- oxide ---- */

/* Build the example into a fresh module and compile it; returns ms, or -1 on failure. */
static double oxide_once(oxide_context *ctx, const oxide_options *o, const char *name, size_t *ptx_len) {
    double t0 = now_ms();
    oxide_module *m;
    oxide_status st = oxide_example_module(ctx, name, &m);
    const char *ptx;
    size_t len = 0;
    if (!st)
        st = oxide_module_compile(m, o, &ptx, &len);
    double t = now_ms() - t0;
    if (st) {
        fprintf(stderr, "oxide %s: %s: %s\n", name, oxide_status_name(st), oxide_last_error());
        t = -1;
    } else {
        oxide_module_destroy(m);
    }
    if (ptx_len)
        *ptx_len = len;
    return t;
}

int main(int argc, char **argv) {
    int runs = 50;
    const char *target = "sm_90a";
    const char *kernels[16];
    int nk = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            target = argv[++i];
        else if (argv[i][0] == '-' || nk == 16) {
            fprintf(stderr, "usage: %s [-n RUNS] [-t TARGET] [KERNEL...]\n", argv[0]);
            return 2;
        } else
            kernels[nk++] = argv[i];
    }
    if (runs < 1)
        runs = 1;
    if (!nk) {
        static const char *const all[] = {"vecadd", "saxpy", "reduce", "sgemm"};
        for (int i = 0; i < 4; i++)
            kernels[nk++] = all[i];
    }
    oxide_context *ctx;
    oxide_options *o;
    if (oxide_context_create(&ctx) || oxide_options_create(&o) || oxide_options_set_target(o, target) ||
        oxide_options_set_opt_level(o, 3)) {
        fprintf(stderr, "oxide setup: %s\n", oxide_last_error());
        return 1;
    }
    int have_nvrtc = nvrtc_open();
    if (!have_nvrtc)
        fprintf(stderr, "libnvrtc not found under %s/lib64: nvrtc columns are nan\n", OXIDE_CUDA_HOME);
    char arch_opt[64];
    snprintf(arch_opt, sizeof arch_opt, "-arch=%s", target);
    double *t = malloc((size_t)runs * sizeof *t), *tn = malloc((size_t)runs * sizeof *tn);
    int rc = 0;
    for (int k = 0; k < nk; k++) {
        const char *name = kernels[k];
        size_t olen = 0, nlen = 0;
        double cold = oxide_once(ctx, o, name, &olen);
        if (cold < 0) {
            rc = 1;
            continue;
        }
        char *src = NULL;
        double nvcold = NAN;
        if (have_nvrtc) {
            char file[256];
            snprintf(file, sizeof file, "%s.cu", name);
            if (!(src = read_bench_data("cuda", file, "OXIDE_BENCH_CUDA_DIR", "bench/cuda"))) {
                fprintf(stderr,
                        "cannot read %s: not in cuda/ beside this program, $OXIDE_BENCH_CUDA_DIR or bench/cuda\n",
                        file);
                rc = 1;
            } else if ((nvcold = nvrtc_once(src, name, arch_opt, &nlen)) < 0) {
                rc = 1;
                free(src);
                src = NULL;
            }
        }
        /* Alternating blocks of runs: each compiler stays warm within a block (one compile
         * after the other's evicts it from the caches), and both see the same load over time
         * on a shared machine. */
        for (int r0 = 0; r0 < runs; r0 += 5) {
            for (int r = r0; r < runs && r < r0 + 5; r++)
                t[r] = oxide_once(ctx, o, name, NULL);
            for (int r = r0; r < runs && r < r0 + 5; r++)
                tn[r] = src ? nvrtc_once(src, name, arch_opt, NULL) : NAN;
        }
        double ox = median(t, runs), nvms = src ? median(tn, runs) : NAN;
        free(src);
        fprintf(stderr, "# %s: cold first compile oxide %.2f ms, nvrtc %.2f ms; PTX bytes oxide %zu, nvrtc %zu\n", name,
                cold, nvcold, olen, nlen);
        printf("%s %.2f %.2f %.1f\n", name, ox, nvms, nvms / ox);
        fflush(stdout);
    }
    free(t);
    free(tn);
    oxide_options_destroy(o);
    oxide_context_destroy(ctx);
    return rc;
}
