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
/* The [q_lo, q_hi] quantile interval of n bootstrap replicates x (sorted
 * in place); n >= 1. */
void eg_stats_boot_interval(double *x, size_t n, double q_lo, double q_hi,
			    double *lo, double *hi);
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

/* The standard error of log(median) from a stored 95% interval that is
 * positive; NAN otherwise. */
double eg_stats_log_se(const eg_summary_t *s);

/* The relative standard error of a positive median: from its stored 95%
 * interval on the log scale when that interval is positive, else the
 * interval's half-width over the median; NAN when neither is known. */
double eg_stats_rel_se(const eg_summary_t *s);

/* Standard error implied by an interval at level EG_STATS_CI_LEVEL,
 * assuming normality: (hi - lo) / (2 z).  NAN when the interval is not
 * known. */
double eg_stats_se_from_ci(double lo, double hi);

/* ---- launches (lib/stats/launch.c) -----------------------------------
 * A metric's samples may come from several launches (fresh processes and
 * communicators), consecutive in x: launch i holds launch_n[i] of them
 * (0 allowed: a launch that did not report this metric).  launch_n NULL
 * (or n_launches <= 1) is one launch. */
typedef struct eg_samples {
	const double *x;
	size_t n;
	const uint32_t *launch_n;
	size_t n_launches;
} eg_samples_t;

/* EG_EINVAL unless the counts add up to n. */
int eg_samples_check(const eg_samples_t *s);
/* Launches that hold samples (1 without launch counts). */
int eg_samples_launches(const eg_samples_t *s);
/* The median of each launch with samples, in order, into med (room for
 * n_launches), *n_out of them. */
int eg_stats_launch_medians(const eg_samples_t *s, double *med, size_t *n_out);
/* Spread inside launches (pooled standard deviation / grand mean) and
 * between them (CV of the launch medians); NAN when not defined (one
 * sample per launch, one launch). */
int eg_stats_launch_spread(const eg_samples_t *s, double *cv_within,
			   double *cv_between);
/* Percentile interval of the median by the hierarchical bootstrap:
 * launches drawn with replacement, then samples within each; the plain
 * bootstrap (eg_stats_boot_median_ci) for one launch. */
int eg_stats_hboot_median_ci(const eg_samples_t *s, unsigned resamples,
			     double level, uint64_t seed, double *lo,
			     double *hi);
/* eg_stats_summarize with the interval from eg_stats_hboot_median_ci. */
int eg_stats_summarize_launches(const eg_samples_t *s, uint64_t seed,
				eg_summary_t *out);
/* The bootstrap distribution of median(cur)/median(base) - 1, sorted,
 * into d (resamples values).  paired: both have the same launches, launch
 * k of one ran beside launch k of the other (an A/B job), and the same
 * launch indices are drawn on both sides. */
int eg_stats_hboot_change_dist(const eg_samples_t *base,
			       const eg_samples_t *cur, int paired,
			       unsigned resamples, uint64_t seed, double *d);

/* The same draws in the order they were made (not sorted): draws of
 * different points can be combined resample by resample. */
int eg_stats_hboot_change_draws(const eg_samples_t *base,
				const eg_samples_t *cur, int paired,
				unsigned resamples, uint64_t seed, double *d);

/* The seeded RNG of the bootstraps (GSL taus2), for code that resamples
 * on its own (aggregates over points). */
typedef struct eg_rng eg_rng_t;
eg_rng_t *eg_rng_new(uint64_t seed);
size_t eg_rng_below(eg_rng_t *g, size_t n); /* uniform in [0, n) */
void eg_rng_free(eg_rng_t *g);

/* ---- many comparisons (lib/stats/multi.c) ----------------------------
 * Which of n one-sided tests reject at family level alpha: Holm's step-down
 * (family-wise error rate) or Benjamini-Hochberg's step-up (false
 * discovery rate); none: each at alpha.  reject[i] = 1 for those. */
typedef enum eg_correction {
	EG_CORRECT_HOLM = 0,
	EG_CORRECT_BH,
	EG_CORRECT_NONE,
} eg_correction_t;
int eg_stats_correct(const double *p, size_t n, double alpha, eg_correction_t c,
		     int *reject);
const char *eg_correction_name(eg_correction_t c); /* "holm", ... */

/* ---- change points (lib/stats/changepoint.c) ------------------------
 * E-divisive (energy distance, alpha 1) by binary segmentation: each
 * accepted split at index `at` (the first value of the new segment)
 * with its permutation p-value (perms shuffles, seeded), segments of at
 * least min_size, at most max of them, sorted by at. */
typedef struct eg_changepoint {
	size_t at;
	double p;
} eg_changepoint_t;
int eg_stats_changepoints(const double *x, size_t n, size_t min_size,
			  double alpha, unsigned perms, uint64_t seed,
			  eg_changepoint_t *out, size_t max, size_t *n_out);

/* ---- rank intervals (lib/stats/mwu.c) -------------------------------
 * Hodges-Lehmann shift of y against x (the median of all y_j - x_i) and
 * its Moses interval: one-sided level alpha at each end, from the U
 * distribution (normal approximation).  On log values the shift is a log
 * ratio. */
int eg_stats_shift_ci(const double *x, size_t nx, const double *y, size_t ny,
		      double alpha, double *est, double *lo, double *hi);
/* Wilcoxon signed-rank test of d against 0 (d_i = 0 dropped): p_greater
 * for "d tends to be positive", p_less for negative.  Exact for up to
 * EG_MWU_EXACT_MAX values without ties, else normal with the tie and
 * continuity corrections. */
int eg_stats_signed_rank(const double *d, size_t n, double *p_greater,
			 double *p_less);

#endif
