/* oxide: the command-line tool over liboxide (compile, verify, manifest, extract, example, doctor).
 *
 * Every failure prints one line, `oxide: <status name>: <message>`, to stderr. A failed command
 * exits 1, a command line the tool cannot use 64, and `oxide doctor` 2 where kernels cannot run
 * (exit_text). Output goes to stdout unless -o names a file, so the tool composes with pipes. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oxide.h"
#include "oxide_examples.h"
#include "oxide_tool.h"

#ifndef OXIDE_CUDA_HOME
#define OXIDE_CUDA_HOME "/usr/local/cuda"
#endif

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

/* ---- commands, their options and their help ---- */

/* Exit statuses (documented in docs/c-api.md): scripts tell a mistake in the command line from
 * input that does not compile, and doctor's "no GPU here" from both. 64 is sysexits' EX_USAGE. */
enum { EXIT_USAGE = 64 };

static const char exit_text[] =
    "exit status: 0 success; 1 the input does not parse, verify or compile, or a file cannot be read or\n"
    "written; 2 (doctor) the compiler works but no driver or GPU is usable, so kernels cannot run here;\n"
    "64 usage error (unknown command or option, bad option value, missing or extra input).\n";

enum { OPT_OUTPUT = 1, OPT_SM = 2, OPT_CODEGEN = 4, OPT_IR = 8 };

typedef struct args {
    const char *input;  /* the one positional argument */
    const char *output; /* -o */
    oxide_options *opts;
    int emit_llvm, emit_simt, print_ir, time_passes;
} args;

typedef struct command {
    const char *name, *synopsis, *summary;
    unsigned options;
    int input; /* 1 needed, 0 optional, -1 none */
    int (*run)(const args *);
} command;

/* getopt_long values of the long-only options */
enum { L_SM = 256, L_PTX, L_FAST, L_LINE, L_LLVM, L_SIMT, L_IR, L_TIME, L_VARIANTS, L_HELP };

typedef struct option_doc {
    struct option opt;
    unsigned group;
    const char *spelling, *text;
} option_doc;

static const option_doc option_docs[] = {
    {{"output", required_argument, NULL, 'o'},
     OPT_OUTPUT,
     "-o, --output FILE",
     "write FILE instead of standard output"},
    {{"sm", required_argument, NULL, L_SM},
     OPT_SM,
     "--sm SM",
     "target: sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a (default sm_90a)"},
    {{"ptx-version", required_argument, NULL, L_PTX},
     OPT_CODEGEN,
     "--ptx-version X.Y",
     "PTX ISA version (default: the lowest the target has)"},
    {{"opt-level", required_argument, NULL, 'O'},
     OPT_CODEGEN,
     "-O, --opt-level N",
     "optimisation level 0..3 (default 3)"},
    {{"fast-math", no_argument, NULL, L_FAST},
     OPT_CODEGEN,
     "--fast-math",
     "approximate division, square root and reassociation"},
    {{"lineinfo", no_argument, NULL, L_LINE}, OPT_CODEGEN, "--lineinfo", "emit .loc line information"},
    {{"tile-variants", required_argument, NULL, L_VARIANTS},
     OPT_CODEGEN,
     "--tile-variants V",
     "all (default), plain or tma: which variants of TMA tile kernels to build"},
    {{"emit-llvm", no_argument, NULL, L_LLVM},
     OPT_CODEGEN,
     "--emit-llvm",
     "write the optimised LLVM IR instead of PTX"},
    {{"emit-simt", no_argument, NULL, L_SIMT},
     OPT_CODEGEN,
     "--emit-simt",
     "write the SIMT IR the tile compiler makes of tile kernels (text IR)"},
    {{"time-passes", no_argument, NULL, L_TIME},
     OPT_CODEGEN,
     "--time-passes",
     "print the time each stage of the compile took to standard error"},
    {{"ir", no_argument, NULL, L_IR}, OPT_IR, "--ir", "write the example's text IR instead of compiling it"},
    {{"help", no_argument, NULL, 'h'}, ~0u, "-h, --help", "this command's help"},
};
enum { NOPTIONS = sizeof option_docs / sizeof option_docs[0] };

static void command_help(FILE *f, const command *c) {
    fprintf(f, "usage: oxide %s\n\n%s\n", c->synopsis, c->summary);
    fputs("\noptions:\n", f);
    for (size_t i = 0; i < NOPTIONS; i++)
        if (option_docs[i].group & c->options || option_docs[i].group == ~0u)
            fprintf(f, "  %-20s %s\n", option_docs[i].spelling, option_docs[i].text);
    if (c->input > 0)
        fputs("\nFILE may be '-' for standard input.\n", f);
    fprintf(f, "\n%s", exit_text);
}

/* Prints `oxide: OXIDE_ERROR_INVALID_ARGUMENT: ...` with where the help is; returns EXIT_USAGE. */
static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...) {
    fprintf(stderr, "oxide: %s: ", oxide_status_name(OXIDE_ERROR_INVALID_ARGUMENT));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see oxide %s%s--help)\n", cmd ? cmd : "", cmd ? " " : "");
    return EXIT_USAGE;
}

typedef struct codegen_flags {
    const char *sm;
    int ptx_major, ptx_minor, has_ptx_version;
    int opt_level; /* -1: default */
    int fast_math, line_info;
    int tile_variants; /* 0: default */
} codegen_flags;

/* Options from the parsed flags, checked before any input is read: a bad value is a usage error. */
static int make_options(const char *cmd, const codegen_flags *g, oxide_options **out) {
    oxide_options *o = NULL;
    oxide_status st = oxide_options_create(&o);
    if (st)
        return oxide_tool_fail_last(st);
    if (!st && g->sm)
        st = oxide_options_set_target(o, g->sm);
    if (!st && g->has_ptx_version)
        st = oxide_options_set_ptx_version(o, g->ptx_major, g->ptx_minor);
    if (!st && g->opt_level >= 0)
        st = oxide_options_set_opt_level(o, g->opt_level);
    if (!st && g->fast_math)
        st = oxide_options_set_fast_math(o, 1);
    if (!st && g->line_info)
        st = oxide_options_set_line_info(o, 1);
    if (!st && g->tile_variants)
        st = oxide_options_set_tile_variants(o, g->tile_variants);
    if (st) {
        oxide_options_destroy(o);
        return usage_error(cmd, "%s", oxide_last_error());
    }
    *out = o;
    return 0;
}

/* One option of c's; returns 0, or the exit status after printing the error. */
static int take_option(const command *c, int ch, const char *arg, args *a, codegen_flags *g) {
    char tail;
    switch (ch) {
    case 'o': a->output = arg; return 0;
    case L_SM: g->sm = arg; return 0;
    case L_PTX:
        if (sscanf(arg, "%d.%d%c", &g->ptx_major, &g->ptx_minor, &tail) != 2 || g->ptx_major < 0 || g->ptx_minor < 0)
            return usage_error(c->name, "--ptx-version wants MAJOR.MINOR, got '%s'", arg);
        g->has_ptx_version = 1;
        return 0;
    case 'O':
        if (strlen(arg) != 1 || arg[0] < '0' || arg[0] > '3')
            return usage_error(c->name, "-O wants a level 0..3, got '%s'", arg);
        g->opt_level = arg[0] - '0';
        return 0;
    case L_FAST: g->fast_math = 1; return 0;
    case L_LINE: g->line_info = 1; return 0;
    case L_VARIANTS:
        g->tile_variants = !strcmp(arg, "all")     ? OXIDE_TILE_VARIANTS_ALL
                           : !strcmp(arg, "plain") ? OXIDE_TILE_VARIANTS_PLAIN
                           : !strcmp(arg, "tma")   ? OXIDE_TILE_VARIANTS_TMA
                                                   : 0;
        if (!g->tile_variants)
            return usage_error(c->name, "--tile-variants wants all, plain or tma, got '%s'", arg);
        return 0;
    case L_LLVM: a->emit_llvm = 1; return 0;
    case L_SIMT: a->emit_simt = 1; return 0;
    case L_IR: a->print_ir = 1; return 0;
    case L_TIME: a->time_passes = 1; return 0;
    default: return usage_error(c->name, "internal error: option %d has no handler", ch);
    }
}

/* The option getopt refused, as the user wrote it. */
static const char *refused_option(int argc, char **argv, int at, char *buf, size_t size) {
    const char *w = at < argc ? argv[at] : NULL;
    if (w && !strncmp(w, "--", 2))
        return w;
    if (optopt > 0 && optopt < 256) {
        snprintf(buf, size, "-%c", optopt);
        return buf;
    }
    return w ? w : "?";
}

/* Parses `oxide CMD ARGS...` (argv[0] is CMD); returns 0, or the exit status after printing the
 * error or the help (-h: 0, with *done set). */
static int parse_args(const command *c, int argc, char **argv, args *a, int *done) {
    struct option longs[NOPTIONS + 1];
    char shorts[16] = ":";
    size_t nl = 0;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const option_doc *d = &option_docs[i];
        if (!(d->group & c->options) && d->group != ~0u)
            continue;
        longs[nl++] = d->opt;
        if (d->opt.val < 256) {
            char s[3] = {(char)d->opt.val, d->opt.has_arg ? ':' : 0, 0};
            strcat(shorts, s);
        }
    }
    longs[nl] = (struct option){0};
    *a = (args){0};
    codegen_flags g = {.opt_level = -1};
    opterr = 0;
    optind = 1;
    int ch, rc;
    while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        char buf[8];
        if (ch == 'h') {
            command_help(stdout, c);
            *done = 1;
            return 0;
        }
        if (ch == ':')
            return usage_error(c->name, "option '%s' needs a value",
                               refused_option(argc, argv, optind - 1, buf, sizeof buf));
        if (ch == '?')
            return usage_error(c->name, "unknown option '%s' for 'oxide %s'",
                               refused_option(argc, argv, optind - 1, buf, sizeof buf), c->name);
        if ((rc = take_option(c, ch, optarg, a, &g)))
            return rc;
    }
    for (int i = optind; i < argc; i++) {
        if (c->input < 0)
            return usage_error(c->name, "'oxide %s' takes no arguments, got '%s'", c->name, argv[i]);
        if (a->input)
            return usage_error(c->name, "'oxide %s' takes one input, got '%s' and '%s'", c->name, a->input, argv[i]);
        a->input = argv[i];
    }
    if (c->input > 0 && !a->input)
        return usage_error(c->name, "'oxide %s' needs an input file", c->name);
    if (a->emit_llvm + a->print_ir + a->emit_simt > 1)
        return usage_error(c->name, "--ir, --emit-llvm and --emit-simt exclude each other");
    if (c->options & (OPT_SM | OPT_CODEGEN))
        return make_options(c->name, &g, &a->opts);
    return 0;
}

/* How long load_ir's parse took (ms; < 0: no text was parsed), for --time-passes. */
static double parse_ms = -1;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Reads and parses an IR file into a module of ctx; prints the error and returns NULL on failure. */
static oxide_module *load_ir(oxide_context *ctx, const char *path) {
    char *text;
    size_t len;
    if (oxide_tool_read_file(path, &text, &len))
        return NULL;
    oxide_module *mod = NULL;
    double t0 = now_ms();
    oxide_status st = oxide_module_parse(ctx, text, len, &mod);
    parse_ms = now_ms() - t0;
    free(text);
    if (st) {
        oxide_tool_fail(st, "%s:%s", strcmp(path, "-") ? path : "<stdin>", oxide_last_error());
        return NULL;
    }
    return mod;
}

/* --time-passes: one line per stage of the last compile (a failed one too), then the total. */
static void print_stage_times(oxide_module *mod) {
    const char *name;
    double ms, total = 0;
    fputs("oxide: compile stages (ms, wall clock)\n", stderr);
    if (parse_ms >= 0) {
        fprintf(stderr, "  %-12s %9.3f\n", "parse", parse_ms);
        total += parse_ms;
    }
    for (size_t i = 0; !oxide_module_get_compile_time(mod, i, &name, &ms); i++) {
        fprintf(stderr, "  %-12s %9.3f\n", name, ms);
        total += ms;
    }
    fprintf(stderr, "  %-12s %9.3f\n", "total", total);
}

/* Compiles mod and writes PTX (or LLVM IR) to a->output. */
static int compile_and_write(oxide_module *mod, const args *a) {
    const oxide_options *o = a->opts;
    const char *ptx;
    size_t len;
    if (a->emit_simt) {
        oxide_module *low = NULL;
        oxide_status st = oxide_module_lower_tile(mod, o, &low);
        if (st || (st = oxide_module_print(low, &ptx))) {
            oxide_module_destroy(low);
            return oxide_tool_fail_last(st);
        }
        int rc = oxide_tool_write_output(a->output, ptx, strlen(ptx)) ? 1 : 0;
        oxide_module_destroy(low);
        return rc;
    }
    oxide_status st = oxide_module_compile(mod, o, &ptx, &len);
    if (a->time_passes)
        print_stage_times(mod);
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
    oxide_status st = oxide_module_verify(mod, a->opts);
    if (st)
        return oxide_tool_fail_last(st);
    printf("%s: ok for %s\n", a->input, oxide_options_get_target(a->opts));
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

static int run_compile(const args *a) { return with_context(do_compile, a); }
static int run_verify(const args *a) { return with_context(do_verify, a); }
static int run_example(const args *a) { return with_context(do_example, a); }
static int run_doctor(const args *a) {
    (void)a;
    return oxide_tool_doctor(OXIDE_CUDA_HOME);
}

static const command commands[] = {
    {"compile", "compile FILE.oxir [-o FILE.ptx] [OPTIONS]", "Compile text IR to PTX, with its manifest.",
     OPT_OUTPUT | OPT_SM | OPT_CODEGEN, 1, run_compile},
    {"verify", "verify FILE.oxir [--sm SM]", "Check IR against the verifier's rules for a target.", OPT_SM, 1,
     run_verify},
    {"manifest", "manifest FILE", "Print the kernels and parameters a PTX file (or a binary carrying PTX) declares.", 0,
     1, do_manifest},
    {"extract", "extract BINARY [-o FILE.ptx]",
     "Write the PTX a Rust-built binary carries (OXIDE_PTX / OXIDE_PTX_LEN, or .oxide_ptx).", OPT_OUTPUT, 1,
     do_extract},
    {"example", "example [NAME [-o FILE] [--ir] [OPTIONS]]",
     "Compile one of the example kernels (--ir: write its text IR instead); without NAME, list them.",
     OPT_OUTPUT | OPT_SM | OPT_CODEGEN | OPT_IR, 0, run_example},
    {"doctor", "doctor",
     "Check LLVM, libdevice, the CUDA toolkit, the driver and each GPU; say how to fix what is missing.", 0, -1,
     run_doctor},
};

static const command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

static void usage(FILE *f) {
    fputs("usage: oxide COMMAND [ARGS]      (oxide COMMAND --help: the command's options)\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "help", "this text; `oxide help COMMAND` is the command's help");
    fprintf(f, "  %-10s %s\n\n", "-V", "liboxide's version and LLVM's (also --version)");
    fputs(exit_text, f);
}

static int version(void) {
#ifdef OXIDE_LLVM_VERSION
    printf("oxide %s (LLVM %s)\n", oxide_version(), OXIDE_LLVM_VERSION);
#else
    printf("oxide %s\n", oxide_version());
#endif
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 3)
            return usage_error(NULL, "'oxide help' takes at most one command, got '%s' and '%s'", argv[2], argv[3]);
        const command *c = argc == 3 ? find_command(argv[2]) : NULL;
        if (argc == 3 && !c)
            return usage_error(NULL, "no command '%s' to give help on", argv[2]);
        if (c)
            command_help(stdout, c);
        else
            usage(stdout);
        return 0;
    }
    if (!strcmp(name, "-V") || !strcmp(name, "--version") || !strcmp(name, "version"))
        return version();
    const command *c = find_command(name);
    if (!c)
        return usage_error(NULL, "unknown command '%s'", name);
    args a;
    int done = 0, rc = parse_args(c, argc - 1, argv + 1, &a, &done);
    if (rc || done)
        return rc;
    rc = c->run(&a);
    oxide_options_destroy(a.opts);
    return rc;
}
