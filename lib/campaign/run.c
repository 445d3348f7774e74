/* epgate run: the main job on the embedded default (profile "local"):
 * every stage this build has -- L1, L2, GPU, bench, gates -- into one
 * run folder; the closing and summary.json from one record per stage
 * (lib/suite/run_report.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "epgate/evidence.h"
#include "epgate/job.h"
#include "epgate/report_html.h"
#include "lib/suite/run_report.h"
#include "lib/campaign/run.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep.h"

enum { EG__L1, EG__L2, EG__GPU, EG__BENCH, EG__GATES, EG__STAGES };

typedef struct eg__run {
	const eg_run_opts_t *o;
	char dir[4096], summary[4200];
	eg_stage_t st[EG__STAGES];
	json_t *ev; /* what ran: this process, then the bench's results */
} eg__run_t;

/* A stage's counts and failures from its JUnit report. */
static void eg__tally(eg__run_t *R, eg_stage_t *s, const char *junit)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", R->dir, junit);
	if (!s->failures)
		s->failures = json_array();
	if (eg_junit_tally(path, &s->t, s->failures, EG_STAGE_FAILURES) < 0)
		snprintf(s->why, sizeof(s->why), "%s could not be read", junit);
}

/* The evidence of the bench's results file (the local profile's, in the
 * run folder), beside this process's. */
static void eg__bench_evidence(eg__run_t *R)
{
	char err[EG_RESULTS_ERR_MAX], results[4200];
	eg_results_t r;
	json_t *ev;

	snprintf(results, sizeof(results), "%s/bench-local.json", R->dir);
	if (eg_results_read(&r, results, err, sizeof(err)) < 0)
		return;
	ev = eg_results_evidence(&r, 1);
	if (ev && R->ev)
		eg_evidence_merge(R->ev, ev);
	json_decref(ev);
	eg_results_free(&r);
}

/* summary.json, then the evidence of what ran into it. */
static int eg__summary(eg__run_t *R, int done, int rc)
{
	int e = eg_run_summary(R->summary, R->dir, R->o->engine, R->st,
			       EG__STAGES, done, rc);

	return e < 0 ? e : eg_summary_evidence(R->summary, R->ev);
}

static void eg__l1(eg__run_t *R)
{
	eg_stage_t *s = &R->st[EG__L1];
	char tap[4300], junit[4300];
	eg_l1_opts_t l1 = {.engine = R->o->engine,
			   .iters = 2,
			   .tap_path = tap,
			   .junit_path = junit,
			   .verbose = R->o->verbose,
			   .out = stdout,
			   .progress = "  L1     ",
			   .workdir = R->dir};
	eg_overrides_t ov = {0};
	eg_workload_list_t wl = {0};
	eg_l1_totals_t t;
	double t0 = eg_now();

	s->rc = EG_EXIT_HARD;
	if (eg_cli_load_workloads("epgate run", NULL, &ov, &wl) < 0) {
		snprintf(s->why, sizeof(s->why), "the L1 matrix did not load");
		return;
	}
	snprintf(tap, sizeof(tap), "%s/l1.tap", R->dir);
	snprintf(junit, sizeof(junit), "%s/l1.junit.xml", R->dir);
	printf("  L1     engine %s, %zu workloads, 2 iterations each ...\n",
	       R->o->engine, wl.n);
	fflush(stdout);
	s->rc = eg_l1_run(&l1, &wl, &t);
	eg_workload_list_free(&wl);
	s->seconds = eg_now() - t0;
	s->ran = t.run > 0;
	eg__tally(R, s, "l1.junit.xml");
	snprintf(s->detail, sizeof(s->detail), "engine %s", R->o->engine);
	printf("  L1     %u passed, %u failed in %.1f s\n", s->t.passed,
	       s->t.failed + s->t.errors, s->seconds);
}

/* L2 (the quick set over libfabric) or GPU (the NCCL engines): jobs of
 * one rank per process, their reports named after the stage. */
static void eg__jobs(eg__run_t *R, eg_stage_t *s, eg_l2_set_t set,
		     const char *progress)
{
	char tap[4300], junit[4300];
	eg_l2_opts_t o = {.set = set,
			  .tap_path = tap,
			  .junit_path = junit,
			  .workdir = R->dir,
			  .iters = 2,
			  .timeout_s = 30,
			  .verbose = R->o->verbose,
			  .out = stdout,
			  .progress = progress,
			  .skip_why = s->why};
	eg_l1_totals_t t;
	double t0 = eg_now();

	snprintf(tap, sizeof(tap), "%s/%s.tap", R->dir, s->name);
	snprintf(junit, sizeof(junit), "%s/%s.junit.xml", R->dir, s->name);
	s->rc = eg_l2_run(&o, &t);
	s->seconds = eg_now() - t0;
	s->ran = t.run > 0;
	eg__tally(R, s, strrchr(junit, '/') + 1);
	printf("%s%u passed, %u failed, %u skipped in %.1f s\n", progress,
	       s->t.passed, s->t.failed + s->t.errors, s->t.skipped,
	       s->seconds);
}

static void eg__l2(eg__run_t *R)
{
	eg_stage_t *s = &R->st[EG__L2];

	printf("  L2     a2a and dense, one process per rank over libfabric "
	       "(shm, tcp), one job per configuration ...\n");
	fflush(stdout);
	snprintf(s->detail, sizeof(s->detail), "a2a, dense over libfabric");
	eg__jobs(R, s, EG_L2_QUICK, "  L2     ");
}

/* GPU: the NCCL engines on two GPUs, or why not. EPGATE_GPU_STAGE=run
 * runs its jobs whatever this process sees (each rank then says why it
 * cannot: a check of the jobs themselves without a GPU). */
static void eg__gpu(eg__run_t *R)
{
	eg_stage_t *s = &R->st[EG__GPU];
	const char *force = getenv("EPGATE_GPU_STAGE");
	int n = eg_suite_cuda_devices();

	if (force && !strcmp(force, "run") && n >= 0 && n < 2)
		n = 2;

	s->rc = EG_EXIT_SKIP;
	if (n < 0)
		snprintf(s->why, sizeof(s->why),
			 "this epgate is built without CUDA and NCCL");
	else if (n == 0)
		snprintf(s->why, sizeof(s->why), "no CUDA device on this host");
	else if (n == 1)
		snprintf(s->why, sizeof(s->why),
			 "one CUDA device: the GPU stage runs 2 ranks, one "
			 "per GPU");
	if (n < 2) {
		printf("  GPU    skipped: %s\n", s->why);
		return;
	}
	printf("  GPU    a2a and dense over NCCL on 2 GPUs (NVLink, then "
	       "NCCL's network between 2 virtual nodes) ...\n");
	fflush(stdout);
	snprintf(s->detail, sizeof(s->detail), "NCCL engines, 2 GPUs");
	eg__jobs(R, s, EG_L2_GPU, "  GPU    ");
}

/* bench: the local profile's sweeps, then its gates. */
static int eg__bench(eg__run_t *R)
{
	eg_bench_run_opts_t po = {.apply_gates = 1,
				  .progress = -1,
				  .verbose = R->o->verbose,
				  .no_summary = 1};
	eg_bench_totals_t pt;
	int rc;

	printf(
	    "  bench  profile local: its sweeps, then gates/local.gate ...\n");
	fflush(stdout);
	rc = eg_bench_run_profile("local", R->dir, &po, &pt);
	eg_bench_stages(R->dir, &pt, rc, "gates/local.gate", &R->st[EG__BENCH]);
	printf("  bench  %u of %u points measured, %u failed in %.1f s\n",
	       pt.measured, pt.points, pt.failed, pt.seconds);
	if (R->st[EG__GATES].ran)
		printf("  gates  %u passed, %u failed, %u inconclusive, %u "
		       "skipped\n",
		       R->st[EG__GATES].t.passed,
		       R->st[EG__GATES].t.failed + R->st[EG__GATES].t.errors,
		       R->st[EG__GATES].t.inconclusive,
		       R->st[EG__GATES].t.skipped);
	return rc;
}

static void eg__stages_init(eg_stage_t *st)
{
	static const eg_stage_t init[EG__STAGES] = {
	    {.name = "l1", .label = "L1", .prefixes = {"l1.", "l1-"}},
	    {.name = "l2", .label = "L2", .prefixes = {"l2.", "l2-"}},
	    {.name = "gpu",
	     .label = "GPU",
	     .prefixes = {"gpu.", "l2-gpu-", "nccl-"}},
	    {.name = "bench", .label = "bench", .prefixes = {"bench-"}},
	    {.name = "gates", .label = "gates", .prefixes = {"bench-gates."}},
	};

	memcpy(st, init, sizeof(init));
	for (int i = 0; i < EG__STAGES; i++)
		st[i].rc = EG_EXIT_SKIP;
}

int eg_run_local(const eg_run_opts_t *o)
{
	eg__run_t R = {.o = o};
	int rc, brc;

	eg__stages_init(R.st);
	if (eg_suite_run_dir("epgate run", o->report.reports, R.dir,
			     sizeof(R.dir)) < 0)
		return EG_EXIT_HARD;
	snprintf(R.summary, sizeof(R.summary), "%s/summary.json", R.dir);
	printf("epgate run: profile local, run folder %s\n", R.dir);
	if (eg_job_under_slurm()) /* lib/world/job_srun.c */
		printf("epgate run: inside Slurm job %s: every job's ranks "
		       "run as an srun step\n",
		       getenv("SLURM_JOB_ID"));
	fflush(stdout);
	eg__l1(&R);
	R.ev = eg_process_evidence(o->engine); /* the L1 engine loaded */
	eg__summary(&R, 0, 0);
	eg__l2(&R);
	eg__summary(&R, 0, 0);
	eg__gpu(&R);
	eg__summary(&R, 0, 0);
	brc = eg__bench(&R);
	eg__bench_evidence(&R);
	/* never kinder than the sweep's own verdict */
	rc = eg_run_worse(eg_run_exit(R.st, EG__STAGES),
			  brc == EG_EXIT_SKIP ? EG_EXIT_SKIP : brc);
	if (eg__summary(&R, 1, rc) < 0)
		rc = EG_EXIT_HARD;
	eg_report_run_folder(R.dir); /* report.html, summary.md */
	eg_run_closing(stdout, R.dir, R.st, EG__STAGES, rc);
	for (int i = 0; i < EG__STAGES; i++)
		json_decref(R.st[i].failures);
	json_decref(R.ev);
	return rc;
}
