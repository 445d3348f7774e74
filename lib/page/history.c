/* The history store: results files at DIR/<profile>/<machine>/<UTC
 * stamp>.json (the layout the regression gates use), one group per
 * profile and machine, its runs in time order.  Every run is judged by
 * the profile's gates in process, its regression gates against the run
 * before it. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "lib/page/page.h"

/* A folder (*want_dir) or a *.json file, not hidden. */
static int eg__keep(const char *dir, const char *name, void *want_dir)
{
	struct stat sb;
	size_t l = strlen(name);
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !(name[0] == '.' || stat(path, &sb) ||
		 (*(int *)want_dir ? !S_ISDIR(sb.st_mode)
				   : !S_ISREG(sb.st_mode) || l < 6 ||
					 strcmp(name + l - 5, ".json")));
}

/* Sorted names in dir: folders (want_dir) or *.json files. */
static int eg__names(const char *dir, int want_dir, char ***out, size_t *n)
{
	return eg_file_names(dir, eg__keep, &want_dir, NULL, out, n);
}

/* "20261129T210637Z" or "2026-11-29T21:06:37Z" (what follows is
 * ignored): seconds since the epoch, or -1. */
static double eg__stamp_time(const char *s)
{
	static const char *const fmts[] = {"%Y%m%dT%H%M%SZ",
					   "%Y-%m-%dT%H:%M:%SZ", NULL};

	for (const char *const *f = fmts; *f; f++) {
		struct tm tm;

		memset(&tm, 0, sizeof(tm));
		if (strptime(s, *f, &tm))
			return (double)timegm(&tm);
	}
	return -1;
}

/* One run: its results and when it ran (the file's stamp, else the
 * results' "created"). */
static int eg__run(eg__hist_t *h, const char *dir, const char *file, char *err,
		   size_t len)
{
	char path[4400];
	eg__hrun_t *r = eg__page_push(&h->runs, h->n_runs, sizeof(*r));
	size_t n;
	int rc;

	if (!r)
		return EG_ENOMEM;
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return eg_err_set(err, len, EG_ERANGE, "%s: path too long",
				  dir);
	n = strlen(file) - 5; /* without ".json" */
	n = n < sizeof(r->stamp) - 1 ? n : sizeof(r->stamp) - 1;
	memcpy(r->stamp, file, n);
	r->stamp[n] = '\0';
	if ((rc = eg_results_read(&r->r, path, err, len)))
		return rc;
	h->n_runs++;
	r->t = eg__stamp_time(r->stamp);
	if (r->t < 0) {
		const char *c =
		    json_string_value(json_object_get(r->r.context, "created"));

		r->t = c ? eg__stamp_time(c) : -1;
	}
	if (r->t < 0)
		return eg_err_set(err, len, EG_EPARSE,
				  "%s: the name is not a UTC stamp "
				  "(yyyymmddThhmmssZ) and the results say "
				  "no \"created\"",
				  path);
	return EG_OK;
}

static int eg__by_time(const void *a, const void *b)
{
	const eg__hrun_t *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* Every run judged: the current one, against the one before it. */
static int eg__judge(eg__hist_t *h)
{
	for (size_t i = 0; i < h->n_runs; i++) {
		eg__hrun_t *r = &h->runs[i];
		eg_gate_data_t d = {&r->r, 1, i ? &h->runs[i - 1].r : NULL,
				    i ? 1 : 0};

		char cerr[EG_GATE_ERR_MAX] = "";
		int bad;

		r->gr = calloc(h->gf.n_gates + 1, sizeof(*r->gr));
		if (!r->gr)
			return EG_ENOMEM;
		bad = eg_gate_file_check(&h->gf, &d, cerr, sizeof(cerr)) < 0;
		for (size_t k = 0; k < h->gf.n_gates; k++) {
			eg__gres_t *g = &r->gr[k];
			int rc;

			g->g = &h->gf.gates[k];
			rc = bad ? EG_EPARSE
				 : eg_gate_eval(&h->gf, g->g, &d, &g->res,
						g->err, sizeof(g->err));
			if (bad)
				snprintf(g->err, sizeof(g->err), "%s", cerr);
			else if (rc < 0 && rc != EG_EPARSE)
				snprintf(g->err, sizeof(g->err), "gate %s: %s",
					 g->g->name, eg_strerror(rc));
			g->hard = rc < 0;
		}
	}
	return EG_OK;
}

/* One profile and machine: its runs in time order, judged. */
static int eg__group(eg__hist_t *h, const char *dir, const char *gates,
		     char *err, size_t len)
{
	char **files;
	size_t n;
	int rc = eg__names(dir, 0, &files, &n);

	for (size_t i = 0; !rc && i < n; i++)
		rc = eg__run(h, dir, files[i], err, len);
	eg_file_names_free(files, n);
	if (rc)
		return rc;
	qsort(h->runs, h->n_runs, sizeof(*h->runs), eg__by_time);
	if (gates)
		snprintf(h->gates_path, sizeof(h->gates_path), "%s", gates);
	else if (eg__page_find_gates(h->profile, h->gates_path,
				     sizeof(h->gates_path))) {
		snprintf(h->gerr, sizeof(h->gerr),
			 "no gate file for profile %s", h->profile);
		return EG_OK;
	}
	if (eg_gate_file_load(&h->gf, h->gates_path, err, len))
		return EG_EPARSE;
	h->have_gf = 1;
	return eg__judge(h);
}

static int eg__hist_add(eg__hist_t **out, size_t *n, const char *profile,
			const char *machine)
{
	eg__hist_t *h = eg__page_push(out, *n, sizeof(*h));

	if (!h)
		return EG_ENOMEM;
	(*n)++;
	snprintf(h->profile, sizeof(h->profile), "%s", profile);
	snprintf(h->machine, sizeof(h->machine), "%s", machine);
	h->changes = json_array();
	return h->changes ? EG_OK : EG_ENOMEM;
}

int eg__history_load(const char *dir, const char *gates, eg__hist_t **out,
		     size_t *n, char *err, size_t len)
{
	char **profs, **machs, path[4400];
	size_t np, nm;
	int rc = eg__names(dir, 1, &profs, &np);

	*out = NULL;
	*n = 0;
	if (rc == EG_ENOENT)
		return eg_err_set(err, len, rc, "--history %s: not a folder",
				  dir);
	for (size_t i = 0; !rc && i < np; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, profs[i]);
		rc = eg__names(path, 1, &machs, &nm);
		for (size_t k = 0; !rc && k < nm; k++) {
			snprintf(path, sizeof(path), "%s/%s/%s", dir, profs[i],
				 machs[k]);
			rc = eg__hist_add(out, n, profs[i], machs[k]);
			if (!rc)
				rc = eg__group(&(*out)[*n - 1], path, gates,
					       err, len);
		}
		eg_file_names_free(machs, nm);
	}
	eg_file_names_free(profs, np);
	if (!rc && !*n)
		rc = eg_err_set(err, len, EG_ENOENT,
				"--history %s: no results at "
				"PROFILE/MACHINE/STAMP.json",
				dir);
	if (rc == EG_ENOMEM)
		snprintf(err, len, "out of memory");
	return rc;
}

void eg__history_free(eg__hist_t *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; r < h[i].n_runs; r++) {
			for (size_t k = 0;
			     h[i].runs[r].gr && k < h[i].gf.n_gates; k++)
				if (!h[i].runs[r].gr[k].hard)
					eg_gate_result_fini(
					    &h[i].runs[r].gr[k].res);
			free(h[i].runs[r].gr);
			eg_results_free(&h[i].runs[r].r);
		}
		for (size_t k = 0; k < h[i].n_ch; k++)
			eg__chart_fini(&h[i].ch[k]);
		free(h[i].runs);
		free(h[i].ch);
		json_decref(h[i].changes);
		if (h[i].have_gf)
			eg_gate_file_free(&h[i].gf);
	}
	free(h);
}
