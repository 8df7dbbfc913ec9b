/* The autotuner (lib/autotune.c, docs/tile.md "Autotuning"): the choice of the least median time
 * (times injected by the timing hook, so the choice is known in advance), configurations that
 * cannot compile or launch skipped with their reasons, the winner remembered in the process and
 * in the cache directory (reused by a new tuner and by another process; corrupt entries tuned
 * again and replaced; concurrent writers and readers never see a partial entry), the outputs put
 * back after tuning, reset_to_zero, and every refusal.
 *
 * The kernel is y += x, so what the caller finds in y tells how many launches it saw. Here it
 * runs on the fake driver (tests/gpu/mock: launches of tile kernels do nothing, so y must come
 * back exactly as it was); on a GPU (ctest label gpu) the winner's one launch must give ys0 + x
 * exactly. Without a driver it prints SKIPPED and exits 77. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "oxide.h"

#define N 3000
#define REPS 10

static oxide_context *ctx;
static oxide_device *dev;
static char dir[256];
static int on_mock;
static float xs0[N], ys0[N];
static oxide_buffer *xb, *yb;
static oxide_tensor tx, ty;
static oxide_arg args[2];
static int y_bad; /* the first element y_is found wrong */

/* y += x over BLOCK elements per program; extra adds a scalar parameter (another signature). */
static oxide_module *acc_module(unsigned block, int extra) {
    char text[2048];
    snprintf(text, sizeof text,
             "module @acc\n\n"
             "tile_kernel @acc(%%x: tensor<1 x f32>, %%y: tensor<mut 1 x f32>%s) {\n"
             "^0:\n"
             "  %%p = tile.program_id {imm=0} : i32\n"
             "  %%c = const {value=%u} : i32\n"
             "  %%o = mul %%p, %%c : i32\n"
             "  %%a = tile.load %%x, %%o {pad=0} : tile<%u x f32>\n"
             "  %%b = tile.load %%y, %%o {pad=0} : tile<%u x f32>\n"
             "  %%s = add %%a, %%b : tile<%u x f32>\n"
             "  tile.store %%y, %%o, %%s\n"
             "  ret\n"
             "}\n",
             extra ? ", %n: i32" : "", block, block, block, block);
    oxide_module *m = NULL;
    MUST(oxide_module_parse(ctx, text, strlen(text), &m));
    return m;
}

/* ---- the timing hook: the times each configuration gets ---- */

typedef struct hook_state {
    int calls;
    int prefer;       /* which of configurations 0..2 is fastest */
    int refuse;       /* every time negative */
    int dirty_output; /* write garbage into y, as a tuning launch writing partial results would */
} hook_state;

static double hook(void *user, size_t config, uint32_t rep, double measured) {
    hook_state *h = user;
    (void)measured;
    h->calls++;
    if (h->refuse)
        return -1;
    if (h->dirty_output && rep == 0) {
        float junk[N];
        for (int i = 0; i < N; i++)
            junk[i] = -1000.0f - (float)i - (float)config;
        oxide_memcpy_htod(dev, oxide_buffer_ptr(yb), junk, sizeof junk);
    }
    /* configuration 1 has the least minimum (0.1) but a median of 9: the median must decide */
    if ((int)config == h->prefer)
        return 2.0;
    if (config == 1)
        return rep < 3 ? 0.1 : 9.0;
    return 5.0 + (double)rep * 0.01;
}

/* ---- the configurations ---- */

static const oxide_tile_hint WARPS[] = {OXIDE_TILE_HINT_WARPS, OXIDE_TILE_HINT_STAGES};

/* The standard set: 0 b256w4, 1 b256w8, 2 b1024w2, 3 bad-warps (warps=3), 4 huge (65536 elements
 * in one tile with one warp: too many registers), 5 wrong-sig (another parameter list: the launch refuses). */
static void add_standard(oxide_autotuner *t) {
    oxide_module *m256 = acc_module(256, 0), *m1024 = acc_module(1024, 0), *huge = acc_module(65536, 0);
    oxide_module *sig = acc_module(256, 1);
    size_t idx = 99;
    OK(oxide_autotune_add_config(t, m256, "acc", WARPS, (uint32_t[]){4, 3}, 2, "b256w4", &idx));
    CHECK(idx == 0);
    OK(oxide_autotune_add_config(t, m256, "acc", WARPS, (uint32_t[]){8, 2}, 2, "b256w8", &idx));
    OK(oxide_autotune_add_config(t, m1024, "acc", WARPS, (uint32_t[]){2}, 1, "b1024w2", &idx));
    OK(oxide_autotune_add_config(t, m256, "acc", WARPS, (uint32_t[]){3}, 1, "bad-warps", &idx));
    OK(oxide_autotune_add_config(t, huge, "acc", WARPS, (uint32_t[]){1}, 1, "huge", &idx));
    OK(oxide_autotune_add_config(t, sig, "acc", NULL, NULL, 0, "wrong-sig", &idx));
    CHECK(idx == 5);
    /* the tuner keeps copies: the caller's modules may go */
    oxide_module_destroy(m256);
    oxide_module_destroy(m1024);
    oxide_module_destroy(huge);
    oxide_module_destroy(sig);
    CHECK(oxide_autotune_config_count(t) == 6);
}

static uint32_t grids[6][3] = {
    {(N + 255) / 256, 1, 1}, {(N + 255) / 256, 1, 1}, {(N + 1023) / 1024, 1, 1}, {(N + 255) / 256, 1, 1}, {1, 1, 1},
    {(N + 255) / 256, 1, 1}};

static oxide_autotuner *tuner(hook_state *h, uint32_t flags, uint64_t zero) {
    oxide_autotune_options o = {sizeof o, dir, NULL, 1, REPS, flags, 0, zero, hook, h};
    oxide_autotuner *t = NULL;
    MUST(oxide_autotune_create(&o, &t));
    add_standard(t);
    return t;
}

static oxide_autotune_info last(oxide_autotuner *t) {
    oxide_autotune_info i = {sizeof i, 0, 0, 0, 0, 0, 0};
    OK(oxide_autotune_last(t, &i));
    return i;
}

static void reset_y(void) { MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(yb), ys0, sizeof ys0)); }

/* y must hold what `launches` launches of y += x leave (on the fake driver: ys0 itself). */
static int y_is(int launches) {
    float y[N];
    MUST(oxide_memcpy_dtoh(dev, y, oxide_buffer_ptr(yb), sizeof y));
    for (int i = 0; i < N; i++) {
        float want = on_mock || !launches ? ys0[i] : ys0[i] + xs0[i];
        if (y[i] != want) {
            y_bad = i;
            return 0;
        }
    }
    return 1;
}

static oxide_status launch(oxide_autotuner *t, const char *cls) {
    return oxide_autotune_launch(t, NULL, &grids[0][0], 6, args, 2, cls);
}

/* ---- the tests ---- */

static void test_refusals(void) {
    oxide_autotuner *t = NULL;
    oxide_autotune_options o = {sizeof o, dir, NULL, 0, 0, 0, 0, 0, NULL, NULL};
    FAILS_WITH(oxide_autotune_create(&o, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "out is NULL");
    o.struct_size = 8;
    FAILS_WITH(oxide_autotune_create(&o, &t), OXIDE_ERROR_INVALID_ARGUMENT, "struct_size is 8");
    o.struct_size = sizeof o;
    o.flags = 64;
    FAILS_WITH(oxide_autotune_create(&o, &t), OXIDE_ERROR_INVALID_ARGUMENT, "flags 0x40");
    o.flags = 0;
    o.reps = 1001;
    FAILS_WITH(oxide_autotune_create(&o, &t), OXIDE_ERROR_INVALID_ARGUMENT, "options.reps is 1001", "to 1000");
    o.reps = 0;
    o.warmup = 5000;
    FAILS_WITH(oxide_autotune_create(&o, &t), OXIDE_ERROR_INVALID_ARGUMENT, "options.warmup is 5000");
    o.warmup = 0;
    o.reserved = 1;
    FAILS_WITH(oxide_autotune_create(&o, &t), OXIDE_ERROR_INVALID_ARGUMENT, "reserved is 1");
    CHECK(t == NULL);
    MUST(oxide_autotune_create(NULL, &t));
    oxide_autotune_info info = {sizeof info, 0, 0, 0, 0, 0, 0};
    FAILS_WITH(oxide_autotune_last(t, &info), OXIDE_ERROR_STATE, "nothing was launched");
    info.struct_size = 4;
    FAILS_WITH(oxide_autotune_last(t, &info), OXIDE_ERROR_INVALID_ARGUMENT, "struct_size is 4");
    FAILS_WITH(launch(t, NULL), OXIDE_ERROR_STATE, "no configurations");
    oxide_module *m = acc_module(256, 0);
    FAILS_WITH(oxide_autotune_add_config(t, m, "nope", NULL, NULL, 0, NULL, NULL), OXIDE_ERROR_NOT_FOUND,
               "no kernel 'nope'");
    FAILS_WITH(oxide_autotune_add_config(t, NULL, "acc", NULL, NULL, 0, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "mod is NULL");
    FAILS_WITH(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 1, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "hints is NULL");
    const char *simt = "module @s\n\nkernel @k() {\n^0:\n  ret\n}\n";
    oxide_module *s = NULL;
    MUST(oxide_module_parse(ctx, simt, strlen(simt), &s));
    FAILS_WITH(oxide_autotune_add_config(t, s, "k", NULL, NULL, 0, NULL, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "'k' is not a tile kernel");
    OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, NULL, NULL));
    OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, NULL, NULL));
    FAILS_WITH(oxide_autotune_launch(t, NULL, &grids[0][0], 3, args, 2, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "ngrids is 3", "each of the 2");
    FAILS_WITH(oxide_autotune_launch(t, NULL, NULL, 1, args, 2, NULL), OXIDE_ERROR_INVALID_ARGUMENT, "grids is NULL");
    FAILS_WITH(oxide_autotune_launch(NULL, NULL, &grids[0][0], 1, args, 2, NULL), OXIDE_ERROR_INVALID_ARGUMENT,
               "tuner is NULL");
    oxide_module_destroy(s);
    oxide_module_destroy(m);
    oxide_autotune_destroy(t);
    oxide_autotune_destroy(NULL);
}

static void test_choice_and_restore(void) {
    hook_state h = {0, 2, 0, 1};
    oxide_autotuner *t = tuner(&h, 0, 0);
    reset_y();
    OK(launch(t, NULL));
    oxide_autotune_info i = last(t);
    CHECK(i.winner == 2 && i.source == OXIDE_AUTOTUNE_TUNED && i.timed == 3, "winner %zu source %u timed %u", i.winner,
          i.source, i.timed);
    CHECK(h.calls == 3 * REPS, "the hook ran %d times", h.calls);
    CHECK(i.winner_ms == 2.0);
    CHECK(y_is(1), "the tuning launches' writes must not be left in y (y[%d])", y_bad);
    printf("report:\n%s", i.report);
    CHECK(strstr(i.report, "b1024w2: 2.0000 ms (median of 10) <- winner") != NULL);
    CHECK(strstr(i.report, "b256w8: 9.0000 ms") != NULL, "configuration 1's median, not its minimum");
    CHECK(strstr(i.report, "bad-warps: skipped: ") && strstr(i.report, "warps=3"));
    CHECK(strstr(i.report, "huge: skipped: compile for ") && strstr(i.report, "registers per thread"));
    CHECK(strstr(i.report, "wrong-sig: skipped: launch: ") != NULL);
    CHECK(strstr(i.key, "oxide-autotune-key 1\n") && strstr(i.key, " 3000\n"), "%s", i.key);

    /* the same key again: known in the process, nothing timed */
    h.calls = 0;
    reset_y();
    OK(launch(t, NULL));
    i = last(t);
    CHECK(i.winner == 2 && i.source == OXIDE_AUTOTUNE_FROM_MEMORY && h.calls == 0);
    CHECK(y_is(1));
    /* another shape class, and a caller's class: tuned again, each */
    OK(launch(t, "M=4096"));
    CHECK(last(t).source == OXIDE_AUTOTUNE_TUNED && h.calls == 3 * REPS);
    h.prefer = 0;
    OK(launch(t, "M=8192"));
    i = last(t);
    CHECK(i.source == OXIDE_AUTOTUNE_TUNED && i.winner == 0);
    OK(launch(t, "M=4096"));
    CHECK(last(t).source == OXIDE_AUTOTUNE_FROM_MEMORY && last(t).winner == 2);
    /* an older caller's info struct: only the fields it has are written */
    struct {
        oxide_autotune_info info;
        unsigned char guard[8];
    } old;
    memset(&old, 0xab, sizeof old);
    old.info.struct_size = offsetof(oxide_autotune_info, key);
    OK(oxide_autotune_last(t, &old.info));
    CHECK(old.info.winner == 2 && ((unsigned char *)&old.info)[offsetof(oxide_autotune_info, key)] == 0xab);
    oxide_autotune_destroy(t);
}

static void test_pow2_classes(void) {
    hook_state h = {0, 1, 0, 0};
    oxide_autotuner *t = NULL;
    oxide_autotune_options o = {sizeof o, "", NULL, 1, REPS, OXIDE_AUTOTUNE_SHAPES_POW2, 0, 0, hook, &h};
    MUST(oxide_autotune_create(&o, &t));
    add_standard(t);
    tx.shape[0] = ty.shape[0] = 2500;
    OK(launch(t, NULL));
    CHECK(last(t).source == OXIDE_AUTOTUNE_TUNED && strstr(last(t).key, " 4096\n"));
    tx.shape[0] = ty.shape[0] = 3000; /* the same power of two */
    OK(launch(t, NULL));
    CHECK(last(t).source == OXIDE_AUTOTUNE_FROM_MEMORY);
    tx.shape[0] = ty.shape[0] = 1500;
    OK(launch(t, NULL));
    CHECK(last(t).source == OXIDE_AUTOTUNE_TUNED && strstr(last(t).key, " 2048\n"));
    tx.shape[0] = ty.shape[0] = N;
    oxide_autotune_destroy(t);
}

/* ---- other processes: this program again (a forked child may not use the CUDA driver its parent
 * initialised), in a role ---- */

static pid_t spawn_child(const char *role, int k) {
    char kbuf[16];
    snprintf(kbuf, sizeof kbuf, "%d", k);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_autotune", "--child", role, kbuf, dir, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_child(pid_t pid) {
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_child(const char *role, int k) { return wait_child(spawn_child(role, k)); }

/* "disk": a new tuner finds the winner in the directory. "rw": writers (odd k) replace the entry
 * again and again (RETUNE), readers (even k) must find a whole one each time. */
static int child(const char *role, int k) {
    if (!strcmp(role, "disk")) {
        hook_state h = {0, 0, 0, 0};
        oxide_autotuner *t = tuner(&h, 0, 0);
        int ok = launch(t, NULL) == OXIDE_OK && last(t).source == OXIDE_AUTOTUNE_FROM_DISK && h.calls == 0;
        oxide_autotune_destroy(t);
        return ok ? 0 : 1;
    }
    int bad = 0;
    for (int r = 0; r < 15; r++) {
        hook_state h = {0, (k + r) % 3, 0, 0};
        oxide_autotuner *t = tuner(&h, k % 2 ? OXIDE_AUTOTUNE_RETUNE : 0, 0);
        if (launch(t, "concurrent") != OXIDE_OK)
            bad++;
        else if (k % 2 == 0 && (last(t).source != OXIDE_AUTOTUNE_FROM_DISK || last(t).winner > 2))
            bad++;
        oxide_autotune_destroy(t);
    }
    return bad ? 1 : 0;
}

/* A new tuner of the same set finds the winner in the directory: no timing. */
static void test_disk_reuse(void) {
    hook_state h = {0, 0, 0, 0};
    oxide_autotuner *t = tuner(&h, 0, 0);
    reset_y();
    OK(launch(t, NULL));
    oxide_autotune_info i = last(t);
    CHECK(i.source == OXIDE_AUTOTUNE_FROM_DISK && i.winner == 2 && h.calls == 0, "source %u winner %zu calls %d",
          i.source, i.winner, h.calls);
    CHECK(y_is(1));
    oxide_autotune_destroy(t);
    /* in another process */
    CHECK(run_child("disk", 0) == 0, "the child process did not find the winner on disk");
    /* labels that look like the entry's own lines are read back as they are */
    for (int round = 0; round < 2; round++) {
        oxide_autotune_options o = {sizeof o, dir, NULL, 1, REPS, 0, 0, 0, hook, &h};
        MUST(oxide_autotune_create(&o, &t));
        oxide_module *m = acc_module(256, 0);
        OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, " sha256 label\nwinner 0", NULL));
        OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, "sha256 ", NULL));
        oxide_module_destroy(m);
        h.prefer = 1;
        OK(oxide_autotune_launch(t, NULL, &grids[0][0], 1, args, 2, "odd labels"));
        CHECK(last(t).winner == 1 && last(t).source == (round ? OXIDE_AUTOTUNE_FROM_DISK : OXIDE_AUTOTUNE_TUNED),
              "round %d: source %u", round, last(t).source);
        oxide_autotune_destroy(t);
    }
    h.prefer = 0;
    /* a changed set (one more configuration) never reads the old set's winner */
    t = tuner(&h, 0, 0);
    oxide_module *m = acc_module(512, 0);
    OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, "b512", NULL));
    oxide_module_destroy(m);
    uint32_t g7[7][3];
    memcpy(g7, grids, sizeof grids);
    memcpy(g7[6], (uint32_t[]){(N + 511) / 512, 1, 1}, sizeof g7[6]);
    OK(oxide_autotune_launch(t, NULL, &g7[0][0], 7, args, 2, NULL));
    CHECK(last(t).source == OXIDE_AUTOTUNE_TUNED);
    oxide_autotune_destroy(t);
}

/* Every winner entry in the directory, rewritten by how. */
static int corrupt_entries(int how) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "autotune-", 9))
            continue;
        char path[600], data[65536];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        size_t len = f ? fread(data, 1, sizeof data, f) : 0;
        if (f)
            fclose(f);
        if (how == 3) {
            unlink(path);
            mkdir(path, 0700); /* a directory where the entry was */
            n++;
            continue;
        }
        if (how == 0)
            len /= 2; /* truncated */
        else if (how == 1)
            data[strstr(data, "winner ") - data + 7] ^= 1; /* another winner, the checksum no longer matches */
        else
            len = (size_t)snprintf(data, sizeof data, "not an entry\n");
        f = fopen(path, "wb");
        fwrite(data, 1, len, f);
        fclose(f);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void test_corruption(void) {
    for (int how = 0; how < 4; how++) {
        CHECK(corrupt_entries(how) > 0);
        hook_state h = {0, 1, 0, 0};
        oxide_autotuner *t = tuner(&h, 0, 0);
        reset_y();
        OK(launch(t, NULL));
        CHECK(last(t).source == OXIDE_AUTOTUNE_TUNED && last(t).winner == 1 && h.calls == 3 * REPS,
              "corruption %d: source %u", how, last(t).source);
        CHECK(y_is(1));
        oxide_autotune_destroy(t);
        /* replaced (a directory in the way cannot be: tuned again, still no error) */
        h.calls = 0;
        t = tuner(&h, 0, 0);
        OK(launch(t, NULL));
        CHECK(last(t).source == (how == 3 ? OXIDE_AUTOTUNE_TUNED : OXIDE_AUTOTUNE_FROM_DISK) && last(t).winner == 1,
              "corruption %d: after the retune, source %u", how, last(t).source);
        oxide_autotune_destroy(t);
        if (how == 3) {
            DIR *d = opendir(dir);
            struct dirent *e;
            while (d && (e = readdir(d)))
                if (!strncmp(e->d_name, "autotune-", 9)) {
                    char path[600];
                    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                    rmdir(path);
                }
            if (d)
                closedir(d);
        }
    }
}

/* Writers replace the entry over and over (RETUNE) while readers read it: a reader must always
 * find a whole entry naming one of the winners the writers chose, never tune. */
static void test_concurrent(void) {
    hook_state h0 = {0, 0, 0, 0};
    oxide_autotuner *t = tuner(&h0, 0, 0);
    OK(launch(t, "concurrent"));
    oxide_autotune_destroy(t);
    enum { KIDS = 6 };
    pid_t pids[KIDS];
    for (int k = 0; k < KIDS; k++)
        pids[k] = spawn_child("rw", k);
    int failed = 0;
    for (int k = 0; k < KIDS; k++)
        failed += wait_child(pids[k]) != 0;
    CHECK(failed == 0, "%d of %d processes saw a partial entry or failed", failed, KIDS);
    hook_state h = {0, 0, 0, 0};
    t = tuner(&h, 0, 0);
    OK(launch(t, "concurrent"));
    CHECK(last(t).source == OXIDE_AUTOTUNE_FROM_DISK && last(t).winner <= 2);
    oxide_autotune_destroy(t);
    /* no temporary file is left behind */
    DIR *d = opendir(dir);
    struct dirent *e;
    int tmp = 0;
    while (d && (e = readdir(d)))
        tmp += !strncmp(e->d_name, ".tmp-", 5);
    if (d)
        closedir(d);
    CHECK(tmp == 0, "%d temporary files left", tmp);
}

static void test_no_restore_and_zero(void) {
    /* without restoring, what the tuning launches wrote stays (documented: Triton's behaviour) */
    hook_state h = {0, 0, 0, 1};
    oxide_autotuner *t = tuner(&h, OXIDE_AUTOTUNE_NO_RESTORE | OXIDE_AUTOTUNE_RETUNE, 0);
    reset_y();
    OK(launch(t, NULL));
    CHECK(!y_is(1), "with OXIDE_AUTOTUNE_NO_RESTORE the hook's writes must remain");
    oxide_autotune_destroy(t);
    /* reset_to_zero: y is zero before each configuration and before the winner's launch */
    t = tuner(&h, OXIDE_AUTOTUNE_RETUNE, 1u << 1);
    reset_y();
    OK(launch(t, NULL));
    float y[N];
    MUST(oxide_memcpy_dtoh(dev, y, oxide_buffer_ptr(yb), sizeof y));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= y[i] == (on_mock ? 0.0f : xs0[i]);
    CHECK(ok, "reset_to_zero: y must be one launch on zeros");
    oxide_autotune_destroy(t);
}

static void test_all_fail(void) {
    oxide_autotune_options o = {sizeof o, dir, NULL, 1, REPS, 0, 0, 0, NULL, NULL};
    oxide_autotuner *t = NULL;
    MUST(oxide_autotune_create(&o, &t));
    oxide_module *m = acc_module(256, 0), *huge = acc_module(65536, 0);
    OK(oxide_autotune_add_config(t, m, "acc", WARPS, (uint32_t[]){3}, 1, "bad-warps", NULL));
    OK(oxide_autotune_add_config(t, huge, "acc", WARPS, (uint32_t[]){1}, 1, "huge", NULL));
    reset_y();
    FAILS_WITH(oxide_autotune_launch(t, NULL, &grids[3][0], 2, args, 2, NULL), OXIDE_ERROR_UNSUPPORTED,
               "every configuration failed", "bad-warps: skipped: ", "warps=3", "huge: skipped: compile for ",
               "registers per thread");
    CHECK(y_is(0), "nothing launched: y unchanged");
    oxide_autotune_destroy(t);
    /* every launch refused the arguments: that status */
    MUST(oxide_autotune_create(&o, &t));
    oxide_module *sig = acc_module(256, 1);
    OK(oxide_autotune_add_config(t, sig, "acc", NULL, NULL, 0, "wrong-sig", NULL));
    FAILS_WITH(oxide_autotune_launch(t, NULL, &grids[0][0], 1, args, 2, NULL), OXIDE_ERROR_LAUNCH,
               "wrong-sig: skipped: launch: ");
    oxide_autotune_destroy(t);
    /* a hook that refuses every time */
    hook_state h = {0, 0, 1, 0};
    o.time_hook = hook;
    o.time_user = &h;
    MUST(oxide_autotune_create(&o, &t));
    OK(oxide_autotune_add_config(t, m, "acc", NULL, NULL, 0, "plain", NULL));
    FAILS_WITH(oxide_autotune_launch(t, NULL, &grids[0][0], 1, args, 2, NULL), OXIDE_ERROR_UNSUPPORTED,
               "plain: skipped: the timing hook refused it");
    oxide_autotune_destroy(t);
    oxide_module_destroy(m);
    oxide_module_destroy(huge);
    oxide_module_destroy(sig);
}

/* The events' own times (no hook): a winner is chosen and launched on a stream of the caller. */
static void test_real_timing(void) {
    oxide_autotune_options o = {sizeof o, "", NULL, 0, 0, 0, 0, 0, NULL, NULL};
    oxide_autotuner *t = NULL;
    MUST(oxide_autotune_create(&o, &t));
    add_standard(t);
    oxide_stream *s = NULL;
    MUST(oxide_stream_create(dev, 0, &s));
    reset_y();
    OK(oxide_autotune_launch(t, s, &grids[0][0], 6, args, 2, NULL));
    OK(oxide_stream_synchronize(s));
    oxide_autotune_info i = last(t);
    CHECK(i.winner <= 2 && i.winner_ms >= 0 && i.timed == 3, "winner %zu, %g ms", i.winner, i.winner_ms);
    CHECK(y_is(1));
    printf("measured:\n%s", i.report);
    oxide_stream_destroy(s);
    oxide_autotune_destroy(t);
}

int main(int argc, char **argv) {
    int is_child = argc == 5 && !strcmp(argv[1], "--child");
    oxide_status st = oxide_device_get(0, &dev);
    if (st) {
        printf("SKIPPED: no GPU or driver: %s\n", oxide_last_error());
        return 77;
    }
    const char *drv = getenv("OXIDE_CUDA_DRIVER");
    on_mock = drv && strstr(drv, "mock") != NULL;
    MUST(oxide_context_create(&ctx));
    if (is_child)
        snprintf(dir, sizeof dir, "%s", argv[4]);
    else
        snprintf(dir, sizeof dir, "/tmp/oxide-autotune-test-%ld", (long)getpid());
    srand(7);
    for (int i = 0; i < N; i++) {
        xs0[i] = 0.5f + (float)rand() / (float)RAND_MAX * 1.5f;
        ys0[i] = -2.0f + (float)rand() / (float)RAND_MAX * 4.0f;
    }
    MUST(oxide_buffer_alloc(dev, sizeof xs0, &xb));
    MUST(oxide_buffer_alloc(dev, sizeof ys0, &yb));
    MUST(oxide_memcpy_htod(dev, oxide_buffer_ptr(xb), xs0, sizeof xs0));
    tx = (oxide_tensor){sizeof tx, oxide_buffer_ptr(xb), 0, OXIDE_SCALAR_F32, 1, {N}, {1}, 0, 0};
    ty = (oxide_tensor){sizeof ty, oxide_buffer_ptr(yb), 0, OXIDE_SCALAR_F32, 1, {N}, {1}, 1, 0};
    args[0] = oxide_arg_tensor(&tx);
    args[1] = oxide_arg_tensor(&ty);
    if (is_child)
        return child(argv[2], atoi(argv[3]));

    test_refusals();
    test_choice_and_restore();
    test_pow2_classes();
    test_disk_reuse();
    test_corruption();
    test_concurrent();
    test_no_restore_and_zero();
    test_all_fail();
    test_real_timing();

    oxide_buffer_free(xb);
    oxide_buffer_free(yb);
    oxide_context_destroy(ctx);
    check_remove_dir("test_autotune", dir);
    return check_report("test_autotune");
}
