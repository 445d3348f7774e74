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

/* Writes the report, then (unless quiet) its verdict as the last line
 * on stdout, "WORD: <the banner's counts> (exit N)".  Returns the
 * page's verdict as an automake exit code (docs/reports.md, "One
 * verdict"): 0 PASS, 1 FAIL (a gate or a test case failed or crashed,
 * or the run folder's exit 1), 77 SKIP (nothing was judged: no gate,
 * no test case passed or failed), 99 ERROR (a gate could not be judged,
 * or the run folder's exit 99); 99 also for bad input (a results or
 * gate file that does not read: one line on stderr naming it) or a file
 * that cannot be written. */
int eg_report_write(const eg_report_opts_t *o);

/* report.html and summary.md of a run folder, what `epgate run` and
 * `epgate bench profile` call last (no verdict line: the command's own
 * last line says it); a failure to write is said on stderr and returned
 * (<0), never fatal to the run; the verdicts do not decide it. */
int eg_report_run_folder(const char *run_dir);

#endif
