/* epgate run: argv -> eg_run_local (lib/campaign/run.c). */
#include <stdio.h>

#include "lib/campaign/run.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__run_usage[] =
    "usage: epgate run [options]\n"
    "\n"
    "The main job on the local profile, stage by stage, into one run\n"
    "folder: L1 (the self engine over the L1 workload matrix, 2\n"
    "iterations each), L2 (a2a and dense, one process per rank over\n"
    "libfabric shm/tcp: 4 ranks in 2 virtual nodes, and a few other\n"
    "shapes), GPU (the NCCL engines on two GPUs, or why not), bench\n"
    "(the local profile's sweeps) and gates (gates/local.gate). A\n"
    "failure is said as it happens, with the command that reproduces\n"
    "it. The run ends with one table of the stages, every file it\n"
    "wrote and one verdict, which the exit status, the last line and\n"
    "summary.json share. Inside a Slurm allocation each job's ranks\n"
    "run as an srun step (EPGATE_LAUNCHER=local: forked here).\n"
    "\n"
    "  --reports DIR   where run folders go (default: reports/runs)\n"
    "  --tap-version V TAP 13 for older prove (default: 14)\n"
    "  --engine NAME   L1 engine under test (default: self)\n"
    "  -v, --verbose   say every failure in full\n"
    "  -h, --help      this text\n"
    "\n"
    "Exit status: 0 all passed, 1 a check or a gate failed, 77 "
    "nothing\n"
    "ran, 99 bad input or harness error.\n";

int eg_cmd_run(int argc, char **argv)
{
	eg_run_opts_t o = {.report.keys = EG_REP_REPORTS, .engine = "self"};
	const eg_cli_opt_t own[] = {{"engine", .str = &o.engine},
				    {"verbose", 'v', .flag = &o.verbose},
				    {NULL}};
	eg_cli_t cl = {.own = own, .usage = eg__run_usage, .report = &o.report};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_run_local(&o);
}
