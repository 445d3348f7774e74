/* Calibration of the noise-aware rules at their documented defaults
 * (gate.h: EG_GATE_REPS samples per point, alpha, min_effect, max_slope,
 * min_reps, resamples).  Synthetic campaigns with realistic noise: per
 * campaign a CV drawn from [3%, 5%], lognormal samples, and 2% of the
 * samples slowed by 1.5x (outliers).
 *
 *   regression: A/A campaigns must fail at most 1% of the time (false
 *   alarms); campaigns with a true 10% regression must fail at least 95%
 *   of the time (detection); both statistics.
 *   flat: truly flat ratio series (4 axis points, each ratio from two
 *   measured arms) must be flagged at most 1% of the time; a 5% per
 *   doubling trend at least 95%.
 *
 * The RNG is seeded, so the rates are the same on every run; they are
 * printed for the closing note (docs/gates.md, "Calibration"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "epgate/gate.h"

#define N_REG	   1000 /* campaigns per regression scenario */
#define N_FLAT	   500	/* series per flat scenario */
#define OUTLIER_P  0.02
#define OUTLIER_X  1.5
#define REGRESSION 1.10

static gsl_rng *rng;

/* n samples of a time-like metric around mu with the campaign's cv. */
static void draw(double *x, size_t n, double mu, double cv)
{
	for (size_t i = 0; i < n; i++) {
		x[i] = mu * exp(cv * gsl_ran_gaussian(rng, 1));
		if (gsl_rng_uniform(rng) < OUTLIER_P)
			x[i] *= OUTLIER_X;
	}
}

static double campaign_cv(void)
{
	return 0.03 + 0.02 * gsl_rng_uniform(rng);
}

struct rates {
	unsigned pass, fail, inconclusive, n;
	unsigned trend; /* flat: flagged by the trend test */
};

/* N_REG campaigns, current = baseline * shift; verdict counts. */
static struct rates regression(eg_regress_stat_t stat, double shift,
			       uint64_t seed0)
{
	const size_t n = EG_GATE_REPS;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	eg_regress_opts_t o = {.statistic = stat,
			       .better = EG_BETTER_LOWER,
			       .alpha = EG_GATE_ALPHA,
			       .min_effect = EG_GATE_MIN_EFFECT,
			       .min_reps = EG_GATE_MIN_REPS,
			       .resamples = EG_GATE_RESAMPLES};
	struct rates r = {0, 0, 0, N_REG, 0};

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (unsigned k = 0; k < N_REG; k++) {
		double cv = campaign_cv();
		eg_metric_t mb = {
		    .name = "step_us", .samples = a, .n_samples = n};
		eg_metric_t mc = {
		    .name = "step_us", .samples = b, .n_samples = n};
		eg_regress_out_t out;

		draw(a, n, 100, cv);
		draw(b, n, 100 * shift, cv);
		mb.s.median = eg_stats_median(a, n);
		mc.s.median = eg_stats_median(b, n);
		o.seed = seed0 + k;
		ck_assert_int_eq(eg_regress_compare(&mb, &mc, &o, &out), 0);
		r.pass += out.verdict == EG_VERDICT_PASS;
		r.fail += out.verdict == EG_VERDICT_FAIL;
		r.inconclusive += out.verdict == EG_VERDICT_INCONCLUSIVE;
	}
	free(a);
	free(b);
	return r;
}

static void show(const char *what, struct rates r)
{
	printf("calibration: %-34s n=%u  fail %5.1f%%  pass %5.1f%%  "
	       "inconclusive %5.1f%%\n",
	       what, r.n, 100.0 * r.fail / r.n, 100.0 * r.pass / r.n,
	       100.0 * r.inconclusive / r.n);
	fflush(stdout);
}

static void check_regression(eg_regress_stat_t stat, const char *name,
			     uint64_t seed)
{
	struct rates aa = regression(stat, 1.0, seed);
	struct rates reg = regression(stat, REGRESSION, seed + 1000000);
	char what[64];

	snprintf(what, sizeof(what), "regression %s A/A", name);
	show(what, aa);
	snprintf(what, sizeof(what), "regression %s true +10%%", name);
	show(what, reg);
	/* false alarm rate <= 1%, detection >= 95% */
	ck_assert_msg(aa.fail * 100 <= aa.n, "%s: %u false alarms in %u", name,
		      aa.fail, aa.n);
	ck_assert_msg(reg.fail * 100 >= 95 * reg.n, "%s: detected %u of %u",
		      name, reg.fail, reg.n);
	/* and useful: an A/A campaign is mostly cleared, not left open */
	ck_assert_msg(aa.pass * 100 >= 90 * aa.n, "%s: A/A passed %u of %u",
		      name, aa.pass, aa.n);
}

START_TEST(regression_bootstrap)
{
	check_regression(EG_REGRESS_BOOTSTRAP, "bootstrap", 1);
}
END_TEST

START_TEST(regression_mann_whitney)
{
	check_regression(EG_REGRESS_MWU, "mann-whitney", 5000001);
}
END_TEST

/* N_FLAT series of 4 points (concurrency 32..256): the ratio of two
 * measured arms; flat at 0.97, or rising by slope per doubling from 0.92
 * (inside the band [0.9, 1.1] throughout for slope 0.05). */
static struct rates flat(double slope)
{
	const size_t n = EG_GATE_REPS;
	double *a = malloc(n * sizeof(*a)), *d = malloc(n * sizeof(*d));
	eg_flat_opts_t o = {{0.9, 1.1}, EG_GATE_ALPHA, EG_GATE_MAX_SLOPE};
	struct rates r = {0, 0, 0, N_FLAT, 0};
	static unsigned long seed = 1;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(d);
	for (unsigned k = 0; k < N_FLAT; k++) {
		double x[4], v[4], se[4], cv = campaign_cv();
		eg_flat_out_t out;

		for (int i = 0; i < 4; i++) {
			eg_summary_t sa, sd;

			x[i] = 5 + i; /* log2 of 32 .. 256 */
			draw(a, n, 100 * ((slope ? 0.92 : 0.97) + slope * i),
			     cv);
			draw(d, n, 100, cv);
			ck_assert_int_eq(eg_stats_summarize(a, n, seed++, &sa),
					 0);
			ck_assert_int_eq(eg_stats_summarize(d, n, seed++, &sd),
					 0);
			v[i] = sa.median / sd.median;
			se[i] = eg_stats_ratio_se(&sa, &sd);
		}
		ck_assert_int_eq(eg_flat_check(x, v, se, 4, &o, &out), 0);
		r.fail += out.verdict == EG_VERDICT_FAIL;
		r.pass += out.verdict == EG_VERDICT_PASS;
		r.trend += out.trend;
	}
	free(a);
	free(d);
	return r;
}

START_TEST(flat_series)
{
	struct rates f = flat(0), t;

	show("flat: flat series", f);
	ck_assert_msg(f.fail * 100 <= f.n, "flat: %u false alarms in %u",
		      f.fail, f.n);
	/* a trend of 5% per doubling inside the band: the trend test
	 * itself must see it */
	t = flat(0.05);
	show("flat: +5% per doubling", t);
	printf("calibration: flat: +5%% per doubling flagged as a trend "
	       "%5.1f%%\n",
	       100.0 * t.trend / t.n);
	ck_assert_msg(t.trend * 100 >= 95 * t.n, "flat: trend seen in %u of %u",
		      t.trend, t.n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gate_calibration");
	TCase *t = tcase_create("core");
	SRunner *sr;
	int failed;

	rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 20260717);
	printf("calibration: %u samples per point, alpha %g, min_effect %g, "
	       "max_slope %g, min_reps %u, %u resamples; CV 3-5%%, %g%% "
	       "outliers x%g\n",
	       EG_GATE_REPS, EG_GATE_ALPHA, EG_GATE_MIN_EFFECT,
	       EG_GATE_MAX_SLOPE, EG_GATE_MIN_REPS, EG_GATE_RESAMPLES,
	       100 * OUTLIER_P, OUTLIER_X);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, regression_bootstrap);
	tcase_add_test(t, regression_mann_whitney);
	tcase_add_test(t, flat_series);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	/* one process: the RNG stream runs through the tests in order */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	gsl_rng_free(rng);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
