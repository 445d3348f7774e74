/* epgate check: argv -> eg_check (lib/suite/check.c). */
#include <stdio.h>

#include "src/cmd.h"
#include "src/opts.h"

static void eg__check_usage(FILE *f)
{
	fputs(
	    "usage: epgate check [options] [--KEY=VALUE ...]\n"
	    "\n"
	    "Runs every workload through an engine and verifies dispatch and\n"
	    "combine against the dense reference (bit-exact in exact mode).\n"
	    "\n"
	    "  --workload FILE  workloads file (INI, one [section] each);\n"
	    "                   default: fixtures/workloads/l1-matrix.ini, or\n"
	    "                   one workload when only --KEY options are "
	    "given\n"
	    "  --engine NAME    engine under test (default: self), or\n"
	    "                   plugin:PATH[,key=value...] (world 1 only)\n"
	    "  --iters N        iterations per workload: same routing, new\n"
	    "                   values each time, buffers reused (default: 2)\n"
	    "  --filter TEXT    only workloads whose name contains TEXT\n"
	    "  --quick          at most 12 workloads spread over the matrix\n"
	    "  --list           print the selected workloads and exit\n"
	    "  --tap FILE       TAP 14 report (default: RUN/check.tap)\n"
	    "  --junit FILE     JUnit XML report (default: "
	    "RUN/check.junit.xml)\n"
	    "  --reports DIR    where run folders go (default: reports/runs)\n"
	    "  --tap-version V  13 for prove before Test::Harness 3.48 (14)\n"
	    "  --l2             L2 instead: multi-process engines (a2a, "
	    "dense)\n"
	    "                   over libfabric, one launch per configuration\n"
	    "  --full           L1, then L2 over the full configuration "
	    "matrix\n"
	    "  -v, --verbose    say every failure in full (without -v: the\n"
	    "                   first 5, each with its first mismatch and\n"
	    "                   the command that reproduces it)\n"
	    "  -h, --help       this text\n"
	    "\n"
	    "Workload keys, applied to every workload (docs/workloads.md):\n"
	    "  --name --world --experts --topk --hidden --dtype --tokens\n"
	    "  --zero_ranks --routing --mask --data --seed --iter --steps\n"
	    "\n"
	    "Keys not given keep their defaults (world 2, experts 8, topk 2,\n"
	    "hidden 128, tokens 16); a workload they break is refused naming\n"
	    "the default.\n"
	    "\n"
	    "The last line says the verdict, the counts and the exit status.\n"
	    "Exit status: 0 all passed, 1 a check failed, 77 nothing ran (no\n"
	    "workload selected), 99 bad input or harness error.\n",
	    f);
}

enum { O_WORKLOAD = 256, O_ENGINE, O_FILTER, O_QUICK, O_LIST, O_L2, O_FULL };

static int eg__check_opt(eg_cli_t *c, int id, const char *arg)
{
	eg_check_opts_t *o = c->ctx;

	switch (id) {
	case O_WORKLOAD:
		o->workload_file = arg;
		break;
	case O_ENGINE:
		o->engine = arg;
		break;
	case O_FILTER:
		o->filter = arg;
		break;
	case O_QUICK:
		o->quick = 1;
		break;
	case O_LIST:
		o->list = 1;
		break;
	case O_L2:
		o->l2 = 1;
		break;
	case O_FULL:
		o->full = 1;
		break;
	default: /* -v */
		o->verbose = 1;
		break;
	}
	return 0;
}

int eg_cmd_check(int argc, char **argv)
{
	static const struct option own[] = {
	    {"workload", required_argument, NULL, O_WORKLOAD},
	    {"engine", required_argument, NULL, O_ENGINE},
	    {"filter", required_argument, NULL, O_FILTER},
	    {"quick", no_argument, NULL, O_QUICK},
	    {"list", no_argument, NULL, O_LIST},
	    {"l2", no_argument, NULL, O_L2},
	    {"full", no_argument, NULL, O_FULL},
	    {"verbose", no_argument, NULL, 'v'},
	    {NULL, 0, NULL, 0},
	};
	eg_check_opts_t o = {.engine = "self"};
	eg_job_opts_t job = {.keys = EG_JOB_ITERS, .iters = 2};
	eg_report_cli_t rep = {.keys = EG_REP_ALL, .reports = "reports/runs"};
	eg_overrides_t ov = {0};
	eg_cli_t cl = {.prog = "epgate check",
		       .shorts = "v",
		       .own = own,
		       .parse = eg__check_opt,
		       .ctx = &o,
		       .usage = eg__check_usage,
		       .job = &job,
		       .report = &rep,
		       .workload = &ov};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	o.iters = job.iters;
	o.reports = rep.reports;
	o.tap = rep.tap;
	o.junit = rep.junit;
	o.overrides = &ov;
	return eg_check(&o);
}
