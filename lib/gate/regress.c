/* The regression decision for one metric at one point: is the current
 * campaign worse than the baseline by more than min_effect?  Two
 * one-sided questions at level alpha each, so the verdict has three
 * values (criterion.rs and Chromium's pinpoint do the same):
 *   worse by more than min_effect, with confidence  -> fail
 *   not worse by min_effect or more, with confidence -> pass
 *   neither (too noisy, too few repetitions)         -> inconclusive. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "epgate/gate.h"

static size_t eg__n(const eg_metric_t *m)
{
	return m->n_samples ? m->n_samples : m->s.n;
}

/* Mann-Whitney of cur against the baseline moved to the threshold. */
static int eg__mwu(const eg_metric_t *base, const eg_metric_t *cur,
		   const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double k = o->better == EG_BETTER_LOWER ? 1 + o->min_effect
						: 1 - o->min_effect;
	double *b = malloc(base->n_samples * sizeof(*b));
	eg_mwu_t t;
	int rc;

	if (!b)
		return EG_ENOMEM;
	for (size_t i = 0; i < base->n_samples; i++)
		b[i] = base->samples[i] * k;
	rc = eg_stats_mwu(cur->samples, cur->n_samples, b, base->n_samples, &t);
	free(b);
	if (rc)
		return rc;
	if (o->better == EG_BETTER_LOWER) {
		out->p_worse = t.p_greater;
		out->p_better = t.p_less;
	} else {
		out->p_worse = t.p_less;
		out->p_better = t.p_greater;
	}
	if (out->p_worse < o->alpha)
		out->verdict = EG_VERDICT_FAIL;
	else if (out->p_better < o->alpha)
		out->verdict = EG_VERDICT_PASS;
	else
		out->verdict = EG_VERDICT_INCONCLUSIVE;
	return 0;
}

/* Interval [lo, hi] of the change from the stored 95% intervals,
 * normal on the log scale; 0 when they are missing. */
static int eg__summary_interval(const eg_metric_t *base, const eg_metric_t *cur,
				double alpha, double *lo, double *hi)
{
	double z95 = gsl_cdf_ugaussian_Pinv((1 + EG_STATS_CI_LEVEL) / 2);
	double z = gsl_cdf_ugaussian_Pinv(1 - alpha), sb, sc, l, s;

	if (!(base->s.ci_lo > 0) || !(cur->s.ci_lo > 0) ||
	    !isfinite(base->s.ci_hi) || !isfinite(cur->s.ci_hi))
		return 0;
	sb = log(base->s.ci_hi / base->s.ci_lo) / (2 * z95);
	sc = log(cur->s.ci_hi / cur->s.ci_lo) / (2 * z95);
	l = log(cur->s.median / base->s.median);
	s = sqrt(sb * sb + sc * sc);
	*lo = exp(l - z * s) - 1;
	*hi = exp(l + z * s) - 1;
	return 1;
}

int eg_regress_compare(const eg_metric_t *base, const eg_metric_t *cur,
		       const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double m;
	int rc;

	if (!base || !cur || !o || !out ||
	    (o->better != EG_BETTER_LOWER && o->better != EG_BETTER_HIGHER) ||
	    !(o->alpha > 0 && o->alpha < 0.5) || !(o->min_effect >= 0) ||
	    !(o->min_effect < 1))
		return EG_EINVAL;
	out->verdict = EG_VERDICT_INCONCLUSIVE;
	out->method = "summary";
	out->lo = out->hi = NAN;
	out->p_worse = out->p_better = NAN;
	out->n_base = eg__n(base);
	out->n_cur = eg__n(cur);
	out->why[0] = '\0';
	if (!(base->s.median > 0) || !(cur->s.median > 0))
		return EG_ERANGE;
	out->change = cur->s.median / base->s.median - 1;
	if (out->n_base < o->min_reps || out->n_cur < o->min_reps) {
		snprintf(out->why, sizeof(out->why),
			 "too few repetitions: n = %zu (baseline) and %zu, "
			 "min_reps %u",
			 out->n_base, out->n_cur, o->min_reps);
		return 0;
	}
	m = o->min_effect;
	if (base->n_samples && cur->n_samples) {
		if (o->statistic == EG_REGRESS_MWU) {
			out->method = "mann-whitney";
			rc = eg__mwu(base, cur, o, out);
			if (!rc && out->verdict == EG_VERDICT_INCONCLUSIVE)
				snprintf(out->why, sizeof(out->why),
					 "neither side significant at alpha "
					 "%g (p_worse %.3g, p_better %.3g)",
					 o->alpha, out->p_worse, out->p_better);
			return rc;
		}
		out->method = "bootstrap";
		rc = eg_stats_boot_change(base->samples, base->n_samples,
					  cur->samples, cur->n_samples,
					  o->resamples, o->alpha, 1 - o->alpha,
					  o->seed, &out->lo, &out->hi);
		if (rc)
			return rc;
	} else if (!eg__summary_interval(base, cur, o->alpha, &out->lo,
					 &out->hi)) {
		snprintf(out->why, sizeof(out->why),
			 "no samples and no interval to judge the noise by");
		return 0;
	}
	if (o->better == EG_BETTER_LOWER) {
		if (out->lo > m)
			out->verdict = EG_VERDICT_FAIL;
		else if (out->hi < m)
			out->verdict = EG_VERDICT_PASS;
	} else {
		if (out->hi < -m)
			out->verdict = EG_VERDICT_FAIL;
		else if (out->lo > -m)
			out->verdict = EG_VERDICT_PASS;
	}
	if (out->verdict == EG_VERDICT_INCONCLUSIVE)
		snprintf(out->why, sizeof(out->why),
			 "interval [%+.2f%%, %+.2f%%] straddles the threshold "
			 "%+.2f%%",
			 100 * out->lo, 100 * out->hi,
			 100 * (o->better == EG_BETTER_LOWER ? m : -m));
	return 0;
}
