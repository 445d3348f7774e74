/* epgate bench engine [NAME]: argv -> eg_bench_engine
 * (lib/campaign/bench_engine.c). */
#include <stdio.h>
#include <string.h>

#include "lib/campaign/bench_run.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__engine_usage[] =
    "usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
    "         epgate bench engine [a2a|dense] [--transport fabric|nccl]"
    "\n"
    "         [options] [--KEY=VALUE ...]\n"
    "\n"
    "One point of an engine (a2a by default) on one workload, built\n"
    "from the options and measured exactly as a profile point is: the\n"
    "driver of the sweeps (lib/bench/driver.c) over the fabric\n"
    "backend (host memory, libfabric) or the nccl backend (GPU\n"
    "memory, NCCL); the first step verified, warm-up, timed steps\n"
    "each after a barrier, the slowest rank per step. Rank 0 prints\n"
    "every metric of docs/metrics.md. World = the ranks launched.\n"
    "\n"
    "  --transport T      fabric (default) or nccl\n"
    "  --provider P       fabric: shm, tcp, efa ... (default auto)\n"
    "  --num-comms K      endpoints / communicators (1)\n"
    "  --path P           nccl: auto, nvlink or xnode (checked)\n"
    "  --xnode-mode M     nccl: hostid or nop2p\n"
    "  --device D         nccl: CUDA device (rank modulo count)\n"
    "  --phases           nccl: the engine times its phases, reported\n"
    "                     as phase_*_us (EPGATE_NCCL_PHASES=1)\n"
    "  --vs-alltoall      nccl: then NCCL's alltoall of the same\n"
    "                     bytes to other ranks, side by side with the\n"
    "                     engine's phases (blocking communicators\n"
    "                     for both unless EPGATE_NCCL_BLOCKING=0)\n"
    "  -n, --iters N      timed steps (20)\n"
    "  -w, --warmup N     untimed steps first (3 fabric, 5 nccl)\n"
    "  --timeout S        deadline per blocking step (60)\n"
    "  --KEY=VALUE        workload keys: --tokens --hidden --experts\n"
    "                     --topk --dtype --routing --mask --data ...\n"
    "\n"
    "Old spellings: bench --engine NAME ...; bench --raw a2a|dense\n"
    "--transport nccl ...\n"
    "\n"
    "Exit status: 0 measured, 1 a wrong result or a transport error,\n"
    "77 transport not built, no CUDA device or a boundary the engine\n"
    "does not have, 99 bad arguments or a bad EPGATE_ value.\n";

/* Options that go with one transport only. */
static int eg__engine_check(const eg_cli_t *c, const eg_bench_engine_opts_t *o)
{
	const eg_xport_cli_t *x = &o->xport;
	int nccl = !strcmp(x->transport, "nccl");

	if (nccl && (x->given & EG_XP_PROVIDER))
		return eg_cli_error(c, "--provider goes with --transport "
				       "fabric");
	if (!nccl && (x->given & (EG_XP_PATH | EG_XP_XNODE | EG_XP_DEVICE)))
		return eg_cli_error(c, "--%s goes with --transport nccl",
				    x->given & EG_XP_PATH    ? "path"
				    : x->given & EG_XP_XNODE ? "xnode-mode"
							     : "device");
	if (!nccl && (o->phases || o->vs_alltoall))
		return eg_cli_error(c, "--%s goes with --transport nccl",
				    o->phases ? "phases" : "vs-alltoall");
	return 0;
}

/* bench engine, and bench overhead --engine NAME (the same point, then
 * its two boundaries). */
static int eg__engine_cmd(int argc, char **argv, int overhead)
{
	eg_bench_engine_opts_t o = {.engine = "a2a",
				    .job = eg_cli_bench_job,
				    .xport.keys = EG_XP_ALL,
				    .overhead = overhead};
	const eg_cli_opt_t own[] = {{"phases", .flag = &o.phases},
				    {"vs-alltoall", .flag = &o.vs_alltoall},
				    {"engine", .str = &o.engine},
				    {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__engine_usage,
		       .job = &o.job,
		       .xport = &o.xport,
		       .workload = &o.workload,
		       .max_args = 1};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (eg__engine_check(&cl, &o))
		return EG_EXIT_HARD;
	if (cl.n_args)
		o.engine = cl.arg[0];
	o.job.warmup =
	    eg_cli_bench_warmup(&o.job, !strcmp(o.xport.transport, "nccl"));
	return eg_bench_engine(&o);
}

int eg_cmd_bench_engine(int argc, char **argv)
{
	return eg__engine_cmd(argc, argv, 0);
}

int eg_cmd_bench_overhead_engine(int argc, char **argv)
{
	return eg__engine_cmd(argc, argv, 1);
}
