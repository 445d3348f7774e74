/* epgate bench calibrate DIR: argv -> the calibration replay
 * (lib/suite/calib_run.c). */
#include <stdio.h>

#include "lib/suite/calib.h"
#include "src/cmd.h"
#include "src/opts.h"

static void eg__cal_usage(FILE *f)
{
	fputs(
	    "usage: epgate bench calibrate DIR [--gates FILE] [--save DIR]\n"
	    "                              [--judged N] [--history N] "
	    "[--metrics LIST] [--quick]\n"
	    "\n"
	    "Replays every comparison CI would make on the campaigns in DIR\n"
	    "(*.json, in time order by name; suites/gates/calibrate.sh makes\n"
	    "them) through the gate engine and prints the calibration table:\n"
	    "false alarms on unchanged code, detection of the times scaled by\n"
	    "5% and 10%, of the planted slowdowns, and the minimum detectable\n"
	    "effect, per mode (history, one baseline, A/B), metric, statistic\n"
	    "and gate (docs/gates.md, \"Calibration\").\n"
	    "\n"
	    "  --gates FILE     the shipped gate file, judged against the\n"
	    "                   history of the clean campaigns\n"
	    "  --save DIR       trimmed copies (the metrics, 4 significant\n"
	    "                   digits) for fixtures\n"
	    "  --judged N       launches judged first (2/3 of them); the\n"
	    "                   rest are the re-measurement\n"
	    "  --history N      campaigns in a history baseline (10)\n"
	    "  --metrics LIST   judged metrics (dispatch_us,step_us,"
	    "combine_us)\n"
	    "  --quick          no minimum-detectable-effect scan\n"
	    "\n"
	    "Exit status: 0 the targets hold (at most 1 false alarm in 20,\n"
	    "at least 19 of 20 planted slowdowns caught), 1 they do not, 99\n"
	    "bad input.\n",
	    f);
}

enum { O_GATES = 256, O_SAVE, O_JUDGED, O_HISTORY, O_METRICS, O_QUICK };

static int eg__cal_opt(eg_cli_t *c, int id, const char *arg)
{
	eg_calib_opts_t *o = c->ctx;

	switch (id) {
	case O_GATES:
		o->gates = arg;
		return 0;
	case O_SAVE:
		o->save = arg;
		return 0;
	case O_JUDGED:
		return eg_cli_uint(c, "--judged", arg, 2, 1000, &o->judged);
	case O_HISTORY:
		return eg_cli_uint(c, "--history", arg, 1, 1000, &o->history);
	case O_METRICS:
		o->metrics = arg;
		return 0;
	default:
		o->quick = 1;
		return 0;
	}
}

int eg_cmd_bench_calibrate(int argc, char **argv)
{
	static const struct option own[] = {
	    {"gates", required_argument, NULL, O_GATES},
	    {"save", required_argument, NULL, O_SAVE},
	    {"judged", required_argument, NULL, O_JUDGED},
	    {"history", required_argument, NULL, O_HISTORY},
	    {"metrics", required_argument, NULL, O_METRICS},
	    {"quick", no_argument, NULL, O_QUICK},
	    {NULL, 0, NULL, 0},
	};
	eg_calib_opts_t o = {.history = 10};
	eg_cli_t cl = {.prog = "epgate bench calibrate",
		       .own = own,
		       .parse = eg__cal_opt,
		       .ctx = &o,
		       .usage = eg__cal_usage,
		       .max_args = 1,
		       .need_arg = "give the folder of campaigns"};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	o.dir = cl.arg[0];
	return eg_calibrate(&o);
}
