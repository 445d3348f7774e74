/* The batch job's report (lib/suite/job_report.c): a steps file and L2
 * results lines to TAP and JUnit. Every workload an L2 step owes is
 * reported, the ones it never reached as skips; a step that did not run
 * is a skip with its reason; passing preflights alone are "nothing ran";
 * bad lines are errors naming file:line. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eg_test.h"
#include "lib/suite/job_report.h"

static char dir[64], steps[128], tap[128], junit[128], results[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/eg-job-report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(steps, sizeof(steps), "%s/steps.tsv", dir);
	snprintf(tap, sizeof(tap), "%s/t.tap", dir);
	snprintf(junit, sizeof(junit), "%s/j.xml", dir);
	snprintf(results, sizeof(results), "%s/l2.jsonl", dir);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static int report(eg_job_totals_t *t)
{
	eg_job_report_opts_t o = {.steps_path = steps,
				  .report = {.tap = tap, .junit = junit},
				  .suite = "unit"};
	return eg_job_report(&o, t);
}

/* "l2 STEP W EXIT RESULTS" line for the steps file. */
static void l2_step(char *buf, size_t len, const char *name, const char *ex)
{
	snprintf(buf, len, "l2\t%s\t4\t%s\t2\t%s\t-\t\n", name, ex, results);
}

START_TEST(test_all_pass)
{
	char line[512], text[1024];
	eg_job_totals_t t;
	/* the whole world-4 matrix, as l2-rank writes it */
	FILE *f = fopen(results, "w");
	const char *const w4[] = {
	    "w4-base",	     "w4-zero-rank1", "w4-one-rank",
	    "w4-uneven",     "w4-mask",	      "w4-mask-all",
	    "w4-hot-expert", "w4-hot-rank",   "w4-zipf",
	    "w4-t1-k1",	     "w4-k-elocal",   "w4-fp8",
	    "w4-fp32-h7",    "w4-rand-bf16",  "w4-big",
	    "w4-e3-h24",     "w4-e5-h97",     "w4-e6-rand-fp32",
	    "w4-e12-h1000",  "w4-rand-h264",  "w4-e3-fp8-h640",
	    "w4-steps"};
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < sizeof(w4) / sizeof(w4[0]); i++)
		fprintf(f, "{\"workload\":\"%s\",\"status\":\"pass\"}\n",
			w4[i]);
	fclose(f);
	l2_step(line, sizeof(line), "a2a.w4.n2.auto.k1", "0");
	snprintf(text, sizeof(text),
		 "# kind\tname\n"
		 "preflight\tfabric\t2\t0\t1\t-\t-\twarning: efa absent\n%s",
		 line);
	put(steps, text);
	ck_assert_int_eq(report(&t), EG_EXIT_PASS);
	ck_assert_uint_eq(t.passed, 22 + 2);
	ck_assert_uint_eq(t.skipped, 0);
	ck_assert_uint_eq(t.steps, 2);
	const char *tp = slurp(tap);
	ck_assert_int_eq(count(tp, "\nok "), 24);
	ck_assert_ptr_nonnull(
	    strstr(tp, "ok 2 - l2 a2a.w4.n2.auto.k1: w4-base\n"));
	ck_assert_ptr_nonnull(strstr(tp, "# preflight fabric: warning: efa"));
	ck_assert_ptr_nonnull(strstr(tp, "\n1..24\n"));
	ck_assert_int_eq(count(slurp(junit), "<testcase "), 24);
}
END_TEST

/* Killed after two workloads: the other 20 of world 4 are skips, the
 * step a failure with its exit; a failing case fails the job. */
START_TEST(test_killed_part_way)
{
	char line[512];
	eg_job_totals_t t;
	put(results, "{\"workload\":\"w4-base\",\"status\":\"pass\"}\n"
		     "{\"workload\":\"w4-uneven\",\"status\":\"fail\","
		     "\"diag\":{\"wrong_rows\":3}}\n");
	l2_step(line, sizeof(line), "a2a.w4.n2.auto.k1", "143");
	put(steps, line);
	ck_assert_int_eq(report(&t), EG_EXIT_FAIL);
	ck_assert_uint_eq(t.passed, 1);
	ck_assert_uint_eq(t.failed, 1);
	ck_assert_uint_eq(t.skipped, 20);
	ck_assert_uint_eq(t.errors, 1); /* the step */
	const char *tp = slurp(tap);
	ck_assert_int_eq(count(tp, "# SKIP never ran: the step ended (exit "
				   "143) before it"),
			 20);
	ck_assert_ptr_nonnull(
	    strstr(tp, "not ok 2 - l2 a2a.w4.n2.auto.k1: w4-uneven"));
	ck_assert_ptr_nonnull(strstr(tp, "wrong_rows: 3"));
	ck_assert_ptr_nonnull(strstr(tp, "not ok 23 - l2 a2a.w4.n2.auto.k1: "
					 "step"));
	const char *jx = slurp(junit);
	ck_assert_int_eq(count(jx, "<testcase "), 23);
	ck_assert_ptr_nonnull(strstr(jx, "step exited 143 after 2 of 22"));
}
END_TEST

/* Nothing ran: steps not run are skips with the reason; preflights that
 * passed do not make it a pass. */
START_TEST(test_nothing_ran)
{
	eg_job_totals_t t;
	put(steps, "preflight\tfabric\t1\t0\t1\t-\t-\t\n"
		   "perf\tp5en-ep32.w32.n4\t32\t-\t0\t-\t-\tworld 32 on 4 "
		   "nodes: the allocation has 1 node(s)\n"
		   "l2\ta2a.w4.n1.auto.k1\t4\t-\t0\t-\t-\tno CUDA device\n");
	ck_assert_int_eq(report(&t), EG_EXIT_SKIP);
	ck_assert_uint_eq(t.checks_passed, 1);
	const char *tp = slurp(tap);
	ck_assert_ptr_nonnull(strstr(tp, "ok 2 - perf p5en-ep32.w32.n4: step "
					 "# SKIP not run: world 32 on 4 "
					 "nodes"));
	/* the L2 step's 22 workloads are there, skipped with the reason */
	ck_assert_int_eq(count(tp, "# SKIP not run: no CUDA device"), 23);
	/* an empty steps file says so too */
	put(steps, "# nothing\n");
	ck_assert_int_eq(report(&t), EG_EXIT_SKIP);
	ck_assert_ptr_nonnull(strstr(slurp(tap), "no step planned"));
}
END_TEST

/* A perf step: 1 a failure, 99 an error, 77 a skip; a failed preflight
 * fails the job. */
START_TEST(test_steps)
{
	eg_job_totals_t t;
	put(steps, "perf\tp.w4.n2\t4\t0\t3\t-\t-\t\n"
		   "perf\tp.w2.n2\t2\t77\t1\t-\t-\t\n"
		   "perf\tp.w4.n1\t4\t99\t1\t-\t-\t\n");
	ck_assert_int_eq(report(&t), EG_EXIT_FAIL);
	ck_assert_uint_eq(t.passed, 1);
	ck_assert_uint_eq(t.skipped, 1);
	ck_assert_uint_eq(t.errors, 1);
	ck_assert_uint_eq(t.steps_failed, 1);
	ck_assert_ptr_nonnull(
	    strstr(slurp(junit), "<error message=\"step exited 99\""));
	put(steps, "preflight\tfabric\t2\t1\t1\t-\t-\tefa absent\n");
	ck_assert_int_eq(report(&t), EG_EXIT_FAIL);
}
END_TEST

static const struct {
	const char *text, *want;
} bad[] = {
    {"l2\tx\n", "steps.tsv:1: want 7 or 8 tab-separated fields"},
    {"# c\nperf\tx\t4\tzz\t1\t-\t-\n", "steps.tsv:2: exit \"zz\""},
    {"perf\tx\t4\t256\t1\t-\t-\n", "exit \"256\""},
    {"\tx\t4\t0\t1\t-\t-\n", "steps.tsv:1: want 7 or 8"},
};

START_TEST(test_bad)
{
	eg_job_totals_t t;
	char err[4096] = "";
	put(steps, bad[_i].text);
	/* the message goes to stderr: catch it */
	FILE *keep = stderr, *mem = fmemopen(err, sizeof(err) - 1, "w");
	ck_assert_ptr_nonnull(mem);
	stderr = mem;
	int rc = report(&t);
	fflush(mem);
	stderr = keep;
	fclose(mem);
	ck_assert_int_eq(rc, EG_EXIT_HARD);
	ck_assert_msg(strstr(err, bad[_i].want), "case %d: \"%s\" lacks \"%s\"",
		      _i, err, bad[_i].want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job_report");
	TCase *tc = tcase_create("report");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_all_pass);
	tcase_add_test(tc, test_killed_part_way);
	tcase_add_test(tc, test_nothing_ran);
	tcase_add_test(tc, test_steps);
	tcase_add_loop_test(tc, test_bad, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	suite_add_tcase(s, tc);
	return eg_test_main(s);
}
