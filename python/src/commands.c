/* The commands of the public C API for Python: trace, replay, merge and offline validate,
 * each row a dict appended to a list by the call's row callback (which runs with the GIL
 * held: the rows become Python objects as they come). */
#include <math.h>

#include "ext.h"

/* The state every row callback shares: the list, and whether building a row failed (the
 * Python error is then set and the call stops). */
typedef struct rows {
  PyObject *list;
  int failed;
} rows_t;

/* Appends d (a new reference, NULL on failure) to r's list; non-zero stops the call. */
static int append(rows_t *r, PyObject *d) {
  if (!d || PyList_Append(r->list, d) < 0) r->failed = 1;
  Py_XDECREF(d);
  return r->failed;
}

/* The call's result: NULL with the Python error when a row failed, else the anvil error
 * raised, else `ok` (stolen). */
static PyObject *finish(int rc, const rows_t *r, const anvil_error_t *err, PyObject *ok) {
  if (r->failed || PyErr_Occurred()) {
    Py_XDECREF(ok);
    return NULL;
  }
  if (rc) {
    Py_XDECREF(ok);
    return anvil_py_raise(err);
  }
  return ok;
}

static int trace_row(const anvil_trace_row_t *x, void *user) {
  return append(user, Py_BuildValue(
                          "{s:i,s:i,s:i,s:i,s:s,s:d,s:d,s:d}", "step", x->step, "requests",
                          x->requests, "nodes", x->nodes, "items", x->items, "plan",
                          x->reused ? "reused" : "planned", "predicted_us", x->predicted_us,
                          "hbm_bytes", x->hbm_bytes, "bubble_frac", x->bubble_frac));
}

static PyObject *py_trace(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *path, *sched, *cost, *gpu, *sim;
  PyObject *sp, *cp;
  int hq, hkv, no_limits;
  if (!PyArg_ParseTuple(args, "ssOsOssiip", &path, &sched, &sp, &cost, &cp, &gpu, &sim, &hq,
                        &hkv, &no_limits))
    return NULL;
  anvil_trace_options_t o;
  anvil_trace_options_default(&o);
  o.path = path;
  o.scheduler = sched;
  o.cost_model = cost;
  o.gpu = gpu;
  o.sim = sim;
  o.heads.q_heads = hq;
  o.heads.kv_heads = hkv;
  o.no_limits = no_limits;
  const char **spv = NULL, **cpv = NULL;
  if (anvil_py_strings(sp, &spv, &o.n_scheduler_params) ||
      anvil_py_strings(cp, &cpv, &o.n_cost_params)) {
    PyMem_Free(spv);
    return NULL;
  }
  o.scheduler_params = spv;
  o.cost_params = cpv;
  rows_t r = {PyList_New(0), 0};
  if (!r.list) return NULL;
  anvil_error_t err;
  int rc = anvil_trace(&o, trace_row, &r, NULL, &err);
  PyMem_Free(spv);
  PyMem_Free(cpv);
  return finish(rc, &r, &err, r.list);
}

typedef struct replay_py {
  rows_t rows;
  PyObject *report;
} replay_py_t;

static void replay_report(const anvil_replay_report_t *x, void *user) {
  replay_py_t *p = user;
  PyObject *launches = PyList_New(0);
  for (int32_t i = 0; launches && i < x->n_launches; i++) {
    const anvil_replay_launch_t *l = &x->launches[i];
    PyObject *d = Py_BuildValue("{s:i,s:i,s:d,s:d,s:d}", "ctas", l->ctas, "ctas_per_sm",
                                l->ctas_per_sm, "waves", l->waves, "start_us", l->start_us,
                                "end_us", l->end_us);
    if (!d || PyList_Append(launches, d) < 0) Py_CLEAR(launches);
    Py_XDECREF(d);
  }
  p->report = launches ? Py_BuildValue(
      "{s:i,s:i,s:i,s:i,s:i,s:s,s:N,s:d,s:d,s:d,s:d,s:d}", "plan_items", x->plan_items,
      "plan_launches", x->plan_launches, "kv_heads", x->kv_heads, "cta_records",
      x->cta_records, "merge_records", x->merge_records, "trace_gpu", x->trace_gpu, "launches",
      launches, "sm_busy_frac", x->sm_busy_frac, "bubble_frac", x->bubble_frac, "measured_us",
      x->measured_us, "replayed_us", x->replayed_us, "rel_err", x->rel_err) : NULL;
  if (!p->report) p->rows.failed = 1;
}

static int replay_row(const anvil_replay_row_t *x, void *user) {
  replay_py_t *p = user;
  return append(&p->rows, Py_BuildValue(
      "{s:i,s:i,s:i,s:i,s:i,s:d,s:d,s:d,s:d,s:d}", "launch", x->launch, "m_rows", x->m_rows,
      "n_tokens", x->n_tokens, "warps", x->warps, "ctas", x->ctas, "predicted_median_us",
      x->pred_median_us, "measured_median_us", x->meas_median_us, "ratio_median",
      x->ratio_median, "predicted_p90_us", x->pred_p90_us, "measured_p90_us", x->meas_p90_us));
}

static PyObject *py_replay(PyObject *mod, PyObject *args) {
  (void)mod;
  anvil_replay_options_t o = {.on_report = replay_report};
  if (!PyArg_ParseTuple(args, "sssz", &o.plan, &o.trace, &o.gpu, &o.cost_model)) return NULL;
  replay_py_t p = {{PyList_New(0), 0}, NULL};
  if (!p.rows.list) return NULL;
  anvil_replay_summary_t s;
  anvil_error_t err;
  int rc = anvil_replay(&o, replay_row, &p, &s, &err);
  PyObject *out = rc || p.rows.failed ? NULL : Py_BuildValue(
      "{s:O,s:O,s:O,s:N,s:d}", "report", p.report ? p.report : Py_None, "rows", p.rows.list,
      "compared", s.compared ? Py_True : Py_False, "not_compared",
      s.compared ? Py_NewRef(Py_None) : PyUnicode_FromString(s.not_compared), "predicted_us",
      s.compared ? s.predicted_us : NAN);
  Py_DECREF(p.rows.list);
  Py_XDECREF(p.report);
  if (rc) return finish(rc, &p.rows, &err, out);
  return out;
}

static int result_row(const anvil_result_row_t *x, void *user) {
  return append(user, Py_BuildValue(
      "{s:L,s:s,s:s,s:s,s:i,s:i,s:s,s:s,s:i,s:d,s:d,s:d,s:d,s:d}", "index",
      (long long)x->index, "gpu", x->gpu, "batch", x->batch, "scheduler", x->scheduler,
      "q_heads", x->q_heads, "kv_heads", x->kv_heads, "status",
      x->status ? "failed" : "ok", "error", x->error, "items", x->items, "unique_kv_bytes",
      x->unique_kv_bytes, "query_centric_kv_bytes", x->query_centric_kv_bytes,
      "sharing_ratio", x->sharing_ratio, "floor_us", x->floor_us, "predicted_us",
      x->predicted_us));
}

static PyObject *py_merge(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *dirs;
  anvil_merge_options_t o = {0};
  if (!PyArg_ParseTuple(args, "Osz", &dirs, &o.out, &o.experiment)) return NULL;
  const char **dv = NULL;
  if (anvil_py_strings(dirs, &dv, &o.n_dirs)) return NULL;
  o.dirs = dv;
  rows_t r = {PyList_New(0), 0};
  anvil_error_t err;
  int rc = r.list ? anvil_merge(&o, result_row, &r, &err) : 0;
  PyMem_Free(dv);
  return r.list ? finish(rc, &r, &err, r.list) : NULL;
}

static int validate_row(const anvil_validate_row_t *x, void *user) {
  return append(user, Py_BuildValue(
      "{s:s,s:s,s:i,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:O,s:i,s:s,s:z}", "batch", x->batch,
      "scheduler", x->scheduler, "q_heads", x->q_heads, "kv_heads", x->kv_heads, "floor_us",
      x->floor_us, "predicted_us", x->predicted_us, "measured_us", x->measured_us,
      "measured_min_us", x->measured_min_us, "measured_max_us", x->measured_max_us,
      "replayed_us", x->replayed_us, "max_rel_err", x->max_rel_err, "deterministic",
      x->deterministic ? Py_True : Py_False, "ctas", x->ctas, "params", x->params, "same_as",
      x->same_as));
}

static PyObject *py_validate_offline(PyObject *mod, PyObject *args) {
  (void)mod;
  anvil_validate_options_t o = {0};
  if (!PyArg_ParseTuple(args, "szzzp", &o.offline, &o.experiment, &o.out_dir, &o.spec,
                        &o.no_calibration))
    return NULL;
  o.command = "anvil.validate_offline";
  rows_t r = {PyList_New(0), 0};
  if (!r.list) return NULL;
  anvil_error_t err;
  int rc = anvil_validate(&o, validate_row, &r, &err);
  return finish(rc, &r, &err, r.list);
}

PyMethodDef anvil_py_command_functions[] = {
    {"trace", py_trace, METH_VARARGS, NULL},
    {"replay", py_replay, METH_VARARGS, NULL},
    {"merge", py_merge, METH_VARARGS, NULL},
    {"validate_offline", py_validate_offline, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};
