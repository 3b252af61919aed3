/* anvil._anvil: plans, planners, simulation, experiments and the GPU executor (see ext.h). */
#include "ext.h"

/* --- Plan ------------------------------------------------------------------------------ */
/* Takes the planner's lock. The GIL is released only to wait, so a holder that waits for the
 * GIL (after a call made without it) never waits on a thread that waits for the lock. */
static void planner_lock(PlannerObject *pl) {
  if (PyThread_acquire_lock(pl->lock, NOWAIT_LOCK)) return;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(pl->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
}

static void planner_unlock(PlannerObject *pl) { PyThread_release_lock(pl->lock); }

/* The plan self reads: its own, or its planner's current one with the planner locked until
 * anvil_py_plan_leave (a step frees or patches that plan). NULL with RuntimeError before a step. */
const anvil_plan_t *anvil_py_plan_enter(PlanObject *self) {
  if (self->own) return self->own;
  PlannerObject *pl = (PlannerObject *)self->planner;
  planner_lock(pl);
  const anvil_plan_t *p = anvil_planner_plan(pl->pl);
  if (!p) {
    planner_unlock(pl);
    PyErr_SetString(PyExc_RuntimeError, "the planner has not planned a step yet");
  }
  return p;
}

void anvil_py_plan_leave(PlanObject *self) {
  if (!self->own) planner_unlock((PlannerObject *)self->planner);
}

static PyObject *plan_new(anvil_plan_t *own, PyObject *planner) {
  PlanObject *o = PyObject_New(PlanObject, &Plan_Type);
  if (!o) {
    anvil_plan_destroy(own);
    return NULL;
  }
  o->own = own;
  o->planner = planner;
  Py_XINCREF(planner);
  return (PyObject *)o;
}

static void Plan_dealloc(PlanObject *self) {
  anvil_plan_destroy(self->own);
  Py_XDECREF(self->planner);
  PyObject_Free(self);
}

static PyObject *Plan_check(PlanObject *self, PyObject *unused) {
  (void)unused;
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  anvil_error_t err;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = anvil_plan_check(p, &err);
  Py_END_ALLOW_THREADS
  anvil_py_plan_leave(self);
  if (rc) return anvil_py_raise(&err);
  Py_RETURN_NONE;
}

static PyObject *Plan_reference(PlanObject *self, PyObject *args, PyObject *kw) {
  static char *kws[] = {"seed", "dim", "max_requests", NULL};
  unsigned long long seed = 1;
  int dim = 0, maxr = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|Kii", kws, &seed, &dim, &maxr)) return NULL;
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  double rel = 0;
  anvil_error_t err;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = anvil_plan_reference(p, seed, dim, maxr, &rel, &err);
  Py_END_ALLOW_THREADS
  anvil_py_plan_leave(self);
  if (rc) return anvil_py_raise(&err);
  return PyFloat_FromDouble(rel);
}

static PyObject *Plan_to_json(PlanObject *self, PyObject *unused) {
  (void)unused;
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  char *text = anvil_plan_to_json(p);
  anvil_py_plan_leave(self);
  if (!text) return PyErr_NoMemory();
  PyObject *s = PyUnicode_FromString(text);
  anvil_free(text);
  return s;
}

/* The plan's tables as bytes, each an array of the public structs (anvil/plan.h): launches,
 * items, item_queries, segments, merge_offsets, merge_slots. Bytes objects run no Python
 * code as they are made, so the planner's lock may be held meanwhile. */
static int plan_tables(const anvil_plan_t *p, PyObject *out[6]) {
  anvil_plan_counts_t n;
  anvil_plan_counts(p, &n);
  const Py_ssize_t sizes[6] = {
      (Py_ssize_t)n.launches * (Py_ssize_t)sizeof(anvil_launch_t),
      (Py_ssize_t)n.items * (Py_ssize_t)sizeof(anvil_item_t), (Py_ssize_t)n.item_queries * 4,
      (Py_ssize_t)n.segments * (Py_ssize_t)sizeof(anvil_segment_t),
      (Py_ssize_t)(n.requests + 1) * 4, (Py_ssize_t)n.slots * 4};
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= (out[i] = PyBytes_FromStringAndSize(NULL, sizes[i])) != NULL;
  if (!ok) {
    for (int i = 0; i < 6; i++) Py_CLEAR(out[i]);
    return -1;
  }
  anvil_plan_launches(p, (anvil_launch_t *)PyBytes_AS_STRING(out[0]));
  anvil_plan_items(p, (anvil_item_t *)PyBytes_AS_STRING(out[1]));
  anvil_plan_item_queries(p, (int32_t *)PyBytes_AS_STRING(out[2]));
  anvil_plan_segments(p, (anvil_segment_t *)PyBytes_AS_STRING(out[3]));
  anvil_plan_merges(p, (int32_t *)PyBytes_AS_STRING(out[4]), (int32_t *)PyBytes_AS_STRING(out[5]));
  return 0;
}

/* The dict is made after the lock is let go: a dict may start the garbage collector, whose
 * finalizers may call this planner again. */
static PyObject *Plan_tables(PlanObject *self, PyObject *unused) {
  (void)unused;
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  PyObject *t[6];
  int rc = plan_tables(p, t);
  anvil_py_plan_leave(self);
  if (rc) return NULL;
  return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N}", "launches", t[0], "items", t[1],
                       "item_queries", t[2], "segments", t[3], "merge_offsets", t[4],
                       "merge_slots", t[5]);
}

static PyObject *Plan_get_workload(PlanObject *self, void *c) {
  (void)c;
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  /* A reference of its own: a plan file's batch outlives the plan handle. */
  char *text = anvil_workload_to_json(anvil_plan_workload(p));
  anvil_py_plan_leave(self);
  if (!text) return PyErr_NoMemory();
  anvil_workload_t *w = NULL;
  anvil_error_t err;
  int rc = anvil_workload_from_json(text, "plan", NULL, &w, &err);
  anvil_free(text);
  return rc ? anvil_py_raise(&err) : anvil_py_workload_new(w);
}

/* One of the plan's names (a str runs no Python code as it is made). */
static PyObject *plan_name(PlanObject *self, const char *(*name)(const anvil_plan_t *)) {
  const anvil_plan_t *p = anvil_py_plan_enter(self);
  if (!p) return NULL;
  PyObject *s = PyUnicode_FromString(name(p));
  anvil_py_plan_leave(self);
  return s;
}

static PyObject *Plan_get_scheduler(PlanObject *self, void *c) {
  (void)c;
  return plan_name(self, anvil_plan_scheduler);
}

static PyObject *Plan_get_params(PlanObject *self, void *c) {
  (void)c;
  return plan_name(self, anvil_plan_params);
}

static PyObject *Plan_get_launch(PlanObject *self, void *c) {
  (void)c;
  return plan_name(self, anvil_plan_launch);
}

static PyMethodDef Plan_methods[] = {
    {"check", (PyCFunction)Plan_check, METH_NOARGS, "prove the plan exact"},
    {"reference", (PyCFunction)(void (*)(void))Plan_reference, METH_VARARGS | METH_KEYWORDS,
     "run the plan in fp64; the largest relative error"},
    {"to_json", (PyCFunction)Plan_to_json, METH_NOARGS, "the plan file's text"},
    {"tables", (PyCFunction)Plan_tables, METH_NOARGS, "the plan's arrays as bytes"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Plan_getset[] = {
    {"workload", (getter)Plan_get_workload, NULL, "the batch (explicit form)", NULL},
    {"scheduler", (getter)Plan_get_scheduler, NULL, "scheduler name", NULL},
    {"params", (getter)Plan_get_params, NULL, "parameters as planned", NULL},
    {"launch_model", (getter)Plan_get_launch, NULL, "streams, graph or pdl", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject Plan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "anvil._anvil.Plan",
    .tp_basicsize = sizeof(PlanObject),
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A plan (anvil_plan_t), or a planner's current plan.",
    .tp_methods = Plan_methods,
    .tp_getset = Plan_getset,
};

static PyObject *py_plan(PyObject *mod, PyObject *args) {
  (void)mod;
  TargetObject *t;
  WorkloadObject *w;
  const char *sched;
  PyObject *params = Py_None;
  if (!PyArg_ParseTuple(args, "O!O!s|O", &Target_Type, &t, &Workload_Type, &w, &sched, &params))
    return NULL;
  const char **kv;
  int n;
  if (anvil_py_strings(params, &kv, &n)) return NULL;
  anvil_plan_t *p = NULL;
  anvil_error_t err;
  /* The GIL stays held: a target (its cost model cache) serves one call at a time. */
  int rc = anvil_plan(t->t, w->w, sched, kv, n, &p, &err);
  PyMem_Free(kv);
  return rc ? anvil_py_raise(&err) : plan_new(p, NULL);
}

static PyObject *py_plan_json(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *text, *source = NULL;
  if (!PyArg_ParseTuple(args, "s|z", &text, &source)) return NULL;
  anvil_plan_t *p = NULL;
  anvil_error_t err;
  return anvil_plan_from_json(text, source, &p, &err) ? anvil_py_raise(&err) : plan_new(p, NULL);
}

static PyObject *py_plan_load(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *path;
  if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
  anvil_plan_t *p = NULL;
  anvil_error_t err;
  return anvil_plan_load(path, &p, &err) ? anvil_py_raise(&err) : plan_new(p, NULL);
}

/* --- Planner --------------------------------------------------------------------------- */
static PyObject *Planner_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kws[] = {"target", "scheduler", "params", "block_size", "heads", NULL};
  TargetObject *t;
  const char *sched;
  PyObject *params = Py_None, *heads_o = Py_None;
  int bs = 16;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!s|OiO", kws, &Target_Type, &t, &sched, &params,
                                   &bs, &heads_o))
    return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  const char **kv;
  int n;
  if (anvil_py_heads(heads_o, &hb, &h) || anvil_py_strings(params, &kv, &n)) return NULL;
  anvil_planner_t *pl = NULL;
  anvil_error_t err;
  int rc = anvil_planner_create(t->t, sched, kv, n, bs, h, &pl, &err);
  PyMem_Free(kv);
  if (rc) return anvil_py_raise(&err);
  PyThread_type_lock lock = PyThread_allocate_lock();
  PlannerObject *o = lock ? (PlannerObject *)type->tp_alloc(type, 0) : NULL;
  if (!o) {
    if (lock) PyThread_free_lock(lock);
    anvil_planner_destroy(pl);
    return lock ? NULL : PyErr_NoMemory();
  }
  o->pl = pl;
  o->lock = lock;
  o->target = (PyObject *)t;
  Py_INCREF(t);
  return (PyObject *)o;
}

static void Planner_dealloc(PlannerObject *self) {
  anvil_planner_destroy(self->pl);
  if (self->lock) PyThread_free_lock(self->lock);
  Py_XDECREF(self->target);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* step(block_table, kv_lens) -> True when the previous plan was reused. The ids are checked
 * under the lock with the GIL held, so no thread writes them between the check and the step;
 * the GIL stays held as well: the planner plans with its target, which other calls share. */
static PyObject *Planner_step(PlannerObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "step(block_table, kv_lens) takes two arrays");
    return NULL;
  }
  Py_buffer tv, kv;
  if (anvil_py_block_table(args[0], args[1], &tv, &kv)) return NULL;
  int reused = 0, rc = 0;
  anvil_error_t err;
  const int32_t *t = tv.buf, *k = kv.buf;
  /* negative ids among the blocks a request uses are the library's to refuse: it reads only
   * the blocks that changed since the last step, and a scan of the whole table here would
   * cost the step its speed */
  planner_lock(self);
  rc = anvil_planner_step(self->pl, t, tv.shape[1], k, (int32_t)tv.shape[0], &reused, &err);
  planner_unlock(self);
  PyBuffer_Release(&tv);
  PyBuffer_Release(&kv);
  if (rc) return anvil_py_raise(&err);
  return PyBool_FromLong(reused);
}

static PyObject *Planner_get_plan(PlannerObject *self, void *c) {
  (void)c;
  planner_lock(self);
  int planned = anvil_planner_plan(self->pl) != NULL;
  planner_unlock(self);
  if (!planned) Py_RETURN_NONE;
  return plan_new(NULL, (PyObject *)self);
}

static PyObject *Planner_get_counts(PlannerObject *self, void *c) {
  (void)c;
  int64_t planned, reused;
  planner_lock(self);
  anvil_planner_counts(self->pl, &planned, &reused);
  planner_unlock(self);
  return Py_BuildValue("(LL)", (long long)planned, (long long)reused);
}

static PyObject *Planner_get_stats(PlannerObject *self, void *c) {
  (void)c;
  anvil_planner_stats_t st;
  planner_lock(self);
  anvil_planner_stats(self->pl, &st);
  planner_unlock(self);
  static const char *const kinds[] = {"planned", "replanned", "patched", "reused"};
  return Py_BuildValue("{sLsLsLsLsssd}", "planned", (long long)st.planned, "replanned",
                       (long long)st.replanned, "patched", (long long)st.patched, "reused",
                       (long long)st.reused, "last", kinds[st.last], "estimate_us",
                       st.last_estimate_us);
}

static PyObject *Planner_set_drift(PlannerObject *self, PyObject *arg) {
  double bound = PyFloat_AsDouble(arg);
  if (bound == -1 && PyErr_Occurred()) return NULL;
  anvil_error_t err;
  planner_lock(self);
  int rc = anvil_planner_set_drift(self->pl, bound, &err);
  planner_unlock(self);
  if (rc) return anvil_py_raise(&err);
  Py_RETURN_NONE;
}

static PyMethodDef Planner_methods[] = {
    {"set_drift", (PyCFunction)Planner_set_drift, METH_O,
     "set_drift(bound): replan when a patched plan drifts past 1 + bound of a fresh one"},
    {"step", (PyCFunction)(void (*)(void))Planner_step, METH_FASTCALL,
     "step(block_table, kv_lens) -> reused: plan one decode step"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Planner_getset[] = {
    {"plan", (getter)Planner_get_plan, NULL, "the latest step's plan (changes with steps)", NULL},
    {"counts", (getter)Planner_get_counts, NULL, "(steps planned, steps reused)", NULL},
    {"stats", (getter)Planner_get_stats, NULL,
     "steps planned, replanned, patched and reused; the latest step's kind and estimate", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject Planner_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "anvil._anvil.Planner",
    .tp_basicsize = sizeof(PlannerObject),
    .tp_dealloc = (destructor)Planner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Planner(target, scheduler, params=None, block_size=16, heads=None)",
    .tp_new = Planner_new,
    .tp_methods = Planner_methods,
    .tp_getset = Planner_getset,
};

/* --- simulate, experiments, executor ---------------------------------------------------- */
static PyObject *py_simulate(PyObject *mod, PyObject *args) {
  (void)mod;
  TargetObject *t;
  PlanObject *po;
  const char *model = NULL, *chrome = NULL;
  int want_tl = 0;
  if (!PyArg_ParseTuple(args, "O!O!|zpz", &Target_Type, &t, &Plan_Type, &po, &model, &want_tl,
                        &chrome))
    return NULL;
  const anvil_plan_t *p = anvil_py_plan_enter(po);
  if (!p) return NULL;
  anvil_sim_result_t r;
  anvil_timeline_t *tl = NULL;
  anvil_error_t err;
  /* The GIL stays held: a target (its cost model cache) serves one call at a time. */
  int rc = anvil_simulate(t->t, p, model, &r, want_tl || chrome ? &tl : NULL, &err);
  if (!rc && chrome) rc = anvil_timeline_write(tl, p, chrome, &err);
  anvil_py_plan_leave(po);
  if (rc) {
    anvil_timeline_destroy(tl);
    return anvil_py_raise(&err);
  }
  PyObject *events = Py_None;
  Py_INCREF(events);
  if (tl && want_tl) {
    Py_DECREF(events);
    events = PyBytes_FromStringAndSize((const char *)anvil_timeline_events(tl),
                                       (Py_ssize_t)anvil_timeline_size(tl) *
                                           (Py_ssize_t)sizeof(anvil_cta_event_t));
  }
  anvil_timeline_destroy(tl);
  if (!events) return NULL;
  return Py_BuildValue("({s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d}N)", "predicted_us",
                       r.predicted_us, "partial_us", r.partial_us, "merge_us", r.merge_us,
                       "floor_us", r.floor_us, "floor_mem_us", r.floor_mem_us,
                       "floor_compute_us", r.floor_compute_us, "hbm_bytes", r.hbm_bytes,
                       "l2_bytes", r.l2_bytes, "achieved_bw_GBps", r.achieved_bw_GBps,
                       "bubble_frac", r.bubble_frac, events);
}

static PyObject *py_run_experiment(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *path;
  if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
  char *rows = NULL;
  anvil_error_t err;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = anvil_run_experiment(path, &rows, &err);
  Py_END_ALLOW_THREADS
  /* (rows text or None, None or the error of the first failed row) */
  PyObject *s = rows ? PyUnicode_FromString(rows) : Py_NewRef(Py_None);
  anvil_free(rows);
  if (!s) return NULL;
  if (!rc) return Py_BuildValue("(NO)", s, Py_None);
  if (s == Py_None) {
    Py_DECREF(s);
    return anvil_py_raise(&err);
  }
  anvil_py_raise(&err);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return Py_BuildValue("(NN)", s, value);
}

static PyObject *py_exec(PyObject *mod, PyObject *args) {
  (void)mod;
  PlanObject *po;
  unsigned long long seed = 1;
  int repeats = 20;
  if (!PyArg_ParseTuple(args, "O!|Ki", &Plan_Type, &po, &seed, &repeats)) return NULL;
  const anvil_plan_t *p = anvil_py_plan_enter(po);
  if (!p) return NULL;
  anvil_exec_result_t r;
  anvil_error_t err;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = anvil_exec(p, seed, repeats, &r, &err);
  Py_END_ALLOW_THREADS
  anvil_py_plan_leave(po);
  if (rc) return anvil_py_raise(&err);
  return Py_BuildValue("{s:d,s:d,s:d,s:O,s:d,s:O}", "median_us", r.median_us, "min_us",
                       r.min_us, "max_us", r.max_us, "verified", r.verified ? Py_True : Py_False,
                       "max_rel_err", r.max_rel_err, "deterministic",
                       r.deterministic ? Py_True : Py_False);
}

PyMethodDef anvil_py_plan_functions[] = {
    {"plan", py_plan, METH_VARARGS, NULL},
    {"plan_from_json", py_plan_json, METH_VARARGS, NULL},
    {"plan_load", py_plan_load, METH_VARARGS, NULL},
    {"simulate", py_simulate, METH_VARARGS, NULL},
    {"run_experiment", py_run_experiment, METH_VARARGS, NULL},
    {"exec_seeded", py_exec, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

int anvil_py_plan_types(PyObject *m) {
  if (PyType_Ready(&Plan_Type) < 0 || PyType_Ready(&Planner_Type) < 0 ||
      PyType_Ready(&DevicePlan_Type) < 0)
    return -1;
  if (PyModule_AddObjectRef(m, "Plan", (PyObject *)&Plan_Type) < 0 ||
      PyModule_AddObjectRef(m, "Planner", (PyObject *)&Planner_Type) < 0 ||
      PyModule_AddObjectRef(m, "DevicePlan", (PyObject *)&DevicePlan_Type) < 0)
    return -1;
  return 0;
}
