/* The general path's dot operands in shared memory (docs/tile.md, "Dot"), read off the PTX: a
 * dot whose A and B are loads with rows of whole 128-byte atoms takes them with cp.async into
 * swizzled tiles and ldmatrix (A) / ldmatrix.trans (B), in a ring as deep as the stages hint and
 * the target's shared memory allow; other dots keep the scratch copy. The results are checked
 * in the SIMT interpreter by difftile_dot_simt (oxide-difftest --tile --dot --simt) and on the
 * GPU by difftile_dot_gpu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static oxide_context *ctx;

static int occurrences(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* examples/tile/NAME.oxir with every "from" replaced by "to" (NULL: as it is), compiled for
 * target; the occurrences of what in the PTX, or -1 when it does not compile. */
static int in_ptx(const char *name, const char *from, const char *to, const char *target, const char *what) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/tile/%s.oxir", OXIDE_SOURCE_DIR, name);
    size_t len;
    char *text = check_read_file(path, &len), *at;
    CHECK(text != NULL, "cannot read %s", path);
    if (!text)
        return -1;
    while (from && (at = strstr(text, from)) != NULL) /* same length: in place */
        memcpy(at, to, strlen(to));
    oxide_module *m = NULL;
    oxide_options *o = NULL;
    const char *ptx = NULL;
    size_t n;
    int r = -1;
    if (oxide_module_parse(ctx, text, len, &m) == OXIDE_OK && oxide_options_create(&o) == OXIDE_OK &&
        oxide_options_set_target(o, target) == OXIDE_OK && oxide_module_compile(m, o, &ptx, &n) == OXIDE_OK)
        r = occurrences(ptx, what);
    CHECK(r >= 0, "%s for %s does not compile", name, target);
    oxide_options_destroy(o);
    oxide_module_destroy(m);
    free(text);
    return r;
}

int main(void) {
    MUST(oxide_context_create(&ctx));
    const char *big = "matmul_bf16_128";
    /* sm_80: 163 KiB of shared memory holds a ring of two 128x64 + 64x128 stages (three would
     * take more than half of it); the dot waits for its own stage's two copies */
    CHECK(in_ptx(big, NULL, NULL, "sm_80", "cp.async.cg.shared.global") > 0);
    CHECK(in_ptx(big, NULL, NULL, "sm_80", "cp.async.wait_group \t2;") == 1);
    CHECK(in_ptx(big, NULL, NULL, "sm_80", "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
    CHECK(in_ptx(big, NULL, NULL, "sm_80", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") > 0);
    /* sm_89's 99 KiB: single tiles, copied in the loop and waited for at once */
    CHECK(in_ptx(big, NULL, NULL, "sm_89", "cp.async.cg.shared.global") > 0);
    CHECK(in_ptx(big, NULL, NULL, "sm_89", "cp.async.wait_group \t2;") == 0);
    /* the stages hint 1: no ring anywhere */
    CHECK(in_ptx(big, "stages=3", "stages=1", "sm_80", "cp.async.wait_group \t2;") == 0);
    CHECK(in_ptx(big, "stages=3", "stages=1", "sm_80", "cp.async.cg.shared.global") > 0);
    /* A with 32 columns of bf16 (64-byte rows) is no whole atom: the scratch copy, no cp.async */
    CHECK(in_ptx("matmul_bf16", NULL, NULL, "sm_80", "cp.async") == 0);
    CHECK(in_ptx("matmul_bf16", NULL, NULL, "sm_80", "ldmatrix") > 0);
    /* pad 1 cannot come from a zero-filling copy */
    CHECK(in_ptx(big, "{pad=0} : tile<64x128", "{pad=1} : tile<64x128", "sm_80", "cp.async") == 0);
    oxide_context_destroy(ctx);
    return check_report("test_tile_mma_smem");
}
