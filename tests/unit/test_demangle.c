/* The Rust v0 demangler (lib/demangle.c) on its own: it needs no LLVM, so the test compiles it
 * in. Known symbols, malformed and truncated ones, a small buffer, back-reference chains that
 * would take exponential time without the step budget, and random input. */
#include <string.h>
#include <time.h>

#include "harness.h"
#include "demangle.c"

static void expect(const char *sym, const char *want) {
    char buf[256];
    const char *got = oxide__demangle(sym, buf, sizeof buf);
    CHECK(got == buf && !strcmp(buf, want), "%s: got '%s', want '%s'", sym, buf, want);
}

static void test_known(void) {
    expect("_RNvCs1234_7mycrate3foo", "mycrate::foo");
    expect("_RNvNtCs1234_7mycrate7kernels6vecadd", "mycrate::kernels::vecadd");
    expect("_RINvC7mycrate3mapfE", "mycrate::map::<f32>");
    expect("_RINvC7mycrate1fTmjEE", "mycrate::f::<(u32, usize)>");
    expect("_RINvC7mycrate1fRShE", "mycrate::f::<&[u8]>");
    expect("_RINvC7mycrate1fQAhj4_E", "mycrate::f::<&mut [u8; 4]>");
    expect("_RINvC7mycrate1fB2_E", "mycrate::f::<mycrate>"); /* back-reference to the crate path */
    expect("_RNCNvC7mycrate4main0", "mycrate::main::{closure#0}");
    /* a thread_local!'s value: empty names ("0") right before a length */
    expect("_RNvNCNKNvCs5TByHw9W7WU_12thread_local5CALLS0s_023___RUST_STD_INTERNAL_VAL",
           "thread_local::CALLS::{?#0}::{closure#1}::__RUST_STD_INTERNAL_VAL");
    expect("_RNvMC7mycrateNtB2_5Thing3new", "<mycrate::Thing>::new");
    /* what is not v0 is copied */
    expect("vprintf", "vprintf");
    expect("_ZN3foo3barE", "_ZN3foo3barE");
    expect("_R", "_R");
    expect("", "");
}

static void test_malformed(void) {
    static const char *const bad[] = {
        "_RNv",    "_RNvC", "_RNvC7my", "_RINvC1a1fX", "_RB_", "_RBzzzzzzzzzzzz_", "_RNvC99999999999999999999a1f",
        "_RIC1aKh"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char buf[64];
        oxide__demangle(bad[i], buf, sizeof buf);
        CHECK(!strcmp(buf, bad[i]), "malformed %s: got '%s'", bad[i], buf);
    }
    /* every prefix of a valid symbol: either demangled or copied, always terminated */
    const char *sym = "_RINvNtCs1234_7mycrate7kernels3mapTRShQAfKj10_B8_EE";
    for (size_t n = 0; n <= strlen(sym); n++) {
        char in[128], buf[128];
        memcpy(in, sym, n);
        in[n] = 0;
        memset(buf, 'x', sizeof buf);
        oxide__demangle(in, buf, sizeof buf);
        CHECK(memchr(buf, 0, sizeof buf) != NULL, "prefix %zu not terminated", n);
    }
}

static void test_small_buffer(void) {
    char buf[8];
    oxide__demangle("_RNvNtCs1234_7mycrate7kernels6vecadd", buf, sizeof buf);
    CHECK(strlen(buf) == 7 && !strncmp(buf, "mycrate", 7), "cut at the buffer: '%s'", buf);
    char one[1] = {'x'};
    oxide__demangle("_RNvC1a1f", one, 1);
    CHECK(one[0] == 0, "a one-byte buffer holds the terminator");
}

/* Each level is a tuple of four back-references to the level before: the nesting limit alone
 * would allow 4^18 visits. */
static void test_backref_blowup(void) {
    char sym[4096] = "_RINvC1a1fT";
    size_t prev = strlen(sym) - 3; /* the first tuple, relative to after "_R" */
    strcat(sym, "hhE");
    for (int level = 0; level < 30; level++) {
        size_t at = strlen(sym) - 2;
        char ref[32];
        /* base62 of prev, then '_': the value is the digits + 1 */
        static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        uint64_t v = prev - 1;
        char tmp[16];
        int n = 0;
        do
            tmp[n++] = digits[v % 62], v /= 62;
        while (v);
        int k = 0;
        while (n)
            ref[k++] = tmp[--n];
        ref[k++] = '_';
        ref[k] = 0;
        strcat(sym, "T");
        for (int w = 0; w < 4; w++) {
            strcat(sym, "B");
            strcat(sym, ref);
        }
        strcat(sym, "E");
        prev = at;
    }
    strcat(sym, "E");
    char buf[512];
    clock_t t0 = clock();
    oxide__demangle(sym, buf, sizeof buf);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(s < 1.0, "back-reference chain took %.2f s", s);
    CHECK(strlen(buf) < sizeof buf, "terminated");
}

static void test_random(void) {
    static const char alpha[] = "_RNvCIMXYBKTSAPOQFDEGULpsCc0123456789abhjlmtxyz";
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 200000; i++) {
        char in[48] = "_R", buf[64];
        size_t n = 2 + (size_t)(i % 40);
        for (size_t j = 2; j < n; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in[j] = alpha[x % (sizeof alpha - 1)];
        }
        in[n] = 0;
        memset(buf, 'x', sizeof buf);
        oxide__demangle(in, buf, sizeof buf);
        if (!memchr(buf, 0, sizeof buf)) {
            CHECK(false, "random input %s: output not terminated", in);
            return;
        }
    }
    CHECK(true);
}

int main(void) {
    test_known();
    test_malformed();
    test_small_buffer();
    test_backref_blowup();
    test_random();
    return check_report("test_demangle");
}
