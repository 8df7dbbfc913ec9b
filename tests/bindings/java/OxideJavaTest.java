// The SWIG-generated Java binding (bindings/swig/oxide.i): build a vecadd kernel, compile it to
// PTX, read its manifest, and check that a failing call raises OxideException with its status.
import oxide.*;

public class OxideJavaTest {
    static int failures = 0;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("FAILED: " + what);
            failures++;
        }
    }

    public static void main(String[] args) {
        System.loadLibrary("oxide_java");
        check(oxide.oxj_version().equals("0.1.0"), "version");
        SWIGTYPE_p_oxide_context ctx = oxide.oxj_context_create();
        SWIGTYPE_p_oxide_type f32 = oxide.oxj_type_scalar(ctx, oxide_type_kind.OXIDE_TYPE_F32);
        SWIGTYPE_p_oxide_type i64 = oxide.oxj_type_scalar(ctx, oxide_type_kind.OXIDE_TYPE_I64);
        SWIGTYPE_p_oxide_module m = oxide.oxj_module_create(ctx, "vecadd");
        SWIGTYPE_p_oxide_function k = oxide.oxj_add_kernel(m, "vecadd");
        oxj_slice a = oxide.oxj_slice_param(k, "a", oxide_scalar.OXIDE_SCALAR_F32, 0);
        oxj_slice b = oxide.oxj_slice_param(k, "b", oxide_scalar.OXIDE_SCALAR_F32, 0);
        oxj_slice out = oxide.oxj_slice_param(k, "out", oxide_scalar.OXIDE_SCALAR_F32, 1);
        SWIGTYPE_p_oxide_block entry = oxide.oxj_add_block(k), body = oxide.oxj_add_block(k),
                               done = oxide.oxj_add_block(k);
        int none = -1;
        SWIGTYPE_p_oxide_value tid = oxide.oxj_op(entry, oxide_op.OXIDE_OP_TID_X, null, null, null, null, none, 0);
        SWIGTYPE_p_oxide_value i = oxide.oxj_op(entry, oxide_op.OXIDE_OP_ZEXT, tid, null, null, i64, none, 0);
        SWIGTYPE_p_oxide_value c = oxide.oxj_op(entry, oxide_op.OXIDE_OP_ICMP, i, out.getLen(), null, null,
                                                oxide_attr_key.OXIDE_ATTR_PRED.swigValue(),
                                                oxide_pred.OXIDE_PRED_ULT.swigValue());
        oxide.oxj_cond_br(entry, c, body, done);
        SWIGTYPE_p_oxide_value x = oxide.oxj_op(body, oxide_op.OXIDE_OP_LOAD, oxide.oxj_offset(body, a.getPtr(), i, f32),
                                                null, null, f32, oxide_attr_key.OXIDE_ATTR_ALIGN.swigValue(), 4);
        SWIGTYPE_p_oxide_value y = oxide.oxj_op(body, oxide_op.OXIDE_OP_LOAD, oxide.oxj_offset(body, b.getPtr(), i, f32),
                                                null, null, f32, oxide_attr_key.OXIDE_ATTR_ALIGN.swigValue(), 4);
        SWIGTYPE_p_oxide_value s = oxide.oxj_op(body, oxide_op.OXIDE_OP_ADD, x, y, null, null, none, 0);
        oxide.oxj_op(body, oxide_op.OXIDE_OP_STORE, s, oxide.oxj_offset(body, out.getPtr(), i, f32), null, null,
                     oxide_attr_key.OXIDE_ATTR_ALIGN.swigValue(), 4);
        oxide.oxj_br(body, done);
        oxide.oxj_ret(done);
        oxide.oxj_verify(m);
        check(oxide.oxj_print(m).contains("kernel @vecadd"), "print");

        String ptx = oxide.oxj_compile(m, "sm_90a");
        check(ptx.contains(".entry vecadd") && ptx.contains("oxide.manifest.v1"), "compile");
        SWIGTYPE_p_oxide_manifest man = oxide.oxj_manifest_parse(ptx);
        check(oxide.oxj_manifest_target(man).equals("sm_90a"), "manifest target");
        check(oxide.oxj_manifest_kernel_count(man) == 1, "kernel count");
        check(oxide.oxj_manifest_kernel_name(man, 0).equals("vecadd"), "kernel name");
        check(oxide.oxj_manifest_param_count(man, 0) == 3, "param count");
        check(oxide.oxj_manifest_param(man, 0, 2).equals("out: slice<mut f32>"), "param 3");
        oxide.oxj_manifest_destroy(man);

        try {
            oxide.oxj_op(body, oxide_op.OXIDE_OP_RET, null, null, null, null, none, 0); // block is terminated
            check(false, "no exception");
        } catch (OxideException e) {
            check(e.statusName().equals("OXIDE_ERROR_STATE"), "status name: " + e.getMessage());
        }
        try {
            oxide.oxj_compile(m, "sm_12");
            check(false, "no exception for a bad target");
        } catch (OxideException e) {
            check(e.statusName().equals("OXIDE_ERROR_INVALID_ARGUMENT"), "bad target: " + e.getMessage());
        }
        oxide.oxj_context_destroy(ctx);
        System.out.println(failures == 0 ? "OxideJavaTest: ok (kernel built, compiled to " + ptx.length()
                                                + " bytes of PTX, manifest read)"
                                         : "OxideJavaTest: " + failures + " failures");
        System.exit(failures == 0 ? 0 : 1);
    }
}
