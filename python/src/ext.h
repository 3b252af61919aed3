/* The anvil._anvil extension: CPython types over the public C API (include/anvil/), no
 * second implementation. module.c holds the module, errors, workloads and targets; plan.c
 * plans, planners, simulation, experiments and the GPU executor. */
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

typedef struct {
  PyObject_HEAD
  anvil_planner_t *pl;
  PyObject *target;        /* keeps the target alive */
} PlannerObject;

/* A plan it owns, or the current plan of a planner (then `own` is NULL). */
typedef struct {
  PyObject_HEAD
  anvil_plan_t *own;
  PyObject *planner;
} PlanObject;

extern PyTypeObject Workload_Type, Target_Type, Plan_Type, Planner_Type;
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
PyObject *anvil_py_workload_new(anvil_workload_t *w);

int anvil_py_plan_types(PyObject *m);
extern PyMethodDef anvil_py_plan_functions[];

#endif
