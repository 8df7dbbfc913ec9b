/* `oxide extract`: find the PTX that a Rust-built binary carries as data.
 *
 * The cargo-oxide link step adds an object defining two symbols: OXIDE_PTX (the PTX bytes, as an
 * array, or a pointer to them) and OXIDE_PTX_LEN (their length, a 4- or 8-byte integer), the
 * bytes in a section named .oxide_ptx. This reads the ELF symbol tables (.symtab, else .dynsym)
 * of a 64-bit little-endian executable, shared object or relocatable object and copies those
 * bytes out of the section that holds them; a stripped binary, which has no symbols left, is
 * read through its .oxide_ptx section.
 * Plain C over the file's bytes: every offset is checked against the file size first, since the
 * input may be any file at all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oxide_tool.h"

enum {
    ET_REL_ = 1,
    SHT_SYMTAB_ = 2,
    SHT_RELA_ = 4,
    SHT_NOBITS_ = 8,
    SHT_DYNSYM_ = 11,
    SHN_LORESERVE_ = 0xff00,
    R_X86_64_RELATIVE_ = 8,
    R_AARCH64_RELATIVE_ = 1027,
};

typedef struct elf {
    const unsigned char *p;
    size_t size;
    const char *name;
    unsigned type;
    uint64_t shoff;
    unsigned shnum, shentsize;
} elf;

typedef struct sym {
    int found;
    unsigned shndx;
    uint64_t value, size;
} sym;

static uint64_t rd(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* True if [off, off + len) lies inside the file. */
static int in_file(const elf *e, uint64_t off, uint64_t len) { return off <= e->size && len <= e->size - off; }

static int bad(const elf *e, const char *what) {
    return oxide_tool_fail(OXIDE_ERROR_PARSE, "%s: malformed ELF file (%s)", e->name, what);
}

/* Section i's header fields. */
static const unsigned char *shdr(const elf *e, unsigned i) { return e->p + e->shoff + (uint64_t)i * e->shentsize; }
static unsigned sh_type(const elf *e, unsigned i) { return (unsigned)rd(shdr(e, i) + 4, 4); }
static uint64_t sh_flags(const elf *e, unsigned i) { return rd(shdr(e, i) + 8, 8); }
static uint64_t sh_addr(const elf *e, unsigned i) { return rd(shdr(e, i) + 16, 8); }
static uint64_t sh_offset(const elf *e, unsigned i) { return rd(shdr(e, i) + 24, 8); }
static uint64_t sh_size(const elf *e, unsigned i) { return rd(shdr(e, i) + 32, 8); }
static unsigned sh_link(const elf *e, unsigned i) { return (unsigned)rd(shdr(e, i) + 40, 4); }

/* Looks up OXIDE_PTX and OXIDE_PTX_LEN in the symbol table section s. Returns 0, or 1 after an error. */
static int scan_symbols(const elf *e, unsigned s, sym *ptx, sym *len) {
    uint64_t off = sh_offset(e, s), size = sh_size(e, s);
    unsigned str = sh_link(e, s);
    if (!in_file(e, off, size) || str >= e->shnum)
        return bad(e, "symbol table outside the file");
    uint64_t stroff = sh_offset(e, str), strsize = sh_size(e, str);
    if (!in_file(e, stroff, strsize))
        return bad(e, "string table outside the file");
    for (uint64_t at = 0; at + 24 <= size; at += 24) {
        const unsigned char *q = e->p + off + at;
        uint64_t name = rd(q, 4);
        if (name >= strsize)
            continue;
        const char *n = (const char *)e->p + stroff + name;
        size_t max = (size_t)(strsize - name);
        sym *dst = NULL;
        if (max > 9 && !memcmp(n, "OXIDE_PTX", 10))
            dst = ptx;
        else if (max > 13 && !memcmp(n, "OXIDE_PTX_LEN", 14))
            dst = len;
        unsigned shndx = (unsigned)rd(q + 6, 2);
        if (!dst || dst->found || shndx == 0) /* 0: an undefined reference, not the definition */
            continue;
        *dst = (sym){.found = 1, .shndx = shndx, .value = rd(q + 8, 8), .size = rd(q + 16, 8)};
    }
    return 0;
}

/* File offset of the nbytes at virtual address (or, in a relocatable object, section offset)
 * value in section shndx. Returns 0, or 1 after an error. */
static int locate(const elf *e, const char *what, unsigned shndx, uint64_t value, uint64_t nbytes, uint64_t *off) {
    if (shndx >= SHN_LORESERVE_ || shndx >= e->shnum)
        return oxide_tool_fail(OXIDE_ERROR_UNSUPPORTED, "%s: %s is not defined in a section (index %u)", e->name, what,
                               shndx);
    if (sh_type(e, shndx) == SHT_NOBITS_)
        return oxide_tool_fail(OXIDE_ERROR_PARSE, "%s: %s lives in a zero-initialised section: it holds no PTX",
                               e->name, what);
    uint64_t base = e->type == ET_REL_ ? 0 : sh_addr(e, shndx), size = sh_size(e, shndx);
    if (value < base || value - base > size || nbytes > size - (value - base))
        return bad(e, "symbol outside its section");
    *off = sh_offset(e, shndx) + (value - base);
    if (!in_file(e, *off, nbytes))
        return bad(e, "section data outside the file");
    return 0;
}

/* The section holding virtual address v with n bytes after it, for pointers. */
static int section_of(const elf *e, uint64_t v, uint64_t n, unsigned *out) {
    for (unsigned i = 1; i < e->shnum; i++) {
        uint64_t a = sh_addr(e, i), s = sh_size(e, i);
        if ((sh_flags(e, i) & 2 /* SHF_ALLOC */) && sh_type(e, i) != SHT_NOBITS_ && v >= a && v - a <= s &&
            n <= s - (v - a)) {
            *out = i;
            return 1;
        }
    }
    return 0;
}

/* A pointer stored at address at: in a position-independent binary the file holds 0 there and
 * a RELATIVE relocation carries the target, so relocations take precedence over the contents. */
static uint64_t pointer_value(const elf *e, uint64_t at, uint64_t file_off) {
    for (unsigned s = 1; s < e->shnum; s++) {
        if (sh_type(e, s) != SHT_RELA_)
            continue;
        uint64_t off = sh_offset(e, s), size = sh_size(e, s);
        if (!in_file(e, off, size))
            continue;
        for (uint64_t r = 0; r + 24 <= size; r += 24) {
            const unsigned char *q = e->p + off + r;
            uint64_t type = rd(q + 8, 4);
            if (rd(q, 8) == at && (type == R_X86_64_RELATIVE_ || type == R_AARCH64_RELATIVE_))
                return rd(q + 16, 8);
        }
    }
    return rd(e->p + file_off, 8);
}

/* The section named sname (by .shstrtab), or 0. */
static unsigned section_named(const elf *e, unsigned shstrndx, const char *sname) {
    if (shstrndx == 0 || shstrndx >= e->shnum)
        return 0;
    uint64_t off = sh_offset(e, shstrndx), size = sh_size(e, shstrndx), want = strlen(sname) + 1;
    if (!in_file(e, off, size))
        return 0;
    for (unsigned i = 1; i < e->shnum; i++) {
        uint64_t at = rd(shdr(e, i), 4);
        if (at < size && size - at >= want && !memcmp(e->p + off + at, sname, want))
            return i;
    }
    return 0;
}

/* A malloc'd NUL-terminated copy of the n bytes at off, without trailing NULs. */
static int copy_out(const elf *e, uint64_t off, uint64_t n, char **ptx_out, size_t *len_out) {
    while (n && e->p[off + n - 1] == 0)
        n--;
    if (n == 0)
        return oxide_tool_fail(OXIDE_ERROR_PARSE, "%s: OXIDE_PTX is empty", e->name);
    char *copy = malloc((size_t)n + 1);
    if (!copy)
        return oxide_tool_fail(OXIDE_ERROR_OUT_OF_MEMORY, "%s: %llu bytes of PTX", e->name, (unsigned long long)n);
    memcpy(copy, e->p + off, (size_t)n);
    copy[n] = 0;
    *ptx_out = copy;
    *len_out = (size_t)n;
    return 0;
}

int oxide_tool_extract_ptx(const char *name, const char *data, size_t size, char **ptx_out, size_t *len_out) {
    elf e = {.p = (const unsigned char *)data, .size = size, .name = name};
    if (size < 64 || memcmp(data, "\177ELF", 4))
        return oxide_tool_fail(OXIDE_ERROR_PARSE, "%s: not an ELF file", name);
    if (e.p[4] != 2 || e.p[5] != 1)
        return oxide_tool_fail(OXIDE_ERROR_UNSUPPORTED, "%s: only 64-bit little-endian ELF files are supported", name);
    e.type = (unsigned)rd(e.p + 16, 2);
    e.shoff = rd(e.p + 40, 8);
    e.shentsize = (unsigned)rd(e.p + 58, 2);
    e.shnum = (unsigned)rd(e.p + 60, 2);
    if (e.shoff == 0)
        return oxide_tool_fail(OXIDE_ERROR_NOT_FOUND, "%s: has no section headers, so no symbols to find OXIDE_PTX by",
                               name);
    if (e.shentsize < 64 || !in_file(&e, e.shoff, 64))
        return bad(&e, "section header table");
    if (e.shnum == 0) /* extended numbering: the count is in section 0 */
        e.shnum = sh_size(&e, 0) > 0xffffff ? 0 : (unsigned)sh_size(&e, 0);
    if (!in_file(&e, e.shoff, (uint64_t)e.shnum * e.shentsize))
        return bad(&e, "section header table outside the file");

    sym ptx = {0}, len = {0};
    for (int pass = 0; pass < 2 && !ptx.found; pass++) /* .symtab, then .dynsym (stripped binaries) */
        for (unsigned s = 1; s < e.shnum; s++)
            if (sh_type(&e, s) == (pass ? SHT_DYNSYM_ : SHT_SYMTAB_) && scan_symbols(&e, s, &ptx, &len))
                return 1;
    if (!ptx.found) {
        /* Stripped: no symbols, but cargo oxide puts the bytes (NUL-terminated) in a section of
         * their own, whose header survives stripping. */
        unsigned s = section_named(&e, (unsigned)rd(e.p + 62, 2), ".oxide_ptx");
        if (s && sh_type(&e, s) != SHT_NOBITS_) {
            uint64_t off = sh_offset(&e, s), n = sh_size(&e, s);
            if (!in_file(&e, off, n))
                return bad(&e, ".oxide_ptx outside the file");
            return copy_out(&e, off, n, ptx_out, len_out);
        }
        return oxide_tool_fail(OXIDE_ERROR_NOT_FOUND,
                               "%s: no OXIDE_PTX symbol and no .oxide_ptx section: the binary carries no oxide PTX "
                               "(build it with `cargo oxide build`)",
                               name);
    }

    uint64_t n, off;
    if (len.found) {
        if (len.size == 0) /* a bare label: a 64-bit target's usize */
            len.size = 8;
        if (len.size != 4 && len.size != 8)
            return oxide_tool_fail(OXIDE_ERROR_PARSE,
                                   "%s: OXIDE_PTX_LEN has %llu bytes; expected a 4- or 8-byte integer", name,
                                   (unsigned long long)len.size);
        if (locate(&e, "OXIDE_PTX_LEN", len.shndx, len.value, len.size, &off))
            return 1;
        n = rd(e.p + off, (int)len.size);
        if (n == 0) /* cuda-core's weak default: the program was linked without its PTX */
            return oxide_tool_fail(OXIDE_ERROR_NOT_FOUND,
                                   "%s: OXIDE_PTX_LEN is 0: the binary was built without its PTX (build it with "
                                   "`cargo oxide build`)",
                                   name);
    } else {
        n = ptx.size; /* an array's own size, less a terminating NUL below */
    }

    /* Size 0: a bare assembler label (no .size directive) in front of the bytes. */
    if (ptx.size >= n || ptx.size == 0 || !len.found) {
        if (locate(&e, "OXIDE_PTX", ptx.shndx, ptx.value, n, &off))
            return 1;
    } else if (ptx.size == 8) {
        if (e.type == ET_REL_)
            return oxide_tool_fail(OXIDE_ERROR_UNSUPPORTED,
                                   "%s: OXIDE_PTX is a pointer in a relocatable object; extract from the linked binary",
                                   name);
        uint64_t at;
        if (locate(&e, "OXIDE_PTX", ptx.shndx, ptx.value, 8, &at))
            return 1;
        uint64_t target = pointer_value(&e, ptx.value, at);
        unsigned s;
        if (!section_of(&e, target, n, &s))
            return oxide_tool_fail(OXIDE_ERROR_PARSE,
                                   "%s: OXIDE_PTX points to 0x%llx, which holds no %llu bytes of file data", name,
                                   (unsigned long long)target, (unsigned long long)n);
        if (locate(&e, "the PTX OXIDE_PTX points to", s, target, n, &off))
            return 1;
    } else {
        return oxide_tool_fail(OXIDE_ERROR_PARSE,
                               "%s: OXIDE_PTX has %llu bytes but OXIDE_PTX_LEN says %llu; expected an array of at "
                               "least that size or a pointer",
                               name, (unsigned long long)ptx.size, (unsigned long long)n);
    }
    return copy_out(&e, off, n, ptx_out, len_out);
}
