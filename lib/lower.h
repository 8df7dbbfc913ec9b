/* What the lowering's files share: lib/lower.c (functions, blocks, terminators, globals),
 * lib/lower_ops.c (the core ops) and lib/lower_hopper.c (the tier-2 ops). Not installed. */
#ifndef OXIDE_LOWER_H
#define OXIDE_LOWER_H

#include <llvm-c/DebugInfo.h>

#include "llvm.h"

typedef struct pending_phi {
    LLVMValueRef phi;
    oxide_value *value;
    LLVMBasicBlockRef from;
} pending_phi;

typedef struct lw {
    oxide_module *mod;
    const oxide_options *opts;
    LLVMContextRef c;
    LLVMModuleRef m;
    LLVMBuilderRef b;
    LLVMTargetDataRef td;
    unsigned md_asm;
    LLVMTypeRef tvoid, ti1, ti8, ti16, ti32, ti64, tf32, tf64, tptr;
    /* current function */
    oxide_function *ofn;
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;
    pending_phi *pend;
    size_t npend, cappend;
    /* module-wide lazies */
    LLVMValueRef dyn_smem, vprintf;
    unsigned nstr;
    /* line info (opts->line_info) */
    LLVMDIBuilderRef dib;
    LLVMMetadataRef difile, disub;
    uint32_t *block_line; /* per block of ofn: line of its label in oxide_module_print's text */
    uint32_t next_fn_line;
    /* aggregate types already lowered (open addressing on the interned oxide_type): a type
     * nested n deep with shared fields is then lowered in O(n), not O(2^n) */
    struct lw_type_memo *tmemo;
    uint32_t tmemo_cap, tmemo_len;
    /* intrinsic declarations already made (lw_call_intrinsic), direct-mapped; NULL until used */
    struct lw_intrinsic *imemo;
    /* first failure */
    oxide_status st;
} lw;

/* Records the first failure (later ones are dropped) and returns L->st. */
oxide_status lw_fail(lw *L, oxide_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMTypeRef lw_type(lw *L, const oxide_type *t);
/* The fast-math flags opts ask for, on inst if it takes them. */
void lw_fp_flags(lw *L, LLVMValueRef inst);
LLVMValueRef lw_call_intrinsic(lw *L, const char *name, LLVMTypeRef *over, size_t nover, LLVMValueRef *args,
                               unsigned nargs);
LLVMValueRef lw_declare_fn(lw *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n, bool vararg);
LLVMValueRef lw_call_fn(lw *L, LLVMValueRef f, LLVMValueRef *args, unsigned n);
LLVMValueRef lw_entry_alloca(lw *L, LLVMTypeRef ty, unsigned align);
LLVMValueRef lw_to_generic(lw *L, LLVMValueRef p);
LLVMValueRef lw_global_string(lw *L, const char *s, size_t len);

/* One non-terminator instruction (lower_ops.c); its result's scratch gets the LLVM value. */
oxide_status lower_inst(lw *L, const oxide_inst *in);
/* One tier-2 op (lower_hopper.c): its LLVM value, or NULL (with L->st set on failure). */
LLVMValueRef lower_tier2(lw *L, const oxide_inst *in, LLVMValueRef *ops, unsigned n, LLVMTypeRef rt);

/* The LLVM value an oxide value was lowered to (NULL: not yet). */
static inline LLVMValueRef V(oxide_value *v) { return (LLVMValueRef)v->scratch; }
static inline unsigned natural_align(const oxide_type *t) {
    uint64_t a = oxide__type_align(t);
    return a ? (unsigned)a : 1;
}
static inline LLVMValueRef const_i32(lw *L, uint64_t v) { return LLVMConstInt(L->ti32, v, 0); }

#endif
