/* oxide: the command-line tool over liboxide (compile, verify, manifest, extract, example, doctor).
 *
 * Every failure prints one line, `oxide: <status name>: <message>`, to stderr and exits 1
 * (`oxide doctor` has its own exit codes, see usage()). Output goes to stdout unless -o names a
 * file, so the tool composes with pipes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oxide.h"
#include "oxide_examples.h"
#include "oxide_tool.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

static const char usage_text[] =
    "usage: oxide COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  compile FILE.oxir [-o FILE.ptx] [OPTIONS]   compile text IR to PTX (with its manifest)\n"
    "  verify FILE.oxir [--sm SM]                  check IR against the verifier's rules\n"
    "  manifest FILE                               print the kernels and parameters a PTX file\n"
    "                                              (or a binary carrying PTX) declares\n"
    "  extract BINARY [-o FILE.ptx]                write the PTX a Rust-built binary carries\n"
    "                                              (OXIDE_PTX / OXIDE_PTX_LEN, or .oxide_ptx)\n"
    "  example NAME [-o FILE] [--ir] [OPTIONS]     compile one of the example kernels (--ir: print\n"
    "                                              its text IR instead); `oxide example` lists them\n"
    "  doctor                                      check LLVM, the CUDA toolkit, driver and GPU\n"
    "  help                                        this text\n"
    "  --version                                   liboxide's version\n"
    "\n"
    "compile options:\n"
    "  --sm SM             target: sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a (default sm_90a)\n"
    "  --ptx-version X.Y   PTX ISA version (default: chosen from the target)\n"
    "  -O N                optimisation level 0..3 (default 3)\n"
    "  --fast-math         approximate division, square root and reassociation\n"
    "  --lineinfo          emit .loc line information\n"
    "  --emit-llvm         write the optimised LLVM IR instead of PTX\n"
    "  --emit-simt         write the SIMT IR the tile compiler makes of tile kernels (text IR)\n"
    "\n"
    "FILE may be '-' for standard input.\n"
    "exit status: 0 success, 1 error; doctor: 0 all found, 1 the compiler cannot work,\n"
    "2 the compiler works but no driver or GPU is usable (kernels cannot run here).\n";

static void usage(FILE *f) { fputs(usage_text, f); }

int oxide_tool_fail(oxide_status st, const char *fmt, ...) {
    fprintf(stderr, "oxide: %s: ", oxide_status_name(st));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int oxide_tool_fail_last(oxide_status st) {
    return oxide_tool_fail(st, "%s", *oxide_last_error() ? oxide_last_error() : "(no message)");
}

oxide_status oxide_tool_read_file(const char *path, char **data, size_t *len) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        oxide_tool_fail(OXIDE_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
        return OXIDE_ERROR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *bigger = cap > SIZE_MAX / 4 ? NULL : realloc(buf, cap * 2 + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f);
    if (f != stdin)
        fclose(f);
    if (!buf) {
        oxide_tool_fail(OXIDE_ERROR_OUT_OF_MEMORY, "'%s' does not fit in memory", path);
        return OXIDE_ERROR_OUT_OF_MEMORY;
    }
    if (err) {
        free(buf);
        oxide_tool_fail(OXIDE_ERROR_IO, "cannot read '%s': %s", path, strerror(errno));
        return OXIDE_ERROR_IO;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return OXIDE_OK;
}

oxide_status oxide_tool_write_output(const char *path, const char *data, size_t len) {
    FILE *f = path && strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) {
        oxide_tool_fail(OXIDE_ERROR_IO, "cannot create '%s': %s", path, strerror(errno));
        return OXIDE_ERROR_IO;
    }
    size_t put = fwrite(data, 1, len, f);
    int bad = put != len || fflush(f) != 0;
    if (f != stdout)
        bad |= fclose(f) != 0;
    if (bad) {
        oxide_tool_fail(OXIDE_ERROR_IO, "cannot write '%s': %s", path ? path : "standard output", strerror(errno));
        return OXIDE_ERROR_IO;
    }
    return OXIDE_OK;
}

/* ---- argument parsing shared by the commands ---- */

typedef struct args {
    const char *input;  /* the one positional argument */
    const char *output; /* -o */
    const char *sm;
    int ptx_major, ptx_minor, has_ptx_version;
    int opt_level; /* -1: default */
    int fast_math, line_info, emit_llvm, emit_simt, print_ir;
} args;

enum { ALLOW_OUTPUT = 1, ALLOW_SM = 2, ALLOW_CODEGEN = 4, ALLOW_IR = 8 };

static int need_value(int argc, char **argv, int i) {
    if (i + 1 >= argc) {
        oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "option '%s' needs a value (see oxide help)", argv[i]);
        return 0;
    }
    return 1;
}

/* Parses argv[2..]; returns 0 on success, 1 (after printing the error) otherwise. */
static int parse_args(int argc, char **argv, unsigned allow, int need_input, args *a) {
    *a = (args){.opt_level = -1};
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if ((allow & ALLOW_OUTPUT) && !strcmp(s, "-o")) {
            if (!need_value(argc, argv, i))
                return 1;
            a->output = argv[++i];
        } else if ((allow & ALLOW_SM) && (!strcmp(s, "--sm") || !strncmp(s, "--sm=", 5))) {
            if (s[4] == '=')
                a->sm = s + 5;
            else if (!need_value(argc, argv, i))
                return 1;
            else
                a->sm = argv[++i];
        } else if ((allow & ALLOW_CODEGEN) && !strcmp(s, "--ptx-version")) {
            if (!need_value(argc, argv, i))
                return 1;
            const char *v = argv[++i];
            char tail;
            if (sscanf(v, "%d.%d%c", &a->ptx_major, &a->ptx_minor, &tail) != 2 || a->ptx_major < 0 || a->ptx_minor < 0)
                return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "--ptx-version wants MAJOR.MINOR, got '%s'", v);
            a->has_ptx_version = 1;
        } else if ((allow & ALLOW_CODEGEN) && !strncmp(s, "-O", 2)) {
            const char *v = s[2] ? s + 2 : NULL;
            if (!v) {
                if (!need_value(argc, argv, i))
                    return 1;
                v = argv[++i];
            }
            if (strlen(v) != 1 || v[0] < '0' || v[0] > '3')
                return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "-O wants a level 0..3, got '%s'", v);
            a->opt_level = v[0] - '0';
        } else if ((allow & ALLOW_CODEGEN) && !strcmp(s, "--fast-math")) {
            a->fast_math = 1;
        } else if ((allow & ALLOW_CODEGEN) && !strcmp(s, "--lineinfo")) {
            a->line_info = 1;
        } else if ((allow & ALLOW_CODEGEN) && !strcmp(s, "--emit-llvm")) {
            a->emit_llvm = 1;
        } else if ((allow & ALLOW_CODEGEN) && !strcmp(s, "--emit-simt")) {
            a->emit_simt = 1;
        } else if ((allow & ALLOW_IR) && !strcmp(s, "--ir")) {
            a->print_ir = 1;
        } else if (s[0] == '-' && s[1]) {
            return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "unknown option '%s' for 'oxide %s' (see oxide help)",
                                   s, cmd);
        } else if (a->input) {
            return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "'oxide %s' takes one input, got '%s' and '%s'", cmd,
                                   a->input, s);
        } else {
            a->input = s;
        }
    }
    if (need_input && !a->input)
        return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "'oxide %s' needs an input file (see oxide help)", cmd);
    if (a->emit_llvm + a->print_ir + a->emit_simt > 1)
        return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "--ir, --emit-llvm and --emit-simt exclude each other");
    return 0;
}

/* Options from the parsed flags; NULL after printing the error. */
static oxide_options *make_options(const args *a) {
    oxide_options *o = NULL;
    oxide_status st = oxide_options_create(&o);
    if (!st && a->sm)
        st = oxide_options_set_target(o, a->sm);
    if (!st && a->has_ptx_version)
        st = oxide_options_set_ptx_version(o, a->ptx_major, a->ptx_minor);
    if (!st && a->opt_level >= 0)
        st = oxide_options_set_opt_level(o, a->opt_level);
    if (!st && a->fast_math)
        st = oxide_options_set_fast_math(o, 1);
    if (!st && a->line_info)
        st = oxide_options_set_line_info(o, 1);
    if (st) {
        oxide_tool_fail_last(st);
        oxide_options_destroy(o);
        return NULL;
    }
    return o;
}

/* Reads and parses an IR file into a module of ctx; prints the error and returns NULL on failure. */
static oxide_module *load_ir(oxide_context *ctx, const char *path) {
    char *text;
    size_t len;
    if (oxide_tool_read_file(path, &text, &len))
        return NULL;
    oxide_module *mod = NULL;
    oxide_status st = oxide_module_parse(ctx, text, len, &mod);
    free(text);
    if (st) {
        oxide_tool_fail(st, "%s:%s", strcmp(path, "-") ? path : "<stdin>", oxide_last_error());
        return NULL;
    }
    return mod;
}

/* Compiles mod and writes PTX (or LLVM IR) to a->output. */
static int compile_and_write(oxide_module *mod, const args *a) {
    oxide_options *o = make_options(a);
    if (!o)
        return 1;
    const char *ptx;
    size_t len;
    if (a->emit_simt) {
        oxide_module *low = NULL;
        oxide_status st = oxide_module_lower_tile(mod, o, &low);
        oxide_options_destroy(o);
        if (st || (st = oxide_module_print(low, &ptx))) {
            oxide_module_destroy(low);
            return oxide_tool_fail_last(st);
        }
        int rc = oxide_tool_write_output(a->output, ptx, strlen(ptx)) ? 1 : 0;
        oxide_module_destroy(low);
        return rc;
    }
    oxide_status st = oxide_module_compile(mod, o, &ptx, &len);
    oxide_options_destroy(o);
    if (st)
        return oxide_tool_fail_last(st);
    if (a->emit_llvm) {
        const char *ll;
        if ((st = oxide_module_get_llvm_ir(mod, &ll)))
            return oxide_tool_fail_last(st);
        return oxide_tool_write_output(a->output, ll, strlen(ll)) ? 1 : 0;
    }
    return oxide_tool_write_output(a->output, ptx, len) ? 1 : 0;
}

static int with_context(int (*fn)(oxide_context *, const args *), const args *a) {
    oxide_context *ctx;
    oxide_status st = oxide_context_create(&ctx);
    if (st)
        return oxide_tool_fail_last(st);
    int rc = fn(ctx, a);
    oxide_context_destroy(ctx);
    return rc;
}

/* ---- commands ---- */

static int do_compile(oxide_context *ctx, const args *a) {
    oxide_module *mod = load_ir(ctx, a->input);
    return mod ? compile_and_write(mod, a) : 1;
}

static int do_verify(oxide_context *ctx, const args *a) {
    oxide_module *mod = load_ir(ctx, a->input);
    if (!mod)
        return 1;
    oxide_options *o = make_options(a);
    if (!o)
        return 1;
    oxide_status st = oxide_module_verify(mod, o);
    if (st) {
        oxide_options_destroy(o);
        return oxide_tool_fail_last(st);
    }
    printf("%s: ok for %s\n", a->input, oxide_options_get_target(o));
    oxide_options_destroy(o);
    return 0;
}

static int list_examples(void) {
    for (size_t i = 0; i < oxide_example_kernel_count; i++) {
        const oxide_example_kernel *k = &oxide_example_kernels[i];
        printf("%-14s sm_%u+  %s\n", k->name, k->min_sm, k->summary);
    }
    return 0;
}

static int do_example(oxide_context *ctx, const args *a) {
    if (!a->input)
        return list_examples();
    if (!oxide_example_find(a->input)) {
        oxide_tool_fail(OXIDE_ERROR_NOT_FOUND, "no example kernel named '%s'; the examples are:", a->input);
        for (size_t i = 0; i < oxide_example_kernel_count; i++)
            fprintf(stderr, "  %s\n", oxide_example_kernels[i].name);
        return 1;
    }
    oxide_module *mod;
    oxide_status st = oxide_example_module(ctx, a->input, &mod);
    if (st)
        return oxide_tool_fail_last(st);
    if (a->print_ir) {
        const char *text;
        if ((st = oxide_module_print(mod, &text)))
            return oxide_tool_fail_last(st);
        return oxide_tool_write_output(a->output, text, strlen(text)) ? 1 : 0;
    }
    return compile_and_write(mod, a);
}

static int do_manifest(const args *a) {
    char *data;
    size_t len;
    if (oxide_tool_read_file(a->input, &data, &len))
        return 1;
    const char *ptx = data;
    size_t ptx_len = len;
    char *extracted = NULL;
    if (len >= 4 && !memcmp(data, "\177ELF", 4)) {
        if (oxide_tool_extract_ptx(a->input, data, len, &extracted, &ptx_len)) {
            free(data);
            return 1;
        }
        ptx = extracted;
    }
    oxide_manifest *m;
    oxide_status st = oxide_manifest_parse(ptx, ptx_len, &m);
    free(extracted);
    free(data);
    if (st)
        return oxide_tool_fail(st, "%s: %s", a->input, oxide_last_error());
    oxide_tool_print_manifest(stdout, m);
    oxide_manifest_destroy(m);
    return 0;
}

static int do_extract(const args *a) {
    char *data;
    size_t len;
    if (oxide_tool_read_file(a->input, &data, &len))
        return 1;
    char *ptx;
    size_t ptx_len;
    int rc = oxide_tool_extract_ptx(a->input, data, len, &ptx, &ptx_len);
    free(data);
    if (rc)
        return 1;
    rc = oxide_tool_write_output(a->output, ptx, ptx_len) ? 1 : 0;
    free(ptx);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    args a;
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
#ifdef OXIDE_LLVM_VERSION
        printf("oxide %s (LLVM %s)\n", oxide_version(), OXIDE_LLVM_VERSION);
#else
        printf("oxide %s\n", oxide_version());
#endif
        return 0;
    }
    if (!strcmp(cmd, "compile"))
        return parse_args(argc, argv, ALLOW_OUTPUT | ALLOW_SM | ALLOW_CODEGEN, 1, &a) ? 1
                                                                                      : with_context(do_compile, &a);
    if (!strcmp(cmd, "verify"))
        return parse_args(argc, argv, ALLOW_SM, 1, &a) ? 1 : with_context(do_verify, &a);
    if (!strcmp(cmd, "example"))
        return parse_args(argc, argv, ALLOW_OUTPUT | ALLOW_SM | ALLOW_CODEGEN | ALLOW_IR, 0, &a)
                   ? 1
                   : with_context(do_example, &a);
    if (!strcmp(cmd, "manifest"))
        return parse_args(argc, argv, 0, 1, &a) ? 1 : do_manifest(&a);
    if (!strcmp(cmd, "extract"))
        return parse_args(argc, argv, ALLOW_OUTPUT, 1, &a) ? 1 : do_extract(&a);
    if (!strcmp(cmd, "doctor")) {
        if (parse_args(argc, argv, 0, 0, &a))
            return 1;
        if (a.input)
            return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "'oxide doctor' takes no arguments, got '%s'",
                                   a.input);
        return oxide_tool_doctor(OXIDE_CUDA_HOME);
    }
    return oxide_tool_fail(OXIDE_ERROR_INVALID_ARGUMENT, "unknown command '%s' (see oxide help)", cmd);
}
