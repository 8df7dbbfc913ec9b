/* libFuzzer target for tile kernel text. Whatever the bytes: oxide_module_parse returns a status
 * (PARSE or OUT_OF_MEMORY with a message, or a module); an accepted module goes through
 * oxide_module_verify; one that verifies goes through oxide_module_lower_tile and
 * oxide_module_compile for sm_90a (-O1, so that a run reaches many inputs), and each of its tile
 * kernels runs in the interpreter on a grid of two program instances, with tensors of 3 elements a
 * dim and a step and memory budget small enough that an endless loop or a huge tile ends at once.
 * Every refusal must come with a message; nothing may crash, hang or leak.
 *
 * Seeds: tests/ir/tile and examples/tile (tests/fuzz/CMakeLists.txt copies them to tile-seeds/).
 * scripts/test runs it for 25 s:
 *   build-fuzz/tests/fuzz/fuzz_tile -max_total_time=25 -max_len=8192 -timeout=20 \
 *       -dict=tests/fuzz/oxir.dict build-fuzz/tile-corpus build-fuzz/tests/fuzz/tile-seeds
 * A crash leaves crash-<sha1>; replay it with build-fuzz/tests/fuzz/fuzz_tile crash-<sha1>. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oxide.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 16
#define DIM 3

static void need_message(oxide_status st) {
    if (st != OXIDE_OK && !oxide_last_error()[0])
        __builtin_trap(); /* a refusal without a message */
}

static const struct {
    const char *name;
    oxide_scalar s;
    unsigned size;
} ELEMS[] = {{"i8", OXIDE_SCALAR_I8, 1},     {"i32", OXIDE_SCALAR_I32, 4},   {"i64", OXIDE_SCALAR_I64, 8},
             {"f16", OXIDE_SCALAR_F16, 2},   {"bf16", OXIDE_SCALAR_BF16, 2}, {"f32", OXIDE_SCALAR_F32, 4},
             {"f8e4m3", OXIDE_SCALAR_U8, 1}, {"f8e5m2", OXIDE_SCALAR_U8, 1}, {"f64", OXIDE_SCALAR_F64, 8},
             {"u64", OXIDE_SCALAR_U64, 8},   {"u32", OXIDE_SCALAR_U32, 4},   {"i1", OXIDE_SCALAR_BOOL, 1},
             {"i16", OXIDE_SCALAR_I16, 2},   {"u16", OXIDE_SCALAR_U16, 2},   {"u8", OXIDE_SCALAR_U8, 1}};

static int elem_of(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof ELEMS / sizeof *ELEMS; i++)
        if (strlen(ELEMS[i].name) == n && !strncmp(ELEMS[i].name, s, n))
            return (int)i;
    return -1;
}

/* Arguments for the parameter list of a tile kernel's canonical header, "(%a: tensor<mut 2 x f32>,
 * %n: i32)": tensors of DIM elements a dim over buf, scalars 1. Returns the count, or -1 for a
 * parameter it does not know (the interpreter is then not run). */
static int make_args(const char *params, const char *end, oxide_arg *args, oxide_tensor *ts, uint8_t *buf) {
    int n = 0;
    for (const char *p = params; p < end && n < MAX_ARGS;) {
        const char *colon = strstr(p, ": "), *next = strstr(p, ", ");
        if (!colon || colon > end)
            break;
        if (!next || next > end)
            next = end;
        const char *ty = colon + 2;
        if (!strncmp(ty, "tensor<", 7)) {
            const char *t = ty + 7;
            int mut = !strncmp(t, "mut ", 4);
            t += mut ? 4 : 0;
            unsigned rank = (unsigned)strtoul(t, NULL, 10);
            const char *x = strstr(t, " x ");
            int e = x && x < next ? elem_of(x + 3, (size_t)(next - 1 - (x + 3))) : -1;
            if (e < 0 || rank < 1 || rank > 4)
                return -1;
            oxide_tensor *tv = &ts[n];
            memset(tv, 0, sizeof *tv);
            tv->struct_size = sizeof *tv;
            tv->data = (uint64_t)(uintptr_t)buf;
            tv->elem = ELEMS[e].s;
            tv->rank = rank;
            tv->is_mutable = mut;
            for (int d = (int)rank - 1, st = 1; d >= 0; st *= DIM, d--)
                tv->shape[d] = DIM, tv->strides[d] = st;
            args[n] = oxide_arg_tensor(tv);
            buf += 81 * 8; /* DIM^4 elements of up to 8 bytes */
        } else {
            int e = elem_of(ty, (size_t)(next - ty));
            if (e < 0)
                return -1;
            args[n] = ELEMS[e].s == OXIDE_SCALAR_F32   ? oxide_arg_f32(1.0f)
                      : ELEMS[e].s == OXIDE_SCALAR_F64 ? oxide_arg_scalar_bits(OXIDE_SCALAR_F64, 0x3ff0000000000000ull)
                                                       : oxide_arg_scalar_bits(ELEMS[e].s, 1);
        }
        n++;
        p = next + 2;
    }
    return n;
}

static void interpret_all(oxide_module *m) {
    const char *text;
    if (oxide_module_print(m, &text) != OXIDE_OK)
        __builtin_trap();
    static uint8_t bufs[MAX_ARGS][81 * 8];
    for (const char *at = text; (at = strstr(at, "tile_kernel @")); at++) {
        const char *name = at + 13, *open = strchr(name, '('), *close = open ? strstr(open, ") ") : NULL;
        const char *brace = close ? strstr(close, "{\n") : NULL;
        if (!close || !brace || (size_t)(open - name) >= 128)
            continue;
        if (close[2] != '{' && strncmp(close + 2, "hints(", 6))
            continue;
        char kname[128];
        memcpy(kname, name, (size_t)(open - name));
        kname[open - name] = 0;
        oxide_arg args[MAX_ARGS];
        oxide_tensor ts[MAX_ARGS];
        for (int i = 0; i < MAX_ARGS; i++)
            for (size_t k = 0; k < sizeof bufs[i]; k++)
                bufs[i][k] = (uint8_t)(k * 37 + i * 11 + 1);
        int n = make_args(open + 1, close, args, ts, &bufs[0][0]);
        if (n < 0)
            continue;
        oxide_interp_options o = {sizeof o, NULL, NULL, 200000, 8u << 20};
        uint32_t grid[3] = {2, 1, 1};
        need_message(oxide_tile_interpret(m, kname, grid, args, (size_t)n, &o));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    oxide_context *ctx;
    oxide_options *opts;
    oxide_module *m = NULL, *lowered = NULL;
    const char *text;
    if (oxide_context_create(&ctx) != OXIDE_OK || oxide_options_create(&opts) != OXIDE_OK ||
        oxide_options_set_target(opts, "sm_90a") != OXIDE_OK || oxide_options_set_opt_level(opts, 1) != OXIDE_OK)
        __builtin_trap();
    oxide_status st = oxide_module_parse(ctx, (const char *)data, size, &m);
    if (st != OXIDE_OK) {
        if ((st != OXIDE_ERROR_PARSE && st != OXIDE_ERROR_OUT_OF_MEMORY) || !oxide_last_error()[0] || m)
            __builtin_trap();
    } else if ((st = oxide_module_verify(m, opts)) != OXIDE_OK) {
        need_message(st);
    } else if (oxide_module_print(m, &text) != OXIDE_OK) {
        __builtin_trap();
    } else if (strstr(text, "tile_kernel @")) { /* SIMT-only modules are fuzz_parse's */
        st = oxide_module_lower_tile(m, opts, &lowered);
        need_message(st);
        if (st == OXIDE_OK) {
            const char *ptx;
            need_message(oxide_module_compile(m, opts, &ptx, NULL));
        }
        interpret_all(m);
    }
    oxide_options_destroy(opts);
    oxide_context_destroy(ctx); /* destroys m and lowered */
    return 0;
}
