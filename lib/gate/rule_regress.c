/* The regression rule (docs/gates.md): every current point with a twin in
 * the baseline (same suite, arm and axis values) is compared with it by
 * eg_regress_compare; against a history by eg_regress_history; with
 * versus: [B, A], arm B of the current results against its twin of arm
 * A, launch by launch (an A/B job).  The fail side is corrected over the
 * gate's points (Holm by default); with aggregate: geomean the gate is
 * one comparison of the mean change.  The gate fails if any comparison
 * fails, is inconclusive if any is (those points are listed for
 * re-measurement), and passes otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

/* The point of files f like p (suite, arm or arm instead, axes) that has
 * the metric; *dup set when there are two. */
static const eg_point_t *eg__twin_in(const eg_results_t *f, size_t nf,
				     const eg_point_t *p, const char *arm,
				     const char *metric, const eg_point_t **dup)
{
	const eg_point_t *found = NULL;

	*dup = NULL;
	for (size_t k = 0; k < nf; k++)
		for (size_t i = 0; i < f[k].n_points; i++) {
			const eg_point_t *q = &f[k].points[i];

			if (q == p || strcmp(q->suite, p->suite) ||
			    strcmp(q->arm, arm ? arm : p->arm) ||
			    !json_equal(q->axes, p->axes) ||
			    !eg_point_metric(q, metric))
				continue;
			if (found) {
				*dup = q;
				return found;
			}
			found = q;
		}
	return found;
}

static uint64_t eg__seed(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 0x100000001b3ull;
	h = (h ^ '#') * 0x100000001b3ull;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
	return h;
}

/* One comparison and what it was made of. */
typedef struct eg__cmp {
	const eg__gate_cell_t *e;
	const eg_point_t **bp; /* twins, one per baseline campaign */
	const eg_metric_t **bm;
	size_t nb, have;
	eg_regress_out_t out;
	json_t *series; /* history: the campaigns' medians, change points */
} eg__cmp_t;

/* Launch i of m, or NULL: its samples and count. */
static const double *eg__launch(const eg_metric_t *m, size_t i, uint32_t *c)
{
	size_t off = 0;

	for (size_t j = 0; j < i; j++)
		off += m->launch_n[j];
	*c = m->launch_n[i];
	return m->samples + off;
}

/* The launches of a and b whose passes both have, in the same order:
 * launch k of one ran beside launch k of the other. */
static int eg__align(const eg_point_t *pa, const eg_metric_t *a,
		     const eg_point_t *pb, const eg_metric_t *b,
		     eg_metric_t *oa, eg_metric_t *ob)
{
	size_t na = a->n_samples, nb = b->n_samples, L = 0;

	memset(oa, 0, sizeof(*oa));
	memset(ob, 0, sizeof(*ob));
	if (!pa->passes || !pb->passes || !a->launch_n || !b->launch_n)
		return 1; /* not paired: compared as they are */
	oa->samples = malloc(na * sizeof(double));
	ob->samples = malloc(nb * sizeof(double));
	oa->launch_n = calloc(a->n_launches, sizeof(uint32_t));
	ob->launch_n = calloc(a->n_launches, sizeof(uint32_t));
	if (!oa->samples || !ob->samples || !oa->launch_n || !ob->launch_n)
		return EG_ENOMEM;
	for (size_t i = 0; i < pa->n_passes && i < a->n_launches; i++)
		for (size_t j = 0; j < pb->n_passes && j < b->n_launches; j++) {
			uint32_t ca, cb;
			const double *xa, *xb;

			if (pa->passes[i] != pb->passes[j])
				continue;
			xa = eg__launch(a, i, &ca);
			xb = eg__launch(b, j, &cb);
			if (!ca || !cb)
				continue;
			memcpy(oa->samples + oa->n_samples, xa,
			       ca * sizeof(double));
			memcpy(ob->samples + ob->n_samples, xb,
			       cb * sizeof(double));
			oa->n_samples += ca;
			ob->n_samples += cb;
			oa->launch_n[L] = ca;
			ob->launch_n[L++] = cb;
		}
	oa->n_launches = ob->n_launches = L;
	oa->name = a->name;
	ob->name = b->name;
	oa->s = a->s;
	ob->s = b->s;
	oa->s.n = oa->n_samples;
	ob->s.n = ob->n_samples;
	if (L) {
		oa->s.median = eg_stats_median(oa->samples, oa->n_samples);
		ob->s.median = eg_stats_median(ob->samples, ob->n_samples);
	}
	return L >= 2 ? 0 : 1;
}

static void eg__metric_free(eg_metric_t *m)
{
	free(m->samples);
	free(m->launch_n);
}

/* The history's series of medians, oldest first and the current last,
 * and where its level moved (E-divisive): for the report. */
static json_t *eg__series(const eg_gate_data_t *d, const eg__cmp_t *c,
			  const eg_metric_t *cm)
{
	double x[65];
	size_t at[65], n = 0, ncp = 0;
	eg_changepoint_t cp[8];
	json_t *o = json_object(), *v = json_array(), *a = json_array();

	for (size_t j = 0; j < c->nb && n < 64; j++)
		if (c->bm[j]) {
			at[n] = j;
			x[n++] = c->bm[j]->s.median;
		}
	at[n] = c->nb;
	x[n++] = cm->s.median;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, json_real(eg__gate_r4(x[i])));
	for (size_t i = 0; i < n; i++)
		x[i] = log(x[i]);
	eg_stats_changepoints(x, n, 3, 0.05, 199, 0xc0ffee, cp, 8, &ncp);
	for (size_t i = 0; i < ncp; i++) {
		size_t j = at[cp[i].at];
		const json_t *ctx = j < c->nb ? d->base[j].context : NULL;
		const char *when =
		    json_string_value(json_object_get(ctx, "created"));

		json_array_append_new(a,
				      json_pack("{s:I, s:s, s:f}", "from",
						(json_int_t)cp[i].at, "created",
						when ? when : "(current)", "p",
						eg__gate_r4(cp[i].p)));
	}
	json_object_set_new(o, "medians", v);
	json_object_set_new(o, "change_points", a);
	return o;
}

/* One comparison: versus (paired when the launches line up), history or
 * one baseline. */
static int eg__compare(const eg_gate_t *g, const eg_gate_data_t *d,
		       eg__cmp_t *c, eg_regress_opts_t *o)
{
	const eg_metric_t *cm = eg_point_metric(c->e->p, g->metric);
	const eg_metric_t *live[64];
	size_t k = 0;
	int rc;

	o->seed = eg__seed(g->name, c->e->p->id);
	o->paired = 0;
	if (g->versus[0]) {
		eg_metric_t a, b;

		rc = eg__align(c->bp[0], c->bm[0], c->e->p, cm, &a, &b);
		if (rc < 0)
			return rc;
		o->paired = rc == 0;
		rc = eg_regress_compare(o->paired ? &a : c->bm[0],
					o->paired ? &b : cm, o, &c->out);
		eg__metric_free(&a);
		eg__metric_free(&b);
		return rc;
	}
	if (!eg_gate_data_history(d) || c->nb == 1)
		return eg_regress_compare(c->bm[0], cm, o, &c->out);
	for (size_t j = 0; j < c->nb && k < 64; j++)
		if (c->bm[j])
			live[k++] = c->bm[j];
	c->series = eg__series(d, c, cm);
	return eg_regress_history(live, k, cm, o, &c->out);
}

/* The twins of cell e: versus, one per history campaign, or the one in
 * the baseline files.  <0 after a message (two twins). */
static int eg__twins(const eg_gate_file_t *gf, const eg_gate_t *g,
		     const eg_gate_data_t *d, eg__cmp_t *c, char *err,
		     size_t len)
{
	const eg_point_t *dup;

	c->nb = g->versus[0] || !eg_gate_data_history(d) ? 1 : d->n_base;
	c->bp = calloc(c->nb, sizeof(*c->bp));
	c->bm = calloc(c->nb, sizeof(*c->bm));
	if (!c->bp || !c->bm)
		return EG_ENOMEM;
	for (size_t j = 0; j < c->nb; j++) {
		const eg_results_t *f = g->versus[0] ? d->cur : &d->base[j];
		size_t nf = g->versus[0] ? d->n_cur : 1;

		if (!g->versus[0] && !eg_gate_data_history(d)) {
			f = d->base;
			nf = d->n_base;
		}
		c->bp[j] =
		    eg__twin_in(f, nf, c->e->p, g->versus[1], g->metric, &dup);
		if (dup)
			return eg__gate_gerr(
			    gf, g->line, err, len,
			    "gate \"%s\": points \"%s\" and \"%s\" "
			    "are both twins of \"%s\"",
			    g->name, c->bp[j]->id, dup->id, c->e->p->id);
		if (c->bp[j]) {
			c->bm[j] = eg_point_metric(c->bp[j], g->metric);
			c->have++;
		}
	}
	return 0;
}

static json_t *eg__cmp_json(const eg__cmp_t *c, int rejected)
{
	const eg_regress_out_t *o = &c->out;
	json_t *j = json_object();
	const eg_point_t *b = NULL;

	for (size_t k = c->nb; k-- > 0 && !b;)
		b = c->bp[k];
	json_object_set_new(j, "at", json_string(c->e->at));
	json_object_set_new(j, "arm", json_string(c->e->p->arm));
	if (b)
		json_object_set_new(j, "baseline", json_string(b->id));
	json_object_set_new(j, "median", json_real(eg__gate_r4(c->e->v)));
	json_object_set_new(j, "change_pct",
			    json_real(eg__gate_r4(100 * o->change)));
	if (!isnan(o->lo))
		json_object_set_new(j, "interval_pct",
				    eg__gate_pair(100 * o->lo, 100 * o->hi));
	if (!isnan(o->p_worse))
		json_object_set_new(j, "p_worse",
				    json_real(eg__gate_r4(o->p_worse)));
	if (!strcmp(o->method, "history-t") && !isnan(o->mde))
		json_object_set_new(j, "mde_pct",
				    json_real(eg__gate_r4(100 * o->mde)));
	json_object_set_new(
	    j, "n",
	    json_pack("[II]", (json_int_t)o->n_base, (json_int_t)o->n_cur));
	json_object_set_new(j, "method", json_string(o->method));
	json_object_set_new(j, "units", json_string(o->units));
	json_object_set_new(j, "verdict",
			    json_string(eg_gate_verdict_name(o->verdict)));
	if (c->series)
		json_object_set(j, "history", c->series);
	if (o->verdict == EG_VERDICT_INCONCLUSIVE && !rejected && o->why[0])
		json_object_set_new(j, "why", json_string(o->why));
	return j;
}

/* "[lo%, hi%]" or, without an interval, "p_worse P". */
static const char *eg__iv(const eg_regress_out_t *o, char *buf, size_t len)
{
	if (!isnan(o->lo))
		snprintf(buf, len, "interval [%+.1f%%, %+.1f%%]", 100 * o->lo,
			 100 * o->hi);
	else
		snprintf(buf, len, "p_worse %.3g", o->p_worse);
	return buf;
}

/* The summary's words on the first failing point. */
static void eg__first_fail(char *buf, size_t len, const eg_gate_t *g,
			   const eg_regress_opts_t *o, const eg__cmp_t *c,
			   const char *dir)
{
	const eg_regress_out_t *out = &c->out;
	char iv[96];

	if (g->effect == EG_EFFECT_ESTIMATE)
		snprintf(buf, len,
			 "%+.1f%% at %s (%s %s is better), beyond %g%% and "
			 "worse than no change: %s, p_worse %.3g (%s)",
			 100 * out->change, c->e->at, g->metric, dir,
			 100 * o->min_effect, eg__iv(out, iv, sizeof(iv)),
			 out->p_worse, eg_correction_name(g->st.correction));
	else
		snprintf(buf, len,
			 "%+.1f%% at %s (%s %s is better), %s beyond %g%% (%s)",
			 100 * out->change, c->e->at, g->metric, dir,
			 eg__iv(out, iv, sizeof(iv)), 100 * o->min_effect,
			 eg_correction_name(g->st.correction));
}

/* The gate's verdict and summary from its comparisons, fails corrected
 * over the family; failing and inconclusive points to measure again. */
static void eg__verdicts(const eg_gate_t *g, const eg_regress_opts_t *o,
			 eg__cmp_t *c, size_t n, const int *rej, json_t *cmps,
			 eg_gate_result_t *res)
{
	size_t nf = 0, ni = 0, worst = n;
	char first[sizeof(res->summary)] = "";
	const char *dir = o->better == EG_BETTER_LOWER ? "lower" : "higher";

	res->verdict = EG_VERDICT_PASS;
	for (size_t i = 0; i < n; i++) {
		eg_regress_out_t *out = &c[i].out;
		double bad =
		    o->better == EG_BETTER_LOWER ? out->change : -out->change;

		if (rej[i])
			out->verdict = EG_VERDICT_FAIL;
		else if (out->verdict == EG_VERDICT_FAIL) {
			out->verdict = EG_VERDICT_INCONCLUSIVE;
			snprintf(out->why, sizeof(out->why),
				 "worse at alpha %g, not after the %s "
				 "correction over %zu comparisons (p_worse "
				 "%.3g)",
				 o->alpha, eg_correction_name(g->st.correction),
				 n, out->p_worse);
		}
		json_array_append_new(cmps, eg__cmp_json(&c[i], rej[i]));
		if (out->verdict != EG_VERDICT_PASS) {
			eg__gate_remeasure_add(res, c[i].e->p);
			for (size_t k = 0; g->versus[0] && k < c[i].nb; k++)
				eg__gate_remeasure_add(res, c[i].bp[k]);
		}
		if (out->verdict == EG_VERDICT_FAIL && !nf++)
			eg__first_fail(first, sizeof(first), g, o, &c[i], dir);
		if (out->verdict == EG_VERDICT_INCONCLUSIVE && !nf && !ni++)
			snprintf(first, sizeof(first), "inconclusive at %s: %s",
				 c[i].e->at, out->why);
		if (worst == n ||
		    bad > (o->better == EG_BETTER_LOWER ? c[worst].out.change
							: -c[worst].out.change))
			worst = i;
	}
	if (nf || ni) {
		res->verdict = nf ? EG_VERDICT_FAIL : EG_VERDICT_INCONCLUSIVE;
		snprintf(res->summary, sizeof(res->summary),
			 "%zu of %zu %s; %.250s", nf ? nf : ni, n,
			 nf ? "regressed" : "inconclusive", first);
	} else {
		snprintf(res->summary, sizeof(res->summary),
			 "worst change %+.1f%% at %s, within %g%% with "
			 "confidence",
			 100 * c[worst].out.change, c[worst].e->at,
			 100 * o->min_effect);
	}
}

/* Against a history, the gate's power (docs/gates.md, "Gate power"):
 * the largest minimum detectable effect of its comparisons, at the
 * strictest step of the correction over them (alpha / n), into the
 * diagnostics and the summary, so that a pass is not read as "no
 * regression of any size". */
static void eg__gate_mde(const eg_gate_t *g, const eg_regress_opts_t *o,
			 const eg__cmp_t *c, size_t n, eg_gate_result_t *res)
{
	double a = n > 1 && g->st.correction != EG_CORRECT_NONE
		       ? o->alpha / (double)n
		       : o->alpha,
	       worst = NAN;
	size_t nb = 0, len;

	for (size_t i = 0; i < n; i++) {
		const eg_regress_out_t *out = &c[i].out;
		double m;

		if (!out->method || strcmp(out->method, "history-t"))
			continue;
		m = eg__gate_history_mde(out->spread, out->n_base, a, o);
		if (!isnan(m) && (isnan(worst) || m > worst)) {
			worst = m;
			nb = out->n_base;
		}
	}
	if (isnan(worst))
		return;
	json_object_set_new(res->diag, "mde_pct",
			    json_real(eg__gate_r4(100 * worst)));
	len = strlen(res->summary);
	snprintf(res->summary + len, sizeof(res->summary) - len,
		 "; MDE %.0f%% (%zu campaigns)", 100 * worst, nb);
}

/* aggregate: geomean: one comparison over the points with complete
 * twins, written as the gate's only comparison. */
static int eg__aggregate_one(const eg_gate_t *g, const eg_gate_data_t *d,
			     eg__cmp_t *c, size_t n, eg_regress_opts_t *o,
			     eg_regress_out_t *out, size_t *used)
{
	eg__twin_t *t = calloc(n + 1, sizeof(*t));
	size_t k = 0;
	int rc;

	if (!t)
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (c[i].have < c[i].nb)
			continue;
		t[k++] = (eg__twin_t){c[i].e->p, c[i].bp,
				      eg_point_metric(c[i].e->p, g->metric),
				      c[i].bm};
	}
	*used = k;
	o->seed = eg__seed(g->name, "aggregate");
	o->paired = g->versus[0] != NULL;
	rc = k ? eg__aggregate(t, k, c[0].nb,
			       eg_gate_data_history(d) && !g->versus[0],
			       g->aggregate == EG_AGG_MEDIAN, o, out)
	       : EG_EINVAL;
	free(t);
	return rc;
}

/* The options of the gate, and its diagnostics' head. */
static int eg__opts(const eg_gate_file_t *gf, const eg_gate_t *g,
		    const eg_gate_data_t *d, eg_regress_opts_t *o,
		    eg_gate_result_t *res, char *err, size_t len)
{
	const eg_metric_info_t *mi = eg_metric_info(g->metric);

	*o = (eg_regress_opts_t){.statistic = g->statistic,
				 .better = g->better,
				 .alpha = g->st.alpha,
				 .min_effect = g->st.min_effect,
				 .min_reps = g->st.min_reps,
				 .resamples = g->st.resamples,
				 .effect = g->effect};
	if (o->better == EG_BETTER_NONE && mi)
		o->better = mi->better;
	if (o->better == EG_BETTER_NONE)
		return eg__gate_gerr(gf, g->metric_line, err, len,
				     "gate \"%s\": which way is better for %s? "
				     "give better: lower or higher",
				     g->name, g->metric);
	json_object_set_new(res->diag, "statistic",
			    json_string(o->statistic == EG_REGRESS_MWU
					    ? "mann-whitney"
					    : "bootstrap"));
	json_object_set_new(
	    res->diag, "better",
	    json_string(o->better == EG_BETTER_LOWER ? "lower" : "higher"));
	json_object_set_new(res->diag, "min_effect", json_real(o->min_effect));
	json_object_set_new(res->diag, "effect",
			    json_string(g->effect == EG_EFFECT_ESTIMATE
					    ? "estimate"
					    : "interval"));
	json_object_set_new(res->diag, "alpha", json_real(o->alpha));
	json_object_set_new(res->diag, "min_reps",
			    json_integer((json_int_t)o->min_reps));
	json_object_set_new(res->diag, "correction",
			    json_string(eg_correction_name(g->st.correction)));
	json_object_set_new(res->diag, "baseline",
			    json_string(g->versus[0] ? "versus"
					: eg_gate_data_history(d)
					    ? "history"
					    : "campaign"));
	if (g->versus[0])
		json_object_set_new(
		    res->diag, "versus",
		    json_pack("[ss]", g->versus[0], g->versus[1]));
	if (eg_gate_data_history(d) && !g->versus[0])
		json_object_set_new(res->diag, "campaigns",
				    json_integer((json_int_t)d->n_base));
	if (g->aggregate != EG_AGG_NONE)
		json_object_set_new(res->diag, "aggregate",
				    json_string(g->aggregate == EG_AGG_MEDIAN
						    ? "median"
						    : "geomean"));
	return 0;
}

static void eg__cmps_free(eg__cmp_t *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].bp);
		free(c[i].bm);
		json_decref(c[i].series);
	}
	free(c);
}

/* Every cell compared with its twin(s); *n of them had one. */
static int eg__compare_all(const eg_gate_file_t *gf, const eg_gate_t *g,
			   const eg_gate_data_t *d, const eg__cells_t *cells,
			   eg_regress_opts_t *o, eg__cmp_t *c, size_t *n,
			   char *err, size_t len)
{
	int rc;

	*n = 0;
	for (size_t i = 0; i < cells->n; i++) {
		eg__cmp_t *x = &c[*n];

		x->e = &cells->c[i];
		if ((rc = eg__twins(gf, g, d, x, err, len)) < 0)
			return rc;
		if (!x->have) {
			free(x->bp);
			free(x->bm);
			memset(x, 0, sizeof(*x));
			continue;
		}
		(*n)++;
		if (g->aggregate != EG_AGG_NONE)
			continue;
		if ((rc = eg__compare(g, d, x, o)) < 0)
			return eg__gate_gerr(
			    gf, g->line, err, len,
			    "gate \"%s\": cannot compare \"%s\" "
			    "with its baseline: %s",
			    g->name, x->e->p->id, eg_strerror(rc));
	}
	return 0;
}

/* An aggregate over launches (not a history's campaigns) that one-launch
 * points of an older epgate's file could not feed: it says which file
 * to measure again (docs/results-v1.md, "Older files"). */
static void eg__aggregate_older(const eg_gate_t *g, const eg_gate_data_t *d,
				const eg__cmp_t *c, size_t n,
				eg_regress_out_t *out)
{
	if (out->verdict != EG_VERDICT_INCONCLUSIVE ||
	    (eg_gate_data_history(d) && !g->versus[0]) ||
	    (out->n_base >= 2 && out->n_cur >= 2))
		return;
	for (size_t i = 0; i < n; i++)
		if (eg__older_launches(d, c[i].e->p, c[i].bp, c[i].nb, out->why,
				       sizeof(out->why)))
			return;
}

/* The aggregate gate: one comparison, every point behind it listed for
 * re-measurement when it does not pass. */
static int eg__rule_aggregate(const eg_gate_file_t *gf, const eg_gate_t *g,
			      const eg_gate_data_t *d, eg__cmp_t *c, size_t n,
			      eg_regress_opts_t *o, json_t *cmps,
			      eg_gate_result_t *res, char *err, size_t len)
{
	eg__gate_cell_t cell = *c[0].e;
	eg__cmp_t one = c[0];
	char at[96];
	int rej, rc;
	size_t used;

	rc = eg__aggregate_one(g, d, c, n, o, &one.out, &used);
	if (rc < 0)
		return eg__gate_gerr(gf, g->line, err, len,
				     "gate \"%s\": cannot aggregate: %s",
				     g->name, eg_strerror(rc));
	eg__aggregate_older(g, d, c, n, &one.out);
	snprintf(at, sizeof(at), "the %s of %zu point(s)",
		 g->aggregate == EG_AGG_MEDIAN ? "median" : "geometric mean",
		 used);
	cell.at = at;
	cell.v = NAN;
	one.e = &cell;
	rej = !isnan(one.out.p_worse) && one.out.p_worse < o->alpha &&
	      one.out.verdict == EG_VERDICT_FAIL;
	eg__verdicts(g, o, &one, 1, &rej, cmps, res);
	eg__gate_mde(g, o, &one, 1, res);
	for (size_t i = 0; res->verdict != EG_VERDICT_PASS && i < n; i++) {
		eg__gate_remeasure_add(res, c[i].e->p);
		for (size_t k = 0; g->versus[0] && k < c[i].nb; k++)
			eg__gate_remeasure_add(res, c[i].bp[k]);
	}
	return 0;
}

/* ratio: [A, B]: the same rule on the points of launch-by-launch ratios
 * A/B (lib/gate/ratio_points.c), as arm "A/B". */
static int eg__rule_ratio(const eg_gate_file_t *gf, const eg_gate_t *g,
			  const eg_gate_data_t *d, eg_gate_result_t *res,
			  char *err, size_t len)
{
	char label[256], *arms[1] = {label};
	eg_results_t *cur = NULL, *base = NULL;
	eg_gate_t g2 = *g;
	eg_gate_data_t d2 = *d;
	int rc;

	snprintf(label, sizeof(label), "%s/%s", g->ratio[0], g->ratio[1]);
	g2.ratio[0] = g2.ratio[1] = NULL;
	g2.arms = arms;
	g2.n_arms = 1;
	/* one ratio per launch: the launches are the repetitions */
	g2.st.min_reps = 3;
	rc = eg__ratio_files(g, label, d->cur, d->n_cur, &cur);
	if (!rc && d->base)
		rc = eg__ratio_files(g, label, d->base, d->n_base, &base);
	if (!rc) {
		d2.cur = cur;
		d2.base = base;
		json_object_set_new(
		    res->diag, "ratio",
		    json_pack("[ss]", g->ratio[0], g->ratio[1]));
		rc = eg__rule_regression(gf, &g2, &d2, res, err, len);
	}
	eg_results_free_all(cur, d->n_cur);
	if (base)
		eg_results_free_all(base, d->n_base);
	return rc;
}

int eg__rule_regression(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg_gate_data_t *d, eg_gate_result_t *res,
			char *err, size_t len)
{
	eg_regress_opts_t o;

	if (g->ratio[0])
		return eg__rule_ratio(gf, g, d, res, err, len);
	eg__cells_t cells = {0};
	eg__cmp_t *c = NULL;
	size_t unpaired, n = 0;
	double *p = NULL;
	int *rej = NULL, rc;
	json_t *cmps;

	if ((rc = eg__opts(gf, g, d, &o, res, err, len)))
		return rc;
	if (!g->versus[0] && (!d->base || !d->n_base)) {
		res->verdict = EG_VERDICT_SKIP;
		snprintf(res->summary, sizeof(res->summary),
			 "no data: no baseline given (--baseline FILE or "
			 "--history DIR)");
		return 0;
	}
	if ((rc = eg__select(gf, g, d->cur, d->n_cur, 1, &cells, &unpaired, err,
			     len)))
		return rc;
	cmps = json_array();
	c = calloc(cells.n + 1, sizeof(*c));
	p = calloc(cells.n + 1, sizeof(*p));
	rej = calloc(cells.n + 1, sizeof(*rej));
	rc = EG_ENOMEM;
	if (!cmps || !c || !p || !rej)
		goto out;
	json_object_set_new(res->diag, "comparisons", json_incref(cmps));
	if ((rc = eg__compare_all(gf, g, d, &cells, &o, c, &n, err, len)) < 0)
		goto out;
	rc = 0;
	if (!n) {
		res->verdict = EG_VERDICT_SKIP;
		snprintf(res->summary, sizeof(res->summary),
			 "no data: no point with %s has a twin %s", g->metric,
			 g->versus[0] ? "of the arm it is judged against"
				      : "in the baseline");
	} else if (g->aggregate != EG_AGG_NONE) {
		rc =
		    eg__rule_aggregate(gf, g, d, c, n, &o, cmps, res, err, len);
	} else {
		for (size_t i = 0; i < n; i++)
			p[i] = c[i].out.p_worse;
		if ((rc = eg_stats_correct(p, n, o.alpha, g->st.correction,
					   rej)) == 0) {
			/* effect: estimate: the correction judged "worse
			 * than no change"; a point fails when, besides,
			 * its change is beyond min_effect */
			for (size_t i = 0;
			     g->effect == EG_EFFECT_ESTIMATE && i < n; i++)
				rej[i] = rej[i] &&
					 c[i].out.verdict == EG_VERDICT_FAIL;
			eg__verdicts(g, &o, c, n, rej, cmps, res);
			eg__gate_mde(g, &o, c, n, res);
		}
	}
out:
	json_decref(cmps);
	eg__cmps_free(c, cells.n);
	free(p);
	free(rej);
	eg__gate_cells_free(&cells);
	return rc;
}
