/* Internal IR data structures and helpers shared by the compiler's files. Not installed. */
#ifndef OXIDE_IR_H
#define OXIDE_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iface.h"
#include "oxide.h"
#include "util.h"

/* ---- the op table, expanded ---- */

enum {
    A_ALIGN = 1,
    A_VOLATILE = 2,
    A_SCOPE = 4,
    A_ORDER = 8,
    A_PRED = 16,
    A_IMM = 32,
    A_VALUE = 64,
    A_STR = 128,
    A_ELEM = 256,
    A_SYM = 512,
    A_PAD = 1024,
    A_PERM = 2048,
    A_KIND = 4096
};
/* L_TILE: a tile op, lowered by the tile compiler (lib/tile/), never by lower.c. */
typedef enum { L_INST, L_INTR, L_LIBDEV, L_ASM, L_TERM, L_TILE } oxide_lower_kind;

typedef struct oxide_op_info {
    const char *name;
    const char *operands; /* letters, see lib/ops.def */
    char result;
    unsigned attrs; /* A_* */
    unsigned min_sm;
    oxide_lower_kind lower;
    unsigned char tier; /* 2: lowered by lower.c's tier-2 code */
    const char *tmpl;
} oxide_op_info;

extern const oxide_op_info oxide_ops[OXIDE_OP_COUNT_];
/* Look up an op by its text name; returns OXIDE_OP_COUNT_ if unknown. */
oxide_op oxide__op_by_name(const char *name, size_t len);
/* The case labels of the mma.sync rows (m16n8k16 bf16 and f16, m16n8k32 fp8 in every mix). They
 * share one operand shape (A vec<4 x i32>, B vec<2 x i32>, C and D vec<4 x f32>), so the verifier,
 * the lowering and the ptxas test treat them as one family: a new row joins all three here. */
#define OXIDE_CASE_MMA_SYNC                                                                                            \
    case OXIDE_OP_MMA_BF16:                                                                                            \
    case OXIDE_OP_MMA_F16:                                                                                             \
    case OXIDE_OP_MMA_E4M3_E4M3:                                                                                       \
    case OXIDE_OP_MMA_E4M3_E5M2:                                                                                       \
    case OXIDE_OP_MMA_E5M2_E4M3:                                                                                       \
    case OXIDE_OP_MMA_E5M2_E5M2

/* ---- errors ---- */

/* Record msg as this thread's last error and return st. */
oxide_status oxide__fail(oxide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
oxide_status oxide__vfail(oxide_status st, const char *fmt, va_list ap);
/* Prefix this thread's last error with the formatted text and ": " (the cause is copied before
 * the buffer that holds it is rewritten). */
oxide_status oxide__fail_prefix(oxide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Length (2..4) of the valid multi-byte UTF-8 sequence at s, 0 if the bytes there are not one
 * (ASCII included: callers handle it first). Used by the manifest's JSON reader and writer. */
size_t oxide__utf8_len(const unsigned char *s, size_t avail);

/* ---- types ---- */

struct oxide_type {
    oxide_type_kind kind;
    uint32_t addrspace;   /* PTR */
    uint64_t count;       /* VECTOR, ARRAY */
    oxide_type *elem;     /* VECTOR, ARRAY, TILE, TENSOR */
    oxide_type **fields;  /* STRUCT */
    uint32_t nfields;     /* STRUCT */
    uint32_t rank;        /* TILE, TENSOR */
    uint32_t shape[3];    /* TILE */
    bool is_mutable;      /* TENSOR */
    const char *name;     /* text form, e.g. "array<4 x f32>"; cut short past OXIDE_TYPE_NAME_MAX */
    bool name_cut;        /* name is an abbreviation: print the text form from the structure */
    uint64_t size, align; /* VECTOR, ARRAY, STRUCT: computed once, when the type is made */
    uint64_t leaves;      /* STRUCT, ARRAY: scalar fields reached through struct nesting (an
                           * array counts its element once), saturating */
    struct oxide_type *next_interned;
};

/* Longest type name kept: nested types' text doubles per level when a struct repeats a field. */
#define OXIDE_TYPE_NAME_MAX 256
/* Most scalar fields a lowered struct may reach through nesting: LLVM's code generator visits
 * each one (a struct nesting 2 fields 32 deep has 2^32 and ends the process out of memory). */
#define OXIDE_TYPE_MAX_LEAVES (1u << 16)

bool oxide__type_is_int(const oxide_type *t);   /* i1..i128 */
bool oxide__type_is_float(const oxide_type *t); /* f16, bf16, f32, f64 */
/* A vector or array of integers or floats: a `const` of it is all zeros. */
bool oxide__type_is_zeroable(const oxide_type *t);
bool oxide__type_is_ptr(const oxide_type *t);
/* Intern a type built from proto (equal types are one pointer); names it. */
oxide_status oxide__type_intern(oxide_context *ctx, const oxide_type *proto, oxide_type **out);
unsigned oxide__type_bits(const oxide_type *t); /* scalar width; 0 for others */
uint64_t oxide__type_size(const oxide_type *t); /* bytes, C layout; pointers are 8 */
uint64_t oxide__type_align(const oxide_type *t);
/* Round a double to the nearest value of a float type (ties to even); false if a finite value
 * overflows it. */
bool oxide__round_float(oxide_type_kind kind, double v, double *out);
/* The IR type an interface scalar is passed as (u32 -> i32, bool -> i8, ...). */
oxide_type *oxide__scalar_ir_type(oxide_context *ctx, oxide_scalar s);
/* Parse a scalar name ("u64"); false if unknown. */
bool oxide__scalar_by_name(const char *name, size_t len, oxide_scalar *out);
/* fp8 scalars are tensor elements only (never scalar, slice or ptr parameters). */
bool oxide__scalar_is_fp8(oxide_scalar s);
/* The element types a tensor parameter may have (docs/tile.md: a tile's, less i1). */
bool oxide__tensor_elem_ok(oxide_scalar s);

/* ---- values, instructions, blocks, functions ---- */

typedef enum { VAL_PARAM, VAL_BLOCK_PARAM, VAL_INST } oxide_value_kind;

struct oxide_value {
    oxide_value_kind kind;
    oxide_type *type;
    const char *name;          /* NULL: printed as %N */
    struct oxide_inst *def;    /* VAL_INST */
    struct oxide_block *block; /* VAL_BLOCK_PARAM: owner; VAL_INST: block of def */
    oxide_function *fn;
    uint32_t index; /* VAL_PARAM / VAL_BLOCK_PARAM: position */
    uint32_t id;    /* scratch numbering (printer, lowering) */
    void *scratch;  /* per-pass scratch (e.g. LLVMValueRef) */
};

typedef struct oxide_succ {
    struct oxide_block *block;
    oxide_value **args;
    uint32_t nargs;
    int64_t case_value; /* switch cases (succ[0] is the default) */
} oxide_succ;

typedef struct oxide_inst {
    oxide_op op;
    oxide_value *result; /* NULL if none */
    oxide_value **operands;
    uint32_t noperands;
    /* attributes (only those in the op's A_* mask are meaningful) */
    uint32_t align;
    bool is_volatile;
    oxide_scope scope;
    oxide_order order;
    oxide_pred pred;
    int64_t imm;
    int64_t ivalue; /* const of integer type */
    double fvalue;  /* const of float type */
    const char *str;
    oxide_type *elem;
    const char *sym; /* global or function name */
    uint32_t perm;   /* tile.permute: perm[k] in bits 4k..4k+3 */
    uint8_t kind;    /* tile.reduce: oxide_reduce_kind */
    /* tile.load's pad is held in ivalue/fvalue, like const's value */
    uint32_t line, col; /* position of the op's name in parsed text; 0 when built through the API */
    /* successors (terminators) */
    oxide_succ *succ;
    uint32_t nsucc;
    struct oxide_block *block;
} oxide_inst;

struct oxide_block {
    oxide_function *fn;
    uint32_t index;   /* position in fn->blocks */
    oxide_vec params; /* oxide_value* */
    oxide_vec insts;  /* oxide_inst* */
    void *scratch;
};

struct oxide_function {
    oxide_module *mod;
    const char *name;
    bool is_kernel;
    bool is_tile;                 /* a tile kernel (also is_kernel) */
    uint32_t hints[7], hints_set; /* tile kernels: oxide_tile_hint values; bit h set = given */
    oxide_type *ret;              /* device functions; VOID for kernels */
    oxide_vec params;             /* oxide_value* (kernels: flattened: a slice gives two) */
    oxide_vec iface;              /* kernels: oxide_iface_param* */
    oxide_vec blocks;             /* oxide_block* */
    oxide_strmap names;           /* value name -> oxide_value (uniqueness check) */
    uint32_t block[3];            /* lowered tile kernels: the block shape the tile compiler chose */
    const char *tma_entry;        /* lowered tile kernels: the TMA variant (oxide_iface_kernel) */
    bool tma_only;                /* lowered tile kernels: this is the TMA variant */
    bool persistent;              /* lowered tile kernels: the last 3 params are the launch's grid */
    uint32_t launch_bounds[2];
    uint32_t cluster[3];
    uint32_t dyn_smem;
    void *scratch;
};

struct oxide_global {
    oxide_module *mod;
    const char *name;
    oxide_type *type;
    oxide_addrspace as;
    uint32_t align;
    uint8_t *init; /* NULL: zero / undefined */
    size_t init_size;
    void *scratch;
};

/* The stages of a compile, each timed by every oxide_module_compile (names and the query:
 * lib/compile_time.c). */
typedef enum oxide__stage {
    OXIDE__STAGE_TILE,        /* tile kernels: the lift from bitcode and the tile compiler */
    OXIDE__STAGE_VERIFY,      /* oxide__verify */
    OXIDE__STAGE_LOWER,       /* oxide IR -> LLVM IR */
    OXIDE__STAGE_IMPORT,      /* imported bitcode linked, retargeted, wrapped */
    OXIDE__STAGE_TARGET,      /* the target machine found or made */
    OXIDE__STAGE_LEGALIZE,    /* the legality check and the math rewrites */
    OXIDE__STAGE_LIBDEVICE,   /* libdevice linked */
    OXIDE__STAGE_LLVM_VERIFY, /* LLVMVerifyModule */
    OXIDE__STAGE_PASSES,      /* the IR pipeline */
    OXIDE__STAGE_LLVM_IR,     /* the optimised LLVM IR kept for oxide_module_get_llvm_ir */
    OXIDE__STAGE_CODEGEN,     /* NVPTX codegen, PTX text included */
    OXIDE__STAGE_PTX,         /* the manifest line and the PTX the caller gets */
    OXIDE__STAGES
} oxide__stage;
/* A monotonic clock in ms, for the stage times. */
double oxide__now_ms(void);

struct oxide_options {
    char target[16];          /* "sm_90a" */
    unsigned sm;              /* 90 */
    bool arch_specific;       /* the 'a' suffix */
    int ptx_major, ptx_minor; /* 0,0 = choose */
    int opt_level;
    bool fast_math;
    bool line_info;
    int tile_variants; /* oxide_tile_variants */
};

struct oxide_module {
    oxide_context *ctx;
    oxide_arena arena;
    const char *name;
    oxide_vec functions; /* oxide_function* in creation order */
    oxide_vec globals;   /* oxide_global* */
    oxide_vec bitcode;   /* oxide_bitcode_unit* (imported LLVM bitcode) */
    char *printed;       /* result of oxide_module_print (malloc) */
    char *ptx;           /* result of oxide_module_compile (malloc) */
    size_t ptx_len;
    char *llvm_ir; /* malloc; NULL while ir_pending */
    /* The last compile succeeded and its LLVM IR is not printed yet: it is made from the module
     * and ir_opts when asked for, or before the module's first edit since (oxide__module_changed). */
    bool ir_pending;
    oxide_options ir_opts;
    struct oxide_module *next, *prev; /* context's list */
    uint8_t tile_import;              /* oxide_module_import_tile_kernels: 0 not yet, else OXIDE_TILE_IMPORT_* */
    double stage_ms[OXIDE__STAGES];   /* the last compile's time in each stage */
};
/* What the bitcode held once its tile kernels were lifted (lib/import_tile.c): SIMT kernels too,
 * or tile kernels only (then the SIMT import has nothing to find). */
enum { OXIDE_TILE_IMPORT_SIMT = 1, OXIDE_TILE_IMPORT_TILE_ONLY = 2 };

typedef struct oxide_bitcode_unit {
    const char *name;
    uint8_t *data;
    size_t size;
} oxide_bitcode_unit;

typedef struct oxide_target_cache oxide_target_cache; /* lower/emit: TargetMachines per target */

struct oxide_context {
    oxide_arena arena; /* types */
    oxide_type *interned;
    oxide_type *scalars[OXIDE_TYPE_F64 + 1];
    oxide_module *modules;
    oxide_target_cache *targets; /* owned by emit.c; freed by oxide__targets_free */
};

/* Default options (sm_90a, O3) for calls given NULL. */
void oxide__options_default(oxide_options *o);
/* opts, or (NULL) the defaults written to *storage. */
static inline const oxide_options *oxide__options_or_default(const oxide_options *opts, oxide_options *storage) {
    if (opts)
        return opts;
    oxide__options_default(storage);
    return storage;
}

/* Makes the pending LLVM IR of mod's last compile (see oxide_module.ir_pending; lib/compile.c). */
void oxide__module_keep_ir(oxide_module *mod);
/* Every edit of a module calls this before it changes anything. */
static inline void oxide__module_changed(oxide_module *mod) {
    if (mod->ir_pending)
        oxide__module_keep_ir(mod);
}

oxide_global *oxide__module_find_global(oxide_module *mod, const char *name);
oxide_function *oxide__module_find_function(oxide_module *mod, const char *name);

/* A lowered tile kernel's TMA descriptor for its last parameter, a tensor (iface.h, builder.c). */
oxide_status oxide__kernel_tensor_tma(oxide_function *k, const uint32_t *box, oxide_value **desc);
/* Makes a lowered tile kernel persistent (iface.h): three u32 parameters after its interface
 * ones, %__grid.x, .y, .z, which a launch sets to the grid it was given. */
oxide_status oxide__kernel_set_persistent(oxide_function *k, oxide_value *grid[3]);
#define OXIDE__GRID_PARAM_NAMES                                                                                        \
    { "__grid.x", "__grid.y", "__grid.z" }

/* Internal builder core: appends an instruction after checking operands against the op's row.
 * Used by the public builders and the parser. */
oxide_status oxide__build(oxide_block *block, oxide_op op, oxide_value *const *operands, size_t n,
                          oxide_type *result_type, const oxide_attr *attrs, size_t nattrs, oxide_inst **out);
/* Attach successors to a terminator built by oxide__build. */
oxide_status oxide__add_succ(oxide_inst *term, oxide_block *dest, oxide_value *const *args, size_t nargs,
                             int64_t case_value);
/* Type-check operands (and result type) against an op's row. Shared by the builder and verifier.
 * On mismatch, returns TYPE_MISMATCH with a message naming the op and operand. */
oxide_status oxide__check_operands(oxide_context *ctx, oxide_op op, oxide_value *const *operands, size_t n,
                                   oxide_type *result_type, oxide_type **result_out);
/* (result_out gets the op's result type: NULL for none; result_type may be NULL for ops whose
 * result type follows from the row, and must equal it when given.) */

/* Names of enum values used by printer, parser and lowering. */
extern const char *const oxide__scope_names[4];
extern const char *const oxide__order_names[5];
extern const char *const oxide__pred_names[24];

#include "tile/tile.h"

/* ---- verify, print, lower, emit, manifest (one file each) ---- */

oxide_status oxide__verify(oxide_module *mod, const oxide_options *opts);
/* The limit rules of one function (lib/verify_limits.c); each problem goes to report(v, msg). */
void oxide__verify_limits(const oxide_function *fn, const oxide_options *opts, void (*report)(void *, const char *),
                          void *v);
void oxide__targets_free(oxide_target_cache *t);

/* ---- launch contracts (lib/contract.c) ---- */

/* True, with the reason in why, when c breaks a rule of its own (a domain of 4, an empty block). */
bool oxide__contract_invalid(const oxide_launch_contract *c, char *why, size_t size);
/* LAUNCH, naming kernel, the field and the value, when the shape breaks c. */
oxide_status oxide__contract_check(const char *kernel, const oxide_launch_contract *c, const uint32_t grid[3],
                                   const uint32_t block[3], uint32_t smem, int cc_major, int cc_minor);

#endif
