/* Built against the installed prefix (pkg-config and find_package) to prove the package works. */
#include <oxide.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    oxide_context *ctx;
    oxide_module *mod;
    oxide_function *k;
    oxide_value *a, *alen, *tid;
    oxide_block *b;
    if (oxide_context_create(&ctx) || oxide_module_create(ctx, "m", &mod) || oxide_module_add_kernel(mod, "k", &k) ||
        oxide_kernel_add_slice_param(k, "a", OXIDE_SCALAR_F32, 1, &a, &alen) ||
        oxide_function_add_block(k, NULL, 0, &b, NULL) ||
        oxide_build_op(b, OXIDE_OP_TID_X, NULL, 0, NULL, NULL, 0, &tid) ||
        oxide_build_op(b, OXIDE_OP_RET, NULL, 0, NULL, NULL, 0, NULL)) {
        fprintf(stderr, "consumer: %s\n", oxide_last_error());
        return 1;
    }
    printf("consumer: liboxide %s linked, built kernel @k\n", oxide_version());
    oxide_context_destroy(ctx);
    return strcmp(oxide_version(), "0.1.0") != 0;
}
