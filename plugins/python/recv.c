/* A dispatch's answer as the native layout of the ABI (docs/python.md,
 * "dispatch"): each array the adapter returned is held as memory and its
 * size checked against the layout it declared, so that a wrong shape or
 * dtype is a failure naming the field, never a read past an array. */
#include "bridge.h"

#include <stdio.h>
#include <string.h>

/* res[k] or res.k; NULL when absent or None (new reference). */
static PyObject *eg__get(PyObject *res, const char *k)
{
	PyObject *v = PyDict_Check(res) ? PyDict_GetItemString(res, k)
					: PyObject_GetAttrString(res, k);

	if (PyDict_Check(res))
		Py_XINCREF(v); /* borrowed from the dict */
	PyErr_Clear();
	if (v == Py_None) {
		Py_DECREF(v);
		v = NULL;
	}
	return v;
}

/* res[k] as an integer >= 0 into *out; absent: 0, and *given = 0. */
static int eg__get_int(eg_py_inst_t *in, PyObject *res, const char *k,
		       uint32_t *out, int *given)
{
	PyObject *v = eg__get(res, k);
	long x;

	*given = v != NULL;
	*out = 0;
	if (!v)
		return EG_PLUGIN_OK;
	x = PyLong_Check(v) ? PyLong_AsLong(v) : -1;
	Py_DECREF(v);
	if (x < 0 || x > (long)UINT32_MAX) {
		PyErr_Clear();
		snprintf(in->err, sizeof(in->err),
			 "adapter %s: dispatch: returned %s that is not an "
			 "integer >= 0",
			 in->spec.module, k);
		return EG_PLUGIN_EFAIL;
	}
	*out = (uint32_t)x;
	return EG_PLUGIN_OK;
}

/* The array res[name] into held slot i: absent is fine unless needed;
 * else n elements of one of the item sizes in sizes (bits 1, 2, 4, 8). */
static int eg__field(eg_py_inst_t *in, PyObject *res, int i, const char *name,
		     int needed, size_t n, unsigned sizes, const char *what)
{
	eg_py_take_t *t = &in->held[i];
	PyObject *v = eg__get(res, name);
	char why[EG_PY_WHY];
	int rc;

	if (!v) {
		if (!needed)
			return EG_PLUGIN_OK;
		snprintf(in->err, sizeof(in->err),
			 "adapter %s: dispatch: returned no %s (want %zu "
			 "elements: %s)",
			 in->spec.module, name, n, what);
		return EG_PLUGIN_EFAIL;
	}
	rc = eg_py_take(v, in->caps.memory == EG_PLUGIN_MEM_CUDA, name, t, why,
			sizeof(why));
	Py_DECREF(v);
	if (rc < 0) {
		snprintf(in->err, sizeof(in->err), "adapter %s: dispatch: %s",
			 in->spec.module, why);
		return rc;
	}
	if (t->n == n && t->itemsize <= 8 && ((sizes >> t->itemsize) & 1))
		return EG_PLUGIN_OK;
	snprintf(in->err, sizeof(in->err),
		 "adapter %s: dispatch: returned %s of %zu elements of %zu "
		 "bytes; want %zu elements (%s) of %s bytes",
		 in->spec.module, name, t->n, t->itemsize, n, what,
		 sizes == (1u << 4 | 1u << 8) ? "4 or 8"
		 : sizes == 1u << 8	      ? "8"
		 : sizes == 1u << 4	      ? "4"
		 : sizes == 1u << 2	      ? "2"
					      : "1");
	return EG_PLUGIN_EFAIL;
}

enum { F_X, F_COUNT, F_SCALES, F_SRC, F_TOK, F_IDX, F_W, F_ECOUNT, F_Y };

#define EG__S(b) (1u << (b))

/* x, and the stride: given, or what x's size says it is. */
static int eg__x(eg_py_inst_t *in, PyObject *res)
{
	size_t row = (size_t)in->G * in->env.hidden;
	size_t xb = eg_py_type_size((int)in->env.dtype);
	eg_py_take_t *t = &in->held[F_X];
	int given, rc = eg__get_int(in, res, "stride", &in->stride, &given);

	if (rc < 0)
		return rc;
	if (given)
		return eg__field(in, res, F_X, "x", 1, row * in->stride,
				 EG__S(xb),
				 eg_py_type_name((int)in->env.dtype));
	/* any size first, then the stride from it */
	if ((rc = eg__field(in, res, F_X, "x", 1, 0, 0xffu, "")) < 0 && !t->obj)
		return rc;
	if (t->itemsize == xb && t->n % row == 0) {
		in->stride = (uint32_t)(t->n / row);
		return EG_PLUGIN_OK;
	}
	snprintf(in->err, sizeof(in->err),
		 "adapter %s: dispatch: returned x of %zu elements of %zu "
		 "bytes; want groups (%u) x stride x hidden (%u) elements of "
		 "%zu bytes (%s)",
		 in->spec.module, t->n, t->itemsize, in->G, in->env.hidden, xb,
		 eg_py_type_name((int)in->env.dtype));
	return EG_PLUGIN_EFAIL;
}

/* The other row arrays: fp8 scales, keys, slots, expert outputs. */
static int eg__rows(eg_py_inst_t *in, PyObject *res)
{
	const eg_plugin_env_t *e = &in->env;
	size_t rows = (size_t)in->G * in->stride, H = e->hidden, K = e->topk;
	size_t cb = eg_py_type_size((int)e->combine_dtype);
	int slots = in->caps.layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR;
	int fp8 = e->dtype == EG_PLUGIN_DTYPE_FP8;
	int rc;

	if ((rc = eg__field(in, res, F_SCALES, "scales", fp8, rows * H / 128,
			    EG__S(4), "fp8 scales: rows x hidden/128")) < 0 ||
	    (rc = eg__field(in, res, F_SRC, "src_rank", 0, rows, EG__S(4),
			    "int32 per row")) < 0 ||
	    (rc = eg__field(in, res, F_TOK, "src_token", 0, rows, EG__S(4),
			    "int32 per row")) < 0 ||
	    (rc = eg__field(in, res, F_Y, "y", 0, rows * H, EG__S(cb),
			    "rows x hidden expert outputs")) < 0)
		return rc;
	/* expert-major layouts deliver no slots */
	if (slots &&
	    ((rc = eg__field(in, res, F_IDX, "topk_idx", 1, rows * K,
			     EG__S(4) | EG__S(8), "rows x topk local ids")) <
		 0 ||
	     (rc = eg__field(in, res, F_W, "topk_w", 1, rows * K, EG__S(4),
			     "rows x topk fp32 weights")) < 0))
		return rc;
	return EG_PLUGIN_OK;
}

/* The counters: count (G) or, FLAT only, rows; expert_count (L: the
 * slots naming each local expert, docs/semantics.md). */
static int eg__counts(eg_py_inst_t *in, PyObject *res, uint32_t *nrows,
		      uint32_t *cbytes)
{
	int given, rc, flat = in->caps.layout == EG_PLUGIN_LAYOUT_FLAT;
	size_t csz;

	if ((rc = eg__get_int(in, res, "rows", nrows, &given)) < 0)
		return rc;
	if ((rc = eg__field(in, res, F_COUNT, "count", !flat || !given, in->G,
			    EG__S(4) | EG__S(8), "int32 or int64 per group")) <
	    0)
		return rc;
	csz = in->held[F_COUNT].obj ? in->held[F_COUNT].itemsize : 0;
	if ((rc = eg__field(in, res, F_ECOUNT, "expert_count", 0,
			    in->env.local_experts,
			    csz ? EG__S(csz) : EG__S(4) | EG__S(8),
			    "one counter per local expert, as wide as "
			    "count")) < 0)
		return rc;
	if (!csz && in->held[F_ECOUNT].obj)
		csz = in->held[F_ECOUNT].itemsize;
	*cbytes = (uint32_t)csz;
	return EG_PLUGIN_OK;
}

void eg_py_recv_release(eg_py_inst_t *in)
{
	for (int i = 0; i < EG_PY_RECV_NF; i++)
		eg_py_take_release(&in->held[i]);
}

int eg_py_recv(eg_py_inst_t *in, PyObject *res, eg_plugin_recv_t *out)
{
	uint32_t nrows, cbytes;
	int rc;

	eg_py_recv_release(in);
	if ((rc = eg__x(in, res)) < 0 || (rc = eg__rows(in, res)) < 0 ||
	    (rc = eg__counts(in, res, &nrows, &cbytes)) < 0) {
		eg_py_recv_release(in);
		return rc;
	}
	out->stride = in->stride;
	out->count = in->held[F_COUNT].ptr;
	out->count_bytes = cbytes;
	out->rows = nrows;
	out->x = in->held[F_X].ptr;
	out->scales = in->held[F_SCALES].ptr;
	out->src_rank = in->held[F_SRC].ptr;
	out->src_token = in->held[F_TOK].ptr;
	out->topk_idx = in->held[F_IDX].ptr;
	out->idx_bytes = (uint32_t)in->held[F_IDX].itemsize;
	out->topk_w = in->held[F_W].ptr;
	out->expert_count = in->held[F_ECOUNT].ptr;
	out->y = in->held[F_Y].ptr;
	return EG_PLUGIN_OK;
}
