/* The autotuner: configurations of a tile kernel, the key of a launch, the winners known in the
 * process and on disk, and the launch. Timing and the outputs' safekeeping are in
 * lib/autotune_time.c. docs/tile.md ("Autotuning") states the contract. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune.h"
#include "cache.h"

/* A winner entry is a few lines; anything larger is not one. */
#define AT_MAX_ENTRY 65536
#define AT_MAX_REPS 1000

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

char *oxide__at_fmt(const char *fmt, ...) {
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

/* ---- create, destroy ---- */

oxide_status oxide_autotune_create(const oxide_autotune_options *opts, oxide_autotuner **out) {
    if (!out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_autotune_create: out is NULL");
    oxide_autotune_options o = {sizeof o, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (opts) {
        /* an older caller's struct ends earlier: the fields it lacks keep their defaults */
        if (opts->struct_size < offsetof(oxide_autotune_options, reset_to_zero))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "oxide_autotune_create: options struct_size is %zu; set it to "
                               "sizeof(oxide_autotune_options)",
                               opts->struct_size);
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
        o.struct_size = sizeof o;
        /* each configuration's launches are queued and timed at once: bound them */
        if (o.warmup > AT_MAX_REPS || o.reps > AT_MAX_REPS)
            return oxide__fail(
                OXIDE_ERROR_INVALID_ARGUMENT, "oxide_autotune_create: options.%s is %u; it takes 0 (the default) to %u",
                o.warmup > AT_MAX_REPS ? "warmup" : "reps", o.warmup > AT_MAX_REPS ? o.warmup : o.reps, AT_MAX_REPS);
        if (o.reserved)
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "oxide_autotune_create: options.reserved is %u; it must be 0", o.reserved);
        if (o.flags & ~(OXIDE_AUTOTUNE_NO_RESTORE | OXIDE_AUTOTUNE_SHAPES_POW2 | OXIDE_AUTOTUNE_RETUNE))
            return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                               "oxide_autotune_create: options.flags 0x%x has bits this version does not know "
                               "(OXIDE_AUTOTUNE_NO_RESTORE, _SHAPES_POW2, _RETUNE)",
                               o.flags);
    }
    oxide_autotuner *t = calloc(1, sizeof *t);
    if (!t)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_create: out of memory");
    oxide_status st = oxide_context_create(&t->ctx);
    if (st) {
        free(t);
        return st;
    }
    t->o = o;
    t->o.warmup = o.warmup ? o.warmup : 1;
    t->o.reps = o.reps ? o.reps : 10;
    t->cache_dir = dup_or_null(o.cache_dir);
    t->o.cache_dir = t->cache_dir;
    if (o.compile) {
        t->compile = *o.compile;
        t->has_compile = true;
    }
    t->o.compile = NULL;
    if ((o.cache_dir && !t->cache_dir)) {
        oxide_autotune_destroy(t);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_create: out of memory");
    }
    *out = t;
    return OXIDE_OK;
}

static void forget_loaded(at_config *c) {
    for (size_t i = 0; i < c->nloaded; i++) {
        oxide_loaded_module_destroy(c->loaded[i].lm);
        free(c->loaded[i].fail);
    }
    free(c->loaded);
    c->loaded = NULL;
    c->nloaded = 0;
}

void oxide_autotune_destroy(oxide_autotuner *t) {
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        at_config *c = &t->cfg[i];
        forget_loaded(c);
        free(c->label);
        free(c->kernel);
        free(c->fail);
        free(c->why);
    }
    free(t->cfg);
    oxide_context_destroy(t->ctx);
    oxide__arena_free(&t->arena);
    free(t->cache_dir);
    free(t->key);
    free(t->report);
    free(t);
}

size_t oxide_autotune_config_count(const oxide_autotuner *t) { return t ? t->n : 0; }

/* ---- configurations ---- */

/* mod's text parsed into the tuner's context: the tuner sets hints on its own copy and keeps it
 * whatever the caller does with mod afterwards. */
static oxide_status copy_module(oxide_autotuner *t, oxide_module *mod, oxide_module **out) {
    const char *text;
    oxide_status st = oxide_module_print(mod, &text);
    if (st)
        return oxide__fail_prefix(st, "oxide_autotune_add_config: the module does not print");
    st = oxide_module_parse(t->ctx, text, strlen(text), out);
    if (st)
        return oxide__fail_prefix(st, "oxide_autotune_add_config: the module's text does not parse back");
    return OXIDE_OK;
}

/* The hints set on the copy; the first that is refused becomes the configuration's failure. */
static char *set_hints(oxide_function *k, const oxide_tile_hint *hints, const uint32_t *values, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (oxide_tile_kernel_set_hint(k, hints[i], values[i]))
            return oxide__at_fmt("%s", oxide_last_error());
    return NULL;
}

oxide_status oxide_autotune_add_config(oxide_autotuner *t, oxide_module *mod, const char *kernel,
                                       const oxide_tile_hint *hints, const uint32_t *values, size_t nhints,
                                       const char *label, size_t *index) {
    if (!t || !mod || !kernel || (nhints && (!hints || !values)))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_autotune_add_config: %s is NULL",
                           !t        ? "the tuner"
                           : !mod    ? "mod"
                           : !kernel ? "kernel"
                           : !hints  ? "hints"
                                     : "values");
    oxide_function *f;
    if (oxide_module_get_function(mod, kernel, &f))
        return oxide__fail(OXIDE_ERROR_NOT_FOUND, "oxide_autotune_add_config: the module has no kernel '%s'", kernel);
    if (!f->is_tile)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_autotune_add_config: '%s' is not a tile kernel; the autotuner tunes tile "
                           "kernels (their hints and tile sizes)",
                           kernel);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        at_config *p = realloc(t->cfg, cap * sizeof *p);
        if (!p)
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_add_config: out of memory");
        t->cfg = p;
        t->cap = cap;
    }
    at_config c = {0};
    oxide_status st = copy_module(t, mod, &c.mod);
    if (st)
        return st;
    oxide_function *k;
    oxide_module_get_function(c.mod, kernel, &k);
    c.fail = set_hints(k, hints, values, nhints);
    c.label = label ? strdup(label) : oxide__at_fmt("#%zu", t->n);
    c.kernel = strdup(kernel);
    c.ms = -1;
    if (!c.label || !c.kernel) {
        free(c.label);
        free(c.kernel);
        free(c.fail);
        oxide_module_destroy(c.mod);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_add_config: out of memory");
    }
    if (index)
        *index = t->n;
    t->cfg[t->n++] = c;
    t->ident_target[0] = 0; /* the set changed: its identity (and every key) with it */
    return OXIDE_OK;
}

/* ---- the key ---- */

/* The options a configuration compiles with for target: the caller's, else the defaults. */
static oxide_status compile_options(oxide_autotuner *t, const char *target, oxide_options *out) {
    if (t->has_compile) {
        *out = t->compile;
        return OXIDE_OK;
    }
    oxide__options_default(out);
    return oxide_options_set_target(out, target);
}

/* The SHA-256 of every configuration's label, kernel and module cache key (or failure), so that
 * a changed kernel, configuration set, option or liboxide build never reads another's winner. */
static oxide_status identity(oxide_autotuner *t, const char *target) {
    if (!strcmp(t->ident_target, target))
        return OXIDE_OK;
    oxide_options opts;
    oxide_sbuf b = {0};
    bool bad_target = compile_options(t, target, &opts) != OXIDE_OK;
    oxide__sbuf_printf(&b, "oxide-autotune-configs 1\nn %zu\n", t->n);
    for (size_t i = 0; i < t->n; i++) {
        at_config *c = &t->cfg[i];
        char key[65] = "-";
        if (!c->fail && !bad_target && oxide_module_cache_key(c->mod, &opts, key))
            strcpy(key, "?");
        oxide__sbuf_printf(&b, "config %zu %s %s %zu %s\n", strlen(c->label), c->label, c->kernel, i, key);
        if (c->fail)
            oxide__sbuf_printf(&b, "fail %s\n", c->fail);
    }
    char *text = oxide__sbuf_take(&b);
    if (!text)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_launch: out of memory");
    oxide__sha256_hex(text, strlen(text), t->ident);
    free(text);
    snprintf(t->ident_target, sizeof t->ident_target, "%s", target);
    return OXIDE_OK;
}

static int64_t round_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v && p < ((int64_t)1 << 62))
        p <<= 1;
    return v <= 0 ? v : p;
}

/* The arguments' kinds and types, and (without a caller's class) the tensors' shapes. */
static void key_args(const oxide_autotuner *t, oxide_sbuf *b, const oxide_arg *args, size_t nargs,
                     const char *shape_class) {
    oxide__sbuf_printf(b, "args %zu\n", nargs);
    for (size_t i = 0; i < nargs; i++) {
        const oxide_arg *a = &args[i];
        const char *ty = oxide_scalar_name(a->type);
        oxide__sbuf_printf(b, "arg %u %s %u", (unsigned)a->kind, ty ? ty : "?", a->is_mutable);
        const oxide_tensor *tn = a->kind == OXIDE_ARG_TENSOR ? a->bytes : NULL;
        if (tn && a->size >= sizeof *tn && tn->struct_size >= sizeof *tn && tn->rank <= 4) {
            oxide__sbuf_printf(b, " rank %u", tn->rank);
            if (!shape_class)
                for (uint32_t d = 0; d < tn->rank; d++)
                    oxide__sbuf_printf(
                        b, " %lld",
                        (long long)(t->o.flags & OXIDE_AUTOTUNE_SHAPES_POW2 ? round_pow2(tn->shape[d]) : tn->shape[d]));
        } else if (a->kind == OXIDE_ARG_BUFFER && !shape_class) {
            uint64_t n = a->len;
            oxide__sbuf_printf(
                b, " len %llu",
                (unsigned long long)(t->o.flags & OXIDE_AUTOTUNE_SHAPES_POW2 ? (uint64_t)round_pow2((int64_t)n) : n));
        }
        oxide__sbuf_puts(b, "\n");
    }
}

/* The key's text: the configurations, the device, the arguments and the shape class. */
static oxide_status make_key(oxide_autotuner *t, oxide_device *dev, const char *target, const oxide_arg *args,
                             size_t nargs, const char *shape_class) {
    const char *name = "?";
    int major = 0, minor = 0;
    oxide_device_name(dev, &name);
    oxide_device_compute_capability(dev, &major, &minor);
    oxide_status st = identity(t, target);
    if (st)
        return st;
    oxide_sbuf b = {0};
    oxide__sbuf_printf(&b, "oxide-autotune-key 1\nconfigs %s\ntarget %s\ndevice %zu %s %d.%d\n", t->ident, target,
                       strlen(name), name, major, minor);
    key_args(t, &b, args, nargs, shape_class);
    if (shape_class)
        oxide__sbuf_printf(&b, "class %zu %s\n", strlen(shape_class), shape_class);
    char *key = oxide__sbuf_take(&b);
    if (!key)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_launch: out of memory");
    free(t->key);
    t->key = key;
    return OXIDE_OK;
}

/* ---- the winners on disk ---- */

static bool entry_path(const oxide_autotuner *t, char *dir, size_t dcap, char *path, size_t pcap, char sum[65]) {
    if (!oxide__cache_dir(t->cache_dir, dir, dcap))
        return false;
    oxide__sha256_hex(t->key, strlen(t->key), sum);
    int n = snprintf(path, pcap, "%s/autotune-%s.txt", dir, sum);
    return n > 0 && (size_t)n < pcap;
}

/* The winner an entry names, if the entry checks out: its checksum, this key, an index and a
 * label of this set. Anything else is a miss, tuned again and replaced. */
static bool read_winner(oxide_autotuner *t, size_t *winner) {
    char dir[4096], path[4200], sum[65];
    if (!entry_path(t, dir, sizeof dir, path, sizeof path, sum))
        return false;
    size_t len = 0;
    char *data = oxide__cache_read(path, AT_MAX_ENTRY, &len);
    if (!data)
        return false;
    bool ok = false;
    /* the last line is "sha256 " + 64 hex digits + "\n": 72 bytes */
    char *tail = len > 72 ? data + len - 72 : NULL, fsum[65], check[65], fkey[65];
    size_t w = 0, label_len = 0;
    int hdr = 0;
    if (tail && tail[-1] == '\n' && !memcmp(tail, "sha256 ", 7) && sscanf(tail, "sha256 %64s\n", fsum) == 1 &&
        strlen(fsum) == 64) {
        oxide__sha256_hex(data, (size_t)(tail - data), check);
        ok = !strcmp(check, fsum) &&
             sscanf(data, "oxide-autotune-entry 1\nkey %64s\nwinner %zu\nlabel %zu%n", fkey, &w, &label_len, &hdr) ==
                 3 &&
             !strcmp(fkey, sum) && w < t->n && !t->cfg[w].fail && hdr > 0 && data[hdr++] == ' ' &&
             (size_t)hdr + label_len <= (size_t)(tail - data) && strlen(t->cfg[w].label) == label_len &&
             !memcmp(data + hdr, t->cfg[w].label, label_len);
    }
    free(data);
    if (ok)
        *winner = w;
    return ok;
}

/* Failure to write is silent: the winner is known in this process either way. */
static void write_winner(oxide_autotuner *t, size_t winner, double ms) {
    char dir[4096], path[4200], sum[65], fsum[65];
    if (!entry_path(t, dir, sizeof dir, path, sizeof path, sum))
        return;
    oxide_sbuf b = {0};
    oxide__sbuf_printf(&b, "oxide-autotune-entry 1\nkey %s\nwinner %zu\nlabel %zu %s\nms %.6f\n", sum, winner,
                       strlen(t->cfg[winner].label), t->cfg[winner].label, ms);
    oxide__sbuf_puts(&b, t->report ? t->report : "");
    char *body = oxide__sbuf_take(&b);
    if (!body)
        return;
    oxide__sha256_hex(body, strlen(body), fsum);
    char tail[80];
    snprintf(tail, sizeof tail, "sha256 %s\n", fsum);
    const char *parts[2] = {body, tail};
    size_t lens[2] = {strlen(body), strlen(tail)};
    if (lens[0] + lens[1] <= AT_MAX_ENTRY)
        oxide__cache_write(dir, path, sum, parts, lens, 2);
    free(body);
}

/* ---- loading a configuration ---- */

static at_loaded *load_failed(at_loaded *l, const char **why, oxide_status *st) {
    *why = l->fail ? l->fail : "out of memory";
    *st = l->st ? l->st : OXIDE_ERROR_OUT_OF_MEMORY;
    return NULL;
}

at_loaded *oxide__at_load(oxide_autotuner *t, at_config *c, oxide_device *dev, const char *target, const char **why,
                          oxide_status *why_st) {
    for (size_t i = 0; i < c->nloaded; i++)
        if (c->loaded[i].dev == dev && !strcmp(c->loaded[i].target, target))
            return c->loaded[i].fail ? load_failed(&c->loaded[i], why, why_st) : &c->loaded[i];
    at_loaded *p = realloc(c->loaded, (c->nloaded + 1) * sizeof *p);
    if (!p) {
        *why = "out of memory";
        *why_st = OXIDE_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    c->loaded = p;
    at_loaded *l = &p[c->nloaded++];
    memset(l, 0, sizeof *l);
    l->dev = dev;
    snprintf(l->target, sizeof l->target, "%s", target);
    oxide_options opts;
    const char *ptx = NULL, *stage = "compile";
    size_t len = 0;
    if (c->fail) {
        l->st = OXIDE_ERROR_INVALID_ARGUMENT;
        l->fail = strdup(c->fail);
        return load_failed(l, why, why_st);
    }
    if (!(l->st = compile_options(t, target, &opts)) &&
        !(l->st = oxide_module_compile_cached(c->mod, &opts, t->cache_dir, &ptx, &len, NULL))) {
        stage = "load";
        if (!(l->st = oxide_loaded_module_load_ptx(dev, ptx, len, &l->lm)))
            l->st = oxide_loaded_module_get_kernel(l->lm, c->kernel, &l->k);
    }
    if (!l->st)
        return l;
    l->fail = oxide__at_fmt("%s for %s: %s", stage, target, oxide_last_error());
    oxide_loaded_module_destroy(l->lm);
    l->lm = NULL;
    return load_failed(l, why, why_st);
}

/* ---- the launch ---- */

/* The oxide target of the device (sm_90a for compute capability 9.0), unless the caller chose. */
static void device_target(const oxide_autotuner *t, oxide_device *dev, char out[16]) {
    int major = 0, minor = 0;
    if (t->has_compile) {
        snprintf(out, 16, "%s", oxide_options_get_target(&t->compile));
        return;
    }
    oxide_device_compute_capability(dev, &major, &minor);
    snprintf(out, 16, "sm_%d%d%s", major, minor, (major == 9 || major == 10) && minor == 0 ? "a" : "");
}

static oxide_status check_launch_args(const oxide_autotuner *t, const uint32_t *grids, size_t ngrids,
                                      const oxide_arg *args, size_t nargs) {
    if (!t || !grids || (nargs && !args))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_autotune_launch: %s is NULL",
                           !t       ? "the tuner"
                           : !grids ? "grids"
                                    : "args");
    if (!t->n)
        return oxide__fail(OXIDE_ERROR_STATE,
                           "oxide_autotune_launch: the tuner has no configurations (oxide_autotune_add_config)");
    if (ngrids != 1 && ngrids != t->n)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_autotune_launch: ngrids is %zu; give 1 grid for every configuration or one "
                           "for each of the %zu",
                           ngrids, t->n);
    return OXIDE_OK;
}

/* The winner for the key just made: known in the process, on disk, or found now. */
static oxide_status find_winner(oxide_autotuner *t, oxide_stream *stream, oxide_device *dev, const char *target,
                                const uint32_t *grids, size_t ngrids, const oxide_arg *args, size_t nargs,
                                size_t *winner, uint32_t *source) {
    bool retune = t->o.flags & OXIDE_AUTOTUNE_RETUNE;
    at_memo *m = retune ? NULL : oxide__strmap_get(&t->memo, t->key, strlen(t->key));
    if (m) {
        *winner = m->winner, *source = OXIDE_AUTOTUNE_FROM_MEMORY;
        t->last.winner_ms = m->ms;
        return OXIDE_OK;
    }
    double ms = 0;
    const char *why;
    oxide_status why_st;
    if (!retune && read_winner(t, winner) && oxide__at_load(t, &t->cfg[*winner], dev, target, &why, &why_st)) {
        *source = OXIDE_AUTOTUNE_FROM_DISK;
    } else {
        oxide_status st = oxide__at_tune(t, stream, dev, target, grids, ngrids, args, nargs, winner);
        if (st)
            return st;
        *source = OXIDE_AUTOTUNE_TUNED;
        ms = t->cfg[*winner].ms;
        write_winner(t, *winner, ms);
    }
    t->last.winner_ms = ms;
    m = oxide__strmap_get(&t->memo, t->key, strlen(t->key));
    if (!m) {
        char *key = oxide__strdup(&t->arena, t->key);
        m = oxide__alloc(&t->arena, sizeof *m);
        if (!key || !m || !oxide__strmap_put(&t->arena, &t->memo, key, strlen(key), m))
            return OXIDE_OK; /* not remembered: the next launch reads the disk again */
    }
    m->winner = *winner;
    m->ms = ms;
    return OXIDE_OK;
}

oxide_status oxide_autotune_launch(oxide_autotuner *t, oxide_stream *stream, const uint32_t *grids, size_t ngrids,
                                   const oxide_arg *args, size_t nargs, const char *shape_class) {
    oxide_status st = check_launch_args(t, grids, ngrids, args, nargs);
    if (st)
        return st;
    oxide_device *dev = stream ? oxide_stream_get_device(stream) : NULL;
    if (!dev && (st = oxide_device_get(0, &dev)))
        return oxide__fail_prefix(st, "oxide_autotune_launch");
    char target[16];
    device_target(t, dev, target);
    if ((st = make_key(t, dev, target, args, nargs, shape_class)))
        return st;
    size_t winner = 0;
    uint32_t source = 0;
    if ((st = find_winner(t, stream, dev, target, grids, ngrids, args, nargs, &winner, &source)))
        return st;
    const char *why;
    at_loaded *l = oxide__at_load(t, &t->cfg[winner], dev, target, &why, &st);
    if (!l)
        return oxide__fail(st, "oxide_autotune_launch: the winner '%s' does not load: %s", t->cfg[winner].label, why);
    st = oxide_kernel_launch(l->k, stream, oxide__at_grid(grids, ngrids, winner), NULL, 0, args, nargs);
    if (st)
        return oxide__fail_prefix(st, "oxide_autotune_launch: configuration '%s'", t->cfg[winner].label);
    t->last.winner = winner;
    t->last.source = source;
    t->last.key = t->key;
    t->last.report = t->report ? t->report : "";
    t->have_last = true;
    return OXIDE_OK;
}

oxide_status oxide_autotune_last(const oxide_autotuner *t, oxide_autotune_info *info) {
    if (!t || !info)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_autotune_last: %s is NULL", !t ? "the tuner" : "info");
    if (info->struct_size < offsetof(oxide_autotune_info, key))
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT,
                           "oxide_autotune_last: info.struct_size is %zu; set it to sizeof(oxide_autotune_info)",
                           info->struct_size);
    if (!t->have_last)
        return oxide__fail(OXIDE_ERROR_STATE, "oxide_autotune_last: nothing was launched through the tuner yet");
    size_t size = info->struct_size < sizeof *info ? info->struct_size : sizeof *info;
    oxide_autotune_info v = t->last;
    v.struct_size = info->struct_size;
    memcpy(info, &v, size);
    return OXIDE_OK;
}
