/* Statistics for measurements and gates: order statistics, bootstrap
 * intervals, the Mann-Whitney U test and a noise-aware slope.  GSL gives
 * the sorting, the RNG and the distribution functions; the tests
 * themselves are written here so that their exact definitions are
 * documented (docs/gates.md, docs/results-v1.md). */
#ifndef EPGATE_STATS_H
#define EPGATE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Level of every interval stored in a results file. */
#define EG_STATS_CI_LEVEL 0.95
/* Bootstrap resamples behind a stored interval. */
#define EG_STATS_RESAMPLES 2000

/* Summary of one metric at one point.  Fields that are not known are NAN
 * (a recorded campaign may carry the median only). */
typedef struct eg_summary {
	size_t n;      /* samples the summary describes */
	double median; /* type-7 quantile 0.5 */
	double p10;    /* type-7 quantile 0.1 */
	double p90;    /* type-7 quantile 0.9 */
	double cv;     /* sample standard deviation / mean */
	double ci_lo;  /* percentile-bootstrap interval of the median, */
	double ci_hi;  /* level EG_STATS_CI_LEVEL */
} eg_summary_t;

/* Quantile q in [0, 1] of sorted data, type 7 (R's default: linear
 * interpolation between order statistics at h = (n-1)q). n >= 1. */
double eg_stats_quantile_sorted(const double *sorted, size_t n, double q);
/* Median of x (not modified); n >= 1. */
double eg_stats_median(const double *x, size_t n);
/* Sample standard deviation over the mean; 0 when n < 2. */
double eg_stats_cv(const double *x, size_t n);

/* Percentile-bootstrap interval of the median of x: resamples medians,
 * then their quantiles (1-level)/2 and (1+level)/2.  Deterministic for a
 * seed.  n >= 1; resamples >= 1. */
int eg_stats_boot_median_ci(const double *x, size_t n, unsigned resamples,
			    double level, uint64_t seed, double *lo,
			    double *hi);
/* Percentile-bootstrap distribution of median(y)/median(x) - 1 (the
 * relative change from x to y), both resampled independently; returns
 * the quantiles q_lo and q_hi of that distribution. */
int eg_stats_boot_change(const double *x, size_t nx, const double *y, size_t ny,
			 unsigned resamples, double q_lo, double q_hi,
			 uint64_t seed, double *lo, double *hi);
/* Every field of s from samples x (n >= 1): median, p10, p90, CV and the
 * bootstrap interval (EG_STATS_CI_LEVEL, EG_STATS_RESAMPLES). */
int eg_stats_summarize(const double *x, size_t n, uint64_t seed,
		       eg_summary_t *s);

/* Mann-Whitney U test of x against y.  u = #{x_i > y_j} + #{x_i = y_j}/2.
 * p_greater: one-sided p-value for "x tends to be larger than y";
 * p_less: for "x tends to be smaller".  Exact (the permutation
 * distribution) when there are no ties and nx, ny <= EG_MWU_EXACT_MAX,
 * otherwise the normal approximation with tie correction and a
 * continuity correction of 1/2. */
#define EG_MWU_EXACT_MAX 25
typedef struct eg_mwu {
	double u;
	double p_greater;
	double p_less;
	int exact;
} eg_mwu_t;
int eg_stats_mwu(const double *x, size_t nx, const double *y, size_t ny,
		 eg_mwu_t *out);

/* Straight line v = a + b x through n points, weighted by 1/se^2 when
 * every se is a positive number (se may be NULL).  The slope's standard
 * error is the larger of the one the per-point errors imply and the one
 * the scatter about the line implies (n >= 3), so points that scatter
 * more than their intervals say cannot fake significance; crit is the
 * two-sided critical value for level 1-alpha (normal, or Student t with
 * n-2 degrees of freedom when the scatter term wins).  se_slope is NAN
 * when neither can be computed (n = 2 without se). */
typedef struct eg_slope {
	double slope;
	double se_slope;
	double crit;
	int from_scatter;
} eg_slope_t;
int eg_stats_slope(const double *x, const double *v, const double *se, size_t n,
		   double alpha, eg_slope_t *out);

/* Standard error of median(a)/median(b) by the delta method on the log
 * scale from the two stored intervals; NAN when either is unknown. */
double eg_stats_ratio_se(const eg_summary_t *a, const eg_summary_t *b);

/* Standard error implied by an interval at level EG_STATS_CI_LEVEL,
 * assuming normality: (hi - lo) / (2 z).  NAN when the interval is not
 * known. */
double eg_stats_se_from_ci(double lo, double hi);

#endif
