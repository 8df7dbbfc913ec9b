/* `oxide manifest`: the manifest as a listing a person reads, one kernel a block:
 *
 *   target sm_90a
 *   kernel vecadd  (entry vecadd)
 *     a      slice<f32>
 *     out    slice<mut f32>
 *     n      u64
 *     launch_bounds 256 1  cluster 1x1x1  dyn_smem 0
 *   kernel add  (entry add)
 *     x      tensor<2 x f32>
 *     z      tensor<mut 2 x f32>
 *     launch_bounds 0 0  cluster 1x1x1  dyn_smem 0
 *     block 128x1x1 (chosen by the compiler)
 */
#include "oxide_tool.h"

void oxide_tool_print_manifest(FILE *f, const oxide_manifest *m) {
    const char *target = oxide_manifest_target(m);
    fprintf(f, "target %s\n", target && *target ? target : "(unknown)");
    size_t nk = oxide_manifest_kernel_count(m);
    for (size_t k = 0; k < nk; k++) {
        const char *name = oxide_manifest_kernel_name(m, k), *entry = oxide_manifest_kernel_entry(m, k);
        fprintf(f, "kernel %s  (entry %s)\n", name ? name : "?", entry ? entry : "?");
        size_t np = oxide_manifest_param_count(m, k);
        for (size_t p = 0; p < np; p++) {
            const char *pname = NULL;
            oxide_param_kind kind = OXIDE_PARAM_SCALAR;
            oxide_scalar sc = OXIDE_SCALAR_U8;
            int mut = 0;
            uint32_t size = 0, align = 0;
            if (oxide_manifest_param(m, k, p, &pname, &kind, &sc, &mut, &size, &align)) {
                fprintf(f, "  (parameter %zu unreadable: %s)\n", p, oxide_last_error());
                continue;
            }
            const char *sname = oxide_scalar_name(sc) ? oxide_scalar_name(sc) : "?";
            fprintf(f, "  %-10s ", pname ? pname : "?");
            switch (kind) {
            case OXIDE_PARAM_SCALAR: fprintf(f, "%s\n", sname); break;
            case OXIDE_PARAM_SLICE: fprintf(f, "slice<%s%s>\n", mut ? "mut " : "", sname); break;
            case OXIDE_PARAM_PTR: fprintf(f, "ptr<%s%s>\n", mut ? "mut " : "", sname); break;
            case OXIDE_PARAM_BYTES: fprintf(f, "bytes (size %u, align %u)\n", size, align); break;
            case OXIDE_PARAM_TMA_DESC: fprintf(f, "tma_desc\n"); break;
            case OXIDE_PARAM_TENSOR: {
                uint32_t rank = 0;
                oxide_manifest_param_rank(m, k, p, &rank);
                fprintf(f, "tensor<%s%u x %s>\n", mut ? "mut " : "", rank, sname);
                break;
            }
            default: fprintf(f, "(kind %d)\n", (int)kind);
            }
        }
        uint32_t lb[2] = {0, 0}, cl[3] = {1, 1, 1}, dyn = 0;
        if (!oxide_manifest_kernel_attrs(m, k, lb, cl, &dyn))
            fprintf(f, "  launch_bounds %u %u  cluster %ux%ux%u  dyn_smem %u\n", lb[0], lb[1], cl[0], cl[1], cl[2],
                    dyn);
        uint32_t block[3] = {0, 0, 0};
        if (!oxide_manifest_kernel_block(m, k, block) && block[0])
            fprintf(f, "  block %ux%ux%u (chosen by the compiler)\n", block[0], block[1], block[2]);
    }
}
