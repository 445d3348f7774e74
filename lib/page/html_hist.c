/* A history group on the page: the verdict of every gate at every run
 * (one row per gate, one column per run), each gated value over time,
 * and the change points found. */
#include <string.h>

#include "lib/page/html_int.h"

static void eg__matrix(FILE *f, const eg__hist_t *h)
{
	fputs("<table class=\"verdicts\"><tr><th>gate</th>", f);
	for (size_t r = 0; r < h->n_runs; r++) {
		eg__html(f, "<th>%s</th>", h->runs[r].stamp);
	}
	fputs("</tr>\n", f);
	for (size_t k = 0; k < h->gf.n_gates; k++) {
		eg__html(f, "<tr data-gate=\"%s\"><td><code>%s</code></td>",
			 h->gf.gates[k].name, h->gf.gates[k].name);
		for (size_t r = 0; r < h->n_runs; r++) {
			const eg__gres_t *g = &h->runs[r].gr[k];

			eg__html(f, "<td title=\"%s",
				 g->hard ? g->err : g->res.summary);
			fprintf(f, "\" data-run=\"%s\" data-verdict=\"%s\">",
				h->runs[r].stamp, eg__page_gres_word(g));
			eg__page_badge(f, eg__page_gres_word(g));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The verdict of gate name at the run stamped stamp, or NULL. */
static const eg__gres_t *eg__verdict_at(const eg__hist_t *h, const char *name,
					const char *stamp)
{
	for (size_t r = 0; name && stamp && r < h->n_runs; r++)
		for (size_t k = 0;
		     !strcmp(h->runs[r].stamp, stamp) && k < h->gf.n_gates; k++)
			if (!strcmp(h->gf.gates[k].name, name))
				return &h->runs[r].gr[k];
	return NULL;
}

/* Every change point, beside the verdict its gate gave at that run (the
 * matrix's): a value can move beyond min_effect while the gate, judging
 * its band or all of its points at once, still passes. */
static void eg__changes(FILE *f, const eg__hist_t *h)
{
	size_t i;
	json_t *c;

	if (!json_array_size(h->changes)) {
		fputs("<p class=\"meta\">No change point: no value moved by "
		      "more than its gate's min_effect, with confidence, from "
		      "one run to the next.</p>\n",
		      f);
		return;
	}
	fputs("<h4>Change points</h4>\n<p class=\"meta\">A value that moved "
	      "from one run to the next by more than its gate's min_effect, "
	      "with confidence, asked of that value alone; the gate's "
	      "verdict at that run is its own (its band or bound, its "
	      "correction over the points), as in the table above.</p>\n"
	      "<table class=\"changes\"><tr><th>run</th><th>gate</th><th>"
	      "value</th><th class=\"num\">change</th><th>the gate at that "
	      "run</th><th>direction</th></tr>\n",
	      f);
	json_array_foreach(h->changes, i, c)
	{
		int worse = json_is_true(json_object_get(c, "worse"));
		const char *gate =
		    json_string_value(json_object_get(c, "gate"));
		const char *stamp =
		    json_string_value(json_object_get(c, "stamp"));
		const eg__gres_t *g = eg__verdict_at(h, gate, stamp);
		const char *w = g ? eg__page_gres_word(g) : "skip";

		eg__html(f, "<tr class=\"change\"><td>%s", stamp);
		fprintf(f, "</td><td><a href=\"#%s\"><code>",
			json_string_value(json_object_get(c, "chart")));
		eg__html(f, "%s</code></a></td><td><code>%s", gate,
			 json_string_value(json_object_get(c, "series")));
		fprintf(f,
			"</code></td><td class=\"num\">%+.1f%%</td><td "
			"class=\"verdict\" data-verdict=\"%s\">",
			json_real_value(json_object_get(c, "change_pct")), w);
		eg__page_badge(f, w);
		fprintf(f, "</td><td class=\"dir %s\">%s</td></tr>\n",
			worse ? "worse" : "better", worse ? "worse" : "better");
	}
	fputs("</table>\n", f);
}

void eg__page_history(FILE *f, const eg__hist_t *h)
{
	eg__html(f,
		 "<section class=\"suite hist\" id=\"history-%s-%s\" "
		 "data-profile=\"%s\" data-machine=\"%s\">\n<h3>%s on %s",
		 h->profile, h->machine, h->profile, h->machine, h->profile,
		 h->machine);
	fprintf(f, " <span class=\"meta\">%zu runs", h->n_runs);
	if (h->n_runs)
		eg__html(f, ", %s to %s", h->runs[0].stamp,
			 h->runs[h->n_runs - 1].stamp);
	fputs("</span></h3>\n", f);
	if (!h->have_gf) {
		eg__html(f, "<p class=\"note\">%s</p>\n</section>\n", h->gerr);
		return;
	}
	eg__matrix(f, h);
	eg__changes(f, h);
	fputs("<div class=\"charts\">\n", f);
	for (size_t i = 0; i < h->n_ch; i++)
		eg__page_figure(f, &h->ch[i], h->profile);
	fputs("</div>\n</section>\n", f);
}
