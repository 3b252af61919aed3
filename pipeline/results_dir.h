/* A run's output directory as one unit. Everything a run writes (journal.jsonl as rows
 * finish, then results.json, results.csv and a timeline kept there) goes into a staging
 * directory beside the target, DIR.partial, which then replaces DIR in one rename
 * (renameat2 RENAME_EXCHANGE). A failure at any point leaves the previous DIR untouched and
 * removes the staging directory; a killed run leaves DIR untouched and DIR.partial holding
 * its journal, which `--resume` continues. Files in DIR that a run does not write (say a
 * validation/ folder) are carried over into the new DIR. */
#ifndef AV_PIPELINE_RESULTS_DIR_H
#define AV_PIPELINE_RESULTS_DIR_H

#include <stddef.h>

#include "core/error.h"

typedef struct av_outdir {
  char dir[1024];          /* the target */
  char stage[1100];        /* DIR.partial */
  char extra[128];         /* one more file name the run writes into DIR ("" when none) */
  char cmd[32];            /* the command, for messages ("run") */
  int resumed;             /* the staging directory is a killed run's, kept for --resume */
} av_outdir_t;

/* Refuses `dir` as the results directory of option `opt` of command `cmd` when it is a file
 * or a symbolic link (the swap would replace the link itself, not the directory it names:
 * the user is asked to name that directory). Nothing there, or a directory, passes. */
int av_outdir_check(const char *cmd, const char *dir, const char *opt, av_error_t *err);

/* Checks `dir` as the value of option `opt` of command `cmd` (messages name them) before
 * any work: not empty, not a file or a symbolic link (av_outdir_check), its parent
 * creatable and writable. Then creates the staging directory
 * (with `resume`, keeps an existing one, or starts it from DIR's journal when the last run
 * finished). `extra` is the name of one more file the run writes into the directory (a
 * timeline), or NULL. */
int av_outdir_begin(av_outdir_t *od, const char *cmd, const char *dir, const char *opt,
                    const char *extra, int resume, av_error_t *err);
/* out = the staging directory's path of file `name`. */
void av_outdir_path(const av_outdir_t *od, const char *name, char *out, size_t size);
/* Puts the staging directory in DIR's place and removes the previous results. */
int av_outdir_commit(av_outdir_t *od, av_error_t *err);
/* Removes the staging directory (a run that failed). */
void av_outdir_abandon(av_outdir_t *od);

/* Checks a file path given as option `opt` of command `cmd` can be written before any
 * work: nothing or a regular file is there (not a directory, a device, a FIFO, a socket or
 * a symbolic link) and its directory accepts a new file (a probe temporary is made and
 * removed); the message names the option and the path. */
int av_path_check_writable(const char *cmd, const char *path, const char *opt,
                           av_error_t *err);
/* Checks a directory given as option `opt` of command `cmd` is not empty, not a file, and
 * can be made or written: the nearest part of it that exists is a writable directory. */
int av_dir_check_writable(const char *cmd, const char *dir, const char *opt, av_error_t *err);

#endif
