/* tests/ir/tile/neg_min_reduce.oxir, the shape of difftile seeds 8747, 8388 and 14344 (an i32
 * tile from a negative column with pad, negated, reduced with min along each thread's
 * registers): the tile interpreter against a CPU reference on random inputs, and the PTX of every
 * target with integer negation as not + 1, never PTX neg (ptxas 13.0 on sm_90a fused
 * min(min(-a, -b), c) into a VIMNMX3 that lost a negation; the GPU side of the check is the
 * difftile_gpu_seed* tests); and a SIMT kernel whose negations LLVM makes (x * -1, 0 - x). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"

enum { ROWS = 80, COLS = 12, TILE_R = 32, TILE_C = 16, COL0 = -4, PAD = -3 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int32_t rnd_nonzero(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    int32_t v = (int32_t)(rng % 2001) - 1000;
    return v ? v : 7;
}

static void check_interpreter(oxide_module *m) {
    int32_t x[ROWS][COLS], y[96], want[96];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            x[r][c] = rnd_nonzero();
    for (int i = 0; i < 96; i++)
        y[i] = want[i] = rnd_nonzero();
    /* rows past the grid's tiles keep their fill; a tile's rows past ROWS are out of bounds */
    for (int r = 0; r < 96; r++) {
        if (r >= ROWS)
            continue;
        int32_t m = 0;
        for (int c = COL0; c < COL0 + TILE_C; c++) {
            int32_t v = c >= 0 && c < COLS ? -x[r][c] : -PAD;
            m = c == COL0 || v < m ? v : m;
        }
        want[r] = m;
    }
    oxide_tensor tx = {.struct_size = sizeof tx,
                       .data = (uint64_t)(uintptr_t)x,
                       .elem = OXIDE_SCALAR_I32,
                       .rank = 2,
                       .shape = {ROWS, COLS},
                       .strides = {COLS, 1}};
    oxide_tensor ty = {.struct_size = sizeof ty,
                       .data = (uint64_t)(uintptr_t)y,
                       .elem = OXIDE_SCALAR_I32,
                       .rank = 1,
                       .shape = {ROWS},
                       .strides = {1},
                       .is_mutable = 1};
    oxide_arg args[2] = {oxide_arg_tensor(&tx), oxide_arg_tensor(&ty)};
    uint32_t grid[3] = {(ROWS + TILE_R - 1) / TILE_R, 1, 1};
    OK(oxide_tile_interpret(m, "negmin", grid, args, 2, NULL));
    int bad = 0;
    for (int i = 0; i < 96 && bad < 5; i++)
        if (y[i] != want[i]) {
            CHECK(y[i] == want[i], "y[%d]: interpreter %d, reference %d", i, y[i], want[i]);
            bad++;
        }
    CHECK(!bad);
}

static void check_ptx(oxide_module *m, const char *target) {
    oxide_options *o;
    MUST(oxide_options_create(&o));
    OK(oxide_options_set_target(o, target));
    const char *ptx = NULL;
    size_t len = 0;
    OK(oxide_module_compile(m, o, &ptx, &len));
    if (ptx) {
        CHECK(!strstr(ptx, "neg.s32"), "%s: an integer negation is PTX neg", target);
        CHECK(strstr(ptx, "not.b32") != NULL, "%s: no not + 1 negation", target);
        CHECK(strstr(ptx, "min.s32") != NULL, "%s: no min", target);
    }
    oxide_options_destroy(o);
}

/* A SIMT kernel whose negations LLVM makes itself (x * -1, 0 - x): none may reach the PTX as neg
 * either, and min(min(-a, -b), c) must still be the min. */
static void check_llvm_negations(oxide_context *ctx) {
    static const char text[] =
        "module @m\n\nkernel @k(%x: slice<i32>, %y: slice<mut i32>) {\n^0:\n  %t = tid.x : i32\n"
        "  %i = sext %t : i64\n  %p = offset %x, %i {elem=i32} : ptr.global\n  %a = load %p : i32\n"
        "  %one = const {value=1} : i64\n  %i1 = add %i, %one : i64\n  %q = offset %x, %i1 {elem=i32} : ptr.global\n"
        "  %b = load %q : i32\n  %m1 = const {value=-1} : i32\n  %na = mul %a, %m1 : i32\n"
        "  %z = const {value=0} : i32\n  %nb = sub %z, %b : i32\n  %m = smin %na, %nb : i32\n"
        "  %m2 = smin %m, %t : i32\n  %o = offset %y, %i {elem=i32} : ptr.global\n  store %m2, %o\n  ret\n}\n";
    oxide_module *m = NULL;
    OK(oxide_module_parse(ctx, text, strlen(text), &m));
    oxide_options *o;
    MUST(oxide_options_create(&o));
    OK(oxide_options_set_target(o, "sm_90a"));
    const char *ptx = NULL;
    size_t len = 0;
    if (m)
        OK(oxide_module_compile(m, o, &ptx, &len));
    if (ptx) {
        CHECK(!strstr(ptx, "neg.s32"), "LLVM's negations reach the PTX as neg");
        CHECK(strstr(ptx, "not.b32") != NULL && strstr(ptx, "min.s32") != NULL);
    }
    oxide_options_destroy(o);
    oxide_module_destroy(m);
}

int main(void) {
    oxide_context *ctx;
    MUST(oxide_context_create(&ctx));
    size_t len;
    char *text = check_read_file(OXIDE_TEST_DATA "/ir/tile/neg_min_reduce.oxir", &len);
    CHECK(text != NULL, "cannot read neg_min_reduce.oxir");
    oxide_module *m = NULL;
    if (text)
        OK(oxide_module_parse(ctx, text, len, &m));
    if (m) {
        check_interpreter(m);
        check_ptx(m, "sm_80");
        check_ptx(m, "sm_89");
        check_ptx(m, "sm_90a");
    }
    check_llvm_negations(ctx);
    oxide_module_destroy(m);
    free(text);
    oxide_context_destroy(ctx);
    return check_report("test_tile_negmin");
}
