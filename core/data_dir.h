/* Where av_data_dir() (core/gpu.h) looks when ANVIL_DATA_DIR is not set: beside the binary
 * that holds the library (core/data_dir.c), then a default compiled into the binary
 * (core/data_dir_default.c). Internal to core. */
#ifndef AV_CORE_DATA_DIR_H
#define AV_CORE_DATA_DIR_H

/* <prefix>/share/anvil beside the binary's lib/ or bin/ directory, or NULL. */
const char *av__data_dir_installed(void);

/* The source tree for the build tree's programs and libraries; in the installed static
 * library, the data directory of the prefix it was installed to (cmake/library.cmake
 * compiles this object again at install time). */
const char *av__data_dir_default(void);

#endif
