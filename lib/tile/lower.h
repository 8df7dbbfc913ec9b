/* The tile compiler's general lowering (docs/tile.md, "The lowering"): a tile kernel becomes a
 * SIMT kernel of the same name, built through the ordinary builder, which the rest of the
 * pipeline (verify, lower to LLVM, emit, manifest) then treats like any other kernel.
 *
 * Passes, one a file, run in this order by lower.c:
 *   assign.c   a layout for every tile value (which thread holds which element)
 *   emit.c     the SIMT kernel: parameters, blocks, scalar ops, elementwise ops, control flow
 *   emit_mem.c loads, stores, atomic adds, and layout conversions through shared memory
 *   emit_dot.c tile.dot as mma.sync on fragments read with ldmatrix
 *   emit_mma_smem.c which of those dots take their operands straight from shared memory
 *   emit_wgmma.c tile.dot as wgmma from shared memory (sm_90a)
 *   pipeline.c shared-memory operand tiles, their cp.async copies, pipelined loops
 *   emit_tma.c TMA copies of pipelined operand tiles, mbarrier waits (sm_90a)
 *   produce.c  the producer warpgroup that issues a TMA ring's copies (sm_90a)
 *   emit_red.c reductions (registers, then shuffles, then shared memory) and shape ops
 *   emit_print.c tile.print as printf from the thread holding each element
 * Not installed. */
#ifndef OXIDE_TILE_LOWER_H
#define OXIDE_TILE_LOWER_H

#include "../ir.h"

/* A layout places the 2^B elements of a tile (B = the sum of log2 of its dims) on the threads of
 * the block. Elements are numbered row-major (the last dim varies fastest), so that an element's
 * number has B bits and each dim owns a run of them. Every "hardware bit" -- a bit of the
 * register index, of the lane or of the warp -- names the element-number bit it sets, or -1 when
 * it selects nothing (the lanes or warps it tells apart hold copies). Each element-number bit is
 * named by exactly one hardware bit. Blocked layouts (for memory) and the mma.sync fragment
 * layouts (for dot) are both of this form, and so are the results of reshape, permute,
 * expand_dims, broadcast and reduce, which therefore move no data. */
#define TL_MAXBITS 20
typedef struct tl_layout {
    uint8_t rank;
    uint32_t shape[3];
    uint8_t nreg, nwarp; /* 5 lane bits always */
    int8_t reg[TL_MAXBITS], lane[5], warp[4];
} tl_layout;

/* Most registers a tile may take per thread in this lowering: past it, code size and spills make
 * the kernel useless, so it is refused with the tile named. */
#define TL_MAX_REGS 1024u

/* What a tile value of the source kernel became: one SIMT value per register of its layout, or
 * (uniform) one scalar that every element equals (tile.full, tile.splat and what is computed
 * from them only), which takes any layout for free. */
typedef struct tl_val {
    bool uniform;
    tl_layout L;
    oxide_value *scalar; /* uniform */
    oxide_value **regs;  /* 1 << L.nreg values */
    bool has_layout;     /* assign.c: L is decided */
    bool flex;           /* assign.c: computed from arange, splats and constants only, so it can
                          * be computed in whatever layout its user wants */
    /* emit_wgmma.c: a load whose every user is a wgmma dot lives in shared memory only, at
     * smem_off of the reserved region (smem 1: the dot's A, K contiguous; 2: its B, N
     * contiguous); a dot marked wgmma reads its operands from there */
    uint8_t smem;
    uint8_t wgmma; /* 0, or how: emit_wgmma.c's WG_SS or WG_RS */
    uint32_t smem_off;
    int8_t pipe; /* the pipelined loop it is loaded in (tl.pipes), or -1 */
    bool tma;    /* emit_tma.c: copied by TMA when the launch's tensor allows, its ring's
                  * mbarriers at bar_off of the reserved region */
    uint32_t bar_off;
} tl_val;

/* A counted loop whose shared-memory loads run `stages - 1` iterations ahead (pipeline.c):
 * head(iv, ..) tests iv <pred> ub and enters body, which branches back with iv + step; pre is
 * the only other way into head. Each load of the body has a ring of `stages` tiles. */
#define TL_MAX_PIPES 4
typedef struct tl_pipe {
    const oxide_block *pre, *head, *body, *exit;
    const oxide_value *iv, *iv0, *ub;
    int64_t step;
    oxide_pred pred;
    uint32_t stages, nloads, ntma; /* ntma: the loads copied through TMA (no cp.async group) */
    /* emit_wgmma.c: the ring's one wgmma dot, when its result only feeds its own accumulator
     * (head parameter acc) and the code after the loop: its wgmma group stays in flight into the
     * next iteration (wait 1), so copies run stages - 2 iterations ahead, not stages - 1 */
    const oxide_inst *defer;
    const oxide_value *acc;
    /* emit_tma.c: every load TMA, each read by one wgmma dot that waits for its group at once
     * (no defer): the dot's warps release a slot by arriving on its "empty" mbarrier, and the
     * copy into it waits for that instead of a block barrier, so warpgroups need not run in step */
    bool released;
    /* produce.c: its copies are issued by the producer warpgroup (implies released; a deferred
     * dot releases the slot of the iteration before, once its group is waited for) */
    bool produced;
} tl_pipe;

/* Iterations a ring's copies run ahead of its dot. */
static inline uint32_t tl_pipe_ahead(const tl_pipe *p) { return p->stages - 1 - (p->defer ? 1 : 0); }

typedef struct tl_tensor {
    oxide_value *ptr;  /* ptr.global to element [0, ..]: the lowered kernel's parameter */
    oxide_value *safe; /* ptr to use when every element is out of bounds (the tensor may be empty) */
    oxide_value *dim[4], *stride[4];
    uint32_t rank;
    bool tma;       /* emit_tma.c: read through a TMA descriptor for boxes of tma_box (iface.h) */
    bool read;      /* emit_tma.c: loaded or atomically added to somewhere in the kernel */
    bool tma_store; /* emit_tma.c: only written, its box-shaped stores staged in shared memory
                     * and copied out by TMA (the TMA variant only) */
    uint32_t tma_box[4];
    oxide_value *tma_desc; /* the descriptor's address (the lowered kernel's parameter) */
} tl_tensor;

/* Tensors a kernel reads through TMA: at most the runtime's RT_MAX_TMA (runtime/rt.h) */
#define TL_MAX_TMA 8

typedef struct tl {
    oxide_context *ctx;
    const oxide_options *opts;
    oxide_module *out;    /* the module the SIMT kernel is built in */
    oxide_function *src;  /* the tile kernel */
    oxide_function *k;    /* the SIMT kernel */
    oxide_block *b;       /* where code goes now */
    const oxide_inst *at; /* the source op being lowered (for messages) */
    uint32_t warps, threads;
    oxide_value *tid, *lane, *warp;
    oxide_value *smem;       /* dyn_smem base (ptr.shared) */
    uint64_t smem_need;      /* largest scratch any op needs, in bytes */
    uint64_t smem_fixed;     /* bytes reserved before the scratch (emit_wgmma.c's operand tiles) */
    oxide_value *smem_tiles; /* the reserved region, 1024-byte aligned */
    tl_pipe pipes[TL_MAX_PIPES];
    uint32_t npipes;
    /* emit_tma.c: the kernel is built twice when a ring may copy through TMA (lower.c): the TMA
     * variant (tma_variant) copies so, the other with cp.async; ntma: tensors with a TMA box */
    bool tma_variant;
    uint32_t ntma;
    /* produce.c: the ring (index + 1, 0 for none) whose copies a producer warpgroup issues; need
     * marks (by value id) the scalars before the loop that it computes again; named: the code
     * being built runs in the consumer warps only (block barriers count those) */
    uint32_t producer;
    bool *need, named;
    /* persist.c: persistent (hint persistent=1 with a producer): the kernel's grid parameters,
     * and the program loop the code being built is in (NULL outside one) */
    bool persist;
    oxide_value *grid[3];
    struct tl_tiles *tiles;
    const oxide_inst *smem_who; /* the op needing it */
    oxide_value *dummy;         /* ptr.global to a private word: what loads of an empty tensor read */
    tl_tensor *tensors;         /* per source parameter (tensors only) */
    tl_val *vals;               /* per source value, by its scratch id */
    oxide_value **scal;         /* per source value: the scalar it became */
    uint32_t nvals;
    oxide_block **blocks; /* per source block */
    oxide_type *ti1, *ti8, *ti16, *ti32, *ti64, *tf16, *tbf16, *tf32, *tpg, *tps;
    oxide_status st;
} tl;

static inline bool tl_is_tile(const oxide_value *v) { return v && v->type && v->type->kind == OXIDE_TYPE_TILE; }

/* ---- layout.c ---- */
uint32_t tl_bits(uint32_t n);                /* log2 of a power of two */
uint32_t tl_elem_bytes(const oxide_type *e); /* bytes an element takes in memory (i1 and fp8: 1) */
/* Bit offset of dim d in the element number of a tile of this shape. */
uint32_t tl_dim_off(const uint32_t *shape, uint32_t rank, uint32_t d);
void tl_blocked(tl_layout *L, const oxide_type *tile, uint32_t warps);
/* mma.sync m16n8 accumulator fragments of shape [.., M, N] (M >= 16, N >= 8) over the warps. */
void tl_mma(tl_layout *L, const oxide_type *tile, uint32_t warps);
/* The warps along M and N of an mma layout (wm * wn <= warps; the rest hold copies). */
void tl_mma_split(const oxide_type *tile, uint32_t warps, uint32_t *wm, uint32_t *wn);
bool tl_layout_eq(const tl_layout *a, const tl_layout *b);
/* a and b differ only in the order of register bits: perm[r] of b = register of a holding it. */
bool tl_layout_regperm(const tl_layout *a, const tl_layout *b, uint32_t *perm);
/* How many of L's low register bits run, in order, along the lowest element bits of dim d: the
 * registers that are neighbours along it (a vector access). */
uint32_t tl_run_along(const tl_layout *L, uint32_t d);
/* Element number bits a register of L sets. */
uint32_t tl_reg_elem(const tl_layout *L, uint32_t r);
/* The layout of a shape-changing op's result from its operand's. */
void tl_relabel(tl_layout *out, const tl_layout *in, const oxide_type *result, const int32_t *bitmap);
void tl_layout_reshape(tl_layout *out, const tl_layout *in, const oxide_type *result);
void tl_layout_permute(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t perm);
void tl_layout_reduce(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t axis);
/* Broadcast: new element bits go to hardware bits that hold copies, where possible the ones hint
 * (NULL: the blocked layout of the result) uses for them, else to new registers. */
void tl_layout_broadcast(tl_layout *out, const tl_layout *in, const oxide_type *result, uint32_t warps,
                         const tl_layout *hint);

/* Element-bit map of a shape op (broadcast, expand_dims, reshape, permute, cast): bitmap[i] is
 * the result bit that operand bit i becomes (-1 past the operand's bits). */
void tl_shape_bitmap(const oxide_inst *in, int32_t *bitmap);
/* The operand layout from which the shape op of bitmap gives R: R's bits mapped back, those with
 * no operand bit (a broadcast's new ones) dropped. */
void tl_project(tl_layout *out, const tl_layout *R, const int32_t *bitmap, const oxide_type *operand);

/* ---- assign.c ---- */
oxide_status tl_assign(tl *T);

/* ---- emit.c: the builder shorthands (each returns NULL once T->st is set) ---- */
oxide_status tl_fail(tl *T, oxide_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
oxide_value *tl_op(tl *T, oxide_op op, oxide_value *const *ops, size_t n, oxide_type *rt, const oxide_attr *attrs,
                   size_t nattrs);
oxide_value *tl_op2(tl *T, oxide_op op, oxide_value *a, oxide_value *b);
oxide_value *tl_cast(tl *T, oxide_op op, oxide_value *a, oxide_type *to);
oxide_value *tl_int(tl *T, oxide_type *t, int64_t v);
oxide_value *tl_flt(tl *T, oxide_type *t, double v);
oxide_value *tl_cmp(tl *T, oxide_op op, oxide_pred pred, oxide_value *a, oxide_value *b);
oxide_value *tl_sel(tl *T, oxide_value *c, oxide_value *a, oxide_value *b);
oxide_value *tl_imm_op(tl *T, oxide_op op, int64_t imm, oxide_type *rt, oxide_value *const *ops, size_t n);
void tl_barrier(tl *T);
oxide_type *tl_elem(tl *T, const oxide_type *tile); /* the SIMT type of a tile's elements */
/* The value's registers in layout L (expanding a uniform value, converting another layout). */
oxide_value **tl_regs_in(tl *T, const oxide_value *v, const tl_layout *L);
tl_val *tl_val_of(tl *T, const oxide_value *v);
/* v's layout, or for a uniform value the blocked one (*tmp holds it). */
const tl_layout *tl_layout_of(tl *T, const oxide_value *v, tl_layout *tmp);
oxide_value *tl_scalar_of(tl *T, const oxide_value *v);
/* v sign-extended to i64 (a coordinate, as tensor dims and strides are). */
oxide_value *tl_i64(tl *T, oxide_value *v);
/* Allocates the result registers of value v in layout L. */
oxide_value **tl_new_regs(tl *T, const tl_layout *L);
/* The thread's coordinate along each dim of L, for the element number bits of lanes and warps
 * (i32); a register's own bits add tl_reg_elem's. */
void tl_thread_coords(tl *T, const tl_layout *L, oxide_value **coord);
/* Whether this thread's copy is the one that counts: lane and warp bits holding copies are 0. */
oxide_value *tl_is_owner(tl *T, const tl_layout *L);
/* Scratch shared memory for the current op: base + offset; records the need. */
oxide_value *tl_smem_at(tl *T, uint64_t bytes);
oxide_value *tl_smem_elem(tl *T, oxide_value *base, oxide_value *index_i32, oxide_type *elem);

/* fp8 elements (i8 bit patterns): a constant of an fp8 value, and one element's f32 value. */
oxide_value *tl_fp8_const(tl *T, const oxide_type *elem, double v);
oxide_value *tl_fp8_to_f32(tl *T, oxide_value *bits, const oxide_type *elem);

/* ---- emit_mem.c ---- */
void tl_emit_load(tl *T, const oxide_inst *in);
void tl_emit_store(tl *T, const oxide_inst *in, bool atomic);
/* A vector of the n scalars (32, 64 or 128 bits in all). */
oxide_value *tl_pack(tl *T, oxide_value *const *elems, uint32_t n);
/* Ends the current block with a branch on cond to two new blocks and makes a third where both go
 * on, with n parameters of type t (their values in *joined). */
bool tl_split(tl *T, oxide_value *cond, oxide_block **fast, oxide_block **slow, oxide_block **join, oxide_type *t,
              uint32_t n, oxide_value **joined);
void tl_go_to(tl *T, oxide_block *to, oxide_value *const *args, uint32_t n);
/* if (cond) { ... }: ends the current block with a branch on cond to a new block, where the code
 * goes on (T->b), and *join, where the "then" code ends with tl_go_to and both go on. */
bool tl_when(tl *T, oxide_value *cond, oxide_block **join);
/* Registers of src (layout a) rearranged into layout b through shared memory. */
oxide_value **tl_convert(tl *T, oxide_value **src, const tl_layout *a, const tl_layout *b, oxide_type *elem);

/* ---- emit_dot.c ---- */
void tl_emit_dot(tl *T, const oxide_inst *in);

/* ---- emit_wgmma.c: dot on sm_90a from shared memory ---- */
/* The wgmma accumulator layout: each warpgroup's m64 blocks of rows, each warp 16 of them. */
void tl_wgmma_layout(tl_layout *L, const oxide_type *tile, uint32_t warps);
/* The tile.load a wgmma dot operand reads from shared memory (through its reshapes and
 * permutes), or NULL. */
const oxide_inst *tl_wgmma_operand_load(const oxide_value *operand);
/* Marks the dots that take the wgmma path and the loads that feed them (before layouts). */
oxide_status tl_plan_wgmma(tl *T);
void tl_emit_inst(tl *T, const oxide_inst *in); /* emit.c: one non-terminator */
void tl_emit_dot_wgmma(tl *T, const oxide_inst *in);

/* ---- pipeline.c: shared-memory operand tiles and pipelined loops (for the dot paths) ---- */
/* Puts the smem loads of counted loops in rings (tl_val.pipe; after the smem marks) of the
 * kernel's stages hint, or of stages (< 2: none). */
oxide_status tl_plan_pipes(tl *T);
oxide_status tl_plan_pipes_n(tl *T, uint32_t stages);
/* Takes a dot's operand loads (la NULL: A from registers) out of rings they cannot share. */
void tl_pipe_pair(tl *T, const oxide_inst *dot, const oxide_inst *la, const oxide_inst *lb);
/* Offsets of the smem loads' tiles in the reserved region; sets T->smem_fixed. */
void tl_place_smem_tiles(tl *T);
void tl_emit_smem_region(tl *T); /* the entry's aligned base of the reserved region */
void tl_emit_load_smem(tl *T, const oxide_inst *in);
/* At the end of block b (before its branch): the first stages of a pipelined loop it enters;
 * at the start of b: the drain of a pipelined loop it leaves. */
void tl_emit_pipe_prologue(tl *T, const oxide_block *b);
void tl_emit_pipe_drain(tl *T, const oxide_block *b);
/* The swizzled tile of load's in ring slot stage (i32); the body's iteration number now (from 0)
 * plus d (i64), and its slot (i32). */
oxide_value *tl_ring_slot(tl *T, const oxide_inst *load, oxide_value *stage);
oxide_value *tl_pipe_iter(tl *T, const tl_pipe *p, uint32_t d);
oxide_value *tl_pipe_stage(tl *T, const tl_pipe *p, uint32_t d);
/* The ring slots a dot reads its operand tiles from this iteration (la NULL: A from registers),
 * and their ring (NULL: none); the caller waits for the copies (both dot paths). */
const tl_pipe *tl_dot_slots(tl *T, const oxide_inst *la, const oxide_inst *lb, oxide_value **abase,
                            oxide_value **bbase);
/* Byte offset in a swizzled R-row tile of the 16-byte chunk cq (i32) of row r (i32). */
oxide_value *tl_swizzle_at(tl *T, oxide_value *r, oxide_value *cq, uint32_t R);

/* ---- emit_mma_smem.c: the general path's dot operands in shared memory ---- */
/* Marks the loads that feed general-path dots only as smem tiles (after tl_plan_wgmma, when it
 * chose none), with rings in counted loops sized to the target's shared memory. */
oxide_status tl_plan_mma_smem(tl *T);
/* The load behind a general-path dot operand that lives in shared memory, or NULL. */
const oxide_inst *tl_mma_smem_load(tl *T, const oxide_value *operand);
uint64_t tl_smem_limit(unsigned sm); /* emit.c: dynamic shared memory a block may have */

/* At the start of a pipelined loop's exit: the deferred dot's last group waited for, with its
 * accumulator's registers tied to the wait (emit_wgmma.c). */
void tl_emit_wgmma_drain(tl *T, const tl_pipe *p);

/* ---- produce.c: warp specialisation (after tl_plan_tma) ---- */
/* Whether ring k's copies can go to a producer warpgroup (then T->producer = k + 1, T->need set). */
bool tl_plan_producer(tl *T, uint32_t k);
/* At the end of the entry's preamble: the barriers, the producer warpgroup's whole program, and
 * the branch into the consumers' (T->b after it). g: the source's blocks in order. */
struct oxide_cfg;
void tl_emit_producer(tl *T, const struct oxide_cfg *g);
/* ---- persist.c: persistent scheduling (after tl_plan_producer) ---- */
/* A loop over the programs one block runs: linear program id t, ring iterations before (base). */
typedef struct tl_tiles {
    oxide_block *head, *exit;
    oxide_value *t, *base;
} tl_tiles;
/* Whether the kernel becomes persistent (T->persist); then its grid parameters are added. */
oxide_status tl_plan_persistent(tl *T);
/* Opens L at T->b: the code after runs once a program (T->tiles = L); L->exit is where the
 * block goes once its programs are done. */
void tl_tiles_open(tl *T, tl_tiles *L);
/* The current program is done, with iters ring iterations in all so far: on to the block's next. */
void tl_tiles_next(tl *T, tl_tiles *L, oxide_value *iters);
/* The program id (its block's, or the program loop's) and the grid along axis (i32). */
oxide_value *tl_block_id(tl *T, uint32_t axis);
oxide_value *tl_block_count(tl *T, uint32_t axis);

/* Marks the body's instructions a ring load's coordinates are computed from (pipeline.c). */
bool tl_pipe_chain(const tl_pipe *p, const oxide_inst *load, bool *mark);
bool tl_pipe_in_loop(const tl_pipe *p, const oxide_value *v);
/* The load's coordinates for the iteration whose iv is ivv (i64, into at[]). */
void tl_pipe_coords(tl *T, const tl_pipe *p, const oxide_inst *load, oxide_value *ivv, oxide_value **at);

/* ---- emit_tma.c: TMA copies of pipelined operand tiles (after tl_plan_pipes) ---- */
void tl_plan_tma(tl *T);
/* A tile.store through shared memory and TMA, when its tensor is planned so and the layout and
 * shared memory allow; false (nothing built) when the store must take the memory path. */
bool tl_tma_store(tl *T, const oxide_inst *in, oxide_value *const *v, const tl_layout *L);
/* After tl_plan_tma: which rings are released through empty barriers (tl_pipe.released). */
void tl_plan_release(tl *T);
/* In the loop's preheader, before its first copies: the ring k's barriers (re)initialised. */
void tl_tma_init(tl *T, const tl_pipe *p, int8_t k);
/* The TMA copy of load in's tile to dst, ring slot stage (i32), when active. iter (i64, or NULL
 * in the prologue): the iteration the copy is for; in a released ring the copy first waits for
 * the slot's last readers, iteration iter - stages. */
void tl_tma_copy(tl *T, const oxide_inst *in, oxide_value *dst, oxide_value *const *at, oxide_value *active,
                 oxide_value *stage, oxide_value *iter);
/* After a dot's wait: each warp releases the ring slots it read (released rings only). */
void tl_tma_release(tl *T, const tl_pipe *p, const oxide_inst *const *loads, uint32_t n);
/* A dot's wait for its n operand loads (NULL: from registers) of ring p (NULL: none): the TMA
 * ones' barriers' phase; for the others, all but `ahead` iterations' cp.async groups and a block
 * barrier. */
void tl_tma_wait(tl *T, const tl_pipe *p, const oxide_inst *const *loads, uint32_t n, uint32_t ahead);

/* ---- emit_red.c ---- */
void tl_emit_reduce(tl *T, const oxide_inst *in);
void tl_emit_shape(tl *T, const oxide_inst *in); /* broadcast, expand_dims, reshape, permute */

/* ---- emit_print.c ---- */
void tl_emit_print(tl *T, const oxide_inst *in);

/* ---- emit.c: the whole of pass 2 (after assign.c) for T->src into T->k ---- */
oxide_status tl_emit_kernel(tl *T);

#endif
