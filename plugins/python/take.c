/* An adapter's array as memory epgate reads, without a copy: the buffer
 * protocol (numpy, bytes, memoryview) on the host, the CUDA array
 * interface (CuPy, Numba, torch except bf16) and DLPack (torch, JAX,
 * numpy) in either space. The object is held until released, so its
 * memory stays. */
#include "bridge.h"

#include <stdio.h>
#include <string.h>

#include "dlpack_abi.h"

static int eg__fail(char *err, size_t len, const char *what, const char *fmt,
		    const char *detail)
{
	char m[EG_PY_ERR];

	snprintf(m, sizeof(m), fmt, detail);
	snprintf(err, len, "%s: %s", what, m);
	PyErr_Clear();
	return EG_PLUGIN_EFAIL;
}

static int eg__take_buffer(PyObject *o, const char *what, eg_py_take_t *t,
			   char *err, size_t len)
{
	if (PyObject_GetBuffer(o, &t->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) <
	    0)
		return eg__fail(err, len, what, "a %s that is not C-contiguous",
				Py_TYPE(o)->tp_name);
	t->has_view = 1;
	t->obj = o;
	Py_INCREF(o);
	t->ptr = t->view.buf;
	t->itemsize = (size_t)(t->view.itemsize > 0 ? t->view.itemsize : 1);
	t->n = (size_t)t->view.len / t->itemsize;
	return EG_PLUGIN_OK;
}

/* The product of a shape tuple's entries, or -1. */
static Py_ssize_t eg__tuple_prod(PyObject *shape)
{
	Py_ssize_t n = 1;

	if (!shape || !PyTuple_Check(shape))
		return -1;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
		Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));

		if (d < 0)
			return -1;
		n *= d;
	}
	return n;
}

/* The CUDA array interface: "data": (ptr, read-only), "shape",
 * "typestr" ("<f4": its size is the number), "strides" None (else
 * refused unless they are the C-contiguous ones of a single row). */
static int eg__take_cai(PyObject *o, const char *what, eg_py_take_t *t,
			char *err, size_t len)
{
	PyObject *d = PyObject_GetAttrString(o, "__cuda_array_interface__");
	PyObject *data, *shape, *ts, *strides;
	Py_ssize_t n;
	int size;

	if (!d || !PyDict_Check(d)) {
		Py_XDECREF(d);
		return eg__fail(
		    err, len, what,
		    "__cuda_array_interface__ of a %s is not a dict",
		    Py_TYPE(o)->tp_name);
	}
	data = PyDict_GetItemString(d, "data"); /* borrowed */
	shape = PyDict_GetItemString(d, "shape");
	ts = PyDict_GetItemString(d, "typestr");
	strides = PyDict_GetItemString(d, "strides");
	n = eg__tuple_prod(shape);
	if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1 ||
	    n < 0 || !ts || !PyUnicode_Check(ts) ||
	    sscanf(PyUnicode_AsUTF8(ts) + 1, "%*c%d", &size) != 1 || size < 1 ||
	    (strides && strides != Py_None && PyTuple_GET_SIZE(shape) > 1)) {
		Py_DECREF(d);
		return eg__fail(err, len, what,
				"a %s whose __cuda_array_interface__ is not a "
				"C-contiguous array (data, shape, typestr, "
				"strides None)",
				Py_TYPE(o)->tp_name);
	}
	t->ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
	t->itemsize = (size_t)size;
	t->n = (size_t)n;
	t->obj = o;
	Py_INCREF(o);
	Py_DECREF(d);
	return PyErr_Occurred() ? eg__fail(err, len, what, "%s",
					   "its data pointer is not an integer")
				: EG_PLUGIN_OK;
}

/* Strides NULL, or those of a C-contiguous tensor (dims of 1 aside); an
 * empty tensor is contiguous whatever its strides (torch 1.13 exports
 * (0, 0) for a 0 x H one). */
static int eg__dl_contiguous(const eg_dl_tensor_t *d)
{
	int64_t want = 1;

	if (!d->strides)
		return 1;
	for (int i = 0; i < d->ndim; i++)
		if (d->shape[i] == 0)
			return 1;
	for (int i = d->ndim - 1; i >= 0; i--) {
		if (d->shape[i] != 1 && d->strides[i] != want)
			return 0;
		want *= d->shape[i];
	}
	return 1;
}

/* __dlpack__ (with stream=-1 on CUDA: no synchronization asked of the
 * producer; the adapter's work is on env.cuda_stream). */
static PyObject *eg__dl_capsule(PyObject *o, int cuda)
{
	PyObject *cap = NULL, *meth = PyObject_GetAttrString(o, "__dlpack__");
	PyObject *args = PyTuple_New(0), *kw = NULL;

	if (meth && args && cuda && (kw = Py_BuildValue("{s:i}", "stream", -1)))
		cap = PyObject_Call(meth, args, kw);
	if (meth && args && !cap) {
		PyErr_Clear();
		cap = PyObject_Call(meth, args, NULL);
	}
	Py_XDECREF(kw);
	Py_XDECREF(args);
	Py_XDECREF(meth);
	return cap;
}

static int eg__take_dlpack(PyObject *o, int cuda, const char *what,
			   eg_py_take_t *t, char *err, size_t len)
{
	PyObject *cap = eg__dl_capsule(o, cuda);
	eg_dl_managed_t *m = cap && PyCapsule_IsValid(cap, EG_DL_CAPSULE)
				 ? PyCapsule_GetPointer(cap, EG_DL_CAPSULE)
				 : NULL;
	const eg_dl_tensor_t *d = m ? &m->dl_tensor : NULL;
	int on_dev, contig;
	size_t n = 1;

	if (!d) {
		Py_XDECREF(cap);
		return eg__fail(err, len, what,
				"__dlpack__ of a %s gave no DLPack tensor",
				Py_TYPE(o)->tp_name);
	}
	on_dev = d->device.device_type == EG_DL_CUDA ||
		 d->device.device_type == EG_DL_CUDA_MANAGED;
	contig = eg__dl_contiguous(d);
	if (on_dev != cuda || !contig) {
		Py_DECREF(cap);
		return eg__fail(err, len, what, "%s",
				!contig ? "a tensor that is not C-contiguous"
				: cuda	? "in host memory, but the adapter "
					  "declares memory cuda"
					: "in device memory, but the adapter "
					  "declares memory host");
	}
	for (int i = 0; i < d->ndim; i++)
		n *= (size_t)d->shape[i];
	t->ptr = (char *)d->data + d->byte_offset;
	t->itemsize = (size_t)d->dtype.bits * d->dtype.lanes / 8;
	t->n = n;
	t->obj = cap; /* its destructor frees the tensor (not consumed) */
	return EG_PLUGIN_OK;
}

/* o's memory by the first protocol it speaks. */
static int eg__take_any(PyObject *o, int cuda, const char *what,
			eg_py_take_t *t, char *err, size_t len)
{
	if (!cuda && PyObject_CheckBuffer(o))
		return eg__take_buffer(o, what, t, err, len);
	/* torch raises for bf16 here: then DLPack */
	if (cuda && PyObject_HasAttrString(o, "__cuda_array_interface__"))
		return eg__take_cai(o, what, t, err, len);
	if (PyObject_HasAttrString(o, "__dlpack__"))
		return eg__take_dlpack(o, cuda, what, t, err, len);
	if (cuda && PyObject_CheckBuffer(o))
		return eg__fail(err, len, what,
				"a %s in host memory, but the adapter declares "
				"memory cuda",
				Py_TYPE(o)->tp_name);
	return eg__fail(err, len, what,
			"a %s is not an array (want the buffer protocol, "
			"__cuda_array_interface__ or __dlpack__)",
			Py_TYPE(o)->tp_name);
}

int eg_py_take(PyObject *o, int cuda, const char *what, eg_py_take_t *t,
	       char *err, size_t len)
{
	static char empty[16]; /* an empty array's address may be 0 */
	int rc;

	memset(t, 0, sizeof(*t));
	rc = eg__take_any(o, cuda, what, t, err, len);
	if (rc == EG_PLUGIN_OK && !t->ptr && t->n == 0)
		t->ptr = empty;
	return rc;
}

void eg_py_take_release(eg_py_take_t *t)
{
	if (t->has_view)
		PyBuffer_Release(&t->view);
	Py_XDECREF(t->obj);
	memset(t, 0, sizeof(*t));
}
