/* epgate report: argv -> what to show -> eg_report_write
 * (lib/page/report.c). */
#include <stdio.h>
#include <stdlib.h>

#include "epgate/report_html.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__report_usage[] =
    "usage: epgate report RUN_DIR [-o FILE] [--screenshot PNG]\n"
    "       epgate report --results FILE... [--gates FILE] "
    "[--baseline FILE]... -o FILE\n"
    "       epgate report --history DIR [--gates FILE] -o FILE\n"
    "\n"
    "One self-contained HTML page (docs/reports.md): the verdict,\n"
    "the suites, every gate with its sentence and verdict, every\n"
    "failure with its repro line, and for every profile a chart\n"
    "per sweep axis with each point's interval and the gates'\n"
    "bands and bounds (gnuplot; without it, the tables alone).\n"
    "A run folder also gets summary.md, for CI job pages.\n"
    "\n"
    "  RUN_DIR            a run folder: RUN_DIR/report.html\n"
    "  --results FILE     a results file (repeatable)\n"
    "  --baseline FILE    regression baseline (repeatable)\n"
    "  --gates FILE       the gate file (default: the profile's)\n"
    "  --history DIR      runs at DIR/PROFILE/MACHINE/STAMP.json:\n"
    "                     each gated value over time, change "
    "points\n"
    "  -o, --output FILE  the page (default: RUN_DIR/report.html)\n"
    "  --markdown FILE    the Markdown summary (default:\n"
    "                     RUN_DIR/summary.md; none otherwise)\n"
    "  --screenshot PNG   also a PNG of the page (headless "
    "Chromium)\n"
    "  --title TEXT       the page's title\n"
    "  -h, --help         this text\n"
    "\n"
    "The last line is the page's verdict, the banner's counts with\n"
    "the exit status. Exit status: the verdict shown (docs/reports.md,\n"
    "\"One verdict\"): 0 PASS, 1 FAIL (a gate or a test case failed\n"
    "or crashed), 77 SKIP (nothing was judged), 99 ERROR (a gate\n"
    "could not be judged, the run's exit 99), and 99 for bad input\n"
    "or a file that cannot be written.\n";

int eg_cmd_report(int argc, char **argv)
{
	/* repeatable: argc values at the most */
	const char **results = calloc((size_t)argc + 1, sizeof(*results));
	const char **baselines = calloc((size_t)argc + 1, sizeof(*baselines));
	eg_report_opts_t o = {.results = results, .baselines = baselines};
	const eg_cli_opt_t own[] = {
	    {"results", .list = results, .n = &o.n_results, .max = argc},
	    {"baseline", .list = baselines, .n = &o.n_baselines, .max = argc},
	    {"gates", .str = &o.gates},
	    {"history", .str = &o.history},
	    {"output", 'o', .str = &o.out},
	    {"markdown", .str = &o.markdown},
	    {"screenshot", .str = &o.screenshot},
	    {"title", .str = &o.title},
	    {NULL}};
	/* named before the parse: the out-of-memory message */
	eg_cli_t cl = {.prog = argv[0],
		       .own = own,
		       .usage = eg__report_usage,
		       .max_args = 1};
	int rc;

	if (!results || !baselines) {
		rc = eg_cli_error(&cl, "out of memory");
		goto out;
	}
	rc = eg_cli_parse(&cl, argc, argv);
	if (rc != EG_CLI_GO)
		goto out;
	o.run_dir = cl.n_args ? cl.arg[0] : NULL;
	rc = eg_report_write(&o);
out:
	free(results);
	free(baselines);
	return rc;
}
