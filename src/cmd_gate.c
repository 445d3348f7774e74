/* epgate gate: argv -> the results files and options -> one gate run
 * (lib/gate/run.c): one TAP point and one JUnit case per gate, a
 * verdict table on stdout. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_gate.h"
#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/gate.h"
#include "epgate/results.h"

#define EG__PROG "epgate gate"

static void eg__gate_usage(FILE *f)
{
	fputs("usage: epgate gate --gates FILE [options] RESULTS...\n"
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
	      "error.\n",
	      f);
}

/* --history DIR and --last N */
static const char *eg__history;
static unsigned eg__last = EG_HISTORY_LAST;

/* The options; base collects --baseline (argc entries).  Returns -1 to
 * go on, else the exit code. */
static int eg__options(int argc, char **argv, eg_gate_run_opts_t *o,
		       char **base, size_t *n_base)
{
	enum {
		O_GATES = 256,
		O_BASELINE,
		O_TAP,
		O_JUNIT,
		O_REPORTS,
		O_STRICT,
		O_HISTORY,
		O_LAST
	};
	static const struct option opts[] = {
	    {"gates", required_argument, NULL, O_GATES},
	    {"baseline", required_argument, NULL, O_BASELINE},
	    {"tap", required_argument, NULL, O_TAP},
	    {"junit", required_argument, NULL, O_JUNIT},
	    {"reports", required_argument, NULL, O_REPORTS},
	    {"strict", no_argument, NULL, O_STRICT},
	    {"history", required_argument, NULL, O_HISTORY},
	    {"last", required_argument, NULL, O_LAST},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_GATES:
			o->gates = optarg;
			break;
		case O_BASELINE:
			base[(*n_base)++] = optarg;
			break;
		case O_TAP:
			o->tap = optarg;
			break;
		case O_JUNIT:
			o->junit = optarg;
			break;
		case O_REPORTS:
			o->reports = optarg;
			break;
		case O_STRICT:
			o->strict = 1;
			break;
		case O_HISTORY:
			eg__history = optarg;
			break;
		case O_LAST:
			if (eg_parse_uint("--last", optarg, 1, 100000,
					  &eg__last, NULL, 0) < 0) {
				fprintf(stderr,
					EG__PROG ": --last: \"%s\" is not a "
						 "count from 1\n",
					optarg);
				return EG_EXIT_HARD;
			}
			break;
		case 'h':
			eg__gate_usage(stdout);
			return EG_EXIT_PASS;
		default:
			fputs(EG__PROG ": see 'epgate gate --help'\n", stderr);
			return EG_EXIT_HARD;
		}
	}
	if (!o->gates || optind >= argc) {
		fprintf(stderr, "%s: %s\n", EG__PROG,
			!o->gates ? "--gates FILE is required"
				  : "no results file given");
		return EG_EXIT_HARD;
	}
	return -1;
}

int eg_cmd_gate(int argc, char **argv)
{
	eg_gate_run_opts_t o = {.reports = "reports/runs", .prog = EG__PROG};
	char **base = calloc((size_t)argc + 1, sizeof(*base));
	eg_results_t *cur = NULL, *bl = NULL;
	size_t n_base = 0, n_cur = 0, n_bl = 0;
	char err[EG_RESULTS_ERR_MAX];
	eg_gate_data_t d;
	int rc = EG_EXIT_HARD;

	if (!base)
		return EG_EXIT_HARD;
	if ((rc = eg__options(argc, argv, &o, base, &n_base)) >= 0)
		goto out;
	rc = EG_EXIT_HARD;
	if (eg_results_read_all(argv + optind, (size_t)(argc - optind), &cur,
				&n_cur, err, sizeof(err)) ||
	    eg_results_read_all(base, n_base, &bl, &n_bl, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", EG__PROG, err);
		goto out;
	}
	if (eg__history && n_base) {
		fprintf(stderr, "%s: give --baseline or --history, not both\n",
			EG__PROG);
		goto out;
	}
	if (eg__history) { /* the history is the baseline */
		eg_results_free_all(bl, n_bl);
		bl = NULL;
		n_bl = 0;
	}
	if (eg__history && eg_history_read(eg__history, &cur[0], eg__last, &bl,
					   &n_bl, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: --history: %s\n", EG__PROG, err);
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
