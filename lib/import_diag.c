/* Refusals of imported Rust code that point at the user's code (docs/rust.md, "When a build is
 * refused"): the kernel, the chain of calls from it to the refused instruction, and the source
 * file:line:col the bitcode's debug info gives (cargo oxide asks rustc for line tables), laid out
 * as rustc lays out its diagnostics. A refusal is found deep in library code (a Vec's deallocate
 * calls __rust_dealloc) while the line to change is in the kernel, so the chain is what lets the
 * user find it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "import.h"

/* One step of the chain: a function and the instruction in it that leads on (a call, or the
 * refused instruction), with the debug location of that instruction. */
typedef struct frame {
    LLVMValueRef fn;
    LLVMValueRef inst;
} frame;

typedef struct fnode {
    LLVMValueRef fn;
    int parent;       /* index of the caller on the shortest path from a kernel, -1 for a kernel */
    LLVMValueRef via; /* the call in the parent */
} fnode;

static int cmp_node(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const fnode *)a)->fn, y = (uintptr_t)((const fnode *)b)->fn;
    return x < y ? -1 : x > y;
}

static int find_node(const fnode *nodes, int n, LLVMValueRef f) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (nodes[mid].fn == f)
            return mid;
        if ((uintptr_t)nodes[mid].fn < (uintptr_t)f)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static LLVMValueRef called_function(LLVMValueRef call) {
    LLVMValueRef c = LLVMGetCalledValue(call);
    if (c && LLVMIsAGlobalAlias(c))
        c = LLVMAliasGetAliasee(c);
    return c && LLVMIsAFunction(c) ? c : NULL;
}

/* The functions v names as a value: itself, or through constants (a static holding a function
 * pointer, as thread_local!'s accessor is reached), depth-limited. */
static void functions_in(LLVMValueRef v, LLVMValueRef *out, int *n, int cap, int depth) {
    if (!v || *n >= cap || depth > 4)
        return;
    if (LLVMIsAGlobalAlias(v))
        v = LLVMAliasGetAliasee(v);
    if (LLVMIsAFunction(v)) {
        out[(*n)++] = v;
        return;
    }
    if (LLVMIsAGlobalVariable(v)) {
        functions_in(LLVMGetInitializer(v), out, n, cap, depth + 1);
        return;
    }
    if (!LLVMIsAConstant(v) || LLVMIsAGlobalValue(v))
        return;
    for (int i = 0, k = LLVMGetNumOperands(v); i < k && *n < cap; i++)
        functions_in(LLVMGetOperand(v, (unsigned)i), out, n, cap, depth + 1);
}

/* What an instruction can lead to: the function it calls and those its operands name. */
static int reached_functions(LLVMValueRef in, LLVMValueRef *out, int cap) {
    int n = 0;
    if (LLVMIsACallInst(in) || LLVMIsAInvokeInst(in)) {
        LLVMValueRef callee = called_function(in);
        if (callee)
            out[n++] = callee;
    }
    for (int i = 0, k = LLVMGetNumOperands(in); i < k && n < cap; i++) {
        LLVMValueRef op = LLVMGetOperand(in, (unsigned)i);
        if (op && !LLVMIsAInstruction(op) && !LLVMIsABasicBlock(op) && !LLVMIsAArgument(op) && LLVMIsAConstant(op))
            functions_in(op, out, &n, cap, 0);
    }
    return n;
}

/* The shortest chain of calls from a kernel (a ptx_kernel wrapper) to target, into out (at most
 * cap frames, kernel first, the wrapper itself left out); the number of frames, 0 if no kernel
 * reaches target. A breadth-first walk of the call graph; bounded by the module's size. */
static int chain_to(LLVMModuleRef m, LLVMValueRef target, frame *out, int cap) {
    int n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        n++;
    fnode *nodes = calloc((size_t)n + 1, sizeof *nodes);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    if (!nodes || !queue) {
        free(nodes);
        free(queue);
        return 0;
    }
    int i = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        nodes[i++] = (fnode){f, -2, NULL};
    qsort(nodes, (size_t)n, sizeof *nodes, cmp_node);
    int head = 0, tail = 0, found = -1;
    for (i = 0; i < n; i++)
        if (!LLVMIsDeclaration(nodes[i].fn) && LLVMGetFunctionCallConv(nodes[i].fn) == LLVMPTXKernelCallConv)
            nodes[i].parent = -1, queue[tail++] = i;
    while (head < tail && found < 0) {
        int cur = queue[head++];
        if (nodes[cur].fn == target) {
            found = cur;
            break;
        }
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(nodes[cur].fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                LLVMValueRef reached[8];
                int nr = reached_functions(in, reached, 8);
                for (int r = 0; r < nr; r++) {
                    int k = find_node(nodes, n, reached[r]);
                    if (k < 0 || nodes[k].parent != -2)
                        continue;
                    nodes[k].parent = cur;
                    nodes[k].via = in;
                    queue[tail++] = k;
                }
            }
    }
    /* the path, target first; the wrapper (parent -1) is left out */
    int len = 0;
    int *path = queue; /* the queue is done with */
    for (int k = found; k >= 0 && nodes[k].parent >= 0; k = nodes[k].parent)
        path[len++] = k;
    int count = len <= cap ? len : 0;
    for (int j = 0; j < count; j++) {
        out[j].fn = nodes[path[len - 1 - j]].fn;
        out[j].inst = j + 1 < len ? nodes[path[len - 2 - j]].via : NULL;
    }
    free(nodes);
    free(queue);
    return count;
}

/* ---- debug locations ---- */

typedef struct srcloc {
    char file[256];
    unsigned line, col;
    bool user; /* the user's own code: a path relative to the workspace, as rustc names it */
} srcloc;

static bool loc_of(LLVMMetadataRef loc, srcloc *out) {
    if (!loc)
        return false;
    LLVMMetadataRef scope = LLVMDILocationGetScope(loc);
    LLVMMetadataRef file = scope ? LLVMDIScopeGetFile(scope) : NULL;
    unsigned n = 0;
    const char *name = file ? LLVMDIFileGetFilename(file, &n) : NULL;
    if (!name || !n)
        return false;
    /* the standard library's paths are /rustc/<commit>/library/...: the commit says nothing */
    if (n > 48 && !strncmp(name, "/rustc/", 7) && name[47] == '/')
        name += 48, n -= 48;
    snprintf(out->file, sizeof out->file, "%.*s", (int)n, name);
    out->line = LLVMDILocationGetLine(loc);
    out->col = LLVMDILocationGetColumn(loc);
    out->user = name[0] != '/' && strncmp(out->file, "library/", 8);
    return true;
}

/* The locations of inst, innermost (inlined code) first, then each inlinedAt outward. */
static int locs_of(LLVMValueRef inst, srcloc *out, int cap) {
    int n = 0;
    LLVMMetadataRef loc = inst ? LLVMInstructionGetDebugLoc(inst) : NULL;
    for (int depth = 0; loc && n < cap && depth < 64; depth++, loc = LLVMDILocationGetInlinedAt(loc))
        if (loc_of(loc, &out[n]))
            n++;
    return n;
}

/* ---- the message ---- */

typedef struct msgbuf {
    char *s;
    size_t cap, len;
} msgbuf;

static void put(msgbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(msgbuf *b, const char *fmt, ...) {
    if (b->len + 1 >= b->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->len = b->len + (size_t)k < b->cap ? b->len + (size_t)k : b->cap - 1;
}

#define MAX_FRAMES 64
#define MAX_LOCS 16
#define SHOWN 10 /* chain lines shown; the middle of a longer chain is elided */

typedef struct line {
    const char *what; /* a function's name, or NULL for inlined code */
    srcloc at;
    bool has_at;
} line;

oxide_status oxide__refuse(LLVMModuleRef m, LLVMValueRef at, const char *callee, const char *fmt, ...) {
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    LLVMValueRef fn = at ? LLVMGetBasicBlockParent(LLVMGetInstructionParent(at)) : NULL;
    frame fr[MAX_FRAMES] = {{0}};
    int nf = fn ? chain_to(m, fn, fr, MAX_FRAMES) : 0;
    if (nf > 0 && fr[nf - 1].fn == fn)
        fr[nf - 1].inst = at;
    else if (fn) { /* no kernel reaches it (or the chain is too long): the function alone */
        nf = 1;
        fr[0] = (frame){fn, at};
    }
    /* the lines of the chain, kernel first: each function where it makes the next call, then
     * the inlined code that call comes from, outer to inner */
    line *lines = calloc(MAX_FRAMES * MAX_LOCS, sizeof *lines);
    char *text = malloc(2048);
    char(*names)[192] = calloc(MAX_FRAMES, sizeof *names);
    if (!lines || !text || !names) {
        free(lines);
        free(text);
        free(names);
        return oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s", why);
    }
    /* the generated entry of a kernel is named as the kernel, and calls it: one step */
    int kept = 0;
    for (int i = 0; i < nf; i++) {
        char rb[512];
        const char *nm = oxide__rust_name(fr[i].fn, rb, sizeof rb);
        if (kept && !strcmp(nm, names[kept - 1]))
            kept--; /* the entry: replaced by the kernel's own function */
        snprintf(names[kept], sizeof names[kept], "%s", nm);
        fr[kept++] = fr[i];
    }
    nf = kept;
    int nl = 0;
    for (int i = 0; i < nf; i++) {
        srcloc ls[MAX_LOCS];
        int n = locs_of(fr[i].inst, ls, MAX_LOCS);
        lines[nl++] = (line){names[i], n ? ls[n - 1] : (srcloc){{0}, 0, 0, false}, n > 0};
        for (int k = n - 2; k >= 0; k--)
            lines[nl++] = (line){NULL, ls[k], true};
    }
    /* the place to show: the deepest line in the user's own code, else the deepest outside the
     * standard library, else the kernel's */
    int primary = -1;
    for (int i = nl - 1; i >= 0 && primary < 0; i--)
        if (lines[i].has_at && lines[i].at.user)
            primary = i;
    for (int i = nl - 1; i >= 0 && primary < 0; i--)
        if (lines[i].has_at && strncmp(lines[i].at.file, "library/", 8))
            primary = i;
    msgbuf b = {text, 2048, 0};
    text[0] = 0;
    put(&b, "kernel `%s`: ", nf ? names[0] : "?");
    if (nf > 1)
        put(&b, "%s ", names[nf - 1]);
    put(&b, "%s", why);
    if (primary >= 0)
        put(&b, "\n  --> %s:%u:%u", lines[primary].at.file, lines[primary].at.line, lines[primary].at.col);
    if (nl > 1 || callee) {
        put(&b, "\n   = note: the call chain from the kernel:");
        for (int i = 0; i < nl; i++) {
            if (nl > SHOWN && i == SHOWN / 2) {
                put(&b, "\n             ... %d more ...", nl - SHOWN + 1);
                i = nl - SHOWN / 2;
            }
            put(&b, "\n             %s%s", i ? "-> " : "", lines[i].what ? lines[i].what : "(inlined)");
            if (lines[i].has_at)
                put(&b, " at %s:%u:%u", lines[i].at.file, lines[i].at.line, lines[i].at.col);
        }
        if (callee)
            put(&b, "\n             -> %s", callee);
    }
    bool any_at = false;
    for (int i = 0; i < nl; i++)
        any_at |= lines[i].has_at;
    if (!any_at && nl)
        put(&b, "\n   = note: no source lines in the bitcode (build with `cargo oxide build`, which asks rustc "
                "for line tables)");
    oxide_status st = oxide__fail(OXIDE_ERROR_UNSUPPORTED, "%s", text);
    free(lines);
    free(text);
    free(names);
    return st;
}

/* ---- formatted panics ---- */

/* The format string of a fmt::Arguments template as rustc 1.95 lays it out (a byte string: a
 * byte 1..127 is the length of the literal text that follows, 0xC0 an argument in its default
 * form, 0 the end), with each argument shown as {} and each % doubled for vprintf. false for
 * anything else (another layout, options on an argument): the caller then says "explicit panic"
 * rather than show a wrong text. */
static bool decode_template(const char *t, size_t n, char *out, size_t cap) {
    size_t o = 0, i = 0;
    while (i < n) {
        unsigned char b = (unsigned char)t[i++];
        if (b == 0) {
            out[o] = 0;
            return o > 0;
        }
        if (b == 0xC0) {
            if (o + 3 > cap)
                return false;
            out[o++] = '{', out[o++] = '}';
            continue;
        }
        if (b >= 0x80 || i + b > n)
            return false;
        for (size_t k = 0; k < b; k++, i++) {
            unsigned char c = (unsigned char)t[i];
            if (c < 0x20 && c != '\t')
                return false;
            if (o + (c == '%' ? 3 : 2) > cap)
                return false;
            if (c == '%')
                out[o++] = '%';
            out[o++] = (char)c;
        }
    }
    return false;
}

static bool template_in(LLVMValueRef v, char *out, size_t cap) {
    if (!v || !LLVMIsAGlobalVariable(v) || !LLVMGetInitializer(v))
        return false;
    LLVMValueRef init = LLVMGetInitializer(v);
    if (!LLVMIsAConstantDataSequential(init))
        return false;
    size_t n;
    const char *t = LLVMGetAsString(init, &n);
    return t && decode_template(t, n, out, cap);
}

bool oxide__panic_fmt_text(LLVMValueRef call, char *out, size_t cap) {
    if (!call || !LLVMIsACallInst(call) || LLVMGetNumArgOperands(call) < 1)
        return false;
    LLVMValueRef a = LLVMGetOperand(call, 0);
    if (template_in(a, out, cap)) /* optimised: the template itself */
        return true;
    /* unoptimised: the fields of what fmt::Arguments::new returned from the template */
    if (a && LLVMIsAExtractValueInst(a))
        a = LLVMGetOperand(a, 0);
    if (!a || !LLVMIsACallInst(a))
        return false;
    for (int i = 0, n = LLVMGetNumArgOperands(a); i < n; i++)
        if (template_in(LLVMGetOperand(a, (unsigned)i), out, cap))
            return true;
    return false;
}
