/* anvil's public C API: the stable surface for programs linking libanvil (pkg-config anvil,
 * find_package(anvil)) and for the Python package built on it. Include this one header.
 * Every object is an opaque handle with _create/_destroy; every fallible call returns an
 * anvil_status_t and fills an optional anvil_error_t with the one line `anvil` prints. */
#ifndef ANVIL_ANVIL_H
#define ANVIL_ANVIL_H

#define ANVIL_VERSION_MAJOR 0
#define ANVIL_VERSION_MINOR 9
#define ANVIL_VERSION_PATCH 0

#include "anvil/error.h"
#include "anvil/workload.h"
#include "anvil/plan.h"
#include "anvil/sim.h"
#include "anvil/planner.h"
#include "anvil/experiment.h"
#include "anvil/run.h"
#include "anvil/trace.h"
#include "anvil/replay.h"
#include "anvil/catalog.h"
#include "anvil/check.h"
#include "anvil/describe.h"
#include "anvil/plan_file.h"
#include "anvil/table2.h"
#include "anvil/results.h"
#include "anvil/validate.h"
#include "anvil/profile.h"
#include "anvil/exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The project's version, "MAJOR.MINOR.PATCH" (CMakeLists.txt, project(VERSION)). */
const char *anvil_version(void);
/* The git commit the library was built from ("-dirty" when the tree had changes). */
const char *anvil_git_commit(void);
/* Registers the schedulers that live above the scheduler registry (`auto`), once per
 * process; every call that looks a scheduler up does it too. A program calls it first to
 * fail early; it fails only when a scheduler's name is taken twice. */
int anvil_init(anvil_error_t *err);
/* The directory anvil reads its data from (gpus/, kernels/variants.json, profiles/):
 * $ANVIL_DATA_DIR, else <prefix>/share/anvil of an installed library, else the source tree
 * of the build. Borrowed. */
const char *anvil_data_dir(void);
/* Makes directory `path` and its parents, as the commands make their output directories. */
int anvil_mkdirs(const char *path, anvil_error_t *err);
/* Frees text the API returned (JSON strings). NULL is a no-op. */
void anvil_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
