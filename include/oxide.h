/* oxide.h -- the stable C API of liboxide: build GPU kernels as IR, compile them to PTX, load
 * modules and launch kernels.
 *
 * Conventions (docs/c-api.md has the full guide):
 *  - Every fallible call returns an oxide_status; results come back through out-parameters,
 *    which are left untouched on failure. OXIDE_OK is 0.
 *  - oxide_last_error() gives the message of the last failed call on the calling thread.
 *  - Ownership is in the names: X_create() pairs with X_destroy(); objects built inside a module
 *    (functions, blocks, values, globals) belong to that module and die with it; types belong to
 *    their context. Strings returned by the library live as long as the object they came from.
 *  - A compiler context (and all its modules) is used by one thread at a time; distinct contexts
 *    may be used in parallel. Runtime handles are safe to use from several threads.
 *  - A function that changes meaning gets a new name; signatures never change.
 */
#ifndef OXIDE_H
#define OXIDE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define OXIDE_API __declspec(dllexport)
#else
#define OXIDE_API __attribute__((visibility("default")))
#endif

#define OXIDE_VERSION_MAJOR 0
#define OXIDE_VERSION_MINOR 1
#define OXIDE_VERSION_PATCH 0

/* ======================================================================================
 * Status, errors, version
 * ====================================================================================== */

typedef enum oxide_status {
    OXIDE_OK = 0,
    OXIDE_ERROR_INVALID_ARGUMENT = 1, /* NULL or out-of-range argument, wrong handle */
    OXIDE_ERROR_TYPE_MISMATCH = 2,    /* an operand's type does not fit the operation */
    OXIDE_ERROR_VERIFY = 3,           /* the IR breaks a rule the verifier checks */
    OXIDE_ERROR_PARSE = 4,            /* text IR, manifest or bitcode could not be read */
    OXIDE_ERROR_UNSUPPORTED = 5,      /* valid request the target or build cannot do */
    OXIDE_ERROR_CODEGEN = 6,          /* LLVM failed to produce PTX */
    OXIDE_ERROR_NOT_FOUND = 7,        /* named thing (kernel, symbol, file, device) absent */
    OXIDE_ERROR_OUT_OF_MEMORY = 8,
    OXIDE_ERROR_IO = 9,               /* a file could not be read or written */
    OXIDE_ERROR_NO_DRIVER = 10,       /* libcuda.so.1 could not be loaded */
    OXIDE_ERROR_NO_DEVICE = 11,       /* the driver sees no (such) GPU */
    OXIDE_ERROR_CUDA = 12,            /* the CUDA driver returned an error (message names it) */
    OXIDE_ERROR_LAUNCH = 13,          /* launch arguments do not match the kernel's manifest */
    OXIDE_ERROR_DEVICE_FAILED = 14,   /* a kernel faulted earlier; reset the device to go on */
    OXIDE_ERROR_MANIFEST = 15,        /* PTX has no or a malformed oxide manifest */
    OXIDE_ERROR_STATE = 16            /* call made in the wrong state (e.g. block terminated) */
} oxide_status;

/* Stable upper-case name of a status, e.g. "OXIDE_ERROR_VERIFY"; "OXIDE_STATUS_UNKNOWN" for
 * values this version does not know. Never NULL; static storage. */
OXIDE_API const char *oxide_status_name(oxide_status status);

/* Message of the last failed call on this thread ("" if none yet). Valid until the next
 * failing call on this thread. Successful calls leave it unchanged. */
OXIDE_API const char *oxide_last_error(void);

/* "MAJOR.MINOR.PATCH" of the loaded library. Static storage. */
OXIDE_API const char *oxide_version(void);

/* ======================================================================================
 * Compiler objects
 * ====================================================================================== */

typedef struct oxide_context oxide_context;
typedef struct oxide_options oxide_options;
typedef struct oxide_module oxide_module;
typedef struct oxide_function oxide_function;
typedef struct oxide_block oxide_block;
typedef struct oxide_value oxide_value;
typedef struct oxide_type oxide_type;
typedef struct oxide_global oxide_global;

/* Create a compiler context. It owns types, cached LLVM target machines and every module made
 * in it. Destroy with oxide_context_destroy. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY. */
OXIDE_API oxide_status oxide_context_create(oxide_context **out);
/* Destroy a context and every module and type it owns. NULL is ignored. */
OXIDE_API void oxide_context_destroy(oxide_context *ctx);

/* ---- options (opaque, with setters, so that new options never change a layout) ---- */

/* Defaults: target "sm_90a", PTX ISA chosen from the target, opt level 3, no fast-math, no
 * line info. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY. */
OXIDE_API oxide_status oxide_options_create(oxide_options **out);
OXIDE_API void oxide_options_destroy(oxide_options *opts);
/* Target SM: one of "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a".
 * Errors: INVALID_ARGUMENT (unknown name, message lists the known ones). */
OXIDE_API oxide_status oxide_options_set_target(oxide_options *opts, const char *sm);
/* PTX ISA version, e.g. (8, 5). (0, 0) restores "choose from the target". Errors:
 * INVALID_ARGUMENT when the version is outside what this LLVM emits. */
OXIDE_API oxide_status oxide_options_set_ptx_version(oxide_options *opts, int major, int minor);
/* 0..3. Level 3 is oxide's GPU pipeline (docs/c-api.md says what it runs). */
OXIDE_API oxide_status oxide_options_set_opt_level(oxide_options *opts, int level);
/* Non-zero: allow approximate division/sqrt and reassociation (PTX .approx/.ftz forms). */
OXIDE_API oxide_status oxide_options_set_fast_math(oxide_options *opts, int enable);
/* Non-zero: emit .loc line information for profilers. */
OXIDE_API oxide_status oxide_options_set_line_info(oxide_options *opts, int enable);
/* Read back the target name ("sm_90a"); lives as long as opts. */
OXIDE_API const char *oxide_options_get_target(const oxide_options *opts);

/* ---- types (owned by the context; equal types are the same pointer) ---- */

typedef enum oxide_type_kind {
    OXIDE_TYPE_VOID = 0,
    OXIDE_TYPE_I1,
    OXIDE_TYPE_I8,
    OXIDE_TYPE_I16,
    OXIDE_TYPE_I32,
    OXIDE_TYPE_I64,
    OXIDE_TYPE_I128,
    OXIDE_TYPE_F16,
    OXIDE_TYPE_BF16,
    OXIDE_TYPE_F32,
    OXIDE_TYPE_F64,
    OXIDE_TYPE_PTR,
    OXIDE_TYPE_VECTOR,
    OXIDE_TYPE_ARRAY,
    OXIDE_TYPE_STRUCT
} oxide_type_kind;

typedef enum oxide_addrspace {
    OXIDE_AS_GENERIC = 0,
    OXIDE_AS_GLOBAL = 1,
    OXIDE_AS_SHARED = 3,
    OXIDE_AS_CONSTANT = 4,
    OXIDE_AS_LOCAL = 5,
    OXIDE_AS_PARAM = 101
} oxide_addrspace;

/* Scalar types (VOID..F64). Errors: INVALID_ARGUMENT (NULL, or a kind that is not scalar). */
OXIDE_API oxide_status oxide_type_scalar(oxide_context *ctx, oxide_type_kind kind, oxide_type **out);
/* Opaque pointer in an address space. */
OXIDE_API oxide_status oxide_type_pointer(oxide_context *ctx, oxide_addrspace as, oxide_type **out);
/* Vector of 2, 4 or 8 integer, float or pointer elements. */
OXIDE_API oxide_status oxide_type_vector(oxide_context *ctx, oxide_type *elem, uint32_t count, oxide_type **out);
/* Array of count (>= 1) elements of a sized type. */
OXIDE_API oxide_status oxide_type_array(oxide_context *ctx, oxide_type *elem, uint64_t count, oxide_type **out);
/* Struct of nfields (>= 1) sized fields, C layout. */
OXIDE_API oxide_status oxide_type_struct(oxide_context *ctx, oxide_type *const *fields, size_t nfields, oxide_type **out);
OXIDE_API oxide_type_kind oxide_type_get_kind(const oxide_type *t);
/* Text form of the type, e.g. "ptr.global", "array<256 x f32>". Lives as long as the context. */
OXIDE_API const char *oxide_type_get_name(const oxide_type *t);

/* ---- interface types of kernel parameters (the manifest's element and scalar types) ---- */

typedef enum oxide_scalar {
    OXIDE_SCALAR_BOOL = 0,
    OXIDE_SCALAR_I8,
    OXIDE_SCALAR_I16,
    OXIDE_SCALAR_I32,
    OXIDE_SCALAR_I64,
    OXIDE_SCALAR_U8,
    OXIDE_SCALAR_U16,
    OXIDE_SCALAR_U32,
    OXIDE_SCALAR_U64,
    OXIDE_SCALAR_F16,
    OXIDE_SCALAR_BF16,
    OXIDE_SCALAR_F32,
    OXIDE_SCALAR_F64
} oxide_scalar;

/* "bool", "i8", ... "f64"; NULL for unknown values. Static storage. */
OXIDE_API const char *oxide_scalar_name(oxide_scalar s);
/* Size in bytes (1..8); 0 for unknown values. */
OXIDE_API size_t oxide_scalar_size(oxide_scalar s);

typedef enum oxide_param_kind {
    OXIDE_PARAM_SCALAR = 0, /* a value of an oxide_scalar type */
    OXIDE_PARAM_SLICE,      /* device pointer + u64 length (two PTX parameters) */
    OXIDE_PARAM_PTR,        /* raw device pointer */
    OXIDE_PARAM_BYTES,      /* by-value bytes of a size and alignment (e.g. closure captures) */
    OXIDE_PARAM_TMA_DESC    /* 128-byte TMA descriptor passed by value */
} oxide_param_kind;

/* "scalar", "slice", "ptr", "bytes", "tma_desc"; NULL for unknown values. */
OXIDE_API const char *oxide_param_kind_name(oxide_param_kind k);

/* ---- modules, functions, globals ---- */

/* Create an empty module named name (a C identifier). Owned by ctx; may be destroyed early. */
OXIDE_API oxide_status oxide_module_create(oxide_context *ctx, const char *name, oxide_module **out);
OXIDE_API void oxide_module_destroy(oxide_module *mod);

/* Add a kernel (a PTX .entry). Its parameters are added with oxide_kernel_add_*_param.
 * Errors: INVALID_ARGUMENT (bad name), STATE (name already used in the module). */
OXIDE_API oxide_status oxide_module_add_kernel(oxide_module *mod, const char *name, oxide_function **out);
/* Add a device function returning ret (VOID for none); parameters via oxide_function_add_param. */
OXIDE_API oxide_status oxide_module_add_function(oxide_module *mod, const char *name, oxide_type *ret, oxide_function **out);
/* Look up a kernel or device function by name. Errors: NOT_FOUND. */
OXIDE_API oxide_status oxide_module_get_function(oxide_module *mod, const char *name, oxide_function **out);

/* Add a module-level variable in GLOBAL, SHARED or CONSTANT space. align 0 = natural.
 * init may be NULL (zero for global/constant, undefined for shared); otherwise it holds exactly
 * the type's size in bytes (not allowed for shared). */
OXIDE_API oxide_status oxide_module_add_global(oxide_module *mod, const char *name, oxide_type *type,
                                               oxide_addrspace as, uint32_t align, const void *init,
                                               size_t init_size, oxide_global **out);

/* Device-function parameter of an IR type. Not for kernels (use oxide_kernel_add_*_param). */
OXIDE_API oxide_status oxide_function_add_param(oxide_function *fn, const char *name, oxide_type *type, oxide_value **out);

/* Kernel parameters, each with its interface kind (recorded in the manifest). */
OXIDE_API oxide_status oxide_kernel_add_scalar_param(oxide_function *k, const char *name, oxide_scalar type,
                                                     oxide_value **out);
/* A slice: *ptr_out is a ptr.global to the first element, *len_out the element count (i64). */
OXIDE_API oxide_status oxide_kernel_add_slice_param(oxide_function *k, const char *name, oxide_scalar elem,
                                                    int is_mutable, oxide_value **ptr_out, oxide_value **len_out);
/* A raw device pointer (ptr.global). */
OXIDE_API oxide_status oxide_kernel_add_ptr_param(oxide_function *k, const char *name, oxide_scalar elem,
                                                  int is_mutable, oxide_value **out);
/* By-value bytes; *out is a generic pointer to them (read-only). size 1..4096, align a power
 * of two up to 16. */
OXIDE_API oxide_status oxide_kernel_add_bytes_param(oxide_function *k, const char *name, uint32_t size,
                                                    uint32_t align, oxide_value **out);
/* A 128-byte TMA descriptor by value; *out is a generic pointer to it. */
OXIDE_API oxide_status oxide_kernel_add_tma_desc_param(oxide_function *k, const char *name, oxide_value **out);

/* Kernel attributes. 0 means "not set". */
OXIDE_API oxide_status oxide_kernel_set_launch_bounds(oxide_function *k, uint32_t max_threads, uint32_t min_blocks);
OXIDE_API oxide_status oxide_kernel_set_cluster(oxide_function *k, uint32_t x, uint32_t y, uint32_t z);
/* Dynamic shared memory the kernel expects, in bytes (recorded in the manifest). */
OXIDE_API oxide_status oxide_kernel_set_dyn_smem(oxide_function *k, uint32_t bytes);

/* Append a new block; params are its block parameters (may be NULL when nparams is 0).
 * *param_values (if not NULL) receives nparams values. The first block is the entry; its
 * parameters must be empty. */
OXIDE_API oxide_status oxide_function_add_block(oxide_function *fn, oxide_type *const *params, size_t nparams,
                                                oxide_block **out, oxide_value **param_values);

OXIDE_API oxide_type *oxide_value_get_type(const oxide_value *v);
/* Give a value a name for the text form ("%name"); names are unique per function. */
OXIDE_API oxide_status oxide_value_set_name(oxide_value *v, const char *name);

/* ======================================================================================
 * Operations: one enum value per row of lib/ops.def (generated block; do not edit by hand)
 * ====================================================================================== */

/* BEGIN GENERATED OPS */
typedef enum oxide_op {
    OXIDE_OP_TID_X = 0, /* tid.x */
    OXIDE_OP_TID_Y = 1, /* tid.y */
    OXIDE_OP_TID_Z = 2, /* tid.z */
    OXIDE_OP_NTID_X = 3, /* ntid.x */
    OXIDE_OP_NTID_Y = 4, /* ntid.y */
    OXIDE_OP_NTID_Z = 5, /* ntid.z */
    OXIDE_OP_CTAID_X = 6, /* ctaid.x */
    OXIDE_OP_CTAID_Y = 7, /* ctaid.y */
    OXIDE_OP_CTAID_Z = 8, /* ctaid.z */
    OXIDE_OP_NCTAID_X = 9, /* nctaid.x */
    OXIDE_OP_NCTAID_Y = 10, /* nctaid.y */
    OXIDE_OP_NCTAID_Z = 11, /* nctaid.z */
    OXIDE_OP_LANEID = 12, /* laneid */
    OXIDE_OP_WARPID = 13, /* warpid */
    OXIDE_OP_CLUSTERID_X = 14, /* clusterid.x */
    OXIDE_OP_CLUSTERID_Y = 15, /* clusterid.y */
    OXIDE_OP_CLUSTERID_Z = 16, /* clusterid.z */
    OXIDE_OP_NCLUSTERID_X = 17, /* nclusterid.x */
    OXIDE_OP_NCLUSTERID_Y = 18, /* nclusterid.y */
    OXIDE_OP_NCLUSTERID_Z = 19, /* nclusterid.z */
    OXIDE_OP_CLUSTER_CTAID_X = 20, /* cluster.ctaid.x */
    OXIDE_OP_CLUSTER_CTAID_Y = 21, /* cluster.ctaid.y */
    OXIDE_OP_CLUSTER_CTAID_Z = 22, /* cluster.ctaid.z */
    OXIDE_OP_CLUSTER_NCTAID_X = 23, /* cluster.nctaid.x */
    OXIDE_OP_CLUSTER_NCTAID_Y = 24, /* cluster.nctaid.y */
    OXIDE_OP_CLUSTER_NCTAID_Z = 25, /* cluster.nctaid.z */
    OXIDE_OP_CLUSTER_CTARANK = 26, /* cluster.ctarank */
    OXIDE_OP_CLUSTER_NCTARANK = 27, /* cluster.nctarank */
    OXIDE_OP_CONST = 28, /* const */
    OXIDE_OP_ADD = 29, /* add */
    OXIDE_OP_SUB = 30, /* sub */
    OXIDE_OP_MUL = 31, /* mul */
    OXIDE_OP_SDIV = 32, /* sdiv */
    OXIDE_OP_UDIV = 33, /* udiv */
    OXIDE_OP_SREM = 34, /* srem */
    OXIDE_OP_UREM = 35, /* urem */
    OXIDE_OP_FDIV = 36, /* fdiv */
    OXIDE_OP_FREM = 37, /* frem */
    OXIDE_OP_NEG = 38, /* neg */
    OXIDE_OP_AND = 39, /* and */
    OXIDE_OP_OR = 40, /* or */
    OXIDE_OP_XOR = 41, /* xor */
    OXIDE_OP_NOT = 42, /* not */
    OXIDE_OP_SHL = 43, /* shl */
    OXIDE_OP_LSHR = 44, /* lshr */
    OXIDE_OP_ASHR = 45, /* ashr */
    OXIDE_OP_ICMP = 46, /* icmp */
    OXIDE_OP_FCMP = 47, /* fcmp */
    OXIDE_OP_SELECT = 48, /* select */
    OXIDE_OP_SMIN = 49, /* smin */
    OXIDE_OP_SMAX = 50, /* smax */
    OXIDE_OP_UMIN = 51, /* umin */
    OXIDE_OP_UMAX = 52, /* umax */
    OXIDE_OP_POPC = 53, /* popc */
    OXIDE_OP_CLZ = 54, /* clz */
    OXIDE_OP_BREV = 55, /* brev */
    OXIDE_OP_TRUNC = 56, /* trunc */
    OXIDE_OP_ZEXT = 57, /* zext */
    OXIDE_OP_SEXT = 58, /* sext */
    OXIDE_OP_FPTRUNC = 59, /* fptrunc */
    OXIDE_OP_FPEXT = 60, /* fpext */
    OXIDE_OP_FPTOUI = 61, /* fptoui */
    OXIDE_OP_FPTOSI = 62, /* fptosi */
    OXIDE_OP_UITOFP = 63, /* uitofp */
    OXIDE_OP_SITOFP = 64, /* sitofp */
    OXIDE_OP_PTRTOINT = 65, /* ptrtoint */
    OXIDE_OP_INTTOPTR = 66, /* inttoptr */
    OXIDE_OP_BITCAST = 67, /* bitcast */
    OXIDE_OP_ADDRSPACECAST = 68, /* addrspacecast */
    OXIDE_OP_EXTRACT = 69, /* extract */
    OXIDE_OP_INSERT = 70, /* insert */
    OXIDE_OP_LOAD = 71, /* load */
    OXIDE_OP_STORE = 72, /* store */
    OXIDE_OP_OFFSET = 73, /* offset */
    OXIDE_OP_ALLOCA = 74, /* alloca */
    OXIDE_OP_GLOBAL_ADDR = 75, /* global.addr */
    OXIDE_OP_DYN_SMEM = 76, /* dyn_smem */
    OXIDE_OP_BR = 77, /* br */
    OXIDE_OP_COND_BR = 78, /* cond_br */
    OXIDE_OP_SWITCH = 79, /* switch */
    OXIDE_OP_RET = 80, /* ret */
    OXIDE_OP_TRAP = 81, /* trap */
    OXIDE_OP_UNREACHABLE = 82, /* unreachable */
    OXIDE_OP_CALL = 83, /* call */
    OXIDE_OP_BARRIER = 84, /* barrier */
    OXIDE_OP_BARRIER_COUNT = 85, /* barrier.count */
    OXIDE_OP_FENCE = 86, /* fence */
    OXIDE_OP_CLUSTER_SYNC = 87, /* cluster.sync */
    OXIDE_OP_CLUSTER_ARRIVE = 88, /* cluster.arrive */
    OXIDE_OP_CLUSTER_WAIT = 89, /* cluster.wait */
    OXIDE_OP_ATOMIC_ADD = 90, /* atomic.add */
    OXIDE_OP_ATOMIC_SUB = 91, /* atomic.sub */
    OXIDE_OP_ATOMIC_AND = 92, /* atomic.and */
    OXIDE_OP_ATOMIC_OR = 93, /* atomic.or */
    OXIDE_OP_ATOMIC_XOR = 94, /* atomic.xor */
    OXIDE_OP_ATOMIC_MIN = 95, /* atomic.min */
    OXIDE_OP_ATOMIC_MAX = 96, /* atomic.max */
    OXIDE_OP_ATOMIC_UMIN = 97, /* atomic.umin */
    OXIDE_OP_ATOMIC_UMAX = 98, /* atomic.umax */
    OXIDE_OP_ATOMIC_EXCH = 99, /* atomic.exch */
    OXIDE_OP_ATOMIC_CAS = 100, /* atomic.cas */
    OXIDE_OP_ATOMIC_LOAD = 101, /* atomic.load */
    OXIDE_OP_ATOMIC_STORE = 102, /* atomic.store */
    OXIDE_OP_SHFL_IDX = 103, /* shfl.idx */
    OXIDE_OP_SHFL_UP = 104, /* shfl.up */
    OXIDE_OP_SHFL_DOWN = 105, /* shfl.down */
    OXIDE_OP_SHFL_XOR = 106, /* shfl.xor */
    OXIDE_OP_VOTE_ALL = 107, /* vote.all */
    OXIDE_OP_VOTE_ANY = 108, /* vote.any */
    OXIDE_OP_VOTE_BALLOT = 109, /* vote.ballot */
    OXIDE_OP_MATCH_ANY = 110, /* match.any */
    OXIDE_OP_ACTIVEMASK = 111, /* activemask */
    OXIDE_OP_REDUX_ADD = 112, /* redux.add */
    OXIDE_OP_REDUX_MIN = 113, /* redux.min */
    OXIDE_OP_REDUX_MAX = 114, /* redux.max */
    OXIDE_OP_REDUX_UMIN = 115, /* redux.umin */
    OXIDE_OP_REDUX_UMAX = 116, /* redux.umax */
    OXIDE_OP_REDUX_AND = 117, /* redux.and */
    OXIDE_OP_REDUX_OR = 118, /* redux.or */
    OXIDE_OP_REDUX_XOR = 119, /* redux.xor */
    OXIDE_OP_MAP_SHARED = 120, /* cluster.map_shared */
    OXIDE_OP_SQRT = 121, /* sqrt */
    OXIDE_OP_RSQRT = 122, /* rsqrt */
    OXIDE_OP_EXP = 123, /* exp */
    OXIDE_OP_EXP2 = 124, /* exp2 */
    OXIDE_OP_LOG = 125, /* log */
    OXIDE_OP_LOG2 = 126, /* log2 */
    OXIDE_OP_SIN = 127, /* sin */
    OXIDE_OP_COS = 128, /* cos */
    OXIDE_OP_TAN = 129, /* tan */
    OXIDE_OP_TANH = 130, /* tanh */
    OXIDE_OP_POW = 131, /* pow */
    OXIDE_OP_ERF = 132, /* erf */
    OXIDE_OP_FMA = 133, /* fma */
    OXIDE_OP_FMIN = 134, /* fmin */
    OXIDE_OP_FMAX = 135, /* fmax */
    OXIDE_OP_FABS = 136, /* fabs */
    OXIDE_OP_IABS = 137, /* iabs */
    OXIDE_OP_FLOOR = 138, /* floor */
    OXIDE_OP_CEIL = 139, /* ceil */
    OXIDE_OP_ROUND = 140, /* round */
    OXIDE_OP_FTRUNC = 141, /* ftrunc */
    OXIDE_OP_SIN_APPROX = 142, /* sin.approx */
    OXIDE_OP_COS_APPROX = 143, /* cos.approx */
    OXIDE_OP_EXP2_APPROX = 144, /* exp2.approx */
    OXIDE_OP_LOG2_APPROX = 145, /* log2.approx */
    OXIDE_OP_RSQRT_APPROX = 146, /* rsqrt.approx */
    OXIDE_OP_RCP_APPROX = 147, /* rcp.approx */
    OXIDE_OP_TANH_APPROX = 148, /* tanh.approx */
    OXIDE_OP_PRINTF = 149, /* printf */
    OXIDE_OP_ASSERT = 150, /* assert */
    OXIDE_OP_COUNT_ = 151
} oxide_op;
/* END GENERATED OPS */

/* Name of an op in the text format ("add"); NULL for unknown values. */
OXIDE_API const char *oxide_op_name(oxide_op op);

typedef enum oxide_attr_key {
    OXIDE_ATTR_ALIGN = 0, /* i: alignment in bytes, 0 = natural */
    OXIDE_ATTR_VOLATILE,  /* i: 0 or 1 */
    OXIDE_ATTR_SCOPE,     /* i: oxide_scope */
    OXIDE_ATTR_ORDER,     /* i: oxide_order */
    OXIDE_ATTR_PRED,      /* i: oxide_pred */
    OXIDE_ATTR_IMM,       /* i: op-specific immediate (barrier id, lane mask, element index) */
    OXIDE_ATTR_VALUE,     /* i (integer types) or f (float types): value of a const */
    OXIDE_ATTR_STR,       /* s: printf format or assert message */
    OXIDE_ATTR_ELEM,      /* t: element type of offset and alloca */
    OXIDE_ATTR_SYM        /* s: name of the global (global.addr) or function (call) */
} oxide_attr_key;

typedef enum oxide_scope { OXIDE_SCOPE_CTA = 0, OXIDE_SCOPE_CLUSTER, OXIDE_SCOPE_GPU, OXIDE_SCOPE_SYS } oxide_scope;
typedef enum oxide_order {
    OXIDE_ORDER_RELAXED = 0,
    OXIDE_ORDER_ACQUIRE,
    OXIDE_ORDER_RELEASE,
    OXIDE_ORDER_ACQ_REL,
    OXIDE_ORDER_SEQ_CST
} oxide_order;
typedef enum oxide_pred {
    OXIDE_PRED_EQ = 0, OXIDE_PRED_NE, OXIDE_PRED_SLT, OXIDE_PRED_SLE, OXIDE_PRED_SGT, OXIDE_PRED_SGE,
    OXIDE_PRED_ULT, OXIDE_PRED_ULE, OXIDE_PRED_UGT, OXIDE_PRED_UGE, /* icmp */
    OXIDE_PRED_OEQ, OXIDE_PRED_ONE, OXIDE_PRED_OLT, OXIDE_PRED_OLE, OXIDE_PRED_OGT, OXIDE_PRED_OGE,
    OXIDE_PRED_ORD, OXIDE_PRED_UNO, OXIDE_PRED_UEQ, OXIDE_PRED_UNE, OXIDE_PRED_FULT, OXIDE_PRED_FULE,
    OXIDE_PRED_FUGT, OXIDE_PRED_FUGE /* fcmp */
} oxide_pred;

typedef struct oxide_attr {
    oxide_attr_key key;
    int64_t i;
    double f;
    const char *s;
    oxide_type *t;
} oxide_attr;

/* Append an operation to block. result_type is required for ops whose result is given
 * explicitly (const, casts, load, extract, global.addr, dyn_smem, call of a non-void
 * function), and must be NULL otherwise. Attributes the op does not carry are an error;
 * those it carries and that are not given take their defaults (align 0, volatile 0, scope gpu,
 * order relaxed, imm 0 -- except lane masks, which default to 0xffffffff -- value 0).
 * *result (may be NULL) receives the result value, or NULL for ops without one.
 * Errors: INVALID_ARGUMENT, TYPE_MISMATCH (message names the op and operand), STATE (the block
 * already ends in a terminator), UNSUPPORTED. */
OXIDE_API oxide_status oxide_build_op(oxide_block *block, oxide_op op, oxide_value *const *operands,
                                      size_t noperands, oxide_type *result_type, const oxide_attr *attrs,
                                      size_t nattrs, oxide_value **result);
/* Shorthands for constants. */
OXIDE_API oxide_status oxide_build_const_int(oxide_block *block, oxide_type *type, int64_t value, oxide_value **out);
OXIDE_API oxide_status oxide_build_const_float(oxide_block *block, oxide_type *type, double value, oxide_value **out);
/* Terminators that name successors. Argument counts and types must match the target's
 * block parameters. */
OXIDE_API oxide_status oxide_build_br(oxide_block *block, oxide_block *dest, oxide_value *const *args, size_t nargs);
OXIDE_API oxide_status oxide_build_cond_br(oxide_block *block, oxide_value *cond, oxide_block *if_true,
                                           oxide_value *const *true_args, size_t ntrue, oxide_block *if_false,
                                           oxide_value *const *false_args, size_t nfalse);
/* switch on an integer: cases[i] goes to dests[i] (blocks without parameters). */
OXIDE_API oxide_status oxide_build_switch(oxide_block *block, oxide_value *value, oxide_block *default_dest,
                                          const int64_t *cases, oxide_block *const *dests, size_t ncases);

/* ======================================================================================
 * Verify, text form, compile
 * ====================================================================================== */

/* Check the whole module against opts' target (opts may be NULL: sm_90a). On failure the
 * message names the function, block, op and operand. Errors: VERIFY. */
OXIDE_API oxide_status oxide_module_verify(oxide_module *mod, const oxide_options *opts);

/* Print the module in the text format. *out lives until the module changes or dies. */
OXIDE_API oxide_status oxide_module_print(oxide_module *mod, const char **out);
/* Parse text (len bytes, need not be NUL-terminated) into a new module owned by ctx.
 * Errors: PARSE with "line:column: what was expected". */
OXIDE_API oxide_status oxide_module_parse(oxide_context *ctx, const char *text, size_t len, oxide_module **out);

/* Import LLVM bitcode (e.g. rustc's --emit=llvm-bc) into the module as one unit. Errors: PARSE,
 * UNSUPPORTED (bitcode from a newer LLVM: the message says which). */
OXIDE_API oxide_status oxide_module_import_bitcode(oxide_module *mod, const void *data, size_t size, const char *unit_name);

/* Compile to PTX text that carries the manifest (DESIGN.md section 5). Verifies first.
 * *ptx is NUL-terminated, lives until the next compile of this module or its destruction;
 * *len (may be NULL) gets its length without the NUL.
 * Errors: VERIFY, UNSUPPORTED (construct the target cannot run: names it), CODEGEN. */
OXIDE_API oxide_status oxide_module_compile(oxide_module *mod, const oxide_options *opts, const char **ptx, size_t *len);

/* Textual LLVM IR of the last oxide_module_compile (after optimisation). */
OXIDE_API oxide_status oxide_module_get_llvm_ir(oxide_module *mod, const char **out);

/* ======================================================================================
 * Manifest: the kernels, parameters and attributes a module's PTX carries
 * ====================================================================================== */

typedef struct oxide_manifest oxide_manifest;

/* Read the manifest from PTX text (len bytes). Errors: MANIFEST (none, or malformed: the message
 * says where), OUT_OF_MEMORY. Destroy with oxide_manifest_destroy. */
OXIDE_API oxide_status oxide_manifest_parse(const char *ptx, size_t len, oxide_manifest **out);
OXIDE_API void oxide_manifest_destroy(oxide_manifest *m);
OXIDE_API size_t oxide_manifest_kernel_count(const oxide_manifest *m);
/* Strings below live as long as m. Index errors: INVALID_ARGUMENT. */
OXIDE_API const char *oxide_manifest_target(const oxide_manifest *m);
OXIDE_API oxide_status oxide_manifest_kernel_find(const oxide_manifest *m, const char *name, size_t *index);
OXIDE_API const char *oxide_manifest_kernel_name(const oxide_manifest *m, size_t k);
OXIDE_API const char *oxide_manifest_kernel_entry(const oxide_manifest *m, size_t k);
OXIDE_API size_t oxide_manifest_param_count(const oxide_manifest *m, size_t k);
/* Any out pointer may be NULL. scalar: the scalar type (SCALAR) or element type (SLICE, PTR).
 * size/align: BYTES (TMA_DESC: 128/64; others: the PTX parameter size). */
OXIDE_API oxide_status oxide_manifest_param(const oxide_manifest *m, size_t k, size_t p, const char **name,
                                            oxide_param_kind *kind, oxide_scalar *scalar, int *is_mutable,
                                            uint32_t *size, uint32_t *align);
/* launch_bounds: (0,0) if none; cluster: (1,1,1) if none. */
OXIDE_API oxide_status oxide_manifest_kernel_attrs(const oxide_manifest *m, size_t k, uint32_t launch_bounds[2],
                                                   uint32_t cluster[3], uint32_t *dyn_smem);

/* ======================================================================================
 * Host runtime (runtime/; also in the LLVM-free liboxide_runtime)
 * ====================================================================================== */

/* BEGIN RUNTIME API */
/* END RUNTIME API */

#ifdef __cplusplus
}
#endif
#endif /* OXIDE_H */
