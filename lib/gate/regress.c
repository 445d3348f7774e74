/* The regression decision for one metric at one point: is the current
 * campaign worse than the baseline by more than min_effect?  Two
 * one-sided questions at level alpha each, so the verdict has three
 * values (criterion.rs and Chromium's pinpoint do the same):
 *   worse by more than min_effect, with confidence  -> fail
 *   not worse by min_effect or more, with confidence -> pass
 *   neither (too noisy, too few repetitions)         -> inconclusive.
 * The unit is the launch when both sides have several (docs/gates.md,
 * "Launches"): the bootstrap resamples launches, then samples within
 * them; Mann-Whitney compares launch medians (or, for an A/B pair whose
 * launches ran side by side, the signed-rank test of the per-launch
 * ratios).  Every method also gives p_worse, the p-value of "worse by
 * more than min_effect", which the rule corrects over many points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "gate_int.h"

static size_t eg__n(const eg_metric_t *m)
{
	return m->n_samples ? m->n_samples : m->s.n;
}

/* Launch mode: both sides carry several launches. */
static int eg__launch_mode(const eg_metric_t *b, const eg_metric_t *c)
{
	eg_samples_t sb = eg_metric_samples(b), sc = eg_metric_samples(c);

	return eg_samples_launches(&sb) >= 2 && eg_samples_launches(&sc) >= 2;
}

/* Launch medians of m on the log scale, moved by log(k); *n of them. */
static double *eg__log_medians(const eg_metric_t *m, double k, size_t *n)
{
	eg_samples_t s = eg_metric_samples(m);
	double *v = malloc((s.n_launches ? s.n_launches : 1) * sizeof(*v));

	if (!v || eg_stats_launch_medians(&s, v, n) < 0) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < *n; i++)
		v[i] = log(v[i] * k);
	return v;
}

/* Samples (or launch medians) of m on the log scale, times k. */
static double *eg__log_units(const eg_metric_t *m, int launches, double k,
			     size_t *n)
{
	double *v;

	if (launches)
		return eg__log_medians(m, k, n);
	if (!(v = malloc(m->n_samples * sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < m->n_samples; i++)
		v[i] = log(m->samples[i] * k);
	*n = m->n_samples;
	return v;
}

/* Walsh averages of d: their median and the interval at one-sided alpha
 * (the signed-rank counterpart of the Moses interval). */
static int eg__walsh_ci(const double *d, size_t n, double alpha, double *lo,
			double *hi)
{
	size_t m = n * (n + 1) / 2, k = 0;
	double *w = malloc(m * sizeof(*w)), z, c;

	if (!w)
		return EG_ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[k++] = (d[i] + d[j]) / 2;
	for (size_t i = 1; i < m; i++) /* insertion sort: m is small */
		for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
			double t = w[j];

			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	z = gsl_cdf_ugaussian_Pinv(1 - alpha);
	c = floor((double)m / 2 -
		  z * sqrt((double)n * (n + 1) * (2 * n + 1) / 24));
	if (c < 1)
		c = 1;
	*lo = w[(size_t)c - 1];
	*hi = w[m - (size_t)c];
	free(w);
	return 0;
}

/* The threshold on the log scale: log(1 +- min_effect), the worse way. */
static double eg__log_threshold(const eg_regress_opts_t *o)
{
	return log(o->better == EG_BETTER_LOWER ? 1 + o->min_effect
						: 1 - o->min_effect);
}

/* A log-scale interval as a relative change. */
static void eg__rel_ci(eg_regress_out_t *out)
{
	out->lo = exp(out->lo) - 1;
	out->hi = exp(out->hi) - 1;
}

/* The one-sided p-values by which way is worse: p_up that cur is above
 * the threshold, p_down that it is below. */
static void eg__sided(eg_regress_out_t *out, const eg_regress_opts_t *o,
		      double p_up, double p_down)
{
	out->p_worse = o->better == EG_BETTER_LOWER ? p_up : p_down;
	out->p_better = o->better == EG_BETTER_LOWER ? p_down : p_up;
}

/* Paired launches (an A/B job): the signed-rank test of the per-launch
 * log ratios against log(1 +- min_effect). */
static int eg__paired_rank(const eg_metric_t *base, const eg_metric_t *cur,
			   const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	size_t nb, nc;
	double *b = eg__log_medians(base, 1, &nb),
	       *c = eg__log_medians(cur, 1, &nc), pg, pl;
	double t = eg__log_threshold(o);
	int rc = EG_ENOMEM;

	if (!b || !c)
		goto out;
	rc = EG_EINVAL;
	if (nb != nc)
		goto out;
	for (size_t i = 0; i < nb; i++)
		c[i] -= b[i];
	if ((rc = eg__walsh_ci(c, nb, o->alpha, &out->lo, &out->hi)) < 0)
		goto out;
	eg__rel_ci(out);
	for (size_t i = 0; i < nb; i++)
		c[i] -= t;
	if ((rc = eg_stats_signed_rank(c, nb, &pg, &pl)) < 0)
		goto out;
	eg__sided(out, o, pg, pl);
out:
	EG_FREE(b, c);
	return rc;
}

/* Mann-Whitney of cur against the baseline moved to the threshold, on
 * samples or launch medians; the interval is the Moses interval of the
 * log shift. */
static int eg__mwu(const eg_metric_t *base, const eg_metric_t *cur,
		   const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	int lm = eg__launch_mode(base, cur);
	double est, t = eg__log_threshold(o);
	size_t nb, nc;
	double *b, *c;
	eg_mwu_t m;
	int rc = EG_ENOMEM;

	if (lm && o->paired)
		return eg__paired_rank(base, cur, o, out);
	b = eg__log_units(base, lm, 1, &nb);
	c = eg__log_units(cur, lm, 1, &nc);
	if (!b || !c)
		goto out;
	if ((rc = eg_stats_shift_ci(b, nb, c, nc, o->alpha, &est, &out->lo,
				    &out->hi)) < 0)
		goto out;
	eg__rel_ci(out);
	for (size_t i = 0; i < nb; i++)
		b[i] += t;
	if ((rc = eg_stats_mwu(c, nc, b, nb, &m)) < 0)
		goto out;
	eg__sided(out, o, m.p_greater, m.p_less);
out:
	EG_FREE(b, c);
	return rc;
}

/* The bootstrap: the interval at quantiles alpha and 1 - alpha and the
 * share of the distribution on each side of the threshold. */
static int eg__boot(const eg_metric_t *base, const eg_metric_t *cur,
		    const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	eg_samples_t sb = eg_metric_samples(base), sc = eg_metric_samples(cur);
	double *d = malloc(o->resamples * sizeof(*d));
	double m =
	    o->better == EG_BETTER_LOWER ? o->min_effect : -o->min_effect;
	size_t below = 0, B = o->resamples;
	int rc;

	if (!d)
		return EG_ENOMEM;
	rc = eg_stats_hboot_change_dist(&sb, &sc,
					o->paired && eg__launch_mode(base, cur),
					o->resamples, o->seed, d);
	if (rc < 0) {
		free(d);
		return rc;
	}
	out->lo = eg_stats_quantile_sorted(d, B, o->alpha);
	out->hi = eg_stats_quantile_sorted(d, B, 1 - o->alpha);
	for (size_t i = 0; i < B; i++)
		below += d[i] <= m;
	free(d);
	/* (k + 1) / (B + 1): never 0, resolution 1/B */
	if (o->better == EG_BETTER_LOWER) {
		out->p_worse = (double)(below + 1) / (double)(B + 1);
		out->p_better = (double)(B - below + 1) / (double)(B + 1);
	} else {
		out->p_worse = (double)(B - below + 1) / (double)(B + 1);
		out->p_better = (double)(below + 1) / (double)(B + 1);
	}
	return 0;
}

/* Without samples: a normal interval on the log scale from the stored
 * 95% intervals; 0 when they are missing. */
static int eg__summary(const eg_metric_t *base, const eg_metric_t *cur,
		       const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double z = gsl_cdf_ugaussian_Pinv(1 - o->alpha), l, s, t;
	double sb = eg_stats_log_se(&base->s), sc = eg_stats_log_se(&cur->s);

	if (isnan(sb) || isnan(sc))
		return 0;
	l = log(cur->s.median / base->s.median);
	s = sqrt(sb * sb + sc * sc);
	out->lo = exp(l - z * s) - 1;
	out->hi = exp(l + z * s) - 1;
	if (s > 0) {
		t = eg__log_threshold(o);
		out->p_worse = o->better == EG_BETTER_LOWER
				   ? gsl_cdf_ugaussian_Q((l - t) / s)
				   : gsl_cdf_ugaussian_P((l - t) / s);
		out->p_better = 1 - out->p_worse;
	}
	return 1;
}

void eg__regress_decide(const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double m = o->min_effect;

	out->verdict = EG_VERDICT_INCONCLUSIVE;
	if (isnan(out->lo))
		return;
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
}

int eg__regress_check(const eg_regress_opts_t *o)
{
	return o &&
	       (o->better == EG_BETTER_LOWER ||
		o->better == EG_BETTER_HIGHER) &&
	       o->alpha > 0 && o->alpha < 0.5 && o->min_effect >= 0 &&
	       o->min_effect < 1 && o->resamples > 0;
}

void eg__regress_init(eg_regress_out_t *out, size_t nb, size_t nc)
{
	out->verdict = EG_VERDICT_INCONCLUSIVE;
	out->method = "summary";
	out->lo = out->hi = NAN;
	out->p_worse = out->p_better = NAN;
	out->n_base = nb;
	out->n_cur = nc;
	out->units = "samples";
	out->why[0] = '\0';
	out->mde = out->spread = NAN;
}

/* effect: estimate (eg_effect_t): p_worse is that of "worse than no
 * change" (the method again at min_effect 0); fail when that holds at
 * alpha and the estimated change is beyond min_effect, pass as
 * interval does (not worse by min_effect, with confidence). */
static int eg__estimate(const eg_metric_t *base, const eg_metric_t *cur,
			const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	eg_regress_opts_t z = *o;
	eg_regress_out_t o0 = *out;
	int lower = o->better == EG_BETTER_LOWER, mwu, worse;
	double bad = lower ? out->change : -out->change;
	int rc;

	z.min_effect = 0;
	mwu = o->statistic == EG_REGRESS_MWU;
	rc = mwu ? eg__mwu(base, cur, &z, &o0) : eg__boot(base, cur, &z, &o0);
	if (rc < 0)
		return rc;
	out->p_worse = o0.p_worse;
	worse =
	    mwu ? out->p_worse < o->alpha : (lower ? out->lo > 0 : out->hi < 0);
	if (worse && bad > o->min_effect) {
		out->verdict = EG_VERDICT_FAIL;
		out->why[0] = 0;
	} else if (out->verdict == EG_VERDICT_FAIL) {
		out->verdict = EG_VERDICT_INCONCLUSIVE;
	}
	if (out->verdict == EG_VERDICT_INCONCLUSIVE)
		snprintf(out->why, sizeof(out->why),
			 "%s no change (p_worse %.3g) and %+.2f%% against the "
			 "threshold %+.2f%%, interval [%+.2f%%, %+.2f%%]",
			 worse ? "worse than" : "not worse than", out->p_worse,
			 100 * out->change,
			 100 * (lower ? o->min_effect : -o->min_effect),
			 100 * out->lo, 100 * out->hi);
	return 0;
}

int eg_regress_compare(const eg_metric_t *base, const eg_metric_t *cur,
		       const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	int rc;

	if (!base || !cur || !out || !eg__regress_check(o))
		return EG_EINVAL;
	eg__regress_init(out, eg__n(base), eg__n(cur));
	if (!(base->s.median > 0) || !(cur->s.median > 0) ||
	    !isfinite(base->s.median) || !isfinite(cur->s.median))
		return EG_ERANGE;
	out->change = cur->s.median / base->s.median - 1;
	if (out->n_base < o->min_reps || out->n_cur < o->min_reps) {
		snprintf(out->why, sizeof(out->why),
			 "too few repetitions: n = %zu (baseline) and %zu, "
			 "min_reps %u",
			 out->n_base, out->n_cur, o->min_reps);
		return 0;
	}
	if (base->n_samples && cur->n_samples) {
		if (eg__launch_mode(base, cur))
			out->units = o->paired ? "paired launches" : "launches";
		out->method = o->statistic == EG_REGRESS_MWU ? "mann-whitney"
							     : "bootstrap";
		rc = o->statistic == EG_REGRESS_MWU
			 ? eg__mwu(base, cur, o, out)
			 : eg__boot(base, cur, o, out);
		if (rc < 0)
			return rc;
	} else if (!eg__summary(base, cur, o, out)) {
		snprintf(out->why, sizeof(out->why),
			 "no samples and no interval to judge the noise by");
		return 0;
	}
	eg__regress_decide(o, out);
	/* the test's own verdict where the interval and the test differ */
	if (o->statistic == EG_REGRESS_MWU && base->n_samples &&
	    cur->n_samples) {
		out->verdict = out->p_worse < o->alpha ? EG_VERDICT_FAIL
			       : out->p_better < o->alpha
				   ? EG_VERDICT_PASS
				   : EG_VERDICT_INCONCLUSIVE;
		if (out->verdict == EG_VERDICT_INCONCLUSIVE)
			snprintf(out->why, sizeof(out->why),
				 "neither side significant at alpha %g "
				 "(p_worse %.3g, p_better %.3g)",
				 o->alpha, out->p_worse, out->p_better);
		else
			out->why[0] = 0;
	}
	if (o->effect == EG_EFFECT_ESTIMATE && base->n_samples &&
	    cur->n_samples)
		return eg__estimate(base, cur, o, out);
	return 0;
}
