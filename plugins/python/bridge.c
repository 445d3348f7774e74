/* The Python bridge plugin (docs/python.md): `--engine
 * plugin:python,module=NAME[,path=DIR][,key=value...]` runs the adapter
 * module NAME, written in Python, as an epgate plugin. Every ABI call
 * becomes a call of the module's function of the same name with the GIL
 * held; an exception becomes the call's failure, named by adapter and
 * phase with the line it was raised at (NotImplementedError: "not
 * supported", a skip). One interpreter per process, started by the first
 * query. */
#include "bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eg_py_spec(const eg_plugin_opts_t *o, eg_py_spec_t *s, char *err,
	       size_t len)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < o->n; i++) {
		const char *k = o->key[i], *v = o->value[i];

		if (!strcmp(k, "module"))
			snprintf(s->module, sizeof(s->module), "%s", v);
		else if (!strcmp(k, "path"))
			s->path = v;
		else if (s->n < EG_PY_OPTS) {
			s->key[s->n] = k;
			s->value[s->n++] = v;
		}
	}
	if (!s->module[0] ||
	    strspn(s->module,
		   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
		   "OPQRSTUVWXYZ0123456789_.") != strlen(s->module)) {
		snprintf(err, len,
			 "want module=NAME, the adapter module to run (a "
			 "Python module name; path=DIR adds its folder): "
			 "docs/python.md");
		return EG_PLUGIN_EFAIL;
	}
	return EG_PLUGIN_OK;
}

/* The adapter's declaration for s's options (GIL held). */
static int eg__declare(const eg_py_spec_t *s, PyObject *query,
		       eg_plugin_caps_t *c, char *err, size_t len)
{
	PyObject *opts = eg_py_opts_dict(s), *res;
	char why[EG_PY_WHY] = "";
	int rc;

	res = opts ? PyObject_CallFunctionObjArgs(query, opts, NULL) : NULL;
	Py_XDECREF(opts);
	if (!res) {
		eg_py_exc(s->module, "query", why, sizeof(why));
		snprintf(err, len, "adapter %s: query: %s", s->module, why);
		return EG_PLUGIN_EFAIL;
	}
	rc = eg_py_caps(res, c, why, sizeof(why));
	Py_DECREF(res);
	if (rc < 0)
		snprintf(err, len, "adapter %s: %s", s->module, why);
	return rc;
}

static int eg__query(const eg_plugin_opts_t *o, eg_plugin_caps_t *c, char *err,
		     size_t len)
{
	PyObject *fn[EG_PY_NFN];
	PyGILState_STATE g;
	eg_py_spec_t s;
	int rc;

	if ((rc = eg_py_spec(o, &s, err, len)) < 0 ||
	    (rc = eg_py_start(err, len)) < 0)
		return rc;
	g = PyGILState_Ensure();
	rc = eg_py_import(&s, fn, err, len);
	if (rc == EG_PLUGIN_OK) {
		rc = eg__declare(&s, fn[EG_PY_FN_QUERY], c, err, len);
		for (int i = 0; i < EG_PY_NFN; i++)
			Py_DECREF(fn[i]);
	}
	PyGILState_Release(g);
	return rc;
}

static void eg__free(eg_py_inst_t *in)
{
	eg_py_recv_release(in);
	Py_CLEAR(in->state);
	Py_CLEAR(in->envobj);
	for (int i = 0; i < EG_PY_NFN; i++)
		Py_CLEAR(in->fn[i]);
	free(in);
}

/* The instance's module, declaration and env; the adapter's create. */
static int eg__make(eg_py_inst_t *in, char *err, size_t len)
{
	eg_plugin_caps_t *c = &in->caps;
	int rc;

	if ((rc = eg_py_import(&in->spec, in->fn, err, len)) < 0)
		return rc;
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	if ((rc = eg__declare(&in->spec, in->fn[EG_PY_FN_QUERY], c, err, len)) <
	    0)
		return rc;
	in->G = c->layout == EG_PLUGIN_LAYOUT_FLAT ? 1
		: c->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR
		    ? in->env.world
		    : in->env.local_experts;
	if (!(in->envobj = eg_py_env(in))) {
		eg_py_exc(in->spec.module, "create", err, len);
		return EG_PLUGIN_EFAIL;
	}
	in->state = PyObject_CallFunctionObjArgs(in->fn[EG_PY_FN_CREATE],
						 in->envobj, NULL);
	if (!in->state) {
		char why[EG_PY_WHY];

		rc = eg_py_exc(in->spec.module, "create", why, sizeof(why));
		snprintf(err, len, "adapter %s: %s", in->spec.module, why);
		return rc;
	}
	return EG_PLUGIN_OK;
}

static int eg__create(const eg_plugin_env_t *e, void **out, char *err,
		      size_t len)
{
	eg_py_inst_t *in = calloc(1, sizeof(*in));
	PyGILState_STATE g;
	int rc;

	*out = NULL;
	if (!in) {
		snprintf(err, len, "out of memory");
		return EG_PLUGIN_EFAIL;
	}
	in->env = *e;
	if ((rc = eg_py_spec(&e->opts, &in->spec, err, len)) < 0 ||
	    (rc = eg_py_start(err, len)) < 0) {
		free(in);
		return rc;
	}
	g = PyGILState_Ensure();
	rc = eg__make(in, err, len);
	if (rc < 0) {
		eg__free(in);
	} else {
		*out = in;
		eg_py_made();
	}
	PyGILState_Release(g);
	return rc;
}

/* A failed call: the exception into in->err, its code returned. */
static int eg__raised(eg_py_inst_t *in, const char *phase)
{
	char why[EG_PY_WHY];
	int rc = eg_py_exc(in->spec.module, phase, why, sizeof(why));

	snprintf(in->err, sizeof(in->err), "adapter %s: %s", in->spec.module,
		 why);
	return rc;
}

static int eg__dispatch(void *p, const eg_plugin_input_t *pin,
			eg_plugin_recv_t *out)
{
	eg_py_inst_t *in = p;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *inp = eg_py_input(in, pin), *res = NULL;
	int rc;

	if (inp)
		res = PyObject_CallFunctionObjArgs(in->fn[EG_PY_FN_DISPATCH],
						   in->state, inp, NULL);
	if (!res)
		rc = eg__raised(in, "dispatch");
	else if (res == Py_None) {
		snprintf(in->err, sizeof(in->err),
			 "adapter %s: dispatch returned None; want a dict "
			 "(or an object) of the native layout's arrays",
			 in->spec.module);
		rc = EG_PLUGIN_EFAIL;
	} else
		rc = eg_py_recv(in, res, out);
	Py_XDECREF(res);
	Py_XDECREF(inp);
	PyGILState_Release(g);
	return rc;
}

/* What combine returned instead of writing out (host only): copied in,
 * when it is the right size. */
static int eg__combine_result(eg_py_inst_t *in, PyObject *res, void *out,
			      size_t n)
{
	size_t cb = eg_py_type_size((int)in->env.combine_dtype);
	char why[EG_PY_WHY];
	eg_py_take_t t;

	if (in->caps.memory == EG_PLUGIN_MEM_CUDA) {
		snprintf(in->err, sizeof(in->err),
			 "adapter %s: combine returned a %s: a CUDA adapter "
			 "writes its result into out (and returns None)",
			 in->spec.module, Py_TYPE(res)->tp_name);
		return EG_PLUGIN_EFAIL;
	}
	if (eg_py_take(res, 0, "combine's result", &t, why, sizeof(why)) < 0) {
		snprintf(in->err, sizeof(in->err), "adapter %s: %s",
			 in->spec.module, why);
		return EG_PLUGIN_EFAIL;
	}
	if (t.n != n || t.itemsize != cb) {
		snprintf(in->err, sizeof(in->err),
			 "adapter %s: combine returned %zu elements of %zu "
			 "bytes; want tokens x hidden = %zu elements of %zu "
			 "bytes (%s)",
			 in->spec.module, t.n, t.itemsize, n, cb,
			 eg_py_type_name((int)in->env.combine_dtype));
		eg_py_take_release(&t);
		return EG_PLUGIN_EFAIL;
	}
	memcpy(out, t.ptr, n * cb);
	eg_py_take_release(&t);
	return EG_PLUGIN_OK;
}

static int eg__combine(void *p, const eg_plugin_input_t *pin, const void *y,
		       void *out)
{
	eg_py_inst_t *in = p;
	const eg_plugin_env_t *e = &in->env;
	int dev = in->caps.memory == EG_PLUGIN_MEM_CUDA ? e->cuda_device : -1;
	Py_ssize_t ys[2] = {(Py_ssize_t)in->G * in->stride, e->hidden};
	Py_ssize_t os[2] = {pin->tokens, e->hidden};
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *inp = eg_py_input(in, pin), *res = NULL;
	PyObject *ya =
	    eg_py_array((void *)y, (int)e->combine_dtype, 2, ys, dev, 1);
	PyObject *oa = eg_py_array(out, (int)e->combine_dtype, 2, os, dev, 0);
	int rc;

	if (inp && ya && oa)
		res = PyObject_CallFunctionObjArgs(
		    in->fn[EG_PY_FN_COMBINE], in->state, inp, ya, oa, NULL);
	if (!res)
		rc = eg__raised(in, "combine");
	else
		rc = res == Py_None
			 ? EG_PLUGIN_OK
			 : eg__combine_result(in, res, out,
					      (size_t)pin->tokens * e->hidden);
	Py_XDECREF(res);
	Py_XDECREF(oa);
	Py_XDECREF(ya);
	Py_XDECREF(inp);
	PyGILState_Release(g);
	return rc;
}

static void eg__destroy(void *p)
{
	eg_py_inst_t *in = p;
	PyGILState_STATE g;
	PyObject *r;

	if (!in)
		return;
	g = PyGILState_Ensure();
	eg_py_recv_release(in);
	r = PyObject_CallFunctionObjArgs(in->fn[EG_PY_FN_DESTROY], in->state,
					 NULL);
	if (!r)
		eg__raised(in, "destroy"); /* said on stderr; nothing to undo */
	Py_XDECREF(r);
	eg__free(in);
	PyGILState_Release(g);
}

static const char *eg__error(void *p)
{
	return ((eg_py_inst_t *)p)->err;
}

static const eg_plugin_t eg__plugin = {
    .size = sizeof(eg_plugin_t),
    .abi_version = EG_PLUGIN_ABI_VERSION,
    .name = "python",
    .version = "bridge 1, CPython " PY_VERSION,
    .query = eg__query,
    .create = eg__create,
    .dispatch = eg__dispatch,
    .combine = eg__combine,
    .destroy = eg__destroy,
    .error = eg__error,
};

const eg_plugin_t *eg_plugin_entry(uint32_t host_abi)
{
	(void)host_abi;
	return &eg__plugin;
}
