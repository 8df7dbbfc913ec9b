/* The NVPTX target: LLVM's one-time process setup, the PTX ISA version for a target, and the
 * target machines with the codegen and IR pass managers kept for each (lib/emit_codegen.cpp),
 * held by contexts and pooled across them. docs/pipeline.md, "Targets and PTX ISA versions". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>

#include "llvm.h"

/* ---- one-time process setup ---- */

static void fatal_handler(const char *reason) {
    /* LLVM exits right after this returns; all that is left is a clear last word. */
    static const char a[] = "oxide: LLVM fatal error: ";
    static const char b[] = " -- please report this IR (oxide_module_print) to the oxide developers\n";
    ssize_t w = write(2, a, sizeof a - 1);
    w = write(2, reason, strlen(reason));
    w = write(2, b, sizeof b - 1);
    (void)w;
}

static void init_llvm(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInstallFatalErrorHandler(fatal_handler);
    /* No loop strength reduction in NVPTX's codegen. LSR turns each address and each index a
     * loop compares into its own 64-bit induction variable; ptxas does its own strength
     * reduction, and those extra live register pairs cost occupancy: the Rust tiled matmul
     * (usize indices, bounds-checked) went from 39 registers (6 blocks of 256 an SM) to 32
     * (8 blocks), like nvcc, whose PTX keeps 32-bit indices and recomputes addresses. On the C
     * examples no occupancy changes and SASS stays the same size or shrinks (docs/rust.md,
     * performance notes).
     * The option is LLVM's only switch for it and is process-wide, hence here, once.
     * Bitcode: the reader's debug-info upgrade verifies a whole unit and, when the unit is not
     * valid IR, ends the process with a fatal error; without it, import verifies each unit
     * itself and returns a status (docs/reliability.md). */
    const char *args[] = {"oxide", "-disable-lsr", "-disable-auto-upgrade-debug-info"};
    LLVMParseCommandLineOptions(3, args, NULL);
}

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

void oxide__llvm_init(void) { pthread_once(&llvm_once, init_llvm); }

/* ---- target machines: a context's own, drawn from a process-wide pool ---- */

/* Creating an NVPTX TargetMachine, and the pass managers for it, are fixed costs of a
 * compile, and programs make contexts freely (one per compile, one per thread). Neither is safe
 * to share between threads that emit at the same time, and a context is used by one thread at a
 * time, so each context holds the machines it took; when it is destroyed they go back to the
 * process's pool, where the next context that wants the same target takes them instead of
 * creating new ones. */
typedef struct tm_entry {
    unsigned sm;
    bool arch_specific;
    int ptx;   /* major*10+minor */
    int level; /* codegen opt level */
    LLVMTargetMachineRef tm;
    oxide_kept kept; /* the pass managers kept for the next module (lib/codegen.h) */
} tm_entry;

struct oxide_target_cache {
    tm_entry *e;
    size_t n, cap;
};

/* machines no context holds; at most POOL_MAX, so many contexts at once cannot pin memory */
enum { POOL_MAX = 16 };
static struct {
    pthread_mutex_t lock;
    tm_entry e[POOL_MAX];
    size_t n;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool same_target(const tm_entry *e, unsigned sm, bool arch_specific, int ptx, int level) {
    return e->sm == sm && e->arch_specific == arch_specific && e->ptx == ptx && e->level == level;
}

static bool pool_take(unsigned sm, bool arch_specific, int ptx, int level, tm_entry *out) {
    bool found = false;
    pthread_mutex_lock(&pool.lock);
    for (size_t i = 0; i < pool.n && !found; i++)
        if (same_target(&pool.e[i], sm, arch_specific, ptx, level)) {
            *out = pool.e[i];
            pool.e[i] = pool.e[--pool.n];
            found = true;
        }
    pthread_mutex_unlock(&pool.lock);
    return found;
}

void oxide__targets_free(oxide_target_cache *t) {
    if (!t)
        return;
    pthread_mutex_lock(&pool.lock);
    for (size_t i = 0; i < t->n; i++) {
        if (pool.n < POOL_MAX) {
            pool.e[pool.n++] = t->e[i];
        } else {
            oxide__kept_clear(&t->e[i].kept); /* their passes point into the machine */
            LLVMDisposeTargetMachine(t->e[i].tm);
        }
    }
    pthread_mutex_unlock(&pool.lock);
    free(t->e);
    free(t);
}

void oxide__kept_clear(oxide_kept *k) {
    oxide__codegen_destroy(k->cg);
    oxide__codegen_destroy(k->cg_vec);
    oxide__passes_destroy(k->ir);
    *k = (oxide_kept){NULL, NULL, NULL};
}

static oxide_target_cache *cache_of(oxide_context *ctx) {
    if (!ctx->targets)
        ctx->targets = calloc(1, sizeof *ctx->targets);
    return ctx->targets;
}

/* The lowest PTX ISA LLVM 22 accepts for each target: the lowest version gives the widest range
 * of drivers that load the PTX (the driver refuses newer PTX than it knows). All are at most
 * PTX 8.6, far below CUDA 13.0's 9.0. Everything oxide emits (cluster barriers, fence scopes,
 * redux, mapa) is available at these versions on the targets that have it. */
static int min_ptx(unsigned sm, bool arch_specific) {
    switch (sm) {
    case 80: return 70;
    case 86: return 71;
    case 89: return 78;
    case 90: return arch_specific ? 80 : 78;
    case 100: return 86;
    default: return 0;
    }
}

int oxide__intrinsic_min_ptx(const char *name, unsigned sm) {
    if (strncmp(name, "llvm.nvvm.", 10))
        return 0;
    /* mma.sync with fp8 inputs came with PTX 8.4 on every target that has it */
    if (!strncmp(name, "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.", 40) ||
        !strncmp(name, "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.", 40))
        return 84;
    /* the fp8 pair conversions: PTX 7.8 for sm_90, 8.1 for sm_89 */
    if (strstr(name, "e4m3x2") || strstr(name, "e5m2x2"))
        return sm == 89 ? 81 : 78;
    return 0;
}

oxide_status oxide__ptx_version(const oxide_options *opts, int *major, int *minor) {
    int need = min_ptx(opts->sm, opts->arch_specific);
    if (!need)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "target %s is not one oxide can compile for", opts->target);
    int v = need;
    if (opts->ptx_major || opts->ptx_minor) {
        v = opts->ptx_major * 10 + opts->ptx_minor;
        if (v < need)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "target %s needs PTX ISA %d.%d or newer; %d.%d was asked for", opts->target, need / 10,
                               need % 10, opts->ptx_major, opts->ptx_minor);
        static const int known[] = {60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76,
                                    77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok |= known[i] == v;
        if (!ok)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "LLVM 22 cannot emit PTX ISA %d.%d", opts->ptx_major,
                               opts->ptx_minor);
    }
    *major = v / 10;
    *minor = v % 10;
    return OXIDE_OK;
}

static LLVMCodeGenOptLevel codegen_level(int opt) {
    /* NVPTX's codegen at any level above None adds ~100 passes (a fixed 0.3 ms of pass-manager
     * setup) and its own IR optimisations; after the GPU pipeline they buy 2-4% on sgemm and
     * transpose and nothing elsewhere (ptxas does the heavy lifting), for twice the compile
     * time. Level 3 pays for them; level 2 is the same IR pipeline with the fast codegen.
     * Aggressive only swaps EarlyCSE for two more GVN runs, which bought nothing measurable. */
    return opt >= 3 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelNone;
}

static oxide_status create_target_machine(const oxide_options *opts, int major, int minor, int level,
                                          LLVMTargetMachineRef *out) {
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(OXIDE_NVPTX_TRIPLE, &target, &err)) {
        oxide_status st = oxide__fail(OXIDE_ERROR_CODEGEN, "LLVM has no NVPTX target: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        return st;
    }
    char cpu[16], features[16];
    snprintf(cpu, sizeof cpu, "sm_%u%s", opts->sm, opts->arch_specific ? "a" : "");
    snprintf(features, sizeof features, "+ptx%d", major * 10 + minor);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        target, OXIDE_NVPTX_TRIPLE, cpu, features, (LLVMCodeGenOptLevel)level, LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm)
        return oxide__fail(OXIDE_ERROR_CODEGEN, "LLVM could not create a target machine for %s with PTX %d.%d", cpu,
                           major, minor);
    *out = tm;
    return OXIDE_OK;
}

oxide_status oxide__target_codegen(oxide_context *ctx, const oxide_options *opts, LLVMTargetMachineRef *out,
                                   oxide_kept **kept) {
    oxide__llvm_init();
    int major, minor;
    oxide_status st = oxide__ptx_version(opts, &major, &minor);
    if (st)
        return st;
    int ptx = major * 10 + minor, level = (int)codegen_level(opts->opt_level);
    oxide_target_cache *c = cache_of(ctx);
    if (!c)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory creating the target cache");
    for (size_t i = 0; i < c->n; i++)
        if (same_target(&c->e[i], opts->sm, opts->arch_specific, ptx, level)) {
            *out = c->e[i].tm;
            *kept = &c->e[i].kept;
            return OXIDE_OK;
        }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        tm_entry *e = realloc(c->e, cap * sizeof *e);
        if (!e)
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory creating a target machine");
        c->e = e;
        c->cap = cap;
    }
    tm_entry e = {opts->sm, opts->arch_specific, ptx, level, NULL, {NULL, NULL, NULL}};
    if (!pool_take(opts->sm, opts->arch_specific, ptx, level, &e) &&
        (st = create_target_machine(opts, major, minor, level, &e.tm)))
        return st;
    c->e[c->n] = e;
    *out = e.tm;
    *kept = &c->e[c->n++].kept;
    return OXIDE_OK;
}

oxide_status oxide__target_machine(oxide_context *ctx, const oxide_options *opts, LLVMTargetMachineRef *out) {
    oxide_kept *kept;
    return oxide__target_codegen(ctx, opts, out, &kept);
}
