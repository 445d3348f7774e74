/* epgate bench-rank (internal): argv -> eg_bench_rank_run
 * (lib/campaign/sweep_rank.c). */
#include <stdio.h>

#include "lib/campaign/sweep.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__rank_usage[] =
    "usage: epgate launch -n W [--ranks-per-node M] -- \\\n"
    "         epgate bench-rank --profile FILE [--sweep NAME]...\n"
    "         (--results FILE | --spool FILE)\n"
    "       srun -N NODES -n W epgate bench-rank --profile FILE "
    "--results FILE\n"
    "\n"
    "One rank of a performance sweep: measures every point of the\n"
    "profile whose world and node count are this job's (only the\n"
    "named sweeps with --sweep). Rank 0 appends each point to the\n"
    "results file (--results) or as one JSON line to a spool file\n"
    "(--spool, read by `epgate bench profile`).\n"
    "\n"
    "Exit status: 0 all measured, 1 a point failed verification, "
    "77\n"
    "no point for this job or transport not built, 99 error.\n";

enum { O_SWEEP = 256 };

static int eg__rank_opt(eg_cli_t *c, int id, const char *arg)
{
	eg_bench_rank_opts_t *o = c->ctx;

	(void)id; /* --sweep */
	if (o->n_sweeps == EG_BENCH_SWEEPS_MAX) {
		eg_cli_error(c, "too many --sweep (max %d)",
			     EG_BENCH_SWEEPS_MAX);
		return EG_EINVAL;
	}
	o->sweeps[o->n_sweeps++] = arg;
	return 0;
}

int eg_cmd_bench_rank(int argc, char **argv)
{
	eg_bench_rank_opts_t o = {0};
	const eg_cli_opt_t own[] = {{"profile", .str = &o.profile},
				    {"sweep", .id = O_SWEEP},
				    {"results", .str = &o.results},
				    {"spool", .str = &o.spool},
				    {NULL}};
	eg_cli_t cl = {.own = own,
		       .parse = eg__rank_opt,
		       .ctx = &o,
		       .usage = eg__rank_usage};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (!o.profile || !o.results == !o.spool)
		return eg_cli_error(&cl, "give --profile and one of --results "
					 "or --spool; see --help");
	return eg_bench_rank_run(&o);
}
