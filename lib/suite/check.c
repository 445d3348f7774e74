/* epgate check: L1 correctness of an engine over a matrix of workloads,
 * and L2 (multi-process engines, one launch per configuration). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/clock.h"
#include "lib/suite/l1_int.h"
#include "lib/suite/run_report.h"

#define EG__PROG      "epgate check"
#define EG__QUICK_MAX 12

/* Keeps the workloads selected by filter and quick, in order. */
static void eg__select(eg_workload_list_t *wl, const char *filter, int quick)
{
	size_t n;

	eg_workload_list_filter(wl, filter);
	n = wl->n;
	if (quick && n > EG__QUICK_MAX) {
		/* evenly spaced picks keep every group of the matrix */
		size_t k = 0;
		for (size_t j = 0; j < EG__QUICK_MAX; j++) {
			size_t pick = j * n / EG__QUICK_MAX;
			eg_workload_t tmp = wl->items[k];
			wl->items[k] = wl->items[pick];
			wl->items[pick] = tmp;
			k++;
		}
		for (size_t i = k; i < n; i++)
			eg_workload_fini(&wl->items[i]);
		wl->n = k;
	}
}

/* Where check's own lines go: stdout, or stderr when the TAP goes to
 * stdout (--tap -). */
static FILE *eg__out(const eg_check_opts_t *c)
{
	return c->report.tap && !strcmp(c->report.tap, "-") ? stderr : stdout;
}

/* "VERDICT: [WHAT: ]N passed, M failed[, K skipped] (exit RC)", and
 * when cases were not run after max_hangs hangs, that. */
static void eg__closing_line(FILE *out, const char *what,
			     const eg_l1_totals_t *t, int rc, unsigned max)
{
	fprintf(out, "%s: %s%s%u passed, %u failed", eg_exit_word(rc),
		what ? what : "", what ? ": " : "", t->passed,
		t->failed + t->errors);
	if (t->crashed)
		fprintf(out, ", %u crashed", t->crashed);
	if (t->skipped)
		fprintf(out, ", %u skipped", t->skipped);
	fprintf(out, " (exit %d)", rc);
	/* nothing could run: why, the first case's reason */
	if (rc == EG_EXIT_SKIP && t->why[0])
		fprintf(out, ": %s", t->why);
	if (t->not_run)
		fprintf(out,
			": stopped after %u hang%s (--max-hangs %u; 0 runs "
			"every case), %u case%s not run",
			max, max == 1 ? "" : "s", max, t->not_run,
			t->not_run == 1 ? "" : "s");
	fprintf(out, "\n");
	fflush(out);
}

/* The closing lines: reports and counts, the last line the verdict. */
static void eg__closing(FILE *out, const char *tap, const char *junit,
			const eg_l1_totals_t *t, int rc, unsigned max)
{
	fprintf(out, "  TAP:   %s\n  JUnit: %s\n", tap, junit);
	eg__closing_line(out, NULL, t, rc, max);
}

/* The run folder's summary.json (lib/suite/check_summary.c): the stages
 * s[0..n) from their JUnit reports, the evidence; 99 when it cannot be
 * written, else rc. */
static int eg__summary(const char *run, const char *engine, eg_stage_t *s,
		       size_t n, int rc)
{
	if (eg_check_summary(run, engine, s, n, rc) < 0)
		return EG_EXIT_HARD;
	return rc;
}

/* L2 over the quick or full configuration set, on the workloads, filter
 * and keys given (the ranks get them); a multi-process --engine replaces
 * the configurations' own. Reports default to the run folder, which also
 * keeps each job's log: shared, the L1 folder given (`--full`), else one
 * of its own with its summary.json. The stage into *st when given; l1:
 * L1's totals before it (--full: the full set, L1's hangs count). */
static int eg__check_l2(const eg_check_opts_t *c, const char *shared,
			const char *tap_path, const char *junit_path,
			const eg_l1_totals_t *l1, eg_l1_totals_t *tot,
			eg_stage_t *st)
{
	int full = l1 != NULL;
	char run[4096], tap[4200], junit[4200];
	eg_stage_t own;
	double t0;
	const eg_engine_ops_t *ops = eg_engine_find(c->engine);
	eg_l2_opts_t o = {.set = full ? EG_L2_FULL : EG_L2_QUICK,
			  .iters = c->job.iters,
			  .timeout_s = 30,
			  .verbose = c->verbose,
			  .workdir = run,
			  .file = c->workload_file,
			  .filter = c->filter,
			  .overrides = &c->overrides,
			  .out = eg__out(c),
			  .progress = "  L2  ",
			  .max_hangs = c->max_hangs,
			  .hangs_before = l1 ? l1->hangs : 0,
			  .passed_before = l1 ? l1->passed : 0};
	const char *t = getenv("EPGATE_TIMEOUT");
	int rc;

	if (ops && (ops->flags & EG_ENGINE_MULTI_PROCESS))
		o.engine = c->engine;
	else if (!full && strcmp(c->engine, "self")) {
		fprintf(stderr,
			EG__PROG ": --engine %s runs all ranks in one process: "
				 "L2 wants one that runs one rank per process "
				 "(a2a, dense)\n",
			c->engine);
		return EG_EXIT_HARD;
	}
	if (t && atof(t) > 0)
		o.timeout_s = atof(t);
	if (shared && *shared)
		snprintf(run, sizeof(run), "%s", shared);
	else if (eg_suite_run_dir(EG__PROG, c->report.reports, run,
				  sizeof(run)) < 0)
		return EG_EXIT_HARD;
	snprintf(tap, sizeof(tap), "%s/check-l2.tap", run);
	snprintf(junit, sizeof(junit), "%s/check-l2.junit.xml", run);
	o.tap_path = tap_path ? tap_path : tap;
	o.junit_path = junit_path ? junit_path : junit;
	fprintf(o.out, EG__PROG ": L2 (%s set), job logs in %s\n",
		full ? "full" : "quick", run);
	fflush(o.out);
	t0 = eg_now();
	rc = eg_l2_run(&o, tot);
	if (eg_suite_run_dir_drop(run))
		return rc; /* nothing ran: the message said why */
	eg_check_stage(st ? st : &own, 1, o.junit_path, tot, rc, eg_now() - t0,
		       c->engine);
	if (!st) /* a folder of its own */
		rc = eg__summary(run, c->engine, &own, 1, rc);
	if (rc == EG_EXIT_HARD && !tot->run)
		return rc; /* nothing ran: the message said why */
	eg__closing(o.out, o.tap_path, o.junit_path, tot, rc, c->max_hangs);
	return rc;
}

static void eg__list(const eg_workload_list_t *wl)
{
	for (size_t i = 0; i < wl->n; i++) {
		char s[256];

		eg_workload_summary(&wl->items[i], s, sizeof(s));
		printf("%-28s %s\n", wl->items[i].name, s);
	}
}

/* How many of the workloads run as jobs of ranks (a one-rank-per-process
 * engine beyond world 1: lib/suite/check_jobs.c). */
static size_t eg__by_jobs(const char *engine, const eg_workload_list_t *wl)
{
	const eg_engine_ops_t *ops = eg_engine_find(engine);
	size_t n = 0;

	for (size_t i = 0; i < wl->n; i++)
		n += (size_t)eg__suite_l1_by_job(ops, &wl->items[i]);
	return n;
}

/* A plugin's default matrix (no --workload, no key but --world): the
 * L1 matrix, then the plugin battery at world 1 and over ranks, whose
 * shapes reach library bugs the matrix does not (a last chunk left
 * unwritten, a deduplicated slot, an 8-bit expert id). --world narrows
 * each to that world; --quick keeps 12 of the matrix and the world-1
 * battery (in process: a second), not the battery over ranks. */
static int eg__plugin_default(const eg_check_opts_t *c)
{
	return eg_cli_is_plugin(c->engine) && !c->workload_file &&
	       (!c->overrides.n ||
		(c->overrides.n == 1 && !strcmp(c->overrides.key[0], "world")));
}

/* L1 over the selected workloads; reports default to a new run folder
 * (run, 4096 bytes, "" when none; the reports' paths in tap and junit,
 * 4200 bytes each), which also keeps the files of the jobs of ranks;
 * the stage into st. */
static int eg__check_l1(const eg_check_opts_t *c, eg_workload_list_t *wl,
			eg_l1_opts_t *o, char *run, char *tap, char *junit,
			eg_l1_totals_t *tot, eg_stage_t *st)
{
	size_t jobs = eg__by_jobs(o->engine, wl);
	double t0;
	int rc, dropped;

	if (!o->tap_path || !o->junit_path || jobs) {
		if (eg_suite_run_dir(EG__PROG, c->report.reports, run, 4096) <
		    0)
			return EG_EXIT_HARD;
		snprintf(tap, 4200, "%s/check.tap", run);
		snprintf(junit, 4200, "%s/check.junit.xml", run);
		if (!o->tap_path)
			o->tap_path = tap;
		if (!o->junit_path)
			o->junit_path = junit;
		o->workdir = run;
	}
	fprintf(o->out,
		EG__PROG ": engine %s, %zu workload(s)%s, %u iteration(s) "
			 "each\n",
		o->engine, wl->n,
		eg__plugin_default(c)
		    ? c->quick ? " (--quick: spread over the L1 matrix, "
				 "and the plugin battery at world 1)"
			       : " (the L1 matrix, the plugin battery: "
				 "fixtures/workloads/plugin-w1.ini, "
				 "plugin-l2.ini)"
		    : "",
		o->iters ? o->iters : 1);
	if (jobs)
		fprintf(o->out,
			EG__PROG
			": it runs one rank per process: %zu at "
			"world 1 in process, %zu as jobs of ranks (one "
			"per world size; files in %s)\n",
			wl->n - jobs, jobs, run);
	fflush(o->out);
	t0 = eg_now();
	rc = eg_l1_run(o, wl, tot);
	if ((dropped = eg_suite_run_dir_drop(run)))
		run[0] = '\0';
	if (run[0]) {
		eg_check_stage(st, 0, o->junit_path, tot, rc, eg_now() - t0,
			       o->engine);
		if (!c->full)
			rc = eg__summary(run, o->engine, st, 1, rc);
	}
	if (dropped || (rc == EG_EXIT_HARD && !tot->run))
		return rc; /* nothing ran: the message said why */
	eg__closing(o->out, o->tap_path, o->junit_path, tot, rc, o->max_hangs);
	return rc;
}

/* The worse of L1's and L2's exit codes (a pass where either passed and
 * the other skipped). */
static int eg__worse(int rc, int rc2)
{
	if (rc2 == EG_EXIT_HARD || rc == EG_EXIT_HARD)
		return EG_EXIT_HARD;
	if (rc2 == EG_EXIT_FAIL || rc == EG_EXIT_FAIL)
		return EG_EXIT_FAIL;
	return rc == EG_EXIT_PASS || rc2 == EG_EXIT_PASS ? EG_EXIT_PASS : rc;
}

/* path with "-l2" before its extension ext, else before its last one. */
static void eg__beside(char *out, size_t len, const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (!(n > e && !strcmp(path + n - e, ext)))
		e = dot && (!slash || dot > slash) ? strlen(dot) : 0;
	snprintf(out, len, "%.*s-l2%s", (int)(n - e), path, path + n - e);
}

/* Bad input said before anything is created: the engine, the report
 * files' folders. */
static int eg__precheck(const eg_check_opts_t *c)
{
	if (!eg_engine_find(c->engine)) {
		eg_engine_say_unknown(EG__PROG, c->engine);
		return EG_EINVAL;
	}
	if (eg_suite_out_file(EG__PROG, "--tap", c->report.tap) < 0 ||
	    eg_suite_out_file(EG__PROG, "--junit", c->report.junit) < 0)
		return EG_EINVAL;
	return EG_OK;
}

static int eg__plugin_matrix(const eg_check_opts_t *c, eg_workload_list_t *wl,
			     size_t *all)
{
	static const char *const files[] = {"fixtures/workloads/l1-matrix.ini",
					    EG_PLUGIN_BATTERY_W1,
					    EG_PLUGIN_BATTERY_L2};
	char err[EG_ERRMSG_MAX];
	eg_workload_t probe;
	uint32_t world = 0;

	if (c->overrides.n) { /* --world=N: the world, checked as a key */
		eg_workload_init(&probe);
		if (eg_workload_set(&probe, "world", c->overrides.val[0], err) <
		    0) {
			fprintf(stderr, EG__PROG ": --world=%s: %s\n",
				c->overrides.val[0], err);
			return EG_EXIT_HARD;
		}
		world = probe.world;
		eg_workload_fini(&probe);
	}
	*all = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		eg_workload_list_t one;

		if (c->quick && f == 2)
			break; /* quick: not the battery over ranks */
		if (eg_cli_load_data(EG__PROG, files[f], &one) < 0) {
			eg_workload_list_free(&one);
			return EG_EXIT_HARD;
		}
		*all += one.n;
		if (world)
			eg_cli_keep_world(&one, world);
		eg__select(&one, c->filter, c->quick && f == 0);
		if (eg_cli_list_append(wl, &one) < 0) {
			eg_workload_list_free(&one);
			return EG_EXIT_HARD;
		}
	}
	return EG_EXIT_PASS;
}

/* --scale: the scale tier after the workloads, through the filter (its
 * cases are world 1: --world=N of a plugin's default keeps N's). */
static int eg__scale_tier(const eg_check_opts_t *c, eg_workload_list_t *wl,
			  size_t *all)
{
	eg_workload_list_t t;

	if (!c->scale)
		return EG_EXIT_PASS;
	if (eg_cli_load_data(EG__PROG, EG_SCALE_TIER, &t) < 0)
		goto fail;
	*all += t.n;
	if (eg__plugin_default(c) && c->overrides.n)
		eg_cli_keep_world(&t, (uint32_t)atoi(c->overrides.val[0]));
	eg__select(&t, c->filter, 0);
	if (eg_cli_list_append(wl, &t) < 0)
		goto fail;
	return EG_EXIT_PASS;
fail:
	eg_workload_list_free(&t);
	return EG_EXIT_HARD;
}

/* The workloads selected; 77 (said) when none is. */
static int eg__selected(const eg_check_opts_t *c, eg_workload_list_t *wl)
{
	size_t all;
	int plugin = eg__plugin_default(c), rc;

	if (plugin) {
		rc = eg__plugin_matrix(c, wl, &all);
		if (rc != EG_EXIT_PASS)
			return rc;
	} else {
		if (eg_cli_load_workloads(EG__PROG, c->workload_file,
					  &c->overrides, wl) < 0)
			return EG_EXIT_HARD;
		all = wl->n;
		eg__select(wl, c->filter, c->quick);
	}
	if ((rc = eg__scale_tier(c, wl, &all)) != EG_EXIT_PASS)
		return rc;
	if (wl->n)
		return EG_EXIT_PASS;
	fprintf(stderr,
		EG__PROG ": no workload matches%s%s%s%s (of %zu in %s): "
			 "nothing to run\n",
		c->filter ? " --filter " : "", c->filter ? c->filter : "",
		plugin && c->overrides.n ? " --world=" : "",
		plugin && c->overrides.n ? c->overrides.val[0] : "", all,
		c->workload_file ? c->workload_file
		: plugin	 ? "the L1 matrix and the plugin battery"
				 : "the L1 matrix");
	return EG_EXIT_SKIP;
}

int eg_check(const eg_check_opts_t *given)
{
	eg_check_opts_t cc = *given, *c = &cc;
	long max = eg_suite_max_hangs(EG__PROG, given->max_hangs);
	eg_l1_opts_t o = {.engine = c->engine,
			  .iters = c->job.iters,
			  .tap_path = c->report.tap,
			  .junit_path = c->report.junit,
			  .verbose = c->verbose,
			  .out = eg__out(c),
			  .progress = "  L1  ",
			  .max_hangs = (unsigned)max};
	eg_workload_list_t wl = {0};
	char run[4096] = "", tap[4200], junit[4200], l2tap[4300], l2junit[4300];
	eg_l1_totals_t t1 = {0}, t2 = {0};
	eg_stage_t st[2] = {{0}};
	int rc, rc2;

	if (max < 0 || eg__precheck(c) < 0)
		return EG_EXIT_HARD;
	cc.max_hangs = (unsigned)max;
	if (c->l2 && !c->full)
		return eg__check_l2(c, NULL, c->report.tap, c->report.junit,
				    NULL, &t2, NULL);
	if ((rc = eg__selected(c, &wl)) != EG_EXIT_PASS) {
		eg_workload_list_free(&wl);
		return rc;
	}
	if (c->list) {
		eg__list(&wl);
		eg_workload_list_free(&wl);
		return EG_EXIT_PASS;
	}
	rc = eg__check_l1(c, &wl, &o, run, tap, junit, &t1, &st[0]);
	eg_workload_list_free(&wl);
	if (!c->full)
		return rc;
	/* L2 reports beside L1's (check.tap -> check-l2.tap), its jobs' logs
	 * in L1's folder; the last line and summary.json say both */
	eg__beside(l2tap, sizeof(l2tap), o.tap_path, ".tap");
	eg__beside(l2junit, sizeof(l2junit), o.junit_path, ".junit.xml");
	rc2 = eg__check_l2(c, run, l2tap, l2junit, &t1, &t2,
			   run[0] ? &st[1] : NULL);
	rc = eg__worse(rc, rc2);
	if (run[0])
		rc = eg__summary(run, c->engine, st, st[1].name ? 2 : 1, rc);
	t1.passed += t2.passed;
	t1.failed += t2.failed;
	t1.errors += t2.errors;
	t1.skipped += t2.skipped;
	t1.crashed += t2.crashed;
	t1.not_run += t2.not_run;
	eg__closing_line(o.out, "L1 and L2", &t1, rc, c->max_hangs);
	return rc;
}
