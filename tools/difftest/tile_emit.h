/* The tile generator's writer (tile_gen.c's productions use it): types, the bounds each value
 * carries, and the functions that write one op both as IR text and as a JSON statement. Not a
 * public interface of the difftest tool. */
#ifndef OXIDE_DIFFTEST_TILE_EMIT_H
#define OXIDE_DIFFTEST_TILE_EMIT_H

#include "buf.h"
#include "tile_gen.h"

#define TG_CAP 1024 /* elements of a tile: small enough for fast runs everywhere */
#define TG_BMAX 8.0 /* float magnitudes past this are scaled back by a power of two */

/* Ids of the scalar parameters among value ids (tiles and loop indices are 0, 1, ...). */
#define TG_ID_N (-1)
#define TG_ID_X (-2)

typedef struct tg_ty {
    tg_elem e;
    uint32_t rank; /* 0: a scalar */
    uint32_t s[3];
} tg_ty;

/* A value: B bounds its magnitude, E how far two correct implementations may differ in it
 * (0: both hold it exactly); prod: a product LLVM may still contract into a following add. */
typedef struct tg_val {
    int id;
    tg_ty t;
    double B, E;
    bool prod;
} tg_val;

/* An offset per dim: c[d][0]*pid0 + c[d][1]*pid1 + c[d][2]*(innermost loop index) + c[d][3]. */
typedef struct tg_offsets {
    int64_t c[3][4];
} tg_offsets;

typedef struct tg_gen {
    uint64_t rng;
    tg_program *p;
    dt_buf body, json;
    bool first[16]; /* per open JSON list: nothing written in it yet */
    int jdepth;
    int nextv, nexts, nextb;
    int budget;
    int nloops, iv[2];
} tg_gen;

typedef struct tg_loop {
    int header, exit;
    tg_val param;
} tg_loop;

typedef struct tg_branch {
    int merge, other;
} tg_branch;

void tg_gen_init(tg_gen *g, tg_program *p, uint64_t seed);
/* Puts the kernel's text and JSON together into p. Returns 0, -1 on out of memory. */
int tg_gen_finish(tg_gen *g);

uint32_t tg_rnd(tg_gen *g, uint32_t n);
bool tg_chance(tg_gen *g, uint32_t percent);
uint32_t tg_count(const tg_ty *t);
double tg_u(tg_elem e);                           /* unit roundoff; 0 for integers */
double tg_icap(tg_elem e, double B);              /* B, at most the integer's largest magnitude */
double tg_rounded(tg_elem e, double E, double B); /* E after a rounding to e of values up to B */
double tg_math_err(tg_elem e);                    /* a math function's error, per unit of result */

/* `%vN = op args {attr} : t` (attr: "k=v, ..." or NULL) with the bounds given. */
tg_val tg_op(tg_gen *g, const char *op, tg_ty t, const tg_val *args, int nargs, const char *attr, double B, double E,
             bool prod);
tg_val tg_op2(tg_gen *g, const char *op, tg_val a, tg_val b, double B, double E, bool prod);
tg_val tg_add(tg_gen *g, const char *op, tg_val a, tg_val b); /* add or sub, bounds by the rules */
tg_val tg_mul(tg_gen *g, tg_val a, tg_val b);
tg_val tg_combine(const char *op, tg_elem e, tg_val a, tg_val b); /* only the bounds of op(a, b) */
tg_val tg_full(tg_gen *g, tg_ty t, double value);
tg_val tg_splat(tg_gen *g, tg_ty t, int scalar_id, double B);
tg_val tg_splat_val(tg_gen *g, tg_ty t, tg_val s);
tg_val tg_permute(tg_gen *g, tg_ty t, tg_val x, const uint32_t *perm);
tg_val tg_reduce(tg_gen *g, tg_ty t, tg_val x, uint32_t axis, uint32_t kind, uint32_t k);
tg_val tg_scale(tg_gen *g, tg_val v, double bmax); /* times a power of two, to |v| <= bmax */
tg_val tg_fit(tg_gen *g, tg_val v);                /* tg_scale to TG_BMAX (floats) */
/* tile.load (defines a tile of t) or tile.store / tile.atomic_add of value src. */
tg_val tg_memop(tg_gen *g, const char *op, int tensor, const tg_offsets *off, int src, tg_ty t, double pad);

tg_loop tg_loop_begin(tg_gen *g, tg_ty t, tg_val init, int lim);
tg_val tg_loop_end(tg_gen *g, tg_loop *L, tg_val next);
tg_branch tg_branch_begin(tg_gen *g, const char *pred, int rhs);
void tg_branch_else(tg_gen *g, tg_branch *b, tg_val then_value);
tg_val tg_branch_end(tg_gen *g, tg_branch *b, tg_ty t, tg_val then_value, tg_val else_value);

#endif
