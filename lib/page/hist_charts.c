/* History charts: each gated value of a profile over its runs, coloured
 * by the verdict of its run, the gate's band or bound drawn across, and
 * a change point wherever the regression statistic of the gate engine
 * (eg_regress_compare: bootstrap on samples, else the stored
 * intervals) says a value moved by more than the gate's min_effect
 * from one run to the next, for the worse or for the better. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "lib/page/page.h"

#define EG__HIST_SERIES 8

/* The previous value of each series: run, value, interval, samples. */
typedef struct eg__prev {
	size_t run;
	int have, summary;	 /* summary: m, else real */
	eg_metric_t m;		 /* a ratio's summary */
	const eg_metric_t *real; /* the run's own metric */
} eg__prev_t;

static uint64_t eg__fnv(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *s = a; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (const char *s = b; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The metric behind a cell: the run's own (with its samples), or for a
 * ratio a summary from the gate's value and interval. */
static const eg_metric_t *eg__metric(const eg__hrun_t *r, const eg_gate_t *g,
				     const eg__page_cell_t *x, eg_metric_t *tmp)
{
	const eg_point_t *p = NULL, *q = NULL;

	for (size_t i = 0; i < r->r.n_points; i++) {
		if (!strcmp(r->r.points[i].id, x->id))
			p = &r->r.points[i];
		if (x->over && !strcmp(r->r.points[i].id, x->over))
			q = &r->r.points[i];
	}
	if (!p || !g->metric || !eg_point_metric(p, g->metric))
		return NULL;
	if (!x->over)
		return eg_point_metric(p, g->metric);
	memset(tmp, 0, sizeof(*tmp));
	tmp->s.median = x->v;
	tmp->s.ci_lo = x->lo;
	tmp->s.ci_hi = x->hi;
	tmp->s.n = eg_point_metric(p, g->metric)->s.n;
	if (q && eg_point_metric(q, g->metric) &&
	    eg_point_metric(q, g->metric)->s.n < tmp->s.n)
		tmp->s.n = eg_point_metric(q, g->metric)->s.n;
	return tmp;
}

/* One direction of the regression question: is cur worse than base by
 * more than min_effect, with confidence? */
static int eg__worse(const eg_gate_t *g, const eg_metric_t *b,
		     const eg_metric_t *c, eg_better_t better, uint64_t seed)
{
	eg_regress_opts_t o = {.statistic = g->statistic,
			       .better = better,
			       .alpha = g->st.alpha,
			       .min_effect = g->st.min_effect,
			       .min_reps = g->st.min_reps,
			       .resamples = g->st.resamples,
			       .seed = seed};
	eg_regress_out_t out;

	return eg_regress_compare(b, c, &o, &out) == 0 &&
	       out.verdict == EG_VERDICT_FAIL;
}

/* A change point between the previous value and this one, if any. */
static int eg__change(eg__hist_t *h, eg__chart_t *c, const eg_gate_t *g,
		      const char *label, const eg_metric_t *b,
		      const eg__hrun_t *r, const eg_metric_t *cur)
{
	const eg_metric_info_t *mi = eg_metric_info(g->metric);
	eg_better_t better = g->better		? g->better
			     : mi && mi->better ? mi->better
						: EG_BETTER_HIGHER;
	eg_better_t other =
	    better == EG_BETTER_HIGHER ? EG_BETTER_LOWER : EG_BETTER_HIGHER;
	uint64_t seed = eg__fnv(label, r->stamp);
	int worse = eg__worse(g, b, cur, better, seed);
	double pct = (cur->s.median / b->s.median - 1) * 100;
	eg__mark_t *m;

	if (!worse && !eg__worse(g, b, cur, other, seed + 1))
		return EG_OK;
	json_array_append_new(h->changes,
			      json_pack("{s:s, s:s, s:s, s:s, s:f, s:b}",
					"chart", c->id, "gate", g->name,
					"series", label, "stamp", r->stamp,
					"change_pct", pct, "worse", worse));
	for (size_t i = 0; i < c->n_m; i++)
		if (c->m[i].kind == EG__MK_VLINE && c->m[i].x0 == r->t &&
		    c->m[i].fail == worse)
			return EG_OK;
	m = eg__chart_mark(c, EG__MK_VLINE, NAN, NAN);
	if (!m)
		return EG_ENOMEM;
	m->x0 = m->x1 = r->t;
	m->fail = worse;
	snprintf(m->label, sizeof(m->label), "change point: %s",
		 worse ? "worse" : "better");
	return EG_OK;
}

/* The gate's band or bound across the chart; coloured by the latest
 * verdict. */
static int eg__limits(eg__chart_t *c, const eg_gate_t *g, int fail)
{
	char a[32], b[32];
	eg__mark_t *m = NULL;

	if (g->rule == EG_RULE_PARITY || g->rule == EG_RULE_FLAT) {
		if ((m = eg__chart_mark(c, EG__MK_BAND, g->band[0],
					g->band[1])))
			snprintf(m->label, sizeof(m->label), "%s: [%s, %s]",
				 g->name, eg_fmt_num(g->band[0], a, sizeof(a)),
				 eg_fmt_num(g->band[1], b, sizeof(b)));
	} else if (g->rule == EG_RULE_BOUND) {
		if (!isnan(g->min) &&
		    (m = eg__chart_mark(c, EG__MK_MIN, g->min, NAN))) {
			snprintf(m->label, sizeof(m->label), "%s: \u2265 %s",
				 g->name, eg_fmt_num(g->min, a, sizeof(a)));
			m->fail = fail;
		}
		if (!isnan(g->max) &&
		    (m = eg__chart_mark(c, EG__MK_MAX, g->max, NAN)))
			snprintf(m->label, sizeof(m->label), "%s: \u2264 %s",
				 g->name, eg_fmt_num(g->max, b, sizeof(b)));
	} else {
		return EG_OK;
	}
	if (!m)
		return EG_ENOMEM;
	m->fail = fail;
	return EG_OK;
}

/* Did the series change (a change point) on chart c? */
static int eg__changed(const eg__hist_t *h, const eg__chart_t *c,
		       const char *label)
{
	size_t i;
	json_t *x;

	json_array_foreach(h->changes, i, x)
	{
		if (!strcmp(json_string_value(json_object_get(x, "chart")),
			    c->id) &&
		    !strcmp(json_string_value(json_object_get(x, "series")),
			    label))
			return 1;
	}
	return 0;
}

/* Keeps at most EG__HIST_SERIES series: those that changed or failed
 * first, then the others in order. */
static void eg__prune(const eg__hist_t *h, eg__chart_t *c)
{
	size_t keep = 0, out = 0;
	unsigned char *k = calloc(c->n_s + 1, 1);

	if (!k || c->n_s <= EG__HIST_SERIES) {
		free(k);
		return;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < c->n_s && keep < EG__HIST_SERIES; i++) {
			int fail = eg__changed(h, c, c->s[i].label);

			for (size_t j = 0; j < c->s[i].n; j++)
				fail |= c->s[i].p[j].st == EG__ST_FAIL;
			if (!k[i] && (pass || fail)) {
				k[i] = 1;
				keep++;
			}
		}
	for (size_t i = 0; i < c->n_s; i++) {
		if (k[i])
			c->s[out++] = c->s[i];
		else
			free(c->s[i].p);
	}
	snprintf(c->title + strlen(c->title),
		 sizeof(c->title) - strlen(c->title), " (%zu of %zu series)",
		 out, c->n_s);
	c->n_s = out;
	free(k);
}

/* One run's values of gate k, and their change points. */
static int eg__run_values(eg__hist_t *h, size_t r, size_t k, eg__chart_t *c,
			  eg__prev_t **pv, size_t *npv)
{
	const eg_gate_t *g = &h->gf.gates[k];
	eg__cells_t cl;
	int rc = eg__gate_cells(&h->runs[r].gr[k], &h->runs[r].r, 1, &cl);

	for (size_t i = 0; !rc && i < cl.n; i++) {
		const eg__page_cell_t *x = &cl.c[i];
		eg_metric_t tmp = {0};
		const eg_metric_t *cur = eg__metric(&h->runs[r], g, x, &tmp);
		int s = eg__chart_series(c, x->id, (int)c->n_s, 1);

		if (s < 0 || eg__page_series_add(&c->s[s], h->runs[r].t, x->v,
						 x->lo, x->hi, x->st)) {
			rc = EG_ENOMEM;
			break;
		}
		if ((size_t)s >= *npv) {
			eg__prev_t *p =
			    realloc(*pv, (size_t)(s + 1) * sizeof(*p));

			if (!p) {
				rc = EG_ENOMEM;
				break;
			}
			memset(p + *npv, 0,
			       ((size_t)s + 1 - *npv) * sizeof(*p));
			*pv = p;
			*npv = (size_t)s + 1;
		}
		if (!cur)
			continue;
		if ((*pv)[s].have)
			rc = eg__change(h, c, g, x->id,
					(*pv)[s].summary ? &(*pv)[s].m
							 : (*pv)[s].real,
					&h->runs[r], cur);
		(*pv)[s].have = 1;
		(*pv)[s].summary = cur == &tmp;
		(*pv)[s].m = tmp;
		(*pv)[s].real = cur == &tmp ? NULL : cur;
		(*pv)[s].run = r;
	}
	eg__page_cells_fini(&cl);
	return rc;
}

static int eg__gate_chart(eg__hist_t *h, size_t k, eg__chart_t *c)
{
	const eg_gate_t *g = &h->gf.gates[k];
	const eg__gres_t *last = &h->runs[h->n_runs - 1].gr[k];
	eg__prev_t *pv = NULL;
	size_t npv = 0;
	int rc = EG_OK;

	if (g->ratio[0])
		snprintf(c->ylabel, sizeof(c->ylabel), "%s %s/%s", g->metric,
			 g->ratio[0], g->ratio[1]);
	else
		snprintf(c->ylabel, sizeof(c->ylabel), "%s%s%s%s", g->metric,
			 *eg__page_unit(g->metric) ? " (" : "",
			 eg__page_unit(g->metric),
			 *eg__page_unit(g->metric) ? ")" : "");
	snprintf(c->title, sizeof(c->title), "%s on %s: %s over time",
		 h->profile, h->machine, g->name);
	snprintf(c->xlabel, sizeof(c->xlabel), "run (UTC)");
	snprintf(c->gates, sizeof(c->gates), "%s", g->name);
	c->timex = 1;
	for (size_t r = 0; !rc && r < h->n_runs; r++)
		rc = eg__run_values(h, r, k, c, &pv, &npv);
	free(pv);
	if (!rc)
		rc = eg__limits(
		    c, g, !last->hard && last->res.verdict == EG_VERDICT_FAIL);
	if (!rc && g->ratio[0] && !eg__chart_mark(c, EG__MK_TIE, 1, NAN))
		rc = EG_ENOMEM;
	for (size_t r = 0; !rc && r < h->n_runs; r++) {
		char tic[32];
		time_t t = (time_t)h->runs[r].t;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(tic, sizeof(tic), "%m-%d\n%H:%M", &tm);
		rc = eg__chart_tic(c, h->runs[r].t, tic);
	}
	eg__prune(h, c);
	return rc;
}

/* Every value of every series the same (bytes that stay 0): the
 * verdicts say it, a chart would not. */
static int eg__flat_chart(const eg__chart_t *c)
{
	double v = NAN;

	for (size_t i = 0; i < c->n_s; i++)
		for (size_t j = 0; j < c->s[i].n; j++) {
			if (isnan(v))
				v = c->s[i].p[j].y;
			else if (c->s[i].p[j].y != v)
				return 0;
		}
	return 1;
}

int eg__page_history_charts(eg__hist_t *h, unsigned *next)
{
	int rc = EG_OK;

	for (size_t k = 0; !rc && h->have_gf && h->n_runs && k < h->gf.n_gates;
	     k++) {
		eg__chart_t *c;

		if (!h->gf.gates[k].metric)
			continue;
		if (!(c = eg__page_push(&h->ch, h->n_ch, sizeof(*c))))
			return EG_ENOMEM;
		snprintf(c->id, sizeof(c->id), "c%u", *next);
		rc = eg__gate_chart(h, k, c);
		if (!rc && c->n_s && !eg__flat_chart(c)) {
			h->n_ch++;
			(*next)++;
		} else {
			eg__chart_fini(c);
		}
	}
	return rc;
}
