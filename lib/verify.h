/* What the verifier's files share (lib/verify.c: the walk and the structural rules;
 * lib/verify_ops.c and lib/verify_hopper.c: the op-specific rules). Not installed. */
#ifndef OXIDE_VERIFY_H
#define OXIDE_VERIFY_H

#include "ir.h"

/* oxide_last_error() holds 2048 bytes; leave room for the "more errors" line. */
#define MSG_CAP 1900

typedef struct verifier {
    oxide_module *mod;
    const oxide_options *opts;
    /* where we are, for message prefixes (NULL / UINT32_MAX: not inside one) */
    const oxide_function *fn;
    uint32_t block;
    uint32_t pos;
    const oxide_inst *inst;
    const oxide_global *global;
    /* collected messages */
    char msg[MSG_CAP];
    size_t len;
    unsigned nerrors, dropped;
} verifier;

/* Adds one message, prefixed with where the verifier is ("verify: kernel @k ^2 #3 'load': "). */
void verify_report(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports unless the target is sm or newer. */
bool verify_need_sm(verifier *v, unsigned sm, const char *what);
/* Structural type equality (a type from another context is judged by what it is). */
bool verify_type_eq(const oxide_type *a, const oxide_type *b);
const char *verify_as_name(uint32_t as);

/* Rules 5 and 7 for one instruction whose operands and result already passed rule 1; row is
 * the type its T/I/F/N operands share. Return false after reporting the first problem. */
bool verify_op_specific(verifier *v, const oxide_inst *in, const oxide_type *row);
bool verify_hopper_op(verifier *v, const oxide_inst *in, const oxide_type *row);

/* ---- small helpers: the IR may hold NULL anywhere ---- */

static inline const char *op_name(oxide_op op) { return (unsigned)op < OXIDE_OP_COUNT_ ? oxide_ops[op].name : "?"; }
static inline const char *tname(const oxide_type *t) { return t && t->name ? t->name : "<null type>"; }
static inline const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }
static inline bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
static inline bool is_int(const oxide_type *t) { return t && oxide__type_is_int(t); }
static inline bool is_float(const oxide_type *t) { return t && oxide__type_is_float(t); }
static inline bool is_ptr(const oxide_type *t) { return t && t->kind == OXIDE_TYPE_PTR; }
static inline bool is_kind(const oxide_type *t, oxide_type_kind k) { return t && t->kind == k; }
static inline bool is_sized(const oxide_type *t) { return t && t->kind != OXIDE_TYPE_VOID; }
static inline unsigned bits(const oxide_type *t) { return t ? oxide__type_bits(t) : 0; }
static inline const oxide_type *result_type(const oxide_inst *in) { return in->result ? in->result->type : NULL; }
static inline const oxide_type *operand_type(const oxide_inst *in, uint32_t i) {
    return in->noperands > i ? in->operands[i]->type : NULL;
}

#endif
