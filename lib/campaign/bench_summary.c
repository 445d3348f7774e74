/* A sweep's record (lib/suite/run_report.h): its two stages, bench (the
 * points measured, failed or lost with a job) and gates (the counts of
 * the very JUnit file the gate run wrote), so that `epgate run`'s
 * closing and a sweep's own run folder say one verdict: summary.json,
 * the last line, the exit status and the page read the same records. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/evidence.h"
#include "lib/suite/run_report.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep.h"

static void eg__gate_stage(const char *dir, const eg_bench_totals_t *pt,
			   const char *gates, eg_stage_t *g)
{
	char path[4400];

	g->rc = pt->gate_exit < 0 ? EG_EXIT_SKIP : pt->gate_exit;
	if (pt->gate_exit < 0) {
		snprintf(g->why, sizeof(g->why), "%s",
			 gates && *gates ? "not run: no points to judge"
					 : "no gate file judged them");
		return;
	}
	g->ran = 1;
	g->seconds = -1; /* the sweep's time holds them */
	snprintf(path, sizeof(path), "%s/bench-gates.junit.xml", dir);
	if (!g->failures)
		g->failures = json_array();
	if (eg_junit_tally(path, &g->t, g->failures, EG_STAGE_FAILURES) < 0)
		snprintf(g->why, sizeof(g->why),
			 "bench-gates.junit.xml could not be read");
	snprintf(g->detail, sizeof(g->detail), "%s%s", gates ? gates : "",
		 g->t.inconclusive ? ", inconclusive ones listed above" : "");
}

void eg_bench_stages(const char *dir, const eg_bench_totals_t *pt, int rc,
		     const char *gates, eg_stage_t st[2])
{
	eg_stage_t *b = &st[0];

	b->ran = pt->measured + pt->failed > 0;
	b->t.passed = pt->measured;
	b->t.failed = pt->failed;
	b->t.skipped = pt->skipped;
	b->seconds = pt->seconds;
	b->rc = pt->jobs_failed	     ? EG_EXIT_HARD
		: pt->failed	     ? EG_EXIT_FAIL
		: b->ran	     ? EG_EXIT_PASS
		: rc == EG_EXIT_SKIP ? EG_EXIT_SKIP
				     : EG_EXIT_HARD;
	snprintf(b->detail, sizeof(b->detail),
		 "%u of %u points measured in %u job(s)%s%s", pt->measured,
		 pt->points, pt->jobs, pt->jobs_failed ? ", a job failed" : "",
		 pt->skipped ? ", some not runnable here" : "");
	if (!b->ran)
		snprintf(b->why, sizeof(b->why), "%s",
			 rc == EG_EXIT_SKIP ? "nothing could run here (above)"
					    : "it stopped before any point "
					      "(above)");
	eg__gate_stage(dir, pt, gates, &st[1]);
}

static void eg__stages_init(eg_stage_t st[2])
{
	static const eg_stage_t init[2] = {
	    {.name = "bench", .label = "bench", .prefixes = {"bench-"}},
	    {.name = "gates", .label = "gates", .prefixes = {"bench-gates."}},
	};

	memcpy(st, init, sizeof(init));
	st[0].rc = st[1].rc = EG_EXIT_SKIP;
}

/* The evidence of what ran (docs/results-v1.md, "Evidence"): the
 * results file's, as the ranks found it, then this process's for what
 * they do not say (NULL when there is none). */
static json_t *eg__evidence(const char *results)
{
	char err[EG_RESULTS_ERR_MAX];
	json_t *ev = NULL, *me = eg_process_evidence(NULL), *v;
	const char *k;
	eg_results_t r;

	if (results && *results &&
	    eg_results_read(&r, results, err, sizeof(err)) == EG_OK) {
		ev = eg_results_evidence(&r, 1);
		eg_results_free(&r);
	}
	if (!ev)
		return me;
	json_object_foreach(me, k, v)
	{
		if (!json_object_get(ev, k))
			json_object_set(ev, k, v);
	}
	json_decref(me);
	return ev;
}

int eg_bench_summary(const char *dir, const char *profile,
		     const eg_bench_totals_t *pt, int rc, const char *gates)
{
	char path[4400];
	eg_stage_t st[2];
	int r;

	eg__stages_init(st);
	eg_bench_stages(dir, pt, rc, gates, st);
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	r = eg_run_summary_of(path, dir, profile, NULL, st, 2, 1, rc);
	if (r == EG_OK) {
		json_t *ev = eg__evidence(pt->results);

		r = eg_summary_evidence(path, ev);
		json_decref(ev);
	}
	json_decref(st[0].failures);
	json_decref(st[1].failures);
	return r;
}

void eg_bench_last_line(FILE *f, const char *dir, const eg_bench_totals_t *pt,
			int rc)
{
	eg_stage_t st[2];

	eg__stages_init(st);
	eg_bench_stages(dir, pt, rc, NULL, st);
	eg_run_last_line(f, st, 2, rc);
	json_decref(st[0].failures);
	json_decref(st[1].failures);
}
