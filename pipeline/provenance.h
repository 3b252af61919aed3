/* Provenance of a results or validation file: which anvil (version, git commit) produced it,
 * from which inputs (SHA-256 of each GPU spec file and of the measured profile when the cost
 * model reads one), on which host. Written as the "provenance" object of results.json and
 * validation.json, so a number can always be traced back to what made it. */
#ifndef AV_PIPELINE_PROVENANCE_H
#define AV_PIPELINE_PROVENANCE_H

#include <jansson.h>

#include "pipeline/experiment.h"

/* The project's version, "MAJOR.MINOR.PATCH", from CMake's project(VERSION). */
const char *av_version(void);
/* The git commit the build came from ("<sha>-dirty" with uncommitted changes), or
 * "unknown" when built outside git. */
const char *av_git_commit(void);

/* Lower-case hex SHA-256 of a file's bytes into hex[65]; nonzero (hex = "") when the file
 * cannot be read. */
int av_sha256_file(const char *path, char hex[65]);

/* {"anvil_version", "git_commit", "host", "experiment_sha256", "gpu_specs": [{"name", "path",
 * "sha256"}], "profiles": [...] (only with the profile cost model)}. Caller owns it. */
json_t *av_provenance_json(const av_experiment_t *e);

#endif
