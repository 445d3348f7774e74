/* epgate stress: argv -> eg_stress (lib/stress/stress.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stress/stress.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__stress_usage[] =
    "usage: epgate stress [options] [--KEY=VALUE ...]\n"
    "\n"
    "Calls an engine on every workload again and again, for a budget, to\n"
    "measure how often it fails: rounds of re-drawn routing and data,\n"
    "identical inputs (whose output bytes must not change where the\n"
    "engine promises a fixed order), back-to-back calls checked only at\n"
    "the end, and with --overlap two instances whose calls interleave.\n"
    "Each case reports its calls, failures, the failure rate with its\n"
    "95% interval (Clopper-Pearson), the first failure with the\n"
    "command that reproduces it (each replay command is run, as\n"
    "printed, before it is printed: one call on its inputs, else every\n"
    "call up to it; neither: said so), its category, the\n"
    "nondeterminism verdict (call to call, and run to run: call 0\n"
    "again in fresh processes of other allocation histories), the\n"
    "resources the calls held, the trend of call time over the calls,\n"
    "and what instances created and destroyed one after another left\n"
    "behind.\n"
    "\n"
    "  --engine NAME    in-process engine (self) or\n"
    "                   plugin:PATH[,key=value...] (world 1)\n"
    "  --workload FILE  workloads (default: the L1 matrix and the\n"
    "                   scale tier, or one workload when only --KEY\n"
    "                   options are given)\n"
    "  --filter TEXT    only workloads whose name contains TEXT\n"
    "  --for TIME       the run's time budget, shared by the cases:\n"
    "                   60s (default), 5m, 1h\n"
    "  --min-calls N    with --for, checked calls per case at least\n"
    "                   (300: a 1-in-50 fault is caught 99.8% of the\n"
    "                   time however loaded the machine is)\n"
    "  --calls N        exactly N calls per case instead of a time\n"
    "  --long N         with --for, calls of the case's instance at least\n"
    "                   (2048: a path a library takes after many calls)\n"
    "  --instances N    then N instances one after another in one\n"
    "                   process, their resources judged per instance\n"
    "                   (64; 0: none)\n"
    "  --instance-calls N  checked calls each of them makes (2)\n"
    "  --round N        calls per round (16)\n"
    "  --overlap        rounds of two instances at once\n"
    "  --hashes FILE    each case's run-to-run hash (call 0's combine\n"
    "                   output, FNV-1a 64) and keys, one line a case\n"
    "  --compare-hashes FILE  each case's hash against FILE's (another\n"
    "                   run or machine): a difference fails the case\n"
    "  --tap FILE, --junit FILE, --json FILE   the reports (default:\n"
    "                   RUN/stress.tap, .junit.xml, .json)\n"
    "  --reports DIR    where run folders go (reports/runs)\n"
    "  -v, --verbose    every job's output\n"
    "\n"
    "Workload keys, applied to every workload (docs/workloads.md):\n"
    "  --name --world --experts --topk --hidden --dtype --tokens\n"
    "  --zero_ranks --routing --mask --data --seed --iter --steps\n"
    "--iter=I starts the case at iteration I, so '--calls=1 --iter=I'\n"
    "replays iteration I's inputs.\n"
    "\n"
    "Exit status: 0 no case failed, 1 a failure, a nondeterministic\n"
    "result, resources beyond their bound (over the calls or per\n"
    "instance), or call time that grows, 77 nothing ran, 99 bad\n"
    "input or a harness error.\n";

enum { O_FOR = 300, O_JSON };

/* "60", "60s", "5m", "1h": seconds. */
static int eg__duration(const eg_cli_t *c, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end), k = 1;

	if (end == s || v <= 0)
		goto bad;
	if (!strcmp(end, "m"))
		k = 60;
	else if (!strcmp(end, "h"))
		k = 3600;
	else if (*end && strcmp(end, "s"))
		goto bad;
	*out = v * k;
	return 0;
bad:
	return eg_cli_error(c, "--for \"%s\": want a time such as 60s, 5m, 1h",
			    s);
}

static int eg__stress_opt(eg_cli_t *c, int id, const char *arg)
{
	eg_stress_opts_t *o = c->ctx;

	if (id == O_FOR)
		return eg__duration(c, arg, &o->for_s) ? -1 : 0;
	o->json = arg;
	return 0;
}

int eg_cmd_stress(int argc, char **argv)
{
	eg_stress_opts_t o = {.engine = "self",
			      .for_s = 60,
			      .min_calls = 300,
			      .round = 16,
			      .long_calls = 2048,
			      .instances = 64,
			      .instance_calls = 2,
			      .report.keys = EG_REP_ALL};
	const eg_cli_opt_t own[] = {
	    {"engine", .str = &o.engine},
	    {"workload", .str = &o.workload_file},
	    {"filter", .str = &o.filter},
	    {"for", .id = O_FOR},
	    {"json", .id = O_JSON},
	    {"hashes", .str = &o.hashes},
	    {"compare-hashes", .str = &o.compare_hashes},
	    {"calls", .uint = &o.calls, .lo = 1, .hi = 4e9},
	    {"min-calls", .uint = &o.min_calls, .lo = 0, .hi = 4e9},
	    {"round", .uint = &o.round, .lo = 2, .hi = 1e6},
	    {"long", .uint = &o.long_calls, .lo = 0, .hi = 4e9},
	    {"instances", .uint = &o.instances, .lo = 0, .hi = 1e6},
	    {"instance-calls", .uint = &o.instance_calls, .lo = 1, .hi = 1e6},
	    {"overlap", .flag = &o.overlap},
	    {"verbose", 'v', .flag = &o.verbose},
	    {NULL}};
	eg_cli_t cl = {.own = own,
		       .parse = eg__stress_opt,
		       .ctx = &o,
		       .usage = eg__stress_usage,
		       .report = &o.report,
		       .workload = &o.overrides};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_stress(&o);
}
