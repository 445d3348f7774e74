/* epgate preflight: this node against what a job needs
 * (lib/suite/preflight.c). */
#include <getopt.h>
#include <stdio.h>

#include "cmd_job.h"
#include "epgate/error.h"
#include "lib/suite/preflight.h"

#define EG__PROG "epgate preflight"

static void eg__usage(FILE *f)
{
	fputs("usage: epgate preflight [--provider P] [--gpu]\n"
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
	      "asked for).\n",
	      f);
}

int eg_cmd_preflight(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"provider", required_argument, NULL, 'p'},
	    {"gpu", no_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	eg_preflight_opts_t o = {0};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.provider = optarg;
			break;
		case 'g':
			o.gpu = 1;
			break;
		case 'h':
			eg__usage(stdout);
			return EG_EXIT_PASS;
		case ':':
			fprintf(stderr, EG__PROG ": %s needs a value\n",
				argv[optind - 1]);
			return EG_EXIT_HARD;
		default:
			fprintf(stderr, EG__PROG ": unknown option \"%s\"\n",
				argv[optind - 1]);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc || (!o.provider && !o.gpu)) {
		fputs(EG__PROG ": give --provider, --gpu or both; see --help\n",
		      stderr);
		return EG_EXIT_HARD;
	}
	return eg_preflight(&o);
}
