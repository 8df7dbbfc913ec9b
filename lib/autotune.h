/* The autotuner's internals, shared by its two files: lib/autotune.c (configurations, keys, the
 * winner cache, the launch) and lib/autotune_time.c (saving the outputs, timing). docs/tile.md,
 * "Autotuning", is the contract. Not installed. */
#ifndef OXIDE_AUTOTUNE_H
#define OXIDE_AUTOTUNE_H

#include <stdbool.h>

#include "ir.h"
#include "util.h"

/* A configuration compiled and loaded for one device and target. */
typedef struct at_loaded {
    oxide_device *dev;
    char target[16];
    oxide_loaded_module *lm;
    oxide_kernel *k;
    oxide_status st; /* why it could not be, with fail */
    char *fail;      /* malloc'd; NULL when loaded */
} at_loaded;

typedef struct at_config {
    char *label, *kernel; /* malloc'd */
    oxide_module *mod;    /* the copy, in the tuner's context */
    char *fail;           /* malloc'd: why it can never run (a hint out of range), else NULL */
    at_loaded *loaded;
    size_t nloaded;
    double ms; /* median of the last tuning; < 0: skipped */
    char *why; /* malloc'd: why the last tuning skipped it */
    oxide_status why_st;
} at_config;

/* A winner known in this process, by its key's text. */
typedef struct at_memo {
    size_t winner;
    double ms;
} at_memo;

struct oxide_autotuner {
    oxide_context *ctx;
    oxide_autotune_options o; /* cache_dir and compile point into this struct */
    char *cache_dir;          /* malloc'd copy, or NULL for the default */
    oxide_options compile;
    bool has_compile;
    at_config *cfg;
    size_t n, cap;
    oxide_arena arena; /* memo keys and values */
    oxide_strmap memo;
    char ident[65], ident_target[16]; /* the configurations' identity for a target, kept */
    char *key, *report;               /* malloc'd: the last launch's key, the last tuning's report */
    oxide_autotune_info last;
    bool have_last;
};

/* A malloc'd formatted string (NULL when out of memory). */
char *oxide__at_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The configuration's kernel on dev for target, compiled and loaded on first use; NULL when it
 * cannot be, with the reason in *why (it lives as long as the tuner) and its status in *why_st. */
at_loaded *oxide__at_load(oxide_autotuner *t, at_config *c, oxide_device *dev, const char *target, const char **why,
                          oxide_status *why_st);
/* Time every configuration with these arguments and pick the one of least median time:
 * *winner, the report in t->report. Saves and restores the outputs unless the flags say not to. */
oxide_status oxide__at_tune(oxide_autotuner *t, oxide_stream *stream, oxide_device *dev, const char *target,
                            const uint32_t *grids, size_t ngrids, const oxide_arg *args, size_t nargs, size_t *winner);
/* The grid of configuration i. */
static inline const uint32_t *oxide__at_grid(const uint32_t *grids, size_t ngrids, size_t i) {
    return ngrids == 1 ? grids : grids + 3 * i;
}

#endif
