/* Bitcode import on hostile input: every input gets a status, none ends the process.
 *
 *   test_bitcode                        the regression inputs (each in a child first, then in
 *                                       process and isolated), the real units and every
 *                                       truncation of unit.bc in process, 3,000 mutants through
 *                                       the plain import one child each, 1,500 isolated
 *   test_bitcode --in-process N [FIRST] N mutants from number FIRST, in process
 *   test_bitcode --isolated N [FIRST]   N mutants through oxide_module_import_bitcode_isolated
 *                                       (512 MiB, 10 s each), printing the number of each whose
 *                                       child crashed or ran out of time
 *   test_bitcode --plain-forked N [FIRST]  N mutants through the plain import, each in a child
 *                                       (1 GiB, 10 s), printing each that ended its process
 *   test_bitcode --one I                mutant I alone, in process (to reproduce a report)
 *   test_bitcode --write I PATH         mutant I written to PATH
 *   test_bitcode --grep TEXT N FIRST    the mutants whose plain import is refused with TEXT
 *   test_bitcode --unit PATH MODE ...   any of the above on another unit (a release build's)
 *
 * The input is a real rustc unit (tests/unit/bitcode/unit.rs, built with line tables). Mutant I
 * is a pure function of I: bit flips, bytes and words set to boundary values, words deleted,
 * runs duplicated or copied from elsewhere in the unit (record and block boundaries move). An
 * accepted mutant is compiled too, which parses, verifies and links it. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static uint8_t *unit;
static size_t unit_len;
static oxide_context *ctx;
/* Compiling reads a unit whole. In process that is safe for the real unit and its truncations;
 * for mutants only after the isolated import read it whole in a child (docs/reliability.md). */
static bool compile_in_process;

typedef struct tally {
    long inputs, accepted, compiled, by_check, by_reader, by_verifier, other, crashed, late;
} tally;

static void count(tally *t, oxide_status st, bool compile_stage) {
    const char *msg = oxide_last_error();
    if (st == OXIDE_OK)
        compile_stage ? t->compiled++ : t->accepted++;
    else if (strstr(msg, "malformed LLVM bitcode") || strstr(msg, "no 'BC' magic"))
        t->by_check++;
    else if (strstr(msg, "could not read"))
        t->by_reader++;
    else if (strstr(msg, "invalid LLVM IR"))
        t->by_verifier++;
    else if (strstr(msg, "signal") || strstr(msg, "exit status"))
        t->crashed++;
    else if (strstr(msg, "within") || strstr(msg, "of CPU"))
        t->late++;
    else
        t->other++;
}

/* Import (isolated or not) and, when accepted, compile: the statuses go to t. */
static void run(const uint8_t *b, size_t n, bool isolated, tally *t) {
    oxide_module *m;
    if (oxide_module_create(ctx, "fuzz", &m)) {
        t->other++;
        return;
    }
    t->inputs++;
    oxide_status st = isolated ? oxide_module_import_bitcode_isolated(m, b, n, "mutant", 512u << 20, 10)
                               : oxide_module_import_bitcode(m, b, n, "mutant");
    count(t, st, false);
    /* in process, LLVM has read the header only; a unit the isolated import accepted was read
     * whole and verified in the child, so compiling it here is safe */
    if (st == OXIDE_OK && (isolated || compile_in_process)) {
        const char *ptx;
        st = oxide_module_compile(m, NULL, &ptx, NULL);
        /* the unit has no kernel: a clean run ends in NOT_FOUND */
        count(t, st == OXIDE_ERROR_NOT_FOUND ? OXIDE_OK : st, true);
    }
    oxide_module_destroy(m);
}

static uint64_t next(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Mutant i of the unit into out (room for unit_len + 64 bytes); returns its length. */
static size_t mutant(uint64_t i, uint8_t *out) {
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (i * 0xD1B54A32D192ED03ull);
    for (int k = 0; k < 4; k++)
        next(&x);
    memcpy(out, unit, unit_len);
    size_t n = unit_len, words = n / 4;
    static const uint32_t boundary[] = {0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u, 0xffffffffu};
    switch (i % 7) {
    case 0: /* one bit, past the magic */ out[4 + next(&x) % (n - 4)] ^= (uint8_t)(1u << (next(&x) % 8)); break;
    case 1: /* a few bits close together: one record */
    {
        size_t at = 4 + next(&x) % (n - 12);
        for (uint64_t k = 2 + next(&x) % 7; k; k--)
            out[at + next(&x) % 8] ^= (uint8_t)(1u << (next(&x) % 8));
        break;
    }
    case 2: /* a byte set to a boundary value */ out[4 + next(&x) % (n - 4)] = (uint8_t)boundary[next(&x) % 5]; break;
    case 3: /* a word (a block length, a record's operands) set to a boundary value */
    {
        size_t w = 1 + next(&x) % (words - 1);
        uint32_t v = boundary[next(&x) % (sizeof boundary / sizeof *boundary)];
        memcpy(out + 4 * w, &v, 4);
        break;
    }
    case 4: /* a word deleted: everything after it moves */
    {
        size_t w = 1 + next(&x) % (words - 1);
        memmove(out + 4 * w, out + 4 * w + 4, n - 4 * w - 4);
        n -= 4;
        break;
    }
    case 5: /* a run of words duplicated in place */
    {
        size_t w = 1 + next(&x) % (words - 1), len = 4 * (1 + next(&x) % 16);
        if (4 * w + len > n)
            len = n - 4 * w;
        memmove(out + 4 * w + len, out + 4 * w, n - 4 * w);
        n += len;
        break;
    }
    default: /* a run copied over from elsewhere in the unit */
    {
        size_t len = 1 + next(&x) % 32, from = next(&x) % (n - len), to = 4 + next(&x) % (n - len - 4);
        memmove(out + to, unit + from, len);
        break;
    }
    }
    return n;
}

static void print_tally(const char *what, const tally *t, double seconds) {
    printf("%s: %ld inputs in %.1f s: accepted %ld (compiled through link %ld), refused by the structural "
           "check %ld, by LLVM's reader %ld, by the verifier %ld, other statuses %ld, child crashes %ld, "
           "child time-outs %ld\n",
           what, t->inputs, seconds, t->accepted, t->compiled, t->by_check, t->by_reader, t->by_verifier, t->other,
           t->crashed, t->late);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static tally mutants(uint64_t first, uint64_t count_, bool isolated) {
    tally t = {0};
    uint8_t *buf = malloc(unit_len + 64);
    double t0 = now();
    for (uint64_t i = first; buf && i < first + count_; i++) {
        long crashed = t.crashed, late = t.late;
        run(buf, mutant(i, buf), isolated, &t);
        if (t.crashed != crashed || t.late != late)
            printf("mutant %llu: %s\n", (unsigned long long)i, oxide_last_error());
    }
    print_tally(isolated ? "isolated mutants" : "in-process mutants", &t, now() - t0);
    free(buf);
    return t;
}

/* What the plain import answered, as the child's exit status tells it. */
enum { PLAIN_ACCEPTED = 0, PLAIN_BY_CHECK = 100, PLAIN_BY_READER = 101, PLAIN_OTHER = 102, PLAIN_NO_MESSAGE = 4 };

/* The address space the child starts with (a copy of this process's: under ASan, its shadow's
 * terabytes) plus the 1 GiB an import may take. */
static rlim_t child_address_space(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)1 << 30);
}

/* The plain import of one input in a child under 1 GiB more and 10 s of CPU: 0 when it returned
 * a status (what it was in *answer), else the signal (or 256 + exit status) that ended it. */
static int plain_import_forked(const uint8_t *b, size_t n, int *answer) {
    fflush(stdout);
    rlim_t limit = child_address_space();
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit as = {limit, limit}, cpu = {10, 11}, core = {0, 0};
        setrlimit(RLIMIT_AS, &as);
        setrlimit(RLIMIT_CPU, &cpu);
        setrlimit(RLIMIT_CORE, &core);
        oxide_module *m;
        if (oxide_module_create(ctx, "fuzz", &m))
            _exit(3);
        oxide_status st = oxide_module_import_bitcode(m, b, n, "mutant");
        const char *msg = oxide_last_error();
        if (st == OXIDE_OK)
            _exit(PLAIN_ACCEPTED);
        if (!msg[0])
            _exit(PLAIN_NO_MESSAGE);
        _exit(strstr(msg, "malformed LLVM bitcode") || strstr(msg, "no 'BC' magic") ? PLAIN_BY_CHECK
              : strstr(msg, "could not read")                                       ? PLAIN_BY_READER
                                                                                    : PLAIN_OTHER);
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) < 0)
        return 255;
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (code == PLAIN_ACCEPTED || code == PLAIN_BY_CHECK || code == PLAIN_BY_READER || code == PLAIN_OTHER) {
        *answer = code;
        return 0;
    }
    return WIFSIGNALED(ws) ? WTERMSIG(ws) : 256 + code;
}

/* N mutants through the plain import, each in a child: the number of those that ended it. */
static long mutants_forked(uint64_t first, uint64_t n) {
    uint8_t *buf = malloc(unit_len + 64);
    long ended = 0, accepted = 0, by_check = 0, by_reader = 0, other = 0;
    double t0 = now();
    for (uint64_t i = first; buf && i < first + n; i++) {
        int answer = -1, why = plain_import_forked(buf, mutant(i, buf), &answer);
        if (why) {
            ended++;
            printf("mutant %llu: the plain import ended its process (%s %d)\n", (unsigned long long)i,
                   why > 255 ? "exit status" : "signal", why > 255 ? why - 256 : why);
        }
        accepted += answer == PLAIN_ACCEPTED, by_check += answer == PLAIN_BY_CHECK;
        by_reader += answer == PLAIN_BY_READER, other += answer == PLAIN_OTHER;
    }
    printf("plain import, one child each: %llu mutants (%llu-%llu) in %.1f s: accepted %ld, refused by the structural "
           "check %ld, by LLVM's reader %ld, other statuses %ld; %ld ended their process\n",
           (unsigned long long)n, (unsigned long long)first, (unsigned long long)(first + n - 1), now() - t0, accepted,
           by_check, by_reader, other, ended);
    free(buf);
    return ended;
}

/* The mutants FIRST.. FIRST + N - 1 whose plain import is refused with a message holding text
 * (to find an input for a refusal); in process. */
static void grep_refusals(const char *text, uint64_t first, uint64_t n) {
    uint8_t *buf = malloc(unit_len + 64);
    for (uint64_t i = first; buf && i < first + n; i++) {
        oxide_module *m;
        if (oxide_module_create(ctx, "grep", &m))
            break;
        if (oxide_module_import_bitcode(m, buf, mutant(i, buf), "mutant") && strstr(oxide_last_error(), text))
            printf("mutant %llu: %s\n", (unsigned long long)i, oxide_last_error());
        oxide_module_destroy(m);
    }
    free(buf);
}

/* Mutant I written to a file, to keep as a regression input. */
static int write_mutant(uint64_t i, const char *path) {
    uint8_t *buf = malloc(unit_len + 64);
    FILE *f = buf ? fopen(path, "wb") : NULL;
    size_t n = f ? mutant(i, buf) : 0;
    int bad = !f || fwrite(buf, 1, n, f) != n;
    if (f)
        bad |= fclose(f) != 0;
    free(buf);
    return bad;
}

/* The 16 bytes that made LLVM print "error:" and exit(1) through a context without a handler. */
static void test_regression(void) {
    static const uint8_t b[] = {0x42, 0x43, 0xc0, 0xde, 0x35, 0x14, 0x00, 0x00,
                                0x05, 0x00, 0x00, 0x00, 0x62, 0x0c, 0x30, 0x24};
    oxide_module *m;
    if (oxide_module_create(ctx, "regression", &m))
        return;
    oxide_status st = oxide_module_import_bitcode(m, b, sizeof b, "short.bc");
    CHECK(st == OXIDE_ERROR_PARSE && strstr(oxide_last_error(), "short.bc: malformed LLVM bitcode"), "16 bytes: %s",
          oxide_status_name(st));
    st = oxide_module_import_bitcode_isolated(m, b, sizeof b, "short.bc", 0, 0);
    CHECK(st == OXIDE_ERROR_PARSE, "16 bytes, isolated: %s", oxide_status_name(st));
    static const char junk[] = "BC\xc0\xde but then text";
    st = oxide_module_import_bitcode(m, junk, sizeof junk - 1, "junk.bc");
    CHECK(st == OXIDE_ERROR_PARSE, "magic then text: %s", oxide_status_name(st));
    oxide_module_destroy(m);
}

/* An input that once ended the plain import's process: first in a child (a regression fails the
 * check instead of ending the test), then in process and isolated, each a PARSE status whose
 * message names the input and says why_refused. */
static void refused_with_message(const uint8_t *b, size_t n, const char *what, const char *why_refused) {
    int answer = -1, why = plain_import_forked(b, n, &answer);
    CHECK(why == 0 && answer == PLAIN_BY_CHECK, "%s: the plain import ended its process (%d) or was not refused", what,
          why);
    if (why)
        return; /* in process it would end this test */
    oxide_module *m;
    if (oxide_module_create(ctx, "mdref", &m))
        return;
    oxide_status st = oxide_module_import_bitcode(m, b, n, what);
    CHECK(st == OXIDE_ERROR_PARSE && strstr(oxide_last_error(), why_refused) && strstr(oxide_last_error(), what),
          "%s: %s: %s", what, oxide_status_name(st), oxide_last_error());
    st = oxide_module_import_bitcode_isolated(m, b, n, what, 512u << 20, 10);
    CHECK(st == OXIDE_ERROR_PARSE && strstr(oxide_last_error(), why_refused), "%s, isolated: %s: %s", what,
          oxide_status_name(st), oxide_last_error());
    oxide_module_destroy(m);
}

/* A valid unit the checks must let through (their positive control). */
static void accepted_file(const char *file) {
    char path[4096];
    size_t n;
    snprintf(path, sizeof path, "%s/unit/bitcode/%s", OXIDE_TEST_DATA, file);
    uint8_t *b = (uint8_t *)check_read_file(path, &n);
    oxide_module *m;
    if (b && !oxide_module_create(ctx, "accepted", &m)) {
        OK(oxide_module_import_bitcode(m, b, n, file));
        oxide_module_destroy(m);
    }
    CHECK(b != NULL, "read %s", path);
    free(b);
}

typedef struct mutant_case {
    uint64_t i;
    const char *why; /* what its refusal must say */
} mutant_case;

static void refused_mutants(const mutant_case *cases, size_t n) {
    uint8_t *buf = malloc(unit_len + 64);
    for (size_t k = 0; buf && k < n; k++) {
        char what[64];
        snprintf(what, sizeof what, "mutant %llu", (unsigned long long)cases[k].i);
        refused_with_message(buf, mutant(cases[k].i, buf), what, cases[k].why);
    }
    free(buf);
}

static void refused_file(const char *file, const char *why_refused) {
    char path[4096];
    size_t n;
    snprintf(path, sizeof path, "%s/unit/bitcode/%s", OXIDE_TEST_DATA, file);
    uint8_t *b = (uint8_t *)check_read_file(path, &n);
    CHECK(b != NULL, "read %s", path);
    if (b)
        refused_with_message(b, n, file, why_refused);
    free(b);
}

/* A number that no metadata record defines: LLVM's plain read resolves it through a lazy-loading
 * index it does not have and crashes (MetadataLoader::lazyLoadOneMetadata). release_mdref.bc is
 * a release build's unit (examples/rust cluster) with one metadata node's operands overwritten;
 * the mutants of unit.bc are the debug-info kind (scopes, types, namespaces). */
static void test_metadata_refs(void) {
    refused_file("release_mdref.bc", "names metadata");
    static const uint64_t crashed[] = {1100, 1331, 3153, 3720, 4012, 4545, 4977, 5734, 6932, 9298, 10648};
    uint8_t *buf = malloc(unit_len + 64);
    for (size_t i = 0; buf && i < sizeof crashed / sizeof *crashed; i++) {
        char what[64];
        snprintf(what, sizeof what, "mutant %llu", (unsigned long long)crashed[i]);
        refused_with_message(buf, mutant(crashed[i], buf), what, "names metadata");
    }
    free(buf);
}

/* An aggregate constant that is its own operand: LLVM's reader built it with a worklist that
 * grew until memory ran out (LLVM ERROR: out of memory under a limit, unbounded without).
 * release_cstcycle.bc is a release build's unit (examples/rust seed) with one operand changed. */
static void test_constant_cycle(void) { refused_file("release_cstcycle.bc", "is its own operand"); }

/* A function's debug locations and metadata attachments name metadata by number too: one never
 * defined crashed LLVM's full read (what compile does) in the same lazy-loading path, and an
 * instruction attachment's instruction number indexes the function's instructions unchecked.
 * These mutants crashed the isolated import's child; the plain import now refuses them. */
static void test_function_metadata(void) {
    static const mutant_case cases[] = {{553, "a debug location names metadata 621"},
                                        {784, "a debug location names metadata 399"},
                                        {875, "a debug location names metadata 207"},
                                        {733, "a metadata attachment names metadata 2769"},
                                        {7331, "a metadata attachment for instruction 1023 of a function of 64"}};
    refused_mutants(cases, sizeof cases / sizeof *cases);
}

/* Locations and lexical blocks: the reader and the verifier cast a location's scope to a local
 * scope and its inlined-at to a location, and walk both chains to the subprogram. These mutants
 * crashed the isolated import's child in the verifier (DILocalScope::getSubprogram) or, 5561, in
 * the reader (an instruction's location without a scope), and 7938, a location that is its own
 * inlined-at, kept it busy past the CPU limit. */
static void test_scopes(void) {
    static const mutant_case cases[] = {
        {7938, "metadata 106: a chain of 1 locations and lexical blocks that comes back to itself"},
        {26803, "a debug location inlined at metadata 107, not a location"},
        {42227, "metadata 143 (a lexical block) whose scope is not a subprogram or lexical block"},
        {46095, "metadata 144 (a location) inlined at metadata 3, not a location"},
        {97266, "metadata 110 (a location) whose scope is not a subprogram or lexical block"},
        {5561, "a debug location with no scope"},
        {9, "a debug location whose scope (metadata 59) is not a subprogram or lexical block"}};
    refused_mutants(cases, sizeof cases / sizeof *cases);
}

/* !alias.scope and !noalias lists: the verifier walks the list, each scope and its domain without
 * testing operands for null (visitAliasScopeListMetadata crashed the isolated import's child on
 * mutants 4284, 19125 and 34686). */
static void test_alias_scopes(void) {
    static const mutant_case cases[] = {
        {4284, "an alias-scope list (metadata 113) holding a null"},
        {19125, "an alias-scope attachment names metadata 97, not a tuple"},
        {34686, "an alias-scope list (metadata 120) holding a node that is not a tuple"},
        {43612, "an alias scope (metadata 108) whose domain is not a tuple"}};
    refused_mutants(cases, sizeof cases / sizeof *cases);
    /* written by llvm-as from alias_scope_*.ll */
    refused_file("alias_scope_null.bc", "an alias scope (metadata 2) or its domain with a null operand");
    accepted_file("alias_scope_ok.bc");
}

/* A module flag whose name is not a string (Module::getModuleFlag casts it unchecked) and a TBAA
 * tag with a null first operand (UpgradeTBAANode reads its kind unchecked): each crashed the
 * isolated import's child. */
static void test_flags_and_tbaa(void) {
    static const mutant_case cases[] = {
        {78905, "a module flag (metadata 73) that is not [behavior, name, value] with a string name"},
        {73040, "a TBAA attachment (metadata 80) that is not a tuple with a first operand"}};
    refused_mutants(cases, sizeof cases / sizeof *cases);
}

/* A compile unit whose imports name a string: the reader's own upgrade of the imports
 * (upgradeCULocals) casts them to a tuple of imported entities unchecked and crashed. */
static void test_compile_unit_imports(void) {
    uint8_t *buf = malloc(unit_len + 64);
    if (buf)
        refused_with_message(buf, mutant(42498, buf), "mutant 42498", "imports (metadata 1) are not a tuple");
    free(buf);
    /* written by llvm-as from cu_imports*.ll */
    refused_file("cu_imports.bc", "hold metadata 7, not an imported entity");
    refused_file("cu_imports_null.bc", "hold a null");
    accepted_file("cu_imports_ok.bc");
}

static void test_real_unit(void) {
    tally t = {0};
    compile_in_process = true;
    run(unit, unit_len, false, &t);
    compile_in_process = false;
    CHECK(t.accepted == 1 && t.compiled == 1, "the real unit imports and compiles to NOT_FOUND");
    tally ti = {0};
    run(unit, unit_len, true, &ti);
    CHECK(ti.accepted == 1 && ti.compiled == 1, "the real unit imports isolated");
}

/* A release build's unit (examples/rust cluster, no debug info) imports and compiles. */
static void test_release_unit(void) {
    char path[4096];
    size_t n;
    snprintf(path, sizeof path, "%s/unit/bitcode/release_unit.bc", OXIDE_TEST_DATA);
    uint8_t *b = (uint8_t *)check_read_file(path, &n);
    CHECK(b != NULL, "read %s", path);
    tally t = {0};
    compile_in_process = true;
    if (b)
        run(b, n, false, &t);
    compile_in_process = false;
    CHECK(t.accepted == 1 && t.compiled == 1, "the release unit imports and compiles");
    free(b);
}

static void test_truncations(void) {
    tally t = {0};
    compile_in_process = true;
    double t0 = now();
    for (size_t n = 1; n < unit_len; n++)
        run(unit, n, false, &t);
    compile_in_process = false;
    print_tally("every truncation", &t, now() - t0);
    CHECK(t.inputs == (long)unit_len - 1 && t.accepted + t.by_check + t.by_reader == t.inputs,
          "each truncation gets a status");
    CHECK(t.by_check > t.inputs * 9 / 10, "the structural check refuses most truncations (%ld)", t.by_check);
}

int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/unit/bitcode/unit.bc", OXIDE_TEST_DATA);
    const char *unit_path = path;
    if (argc >= 3 && !strcmp(argv[1], "--unit")) { /* mutate another unit (a release build's) */
        unit_path = argv[2];
        argc -= 2;
        argv += 2;
    }
    unit = (uint8_t *)check_read_file(unit_path, &unit_len);
    if (!unit || unit_len < 64 || oxide_context_create(&ctx)) {
        printf("cannot read %s\n", unit_path);
        return 1;
    }
    if (argc >= 3 && (!strcmp(argv[1], "--in-process") || !strcmp(argv[1], "--isolated"))) {
        bool isolated = !strcmp(argv[1], "--isolated");
        uint64_t n = strtoull(argv[2], NULL, 0);
        tally t = mutants(argc > 3 ? strtoull(argv[3], NULL, 0) : 0, n, isolated);
        CHECK(t.inputs == (long)n && t.other == 0, "every mutant got a status");
    } else if (argc >= 3 && !strcmp(argv[1], "--plain-forked")) {
        long ended = mutants_forked(argc > 3 ? strtoull(argv[3], NULL, 0) : 0, strtoull(argv[2], NULL, 0));
        CHECK(ended == 0, "no mutant ended the plain import's process");
    } else if (argc == 5 && !strcmp(argv[1], "--grep")) {
        grep_refusals(argv[2], strtoull(argv[4], NULL, 0), strtoull(argv[3], NULL, 0));
    } else if (argc == 4 && !strcmp(argv[1], "--write")) {
        CHECK(!write_mutant(strtoull(argv[2], NULL, 0), argv[3]), "mutant written to %s", argv[3]);
    } else if (argc == 3 && !strcmp(argv[1], "--one")) {
        uint8_t *buf = malloc(unit_len + 64);
        tally t = {0};
        run(buf, mutant(strtoull(argv[2], NULL, 0), buf), false, &t);
        print_tally("one mutant", &t, 0);
        free(buf);
    } else {
        test_regression();
        test_metadata_refs();
        test_constant_cycle();
        test_compile_unit_imports();
        test_function_metadata();
        test_scopes();
        test_alias_scopes();
        test_flags_and_tbaa();
        test_real_unit();
        test_truncations();
        test_release_unit();
        CHECK(mutants_forked(0, 3000) == 0, "no mutant ended the plain import's process");
        tally t = mutants(0, 1500, true);
        CHECK(t.inputs == 1500 && t.other == 0, "every isolated mutant got a status");
        CHECK(t.by_check > 500 && t.accepted > 150, "mutants both refused and accepted (%ld, %ld)", t.by_check,
              t.accepted);
    }
    oxide_context_destroy(ctx);
    free(unit);
    return check_report("test_bitcode");
}
