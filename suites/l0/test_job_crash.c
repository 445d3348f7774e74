/* Why a job ended early, read from its log (lib/suite/job_crash.c): the
 * rank that ended first and how, where it was, what it said; a hang's
 * rank; an engine's error; and nothing when the log names no cause. The
 * JUnit tally counts a crash (junit_tally.c). */
#include <check.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "eg_test.h"
#include "epgate/report.h"
#include "lib/suite/job_crash.h"
#include "lib/suite/run_report.h"
#include "lib/suite/suite.h"

static char eg__dir[] = "/tmp/eg-job-crash-XXXXXX";

static const char *eg__log(const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/job.log", eg__dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* A rank's own last words name it, its signal, where it was; its lines
 * before them are its output, a peer's are not. */
START_TEST(test_crash_last_words)
{
	eg_job_crash_t jc;
	const char *log = eg__log(
	    "[0] epgate: rank 0: plugin x: dispatch: allgather: rank 2 closed "
	    "its connection (it exited or was killed)\n"
	    "[2] epgate: lib.c:12: dispatch: Assertion `n % 4 == 0' failed.\n"
	    "[2] epgate: rank 2: ended by signal 6 (SIGABRT) in w3-steps, step "
	    "3 of 4, iteration 1, dispatch\n"
	    "[launch] rank 2 killed by signal 6\n"
	    "[0] epgate: rank 0: stopped by signal 15 (SIGTERM) in no workload "
	    "(between them)\n");

	ck_assert_int_eq(eg_job_crash_read(log, &jc), 0);
	ck_assert_int_eq(jc.end, EG_JOB_END_CRASH);
	ck_assert_int_eq(jc.c.rank, 2);
	ck_assert_int_eq(jc.c.sig, 6);
	ck_assert_str_eq(jc.workload, "w3-steps");
	ck_assert_uint_eq(jc.step, 2);
	ck_assert_uint_eq(jc.iter, 1);
	ck_assert_str_eq(jc.phase, "dispatch");
	ck_assert_str_eq(jc.c.output,
			 "epgate: lib.c:12: dispatch: Assertion `n % 4 == 0' "
			 "failed.");
	ck_assert_str_eq(jc.c.what,
			 "rank 2 ended by signal 6 (SIGABRT, Aborted)");
}
END_TEST

/* exit() inside a workload, on every rank: the first to say it. */
START_TEST(test_crash_exit)
{
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700];
	eg_workload_t w;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[1] epgate: rank 1: ended by exit(0) in k1, iteration "
			"0, dispatch\n[0] epgate: rank 0: ended by exit(0) in "
			"k1, iteration 0, dispatch\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_CRASH);
	ck_assert_int_eq(jc.c.rank, 1);
	ck_assert_int_eq(jc.c.status, 0);
	ck_assert_int_eq(jc.c.sig, 0);
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "k1");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 1, &d, msg, sizeof(msg)),
	    EG_STATUS_CRASH);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "exit_status")),
			 0);
	ck_assert_str_eq(json_string_value(json_object_get(d, "where")),
			 "k1, iteration 0, dispatch");
	json_decref(d);
	eg_workload_fini(&w);
}
END_TEST

/* Only the launcher says it: the signal, the rank's lines. */
START_TEST(test_crash_launcher)
{
	eg_job_crash_t jc;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[1] said before\n[launch] rank 1 killed by signal "
			"11\n[launch] rank 1 killed by signal 11; stopping "
			"ranks 0\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_CRASH);
	ck_assert_int_eq(jc.c.rank, 1);
	ck_assert_int_eq(jc.c.sig, 11);
	ck_assert_str_eq(jc.c.output, "said before");
	ck_assert_str_eq(jc.workload, "");
}
END_TEST

/* A rank killed without a word (a library that reset SIGSEGV's
 * handler): where its peers lost it names the workload, step, iteration
 * and phase, so the case's stage is never blank; with no peer inside a
 * workload either, the stage says it is unknown. */
START_TEST(test_crash_silent)
{
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700];
	eg_workload_t w;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[0] epgate: rank 0: plugin x: dispatch: a peer was "
			"lost: epgate's bootstrap: allgather: rank 1 closed "
			"its connection (it exited or was killed)\n"
			"[0] epgate l2-rank: rank 0: s3: dispatch: a peer "
			"failed or went away (step 2 of 3, iteration 1)\n"
			"[launch] rank 1 killed by signal 11\n"
			"[0] epgate: rank 0: stopped by signal 15 (SIGTERM) "
			"in no workload (between them)\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_CRASH);
	ck_assert_int_eq(jc.c.rank, 1);
	ck_assert_int_eq(jc.c.sig, 11);
	ck_assert_str_eq(jc.workload, "s3");
	ck_assert_uint_eq(jc.step, 1);
	ck_assert_uint_eq(jc.iter, 1);
	ck_assert_str_eq(jc.phase, "dispatch");
	ck_assert_str_eq(jc.c.where, "s3, step 2 of 3, iteration 1, dispatch "
				     "(where its peers lost it)");
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "s3");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 99, &d, msg, sizeof(msg)),
	    EG_STATUS_CRASH);
	ck_assert_str_eq(json_string_value(json_object_get(d, "stage")),
			 "dispatch");
	json_decref(d);
	/* nobody said where: unknown, not blank */
	ck_assert_int_eq(
	    eg_job_crash_read(eg__log("[launch] rank 1 killed by signal 11\n"),
			      &jc),
	    0);
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 99, &d, msg, sizeof(msg)),
	    EG_STATUS_CRASH);
	ck_assert_str_eq(json_string_value(json_object_get(d, "stage")),
			 "unknown");
	json_decref(d);
	eg_workload_fini(&w);
}
END_TEST

/* An engine error that says a peer was lost is not the cause: the rank
 * whose plugin failed on its own is. */
START_TEST(test_engine_error_peer_lost)
{
	eg_job_crash_t jc;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[0] epgate: rank 0: plugin x: dispatch: a peer was "
			"lost: epgate's bootstrap: allgather: ranks "
			"disagree\n"
			"[0] epgate l2-rank: rank 0: w2: dispatch: a peer "
			"failed or went away (iteration 0)\n"
			"[1] epgate: rank 1: plugin x: combine: planted\n"
			"[1] epgate l2-rank: rank 1: w2: combine: the plugin "
			"under test reported an error (iteration 0)\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_ERROR);
	ck_assert_int_eq(jc.c.rank, 1);
	ck_assert_str_eq(jc.c.output, "plugin x: combine: planted");
	ck_assert_str_eq(jc.phase, "combine");
}
END_TEST

/* A hang: the rank waited on, where it was when stopped. */
START_TEST(test_hang)
{
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700];
	eg_workload_t w;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[0] epgate: rank 0: plugin x: dispatch: allgather: "
			"deadline 2.0 s expired; rank 0 still waits on ranks "
			"2\n[launch] rank 0 exited with status 99; stopping "
			"ranks 2\n[2] epgate: rank 2: stopped by signal 15 "
			"(SIGTERM) in base, iteration 0, combine\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_HANG);
	ck_assert_int_eq(jc.c.rank, 2);
	ck_assert_str_eq(jc.workload, "base");
	ck_assert_str_eq(jc.phase, "combine");
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "base");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 99, &d, msg, sizeof(msg)),
	    EG_STATUS_FAIL);
	ck_assert_ptr_nonnull(json_object_get(d, "hang"));
	ck_assert_ptr_null(json_object_get(d, "crash"));
	json_decref(d);
	eg_workload_fini(&w);
}
END_TEST

/* Every rank hung, none waiting on a peer: the job's deadline stopped
 * them inside a workload. The ranks and each one's phase (a rank stopped
 * between workloads is not one of them); the case a FAIL with "ranks".
 * The same stop without the deadline (a user's Ctrl-C) names no cause. */
START_TEST(test_hang_all)
{
	static const char *const stops =
	    "[0] epgate: rank 0: stopped by signal 15 (SIGTERM) in z, "
	    "iteration 1, dispatch\n"
	    "[1] epgate: rank 1: stopped by signal 15 (SIGTERM) in z, "
	    "iteration 1, dispatch\n"
	    "[2] epgate: rank 2: stopped by signal 15 (SIGTERM) in z, "
	    "iteration 1, dispatch\n"
	    "[3] epgate: rank 3: stopped by signal 15 (SIGTERM) in z, "
	    "iteration 1, combine\n"
	    "[4] epgate: rank 4: stopped by signal 15 (SIGTERM) in no "
	    "workload (between them)\n";
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700], log[1200];
	eg_workload_t w;

	snprintf(log, sizeof(log),
		 "[launch] deadline 38.0 s expired; stopping ranks 0, 1, 2, "
		 "3, 4 (SIGTERM, SIGKILL after 2.0 s)\n%s",
		 stops);
	ck_assert_int_eq(eg_job_crash_read(eg__log(log), &jc), 0);
	ck_assert_int_eq(jc.end, EG_JOB_END_HANG);
	ck_assert_uint_eq(jc.n_hung, 4);
	ck_assert_str_eq(jc.workload, "z");
	ck_assert_uint_eq(jc.iter, 1);
	ck_assert_str_eq(jc.phase, "dispatch");
	ck_assert_str_eq(jc.c.what,
			 "ranks 0-3 all hung (rank 0 in dispatch, rank 1 in "
			 "dispatch, rank 2 in dispatch, rank 3 in combine): "
			 "none returned before the job's deadline (38.0 s) "
			 "stopped them");
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "z");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 99, &d, msg, sizeof(msg)),
	    EG_STATUS_FAIL);
	ck_assert_ptr_nonnull(json_object_get(d, "hang"));
	ck_assert_ptr_null(json_object_get(d, "rank"));
	ck_assert_uint_eq(json_array_size(json_object_get(d, "ranks")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(d, "stage")),
			 "dispatch");
	json_decref(d);
	eg_workload_fini(&w);
	/* two ranks, one phase */
	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[launch] deadline 34.0 s expired; stopping ranks 0, "
			"1\n[1] epgate: rank 1: stopped by signal 15 (SIGTERM) "
			"in e, step 2 of 6, iteration 0, dispatch\n[0] "
			"epgate: rank 0: stopped by signal 15 (SIGTERM) in e, "
			"step 2 of 6, iteration 0, dispatch\n"),
		&jc),
	    0);
	ck_assert_str_eq(jc.c.what,
			 "ranks 0, 1 all hung in dispatch: none returned "
			 "before the job's deadline (34.0 s) stopped them");
	ck_assert_uint_eq(jc.step, 1);
	ck_assert_int_eq(eg_job_crash_read(eg__log(stops), &jc), 0);
	ck_assert_int_eq(jc.end, EG_JOB_END_NONE);
}
END_TEST

/* check stops after max hangs only while they outnumber the passes: a
 * library that hangs everywhere stops at 3, one that hangs in a few
 * shapes (an empty dispatch) runs every other case; 0 never stops. */
START_TEST(test_hang_stop_rule)
{
	ck_assert_int_eq(eg_suite_hang_stop(3, 0, 3), 1);
	ck_assert_int_eq(eg_suite_hang_stop(2, 0, 3), 0);
	ck_assert_int_eq(eg_suite_hang_stop(3, 23, 3), 0);
	ck_assert_int_eq(eg_suite_hang_stop(5, 4, 3), 1);
	ck_assert_int_eq(eg_suite_hang_stop(1, 1, 1), 0);
	ck_assert_int_eq(eg_suite_hang_stop(1000, 0, 0), 0);
}
END_TEST

/* An engine's error: the rank whose message does not blame a peer. */
START_TEST(test_engine_error)
{
	eg_job_crash_t jc;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[0] epgate: rank 0: plugin x: dispatch: allgather: "
			"ranks disagree: rank 1 called allgather\n"
			"[0] epgate l2-rank: rank 0: w2: dispatch: the plugin "
			"under test reported an error (iteration 1)\n"
			"[1] epgate: rank 1: plugin x: dispatch: planted "
			"error\n"
			"[1] epgate l2-rank: rank 1: w2: dispatch: the plugin "
			"under test reported an error (step 2 of 3, iteration "
			"1)\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_ERROR);
	ck_assert_int_eq(jc.c.rank, 1);
	ck_assert_str_eq(jc.c.output, "plugin x: dispatch: planted error");
	ck_assert_str_eq(jc.c.what, "the plugin under test reported an error");
	ck_assert_str_eq(jc.workload, "w2");
	ck_assert_uint_eq(jc.step, 1);
	ck_assert_uint_eq(jc.iter, 1);
	ck_assert_str_eq(jc.phase, "dispatch");
}
END_TEST

/* A rank that exited non-zero without a word from epgate (UBSan's
 * report, then exit 1): its status and what it printed last, a job
 * error (not a crash epgate saw), where its peers lost it. */
START_TEST(test_exit_silent)
{
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700];
	eg_workload_t w;

	ck_assert_int_eq(
	    eg_job_crash_read(
		eg__log("[2] t.c:404:31: runtime error: load of misaligned "
			"address\n[launch] rank 2 exited with status 1; "
			"stopping ranks 0, 1 (SIGTERM, SIGKILL after 2.0 s)\n"
			"[0] epgate: rank 0: stopped by signal 15 (SIGTERM) "
			"in p3-h333, iteration 0, combine\n"),
		&jc),
	    0);
	ck_assert_int_eq(jc.end, EG_JOB_END_EXIT);
	ck_assert_int_eq(jc.c.rank, 2);
	ck_assert_int_eq(jc.c.status, 1);
	ck_assert_str_eq(jc.workload, "p3-h333");
	ck_assert_str_eq(jc.phase, "combine");
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "p3-h333");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 1, &d, msg, sizeof(msg)),
	    EG_STATUS_ERROR);
	ck_assert_str_eq(msg, "rank 2 exited with status 1, without a word "
			      "from epgate: t.c:404:31: runtime error: load "
			      "of misaligned address");
	ck_assert_ptr_nonnull(json_object_get(d, "error"));
	json_decref(d);
	eg_workload_fini(&w);
}
END_TEST

/* Nothing in the log: no cause, the case an error that says so. */
START_TEST(test_no_cause)
{
	eg_job_crash_t jc;
	json_t *d = NULL;
	char msg[700];
	eg_workload_t w;

	ck_assert_int_eq(eg_job_crash_read(eg__log("[0] all fine\n"), &jc), 0);
	ck_assert_int_eq(jc.end, EG_JOB_END_NONE);
	ck_assert_int_lt(eg_job_crash_read("/nonexistent/log", &jc), 0);
	eg_workload_init(&w);
	snprintf(w.name, sizeof(w.name), "x");
	ck_assert_int_eq(
	    eg_job_crash_case(&jc, &w, "R", "L", 0, &d, msg, sizeof(msg)),
	    EG_STATUS_ERROR);
	ck_assert_ptr_nonnull(strstr(msg, "the job ended (exit 0)"));
	json_decref(d);
	eg_workload_fini(&w);
}
END_TEST

/* The run's summary counts a crash among the errors, and as a crash. */
START_TEST(test_tally_crash)
{
	eg_junit_t *j;
	eg_tally_t t;
	json_t *fails = json_array();
	char path[128];

	eg__log("");
	snprintf(path, sizeof(path), "%s/t.xml", eg__dir);
	ck_assert_int_eq(eg_junit_open(&j, path, "s"), 0);
	ck_assert_int_eq(eg_junit_case(j, "c", "a", 0, EG_STATUS_CRASH,
				       "killed by signal 6", "repro: X"),
			 0);
	ck_assert_int_eq(
	    eg_junit_case(j, "c", "b", 0, EG_STATUS_ERROR, "harness", NULL), 0);
	ck_assert_int_eq(eg_junit_close(j), 0);
	ck_assert_int_eq(eg_junit_tally(path, &t, fails, 10), 0);
	ck_assert_uint_eq(t.errors, 2);
	ck_assert_uint_eq(t.crashed, 1);
	ck_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(fails, 0), "kind")),
			 "crash");
	ck_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(fails, 1), "kind")),
			 "error");
	json_decref(fails);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job_crash");
	TCase *tc = tcase_create("log");
	char f[160];
	int rc;

	if (!mkdtemp(eg__dir))
		return 99;

	tcase_add_test(tc, test_crash_last_words);
	tcase_add_test(tc, test_crash_exit);
	tcase_add_test(tc, test_crash_launcher);
	tcase_add_test(tc, test_crash_silent);
	tcase_add_test(tc, test_engine_error_peer_lost);
	tcase_add_test(tc, test_hang);
	tcase_add_test(tc, test_hang_all);
	tcase_add_test(tc, test_hang_stop_rule);
	tcase_add_test(tc, test_engine_error);
	tcase_add_test(tc, test_exit_silent);
	tcase_add_test(tc, test_no_cause);
	tcase_add_test(tc, test_tally_crash);
	suite_add_tcase(s, tc);
	rc = eg_test_main(s);
	snprintf(f, sizeof(f), "%s/job.log", eg__dir);
	unlink(f);
	snprintf(f, sizeof(f), "%s/t.xml", eg__dir);
	unlink(f);
	rmdir(eg__dir);
	return rc;
}
