/* Internals of the HTML report (include/epgate/report_html.h): what a
 * page shows (profiles with their evaluated gates and charts, the run
 * folder's suites and failures, a history), read by page_load.c,
 * run_read.c and history.c, charted by chart.c and gnuplot.c, written
 * by html*.c and summary_md.c. */
#ifndef EG_PAGE_PAGE_H
#define EG_PAGE_PAGE_H

#include <stdio.h>

#include <jansson.h>

#include "epgate/gate.h"
#include "epgate/report_html.h"
#include "epgate/results.h"

/* A gate evaluated in process: its result, or the error that stopped
 * it. */
typedef struct eg__gres {
	const eg_gate_t *g;
	eg_gate_result_t res; /* valid when !hard */
	int hard;
	char err[EG_GATE_ERR_MAX];
} eg__gres_t;

/* A value judged by a gate, from its diagnostics: a metric at a point
 * or a ratio (id over den), and how it fared. */
enum { EG__ST_NONE = 0, EG__ST_PASS = 1, EG__ST_FAIL = 2 };
typedef struct eg__cell {
	const char *id, *over; /* point ids (in the diag; borrowed) */
	double v, lo, hi;      /* lo, hi NAN: no interval */
	int st;
	int series; /* index of the diag series it belongs to, or -1 */
	int ref;    /* the series' reference value (trend, recovery) */
} eg__page_cell_t;

typedef struct eg__cells {
	eg__page_cell_t *c;
	size_t n, cap;
} eg__cells_t;

/* The cells of one evaluated gate (none for evidence, skips, errors),
 * their values exact from the results judged (the diagnostics round
 * to 4 digits). */
int eg__gate_cells(const eg__gres_t *gr, const eg_results_t *files, size_t nf,
		   eg__cells_t *out);
void eg__page_cells_fini(eg__cells_t *c);

/* ---- charts ---------------------------------------------------------- */

typedef struct eg__cpt {
	double x, y, lo, hi; /* lo, hi NAN: no interval */
	int st;		     /* EG__ST_* */
} eg__cpt_t;

typedef struct eg__series {
	char label[160];
	int color; /* index into the series palette */
	int dash;  /* gnuplot dash type, 1 solid */
	eg__cpt_t *p;
	size_t n, cap;
} eg__series_t;

/* What a gate draws on a chart. */
enum {
	EG__MK_BAND = 0,   /* a .. b: the accepted band */
	EG__MK_MIN,	   /* a: the lowest value accepted */
	EG__MK_MAX,	   /* a: the highest */
	EG__MK_TIE,	   /* a: the tie line of a ratio */
	EG__MK_TARGET_MIN, /* a from x0 to x1: a series' end must reach */
	EG__MK_TARGET_MAX, /* a from x0 to x1: a series' end must stay under */
	EG__MK_VLINE,	   /* x0: a change point (history) */
	EG__MK_REF,	   /* a: a point without the x axis, across */
};
typedef struct eg__mark {
	int kind;
	double a, b, x0, x1;
	int color; /* index into the gate palette */
	int fail;  /* the gate failed (VLINE: the change is for the worse) */
	int off;   /* so far from the data that it is left off: 1 above, -1
		      below (set when drawn) */
	char label[240];
} eg__mark_t;

typedef struct eg__chart {
	char id[24]; /* "c3": anchor and SVG id prefix */
	char title[320], xlabel[160], ylabel[160];
	char gates[600]; /* names of the gates drawn on it, ", " */
	int cat;	 /* categorical x: cats[i] at x = i */
	int logx, logy;
	int timex;  /* x is seconds since the epoch (history) */
	int by_arm; /* the categories are the arms: nothing to set apart */
	char **cats;
	size_t n_cats;
	double *tic_v; /* numeric x: tics with labels of their own */
	char **tic_l;
	size_t n_tic;
	eg__series_t *s;
	size_t n_s;
	eg__mark_t *m;
	size_t n_m;
	char *svg; /* inline SVG, or NULL (not drawn) */
} eg__chart_t;

/* One more element, zeroed, at the end of the array *arr of n elements
 * of sz bytes (chart.c): its address, or NULL (*arr unchanged) when out
 * of memory.  The caller counts it. */
void *eg__page_push(void *arr, size_t n, size_t sz);

/* The series called label (made with color and dash when new): its
 * index, or <0.  Series move when one is added: index them anew. */
int eg__chart_series(eg__chart_t *c, const char *label, int color, int dash);
int eg__page_series_add(eg__series_t *s, double x, double y, double lo,
			double hi, int st);
eg__mark_t *eg__chart_mark(eg__chart_t *c, int kind, double a, double b);
/* Every series in x order (the lines join the points as sorted). */
void eg__chart_sort(eg__chart_t *c);
int eg__chart_cat(eg__chart_t *c, const char *label); /* its index */
int eg__chart_tic(eg__chart_t *c, double v, const char *label);
void eg__chart_fini(eg__chart_t *c);

/* The colours and dash types charts use (gnuplot.c), for the legends
 * the page draws under them. */
const char *eg__page_series_rgb(int color);
int eg__page_series_dt(const eg__series_t *s);
const char *eg__page_mark_rgb(const eg__mark_t *m);
int eg__page_mark_dt(const eg__mark_t *m);

/* Draws charts with one gnuplot run, setting each svg.  Returns 1 when
 * drawn, 0 when there is no gnuplot (msg says so), <0 when gnuplot
 * failed (msg: its first error line). */
/* Runs the program at path with argv: stdin from /dev/null, stdout and stderr
 * into the file out, killed after timeout_s (the alarm survives exec); its wait
 * status in *status. EG_OK, or EG_ESYS when it could not be run. */
int eg__spawn_wait(const char *path, const char *const *argv, const char *out,
		   unsigned timeout_s, int *status);

int eg__gnuplot_draw(eg__chart_t *const *charts, size_t n, char *msg,
		     size_t len);

/* ---- a profile: results, gates, charts ------------------------------ */

/* One suite (sweep) of a profile and the charts drawn for it. */
typedef struct eg__psuite {
	char name[128];
	char axis[64]; /* the x axis; "" when nothing varies */
	size_t first_chart, n_charts;
	char **cols; /* table columns: metrics shown (and ratios "m a/b") */
	size_t n_cols;
} eg__psuite_t;

typedef struct eg__prof {
	char name[128];
	eg_results_t *cur;
	size_t n_cur;
	eg_results_t *base;
	size_t n_base;
	char gates_path[4096];
	eg_gate_file_t gf;
	int have_gf;
	char gerr[EG_GATE_ERR_MAX]; /* why there are no gates */
	eg__gres_t *gr;		    /* gf.n_gates */
	eg__cells_t *cells;	    /* per gate */
	eg__psuite_t *su;
	size_t n_su;
	eg__chart_t *ch;
	size_t n_ch;
	/* from a gate run's record (STEM.judged.json): its name and the
	 * verdicts it counted, to set beside the page's own */
	char judged[256];
	json_t *verdicts;
} eg__prof_t;

/* Does gate gi judge a point of suite? */
int eg__page_gate_judges(const eg__prof_t *p, size_t gi, const char *suite);
/* The worst status (EG__ST_*) the gates of (metric, num/den or NULL)
 * gave point id, and (cell, may be NULL) the first value judged. */
int eg__page_cell_status(const eg__prof_t *p, const char *metric,
			 const char *num, const char *den, const char *id,
			 const eg__page_cell_t **cell);
/* Loads the gate file (or says why not in gerr) and evaluates every
 * gate on cur (and base); <0 only on a hard error worth stopping for
 * (a gate file that does not parse: err). */
int eg__prof_judge(eg__prof_t *p, char *err, size_t len);
/* The suites of the profile and their charts (chart ids from *next). */
int eg__prof_charts(eg__prof_t *p, unsigned *next);
void eg__prof_fini(eg__prof_t *p);
/* The point called id in the profile's current results, or NULL. */
const eg_point_t *eg__prof_point(const eg__prof_t *p, const char *id);
/* The gate file of a profile: the profile's gates: key, else
 * gates/NAME.gate; <0 if none. */
int eg__page_find_gates(const char *profile, char *out, size_t len);

/* What a suite's points vary along (suite_axes.c). */
#define EG__AXES_MAX 16
typedef struct eg__axes {
	const eg_point_t **pts; /* the suite's points */
	size_t n;
	const char *x; /* the x axis, or NULL when nothing varies */
	int x_numeric, logx;
	const char *covary[EG__AXES_MAX]; /* move with x (nodes, world) */
	size_t n_covary;
	const char *split[EG__AXES_MAX]; /* split the points into series */
	size_t n_split;
	char xlabel[160];
	char fixed[160]; /* the one category when nothing varies */
} eg__axes_t;

int eg__page_axes_of(const eg__prof_t *p, const char *suite, const char *prefer,
		     eg__axes_t *a);
void eg__page_axes_fini(eg__axes_t *a);
/* "first k=v ..." over the split axes */
void eg__page_axes_label(const eg__axes_t *a, const eg_point_t *pt,
			 const char *first, char *buf, size_t len);
/* the point's x on chart c (a category index on a categorical axis;
 * when nothing varies, the category none); 1 when the point lacks the
 * (numeric) x axis: a dense arm that does not vary along num_comms */
int eg__page_axes_x(const eg__axes_t *a, eg__chart_t *c, const eg_point_t *pt,
		    const char *none, double *x);
/* an axis value as text ("32", "decode") */
const char *eg__page_axis_str(const json_t *v, char *buf, size_t len);

/* ---- a run folder ------------------------------------------------------ */

typedef struct eg__jsuite { /* one JUnit file's counts */
	char name[160];
	char file[256], tap[256]; /* names in the run folder ("" none) */
	unsigned tests, failures, errors, skipped;
	unsigned crashed;      /* of errors: <error type="crash"> (CRASH) */
	unsigned inconclusive; /* of skipped: "INCONCLUSIVE: ..." gates */
} eg__jsuite_t;

typedef struct eg__fail { /* a failed or errored test case */
	char *suite, *cls, *name, *message, *body, *repro;
	int error;
	int crash; /* <error type="crash">: its process ended */
} eg__fail_t;

/* ---- history ---------------------------------------------------------- */

typedef struct eg__hrun {
	char stamp[64];
	double t; /* seconds since the epoch */
	eg_results_t r;
	eg__gres_t *gr; /* per gate of the group's file */
} eg__hrun_t;

typedef struct eg__hist {
	char profile[128], machine[128];
	char gates_path[4096];
	eg_gate_file_t gf;
	int have_gf;
	char gerr[EG_GATE_ERR_MAX];
	eg__hrun_t *runs;
	size_t n_runs;
	eg__chart_t *ch;
	size_t n_ch;
	json_t *changes; /* [{chart, series, stamp, change, worse}] */
} eg__hist_t;

int eg__history_load(const char *dir, const char *gates, eg__hist_t **out,
		     size_t *n, char *err, size_t len);
int eg__page_history_charts(eg__hist_t *h, unsigned *next);
void eg__history_free(eg__hist_t *h, size_t n);

/* ---- the page ---------------------------------------------------------- */

typedef struct eg__page {
	const eg_report_opts_t *o;
	char title[512];
	char run_dir[4096];
	json_t *summary; /* summary.json, or NULL */
	eg__jsuite_t *js;
	size_t n_js;
	eg__fail_t *fails;
	size_t n_fails;
	eg__prof_t *prof;
	size_t n_prof;
	eg__hist_t *hist;
	size_t n_hist;
	int drawn; /* 1 charts drawn, 0 no gnuplot, <0 gnuplot failed */
	char draw_msg[512];
	char note[2048]; /* what the page could not show as it was run */
} eg__page_t;

/* Moves r into the page, to the profile called profile (NULL: its
 * context's profile, else its file name's). */
int eg__page_add_results(eg__page_t *pg, eg_results_t *r, const char *profile);
/* Run folder: summary.json, the JUnit files, the results files. */
int eg__run_read(eg__page_t *pg, const char *dir, char *err, size_t len);
/* The gate runs' records of the folder (run_judged.c): a profile for
 * each, its results, baseline and gate file those it judged; the
 * folder's results files they name into *claimed (shown once). */
int eg__run_judged(eg__page_t *pg, const char *dir, char ***claimed,
		   size_t *n_claimed);
/* The profile a results file belongs to: its context's, else its file
 * name's (bench-NAME.json, bench-NAME.wW.nN.json). */
void eg__page_results_profile(const eg_results_t *r, char *out, size_t len);
/* Appends a sentence to the page's note. */
void eg__page_note(eg__page_t *pg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void eg__page_fini(eg__page_t *pg);

/* Counts over the page: gates by verdict, cases failed; what the run
 * said of itself (summary.json): its exit status (-1: none), its points
 * measured and failed. */
typedef struct eg__tally {
	unsigned gates, pass, fail, inconclusive, skip, errors;
	unsigned tests, failed, skipped;
	unsigned crashed; /* test cases whose process ended (CRASH): a
			     column of their own, not among failed */
	unsigned changes; /* history: change points */
	int exit;
	unsigned points, points_failed;
} eg__tally_t;
void eg__page_tally(const eg__page_t *pg, eg__tally_t *t);
/* The page's verdict, never kinder than the run's exit status: "error"
 * (a gate could not be judged, or exit 99), "fail" (a gate or a test
 * case failed, or exit 1), "pass" (something passed), else "skip"; *word
 * as the last line of the command says it: ERROR, FAIL, PASS, SKIP. */
const char *eg__page_tally_verdict(const eg__tally_t *t, const char **word);
/* That verdict as an exit status (0, 1, 77, 99): `epgate report`'s. */
int eg__page_tally_exit(const eg__tally_t *t);
/* "WORD: F of G gates failed, ...; F of T test cases failed[, C
 * crashed], S skipped[; P of N points failed][ (exit N)]": the banner's
 * line and summary.md's, from one tally; a test case counts once, as
 * `epgate check`'s last line counts it (FAIL and ERROR as failed, CRASH
 * as crashed). */
void eg__verdict_line(FILE *f, const eg__tally_t *t, const char *scope);
/* The same without the run's "(exit N)". */
void eg__verdict_text(FILE *f, const eg__tally_t *t, const char *scope);

/* A failure the page lists (a gate's is shown from its verdict). */
int eg__page_fail_shown(const eg__page_t *pg, const eg__fail_t *f);
/* A PNG of the page in headless Chromium (screenshot.c). */
int eg__screenshot(const char *html, const char *png, const eg__page_t *pg,
		   char *err, size_t len);
/* The page as HTML and as the short Markdown summary. */
int eg__html_write(FILE *f, const eg__page_t *pg);
int eg__page_md_write(FILE *f, const eg__page_t *pg, const char *html_name);

/* ---- helpers (html_util.c) --------------------------------------------- */

/* text with &, <, >, " and ' escaped */
void eg__page_esc(FILE *f, const char *s);
/* fmt as it is, but each %s the next argument escaped (eg__page_esc) and %%
 * a %: markup and the text in it in one call */
void eg__html(FILE *f, const char *fmt, ...);
/* "pass", "fail", "inconclusive", "skip", "error" */
const char *eg__page_gres_word(const eg__gres_t *g);
/* the unit of a metric ("" when unknown) */
const char *eg__page_unit(const char *metric);

#endif
