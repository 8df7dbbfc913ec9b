/* saxpy: y[i] = alpha * x[i] + y[i] as one fused multiply-add (what nvcc contracts it to). */
#include "kbuild.h"
#include "oxide_examples.h"

oxide_status oxide_example_saxpy(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "saxpy");
    oxide_value *xlen, *ylen;
    oxide_value *alpha = kb_scalar_param(&b, "alpha", OXIDE_SCALAR_F32);
    oxide_value *x = kb_slice_param(&b, "x", OXIDE_SCALAR_F32, 0, &xlen);
    oxide_value *y = kb_slice_param(&b, "y", OXIDE_SCALAR_F32, 1, &ylen);
    kb_entry(&b);

    oxide_value *n = kb_op2(&b, OXIDE_OP_UMIN, xlen, ylen);
    oxide_value *i = kb_global_id_x(&b);
    oxide_block *body = kb_block(&b, 0, NULL, NULL), *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, i, n), body, NULL, 0, done, NULL, 0);

    kb_set(&b, body);
    oxide_value *xi = kb_load(&b, b.f32, kb_gep(&b, x, i, b.f32), 4);
    oxide_value *yp = kb_gep(&b, y, i, b.f32);
    oxide_value *yi = kb_load(&b, b.f32, yp, 4);
    kb_store(&b, kb_op3(&b, OXIDE_OP_FMA, alpha, xi, yi), yp, 4);
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
