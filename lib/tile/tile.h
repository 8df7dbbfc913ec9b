/* The tile IR core (docs/tile.md): tile and tensor types, tile kernels and the checks of the tile
 * ops that the builder and the verifier share. Included by lib/ir.h; not installed. */
#ifndef OXIDE_TILE_H
#define OXIDE_TILE_H

#define OXIDE__TILE_MAX_RANK 3u
#define OXIDE__TENSOR_MAX_RANK 4u
#define OXIDE__TILE_MAX_DIM 65536u
#define OXIDE__TILE_MAX_ELEMS (1u << 20)

bool oxide__type_is_fp8(const oxide_type *t);
/* Tiles, tensors and fp8 scalars: the types that exist only in tile kernels. */
bool oxide__type_is_tile_only(const oxide_type *t);
/* false for tiles, tensors and fp8 scalars, which have no C layout (no globals, arrays, structs). */
bool oxide__type_has_layout(const oxide_type *t);
/* The element type of a tile, else t itself. */
const oxide_type *oxide__tile_scalar(const oxide_type *t);
/* Element count of a tile. */
uint64_t oxide__tile_elems(const oxide_type *t);
/* The tile with t's shape and element elem. */
oxide_status oxide__tile_like(oxide_context *ctx, const oxide_type *t, oxide_type *elem, oxide_type **out);
/* Rank, shape and mutability equal (elements are compared by the caller). */
bool oxide__tile_shape_eq(const oxide_type *a, const oxide_type *b);
/* The oxide_scalar of a tensor type's element (what the manifest and the launch check); false
 * for a type that is not a tensor of one of docs/tile.md's tensor elements. */
bool oxide__tensor_elem_scalar(const oxide_type *tensor, oxide_scalar *out);
/* Writes the text form of an fp8, tile or tensor type; false for other kinds. */
bool oxide__tile_type_name(const oxide_type *t, char *out, size_t cap);
/* Round v to an fp8 type (ties to even); false if a finite v overflows it. */
bool oxide__round_fp8(oxide_type_kind kind, double v, double *out);

/* Tile kernel hints, indexed by oxide_tile_hint; the text and print order. */
#define OXIDE__TILE_NHINTS 7u
extern const char *const oxide__tile_hint_names[OXIDE__TILE_NHINTS];
/* INVALID_ARGUMENT naming the hint and its range when v is out of it. */
oxide_status oxide__tile_hint_check(unsigned hint, uint32_t v);
/* "[1,0]": the first rank indices of a packed permutation. */
void oxide__tile_perm_text(uint32_t perm, uint32_t rank, char *out, size_t cap);

/* Whether op is one of the tier-3 tile ops of lib/ops.def. */
bool oxide__is_tile_op(oxide_op op);
/* The rules of docs/tile.md for one instruction, with attributes applied: tile ops, which SIMT
 * ops a tile kernel may use and on which operands, tile types only in tile kernels. sm is the
 * target (x10), 0 when unknown (the builder): target rules are then left to the verifier.
 * On failure returns a status whose message starts with the op's name in quotes. */
oxide_status oxide__tile_check_inst(const oxide_inst *in, unsigned sm);
/* A value of type t may be a parameter or block parameter of fn (what names the value). */
oxide_status oxide__tile_check_value_type(const oxide_function *fn, const oxide_type *t, const char *what);
/* Whole-function rules: parameter and block parameter types; a tile kernel's interface and hints. */
oxide_status oxide__tile_check_function(const oxide_function *fn);
/* lib/tile/lower.c: whether mod holds a tile kernel; a new module in mod's context with each
 * tile kernel replaced by its SIMT lowering for opts' target. */
bool oxide__module_has_tile(const oxide_module *mod);
oxide_status oxide__tile_lower(oxide_module *mod, const oxide_options *opts, oxide_module **out);

#endif
