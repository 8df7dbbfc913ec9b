/* ptxas for the PTX tests: where it is, and its verdict on a PTX text for one target (what it
 * says is printed). Header-only: each test is one program. */
#ifndef OXIDE_TEST_PTXAS_H
#define OXIDE_TEST_PTXAS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char ptxas[1024];

/* Finds ptxas under $CUDA_HOME or the build's CUDA home; false (after saying so) without it. */
static inline bool ptxas_find(const char *cuda_home) {
    const char *home = getenv("CUDA_HOME");
    snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", home && *home ? home : cuda_home);
    if (access(ptxas, X_OK) == 0)
        return true;
    printf("skipped: no ptxas at %s\n", ptxas);
    return false;
}

/* ptxas's exit status on the PTX for arch (-1 when it could not be run). */
static inline int ptxas_run(const char *ptx, size_t len, const char *arch) {
    char path[] = "/tmp/oxide_ptxas_XXXXXX", cmd[2300], line[1024];
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    bool wrote = write(fd, ptx, len) == (ssize_t)len;
    close(fd);
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o /dev/null 2>&1", ptxas, arch, path);
    FILE *pp = wrote ? popen(cmd, "r") : NULL;
    while (pp && fgets(line, sizeof line, pp))
        printf("  ptxas -arch=%s: %s", arch, line);
    int rc = pp ? pclose(pp) : -1;
    unlink(path);
    return wrote ? rc : -1;
}

#endif
