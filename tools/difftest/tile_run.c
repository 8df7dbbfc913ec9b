/* oxide-difftest --tile: tile programs (tile_gen.h) run in the tile interpreter
 * (oxide_tile_interpret) and, with --gpu, compiled in batches (many kernels per module, one load
 * per batch), launched with oxide_tensor arguments and compared with the interpreter: integers
 * bit for bit, floats within the tolerance the generator derived for each output tensor, any two
 * NaNs equal. Without --gpu each program is verified and interpreted twice (the runs must agree
 * bit for bit); --compile also compiles the batches to PTX. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "buf.h"
#include "driver.h"
#include "interp.h"
#include "ir.h"
#include "tile_gen.h"

typedef struct th_run {
    uint8_t *buf[TG_MAX_TENSORS]; /* each tensor's storage */
} th_run;

static double f16_value(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h >> 15 ? -v : v;
}
/* f16 bits of a normal value f16 holds exactly (the fill's values). */
static uint16_t f16_exact(float f) {
    uint32_t u = dt_b32(f);
    return (uint16_t)((u >> 16 & 0x8000) | ((((u >> 23) & 255) - 127 + 15) << 10) | (u >> 13 & 1023));
}

static double elem_value(tg_elem e, const uint8_t *p) {
    uint32_t u32;
    uint16_t u16;
    switch (e) {
    case TG_F32: memcpy(&u32, p, 4); return dt_f32(u32);
    case TG_BF16: memcpy(&u16, p, 2); return dt_f32((uint32_t)u16 << 16);
    case TG_F16: memcpy(&u16, p, 2); return f16_value(u16);
    case TG_I32: memcpy(&u32, p, 4); return (int32_t)u32;
    default: return (int8_t)p[0];
    }
}

/* Every element of every tensor's storage: floats +-k/128 (k 16..128: exact in f16 and bf16),
 * integers in the tensor's range and never 0; a pure function of the seed. */
static int fill(const tg_program *p, th_run *h) {
    uint64_t rng = p->seed ^ 0x6a09e667f3bcc909ull;
    memset(h, 0, sizeof *h);
    for (uint32_t i = 0; i < p->ntensors; i++) {
        const tg_tensor *t = &p->t[i];
        uint32_t es = tg_elem_size(t->elem);
        if (!(h->buf[i] = malloc((size_t)t->storage * es)))
            return -1;
        for (int64_t k = 0; k < t->storage; k++) {
            uint64_t r = dt_splitmix(&rng);
            uint8_t *at = h->buf[i] + k * es;
            if (tg_is_float(t->elem)) {
                float f = (float)(16 + r % 113) / 128 * (r >> 32 & 1 ? -1 : 1);
                uint32_t u = dt_b32(f);
                uint16_t b = t->elem == TG_F16 ? f16_exact(f) : (uint16_t)(u >> 16);
                memcpy(at, t->elem == TG_F32 ? (void *)&u : (void *)&b, es);
            } else {
                int64_t span = (int64_t)t->hi - (int64_t)t->lo + 1, v = (int64_t)t->lo + (int64_t)(r % (uint64_t)span);
                int32_t v32 = (int32_t)(v ? v : 1);
                int8_t v8 = (int8_t)v32;
                memcpy(at, t->elem == TG_I32 ? (void *)&v32 : (void *)&v8, es);
            }
        }
    }
    return 0;
}
static void unfill(const tg_program *p, th_run *h) {
    for (uint32_t i = 0; i < p->ntensors; i++)
        free(h->buf[i]);
}

static oxide_tensor tensor_of(const tg_tensor *t, uint64_t data) {
    static const oxide_scalar S[TG_NELEM] = {OXIDE_SCALAR_BOOL, OXIDE_SCALAR_I8,   OXIDE_SCALAR_I32,
                                             OXIDE_SCALAR_F16,  OXIDE_SCALAR_BF16, OXIDE_SCALAR_F32};
    oxide_tensor r = {.struct_size = sizeof r,
                      .data = data,
                      .byte_offset = (uint64_t)t->base * tg_elem_size(t->elem),
                      .elem = S[t->elem],
                      .rank = t->rank,
                      .is_mutable = t->kind != TG_IN};
    for (uint32_t d = 0; d < t->rank; d++)
        r.shape[d] = t->dim[d], r.strides[d] = t->stride[d];
    return r;
}

/* The kernel's arguments: tensors at data[i] (host or device addresses), then %n and %x. */
static size_t args_of(const tg_program *p, const uint64_t *data, oxide_tensor *ts, oxide_arg *args) {
    size_t n = 0;
    for (uint32_t i = 0; i < p->ntensors; i++) {
        ts[i] = tensor_of(&p->t[i], data[i]);
        args[n++] = oxide_arg_tensor(&ts[i]);
    }
    args[n++] = oxide_arg_i32(p->n);
    args[n++] = oxide_arg_f32(p->x);
    return n;
}

static char *module_text(const tg_program *const *ps, size_t n) {
    dt_buf b = {0};
    dt_buf_printf(&b, "module @tdiff\n");
    for (size_t i = 0; i < n; i++)
        dt_buf_printf(&b, "\n%s", ps[i]->text);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static void report(const tg_program *p, const char *what) {
    printf("---- tile seed %" PRIu64 ": %s\n", p->seed, what);
    if (dt_report_full())
        printf("grid=(%u,%u,%u) %%n=%d %%x=%.9g; inputs come from the seed. Rerun it alone with "
               "oxide-difftest --tile --gpu --seed %" PRIu64 " --count 1 (oxide-difftest --tile --print %" PRIu64
               " prints it)\nmodule @tdiff\n\n%s",
               p->grid[0], p->grid[1], p->grid[2], p->n, (double)p->x, p->seed, p->seed, p->text);
    fflush(stdout);
}

/* Parses p alone, verifies it and interprets it into h (filled here). Returns 0, or -1 reported. */
static int interp_one(oxide_context *ctx, const tg_program *p, th_run *h) {
    const tg_program *one[1] = {p};
    char *text = module_text(one, 1);
    oxide_module *m = NULL;
    char err[1024];
    int rc = -1;
    if (fill(p, h) || !text)
        report(p, "out of memory");
    else if (oxide_module_parse(ctx, text, strlen(text), &m) != OXIDE_OK) {
        snprintf(err, sizeof err, "generated text does not parse: %s", oxide_last_error());
        report(p, err);
    } else if (oxide_module_verify(m, NULL) != OXIDE_OK) {
        snprintf(err, sizeof err, "generated module does not verify: %s", oxide_last_error());
        report(p, err);
    } else {
        double t0 = dt_now();
        uint64_t data[TG_MAX_TENSORS];
        oxide_tensor ts[TG_MAX_TENSORS];
        oxide_arg args[TG_MAX_TENSORS + 2];
        for (uint32_t i = 0; i < p->ntensors; i++)
            data[i] = (uint64_t)(uintptr_t)h->buf[i];
        size_t n = args_of(p, data, ts, args);
        oxide_interp_options io = {sizeof io, NULL, NULL, 100000000, 256u << 20};
        if (oxide_tile_interpret(m, p->name, p->grid, args, n, &io) != OXIDE_OK) {
            snprintf(err, sizeof err, "interpreter: %s", oxide_last_error());
            report(p, err);
        } else
            rc = 0;
        dt_st.t_interp += dt_now() - t0;
    }
    oxide_module_destroy(m);
    free(text);
    return rc;
}

/* The first element of tensor t (storage index) where got is not want within t's tolerance, or -1. */
static int64_t first_difference(const tg_tensor *t, const uint8_t *want, const uint8_t *got) {
    uint32_t es = tg_elem_size(t->elem);
    for (int64_t k = 0; k < t->storage; k++) {
        if (!memcmp(want + k * es, got + k * es, es))
            continue;
        double a = elem_value(t->elem, want + k * es), b = elem_value(t->elem, got + k * es);
        if (!tg_is_float(t->elem) || isnan(a) != isnan(b) || (!isnan(a) && !(fabs(a - b) <= t->tol)))
            return k;
    }
    return -1;
}

/* Compares every output of p; reports the first difference. Returns the number of tensors that differ. */
static int compare(const tg_program *p, const th_run *want, uint8_t *const *got, const char *side) {
    int bad = 0;
    for (uint32_t i = 0; i < p->ntensors; i++) {
        const tg_tensor *t = &p->t[i];
        int64_t k = t->kind == TG_IN ? -1 : first_difference(t, want->buf[i], got[i]);
        if (k < 0)
            continue;
        uint32_t es = tg_elem_size(t->elem);
        char what[256];
        snprintf(what, sizeof what, "%%%s storage[%" PRId64 "]: interpreter %.9g, %s %.9g (tolerance %.3g)", t->name, k,
                 elem_value(t->elem, want->buf[i] + k * es), side, elem_value(t->elem, got[i] + k * es), t->tol);
        report(p, what);
        bad++;
    }
    return bad;
}

/* ---- --simt: the lowered program in the SIMT reference interpreter ---- */

static const char *const simt_targets[] = {"sm_80", "sm_89", "sm_90a"};
static uint64_t simt_runs, simt_unmodelled;
static char simt_first_unmodelled[1200];

/* The lowered kernel on a fresh fill of p's tensors, into h. Returns dt_interp_run's status (err
 * says why), or -1 with err set when the lowering fails. */
static int simt_run(oxide_context *ctx, const tg_program *p, const char *target, th_run *h, char *err, size_t errlen) {
    const tg_program *one[1] = {p};
    char *text = module_text(one, 1);
    oxide_module *m = NULL, *low = NULL;
    oxide_options *o = NULL;
    int rc = -1;
    dt_buffer bufs[TG_MAX_TENSORS] = {0};
    if (fill(p, h) || !text || oxide_module_parse(ctx, text, strlen(text), &m) || oxide_options_create(&o) ||
        oxide_options_set_target(o, target) || oxide_module_lower_tile(m, o, &low)) {
        snprintf(err, errlen, "lowering for %s: %s", target, oxide_last_error());
        goto out;
    }
    oxide_function *fn = NULL;
    for (uint32_t i = 0; i < low->functions.len && !fn; i++)
        if (!strcmp(((oxide_function *)low->functions.items[i])->name, p->name))
            fn = low->functions.items[i];
    dt_arg args[TG_MAX_TENSORS + 2];
    size_t n = 0;
    for (uint32_t i = 0; fn && i < p->ntensors; i++) {
        const tg_tensor *t = &p->t[i];
        uint32_t es = tg_elem_size(t->elem);
        bufs[i] = (dt_buffer){h->buf[i], (uint64_t)t->storage, es, calloc((size_t)t->storage + 1, 1)};
        if (!bufs[i].tol)
            fn = NULL;
        args[n++] = (dt_arg){.is_buffer = 1,
                             .buf = &bufs[i],
                             .rank = t->rank,
                             .shape = t->dim,
                             .strides = t->stride,
                             .byte_offset = (uint64_t)t->base * es};
    }
    if (!fn) {
        snprintf(err, errlen, "lowering for %s: no kernel %s, or out of memory", target, p->name);
        goto out;
    }
    args[n++] = (dt_arg){.bits = (uint32_t)p->n};
    args[n++] = (dt_arg){.bits = dt_b32(p->x)};
    dt_launch L = {.grid = {p->grid[0], p->grid[1], p->grid[2]},
                   .block = {fn->block[0], fn->block[1], fn->block[2]},
                   .dyn_smem = fn->dyn_smem,
                   .step_limit = 400000000,
                   .mem_limit = 1ull << 30,
                   .untracked_math = 1};
    rc = dt_interp_run(fn, &L, args, n, err, errlen);
out:
    for (uint32_t i = 0; i < TG_MAX_TENSORS; i++)
        free(bufs[i].tol);
    oxide_options_destroy(o);
    oxide_module_destroy(low);
    oxide_module_destroy(m);
    free(text);
    return rc;
}

/* p lowered for each of simt_targets and run by the SIMT interpreter, compared with the tile
 * interpreter's results want. A program using what that interpreter does not model is counted
 * (simt_unmodelled), not failed. Returns the number of mismatches and errors (reported). */
static int simt_check(oxide_context *ctx, const tg_program *p, const th_run *want) {
    int bad = 0;
    for (uint32_t k = 0; k < sizeof simt_targets / sizeof *simt_targets; k++) {
        th_run h;
        char err[1024], side[64];
        double t0 = dt_now();
        int rc = simt_run(ctx, p, simt_targets[k], &h, err, sizeof err);
        dt_st.t_simt += dt_now() - t0;
        simt_runs++;
        if (rc == -2) {
            if (!simt_unmodelled++)
                snprintf(simt_first_unmodelled, sizeof simt_first_unmodelled, "seed %" PRIu64 " %s: %s", p->seed,
                         simt_targets[k], err);
        } else if (rc) {
            char what[1100];
            snprintf(what, sizeof what, "SIMT interpreter (%s): %s", simt_targets[k], err);
            report(p, what);
            bad++;
        } else {
            snprintf(side, sizeof side, "SIMT interpreter (%s)", simt_targets[k]);
            bad += compare(p, want, h.buf, side) != 0;
        }
        unfill(p, &h);
    }
    return bad;
}

/* The summary line of --simt (this process's runs). */
static void simt_summary(void) {
    printf("difftile simt: %" PRIu64 " lowered runs (sm_80, sm_89, sm_90a), %" PRIu64
           " use what the SIMT interpreter does "
           "not model%s%s\n",
           simt_runs, simt_unmodelled, simt_unmodelled ? "; the first: " : "", simt_first_unmodelled);
}

static void cpu_range(oxide_context *ctx, const dt_opts *o, uint64_t first, uint32_t stride, dt_tally *t) {
    for (uint64_t i = first; i < o->count; i += stride) {
        tg_program p;
        char name[32];
        snprintf(name, sizeof name, "k%" PRIu64, o->seed + i);
        double t0 = dt_now();
        if ((o->dot ? tg_generate_dot : tg_generate)(o->seed + i, name, &p)) {
            t->errors++;
            continue;
        }
        dt_st.t_gen += dt_now() - t0;
        t->programs++;
        th_run a, b;
        memset(&b, 0, sizeof b);
        if (interp_one(ctx, &p, &a))
            t->errors++;
        else if (interp_one(ctx, &p, &b))
            t->errors++;
        else {
            t->mismatches += compare(&p, &a, b.buf, "second run") != 0;
            if (o->simt)
                t->mismatches += simt_check(ctx, &p, &a) != 0;
        }
        unfill(&p, &a);
        unfill(&p, &b);
        tg_program_free(&p);
    }
}

/* Compiles the batch's programs alone to find the one the lowering refuses, and reports it. */
static void blame(oxide_context *ctx, oxide_options *copts, tg_program *const *live, uint32_t n, dt_tally *t) {
    for (uint32_t i = 0; i < n; i++) {
        char *text = module_text((const tg_program *const *)&live[i], 1);
        oxide_module *m = NULL;
        const char *ptx;
        size_t len;
        if (text && oxide_module_parse(ctx, text, strlen(text), &m) == OXIDE_OK &&
            oxide_module_compile(m, copts, &ptx, &len) != OXIDE_OK) {
            char what[1024];
            snprintf(what, sizeof what, "does not compile: %s", oxide_last_error());
            report(live[i], what);
            t->errors++;
        }
        oxide_module_destroy(m);
        free(text);
    }
}

/* The device side of a batch: one module, one buffer holding every program's tensors. */
static void gpu_batch(oxide_device *dev, const char *ptx, size_t ptx_len, tg_program *const *live, th_run *const *hs,
                      uint32_t n, dt_tally *t) {
    double t0 = dt_now();
    oxide_loaded_module *lm = NULL;
    oxide_buffer *buf = NULL;
    size_t total = 0, (*off)[TG_MAX_TENSORS] = calloc(n, sizeof *off);
    uint8_t *img = NULL;
    for (uint32_t i = 0; off && i < n; i++)
        for (uint32_t k = 0; k < live[i]->ntensors; k++) {
            off[i][k] = total;
            total += ((size_t)live[i]->t[k].storage * tg_elem_size(live[i]->t[k].elem) + 255) & ~(size_t)255;
        }
    if (!off || !(img = malloc(total)) || oxide_loaded_module_load_ptx(dev, ptx, ptx_len, &lm) != OXIDE_OK ||
        oxide_buffer_alloc(dev, total, &buf) != OXIDE_OK) {
        printf("---- error: tile batch from seed %" PRIu64 ": %s\n", live[0]->seed, oxide_last_error());
        t->errors += n;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        th_run fresh;
        if (fill(live[i], &fresh)) {
            unfill(live[i], &fresh);
            t->errors += n;
            goto out;
        }
        for (uint32_t k = 0; k < live[i]->ntensors; k++)
            memcpy(img + off[i][k], fresh.buf[k], (size_t)live[i]->t[k].storage * tg_elem_size(live[i]->t[k].elem));
        unfill(live[i], &fresh);
    }
    uint64_t base = oxide_buffer_ptr(buf);
    if (oxide_memcpy_htod(dev, base, img, total) != OXIDE_OK) {
        printf("---- error: copy to the device: %s\n", oxide_last_error());
        t->errors += n;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        const tg_program *p = live[i];
        uint64_t data[TG_MAX_TENSORS];
        oxide_tensor ts[TG_MAX_TENSORS];
        oxide_arg args[TG_MAX_TENSORS + 2];
        for (uint32_t k = 0; k < p->ntensors; k++)
            data[k] = base + off[i][k];
        size_t na = args_of(p, data, ts, args);
        oxide_kernel *k;
        if (oxide_loaded_module_get_kernel(lm, p->name, &k) != OXIDE_OK ||
            oxide_kernel_launch(k, NULL, p->grid, NULL, 0, args, na) != OXIDE_OK) {
            char what[1024];
            snprintf(what, sizeof what, "launch failed: %s", oxide_last_error());
            report(p, what);
            t->errors += n;
            goto out;
        }
    }
    if (oxide_device_synchronize(dev) != OXIDE_OK || oxide_memcpy_dtoh(dev, img, base, total) != OXIDE_OK) {
        printf("---- error: tile batch from seed %" PRIu64 " faulted on the GPU: %s\n", live[0]->seed,
               oxide_last_error());
        t->errors += n;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *got[TG_MAX_TENSORS];
        for (uint32_t k = 0; k < live[i]->ntensors; k++)
            got[k] = img + off[i][k];
        t->mismatches += compare(live[i], hs[i], got, "gpu") != 0;
    }
out:
    dt_st.t_gpu += dt_now() - t0;
    free(off);
    free(img);
    oxide_buffer_free(buf);
    oxide_loaded_module_destroy(lm);
}

/* One batch: generate and interpret each program, compile the ones that ran into one module,
 * then (dev) run and compare. */
static void batch(oxide_context *ctx, const dt_opts *o, oxide_options *copts, oxide_device *dev, uint64_t first,
                  uint32_t n, tg_program *ps, th_run *hs, dt_tally *t) {
    tg_program *live[n];
    th_run *lh[n];
    uint32_t nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%" PRIu64, first + i);
        double t0 = dt_now();
        if ((o->dot ? tg_generate_dot : tg_generate)(first + i, name, &ps[i])) {
            t->errors++;
            continue;
        }
        dt_st.t_gen += dt_now() - t0;
        t->programs++;
        if (interp_one(ctx, &ps[i], &hs[i]))
            t->errors++;
        else {
            if (o->simt)
                t->mismatches += simt_check(ctx, &ps[i], &hs[i]) != 0;
            live[nl] = &ps[i], lh[nl++] = &hs[i];
        }
    }
    char *text = nl ? module_text((const tg_program *const *)live, nl) : NULL;
    oxide_module *m = NULL;
    const char *ptx;
    size_t ptx_len;
    double t0 = dt_now();
    if (nl && (!text || oxide_module_parse(ctx, text, strlen(text), &m) != OXIDE_OK ||
               oxide_module_compile(m, copts, &ptx, &ptx_len) != OXIDE_OK))
        blame(ctx, copts, live, nl, t);
    else if (nl) {
        dt_st.t_compile += dt_now() - t0;
        if (dev)
            gpu_batch(dev, ptx, ptx_len, live, lh, nl, t);
    }
    oxide_module_destroy(m);
    free(text);
    for (uint32_t i = 0; i < n; i++) {
        if (ps[i].text)
            unfill(&ps[i], &hs[i]);
        tg_program_free(&ps[i]);
    }
}

int dt_tile_work(oxide_context *ctx, const dt_opts *o, oxide_device *dev, uint64_t first, uint32_t stride,
                 dt_tally *t) {
    if (!dev && !o->compile) {
        cpu_range(ctx, o, first, stride, t);
        if (o->simt)
            simt_summary();
        return 0;
    }
    oxide_options *copts;
    if (oxide_options_create(&copts) != OXIDE_OK || (o->target && oxide_options_set_target(copts, o->target)) ||
        oxide_options_set_opt_level(copts, o->opt_level) != OXIDE_OK) {
        printf("---- error: options: %s\n", oxide_last_error());
        return -1;
    }
    tg_program *ps = calloc(o->batch, sizeof *ps);
    th_run *hs = calloc(o->batch, sizeof *hs);
    int rc = ps && hs ? 0 : -1;
    for (uint64_t b = first; !rc && b * o->batch < o->count; b += stride) {
        uint64_t left = o->count - b * o->batch;
        batch(ctx, o, copts, dev, o->seed + b * o->batch, (uint32_t)(left < o->batch ? left : o->batch), ps, hs, t);
    }
    free(ps);
    free(hs);
    oxide_options_destroy(copts);
    if (o->simt)
        simt_summary();
    return rc;
}

int dt_tile_print(uint64_t seed, uint64_t count, bool json, bool dot) {
    for (uint64_t i = 0; i < count; i++) {
        tg_program p;
        char name[32];
        snprintf(name, sizeof name, "k%" PRIu64, seed + i);
        if ((dot ? tg_generate_dot : tg_generate)(seed + i, name, &p))
            return 1;
        if (json)
            printf("%s\n", p.json);
        else
            printf("; tile seed %" PRIu64 ": grid=(%u,%u,%u) %%n=%d %%x=%.9g\nmodule @tdiff\n\n%s", seed + i, p.grid[0],
                   p.grid[1], p.grid[2], p.n, (double)p.x, p.text);
        tg_program_free(&p);
    }
    return 0;
}
