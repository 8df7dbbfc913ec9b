/* histogram: 256 bins over bytes. Each block counts into a shared-memory histogram with
 * block-scope atomics (cheap, and contention stays inside the SM), then adds its non-empty
 * bins to the global histogram with one device-scope atomic each. */
#include "kbuild.h"
#include "oxide_examples.h"

#define BINS OXIDE_EXAMPLE_HISTOGRAM_BINS

oxide_status oxide_example_histogram(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "histogram");
    oxide_value *n, *nbins;
    oxide_value *data = kb_slice_param(&b, "data", OXIDE_SCALAR_U8, 0, &n);
    oxide_value *bins = kb_slice_param(&b, "bins", OXIDE_SCALAR_U32, 1, &nbins);
    if (!b.st)
        b.st = oxide_kernel_set_launch_bounds(b.fn, OXIDE_EXAMPLE_HISTOGRAM_THREADS, 0);
    kb_entry(&b);

    oxide_block *start = kb_block(&b, 0, NULL, NULL), *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, nbins, kb_i64(&b, BINS)), done, NULL, 0, start, NULL, 0);

    kb_set(&b, start);
    oxide_value *hist = kb_shared_array(&b, "histogram_local", b.i32, BINS, 4);
    oxide_value *tid = kb_op0(&b, OXIDE_OP_TID_X);
    oxide_value *nt = kb_op0(&b, OXIDE_OP_NTID_X);
    oxide_value *one = kb_i32(&b, 1), *zero = kb_i32(&b, 0), *nb = kb_i32(&b, BINS);
    oxide_value *gid = kb_global_id_x(&b);
    oxide_value *stride = kb_op2(&b, OXIDE_OP_MUL, kb_cast(&b, OXIDE_OP_ZEXT, kb_op0(&b, OXIDE_OP_NCTAID_X), b.i64),
                                 kb_cast(&b, OXIDE_OP_ZEXT, nt, b.i64));

    /* for (i = tid; i < BINS; i += ntid) hist[i] = 0; */
    oxide_value *zi;
    oxide_block *zloop = kb_block(&b, 1, &b.i32, &zi);
    oxide_block *zbody = kb_block(&b, 0, NULL, NULL), *zdone = kb_block(&b, 0, NULL, NULL);
    kb_br(&b, zloop, &tid, 1);
    kb_set(&b, zloop);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, zi, nb), zbody, NULL, 0, zdone, NULL, 0);
    kb_set(&b, zbody);
    kb_store(&b, zero, kb_gep(&b, hist, zi, b.i32), 4);
    oxide_value *znext = kb_op2(&b, OXIDE_OP_ADD, zi, nt);
    kb_br(&b, zloop, &znext, 1);

    /* for (i = gid; i < n; i += stride) atomicAdd_block(&hist[data[i]], 1); */
    kb_set(&b, zdone);
    kb_barrier(&b);
    oxide_value *mi;
    oxide_block *mloop = kb_block(&b, 1, &b.i64, &mi);
    oxide_block *mbody = kb_block(&b, 0, NULL, NULL), *mdone = kb_block(&b, 0, NULL, NULL);
    kb_br(&b, mloop, &gid, 1);
    kb_set(&b, mloop);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, mi, n), mbody, NULL, 0, mdone, NULL, 0);
    kb_set(&b, mbody);
    oxide_value *byte = kb_load(&b, b.i8, kb_gep(&b, data, mi, b.i8), 1);
    oxide_value *bin = kb_cast(&b, OXIDE_OP_ZEXT, byte, b.i32);
    kb_atomic(&b, OXIDE_OP_ATOMIC_ADD, kb_gep(&b, hist, bin, b.i32), one, OXIDE_SCOPE_CTA);
    oxide_value *mnext = kb_op2(&b, OXIDE_OP_ADD, mi, stride);
    kb_br(&b, mloop, &mnext, 1);

    /* for (i = tid; i < BINS; i += ntid) if (hist[i]) atomicAdd(&bins[i], hist[i]); */
    kb_set(&b, mdone);
    kb_barrier(&b);
    oxide_value *fi;
    oxide_block *floop = kb_block(&b, 1, &b.i32, &fi);
    oxide_block *fbody = kb_block(&b, 0, NULL, NULL), *fadd = kb_block(&b, 0, NULL, NULL);
    kb_br(&b, floop, &tid, 1);
    kb_set(&b, floop);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, fi, nb), fbody, NULL, 0, done, NULL, 0);
    kb_set(&b, fbody);
    oxide_value *count = kb_load(&b, b.i32, kb_gep(&b, hist, fi, b.i32), 4);
    oxide_value *fnext = kb_op2(&b, OXIDE_OP_ADD, fi, nt);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_NE, count, zero), fadd, NULL, 0, floop, &fnext, 1);
    kb_set(&b, fadd);
    kb_atomic(&b, OXIDE_OP_ATOMIC_ADD, kb_gep(&b, bins, fi, b.i32), count, OXIDE_SCOPE_GPU);
    kb_br(&b, floop, &fnext, 1);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
