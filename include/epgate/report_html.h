/* The report people look at (docs/reports.md): one self-contained HTML
 * file (inline CSS and SVG, no script, nothing fetched) with a summary
 * (suites, gates with their sentences and verdicts), every failure with
 * its diagnosis and repro line, and for every profile a chart per sweep
 * axis with each point's interval and the gates' bands and bounds drawn
 * on it.  Charts are drawn by gnuplot's SVG terminal; without gnuplot
 * the page keeps every number in its tables and says so.  Gates are
 * evaluated in process (eg_gate_eval) on the results read, so bands and
 * verdicts are the gate engine's. */
#ifndef EPGATE_REPORT_HTML_H
#define EPGATE_REPORT_HTML_H

#include <stddef.h>

typedef struct eg_report_opts {
	/* what to show: a run folder, results files, or a history store
	 * (DIR/<profile>/<machine>/<UTC stamp>.json); exactly one */
	const char *run_dir;
	const char *const *results;
	size_t n_results;
	const char *history;
	const char *const *baselines; /* regression baselines (results) */
	size_t n_baselines;
	const char *gates;	/* the gate file; NULL: the profile's */
	const char *out;	/* NULL: RUN/report.html (run folder only) */
	const char *markdown;	/* summary.md; NULL: RUN/summary.md for a run
				   folder, none otherwise */
	const char *screenshot; /* a PNG of the page (headless Chromium) */
	const char *title;	/* NULL: from what is shown */
	int quiet;		/* no "report: PATH" line on stdout */
} eg_report_opts_t;

/* Writes the report.  Returns an automake exit code: 0 written, 99 bad
 * input (a results or gate file that does not read: one line on stderr
 * naming it) or a file that cannot be written.  The verdicts shown do
 * not decide it: the report is a view. */
int eg_report_write(const eg_report_opts_t *o);

/* report.html and summary.md of a run folder, what `epgate run` and
 * `epgate bench profile` call last; a failure is said on stderr and
 * returned (<0), never fatal to the run. */
int eg_report_run_folder(const char *run_dir);

#endif
