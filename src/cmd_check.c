/* epgate check: argv -> eg_check (lib/suite/check.c). */
#include <stdio.h>

#include "src/cmd.h"
#include "src/opts.h"

static const char eg__check_usage[] =
    "usage: epgate check [options] [--KEY=VALUE ...]\n"
    "\n"
    "Runs every workload through an engine and verifies dispatch and\n"
    "combine against the dense reference (bit-exact in exact mode).\n"
    "\n"
    "  --workload FILE  workloads file (INI, one [section] each);\n"
    "                   default: fixtures/workloads/l1-matrix.ini (a\n"
    "                   plugin: and the plugin battery, plugin-w1.ini\n"
    "                   and plugin-l2.ini), or one workload when only\n"
    "                   --KEY options are given (a plugin: --world=N\n"
    "                   alone keeps that world's cases of them all)\n"
    "  --engine NAME    engine under test (default: self), or\n"
    "                   plugin:PATH[,key=value...] (world 1 in\n"
    "                   process, other worlds as jobs of ranks)\n"
    "  --iters N        iterations per workload: same routing, new\n"
    "                   values each time, buffers reused (default: 2)\n"
    "  --filter TEXT    only workloads whose name contains TEXT\n"
    "  --quick          at most 12 workloads spread over the matrix\n"
    "                   (a plugin: and the battery's world-1 cases)\n"
    "  --scale          the scale tier too (fixtures/workloads/scale.ini:\n"
    "                   DeepSeek-V3's rows, 70000 rows on one rank)\n"
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
    "  --max-hangs N    stop after N cases hung (a plugin's call that\n"
    "                   did not return within EPGATE_TIMEOUT, or a job\n"
    "                   whose ranks all hung) and more hung than\n"
    "                   passed: the cases left are\n"
    "                   skipped, saying so (default: 3, or\n"
    "                   EPGATE_MAX_HANGS; 0: never stop)\n"
    "  -v, --verbose    say every failure in full (without -v: the\n"
    "                   first 5, each with its first mismatch and\n"
    "                   the command that reproduces it)\n"
    "  -h, --help       this text\n"
    "\n"
    "Workload keys, applied to every workload (docs/workloads.md):\n"
    "  --name --world --experts --topk --hidden --dtype --tokens\n"
    "  --zero_ranks --routing --mask --data --seed --iter --steps\n"
    "  --step_tokens --dup --nonfinite\n"
    "\n"
    "Keys not given keep their defaults (world 2, experts 8, topk 2,\n"
    "hidden 128, tokens 16); a workload they break is refused naming\n"
    "the default.\n"
    "\n"
    "The last line says the verdict, the counts and the exit status.\n"
    "Exit status: 0 all passed, 1 a check failed, 77 nothing ran (no\n"
    "workload selected), 99 bad input or harness error.\n";

int eg_cmd_check(int argc, char **argv)
{
	eg_check_opts_t o = {.engine = "self",
			     .job = {.keys = EG_JOB_ITERS, .iters = 2},
			     .report.keys = EG_REP_ALL,
			     .max_hangs = EG_MAX_HANGS_UNSET};
	const eg_cli_opt_t own[] = {
	    {"workload", .str = &o.workload_file},
	    {"engine", .str = &o.engine},
	    {"filter", .str = &o.filter},
	    {"quick", .flag = &o.quick},
	    {"scale", .flag = &o.scale},
	    {"list", .flag = &o.list},
	    {"l2", .flag = &o.l2},
	    {"full", .flag = &o.full},
	    {"verbose", 'v', .flag = &o.verbose},
	    {"max-hangs", .uint = &o.max_hangs, .lo = 0, .hi = 1000000},
	    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__check_usage,
		       .job = &o.job,
		       .report = &o.report,
		       .workload = &o.overrides};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_check(&o);
}
