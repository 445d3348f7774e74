/* The Python bridge's insides (docs/python.md): an epgate plugin that
 * embeds CPython and drives an adapter module written in Python, so that
 * the EP libraries that exist only as Python/torch extensions (DeepEP,
 * pplx-kernels, UCCL-EP) run through epgate's suites. Its files:
 * bridge.c (the plugin table), interp.c (the interpreter, the adapter
 * modules, errors as one line), array.c (epgate's buffers as Python
 * objects, no copies), take.c (the adapter's arrays as pointers), caps.c
 * (the declaration, the env and the inputs as Python objects), recv.c (a
 * dispatch's answer as the native layout). */
#ifndef EG_PY_BRIDGE_H
#define EG_PY_BRIDGE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "epgate/plugin.h"

#define EG_PY_ERR     1024
#define EG_PY_WHY     640 /* a part of a message: room for the rest */
#define EG_PY_NAME    128
#define EG_PY_OPTS    32
#define EG_PY_RECV_NF 10 /* the arrays a dispatch may return */

/* Element types of the arrays that cross the bridge. */
enum {
	EG_PY_BF16 = EG_PLUGIN_DTYPE_BF16,
	EG_PY_FP32 = EG_PLUGIN_DTYPE_FP32,
	EG_PY_FP8 = EG_PLUGIN_DTYPE_FP8,
	EG_PY_I32,
	EG_PY_I64,
	EG_PY_NTYPES
};
/* 2, 4, 1, 4, 8 */
size_t eg_py_type_size(int t);
/* "bf16", "fp32", "fp8", "int32", "int64" */
const char *eg_py_type_name(int t);

/* What the spec's options say: the bridge's own (module=, path=), the
 * rest for the adapter. */
typedef struct eg_py_spec {
	char module[EG_PY_NAME];
	const char *path; /* colon-separated folders, or NULL */
	uint32_t n;
	const char *key[EG_PY_OPTS], *value[EG_PY_OPTS];
} eg_py_spec_t;

int eg_py_spec(const eg_plugin_opts_t *o, eg_py_spec_t *s, char *err,
	       size_t len);

/* ---- interp.c ---------------------------------------------------------- */

/* Starts the interpreter once per process (libpython's symbols made
 * global for extension modules, no signal handlers, faulthandler on,
 * print() to stderr, fork-safe) and leaves the GIL released. */
int eg_py_start(char *err, size_t len);
/* After an instance was made: Python's atexit functions will run at the
 * process's exit, before the destructors of what the adapter loaded. */
void eg_py_made(void);
/* The adapter module of s (path= and the bridge's adapter folders first
 * on sys.path) with its five functions in fn (new references): query,
 * create, dispatch, combine, destroy. Needs the GIL. */
#define EG_PY_FN_QUERY	  0
#define EG_PY_FN_CREATE	  1
#define EG_PY_FN_DISPATCH 2
#define EG_PY_FN_COMBINE  3
#define EG_PY_FN_DESTROY  4
#define EG_PY_NFN	  5
int eg_py_import(const eg_py_spec_t *s, PyObject **fn, char *err, size_t len);
/* The pending exception as one line into buf ("Type: message (file.py:N
 * in func)"), the whole traceback on stderr, each line prefixed with
 * "python adapter MOD: PHASE:"; cleared. EG_PLUGIN_ENOTSUP for a
 * NotImplementedError (the adapter's "not supported"), else
 * EG_PLUGIN_EFAIL. */
int eg_py_exc(const char *mod, const char *phase, char *buf, size_t len);
/* The options of s as a dict (new reference). */
PyObject *eg_py_opts_dict(const eg_py_spec_t *s);

/* ---- array.c ----------------------------------------------------------- */

/* epgate memory as an epgate.Array: the buffer protocol on the host,
 * __cuda_array_interface__ and __dlpack__ on CUDA (and __dlpack__ on the
 * host too). ptr may be NULL for an empty array. */
PyObject *eg_py_array(void *ptr, int type, int ndim, const Py_ssize_t *shape,
		      int cuda_device, int readonly);
/* The type of those (for the builtin module). */
PyTypeObject *eg_py_array_type(void);
/* interp.c: the builtin module "epgate" (Array, ABI_VERSION, the helper
 * that formats exceptions). */
PyObject *eg_py_module_init(void);

/* ---- take.c ------------------------------------------------------------ */

/* An adapter's array held as memory: a buffer-protocol object (host),
 * __cuda_array_interface__ or __dlpack__ (CUDA or host). */
typedef struct eg_py_take {
	PyObject *obj; /* held: the array, or its DLPack capsule */
	Py_buffer view;
	int has_view;
	void *ptr;
	size_t n, itemsize;
} eg_py_take_t;

/* o's memory into t, in the space wanted (cuda or host), C-contiguous.
 * what names the field in the message. Needs the GIL. */
int eg_py_take(PyObject *o, int cuda, const char *what, eg_py_take_t *t,
	       char *err, size_t len);
void eg_py_take_release(eg_py_take_t *t);

/* ---- the instance (bridge.c, caps.c, recv.c) -------------------------- */

typedef struct eg_py_inst {
	eg_plugin_env_t env;
	eg_py_spec_t spec;
	eg_plugin_caps_t caps; /* the adapter's declaration for env */
	uint32_t G;	       /* groups of its layout */
	PyObject *fn[EG_PY_NFN];
	PyObject *state; /* what create returned */
	PyObject *envobj;
	eg_py_take_t held[EG_PY_RECV_NF]; /* the last dispatch's arrays */
	uint32_t stride;		  /* of the last dispatch */
	char err[EG_PY_ERR];
} eg_py_inst_t;

/* caps.c: the adapter's query answer (a dict) into c. */
int eg_py_caps(PyObject *d, eg_plugin_caps_t *c, char *err, size_t len);
/* caps.c: env as a namespace, with allgather, bcast and barrier over
 * epgate's bootstrap (new reference). */
PyObject *eg_py_env(eg_py_inst_t *in);
/* caps.c: one call's input as a namespace (new reference). */
PyObject *eg_py_input(const eg_py_inst_t *in, const eg_plugin_input_t *p);
/* recv.c: a dispatch's answer (a dict or an object with attributes) into
 * out, its arrays held in in->held until the next dispatch. */
int eg_py_recv(eg_py_inst_t *in, PyObject *res, eg_plugin_recv_t *out);
void eg_py_recv_release(eg_py_inst_t *in);

#endif
