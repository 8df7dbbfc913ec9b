/* Internal to the oxide command-line tool: the pieces tools/oxide.c's commands share. */
#ifndef OXIDE_TOOL_H
#define OXIDE_TOOL_H

#include <stddef.h>
#include <stdio.h>

#include "oxide.h"

/* Print `oxide: <status name>: <message>` to stderr; returns 1 (the exit status). */
int oxide_tool_fail(oxide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with oxide_last_error() as the message. */
int oxide_tool_fail_last(oxide_status st);

/* Whole file ("-": stdin) into a malloc'd, NUL-terminated buffer. Prints the error itself. */
oxide_status oxide_tool_read_file(const char *path, char **data, size_t *len);
/* To path, or stdout when path is NULL or "-". Prints the error itself. */
oxide_status oxide_tool_write_output(const char *path, const char *data, size_t len);

/* The PTX a 64-bit little-endian ELF file carries in its OXIDE_PTX / OXIDE_PTX_LEN symbols, as a
 * malloc'd NUL-terminated copy. Returns 0, or 1 after printing the error. (tools/extract.c) */
int oxide_tool_extract_ptx(const char *name, const char *elf, size_t size, char **ptx, size_t *len);

/* Human-readable listing of a manifest. (tools/manifest_print.c) */
void oxide_tool_print_manifest(FILE *f, const oxide_manifest *m);

/* `oxide doctor`; returns the exit status. (tools/doctor.c) */
int oxide_tool_doctor(const char *cuda_home);

#endif
