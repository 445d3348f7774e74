/* Performance sweeps (docs/profiles.md): the orchestrator that runs a
 * profile's points as `epgate launch` jobs (or, under Slurm, inside the
 * srun'd ranks), the per-rank command, and the results context. */
#ifndef EPGATE_SWEEP_H
#define EPGATE_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "epgate/opts_groups.h"
#include "epgate/profile.h"
#include "epgate/results.h"

/* The form of the sweep's table (lib/campaign/sweep_table.c): for people,
 * every metric (--wide), or one JSON object per point (--json). */
typedef enum eg_bench_table {
	EG_TABLE_PEOPLE = 0,
	EG_TABLE_WIDE = 1,
	EG_TABLE_JSON = 2,
} eg_bench_table_t;

typedef struct eg_bench_run_opts {
	const char *results; /* NULL: <run_dir>/bench-<profile>.json */
	int apply_gates;     /* run `epgate gate` with the profile's file */
	eg_bench_table_t table;
	int progress; /* -1: a line updated in place when stderr is a
			 terminal; 0: plain lines; 1: in place */
	int verbose;
	/* appended (docs/gates.md): */
	const char *history;   /* store the campaign in DIR/<profile>/<machine>/
				  and gate against the last history_last */
	unsigned history_last; /* 0: EG_HISTORY_LAST */
	const char *plant;     /* "slow:10%:a2a": run as that engine every
				  point of the arm it wraps, written as it */
	const char *ab[2];     /* an A/B job: arms A and B at every point of
				  ab_arm (default a2a) */
	const char *ab_arm;
	const char *gates; /* a gate file instead of the profile's */
	unsigned launches; /* 0: the profile's */
	int remeasure;	   /* rounds: 0 the profile's, -1 none, else that */
	uint64_t seed;	   /* 0: EPGATE_BENCH_SEED, else from the clock */
	/* reports: where a new run folder goes (bench profile, bench ab) */
	eg_report_cli_t report;
	/* appended: the run folder is another command's, which writes its
	 * summary.json (epgate run); else the sweep writes it */
	int no_summary;
	/* appended: the points of these sweeps alone (comma-separated
	 * names), NULL: every sweep (the calibration measures h200x1's w1) */
	const char *sweep;
} eg_bench_run_opts_t;

typedef struct eg_bench_totals {
	unsigned points;   /* in the profile */
	unsigned measured; /* written to the results file */
	unsigned failed;   /* verification failed, or the job died */
	unsigned skipped;  /* not runnable here (an arm's plugin absent) */
	unsigned jobs, jobs_failed;
	unsigned launches;   /* point launches measured */
	unsigned remeasured; /* of them, re-measurements */
	int gate_exit;	     /* epgate gate's exit status, -1 when not run */
	double seconds;
	char results[4096]; /* the results file written */
} eg_bench_totals_t;

/* Runs the sweeps of profile (a name under profiles/, or a file) into
 * run_dir (which must exist): results file, one log per job and, with
 * apply_gates, bench-gates.tap / bench-gates.junit.xml.  Returns an automake
 * exit code: 0 all measured (and no gate failed), 1 a point failed
 * verification or a gate failed, 77 nothing could run (e.g. a Slurm
 * profile outside Slurm, a transport not built), 99 bad input or a
 * harness error. */
int eg_bench_run_profile(const char *profile, const char *run_dir,
			 const eg_bench_run_opts_t *o, eg_bench_totals_t *tot);

/* One rank of a sweep job (`epgate bench-rank`, docs/profiles.md):
 * measures every point of the profile whose world and node count are the
 * job's (only those of the named sweeps, when any); rank 0 appends each
 * to the results file, or as one JSON line to the spool file. Returns an
 * automake exit code: 0 all measured, 1 a point failed verification, 77
 * no point for this job or its transport not built, 99 an error. */
#define EG_BENCH_SWEEPS_MAX 32
typedef struct eg_bench_rank_opts {
	const char *profile;	     /* a name under profiles/, or a file */
	const char *results, *spool; /* exactly one */
	const char *sweeps[EG_BENCH_SWEEPS_MAX];
	unsigned n_sweeps;
} eg_bench_rank_opts_t;
int eg_bench_rank_run(const eg_bench_rank_opts_t *o);

/* `epgate bench list NAME`: the profile's points and the jobs that run
 * them (srun lines under Slurm). Returns 0, or 99 on a bad profile. */
int eg_bench_list(const char *profile);

/* `epgate bench profile NAME`: a new run folder under o->report.reports
 * (none on the ranks other than 0 under srun), then
 * eg_bench_run_profile. */
int eg_bench_profile_new_run(const char *profile, const eg_bench_run_opts_t *o);

/* `epgate bench ab PROFILE` (lib/campaign/bench_ab.c): o->ab[0] and ab[1]
 * (arms A and B) at every point of o->ab_arm, in the same launches, in
 * a new run folder under o->report.reports; a
 * gate file judging B against A per metric (written into the run
 * folder unless o->gates names one).  Returns the run's exit code. */
#define EG_AB_METRICS_MAX 8
typedef struct eg_bench_ab_opts {
	const char *metric[EG_AB_METRICS_MAX];
	size_t n_metrics;
	const char *statistic;	/* bootstrap, mann-whitney */
	const char *correction; /* holm, bh, none */
	const char *effect;	/* the per-point gates': estimate, interval */
	double alpha, min_effect;
	/* a gate per point (corrected over the points) beside the median
	 * over them: the default, so that a slowdown confined to some
	 * points fails; median_only leaves only the median's */
	int median_only;
} eg_bench_ab_opts_t;
int eg_bench_ab(const char *profile, const eg_bench_run_opts_t *o,
		const eg_bench_ab_opts_t *a);
/* Rank 0's table after an A/B job (lib/campaign/bench_ab_mde.c): per metric
 * and point, B's launch-paired change against A, its spread over the
 * launches and the smallest slowdown the per-point gate would catch 95%
 * of the time with this job's spread (normal approximation, Holm's
 * first threshold alpha / points). */
void eg_bench_ab_mde(FILE *f, const char *results, const eg_bench_run_opts_t *o,
		     const eg_bench_ab_opts_t *a);

/* The measured points as a table on f in the form asked for; gates:
 * the profile's gate file (its a2a/dense ratios become columns), or
 * NULL. */
void eg_bench_table(FILE *f, const eg_results_t *r, const char *gates,
		    eg_bench_table_t form);

/* Median of metric name at p: of its samples when it has them, else its
 * summary's; NAN when p lacks the metric (lib/campaign/sweep_table.c). */
double eg_bench_point_median(const eg_point_t *p, const char *name);

/* The results file's context for a profile: hosts (given, or this
 * host), build, versions, environment knobs, Slurm job id. */
json_t *eg_bench_context(const eg_profile_t *p, json_t *hosts);

/* The harness's own overhead (`epgate bench overhead`, bench_overhead.c):
 * prints the measured numbers; 0 when under 2% for an op_us operation,
 * else 1. */
int eg_bench_overhead(unsigned iters, unsigned op_us);
/* Rank 0's table of an engine's point at its two boundaries: the gated
 * call times and the step's (wall_*), median and ep_bench's mean, and
 * the harness per step (`epgate bench overhead --engine`). */
void eg_bench_overhead_boundaries(const char *engine, const eg_point_t *p);

#endif
