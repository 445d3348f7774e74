/* epgate job-report: a batch job's steps file to TAP and JUnit
 * (lib/suite/job_report.c). */
#include <stdio.h>

#include "lib/suite/job_report.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__usage[] =
    "usage: epgate job-report --steps FILE --tap FILE --junit FILE\n"
    "                         [--workload FILE] [--suite NAME]\n"
    "\n"
    "TAP and JUnit for the steps of a batch job, as the sbatch\n"
    "path writes them (slurm/epgate.sbatch, docs/slurm.md): one\n"
    "point per step, and for L2 steps one per workload of their\n"
    "world, from l2-rank's results lines; a workload a step did\n"
    "not reach, or a step that did not run, is a skip that says\n"
    "why. The steps file has one step per line, tab-separated:\n"
    "  KIND NAME WORLD EXIT SECONDS RESULTS LOG [NOTE]\n"
    "(EXIT - : not run, NOTE says why; RESULTS, LOG may be -).\n"
    "\n"
    "  --steps FILE      the steps file\n"
    "  --tap FILE        TAP report (--tap-version 13|14, default 14)\n"
    "  --junit FILE      JUnit XML report\n"
    "  --workload FILE   the L2 matrix (default: the shipped one)\n"
    "  --suite NAME      JUnit suite name (default: epgate-job)\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 something passed and nothing failed, 1 a step\n"
    "or a case failed, 77 nothing ran, 99 bad input.\n";

int eg_cmd_job_report(int argc, char **argv)
{
	/* --tap, --junit and --tap-version: the shared report group */
	eg_job_report_opts_t o = {.report.keys = EG_REP_TAP | EG_REP_JUNIT};
	const eg_cli_opt_t own[] = {{"steps", .str = &o.steps_path},
				    {"workload", .str = &o.workload_path},
				    {"suite", .str = &o.suite},
				    {NULL}};
	eg_cli_t cl = {.own = own, .usage = eg__usage, .report = &o.report};
	eg_job_totals_t t;
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (!o.steps_path || !o.report.tap || !o.report.junit)
		return eg_cli_error(&cl, "give --steps, --tap and --junit; see "
					 "--help");
	rc = eg_job_report(&o, &t);
	if (rc != EG_EXIT_HARD)
		printf("job-report: %u step(s), %u ran, %u failed; cases: %u "
		       "passed, %u failed, %u errors, %u skipped\n",
		       t.steps, t.steps_run, t.steps_failed, t.passed, t.failed,
		       t.errors, t.skipped);
	return rc;
}
