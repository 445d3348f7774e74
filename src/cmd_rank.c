/* epgate l2-rank and l2-gpu-rank: argv -> eg_rank_opts_t -> eg_rank_run
 * (lib/suite/rank.c). One rank program for both memories:
 * l2-gpu-rank is l2-rank --memory cuda. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"
#include "lib/suite/cmd_gpu.h"
#include "epgate/nccl.h"

#define EG__HOST_PROG "epgate l2-rank"
#define EG__GPU_PROG  "epgate l2-gpu-rank"

static void eg__host_usage(FILE *f)
{
	fputs("usage: epgate launch -n N -- epgate l2-rank [options] "
	      "[--KEY=VALUE ...]\n"
	      "\n"
	      "One rank of an L2 job: every workload of the file whose world\n"
	      "equals the job's size, through a multi-process engine over a\n"
	      "transport, verified on every rank; rank 0 writes results.\n"
	      "\n"
	      "  --memory M        host (default: libfabric) or cuda (the\n"
	      "                    same as epgate l2-gpu-rank; see its "
	      "--help)\n"
	      "  --engine NAME     a2a (default), dense, or a planted fault\n"
	      "                    that runs one rank per process "
	      "(docs/faults.md)\n"
	      "  --provider P      libfabric provider: shm, tcp (default: shm\n"
	      "                    within a node, tcp across nodes)\n"
	      "  --num-comms K     endpoints, each with a progress thread (1)\n"
	      "  --workload FILE   workloads (default: the L2 matrix)\n"
	      "  --filter TEXT     only workloads whose name contains TEXT\n"
	      "  --iters N         iterations per workload (default: 2)\n"
	      "  --results FILE    rank 0 appends one JSON line per workload\n"
	      "  --KEY=VALUE       a workload key on every workload\n"
	      "                    (docs/workloads.md)\n"
	      "  -h, --help        this text\n",
	      f);
}

static void eg__gpu_usage(FILE *f)
{
	fputs("usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
	      "         epgate l2-gpu-rank [options] [--KEY=VALUE ...]\n"
	      "\n"
	      "One rank of a GPU L2 job: every workload of the file whose\n"
	      "world equals the job's size, on GPU memory through an NCCL\n"
	      "engine, verified on the GPU of every rank; rank 0 writes\n"
	      "results and says which transport NCCL used.\n"
	      "\n"
	      "  --engine NAME     a2a (default) or dense\n"
	      "  --num-comms K     NCCL communicators, each on a stream (1)\n"
	      "  --path P          auto (default), nvlink or xnode: the path\n"
	      "                    asked for, checked against NCCL's log\n"
	      "                    (xnode needs --ranks-per-node < N)\n"
	      "  --xnode-mode M    hostid (default: NCCL_HOSTID per virtual\n"
	      "                    node) or nop2p (P2P and SHM disabled)\n"
	      "  --device D        CUDA device (default: rank modulo the\n"
	      "                    number of devices)\n"
	      "  --workload FILE   workloads (default: the L2 matrix)\n"
	      "  --filter TEXT     only workloads whose name contains TEXT\n"
	      "  --iters N         iterations per workload (default: 2)\n"
	      "  --results FILE    rank 0 appends one JSON line per workload\n"
	      "  --log-dir DIR     NCCL's per-rank log (default $TMPDIR)\n"
	      "  --KEY=VALUE       a workload key on every workload\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Exit status: 0 all bit-exact on the path asked for, 1 a\n"
	      "mismatch, an engine error or another path, 77 no GPU or\n"
	      "built without CUDA and NCCL, 99 bad input.\n",
	      f);
}

enum {
	EG__O_ENGINE = 256,
	EG__O_MEMORY,
	EG__O_PROVIDER,
	EG__O_COMMS,
	EG__O_PATH,
	EG__O_XNODE,
	EG__O_DEVICE,
	EG__O_WORKLOAD,
	EG__O_FILTER,
	EG__O_ITERS,
	EG__O_RESULTS,
	EG__O_LOGDIR,
};

/* An unsigned option in [lo, hi]; <0 with the message said. */
static int eg__number(const char *prog, const char *name, const char *s,
		      unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;

	*v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || *v < lo || *v > hi) {
		fprintf(stderr, "%s: --%s: \"%s\" is out of range [%lu, %lu]\n",
			prog, name, s, lo, hi);
		return EG_ERANGE;
	}
	return EG_OK;
}

/* One option into o; <0 when it is bad (said). */
static int eg__option(const char *prog, int c, const char *arg,
		      eg_rank_opts_t *o, eg_overrides_t *ov)
{
	unsigned long v;

	switch (c) {
	case EG__O_ENGINE:
		o->engine = arg;
		return EG_OK;
	case EG__O_MEMORY:
		o->memory = arg;
		return EG_OK;
	case EG__O_PROVIDER:
		o->provider = arg;
		return EG_OK;
	case EG__O_COMMS:
		if (eg__number(prog, "num-comms", arg, 1, EG_COMMS_MAX, &v) < 0)
			return EG_ERANGE;
		o->num_comms = (unsigned)v;
		return EG_OK;
	case EG__O_ITERS:
		if (eg__number(prog, "iters", arg, 1, 100000, &v) < 0)
			return EG_ERANGE;
		o->iters = (unsigned)v;
		return EG_OK;
	case EG__O_DEVICE:
		if (eg__number(prog, "device", arg, 0, 100000, &v) < 0)
			return EG_ERANGE;
		o->device = (int)v;
		return EG_OK;
	case EG__O_PATH:
		o->path = arg;
		return EG_OK;
	case EG__O_XNODE:
		o->xnode_mode = arg;
		return EG_OK;
	case EG__O_WORKLOAD:
		o->file = arg;
		return EG_OK;
	case EG__O_FILTER:
		o->filter = arg;
		return EG_OK;
	case EG__O_RESULTS:
		o->results = arg;
		return EG_OK;
	case EG__O_LOGDIR:
		o->log_dir = arg;
		return EG_OK;
	default:
		if (c >= EG_OPT_WORKLOAD)
			return eg_overrides_add(ov, prog, c, arg);
		return EG_EINVAL;
	}
}

/* Options that belong to the other memory, and values to check before
 * any peer is involved. */
static int eg__check(const char *prog, const eg_rank_opts_t *o, int gpu_opts)
{
	eg_nccl_path_t p;

	if (strcmp(o->memory, "host") && strcmp(o->memory, "cuda")) {
		fprintf(stderr, "%s: --memory: \"%s\": want host or cuda\n",
			prog, o->memory);
		return EG_EINVAL;
	}
	if (!strcmp(o->memory, "cuda") && o->provider) {
		fprintf(stderr,
			"%s: --provider: only for host memory (libfabric)\n",
			prog);
		return EG_EINVAL;
	}
	if (!strcmp(o->memory, "host") && gpu_opts) {
		fprintf(stderr,
			"%s: --path, --xnode-mode, --device and --log-dir "
			"need --memory cuda\n",
			prog);
		return EG_EINVAL;
	}
	if (o->xnode_mode && strcmp(o->xnode_mode, "hostid") &&
	    strcmp(o->xnode_mode, "nop2p")) {
		fprintf(stderr, "%s: --xnode-mode: want hostid or nop2p\n",
			prog);
		return EG_EINVAL;
	}
	if (eg_nccl_path_parse(o->path, &p) < 0) {
		fprintf(stderr, "%s: --path: want auto, nvlink or xnode\n",
			prog);
		return EG_EINVAL;
	}
	return EG_OK;
}

static int eg__rank_cmd(int argc, char **argv, int gpu)
{
	struct option opts[48] = {
	    {"engine", required_argument, NULL, EG__O_ENGINE},
	    {"memory", required_argument, NULL, EG__O_MEMORY},
	    {"provider", required_argument, NULL, EG__O_PROVIDER},
	    {"num-comms", required_argument, NULL, EG__O_COMMS},
	    {"path", required_argument, NULL, EG__O_PATH},
	    {"xnode-mode", required_argument, NULL, EG__O_XNODE},
	    {"device", required_argument, NULL, EG__O_DEVICE},
	    {"workload", required_argument, NULL, EG__O_WORKLOAD},
	    {"filter", required_argument, NULL, EG__O_FILTER},
	    {"iters", required_argument, NULL, EG__O_ITERS},
	    {"results", required_argument, NULL, EG__O_RESULTS},
	    {"log-dir", required_argument, NULL, EG__O_LOGDIR},
	    {"help", no_argument, NULL, 'h'},
	};
	const char *prog = gpu ? EG__GPU_PROG : EG__HOST_PROG;
	eg_rank_opts_t o = {.memory = gpu ? "cuda" : "host",
			    .engine = "a2a",
			    .path = "auto",
			    .num_comms = 1,
			    .iters = 2,
			    .device = -1};
	eg_overrides_t ov = {0};
	int c, gpu_opts = 0;

	if (eg_cli_add_workload_options(opts, 48) < 0)
		return EG_EXIT_HARD;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			(gpu ? eg__gpu_usage : eg__host_usage)(stdout);
			return EG_EXIT_PASS;
		}
		gpu_opts |= c == EG__O_PATH || c == EG__O_XNODE ||
			    c == EG__O_DEVICE || c == EG__O_LOGDIR;
		if (eg__option(prog, c, optarg, &o, &ov) < 0) {
			if (c < EG__O_ENGINE) /* getopt said what */
				fprintf(stderr, "%s: see '%s --help'\n", prog,
					prog);
			return EG_EXIT_HARD;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog,
			argv[optind]);
		return EG_EXIT_HARD;
	}
	if (eg__check(prog, &o, gpu_opts) < 0)
		return EG_EXIT_HARD;
	/* the GPU job's messages and repro lines use its own command */
	o.prog = strcmp(o.memory, "cuda") ? EG__HOST_PROG : EG__GPU_PROG;
	o.overrides = &ov;
	return eg_rank_run(&o);
}

int eg_cmd_l2_rank(int argc, char **argv)
{
	return eg__rank_cmd(argc, argv, 0);
}

int eg_cmd_l2_gpu_rank(int argc, char **argv)
{
	return eg__rank_cmd(argc, argv, 1);
}
