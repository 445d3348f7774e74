/* epgate's buffers as Python objects without a copy (docs/python.md,
 * "Arrays"): epgate.Array exposes host memory through the buffer protocol
 * (numpy.asarray) and CUDA memory through __cuda_array_interface__ and
 * __dlpack__ (torch.as_tensor, torch.from_dlpack); __dlpack__ also works
 * on the host. An Array points into memory epgate owns: it is valid
 * during the call it is passed to. */
#include "bridge.h"

#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"

typedef struct eg_py_arr {
	PyObject_HEAD void *ptr;
	Py_ssize_t shape[3], strides[3];
	int ndim, type, device, readonly; /* device < 0: host memory */
} eg_py_arr_t;

/* the memory of empty arrays (a consumer may not take NULL) */
static char eg__empty[16];

/* per type: buffer-protocol format, array-interface typestr, size,
 * DLPack code, name */
static const struct {
	const char *fmt, *typestr;
	size_t size;
	uint8_t dl_code;
	const char *name;
} eg__types[EG_PY_NTYPES] = {
    [EG_PY_BF16] = {"H", "<u2", 2, EG_DL_BFLOAT, "bf16"},
    [EG_PY_FP32] = {"f", "<f4", 4, EG_DL_FLOAT, "fp32"},
    [EG_PY_FP8] = {"B", "|u1", 1, EG_DL_UINT, "fp8"},
    [EG_PY_I32] = {"i", "<i4", 4, EG_DL_INT, "int32"},
    [EG_PY_I64] = {"q", "<i8", 8, EG_DL_INT, "int64"},
};

size_t eg_py_type_size(int t)
{
	return t >= 0 && t < EG_PY_NTYPES ? eg__types[t].size : 0;
}

const char *eg_py_type_name(int t)
{
	return t >= 0 && t < EG_PY_NTYPES ? eg__types[t].name : "?";
}

static Py_ssize_t eg__nbytes(const eg_py_arr_t *a)
{
	Py_ssize_t n = (Py_ssize_t)eg__types[a->type].size;

	for (int i = 0; i < a->ndim; i++)
		n *= a->shape[i];
	return n;
}

static int eg__getbuffer(PyObject *o, Py_buffer *v, int flags)
{
	eg_py_arr_t *a = (eg_py_arr_t *)o;

	v->obj = NULL;
	if (a->device >= 0) {
		PyErr_SetString(PyExc_BufferError,
				"epgate.Array in CUDA memory: use "
				"__cuda_array_interface__ or __dlpack__");
		return -1;
	}
	if ((flags & PyBUF_WRITABLE) && a->readonly) {
		PyErr_SetString(PyExc_BufferError, "read-only epgate.Array");
		return -1;
	}
	v->buf = a->ptr ? a->ptr : eg__empty;
	v->obj = o;
	Py_INCREF(o);
	v->len = eg__nbytes(a);
	v->readonly = a->readonly;
	v->itemsize = (Py_ssize_t)eg__types[a->type].size;
	v->format =
	    flags & PyBUF_FORMAT ? (char *)eg__types[a->type].fmt : NULL;
	v->ndim = a->ndim;
	v->shape = flags & PyBUF_ND ? a->shape : NULL;
	v->strides =
	    (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->strides : NULL;
	v->suboffsets = NULL;
	v->internal = NULL;
	return 0;
}

static PyBufferProcs eg__buffer = {.bf_getbuffer = eg__getbuffer};

static PyObject *eg__shape_tuple(const eg_py_arr_t *a)
{
	PyObject *t = PyTuple_New(a->ndim);

	for (int i = 0; t && i < a->ndim; i++)
		PyTuple_SET_ITEM(t, i, PyLong_FromSsize_t(a->shape[i]));
	return t;
}

static PyObject *eg__get_shape(PyObject *o, void *c)
{
	(void)c;
	return eg__shape_tuple((eg_py_arr_t *)o);
}

static PyObject *eg__get_dtype(PyObject *o, void *c)
{
	(void)c;
	return PyUnicode_FromString(eg__types[((eg_py_arr_t *)o)->type].name);
}

static PyObject *eg__get_ptr(PyObject *o, void *c)
{
	(void)c;
	return PyLong_FromVoidPtr(((eg_py_arr_t *)o)->ptr);
}

static PyObject *eg__get_nbytes(PyObject *o, void *c)
{
	(void)c;
	return PyLong_FromSsize_t(eg__nbytes((eg_py_arr_t *)o));
}

static PyObject *eg__get_device(PyObject *o, void *c)
{
	(void)c;
	return PyUnicode_FromString(((eg_py_arr_t *)o)->device >= 0 ? "cuda"
								    : "cpu");
}

/* Version 2 of the CUDA array interface (no stream key: the adapter
 * orders its work on env.cuda_stream itself). */
static PyObject *eg__get_cai(PyObject *o, void *c)
{
	eg_py_arr_t *a = (eg_py_arr_t *)o;
	PyObject *shape;

	(void)c;
	if (a->device < 0) {
		PyErr_SetString(PyExc_AttributeError,
				"__cuda_array_interface__: host memory");
		return NULL;
	}
	shape = eg__shape_tuple(a);
	if (!shape)
		return NULL;
	return Py_BuildValue("{s:N,s:s,s:(NO),s:O,s:i}", "shape", shape,
			     "typestr", eg__types[a->type].typestr, "data",
			     PyLong_FromVoidPtr(a->ptr ? a->ptr : eg__empty),
			     a->readonly ? Py_True : Py_False, "strides",
			     Py_None, "version", 2);
}

static PyGetSetDef eg__getset[] = {
    {"shape", eg__get_shape, NULL, "the shape (a tuple)", NULL},
    {"dtype", eg__get_dtype, NULL,
     "bf16 (as uint16 in the buffer protocol), fp32, fp8 (e4m3 as uint8), "
     "int32 or int64",
     NULL},
    {"ptr", eg__get_ptr, NULL, "the address", NULL},
    {"nbytes", eg__get_nbytes, NULL, "the size in bytes", NULL},
    {"device", eg__get_device, NULL, "cpu or cuda", NULL},
    {"__cuda_array_interface__", eg__get_cai, NULL,
     "CUDA memory: the CUDA array interface (version 2)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* The DLPack tensor and its shape, freed together. */
typedef struct eg__dl {
	eg_dl_managed_t m;
	int64_t shape[3];
} eg__dl_t;

static void eg__dl_delete(eg_dl_managed_t *m)
{
	free(m); /* the first member of eg__dl_t */
}

static void eg__capsule_free(PyObject *cap)
{
	eg_dl_managed_t *m;

	if (!PyCapsule_IsValid(cap, EG_DL_CAPSULE))
		return; /* consumed: the consumer calls the deleter */
	m = PyCapsule_GetPointer(cap, EG_DL_CAPSULE);
	if (m && m->deleter)
		m->deleter(m);
}

/* __dlpack__(stream=None, ...): the stream is the adapter's concern
 * (env.cuda_stream), so every argument is accepted and none is used. */
static PyObject *eg__dlpack(PyObject *o, PyObject *args, PyObject *kw)
{
	eg_py_arr_t *a = (eg_py_arr_t *)o;
	eg__dl_t *d = calloc(1, sizeof(*d));
	PyObject *cap;

	(void)args, (void)kw;
	if (!d)
		return PyErr_NoMemory();
	for (int i = 0; i < a->ndim; i++)
		d->shape[i] = a->shape[i];
	d->m.dl_tensor = (eg_dl_tensor_t){
	    .data = a->ptr ? a->ptr : eg__empty,
	    .device = {a->device >= 0 ? EG_DL_CUDA : EG_DL_CPU,
		       a->device >= 0 ? a->device : 0},
	    .ndim = a->ndim,
	    .dtype = {eg__types[a->type].dl_code,
		      (uint8_t)(8 * eg__types[a->type].size), 1},
	    .shape = d->shape,
	};
	d->m.deleter = eg__dl_delete;
	cap = PyCapsule_New(&d->m, EG_DL_CAPSULE, eg__capsule_free);
	if (!cap)
		free(d);
	return cap;
}

static PyObject *eg__dlpack_device(PyObject *o, PyObject *unused)
{
	eg_py_arr_t *a = (eg_py_arr_t *)o;

	(void)unused;
	return Py_BuildValue("(ii)", a->device >= 0 ? EG_DL_CUDA : EG_DL_CPU,
			     a->device >= 0 ? a->device : 0);
}

static PyMethodDef eg__methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))eg__dlpack,
     METH_VARARGS | METH_KEYWORDS, "a DLPack capsule of the memory"},
    {"__dlpack_device__", eg__dlpack_device, METH_NOARGS,
     "(device type, device id) of DLPack"},
    {NULL, NULL, 0, NULL},
};

static PyObject *eg__repr(PyObject *o)
{
	eg_py_arr_t *a = (eg_py_arr_t *)o;
	PyObject *s = eg__shape_tuple(a), *r;

	if (!s)
		return NULL;
	r = PyUnicode_FromFormat(
	    "epgate.Array(%R, %s, %s%s)", s, eg__types[a->type].name,
	    a->device >= 0 ? "cuda" : "cpu", a->readonly ? ", read-only" : "");
	Py_DECREF(s);
	return r;
}

static PyTypeObject eg__array_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "epgate.Array",
    .tp_basicsize = sizeof(eg_py_arr_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "epgate memory passed to an adapter, without a copy: the "
	      "buffer protocol on the host, __cuda_array_interface__ on CUDA, "
	      "__dlpack__ on both; valid during the call",
    .tp_as_buffer = &eg__buffer,
    .tp_getset = eg__getset,
    .tp_methods = eg__methods,
    .tp_repr = eg__repr,
};

PyTypeObject *eg_py_array_type(void)
{
	return &eg__array_type;
}

PyObject *eg_py_array(void *ptr, int type, int ndim, const Py_ssize_t *shape,
		      int cuda_device, int readonly)
{
	eg_py_arr_t *a;
	Py_ssize_t st;

	if (type < 0 || type >= EG_PY_NTYPES || ndim < 1 || ndim > 3) {
		PyErr_SetString(PyExc_SystemError, "epgate.Array: bad shape");
		return NULL;
	}
	a = PyObject_New(eg_py_arr_t, &eg__array_type);
	if (!a)
		return NULL;
	a->ptr = ptr;
	a->type = type;
	a->ndim = ndim;
	a->device = cuda_device;
	a->readonly = readonly;
	st = (Py_ssize_t)eg__types[type].size;
	for (int i = ndim - 1; i >= 0; i--) {
		a->shape[i] = shape[i];
		a->strides[i] = st;
		st *= shape[i];
	}
	return (PyObject *)a;
}
