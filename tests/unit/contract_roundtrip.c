/* Launch contracts (lib/contract.c): random contracts written into a manifest (the internal
 * writer, lib/manifest_write.c) come back from the reader field for field; malformed ones are
 * refused naming the field; and the launch check agrees with this file's own reading of the
 * rules (docs/runtime.md, "Launch contracts") on random shapes, its messages naming the kernel,
 * the field and the value given. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llvm.h"
#include "rt_manifest.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(uint32_t n) { /* 0..n-1 */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 16) % n);
}

/* A contract that keeps every rule, with a random subset of fields. */
static oxide_launch_contract random_contract(void) {
    oxide_launch_contract c = {.fields = next(32)};
    c.domain = 1 + next(3);
    static const uint32_t shapes[][3] = {{256, 1, 1}, {32, 1, 1}, {1024, 1, 1}, {16, 16, 1}, {32, 8, 1}, {8, 8, 4}};
    size_t pick = c.domain == 1 ? next(3) : c.domain == 2 ? 3 + next(2) : 3 + next(3);
    if (!(c.fields & OXIDE_CONTRACT_DOMAIN))
        pick = next(6), c.domain = 0;
    if (c.fields & OXIDE_CONTRACT_BLOCK)
        memcpy(c.block, shapes[pick], sizeof c.block);
    if (c.fields & OXIDE_CONTRACT_SMEM) {
        c.smem_min = next(2) ? 0 : 1 + next(4096);
        c.smem_max = c.smem_min + (next(2) ? 0 : next(100000));
    }
    if (c.fields & OXIDE_CONTRACT_SMEM_ALIGN)
        c.smem_align = 1u << next(13);
    if (c.fields & OXIDE_CONTRACT_MIN_CC)
        c.min_cc[0] = 1 + next(12), c.min_cc[1] = next(10);
    return c;
}

static void test_roundtrip(void) {
    oxide_iface_param p = {.name = "x", .kind = OXIDE_PARAM_SCALAR, .scalar = OXIDE_SCALAR_F32, .size = 4, .align = 4};
    oxide_options opts = {.target = "sm_90a"};
    for (int round = 0; round < 2000; round++) {
        oxide_iface_kernel ks[2] = {{.name = "k", .entry = "k", .params = &p, .nparams = 1},
                                    {.name = "plain", .entry = "plain", .params = &p, .nparams = 1}};
        ks[0].contract = random_contract();
        char why[200];
        CHECK(!oxide__contract_invalid(&ks[0].contract, why, sizeof why), "%s", why);
        char *line = oxide__manifest_json(&opts, ks, 2);
        oxide_manifest *m = NULL;
        CHECK(line && oxide_manifest_parse(line, strlen(line), &m) == OXIDE_OK, "%s: %s", line, oxide_last_error());
        oxide_launch_contract got[2] = {{0}}, none = {0};
        if (m) {
            CHECK(oxide_manifest_kernel_contract(m, 0, &got[0]) == OXIDE_OK);
            CHECK(oxide_manifest_kernel_contract(m, 1, &got[1]) == OXIDE_OK);
            CHECK(oxide_manifest_kernel_contract(m, 2, &got[1]) == OXIDE_ERROR_INVALID_ARGUMENT);
        }
        /* only the declared fields travel: compare those */
        oxide_launch_contract want = ks[0].contract;
        if (!(want.fields & OXIDE_CONTRACT_DOMAIN))
            want.domain = 0;
        CHECK(!memcmp(&got[0], &want, sizeof want), "round %d: %s", round, line);
        CHECK(!memcmp(&got[1], &none, sizeof none) && (!want.fields || strstr(line, "\"contract\":{")));
        oxide_manifest_destroy(m);
        free(line);
    }
}

static void test_malformed(void) {
    static const struct {
        const char *contract, *want;
    } bad[] = {
        {"{\"domain\":4}", "kernel 'scale' has a \"contract\" with domain = 4"},
        {"{\"domain\":1,\"block\":[16,16,1]}", "more dimensions than domain = 1"},
        {"{\"block\":[2048,1,1]}", "block = (2048, 1, 1)"},
        {"{\"block\":[0,1,1]}", "none of 0"},
        {"{\"block\":[65536,65536,1]}", "1 to 1024 threads"},
        {"{\"dynamic_shared\":[9,2]}", "dynamic_shared_range = (9, 2)"},
        {"{\"dynamic_shared_alignment\":48}", "dynamic_shared_alignment = 48"},
        {"{\"dynamic_shared_alignment\":0}", "power of two"},
        {"{\"min_compute_capability\":[9,12]}", "min_compute_capability = (9, 12)"},
        {"{\"domain\":1,\"domain\":2}", "duplicate key \"domain\""},
        {"{\"block\":[1,1]}", "array of 3 integers"},
        {"[1]", "expected '{'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "// oxide.manifest.v1 {\"kernels\":[{\"name\":\"scale\",\"params\":[],\"contract\":%s}]}\n",
                 bad[i].contract);
        oxide_manifest *m = NULL;
        oxide_status st = oxide_manifest_parse(text, strlen(text), &m);
        CHECK(st == OXIDE_ERROR_MANIFEST && strstr(oxide_last_error(), bad[i].want) && !m, "%s: %s: %s",
              bad[i].contract, oxide_status_name(st), oxide_last_error());
    }
    /* unknown keys inside a contract are skipped, as everywhere in the manifest */
    const char *ok = "// oxide.manifest.v1 {\"kernels\":[{\"name\":\"k\",\"params\":[],\"contract\":{\"domain\":2,"
                     "\"future\":[1,{\"x\":2}]}}]}\n";
    oxide_manifest *m = NULL;
    oxide_launch_contract c;
    CHECK(oxide_manifest_parse(ok, strlen(ok), &m) == OXIDE_OK, "%s", oxide_last_error());
    CHECK(m && oxide_manifest_kernel_contract(m, 0, &c) == OXIDE_OK && c.fields == OXIDE_CONTRACT_DOMAIN &&
          c.domain == 2);
    CHECK(oxide_manifest_kernel_contract(NULL, 0, &c) == OXIDE_ERROR_INVALID_ARGUMENT);
    CHECK(oxide_manifest_kernel_contract(m, 0, NULL) == OXIDE_ERROR_INVALID_ARGUMENT);
    oxide_manifest_destroy(m);
}

/* This test's reading of the rules: which field a shape breaks first, or NULL. */
static const char *reference(const oxide_launch_contract *c, const uint32_t g[3], const uint32_t b[3], uint32_t smem,
                             int major, int minor) {
    if ((c->fields & OXIDE_CONTRACT_BLOCK) && (b[0] != c->block[0] || b[1] != c->block[1] || b[2] != c->block[2]))
        return "block = (";
    if ((c->fields & OXIDE_CONTRACT_DOMAIN) && c->domain == 1 && (g[1] != 1 || g[2] != 1 || b[1] != 1 || b[2] != 1))
        return "domain = 1";
    if ((c->fields & OXIDE_CONTRACT_DOMAIN) && c->domain == 2 && (g[2] != 1 || b[2] != 1))
        return "domain = 2";
    if ((c->fields & OXIDE_CONTRACT_SMEM) && (smem < c->smem_min || smem > c->smem_max))
        return c->smem_min == c->smem_max ? "dynamic_shared = " : "dynamic_shared_range = (";
    if ((c->fields & OXIDE_CONTRACT_MIN_CC) && major * 10 + minor < (int)c->min_cc[0] * 10 + (int)c->min_cc[1])
        return "min_compute_capability = (";
    return NULL;
}

static void test_check_agrees(void) {
    int refused = 0, kept = 0;
    for (int round = 0; round < 20000; round++) {
        oxide_launch_contract c = random_contract();
        uint32_t g[3] = {1 + next(100), next(2) ? 1 : 1 + next(4), next(3) ? 1 : 1 + next(3)};
        uint32_t b[3] = {c.block[0] && next(2) ? c.block[0] : 1 + next(512), next(2) ? 1 : 1 + next(16),
                         next(3) ? 1 : 1 + next(4)};
        if ((c.fields & OXIDE_CONTRACT_BLOCK) && next(2))
            memcpy(b, c.block, sizeof b);
        uint32_t smem = next(2) ? c.smem_min + next(c.smem_max - c.smem_min + 1) : next(200000);
        int major = 5 + next(8), minor = (int)next(10);
        const char *want = reference(&c, g, b, smem, major, minor);
        oxide_status st = oxide__contract_check("scale", &c, g, b, smem, major, minor);
        if (want) {
            refused++;
            const char *msg = oxide_last_error();
            CHECK(st == OXIDE_ERROR_LAUNCH && strstr(msg, want) && strstr(msg, "launch scale: ") &&
                      (strstr(msg, "breaks the launch contract's") || strstr(msg, "break the launch contract's")),
                  "round %d: wanted %s, got %s: %s", round, want, oxide_status_name(st), msg);
        } else {
            kept++;
            CHECK(st == OXIDE_OK, "round %d: %s", round, oxide_last_error());
        }
    }
    CHECK(refused > 1000 && kept > 1000, "%d refused, %d kept", refused, kept);
    /* the value given is in the message */
    oxide_launch_contract c = {.fields = OXIDE_CONTRACT_SMEM, .smem_min = 512, .smem_max = 4096};
    uint32_t g[3] = {1, 1, 1}, b[3] = {64, 1, 1};
    CHECK(oxide__contract_check("k", &c, g, b, 8192, 9, 0) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "8192 bytes of dynamic shared memory break the launch contract's "
                                         "dynamic_shared_range = (512, 4096)"),
          "%s", oxide_last_error());
    c = (oxide_launch_contract){.fields = OXIDE_CONTRACT_MIN_CC, .min_cc = {10, 0}};
    CHECK(oxide__contract_check("k", &c, g, b, 0, 9, 0) == OXIDE_ERROR_LAUNCH &&
              strstr(oxide_last_error(), "compute capability 9.0 breaks the launch contract's min_compute_capability = "
                                         "(10, 0)"),
          "%s", oxide_last_error());
    char why[200];
    c = (oxide_launch_contract){.fields = 64};
    CHECK(oxide__contract_invalid(&c, why, sizeof why) && strstr(why, "unknown contract fields 0x40"));
}

int main(void) {
    test_roundtrip();
    test_malformed();
    test_check_agrees();
    return check_report("contract_roundtrip");
}
