/* Performance gates (docs/gates.md): declarative YAML files, one per
 * profile, each gate a rule that turns the points of one or more results
 * files into pass, fail, inconclusive or skip.
 *
 * Flow: eg_gate_file_load (syntax, keys, numbers: "file:line: ...") ->
 * eg_gate_file_check against the loaded results (unknown metric, arm or
 * axis: "file:line: ...") -> eg_gate_eval per gate. */
#ifndef EPGATE_GATE_H
#define EPGATE_GATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "epgate/results.h"
#include "epgate/stats.h"

#define EG_GATE_ERR_MAX 1024

/* Defaults of the statistical settings (docs/gates.md, "Defaults"); the
 * calibration test (suites/l0/test_gate_calibration.c) measures the
 * regression and flat rules at exactly these values. */
#define EG_GATE_ALPHA	   0.05
#define EG_GATE_MIN_EFFECT 0.05
#define EG_GATE_MAX_SLOPE  0.02
#define EG_GATE_MIN_REPS   10
#define EG_GATE_REPS	   40
#define EG_GATE_RESAMPLES  2000

typedef enum eg_rule {
	EG_RULE_BOUND = 0,
	EG_RULE_PARITY,
	EG_RULE_FLAT,
	EG_RULE_RECOVERY,
	EG_RULE_TREND,
	EG_RULE_REGRESSION,
	EG_RULE_EVIDENCE,
} eg_rule_t;

typedef enum eg_gate_verdict {
	EG_VERDICT_PASS = 0,
	EG_VERDICT_FAIL,
	EG_VERDICT_INCONCLUSIVE,
	EG_VERDICT_SKIP, /* no data */
} eg_gate_verdict_t;

typedef enum eg_trend_dir {
	EG_TREND_UP = 0,   /* last/first >= factor (factor >= 1) */
	EG_TREND_DOWN,	   /* last/first <= factor (factor <= 1) */
	EG_TREND_NOT_DOWN, /* last/first >= factor (factor <= 1) */
	EG_TREND_NOT_UP,   /* last/first <= factor (factor >= 1) */
} eg_trend_dir_t;

typedef enum eg_regress_stat {
	EG_REGRESS_BOOTSTRAP = 0,
	EG_REGRESS_MWU,
} eg_regress_stat_t;

typedef enum eg_scale {
	EG_SCALE_AUTO = 0, /* log2 when every axis value is > 0 */
	EG_SCALE_LINEAR,
	EG_SCALE_LOG2,
} eg_scale_t;

/* The statistical settings: file defaults, overridable per gate. */
typedef struct eg_gate_stats {
	double alpha;
	double min_effect;
	double max_slope;
	unsigned min_reps;
	unsigned reps; /* repetitions a profile should measure per point */
	unsigned resamples;
	/* appended: how a gate over many points keeps its error rate */
	eg_correction_t correction;
} eg_gate_stats_t;

/* Default correction for many points (docs/gates.md, "Many points"). */
#define EG_GATE_CORRECTION EG_CORRECT_HOLM

/* regression, aggregate: judge every point (none), or one comparison of
 * the typical change over the points: the median of the points' log
 * changes (median: robust), or their mean (geomean). */
typedef enum eg_aggregate {
	EG_AGG_NONE = 0,
	EG_AGG_GEOMEAN,
	EG_AGG_MEDIAN,
} eg_aggregate_t;

/* regression, effect: how min_effect is judged.  interval: a fail needs
 * the whole interval beyond it (worse by more than min_effect, with
 * confidence); estimate: worse than no change with confidence (the
 * correction over the points applies to that) and the estimated change
 * beyond min_effect -- more power for the same false alarms where the
 * noise is wide against min_effect (an A/B job's points,
 * docs/gates.md, "A/B power"). */
typedef enum eg_effect {
	EG_EFFECT_INTERVAL = 0,
	EG_EFFECT_ESTIMATE,
} eg_effect_t;

/* filter: key (an axis, or "suite") -> accepted values (a JSON array of
 * numbers and strings). */
typedef struct eg_gate_filter {
	char *key;
	json_t *values;
	int line;
} eg_gate_filter_t;

typedef struct eg_gate {
	char *name;
	char *sentence;
	eg_rule_t rule;
	int line; /* of the gate's first key */

	char *metric; /* NULL for evidence */
	int metric_line;
	char *ratio[2]; /* arms of a ratio metric, or NULL */
	int ratio_line;
	char **arms; /* selected arms (NULL = all) */
	size_t n_arms;
	int arms_line;
	char *axis;
	int axis_line;
	char **covary; /* axes that move with axis (nodes with world) */
	size_t n_covary;
	int covary_line;
	eg_gate_filter_t *filter;
	size_t n_filter;

	eg_gate_stats_t st;
	double min, max;	  /* bound; NAN = open */
	double band[2];		  /* parity, flat */
	eg_scale_t scale;	  /* flat */
	double low, high;	  /* recovery: knob values */
	double min_factor;	  /* recovery */
	eg_trend_dir_t direction; /* trend */
	double factor;		  /* trend */
	eg_regress_stat_t statistic;
	eg_better_t better; /* regression; NONE = from the metric */
	char *field;	    /* evidence */
	int field_line;
	char **expect;
	size_t n_expect;
	/* appended: regression, arm B judged against arm A of the same
	 * results, launch by launch (an A/B job); or NULL */
	char *versus[2];
	int versus_line;
	/* the arm judged in place of the gate's own (the ratio's
	 * numerator, or its one arm) when that one has no point here: a
	 * library's arm that did not run, epgate's a2a instead, said in
	 * the verdict; NULL: none */
	char *fallback;
	int fallback_line;
	eg_aggregate_t aggregate; /* regression */
	eg_effect_t effect;	  /* appended: regression */
} eg_gate_t;

typedef struct eg_gate_file {
	char *path;
	char *profile;
	/* arms: the profile's named arms (docs/profiles.md), known to the
	 * gates even where none of their points ran */
	char **arms;
	size_t n_arms;
	eg_gate_stats_t defaults;
	eg_gate_t *gates;
	size_t n_gates;
} eg_gate_file_t;

/* Parses a gate file (libyaml).  Errors: "path:line: message", <0. */
int eg_gate_file_load(eg_gate_file_t *gf, const char *path, char *err,
		      size_t errlen);
int eg_gate_file_parse(eg_gate_file_t *gf, const char *text, size_t len,
		       const char *name, char *err, size_t errlen);
void eg_gate_file_free(eg_gate_file_t *gf);

/* The results a gate file is judged on. */
typedef struct eg_gate_data {
	const eg_results_t *cur;
	size_t n_cur;
	const eg_results_t *base; /* regression baseline; NULL = none */
	size_t n_base;
} eg_gate_data_t;

/* Is the baseline a history (its files read by eg_history_read: each
 * one campaign, oldest first) rather than the files of one campaign? */
int eg_gate_data_history(const eg_gate_data_t *d);

/* Names each gate uses that neither the schema knows nor any results
 * file holds: "path:line: unknown metric ...", EG_EPARSE. */
int eg_gate_file_check(const eg_gate_file_t *gf, const eg_gate_data_t *d,
		       char *err, size_t errlen);

typedef struct eg_gate_result {
	eg_gate_verdict_t verdict;
	char summary[320]; /* one line: the deciding value vs threshold */
	json_t *diag;	   /* values, thresholds, intervals (TAP YAML) */
	json_t *remeasure; /* ids of points to measure again (array) */
} eg_gate_result_t;

/* Evaluates one gate.  <0 (with "path:line: message") on a hard error:
 * an ambiguous ratio pairing, a trend along a non-numeric axis, ... */
int eg_gate_eval(const eg_gate_file_t *gf, const eg_gate_t *g,
		 const eg_gate_data_t *d, eg_gate_result_t *res, char *err,
		 size_t errlen);
void eg_gate_result_fini(eg_gate_result_t *r);

/* A whole gate run, what `epgate gate` and the sweep orchestrator do:
 * loads the gate file, checks its names against the results, evaluates
 * every gate, writes one TAP point and one JUnit case per gate (to tap
 * and junit, or into a new run folder under reports for those not
 * given), prints the verdict table on stdout and messages on stderr
 * (after prog: "epgate gate: ...").  Returns an automake exit code: 0 no
 * gate failed (inconclusive ones listed on stderr; with strict they
 * fail), 1 a gate failed, 77 every gate skipped for lack of data, 99
 * bad input or a hard error. */
typedef struct eg_gate_run_opts {
	const char *gates;	    /* the gate file */
	const eg_gate_data_t *data; /* results judged, baseline optional */
	const char *tap, *junit;    /* report paths, or NULL */
	const char *reports;	    /* run folders; NULL: reports/runs */
	int strict;
	const char *prog;
} eg_gate_run_opts_t;
int eg_gate_run(const eg_gate_run_opts_t *o);

/* The points a gate run would measure again before its verdicts stand
 * (the sweep orchestrator's re-measurement): the ids each inconclusive
 * or failing gate lists, once each, appended to ids.  Nothing is
 * reported.  0, or <0 with "file:line: message" in err. */
int eg_gate_remeasure(const char *gates, const eg_gate_data_t *d, json_t *ids,
		      char *err, size_t errlen);
/* 1 if id is in ids, a JSON array of point ids (eg_gate_remeasure's). */
int eg_gate_ids_has(const json_t *ids, const char *id);

const char *eg_gate_verdict_name(eg_gate_verdict_t v); /* "pass" ... */
const char *eg_rule_name(eg_rule_t r);		       /* "bound" ... */

/* One regression comparison of a metric at one point (exposed for the
 * calibration test).  change = median(cur)/median(base) - 1.  With
 * samples on both sides: bootstrap interval [lo, hi] of the change at
 * quantiles alpha and 1-alpha, or Mann-Whitney against the baseline
 * scaled by the threshold; without samples, a normal interval from the
 * stored 95% intervals.  Worse beyond min_effect: fail; better than
 * that: pass; otherwise (or n < min_reps): inconclusive. */
typedef struct eg_regress_opts {
	eg_regress_stat_t statistic;
	eg_better_t better;
	double alpha;
	double min_effect;
	unsigned min_reps;
	unsigned resamples;
	uint64_t seed;
	/* appended: launch i of base ran beside launch i of cur (an A/B
	 * job): resample them together / test their ratios */
	int paired;
	/* appended: eg_effect_t; estimate: p_worse is that of "worse than
	 * no change", a fail needs it and the change beyond min_effect */
	int effect;
} eg_regress_opts_t;

typedef struct eg_regress_out {
	eg_gate_verdict_t verdict;
	const char *method; /* "bootstrap", "mann-whitney", "summary" */
	double change;
	double lo, hi;		  /* interval of change; NAN if none */
	double p_worse, p_better; /* p-values of worse / better than the
				     threshold (every method; NAN: none) */
	size_t n_base, n_cur;
	char why[160];
	/* appended: "samples", "launches", "paired launches", "campaigns" */
	const char *units;
	/* appended (history-t): the minimum detectable effect, the smallest
	 * change beyond which a campaign fails 19 times in 20 (0.16: 16%;
	 * NAN when not computed), and the spread of the prediction on the
	 * log scale it comes from (docs/gates.md, "Gate power") */
	double mde, spread;
} eg_regress_out_t;

int eg_regress_compare(const eg_metric_t *base, const eg_metric_t *cur,
		       const eg_regress_opts_t *o, eg_regress_out_t *out);

/* The same against a history of nb campaigns (base[j], oldest first):
 * with EG_HISTORY_MIN or more, the Student prediction interval of the
 * campaign medians on the log scale (method "history-t", units
 * "campaigns"); with fewer, their launches pooled into one baseline. */
#define EG_HISTORY_MIN 3
int eg_regress_history(const eg_metric_t *const *base, size_t nb,
		       const eg_metric_t *cur, const eg_regress_opts_t *o,
		       eg_regress_out_t *out);

/* The flat rule on one series: every v within band, and no trend whose
 * slope (per unit of x, x already transformed) is both significant at
 * alpha and steeper than max_slope.  se may be NULL; x NULL (a
 * categorical axis) leaves the trend untested. */
typedef struct eg_flat_opts {
	double band[2];
	double alpha;
	double max_slope;
} eg_flat_opts_t;

typedef struct eg_flat_out {
	eg_gate_verdict_t verdict;
	size_t n_out_of_band;
	size_t first_out; /* index of the first value outside the band */
	int trend_tested; /* 0: fewer than 2 points or no error estimate */
	int trend;	  /* a significant, steep trend */
	eg_slope_t slope;
} eg_flat_out_t;

int eg_flat_check(const double *x, const double *v, const double *se, size_t n,
		  const eg_flat_opts_t *o, eg_flat_out_t *out);

#endif
