/* epgate stress's pieces that need no engine: the failure rate's
 * interval, the resource watch's judgement and sampling, a case's
 * verdict, its category and printed reproducers from what the replay
 * commands did when run (lib/stress/stress_stats.c, stress_report.c,
 * lib/bench/watch.c). */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>

#include "eg_test.h"
#include "epgate/watch.h"
#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

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

/* The sequence's calls: up to and including the failure, and an overlap
 * round whole (a run cut after its first instance's call skips it). */
START_TEST(repro_calls)
{
	eg_stress_fail_t f = {.call = 64, .mode = EG_STRESS_SAME};

	ck_assert_uint_eq(eg_stress_repro_calls(&f), 65);
	f.mode = EG_STRESS_OVERLAP, f.call = 50;
	ck_assert_uint_eq(eg_stress_repro_calls(&f), 52);
	f.instance = 1, f.call = 51;
	ck_assert_uint_eq(eg_stress_repro_calls(&f), 52);
}
END_TEST

/* A case like WARM_PATH's at --calls=300: 49 checked calls passed, every
 * one from call 64 on failed and failed again when replayed at once. */
static void eg__warm_case(eg_stress_case_t *c, eg_workload_t *w,
			  eg_stress_fail_t *f)
{
	eg_workload_init(w);
	w->world = 1;
	*f = (eg_stress_fail_t){.call = 64,
				.iter = 49,
				.mode = EG_STRESS_SAME,
				.replay = 1,
				.stage = "combine",
				.what = "1 wrong: combine 1"};
	*c = (eg_stress_case_t){.w = w,
				.calls = 300,
				.checked = 210,
				.checked_before = 49,
				.failures = 161,
				.fails = f,
				.n_fails = 1,
				.repro_in = EG_STRESS_RERUN_NOT,
				.repro_seq = EG_STRESS_RERUN_AGAIN};
	c->mode_checked[EG_STRESS_SAME] = 90;
	c->mode_failed[EG_STRESS_SAME] = 60;
}

/* The case's category, printed reproducers and terminal lines. */
static void eg__report(const eg_stress_case_t *c, const char **cat,
		       json_t **first, char **say)
{
	static json_t *j;
	eg_stress_opts_t o = {.engine = "plugin:x.so", .round = 16};
	size_t len;
	FILE *m = open_memstream(say, &len);

	json_decref(j);
	j = eg_stress_case_json(&o, c, 10);
	ck_assert_ptr_nonnull(j);
	*cat = json_string_value(json_object_get(j, "category"));
	*first = json_object_get(j, "first_failure");
	ck_assert_ptr_nonnull(*cat);
	ck_assert_ptr_nonnull(m);
	eg_stress_repro_say(m, "", &o, c);
	fclose(m);
}

/* The category follows what reproduced, and only a replay command that
 * failed again when run is printed as a reproducer. */
START_TEST(category)
{
	eg_workload_t w;
	eg_stress_fail_t f;
	eg_stress_case_t c;
	const char *cat, *seq;
	json_t *first;
	char *say = NULL;

	/* only the sequence reproduced: state, from call 64 on */
	eg__warm_case(&c, &w, &f);
	eg__report(&c, &cat, &first, &say);
	ck_assert_ptr_nonnull(strstr(cat, "call-count/state dependent: from "
					  "call 64 of an instance on"));
	seq = json_string_value(json_object_get(first, "repro_sequence"));
	ck_assert_ptr_nonnull(seq);
	ck_assert_ptr_nonnull(strstr(seq, " --calls=65 "));
	ck_assert_ptr_null(json_object_get(first, "repro_inputs"));
	ck_assert_ptr_nonnull(strstr(say, "sequence: "));
	ck_assert_ptr_null(strstr(say, "inputs:   "));
	free(say);
	/* a call that passed after the first failure: "first at" */
	c.checked_before = 50;
	eg__report(&c, &cat, &first, &say);
	ck_assert_ptr_nonnull(strstr(cat, "first at call 64"));
	free(say);
	/* the one-call line reproduced: input-dependent, it alone printed */
	c.repro_in = EG_STRESS_RERUN_AGAIN;
	c.repro_seq = EG_STRESS_RERUN_NONE;
	eg__report(&c, &cat, &first, &say);
	ck_assert_ptr_nonnull(strstr(cat, "input-dependent"));
	ck_assert_ptr_nonnull(
	    strstr(json_string_value(json_object_get(first, "repro_inputs")),
		   " --calls=1 "));
	ck_assert_ptr_null(json_object_get(first, "repro_sequence"));
	ck_assert_ptr_nonnull(strstr(say, "inputs:   "));
	free(say);
	/* ... but a replay at once passed: not input-dependent */
	f.replay = 0;
	eg__report(&c, &cat, &first, &say);
	ck_assert_ptr_nonnull(strstr(cat, "intermittent"));
	free(say);
	/* neither reproduced: said plainly, no command printed */
	c.repro_in = c.repro_seq = EG_STRESS_RERUN_NOT;
	eg__report(&c, &cat, &first, &say);
	ck_assert_ptr_nonnull(strstr(cat, "intermittent: not reproduced"));
	ck_assert_ptr_null(json_object_get(first, "repro_inputs"));
	ck_assert_ptr_null(json_object_get(first, "repro_sequence"));
	ck_assert_ptr_nonnull(json_object_get(first, "repro_none"));
	ck_assert_ptr_nonnull(strstr(say, "reproducer: none"));
	ck_assert_ptr_null(strstr(say, "epgate stress"));
	free(say);
	eg_workload_fini(&w);
}
END_TEST

/* Run to run (lib/stress/stress_runs.c): the hash is FNV-1a 64 (its
 * published test vectors), and other bytes fail a case only where the
 * engine promises a fixed order. */
START_TEST(runs)
{
	eg_workload_t w = {.name = "t", .world = 1};
	eg_stress_case_t c = {.w = &w, .hashed = 1, .runs_n = 2};
	json_t *j;

	ck_assert_uint_eq(eg_stress_fnv1a(EG_STRESS_FNV_BASIS, "", 0),
			  0xcbf29ce484222325ull);
	ck_assert_uint_eq(eg_stress_fnv1a(EG_STRESS_FNV_BASIS, "a", 1),
			  0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(eg_stress_fnv1a(EG_STRESS_FNV_BASIS, "foobar", 6),
			  0x85944171f73967e8ull);
	/* in two pieces, as rank 0's output and rank 1's */
	ck_assert_uint_eq(
	    eg_stress_fnv1a(eg_stress_fnv1a(EG_STRESS_FNV_BASIS, "foo", 3),
			    "bar", 3),
	    0x85944171f73967e8ull);
	c.promised = 1;
	ck_assert(!eg_stress_case_failed(&c));
	c.runs_differ = 1;
	ck_assert(eg_stress_case_failed(&c));
	j = eg_stress_case_json(NULL, &c, 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "category")),
			 "nondeterministic run to run");
	json_decref(j);
	c.promised = 0; /* no fixed order: said, not failed */
	ck_assert(!eg_stress_case_failed(&c));
	c.promised = 1, c.runs_differ = 0;
	c.against = EG_STRESS_AGAINST_MISSING;
	ck_assert(!eg_stress_case_failed(&c));
	c.against = EG_STRESS_AGAINST_DIFFERS;
	ck_assert(eg_stress_case_failed(&c));
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
	tcase_add_test(tc, repro_calls);
	tcase_add_test(tc, category);
	tcase_add_test(tc, runs);
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
