/* cluster_dsmem (sm_90): thread block clusters and distributed shared memory. Every block of a
 * cluster stores its slice of x in its own shared array; after a cluster barrier, the block of
 * rank 0 reads the arrays of all the cluster's blocks through cluster.map_shared and writes the
 * element-wise sum. A second cluster barrier keeps every block (and so its shared memory) alive
 * until those remote reads are done. */
#include "kbuild.h"
#include "oxide_examples.h"

#define CS OXIDE_EXAMPLE_CLUSTER_SIZE
#define T OXIDE_EXAMPLE_CLUSTER_THREADS

oxide_status oxide_example_cluster_dsmem(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "cluster_dsmem");
    oxide_value *n, *outlen;
    oxide_value *x = kb_slice_param(&b, "x", OXIDE_SCALAR_F32, 0, &n);
    oxide_value *out = kb_slice_param(&b, "out", OXIDE_SCALAR_F32, 1, &outlen);
    kb_launch_bounds(&b, T, 0);
    if (!b.st)
        b.st = oxide_kernel_set_cluster(b.fn, CS, 1, 1);
    kb_entry(&b);

    oxide_value *buf = kb_shared_array(&b, "cluster_dsmem_buf", b.f32, T, 4);
    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *gid = kb_global_id_x(&b);
    oxide_value *mine = kb_gep(&b, buf, tid, b.f32);

    /* v = gid < len(x) ? x[gid] : 0 */
    oxide_value *v;
    oxide_block *ld = kb_block(&b, 0, NULL, NULL), *have = kb_block(&b, 1, &b.f32, &v);
    oxide_value *fzero = kb_f32(&b, 0.0);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, gid, n), ld, NULL, 0, have, &fzero, 1);
    kb_set(&b, ld);
    oxide_value *xv = kb_load(&b, b.f32, kb_gep(&b, x, gid, b.f32), 4);
    kb_br(&b, have, &xv, 1);

    kb_set(&b, have);
    kb_store(&b, v, mine, 4);
    kb_void(&b, OXIDE_OP_CLUSTER_SYNC);
    oxide_block *lead = kb_block(&b, 0, NULL, NULL), *write = kb_block(&b, 0, NULL, NULL);
    oxide_block *fin = kb_block(&b, 0, NULL, NULL);
    oxide_value *rank = kb_op0(&b, OXIDE_OP_CLUSTER_CTARANK);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_EQ, rank, kb_i32(&b, 0)), lead, NULL, 0, fin, NULL, 0);

    kb_set(&b, lead);
    /* mapa takes a generic address of this block's shared variable and gives the generic
     * address of the same variable in block `r` of the cluster. */
    oxide_value *gmine = kb_cast(&b, OXIDE_OP_ADDRSPACECAST, mine, b.ptr);
    oxide_value *sum = fzero;
    for (int r = 0; r < CS; r++) {
        oxide_value *ops[2] = {gmine, kb_i32(&b, r)};
        oxide_value *remote = kb_op(&b, OXIDE_OP_MAP_SHARED, ops, 2, NULL, NULL, 0);
        sum = kb_op2(&b, OXIDE_OP_ADD, sum, kb_load(&b, b.f32, remote, 4));
    }
    oxide_value *o = kb_op2(
        &b, OXIDE_OP_ADD,
        kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_CLUSTERID_X), b.i64), kb_i64(&b, T)),
        kb_cast(&b, OXIDE_OP_ZEXT, tid, b.i64));
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, o, outlen), write, NULL, 0, fin, NULL, 0);
    kb_set(&b, write);
    kb_store(&b, sum, kb_gep(&b, out, o, b.f32), 4);
    kb_br(&b, fin, NULL, 0);

    kb_set(&b, fin);
    kb_void(&b, OXIDE_OP_CLUSTER_SYNC);
    kb_ret(&b);
    return kb_end(&b);
}
