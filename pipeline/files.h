/* File-system and CSV helpers of the pipeline (pipeline/files.c). */
#ifndef AV_PIPELINE_FILES_H
#define AV_PIPELINE_FILES_H

#include <stddef.h>

#include "core/error.h"

/* One CSV text field (names, labels, messages; numbers are printed by their callers): s as
 * is, or quoted with doubled quotes (RFC 4180) when it holds a comma, a quote, a CR or a LF.
 * A text that begins with '=', '+', '-', '@', a tab or a CR, and is not a number, is a
 * formula to a spreadsheet: it is quoted with a single quote put before it ("'=1+2"), the
 * usual defusing; "-1.5" stays as it is. Writes at most cap bytes like snprintf and returns
 * the length the field needs (so callers detect truncation the same way). */
size_t av_csv_field(char *dst, size_t cap, const char *s);

/* Creates a directory and its parents (like mkdir -p); AV_ERR_IO naming the path. */
int av_mkdirs(const char *dir, av_error_t *err);

/* Writes a whole file flushed to the disk through an exclusive temporary renamed over it
 * (core/outfile.h: only a regular file or nothing is replaced); on failure nothing is left
 * and AV_ERR_IO names it. */
int av_file_write(const char *path, const char *data, size_t len, av_error_t *err);

/* A whole file as a NUL-terminated string (caller frees); NULL with AV_ERR_IO naming it. */
char *av_file_read(const char *path, av_error_t *err);

/* Removes a file or a directory tree (like rm -rf); 0 when done or absent, -1 with errno. */
int av_remove_tree(const char *path);

/* Fault injection for tests: true when the environment variable ANVIL_FAULT is
 * "<kind>:<name>". Kinds: enospc:<file name> (av_file_write of that file fails as if the
 * disk were full), kill-after:<file name> (the process is killed once it is written),
 * kill-after-rows:<N> (pipeline/run.c: killed once N rows are journaled). */
int av_fault(const char *kind, const char *name);

#endif
