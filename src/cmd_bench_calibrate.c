/* epgate bench calibrate DIR: argv -> the calibration replay
 * (lib/campaign/calib_run.c). */
#include <stdio.h>

#include "lib/campaign/calib.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__cal_usage[] =
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
    "bad input.\n";

int eg_cmd_bench_calibrate(int argc, char **argv)
{
	eg_calib_opts_t o = {.history = 10};
	const eg_cli_opt_t own[] = {
	    {"gates", .str = &o.gates},
	    {"save", .str = &o.save},
	    {"judged", .uint = &o.judged, .lo = 2, .hi = 1000},
	    {"history", .uint = &o.history, .lo = 1, .hi = 1000},
	    {"metrics", .str = &o.metrics},
	    {"quick", .flag = &o.quick},
	    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__cal_usage,
		       .max_args = 1,
		       .need_arg = "give the folder of campaigns"};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	o.dir = cl.arg[0];
	return eg_calibrate(&o);
}
