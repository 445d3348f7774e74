/* epgate run: the main job on the embedded default (profile "local"):
 * every suite this build has, into one run folder. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "lib/suite/sweep.h"
#include "epgate/file.h"
#include "epgate/report_html.h"
#include "lib/suite/suite.h"

/* One suite's reports and totals. */
typedef struct eg__suite_out {
	eg_l1_totals_t t;
	char tap[4200], junit[4200];
	int rc, ran;
} eg__suite_out_t;

static json_t *eg__totals_json(const eg__suite_out_t *s)
{
	return json_pack("{s:i, s:i, s:i, s:i, s:s, s:s}", "results",
			 (int)s->t.run, "passed", (int)s->t.passed, "failed",
			 (int)s->t.failed, "errors", (int)s->t.errors, "tap",
			 s->tap, "junit", s->junit);
}

/* summary.json, rewritten atomically after each suite (lib/base/file.c). */
static int eg__summary(const char *path, const char *run, const char *engine,
		       const eg__suite_out_t *l1, const eg__suite_out_t *l2,
		       int rc)
{
	char err[4400], *text;
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i}", "schema",
			      "epgate/run-summary/v1", "profile", "local",
			      "run_dir", run, "engine_l1", engine, "exit", rc);
	if (!j)
		return EG_ENOMEM;
	json_object_set_new(j, "l1", eg__totals_json(l1));
	if (l2->ran)
		json_object_set_new(j, "l2", eg__totals_json(l2));
	text = json_dumps(j, JSON_INDENT(2));
	json_decref(j);
	if (!text)
		snprintf(err, sizeof(err), "%s: out of memory", path);
	int bad = !text || eg_file_write_atomic_buf(path, text, strlen(text),
						    err, sizeof(err)) < 0;
	free(text);
	if (bad) {
		fprintf(stderr, "epgate run: %s\n", err);
		return EG_EIO;
	}
	return EG_OK;
}

/* The worse of two exit codes, a skip counting as nothing. */
static int eg__worse(int rc, int rc2)
{
	if (rc2 == EG_EXIT_HARD || rc == EG_EXIT_HARD)
		return EG_EXIT_HARD;
	if (rc2 == EG_EXIT_FAIL || rc == EG_EXIT_FAIL)
		return EG_EXIT_FAIL;
	return rc;
}

static int eg__l1(const eg_run_opts_t *o, const char *run, eg__suite_out_t *s)
{
	eg_l1_opts_t l1 = {.engine = o->engine,
			   .iters = 2,
			   .tap_path = s->tap,
			   .junit_path = s->junit,
			   .verbose = o->verbose};
	eg_overrides_t ov = {0};
	eg_workload_list_t wl = {0};

	if (eg_cli_load_workloads("epgate run", NULL, &ov, &wl) < 0)
		return EG_EXIT_HARD;
	snprintf(s->tap, sizeof(s->tap), "%s/l1.tap", run);
	snprintf(s->junit, sizeof(s->junit), "%s/l1.junit.xml", run);
	printf("  L1  engine %s, %zu workloads ...\n", o->engine, wl.n);
	fflush(stdout);
	s->rc = eg_l1_run(&l1, &wl, &s->t);
	s->ran = 1;
	eg_workload_list_free(&wl);
	printf("  L1  %u passed, %u failed, %u errors\n", s->t.passed,
	       s->t.failed, s->t.errors);
	return s->rc;
}

/* L2: 4 ranks in 2 virtual nodes and the rest of the quick set */
static int eg__l2(const eg_run_opts_t *o, char *run, eg__suite_out_t *s)
{
	eg_l2_opts_t o2 = {.set = EG_L2_QUICK,
			   .tap_path = s->tap,
			   .junit_path = s->junit,
			   .workdir = run,
			   .iters = 2,
			   .timeout_s = 30,
			   .verbose = o->verbose};

	snprintf(s->tap, sizeof(s->tap), "%s/l2.tap", run);
	snprintf(s->junit, sizeof(s->junit), "%s/l2.junit.xml", run);
	printf("  L2  a2a and dense over libfabric, one job per "
	       "configuration ...\n");
	fflush(stdout);
	s->rc = eg_l2_run(&o2, &s->t);
	s->ran = 1;
	printf("  L2  %u passed, %u failed, %u errors\n", s->t.passed,
	       s->t.failed, s->t.errors);
	return s->rc;
}

/* performance: the local profile's sweeps and its gates */
static int eg__bench(const eg_run_opts_t *o, const char *run)
{
	eg_bench_run_opts_t po = {
	    .apply_gates = 1, .progress = -1, .verbose = o->verbose};
	eg_bench_totals_t pt;
	int rc;

	printf("  bench profile local: sweeps, then gates/local.gate ...\n");
	fflush(stdout);
	rc = eg_bench_run_profile("local", run, &po, &pt);
	printf("  bench %u of %u points measured, %u failed; gates exit %d; "
	       "results %s\n",
	       pt.measured, pt.points, pt.failed, pt.gate_exit, pt.results);
	return rc;
}

int eg_run_local(const eg_run_opts_t *o)
{
	eg__suite_out_t l1 = {0}, l2 = {0};
	char run[4096], summary[4200];
	int rc;

	rc = eg_run_dir_create(o->reports, run, sizeof(run));
	if (rc < 0) {
		fprintf(stderr, "epgate run: --reports %s: %s\n", o->reports,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	snprintf(summary, sizeof(summary), "%s/summary.json", run);
	printf("epgate run: profile local, run folder %s\n", run);
	if ((rc = eg__l1(o, run, &l1)) == EG_EXIT_HARD && !l1.ran)
		return rc;
	eg__summary(summary, run, o->engine, &l1, &l2, rc);
	rc = eg__worse(rc, eg__l2(o, run, &l2));
	if (eg__summary(summary, run, o->engine, &l1, &l2, rc) < 0)
		rc = EG_EXIT_HARD;
	rc = eg__worse(rc, eg__bench(o, run));
	eg_report_run_folder(run); /* report.html, summary.md */
	printf("reports:\n  %s\n  %s\n  %s\n  %s\n  %s\n", l1.tap, l1.junit,
	       l2.tap, l2.junit, summary);
	printf("%u passed, %u failed\n", l1.t.passed + l2.t.passed,
	       l1.t.failed + l1.t.errors + l2.t.failed + l2.t.errors);
	return rc;
}
