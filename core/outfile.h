/* Output files replaced whole: every file anvil writes goes to a temporary beside the target,
 * created exclusively under an unpredictable name, then renamed over the target. Only a
 * regular file (or nothing) is ever replaced: a device, a FIFO, a socket, a directory or a
 * symbolic link at the target is refused, so `-o /dev/null` cannot turn the node into a
 * file and a link given as the output is not replaced by one. */
#ifndef AV_OUTFILE_H
#define AV_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

/* What is at `path` when it is something anvil must not replace ("a directory", "a
 * symbolic link", "a FIFO", "a character device", "a block device", "a socket"); NULL when
 * nothing is there or a regular file is (lstat: a link is not followed). */
const char *av_outfile_refusal(const char *path);

/* An output being written: `f` writes into the temporary `tmp`, which becomes `path`. */
typedef struct av_outfile {
  FILE *f;
  char path[1024];
  char tmp[1100];
} av_outfile_t;

/* Checks the target (av_outfile_refusal) and creates the temporary in its directory with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask, named PATH.tmp-<16 random hex
 * digits>. On failure AV_ERR_IO names the path and nothing is left behind. */
int av_outfile_open(av_outfile_t *o, const char *path, av_error_t *err);

/* Flushes (and with `sync`, fsyncs) the temporary, checks the target again and renames the
 * temporary over it. A write that failed on `f` fails the commit with its cause. On any
 * failure the temporary is removed and the target is left as it was. */
int av_outfile_commit(av_outfile_t *o, int sync, av_error_t *err);

/* A whole buffer written to `path` this way (open, write, commit). */
int av_outfile_write(const char *path, const char *data, size_t len, int sync,
                     av_error_t *err);

/* Removes the temporary of an output that will not be committed. */
void av_outfile_discard(av_outfile_t *o);
/* A caller's own write on `f` failed: removes the temporary and returns AV_ERR_IO naming the
 * path and errno's cause (EIO when errno is 0). */
int av_outfile_fail(av_outfile_t *o, av_error_t *err);

/* Opens a file committed this way for appending (a journal), never through a symbolic link;
 * NULL with errno set when it cannot. */
FILE *av_outfile_append(const char *path);

#endif
