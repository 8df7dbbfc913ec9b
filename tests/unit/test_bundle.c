/* PTX bundles (include/oxide.h, oxide_ptx_bundle_select): the text chosen for a compute
 * capability agrees with this test's own reading of the rule (the arch-specific target of exactly
 * that capability, else the newest plain target at or below it) on random bundles; no runnable
 * target is UNSUPPORTED naming what the bundle carries; a malformed bundle is PARSE; plain PTX
 * passes through. Runs without a GPU. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oxide.h"

static const char *const TARGETS[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a"};
#define NT (sizeof TARGETS / sizeof TARGETS[0])

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t next(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 16) % n);
}

/* The bundle of the targets whose bit is set, each text naming its target (in texts[i]). */
static char *make(unsigned set, char texts[NT][64]) {
    static char buf[4096];
    char head[512] = "// oxide.ptx-bundle.v1 ", body[2048] = "";
    for (size_t i = 0; i < NT; i++) {
        if (!(set & 1u << i))
            continue;
        snprintf(texts[i], 64, ".version 8.0\n.target %s\n// filler %u\n", TARGETS[i], next(100000));
        size_t hl = strlen(head);
        snprintf(head + hl, sizeof head - hl, "%s%s:%zu", hl > 23 ? " " : "", TARGETS[i], strlen(texts[i]));
        strcat(body, texts[i]);
    }
    snprintf(buf, sizeof buf, "%s\n%s", head, body);
    return buf;
}

/* This test's reading of the rule: the index of the target to choose, or -1. */
static int reference(unsigned set, int major, int minor) {
    int cc = major * 10 + minor, best = -1, best_sm = -1;
    for (size_t i = 0; i < NT; i++) {
        if (!(set & 1u << i))
            continue;
        int sm = atoi(TARGETS[i] + 3);
        bool arch = TARGETS[i][strlen(TARGETS[i]) - 1] == 'a';
        if (arch && sm == cc)
            return (int)i;
        if (!arch && sm <= cc && sm > best_sm)
            best = (int)i, best_sm = sm;
    }
    return best;
}

static void test_choice_agrees(void) {
    static const int ccs[][2] = {{7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
    int chosen = 0, refused = 0;
    for (int round = 0; round < 3000; round++) {
        unsigned set = 1 + next((1u << NT) - 1);
        char texts[NT][64];
        const char *b = make(set, texts);
        int major = ccs[round % 7][0], minor = ccs[round % 7][1];
        const char *ptx = NULL;
        size_t len = 0;
        char target[32] = "x";
        oxide_status st = oxide_ptx_bundle_select(b, strlen(b), major, minor, &ptx, &len, target, sizeof target);
        int want = reference(set, major, minor);
        if (want < 0) {
            refused++;
            CHECK(st == OXIDE_ERROR_UNSUPPORTED && strstr(oxide_last_error(), "none of which") &&
                      strstr(oxide_last_error(), "compute capability"),
                  "%s on %d.%d: %s", b, major, minor, oxide_last_error());
            continue;
        }
        chosen++;
        CHECK(st == OXIDE_OK && !strcmp(target, TARGETS[want]) && len == strlen(texts[want]) &&
                  !memcmp(ptx, texts[want], len),
              "%s on %d.%d: wanted %s, got %s (%s)", b, major, minor, TARGETS[want], target, oxide_last_error());
    }
    CHECK(chosen > 1000 && refused > 100, "%d chosen, %d refused", chosen, refused);
    /* the refusal names what the bundle carries */
    char texts[NT][64];
    const char *b = make(1u << 4 | 1u << 5, texts); /* sm_90a, sm_100a */
    const char *ptx;
    size_t len;
    CHECK(oxide_ptx_bundle_select(b, strlen(b), 8, 6, &ptx, &len, NULL, 0) == OXIDE_ERROR_UNSUPPORTED &&
              strstr(oxide_last_error(), "carries sm_90a, sm_100a") && strstr(oxide_last_error(), "add sm_86"),
          "%s", oxide_last_error());
}

static void test_plain_and_malformed(void) {
    const char *plain = ".version 8.0\n.target sm_90a\n";
    const char *ptx = NULL;
    size_t len = 0;
    char target[8] = "x";
    CHECK(oxide_ptx_bundle_select(plain, strlen(plain), 9, 0, &ptx, &len, target, sizeof target) == OXIDE_OK &&
          ptx == plain && len == strlen(plain) && !target[0]);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"// oxide.ptx-bundle.v1 sm_80:5", "no end"},
        {"// oxide.ptx-bundle.v1 sm_80:99\nshort", "run past the end"},
        {"// oxide.ptx-bundle.v1 sm_80\nx", "not TARGET:LENGTH"},
        {"// oxide.ptx-bundle.v1 \nx", "no targets"},
        {"// oxide.ptx-bundle.v1 sm_80:1 sm_90a:18446744073709551615\nxy", "run past the end"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        oxide_status st = oxide_ptx_bundle_select(bad[i].text, strlen(bad[i].text), 9, 0, &ptx, &len, NULL, 0);
        CHECK(st == OXIDE_ERROR_PARSE && strstr(oxide_last_error(), bad[i].want), "%s: %s: %s", bad[i].text,
              oxide_status_name(st), oxide_last_error());
    }
    CHECK(oxide_ptx_bundle_select(NULL, 0, 9, 0, &ptx, &len, NULL, 0) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_ptx_bundle_select(plain, 3, 9, 0, NULL, &len, NULL, 0) == OXIDE_ERROR_INVALID_ARGUMENT);
}

int main(void) {
    test_choice_agrees();
    test_plain_and_malformed();
    return check_report("test_bundle");
}
