/* The manifest writer (lib/manifest_write.c, internal) read back by the reader: tensor
 * parameters (element, rank, mutability), a kernel's block, and every earlier kind beside them.
 * Tile kernels are not lowered yet, so no public call writes a tensor parameter; this test
 * compiles the writer in and hands it kernel interfaces directly. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "llvm.h"
#include "rt_manifest.h"

static void test_tensor_kernel(void) {
    oxide_iface_param ps[4] = {
        {.name = "a", .kind = OXIDE_PARAM_TENSOR, .rank = 2, .elem = OXIDE_SCALAR_F8E5M2},
        {.name = "n", .kind = OXIDE_PARAM_SCALAR, .scalar = OXIDE_SCALAR_I32, .size = 4, .align = 4},
        {.name = "c", .kind = OXIDE_PARAM_TENSOR, .rank = 4, .elem = OXIDE_SCALAR_BF16, .is_mutable = true},
        {.name = "s", .kind = OXIDE_PARAM_SLICE, .scalar = OXIDE_SCALAR_F32, .is_mutable = true},
    };
    oxide_iface_kernel ks[2] = {
        {.name = "mm", .entry = "mm", .params = ps, .nparams = 4, .block = {256, 0, 0}},
        {.name = "plain", .entry = "plain_e", .params = ps + 1, .nparams = 1},
    };
    oxide_options opts = {.target = "sm_90a"};
    char *line = oxide__manifest_json(&opts, ks, 2);
    CHECK(line != NULL);
    if (!line)
        return;
    CHECK(strstr(line, "{\"name\":\"a\",\"kind\":\"tensor\",\"elem\":\"f8e5m2\",\"rank\":2,\"mut\":false}") != NULL,
          "%s", line);
    CHECK(strstr(line, "\"dyn_smem\":0,\"block\":[256,1,1]}") != NULL, "%s", line);
    CHECK(strstr(line, "\"plain_e\"") && !strstr(strstr(line, "\"plain_e\""), "block"), "%s", line);
    oxide_manifest *m = NULL;
    CHECK(oxide_manifest_parse(line, strlen(line), &m) == OXIDE_OK, "%s", oxide_last_error());
    if (m) {
        const oxide_iface_kernel *k = &m->kernels[0];
        CHECK(m->nkernels == 2 && k->nparams == 4);
        /* PTX parameters: a (1 + 2*2), n (1), c (1 + 2*4), s (2) */
        CHECK(k->nptx == 5 + 1 + 9 + 2 && k->params[1].first_value == 5 && k->params[2].first_value == 6 &&
              k->params[3].first_value == 15);
        CHECK(k->params[0].kind == OXIDE_PARAM_TENSOR && k->params[0].rank == 2 &&
              k->params[0].elem == OXIDE_SCALAR_F8E5M2 && !k->params[0].is_mutable);
        CHECK(k->params[2].rank == 4 && k->params[2].elem == OXIDE_SCALAR_BF16 && k->params[2].is_mutable);
        CHECK(k->params[1].rank == 0 && k->params[3].rank == 0);
        CHECK(k->block[0] == 256 && k->block[1] == 1 && k->block[2] == 1);
        CHECK(!m->kernels[1].block[0] && !strcmp(m->kernels[1].entry, "plain_e"));
        oxide_manifest_destroy(m);
    }
    free(line);
}

int main(void) {
    test_tensor_kernel();
    return check_report("manifest_roundtrip");
}
