/* The regression rule: every current point that has a twin in the
 * baseline (same suite, arm and axis values) is compared with it by
 * eg_regress_compare; the gate fails if any comparison fails, is
 * inconclusive if any is (those points are listed for re-measurement),
 * and passes otherwise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "gate_int.h"

static const eg_point_t *eg__twin(const eg_gate_data_t *d, const eg_point_t *p,
				  const char *metric, const eg_point_t **dup)
{
	const eg_point_t *found = NULL;

	*dup = NULL;
	for (size_t f = 0; f < d->n_base; f++)
		for (size_t i = 0; i < d->base[f].n_points; i++) {
			const eg_point_t *q = &d->base[f].points[i];

			if (strcmp(q->suite, p->suite) ||
			    strcmp(q->arm, p->arm) ||
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

static json_t *eg__cmp_json(const eg__cell_t *e, const eg_point_t *b,
			    const eg_metric_t *mb, const eg_regress_out_t *o)
{
	json_t *j = json_object();

	json_object_set_new(j, "at", json_string(e->at));
	json_object_set_new(j, "arm", json_string(e->p->arm));
	json_object_set_new(j, "baseline", json_string(b->id));
	json_object_set_new(j, "baseline_median",
			    json_real(eg__r4(mb->s.median)));
	json_object_set_new(j, "median", json_real(eg__r4(e->v)));
	json_object_set_new(j, "change_pct",
			    json_real(eg__r4(100 * o->change)));
	if (!isnan(o->lo))
		json_object_set_new(j, "interval_pct",
				    eg__pair(100 * o->lo, 100 * o->hi));
	if (!isnan(o->p_worse)) {
		json_object_set_new(j, "p_worse",
				    json_real(eg__r4(o->p_worse)));
		json_object_set_new(j, "p_better",
				    json_real(eg__r4(o->p_better)));
	}
	json_object_set_new(
	    j, "n",
	    json_pack("[II]", (json_int_t)o->n_base, (json_int_t)o->n_cur));
	json_object_set_new(j, "method", json_string(o->method));
	json_object_set_new(j, "verdict",
			    json_string(eg_gate_verdict_name(o->verdict)));
	if (o->why[0])
		json_object_set_new(j, "why", json_string(o->why));
	return j;
}

int eg__rule_regression(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg_gate_data_t *d, eg_gate_result_t *res,
			char *err, size_t len)
{
	const eg_metric_info_t *mi = eg_metric_info(g->metric);
	eg_regress_opts_t o = {g->statistic,
			       g->better,
			       g->st.alpha,
			       g->st.min_effect,
			       g->st.min_reps,
			       g->st.resamples,
			       0};
	size_t unpaired, nf = 0, ni = 0, np = 0;
	eg__cells_t c = {0};
	json_t *cmps;
	double worst = -INFINITY;
	int rc;

	if (o.better == EG_BETTER_NONE && mi)
		o.better = mi->better;
	if (o.better == EG_BETTER_NONE)
		return eg__gerr(gf, g->metric_line, err, len,
				"gate \"%s\": which way is better for %s? "
				"give better: lower or higher",
				g->name, g->metric);
	json_object_set_new(res->diag, "statistic",
			    json_string(o.statistic == EG_REGRESS_MWU
					    ? "mann-whitney"
					    : "bootstrap"));
	json_object_set_new(
	    res->diag, "better",
	    json_string(o.better == EG_BETTER_LOWER ? "lower" : "higher"));
	json_object_set_new(res->diag, "min_effect", json_real(o.min_effect));
	json_object_set_new(res->diag, "alpha", json_real(o.alpha));
	json_object_set_new(res->diag, "min_reps",
			    json_integer((json_int_t)o.min_reps));
	if (!d->base || !d->n_base) {
		res->verdict = EG_VERDICT_SKIP;
		snprintf(res->summary, sizeof(res->summary),
			 "no data: no baseline given (--baseline FILE)");
		return 0;
	}
	rc = eg__select(gf, g, d->cur, d->n_cur, 1, &c, &unpaired, err, len);
	if (rc)
		return rc;
	cmps = json_array();
	if (!cmps) {
		eg__cells_free(&c);
		return EG_ENOMEM;
	}
	json_object_set_new(res->diag, "comparisons", cmps);
	res->verdict = EG_VERDICT_PASS;
	for (size_t i = 0; i < c.n; i++) {
		const eg__cell_t *e = &c.c[i];
		const eg_point_t *b, *dup;
		const eg_metric_t *mb;
		eg_regress_out_t out;
		double bad;

		b = eg__twin(d, e->p, g->metric, &dup);
		if (dup) {
			rc = eg__gerr(gf, g->line, err, len,
				      "gate \"%s\": baseline points \"%s\" and "
				      "\"%s\" are both twins of \"%s\"",
				      g->name, b->id, dup->id, e->p->id);
			goto out;
		}
		if (!b)
			continue;
		np++;
		mb = eg_point_metric(b, g->metric);
		o.seed = eg__seed(g->name, e->p->id);
		rc = eg_regress_compare(mb, eg_point_metric(e->p, g->metric),
					&o, &out);
		if (rc) {
			rc =
			    eg__gerr(gf, g->line, err, len,
				     "gate \"%s\": cannot compare \"%s\" "
				     "with \"%s\": %s",
				     g->name, e->p->id, b->id, eg_strerror(rc));
			goto out;
		}
		json_array_append_new(cmps, eg__cmp_json(e, b, mb, &out));
		bad = o.better == EG_BETTER_LOWER ? out.change : -out.change;
		if (out.verdict == EG_VERDICT_FAIL && !nf++) {
			res->verdict = EG_VERDICT_FAIL;
			snprintf(
			    res->summary, sizeof(res->summary),
			    "%+.1f%% at %s (%s %s is better), interval "
			    "[%+.1f%%, %+.1f%%] beyond %g%%",
			    100 * out.change, e->at, g->metric,
			    o.better == EG_BETTER_LOWER ? "lower" : "higher",
			    100 * out.lo, 100 * out.hi, 100 * o.min_effect);
		}
		if (out.verdict == EG_VERDICT_INCONCLUSIVE) {
			json_array_append_new(res->remeasure,
					      json_string(e->p->id));
			if (!nf && !ni)
				snprintf(res->summary, sizeof(res->summary),
					 "inconclusive at %s: %s", e->at,
					 out.why);
			ni++;
			if (!nf)
				res->verdict = EG_VERDICT_INCONCLUSIVE;
		}
		if (!nf && !ni && bad > worst) {
			worst = bad;
			snprintf(res->summary, sizeof(res->summary),
				 "worst change %+.1f%% at %s, within %g%% with "
				 "confidence",
				 100 * out.change, e->at, 100 * o.min_effect);
		}
	}
	if (!np) {
		res->verdict = EG_VERDICT_SKIP;
		snprintf(res->summary, sizeof(res->summary),
			 "no data: no point with %s has a twin in the baseline",
			 g->metric);
	} else if (nf || ni) {
		char first[sizeof(res->summary)];

		snprintf(first, sizeof(first), "%s", res->summary);
		snprintf(res->summary, sizeof(res->summary),
			 "%zu of %zu %s; %.250s", nf ? nf : ni, np,
			 nf ? "regressed" : "inconclusive", first);
	}
	rc = 0;
out:
	eg__cells_free(&c);
	return rc;
}
