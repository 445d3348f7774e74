/* epgate stress's pieces that need no engine: the failure rate's
 * interval, the resource watch's judgement and sampling, a case's
 * verdict (lib/stress/stress_stats.c, lib/bench/watch.c). */
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>

#include "eg_test.h"
#include "epgate/watch.h"
#include "lib/stress/stress.h"

/* Clopper-Pearson: the closed forms at 0 and n failures, and in between
 * the binomial tails at the ends are alpha/2 each (GSL's binomial, not
 * the beta quantiles the interval is made of). */
START_TEST(interval)
{
	double lo, hi;

	eg_stress_interval(0, 300, &lo, &hi);
	ck_assert(lo == 0);
	ck_assert(fabs(hi - (1 - pow(0.025, 1.0 / 300))) < 1e-9);
	ck_assert(fabs(hi - 0.012222) < 1e-5); /* docs/stress.md: 1.22% */
	eg_stress_interval(50, 50, &lo, &hi);
	ck_assert(hi == 1 && fabs(lo - pow(0.025, 1.0 / 50)) < 1e-9);
	eg_stress_interval(5, 100, &lo, &hi);
	ck_assert(fabs(gsl_cdf_binomial_Q(4, lo, 100) - 0.025) < 1e-6);
	ck_assert(fabs(gsl_cdf_binomial_P(5, hi, 100) - 0.025) < 1e-6);
	ck_assert(lo < 0.05 && hi > 0.05);
	/* where gsl_cdf_beta_Pinv fails to converge (and GSL's handler
	 * aborted a stress run): 2 of 260, 57 of 2900, 258 of 260 */
	static const uint64_t xn[][2] = {{2, 260}, {57, 2900}, {258, 260}};
	for (size_t i = 0; i < sizeof(xn) / sizeof(xn[0]); i++) {
		uint64_t x = xn[i][0], n = xn[i][1];

		eg_stress_interval(x, n, &lo, &hi);
		ck_assert(lo < (double)x / n && hi > (double)x / n);
		ck_assert(fabs(gsl_cdf_binomial_Q(x - 1, lo, n) - 0.025) <
			  1e-6);
		ck_assert(fabs(gsl_cdf_binomial_P(x, hi, n) - 0.025) < 1e-6);
	}
	eg_stress_interval(0, 0, &lo, &hi); /* nothing checked */
	ck_assert(lo == 0 && hi == 1);
}
END_TEST

/* The bound: 16 MiB + 1%, 4 descriptors, 64 MiB of device memory only
 * when both samples have it; a planted growth of each fails. */
START_TEST(judge)
{
	const uint64_t mib = 1u << 20;
	eg_watch_sample_t a = {.rss_bytes = 100 * mib, .fds = 10, .procs = 1};
	eg_watch_sample_t b = a;
	char msg[256];

	b.rss_bytes += 16 * mib, b.fds += 4;
	ck_assert_int_eq(
	    eg_watch_judge(&a, &b, &eg_watch_default_bound, msg, sizeof(msg)),
	    0);
	ck_assert_ptr_nonnull(strstr(msg, "device memory not watched"));
	b.rss_bytes += 2 * mib; /* 18 MiB > 16 MiB + 1 MiB */
	ck_assert_int_eq(
	    eg_watch_judge(&a, &b, &eg_watch_default_bound, msg, sizeof(msg)),
	    1);
	ck_assert_ptr_nonnull(strstr(msg, "resident memory +18.0 MiB"));
	b = a, b.fds += 5;
	ck_assert_int_eq(
	    eg_watch_judge(&a, &b, &eg_watch_default_bound, msg, sizeof(msg)),
	    1);
	b = a, a.have_dev = b.have_dev = 1, b.dev_bytes = 65 * mib;
	ck_assert_int_eq(
	    eg_watch_judge(&a, &b, &eg_watch_default_bound, msg, sizeof(msg)),
	    1);
	b.have_dev = 0; /* one sample without NVML: not judged */
	ck_assert_int_eq(
	    eg_watch_judge(&a, &b, &eg_watch_default_bound, msg, sizeof(msg)),
	    0);
	/* with a middle sample: growth once, then flat, is no leak; growth
	 * that goes on is; each resource judged on its own */
	a = (eg_watch_sample_t){.rss_bytes = 100 * mib, .fds = 10, .procs = 1};
	eg_watch_sample_t m = a;
	b = a, b.rss_bytes += 33 * mib, m.rss_bytes = b.rss_bytes;
	ck_assert_int_eq(eg_watch_judge_mid(&a, &m, &b, &eg_watch_default_bound,
					    msg, sizeof(msg)),
			 0);
	b.fds += 1; /* a descriptor late, within its bound */
	ck_assert_int_eq(eg_watch_judge_mid(&a, &m, &b, &eg_watch_default_bound,
					    msg, sizeof(msg)),
			 0);
	m.rss_bytes = a.rss_bytes + 16 * mib; /* half of it late: a leak */
	ck_assert_int_eq(eg_watch_judge_mid(&a, &m, &b, &eg_watch_default_bound,
					    msg, sizeof(msg)),
			 1);
	m.rss_bytes = 0; /* no middle sample: as eg_watch_judge */
	ck_assert_int_eq(eg_watch_judge_mid(&a, &m, &b, &eg_watch_default_bound,
					    msg, sizeof(msg)),
			 1);
}
END_TEST

/* A bound with resident memory off (ASan builds): shown with the reason,
 * not judged; descriptors still are. */
START_TEST(judge_rss_off)
{
	const uint64_t mib = 1u << 20;
	eg_watch_bound_t k = eg_watch_default_bound;
	eg_watch_sample_t a = {.rss_bytes = 100 * mib, .fds = 10, .procs = 1};
	eg_watch_sample_t b = a;
	char msg[256];

	k.rss_off = "planted reason";
	b.rss_bytes += 500 * mib;
	ck_assert_int_eq(eg_watch_judge(&a, &b, &k, msg, sizeof(msg)), 0);
	ck_assert_ptr_nonnull(strstr(
	    msg, "resident memory +500.0 MiB (not judged: planted reason)"));
	b.fds += 5;
	ck_assert_int_eq(eg_watch_judge(&a, &b, &k, msg, sizeof(msg)), 1);
	/* the build's bound: the stated one, or resident memory off */
	ck_assert(eg_watch_bound_here()->fds == eg_watch_default_bound.fds);
}
END_TEST

/* This process: ten descriptors opened are ten more. */
START_TEST(sample)
{
	eg_watch_sample_t a, b;
	int fd[10];

	ck_assert_int_eq(eg_watch_sample(&a), EG_OK);
	ck_assert(a.rss_bytes > 0 && a.fds > 0 && a.procs >= 1);
	for (int i = 0; i < 10; i++)
		ck_assert_int_ge(fd[i] = open("/dev/null", O_RDONLY), 0);
	ck_assert_int_eq(eg_watch_sample(&b), EG_OK);
	ck_assert_int_eq(b.fds, a.fds + 10);
	for (int i = 0; i < 10; i++)
		close(fd[i]);
}
END_TEST

/* A difference of identical inputs fails where the order is promised. */
START_TEST(verdict)
{
	eg_stress_case_t c = {
	    .checked = 10, .same_compared = 5, .same_differ = 1};

	ck_assert(!eg_stress_case_failed(&c));
	c.promised = 1;
	ck_assert(eg_stress_case_failed(&c));
	c.promised = 0, c.grew = 1;
	ck_assert(eg_stress_case_failed(&c));
	c.grew = 0, c.skipped = 1, c.failures = 3;
	ck_assert(!eg_stress_case_failed(&c));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("stress");

	tcase_add_test(tc, interval);
	tcase_add_test(tc, judge);
	tcase_add_test(tc, judge_rss_off);
	tcase_add_test(tc, sample);
	tcase_add_test(tc, verdict);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
