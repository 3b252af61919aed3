/* MPI distribution of an experiment's rows (pipeline/run_mpi.h). Rows travel as their
 * fixed-size structs (every rank is the same binary); rank 0 puts each in its slot by row
 * number. */
#include "pipeline/run_mpi.h"

#include <stdlib.h>
#include <string.h>

#ifdef AV_MPI
#include <mpi.h>

static int g_on = -1;    /* -1 unknown, 0 not under mpirun, 1 started */
static int g_rank, g_size = 1;

/* Only under a launcher: a plain `anvil run` of an MPI build stays a single process. */
static void start(void) {
  if (g_on >= 0) return;
  g_on = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
  if (!g_on) return;
  int provided = 0;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

int av_run_mpi_is_root(void) {
  start();
  return g_rank == 0;
}

int av_run_mpi_ranks(void) {
  start();
  return g_size;
}

/* Rank 0 receives every rank's rows and files them by row number. */
static int gather(const av_experiment_t *e, const av_run_opts_t *o, av_results_t *mine,
                  av_results_t *out, av_error_t *err) {
  const int sz = (int)sizeof(av_result_row_t);
  int n = mine->n, *counts = NULL, *displs = NULL;
  av_result_row_t *all = NULL;
  int total = 0;
  if (g_rank == 0) {
    counts = calloc((size_t)g_size, sizeof *counts);
    displs = calloc((size_t)g_size, sizeof *displs);
  }
  MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (int r = 0; r < g_size; r++) {
      displs[r] = total * sz;
      total += counts[r];
      counts[r] *= sz;
    }
    all = malloc(sizeof *all * (size_t)(total > 0 ? total : 1));
  }
  MPI_Gatherv(mine->rows, n * sz, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  free(counts);
  free(displs);
  if (g_rank != 0) return AV_OK;
  out->rows = calloc((size_t)(total > 0 ? total : 1), sizeof *out->rows);
  if (!out->rows || !all) {
    free(all);
    return av_error_set(err, AV_ERR_NOMEM, e->path, NULL, "out of memory gathering rows");
  }
  out->n = out->cap = total;
  for (int i = 0; i < total; i++) out->rows[av_run_row_slot(e, o, all[i].index)] = all[i];
  free(all);
  return AV_OK;
}

int av_run_mpi_experiment(const av_experiment_t *e, const av_run_opts_t *o, av_results_t *out,
                          av_error_t *err) {
  start();
  if (g_size <= 1) return av_run_experiment(e, o, out, err);
  av_run_opts_t mine = *o;
  const int n = o->shard_count > 1 ? o->shard_count : 1, i = o->shard_count > 1 ? o->shard_index : 0;
  mine.shard_count = n * g_size;
  mine.shard_index = i + n * g_rank;
  av_results_t part = {0};
  int rc = av_run_experiment(e, &mine, &part, err), any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && !rc)
    rc = av_error_set(err, AV_ERR_INTERNAL, "run", NULL, "another MPI rank failed (its message "
                      "is on its stderr)");
  if (!rc) rc = gather(e, o, &part, out, err);
  av_results_free(&part);
  if (!rc && g_rank != 0) return AV_RUN_MPI_NOT_ROOT;
  return rc;
}

int av_run_mpi_all_ok(int rc) {
  start();
  if (g_on != 1) return rc == AV_OK;
  int bad = rc != AV_OK, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return !any;
}

int av_run_mpi_finish(int status) {
  if (g_on != 1) return status;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

#else

int av_run_mpi_is_root(void) { return 1; }
int av_run_mpi_ranks(void) { return 1; }
int av_run_mpi_experiment(const av_experiment_t *e, const av_run_opts_t *o, av_results_t *out,
                          av_error_t *err) {
  return av_run_experiment(e, o, out, err);
}
int av_run_mpi_all_ok(int rc) { return rc == AV_OK; }
int av_run_mpi_finish(int status) { return status; }

#endif
