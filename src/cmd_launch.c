/* epgate launch -n N [--ranks-per-node M] [--timeout S] [--settle S] --
 * command ...:
 * argv -> eg_launch (lib/world/launch.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"

#include "epgate/job.h"
#include "epgate/launch.h"
#include "lib/base/data_path.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__launch_usage[] =
    "usage: epgate launch -n N [--ranks-per-node M] [--timeout S] "
    "[--settle S] -- command [args]\n"
    "\n"
    "Runs N ranks of the command on this host. Each gets the\n"
    "EPGATE_* environment of its rank (see docs/world.md) and a\n"
    "rendezvous on 127.0.0.1; every line it prints is prefixed\n"
    "\"[rank] \". The first rank to fail, the deadline or a signal\n"
    "to the launcher stops every rank (SIGTERM, SIGKILL 2 s later);\n"
    "at the deadline the launcher names the ranks still running.\n"
    "A command named \"epgate\" is this epgate, on PATH or not.\n"
    "\n"
    "  -n, --ranks N           number of ranks (1 to 4096)\n"
    "  --ranks-per-node M      virtual nodes of M ranks: ranks in\n"
    "                          different ones count as cross-node\n"
    "                          (default: N, one node)\n"
    "  --timeout S             deadline for the whole job, seconds;\n"
    "                          0: none (default: 600)\n"
    "  --settle S              a rank's failing exit waits S s for\n"
    "                          another rank's death by signal, then\n"
    "                          stops the job; a death in that time is\n"
    "                          named as the cause; 0: none\n"
    "                          (default: 0.25)\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: the worst of the ranks' (99 > 1 > 77 > 0); the\n"
    "deadline gives 1 (ranks that hang fail); a rank killed by a\n"
    "signal, a signal to the launcher or a bad argument give 99.\n";

/* Seconds for opt: none when s is 0 (none stored), else (0, hi]; -1
 * when bad (said). */
static int eg__secs(const eg_cli_t *cl, const char *opt, const char *s,
		    double hi, double none, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end != s && !*end && v == 0) {
		*out = none;
		return 0;
	}
	return eg_cli_real(cl, opt, s, 0, hi, out);
}

int eg_cmd_launch(int argc, char **argv)
{
	eg_launch_opts_t o = {.timeout_s = EG_LAUNCH_DEADLINE_S,
			      .timeout_default = 1};
	const char *timeout = NULL, *settle = NULL;
	const eg_cli_opt_t own[] = {
	    {"ranks", 'n', .uint = &o.n, .lo = 1, .hi = 4096},
	    {"ranks-per-node", .uint = &o.ranks_per_node, .lo = 1, .hi = 4096},
	    {"timeout", .str = &timeout},
	    {"settle", .str = &settle},
	    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__launch_usage,
		       .stop_at_args =
			   1}; /* the command's options are its own */
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	/* the job's deadline: 0 none, else no upper bound of ours */
	if (timeout) {
		o.timeout_default = 0;
		if (eg__secs(&cl, "--timeout", timeout, 1e12, 0, &o.timeout_s) <
		    0)
			return EG_EXIT_HARD;
	}
	/* the settle: 0 none (settle_s < 0; 0 there is the default) */
	if (settle &&
	    eg__secs(&cl, "--settle", settle, 3600, -1, &o.settle_s) < 0)
		return EG_EXIT_HARD;
	if (o.n == 0)
		return eg_cli_error(&cl, "-n N is required");
	if (o.ranks_per_node > o.n)
		return eg_cli_error(&cl,
				    "--ranks-per-node %u: more than the %u "
				    "ranks",
				    o.ranks_per_node, o.n);
	if (cl.rest >= argc)
		return eg_cli_error(&cl, "no command given (epgate launch -n N "
					 "-- command [args])");
	/* "epgate" is this epgate, on PATH or not (./epgate from the
	 * build tree runs its own ranks, never another install's) */
	if (!strcmp(argv[cl.rest], "epgate") && eg_self_exe())
		argv[cl.rest] = (char *)eg_self_exe();
	return eg_launch(&o, argv + cl.rest);
}
