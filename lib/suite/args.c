/* Workload overrides (keys given on a command line, parsed in src/opts.c)
 * and loading the workloads a command asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"

static int eg__given(const eg_overrides_t *o, const char *key)
{
	for (unsigned i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return 1;
	return 0;
}

/* A workload built from the defaults and the options that does not
 * validate: which of the values the message names were defaults, and
 * how to give them (" (experts=8 is the default: give --experts)"). */
static void eg__defaults_named(const eg_overrides_t *o, const char *msg,
			       char *buf, size_t len)
{
	static const char *const keys[] = {"world",  "experts", "topk",
					   "hidden", "tokens",	NULL};
	char vals[160] = "", opts[160] = "";
	size_t nv = 0, no = 0;
	int n = 0;

	buf[0] = '\0';
	for (int k = 0; keys[k]; k++) {
		char kv[32];
		const char *at;

		snprintf(kv, sizeof(kv), "%s=", keys[k]);
		at = strstr(msg, kv);
		if (!at || (at > msg && at[-1] != ' ' && at[-1] != '(') ||
		    eg__given(o, keys[k]) || nv >= sizeof(vals) ||
		    no >= sizeof(opts))
			continue;
		nv += (size_t)snprintf(vals + nv, sizeof(vals) - nv, "%s%.*s",
				       n ? ", " : "", (int)strcspn(at, " ,;)"),
				       at);
		no += (size_t)snprintf(opts + no, sizeof(opts) - no, "%s--%s",
				       n ? " or " : "", keys[k]);
		n++;
	}
	if (n)
		snprintf(buf, len, " (%s %s: give %s)", vals,
			 n > 1 ? "are defaults" : "is the default", opts);
}

static int eg__apply(const eg_overrides_t *o, eg_workload_t *w,
		     const char *prog, int defaults)
{
	char err[EG_ERRMSG_MAX], note[256] = "";

	for (unsigned i = 0; i < o->n; i++)
		if (eg_workload_set(w, o->key[i], o->val[i], err) < 0) {
			fprintf(stderr, "%s: --%s=%s: %s\n", prog, o->key[i],
				o->val[i], err);
			return EG_EINVAL;
		}
	if (eg_workload_validate(w, err) < 0) {
		if (defaults)
			eg__defaults_named(o, err, note, sizeof(note));
		fprintf(stderr, "%s: workload %s: %s%s\n", prog, w->name, err,
			note);
		return EG_EINVAL;
	}
	return EG_OK;
}

int eg_overrides_apply(const eg_overrides_t *o, eg_workload_t *w,
		       const char *prog)
{
	return eg__apply(o, w, prog, 0);
}

int eg_cli_load_workloads(const char *prog, const char *file,
			  const eg_overrides_t *o, eg_workload_list_t *wl)
{
	char path[4096], err[EG_ERRMSG_MAX + 512];
	int rc;

	memset(wl, 0, sizeof(*wl));
	if (!file && o->n) {
		/* a single workload from the defaults and the options */
		wl->items = calloc(1, sizeof(*wl->items));
		if (!wl->items)
			return EG_ENOMEM;
		wl->n = 1;
		eg_workload_init(&wl->items[0]);
		snprintf(wl->items[0].name, EG_NAME_MAX, "cli");
		return eg__apply(o, &wl->items[0], prog, 1);
	}
	if (!file) {
		rc = eg_find_data("fixtures/workloads/l1-matrix.ini", path,
				  sizeof(path));
		if (rc < 0) {
			fprintf(
			    stderr,
			    "%s: cannot find fixtures/workloads/l1-matrix.ini "
			    "(set EPGATE_DATADIR)\n",
			    prog);
			return rc;
		}
		file = path;
	}
	rc = eg_workload_load(file, wl, err);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return rc;
	}
	for (size_t i = 0; i < wl->n; i++) {
		rc = eg_overrides_apply(o, &wl->items[i], prog);
		if (rc < 0)
			return rc;
	}
	return EG_OK;
}

int eg_cli_load_filtered(const char *prog, const char *file, const char *filter,
			 const eg_overrides_t *o, eg_workload_list_t *wl)
{
	static const eg_overrides_t none;
	int rc = eg_cli_load_workloads(prog, file, &none, wl);

	if (rc < 0)
		return rc;
	eg_workload_list_filter(wl, filter);
	for (size_t i = 0; o && i < wl->n; i++)
		if ((rc = eg_overrides_apply(o, &wl->items[i], prog)) < 0)
			return rc;
	return EG_OK;
}

int eg_cli_load_data(const char *prog, const char *rel, eg_workload_list_t *wl)
{
	static const eg_overrides_t none;
	char path[4096];
	int rc = eg_find_data(rel, path, sizeof(path));

	memset(wl, 0, sizeof(*wl));
	if (rc < 0) {
		fprintf(stderr, "%s: cannot find %s (set EPGATE_DATADIR)\n",
			prog, rel);
		return rc;
	}
	return eg_cli_load_workloads(prog, path, &none, wl);
}

int eg_cli_list_append(eg_workload_list_t *dst, eg_workload_list_t *src)
{
	eg_workload_t *items;

	if (!src->n) { /* filtered to none: its array still goes */
		free(src->items);
		src->items = NULL;
		return EG_OK;
	}
	items = realloc(dst->items, (dst->n + src->n) * sizeof(*items));
	if (!items)
		return EG_ENOMEM;
	memcpy(items + dst->n, src->items, src->n * sizeof(*items));
	dst->items = items;
	dst->n += src->n;
	free(src->items);
	src->items = NULL;
	src->n = 0;
	return EG_OK;
}

void eg_cli_keep_world(eg_workload_list_t *wl, uint32_t world)
{
	size_t k = 0;

	for (size_t i = 0; i < wl->n; i++) {
		if (wl->items[i].world == world)
			wl->items[k++] = wl->items[i];
		else
			eg_workload_fini(&wl->items[i]);
	}
	wl->n = k;
}

int eg_cli_is_plugin(const char *engine)
{
	return engine && !strncmp(engine, "plugin:", 7);
}
