/* anvil._anvil: the module, its exception, workloads and targets (see ext.h). */
#include <string.h>

#include "ext.h"

PyObject *anvil_py_error;

PyObject *anvil_py_raise(const anvil_error_t *err) {
  PyObject *e = PyObject_CallFunction(anvil_py_error, "s", err->message);
  if (!e) return NULL;
  PyObject *code = PyUnicode_FromString(anvil_status_name(err->code));
  PyObject *cls = PyLong_FromLong(anvil_status_class(err->code));
  if (code && cls) {
    PyObject_SetAttrString(e, "code", code);
    PyObject_SetAttrString(e, "status_class", cls);
    PyErr_SetObject(anvil_py_error, e);
  }
  Py_XDECREF(code);
  Py_XDECREF(cls);
  Py_DECREF(e);
  return NULL;
}

int anvil_py_heads(PyObject *o, anvil_heads_t *h, const anvil_heads_t **out) {
  *out = NULL;
  if (!o || o == Py_None) return 0;
  if (!PyArg_ParseTuple(o, "iiii", &h->q_heads, &h->kv_heads, &h->head_dim, &h->dtype))
    return -1;
  *out = h;
  return 0;
}

int anvil_py_strings(PyObject *list, const char ***out, int *n) {
  *out = NULL;
  *n = 0;
  if (!list || list == Py_None) return 0;
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, "expected a list of \"key=value\" strings");
    return -1;
  }
  Py_ssize_t len = PyList_GET_SIZE(list);
  const char **a = PyMem_Calloc((size_t)len + 1, sizeof *a);
  if (!a) return PyErr_NoMemory(), -1;
  for (Py_ssize_t i = 0; i < len; i++)
    if (!(a[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(list, i)))) {
      PyMem_Free(a);
      return -1;
    }
  *out = a;
  *n = (int)len;
  return 0;
}

int anvil_py_int_buffer(PyObject *o, Py_buffer *view, Py_ssize_t itemsize, int ndim,
                        const char *what) {
  if (PyObject_GetBuffer(o, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
  const char *f = view->format ? view->format : "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
  int is_int = strchr("bhilq", *f) && f[1] == '\0';
  if (view->itemsize != itemsize || !is_int || view->ndim != ndim) {
    PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous %d-D array of int%d", what,
                 ndim, (int)(8 * itemsize));
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

/* --- Workload ------------------------------------------------------------------------- */
PyObject *anvil_py_workload_new(anvil_workload_t *w) {
  WorkloadObject *o = PyObject_New(WorkloadObject, &Workload_Type);
  if (!o) {
    anvil_workload_destroy(w);
    return NULL;
  }
  o->w = w;
  return (PyObject *)o;
}

static void Workload_dealloc(WorkloadObject *self) {
  anvil_workload_destroy(self->w);
  PyObject_Free(self);
}

static PyObject *Workload_to_json(WorkloadObject *self, PyObject *unused) {
  (void)unused;
  char *text = anvil_workload_to_json(self->w);
  if (!text) return PyErr_NoMemory();
  PyObject *s = PyUnicode_FromString(text);
  anvil_free(text);
  return s;
}

static PyObject *Workload_info(WorkloadObject *self, PyObject *unused) {
  (void)unused;
  anvil_workload_info_t i;
  anvil_workload_info(self->w, &i);
  return Py_BuildValue("{s:i,s:i,s:i,s:(iiii),s:i,s:L,s:L,s:d,s:d,s:d}", "requests",
                       i.requests, "nodes", i.nodes, "depth", i.depth, "heads", i.heads.q_heads,
                       i.heads.kv_heads, i.heads.head_dim, i.heads.dtype, "block_size",
                       i.block_size, "unique_kv_tokens", (long long)i.unique_kv_tokens,
                       "query_centric_kv_tokens", (long long)i.query_centric_kv_tokens,
                       "unique_kv_bytes", i.unique_kv_bytes, "query_centric_kv_bytes",
                       i.query_centric_kv_bytes, "sharing_ratio", i.sharing_ratio);
}

/* (parents int32, kv_tokens int64, request_node int32, request_kv_tokens int64) as bytes. */
static PyObject *Workload_arrays(WorkloadObject *self, PyObject *unused) {
  (void)unused;
  anvil_workload_info_t i;
  anvil_workload_info(self->w, &i);
  PyObject *par = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)i.nodes * 4);
  PyObject *len = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)i.nodes * 8);
  PyObject *rn = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)i.requests * 4);
  PyObject *rk = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)i.requests * 8);
  if (!par || !len || !rn || !rk) goto fail;
  anvil_workload_nodes(self->w, (int32_t *)PyBytes_AS_STRING(par),
                       (int64_t *)PyBytes_AS_STRING(len));
  anvil_workload_requests(self->w, (int32_t *)PyBytes_AS_STRING(rn),
                          (int64_t *)PyBytes_AS_STRING(rk));
  return Py_BuildValue("(NNNN)", par, len, rn, rk);
fail:
  Py_XDECREF(par);
  Py_XDECREF(len);
  Py_XDECREF(rn);
  Py_XDECREF(rk);
  return NULL;
}

static PyMethodDef Workload_methods[] = {
    {"to_json", (PyCFunction)Workload_to_json, METH_NOARGS, "the explicit JSON form"},
    {"info", (PyCFunction)Workload_info, METH_NOARGS, "figures of the batch"},
    {"arrays", (PyCFunction)Workload_arrays, METH_NOARGS, "node and request arrays as bytes"},
    {NULL, NULL, 0, NULL}};

PyTypeObject Workload_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "anvil._anvil.Workload",
    .tp_basicsize = sizeof(WorkloadObject),
    .tp_dealloc = (destructor)Workload_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A decode batch (anvil_workload_t).",
    .tp_methods = Workload_methods,
};

static PyObject *finish_workload(int rc, anvil_workload_t *w, const anvil_error_t *err) {
  return rc ? anvil_py_raise(err) : anvil_py_workload_new(w);
}

int anvil_py_block_table(PyObject *table, PyObject *tokens, Py_buffer *tv, Py_buffer *kv) {
  if (anvil_py_int_buffer(table, tv, 4, 2, "block_table")) return -1;
  if (anvil_py_int_buffer(tokens, kv, 4, 1, "kv_lens")) {
    PyBuffer_Release(tv);
    return -1;
  }
  if (kv->shape[0] == tv->shape[0]) return 0;
  PyErr_Format(PyExc_ValueError, "kv_lens has %zd entries but the block table %zd rows",
               kv->shape[0], tv->shape[0]);
  PyBuffer_Release(tv);
  PyBuffer_Release(kv);
  return -1;
}

static PyObject *py_block_table(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *table, *tokens, *heads_o = Py_None;
  int block_size;
  if (!PyArg_ParseTuple(args, "OOi|O", &table, &tokens, &block_size, &heads_o)) return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  if (anvil_py_heads(heads_o, &hb, &h)) return NULL;
  Py_buffer tv, kv;
  if (anvil_py_block_table(table, tokens, &tv, &kv)) return NULL;
  /* The library reads copies without the GIL: another thread may write the caller's arrays
   * meanwhile, and a value changed after it was checked could break what was checked. */
  Py_ssize_t width = tv.shape[1], rows = tv.shape[0];
  int32_t *t = PyMem_Malloc((size_t)tv.len + 1), *k = PyMem_Malloc((size_t)kv.len + 1);
  if (t && k) {
    memcpy(t, tv.buf, (size_t)tv.len);
    memcpy(k, kv.buf, (size_t)kv.len);
  }
  PyBuffer_Release(&tv);
  PyBuffer_Release(&kv);
  PyObject *res = NULL;
  if (!t || !k) {
    PyErr_NoMemory();
  } else {
    anvil_workload_t *w = NULL;
    anvil_error_t err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = anvil_workload_from_block_table(t, width, k, (int32_t)rows, block_size, h, &w, &err);
    Py_END_ALLOW_THREADS
    res = finish_workload(rc, w, &err);
  }
  PyMem_Free(t);
  PyMem_Free(k);
  return res;
}

static PyObject *py_levels(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *B, *L, *heads_o = Py_None;
  if (!PyArg_ParseTuple(args, "OO|O", &B, &L, &heads_o)) return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  if (anvil_py_heads(heads_o, &hb, &h)) return NULL;
  Py_buffer bv, lv;
  if (anvil_py_int_buffer(B, &bv, 8, 1, "B")) return NULL;
  if (anvil_py_int_buffer(L, &lv, 8, 1, "L")) {
    PyBuffer_Release(&bv);
    return NULL;
  }
  anvil_workload_t *w = NULL;
  anvil_error_t err;
  int rc = -1;
  if (bv.shape[0] != lv.shape[0])
    PyErr_SetString(PyExc_ValueError, "B and L need one entry per level each");
  else
    rc = anvil_workload_from_levels(bv.buf, lv.buf, (int)bv.shape[0], h, &w, &err);
  PyBuffer_Release(&bv);
  PyBuffer_Release(&lv);
  if (rc < 0) return NULL;
  return finish_workload(rc, w, &err);
}

static PyObject *py_explicit(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *par, *len, *rn, *heads_o = Py_None;
  if (!PyArg_ParseTuple(args, "OOO|O", &par, &len, &rn, &heads_o)) return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  if (anvil_py_heads(heads_o, &hb, &h)) return NULL;
  Py_buffer pv, lv, rv;
  if (anvil_py_int_buffer(par, &pv, 4, 1, "parents")) return NULL;
  if (anvil_py_int_buffer(len, &lv, 8, 1, "kv_lens")) {
    PyBuffer_Release(&pv);
    return NULL;
  }
  if (anvil_py_int_buffer(rn, &rv, 4, 1, "request_node")) {
    PyBuffer_Release(&pv);
    PyBuffer_Release(&lv);
    return NULL;
  }
  anvil_workload_t *w = NULL;
  anvil_error_t err;
  int rc = -1;
  if (pv.shape[0] != lv.shape[0])
    PyErr_SetString(PyExc_ValueError, "parents and kv_lens need one entry per node each");
  else
    rc = anvil_workload_from_explicit(pv.buf, lv.buf, (int32_t)pv.shape[0], rv.buf,
                                      (int32_t)rv.shape[0], h, &w, &err);
  PyBuffer_Release(&pv);
  PyBuffer_Release(&lv);
  PyBuffer_Release(&rv);
  if (rc < 0) return NULL;
  return finish_workload(rc, w, &err);
}

static PyObject *py_workload_json(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *text, *source = NULL;
  PyObject *heads_o = Py_None;
  if (!PyArg_ParseTuple(args, "s|zO", &text, &source, &heads_o)) return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  if (anvil_py_heads(heads_o, &hb, &h)) return NULL;
  anvil_workload_t *w = NULL;
  anvil_error_t err;
  /* The status first: w is read only after the call has set it. */
  int rc = anvil_workload_from_json(text, source, h, &w, &err);
  return finish_workload(rc, w, &err);
}

static PyObject *py_workload_load(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *path;
  PyObject *heads_o = Py_None;
  if (!PyArg_ParseTuple(args, "s|O", &path, &heads_o)) return NULL;
  anvil_heads_t hb;
  const anvil_heads_t *h;
  if (anvil_py_heads(heads_o, &hb, &h)) return NULL;
  anvil_workload_t *w = NULL;
  anvil_error_t err;
  int rc = anvil_workload_load(path, h, &w, &err);
  return finish_workload(rc, w, &err);
}

/* --- Target --------------------------------------------------------------------------- */
static PyObject *Target_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kws[] = {"gpu", "cost_model", "cost_params", "launch_model", NULL};
  const char *gpu = NULL, *cost = NULL, *launch = NULL;
  PyObject *cp = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzOz", kws, &gpu, &cost, &cp, &launch))
    return NULL;
  const char **kv;
  int n;
  if (anvil_py_strings(cp, &kv, &n)) return NULL;
  anvil_target_t *t = NULL;
  anvil_error_t err;
  int rc = anvil_target_create(gpu, cost, kv, n, &t, &err);
  PyMem_Free(kv);
  if (!rc && launch && (rc = anvil_target_set_launch(t, launch, &err)) != 0)
    anvil_target_destroy(t);
  if (rc) return anvil_py_raise(&err);
  TargetObject *o = (TargetObject *)type->tp_alloc(type, 0);
  if (!o) {
    anvil_target_destroy(t);
    return NULL;
  }
  o->t = t;
  return (PyObject *)o;
}

static void Target_dealloc(TargetObject *self) {
  anvil_target_destroy(self->t);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Target_gpu(TargetObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(anvil_target_gpu(self->t));
}

static PyObject *Target_hbm(TargetObject *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(anvil_target_hbm_GBps(self->t));
}

static PyGetSetDef Target_getset[] = {
    {"gpu", (getter)Target_gpu, NULL, "the GPU spec's name", NULL},
    {"hbm_GBps", (getter)Target_hbm, NULL, "HBM bandwidth the models use", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject Target_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "anvil._anvil.Target",
    .tp_basicsize = sizeof(TargetObject),
    .tp_dealloc = (destructor)Target_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Target(gpu=None, cost_model=None, cost_params=None, launch_model=None): a GPU, "
              "a cost model and how plans are issued.",
    .tp_new = Target_new,
    .tp_getset = Target_getset,
};

/* --- module ---------------------------------------------------------------------------- */
static PyObject *py_data_dir(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyUnicode_FromString(anvil_data_dir());
}

/* (scheduler names, cost model names) as registered. */
static PyObject *py_registry(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  PyObject *lists[2] = {PyList_New(0), PyList_New(0)};
  const char *(*const names[2])(int) = {anvil_scheduler_name, anvil_cost_model_name};
  for (int k = 0; k < 2; k++) {
    const char *name;
    for (int i = 0; lists[k] && (name = names[k](i)); i++) {
      PyObject *u = PyUnicode_FromString(name);
      if (!u || PyList_Append(lists[k], u) < 0) Py_CLEAR(lists[k]);
      Py_XDECREF(u);
    }
  }
  if (!lists[0] || !lists[1]) {
    Py_XDECREF(lists[0]);
    Py_XDECREF(lists[1]);
    return NULL;
  }
  PyObject *s = lists[0], *c = lists[1];
  return Py_BuildValue("(NN)", s, c);
}

static PyMethodDef functions[] = {
    {"registry", py_registry, METH_NOARGS, NULL},
    {"workload_from_block_table", py_block_table, METH_VARARGS, NULL},
    {"workload_from_levels", py_levels, METH_VARARGS, NULL},
    {"workload_from_explicit", py_explicit, METH_VARARGS, NULL},
    {"workload_from_json", py_workload_json, METH_VARARGS, NULL},
    {"workload_load", py_workload_load, METH_VARARGS, NULL},
    {"data_dir", py_data_dir, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_anvil",
                                    "anvil's C API (include/anvil/) for Python.", -1, NULL,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__anvil(void) {
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  if (PyModule_AddFunctions(m, functions) < 0 || PyModule_AddFunctions(m, anvil_py_plan_functions) < 0)
    goto fail;
  if (PyModule_AddFunctions(m, anvil_py_command_functions) < 0) goto fail;
  anvil_py_error = PyErr_NewExceptionWithDoc(
      "anvil.Error", "A mistake in anvil's input (or an internal error): the one-line message "
      "the anvil program prints, with .code and .status_class.", PyExc_ValueError, NULL);
  if (!anvil_py_error || PyModule_AddObjectRef(m, "Error", anvil_py_error) < 0) goto fail;
  if (PyType_Ready(&Workload_Type) < 0 || PyType_Ready(&Target_Type) < 0 ||
      PyModule_AddObjectRef(m, "Workload", (PyObject *)&Workload_Type) < 0 ||
      PyModule_AddObjectRef(m, "Target", (PyObject *)&Target_Type) < 0 ||
      anvil_py_plan_types(m) < 0)
    goto fail;
  if (PyModule_AddStringConstant(m, "version", anvil_version()) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
