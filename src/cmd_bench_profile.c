/* epgate bench profile NAME | bench list NAME: argv -> the sweep
 * orchestrator (lib/campaign/sweep.c, bench_profile.c). */
#include <stdio.h>

#include "lib/campaign/sweep.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__profile_usage[] =
    "usage: epgate bench profile NAME|FILE [--results FILE] "
    "[--reports DIR]\n"
    "                            [--sweep S[,S...]]\n"
    "                            [--no-gates] [--list] [--wide|--json] "
    "[-v]\n"
    "       epgate bench list NAME|FILE\n"
    "\n"
    "Runs the sweeps of a profile (profiles/NAME.profile,\n"
    "docs/profiles.md): every point in the profile's launches, a pass\n"
    "of one `epgate launch` job per world and node count per launch,\n"
    "in a shuffled order, every point verified and then timed; the\n"
    "results (schema epgate/results/v1) go into a new run folder\n"
    "under --reports with one log per job; the points the gates\n"
    "cannot settle are measured again; then the profile's gate file\n"
    "judges them (bench-gates.tap, bench-gates.junit.xml). `list`\n"
    "prints the points and the jobs (srun lines under Slurm) and\n"
    "runs nothing.\n"
    "\n"
    "  NAME|FILE          a profile name (local, h200x2-nvlink,\n"
    "                     h200x2-xnode, p5en-ep16, p5en-ep32) or "
    "file\n"
    "  --results FILE     results file (default RUN/bench-NAME.json)\n"
    "  --reports DIR      where run folders go (reports/runs)\n"
    "  --tap-version V    TAP 13 for older prove (default: 14)\n"
    "  --no-gates         do not apply the profile's gate file\n"
    "  --gates FILE       this gate file instead of the profile's\n"
    "  --launches L       launches per point (the profile's)\n"
    "  --remeasure R      rounds of re-measurement (the profile's; 0\n"
    "                     none)\n"
    "  --seed N           order of the launches (EPGATE_BENCH_SEED, "
    "or\n"
    "                     the clock)\n"
    "  --history DIR      gate against the last --last campaigns of\n"
    "                     DIR/PROFILE/MACHINE/, then store this one\n"
    "  --last N           that many (10)\n"
    "  --plant SLOW       run the arm SLOW wraps as SLOW "
    "(slow:10%:a2a,\n"
    "                     slow:50us:a2a), written as that arm\n"
    "  --sweep S[,S...]   the points of these sweeps alone\n"
    "  --list             as `bench list NAME`\n"
    "  --wide             the table with every metric and its 95%\n"
    "                     interval (fixed width, for wide screens)\n"
    "  --json             the table as one JSON object per point\n"
    "  -v, --verbose      show every job's output\n"
    "\n"
    "Old spelling: epgate bench --profile NAME [--list] ...\n"
    "\n"
    "Exit status: 0 all measured and no gate failed, 1 a point or a\n"
    "gate failed, 77 nothing could run (a Slurm profile outside\n"
    "Slurm, a transport not built), 99 bad input.\n";

enum { O_NO_GATES = 256, O_WIDE, O_JSON };

static int eg__profile_opt(eg_cli_t *c, int id, const char *arg)
{
	eg_bench_run_opts_t *run = c->campaign;

	(void)arg; /* all bare */
	if (id == O_NO_GATES)
		run->apply_gates = 0;
	else if (id == O_WIDE)
		run->table = EG_TABLE_WIDE;
	else
		run->table = EG_TABLE_JSON;
	return 0;
}

int eg_cmd_bench_profile(int argc, char **argv)
{
	eg_bench_run_opts_t run = {.report.keys = EG_REP_REPORTS};
	int list = 0;
	const eg_cli_opt_t own[] = {
	    {"no-gates", .id = O_NO_GATES, .bare = 1},
	    {"list", .flag = &list},
	    {"wide", .id = O_WIDE, .bare = 1},
	    {"json", .id = O_JSON, .bare = 1},
	    {"history", .str = &run.history},
	    {"last", .uint = &run.history_last, .lo = 1, .hi = 100000},
	    {"plant", .str = &run.plant},
	    {"sweep", .str = &run.sweep},
	    {"verbose", 'v', .flag = &run.verbose},
	    {NULL}};
	eg_overrides_t ov = {0};
	eg_cli_t cl = {.own = own,
		       .parse = eg__profile_opt,
		       .usage = eg__profile_usage,
		       .report = &run.report,
		       .workload = &ov,
		       .campaign = &run};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (ov.n)
		return eg_cli_error(&cl,
				    "the profile gives the workloads; no "
				    "workload options (--%s)",
				    ov.key[0]);
	if (list)
		return eg_bench_list(cl.arg[0]);
	return eg_bench_profile_new_run(cl.arg[0], &run);
}

int eg_cmd_bench_list(int argc, char **argv)
{
	eg_cli_t cl = {.usage = eg__profile_usage,
		       .max_args = 1,
		       .need_arg = "give a profile: NAME or FILE"};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_bench_list(cl.arg[0]);
}
