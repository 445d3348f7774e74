/* `epgate stress` (docs/stress.md): every case (workload) through one
 * engine for a budget of calls or seconds, in rounds of four kinds --
 * re-drawn routing and data every call, identical inputs over and over,
 * back-to-back calls unchecked but the last, and (--overlap) two
 * instances whose calls interleave -- to measure a failure *rate* with its
 * interval, keep every failure with the command that replays it, judge
 * nondeterminism where the engine promises a fixed order, and watch the
 * resources the calls hold. In-process engines and world-1 plugins (each
 * instance in a forked child with a deadline per call). */
#ifndef EG_STRESS_STRESS_H
#define EG_STRESS_STRESS_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/watch.h"
#include "lib/suite/suite.h"

typedef enum eg_stress_mode {
	EG_STRESS_REDRAW = 0,  /* new routing and values every call */
	EG_STRESS_SAME = 1,    /* one input, called again and again */
	EG_STRESS_BURST = 2,   /* calls back to back, only the last checked */
	EG_STRESS_OVERLAP = 3, /* two instances, their steps interleaved */
	EG_STRESS_MODES = 4,
} eg_stress_mode_t;

/* "redraw", "identical", "burst", "overlap" */
extern const char *const eg_stress_mode_names[EG_STRESS_MODES];

typedef struct eg_stress_opts {
	const char *engine;	   /* "self" */
	const char *workload_file; /* NULL: the L1 matrix */
	eg_overrides_t overrides;
	const char *filter;
	double for_s;	    /* the run's time budget, shared by the cases */
	unsigned calls;	    /* > 0: exactly this many calls per case */
	unsigned min_calls; /* with for_s: checked calls per case, at least */
	unsigned round;	    /* calls per round (16) */
	int overlap;	    /* rounds of two instances at once */
	int verbose;
	eg_report_cli_t report;	    /* reports, tap, junit */
	const char *json;	    /* NULL: RUN/stress.json */
	const char *hashes;	    /* each case's call-0 hash written here */
	const char *compare_hashes; /* ... and compared with this file's */
	/* with for_s: calls of the case's instance at least, checked on
	 * the path a library takes after many calls (2048) */
	unsigned long_calls;
	/* instance cycling (stress_cycle.c): instances created one after
	 * another, each making instance_calls checked calls (0: none) */
	unsigned instances, instance_calls;
} eg_stress_opts_t;

/* The trend of call time over call index (lib/stress/stress_trend.c):
 * each cycle of rounds one point (its calls' middle index, its fastest
 * call), pairs merged when the points are full. */
#define EG_STRESS_TREND_POINTS	   256
#define EG_STRESS_TREND_MIN_POINTS 8
/* the growth over the case's calls past which the interval must lie */
#define EG_STRESS_TREND_FAIL 1.0
typedef struct eg_stress_trend {
	double x[EG_STRESS_TREND_POINTS], y[EG_STRESS_TREND_POINTS];
	uint32_t n, per;	     /* points; cycles per point */
	uint32_t pend;		     /* cycles in the point being made */
	double px, py;		     /* its call indices' sum, fastest call */
	uint64_t pcalls;	     /* its calls */
	double bx, bmin;	     /* the cycle being made: the same */
	uint64_t bcalls;	     /* its calls */
	uint64_t calls, first, last; /* calls timed, their indices */
	int judged, grew;
	double growth, lo, hi; /* over the calls, relative: 1 = +100% */
	double early_s;	       /* the first quarter's time a call */
	double half[2];	       /* each half's slope, its interval's low end */
	char say[480];
} eg_stress_trend_t;

/* A call's seconds; the end of a cycle of rounds; the verdict. */
void eg_stress_trend_call(eg_stress_trend_t *t, uint64_t call, double s);
void eg_stress_trend_cycle(eg_stress_trend_t *t);
void eg_stress_trend_judge(eg_stress_trend_t *t);

/* Instance cycling's counts and verdict (stress_cycle.c). */
typedef struct eg_stress_cycle {
	uint32_t instances; /* created, called and destroyed */
	uint64_t calls, failures;
	int ended;	 /* an error (or a create that failed) stopped it */
	char first[600]; /* the first failure: instance, call, what */
	int watched, grew;
	eg_watch_sample_t w0, w1; /* after the first instance, the last */
	char watch[400];
} eg_stress_cycle_t;

/* A replay command run before it is printed. Zero: not run, or it could
 * not run. */
typedef enum eg_stress_rerun {
	EG_STRESS_RERUN_NONE = 0,
	EG_STRESS_RERUN_AGAIN = 1, /* it failed as the run did */
	EG_STRESS_RERUN_NOT = 2,   /* it passed, or failed otherwise */
} eg_stress_rerun_t;

/* One failure: where in the case's sequence, its inputs, what. */
typedef struct eg_stress_fail {
	uint64_t call;	  /* the call's index in the case, from 0 */
	uint32_t iter;	  /* its inputs: iteration (routing and values) */
	uint8_t mode;	  /* eg_stress_mode_t */
	uint8_t instance; /* 1: the second instance of an overlap round */
	int8_t replay;	  /* 1 failed again on its inputs at once, 0 passed,
			     -1 not replayed (an error ended the case) */
	int8_t error;	  /* an error, not a mismatch */
	char stage[24];	  /* "dispatch", "combine", ... */
	char what[200];	  /* "2 wrong: combine 2", or the error */
} eg_stress_fail_t;

/* Fresh processes that rerun a case's call 0 (EPGATE_STRESS_HISTORY 1
 * and 2) to compare its bytes run to run. */
#define EG_STRESS_RUNS 2

typedef enum eg_stress_against {
	EG_STRESS_AGAINST_NONE = 0, /* no --compare-hashes */
	EG_STRESS_AGAINST_SAME = 1,
	EG_STRESS_AGAINST_DIFFERS = 2,
	EG_STRESS_AGAINST_MISSING = 3, /* the file has no such case */
} eg_stress_against_t;

typedef struct eg_stress_case {
	const eg_workload_t *w;
	int skipped; /* the engine does not take it (skip_why) */
	char skip_why[256];
	uint64_t calls, checked, failures, replays;
	uint64_t checked_before; /* checked calls before the first failure */
	uint64_t mode_checked[EG_STRESS_MODES], mode_failed[EG_STRESS_MODES];
	double rate, lo, hi; /* failures / checked, Clopper-Pearson 95% */
	/* identical inputs: calls compared with the round's first, those
	 * whose combine bytes differed, the first of them */
	int promised; /* the engine promises the same bytes (its order) */
	uint64_t same_compared, same_differ, differ_call;
	uint32_t differ_iter;
	/* every failure seen (up to EG_STRESS_FAILS_MAX; dropped counts the
	 * rest) */
	eg_stress_fail_t *fails;
	size_t n_fails, cap_fails;
	uint64_t dropped;
	int ended; /* an error ended the case: end says which, where */
	int hard;  /* ... and it was epgate's own (a harness error) */
	char end[600];
	/* resources from the end of the first full cycle to the end */
	int watched, grew;
	eg_watch_sample_t w0, w1;
	uint64_t watch_calls; /* calls between the two samples */
	char watch[256];
	/* the first failure's replay commands, each run as printed (a fresh
	 * process) before it is printed; what each run saw (or why it did
	 * not run); the calls they made */
	eg_stress_rerun_t repro_in, repro_seq;
	char repro_in_saw[200], repro_seq_saw[200];
	uint64_t repro_calls;
	/* run to run (lib/stress/stress_runs.c): call 0's combine output
	 * hashed, the hashes of the same call in fresh processes of other
	 * allocation histories, those that differ, what the runs saw; the
	 * hash of --compare-hashes (against: eg_stress_against_t) */
	int hashed, runs_n, runs_differ, runs_broke;
	uint64_t hash, runs_hash[EG_STRESS_RUNS];
	char runs_saw[400];
	int against;
	uint64_t against_hash;
	char against_where[300];
	double seconds;
	uint64_t long_calls; /* calls of the first instance */
	eg_stress_trend_t trend;
	eg_stress_cycle_t cyc;
} eg_stress_case_t;

#define EG_STRESS_FAILS_MAX 1000000u

/* One case through ops for budget_s seconds (o->calls: that many calls
 * instead). Fills c (zeroed by the caller, c->w set). Returns EG_OK; the
 * verdict is in c. */
int eg_stress_case_run(const eg_stress_opts_t *o, const eg_engine_ops_t *ops,
		       double budget_s, eg_stress_case_t *c);
void eg_stress_case_fini(eg_stress_case_t *c);

/* After the rounds, the case's instances one after another in one
 * process (o->instances), their resources judged per instance: c->cyc. */
void eg_stress_cycle_run(const eg_stress_opts_t *o, const eg_engine_ops_t *ops,
			 eg_stress_case_t *c);

/* The case failed: a failure, a broken promise of determinism, resources
 * beyond their bound, or an error. */
int eg_stress_case_failed(const eg_stress_case_t *c);

/* The 95% Clopper-Pearson interval of x failures in n calls (GSL's beta
 * quantiles); n = 0: [0, 1]. */
void eg_stress_interval(uint64_t x, uint64_t n, double *lo, double *hi);

/* The commands that replay failure f of case c (f NULL: the first):
 * inputs, that iteration's inputs alone; sequence, every call of the
 * case up to and including it (for a fault that counts calls). */
void eg_stress_repro(const eg_stress_opts_t *o, const eg_stress_case_t *c,
		     const eg_stress_fail_t *f, char *inputs, size_t ilen,
		     char *sequence, size_t slen);
/* The sequence's --calls: the fewest that include failure f (an overlap
 * round runs only whole, both instances' calls). */
uint64_t eg_stress_repro_calls(const eg_stress_fail_t *f);

/* The first failure's replay commands run, each as printed, in a fresh
 * process of this executable (lib/stress/stress_repro.c): the inputs
 * line, and when it does not fail as the run did, the sequence line.
 * Sets c->repro_*. Not in a check's own run (no recursion). */
void eg_stress_repro_check(const eg_stress_opts_t *o, eg_stress_case_t *c);

/* The replay commands that reproduced (only those), or plainly that none
 * did, and what the checks saw: lines starting with indent. */
void eg_stress_repro_say(FILE *f, const char *indent, const eg_stress_opts_t *o,
			 const eg_stress_case_t *c);

/* The case as the reports carry it (lib/stress/stress_report.c): a JSON
 * object with every failure, the TAP point's diagnostics (the first
 * failures), one terminal line. */
json_t *eg_stress_case_json(const eg_stress_opts_t *o,
			    const eg_stress_case_t *c, size_t max_fails);
void eg_stress_case_say(FILE *f, const eg_stress_opts_t *o,
			const eg_stress_case_t *c);

/* The whole run (lib/stress/stress.c): an automake exit code. */
int eg_stress(const eg_stress_opts_t *o);

#endif
