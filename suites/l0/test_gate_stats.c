/* Statistics of the gate engine against hand-computed values and
 * independent reference implementations: quantiles, CV, the bootstrap
 * (replayed with the same RNG stream), Mann-Whitney (R's documented
 * example, brute-force enumeration, a tied case worked by hand) and the
 * noise-aware slope. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "epgate/error.h"
#include "epgate/stats.h"

#define EPS 1e-12

START_TEST(quantiles_type7)
{
	const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

	/* h = (n-1)q: q=0.1 -> h=0.9 -> 1 + 0.9 (2-1) = 1.9 */
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 10, 0.1), 1.9, EPS);
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 10, 0.9), 9.1, EPS);
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 10, 0.5), 5.5, EPS);
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 10, 0), 1, EPS);
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 10, 1), 10, EPS);
	ck_assert_double_eq_tol(eg_stats_quantile_sorted(x, 1, 0.3), 1, EPS);
}
END_TEST

START_TEST(median_and_cv)
{
	double odd[] = {9, 1, 5, 3, 7}, even[] = {4, 1, 3, 2};
	const double cv[] = {2, 4, 4, 4, 5, 5, 7, 9};

	ck_assert_double_eq(eg_stats_median(odd, 5), 5);
	ck_assert_double_eq(eg_stats_median(even, 4), 2.5);
	/* the input is left as it was */
	ck_assert_double_eq(odd[0], 9);
	ck_assert_double_eq(even[0], 4);
	/* mean 5, sum of squares 32, sample sd sqrt(32/7) */
	ck_assert_double_eq_tol(eg_stats_cv(cv, 8), sqrt(32.0 / 7) / 5, EPS);
	ck_assert_double_eq(eg_stats_cv(cv, 1), 0);
}
END_TEST

/* Reference bootstrap: the same taus2 stream (seed < 2^32 is used as
 * is), n indices per resample into the sorted data, the resample sorted
 * and its median taken, the medians sorted and their quantiles taken. */
static void ref_boot(const double *x, size_t n, unsigned B, double level,
		     unsigned long seed, double *lo, double *hi)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	double *s = malloc(n * sizeof(*s)), *t = malloc(n * sizeof(*t));
	double *m = malloc(B * sizeof(*m));

	gsl_rng_set(r, seed);
	memcpy(s, x, n * sizeof(*s));
	gsl_sort(s, 1, n);
	for (unsigned b = 0; b < B; b++) {
		for (size_t i = 0; i < n; i++)
			t[i] = s[gsl_rng_uniform_int(r, n)];
		gsl_sort(t, 1, n);
		m[b] = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	}
	gsl_sort(m, 1, B);
	*lo = eg_stats_quantile_sorted(m, B, (1 - level) / 2);
	*hi = eg_stats_quantile_sorted(m, B, (1 + level) / 2);
	gsl_rng_free(r);
	free(s);
	free(t);
	free(m);
}

START_TEST(bootstrap_matches_reference)
{
	const double x[] = {10.2, 9.7,	10.9, 10.1, 13.5, 9.9,
			    10.4, 10.0, 10.6, 9.8,  10.3};
	double lo, hi, rlo, rhi;

	for (size_t n = 1; n <= 11; n++) {
		ck_assert_int_eq(
		    eg_stats_boot_median_ci(x, n, 500, 0.9, 1234, &lo, &hi), 0);
		ref_boot(x, n, 500, 0.9, 1234, &rlo, &rhi);
		ck_assert_msg(lo == rlo && hi == rhi,
			      "n=%zu: [%g, %g] vs reference [%g, %g]", n, lo,
			      hi, rlo, rhi);
		ck_assert(lo <= eg_stats_median(x, n) + EPS);
		ck_assert(hi >= eg_stats_median(x, n) - EPS);
	}
	/* the seed matters; the same seed repeats */
	eg_stats_boot_median_ci(x, 11, 500, 0.9, 99, &rlo, &rhi);
	eg_stats_boot_median_ci(x, 11, 500, 0.9, 99, &lo, &hi);
	ck_assert(lo == rlo && hi == rhi);
}
END_TEST

START_TEST(bootstrap_degenerate_and_errors)
{
	const double c[] = {7, 7, 7, 7};
	double lo, hi;

	ck_assert_int_eq(eg_stats_boot_median_ci(c, 4, 200, 0.95, 1, &lo, &hi),
			 0);
	ck_assert_double_eq(lo, 7);
	ck_assert_double_eq(hi, 7);
	ck_assert_int_eq(eg_stats_boot_median_ci(c, 0, 200, 0.95, 1, &lo, &hi),
			 EG_EINVAL);
	ck_assert_int_eq(eg_stats_boot_median_ci(c, 4, 200, 1.0, 1, &lo, &hi),
			 EG_EINVAL);
}
END_TEST

START_TEST(bootstrap_change)
{
	const double a[] = {100, 101, 99, 100, 102, 98, 100};
	double b[7], lo, hi;

	/* y = 1.1 x: the two samples are resampled independently, so the
	 * interval of the change is not a point, but it holds +10% */
	for (int i = 0; i < 7; i++)
		b[i] = 1.1 * a[i];
	ck_assert_int_eq(
	    eg_stats_boot_change(a, 7, b, 7, 2000, 0.05, 0.95, 5, &lo, &hi), 0);
	ck_assert(lo < 0.1 && hi > 0.1);
	ck_assert(lo > 0.06 && hi < 0.14);
	/* a constant pair: the change is exactly known */
	{
		const double x[] = {4, 4, 4}, y[] = {5, 5, 5};

		eg_stats_boot_change(x, 3, y, 3, 100, 0.05, 0.95, 5, &lo, &hi);
		ck_assert_double_eq_tol(lo, 0.25, EPS);
		ck_assert_double_eq_tol(hi, 0.25, EPS);
	}
	ck_assert_int_eq(
	    eg_stats_boot_change(a, 7, b, 7, 100, 0.9, 0.1, 5, &lo, &hi),
	    EG_EINVAL);
}
END_TEST

START_TEST(summarize_fields)
{
	const double x[] = {5, 1, 4, 2, 3};
	eg_summary_t s;
	double lo, hi;

	ck_assert_int_eq(eg_stats_summarize(x, 5, 42, &s), 0);
	ck_assert_uint_eq(s.n, 5);
	ck_assert_double_eq(s.median, 3);
	ck_assert_double_eq_tol(s.p10, 1.4, EPS);
	ck_assert_double_eq_tol(s.p90, 4.6, EPS);
	ck_assert_double_eq_tol(s.cv, sqrt(2.5) / 3, EPS);
	eg_stats_boot_median_ci(x, 5, EG_STATS_RESAMPLES, EG_STATS_CI_LEVEL, 42,
				&lo, &hi);
	ck_assert(s.ci_lo == lo && s.ci_hi == hi);
	{
		const double bad[] = {1, NAN};

		ck_assert_int_eq(eg_stats_summarize(bad, 2, 1, &s), EG_ERANGE);
	}
}
END_TEST

START_TEST(mwu_r_example)
{
	/* R: wilcox.test(x, y, alternative = "greater"): W = 35,
	 * p-value = 0.1272 (exact; also by enumeration of all 3003
	 * splits: 0.127206...) */
	const double x[] = {0.80, 0.83, 1.89, 1.04, 1.45,
			    1.38, 1.91, 1.64, 0.73, 1.46};
	const double y[] = {1.15, 0.88, 0.90, 0.74, 1.21};
	eg_mwu_t t;

	ck_assert_int_eq(eg_stats_mwu(x, 10, y, 5, &t), 0);
	ck_assert(t.exact);
	ck_assert_double_eq(t.u, 35);
	ck_assert_double_eq_tol(t.p_greater, 0.1272061272061272, 1e-12);
	ck_assert_double_eq_tol(t.p_less, 0.8967698967698968, 1e-12);
	/* swapping the samples swaps the sides */
	ck_assert_int_eq(eg_stats_mwu(y, 5, x, 10, &t), 0);
	ck_assert_double_eq(t.u, 15);
	ck_assert_double_eq_tol(t.p_less, 0.1272061272061272, 1e-12);
}
END_TEST

/* Brute force over every split of the pooled values (no ties). */
static void mwu_enum(const double *x, size_t nx, const double *y, size_t ny,
		     double *pg, double *pl)
{
	double v[16];
	size_t n = nx + ny, ge = 0, le = 0, tot = 0;
	double u0 = 0;

	memcpy(v, x, nx * sizeof(*v));
	memcpy(v + nx, y, ny * sizeof(*v));
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u0 += x[i] > y[j];
	for (unsigned m = 0; m < (1u << n); m++) {
		double u = 0;

		if ((size_t)__builtin_popcount(m) != nx)
			continue;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if ((m >> i & 1) && !(m >> j & 1))
					u += v[i] > v[j];
		tot++;
		ge += u >= u0;
		le += u <= u0;
	}
	*pg = (double)ge / (double)tot;
	*pl = (double)le / (double)tot;
}

START_TEST(mwu_exact_vs_enumeration)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

	gsl_rng_set(r, 3);
	for (int k = 0; k < 40; k++) {
		size_t nx = 1 + gsl_rng_uniform_int(r, 7);
		size_t ny = 1 + gsl_rng_uniform_int(r, 7);
		double x[8], y[8], pg, pl;
		eg_mwu_t t;

		for (size_t i = 0; i < nx; i++)
			x[i] = gsl_rng_uniform(r) + (k % 3) * 0.2;
		for (size_t i = 0; i < ny; i++)
			y[i] = gsl_rng_uniform(r);
		ck_assert_int_eq(eg_stats_mwu(x, nx, y, ny, &t), 0);
		ck_assert(t.exact);
		mwu_enum(x, nx, y, ny, &pg, &pl);
		ck_assert_msg(fabs(t.p_greater - pg) < 1e-12 &&
				  fabs(t.p_less - pl) < 1e-12,
			      "nx=%zu ny=%zu: %g/%g vs %g/%g", nx, ny,
			      t.p_greater, t.p_less, pg, pl);
	}
	gsl_rng_free(r);
	{
		/* {1,2,3} below {4,5,6}: U = 0, P(U <= 0) = 1/C(6,3) */
		const double x[] = {1, 2, 3}, y[] = {4, 5, 6};
		eg_mwu_t t;

		eg_stats_mwu(x, 3, y, 3, &t);
		ck_assert_double_eq(t.u, 0);
		ck_assert_double_eq_tol(t.p_less, 0.05, 1e-15);
		ck_assert_double_eq_tol(t.p_greater, 1, 1e-15);
	}
}
END_TEST

START_TEST(mwu_ties_normal)
{
	/* x = {1,2,2,3}, y = {2,3,4,4}: U = 0.5+0.5+1+0.5 = 2.5; tie groups
	 * of 3, 2, 2 give T = 24+6+6 = 36; var = 16/12 (9 - 36/56) =
	 * 11.142857; p_less = Phi((2.5 - 8 + 0.5)/sqrt(var)) = 0.067085,
	 * p_greater = Q((2.5 - 8 - 0.5)/sqrt(var)) = 0.963867 */
	const double x[] = {1, 2, 2, 3}, y[] = {2, 3, 4, 4};
	eg_mwu_t t;

	ck_assert_int_eq(eg_stats_mwu(x, 4, y, 4, &t), 0);
	ck_assert(!t.exact);
	ck_assert_double_eq(t.u, 2.5);
	ck_assert_double_eq_tol(t.p_less, 0.06708459006406292, 1e-9);
	ck_assert_double_eq_tol(t.p_greater, 0.9638666318672099, 1e-9);
	{
		const double c[] = {3, 3, 3};

		eg_stats_mwu(c, 3, c, 3, &t);
		ck_assert_double_eq(t.p_less, 1);
		ck_assert_double_eq(t.p_greater, 1);
	}
}
END_TEST

START_TEST(mwu_large_uses_normal)
{
	double x[30], y[30];
	eg_mwu_t t;

	for (int i = 0; i < 30; i++) {
		x[i] = i;
		y[i] = i + 0.5;
	}
	ck_assert_int_eq(eg_stats_mwu(x, 30, y, 30, &t), 0);
	ck_assert(!t.exact);
	/* U = sum over i of #{j: j + 0.5 < i} = 0+0+1+...+29 = 435;
	 * mean 450, var 900*61/12 = 4575 */
	ck_assert_double_eq(t.u, 435);
	ck_assert_double_eq_tol(
	    t.p_less, 0.5 * erfc(-(435 - 450 + 0.5) / sqrt(4575) / sqrt(2)),
	    1e-12);
}
END_TEST

START_TEST(slope_weighted_and_scatter)
{
	const double x[] = {0, 1, 2, 3};
	const double v[] = {1, 1.1, 1.2, 1.3};
	const double se[] = {0.1, 0.1, 0.1, 0.1};
	const double w[] = {1.0, 1.3, 0.9, 1.2};
	eg_slope_t s;

	/* on a line: slope exact, no scatter, error from the intervals:
	 * sqrt(1 / sum w (x - xbar)^2) = sqrt(1 / (100 * 5)) */
	ck_assert_int_eq(eg_stats_slope(x, v, se, 4, 0.05, &s), 0);
	ck_assert_double_eq_tol(s.slope, 0.1, 1e-12);
	ck_assert_double_eq_tol(s.se_slope, sqrt(1.0 / 500), 1e-12);
	ck_assert(!s.from_scatter);
	ck_assert_double_eq_tol(s.crit, 1.959963984540054, 1e-9);
	/* scattered: ybar 1.1, sum dx dy = 0.1, Sxx = 5: slope 0.02;
	 * fitted 1.07 + 0.02 x, residuals -0.07, 0.21, -0.21, 0.07, SSR
	 * 0.098; chi2 = 100 SSR = 9.8 > n-2, so the error is inflated:
	 * sqrt(chi2 / 2 / 500) = sqrt(0.098 / 10), with t(2) = 4.3027 */
	ck_assert_int_eq(eg_stats_slope(x, w, se, 4, 0.05, &s), 0);
	ck_assert_double_eq_tol(s.slope, 0.02, 1e-12);
	ck_assert(s.from_scatter);
	ck_assert_double_eq_tol(s.se_slope, sqrt(0.098 / 10), 1e-12);
	ck_assert_double_eq_tol(s.crit, 4.302652729749464, 1e-9);
	/* without intervals: the scatter only; n = 2 gives none */
	ck_assert_int_eq(eg_stats_slope(x, w, NULL, 4, 0.05, &s), 0);
	ck_assert_double_eq_tol(s.se_slope, sqrt(0.098 / 10), 1e-12);
	ck_assert_int_eq(eg_stats_slope(x, w, NULL, 2, 0.05, &s), 0);
	ck_assert(isnan(s.se_slope));
	{
		const double same[] = {2, 2, 2};

		ck_assert_int_eq(eg_stats_slope(same, v, NULL, 3, 0.05, &s),
				 EG_EINVAL);
	}
}
END_TEST

START_TEST(se_helpers)
{
	eg_summary_t a = {5, 100, NAN, NAN, NAN, 98.04, 101.96};
	eg_summary_t b = {5, 50, NAN, NAN, NAN, 49.02, 50.98};
	double z = 1.959963984540054;

	ck_assert_double_eq_tol(eg_stats_se_from_ci(98.04, 101.96),
				3.92 / 2 / z, 1e-12);
	ck_assert(isnan(eg_stats_se_from_ci(NAN, 1)));
	ck_assert(isnan(eg_stats_se_from_ci(2, 1)));
	/* relative errors on the log scale, log(101.96/98.04)/2z each:
	 * ratio 2, error 2 sqrt(2) r */
	double r = log(101.96 / 98.04) / (2 * z);

	ck_assert_double_eq_tol(eg_stats_rel_se(&a), r, 1e-12);
	ck_assert_double_eq_tol(eg_stats_ratio_se(&a, &b), 2 * sqrt(2) * r,
				1e-12);
	/* one stalled launch stretches the upper end: [600, 15600] around
	 * 719.5 (the width of a campaign measured under load, whose judged
	 * interval the delta method's se / median put at [0.11, 4.6e6]);
	 * on the log scale it stays near what was measured */
	eg_summary_t st = {9, 719.5, NAN, NAN, NAN, 600, 15600};
	double rel = eg_stats_rel_se(&st), z1 = 1.6448536269514722;

	ck_assert_double_eq_tol(rel, log(26.0) / (2 * z), 1e-12);
	ck_assert(719.5 * exp(-z1 * rel) > 150);
	ck_assert(719.5 * exp(z1 * rel) < 3000);
	/* an interval that reaches 0 or below: half-width over the median */
	eg_summary_t zc = {9, 10, NAN, NAN, NAN, -2, 22};
	ck_assert_double_eq_tol(eg_stats_rel_se(&zc), 24 / (2 * z) / 10, 1e-12);
	b.ci_lo = NAN;
	ck_assert(isnan(eg_stats_ratio_se(&a, &b)));
}
END_TEST

/* Holm and Benjamini-Hochberg on the textbook example p = 0.01, 0.04,
 * 0.03, 0.005 at 0.05: Holm rejects 0.005 and 0.01 only (0.03 > 0.05/2),
 * BH all four (0.04 <= 4 * 0.05 / 4). */
START_TEST(multiple_comparisons)
{
	double p[] = {0.01, 0.04, 0.03, 0.005, NAN};
	int r[5];

	ck_assert_int_eq(eg_stats_correct(p, 5, 0.05, EG_CORRECT_HOLM, r), 0);
	ck_assert(r[0] && !r[1] && !r[2] && r[3] && !r[4]);
	ck_assert_int_eq(eg_stats_correct(p, 4, 0.05, EG_CORRECT_BH, r), 0);
	ck_assert(r[0] && r[1] && r[2] && r[3]);
	ck_assert_int_eq(eg_stats_correct(p, 5, 0.05, EG_CORRECT_NONE, r), 0);
	ck_assert(r[0] && r[1] && r[2] && r[3] && !r[4]);
	ck_assert_int_eq(eg_stats_correct(p, 5, 0, EG_CORRECT_HOLM, r),
			 EG_EINVAL);
	ck_assert_str_eq(eg_correction_name(EG_CORRECT_BH), "bh");
}
END_TEST

/* Signed-rank: d = 1..6 all positive, W+ = 21 of 21: exact p_greater =
 * 1/64; the Hodges-Lehmann shift of y = x + 2 is 2. */
START_TEST(signed_rank_and_shift)
{
	double d[] = {1, 2, 3, 4, 5, 6}, pg, pl, x[8], y[8], est, lo, hi;

	ck_assert_int_eq(eg_stats_signed_rank(d, 6, &pg, &pl), 0);
	ck_assert_double_eq_tol(pg, 1.0 / 64, 1e-12);
	ck_assert_double_eq_tol(pl, 1.0, 1e-12);
	d[0] = d[1] = 0; /* zeros dropped: W+ = 10 of 10, 1/16 */
	ck_assert_int_eq(eg_stats_signed_rank(d, 6, &pg, &pl), 0);
	ck_assert_double_eq_tol(pg, 1.0 / 16, 1e-12);
	for (int i = 0; i < 8; i++) {
		x[i] = i * 1.5;
		y[i] = x[i] + 2;
	}
	ck_assert_int_eq(eg_stats_shift_ci(x, 8, y, 8, 0.05, &est, &lo, &hi),
			 0);
	ck_assert_double_eq_tol(est, 2, 1e-12);
	ck_assert(lo < 2 && hi > 2 && isfinite(lo) && isfinite(hi));
}
END_TEST

/* Launches: medians per launch, the spread inside and between, and a
 * hierarchical interval wider than the plain one when launches differ. */
START_TEST(launch_statistics)
{
	double x[30], med[3], cw, cb, lo, hi, plo, phi;
	uint32_t ln[3] = {10, 0, 20};
	eg_samples_t s = {x, 30, ln, 3};
	size_t k;

	for (int i = 0; i < 30; i++)
		x[i] = (i < 10 ? 100 : 150) + (i % 5);
	ck_assert_int_eq(eg_stats_launch_medians(&s, med, &k), 0);
	ck_assert_uint_eq(k, 2);
	ck_assert_double_eq(med[0], 102);
	ck_assert_double_eq(med[1], 152);
	ck_assert_int_eq(eg_stats_launch_spread(&s, &cw, &cb), 0);
	ck_assert(cb > 5 * cw && cw > 0);
	ck_assert_int_eq(eg_stats_hboot_median_ci(&s, 2000, 0.95, 5, &lo, &hi),
			 0);
	ck_assert_int_eq(
	    eg_stats_boot_median_ci(x, 30, 2000, 0.95, 5, &plo, &phi), 0);
	ck_assert(hi - lo > 2 * (phi - plo));
	ln[1] = 1; /* the counts must add up */
	ck_assert_int_eq(eg_stats_launch_spread(&s, &cw, &cb), EG_EINVAL);
}
END_TEST

/* E-divisive: a level that moves by 20% after 10 campaigns is found
 * there; a series without a move has none; two moves, two points. */
START_TEST(change_points)
{
	double x[30];
	eg_changepoint_t cp[8];
	size_t n;

	for (int i = 0; i < 20; i++)
		x[i] = (i < 10 ? 100 : 120) + ((i * 7) % 5) - 2;
	ck_assert_int_eq(
	    eg_stats_changepoints(x, 20, 3, 0.05, 199, 1, cp, 8, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(cp[0].at, 10);
	ck_assert(cp[0].p < 0.05);
	for (int i = 0; i < 20; i++)
		x[i] = 100 + ((i * 7) % 5) - 2;
	ck_assert_int_eq(
	    eg_stats_changepoints(x, 20, 3, 0.05, 199, 1, cp, 8, &n), 0);
	ck_assert_uint_eq(n, 0);
	for (int i = 0; i < 30; i++)
		x[i] = (i < 10 ? 100 : i < 20 ? 130 : 90) + ((i * 7) % 5) - 2;
	ck_assert_int_eq(
	    eg_stats_changepoints(x, 30, 3, 0.05, 199, 1, cp, 8, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(cp[0].at, 10);
	ck_assert_uint_eq(cp[1].at, 20);
	x[3] = NAN;
	ck_assert_int_eq(
	    eg_stats_changepoints(x, 30, 3, 0.05, 199, 1, cp, 8, &n),
	    EG_ERANGE);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("gate_stats");
	TCase *t = tcase_create("core");

	tcase_add_test(t, quantiles_type7);
	tcase_add_test(t, median_and_cv);
	tcase_add_test(t, bootstrap_matches_reference);
	tcase_add_test(t, bootstrap_degenerate_and_errors);
	tcase_add_test(t, bootstrap_change);
	tcase_add_test(t, summarize_fields);
	tcase_add_test(t, mwu_r_example);
	tcase_add_test(t, mwu_exact_vs_enumeration);
	tcase_add_test(t, mwu_ties_normal);
	tcase_add_test(t, mwu_large_uses_normal);
	tcase_add_test(t, slope_weighted_and_scatter);
	tcase_add_test(t, se_helpers);
	tcase_add_test(t, multiple_comparisons);
	tcase_add_test(t, signed_rank_and_shift);
	tcase_add_test(t, launch_statistics);
	tcase_add_test(t, change_points);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stats_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
