/* epgate report: argv -> what to show -> eg_report_write
 * (lib/report/report.c). */
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
    "Exit status: 0 written (whatever the verdicts), 99 bad input\n"
    "or a file that cannot be written.\n";

enum { EG__O_RESULTS = 300, EG__O_BASELINE };

typedef struct eg__rep_ctx {
	eg_report_opts_t o;
	const char **results, **baselines;
} eg__rep_ctx_t;

static int eg__report_opt(eg_cli_t *c, int id, const char *arg)
{
	eg__rep_ctx_t *x = c->ctx;

	if (id == EG__O_RESULTS)
		x->results[x->o.n_results++] = arg;
	else
		x->baselines[x->o.n_baselines++] = arg;
	return EG_OK;
}

int eg_cmd_report(int argc, char **argv)
{
	eg__rep_ctx_t x = {0};
	const eg_cli_opt_t own[] = {{"results", .id = EG__O_RESULTS},
				    {"baseline", .id = EG__O_BASELINE},
				    {"gates", .str = &x.o.gates},
				    {"history", .str = &x.o.history},
				    {"output", 'o', .str = &x.o.out},
				    {"markdown", .str = &x.o.markdown},
				    {"screenshot", .str = &x.o.screenshot},
				    {"title", .str = &x.o.title},
				    {NULL}};
	/* named before the parse: the out-of-memory message */
	eg_cli_t cl = {.prog = argv[0],
		       .own = own,
		       .parse = eg__report_opt,
		       .ctx = &x,
		       .usage = eg__report_usage,
		       .max_args = 1};
	int rc;

	x.results = calloc((size_t)argc + 1, sizeof(*x.results));
	x.baselines = calloc((size_t)argc + 1, sizeof(*x.baselines));
	if (!x.results || !x.baselines) {
		rc = eg_cli_error(&cl, "out of memory");
		goto out;
	}
	rc = eg_cli_parse(&cl, argc, argv);
	if (rc != EG_CLI_GO)
		goto out;
	x.o.run_dir = cl.n_args ? cl.arg[0] : NULL;
	x.o.results = x.results;
	x.o.baselines = x.baselines;
	rc = eg_report_write(&x.o);
out:
	free(x.results);
	free(x.baselines);
	return rc;
}
