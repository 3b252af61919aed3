/* The anvil._anvil extension: CPython types over the public C API (include/anvil/), no
 * second implementation. module.c holds the module, errors, workloads and targets; plan.c
 * plans, planners, simulation, experiments and the GPU executor; run.c device plans and runs
 * on the caller's CUDA tensors; commands.c the commands trace, replay, merge and offline
 * validate. */
#ifndef ANVIL_PY_EXT_H
#define ANVIL_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <anvil/anvil.h>

typedef struct {
  PyObject_HEAD
  anvil_workload_t *w;
} WorkloadObject;

typedef struct {
  PyObject_HEAD
  anvil_target_t *t;
} TargetObject;

/* A planner serves one call at a time: every method that reads or changes pl (or, through a
 * Plan view, its plan) holds `lock`, which is taken only while the GIL is released, so a
 * thread holding it may release and take back the GIL without a deadlock. */
typedef struct {
  PyObject_HEAD
  anvil_planner_t *pl;
  PyObject *target;        /* keeps the target alive */
  PyThread_type_lock lock;
} PlannerObject;

/* A plan it owns (never changed, so read without the GIL by any number of threads), or the
 * current plan of a planner (then `own` is NULL and every read holds the planner's lock). */
typedef struct {
  PyObject_HEAD
  anvil_plan_t *own;
  PyObject *planner;
} PlanObject;

extern PyTypeObject Workload_Type, Target_Type, Plan_Type, Planner_Type, DevicePlan_Type;
extern PyObject *anvil_py_error;

/* Raises anvil.Error(message) with .code and .status_class; returns NULL. */
PyObject *anvil_py_raise(const anvil_error_t *err);
/* Heads from a (q_heads, kv_heads, head_dim, dtype) tuple or None (defaults). */
int anvil_py_heads(PyObject *o, anvil_heads_t *h, const anvil_heads_t **out);
/* A list of str as a C array (borrowed from the list, which must outlive it). */
int anvil_py_strings(PyObject *list, const char ***out, int *n);
/* A contiguous buffer of `itemsize`-byte signed integers with `ndim` dimensions (1 or 2). */
int anvil_py_int_buffer(PyObject *o, Py_buffer *view, Py_ssize_t itemsize, int ndim,
                        const char *what);
/* A block table and its kv_lens as int32 buffers, one row per request. */
int anvil_py_block_table(PyObject *table, PyObject *tokens, Py_buffer *tv, Py_buffer *kv);
PyObject *anvil_py_workload_new(anvil_workload_t *w);

/* The plan a Plan object reads: its own, or its planner's current one with the planner
 * locked until anvil_py_plan_leave. NULL with RuntimeError before the planner's first step. */
const anvil_plan_t *anvil_py_plan_enter(PlanObject *self);
void anvil_py_plan_leave(PlanObject *self);

int anvil_py_plan_types(PyObject *m);
extern PyMethodDef anvil_py_plan_functions[];
/* trace, replay, merge and offline validate (commands.c). */
extern PyMethodDef anvil_py_command_functions[];

#endif
