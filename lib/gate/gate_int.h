/* Internals of the gate engine: the cells a rule judges and the helpers
 * the rule files share. */
#ifndef EG_GATE_INT_H
#define EG_GATE_INT_H

#include "epgate/gate.h"

/* One value a rule judges: a metric at one point, or the ratio of the
 * metric at a numerator point and its paired denominator point. */
typedef struct eg__cell {
	const eg_point_t *p;	  /* the point (numerator of a ratio) */
	const eg_point_t *q;	  /* denominator, or NULL */
	const eg_results_t *file; /* p's file (context for evidence) */
	double v;		  /* median, or ratio of medians */
	double se;		  /* standard error of v; NAN if unknown */
	double lo, hi;		  /* 95% interval of v; NAN if unknown */
	const json_t *x;	  /* p's value on the gate's axis, or NULL */
	char *group; /* suite, arm and the other axes (series key) */
	char *at;    /* "suite axis=value ..." for messages */
} eg__gate_cell_t;

typedef struct eg__cells {
	eg__gate_cell_t *c;
	size_t n;
} eg__cells_t;

/* "path:line: message" into err; returns EG_EPARSE. */
int eg__gate_gerr(const eg_gate_file_t *gf, int line, char *err, size_t len,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Does p pass the gate's filter?  strict = 0 lets an axis the point does
 * not have match (a denominator arm that does not vary along it). */
int eg__gate_filter_match(const eg_gate_t *g, const eg_point_t *p, int strict);
int eg__gate_arm_selected(const eg_gate_t *g, const char *arm);
/* Do the axes both points have agree by eq (b may lack some of a's)? */
int eg__gate_axes_agree(const eg_point_t *a, const eg_point_t *b,
			int (*eq)(const json_t *, const json_t *));

/* Cells of the gate over files: its arms (or ratio numerators) passing
 * the filter and having the metric (with metric = 0: every such point,
 * v = NAN).  A ratio numerator without a partner is left out and counted
 * in *unpaired; one with two partners is a hard error. */
int eg__select(const eg_gate_file_t *gf, const eg_gate_t *g,
	       const eg_results_t *files, size_t nf, int metric,
	       eg__cells_t *out, size_t *unpaired, char *err, size_t len);
void eg__gate_cells_free(eg__cells_t *c);

/* Groups: cells sharing group keys, in first-seen order.  Fills idx with
 * cell indices group by group and start[g] .. start[g+1] bounds group g;
 * returns the number of groups (<0 on allocation failure). */
int eg__gate_groups(const eg__cells_t *c, size_t *idx, size_t *start);

/* Numeric view of a cell's axis value; 0 if it is not a number. */
int eg__gate_axis_num(const eg__gate_cell_t *c, double *out);

/* Diagnostics helpers. */
double eg__gate_r4(double v); /* 4 significant digits, for reading */
json_t *eg__gate_cell_json(const eg__gate_cell_t *c);
json_t *eg__gate_pair(double a, double b);
const char *eg__gate_metric_label(const eg_gate_t *g, char *buf, size_t len);
/* The result's one-line summary, printf-style. */
void eg__gate_say(eg_gate_result_t *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One value judged against a closed band [lo, hi] (NAN: open) with its
 * standard error se (NAN or 0: exact): p_fail, the p-value of "outside";
 * inside, whether its one-sided (1 - alpha) bounds are in the band
 * (lib/gate/band.c). */
typedef struct eg__band {
	double p_fail;
	int inside, finite, noisy;
	eg_gate_verdict_t verdict; /* after eg__band_verdicts */
} eg__band_t;
void eg__band_judge(double v, double se, double lo, double hi, double alpha,
		    eg__band_t *o);
/* Verdicts of n judged values: fail (not finite, or outside with
 * confidence after the gate's correction over the n), pass (inside),
 * else inconclusive. */
int eg__band_verdicts(const eg_gate_t *g, eg__band_t *b, size_t n);
/* The id of p (may be NULL) into res->remeasure, once. */
void eg__gate_remeasure_add(eg_gate_result_t *res, const eg_point_t *p);

/* lib/gate/regress.c: the options are usable; out set to "nothing known
 * yet"; the three-way verdict from out's interval. */
int eg__regress_check(const eg_regress_opts_t *o);
void eg__regress_init(eg_regress_out_t *out, size_t nb, size_t nc);
void eg__regress_decide(const eg_regress_opts_t *o, eg_regress_out_t *out);

/* lib/gate/regress_hist.c: the history decision on log campaign values
 * x[0..nb) against the current y (se_floor: its own standard error); the
 * standard error of log(median) a metric's interval implies; the
 * campaigns' samples pooled into out (free out->samples and
 * out->launch_n). */
void eg__gate_history_t(const double *x, size_t nb, double y, double se_floor,
			const eg_regress_opts_t *o, eg_regress_out_t *out);
double eg__gate_log_se(const eg_metric_t *m);
/* The minimum detectable effect of a history-t comparison whose
 * prediction spreads sp (log scale) over nb campaigns: the change a
 * campaign must show to fail at alpha with a power of 95%; NAN when
 * there is no spread to tell. */
double eg__gate_history_mde(double sp, size_t nb, double alpha,
			    const eg_regress_opts_t *o);
int eg__gate_pool(const eg_metric_t *const *b, size_t nb, eg_metric_t *out);

/* One point of an aggregate (lib/gate/aggregate.c): the current point
 * and metric, and its twin in each baseline campaign (NULL where a
 * campaign lacks it). */
typedef struct eg__twin {
	const eg_point_t *cp, *const *bp;
	const eg_metric_t *cm, *const *bm;
} eg__twin_t;
/* The typical change over n points (median, else the geometric mean),
 * one comparison: against a history of nb campaigns (history), or one
 * baseline campaign (nb = 1) by its launches, pass by pass. */
int eg__aggregate(const eg__twin_t *t, size_t n, size_t nb, int history,
		  int median, const eg_regress_opts_t *o,
		  eg_regress_out_t *out);

/* The points of launch-by-launch ratios g->ratio[0] / g->ratio[1] of
 * g->metric in each file (arm label), lib/gate/ratio_points.c; free with
 * eg_results_free_all. */
int eg__ratio_files(const eg_gate_t *g, const char *label,
		    const eg_results_t *in, size_t n, eg_results_t **out);

/* Older results files (lib/gate/older.c): "FILE: recorded by an older
 * epgate: FIELD missing; re-record" into buf; the file holding p (cur
 * or base), or NULL; and, where cur or a twin bp[k] comes from an older
 * file that measured it in one launch, that message into why (1). */
void eg__older_say(char *buf, size_t len, const eg_results_t *f,
		   const char *field);
const eg_results_t *eg__gate_file_of(const eg_gate_data_t *d,
				     const eg_point_t *p);
int eg__older_launches(const eg_gate_data_t *d, const eg_point_t *cur,
		       const eg_point_t *const *bp, size_t nb, char *why,
		       size_t len);

/* Rules over a campaign's cells; each fills res (verdict, summary,
 * diag). */
typedef int eg__cells_rule_t(const eg_gate_file_t *gf, const eg_gate_t *g,
			     const eg__cells_t *c, eg_gate_result_t *res,
			     char *err, size_t len);
eg__cells_rule_t eg__gate_rule_bound, eg__gate_rule_flat,
    eg__gate_rule_recovery, eg__gate_rule_trend, eg__rule_evidence;
int eg__rule_regression(const eg_gate_file_t *gf, const eg_gate_t *g,
			const eg_gate_data_t *d, eg_gate_result_t *res,
			char *err, size_t len);

#endif
