/* The gates at the top of the page and every failure below them: a
 * gate's sentence, verdict and deciding value, and for a failure its
 * diagnosis, the one line that reproduces it and the diagnostics. */
#define _XOPEN_SOURCE 700

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/report.h"

#include "lib/page/html_int.h"

void eg__page_link(FILE *f, const char *name)
{
	eg__html(f, "<a href=\"%s\">%s</a>", name, name);
}

void eg__page_nav(FILE *f, const eg__page_t *pg)
{
	fputs("<nav><a href=\"#summary\">Summary</a><a "
	      "href=\"#failures\">Failures</a>",
	      f);
	for (size_t i = 0; i < pg->n_prof; i++) {
		eg__html(f, "<a href=\"#profile-%s\">%s</a>", pg->prof[i].name,
			 pg->prof[i].name);
	}
	if (pg->n_hist)
		fputs("<a href=\"#history\">History</a>", f);
	fputs("</nav>\n", f);
}

/* Is name one of the ", "-separated names in list? */
static int eg__named(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ' ') && (!s[n] || s[n] == ','))
			return 1;
	return 0;
}

/* Links to the charts that draw the gate, one per suite, named by it. */
static void eg__chart_links(FILE *f, const eg__prof_t *p, const char *gate)
{
	int n = 0;

	for (size_t s = 0; s < p->n_su; s++)
		for (size_t i = 0; i < p->su[s].n_charts; i++) {
			const eg__chart_t *c = &p->ch[p->su[s].first_chart + i];

			if (!eg__named(c->gates, gate))
				continue;
			fprintf(f, "%s<a href=\"#%s\">", n++ ? ", " : "",
				c->id);
			eg__page_esc(f, p->su[s].name);
			fputs("</a>", f);
			break;
		}
}

static void eg__gate_row(FILE *f, const eg__prof_t *p, const eg__gres_t *r)
{
	const char *w = eg__page_gres_word(r);

	fprintf(f, "<tr class=\"gate %s\" id=\"gate-", w);
	eg__html(f, "%s-%s\" data-profile=\"%s\" data-gate=\"%s", p->name,
		 r->g->name, p->name, r->g->name);
	fprintf(f, "\" data-verdict=\"%s\"><td>", w);
	eg__page_badge(f, w);
	eg__html(f, "</td><td><code>%s</code></td><td class=\"sentence\">%s",
		 r->g->name, r->g->sentence);
	fprintf(f, "</td><td>%s</td><td class=\"detail\">",
		eg_rule_name(r->g->rule));
	eg__page_esc(f, r->hard ? r->err : r->res.summary);
	fputs("</td><td>", f);
	eg__chart_links(f, p, r->g->name);
	fputs("</td></tr>\n", f);
}

void eg__page_gate_tables(FILE *f, const eg__page_t *pg)
{
	for (size_t i = 0; i < pg->n_prof; i++) {
		const eg__prof_t *p = &pg->prof[i];

		eg__html(f, "<h3>Gates of %s", p->name);
		if (p->have_gf)
			eg__html(f, " <span class=\"meta\">(%s)</span>",
				 p->gates_path);
		fputs("</h3>\n", f);
		if (!p->gr) {
			eg__html(f, "<p class=\"note\">%s</p>\n", p->gerr);
			continue;
		}
		fputs("<table class=\"gates\"><tr><th>verdict</th><th>gate"
		      "</th><th>what it says</th><th>rule</th><th>deciding "
		      "value</th><th></th></tr>\n",
		      f);
		for (size_t k = 0; k < p->gf.n_gates; k++)
			eg__gate_row(f, p, &p->gr[k]);
		fputs("</table>\n", f);
	}
}

/* A path as the repro line says it: relative to where the page was made
 * when it lies under it (gates/p5en-ep16.gate, not /home/.../gates/...),
 * else as it is. */
static const char *eg__shown(const char *path, char *buf, size_t len)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	size_t n;

	if (!path || path[0] != '/' || !realpath(path, abs) ||
	    !getcwd(cwd, sizeof(cwd)))
		return path ? path : "-";
	n = strlen(cwd);
	if (strncmp(abs, cwd, n) || abs[n] != '/')
		return path;
	snprintf(buf, len, "%s", abs + n + 1);
	return buf;
}

void eg__page_repro_gate(FILE *f, const eg__repro_t *r)
{
	char buf[PATH_MAX];

	eg__html(f, "<pre class=\"repro\">epgate gate --gates %s",
		 eg__shown(r->gates, buf, sizeof(buf)));
	for (size_t i = 0; i < r->n_base; i++)
		eg__html(f, " --baseline %s",
			 eg__shown(r->base[i].path, buf, sizeof(buf)));
	for (size_t i = 0; i < r->n_cur; i++)
		eg__html(f, " %s", eg__shown(r->cur[i].path, buf, sizeof(buf)));
	fputs("</pre>\n", f);
}

/* A failure's diagnostics, folded. */
static void eg__diagnostics(FILE *f, const char *text)
{
	eg__html(f,
		 "<details><summary>diagnostics</summary><pre>%s</pre>"
		 "</details>\n",
		 text);
}

static void eg__gate_failure(FILE *f, const char *where, const eg__repro_t *rp,
			     const eg__gres_t *r)
{
	const char *w = eg__page_gres_word(r);
	char *yaml = r->hard ? NULL : eg_json_to_yaml(r->res.diag, 0);

	fprintf(f, "<div class=\"failure%s\" data-kind=\"gate\" data-name=\"",
		r->hard ? " error" : "");
	eg__html(f, "%s\"><h4>", r->g->name);
	eg__page_badge(f, w);
	eg__html(f,
		 " gate <code>%s</code> <span class=\"meta\">of %s</span></h4>"
		 "\n<p class=\"sentence\">%s</p>\n<p class=\"diagnosis\"><b>%s"
		 "</b></p>\n",
		 r->g->name, where, r->g->sentence,
		 r->hard ? r->err : r->res.summary);
	eg__page_repro_gate(f, rp);
	if (yaml)
		eg__diagnostics(f, yaml);
	fputs("</div>\n", f);
	free(yaml);
}

static void eg__case_failure(FILE *f, const eg__fail_t *x)
{
	fprintf(f, "<div class=\"failure%s\" data-kind=\"case\" data-name=\"",
		x->crash   ? " crash"
		: x->error ? " error"
			   : "");
	eg__html(f, "%s\"><h4>", x->name);
	eg__page_badge(f, x->crash ? "crash" : x->error ? "error" : "fail");
	eg__html(f,
		 " <code>%s</code> <span class=\"meta\">%s</span></h4>\n"
		 "<p class=\"diagnosis\"><b>%s</b></p>\n",
		 x->name, x->suite, x->message);
	if (x->repro)
		eg__html(f, "<pre class=\"repro\">%s</pre>\n", x->repro);
	if (x->body && *x->body)
		eg__diagnostics(f, x->body);
	fputs("</div>\n", f);
}

static int eg__failed(const eg__gres_t *g)
{
	return g->hard || g->res.verdict == EG_VERDICT_FAIL;
}

/* The failing gates of a history group's latest run, judged against
 * the run before it. */
static void eg__hist_failures(FILE *f, const eg__hist_t *h)
{
	const eg__hrun_t *last = &h->runs[h->n_runs - 1];
	eg__repro_t rp = {h->gates_path, &last->r,
			  h->n_runs > 1 ? &h->runs[h->n_runs - 2].r : NULL, 1,
			  h->n_runs > 1};
	char where[400];

	snprintf(where, sizeof(where), "%s on %s, run %s", h->profile,
		 h->machine, last->stamp);
	for (size_t k = 0; last->gr && k < h->gf.n_gates; k++)
		if (eg__failed(&last->gr[k]))
			eg__gate_failure(f, where, &rp, &last->gr[k]);
}

void eg__page_failures(FILE *f, const eg__page_t *pg)
{
	eg__tally_t t;

	eg__page_tally(pg, &t);
	fprintf(f, "<section id=\"failures\">\n<h2>Failures (%u)</h2>\n",
		t.fail + t.errors + t.failed);
	if (!t.fail && !t.errors && !t.failed)
		fputs("<p>None.</p>\n", f);
	for (size_t i = 0; i < pg->n_prof; i++) {
		const eg__prof_t *p = &pg->prof[i];
		eg__repro_t rp = {p->gates_path, p->cur, p->base, p->n_cur,
				  p->n_base};

		for (size_t k = 0; p->gr && k < p->gf.n_gates; k++)
			if (eg__failed(&p->gr[k]))
				eg__gate_failure(f, p->name, &rp, &p->gr[k]);
	}
	for (size_t i = 0; i < pg->n_hist; i++)
		if (pg->hist[i].n_runs && pg->hist[i].have_gf)
			eg__hist_failures(f, &pg->hist[i]);
	for (size_t i = 0; i < pg->n_fails; i++)
		if (eg__page_fail_shown(pg, &pg->fails[i]))
			eg__case_failure(f, &pg->fails[i]);
	fputs("</section>\n", f);
}
