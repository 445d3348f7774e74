/* Internals of the sweep orchestrator (lib/campaign/sweep.c): the plan of
 * launches and one pass of them (sweep_pass.c). */
#ifndef EG_SWEEP_INT_H
#define EG_SWEEP_INT_H

#include <stdint.h>

#include "epgate/bench_driver.h"
#include "epgate/results.h"
#include "lib/campaign/sweep.h"

/* One thing measured in every launch: a point of the profile run by an
 * engine and written as an arm (the same one, unless a planted engine
 * stands in for it or an A/B job runs the point under both arms). */
typedef struct eg__unit {
	size_t idx; /* into the profile's points */
	/* the units of one group run together, step by step: an A/B
	 * point's two arms; with interleave: steps, every arm of one shape
	 * (the first such point's idx); else idx alone */
	size_t group;
	const char *engine, *label;
	unsigned launches;
	uint32_t W, N;
	char id[192]; /* the id it is written under */
	int pick;     /* selected for a re-measurement pass */
} eg__unit_t;

typedef struct eg__run {
	const eg_profile_t *p;
	const char *path; /* the profile file */
	const char *run_dir;
	const eg_bench_run_opts_t *o;
	eg_results_writer_t *wr;
	eg_results_t held; /* the points wr wrote: table and gates */
	eg_bench_totals_t *tot;
	eg_bench_point_t *pts;
	size_t n_pts;
	eg__unit_t *units;
	size_t n_units;
	unsigned launches; /* passes of the campaign, re-measures after */
	unsigned remeasure_total; /* re-measurement launches planned */
	uint64_t seed;		  /* of the order of every pass */
	int tty;
	double t0, t_job;
	unsigned total, done; /* point launches planned and done */
	unsigned job_total, job_done;
	char job[64]; /* "pass 3 of 8, w4 n2" */
	char last[200];
	/* the current job: its pass, spool and how far it was read */
	uint32_t pass;
	int remeasure;
	char spool[4200];
	long off;
	unsigned job_points;
	unsigned job_skips;  /* of job_points: not runnable here */
	unsigned job_failed; /* of job_done: failed, or lost with the job */
	int job_skipped;     /* nothing measurable here */
	int hard;	     /* a job failed hard */
	unsigned skipped;    /* jobs with nothing measurable here */
	unsigned rounds, round_launches; /* re-measurement */
	char gates[4096];		 /* the gate file, or "" */
} eg__run_t;

/* The units of the run: every point of the profile (its arm, or the
 * planted engine in its place), or with an A/B pair both arms at each
 * point of the chosen arm. */
int eg__campaign_units(eg__run_t *r, char *err, size_t errlen);

/* One pass: every unit with more than pass launches (or, remeasure, the
 * picked ones) once, one job per (world, nodes), jobs and points in an
 * order shuffled by (seed, pass). */
void eg__campaign_pass(eg__run_t *r, uint32_t pass, int remeasure);

/* Picks the units whose ids are in ids (a JSON array); A/B pairs go
 * together.  Returns how many were picked. */
size_t eg__campaign_pick(eg__run_t *r, const json_t *ids);

/* Rounds of extra launches of the points the gates cannot settle or
 * would fail on (sweep_gates.c). */
void eg__campaign_remeasure(eg__run_t *r);
/* The final gate run over the points held (reports into the run folder,
 * the history's last campaigns as the baseline); its exit code. */
int eg__campaign_gates(eg__run_t *r);
/* The campaign into the history folder; <0 after a message. */
int eg__campaign_history_store(eg__run_t *r);

#endif
