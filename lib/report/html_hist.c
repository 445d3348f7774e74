/* A history group on the page: the verdict of every gate at every run
 * (one row per gate, one column per run), each gated value over time,
 * and the change points found. */
#include <string.h>

#include "lib/report/html_int.h"

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
				h->runs[r].stamp, eg__gres_word(g));
			eg__badge(f, eg__gres_word(g));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

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
	fputs("<h4>Change points</h4>\n<table class=\"changes\"><tr><th>run"
	      "</th><th>gate</th><th>value</th><th class=\"num\">change</th>"
	      "<th></th></tr>\n",
	      f);
	json_array_foreach(h->changes, i, c)
	{
		int worse = json_is_true(json_object_get(c, "worse"));

		eg__html(f, "<tr class=\"change\"><td>%s",
			 json_string_value(json_object_get(c, "stamp")));
		fprintf(f, "</td><td><a href=\"#%s\"><code>",
			json_string_value(json_object_get(c, "chart")));
		eg__html(f, "%s</code></a></td><td><code>%s",
			 json_string_value(json_object_get(c, "gate")),
			 json_string_value(json_object_get(c, "series")));
		fprintf(f, "</code></td><td class=\"num\">%+.1f%%</td><td>",
			json_real_value(json_object_get(c, "change_pct")));
		eg__badge(f, worse ? "fail" : "pass");
		fprintf(f, " %s</td></tr>\n", worse ? "worse" : "better");
	}
	fputs("</table>\n", f);
}

void eg__history(FILE *f, const eg__hist_t *h)
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
		eg__figure(f, &h->ch[i], h->profile);
	fputs("</div>\n</section>\n", f);
}
