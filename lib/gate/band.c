/* Noise-aware bounds (docs/gates.md, "Intervals, not points"): bound,
 * parity and recovery judge each value with its interval.  Two one-sided
 * questions at level alpha, as the regression rule asks them: is the
 * value outside the band with confidence (fail), is it inside with
 * confidence (pass); neither is inconclusive, and the point is measured
 * again before the verdict stands.  The band is closed: a value exactly
 * on an edge is inside.  A value that is not a number (0/0, x/0) fails:
 * what cannot be judged cannot pass.  Over many points the fail side is
 * corrected for multiplicity (Holm by default); the pass side needs
 * every point inside, which holds its level without a correction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "gate_int.h"

void eg__band_judge(double v, double se, double lo, double hi, double alpha,
		    eg__band_t *o)
{
	double z = gsl_cdf_ugaussian_Pinv(1 - alpha), pa = 1, pb = 1;
	int out = (!isnan(lo) && v < lo) || (!isnan(hi) && v > hi);

	/* times, rates and their ratios are positive and their noise is
	 * multiplicative: judged on the log scale (an interval of a time
	 * never reaches below 0) where the value allows it; an edge at or
	 * below 0 is then -inf, below every positive value with certainty
	 * (on the linear scale a wide interval let a time of 130 us
	 * "straddle" max: 0, measured under load) */
	if (v > 0 && isfinite(v) && se > 0 && isfinite(se)) {
		se /= v;
		v = log(v);
		lo = isnan(lo) ? NAN : lo > 0 ? log(lo) : -INFINITY;
		hi = isnan(hi) ? NAN : hi > 0 ? log(hi) : -INFINITY;
	}

	o->finite = isfinite(v);
	o->noisy = se > 0 && isfinite(se);
	if (!o->finite) {
		o->p_fail = 0;
		o->inside = 0;
		return;
	}
	if (!o->noisy) { /* a count, or no interval: the value decides */
		o->p_fail = out ? 0 : 1;
		o->inside = !out;
		return;
	}
	if (!isnan(hi))
		pa = gsl_cdf_ugaussian_Q((v - hi) / se);
	if (!isnan(lo))
		pb = gsl_cdf_ugaussian_P((v - lo) / se);
	o->p_fail = pa < pb ? pa : pb;
	o->inside =
	    (isnan(hi) || v + z * se <= hi) && (isnan(lo) || v - z * se >= lo);
}

/* The verdicts of n judged values: fails corrected over the family. */
int eg__band_verdicts(const eg_gate_t *g, eg__band_t *b, size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(*p));
	int *rej = malloc((n ? n : 1) * sizeof(*rej)), rc;

	if (!p || !rej) {
		EG_FREE(p, rej);
		return EG_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = b[i].p_fail;
	rc = eg_stats_correct(p, n, g->st.alpha, g->st.correction, rej);
	for (size_t i = 0; !rc && i < n; i++)
		b[i].verdict = !b[i].finite || rej[i] ? EG_VERDICT_FAIL
			       : b[i].inside	      ? EG_VERDICT_PASS
						      : EG_VERDICT_INCONCLUSIVE;
	EG_FREE(p, rej);
	return rc;
}

/* A point to measure again, once. */
void eg__gate_remeasure_add(eg_gate_result_t *res, const eg_point_t *p)
{
	if (!p || eg_gate_ids_has(res->remeasure, p->id))
		return;
	json_array_append_new(res->remeasure, json_string(p->id));
	/* a ratio's point: its denominator too (lib/gate/ratio_points.c) */
	if (p->evidence && json_is_string(json_object_get(p->evidence, "over")))
		json_array_append(res->remeasure,
				  json_object_get(p->evidence, "over"));
}

/* " (interval [lo, hi])" for a noisy value, else "": on the log scale
 * for a positive one, as it is judged. */
static const char *eg__iv(const eg__gate_cell_t *e, double alpha, char *buf,
			  size_t len)
{
	double z = gsl_cdf_ugaussian_Pinv(1 - alpha);

	buf[0] = 0;
	if (!(e->se > 0 && isfinite(e->se)))
		return buf;
	if (e->v > 0)
		snprintf(buf, len, " (interval [%.4g, %.4g])",
			 e->v * exp(-z * e->se / e->v),
			 e->v * exp(z * e->se / e->v));
	else
		snprintf(buf, len, " (interval [%.4g, %.4g])", e->v - z * e->se,
			 e->v + z * e->se);
	return buf;
}

/* The one-line summary of a bound or parity gate. */
static void eg__bound_say(const eg_gate_t *g, const eg__cells_t *c,
			  const eg__band_t *b, const char *thr,
			  eg_gate_result_t *res)
{
	const eg__gate_cell_t *f = NULL, *in = NULL, *mn = NULL, *mx = NULL;
	size_t ni = 0;
	char iv[96];

	for (size_t i = 0; i < c->n; i++) {
		const eg__gate_cell_t *e = &c->c[i];

		if (b[i].verdict == EG_VERDICT_FAIL && !f)
			f = e;
		if (b[i].verdict == EG_VERDICT_INCONCLUSIVE && !ni++)
			in = e;
		if (!mn || e->v < mn->v)
			mn = e;
		if (!mx || e->v > mx->v)
			mx = e;
	}
	if (f && !b[f - c->c].finite)
		eg__gate_say(res,
			     "not a number at %s (%g: 0/0 or x/0), want %s",
			     f->at, f->v, thr);
	else if (f)
		eg__gate_say(res, "%.4g at %s, want %s%s", f->v, f->at, thr,
			     eg__iv(f, g->st.alpha, iv, sizeof(iv)));
	else if (in)
		eg__gate_say(
		    res,
		    "%.4g at %s straddles %s%s; %zu point(s) to measure "
		    "again",
		    in->v, in->at, thr, eg__iv(in, g->st.alpha, iv, sizeof(iv)),
		    ni);
	else if (c->n == 1)
		eg__gate_say(res, "%.4g %s", mn->v, thr);
	else
		eg__gate_say(res, "%.4g .. %.4g over %zu points, all %s", mn->v,
			     mx->v, c->n, thr);
}

static json_t *eg__band_cell(const eg__gate_cell_t *e, const eg__band_t *b)
{
	json_t *o = eg__gate_cell_json(e);

	if (o && b->noisy && b->finite)
		json_object_set_new(o, "p_outside",
				    json_real(eg__gate_r4(b->p_fail)));
	if (o && b->verdict != EG_VERDICT_PASS)
		json_object_set_new(
		    o, "verdict",
		    json_string(eg_gate_verdict_name(b->verdict)));
	return o;
}

/* Bound and parity: every value within [lo, hi]. */
int eg__gate_rule_bound(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg__cells_t *c, eg_gate_result_t *res, char *err,
			size_t len)
{
	int parity = g->rule == EG_RULE_PARITY, rc;
	double lo = parity ? g->band[0] : g->min;
	double hi = parity ? g->band[1] : g->max;
	eg__band_t *b = calloc(c->n, sizeof(*b));
	json_t *vals = json_array();
	char thr[96];

	(void)gf, (void)err, (void)len;
	if (!b || !vals) {
		free(b);
		json_decref(vals);
		return EG_ENOMEM;
	}
	if (parity)
		json_object_set_new(res->diag, "band", eg__gate_pair(lo, hi));
	if (!isnan(g->min) && !parity)
		json_object_set_new(res->diag, "min", json_real(g->min));
	if (!isnan(g->max) && !parity)
		json_object_set_new(res->diag, "max", json_real(g->max));
	json_object_set_new(res->diag, "alpha", json_real(g->st.alpha));
	json_object_set_new(res->diag, "correction",
			    json_string(eg_correction_name(g->st.correction)));
	if (isnan(lo))
		snprintf(thr, sizeof(thr), "<= %g", hi);
	else if (isnan(hi))
		snprintf(thr, sizeof(thr), ">= %g", lo);
	else
		snprintf(thr, sizeof(thr), "in [%g, %g]", lo, hi);
	for (size_t i = 0; i < c->n; i++)
		eg__band_judge(c->c[i].v, c->c[i].se, lo, hi, g->st.alpha,
			       &b[i]);
	if ((rc = eg__band_verdicts(g, b, c->n)) < 0)
		goto out;
	res->verdict = EG_VERDICT_PASS;
	for (size_t i = 0; i < c->n; i++) {
		json_array_append_new(vals, eg__band_cell(&c->c[i], &b[i]));
		if (b[i].verdict == EG_VERDICT_FAIL)
			res->verdict = EG_VERDICT_FAIL;
		else if (b[i].verdict == EG_VERDICT_INCONCLUSIVE &&
			 res->verdict == EG_VERDICT_PASS)
			res->verdict = EG_VERDICT_INCONCLUSIVE;
		if (b[i].verdict != EG_VERDICT_PASS && b[i].noisy) {
			eg__gate_remeasure_add(res, c->c[i].p);
			eg__gate_remeasure_add(res, c->c[i].q);
		}
	}
	eg__bound_say(g, c, b, thr, res);
out:
	json_object_set_new(res->diag, "values", vals);
	free(b);
	return rc;
}

/* The factor high/low of one series, with its standard error. */
static void eg__factor(const eg__gate_cell_t *lo, const eg__gate_cell_t *hi,
		       double *f, double *se)
{
	double rl = lo->se / lo->v, rh = hi->se / hi->v;

	*f = hi->v / lo->v;
	*se = lo->se > 0 && hi->se > 0 ? *f * sqrt(rl * rl + rh * rh) : NAN;
}

/* The low and high cells of one series; a repeated one is an error. */
static int eg__ends(const eg_gate_file_t *gf, const eg_gate_t *g,
		    const eg__cells_t *c, const size_t *idx, size_t n,
		    const eg__gate_cell_t **lo, const eg__gate_cell_t **hi,
		    char *err, size_t len)
{
	*lo = *hi = NULL;
	for (size_t i = 0; i < n; i++) {
		const eg__gate_cell_t *e = &c->c[idx[i]], **slot = NULL;
		double x;

		if (!eg__gate_axis_num(e, &x))
			continue;
		if (x == g->low)
			slot = lo;
		else if (x == g->high)
			slot = hi;
		if (!slot)
			continue;
		if (*slot)
			return eg__gate_gerr(
			    gf, g->axis_line, err, len,
			    "gate \"%s\": points \"%s\" and \"%s\" "
			    "are the same series at %s=%g; filter "
			    "them apart",
			    g->name, (*slot)->p->id, e->p->id, g->axis, x);
		*slot = e;
	}
	return 0;
}

/* One recovery series judged: its diagnostics appended, *b filled. */
static void eg__recovery_one(const eg_gate_t *g, const eg__gate_cell_t *lo,
			     const eg__gate_cell_t *hi, json_t *series,
			     eg__band_t *b, double *f)
{
	double se;
	json_t *d = json_object();

	eg__factor(lo, hi, f, &se);
	eg__band_judge(*f, se, g->min_factor, NAN, g->st.alpha, b);
	json_object_set_new(d, "series", json_string(lo->group));
	json_object_set_new(d, "at_low", eg__gate_cell_json(lo));
	json_object_set_new(d, "at_high", eg__gate_cell_json(hi));
	json_object_set_new(d, "factor", json_real(eg__gate_r4(*f)));
	if (b->noisy && b->finite) {
		double z = gsl_cdf_ugaussian_Pinv(1 - g->st.alpha);

		json_object_set_new(d, "factor_interval",
				    eg__gate_pair(*f * exp(-z * se / *f),
						  *f * exp(z * se / *f)));
		json_object_set_new(d, "p_below",
				    json_real(eg__gate_r4(b->p_fail)));
	}
	json_array_append_new(series, d);
}

/* The verdict and summary of a recovery gate over its ns series. */
static void eg__recovery_say(const eg_gate_t *g, const eg__gate_cell_t **ends,
			     const eg__band_t *b, const double *f, size_t ns,
			     eg_gate_result_t *res)
{
	size_t pick = 0;
	int worst = -1;
	char why[64] = "";

	if (!ns) {
		res->verdict = EG_VERDICT_SKIP;
		eg__gate_say(res, "no data: no series has both %s=%g and %s=%g",
			     g->axis, g->low, g->axis, g->high);
		return;
	}
	res->verdict = EG_VERDICT_PASS;
	for (size_t i = 0; i < ns; i++) {
		/* the series that decides: a fail, else an inconclusive
		 * one, else the smallest factor */
		int rank = b[i].verdict == EG_VERDICT_FAIL	     ? 2
			   : b[i].verdict == EG_VERDICT_INCONCLUSIVE ? 1
								     : 0;

		if (rank > worst || (rank == worst && f[i] < f[pick])) {
			worst = rank;
			pick = i;
		}
		if (b[i].verdict != EG_VERDICT_PASS && b[i].noisy)
			for (int e = 0; e < 2; e++) {
				eg__gate_remeasure_add(res, ends[2 * i + e]->p);
				eg__gate_remeasure_add(res, ends[2 * i + e]->q);
			}
	}
	res->verdict = worst == 2   ? EG_VERDICT_FAIL
		       : worst == 1 ? EG_VERDICT_INCONCLUSIVE
				    : EG_VERDICT_PASS;
	if (!b[pick].finite)
		snprintf(why, sizeof(why), " (not a number: 0/0 or x/0)");
	else if (worst == 1)
		snprintf(why, sizeof(why), " (the interval straddles it)");
	eg__gate_say(res, "%.3gx from %s=%g to %g in %s, want >= %g%s", f[pick],
		     g->axis, g->low, g->high, ends[2 * pick]->group,
		     g->min_factor, why);
}

int eg__gate_rule_recovery(const eg_gate_file_t *gf, const eg_gate_t *g,
			   const eg__cells_t *c, eg_gate_result_t *res,
			   char *err, size_t len)
{
	size_t *idx = calloc(c->n + 1, sizeof(*idx)),
	       *start = calloc(c->n + 2, sizeof(*start)), ns = 0;
	eg__band_t *b = calloc(c->n + 1, sizeof(*b));
	const eg__gate_cell_t **ends = calloc(2 * c->n + 2, sizeof(*ends));
	double *f = calloc(c->n + 1, sizeof(*f));
	json_t *series = json_array();
	int rc = EG_ENOMEM, ng;

	if (!idx || !start || !b || !ends || !f || !series ||
	    (ng = eg__gate_groups(c, idx, start)) < 0)
		goto out;
	json_object_set_new(res->diag, "axis", json_string(g->axis));
	json_object_set_new(res->diag, "low", json_real(g->low));
	json_object_set_new(res->diag, "high", json_real(g->high));
	json_object_set_new(res->diag, "min_factor", json_real(g->min_factor));
	json_object_set_new(res->diag, "correction",
			    json_string(eg_correction_name(g->st.correction)));
	for (int k = 0; k < ng; k++) {
		const eg__gate_cell_t *lo, *hi;

		if ((rc = eg__ends(gf, g, c, idx + start[k],
				   start[k + 1] - start[k], &lo, &hi, err,
				   len)) < 0)
			goto out;
		if (!lo || !hi)
			continue;
		ends[2 * ns] = lo;
		ends[2 * ns + 1] = hi;
		eg__recovery_one(g, lo, hi, series, &b[ns], &f[ns]);
		ns++;
	}
	if ((rc = eg__band_verdicts(g, b, ns)) < 0)
		goto out;
	eg__recovery_say(g, ends, b, f, ns, res);
	rc = 0;
out:
	json_object_set_new(res->diag, "series", series);
	EG_FREE(idx, start, b, ends, f);
	return rc;
}
