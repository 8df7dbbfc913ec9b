/* Bitcode import for untrusted input: LLVM reads the unit in a child process under resource
 * limits, so that what the structural check (bitcode_check.c) cannot rule out -- a reader bug
 * reached by a well-formed but hostile stream, a fatal error, memory or time out of proportion --
 * ends the child, never the caller. The parent gets the child's status and message through a
 * pipe; only a unit the child read and verified is stored. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "import.h"

enum { DEFAULT_MEMORY_MIB = 2048, DEFAULT_SECONDS = 30, GRACE_SECONDS = 10 };

typedef struct child_report {
    int32_t status;
    char msg[1024];
} child_report;

/* The child's address space starts as a copy of the caller's: its limit is that size plus what
 * the import may add. */
static rlim_t address_space_limit(size_t extra) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)extra;
}

static void write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

static _Noreturn void child(int fd, const void *data, size_t size, const char *uname, size_t memory, unsigned seconds) {
    /* LLVM's fatal errors print to stderr before they abort: the caller's stderr stays clean */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, STDERR_FILENO);
    struct rlimit as = {address_space_limit(memory), address_space_limit(memory)};
    struct rlimit cpu = {seconds, seconds + 1};
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_AS, &as);
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_CORE, &core);
    child_report r = {0};
    r.status = oxide__bitcode_lazy_read(data, size, uname);
    if (!r.status)
        r.status = oxide__bitcode_full_read(data, size, uname);
    if (r.status)
        snprintf(r.msg, sizeof r.msg, "%s", oxide_last_error());
    write_all(fd, &r, sizeof r);
    _exit(0);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef enum { REPORT_READ, REPORT_CUT, REPORT_LATE } report_state;

/* Reads the report until the wall-clock deadline: CUT when the child ended before sending it all,
 * LATE when the deadline passed. */
static report_state read_report(int fd, child_report *r, double deadline) {
    size_t got = 0;
    while (got < sizeof *r) {
        double left = deadline - now();
        if (left <= 0)
            return REPORT_LATE;
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return REPORT_LATE;
        if (n < 0)
            return REPORT_CUT;
        ssize_t k = read(fd, (char *)r + got, sizeof *r - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return REPORT_CUT;
        got += (size_t)k;
    }
    return REPORT_READ;
}

/* Why the child ended without a report, for the caller's message. */
static oxide_status child_failed(pid_t pid, bool timed_out, const char *uname, size_t memory, unsigned seconds) {
    int ws = 0;
    if (timed_out)
        kill(pid, SIGKILL);
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: LLVM did not finish reading the bitcode within %u s; refused", uname,
                           seconds + GRACE_SECONDS);
    if (WIFSIGNALED(ws) && (WTERMSIG(ws) == SIGXCPU || WTERMSIG(ws) == SIGKILL))
        return oxide__fail(OXIDE_ERROR_PARSE, "%s: LLVM took more than %u s of CPU reading the bitcode; refused", uname,
                           seconds);
    if (WIFSIGNALED(ws))
        return oxide__fail(OXIDE_ERROR_PARSE,
                           "%s: LLVM failed reading the bitcode (signal %d: a crash, or more than its %zu MiB of "
                           "memory); refused",
                           uname, WTERMSIG(ws), memory >> 20);
    return oxide__fail(OXIDE_ERROR_PARSE, "%s: LLVM ended the reading process (exit status %d); refused", uname,
                       WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

oxide_status oxide_module_import_bitcode_isolated(oxide_module *mod, const void *data, size_t size,
                                                  const char *unit_name, size_t max_memory, unsigned max_seconds) {
    if (!mod || !data || !size)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_module_import_bitcode_isolated: NULL or empty argument");
    const char *uname = unit_name ? unit_name : "bitcode";
    size_t memory = max_memory ? max_memory : (size_t)DEFAULT_MEMORY_MIB << 20;
    unsigned seconds = max_seconds ? max_seconds : DEFAULT_SECONDS;
    oxide_status st = oxide__bitcode_precheck(data, size, uname); /* bounded: no child needed */
    if (st)
        return st;
    int fds[2];
    if (pipe(fds))
        return oxide__fail(OXIDE_ERROR_IO, "%s: isolated import: pipe: %s", uname, strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return oxide__fail(OXIDE_ERROR_IO, "%s: isolated import: fork: %s", uname, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], data, size, uname, memory, seconds);
    }
    close(fds[1]);
    child_report r;
    report_state rs = read_report(fds[0], &r, now() + seconds + GRACE_SECONDS);
    close(fds[0]);
    if (rs != REPORT_READ)
        return child_failed(pid, rs == REPORT_LATE, uname, memory, seconds);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (r.status) {
        r.msg[sizeof r.msg - 1] = 0;
        return oxide__fail((oxide_status)r.status, "%s", r.msg);
    }
    return oxide__bitcode_store(mod, data, size, uname);
}
