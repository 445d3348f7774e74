/* The rules that judge a campaign on its own: bound, parity, flat,
 * recovery and trend (evidence: rule_evidence.c).  Each fills the verdict, a
 * one-line summary (the deciding value against its threshold) and the YAML
 * diagnostics.  Bound, parity, recovery and trend judge medians (their
 * intervals are shown); flat also tests for a trend with the per-point
 * errors (docs/gates.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

/* Sorts group members idx[0..n) by their numeric axis value; a repeated
 * value is a hard error. */
static int eg__sort_axis(const eg_gate_file_t *gf, const eg_gate_t *g,
			 const eg__cells_t *c, size_t *idx, size_t n, char *err,
			 size_t len)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			double a, b;
			size_t t;

			eg__gate_axis_num(&c->c[idx[j - 1]], &a);
			eg__gate_axis_num(&c->c[idx[j]], &b);
			if (a == b)
				return eg__gate_gerr(
				    gf, g->axis_line, err, len,
				    "gate \"%s\": points \"%s\" and \"%s\" are "
				    "the same series at %s=%g; filter them "
				    "apart",
				    g->name, c->c[idx[j - 1]].p->id,
				    c->c[idx[j]].p->id, g->axis, a);
			if (a < b)
				break;
			t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return 0;
}

/* Group bookkeeping shared by the axis rules. */
struct eg__grp {
	size_t *idx, *start;
	int ng;
};

static int eg__grp_make(const eg__cells_t *c, struct eg__grp *gr)
{
	gr->idx = calloc(c->n + 1, sizeof(*gr->idx));
	gr->start = calloc(c->n + 2, sizeof(*gr->start));
	gr->ng = 0;
	if (!gr->idx || !gr->start)
		return EG_ENOMEM;
	gr->ng = eg__gate_groups(c, gr->idx, gr->start);
	return gr->ng < 0 ? gr->ng : 0;
}

static void eg__grp_free(struct eg__grp *gr)
{
	free(gr->idx);
	free(gr->start);
}

static int eg__all_numeric(const eg__cells_t *c, const size_t *idx, size_t n)
{
	double d;

	for (size_t i = 0; i < n; i++)
		if (!eg__gate_axis_num(&c->c[idx[i]], &d))
			return 0;
	return 1;
}

struct eg__flat_series {
	double *x, *v, *se;
	int have_se;
};

/* The series' values and their errors, in idx order, and its axis values
 * when numeric; have_se when every point has an error. */
static void eg__flat_fill(const eg__cells_t *c, const size_t *idx, size_t n,
			  int numeric, struct eg__flat_series *s)
{
	s->have_se = 1;
	for (size_t i = 0; i < n; i++) {
		const eg__gate_cell_t *e = &c->c[idx[i]];

		s->v[i] = e->v;
		s->se[i] = e->se;
		if (!(e->se > 0))
			s->have_se = 0;
		if (numeric)
			eg__gate_axis_num(e, &s->x[i]);
	}
}

/* A numeric axis on the gate's scale: log2 when asked, or (auto) when
 * every value is above 0; *log2x says which. */
static int eg__flat_scale(const eg_gate_file_t *gf, const eg_gate_t *g,
			  double *x, size_t n, int *log2x, char *err,
			  size_t len)
{
	int pos = 1;

	for (size_t i = 0; i < n; i++)
		pos &= x[i] > 0;
	if (g->scale == EG_SCALE_LOG2 && !pos)
		return eg__gate_gerr(gf, g->axis_line, err, len,
				     "gate \"%s\": scale log2 needs axis "
				     "values > 0",
				     g->name);
	*log2x =
	    g->scale == EG_SCALE_LOG2 || (g->scale == EG_SCALE_AUTO && pos);
	for (size_t i = 0; *log2x && i < n; i++)
		x[i] = log2(x[i]);
	return 0;
}

/* The series' diagnostics, appended to series: its values, and its slope
 * or why no trend was tested. */
static void eg__flat_json(const eg__cells_t *c, const size_t *idx, size_t n,
			  const eg_flat_out_t *fo, int log2x, int numeric,
			  json_t *series)
{
	json_t *vals = json_array(), *d = json_object();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(vals, eg__gate_cell_json(&c->c[idx[i]]));
	json_object_set_new(d, "series", json_string(c->c[idx[0]].group));
	json_object_set_new(d, "values", vals);
	if (fo->trend_tested) {
		double b = fo->slope.slope,
		       h = fo->slope.crit * fo->slope.se_slope;

		json_object_set_new(d, log2x ? "slope_per_doubling" : "slope",
				    json_real(eg__gate_r4(b)));
		json_object_set_new(d, "slope_ci", eg__gate_pair(b - h, b + h));
		json_object_set_new(d, "slope_error",
				    json_string(fo->slope.from_scatter
						    ? "scatter"
						    : "intervals"));
		json_object_set_new(d, "trend", json_boolean(fo->trend));
	} else {
		json_object_set_new(d, "trend",
				    json_string(numeric
						    ? "not tested (no error "
						      "estimate)"
						    : "not tested (categorical "
						      "axis)"));
	}
	json_array_append_new(series, d);
}

/* One flat series: idx sorted when numeric. */
static int eg__flat_one(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg__cells_t *c, size_t *idx, size_t n,
			json_t *series, eg_flat_out_t *fo, int *log2x,
			char *err, size_t len)
{
	struct eg__flat_series s = {0};
	eg_flat_opts_t o = {
	    {g->band[0], g->band[1]}, g->st.alpha, g->st.max_slope};
	int numeric = eg__all_numeric(c, idx, n), rc = EG_ENOMEM;

	*log2x = 0;
	s.x = calloc(n, sizeof(double));
	s.v = calloc(n, sizeof(double));
	s.se = calloc(n, sizeof(double));
	if (!s.x || !s.v || !s.se)
		goto out;
	if (numeric && (rc = eg__sort_axis(gf, g, c, idx, n, err, len)))
		goto out;
	eg__flat_fill(c, idx, n, numeric, &s);
	if (numeric && (rc = eg__flat_scale(gf, g, s.x, n, log2x, err, len)))
		goto out;
	rc = eg_flat_check(numeric ? s.x : NULL, s.v, s.have_se ? s.se : NULL,
			   n, &o, fo);
	if (rc)
		goto out;
	eg__flat_json(c, idx, n, fo, *log2x, numeric, series);
	rc = 0;
out:
	free(s.x);
	free(s.v);
	free(s.se);
	return rc;
}

/* The series judged into the diagnostics (series taken); none: a skip
 * that says why. */
static void eg__series_end(eg_gate_result_t *res, json_t *series,
			   const eg_gate_t *g, int judged)
{
	json_object_set_new(res->diag, "series", series);
	if (!judged) {
		res->verdict = EG_VERDICT_SKIP;
		eg__gate_say(
		    res, "no data: no series with 2 or more points along %s",
		    g->axis);
	}
}

int eg__gate_rule_flat(const eg_gate_file_t *gf, const eg_gate_t *g,
		       const eg__cells_t *c, eg_gate_result_t *res, char *err,
		       size_t len)
{
	struct eg__grp gr;
	json_t *series = json_array();
	int rc, judged = 0, failed = 0;

	if (!series)
		return EG_ENOMEM;
	if ((rc = eg__grp_make(c, &gr)))
		goto out;
	json_object_set_new(res->diag, "band",
			    eg__gate_pair(g->band[0], g->band[1]));
	json_object_set_new(res->diag, "max_slope", json_real(g->st.max_slope));
	json_object_set_new(res->diag, "alpha", json_real(g->st.alpha));
	res->verdict = EG_VERDICT_PASS;
	for (int k = 0; k < gr.ng; k++) {
		size_t *idx = gr.idx + gr.start[k];
		size_t n = gr.start[k + 1] - gr.start[k];
		eg_flat_out_t fo;
		int log2x;
		const char *unit;

		if (n < 2)
			continue;
		rc = eg__flat_one(gf, g, c, idx, n, series, &fo, &log2x, err,
				  len);
		if (rc)
			goto out;
		judged++;
		unit = log2x ? "doubling" : "unit";
		if (fo.verdict == EG_VERDICT_FAIL && !failed++) {
			res->verdict = EG_VERDICT_FAIL;
			if (fo.n_out_of_band) {
				const eg__gate_cell_t *e =
				    &c->c[idx[fo.first_out]];

				eg__gate_say(
				    res, "%.4g at %s is outside [%g, %g]", e->v,
				    e->at, g->band[0], g->band[1]);
			} else {
				eg__gate_say(
				    res,
				    "trend %+.3g per %s of %s (+-%.2g at "
				    "alpha %g, max_slope %g) in %s",
				    fo.slope.slope, unit, g->axis,
				    fo.slope.crit * fo.slope.se_slope,
				    g->st.alpha, g->st.max_slope,
				    c->c[idx[0]].group);
			}
		} else if (!failed && judged == 1) {
			if (fo.trend_tested)
				eg__gate_say(
				    res,
				    "within [%g, %g], slope %+.3g per %s "
				    "of %s: no significant trend",
				    g->band[0], g->band[1], fo.slope.slope,
				    unit, g->axis);
			else
				eg__gate_say(res,
					     "within [%g, %g] (trend not "
					     "tested)",
					     g->band[0], g->band[1]);
		}
	}
	eg__series_end(res, series, g, judged);
	series = NULL;
	if (!failed && judged > 1) {
		char first[sizeof(res->summary)];

		snprintf(first, sizeof(first), "%s", res->summary);
		eg__gate_say(res, "%d series; first: %s", judged, first);
	}
	rc = 0;
out:
	json_decref(series);
	eg__grp_free(&gr);
	return rc;
}

static const char *const eg__dir_names[] = {"up", "down", "not-down", "not-up"};

int eg__gate_rule_trend(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg__cells_t *c, eg_gate_result_t *res, char *err,
			size_t len)
{
	struct eg__grp gr;
	json_t *series = json_array();
	int rc, judged = 0,
		ge = g->direction == EG_TREND_UP ||
		     g->direction == EG_TREND_NOT_DOWN;
	const char *dn = eg__dir_names[g->direction];
	int failed = 0;

	if (!series)
		return EG_ENOMEM;
	if ((rc = eg__grp_make(c, &gr)))
		goto out;
	json_object_set_new(res->diag, "axis", json_string(g->axis));
	json_object_set_new(res->diag, "direction", json_string(dn));
	json_object_set_new(res->diag, "factor", json_real(g->factor));
	res->verdict = EG_VERDICT_PASS;
	for (int k = 0; k < gr.ng; k++) {
		size_t *idx = gr.idx + gr.start[k];
		size_t n = gr.start[k + 1] - gr.start[k];
		const eg__gate_cell_t *a, *b;
		double f, xa, xb;
		json_t *d, *vals;
		int ok;

		if (n < 2)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!eg__gate_axis_num(&c->c[idx[i]], &xa)) {
				rc = eg__gate_gerr(
				    gf, g->axis_line, err, len,
				    "gate \"%s\": trend needs "
				    "numbers on axis %s; point "
				    "\"%s\" has \"%s\"",
				    g->name, g->axis, c->c[idx[i]].p->id,
				    json_string_value(c->c[idx[i]].x));
				goto out;
			}
		if ((rc = eg__sort_axis(gf, g, c, idx, n, err, len)))
			goto out;
		judged++;
		a = &c->c[idx[0]];
		b = &c->c[idx[n - 1]];
		eg__gate_axis_num(a, &xa);
		eg__gate_axis_num(b, &xb);
		f = b->v / a->v;
		/* 0/0 or x/0 cannot be judged: it fails */
		ok = isfinite(f) && (ge ? f >= g->factor : f <= g->factor);
		d = json_object();
		vals = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(
			    vals, eg__gate_cell_json(&c->c[idx[i]]));
		json_object_set_new(d, "series", json_string(a->group));
		json_object_set_new(d, "values", vals);
		json_object_set_new(d, "change", json_real(eg__gate_r4(f)));
		json_array_append_new(series, d);
		if (!ok && !failed++) {
			res->verdict = EG_VERDICT_FAIL;
			eg__gate_say(res,
				     "%.3gx from %s=%g to %g in %s, %s wants "
				     "%s %g",
				     f, g->axis, xa, xb, a->group, dn,
				     ge ? ">=" : "<=", g->factor);
		} else if (!failed && judged == 1) {
			eg__gate_say(res, "%.3gx from %s=%g to %g (%s: %s %g)",
				     f, g->axis, xa, xb, dn,
				     ge ? ">=" : "<=", g->factor);
		}
	}
	eg__series_end(res, series, g, judged);
	series = NULL;
	rc = 0;
out:
	json_decref(series);
	eg__grp_free(&gr);
	return rc;
}
