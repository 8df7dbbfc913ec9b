/* vecadd: out[i] = a[i] + b[i], one element per thread. */
#include "kbuild.h"
#include "oxide_examples.h"

oxide_status oxide_example_vecadd(oxide_context *ctx, oxide_module *mod) {
    kb b;
    kb_begin(&b, ctx, mod, "vecadd");
    oxide_value *alen, *blen, *olen;
    oxide_value *a = kb_slice_param(&b, "a", OXIDE_SCALAR_F32, 0, &alen);
    oxide_value *bp = kb_slice_param(&b, "b", OXIDE_SCALAR_F32, 0, &blen);
    oxide_value *out = kb_slice_param(&b, "out", OXIDE_SCALAR_F32, 1, &olen);
    kb_entry(&b);

    /* The shortest slice bounds the work, so no slice is ever read or written past its end
     * whatever lengths the caller passes. */
    oxide_value *n = kb_op2(&b, OXIDE_OP_UMIN, kb_op2(&b, OXIDE_OP_UMIN, alen, blen), olen);
    oxide_value *i = kb_global_id_x(&b);
    oxide_block *body = kb_block(&b, 0, NULL, NULL), *done = kb_block(&b, 0, NULL, NULL);
    kb_cond_br(&b, kb_icmp(&b, OXIDE_PRED_ULT, i, n), body, NULL, 0, done, NULL, 0);

    kb_set(&b, body);
    oxide_value *x = kb_load(&b, b.f32, kb_gep(&b, a, i, b.f32), 4);
    oxide_value *y = kb_load(&b, b.f32, kb_gep(&b, bp, i, b.f32), 4);
    kb_store(&b, kb_op2(&b, OXIDE_OP_ADD, x, y), kb_gep(&b, out, i, b.f32), 4);
    kb_br(&b, done, NULL, 0);

    kb_set(&b, done);
    kb_ret(&b);
    return kb_end(&b);
}
