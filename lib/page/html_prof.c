/* A profile on the page: where its results come from, then each suite
 * (sweep): the gates that judge it, its charts, and every point's
 * numbers in a table (what the charts draw, exactly as the results file
 * holds them: data-value carries the full number). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/num.h"
#include "lib/page/html_int.h"

static const char *eg__css_dash(int dt)
{
	return dt == 1 ? "solid" : dt == 3 ? "dotted" : "dashed";
}

/* One legend entry: a swatch (a line, a band or a dot) and its text. */
static void eg__entry(FILE *f, const char *kind, const char *rgb, int dt,
		      const char *text)
{
	fprintf(f, "<span class=\"li\"><span class=\"sw %s\" style=\"", kind);
	if (!strcmp(kind, "dot"))
		fprintf(f, "background:%s", rgb);
	else
		fprintf(f, "border-color:%s;border-top-style:%s", rgb,
			eg__css_dash(dt));
	eg__html(f, "\"></span>%s</span>", text);
}

/* The chart's legend, on the page (gnuplot's own would crowd the plot):
 * its series, what the gates drew, and the judged points' colours. */
static void eg__legend(FILE *f, const eg__chart_t *c)
{
	int st[3] = {0, 0, 0};

	fputs("<div class=\"legend\">", f);
	for (size_t i = 0; i < c->n_s; i++) {
		eg__entry(f, "line", eg__page_series_rgb(c->s[i].color),
			  eg__page_series_dt(&c->s[i]), c->s[i].label);
		for (size_t j = 0; j < c->s[i].n; j++)
			st[c->s[i].p[j].st % 3] = 1;
	}
	for (size_t i = 0; i < c->n_m; i++) {
		const eg__mark_t *m = &c->m[i];
		int dup = 0;

		for (size_t k = 0; k < i; k++)
			dup |= !strcmp(c->m[k].label, m->label);
		if (dup)
			continue;
		char text[300];

		snprintf(text, sizeof(text), "%s%s",
			 m->kind == EG__MK_TIE ? "tie (1.0)" : m->label,
			 m->off > 0   ? " (above the chart)"
			 : m->off < 0 ? " (below the chart)"
				      : "");
		eg__entry(f, m->kind == EG__MK_BAND ? "band" : "line",
			  eg__page_mark_rgb(m), eg__page_mark_dt(m), text);
	}
	if (st[EG__ST_PASS])
		eg__entry(f, "dot", "#2ca02c", 1, "judged: pass");
	if (st[EG__ST_FAIL])
		eg__entry(f, "dot", "#d62728", 1, "judged: fail");
	fputs("</div>\n", f);
}

void eg__page_figure(FILE *f, const eg__chart_t *c, const char *suite)
{
	fprintf(f, "<figure class=\"chart\" id=\"%s\" data-suite=\"", c->id);
	eg__html(f, "%s\" data-chart=\"%s\" data-gates=\"%s\">\n", suite,
		 c->ylabel, c->gates);
	if (c->svg) {
		fputs(c->svg, f);
	} else {
		eg__html(f,
			 "<div class=\"nochart\">%s<br>not drawn: see the note "
			 "at the top</div>",
			 c->title);
	}
	fputs("\n", f);
	eg__legend(f, c);
	eg__html(f, "<figcaption>%s", c->title);
	if (c->gates[0])
		eg__html(f, " &middot; gates: %s", c->gates);
	fputs("</figcaption>\n</figure>\n", f);
}

/* The context of the results: measured or recorded, where, with what. */
static void eg__context(FILE *f, const eg__prof_t *p)
{
	static const char *const keys[] = {
	    "hosts", "gpus",	  "node_list", "provider", "transport",
	    "nccl",  "libfabric", "build",     "created",  NULL};

	for (size_t i = 0; i < p->n_cur; i++) {
		const json_t *ctx = p->cur[i].context;

		fprintf(f, "<p class=\"meta\">%s results <code>",
			p->cur[i].recorded ? "recorded" : "measured");
		eg__page_esc(f, p->cur[i].path);
		fprintf(f, "</code>: %zu points", p->cur[i].n_points);
		for (const char *const *k = keys; *k; k++) {
			const json_t *v = json_object_get(ctx, *k);
			char *s = json_is_string(v)
				      ? NULL
				      : json_dumps(v, JSON_COMPACT);

			if (!v)
				continue;
			fprintf(f, " &middot; %s ", *k);
			eg__page_esc(f, s ? s : json_string_value(v));
			free(s);
		}
		fputs("</p>\n", f);
		if (json_is_string(json_object_get(ctx, "notes"))) {
			fputs("<details class=\"meta\"><summary>notes</summary>"
			      "<p>",
			      f);
			eg__page_esc(f, json_string_value(
					    json_object_get(ctx, "notes")));
			fputs("</p></details>\n", f);
		}
	}
}

/* The gates that judged the suite, each with its verdict. */
static void eg__suite_gates(FILE *f, const eg__prof_t *p, const char *suite)
{
	int any = 0;

	for (size_t i = 0; p->gr && i < p->gf.n_gates; i++) {
		const eg__gres_t *r = &p->gr[i];

		if (!eg__page_gate_judges(p, i, suite))
			continue;
		fputs(any++ ? "" : "<ul class=\"gates\">\n", f);
		fputs("<li>", f);
		eg__page_badge(f, eg__page_gres_word(r));
		eg__html(f,
			 " <a href=\"#gate-%s-%s\"><code>%s</code></a> %s "
			 "<span class=\"meta\">%s</span></li>\n",
			 p->name, r->g->name, r->g->name, r->g->sentence,
			 r->hard ? r->err : r->res.summary);
	}
	if (any)
		fputs("</ul>\n", f);
}

/* One number: the value, its interval, coloured by the gates. */
static void eg__value(FILE *f, const char *attr, const char *what,
		      const char *id, double v, double lo, double hi, int st,
		      const char *fmt)
{
	char a[32], b[32], c[32];

	if (fmt)
		snprintf(a, sizeof(a), fmt, v);
	fprintf(f, "<td class=\"num%s\" data-point=\"",
		st == EG__ST_FAIL   ? " st-fail"
		: st == EG__ST_PASS ? " st-pass"
				    : "");
	eg__page_esc(f, id);
	fprintf(f, "\" %s=\"", attr);
	eg__page_esc(f, what);
	fprintf(f, "\" data-value=\"%.17g\">%s", v,
		fmt ? a : eg_fmt_num(v, a, sizeof(a)));
	if (isfinite(lo) && isfinite(hi))
		fprintf(f, " <span class=\"ci\">[%s, %s]</span>",
			eg_fmt_num(lo, b, sizeof(b)),
			eg_fmt_num(hi, c, sizeof(c)));
	fputs("</td>", f);
}

/* The cell of column col ("metric" or "metric num/den") at point pt. */
static void eg__cell(FILE *f, const eg__prof_t *p, const eg_point_t *pt,
		     const char *col)
{
	char metric[128], num[64], den[64];
	const eg__page_cell_t *x;
	int st;

	if (sscanf(col, "%127s %63[^/]/%63s", metric, num, den) == 3) {
		st = eg__page_cell_status(p, metric, num, den, pt->id, &x);
		if (x && x->over) /* a ratio near 1: four decimals tell it
				      from its threshold (1.1005 > 1.1) */
			eg__value(f, "data-ratio", col, pt->id, x->v, x->lo,
				  x->hi, st, "%.4f");
		else
			fputs("<td></td>", f);
		return;
	}
	const eg_metric_t *m = eg_point_metric(pt, col);

	if (!m) {
		fputs("<td></td>", f);
		return;
	}
	st = eg__page_cell_status(p, col, NULL, NULL, pt->id, NULL);
	eg__value(f, "data-metric", col, pt->id, m->s.median, m->s.ci_lo,
		  m->s.ci_hi, st, NULL);
}

static void eg__points(FILE *f, const eg__prof_t *p, const eg__psuite_t *s)
{
	eg__axes_t a;
	char buf[64];

	if (eg__page_axes_of(p, s->name, s->axis[0] ? s->axis : NULL, &a))
		return;
	eg__html(f,
		 "<table class=\"points\" data-suite=\"%s\"><tr><th>point</th>"
		 "<th>arm</th>",
		 s->name);
	if (a.x)
		fprintf(f, "<th>%s</th>", a.x);
	for (size_t i = 0; i < a.n_split; i++)
		fprintf(f, "<th>%s</th>", a.split[i]);
	for (size_t i = 0; i < s->n_cols; i++) {
		eg__html(f,
			 "<th class=\"num\">%s <span class=\"ci\">[95%% "
			 "interval]</span></th>",
			 s->cols[i]);
	}
	fputs("</tr>\n", f);
	for (size_t i = 0; i < a.n; i++) {
		eg__html(f, "<tr><td><code>%s</code></td><td>%s</td>",
			 a.pts[i]->id, a.pts[i]->arm);
		for (size_t k = 0; k < a.n_split + (a.x != NULL); k++) {
			const char *ax = k < (a.x != NULL)
					     ? a.x
					     : a.split[k - (a.x != NULL)];

			fputs("<td>", f);
			eg__page_esc(f, eg__page_axis_str(
					    json_object_get(a.pts[i]->axes, ax),
					    buf, sizeof(buf)));
			fputs("</td>", f);
		}
		for (size_t k = 0; k < s->n_cols; k++)
			eg__cell(f, p, a.pts[i], s->cols[k]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	eg__page_axes_fini(&a);
}

static void eg__suite(FILE *f, const eg__prof_t *p, const eg__psuite_t *s)
{
	eg__html(f,
		 "<section class=\"suite\" id=\"suite-%s-%s\" "
		 "data-suite=\"%s\">\n<h3>%s",
		 p->name, s->name, s->name, s->name);
	if (s->axis[0])
		eg__html(f, " <span class=\"meta\">along %s</span>", s->axis);
	fputs("</h3>\n", f);
	eg__suite_gates(f, p, s->name);
	fputs("<div class=\"charts\">\n", f);
	for (size_t i = 0; i < s->n_charts; i++)
		eg__page_figure(f, &p->ch[s->first_chart + i], s->name);
	fputs("</div>\n", f);
	eg__points(f, p, s);
	fputs("</section>\n", f);
}

void eg__page_profile(FILE *f, const eg__prof_t *p)
{
	eg__html(f,
		 "<section class=\"profile\" id=\"profile-%s\" "
		 "data-profile=\"%s\">\n<h2>Profile %s</h2>\n",
		 p->name, p->name, p->name);
	eg__context(f, p);
	for (size_t i = 0; i < p->n_su; i++)
		eg__suite(f, p, &p->su[i]);
	fputs("</section>\n", f);
}
