/* epgate launch -n N [--ranks-per-node M] [--timeout S] -- command ... */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_launch.h"
#include "epgate/error.h"
#include "epgate/launch.h"
#include "epgate/num.h"

static void eg__launch_usage(FILE *f)
{
	fputs("usage: epgate launch -n N [--ranks-per-node M] [--timeout S] "
	      "-- command [args]\n"
	      "\n"
	      "Runs N ranks of the command on this host. Each gets the\n"
	      "EPGATE_* environment of its rank (see docs/world.md) and a\n"
	      "rendezvous on 127.0.0.1; every line it prints is prefixed\n"
	      "\"[rank] \". The first rank to fail, the deadline or a signal\n"
	      "to the launcher stops every rank (SIGTERM, SIGKILL 2 s later).\n"
	      "\n"
	      "  -n, --ranks N           number of ranks (1 to 4096)\n"
	      "  --ranks-per-node M      virtual nodes of M ranks: ranks in\n"
	      "                          different ones count as cross-node\n"
	      "                          (default: N, one node)\n"
	      "  --timeout S             deadline for the whole job, seconds\n"
	      "                          (default: none)\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "Exit status: the worst of the ranks' (99 > 1 > 77 > 0); a rank\n"
	      "killed by a signal, the deadline or a bad argument give 99.\n",
	      f);
}

/* A whole number in [lo, hi]; names the option otherwise. */
static int eg__launch_uint(const char *opt, const char *s, unsigned lo,
			   unsigned hi, unsigned *out)
{
	char err[256];

	if (eg_parse_uint(opt, s, lo, hi, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate launch: %s\n", err);
		return -1;
	}
	return 0;
}

int eg_cmd_launch(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"ranks", required_argument, NULL, 'n'},
	    {"ranks-per-node", required_argument, NULL, 'r'},
	    {"timeout", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	eg_launch_opts_t o = {0};
	char err[256];
	int c;

	optind = 1;
	opterr = 0;
	/* "+": stop at the command, its options are its own */
	while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (eg__launch_uint("-n", optarg, 1, 4096, &o.n) < 0)
				return EG_EXIT_HARD;
			break;
		case 'r':
			if (eg__launch_uint("--ranks-per-node", optarg, 1, 4096,
					    &o.ranks_per_node) < 0)
				return EG_EXIT_HARD;
			break;
		case 't':
			if (eg_parse_double("--timeout", optarg, 0, 1e9,
					    EG_NUM_SIGNED | EG_NUM_LO_OPEN,
					    &o.timeout_s, err,
					    sizeof(err)) < 0) {
				fprintf(stderr, "epgate launch: %s\n", err);
				return EG_EXIT_HARD;
			}
			break;
		case 'h':
			eg__launch_usage(stdout);
			return EG_EXIT_PASS;
		default:
			if (optopt == 'n' || optopt == 'r' || optopt == 't')
				fprintf(stderr,
					"epgate launch: %s needs a value\n",
					argv[optind - 1]);
			else
				fprintf(
				    stderr,
				    "epgate launch: unknown option \"%s\"\n",
				    argv[optind - 1]);
			fputs("epgate launch: see 'epgate launch --help'\n",
			      stderr);
			return EG_EXIT_HARD;
		}
	}
	if (o.n == 0) {
		fputs("epgate launch: -n N is required\n", stderr);
		return EG_EXIT_HARD;
	}
	if (o.ranks_per_node > o.n) {
		fprintf(stderr,
			"epgate launch: --ranks-per-node %u: more than the %u "
			"ranks\n",
			o.ranks_per_node, o.n);
		return EG_EXIT_HARD;
	}
	if (optind >= argc) {
		fputs("epgate launch: no command given (epgate launch -n N -- "
		      "command [args])\n",
		      stderr);
		return EG_EXIT_HARD;
	}
	return eg_launch(&o, argv + optind);
}
