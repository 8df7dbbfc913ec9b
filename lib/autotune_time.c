/* The autotuner's timing: every configuration launched on the caller's arguments, timed with CUDA
 * events, the median kept; the outputs saved first and put back, so that the caller sees only
 * the winner's launch (docs/tile.md, "Autotuning"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune.h"

/* The bytes [start, start + size) an argument the kernel may write can touch. */
typedef struct at_span {
    uint64_t start;
    size_t size;
    bool zero;           /* reset_to_zero: set to 0 instead of restored */
    oxide_buffer *saved; /* the copy (NULL when zeroed) */
} at_span;

/* The span of a mutable tensor or buffer argument; size 0 for anything else. A strided view
 * reaches from its lowest to its highest element, whatever the signs of its strides. */
static at_span arg_span(const oxide_arg *a) {
    at_span s = {0};
    if (a->kind == OXIDE_ARG_BUFFER && a->is_mutable) {
        s.start = a->ptr;
        s.size = (size_t)a->len * oxide_scalar_size(a->type);
    } else if (a->kind == OXIDE_ARG_TENSOR && a->bytes && a->size >= sizeof(oxide_tensor)) {
        const oxide_tensor *t = a->bytes;
        size_t es = oxide_scalar_size(t->elem);
        if (t->struct_size < sizeof *t || !t->is_mutable || t->rank < 1 || t->rank > 4 || !es)
            return s;
        int64_t lo = 0, hi = 0;
        for (uint32_t d = 0; d < t->rank; d++) {
            if (t->shape[d] <= 0)
                return s; /* empty: nothing to keep */
            int64_t reach = (t->shape[d] - 1) * t->strides[d];
            if (reach < 0)
                lo += reach;
            else
                hi += reach;
        }
        s.start = t->data + t->byte_offset + (uint64_t)(lo * (int64_t)es);
        s.size = (size_t)(hi - lo + 1) * es;
    }
    return s;
}

typedef struct at_saved {
    at_span *spans;
    size_t n;
} at_saved;

static void saved_free(at_saved *sv) {
    for (size_t i = 0; i < sv->n; i++)
        oxide_buffer_free(sv->spans[i].saved);
    free(sv->spans);
    sv->spans = NULL;
    sv->n = 0;
}

/* Copies of the outputs' memory (or, for reset_to_zero arguments, a note to zero them). */
static oxide_status save_outputs(const oxide_autotuner *t, oxide_stream *stream, oxide_device *dev,
                                 const oxide_arg *args, size_t nargs, at_saved *sv) {
    bool restore = !(t->o.flags & OXIDE_AUTOTUNE_NO_RESTORE);
    sv->spans = calloc(nargs ? nargs : 1, sizeof *sv->spans);
    if (!sv->spans)
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_launch: out of memory");
    for (size_t i = 0; i < nargs; i++) {
        at_span s = arg_span(&args[i]);
        s.zero = i < 64 && (t->o.reset_to_zero >> i & 1);
        if (!s.size || (!restore && !s.zero))
            continue;
        if (!s.zero) {
            oxide_status st = oxide_buffer_alloc(dev, s.size, &s.saved);
            if (!st)
                st = stream ? oxide_memcpy_dtod_async(stream, oxide_buffer_ptr(s.saved), s.start, s.size)
                            : oxide_memcpy_dtod(dev, oxide_buffer_ptr(s.saved), s.start, s.size);
            if (st) {
                oxide_buffer_free(s.saved);
                return oxide__fail_prefix(st,
                                          "oxide_autotune_launch: saving argument %zu (%zu bytes) so that tuning "
                                          "leaves it as it was (OXIDE_AUTOTUNE_NO_RESTORE tunes without saving)",
                                          i + 1, s.size);
            }
        }
        sv->spans[sv->n++] = s;
    }
    return OXIDE_OK;
}

static oxide_status put_back(oxide_stream *stream, oxide_device *dev, const at_saved *sv) {
    for (size_t i = 0; i < sv->n; i++) {
        const at_span *s = &sv->spans[i];
        oxide_status st;
        if (s->zero)
            st = stream ? oxide_memset_async(stream, s->start, 0, s->size, 1)
                        : oxide_memset(dev, s->start, 0, s->size, 1);
        else
            st = stream ? oxide_memcpy_dtod_async(stream, s->start, oxide_buffer_ptr(s->saved), s->size)
                        : oxide_memcpy_dtod(dev, s->start, oxide_buffer_ptr(s->saved), s->size);
        if (st)
            return oxide__fail_prefix(st, "oxide_autotune_launch: putting the outputs back after tuning");
    }
    return OXIDE_OK;
}

/* ---- timing ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct at_run {
    oxide_autotuner *t;
    oxide_stream *stream;
    oxide_device *dev;
    const uint32_t *grid;
    const oxide_arg *args;
    size_t nargs;
    oxide_event **ev; /* reps + 1 */
    double *times;    /* reps */
} at_run;

static void skip(at_config *c, oxide_status st, const char *what) {
    free(c->why);
    c->why = what ? strdup(what) : NULL;
    c->why_st = st;
    c->ms = -1;
}

/* Launch the configuration warmup times, then reps times between events; its median in c->ms,
 * or the reason it was skipped. Returns an error only when the device failed (a fault), which
 * ends the tuning. */
static oxide_status time_config(at_run *r, size_t index, oxide_kernel *k) {
    oxide_autotuner *t = r->t;
    at_config *c = &t->cfg[index];
    oxide_status st = OXIDE_OK;
    for (uint32_t i = 0; i < t->o.warmup && !st; i++)
        st = oxide_kernel_launch(k, r->stream, r->grid, NULL, 0, r->args, r->nargs);
    if (!st)
        st = oxide_event_record(r->ev[0], r->stream);
    for (uint32_t i = 0; i < t->o.reps && !st; i++)
        if (!(st = oxide_kernel_launch(k, r->stream, r->grid, NULL, 0, r->args, r->nargs)))
            st = oxide_event_record(r->ev[i + 1], r->stream);
    if (!st)
        st = oxide_event_synchronize(r->ev[t->o.reps]);
    if (st) {
        char *why = oxide__at_fmt("launch: %s", oxide_last_error());
        skip(c, st, why ? why : "launch: out of memory");
        free(why);
        return oxide_device_check(r->dev);
    }
    for (uint32_t i = 0; i < t->o.reps; i++) {
        float ms = 0;
        oxide_event_elapsed_ms(r->ev[i], r->ev[i + 1], &ms);
        r->times[i] = t->o.time_hook ? t->o.time_hook(t->o.time_user, index, i, ms) : ms;
        if (r->times[i] < 0 || r->times[i] != r->times[i]) {
            skip(c, OXIDE_ERROR_UNSUPPORTED, "the timing hook refused it");
            return OXIDE_OK;
        }
    }
    qsort(r->times, t->o.reps, sizeof *r->times, cmp_double);
    uint32_t n = t->o.reps;
    c->ms = n % 2 ? r->times[n / 2] : (r->times[n / 2 - 1] + r->times[n / 2]) / 2;
    return OXIDE_OK;
}

/* The report: a line per configuration, the winner marked. */
static void make_report(oxide_autotuner *t, size_t winner, bool have) {
    oxide_sbuf b = {0};
    for (size_t i = 0; i < t->n; i++) {
        at_config *c = &t->cfg[i];
        if (c->ms >= 0)
            oxide__sbuf_printf(&b, "%s: %.4f ms (median of %u)%s\n", c->label, c->ms, t->o.reps,
                               have && i == winner ? " <- winner" : "");
        else
            oxide__sbuf_printf(&b, "%s: skipped: %s\n", c->label, c->why ? c->why : "?");
    }
    free(t->report);
    t->report = oxide__sbuf_take(&b);
}

/* Every configuration failed: an error naming each and why. Their common status if they share
 * one (every launch refused the arguments: LAUNCH), else UNSUPPORTED. */
static oxide_status all_failed(oxide_autotuner *t) {
    oxide_status st = t->cfg[0].why_st;
    for (size_t i = 1; i < t->n; i++)
        if (t->cfg[i].why_st != st)
            st = OXIDE_ERROR_UNSUPPORTED;
    return oxide__fail(st ? st : OXIDE_ERROR_UNSUPPORTED,
                       "oxide_autotune_launch: every configuration failed, none can be launched:\n%s",
                       t->report ? t->report : "");
}

static oxide_status time_all(at_run *r, const char *target, const uint32_t *grids, size_t ngrids, const at_saved *sv,
                             uint32_t *timed) {
    oxide_autotuner *t = r->t;
    for (size_t i = 0; i < t->n; i++) {
        at_config *c = &t->cfg[i];
        const char *why = NULL;
        oxide_status why_st = OXIDE_OK;
        at_loaded *l = oxide__at_load(t, c, r->dev, target, &why, &why_st);
        if (!l) {
            skip(c, why_st, why);
            continue;
        }
        oxide_status st = put_back(r->stream, r->dev, sv);
        if (st)
            return st;
        r->grid = oxide__at_grid(grids, ngrids, i);
        if ((st = time_config(r, i, l->k)))
            return oxide__fail_prefix(st, "oxide_autotune_launch: timing configuration '%s'", c->label);
        *timed += c->ms >= 0;
    }
    return OXIDE_OK;
}

oxide_status oxide__at_tune(oxide_autotuner *t, oxide_stream *stream, oxide_device *dev, const char *target,
                            const uint32_t *grids, size_t ngrids, const oxide_arg *args, size_t nargs, size_t *winner) {
    at_run r = {t, stream, dev, NULL, args, nargs, NULL, NULL};
    at_saved sv = {0};
    uint32_t timed = 0;
    r.ev = calloc(t->o.reps + 1, sizeof *r.ev);
    r.times = calloc(t->o.reps, sizeof *r.times);
    oxide_status st =
        r.ev && r.times ? OXIDE_OK : oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "oxide_autotune_launch: out of memory");
    for (uint32_t i = 0; i <= t->o.reps && !st; i++)
        st = oxide_event_create(dev, 0, &r.ev[i]);
    if (!st)
        st = save_outputs(t, stream, dev, args, nargs, &sv);
    if (!st)
        st = time_all(&r, target, grids, ngrids, &sv, &timed);
    if (!st)
        st = put_back(stream, dev, &sv);
    if (!st && stream)
        st = oxide_stream_synchronize(stream); /* the saved copies are freed below */
    else if (!st)
        st = oxide_device_synchronize(dev);
    saved_free(&sv);
    for (uint32_t i = 0; r.ev && i <= t->o.reps; i++)
        oxide_event_destroy(r.ev[i]);
    free(r.ev);
    free(r.times);
    if (st)
        return st;
    size_t best = 0;
    bool have = false;
    for (size_t i = 0; i < t->n; i++)
        if (t->cfg[i].ms >= 0 && (!have || t->cfg[i].ms < t->cfg[best].ms))
            best = i, have = true;
    make_report(t, best, have);
    t->last.timed = timed;
    if (!have)
        return all_failed(t);
    *winner = best;
    return OXIDE_OK;
}
