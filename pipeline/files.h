/* File-system and CSV helpers of the pipeline (pipeline/files.c). */
#ifndef AV_PIPELINE_FILES_H
#define AV_PIPELINE_FILES_H

#include <stddef.h>

#include "core/error.h"

/* One CSV field (RFC 4180): s as is, or quoted with doubled quotes when it holds a comma, a
 * quote or a newline. Writes at most cap bytes like snprintf and returns the length the field
 * needs (so callers detect truncation the same way). */
size_t av_csv_field(char *dst, size_t cap, const char *s);

/* Creates a directory and its parents (like mkdir -p); AV_ERR_IO naming the path. */
int av_mkdirs(const char *dir, av_error_t *err);

#endif
