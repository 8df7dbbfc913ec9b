/* The compile's stage times (oxide_module_get_compile_time) and liboxide's own codegen pipeline
 * (lib/emit_codegen.cpp, which leaves out passes that do nothing for kernels and keeps its pass
 * manager for the next module) checked against LLVM-C's full one, built anew for each module: every C and tile
 * example's optimised LLVM IR, as oxide_module_get_llvm_ir gives it, is emitted again here through
 * LLVMTargetMachineEmitToMemoryBuffer by an LLVM linked into this test, and the PTX must be the same byte for byte
 * (docs/pipeline.md, "Codegen"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "harness.h"
#include "oxide_examples.h"

static oxide_context *ctx;

static const char *const c_examples[] = {"vecadd",    "saxpy",     "reduce",        "sgemm",   "softmax",
                                         "transpose", "histogram", "cluster_dsmem", "gemm_mma"};
static const char *const tile_examples[] = {"attention_fwd", "bmm_bf16",       "column_sum",      "layernorm_bf16",
                                            "matmul_at",     "matmul_bf16",    "matmul_bf16_128", "matmul_bias_gelu",
                                            "matmul_fp8",    "matmul_fp8_128", "softmax_f32",     "swiglu_bf16"};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static oxide_module *tile_module(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/tile/%s.oxir", OXIDE_SOURCE_DIR, name);
    size_t len = 0;
    char *text = check_read_file(path, &len);
    oxide_module *m = NULL;
    CHECK(text != NULL, "cannot read %s", path);
    if (text)
        OK(oxide_module_parse(ctx, text, len, &m));
    free(text);
    return m;
}

/* ---- stage times ---- */

static double stage(oxide_module *m, const char *want) {
    const char *name;
    double ms;
    for (size_t i = 0; !oxide_module_get_compile_time(m, i, &name, &ms); i++)
        if (!strcmp(name, want))
            return ms;
    return -1;
}

static void test_stage_times(void) {
    static const char *const names[] = {"tile",      "verify",      "lower",  "import",  "target",  "legalize",
                                        "libdevice", "llvm-verify", "passes", "llvm-ir", "codegen", "ptx"};
    enum { N = sizeof names / sizeof names[0] };
    oxide_module *m;
    MUST(oxide_example_module(ctx, "softmax", &m));
    const char *name = NULL;
    double ms = -1;
    OK(oxide_module_get_compile_time(m, 0, &name, &ms));
    CHECK(ms == 0, "before any compile stage 0 reads %g ms", ms);

    const char *ptx;
    double t0 = now_ms();
    MUST(oxide_module_compile(m, NULL, &ptx, NULL));
    double wall = now_ms() - t0, sum = 0;
    for (size_t i = 0; i < N; i++) {
        name = NULL;
        ms = -1;
        OK(oxide_module_get_compile_time(m, i, &name, &ms));
        CHECK(name && !strcmp(name, names[i]), "stage %zu is '%s', not '%s'", i, name ? name : "(null)", names[i]);
        CHECK(ms >= 0, "stage %s took %g ms", names[i], ms);
        sum += ms;
    }
    /* the stages are consecutive parts of the call: together no longer than it, and most of it */
    CHECK(sum <= wall && sum >= 0.5 * wall, "stages add up to %.3f ms of a %.3f ms compile", sum, wall);
    /* softmax calls expf: libdevice is linked; it has no tile kernel and no bitcode */
    for (size_t i = 0; i < N; i++) {
        const char *s = names[i];
        bool runs = strcmp(s, "tile") && strcmp(s, "import") && strcmp(s, "llvm-ir");
        double v = stage(m, s);
        if (runs)
            CHECK(v > 0, "stage %s of softmax took %g ms", s, v);
    }
    CHECK(stage(m, "tile") == 0 && stage(m, "import") == 0, "tile %g, import %g", stage(m, "tile"), stage(m, "import"));
    CHECK(stage(m, "codegen") > stage(m, "verify"), "codegen %g ms, verify %g ms", stage(m, "codegen"),
          stage(m, "verify"));

    FAILS_WITH(oxide_module_get_compile_time(m, N, &name, &ms), OXIDE_ERROR_NOT_FOUND, "has 12 stages", "stage 12");
    FAILS_WITH(oxide_module_get_compile_time(NULL, 0, &name, &ms), OXIDE_ERROR_INVALID_ARGUMENT, "mod is NULL");
    FAILS_WITH(oxide_module_get_compile_time(m, 0, NULL, &ms), OXIDE_ERROR_INVALID_ARGUMENT, "stage is NULL");
    FAILS_WITH(oxide_module_get_compile_time(m, 0, &name, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "ms is NULL");

    /* a compile that fails in the verifier: the times are its own, not the last success's */
    oxide_options *o;
    MUST(oxide_options_create(&o));
    MUST(oxide_options_set_target(o, "sm_80"));
    oxide_module *cl;
    MUST(oxide_example_module(ctx, "cluster_dsmem", &cl));
    CHECK(oxide_module_compile(cl, o, &ptx, NULL) == OXIDE_ERROR_VERIFY, "cluster_dsmem compiled for sm_80");
    CHECK(stage(cl, "verify") > 0 && stage(cl, "lower") == 0 && stage(cl, "codegen") == 0,
          "a verify failure: verify %g, lower %g, codegen %g", stage(cl, "verify"), stage(cl, "lower"),
          stage(cl, "codegen"));
    oxide_module_destroy(cl);
    oxide_options_destroy(o);

    /* tile kernels: the tile stage, and the SIMT compile's stages counted in */
    oxide_module *t = tile_module("softmax_f32");
    if (t) {
        MUST(oxide_module_compile(t, NULL, &ptx, NULL));
        CHECK(stage(t, "tile") > 0 && stage(t, "codegen") > 0 && stage(t, "lower") > 0, "tile %g, codegen %g",
              stage(t, "tile"), stage(t, "codegen"));
        oxide_module_destroy(t);
    }
    oxide_module_destroy(m);
}

/* ---- codegen against LLVM-C's ---- */

static void init_reference_llvm(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* the one codegen option liboxide sets for its whole process (lib/target.c) */
    const char *args[] = {"test_codegen", "-disable-lsr"};
    LLVMParseCommandLineOptions(2, args, NULL);
}

/* sm_90a at the PTX version ptx says (oxide raises it for fp8 mma), as liboxide makes it */
static LLVMTargetMachineRef reference_machine(const char *ptx) {
    int major = 0, minor = 0;
    const char *v = strstr(ptx, "\n.version ");
    if (!v || sscanf(v, "\n.version %d.%d", &major, &minor) != 2)
        return NULL;
    char features[16];
    snprintf(features, sizeof features, "+ptx%d", major * 10 + minor);
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &err)) {
        printf("FAILED: no NVPTX target in this LLVM: %s\n", err);
        exit(1);
    }
    return LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", "sm_90a", features, LLVMCodeGenLevelDefault,
                                   LLVMRelocDefault, LLVMCodeModelDefault);
}

/* oxide's PTX without its manifest line: what LLVM itself wrote */
static char *without_manifest(const char *ptx) {
    const char *at = strstr(ptx, "// oxide.manifest.v1 ");
    const char *nl = at ? strchr(at, '\n') : NULL;
    if (!nl)
        return NULL;
    size_t head = (size_t)(at - ptx);
    char *out = malloc(strlen(ptx) + 1);
    memcpy(out, ptx, head);
    strcpy(out + head, nl + 1);
    return out;
}

static void same_as_llvm_c(oxide_module *m, const char *name) {
    const char *ptx, *ir;
    MUST(oxide_module_compile(m, NULL, &ptx, NULL));
    MUST(oxide_module_get_llvm_ir(m, &ir));
    LLVMTargetMachineRef tm = reference_machine(ptx);
    CHECK(tm != NULL, "%s: no .version line in the PTX", name);
    if (!tm)
        return;
    LLVMContextRef c = LLVMContextCreate();
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), name);
    LLVMModuleRef lm;
    char *err = NULL;
    if (LLVMParseIRInContext(c, buf, &lm, &err)) {
        CHECK(0, "%s: the LLVM IR oxide gives does not parse: %s", name, err);
        LLVMDisposeMessage(err);
        LLVMContextDispose(c);
        LLVMDisposeTargetMachine(tm);
        return;
    }
    LLVMMemoryBufferRef out = NULL;
    CHECK(!LLVMTargetMachineEmitToMemoryBuffer(tm, lm, LLVMAssemblyFile, &err, &out), "%s: %s", name, err);
    char *mine = without_manifest(ptx);
    CHECK(mine != NULL, "%s: no manifest line in the PTX", name);
    if (out && mine) {
        size_t n = LLVMGetBufferSize(out);
        bool same = strlen(mine) == n && !memcmp(mine, LLVMGetBufferStart(out), n);
        CHECK(same, "%s: liboxide's codegen gives other PTX than LLVM-C's (%zu bytes against %zu)", name, strlen(mine),
              n);
    }
    free(mine);
    if (out)
        LLVMDisposeMemoryBuffer(out);
    LLVMDisposeModule(lm);
    LLVMContextDispose(c);
    LLVMDisposeTargetMachine(tm);
}

static void test_codegen_matches(void) {
    init_reference_llvm();
    for (size_t i = 0; i < sizeof c_examples / sizeof c_examples[0]; i++) {
        oxide_module *m;
        MUST(oxide_example_module(ctx, c_examples[i], &m));
        same_as_llvm_c(m, c_examples[i]);
        oxide_module_destroy(m);
    }
    for (size_t i = 0; i < sizeof tile_examples / sizeof tile_examples[0]; i++) {
        oxide_module *m = tile_module(tile_examples[i]);
        if (m)
            same_as_llvm_c(m, tile_examples[i]);
        oxide_module_destroy(m);
    }
}

/* The pass manager kept with a target machine serves module after module (lib/emit_codegen.cpp),
 * those with shared memory too, whose functions' addresses it must then not see again (without
 * that check this ends in NVPTX's printer aborting). Each compile must still give what LLVM-C's
 * fresh pipeline gives. */
static void test_kept_pass_manager(void) {
    static const char *const mix[] = {"vecadd", "reduce", "saxpy", "sgemm", "vecadd", "transpose", "saxpy"};
    for (int round = 0; round < 8; round++)
        for (size_t i = 0; i < sizeof mix / sizeof mix[0]; i++) {
            oxide_module *m;
            MUST(oxide_example_module(ctx, mix[i], &m));
            same_as_llvm_c(m, mix[i]);
            oxide_module_destroy(m);
        }
    /* line info: each module's .file names its own source, never the module before's */
    oxide_options *o;
    MUST(oxide_options_create(&o));
    MUST(oxide_options_set_line_info(o, 1));
    const char *names[] = {"vecadd", "saxpy", "vecadd"};
    for (int i = 0; i < 3; i++) {
        oxide_module *m;
        const char *ptx;
        MUST(oxide_example_module(ctx, names[i], &m));
        OK(oxide_module_compile(m, o, &ptx, NULL));
        char own[64], other[64];
        snprintf(own, sizeof own, "\"%s.oxide\"", names[i]);
        snprintf(other, sizeof other, "\"%s.oxide\"", names[(i + 1) % 2]);
        CHECK(strstr(ptx, own) && !strstr(ptx, other), "%s with line info: .file should name %s only", names[i], own);
        oxide_module_destroy(m);
    }
    oxide_options_destroy(o);
}

/* ---- libdevice pieces ---- */

/* ptx without its comments: NVPTX numbers the calls it emits ("// callseq 3") per target machine,
 * across compiles, so the same module's second compile differs from its first there only */
static char *code_of(const char *ptx) {
    char *out = malloc(strlen(ptx) + 1), *o = out;
    for (const char *p = ptx; out && *p;) {
        if (p[0] == '/' && p[1] == '/')
            while (*p && *p != '\n')
                p++;
        else
            *o++ = *p++;
    }
    if (out)
        *o = 0;
    return out;
}

/* More distinct sets of libdevice functions than the process keeps pieces for (64): each module
 * calls two, and every compile must link both (a call left without a definition is an error),
 * the first compile of a set and later ones alike, with the same PTX. */
static void test_libdevice_sets(void) {
    static const char *const ops[] = {"rsqrt", "exp", "exp2", "log", "log2", "sin",
                                      "cos",   "tan", "tanh", "erf", "round"};
    enum { NOPS = sizeof ops / sizeof ops[0] };
    int sets = 0;
    for (int i = 0; i < 2 * NOPS && sets < 80; i++)
        for (int j = i + 1; j < 2 * NOPS && sets < 80; j++, sets++) {
            const char *ti = i < NOPS ? "f32" : "f64", *tj = j < NOPS ? "f32" : "f64";
            char text[1024];
            snprintf(text, sizeof text,
                     "module @m%d\n\nkernel @k() {\n^0:\n"
                     "  %%0 = alloca {elem=f64, align=0} : ptr\n"
                     "  %%1 = load %%0 {align=0, volatile=0} : %s\n"
                     "  %%2 = %s %%1 : %s\n"
                     "  %%3 = load %%0 {align=0, volatile=0} : %s\n"
                     "  %%4 = %s %%3 : %s\n"
                     "  ret\n}\n",
                     sets, ti, ops[i % NOPS], ti, tj, ops[j % NOPS], tj);
            oxide_module *m = NULL;
            OK(oxide_module_parse(ctx, text, strlen(text), &m));
            if (!m)
                continue;
            const char *ptx;
            size_t len;
            char *first = NULL;
            OK(oxide_module_compile(m, NULL, &ptx, &len));
            first = code_of(ptx);
            OK(oxide_module_compile(m, NULL, &ptx, &len));
            char *second = code_of(ptx);
            CHECK(first && second && !strcmp(first, second), "%s and %s (%s, %s): the second compile's PTX differs",
                  ops[i % NOPS], ops[j % NOPS], ti, tj);
            free(second);
            CHECK(stage(m, "libdevice") > 0, "%s and %s: no libdevice stage", ops[i % NOPS], ops[j % NOPS]);
            free(first);
            oxide_module_destroy(m);
        }
    CHECK(sets == 80, "only %d sets", sets);
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    test_stage_times();
    test_codegen_matches();
    test_kept_pass_manager();
    test_libdevice_sets();
    oxide_context_destroy(ctx);
    return check_report("test_codegen");
}
