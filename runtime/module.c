/* Loading PTX and cubins, kernel lookup by manifest name, and per-kernel resource queries.
 * Each kernel's parameter layout is computed here, once, so that launches only compare small
 * integers (bench/README.md, launch_c: at most 1.1x a raw cuLaunchKernel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define JIT_LOG_SIZE 8192

/* ---- reading a few facts from PTX text, for clear errors ---- */

/* The first line that starts (after blanks) with directive; *rest gets what follows it. */
static bool ptx_directive(const char *ptx, size_t len, const char *directive, const char **rest, size_t *rest_len) {
    size_t dl = strlen(directive);
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(ptx + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - ptx) : len;
        size_t i = pos;
        while (i < end && (ptx[i] == ' ' || ptx[i] == '\t'))
            i++;
        if (end - i > dl && !memcmp(ptx + i, directive, dl) && (ptx[i + dl] == ' ' || ptx[i + dl] == '\t')) {
            i += dl;
            while (i < end && (ptx[i] == ' ' || ptx[i] == '\t'))
                i++;
            *rest = ptx + i;
            *rest_len = end - i;
            return true;
        }
        pos = end + 1;
    }
    return false;
}

static bool ptx_version(const char *ptx, size_t len, int *major, int *minor) {
    const char *r;
    size_t n;
    if (!ptx_directive(ptx, len, ".version", &r, &n))
        return false;
    char buf[16];
    size_t m = n < sizeof buf - 1 ? n : sizeof buf - 1;
    memcpy(buf, r, m);
    buf[m] = 0;
    return sscanf(buf, "%d.%d", major, minor) == 2;
}

/* ".target sm_90a, debug" -> "sm_90a". */
static bool ptx_target(const char *ptx, size_t len, char *out, size_t size) {
    const char *r;
    size_t n;
    if (!ptx_directive(ptx, len, ".target", &r, &n))
        return false;
    size_t m = 0;
    while (m < n && m + 1 < size && (r[m] == '_' || (r[m] >= 'a' && r[m] <= 'z') || (r[m] >= '0' && r[m] <= '9')))
        m++;
    memcpy(out, r, m);
    out[m] = 0;
    return m > 3 && !memcmp(out, "sm_", 3);
}

/* An .entry of the PTX text: its name and how many .param it declares. */
typedef struct ptx_entry {
    const char *name;
    size_t len;
    uint32_t nparams;
} ptx_entry;

static int entry_cmp(const void *a, const void *b) {
    const ptx_entry *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static bool ptx_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Every .entry of the PTX, sorted by name (malloc, or NULL when there is none); false if out of
 * memory. Reading the parameter count from the text lets loading check a manifest without
 * asking the driver about parameters that do not exist (an API error that tools such as
 * compute-sanitizer report in the user's program). */
static bool ptx_entries(const char *ptx, size_t len, ptx_entry **out, size_t *count) {
    ptx_entry *e = NULL;
    size_t n = 0, cap = 0;
    static const char kw[] = ".entry";
    const size_t kl = sizeof kw - 1;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(ptx + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - ptx) : len, i = pos;
        while (i < end && (ptx[i] == ' ' || ptx[i] == '\t'))
            i++;
        const char *at = NULL;
        if (end - i >= 2 && ptx[i] == '/' && ptx[i + 1] == '/')
            at = NULL; /* a comment, such as the manifest line */
        else
            for (size_t j = i; j + kl < end && !at; j++)
                if (!memcmp(ptx + j, kw, kl) && (j == i || ptx_space(ptx[j - 1])) && ptx_space(ptx[j + kl]))
                    at = ptx + j + kl;
        pos = end + 1;
        if (!at)
            continue;
        const char *p = at, *stop = ptx + len;
        while (p < stop && ptx_space(*p))
            p++;
        const char *name = p;
        while (p < stop && !ptx_space(*p) && *p != '(' && *p != '{' && *p != ';')
            p++;
        if (p == name)
            continue;
        ptx_entry pe = {name, (size_t)(p - name), 0};
        while (p < stop && ptx_space(*p))
            p++;
        if (p < stop && *p == '(') {
            const char *close = memchr(p, ')', (size_t)(stop - p));
            if (!close)
                close = stop;
            for (const char *q = p; q + 6 <= close; q++)
                if (!memcmp(q, ".param", 6))
                    pe.nparams++, q += 5;
            pos = (size_t)(close - ptx);
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            ptx_entry *ne = realloc(e, cap * sizeof *ne);
            if (!ne) {
                free(e);
                return false;
            }
            e = ne;
        }
        e[n++] = pe;
    }
    if (n)
        qsort(e, n, sizeof *e, entry_cmp);
    *out = e;
    *count = n;
    return true;
}

static const ptx_entry *find_entry(const ptx_entry *e, size_t n, const char *name) {
    ptx_entry key = {name, strlen(name), 0};
    return n ? bsearch(&key, e, n, sizeof *e, entry_cmp) : NULL;
}

/* The newest PTX ISA each CUDA driver version accepts (from the PTX ISA release notes). */
static void max_ptx_isa(int cuda, int *major, int *minor, bool *known) {
    static const int table[][3] = {
        {11000, 7, 0}, {11010, 7, 1}, {11020, 7, 2}, {11030, 7, 3}, {11040, 7, 4}, {11050, 7, 5}, {11060, 7, 6},
        {11070, 7, 7}, {11080, 7, 8}, {12000, 8, 0}, {12010, 8, 1}, {12020, 8, 2}, {12030, 8, 3}, {12040, 8, 4},
        {12050, 8, 5}, {12060, 8, 5}, {12080, 8, 7}, {12090, 8, 8}, {13000, 9, 0}, {13010, 9, 1},
    };
    size_t n = sizeof table / sizeof table[0];
    *major = *minor = 0;
    *known = false;
    for (size_t i = 0; i < n; i++)
        if (table[i][0] <= cuda) {
            *major = table[i][1];
            *minor = table[i][2];
            *known = i + 1 < n || cuda < table[i][0] + 10;
        }
}

/* Can PTX for target run on dev? If not, a message saying why into why. */
static bool target_fits(const oxide_device *dev, const char *target, char *why, size_t size) {
    const char *p = target + 3;
    while (*p >= '0' && *p <= '9')
        p++;
    char suffix = *p;
    unsigned cc = (unsigned)(dev->cc_major * 10 + dev->cc_minor);
    bool ok = oxide__target_rank(target, dev->cc_major, dev->cc_minor) != 0;
    if (!ok)
        snprintf(why, size,
                 "the PTX targets %s, which device %d (%s, compute capability %d.%d) cannot run%s; compile for "
                 "sm_%u%s (oxide_options_set_target)",
                 target, dev->index, dev->name, dev->cc_major, dev->cc_minor,
                 suffix == 'a' ? " (arch-specific code runs only on the chip it names)" : "", cc,
                 cc == 90 || cc == 100 ? "a" : "");
    return ok;
}

/* ---- loading ---- */

/* Keeps the PTX's entries (ptx_entries' array, now lm's) with their names copied out of the
 * text, which the caller may free. */
static bool keep_entries(oxide_loaded_module *lm, ptx_entry *e, size_t n) {
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += e[i].len;
    if (!(lm->entry_names = malloc(len)))
        return false;
    for (size_t i = 0, at = 0; i < n; at += e[i].len, i++) {
        memcpy(lm->entry_names + at, e[i].name, e[i].len);
        e[i].name = lm->entry_names + at;
    }
    lm->entries = e;
    lm->nentries = n;
    return true;
}

static bool has_entry(const oxide_loaded_module *lm, const char *name) {
    return !lm->entry_names || find_entry(lm->entries, lm->nentries, name); /* not PTX: ask the driver */
}

static void free_module(oxide_loaded_module *lm) {
    if (!lm)
        return;
    free(lm->kernels);
    for (struct oxide_kernel *k = lm->extra, *n; k; k = n) {
        n = k->next;
        k->magic = 0;
        free(k);
    }
    oxide_manifest_destroy(lm->manifest);
    free(lm->jit_log);
    free(lm->entries);
    free(lm->entry_names);
    pthread_mutex_destroy(&lm->lock);
    lm->magic = 0;
    free(lm);
}

static oxide_status no_entry(const oxide_iface_kernel *mk) {
    return oxide__fail(OXIDE_ERROR_MANIFEST,
                       "the manifest names kernel '%s' with entry '%s', but the PTX has no such .entry", mk->name,
                       mk->entry);
}

static oxide_status param_count_mismatch(const oxide_iface_kernel *mk, uint32_t has) {
    return oxide__fail(OXIDE_ERROR_MANIFEST,
                       "the manifest of kernel '%s' does not match its PTX entry '%s': the manifest needs %u PTX "
                       "parameters, the entry has %u",
                       mk->name, mk->entry, mk->nptx, has);
}

/* Fill k from its manifest entry and check the manifest against the compiled entry: against
 * pe, the entry as the PTX text declares it, when the module was loaded from PTX (NULL for a
 * cubin). */
static oxide_status init_kernel(oxide_loaded_module *lm, struct oxide_kernel *k, const oxide_iface_kernel *mk,
                                const ptx_entry *pe) {
    oxide_device *dev = lm->dev;
    k->magic = RT_KERNEL;
    k->dev = dev;
    k->gen = lm->gen;
    k->lm = lm;
    k->name = mk->name;
    k->entry = mk->entry;
    k->mk = mk;
    k->nparams = mk->nparams;
    k->nptx = mk->nptx;
    memcpy(k->cluster, mk->cluster, sizeof k->cluster);
    memcpy(k->block, mk->block, sizeof k->block);
    k->dyn_smem = mk->dyn_smem;
    k->contract = mk->contract;
    if (pe && pe->nparams != mk->nptx)
        return param_count_mismatch(mk, pe->nparams);
    CUresult r = oxide__cu.ModuleGetFunction(&k->fn, lm->cu, mk->entry);
    if (r == CUDA_ERROR_NOT_FOUND)
        return no_entry(mk);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(dev, r, NULL, "looking up entry '%s'", mk->entry);
    k->params = mk->params;
    /* The driver knows the entry's real parameters (CUDA 12.4+): a manifest that disagrees
     * would make every checked launch wrong, so refuse it here. */
    if (oxide__cu.FuncGetParamInfo) {
        uint32_t j = 0;
        for (uint32_t i = 0; i < mk->nparams; i++) {
            const oxide_iface_param *prm = &mk->params[i];
            uint32_t parts = oxide__iface_ptx_parts(prm);
            for (uint32_t part = 0; part < parts; part++, j++) {
                size_t off = 0, size = 0;
                if (oxide__cu.FuncGetParamInfo(k->fn, j, &off, &size) != CUDA_SUCCESS)
                    return param_count_mismatch(mk, j);
                uint32_t want = oxide__iface_ptx_part_size(prm, part);
                /* Scalars travel in 8 zero-extended bytes, so a wider PTX parameter still gets
                 * the right value; anything else must match exactly. */
                bool fits = prm->kind == OXIDE_PARAM_SCALAR ? size >= want && size <= 8 : size == want;
                if (!fits)
                    return oxide__fail(OXIDE_ERROR_MANIFEST,
                                       "the manifest of kernel '%s' does not match its PTX entry '%s': parameter %u "
                                       "'%s' (%s) needs %u bytes, the PTX parameter has %zu",
                                       mk->name, mk->entry, i + 1, prm->name, oxide_param_kind_name(prm->kind), want,
                                       size);
            }
        }
        /* No probe past the manifest's count: asking for a parameter that does not exist is an
         * API error. Extra parameters are found in the PTX text above; a cubin's are not. */
    }
    int req[3] = {0, 0, 0};
    if (oxide__cu.FuncGetAttribute(&req[0], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, k->fn) == CUDA_SUCCESS &&
        req[0] > 0 && oxide__cu.FuncGetAttribute(&req[1], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, k->fn) == 0 &&
        oxide__cu.FuncGetAttribute(&req[2], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, k->fn) == 0) {
        bool unset = mk->cluster[0] == 1 && mk->cluster[1] == 1 && mk->cluster[2] == 1;
        if (!unset && (mk->cluster[0] != (uint32_t)req[0] || mk->cluster[1] != (uint32_t)req[1] ||
                       mk->cluster[2] != (uint32_t)req[2]))
            return oxide__fail(OXIDE_ERROR_MANIFEST,
                               "the manifest of kernel '%s' says cluster %ux%ux%u, its PTX requires %dx%dx%d", mk->name,
                               mk->cluster[0], mk->cluster[1], mk->cluster[2], req[0], req[1], req[2]);
        k->cluster_fixed = true;
        for (int d = 0; d < 3; d++)
            k->cluster[d] = (uint32_t)(req[d] > 0 ? req[d] : 1);
    }
    return OXIDE_OK;
}

/* Append up to max bytes of log to msg (where it has room), as an indented block. */
static void append_log(char *msg, size_t size, const char *title, const char *log, size_t max) {
    if (!log || !*log)
        return;
    size_t used = strlen(msg);
    if (used + 1 >= size)
        return;
    size_t n = strlen(log);
    while (n && (log[n - 1] == '\n' || log[n - 1] == ' '))
        n--;
    bool cut = n > max;
    snprintf(msg + used, size - used, "\n%s:\n%.*s%s", title, (int)(cut ? max : n), log, cut ? "\n[...]" : "");
}

static oxide_status load(oxide_device *dev, const void *image, bool is_ptx, const char *ptx, size_t ptx_len,
                         oxide_manifest *manifest, oxide_loaded_module **out) {
    const char *what = is_ptx ? "PTX" : "cubin";
    oxide_loaded_module *lm = calloc(1, sizeof *lm);
    char *info = malloc(JIT_LOG_SIZE), *error = malloc(JIT_LOG_SIZE);
    if (!lm || !info || !error) {
        free(lm), free(info), free(error);
        oxide_manifest_destroy(manifest);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
    }
    pthread_mutex_init(&lm->lock, NULL);
    lm->magic = RT_MODULE;
    lm->dev = dev;
    lm->gen = oxide__rt_gen(dev);
    lm->manifest = manifest;
    info[0] = error[0] = 0;
    /* PTX with line tables (--lineinfo: .loc directives) keeps them through the JIT, which drops
     * them unless asked, so compute-sanitizer and ncu can name the source line */
    bool lines = false;
    for (size_t i = 0; is_ptx && ptx && !lines && i + 6 <= ptx_len; i++)
        lines = ptx[i] == '\t' && !memcmp(ptx + i, "\t.loc\t", 6);
    CUjit_option opts[6] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_LOG_VERBOSE,      CU_JIT_GENERATE_LINE_INFO};
    void *vals[6] = {info,
                     (void *)(uintptr_t)JIT_LOG_SIZE,
                     error,
                     (void *)(uintptr_t)JIT_LOG_SIZE,
                     (void *)(uintptr_t)0,
                     (void *)(uintptr_t)1};
    CUresult r = oxide__cu.ModuleLoadDataEx(&lm->cu, image, lines ? 6 : 5, opts, vals);
    info[JIT_LOG_SIZE - 1] = error[JIT_LOG_SIZE - 1] = 0;
    oxide_status st = OXIDE_OK;
    if (r != CUDA_SUCCESS) {
        int vmaj = 0, vmin = 0, amaj, amin;
        bool known, has_version = is_ptx && ptx_version(ptx, ptx_len, &vmaj, &vmin);
        max_ptx_isa(oxide__cu.version, &amaj, &amin, &known);
        bool too_new = has_version && (vmaj > amaj || (vmaj == amaj && vmin > amin));
        char msg[1800];
        if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || (too_new && known)) {
            if (has_version && amaj)
                snprintf(msg, sizeof msg,
                         "load PTX on device %d (%s): PTX ISA %d.%d is newer than this driver accepts (CUDA %d.%d: "
                         "PTX ISA up to %s%d.%d); compile with --ptx-version %d.%d "
                         "(oxide_options_set_ptx_version(opts, %d, %d)) or update the driver",
                         dev->index, dev->name, vmaj, vmin, oxide__cu.version / 1000, oxide__cu.version % 1000 / 10,
                         known ? "" : "at least ", amaj, amin, amaj, amin, amaj, amin);
            else
                snprintf(msg, sizeof msg,
                         "load PTX on device %d (%s): the PTX ISA version is newer than this driver (CUDA %d.%d) "
                         "accepts; compile with an older --ptx-version or update the driver",
                         dev->index, dev->name, oxide__cu.version / 1000, oxide__cu.version % 1000 / 10);
            append_log(msg, sizeof msg, "JIT error log", error, 600);
            st = oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s", msg);
        } else if (oxide__rt_is_sticky(r) || atomic_load(&dev->failed)) {
            st = oxide__rt_cuda(dev, r, NULL, "load %s on device %d", what, dev->index);
        } else {
            char text[160];
            oxide__cuda_error_text(r, text, sizeof text);
            snprintf(msg, sizeof msg, "load %s on device %d (%s): %s", what, dev->index, dev->name, text);
            if (r == CUDA_ERROR_NO_BINARY_FOR_GPU && !is_ptx)
                snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
                         "; the image has no code for sm_%d%d (compile for it, or include PTX)", dev->cc_major,
                         dev->cc_minor);
            append_log(msg, sizeof msg, "JIT error log", error, 1200);
            st = oxide__fail(r == CUDA_ERROR_OUT_OF_MEMORY ? OXIDE_ERROR_OUT_OF_MEMORY : OXIDE_ERROR_CUDA, "%s", msg);
        }
        lm->cu = NULL;
        free_module(lm);
        free(info);
        free(error);
        return st;
    }
    free(error);
    lm->jit_log = info;
    ptx_entry *entries = NULL;
    size_t nentries = 0;
    if (is_ptx && (!ptx_entries(ptx, ptx_len, &entries, &nentries) || !keep_entries(lm, entries, nentries))) {
        free(entries);
        entries = NULL;
        st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
    }
    if (st == OXIDE_OK && manifest && manifest->nkernels) {
        lm->kernels = calloc(manifest->nkernels, sizeof *lm->kernels);
        if (!lm->kernels)
            st = oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
        for (size_t i = 0; st == OXIDE_OK && i < manifest->nkernels; i++) {
            const oxide_iface_kernel *mk = &manifest->kernels[i];
            const ptx_entry *pe = is_ptx ? find_entry(entries, nentries, mk->entry) : NULL;
            if (is_ptx && !pe)
                st = no_entry(mk);
            else
                st = init_kernel(lm, &lm->kernels[i], mk, pe);
        }
        /* a lowered tile kernel's TMA variant: another kernel of the manifest, with equal parameters */
        for (size_t i = 0; st == OXIDE_OK && i < manifest->nkernels; i++) {
            const oxide_iface_kernel *mk = &manifest->kernels[i];
            size_t j = 0;
            while (mk->tma_entry && j < manifest->nkernels && strcmp(manifest->kernels[j].entry, mk->tma_entry))
                j++;
            if (mk->tma_entry &&
                (j == manifest->nkernels || !manifest->kernels[j].tma_only ||
                 manifest->kernels[j].nptx - 3 * manifest->kernels[j].persistent != mk->nptx - 3 * mk->persistent))
                st = oxide__fail(OXIDE_ERROR_MANIFEST,
                                 "the manifest of kernel '%s' names the TMA variant '%s', which is not a TMA-only "
                                 "kernel of the module with the same parameters",
                                 mk->name, mk->tma_entry);
            else if (mk->tma_entry)
                lm->kernels[i].tma = &lm->kernels[j];
        }
    }
    if (st != OXIDE_OK) {
        oxide__cu.ModuleUnload(lm->cu);
        free_module(lm);
        return st;
    }
    *out = lm;
    return OXIDE_OK;
}

oxide_status oxide_loaded_module_load_ptx(oxide_device *dev, const char *ptx, size_t len, oxide_loaded_module **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !ptx || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_loaded_module_load_ptx: %s is NULL or invalid",
                           !ptx   ? "ptx"
                           : !out ? "out"
                                  : "dev");
    oxide_status st;
    if (oxide__is_ptx_bundle(ptx, len) &&
        (st = oxide_ptx_bundle_select(ptx, len, dev->cc_major, dev->cc_minor, &ptx, &len, NULL, 0)) != OXIDE_OK)
        return oxide__fail_prefix(st, "load PTX on device %d (%s)", dev->index, dev->name);
    oxide_manifest *m = NULL;
    st = oxide__manifest_read(ptx, len, &m);
    if (st != OXIDE_OK)
        return st;
    char target[32];
    char why[512];
    if (ptx_target(ptx, len, target, sizeof target) && !target_fits(dev, target, why, sizeof why)) {
        oxide_manifest_destroy(m);
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "load PTX on device %d: %s", dev->index, why);
    }
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK) {
        oxide_manifest_destroy(m);
        return st;
    }
    /* The driver reads PTX up to a NUL, which the caller's text need not have. */
    char *text = malloc(len + 1);
    if (!text) {
        oxide_manifest_destroy(m);
        return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
    }
    memcpy(text, ptx, len);
    text[len] = 0;
    st = load(dev, text, true, text, len, m, out);
    free(text);
    return st;
}

oxide_status oxide_loaded_module_load_cubin(oxide_device *dev, const void *image, size_t size,
                                            const char *manifest_text, size_t manifest_len, oxide_loaded_module **out) {
    if (oxide__rt_check_device(dev) != OXIDE_OK || !image || !size || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_loaded_module_load_cubin: %s is NULL or invalid",
                           !image || !size ? "image"
                           : !out          ? "out"
                                           : "dev");
    oxide_manifest *m = NULL;
    oxide_status st = OXIDE_OK;
    if (manifest_text && (st = oxide_manifest_parse(manifest_text, manifest_len, &m)) != OXIDE_OK)
        return st;
    if ((st = oxide__rt_enter(dev)) != OXIDE_OK) {
        oxide_manifest_destroy(m);
        return st;
    }
    return load(dev, image, false, NULL, 0, m, out);
}

void oxide_loaded_module_destroy(oxide_loaded_module *lm) {
    if (!lm || lm->magic != RT_MODULE)
        return;
    if (lm->gen == oxide__rt_gen(lm->dev) && oxide__rt_enter(lm->dev) == OXIDE_OK)
        OXIDE__RELAXED(oxide__cu.ModuleUnload(lm->cu));
    free_module(lm);
}

const oxide_manifest *oxide_loaded_module_manifest(const oxide_loaded_module *lm) {
    return lm && lm->magic == RT_MODULE ? lm->manifest : NULL;
}

const char *oxide_loaded_module_jit_log(const oxide_loaded_module *lm) {
    return lm && lm->magic == RT_MODULE && lm->jit_log ? lm->jit_log : "";
}

oxide_status oxide_loaded_module_get_kernel(oxide_loaded_module *lm, const char *name, oxide_kernel **out) {
    if (!lm || lm->magic != RT_MODULE || !name || !out)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_loaded_module_get_kernel: %s is NULL or invalid",
                           !name  ? "name"
                           : !out ? "out"
                                  : "lm");
    oxide_status st = oxide__rt_check_gen(lm->dev, lm->gen, "the module");
    if (st != OXIDE_OK)
        return st;
    const oxide_manifest *m = lm->manifest;
    size_t nk = m ? m->nkernels : 0;
    for (size_t i = 0; i < nk; i++)
        if (!strcmp(m->kernels[i].name, name)) {
            *out = &lm->kernels[i];
            return OXIDE_OK;
        }
    for (size_t i = 0; i < nk; i++)
        if (!strcmp(m->kernels[i].entry, name)) {
            *out = &lm->kernels[i];
            return OXIDE_OK;
        }
    /* Not in the manifest: an entry of its own (PTX from elsewhere), for raw launches. */
    pthread_mutex_lock(&lm->lock);
    for (struct oxide_kernel *k = lm->extra; k; k = k->next)
        if (!strcmp(k->entry, name)) {
            pthread_mutex_unlock(&lm->lock);
            *out = k;
            return OXIDE_OK;
        }
    if ((st = oxide__rt_enter(lm->dev)) != OXIDE_OK) {
        pthread_mutex_unlock(&lm->lock);
        return st;
    }
    CUfunction fn = NULL;
    CUresult r = has_entry(lm, name) ? oxide__cu.ModuleGetFunction(&fn, lm->cu, name) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS) {
        size_t n = strlen(name);
        struct oxide_kernel *k = calloc(1, sizeof *k + n + 1);
        if (!k) {
            pthread_mutex_unlock(&lm->lock);
            return oxide__fail(OXIDE_ERROR_OUT_OF_MEMORY, "out of memory");
        }
        char *copy = (char *)(k + 1);
        memcpy(copy, name, n + 1);
        k->magic = RT_KERNEL;
        k->dev = lm->dev;
        k->gen = lm->gen;
        k->fn = fn;
        k->lm = lm;
        k->name = k->entry = copy;
        k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
        k->next = lm->extra;
        lm->extra = k;
        pthread_mutex_unlock(&lm->lock);
        *out = k;
        return OXIDE_OK;
    }
    pthread_mutex_unlock(&lm->lock);
    if (r != CUDA_ERROR_NOT_FOUND)
        return oxide__rt_cuda(lm->dev, r, NULL, "oxide_loaded_module_get_kernel '%s'", name);
    char list[600];
    size_t used = 0;
    list[0] = 0;
    for (size_t i = 0; i < nk && used < sizeof list - 1; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", m->kernels[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (m)
        return oxide__fail(OXIDE_ERROR_NOT_FOUND, "no kernel '%s' in the module (its manifest has: %s)", name,
                           nk ? list : "no kernels");
    return oxide__fail(OXIDE_ERROR_NOT_FOUND, "no .entry '%s' in the module (it has no oxide manifest)", name);
}

/* ---- kernels ---- */

oxide_status oxide__rt_check_kernel(const struct oxide_kernel *k) {
    if (!k)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "kernel is NULL");
    if (k->magic != RT_KERNEL)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "not a kernel handle");
    return OXIDE_OK;
}

const char *oxide_kernel_name(const oxide_kernel *k) { return k && k->magic == RT_KERNEL ? k->name : ""; }

const char *oxide_kernel_entry(const oxide_kernel *k) { return k && k->magic == RT_KERNEL ? k->entry : ""; }

oxide_status oxide_kernel_native(const oxide_kernel *k, void **cu_function) {
    oxide_status st = oxide__rt_check_kernel(k);
    if (st != OXIDE_OK)
        return oxide__fail_prefix(st, "oxide_kernel_native");
    if (!cu_function)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_native: cu_function is NULL");
    *cu_function = k->fn;
    return OXIDE_OK;
}

static oxide_status enter_kernel(oxide_kernel *k, const char *fn) {
    oxide_status st = oxide__rt_check_kernel(k);
    if (st != OXIDE_OK)
        return oxide__fail_prefix(st, "%s", fn);
    if ((st = oxide__rt_check_gen(k->dev, k->gen, "the kernel")) != OXIDE_OK)
        return st;
    return oxide__rt_enter(k->dev);
}

oxide_status oxide_kernel_get_attribute(oxide_kernel *k, oxide_kernel_attr attr, int *value) {
    oxide_status st = enter_kernel(k, "oxide_kernel_get_attribute");
    if (st != OXIDE_OK)
        return st;
    if (!value)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_get_attribute: value is NULL");
    if ((unsigned)attr > OXIDE_KERNEL_MAX_DYNAMIC_SHARED_BYTES || attr == 7)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_get_attribute: unknown attribute %d", (int)attr);
    int v = 0;
    CUresult r = oxide__cu.FuncGetAttribute(&v, (int)attr, k->fn);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(k->dev, r, NULL, "oxide_kernel_get_attribute %d of '%s'", (int)attr, k->name);
    *value = v;
    return OXIDE_OK;
}

oxide_status oxide_kernel_occupancy(oxide_kernel *k, uint32_t block_threads, size_t dyn_smem, int *blocks_per_sm) {
    oxide_status st = enter_kernel(k, "oxide_kernel_occupancy");
    if (st != OXIDE_OK)
        return st;
    if (!blocks_per_sm || !block_threads)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_occupancy: %s",
                           !blocks_per_sm ? "blocks_per_sm is NULL" : "block_threads is 0");
    int n = 0;
    CUresult r = oxide__cu.OccupancyMaxActiveBlocksPerMultiprocessor(&n, k->fn, (int)block_threads, dyn_smem);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(k->dev, r, NULL, "oxide_kernel_occupancy of '%s' (%u threads, %zu bytes shared)", k->name,
                              block_threads, dyn_smem);
    *blocks_per_sm = n;
    return OXIDE_OK;
}

oxide_status oxide_kernel_suggest_block_size(oxide_kernel *k, size_t dyn_smem, int *min_grid, int *block_threads) {
    oxide_status st = enter_kernel(k, "oxide_kernel_suggest_block_size");
    if (st != OXIDE_OK)
        return st;
    if (!min_grid || !block_threads)
        return oxide__fail(OXIDE_ERROR_INVALID_ARGUMENT, "oxide_kernel_suggest_block_size: %s is NULL",
                           !min_grid ? "min_grid" : "block_threads");
    int g = 0, b = 0;
    CUresult r = oxide__cu.OccupancyMaxPotentialBlockSize(&g, &b, k->fn, NULL, dyn_smem, 0);
    if (r != CUDA_SUCCESS)
        return oxide__rt_cuda(k->dev, r, NULL, "oxide_kernel_suggest_block_size of '%s'", k->name);
    *min_grid = g;
    *block_threads = b;
    return OXIDE_OK;
}
