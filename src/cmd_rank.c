/* epgate l2-rank and l2-gpu-rank: argv -> eg_rank_opts_t -> eg_rank_run
 * (lib/suite/rank.c). One rank program for both memories:
 * l2-gpu-rank is l2-rank --memory cuda. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "lib/suite/suite.h"
#include "src/cmd.h"
#include "src/opts.h"

#define EG__HOST_PROG "epgate l2-rank"
#define EG__GPU_PROG  "epgate l2-gpu-rank"

static const char eg__host_usage[] =
    "usage: epgate launch -n N -- epgate l2-rank [options] "
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
    "  -h, --help        this text\n";

static const char eg__gpu_usage[] =
    "usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
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
    "built without CUDA and NCCL, 99 bad input.\n";

/* Options that belong to the other memory, and values to check before
 * any peer is involved. */
static int eg__check(const eg_cli_t *c, const eg_rank_opts_t *o)
{
	int gpu_opts =
	    (o->xport.given & (EG_XP_PATH | EG_XP_XNODE | EG_XP_DEVICE)) ||
	    o->log_dir;

	if (strcmp(o->memory, "host") && strcmp(o->memory, "cuda"))
		return eg_cli_error(c, "--memory \"%s\": want host or cuda",
				    o->memory);
	if (!strcmp(o->memory, "cuda") && o->xport.provider)
		return eg_cli_error(c, "--provider: only for host memory "
				       "(libfabric)");
	if (!strcmp(o->memory, "host") && gpu_opts)
		return eg_cli_error(c, "--path, --xnode-mode, --device and "
				       "--log-dir need --memory cuda");
	return EG_OK;
}

static int eg__rank_cmd(int argc, char **argv, int gpu)
{
	eg_rank_opts_t o = {.memory = gpu ? "cuda" : "host",
			    .engine = "a2a",
			    .job = {.keys = EG_JOB_ITERS, .iters = 2},
			    .xport.keys = EG_XP_PROVIDER | EG_XP_NCCL};
	const eg_cli_opt_t own[] = {{"engine", .str = &o.engine},
				    {"memory", .str = &o.memory},
				    {"workload", .str = &o.file},
				    {"filter", .str = &o.filter},
				    {"results", .str = &o.results},
				    {"log-dir", .str = &o.log_dir},
				    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = gpu ? eg__gpu_usage : eg__host_usage,
		       .job = &o.job,
		       .xport = &o.xport,
		       .workload = &o.overrides};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (eg__check(&cl, &o) != EG_OK)
		return EG_EXIT_HARD;
	/* the GPU job's messages and repro lines use its own command */
	o.prog = strcmp(o.memory, "cuda") ? EG__HOST_PROG : EG__GPU_PROG;
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
