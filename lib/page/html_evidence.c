/* The evidence of what ran at the top of the page (docs/reports.md, "What
 * is on it"): the libraries as loaded, the library under test, the host
 * and GPU, the transport and the knobs, as summary.json or the results
 * files record them (include/epgate/evidence.h). */
#include "epgate/evidence.h"
#include "lib/page/html_evidence.h"

/* The page's evidence: a new object, or NULL. */
static json_t *eg__page_evidence(const eg__page_t *pg)
{
	json_t *ev = json_object_get(pg->summary, "evidence"), *all;

	if (json_is_object(ev))
		return json_deep_copy(ev);
	if (!(all = json_object()))
		return NULL;
	for (size_t i = 0; i < pg->n_prof; i++) {
		json_t *one =
		    eg_results_evidence(pg->prof[i].cur, pg->prof[i].n_cur);

		if (one)
			eg_evidence_merge(all, one);
		json_decref(one);
	}
	return all;
}

static void eg__row(FILE *f, const char *key, const char *name,
		    const char *value)
{
	eg__html(f, "<tr data-key=\"%s\"><th>%s</th><td>%s</td></tr>\n", key,
		 name, value);
}

void eg__html_evidence(FILE *f, const eg__page_t *pg)
{
	json_t *ev = eg__page_evidence(pg), *v;
	const char *k;
	char key[300];

	if (!json_object_size(ev)) {
		json_decref(ev);
		return;
	}
	fputs("<table class=\"evidence\" id=\"evidence\"><caption>What ran "
	      "(docs/results-v1.md, \"Evidence\")</caption>\n",
	      f);
	for (size_t i = 0; eg_evidence_keys[i]; i++)
		if ((v = json_object_get(ev, eg_evidence_keys[i])))
			eg__row(f, eg_evidence_keys[i], eg_evidence_keys[i],
				json_string_value(v));
	json_object_foreach(json_object_get(ev, "env"), k, v)
	{
		snprintf(key, sizeof(key), "env.%s", k);
		eg__row(f, key, k, json_string_value(v));
	}
	fputs("</table>\n", f);
	json_decref(ev);
}
