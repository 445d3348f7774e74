/* Order statistics and bootstrap intervals (GSL for sorting, selection
 * and the RNG).  Bootstrap resampling is deterministic for a seed, so a
 * results file or a gate verdict never changes between two runs on the
 * same data. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/stats.h"

double eg_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	/* GSL's definition is R's type 7 */
	return gsl_stats_quantile_from_sorted_data(sorted, 1, n, q);
}

void eg_stats_boot_interval(double *x, size_t n, double q_lo, double q_hi,
			    double *lo, double *hi)
{
	gsl_sort(x, 1, n);
	*lo = eg_stats_quantile_sorted(x, n, q_lo);
	*hi = eg_stats_quantile_sorted(x, n, q_hi);
}

double eg_stats_median(const double *x, size_t n)
{
	double *t = malloc(n * sizeof(*t));
	double m;

	if (!t)
		return NAN;
	memcpy(t, x, n * sizeof(*t));
	m = gsl_stats_median(t, 1, n);
	free(t);
	return m;
}

double eg_stats_cv(const double *x, size_t n)
{
	double mean;

	if (n < 2)
		return 0.0;
	mean = gsl_stats_mean(x, 1, n);
	if (mean == 0.0)
		return NAN;
	return gsl_stats_sd_m(x, 1, n, mean) / fabs(mean);
}

static gsl_rng *eg__rng(uint64_t seed)
{
	/* taus2 (L'Ecuyer's maximally equidistributed Tausworthe): good
	 * enough for resampling and much faster than mt19937, which
	 * matters with 2000 resamples per interval */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);

	/* the seeding keeps 32 bits: fold the high half in */
	if (r)
		gsl_rng_set(
		    r, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffu));
	return r;
}

/* Median of a resample (with replacement) of the sorted data: counts
 * how often each order statistic is drawn and walks the counts, O(n) and
 * no selection; cnt is scratch of length n. */
static double eg__resample_median(gsl_rng *r, const double *sorted, size_t n,
				  unsigned *cnt)
{
	size_t k = (n - 1) / 2, seen = 0, i = 0;
	double lo;

	memset(cnt, 0, n * sizeof(*cnt));
	for (size_t j = 0; j < n; j++)
		cnt[gsl_rng_uniform_int(r, n)]++;
	/* the (k+1)-th smallest (0-based k), then the next one for even n */
	while (seen + cnt[i] <= k)
		seen += cnt[i++];
	lo = sorted[i];
	if (n % 2)
		return lo;
	if (seen + cnt[i] > k + 1)
		return lo;
	seen += cnt[i++];
	while (!cnt[i])
		i++;
	return (lo + sorted[i]) / 2;
}

/* Sorted copy of x; NULL on allocation failure. */
static double *eg__sorted(const double *x, size_t n)
{
	double *t = malloc(n * sizeof(*t));

	if (t) {
		memcpy(t, x, n * sizeof(*t));
		gsl_sort(t, 1, n);
	}
	return t;
}

int eg_stats_boot_median_ci(const double *x, size_t n, unsigned resamples,
			    double level, uint64_t seed, double *lo, double *hi)
{
	double *sx = NULL, *med = NULL;
	unsigned *cnt = NULL;
	gsl_rng *r = NULL;
	int rc = EG_ENOMEM;

	if (!x || !n || !resamples || !(level > 0 && level < 1))
		return EG_EINVAL;
	sx = eg__sorted(x, n);
	cnt = malloc(n * sizeof(*cnt));
	med = malloc(resamples * sizeof(*med));
	r = eg__rng(seed);
	if (!sx || !cnt || !med || !r)
		goto out;
	for (unsigned b = 0; b < resamples; b++)
		med[b] = eg__resample_median(r, sx, n, cnt);
	eg_stats_boot_interval(med, resamples, (1 - level) / 2, (1 + level) / 2,
			       lo, hi);
	rc = 0;
out:
	gsl_rng_free(r);
	EG_FREE(med, cnt, sx);
	return rc;
}

int eg_stats_boot_change(const double *x, size_t nx, const double *y, size_t ny,
			 unsigned resamples, double q_lo, double q_hi,
			 uint64_t seed, double *lo, double *hi)
{
	double *sx = NULL, *sy = NULL, *d = NULL;
	unsigned *cnt = NULL;
	gsl_rng *r = NULL;
	int rc = EG_ENOMEM;

	if (!x || !y || !nx || !ny || !resamples || !(q_lo >= 0) ||
	    !(q_hi <= 1) || q_lo > q_hi)
		return EG_EINVAL;
	sx = eg__sorted(x, nx);
	sy = eg__sorted(y, ny);
	cnt = malloc((nx > ny ? nx : ny) * sizeof(*cnt));
	d = malloc(resamples * sizeof(*d));
	r = eg__rng(seed);
	if (!sx || !sy || !cnt || !d || !r)
		goto out;
	for (unsigned b = 0; b < resamples; b++) {
		double mx = eg__resample_median(r, sx, nx, cnt);
		double my = eg__resample_median(r, sy, ny, cnt);

		if (!(mx != 0)) {
			rc = EG_ERANGE;
			goto out;
		}
		d[b] = my / mx - 1;
	}
	eg_stats_boot_interval(d, resamples, q_lo, q_hi, lo, hi);
	rc = 0;
out:
	gsl_rng_free(r);
	EG_FREE(d, cnt, sy, sx);
	return rc;
}

int eg_stats_summarize(const double *x, size_t n, uint64_t seed,
		       eg_summary_t *s)
{
	double *t;
	int rc;

	if (!x || !n || !s)
		return EG_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return EG_ERANGE;
	t = malloc(n * sizeof(*t));
	if (!t)
		return EG_ENOMEM;
	memcpy(t, x, n * sizeof(*t));
	gsl_sort(t, 1, n);
	s->n = n;
	s->median = eg_stats_quantile_sorted(t, n, 0.5);
	s->p10 = eg_stats_quantile_sorted(t, n, 0.1);
	s->p90 = eg_stats_quantile_sorted(t, n, 0.9);
	s->cv = eg_stats_cv(x, n);
	free(t);
	rc =
	    eg_stats_boot_median_ci(x, n, EG_STATS_RESAMPLES, EG_STATS_CI_LEVEL,
				    seed, &s->ci_lo, &s->ci_hi);
	return rc;
}

double eg_stats_se_from_ci(double lo, double hi)
{
	double z = gsl_cdf_ugaussian_Pinv((1 + EG_STATS_CI_LEVEL) / 2);

	if (!isfinite(lo) || !isfinite(hi) || hi < lo)
		return NAN;
	return (hi - lo) / (2 * z);
}

double eg_stats_log_se(const eg_summary_t *s)
{
	double z = gsl_cdf_ugaussian_Pinv((1 + EG_STATS_CI_LEVEL) / 2);

	if (!(s->ci_lo > 0) || !isfinite(s->ci_hi) || !(s->ci_hi >= s->ci_lo))
		return NAN;
	return log(s->ci_hi / s->ci_lo) / (2 * z);
}

double eg_stats_rel_se(const eg_summary_t *s)
{
	double se;

	if (!(s->median > 0))
		return NAN;
	/* times and rates: the interval is read on the log scale, where it
	 * is symmetric; one stalled launch stretches its upper end, and the
	 * delta method (se / median) would then stretch the lower end below
	 * anything measured */
	if (!isnan(se = eg_stats_log_se(s)))
		return se;
	se = eg_stats_se_from_ci(s->ci_lo, s->ci_hi);
	return isnan(se) ? NAN : se / s->median;
}

double eg_stats_ratio_se(const eg_summary_t *a, const eg_summary_t *b)
{
	double ra = eg_stats_rel_se(a), rb = eg_stats_rel_se(b);

	if (isnan(ra) || isnan(rb))
		return NAN;
	return a->median / b->median * sqrt(ra * ra + rb * rb);
}
