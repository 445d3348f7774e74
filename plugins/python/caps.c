/* Between the ABI's structs and the adapter's Python objects: the
 * adapter's declaration (query's dict) into caps, and what create and
 * every call get (env, the inputs) as namespaces (docs/python.md). */
#include "bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the declaration --------------------------------------------------- */

/* The index of v's text in words (n of them), or -1 with the message. */
static int eg__word(PyObject *v, const char *key, const char *const *words,
		    int n, char *err, size_t len)
{
	const char *s = v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
	char want[256] = "";

	for (int i = 0; s && i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return i;
	for (int i = 0; i < n; i++)
		if (words[i])
			snprintf(want + strlen(want),
				 sizeof(want) - strlen(want), "%s%s",
				 want[0] ? "|" : "", words[i]);
	snprintf(err, len, "query: %s=%s: want %s", key, s ? s : "(not text)",
		 want);
	PyErr_Clear();
	return -1;
}

/* A list of words as bits (word i: bits[i]). */
static int eg__words(PyObject *v, const char *key, const char *const *words,
		     const uint32_t *bits, int n, uint32_t *out, char *err,
		     size_t len)
{
	PyObject *seq = PySequence_Fast(v, "not a list");

	*out = 0;
	if (!seq || PyUnicode_Check(v)) {
		Py_XDECREF(seq);
		PyErr_Clear();
		snprintf(err, len, "query: %s: want a list of words", key);
		return -1;
	}
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		int w = eg__word(PySequence_Fast_GET_ITEM(seq, i), key, words,
				 n, err, len);

		if (w < 0) {
			Py_DECREF(seq);
			return -1;
		}
		*out |= bits[w];
	}
	Py_DECREF(seq);
	return 0;
}

static const char *const eg__memories[] = {"host", "cuda"};
static const char *const eg__layouts[] = {NULL, "flat", "rank", "expert"};
static const char *const eg__orders[] = {NULL, "canonical", "fixed", "any"};
static const char *const eg__dtypes[] = {"bf16", "fp32", "fp8"};
static const uint32_t eg__dtype_bits[] = {
    EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_BF16),
    EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_FP32),
    EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_FP8)};
static const char *const eg__flags[] = {"canonical_order", "wants_nccl",
					"input_idx64", "slots_any_order",
					"capture_safe"};
static const uint32_t eg__flag_bits[] = {
    EG_PLUGIN_CANONICAL_ORDER, EG_PLUGIN_WANTS_NCCL, EG_PLUGIN_INPUT_IDX64,
    EG_PLUGIN_SLOTS_ANY_ORDER, EG_PLUGIN_CAPTURE_SAFE};

/* The integer limits, by name. */
static uint32_t *eg__limit(eg_plugin_caps_t *c, const char *k)
{
	return !strcmp(k, "max_world")	       ? &c->max_world
	       : !strcmp(k, "max_tokens")      ? &c->max_tokens
	       : !strcmp(k, "max_hidden")      ? &c->max_hidden
	       : !strcmp(k, "max_experts")     ? &c->max_experts
	       : !strcmp(k, "max_topk")	       ? &c->max_topk
	       : !strcmp(k, "hidden_multiple") ? &c->hidden_multiple
					       : NULL;
}

/* The ABI-2 strings, by name (where the caps have room for them). */
static const char **eg__text(eg_plugin_caps_t *c, const char *k)
{
	if (!EG_PLUGIN_HAS(c, eg_plugin_caps_t, options))
		return NULL;
	return !strcmp(k, "lib_name")	   ? &c->lib_name
	       : !strcmp(k, "lib_version") ? &c->lib_version
	       : !strcmp(k, "lib_build")   ? &c->lib_build
	       : !strcmp(k, "options")	   ? &c->options
					   : NULL;
}

/* A scalar key: a limit, a string, order_bound. 1 if k is one. */
/* The declaration's strings, kept until exit as the ABI wants them: one
 * copy of each text for the process (called with the GIL held), not one
 * per instance, so a job that creates an instance per workload does not
 * grow; the list keeps them reachable for LeakSanitizer. */
typedef struct eg__kept {
	struct eg__kept *next;
	char s[];
} eg__kept_t;
static eg__kept_t *eg__kept;

static const char *eg__keep(const char *s)
{
	eg__kept_t *k;
	size_t n = strlen(s) + 1;

	for (k = eg__kept; k; k = k->next)
		if (!strcmp(k->s, s))
			return k->s;
	if (!(k = malloc(sizeof(*k) + n)))
		return NULL;
	memcpy(k->s, s, n);
	k->next = eg__kept;
	eg__kept = k;
	return k->s;
}

static int eg__scalar(eg_plugin_caps_t *c, const char *k, PyObject *v,
		      char *err, size_t len, int *rc)
{
	uint32_t *lim = eg__limit(c, k);
	const char **txt = eg__text(c, k);

	*rc = 0;
	if (lim) {
		long x = PyLong_Check(v) ? PyLong_AsLong(v) : -1;

		if (x < 0 || x > (long)UINT32_MAX) {
			PyErr_Clear();
			snprintf(err, len, "query: %s: want an integer >= 0",
				 k);
			*rc = -1;
		}
		*lim = (uint32_t)x;
		return 1;
	}
	if (txt) {
		const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;

		if (!s || !(*txt = eg__keep(s))) {
			PyErr_Clear();
			snprintf(err, len, "query: %s: want a string", k);
			*rc = -1;
		}
		return 1;
	}
	if (!strcmp(k, "order_bound") &&
	    EG_PLUGIN_HAS(c, eg_plugin_caps_t, order_bound)) {
		c->order_bound = PyFloat_AsDouble(v);
		if (PyErr_Occurred()) {
			PyErr_Clear();
			snprintf(err, len, "query: order_bound: want a number");
			*rc = -1;
		}
		return 1;
	}
	return 0;
}

/* One key of the declaration. */
static int eg__cap(eg_plugin_caps_t *c, const char *k, PyObject *v, char *err,
		   size_t len)
{
	int w, rc;

	if (eg__scalar(c, k, v, err, len, &rc))
		return rc;
	if (!strcmp(k, "memory")) {
		w = eg__word(v, k, eg__memories, 2, err, len);
		c->memory = w == 1 ? EG_PLUGIN_MEM_CUDA : EG_PLUGIN_MEM_HOST;
	} else if (!strcmp(k, "layout")) {
		w = eg__word(v, k, eg__layouts, 4, err, len);
		c->layout = (uint32_t)w;
	} else if (!strcmp(k, "order") &&
		   EG_PLUGIN_HAS(c, eg_plugin_caps_t, order)) {
		w = eg__word(v, k, eg__orders, 4, err, len);
		c->order = (uint32_t)w;
		/* for an epgate that reads only the flag, too */
		if (w == EG_PLUGIN_ORDER_CANONICAL)
			c->flags |= EG_PLUGIN_CANONICAL_ORDER;
	} else if (!strcmp(k, "dtypes")) {
		w = eg__words(v, k, eg__dtypes, eg__dtype_bits, 3, &c->dtypes,
			      err, len);
	} else if (!strcmp(k, "flags")) {
		uint32_t f;

		w = eg__words(v, k, eg__flags, eg__flag_bits, 5, &f, err, len);
		c->flags |= f;
	} else {
		snprintf(err, len,
			 "query: unknown key '%s' (known: memory, layout, "
			 "dtypes, order, order_bound, flags, max_world, "
			 "max_tokens, max_hidden, max_experts, max_topk, "
			 "hidden_multiple, lib_name, lib_version, lib_build, "
			 "options)",
			 k);
		return -1;
	}
	return w < 0 ? -1 : 0;
}

int eg_py_caps(PyObject *d, eg_plugin_caps_t *c, char *err, size_t len)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	if (!d || !PyDict_Check(d)) {
		snprintf(err, len, "query returned a %s, not a dict",
			 d ? Py_TYPE(d)->tp_name : "nothing");
		return EG_PLUGIN_EFAIL;
	}
	c->layout = EG_PLUGIN_LAYOUT_FLAT;
	c->dtypes = EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_BF16);
	while (PyDict_Next(d, &pos, &k, &v)) {
		const char *ks =
		    PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;

		if (!ks) {
			PyErr_Clear();
			snprintf(err, len, "query: a key that is not a string");
			return EG_PLUGIN_EFAIL;
		}
		if (eg__cap(c, ks, v, err, len) < 0)
			return EG_PLUGIN_EFAIL;
	}
	return EG_PLUGIN_OK;
}

/* ---- env and inputs ---------------------------------------------------- */

static eg_py_inst_t *eg__boot_inst(PyObject *self)
{
	return PyCapsule_GetPointer(self, "epgate.boot");
}

static PyObject *eg__boot_fail(eg_py_inst_t *in, const char *what)
{
	const eg_plugin_boot_t *b = in->env.boot;
	const char *e = b->error ? b->error(b->ctx) : NULL;

	PyErr_Format(PyExc_RuntimeError, "epgate bootstrap %s failed: %s", what,
		     e && *e ? e : "no reason given");
	return NULL;
}

/* env.allgather(data) -> bytes: every rank's data (of one length) in
 * rank order. */
static PyObject *eg__allgather(PyObject *self, PyObject *args)
{
	eg_py_inst_t *in = eg__boot_inst(self);
	const eg_plugin_boot_t *b = in ? in->env.boot : NULL;
	PyObject *all;
	PyThreadState *ts;
	Py_buffer v;
	int rc;

	if (!b || !PyArg_ParseTuple(args, "y*:allgather", &v))
		return NULL;
	all = PyBytes_FromStringAndSize(NULL, v.len * in->env.world);
	if (!all) {
		PyBuffer_Release(&v);
		return NULL;
	}
	ts = PyEval_SaveThread(); /* peers may take a while */
	rc = b->allgather(b->ctx, v.buf, (size_t)v.len, PyBytes_AS_STRING(all));
	PyEval_RestoreThread(ts);
	PyBuffer_Release(&v);
	if (rc < 0) {
		Py_DECREF(all);
		return eg__boot_fail(in, "allgather");
	}
	return all;
}

/* env.bcast(data, root) -> bytes: root's data on every rank. */
static PyObject *eg__bcast(PyObject *self, PyObject *args)
{
	eg_py_inst_t *in = eg__boot_inst(self);
	const eg_plugin_boot_t *b = in ? in->env.boot : NULL;
	PyObject *out;
	PyThreadState *ts;
	Py_buffer v;
	unsigned root;
	int rc;

	if (!b || !PyArg_ParseTuple(args, "y*I:bcast", &v, &root))
		return NULL;
	out = PyBytes_FromStringAndSize(v.buf, v.len);
	PyBuffer_Release(&v);
	if (!out)
		return NULL;
	ts = PyEval_SaveThread();
	rc = b->bcast(b->ctx, PyBytes_AS_STRING(out),
		      (size_t)PyBytes_GET_SIZE(out), root);
	PyEval_RestoreThread(ts);
	if (rc < 0) {
		Py_DECREF(out);
		return eg__boot_fail(in, "bcast");
	}
	return out;
}

static PyObject *eg__barrier(PyObject *self, PyObject *unused)
{
	eg_py_inst_t *in = eg__boot_inst(self);
	const eg_plugin_boot_t *b = in ? in->env.boot : NULL;
	PyThreadState *ts;
	int rc;

	(void)unused;
	if (!b)
		return NULL;
	ts = PyEval_SaveThread();
	rc = b->barrier(b->ctx);
	PyEval_RestoreThread(ts);
	if (rc < 0)
		return eg__boot_fail(in, "barrier");
	Py_RETURN_NONE;
}

/* env.mark(end): the library's own call starts (0) or ends (1) now
 * (include/epgate/plugin.h, eg_plugin_env_t.mark); a no-op where epgate
 * offers none. Marks out of order raise. */
static PyObject *eg__mark(PyObject *self, PyObject *args)
{
	eg_py_inst_t *in = eg__boot_inst(self);
	const eg_plugin_env_t *e = in ? &in->env : NULL;
	int end = 0;

	if (!e || !PyArg_ParseTuple(args, "p:mark", &end))
		return NULL;
	if (EG_PLUGIN_HAS(e, eg_plugin_env_t, mark_ctx) && e->mark &&
	    e->mark(e->mark_ctx, end) != EG_PLUGIN_OK) {
		PyErr_Format(PyExc_RuntimeError,
			     "env.mark(%d): out of order (a start twice, or "
			     "an end without a start)",
			     end);
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyMethodDef eg__boot_defs[] = {
    {"allgather", eg__allgather, METH_VARARGS,
     "allgather(data) -> bytes: every rank's data, rank order"},
    {"bcast", eg__bcast, METH_VARARGS,
     "bcast(data, root) -> bytes: root's data"},
    {"barrier", eg__barrier, METH_NOARGS, "barrier()"},
    {"mark", eg__mark, METH_VARARGS,
     "mark(end): the library's own call starts (0) or ends (1) now"},
};

/* types.SimpleNamespace(**kw) (steals kw). */
static PyObject *eg__namespace(PyObject *kw)
{
	PyObject *types = kw ? PyImport_ImportModule("types") : NULL;
	PyObject *ns =
	    types ? PyObject_GetAttrString(types, "SimpleNamespace") : NULL;
	PyObject *args = ns ? PyTuple_New(0) : NULL;
	PyObject *r = args ? PyObject_Call(ns, args, kw) : NULL;

	Py_XDECREF(args);
	Py_XDECREF(ns);
	Py_XDECREF(types);
	Py_XDECREF(kw);
	return r;
}

static PyObject *eg__none(void)
{
	Py_INCREF(Py_None);
	return Py_None;
}

/* kw[key] = v (steals v); -1 on failure. */
static int eg__put(PyObject *kw, const char *key, PyObject *v)
{
	int rc = v ? PyDict_SetItemString(kw, key, v) : -1;

	Py_XDECREF(v);
	return rc;
}

static int eg__put_boot(PyObject *kw, eg_py_inst_t *in)
{
	PyObject *cap = PyCapsule_New(in, "epgate.boot", NULL);
	int rc = cap ? 0 : -1;

	PyObject *mod, *mark = NULL;

	for (int i = 0; rc == 0 && i < 4; i++)
		rc = eg__put(kw, eg__boot_defs[i].ml_name,
			     PyCFunction_New(&eg__boot_defs[i], cap));
	Py_XDECREF(cap);
	/* env.library(): `with env.library(): lib.dispatch(...)` marks it */
	if (rc == 0 && (mark = PyDict_GetItemString(kw, "mark")) &&
	    (mod = PyImport_ImportModule("epgate"))) {
		rc = eg__put(kw, "library",
			     PyObject_CallMethod(mod, "_Library", "O", mark));
		Py_DECREF(mod);
	} else
		rc = -1;
	return rc;
}

PyObject *eg_py_env(eg_py_inst_t *in)
{
	const eg_plugin_env_t *e = &in->env;
	PyObject *kw = PyDict_New();
	int rc = kw ? 0 : -1;
	const struct {
		const char *k;
		unsigned long long v;
	} ints[] = {
	    {"rank", e->rank},
	    {"world", e->world},
	    {"local_rank", e->local_rank},
	    {"local_size", e->local_size},
	    {"experts", e->experts},
	    {"local_experts", e->local_experts},
	    {"topk", e->topk},
	    {"hidden", e->hidden},
	    {"tokens", e->tokens},
	    {"max_tokens", e->max_tokens},
	    {"total_tokens", e->total_tokens},
	};

	for (size_t i = 0; rc == 0 && i < sizeof(ints) / sizeof(ints[0]); i++)
		rc = eg__put(kw, ints[i].k,
			     PyLong_FromUnsignedLongLong(ints[i].v));
	if (rc == 0)
		rc = eg__put(
		    kw, "dtype",
		    PyUnicode_FromString(eg_py_type_name((int)e->dtype)));
	if (rc == 0)
		rc = eg__put(kw, "combine_dtype",
			     PyUnicode_FromString(
				 eg_py_type_name((int)e->combine_dtype)));
	if (rc == 0)
		rc =
		    eg__put(kw, "cuda_device", PyLong_FromLong(e->cuda_device));
	if (rc == 0)
		rc = eg__put(kw, "cuda_stream",
			     PyLong_FromVoidPtr(e->cuda_stream));
	if (rc == 0)
		rc = eg__put(kw, "nccl_comm", PyLong_FromVoidPtr(e->nccl_comm));
	if (rc == 0)
		rc = eg__put(kw, "timeout_s", PyFloat_FromDouble(e->timeout_s));
	if (rc == 0)
		rc = eg__put(kw, "options", eg_py_opts_dict(&in->spec));
	if (rc == 0)
		rc = eg__put_boot(kw, in);
	if (rc < 0)
		Py_CLEAR(kw);
	return eg__namespace(kw);
}

PyObject *eg_py_input(const eg_py_inst_t *in, const eg_plugin_input_t *p)
{
	const eg_plugin_env_t *e = &in->env;
	int dev = in->caps.memory == EG_PLUGIN_MEM_CUDA ? e->cuda_device : -1;
	int idx =
	    in->caps.flags & EG_PLUGIN_INPUT_IDX64 ? EG_PY_I64 : EG_PY_I32;
	Py_ssize_t xs[2] = {p->tokens, e->hidden}, ks[2] = {p->tokens, e->topk};
	Py_ssize_t ss[2] = {p->tokens, e->hidden / 128};
	PyObject *kw = PyDict_New();
	int rc = kw ? 0 : -1;

	if (rc == 0)
		rc = eg__put(kw, "tokens", PyLong_FromUnsignedLong(p->tokens));
	if (rc == 0)
		rc = eg__put(kw, "routing_epoch",
			     PyLong_FromUnsignedLong(p->routing_epoch));
	if (rc == 0)
		rc = eg__put(
		    kw, "x",
		    eg_py_array((void *)p->x, (int)e->dtype, 2, xs, dev, 1));
	if (rc == 0)
		rc = eg__put(kw, "scales",
			     p->scales ? eg_py_array((void *)p->scales,
						     EG_PY_FP32, 2, ss, dev, 1)
				       : eg__none());
	if (rc == 0)
		rc = eg__put(
		    kw, "topk_idx",
		    eg_py_array((void *)p->topk_idx, idx, 2, ks, dev, 1));
	if (rc == 0)
		rc = eg__put(
		    kw, "topk_w",
		    eg_py_array((void *)p->topk_w, EG_PY_FP32, 2, ks, dev, 1));
	if (rc < 0)
		Py_CLEAR(kw);
	return eg__namespace(kw);
}
