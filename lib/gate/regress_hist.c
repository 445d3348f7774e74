/* Regression against a history (docs/gates.md, "History"): when the
 * baseline is the last N campaigns of this profile and machine, the unit
 * is the campaign.  Whatever moves from one campaign to the next (a
 * day's load, a driver, the room's temperature) is in the spread of the
 * baseline campaigns' medians and in nothing one campaign can show, so
 * the question is Conbench's: is this campaign's median outside what
 * the last N predict?  On the log scale, with their mean m and standard
 * deviation s, a new campaign of unchanged code lands within
 * m +- t(N-1) s sqrt(1 + 1/N) (Student's prediction interval); the
 * change is judged against min_effect on that interval, three ways as
 * always.  s is floored by the current campaign's own standard error, so
 * a run of lucky campaigns cannot make the interval narrower than one
 * campaign's noise.  The same spread gives the comparison's power: its
 * minimum detectable effect (eg__gate_history_mde).  With fewer than
 * EG_HISTORY_MIN campaigns there is no spread to estimate: their launches are
 * pooled into one baseline and the within-campaign statistics decide (said in
 * the diagnostics).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "gate_int.h"

/* Fail needs the log change above th + t(1-alpha) sp; a true change d
 * lands there 19 times in 20 when d - t(0.95) sp clears it (the same
 * Student spread for the campaign's own scatter). */
double eg__gate_history_mde(double sp, size_t nb, double alpha,
			    const eg_regress_opts_t *o)
{
	double df = (double)nb - 1, k;

	if (!(sp > 0) || nb < 2 || !(alpha > 0 && alpha < 1))
		return NAN;
	k = gsl_cdf_tdist_Pinv(1 - alpha, df) + gsl_cdf_tdist_Pinv(0.95, df);
	/* higher is better: the drop, as a positive fraction */
	if (o->better == EG_BETTER_LOWER)
		return exp(log(1 + o->min_effect) + k * sp) - 1;
	return 1 - exp(log(1 - o->min_effect) - k * sp);
}

void eg__gate_history_t(const double *x, size_t nb, double y, double se_floor,
			const eg_regress_opts_t *o, eg_regress_out_t *out)
{
	double mu = 0, ss = 0, s, sp, t, th, T;

	for (size_t i = 0; i < nb; i++)
		mu += x[i] / (double)nb;
	for (size_t i = 0; i < nb; i++)
		ss += (x[i] - mu) * (x[i] - mu);
	s = sqrt(ss / (double)(nb - 1));
	if (!(s >= se_floor))
		s = se_floor;
	sp = s * sqrt(1 + 1 / (double)nb);
	t = gsl_cdf_tdist_Pinv(1 - o->alpha, (double)(nb - 1));
	out->method = "history-t";
	out->units = "campaigns";
	out->change = exp(y - mu) - 1;
	out->lo = exp(y - mu - t * sp) - 1;
	out->hi = exp(y - mu + t * sp) - 1;
	out->spread = sp;
	out->mde = eg__gate_history_mde(sp, nb, o->alpha, o);
	th = log(o->better == EG_BETTER_LOWER ? 1 + o->min_effect
					      : 1 - o->min_effect);
	if (sp > 0) {
		T = (y - mu - th) / sp;
		out->p_worse = o->better == EG_BETTER_LOWER
				   ? gsl_cdf_tdist_Q(T, (double)(nb - 1))
				   : gsl_cdf_tdist_P(T, (double)(nb - 1));
		out->p_better = 1 - out->p_worse;
	}
	eg__regress_decide(o, out);
}

/* The standard error of log(median) from a metric's stored interval. */
double eg__gate_log_se(const eg_metric_t *m)
{
	double se = eg_stats_log_se(&m->s);

	return isnan(se) ? 0 : se;
}

/* The baseline campaigns pooled: samples and launches one after the
 * other, as one campaign of many launches. */
int eg__gate_pool(const eg_metric_t *const *b, size_t nb, eg_metric_t *out)
{
	size_t n = 0, L = 0, k = 0, l = 0;

	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < nb; j++) {
		n += b[j]->n_samples;
		L += b[j]->launch_n ? b[j]->n_launches : 1;
	}
	if (!n)
		return EG_EINVAL;
	out->samples = malloc(n * sizeof(double));
	out->launch_n = malloc(L * sizeof(uint32_t));
	if (!out->samples || !out->launch_n) {
		free(out->samples);
		free(out->launch_n);
		return EG_ENOMEM;
	}
	for (size_t j = 0; j < nb; j++) {
		memcpy(out->samples + k, b[j]->samples,
		       b[j]->n_samples * sizeof(double));
		k += b[j]->n_samples;
		if (b[j]->launch_n)
			for (size_t i = 0; i < b[j]->n_launches; i++)
				out->launch_n[l++] = b[j]->launch_n[i];
		else
			out->launch_n[l++] = (uint32_t)b[j]->n_samples;
	}
	out->name = b[0]->name;
	out->n_samples = n;
	out->n_launches = l;
	out->s = b[0]->s;
	out->s.n = n;
	out->s.median = eg_stats_median(out->samples, n);
	return 0;
}

int eg_regress_history(const eg_metric_t *const *base, size_t nb,
		       const eg_metric_t *cur, const eg_regress_opts_t *o,
		       eg_regress_out_t *out)
{
	double *x;
	int rc;

	if (!base || !nb || !cur || !out || !eg__regress_check(o))
		return EG_EINVAL;
	for (size_t j = 0; j < nb; j++)
		if (!(base[j]->s.median > 0) || !isfinite(base[j]->s.median))
			return EG_ERANGE;
	if (!(cur->s.median > 0) || !isfinite(cur->s.median))
		return EG_ERANGE;
	if (nb < EG_HISTORY_MIN) {
		eg_metric_t pool;

		if (!cur->n_samples ||
		    (rc = eg__gate_pool(base, nb, &pool)) < 0) {
			if (nb == 1)
				return eg_regress_compare(base[0], cur, o, out);
			eg__regress_init(out, nb, cur->s.n);
			snprintf(out->why, sizeof(out->why),
				 "%zu campaign(s) in the history and no "
				 "samples to pool",
				 nb);
			return 0;
		}
		rc = eg_regress_compare(&pool, cur, o, out);
		free(pool.samples);
		free(pool.launch_n);
		return rc;
	}
	if (!(x = malloc(nb * sizeof(*x))))
		return EG_ENOMEM;
	eg__regress_init(out, nb, 1);
	for (size_t j = 0; j < nb; j++)
		x[j] = log(base[j]->s.median);
	eg__gate_history_t(x, nb, log(cur->s.median), eg__gate_log_se(cur), o,
			   out);
	free(x);
	return 0;
}
