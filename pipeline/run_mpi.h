/* Runs an experiment over the ranks of an MPI job (a build with -DAV_MPI=ON, started by
 * mpirun): rank r runs the rows with index % ranks == r (within the run's own --shard),
 * and rank 0 gathers every row, in row order, so its results are byte-identical to one
 * process. Without MPI, or outside mpirun, these are plain calls of pipeline/run.h. */
#ifndef AV_PIPELINE_RUN_MPI_H
#define AV_PIPELINE_RUN_MPI_H

#include "pipeline/run.h"

/* Returned by av_run_mpi_experiment on ranks other than 0: they computed and sent their
 * rows; rank 0 writes the results. */
#define AV_RUN_MPI_NOT_ROOT (-100)

/* 1 on rank 0 (and whenever MPI is not in use). Starts MPI on first use under mpirun. */
int av_run_mpi_is_root(void);
/* Ranks of the job (1 without MPI). */
int av_run_mpi_ranks(void);
/* av_run_experiment spread over the ranks (see above). On rank 0 *out holds every row of
 * o's shard; the journal (rank 0's) receives rank 0's rows as they finish. A run-level
 * failure on any rank fails the run on every rank. */
int av_run_mpi_experiment(const av_experiment_t *e, const av_run_opts_t *o, av_results_t *out,
                          av_error_t *err);
/* 1 when rc is AV_OK on every rank (a collective call: every rank must make it); 1 without
 * MPI when rc is AV_OK. Lets the ranks agree that the checks before a run passed. */
int av_run_mpi_all_ok(int rc);
/* Ends MPI when it was started; returns rank 0's exit status on every rank. */
int av_run_mpi_finish(int status);

#endif
