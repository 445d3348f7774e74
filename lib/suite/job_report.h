/* TAP and JUnit for the steps of a batch job (slurm/epgate.sbatch): what
 * each step did, and for L2 steps every workload of their world, so the
 * cases a killed or skipped step never ran are reported skipped instead
 * of vanishing from CI history (lib/suite/job_report.c). */
#ifndef EPGATE_JOB_REPORT_H
#define EPGATE_JOB_REPORT_H

#include <stdio.h>

#include "epgate/epgate.h"
#include "epgate/opts_groups.h"

/* The steps file: one step per line, tab-separated, '#' lines ignored:
 *   KIND NAME WORLD EXIT SECONDS RESULTS LOG NOTE
 * KIND: "l2" (RESULTS is l2-rank's JSON lines, one per workload) or any
 * other word (one test point for the step: preflight, perf, ...); a
 * "preflight" step checks what the others need: it can fail the job, but
 * its passing is not something having run. WORLD:
 * ranks (l2: which workloads of the matrix it owes). EXIT: the step's
 * exit status, or "-" when it did not run (NOTE says why). RESULTS, LOG:
 * paths or "-". NOTE: free text, may be empty. */
typedef struct eg_job_report_opts {
	const char *steps_path;
	eg_report_cli_t report;	   /* tap, junit: the files written */
	const char *workload_path; /* L2 matrix; NULL: the shipped one */
	const char *suite;	   /* JUnit suite name; NULL: epgate-job */
} eg_job_report_opts_t;

typedef struct eg_job_totals {
	unsigned passed, failed, skipped, errors;
	unsigned crashed;	/* of the cases: CRASH (not in failed) */
	unsigned checks_passed; /* of passed: preflight steps */
	unsigned steps, steps_run, steps_failed;
} eg_job_totals_t;

/* Writes both reports; returns an automake exit code: 1 when a step or
 * a case failed, 0 when something passed and nothing failed, 77 when
 * nothing ran, 99 on bad input (named "file:line: ..." on stderr). */
int eg_job_report(const eg_job_report_opts_t *o, eg_job_totals_t *t);

struct eg_job_cut;
/* One L2 step's JSON lines (f may be NULL: nothing reported) as TAP
 * points and JUnit cases under classname cls, "<prefix>: <workload>";
 * then, with cut, the workload the job's end fell on (lib/suite/
 * job_crash.h: CRASH, a hang's FAIL, or ERROR); then every other
 * workload of wl with world W that no line reported, as a skip saying
 * why_missing. Counts into t; returns how many workloads the lines
 * reported. Shared with the L2 orchestration's per-job reports. */
unsigned eg_l2_lines_report(FILE *f, const eg_workload_list_t *wl, uint32_t W,
			    eg_tap_t *tap, eg_junit_t *junit, const char *cls,
			    const char *prefix, double dt,
			    const char *why_missing, struct eg_job_cut *cut,
			    eg_job_totals_t *t);
/* eg_l2_lines_report in two halves, for a run that launches a job
 * again after one that ended early (seen: wl->n flags, kept across the
 * jobs): the lines and the cut, marking seen; then the workloads of
 * world W still unseen, as skips saying why_missing. */
unsigned eg_l2_lines_collect(FILE *f, const eg_workload_list_t *wl, uint32_t W,
			     unsigned char *seen, eg_tap_t *tap,
			     eg_junit_t *junit, const char *cls,
			     const char *prefix, double dt,
			     struct eg_job_cut *cut, eg_job_totals_t *t);
void eg_l2_lines_missing(const eg_workload_list_t *wl, uint32_t W,
			 unsigned char *seen, eg_tap_t *tap, eg_junit_t *junit,
			 const char *cls, const char *prefix,
			 const char *why_missing, eg_job_totals_t *t);

#endif
