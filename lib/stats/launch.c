/* Launches as the sampling unit (docs/gates.md, "Launches"): the samples
 * of a metric come in launches (fresh processes and communicators), and
 * the variance between launches (placement, clocks, setup) is what one
 * launch's samples cannot show.  Intervals therefore come from a
 * hierarchical bootstrap: resample the launches with replacement, then
 * the samples inside each chosen launch, and take the median of what was
 * drawn.  With one launch this is the plain bootstrap of stats.c (the
 * same RNG sequence: old results keep their intervals). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/stats.h"

struct eg_rng {
	gsl_rng *r;
};

eg_rng_t *eg_rng_new(uint64_t seed)
{
	eg_rng_t *g = malloc(sizeof(*g));

	if (!g)
		return NULL;
	/* taus2, seeded like stats.c: 32 bits, the high half folded in */
	g->r = gsl_rng_alloc(gsl_rng_taus2);
	if (!g->r) {
		free(g);
		return NULL;
	}
	gsl_rng_set(g->r, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffu));
	return g;
}

size_t eg_rng_below(eg_rng_t *g, size_t n)
{
	return (size_t)gsl_rng_uniform_int(g->r, (unsigned long)n);
}

void eg_rng_free(eg_rng_t *g)
{
	if (!g)
		return;
	gsl_rng_free(g->r);
	free(g);
}

int eg_samples_launches(const eg_samples_t *s)
{
	size_t k = 0;

	if (!s->launch_n || s->n_launches < 2)
		return s->n ? 1 : 0;
	for (size_t i = 0; i < s->n_launches; i++)
		k += s->launch_n[i] > 0;
	return (int)k;
}

int eg_samples_check(const eg_samples_t *s)
{
	size_t sum = 0;

	if (!s || !s->x || !s->n)
		return EG_EINVAL;
	if (!s->launch_n)
		return s->n_launches > 1 ? EG_EINVAL : EG_OK;
	for (size_t i = 0; i < s->n_launches; i++)
		sum += s->launch_n[i];
	return sum == s->n ? EG_OK : EG_EINVAL;
}

/* Offsets of each launch's first sample: off[i], off[L] = n. */
static size_t *eg__offsets(const eg_samples_t *s)
{
	size_t L = s->launch_n ? s->n_launches : 1;
	size_t *off = malloc((L + 1) * sizeof(*off));

	if (!off)
		return NULL;
	off[0] = 0;
	for (size_t i = 0; i < L; i++)
		off[i + 1] = off[i] + (s->launch_n ? s->launch_n[i] : s->n);
	return off;
}

int eg_stats_launch_medians(const eg_samples_t *s, double *med, size_t *n_out)
{
	size_t *off, k = 0;

	if (eg_samples_check(s) < 0)
		return EG_EINVAL;
	if (!(off = eg__offsets(s)))
		return EG_ENOMEM;
	for (size_t i = 0; i + 1 <= (s->launch_n ? s->n_launches : 1); i++) {
		size_t c = off[i + 1] - off[i];

		if (!c)
			continue;
		med[k++] = eg_stats_median(s->x + off[i], c);
		if (isnan(med[k - 1])) {
			free(off);
			return EG_ENOMEM;
		}
	}
	free(off);
	*n_out = k;
	return EG_OK;
}

int eg_stats_launch_spread(const eg_samples_t *s, double *cv_within,
			   double *cv_between)
{
	size_t L = s->launch_n ? s->n_launches : 1, k = 0, *off;
	double ss = 0, mean = 0, *med;
	size_t dof = 0;
	int rc;

	*cv_within = *cv_between = NAN;
	if (eg_samples_check(s) < 0)
		return EG_EINVAL;
	med = malloc(L * sizeof(*med));
	off = eg__offsets(s);
	if (!med || !off) {
		EG_FREE(med, off);
		return EG_ENOMEM;
	}
	/* within: the pooled standard deviation inside launches */
	for (size_t i = 0; i < L; i++) {
		size_t c = off[i + 1] - off[i];
		double m;

		if (c < 2)
			continue;
		m = gsl_stats_mean(s->x + off[i], 1, c);
		ss += gsl_stats_tss_m(s->x + off[i], 1, c, m);
		dof += c - 1;
	}
	mean = gsl_stats_mean(s->x, 1, s->n);
	if (dof && mean != 0)
		*cv_within = sqrt(ss / (double)dof) / fabs(mean);
	/* between: the spread of the launch medians */
	rc = eg_stats_launch_medians(s, med, &k);
	if (!rc && k >= 2)
		*cv_between = eg_stats_cv(med, k);
	EG_FREE(med, off);
	return rc;
}

/* One hierarchical resample: L launches drawn with replacement, each one's
 * samples drawn with replacement into buf; returns their median.  With
 * one launch the launch draw is skipped. */
static double eg__hdraw(eg_rng_t *g, const eg_samples_t *s, const size_t *off,
			const size_t *pick, double *buf)
{
	size_t L = s->launch_n ? s->n_launches : 1, k = 0;

	for (size_t i = 0; i < L; i++) {
		size_t j = pick ? pick[i] : (L > 1 ? eg_rng_below(g, L) : 0);
		size_t c = off[j + 1] - off[j];

		for (size_t t = 0; t < c; t++)
			buf[k++] = s->x[off[j] + eg_rng_below(g, c)];
	}
	if (!k) /* only empty launches drawn: draw from all samples */
		for (size_t t = 0; t < s->n; t++)
			buf[k++] = s->x[eg_rng_below(g, s->n)];
	return gsl_stats_median(buf, 1, k);
}

/* Largest buffer one draw can need: L times the largest launch. */
static size_t eg__buf_len(const eg_samples_t *s, const size_t *off)
{
	size_t L = s->launch_n ? s->n_launches : 1, mx = 0;

	for (size_t i = 0; i < L; i++)
		if (off[i + 1] - off[i] > mx)
			mx = off[i + 1] - off[i];
	return (L * mx > s->n ? L * mx : s->n) + 1;
}

int eg_stats_hboot_median_ci(const eg_samples_t *s, unsigned resamples,
			     double level, uint64_t seed, double *lo,
			     double *hi)
{
	size_t *off = NULL;
	double *buf = NULL, *med = NULL;
	eg_rng_t *g = NULL;
	int rc = EG_ENOMEM;

	if (eg_samples_check(s) < 0 || !resamples || !(level > 0 && level < 1))
		return EG_EINVAL;
	if (eg_samples_launches(s) < 2)
		return eg_stats_boot_median_ci(s->x, s->n, resamples, level,
					       seed, lo, hi);
	off = eg__offsets(s);
	buf = off ? malloc(eg__buf_len(s, off) * sizeof(*buf)) : NULL;
	med = malloc(resamples * sizeof(*med));
	g = eg_rng_new(seed);
	if (!off || !buf || !med || !g)
		goto out;
	for (unsigned b = 0; b < resamples; b++)
		med[b] = eg__hdraw(g, s, off, NULL, buf);
	eg_stats_boot_interval(med, resamples, (1 - level) / 2, (1 + level) / 2,
			       lo, hi);
	rc = 0;
out:
	eg_rng_free(g);
	EG_FREE(med, buf, off);
	return rc;
}

int eg_stats_summarize_launches(const eg_samples_t *s, uint64_t seed,
				eg_summary_t *out)
{
	int rc;

	if (eg_samples_check(s) < 0)
		return EG_EINVAL;
	if ((rc = eg_stats_summarize(s->x, s->n, seed, out)) < 0)
		return rc;
	if (eg_samples_launches(s) < 2)
		return rc;
	return eg_stats_hboot_median_ci(s, EG_STATS_RESAMPLES,
					EG_STATS_CI_LEVEL, seed, &out->ci_lo,
					&out->ci_hi);
}

/* Everything one bootstrap of a change needs. */
typedef struct eg__hb {
	const eg_samples_t *s;
	size_t *off, *pick;
	double *buf;
} eg__hb_t;

static int eg__hb_open(eg__hb_t *h, const eg_samples_t *s)
{
	size_t L = s->launch_n ? s->n_launches : 1;

	h->s = s;
	h->off = eg__offsets(s);
	h->pick = malloc(L * sizeof(*h->pick));
	h->buf =
	    h->off ? malloc(eg__buf_len(s, h->off) * sizeof(double)) : NULL;
	return h->off && h->pick && h->buf ? 0 : EG_ENOMEM;
}

static void eg__hb_close(eg__hb_t *h)
{
	EG_FREE(h->off, h->pick, h->buf);
}

int eg_stats_hboot_change_dist(const eg_samples_t *base,
			       const eg_samples_t *cur, int paired,
			       unsigned resamples, uint64_t seed, double *d)
{
	int rc =
	    eg_stats_hboot_change_draws(base, cur, paired, resamples, seed, d);

	if (!rc)
		gsl_sort(d, 1, resamples);
	return rc;
}

int eg_stats_hboot_change_draws(const eg_samples_t *base,
				const eg_samples_t *cur, int paired,
				unsigned resamples, uint64_t seed, double *d)
{
	eg__hb_t hb = {0}, hc = {0};
	size_t L;
	eg_rng_t *g = NULL;
	int rc;

	if (eg_samples_check(base) < 0 || eg_samples_check(cur) < 0 ||
	    !resamples || !d)
		return EG_EINVAL;
	L = base->launch_n ? base->n_launches : 1;
	if (paired && L != (cur->launch_n ? cur->n_launches : 1))
		return EG_EINVAL;
	rc = EG_ENOMEM;
	if (eg__hb_open(&hb, base) || eg__hb_open(&hc, cur) ||
	    !(g = eg_rng_new(seed)))
		goto out;
	for (unsigned b = 0; b < resamples; b++) {
		double mb, mc;

		/* paired: the same launches on both sides (launch k of A and
		 * of B ran in the same processes, back to back) */
		if (paired)
			for (size_t i = 0; i < L; i++)
				hb.pick[i] = hc.pick[i] = eg_rng_below(g, L);
		mb =
		    eg__hdraw(g, base, hb.off, paired ? hb.pick : NULL, hb.buf);
		mc = eg__hdraw(g, cur, hc.off, paired ? hc.pick : NULL, hc.buf);
		if (!(mb != 0)) {
			rc = EG_ERANGE;
			goto out;
		}
		d[b] = mc / mb - 1;
	}
	rc = 0;
out:
	eg_rng_free(g);
	eg__hb_close(&hb);
	eg__hb_close(&hc);
	return rc;
}
