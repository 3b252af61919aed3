/* The data directory a binary falls back on when no share/anvil lies beside it
 * (core/data_dir.c). A program linked statically to the installed libanvil.a has none beside
 * it, so `cmake --install` compiles this file again with that prefix's data directory and
 * puts it into the installed archive in place of the build's (cmake/install_data_dir.cmake);
 * the build tree's programs keep the source tree. */
#include "core/data_dir.h"

#ifndef AV_DATA_DIR
#define AV_DATA_DIR "."
#endif

const char *av__data_dir_default(void) { return AV_DATA_DIR; }
