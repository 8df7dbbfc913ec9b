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
 *
 * One file of over 1,000 lines on purpose (as sqlite3.h): the whole contract, every type and
 * ownership rule, in one place to read and to bind from every language.
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

/* The version: generated from the file VERSION (tools/gen.py). */
/* clang-format off */
/* BEGIN GENERATED VERSION */
#define OXIDE_VERSION_MAJOR 0
#define OXIDE_VERSION_MINOR 1
#define OXIDE_VERSION_PATCH 0
/* END GENERATED VERSION */
/* clang-format on */

/* ======================================================================================
 * Status, errors, version
 * ====================================================================================== */

/* One value per row of lib/status.def (generated block; do not edit by hand). */
/* clang-format off */
/* BEGIN GENERATED STATUS */
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
/* END GENERATED STATUS */
/* clang-format on */

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
/* Which variants the tile lowering builds of a tile kernel whose operand loads could copy
 * through TMA (sm_90a): OXIDE_TILE_VARIANTS_ALL (the default) builds both, NAME (general copies)
 * and NAME__tma, and a launch of NAME runs NAME__tma when its tensors allow TMA. A caller that
 * knows its tensors (a front end specialising per launch, as Triton does on divisibility) builds
 * one and compiles and JIT-compiles half: _PLAIN builds only NAME with general copies; _TMA
 * builds only NAME with TMA copies, which refuses a launch whose TMA tensors do not allow it (a
 * 16-byte aligned base, a contiguous last dim, 16-byte row pitches). Kernels with no such loads
 * are the same under every choice. Errors: INVALID_ARGUMENT (another value). */
typedef enum oxide_tile_variants {
    OXIDE_TILE_VARIANTS_PLAIN = 1,
    OXIDE_TILE_VARIANTS_TMA = 2,
    OXIDE_TILE_VARIANTS_ALL = 3
} oxide_tile_variants;
OXIDE_API oxide_status oxide_options_set_tile_variants(oxide_options *opts, int variants);
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
    OXIDE_TYPE_STRUCT,
    OXIDE_TYPE_F8E4M3, /* 8-bit float, tile elements only (docs/tile.md) */
    OXIDE_TYPE_F8E5M2,
    OXIDE_TYPE_TILE,  /* tile<64x64 x f32>: a whole tile of a tile kernel */
    OXIDE_TYPE_TENSOR /* tensor<mut 2 x f32>: a tile kernel's tensor parameter */
} oxide_type_kind;

typedef enum oxide_addrspace {
    OXIDE_AS_GENERIC = 0,
    OXIDE_AS_GLOBAL = 1,
    OXIDE_AS_SHARED = 3,
    OXIDE_AS_CONSTANT = 4,
    OXIDE_AS_LOCAL = 5,
    OXIDE_AS_PARAM = 101
} oxide_addrspace;

/* Scalar types (VOID..F64, and F8E4M3/F8E5M2, which exist only as tile elements). Errors: INVALID_ARGUMENT (NULL, or a
 * kind that is not scalar). */
OXIDE_API oxide_status oxide_type_scalar(oxide_context *ctx, oxide_type_kind kind, oxide_type **out);
/* Opaque pointer in an address space. */
OXIDE_API oxide_status oxide_type_pointer(oxide_context *ctx, oxide_addrspace as, oxide_type **out);
/* Vector of 2, 4 or 8 integer, float or pointer elements. */
OXIDE_API oxide_status oxide_type_vector(oxide_context *ctx, oxide_type *elem, uint32_t count, oxide_type **out);
/* Array of count (>= 1) elements of a sized type. */
OXIDE_API oxide_status oxide_type_array(oxide_context *ctx, oxide_type *elem, uint64_t count, oxide_type **out);
/* Struct of nfields (>= 1) sized fields, C layout. */
OXIDE_API oxide_status oxide_type_struct(oxide_context *ctx, oxide_type *const *fields, size_t nfields,
                                         oxide_type **out);
OXIDE_API oxide_type_kind oxide_type_get_kind(const oxide_type *t);
/* Tile of rank 1..3 (shape[0..rank-1]): every dim a power of two from 1 to 65536, at most 2^20
 * elements; elem i1, i8, i32, i64, f16, bf16, f32, f8e4m3 or f8e5m2. Only inside tile kernels.
 * Tiles and tensors have no C layout (no globals, arrays or structs of them). */
OXIDE_API oxide_status oxide_type_tile(oxide_context *ctx, oxide_type *elem, uint32_t rank, const uint32_t *shape,
                                       oxide_type **out);
/* Tensor view (device pointer, shape, strides) of rank 1..4, elem as for tiles but not i1; only as a
 * tile kernel parameter (oxide_kernel_add_tensor_param). is_mutable: tile.store may write it. */
OXIDE_API oxide_status oxide_type_tensor(oxide_context *ctx, oxide_type *elem, uint32_t rank, int is_mutable,
                                         oxide_type **out);
/* Text form of the type, e.g. "ptr.global", "array<256 x f32>". Lives as long as the context. */
OXIDE_API const char *oxide_type_get_name(const oxide_type *t);

/* ---- interface types of kernel parameters (the manifest's element and scalar types) ---- */

/* One value per SCALAR row of lib/scalars.def (generated block; do not edit by hand). */
/* clang-format off */
/* BEGIN GENERATED SCALARS */
typedef enum oxide_scalar {
    OXIDE_SCALAR_BOOL = 0,
    OXIDE_SCALAR_I8 = 1,
    OXIDE_SCALAR_I16 = 2,
    OXIDE_SCALAR_I32 = 3,
    OXIDE_SCALAR_I64 = 4,
    OXIDE_SCALAR_U8 = 5,
    OXIDE_SCALAR_U16 = 6,
    OXIDE_SCALAR_U32 = 7,
    OXIDE_SCALAR_U64 = 8,
    OXIDE_SCALAR_F16 = 9,
    OXIDE_SCALAR_BF16 = 10,
    OXIDE_SCALAR_F32 = 11,
    OXIDE_SCALAR_F64 = 12,
    OXIDE_SCALAR_F8E4M3 = 13,
    OXIDE_SCALAR_F8E5M2 = 14
} oxide_scalar;
/* END GENERATED SCALARS */
/* clang-format on */

/* "bool", "i8", ... "f64"; NULL for unknown values. Static storage. */
OXIDE_API const char *oxide_scalar_name(oxide_scalar s);
/* Size in bytes (1..8); 0 for unknown values. */
OXIDE_API size_t oxide_scalar_size(oxide_scalar s);

/* One value per PARAM_KIND row of lib/scalars.def (generated block; do not edit by hand). */
/* clang-format off */
/* BEGIN GENERATED PARAM KINDS */
typedef enum oxide_param_kind {
    OXIDE_PARAM_SCALAR = 0,   /* a value of an oxide_scalar type */
    OXIDE_PARAM_SLICE = 1,    /* device pointer + u64 length (two PTX parameters) */
    OXIDE_PARAM_PTR = 2,      /* raw device pointer */
    OXIDE_PARAM_BYTES = 3,    /* by-value bytes of a size and alignment (e.g. closure captures) */
    OXIDE_PARAM_TMA_DESC = 4, /* 128-byte TMA descriptor passed by value */
    OXIDE_PARAM_TENSOR = 5    /* element pointer + shape + strides (tile kernels): 1 + 2*rank PTX parameters */
} oxide_param_kind;
/* END GENERATED PARAM KINDS */
/* clang-format on */

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
OXIDE_API oxide_status oxide_module_add_function(oxide_module *mod, const char *name, oxide_type *ret,
                                                 oxide_function **out);
/* Look up a kernel or device function by name. Errors: NOT_FOUND. */
OXIDE_API oxide_status oxide_module_get_function(oxide_module *mod, const char *name, oxide_function **out);

/* Add a module-level variable in GLOBAL, SHARED or CONSTANT space. align 0 = natural.
 * init may be NULL (zero for global/constant, undefined for shared); otherwise it holds exactly
 * the type's size in bytes (not allowed for shared). */
OXIDE_API oxide_status oxide_module_add_global(oxide_module *mod, const char *name, oxide_type *type,
                                               oxide_addrspace as, uint32_t align, const void *init, size_t init_size,
                                               oxide_global **out);

/* Device-function parameter of an IR type. Not for kernels (use oxide_kernel_add_*_param). */
OXIDE_API oxide_status oxide_function_add_param(oxide_function *fn, const char *name, oxide_type *type,
                                                oxide_value **out);

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
OXIDE_API oxide_status oxide_kernel_add_bytes_param(oxide_function *k, const char *name, uint32_t size, uint32_t align,
                                                    oxide_value **out);
/* A 128-byte TMA descriptor by value; *out is a generic pointer to it. */
OXIDE_API oxide_status oxide_kernel_add_tma_desc_param(oxide_function *k, const char *name, oxide_value **out);

/* Tile kernels (docs/tile.md): the compiler chooses the block size (32 * warps threads). Their
 * parameters are tensors and scalars (oxide_kernel_add_scalar_param); launch bounds, cluster and
 * dynamic shared memory are refused, hints take their place. */
OXIDE_API oxide_status oxide_module_add_tile_kernel(oxide_module *mod, const char *name, oxide_function **out);
/* A tensor parameter of a tile kernel; tensor is an OXIDE_TYPE_TENSOR type, *out its value. */
OXIDE_API oxide_status oxide_kernel_add_tensor_param(oxide_function *k, const char *name, oxide_type *tensor,
                                                     oxide_value **out);
typedef enum oxide_tile_hint {
    OXIDE_TILE_HINT_WARPS = 0,       /* 1, 2, 4, 8 or 16; default 4 */
    OXIDE_TILE_HINT_STAGES,          /* 1..8; default 3 */
    OXIDE_TILE_HINT_GROUP,           /* grouped tile order width, 0 = off (default) */
    OXIDE_TILE_HINT_PERSISTENT,      /* 0 (default) or 1 */
    OXIDE_TILE_HINT_CONSUMER_GROUPS, /* 1 (default) or 2 */
    OXIDE_TILE_HINT_CLUSTER,         /* 1 (default), 2 or 4 */
    OXIDE_TILE_HINT_PRODUCER         /* 1 (default): a producer warpgroup issues TMA copies; 0: off */
} oxide_tile_hint;
/* Set a hint; a hint that was set is printed (in the order above), even at its default. */
OXIDE_API oxide_status oxide_tile_kernel_set_hint(oxide_function *k, oxide_tile_hint hint, uint32_t value);
/* The hint's value (its default when not set). */
OXIDE_API oxide_status oxide_tile_kernel_get_hint(const oxide_function *k, oxide_tile_hint hint, uint32_t *value);

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

/* clang-format off */
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
    OXIDE_OP_CP_ASYNC_CA = 151, /* cp.async.ca */
    OXIDE_OP_CP_ASYNC_CG = 152, /* cp.async.cg */
    OXIDE_OP_CP_ASYNC_CA_ZFILL = 153, /* cp.async.ca.zfill */
    OXIDE_OP_CP_ASYNC_CG_ZFILL = 154, /* cp.async.cg.zfill */
    OXIDE_OP_CP_ASYNC_COMMIT = 155, /* cp.async.commit_group */
    OXIDE_OP_CP_ASYNC_WAIT = 156, /* cp.async.wait_group */
    OXIDE_OP_LDMATRIX = 157, /* ldmatrix */
    OXIDE_OP_LDMATRIX_TRANS = 158, /* ldmatrix.trans */
    OXIDE_OP_STMATRIX = 159, /* stmatrix */
    OXIDE_OP_STMATRIX_TRANS = 160, /* stmatrix.trans */
    OXIDE_OP_MMA_BF16 = 161, /* mma.m16n8k16.bf16 */
    OXIDE_OP_MMA_F16 = 162, /* mma.m16n8k16.f16 */
    OXIDE_OP_MBARRIER_INIT = 163, /* mbarrier.init */
    OXIDE_OP_MBARRIER_ARRIVE = 164, /* mbarrier.arrive */
    OXIDE_OP_MBARRIER_ARRIVE_EXPECT_TX = 165, /* mbarrier.arrive.expect_tx */
    OXIDE_OP_MBARRIER_EXPECT_TX = 166, /* mbarrier.expect_tx */
    OXIDE_OP_MBARRIER_TRY_WAIT_PARITY = 167, /* mbarrier.try_wait.parity */
    OXIDE_OP_MBARRIER_INVAL = 168, /* mbarrier.inval */
    OXIDE_OP_FENCE_PROXY_ASYNC = 169, /* fence.proxy.async */
    OXIDE_OP_ELECT_SYNC = 170, /* elect.sync */
    OXIDE_OP_TMA_LOAD = 171, /* tma.load */
    OXIDE_OP_TMA_LOAD_MULTICAST = 172, /* tma.load.multicast */
    OXIDE_OP_TMA_STORE = 173, /* tma.store */
    OXIDE_OP_BULK_COMMIT = 174, /* cp.async.bulk.commit_group */
    OXIDE_OP_BULK_WAIT = 175, /* cp.async.bulk.wait_group */
    OXIDE_OP_BULK_WAIT_READ = 176, /* cp.async.bulk.wait_group.read */
    OXIDE_OP_WGMMA_FENCE = 177, /* wgmma.fence */
    OXIDE_OP_WGMMA_COMMIT = 178, /* wgmma.commit_group */
    OXIDE_OP_WGMMA_WAIT = 179, /* wgmma.wait_group */
    OXIDE_OP_WGMMA_BF16 = 180, /* wgmma.mma_async.bf16 */
    OXIDE_OP_WGMMA_F16 = 181, /* wgmma.mma_async.f16 */
    OXIDE_OP_WGMMA_DESC = 182, /* wgmma.desc */
    OXIDE_OP_SETMAXNREG_INC = 183, /* setmaxnreg.inc */
    OXIDE_OP_SETMAXNREG_DEC = 184, /* setmaxnreg.dec */
    OXIDE_OP_MBARRIER_ARRIVE_CLUSTER = 185, /* mbarrier.arrive.cluster */
    OXIDE_OP_FENCE_MBARRIER_INIT = 186, /* fence.mbarrier_init */
    OXIDE_OP_TMA_PREFETCH_DESC = 187, /* tma.prefetch_desc */
    OXIDE_OP_TILE_PROGRAM_ID = 188, /* tile.program_id */
    OXIDE_OP_TILE_NUM_PROGRAMS = 189, /* tile.num_programs */
    OXIDE_OP_TILE_DIM = 190, /* tile.dim */
    OXIDE_OP_TILE_LOAD = 191, /* tile.load */
    OXIDE_OP_TILE_STORE = 192, /* tile.store */
    OXIDE_OP_TILE_ATOMIC_ADD = 193, /* tile.atomic_add */
    OXIDE_OP_TILE_FULL = 194, /* tile.full */
    OXIDE_OP_TILE_SPLAT = 195, /* tile.splat */
    OXIDE_OP_TILE_ARANGE = 196, /* tile.arange */
    OXIDE_OP_TILE_DOT = 197, /* tile.dot */
    OXIDE_OP_TILE_CAST = 198, /* tile.cast */
    OXIDE_OP_TILE_BROADCAST = 199, /* tile.broadcast */
    OXIDE_OP_TILE_EXPAND_DIMS = 200, /* tile.expand_dims */
    OXIDE_OP_TILE_RESHAPE = 201, /* tile.reshape */
    OXIDE_OP_TILE_PERMUTE = 202, /* tile.permute */
    OXIDE_OP_TILE_REDUCE = 203, /* tile.reduce */
    OXIDE_OP_TILE_PRINT = 204, /* tile.print */
    OXIDE_OP_MMA_E4M3_E4M3 = 205, /* mma.m16n8k32.e4m3.e4m3 */
    OXIDE_OP_MMA_E4M3_E5M2 = 206, /* mma.m16n8k32.e4m3.e5m2 */
    OXIDE_OP_MMA_E5M2_E4M3 = 207, /* mma.m16n8k32.e5m2.e4m3 */
    OXIDE_OP_MMA_E5M2_E5M2 = 208, /* mma.m16n8k32.e5m2.e5m2 */
    OXIDE_OP_CVT_E4M3X2_F32 = 209, /* cvt.e4m3x2.f32 */
    OXIDE_OP_CVT_E5M2X2_F32 = 210, /* cvt.e5m2x2.f32 */
    OXIDE_OP_CVT_E4M3X2_F16X2 = 211, /* cvt.e4m3x2.f16x2 */
    OXIDE_OP_CVT_E5M2X2_F16X2 = 212, /* cvt.e5m2x2.f16x2 */
    OXIDE_OP_CVT_F16X2_E4M3X2 = 213, /* cvt.f16x2.e4m3x2 */
    OXIDE_OP_CVT_F16X2_E5M2X2 = 214, /* cvt.f16x2.e5m2x2 */
    OXIDE_OP_WGMMA_WAIT_ACC = 215, /* wgmma.wait_group.acc */
    OXIDE_OP_WGMMA_BF16_RS = 216, /* wgmma.mma_async.rs.bf16 */
    OXIDE_OP_WGMMA_F16_RS = 217, /* wgmma.mma_async.rs.f16 */
    OXIDE_OP_WGMMA_E4M3_E4M3 = 218, /* wgmma.mma_async.e4m3.e4m3 */
    OXIDE_OP_WGMMA_E4M3_E5M2 = 219, /* wgmma.mma_async.e4m3.e5m2 */
    OXIDE_OP_WGMMA_E5M2_E4M3 = 220, /* wgmma.mma_async.e5m2.e4m3 */
    OXIDE_OP_WGMMA_E5M2_E5M2 = 221, /* wgmma.mma_async.e5m2.e5m2 */
    OXIDE_OP_COUNT_ = 222
} oxide_op;
/* END GENERATED OPS */
/* clang-format on */

/* Name of an op in the text format ("add"); NULL for unknown values. */
OXIDE_API const char *oxide_op_name(oxide_op op);

typedef enum oxide_attr_key {
    OXIDE_ATTR_ALIGN = 0, /* i: alignment in bytes, 0 = natural */
    OXIDE_ATTR_VOLATILE,  /* i: 0 or 1 */
    OXIDE_ATTR_SCOPE,     /* i: oxide_scope */
    OXIDE_ATTR_ORDER,     /* i: oxide_order */
    OXIDE_ATTR_PRED,      /* i: oxide_pred */
    OXIDE_ATTR_IMM,       /* i: op-specific immediate (barrier id, lane mask, element index, ...; docs/ir.md) */
    OXIDE_ATTR_VALUE,     /* i (integer types) or f (float types): value of a const */
    OXIDE_ATTR_STR,       /* s: printf format or assert message */
    OXIDE_ATTR_ELEM,      /* t: element type of offset and alloca */
    OXIDE_ATTR_SYM,       /* s: name of the global (global.addr) or function (call) */
    OXIDE_ATTR_PAD,       /* i or f (by the element type): tile.load's value outside the tensor */
    OXIDE_ATTR_PERM,      /* i: tile.permute's permutation, perm[k] in bits 4k..4k+3 */
    OXIDE_ATTR_KIND       /* i: tile.reduce's oxide_reduce_kind */
} oxide_attr_key;

typedef enum oxide_reduce_kind { OXIDE_REDUCE_SUM = 0, OXIDE_REDUCE_MAX, OXIDE_REDUCE_MIN } oxide_reduce_kind;

typedef enum oxide_scope { OXIDE_SCOPE_CTA = 0, OXIDE_SCOPE_CLUSTER, OXIDE_SCOPE_GPU, OXIDE_SCOPE_SYS } oxide_scope;
typedef enum oxide_order {
    OXIDE_ORDER_RELAXED = 0,
    OXIDE_ORDER_ACQUIRE,
    OXIDE_ORDER_RELEASE,
    OXIDE_ORDER_ACQ_REL,
    OXIDE_ORDER_SEQ_CST
} oxide_order;
typedef enum oxide_pred {
    OXIDE_PRED_EQ = 0,
    OXIDE_PRED_NE,
    OXIDE_PRED_SLT,
    OXIDE_PRED_SLE,
    OXIDE_PRED_SGT,
    OXIDE_PRED_SGE,
    OXIDE_PRED_ULT,
    OXIDE_PRED_ULE,
    OXIDE_PRED_UGT,
    OXIDE_PRED_UGE, /* icmp */
    OXIDE_PRED_OEQ,
    OXIDE_PRED_ONE,
    OXIDE_PRED_OLT,
    OXIDE_PRED_OLE,
    OXIDE_PRED_OGT,
    OXIDE_PRED_OGE,
    OXIDE_PRED_ORD,
    OXIDE_PRED_UNO,
    OXIDE_PRED_UEQ,
    OXIDE_PRED_UNE,
    OXIDE_PRED_FULT,
    OXIDE_PRED_FULE,
    OXIDE_PRED_FUGT,
    OXIDE_PRED_FUGE /* fcmp */
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
 * order relaxed, imm 0 -- except lane masks, which default to 0xffffffff, and cp.async sizes, which
 * default to 16 -- value 0).
 * *result (may be NULL) receives the result value, or NULL for ops without one.
 * Errors: INVALID_ARGUMENT, TYPE_MISMATCH (message names the op and operand), STATE (the block
 * already ends in a terminator), UNSUPPORTED. */
OXIDE_API oxide_status oxide_build_op(oxide_block *block, oxide_op op, oxide_value *const *operands, size_t noperands,
                                      oxide_type *result_type, const oxide_attr *attrs, size_t nattrs,
                                      oxide_value **result);
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

/* Import LLVM bitcode (e.g. rustc's --emit=llvm-bc) into the module as one unit. The bitstream's
 * structure is checked before LLVM reads it, so malformed input is a status, never the end of
 * the process (docs/reliability.md). Errors: PARSE (what is malformed, and where), UNSUPPORTED
 * (bitcode from a newer LLVM: the message says which). */
OXIDE_API oxide_status oxide_module_import_bitcode(oxide_module *mod, const void *data, size_t size,
                                                   const char *unit_name);
/* The same for bitcode from a source you do not trust (uploaded, downloaded, fuzzed): after the
 * structural check, LLVM reads and verifies the whole unit in a child process (POSIX fork) whose
 * address space may grow by at most max_memory bytes (0: 2 GiB) and which may use at most
 * max_seconds of CPU time (0: 30 s; it is killed 10 s of wall-clock time later). A reader crash,
 * fatal error or limit ends the child only: PARSE, saying which. A unit it accepts is stored as
 * oxide_module_import_bitcode stores it. Costs a fork and a full parse per call. */
OXIDE_API oxide_status oxide_module_import_bitcode_isolated(oxide_module *mod, const void *data, size_t size,
                                                            const char *unit_name, size_t max_memory,
                                                            unsigned max_seconds);
/* The tile kernels of the imported bitcode (Rust `#[tile_kernel]`s of cuda-tile) lifted into
 * tile kernels of mod, which then print, interpret and compile as any other (docs/rust-tile.md).
 * After one success later calls do nothing; a failed call leaves mod as it was.
 * oxide_module_compile calls it.
 * Errors: UNSUPPORTED (what cannot be lifted: names the kernel, the Rust source line where the
 * bitcode has debug info, and what to write instead), TYPE_MISMATCH and VERIFY (a tile op's rule,
 * naming the kernel and line), PARSE (unreadable bitcode or descriptors). */
OXIDE_API oxide_status oxide_module_import_tile_kernels(oxide_module *mod);

/* Compile to PTX text that carries the manifest (docs/design.md section 5). Verifies first.
 * *ptx is NUL-terminated, lives until the next compile of this module or its destruction;
 * *len (may be NULL) gets its length without the NUL.
 * Errors: VERIFY, UNSUPPORTED (construct the target cannot run: names it), CODEGEN. */
/* The SIMT IR the tile compiler makes of mod's tile kernels (docs/tile.md, "The lowering"): a new
 * module owned by mod's context (destroy it with oxide_module_destroy) holding mod's contents
 * with each tile kernel replaced, at its place and under its name, by a SIMT kernel whose tensor
 * parameters are views (NAME, NAME.dimI, NAME.strideI) and whose block shape is recorded for
 * the manifest. oxide_module_compile compiles tile kernels this way; this call shows what it
 * decided (`oxide compile --emit-simt`). Verifies mod first. Errors: VERIFY, UNSUPPORTED (what
 * the lowering cannot do yet or the target cannot hold: names the op and its line). */
OXIDE_API oxide_status oxide_module_lower_tile(oxide_module *mod, const oxide_options *opts, oxide_module **out);

OXIDE_API oxide_status oxide_module_compile(oxide_module *mod, const oxide_options *opts, const char **ptx,
                                            size_t *len);

/* Textual LLVM IR of the last successful oxide_module_compile (after optimisation), even if mod
 * has changed since. The compile does not print it: the first call (or the module's first edit
 * after the compile) makes it again from the module, which costs about a compile without codegen. */
OXIDE_API oxide_status oxide_module_get_llvm_ir(oxide_module *mod, const char **out);

/* Where the last oxide_module_compile of mod (a failed one too) spent its time: stage i, from 0
 * in the order the stages run, gives its stable name and its wall-clock milliseconds, 0 for a
 * stage that compile did not need (or before any compile). The stages: "tile" (tile kernels
 * lifted and lowered), "verify", "lower" (to LLVM IR), "import" (Rust bitcode), "target" (the
 * target machine), "legalize", "libdevice", "llvm-verify", "passes" (the IR pipeline),
 * "llvm-ir" (0: the IR is made when asked for, oxide_module_get_llvm_ir), "codegen" (NVPTX, PTX text), "ptx" (the
 * manifest); later versions may add stages, so look them up by name. Every compile records
 * them; `oxide compile --time-passes` prints them. Errors: INVALID_ARGUMENT (NULL), NOT_FOUND (i
 * past the last stage: ask from 0 until it). */
OXIDE_API oxide_status oxide_module_get_compile_time(oxide_module *mod, size_t i, const char **stage, double *ms);

/* ---- the module cache (docs/c-api.md, "The module cache") ---- */

/* The cache key of mod compiled with opts (NULL: the defaults): 64 lower-case hex digits and a
 * NUL, the SHA-256 of the module's printed text, its imported bitcode, the options and the
 * identity of this liboxide (version and build). Errors: INVALID_ARGUMENT. */
OXIDE_API oxide_status oxide_module_cache_key(oxide_module *mod, const oxide_options *opts, char key[65]);
/* oxide_module_compile through an on-disk cache. dir NULL: $OXIDE_CACHE_DIR, else
 * $XDG_CACHE_HOME/oxide, else ~/.cache/oxide (created 0700 if missing); "" turns the cache off.
 * On a hit the PTX comes from the cache, unverified and uncompiled, and the module has no LLVM IR
 * (oxide_module_get_llvm_ir: STATE). An entry that does not check out (truncated, corrupt,
 * another key or version) is a miss, recompiled and replaced; a directory that cannot be made,
 * read or written makes every call a miss, never an error. *ptx lives as for
 * oxide_module_compile; *len and *hit (1 hit, 0 miss) may be NULL. Errors: those of
 * oxide_module_compile. */
OXIDE_API oxide_status oxide_module_compile_cached(oxide_module *mod, const oxide_options *opts, const char *dir,
                                                   const char **ptx, size_t *len, int *hit);
/* One unit of LLVM bitcode, for oxide_bitcode_kernel_key: a name for messages, the bytes. */
typedef struct oxide_bitcode_ref {
    const char *name;
    const void *data;
    size_t size;
} oxide_bitcode_ref;
/* A key for the PTX of these bitcode units (as oxide_module_import_bitcode would take them)
 * compiled with opts (NULL: the defaults) that depends only on what their kernels are: the code
 * and data the kernel entries reach in the codegen units of their crates, whatever unit of a
 * crate split in several it is in (so an edit to host-only code keeps the key; with line info
 * the lines count too), and the bytes of the libraries once the kernels reach one; a unit the
 * kernels do not reach does not count; with this liboxide's identity and the options
 * (docs/c-api.md has the rules). 64 hex digits (SHA-256) and a NUL. Reads only the units with
 * kernels and those whose bytes name what they reach (in this process, as oxide_module_compile
 * does: check bitcode you do not trust with oxide_module_import_bitcode_isolated first), and
 * does not store the units (a build tool asks for the key, and imports and compiles only when it
 * changed). Errors: INVALID_ARGUMENT, PARSE (a unit it reads that is not readable bitcode,
 * named), OUT_OF_MEMORY. */
OXIDE_API oxide_status oxide_bitcode_kernel_key(const oxide_bitcode_ref *units, size_t n, const oxide_options *opts,
                                                char key[65]);

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
/* Any out pointer may be NULL. scalar: the scalar type (SCALAR) or element type (SLICE, PTR,
 * TENSOR). size/align: BYTES (TMA_DESC: 128/64; others: the PTX parameter size; TENSOR: its
 * pointer's). */
OXIDE_API oxide_status oxide_manifest_param(const oxide_manifest *m, size_t k, size_t p, const char **name,
                                            oxide_param_kind *kind, oxide_scalar *scalar, int *is_mutable,
                                            uint32_t *size, uint32_t *align);
/* launch_bounds: (0,0) if none; cluster: (1,1,1) if none. */
OXIDE_API oxide_status oxide_manifest_kernel_attrs(const oxide_manifest *m, size_t k, uint32_t launch_bounds[2],
                                                   uint32_t cluster[3], uint32_t *dyn_smem);
/* A TENSOR parameter's rank (1..4; its 1 + 2 * rank PTX parameters); 0 for other kinds. */
OXIDE_API oxide_status oxide_manifest_param_rank(const oxide_manifest *m, size_t k, size_t p, uint32_t *rank);
/* The block shape the compiler chose (lowered tile kernels: launches default to it); (0,0,0)
 * when the launch gives the block. */
OXIDE_API oxide_status oxide_manifest_kernel_block(const oxide_manifest *m, size_t k, uint32_t block[3]);

/* A kernel's launch contract (Rust's #[launch_contract]; docs/runtime.md, "Launch contracts"):
 * what every launch of the kernel must satisfy, checked by every launch (C, C++, Python, Rust).
 * fields says which parts the kernel declares; the others are ignored. */
/* BEGIN GENERATED CONTRACT FIELDS */
#define OXIDE_CONTRACT_DOMAIN 1u     /* domain: 1, 2 or 3; the grid and block are 1 beyond it */
#define OXIDE_CONTRACT_BLOCK 2u      /* block: exactly this block (the PTX says .reqntid) */
#define OXIDE_CONTRACT_SMEM 4u       /* smem_min..smem_max: the dynamic shared memory, in bytes */
#define OXIDE_CONTRACT_SMEM_ALIGN 8u /* smem_align: its alignment in the PTX (a power of two) */
#define OXIDE_CONTRACT_MIN_CC 16u    /* min_cc: the oldest compute capability (major, minor) */
/* END GENERATED CONTRACT FIELDS */
typedef struct oxide_launch_contract {
    uint32_t fields; /* OXIDE_CONTRACT_* */
    uint32_t domain;
    uint32_t block[3];
    uint32_t smem_min, smem_max; /* inclusive; equal for an exact size */
    uint32_t smem_align;
    uint32_t min_cc[2];
} oxide_launch_contract;
/* k's contract (fields 0: it declares none). */
OXIDE_API oxide_status oxide_manifest_kernel_contract(const oxide_manifest *m, size_t k, oxide_launch_contract *out);

/* ======================================================================================
 * Host runtime (runtime/; also in the LLVM-free liboxide_runtime)
 * ====================================================================================== */

/* BEGIN RUNTIME API */
/* docs/runtime.md is the guide. In short:
 *  - The CUDA driver (libcuda.so.1, or the path in the environment variable OXIDE_CUDA_DRIVER)
 *    is opened at the first runtime call; without it every runtime call returns
 *    OXIDE_ERROR_NO_DRIVER, without a GPU OXIDE_ERROR_NO_DEVICE, and the compiler keeps working.
 *  - Each device's primary CUDA context is retained and made current on the calling thread by
 *    the calls that need it (the CUDA runtime API does the same), so oxide shares memory,
 *    streams and modules with PyTorch, CuPy and other users of that context.
 *  - Handles are safe to use from several threads; one handle is destroyed once, by one thread,
 *    after all work that uses it has been submitted.
 *  - Fault policy: a kernel fault (illegal address, trap, ...) is sticky in CUDA. The call that
 *    sees it returns OXIDE_ERROR_CUDA naming the CUDA error and the kernel last launched on the
 *    stream; the device is then marked failed and every later call on it returns
 *    OXIDE_ERROR_DEVICE_FAILED until oxide_device_reset(), which the caller must ask for: it
 *    resets the primary context (also for other libraries in the process) and invalidates every
 *    stream, event, buffer, module, kernel and graph of that device. */

typedef struct oxide_device oxide_device;               /* a GPU; lives as long as the process */
typedef struct oxide_stream oxide_stream;               /* ordered queue of work on one device */
typedef struct oxide_event oxide_event;                 /* marker in a stream, with timing */
typedef struct oxide_buffer oxide_buffer;               /* device memory */
typedef struct oxide_loaded_module oxide_loaded_module; /* PTX or cubin loaded on a device */
typedef struct oxide_kernel oxide_kernel;               /* a kernel of a loaded module */
typedef struct oxide_task oxide_task;                   /* lazy async work, run on sync */
typedef struct oxide_graph oxide_graph;                 /* work captured once, replayed */

/* ---- driver and devices ---- */

/* CUDA version the driver supports, e.g. 13000 for 13.0. Errors: NO_DRIVER. */
OXIDE_API oxide_status oxide_driver_version(int *version);
/* Number of GPUs the driver sees. Errors: NO_DRIVER, NO_DEVICE (none). */
OXIDE_API oxide_status oxide_device_count(int *count);
/* Device index (0-based; CUDA_VISIBLE_DEVICES applies). Retains its primary context on first use.
 * The handle lives as long as the process; there is nothing to destroy.
 * Errors: NO_DRIVER, NO_DEVICE (index out of range), CUDA. */
OXIDE_API oxide_status oxide_device_get(int index, oxide_device **out);
/* Name, e.g. "NVIDIA H200"; lives as long as the process. */
OXIDE_API oxide_status oxide_device_name(const oxide_device *dev, const char **name);
OXIDE_API oxide_status oxide_device_index(const oxide_device *dev, int *index);
/* Compute capability, e.g. 9 and 0 for an H200 (whose arch-specific target is sm_90a). */
OXIDE_API oxide_status oxide_device_compute_capability(const oxide_device *dev, int *major, int *minor);
OXIDE_API oxide_status oxide_device_sm_count(const oxide_device *dev, int *count);
OXIDE_API oxide_status oxide_device_total_memory(const oxide_device *dev, size_t *bytes);
/* Free and total device memory now. Either pointer may be NULL. */
OXIDE_API oxide_status oxide_device_memory_info(oxide_device *dev, size_t *free_bytes, size_t *total_bytes);
/* Any attribute by its CUDA number (CUdevice_attribute in cuda.h, e.g. 16 = SM count). */
OXIDE_API oxide_status oxide_device_attribute(const oxide_device *dev, int cu_attribute, int *value);
/* Wait for all work on the device. Reports a kernel fault as described above. */
OXIDE_API oxide_status oxide_device_synchronize(oxide_device *dev);
/* Encode a tiled TMA descriptor (cuTensorMapEncodeTiled) into desc128 (128 bytes, 64-byte
 * aligned) for a tensor of `rank` (1..5) dimensions of dtype (an oxide_scalar) at global_addr.
 * dims[rank], innermost first; strides_bytes[rank-1]: the byte strides of dims 1..rank-1 (each
 * a multiple of 16); box[rank]: the tile a copy moves (each 1..256, the inner row a multiple of
 * 16 bytes and at most swizzle_bytes); elem_strides[rank] or NULL for 1s; swizzle_bytes 0, 32,
 * 64 or 128. Out-of-range elements read as zero. Errors: INVALID_ARGUMENT (naming the broken
 * rule), UNSUPPORTED (a driver without TMA), CUDA. */
OXIDE_API oxide_status oxide_tma_desc_encode_tiled(oxide_device *dev, void *desc128, int dtype, uint32_t rank,
                                                   uint64_t global_addr, const uint64_t *dims,
                                                   const uint64_t *strides_bytes, const uint32_t *box,
                                                   const uint32_t *elem_strides, int swizzle_bytes);
/* OK, or DEVICE_FAILED with the fault that failed it (the message names it). No driver call. */
OXIDE_API oxide_status oxide_device_check(const oxide_device *dev);
/* Reset the device's primary context (cuDevicePrimaryCtxReset) to clear a failed state. Every
 * stream, event, buffer, pinned allocation, module, kernel and graph made on the device before
 * is invalid afterwards (calls on them return STATE; destroy them, which is then host-only).
 * The caller makes sure no other thread or library uses the device meanwhile. Errors:
 * DEVICE_FAILED when the driver cannot recover from the fault in this process (the message says
 * to restart it): CUDA documents kernel faults as lasting for the process, and driver 580
 * (CUDA 13.0) on an H200 behaves so. */
OXIDE_API oxide_status oxide_device_reset(oxide_device *dev);
/* For interoperation: the CUdevice and the primary CUcontext (either pointer may be NULL). */
OXIDE_API oxide_status oxide_device_native(const oxide_device *dev, int *cu_device, void **cu_context);
/* Make the device's primary context current on this thread (before calling the driver directly). */
OXIDE_API oxide_status oxide_device_make_current(oxide_device *dev);

/* ---- streams ---- */

#define OXIDE_STREAM_NON_BLOCKING 1u /* no implicit synchronisation with the default stream */

OXIDE_API oxide_status oxide_stream_create(oxide_device *dev, unsigned flags, oxide_stream **out);
/* The device's default (legacy NULL) stream. Not capturable; destroying it does nothing. */
OXIDE_API oxide_status oxide_stream_default(oxide_device *dev, oxide_stream **out);
/* Wrap a CUstream made elsewhere (e.g. torch.cuda.current_stream().cuda_stream) on the device's
 * primary context; NULL gives the default stream. Destroying the wrapper leaves the CUstream
 * alone. */
OXIDE_API oxide_status oxide_stream_wrap(oxide_device *dev, void *cu_stream, oxide_stream **out);
/* Destroys the stream (after its work completes, as CUDA does). NULL is ignored. */
OXIDE_API void oxide_stream_destroy(oxide_stream *stream);
OXIDE_API oxide_status oxide_stream_synchronize(oxide_stream *stream);
/* *done = 1 when all work queued so far has completed, else 0. */
OXIDE_API oxide_status oxide_stream_query(oxide_stream *stream, int *done);
/* Later work on stream waits until event's last recorded work completes. The event may have been
 * recorded on another stream of the same device or on a stream of another device. */
OXIDE_API oxide_status oxide_stream_wait_event(oxide_stream *stream, oxide_event *event);
OXIDE_API oxide_status oxide_stream_native(const oxide_stream *stream, void **cu_stream);
OXIDE_API oxide_device *oxide_stream_get_device(const oxide_stream *stream);
/* Record the work queued on stream from now until end_capture into a graph instead of running
 * it (not on the default stream). Errors: STATE (default stream, already capturing). */
OXIDE_API oxide_status oxide_stream_begin_capture(oxide_stream *stream);
OXIDE_API oxide_status oxide_stream_end_capture(oxide_stream *stream, oxide_graph **out);
/* fn(user, status) runs once on a driver thread when the work queued on stream so far has
 * completed: status OXIDE_OK, or OXIDE_ERROR_CUDA when the device failed first (it still runs, so
 * a waiter is always woken; ask the stream for the error). fn must not call CUDA or oxide runtime
 * functions. Errors: STATE (the stream is capturing: use oxide_task_host_fn in captured work),
 * UNSUPPORTED (a driver without cuStreamAddCallback), CUDA. */
typedef void (*oxide_stream_callback)(void *user, oxide_status status);
OXIDE_API oxide_status oxide_stream_add_callback(oxide_stream *stream, oxide_stream_callback fn, void *user);

/* ---- events ---- */

#define OXIDE_EVENT_DISABLE_TIMING 1u /* cheaper; elapsed_ms is not available */
#define OXIDE_EVENT_BLOCKING_SYNC 2u  /* synchronize sleeps instead of spinning */

OXIDE_API oxide_status oxide_event_create(oxide_device *dev, unsigned flags, oxide_event **out);
OXIDE_API void oxide_event_destroy(oxide_event *event);
/* stream NULL: the device's default stream. */
OXIDE_API oxide_status oxide_event_record(oxide_event *event, oxide_stream *stream);
OXIDE_API oxide_status oxide_event_synchronize(oxide_event *event);
OXIDE_API oxide_status oxide_event_query(oxide_event *event, int *done);
/* Milliseconds between two recorded, completed events (resolution about 0.5 us). */
OXIDE_API oxide_status oxide_event_elapsed_ms(oxide_event *start, oxide_event *end, float *ms);

/* ---- memory ---- */

/* Device memory of bytes (>= 1) bytes, aligned to 256. Errors: OUT_OF_MEMORY (message says how
 * much is free), DEVICE_FAILED. */
OXIDE_API oxide_status oxide_buffer_alloc(oxide_device *dev, size_t bytes, oxide_buffer **out);
/* A buffer over device memory owned elsewhere (freeing it leaves the memory alone). */
OXIDE_API oxide_status oxide_buffer_wrap(oxide_device *dev, uint64_t device_ptr, size_t bytes, oxide_buffer **out);
/* Frees the memory (wait for work that uses it first). NULL is ignored. */
OXIDE_API void oxide_buffer_free(oxide_buffer *buf);
/* Device address (0 for NULL). */
OXIDE_API uint64_t oxide_buffer_ptr(const oxide_buffer *buf);
OXIDE_API size_t oxide_buffer_size(const oxide_buffer *buf);
OXIDE_API oxide_device *oxide_buffer_get_device(const oxide_buffer *buf);

/* Page-locked host memory (fast and truly asynchronous copies; usable from every device). */
OXIDE_API oxide_status oxide_host_alloc(oxide_device *dev, size_t bytes, void **out);
/* Errors: INVALID_ARGUMENT (not from oxide_host_alloc). NULL is OK. */
OXIDE_API oxide_status oxide_host_free(void *ptr);

/* Synchronous copies (return when done). Host memory may be pageable or pinned. */
OXIDE_API oxide_status oxide_memcpy_htod(oxide_device *dev, uint64_t dst, const void *src, size_t bytes);
OXIDE_API oxide_status oxide_memcpy_dtoh(oxide_device *dev, void *dst, uint64_t src, size_t bytes);
OXIDE_API oxide_status oxide_memcpy_dtod(oxide_device *dev, uint64_t dst, uint64_t src, size_t bytes);
/* Copies queued on stream (not NULL: it names the device; see oxide_stream_default). Asynchronous
 * with respect to the host only for pinned host memory. */
OXIDE_API oxide_status oxide_memcpy_htod_async(oxide_stream *stream, uint64_t dst, const void *src, size_t bytes);
OXIDE_API oxide_status oxide_memcpy_dtoh_async(oxide_stream *stream, void *dst, uint64_t src, size_t bytes);
OXIDE_API oxide_status oxide_memcpy_dtod_async(oxide_stream *stream, uint64_t dst, uint64_t src, size_t bytes);
/* Set count elements of elem_size (1, 2 or 4) bytes at dst to the low bytes of value. */
OXIDE_API oxide_status oxide_memset(oxide_device *dev, uint64_t dst, uint32_t value, size_t count, unsigned elem_size);
OXIDE_API oxide_status oxide_memset_async(oxide_stream *stream, uint64_t dst, uint32_t value, size_t count,
                                          unsigned elem_size);

/* ---- modules and kernels ---- */

/* Load PTX (len bytes; need not be NUL-terminated) on dev, JIT-compiled by the driver. The oxide
 * manifest in the PTX gives the kernels' names and checked signatures; PTX without one loads too
 * (its kernels are found by .entry name and launched with oxide_kernel_launch_raw only).
 * Errors: MANIFEST (malformed manifest, or one that does not match the PTX), UNSUPPORTED (PTX for
 * a newer ISA than the driver accepts, or for another SM than the device's: the message says
 * which and what to do), CUDA (other JIT failures; the message holds the JIT error log). */
OXIDE_API oxide_status oxide_loaded_module_load_ptx(oxide_device *dev, const char *ptx, size_t len,
                                                    oxide_loaded_module **out);
/* Load a cubin or fatbin. manifest_text (may be NULL) is the PTX it was built from, or just its
 * manifest line, to give the kernels' names and signatures. */
OXIDE_API oxide_status oxide_loaded_module_load_cubin(oxide_device *dev, const void *image, size_t size,
                                                      const char *manifest_text, size_t manifest_len,
                                                      oxide_loaded_module **out);
/* Unloads; its kernels die with it. NULL is ignored. */
OXIDE_API void oxide_loaded_module_destroy(oxide_loaded_module *lm);
/* The manifest, or NULL if the module has none. Lives as long as lm. */
OXIDE_API const oxide_manifest *oxide_loaded_module_manifest(const oxide_loaded_module *lm);
/* The JIT compiler's info log of the load ("" if none). Lives as long as lm. */
OXIDE_API const char *oxide_loaded_module_jit_log(const oxide_loaded_module *lm);
/* Kernel by its manifest name (or, failing that, its .entry name). The kernel belongs to lm;
 * asking twice gives the same handle. Errors: NOT_FOUND (the message lists the kernels). */
OXIDE_API oxide_status oxide_loaded_module_get_kernel(oxide_loaded_module *lm, const char *name, oxide_kernel **out);

/* Manifest name and .entry name; live as long as the module. "" for NULL. */
OXIDE_API const char *oxide_kernel_name(const oxide_kernel *k);
OXIDE_API const char *oxide_kernel_entry(const oxide_kernel *k);
/* The CUfunction, for interoperation. */
OXIDE_API oxide_status oxide_kernel_native(const oxide_kernel *k, void **cu_function);

/* Resources of the compiled kernel (values of CUfunction_attribute, cuFuncGetAttribute). */
typedef enum oxide_kernel_attr {
    OXIDE_KERNEL_MAX_THREADS_PER_BLOCK = 0,   /* most threads a block of it can have */
    OXIDE_KERNEL_SHARED_BYTES = 1,            /* static shared memory per block */
    OXIDE_KERNEL_CONST_BYTES = 2,             /* constant memory */
    OXIDE_KERNEL_LOCAL_BYTES = 3,             /* local memory (stack, spills) per thread */
    OXIDE_KERNEL_NUM_REGS = 4,                /* registers per thread */
    OXIDE_KERNEL_PTX_VERSION = 5,             /* PTX ISA, major*10+minor */
    OXIDE_KERNEL_BINARY_VERSION = 6,          /* SM of the machine code, major*10+minor */
    OXIDE_KERNEL_MAX_DYNAMIC_SHARED_BYTES = 8 /* dynamic shared memory a launch may ask for */
} oxide_kernel_attr;
OXIDE_API oxide_status oxide_kernel_get_attribute(oxide_kernel *k, oxide_kernel_attr attr, int *value);
/* Blocks of block_threads threads using dyn_smem bytes of dynamic shared memory that fit on one SM
 * at once (cuOccupancyMaxActiveBlocksPerMultiprocessor). */
OXIDE_API oxide_status oxide_kernel_occupancy(oxide_kernel *k, uint32_t block_threads, size_t dyn_smem,
                                              int *blocks_per_sm);
/* Block size reaching the best occupancy, and the grid size that fills the device with it. */
OXIDE_API oxide_status oxide_kernel_suggest_block_size(oxide_kernel *k, size_t dyn_smem, int *min_grid,
                                                       int *block_threads);

/* ---- launch ---- */

/* What a caller passes for each manifest parameter. Build with the helpers below or fill the
 * fields (zero those a kind does not use). */
typedef enum oxide_arg_kind {
    OXIDE_ARG_SCALAR = 0, /* for a scalar parameter: value of type `type` */
    OXIDE_ARG_BUFFER,     /* for a slice or ptr parameter: device memory at ptr, len elements of `type` */
    OXIDE_ARG_BYTES,      /* for a bytes parameter: size bytes at `bytes` */
    OXIDE_ARG_TMA_DESC,   /* for a tma_desc parameter: the 128-byte descriptor at `bytes` */
    OXIDE_ARG_TENSOR      /* for a tensor parameter (tile kernels): the oxide_tensor at `bytes` */
} oxide_arg_kind;

/* A tensor argument: a strided view of memory (device memory for launches, host memory for the
 * tile interpreter), as DLPack's DLTensor describes one. struct_size is sizeof(oxide_tensor) as
 * the caller was compiled: later versions only append fields, so old callers keep working. */
typedef struct oxide_tensor {
    size_t struct_size;
    uint64_t data;        /* address of the allocation */
    uint64_t byte_offset; /* element [0, .., 0] is at data + byte_offset */
    oxide_scalar elem;    /* element type */
    uint32_t rank;        /* 1..4: the first rank entries of shape and strides are used */
    int64_t shape[4];     /* elements per dim, >= 0 */
    int64_t strides[4];   /* in elements (not bytes), any sign */
    uint32_t is_mutable;  /* non-zero: the kernel may write it (needed by mut tensor parameters) */
    uint32_t reserved;    /* 0 */
} oxide_tensor;

typedef struct oxide_arg {
    oxide_arg_kind kind;
    oxide_scalar type;   /* SCALAR: its type; BUFFER: the element type */
    uint32_t is_mutable; /* BUFFER: non-zero lets a kernel write through it ("mut" parameters) */
    uint32_t reserved;   /* 0 */
    uint64_t value;      /* SCALAR: the value's bits in the low-order bytes (f32: its bit pattern) */
    uint64_t ptr;        /* BUFFER: device address */
    uint64_t len;        /* BUFFER: element count (a slice parameter receives it) */
    const void *bytes;   /* BYTES, TMA_DESC: the bytes, read when the launch is made */
    size_t size;         /* BYTES, TMA_DESC: their size */
} oxide_arg;

static inline oxide_arg oxide_arg_scalar_bits(oxide_scalar type, uint64_t bits) {
    oxide_arg a = {OXIDE_ARG_SCALAR, type, 0, 0, bits, 0, 0, 0, 0};
    return a;
}
static inline oxide_arg oxide_arg_bool(int v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_BOOL, v ? 1u : 0u); }
static inline oxide_arg oxide_arg_i8(int8_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_I8, (uint8_t)v); }
static inline oxide_arg oxide_arg_i16(int16_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_I16, (uint16_t)v); }
static inline oxide_arg oxide_arg_i32(int32_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_I32, (uint32_t)v); }
static inline oxide_arg oxide_arg_i64(int64_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_I64, (uint64_t)v); }
static inline oxide_arg oxide_arg_u8(uint8_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_U8, v); }
static inline oxide_arg oxide_arg_u16(uint16_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_U16, v); }
static inline oxide_arg oxide_arg_u32(uint32_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_U32, v); }
static inline oxide_arg oxide_arg_u64(uint64_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_U64, v); }
/* f16 and bf16 take the 16-bit pattern. */
static inline oxide_arg oxide_arg_f16_bits(uint16_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_F16, v); }
static inline oxide_arg oxide_arg_bf16_bits(uint16_t v) { return oxide_arg_scalar_bits(OXIDE_SCALAR_BF16, v); }
static inline oxide_arg oxide_arg_f32(float v) {
    union {
        float f;
        uint32_t u;
    } c;
    c.f = v;
    return oxide_arg_scalar_bits(OXIDE_SCALAR_F32, c.u);
}
static inline oxide_arg oxide_arg_f64(double v) {
    union {
        double f;
        uint64_t u;
    } c;
    c.f = v;
    return oxide_arg_scalar_bits(OXIDE_SCALAR_F64, c.u);
}
/* len elements of elem at device address ptr; is_mutable: the kernel may write them. */
static inline oxide_arg oxide_arg_buffer(oxide_scalar elem, uint64_t ptr, uint64_t len, int is_mutable) {
    oxide_arg a = {OXIDE_ARG_BUFFER, elem, is_mutable ? 1u : 0u, 0, 0, ptr, len, 0, 0};
    return a;
}
/* A whole buffer as elements of elem. */
static inline oxide_arg oxide_arg_from_buffer(const oxide_buffer *buf, oxide_scalar elem, int is_mutable) {
    size_t es = oxide_scalar_size(elem);
    return oxide_arg_buffer(elem, oxide_buffer_ptr(buf), es ? oxide_buffer_size(buf) / es : 0, is_mutable);
}
static inline oxide_arg oxide_arg_bytes(const void *bytes, size_t size) {
    oxide_arg a = {OXIDE_ARG_BYTES, OXIDE_SCALAR_U8, 0, 0, 0, 0, 0, bytes, size};
    return a;
}
static inline oxide_arg oxide_arg_tma_desc(const void *desc128) {
    oxide_arg a = {OXIDE_ARG_TMA_DESC, OXIDE_SCALAR_U8, 0, 0, 0, 0, 0, desc128, 128};
    return a;
}
/* The tensor is read when the launch is made (it need not outlive the call). */
static inline oxide_arg oxide_arg_tensor(const oxide_tensor *t) {
    oxide_arg a = {OXIDE_ARG_TENSOR,    t ? t->elem : OXIDE_SCALAR_U8, t ? t->is_mutable : 0u, 0, 0, 0, 0, t,
                   sizeof(oxide_tensor)};
    return a;
}

#define OXIDE_LAUNCH_COOPERATIVE 1u /* all blocks resident at once (grid-wide sync); cuLaunchKernelEx */

typedef struct oxide_launch_config {
    uint32_t grid[3];    /* blocks */
    uint32_t block[3];   /* threads per block */
    uint32_t smem;       /* dynamic shared memory in bytes; 0: the manifest's dyn_smem */
    uint32_t cluster[3]; /* blocks per cluster; {0,0,0}: the manifest's cluster shape */
    uint32_t flags;      /* OXIDE_LAUNCH_* */
} oxide_launch_config;

/* Launch k on stream (NULL: the device's default stream) with args checked against the
 * manifest: count, kind, scalar and element type, mutability (a read-only buffer cannot go to a
 * mut parameter), and the size of bytes and tma_desc arguments. A slice parameter receives the
 * buffer's address and length. smem 0 uses the manifest's dyn_smem; more than 48 KiB is opted in
 * for the kernel. A kernel whose manifest gives a cluster shape is launched with it.
 * Errors: LAUNCH (the message names the kernel, the argument and what was expected), CUDA (the
 * driver refused: names the error and the kernel), DEVICE_FAILED, STATE (stale handles). */
OXIDE_API oxide_status oxide_kernel_launch(oxide_kernel *k, oxide_stream *stream, const uint32_t grid[3],
                                           const uint32_t block[3], uint32_t smem, const oxide_arg *args, size_t nargs);
/* Launch with a full configuration: cluster shape, cooperative launch. */
OXIDE_API oxide_status oxide_kernel_launch_ex(oxide_kernel *k, oxide_stream *stream, const oxide_launch_config *cfg,
                                              const oxide_arg *args, size_t nargs);
/* Unchecked launch for callers that lay out the PTX parameters themselves (cuLaunchKernel's
 * kernelParams: one pointer per PTX parameter; a slice is two). */
OXIDE_API oxide_status oxide_kernel_launch_raw(oxide_kernel *k, oxide_stream *stream, const oxide_launch_config *cfg,
                                               void **params);
/* A launch shape checked against a launch contract and the limits of dev, without launching
 * (Rust's prepare_NAME does it once): the contract's fields, then the block (at most 1024
 * threads, 1024 x 1024 x 64), the grid (2^31-1 x 65535 x 65535) and the dynamic shared memory
 * (what dev allows a block). cfg->smem is the size itself (0 is none); kernel names the kernel
 * in messages. Errors: LAUNCH (names the kernel, the contract field or limit, and the value
 * given), INVALID_ARGUMENT (NULL, a malformed contract). */
OXIDE_API oxide_status oxide_launch_contract_check(oxide_device *dev, const char *kernel,
                                                   const oxide_launch_contract *contract,
                                                   const oxide_launch_config *cfg);
/* The same for a loaded kernel: its manifest's contract (none: limits only), the device's limits
 * and the kernel's own (its threads per block). smem 0 means the manifest's dyn_smem, as in a
 * launch. */
OXIDE_API oxide_status oxide_kernel_check_launch(oxide_kernel *k, const oxide_launch_config *cfg);
/* A PTX bundle (one PTX text per target, as `cargo oxide build --sm sm_80,sm_90a` makes for a
 * program or a --module file; docs/runtime.md, "PTX bundles") gives the text for a GPU of compute
 * capability major.minor: the arch-specific target of exactly that capability (sm_90a on 9.0),
 * else the newest target at or below it, which the driver JIT-compiles. *ptx points into data.
 * Plain PTX comes back as it is (target ""). oxide_loaded_module_load_ptx does this itself.
 * target (may be NULL) gets the chosen target's name. Errors: UNSUPPORTED (no target runs there:
 * names them and the capability), PARSE (a malformed bundle), INVALID_ARGUMENT. */
OXIDE_API oxide_status oxide_ptx_bundle_select(const char *data, size_t len, int major, int minor, const char **ptx,
                                               size_t *ptx_len, char *target, size_t target_cap);

/* ---- async composition: lazy tasks, run on submit/sync, captured as CUDA graphs ---- */

/* A task describes work without doing it. Tasks are reference-counted and immutable: composing
 * takes a reference to each part, so destroy your handles whenever you are done with them.
 * Memory a task reads or writes must stay valid until the work has run (each time it runs).
 * All parts of a composed task belong to one device. */
/* A checked launch; args are checked now and copied (bytes too). The kernel's module must outlive
 * the task. */
OXIDE_API oxide_status oxide_task_launch(oxide_kernel *k, const oxide_launch_config *cfg, const oxide_arg *args,
                                         size_t nargs, oxide_task **out);
OXIDE_API oxide_status oxide_task_copy_htod(oxide_device *dev, uint64_t dst, const void *src, size_t bytes,
                                            oxide_task **out);
OXIDE_API oxide_status oxide_task_copy_dtoh(oxide_device *dev, void *dst, uint64_t src, size_t bytes, oxide_task **out);
OXIDE_API oxide_status oxide_task_copy_dtod(oxide_device *dev, uint64_t dst, uint64_t src, size_t bytes,
                                            oxide_task **out);
OXIDE_API oxide_status oxide_task_memset(oxide_device *dev, uint64_t dst, uint32_t value, size_t count,
                                         unsigned elem_size, oxide_task **out);
/* fn(user) runs on a driver thread when the stream reaches it; it must not call CUDA or oxide
 * runtime functions (CUDA's rule for host functions). */
typedef void (*oxide_host_fn)(void *user);
OXIDE_API oxide_status oxide_task_host_fn(oxide_device *dev, oxide_host_fn fn, void *user, oxide_task **out);
/* tasks[0], then tasks[1], ... (n >= 1). */
OXIDE_API oxide_status oxide_task_sequence(oxide_task *const *tasks, size_t n, oxide_task **out);
/* All of tasks (n >= 1) at once, on separate streams; done when every one is done. */
OXIDE_API oxide_status oxide_task_join(oxide_task *const *tasks, size_t n, oxide_task **out);
/* Drop this reference. NULL is ignored. */
OXIDE_API void oxide_task_destroy(oxide_task *task);
/* Queue the task's work on stream (NULL: default) and return. */
OXIDE_API oxide_status oxide_task_submit(oxide_task *task, oxide_stream *stream);
/* Queue it and wait for the stream. */
OXIDE_API oxide_status oxide_task_sync(oxide_task *task, oxide_stream *stream);

/* Capture the task once as an executable CUDA graph (host memory in copies should be pinned). */
OXIDE_API oxide_status oxide_graph_create(oxide_task *task, oxide_graph **out);
/* Replay the graph on stream (NULL: default); each replay does the task's work again. */
OXIDE_API oxide_status oxide_graph_launch(oxide_graph *graph, oxide_stream *stream);
OXIDE_API void oxide_graph_destroy(oxide_graph *graph);

/* ---- NVTX ranges (docs/runtime.md, "NVTX ranges") ---- */

/* Open a range named name on the calling thread, as Nsight Systems shows it, until the matching
 * oxide_nvtx_pop. NVTX is opened with dlopen at the first call: the library OXIDE_NVTX_LIBRARY
 * names, else libnvtx3interop.so.1 (CUDA 13), else libnvToolsExt.so.1 (CUDA 12). Without one the
 * ranges do nothing and the calls still succeed, so code can leave them in.
 * Errors: INVALID_ARGUMENT (name NULL). */
OXIDE_API oxide_status oxide_nvtx_push(const char *name);
/* Close the innermost range this thread opened. Errors: STATE (none is open on this thread). */
OXIDE_API oxide_status oxide_nvtx_pop(void);
/* 1 when an NVTX library was found (ranges reach a profiler that injects itself), else 0. */
OXIDE_API int oxide_nvtx_available(void);
/* on (non-zero): every launch -- checked, raw, or a task's -- runs inside a range named after its
 * kernel. The default comes from the environment at the first launch: OXIDE_NVTX_LAUNCHES set and
 * not "0" turns it on. */
OXIDE_API void oxide_nvtx_set_launch_ranges(int on);
OXIDE_API int oxide_nvtx_launch_ranges(void);

/* ---- several devices (docs/runtime.md, "Several GPUs") ---- */

/* *can = 1 when kernels on dev can use peer's memory once peer access is enabled
 * (cuDeviceCanAccessPeer); 0 when they cannot, and for dev == peer. */
OXIDE_API oxide_status oxide_device_can_access_peer(const oxide_device *dev, const oxide_device *peer, int *can);
/* Let kernels on dev read and write peer's memory (cuCtxEnablePeerAccess in dev's primary
 * context). One direction: enable (peer, dev) too for the other. Enabling again, or after another
 * library did, is OK. Errors: INVALID_ARGUMENT (dev == peer), UNSUPPORTED (the two cannot reach
 * each other; the message names both), CUDA. */
OXIDE_API oxide_status oxide_device_enable_peer_access(oxide_device *dev, oxide_device *peer);
/* *enabled = 1 when oxide enabled dev's access to peer (cleared by oxide_device_reset(dev)). */
OXIDE_API oxide_status oxide_device_peer_access_enabled(const oxide_device *dev, const oxide_device *peer,
                                                        int *enabled);
/* Copy bytes from src (memory of src_dev) to dst (memory of dst_dev), queued on stream, which
 * belongs to either device (NULL: dst_dev's default stream). Works without peer access (the
 * driver stages it, slower). Order it after work on the other device with an event
 * (oxide_stream_wait_event takes one of another device). Errors: INVALID_ARGUMENT (NULL, or
 * memory of another device than the one named), DEVICE_FAILED, CUDA. */
OXIDE_API oxide_status oxide_memcpy_peer_async(oxide_stream *stream, oxide_device *dst_dev, uint64_t dst,
                                               oxide_device *src_dev, uint64_t src, size_t bytes);
/* The same, after all work on src_dev, returning when the copy is done. */
OXIDE_API oxide_status oxide_memcpy_peer(oxide_device *dst_dev, uint64_t dst, oxide_device *src_dev, uint64_t src,
                                         size_t bytes);
/* Launches with several devices: once the process has retained two devices, a checked launch
 * refuses (LAUNCH) a buffer or tensor argument in memory of another device that the kernel's
 * device cannot reach (no oxide_device_enable_peer_access from it), naming the argument and both
 * devices: on a GPU such a kernel would fault. */
/* END RUNTIME API */

/* ======================================================================================
 * Tile interpreter: a tile kernel run on the CPU (docs/tile.md, "The interpreter")
 * ====================================================================================== */

/* struct_size is sizeof(oxide_interp_options) as the caller was compiled: later versions only
 * append fields. Zero fields take their defaults. */
typedef struct oxide_interp_options {
    size_t struct_size;
    /* tile.print output, one "\n"-terminated line per call; NULL drops it. text lives for the call. */
    void (*print)(void *user, const char *text);
    void *user;
    uint64_t max_steps;  /* element operations over the whole grid (a dot costs M*N*K); 0: 10^10 */
    uint64_t max_memory; /* bytes of tile storage; 0: 1 GiB */
} oxide_interp_options;

/* Run tile kernel `kernel` of mod over grid (program instances one after another) on the CPU,
 * with exactly the semantics of docs/tile.md. args are as for a launch, except that tensors are
 * oxide_arg_tensor(&t) of HOST memory (t.data a host address; an fp8 tensor has elem u8).
 * opts may be NULL. The module is verified first. Nothing is printed: tile.print goes to
 * opts->print. Errors: VERIFY, NOT_FOUND (no such kernel), INVALID_ARGUMENT (NULL, a zero grid
 * dim, not a tile kernel), LAUNCH (arguments that do not match the kernel: names the argument),
 * UNSUPPORTED (the step budget ran out: an endless loop names the kernel and op), OUT_OF_MEMORY
 * (past max_memory). Memory the kernel stored to before a failure keeps what it stored. */
OXIDE_API oxide_status oxide_tile_interpret(oxide_module *mod, const char *kernel, const uint32_t grid[3],
                                            const oxide_arg *args, size_t nargs, const oxide_interp_options *opts);

/* ======================================================================================
 * Autotuning tile kernels (docs/tile.md, "Autotuning")
 * ====================================================================================== */

/* A set of configurations of one tile kernel (each a module of its own, with its own hints and
 * tile sizes), of which the fastest for each shape class is found on the first launch of that
 * class, remembered in the process and in the module cache directory, and launched. It owns a
 * compiler context of its own, so it keeps what it needs from the modules given to it; like a
 * compiler context it is used by one thread at a time. */
typedef struct oxide_autotuner oxide_autotuner;

/* The time (ms) to count for repetition rep of configuration config, given the time the CUDA
 * events measured; a negative result counts the configuration as failed ("the timing hook
 * refused it"). For tests (deterministic choices) and for callers who measure otherwise. */
typedef double (*oxide_autotune_time_fn)(void *user, size_t config, uint32_t rep, double measured_ms);

#define OXIDE_AUTOTUNE_NO_RESTORE 1u  /* the tuning launches write the outputs (Triton's behaviour) */
#define OXIDE_AUTOTUNE_SHAPES_POW2 2u /* without a caller's class, shapes round up to powers of two */
#define OXIDE_AUTOTUNE_RETUNE 4u      /* ignore winners found before: tune again, replace the entry */

/* struct_size is sizeof(oxide_autotune_options) as the caller was compiled: later versions only
 * append fields. Zero fields take their defaults. */
typedef struct oxide_autotune_options {
    size_t struct_size;
    const char *cache_dir;        /* as for oxide_module_compile_cached: NULL the default, "" none */
    const oxide_options *compile; /* copied; NULL: the defaults with the device's target */
    uint32_t warmup;              /* untimed launches per configuration, up to 1000; 0: 1 */
    uint32_t reps;                /* timed launches per configuration (the median counts), up to 1000; 0: 10 */
    uint32_t flags;               /* OXIDE_AUTOTUNE_* */
    uint32_t reserved;            /* 0 */
    /* Argument indices (bit i: args[i], i < 64) of tensors and buffers that are set to zero before
     * each configuration is timed and before the winner's launch, instead of being restored. */
    uint64_t reset_to_zero;
    oxide_autotune_time_fn time_hook; /* NULL: the events' times */
    void *time_user;
} oxide_autotune_options;

/* opts may be NULL (the defaults). Errors: INVALID_ARGUMENT (NULL out, a struct_size below this
 * version's first fields, warmup or reps past 1000, unknown flags, reserved not 0), OUT_OF_MEMORY. */
OXIDE_API oxide_status oxide_autotune_create(const oxide_autotune_options *opts, oxide_autotuner **out);
/* Frees everything the tuner made (modules, loaded modules, scratch memory). NULL is ignored. */
OXIDE_API void oxide_autotune_destroy(oxide_autotuner *t);
/* Add a configuration: tile kernel `kernel` of mod (copied: mod may change or die afterwards)
 * with hints[i] = values[i] set on the copy (nhints may be 0), called label (NULL: "#N") in
 * reports. Every configuration must take the same arguments. A hint value out of range is not
 * an error here: the configuration is recorded as failed with the reason, and skipped. *index
 * (may be NULL) receives its index. Errors: INVALID_ARGUMENT (NULL, not a tile kernel),
 * NOT_FOUND (no such kernel), VERIFY/PARSE (mod does not print and parse back), OUT_OF_MEMORY. */
OXIDE_API oxide_status oxide_autotune_add_config(oxide_autotuner *t, oxide_module *mod, const char *kernel,
                                                 const oxide_tile_hint *hints, const uint32_t *values, size_t nhints,
                                                 const char *label, size_t *index);
/* Launch the best configuration for these arguments on stream (NULL: device 0's default stream).
 * grids holds 3 * ngrids values: one grid for all configurations (ngrids 1) or one each (ngrids
 * = the number of configurations). The key is shape_class (the caller's rounding of the
 * problem's size; NULL: every tensor argument's shape, rounded as the flags say), the argument
 * types and the device's name and compute capability. On the first launch of a key, the winner
 * is read from the cache directory, or else found: each configuration is compiled (through the
 * module cache), loaded and launched warmup + reps times, and the one of least median time wins
 * and is written to the cache directory; configurations that fail to compile, load or launch
 * are skipped with the reason (oxide_autotune_last's report). Unless OXIDE_AUTOTUNE_NO_RESTORE,
 * the memory of mutable tensor and buffer arguments is saved before tuning and put back before
 * each configuration and before the winner's launch, so the caller sees exactly one launch of
 * the winner. Tuning synchronizes the stream (do it before capturing a graph). Errors:
 * INVALID_ARGUMENT (NULL, ngrids), STATE (no configurations), UNSUPPORTED (every configuration
 * failed: the message names each and why), OUT_OF_MEMORY (no room to save the outputs: the
 * message suggests OXIDE_AUTOTUNE_NO_RESTORE), and those of oxide_kernel_launch (the winner's,
 * or a fault while tuning, which ends it). */
OXIDE_API oxide_status oxide_autotune_launch(oxide_autotuner *t, oxide_stream *stream, const uint32_t *grids,
                                             size_t ngrids, const oxide_arg *args, size_t nargs,
                                             const char *shape_class);

#define OXIDE_AUTOTUNE_FROM_MEMORY 0u /* the winner was known in this process */
#define OXIDE_AUTOTUNE_FROM_DISK 1u   /* read from the cache directory, no timing */
#define OXIDE_AUTOTUNE_TUNED 2u       /* timed now */

/* What the last successful oxide_autotune_launch did. struct_size is sizeof(oxide_autotune_info)
 * as the caller was compiled; fields past it are not written. */
typedef struct oxide_autotune_info {
    size_t struct_size;
    size_t winner;      /* index of the configuration launched */
    uint32_t source;    /* OXIDE_AUTOTUNE_FROM_* or _TUNED */
    uint32_t timed;     /* configurations timed by the last tuning */
    const char *key;    /* the key's text; lives until the next launch or the tuner's end */
    const char *report; /* the last tuning: a line per configuration, its label and median ms
                           or why it was skipped (the winner marked); "" before any tuning;
                           lives until the next tuning or the tuner's end */
    double winner_ms;   /* the winner's median in the last tuning of its key (0 from disk) */
} oxide_autotune_info;
/* Errors: INVALID_ARGUMENT (NULL, struct_size too small), STATE (no launch yet). */
OXIDE_API oxide_status oxide_autotune_last(const oxide_autotuner *t, oxide_autotune_info *info);
/* The number of configurations. */
OXIDE_API size_t oxide_autotune_config_count(const oxide_autotuner *t);

#ifdef __cplusplus
}
#endif
#endif /* OXIDE_H */
