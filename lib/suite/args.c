/* Workload overrides (keys given on a command line, parsed in src/opts.c)
 * and loading the workloads a command asks for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"

int eg_overrides_apply(const eg_overrides_t *o, eg_workload_t *w,
		       const char *prog)
{
	char err[EG_ERRMSG_MAX];

	for (unsigned i = 0; i < o->n; i++)
		if (eg_workload_set(w, o->key[i], o->val[i], err) < 0) {
			fprintf(stderr, "%s: --%s=%s: %s\n", prog, o->key[i],
				o->val[i], err);
			return EG_EINVAL;
		}
	if (eg_workload_validate(w, err) < 0) {
		fprintf(stderr, "%s: workload %s: %s\n", prog, w->name, err);
		return EG_EINVAL;
	}
	return EG_OK;
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
		return eg_overrides_apply(o, &wl->items[0], prog);
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
	size_t n = 0;
	int rc = eg_cli_load_workloads(prog, file, &none, wl);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < wl->n; i++) {
		if (filter && !strstr(wl->items[i].name, filter)) {
			eg_workload_fini(&wl->items[i]);
			continue;
		}
		wl->items[n++] = wl->items[i];
	}
	wl->n = n;
	for (size_t i = 0; o && i < n; i++)
		if ((rc = eg_overrides_apply(o, &wl->items[i], prog)) < 0)
			return rc;
	return EG_OK;
}
