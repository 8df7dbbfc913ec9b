/* What oxide-difftest's driver (difftest.c: options, worker processes, the summary) shares with
 * the tile programs' runner (tile_run.c). */
#ifndef OXIDE_DIFFTEST_DRIVER_H
#define OXIDE_DIFFTEST_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "oxide.h"

typedef struct dt_opts {
    uint64_t seed, count;
    uint32_t batch, jobs;
    bool gpu, compile; /* compile: without --gpu, also compile each batch to PTX */
    int opt_level;
    const char *target;
    bool tile; /* --tile: tile programs (tile_gen.h) instead of SIMT ones */
    bool simt; /* --tile --simt: also lower each program and run it in the SIMT interpreter */
    bool dot;  /* --tile --dot: blocked matmuls (tile_dot.c) instead of tile_gen.c's programs */
} dt_opts;

typedef struct dt_tally {
    uint64_t programs, mismatches, errors;
} dt_tally;

typedef struct dt_stats {
    double t_gen, t_interp, t_compile, t_gpu, t_simt;
} dt_stats;

extern dt_stats dt_st;
double dt_now(void);

/* Full reports (with the program) for the first few problems of a process; then seeds only, so a
 * systematic bug does not print 100,000 programs. Returns whether this report is a full one. */
bool dt_report_full(void);

/* The tile programs of one worker: batches first, first + stride, ... (programs with --jobs 1
 * and neither --gpu nor --compile). dev NULL: no GPU side. Returns 0, -1 on a setup failure. */
int dt_tile_work(oxide_context *ctx, const dt_opts *o, oxide_device *dev, uint64_t first, uint32_t stride, dt_tally *t);
/* --tile --print S (the kernel text and its launch) and --tile --json (one line per program, for
 * the NumPy evaluator). Returns the exit status. */
int dt_tile_print(uint64_t seed, uint64_t count, bool json, bool dot);

#endif
