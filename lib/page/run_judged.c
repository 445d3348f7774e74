/* A run folder's gate runs as they ran (lib/gate/run_record.c): each
 * STEM.judged.json names the gate file, the results and the baseline it
 * judged; the page judges those files by that gate file, so its verdicts
 * and charts are the run's own (a gate file given as ./mini.gate, a
 * history baseline, results outside the folder).  A record whose files
 * cannot be read here is said on the page; its verdicts then come from
 * its JUnit report. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "lib/page/page.h"

static int eg__is_record(const char *dir, const char *name, void *arg)
{
	size_t n = strlen(name), k = strlen(".judged.json");

	(void)dir;
	(void)arg;
	return n > k && !strcmp(name + n - k, ".judged.json");
}

/* A record's file: "path" inside the folder by name, else absolute. */
static void eg__path(const char *dir, const json_t *f, char *out, size_t len)
{
	const char *p = json_string_value(json_object_get(f, "path"));

	if (!p)
		snprintf(out, len, "%s", "");
	else if (p[0] == '/')
		snprintf(out, len, "%s", p);
	else
		snprintf(out, len, "%s/%s", dir, p);
}

/* The files of a record's list, read; each keeps the path the gate run
 * was given (its repro line says it so). */
static int eg__read_list(const char *dir, const json_t *a, int history,
			 eg_results_t **out, size_t *n, char *err, size_t len)
{
	size_t i, cnt = json_array_size(a);
	const json_t *f;
	int rc = EG_OK;

	*n = 0;
	*out = calloc(cnt + 1, sizeof(**out));
	if (!*out)
		return EG_ENOMEM;
	json_array_foreach((json_t *)a, i, f)
	{
		const char *given =
		    json_string_value(json_object_get(f, "given"));
		char path[4400], *g;

		eg__path(dir, f, path, sizeof(path));
		if ((rc = eg_results_read(&(*out)[i], path, err, len)) < 0)
			break;
		(*n)++;
		(*out)[i].history = history;
		if (given && (g = strdup(given))) {
			free((*out)[i].path);
			(*out)[i].path = g;
		}
	}
	return rc;
}

/* The folder's results files a record names (by name: inside it). */
static int eg__claim(const json_t *a, char ***claimed, size_t *n)
{
	size_t i;
	const json_t *f;

	json_array_foreach((json_t *)a, i, f)
	{
		const char *p = json_string_value(json_object_get(f, "path"));
		char **c;

		if (!p || p[0] == '/')
			continue;
		if (!(c = realloc(*claimed, (*n + 1) * sizeof(*c))) ||
		    !(c[*n] = strdup(p))) {
			if (c)
				*claimed = c;
			return EG_ENOMEM;
		}
		*claimed = c;
		(*n)++;
	}
	return EG_OK;
}

/* One record into a profile of the page, or a note saying why not. */
static int eg__record(eg__page_t *pg, const char *dir, const char *name,
		      char ***claimed, size_t *n_claimed)
{
	char path[4400], err[4400];
	json_error_t je;
	json_t *j;
	eg_results_t *cur = NULL, *base = NULL;
	size_t nc = 0, nb = 0;
	eg__prof_t *p = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(j = json_load_file(path, 0, &je))) {
		eg__page_note(pg,
			      "%s: malformed (%s): its gates are shown "
			      "from its JUnit report.",
			      name, je.text);
		return EG_OK;
	}
	rc = eg__read_list(dir, json_object_get(j, "results"), 0, &cur, &nc,
			   err, sizeof(err));
	if (rc >= 0)
		rc = eg__read_list(dir, json_object_get(j, "baseline"),
				   json_is_true(json_object_get(j, "history")),
				   &base, &nb, err, sizeof(err));
	if (rc >= 0 && nc)
		p = eg__page_push(&pg->prof, pg->n_prof, sizeof(*p));
	if (rc >= 0 && nc && !p)
		rc = EG_ENOMEM;
	else if (rc != EG_ENOMEM && (rc < 0 || !nc))
		eg__page_note(pg,
			      "%s: %s: its gates are shown from its JUnit "
			      "report, without charts.",
			      name, rc < 0 ? err : "no results named");
	if (rc < 0 || !nc) {
		eg_results_free_all(cur, nc);
		eg_results_free_all(base, nb);
		json_decref(j);
		return rc == EG_ENOMEM ? rc : EG_OK;
	}
	pg->n_prof++;
	eg__page_results_profile(&cur[0], p->name, sizeof(p->name));
	eg__path(dir, json_object_get(j, "gates"), p->gates_path,
		 sizeof(p->gates_path));
	snprintf(p->judged, sizeof(p->judged), "%s", name);
	p->verdicts = json_incref(json_object_get(j, "verdicts"));
	p->cur = cur;
	p->n_cur = nc;
	p->base = base;
	p->n_base = nb;
	rc = eg__claim(json_object_get(j, "results"), claimed, n_claimed);
	json_decref(j);
	return rc;
}

int eg__run_judged(eg__page_t *pg, const char *dir, char ***claimed,
		   size_t *n_claimed)
{
	char **names = NULL;
	size_t n = 0;
	int rc = eg_file_names(dir, eg__is_record, NULL, NULL, &names, &n);

	*claimed = NULL;
	*n_claimed = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = eg__record(pg, dir, names[i], claimed, n_claimed);
	eg_file_names_free(names, n);
	return rc;
}
