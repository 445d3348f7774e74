/* epgate gate: argv -> the results files and options -> one gate run
 * (lib/gate/run.c): one TAP point and one JUnit case per gate, a
 * verdict table on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/cmd.h"
#include "src/opts.h"
#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/gate.h"
#include "epgate/results.h"

static const char eg__gate_usage[] =
    "usage: epgate gate --gates FILE [options] RESULTS...\n"
    "\n"
    "Judges results files (docs/results-v1.md) by the gates of a\n"
    "gate file (docs/gates.md): pass, fail, inconclusive or skip\n"
    "per gate.\n"
    "\n"
    "  --gates FILE     gate file, e.g. gates/p5en-ep16.gate\n"
    "  --baseline FILE  results the regression gates compare "
    "with\n"
    "                   (may be repeated)\n"
    "  --history DIR    the baseline is the last campaigns of the\n"
    "                   results' profile and machine in DIR\n"
    "                   (DIR/PROFILE/MACHINE/*.json)\n"
    "  --last N         that many campaigns (10)\n"
    "  --tap FILE       TAP 14 report (default: RUN/gate.tap)\n"
    "  --junit FILE     JUnit XML report (default: "
    "RUN/gate.junit.xml)\n"
    "  --reports DIR    where run folders go (default: "
    "reports/runs)\n"
    "  --strict         an inconclusive gate fails the run\n"
    "  -h, --help       this text\n"
    "\n"
    "Exit status: 0 no gate failed (inconclusive ones are listed\n"
    "on stderr; with --strict they fail), 1 a gate failed, 77\n"
    "every gate skipped for lack of data, 99 bad input or a hard\n"
    "error.\n";

typedef struct eg__gate_cli {
	eg_gate_run_opts_t *o;
	const char **base; /* argc entries */
	size_t n_base;
	const char *history; /* --history DIR: the baseline */
	unsigned last;	     /* --last N of its campaigns */
} eg__gate_cli_t;

/* The options; the results files are argv[*first] on.  Returns
 * EG_CLI_GO, else the exit code. */
static int eg__options(int argc, char **argv, eg__gate_cli_t *g, int *first)
{
	const eg_cli_opt_t own[] = {
	    {"gates", .str = &g->o->gates},
	    {"baseline", .list = g->base, .n = &g->n_base, .max = argc},
	    {"strict", .flag = &g->o->strict},
	    {"history", .str = &g->history},
	    {"last", .uint = &g->last, .lo = 1, .hi = 100000},
	    {NULL}};
	eg_report_cli_t rep = {.keys = EG_REP_ALL};
	eg_cli_t cl = {.own = own,
		       .usage = eg__gate_usage,
		       .report = &rep,
		       .max_args = EG_CLI_ARGS_ALL};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	g->o->tap = rep.tap;
	g->o->junit = rep.junit;
	g->o->reports = rep.reports;
	if (!g->o->gates)
		return eg_cli_error(&cl, "--gates FILE is required");
	if (!cl.n_args)
		return eg_cli_error(&cl, "no results file given");
	*first = cl.rest;
	return EG_CLI_GO;
}

int eg_cmd_gate(int argc, char **argv)
{
	eg_gate_run_opts_t o = {.prog = argv[0]};
	const char **base = calloc((size_t)argc + 1, sizeof(*base));
	eg__gate_cli_t g = {.o = &o, .base = base, .last = EG_HISTORY_LAST};
	eg_results_t *cur = NULL, *bl = NULL;
	size_t n_cur = 0, n_bl = 0;
	char err[EG_RESULTS_ERR_MAX];
	eg_gate_data_t d;
	int first = argc, rc = EG_EXIT_HARD;

	if (!base)
		return EG_EXIT_HARD;
	if ((rc = eg__options(argc, argv, &g, &first)) != EG_CLI_GO)
		goto out;
	rc = EG_EXIT_HARD;
	if (eg_results_read_all(argv + first, (size_t)(argc - first), &cur,
				&n_cur, err, sizeof(err)) ||
	    /* argv's type: the paths are only read */
	    eg_results_read_all((char *const *)base, g.n_base, &bl, &n_bl, err,
				sizeof(err))) {
		fprintf(stderr, "%s: %s\n", o.prog, err);
		goto out;
	}
	if (g.history && g.n_base) {
		fprintf(stderr, "%s: give --baseline or --history, not both\n",
			o.prog);
		goto out;
	}
	if (g.history) { /* the history is the baseline */
		eg_results_free_all(bl, n_bl);
		bl = NULL;
		n_bl = 0;
	}
	if (g.history && eg_history_read(g.history, &cur[0], g.last, &bl, &n_bl,
					 err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: --history: %s\n", o.prog, err);
		goto out;
	}
	d = (eg_gate_data_t){cur, n_cur, n_bl ? bl : NULL, n_bl};
	o.data = &d;
	rc = eg_gate_run(&o);
out:
	eg_results_free_all(cur, n_cur);
	eg_results_free_all(bl, n_bl);
	free(base);
	return rc;
}
