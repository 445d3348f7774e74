/* The interpreter the bridge embeds, the adapter modules it imports and
 * the exceptions they raise as one line (docs/python.md). */
#define _GNU_SOURCE 1 /* dladdr; pyconfig.h defines it the same way */
#include "bridge.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef EG_PY_PROGRAM /* the interpreter configure found */
#define EG_PY_PROGRAM "python3"
#endif

static int eg__started; /* 1 running, -1 failed to start */
static char eg__start_err[EG_PY_ERR];
static int eg__fork_own; /* the fork in progress is not Python's own */
static PyGILState_STATE eg__fork_gil;

/* A fork by epgate (L1 runs each case in a forked child after query
 * started Python here): the GIL and the import lock are taken before it
 * and the child's interpreter state is renewed after, as os.fork does.
 * A fork Python makes itself (it holds the GIL) is left to Python. */
static void eg__before_fork(void)
{
	eg__fork_own = !PyGILState_Check();
	if (!eg__fork_own)
		return;
	eg__fork_gil = PyGILState_Ensure();
	PyOS_BeforeFork();
}

static void eg__after_parent(void)
{
	if (!eg__fork_own)
		return;
	PyOS_AfterFork_Parent();
	PyGILState_Release(eg__fork_gil);
}

static void eg__after_child(void)
{
	if (!eg__fork_own)
		return;
	PyOS_AfterFork_Child();
	PyGILState_Release(eg__fork_gil);
}

/* Python's atexit functions at the process's exit: the bridge never
 * finalizes the interpreter, and a library's threads must be stopped
 * before C's exit runs the destructors (torch's NCCL watchdog aborted an
 * L2 rank at exit without dist.destroy_process_group). Registered after
 * the first instance is made (eg_py_made), so that it runs before the
 * destructors of what the adapter loaded (C's exit runs them last
 * registered first): registered at the interpreter's start, it ran after
 * torch's CUDA side was gone and dist.destroy_process_group aborted the
 * rank ("dummyHasPrimaryContext", one H100, 2026-12-07). A handler of a
 * shared object runs at its dlclose instead, if that comes first. */
static void eg__at_exit(void)
{
	PyGILState_STATE g;

	if (eg__started <= 0 || !Py_IsInitialized())
		return;
	g = PyGILState_Ensure();
	if (PyRun_SimpleString("import atexit\natexit._run_exitfuncs()\n"))
		PyErr_Clear();
	PyGILState_Release(g);
}

void eg_py_made(void)
{
	static int registered;

	if (!registered)
		registered = atexit(eg__at_exit) == 0;
}

/* epgate loads the bridge with RTLD_LOCAL, and libpython with it: the
 * extension modules Python loads later (numpy, torch) expect libpython's
 * symbols in the global scope, so it is promoted there. */
static void eg__libpython_global(void)
{
	Dl_info di;

	if (dladdr((void *)(uintptr_t)&Py_InitializeFromConfig, &di) &&
	    di.dli_fname)
		(void)dlopen(di.dli_fname,
			     RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

/* EPGATE_PYTHON, else configure's interpreter: the program Python takes
 * its prefix from, so that a venv's interpreter brings the venv's
 * packages (its pyvenv.cfg). */
static PyStatus eg__config(PyConfig *c)
{
	static char *const argv[] = {"epgate"};
	const char *prog = getenv("EPGATE_PYTHON");
	PyStatus st;

	PyConfig_InitPythonConfig(c);
	c->install_signal_handlers = 0; /* epgate owns its signals */
	c->parse_argv = 0;
	c->faulthandler = 1; /* a crash shows the Python stack */
	c->buffered_stdio = 0;
	c->write_bytecode = 0; /* no __pycache__ in source trees */
	st = PyConfig_SetBytesString(c, &c->program_name,
				     prog && *prog ? prog : EG_PY_PROGRAM);
	if (!PyStatus_Exception(st))
		st = PyConfig_SetBytesArgv(c, 1, argv);
	return st;
}

int eg_py_start(char *err, size_t len)
{
	PyConfig c;
	PyStatus st;

	if (eg__started) {
		if (eg__started < 0)
			snprintf(err, len, "%s", eg__start_err);
		return eg__started > 0 ? EG_PLUGIN_OK : EG_PLUGIN_EFAIL;
	}
	eg__libpython_global();
	if (PyImport_AppendInittab("epgate", eg_py_module_init) < 0) {
		st = PyStatus_Error("cannot register the module epgate");
	} else {
		st = eg__config(&c);
		if (!PyStatus_Exception(st))
			st = Py_InitializeFromConfig(&c);
		PyConfig_Clear(&c);
	}
	if (PyStatus_Exception(st)) {
		snprintf(eg__start_err, sizeof(eg__start_err),
			 "cannot start Python %s (EPGATE_PYTHON, else "
			 "configure's --with-python): %s",
			 PY_VERSION,
			 st.err_msg ? st.err_msg : "no reason given");
		eg__started = -1;
		snprintf(err, len, "%s", eg__start_err);
		return EG_PLUGIN_EFAIL;
	}
	/* epgate's stdout carries its reports (TAP) */
	PyRun_SimpleString("import sys, epgate\nsys.stdout = sys.stderr\n");
	pthread_atfork(eg__before_fork, eg__after_parent, eg__after_child);
	eg__started = 1;
	(void)PyEval_SaveThread(); /* every call takes the GIL itself */
	return EG_PLUGIN_OK;
}

/* The folder of the bridge's own adapters: next to the .so (a bundle),
 * else the source tree's (a build tree), else the installed one. */
static const char *eg__adapters_dir(void)
{
	static char dir[4096];
	const char *cand[3] = {dir, EG_PY_SRC_ADAPTERS, EG_PY_INST_ADAPTERS};
	struct stat sb;
	Dl_info di;

	dir[0] = '\0';
	if (dladdr((void *)(uintptr_t)&eg_py_start, &di) && di.dli_fname) {
		const char *slash = strrchr(di.dli_fname, '/');
		int n = slash ? (int)(slash - di.dli_fname) : 1;

		snprintf(dir, sizeof(dir), "%.*s/adapters", n,
			 slash ? di.dli_fname : ".");
	}
	for (int i = 0; i < 3; i++)
		if (cand[i][0] && stat(cand[i], &sb) == 0 &&
		    S_ISDIR(sb.st_mode))
			return cand[i];
	return NULL;
}

/* dir first on sys.path at index *at (unless it is there already). */
static void eg__path_add(const char *dir, size_t n, Py_ssize_t *at)
{
	PyObject *path = PySys_GetObject("path"); /* borrowed */
	PyObject *d = PyUnicode_DecodeFSDefaultAndSize(dir, (Py_ssize_t)n);

	if (path && d && PyList_Check(path) && !PySequence_Contains(path, d) &&
	    PyList_Insert(path, *at, d) == 0)
		(*at)++;
	Py_XDECREF(d);
	PyErr_Clear();
}

static void eg__sys_path(const char *path)
{
	const char *own = eg__adapters_dir();
	Py_ssize_t at = 0;

	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n)
			eg__path_add(path, n, &at);
		path += n + (path[n] == ':');
	}
	if (own)
		eg__path_add(own, strlen(own), &at);
}

/* The first entries of sys.path, for a module that is not found. */
static void eg__path_head(char *buf, size_t len)
{
	PyObject *path = PySys_GetObject("path"); /* borrowed */
	size_t u = 0;

	buf[0] = '\0';
	for (Py_ssize_t i = 0; path && PyList_Check(path) && i < 3 &&
			       i < PyList_GET_SIZE(path) && u + 8 < len;
	     i++) {
		const char *d = PyUnicode_AsUTF8(PyList_GET_ITEM(path, i));

		u += (size_t)snprintf(buf + u, len - u, "%s%s", i ? ", " : "",
				      d ? d : "?");
	}
	if (u + 8 < len && path && PyList_GET_SIZE(path) > 3)
		snprintf(buf + u, len - u, ", ...");
	PyErr_Clear();
}

/* m.__file__ as UTF-8 into buf ("?" without one). */
static void eg__file_of(PyObject *m, char *buf, size_t len)
{
	PyObject *f = PyObject_GetAttrString(m, "__file__");
	const char *s = f && PyUnicode_Check(f) ? PyUnicode_AsUTF8(f) : NULL;

	snprintf(buf, len, "%s", s ? s : "?");
	Py_XDECREF(f);
	PyErr_Clear();
}

int eg_py_import(const eg_py_spec_t *s, PyObject **fn, char *err, size_t len)
{
	static const char *const names[EG_PY_NFN] = {
	    "query", "create", "dispatch", "combine", "destroy"};
	char why[EG_PY_WHY], file[512];
	PyObject *m;

	memset(fn, 0, EG_PY_NFN * sizeof(*fn));
	eg__sys_path(s->path);
	m = PyImport_ImportModule(s->module);
	if (!m) {
		eg_py_exc(s->module, "import", why, sizeof(why));
		eg__path_head(file, sizeof(file));
		snprintf(err, len,
			 "adapter %s: cannot import it: %s (sys.path: %s)",
			 s->module, why, file);
		return EG_PLUGIN_EFAIL;
	}
	for (int i = 0; i < EG_PY_NFN; i++) {
		fn[i] = PyObject_GetAttrString(m, names[i]);
		if (fn[i] && PyCallable_Check(fn[i]))
			continue;
		PyErr_Clear();
		eg__file_of(m, file, sizeof(file));
		snprintf(err, len,
			 "adapter %s (%s): no function %s(); an adapter "
			 "module defines query, create, dispatch, combine and "
			 "destroy (docs/python.md)",
			 s->module, file, names[i]);
		for (int j = 0; j <= i; j++)
			Py_CLEAR(fn[j]);
		Py_DECREF(m);
		return EG_PLUGIN_EFAIL;
	}
	Py_DECREF(m);
	return EG_PLUGIN_OK;
}

/* The pending exception (new reference, normalized, traceback attached)
 * or NULL. */
static PyObject *eg__fetch(void)
{
#if PY_VERSION_HEX >= 0x030C0000
	return PyErr_GetRaisedException();
#else
	PyObject *t, *v, *tb;

	PyErr_Fetch(&t, &v, &tb);
	if (!t)
		return NULL;
	PyErr_NormalizeException(&t, &v, &tb);
	if (v && tb)
		PyException_SetTraceback(v, tb);
	Py_XDECREF(t);
	Py_XDECREF(tb);
	return v;
#endif
}

int eg_py_exc(const char *mod, const char *phase, char *buf, size_t len)
{
	PyObject *e = eg__fetch(), *m = NULL, *line = NULL;
	int notsup;
	char prefix[EG_PY_NAME + 64];

	if (!e) {
		snprintf(buf, len, "failed without a Python exception");
		return EG_PLUGIN_EFAIL;
	}
	notsup = PyErr_GivenExceptionMatches(e, PyExc_NotImplementedError);
	snprintf(prefix, sizeof(prefix), "python adapter %s: %s:", mod, phase);
	m = PyImport_ImportModule("epgate");
	if (m)
		line = PyObject_CallMethod(m, "_exc_line", "Osi", e, prefix,
					   !notsup);
	if (line && PyUnicode_Check(line))
		snprintf(buf, len, "%s", PyUnicode_AsUTF8(line));
	else
		snprintf(buf, len, "%s (its message could not be read)",
			 Py_TYPE(e)->tp_name);
	PyErr_Clear();
	Py_XDECREF(line);
	Py_XDECREF(m);
	Py_DECREF(e);
	return notsup ? EG_PLUGIN_ENOTSUP : EG_PLUGIN_EFAIL;
}

PyObject *eg_py_opts_dict(const eg_py_spec_t *s)
{
	PyObject *d = PyDict_New();

	for (uint32_t i = 0; d && i < s->n; i++) {
		PyObject *v = PyUnicode_FromString(s->value[i]);

		if (!v || PyDict_SetItemString(d, s->key[i], v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

/* What the helper module runs: one line for epgate's report, the whole
 * traceback on stderr (the rank's log). */
static const char eg__helpers[] =
    "import os as _os, sys as _sys, traceback as _tb\n"
    "def _exc_line(e, prefix, show):\n"
    "    msg = ' '.join(str(e).split())\n"
    "    if not show:\n"
    "        return msg or type(e).__name__\n"
    "    text = ''.join(_tb.format_exception(type(e), e, "
    "e.__traceback__))\n"
    "    for line in text.rstrip().splitlines():\n"
    "        print(prefix, line, file=_sys.stderr)\n"
    "    frames = [f for f in _tb.extract_tb(e.__traceback__)\n"
    "              if not f.filename.startswith('<frozen')]\n"
    "    where = ''\n"
    "    if frames:\n"
    "        f = frames[-1]\n"
    "        where = ' (%s:%d in %s)' % (_os.path.basename(f.filename), "
    "f.lineno, f.name)\n"
    "    return '%s: %s%s' % (type(e).__name__, msg, where)\n"
    "class _Library(object):\n"
    "    '''env.library(): with it around the library's own call, epgate\n"
    "    times that call (docs/python.md, \"Timing the library\")'''\n"
    "    __slots__ = ('_mark',)\n"
    "    def __init__(self, mark):\n"
    "        self._mark = mark\n"
    "    def __call__(self):\n"
    "        return self\n"
    "    def __enter__(self):\n"
    "        self._mark(0)\n"
    "        return self\n"
    "    def __exit__(self, t, v, tb):\n"
    "        if t is None:\n"
    "            self._mark(1)\n"
    "        return False\n";

static struct PyModuleDef eg__moddef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "epgate",
    .m_doc = "epgate's Python bridge: the Array type of the buffers it "
	     "passes (docs/python.md)",
    .m_size = -1,
};

PyObject *eg_py_module_init(void)
{
	PyObject *m = PyModule_Create(&eg__moddef), *d, *r;
	PyTypeObject *t = eg_py_array_type();

	if (!m || PyType_Ready(t) < 0)
		goto fail;
	Py_INCREF(t);
	if (PyModule_AddObject(m, "Array", (PyObject *)t) < 0) {
		Py_DECREF(t);
		goto fail;
	}
	if (PyModule_AddIntConstant(m, "ABI_VERSION", EG_PLUGIN_ABI_VERSION) <
	    0)
		goto fail;
	d = PyModule_GetDict(m); /* borrowed */
	if (PyDict_SetItemString(d, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto fail;
	r = PyRun_String(eg__helpers, Py_file_input, d, d);
	if (!r)
		goto fail;
	Py_DECREF(r);
	return m;
fail:
	Py_XDECREF(m);
	return NULL;
}
