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
    kb_launch_bounds(&b, OXIDE_EXAMPLE_HISTOGRAM_THREADS, 0);
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
    kb_loop zl = kb_for(&b, b.i32, tid, nb, nt, NULL);
    kb_store(&b, zero, kb_gep(&b, hist, zl.i, b.i32), 4);
    kb_for_end(&b, &zl);

    /* for (i = gid; i < n; i += stride) atomicAdd_block(&hist[data[i]], 1); */
    kb_set(&b, zl.exit);
    kb_barrier(&b);
    kb_loop ml = kb_for(&b, b.i64, gid, n, stride, NULL);
    oxide_value *byte = kb_load(&b, b.i8, kb_gep(&b, data, ml.i, b.i8), 1);
    oxide_value *bin = kb_cast(&b, OXIDE_OP_ZEXT, byte, b.i32);
    kb_atomic(&b, OXIDE_OP_ATOMIC_ADD, kb_gep(&b, hist, bin, b.i32), one, OXIDE_SCOPE_CTA);
    kb_for_end(&b, &ml);

    /* for (i = tid; i < BINS; i += ntid) if (hist[i]) atomicAdd(&bins[i], hist[i]); */
    kb_set(&b, ml.exit);
    kb_barrier(&b);
    kb_loop fl = kb_for(&b, b.i32, tid, nb, nt, done);
    oxide_block *fadd = kb_block(&b, 0, NULL, NULL);
    oxide_value *count = kb_load(&b, b.i32, kb_gep(&b, hist, fl.i, b.i32), 4);
    oxide_value *fnext = kb_for_next(&b, &fl);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_NE, count, zero), fadd, NULL, 0, fl.head, &fnext, 1);
    kb_set(&b, fadd);
    kb_atomic(&b, OXIDE_OP_ATOMIC_ADD, kb_gep(&b, bins, fl.i, b.i32), count, OXIDE_SCOPE_GPU);
    kb_br(&b, fl.head, &fnext, 1);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
