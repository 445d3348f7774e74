/* What `epgate run` says at the end (lib/suite/run_report.c) and keeps
 * in summary.json: one record per stage, its counts taken from the very
 * JUnit report it names (lib/suite/junit_tally.c), its files found in the
 * run folder, its failures; the exit code, the closing table, the last
 * line and summary.json come from the same records, so they agree. */
#ifndef EPGATE_SUITE_RUN_REPORT_H
#define EPGATE_SUITE_RUN_REPORT_H

#include <stdio.h>

#include <jansson.h>

typedef struct eg_tally {
	unsigned passed, failed, errors, skipped, inconclusive;
	unsigned crashed; /* of errors: <error type="crash"> */
} eg_tally_t;

/* Counts the testcases of a JUnit file; appends up to max failures and
 * errors to failures ({"kind", "class", "case", "message", "repro"?}).
 * EG_EPARSE when the file cannot be read. */
int eg_junit_tally(const char *path, eg_tally_t *t, json_t *failures,
		   size_t max);

#define EG_STAGE_PREFIXES 4
#define EG_STAGE_FAILURES 50 /* kept per stage in summary.json */

typedef struct eg_stage {
	const char *name;  /* "l1", "l2", "gpu", "bench", "gates" */
	const char *label; /* "L1", "L2", "GPU", "bench", "gates" */
	/* the run folder's files that are this stage's: names starting
	 * with one of these (the first stage that claims a file has it) */
	const char *prefixes[EG_STAGE_PREFIXES];
	int ran; /* 0: not run; why says why */
	int rc;	 /* the stage's exit code */
	eg_tally_t t;
	double seconds;
	char detail[256]; /* "27 of 27 points measured in 7 jobs" */
	char why[600];	  /* why it skipped or did not run */
	json_t *failures;
} eg_stage_t;

/* The worse of two exit codes, a skip counting as nothing (99 > 1 > 0 >
 * 77). */
int eg_run_worse(int a, int b);
/* The run's exit code from its stages: 77 when none ran anything. */
int eg_run_exit(const eg_stage_t *st, size_t n);

/* summary.json, rewritten atomically (after each stage: a crash keeps
 * the stages before it): every stage with its counts, time, files and
 * failures, the totals, the run folder's files; "exit" and "verdict" are
 * null and "running" until done. Prints and returns <0 on failure. */
int eg_run_summary(const char *path, const char *run, const char *engine,
		   const eg_stage_t *st, size_t n, int done, int rc);
/* The same for a run folder of another command and profile (engine
 * NULL: none named). */
int eg_run_summary_of(const char *path, const char *run, const char *profile,
		      const char *engine, const eg_stage_t *st, size_t n,
		      int done, int rc);
/* ... with "command" (NULL: none) and profile NULL as null. */
int eg_run_summary_cmd(const char *path, const char *run, const char *command,
		       const char *profile, const char *engine,
		       const eg_stage_t *st, size_t n, int done, int rc);

/* `epgate check`'s run folder (lib/suite/check_summary.c): stage s of
 * L1 or L2 (name "l1" or "l2") from the JUnit report junit it wrote
 * (counts, CRASH cases, failures), its totals and exit code; then
 * RUN/summary.json of those stages, command "check", with the evidence
 * of this process (the libraries as loaded, a plugin engine's library,
 * the knobs: what the JUnit properties hold). <0 after a message. */
struct eg_l1_totals;
void eg_check_stage(eg_stage_t *s, int l2, const char *junit,
		    const struct eg_l1_totals *t, int rc, double seconds,
		    const char *engine);
int eg_check_summary(const char *run, const char *engine, eg_stage_t *st,
		     size_t n, int rc);

/* The closing lines: the stage table, each failing stage's first
 * failures, the reports (every file of the run folder, by stage) and the
 * last line "VERDICT: N passed, M failed, K skipped (exit RC)". */
void eg_run_closing(FILE *f, const char *run, const eg_stage_t *st, size_t n,
		    int rc);
/* Only that last line, from the same totals. */
void eg_run_last_line(FILE *f, const eg_stage_t *st, size_t n, int rc);

/* A sweep's two stages (bench: the points measured and failed; gates:
 * the counts of dir/bench-gates.junit.xml, when they ran), as `epgate
 * run` and `epgate bench` record them (lib/campaign/bench_summary.c); gates
 * names the gate file. */
struct eg_bench_totals;
void eg_bench_stages(const char *dir, const struct eg_bench_totals *pt, int rc,
		     const char *gates, eg_stage_t st[2]);
/* A sweep's own run folder (bench profile, bench ab): its summary.json
 * from those stages, and its last line; gates "" when none judged. */
int eg_bench_summary(const char *dir, const char *profile,
		     const struct eg_bench_totals *pt, int rc,
		     const char *gates);
void eg_bench_last_line(FILE *f, const char *dir,
			const struct eg_bench_totals *pt, int rc);

#endif
