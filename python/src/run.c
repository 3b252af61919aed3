/* anvil._anvil.DevicePlan: a device plan (include/anvil/run.h) and runs of plans on the
 * caller's CUDA tensors, taken through __dlpack__ (torch, CuPy, JAX) or
 * __cuda_array_interface__ (see ext.h). */
#include <dlpack/dlpack.h>
#include <string.h>

#include "ext.h"

typedef struct {
  PyObject_HEAD
  anvil_device_plan_t *dp;
  anvil_device_capacity_t cap;
  anvil_heads_t heads;
  int block_size;
} DevicePlanObject;

static void DevicePlan_dealloc(DevicePlanObject *self) {
  anvil_device_plan_destroy(self->dp);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The plan's capacity and its batch's heads and block size. */
static int plan_shape(PlanObject *po, anvil_device_capacity_t *cap, anvil_workload_info_t *wi) {
  const anvil_plan_t *p = anvil_py_plan_enter(po);
  if (!p) return -1;
  anvil_device_capacity_of(p, cap);
  anvil_workload_info(anvil_plan_workload(p), wi);
  anvil_py_plan_leave(po);
  return 0;
}

/* DevicePlan(plan, headroom): room for plan's tables times headroom (>= 1). */
static PyObject *DevicePlan_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kws[] = {"plan", "headroom", NULL};
  PlanObject *po;
  double headroom = 1.0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|d", kws, &Plan_Type, &po, &headroom))
    return NULL;
  if (!(headroom >= 1.0 && headroom <= 64.0)) {
    PyErr_Format(PyExc_ValueError, "headroom: %g; expected a factor from 1 to 64", headroom);
    return NULL;
  }
  anvil_device_capacity_t cap;
  anvil_workload_info_t wi;
  if (plan_shape(po, &cap, &wi)) return NULL;
  int32_t *c = &cap.requests;
  for (size_t i = 0; i < sizeof cap / sizeof *c; ++i) c[i] = (int32_t)(c[i] * headroom + 0.999);
  DevicePlanObject *o = (DevicePlanObject *)type->tp_alloc(type, 0);
  if (!o) return NULL;
  anvil_error_t err;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = anvil_device_plan_create(&cap, &wi.heads, wi.block_size, &o->dp, &err);
  Py_END_ALLOW_THREADS
  if (rc) {
    Py_DECREF(o);
    return anvil_py_raise(&err);
  }
  o->cap = cap;
  o->heads = wi.heads;
  o->block_size = wi.block_size;
  return (PyObject *)o;
}

/* fits(plan): True when the plan's tables fit and its heads and block size are this one's. */
static PyObject *DevicePlan_fits(DevicePlanObject *self, PyObject *arg) {
  if (!PyObject_TypeCheck(arg, &Plan_Type)) {
    PyErr_SetString(PyExc_TypeError, "fits(plan) takes a Plan");
    return NULL;
  }
  anvil_device_capacity_t need;
  anvil_workload_info_t wi;
  if (plan_shape((PlanObject *)arg, &need, &wi)) return NULL;
  const int32_t *n = &need.requests, *c = &self->cap.requests;
  int ok = memcmp(&wi.heads, &self->heads, sizeof wi.heads) == 0 &&
           wi.block_size == self->block_size;
  for (size_t i = 0; ok && i < sizeof need / sizeof *n; ++i) ok = n[i] <= c[i];
  return PyBool_FromLong(ok);
}

/* upload(plan, block_table, stream): the block table as an int32 2-D array. */
static PyObject *DevicePlan_upload(DevicePlanObject *self, PyObject *args) {
  PlanObject *po;
  PyObject *table;
  unsigned long long stream = 0;
  if (!PyArg_ParseTuple(args, "O!OK", &Plan_Type, &po, &table, &stream)) return NULL;
  Py_buffer tv;
  if (anvil_py_int_buffer(table, &tv, 4, 2, "block_table")) return NULL;
  const anvil_plan_t *p = anvil_py_plan_enter(po);
  anvil_error_t err;
  int rc = 0;
  if (p) {
    Py_BEGIN_ALLOW_THREADS
    rc = anvil_device_plan_upload(self->dp, p, tv.buf, tv.shape[1], (void *)(uintptr_t)stream,
                                  &err);
    Py_END_ALLOW_THREADS
    anvil_py_plan_leave(po);
  }
  PyBuffer_Release(&tv);
  if (!p) return NULL;
  if (rc) return anvil_py_raise(&err);
  Py_RETURN_NONE;
}

/* One caller tensor as a DLTensor; `held` keeps what backs it alive until the run is issued
 * (a DLPack capsule, whose producer frees the tensor when the capsule goes). */
typedef struct {
  DLTensor t;
  int64_t shape[8], strides[8];
  PyObject *held;
} pytensor_t;

/* Through __dlpack__: the capsule's DLTensor, after __dlpack_device__ says it is CUDA memory.
 * The producer orders its pending work before `stream` (1: the legacy default stream). */
static int from_dlpack(PyObject *o, const char *name, unsigned long long stream,
                       pytensor_t *out) {
  PyObject *dev = PyObject_CallMethod(o, "__dlpack_device__", NULL);
  if (!dev) return -1;
  long type = -1;
  if (PyTuple_Check(dev) && PyTuple_Size(dev) >= 1) type = PyLong_AsLong(PyTuple_GetItem(dev, 0));
  Py_DECREF(dev);
  if (PyErr_Occurred()) return -1;
  if (type != kDLCUDA && type != kDLCUDAManaged) {
    PyErr_Format(PyExc_ValueError, "%s: on DLPack device type %ld; expected a CUDA tensor "
                 "(device type %d)", name, type, (int)kDLCUDA);
    return -1;
  }
  PyObject *kw = Py_BuildValue("{s:K}", "stream", stream ? stream : 1ull);
  PyObject *fn = kw ? PyObject_GetAttrString(o, "__dlpack__") : NULL;
  PyObject *empty = fn ? PyTuple_New(0) : NULL;
  PyObject *cap = empty ? PyObject_Call(fn, empty, kw) : NULL;
  Py_XDECREF(kw);
  Py_XDECREF(fn);
  Py_XDECREF(empty);
  if (!cap) return -1;
  DLManagedTensor *mt = PyCapsule_IsValid(cap, "dltensor")
                            ? (DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor")
                            : NULL;
  if (!mt) {
    Py_DECREF(cap);
    PyErr_Format(PyExc_TypeError, "%s: __dlpack__ gave no 'dltensor' capsule", name);
    return -1;
  }
  out->t = mt->dl_tensor;
  out->held = cap;
  return 0;
}

/* Through __cuda_array_interface__ (fp16 or fp32; bf16 has no type string there). */
static int from_cai(PyObject *o, const char *name, int device, int writable, pytensor_t *out) {
  PyObject *d = PyObject_GetAttrString(o, "__cuda_array_interface__");
  if (!d) return -1;
  PyObject *shape = PyDict_Check(d) ? PyDict_GetItemString(d, "shape") : NULL;
  PyObject *ts = PyDict_Check(d) ? PyDict_GetItemString(d, "typestr") : NULL;
  PyObject *data = PyDict_Check(d) ? PyDict_GetItemString(d, "data") : NULL;
  PyObject *strides = PyDict_Check(d) ? PyDict_GetItemString(d, "strides") : NULL;
  const char *t = ts && PyUnicode_Check(ts) ? PyUnicode_AsUTF8(ts) : NULL;
  int rc = -1;
  if (!shape || !PyTuple_Check(shape) || PyTuple_Size(shape) > 8 || !t || !data ||
      !PyTuple_Check(data) || PyTuple_Size(data) < 2) {
    PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ lacks shape, typestr or data",
                 name);
  } else if (strcmp(t, "<f2") != 0 && strcmp(t, "<f4") != 0) {
    PyErr_Format(PyExc_ValueError, "%s: type string '%s'; expected '<f2' (fp16) or '<f4' "
                 "(lse); pass bf16 tensors through __dlpack__", name, t);
  } else if (writable && PyObject_IsTrue(PyTuple_GetItem(data, 1))) {
    PyErr_Format(PyExc_ValueError, "%s: read-only; expected a writable tensor", name);
  } else {
    const int bytes = t[2] == '2' ? 2 : 4;
    out->t = (DLTensor){(void *)(uintptr_t)PyLong_AsUnsignedLongLong(PyTuple_GetItem(data, 0)),
                        {kDLCUDA, device}, (int32_t)PyTuple_Size(shape),
                        {kDLFloat, (uint8_t)(8 * bytes), 1}, out->shape, NULL, 0};
    for (int i = 0; i < out->t.ndim; ++i)
      out->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    if (strides && strides != Py_None && PyTuple_Check(strides)) {
      out->t.strides = out->strides;
      for (int i = 0; i < out->t.ndim && i < PyTuple_Size(strides); ++i)
        out->strides[i] = PyLong_AsLongLong(PyTuple_GetItem(strides, i)) / bytes;
    }
    rc = PyErr_Occurred() ? -1 : 0;
  }
  Py_DECREF(d);
  return rc;
}

static int tensor_from(PyObject *o, const char *name, unsigned long long stream, int device,
                       int writable, pytensor_t *out) {
  memset(out, 0, sizeof *out);
  if (PyObject_HasAttrString(o, "__dlpack__")) return from_dlpack(o, name, stream, out);
  if (PyObject_HasAttrString(o, "__cuda_array_interface__"))
    return from_cai(o, name, device, writable, out);
  PyErr_Format(PyExc_TypeError, "%s: %s has neither __dlpack__ nor __cuda_array_interface__; "
               "expected a CUDA tensor (torch, CuPy, JAX)", name, Py_TYPE(o)->tp_name);
  return -1;
}

/* run(q, k_cache, v_cache, out, lse, stream, kv_layout): the uploaded plan on the tensors,
 * issued on `stream` (0: the legacy default stream). */
static PyObject *DevicePlan_run(DevicePlanObject *self, PyObject *args) {
  PyObject *obj[5];
  unsigned long long stream = 0;
  int layout = 0;
  if (!PyArg_ParseTuple(args, "OOOOOKi", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &stream,
                        &layout))
    return NULL;
  static const char *const names[] = {"q", "k_cache", "v_cache", "out", "lse"};
  pytensor_t t[5];
  memset(t, 0, sizeof t);
  const int device = anvil_device_plan_device(self->dp);
  int i = 0, rc = 0;
  for (; i < 5; ++i)
    if (obj[i] != Py_None && tensor_from(obj[i], names[i], stream, device, i >= 3, &t[i])) break;
  anvil_error_t err;
  if (i == 5) {
    const anvil_tensors_t ts = {&t[0].t, &t[1].t, &t[2].t, &t[3].t,
                                obj[4] == Py_None ? NULL : &t[4].t, layout};
    Py_BEGIN_ALLOW_THREADS
    rc = anvil_run(self->dp, &ts, (void *)(uintptr_t)stream, &err);
    Py_END_ALLOW_THREADS
  }
  for (int j = 0; j < 5; ++j) Py_XDECREF(t[j].held);
  if (i < 5) return NULL;
  if (rc) return anvil_py_raise(&err);
  Py_RETURN_NONE;
}

static PyMethodDef DevicePlan_methods[] = {
    {"fits", (PyCFunction)DevicePlan_fits, METH_O, NULL},
    {"upload", (PyCFunction)DevicePlan_upload, METH_VARARGS, NULL},
    {"run", (PyCFunction)DevicePlan_run, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

PyTypeObject DevicePlan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "anvil._anvil.DevicePlan",
    .tp_basicsize = sizeof(DevicePlanObject),
    .tp_dealloc = (destructor)DevicePlan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One device buffer holding a plan's tables and partial states (anvil.run).",
    .tp_methods = DevicePlan_methods,
    .tp_new = DevicePlan_new};
