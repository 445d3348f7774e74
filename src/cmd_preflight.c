/* epgate preflight: this node against what a job needs
 * (lib/suite/preflight.c). */
#include <stdio.h>

#include "epgate/error.h"
#include "lib/suite/preflight.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__usage[] =
    "usage: epgate preflight [--provider P] [--gpu]\n"
    "\n"
    "Checks this node for what a job's ranks will need, before\n"
    "they start (slurm/epgate.sbatch runs it on every node):\n"
    "\n"
    "  --provider P   the libfabric provider ranks across nodes\n"
    "                 open: P, or auto (efa, falling back to tcp\n"
    "                 with a warning); FI_PROVIDER counts as an\n"
    "                 ask, as it does for the ranks\n"
    "  --gpu          a CUDA device\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0 all there, 77 something missing (the caller\n"
    "decides whether that fails its job), 99 bad arguments or\n"
    "asks that contradict (FI_PROVIDER hiding the provider\n"
    "asked for).\n";

int eg_cmd_preflight(int argc, char **argv)
{
	eg_preflight_opts_t o = {0};
	const eg_cli_opt_t own[] = {
	    {"provider", .str = &o.provider}, {"gpu", .flag = &o.gpu}, {NULL}};
	eg_cli_t cl = {.own = own, .usage = eg__usage};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (!o.provider && !o.gpu)
		return eg_cli_error(
		    &cl, "give --provider, --gpu or both; see --help");
	return eg_preflight(&o);
}
