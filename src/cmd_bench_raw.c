/* epgate bench raw [COLL]: argv -> the fabric raw benchmark
 * (lib/campaign/bench_raw.c), or with a collective NCCL's, with nccl-tests'
 * definitions (lib/bench/nccl_raw_sweep.c). */
#include <stdio.h>
#include <string.h>

#include "epgate/nccl_raw.h"
#include "lib/campaign/bench_run.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__raw_usage[] =
    "usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
    "         epgate bench raw [--provider P] [options]\n"
    "       epgate launch -n N [--ranks-per-node M] -- \\\n"
    "         epgate bench raw alltoall|allgather|reducescatter \\\n"
    "         [--transport nccl] [options]\n"
    "\n"
    "Without a collective: the libfabric transport alone, message\n"
    "rate (many small tagged messages in flight) and bandwidth\n"
    "through its alltoallv, per rank and per endpoint.\n"
    "  --provider P       shm, tcp, efa, ... (default: auto, shm\n"
    "                     within a node, tcp/efa across nodes)\n"
    "  --num-comms K      endpoints with a progress thread each (1)\n"
    "  --size BYTES       bandwidth: bytes per peer per call (1M)\n"
    "  --msg-size BYTES   message rate: bytes per message (8)\n"
    "  --msgs N           message rate: messages per peer per call\n"
    "                     (512)\n"
    "  --iters N          timed calls per phase (20)\n"
    "  --warmup N         untimed calls first (3)\n"
    "\n"
    "With a collective: NCCL alone on GPU memory (--transport nccl is\n"
    "implied), sizes swept like nccl-tests (S = bytes per rank as\n"
    "nccl-tests counts them; busbw = S/t x (n-1)/n).\n"
    "  -b, --min-bytes B    smallest size (8)\n"
    "  -e, --max-bytes B    largest size (1G)\n"
    "  -f, --step-factor F  size multiplier (2)\n"
    "  -n, --iters N        timed collectives per size (20)\n"
    "  -w, --warmup N       untimed ones first (5)\n"
    "  -d, --datatype T     float (default) or bf16\n"
    "  --impl I             alltoall: nccl (ncclAlltoAll when the\n"
    "                       library has it) or sendrecv\n"
    "  --path P             auto, nvlink or xnode (checked against\n"
    "                       NCCL's log)\n"
    "  --xnode-mode M       hostid or nop2p\n"
    "  --device D           CUDA device (default: rank modulo count)\n"
    "\n"
    "Both:\n"
    "  --timeout S          deadline per blocking step (60)\n"
    "  --json FILE          rank 0 also writes the results as JSON\n"
    "Bytes take binary K/M/G suffixes.\n"
    "\n"
    "Old spelling: epgate bench --raw [COLL] ...\n"
    "\n"
    "Exit status: 0 measured, 1 a transport error or wrong data (or\n"
    "path), 77 not built (libfabric; CUDA and NCCL) or no CUDA\n"
    "device, 99 bad arguments.\n";

enum {
	O_SIZE = 256,
	O_MSG_SIZE,
	O_MSGS,
	O_JSON,
	O_IMPL,
	/* which benchmark an option belongs to */
	G_FABRIC = 1,
	G_NCCL = 2,
};

typedef struct eg__raw {
	eg_bench_raw_opts_t fab;
	eg_nccl_raw_opts_t nccl;
	unsigned given;	     /* G_* */
	const char *example; /* an option given of each kind, for errors */
	const char *nexample;
} eg__raw_t;

static int eg__raw_nccl_opt(eg_cli_t *c, eg__raw_t *r, int id, const char *arg)
{
	static const char *const dtypes[] = {"float", "bf16", NULL};
	static const char *const impls[] = {"nccl", "sendrecv", NULL};
	int i;

	r->given |= G_NCCL;
	switch (id) {
	case 'b':
		r->nexample = "--min-bytes";
		return eg_cli_bytes(c, "-b", arg, 1, (size_t)1 << 36,
				    &r->nccl.min_bytes);
	case 'e':
		r->nexample = "--max-bytes";
		return eg_cli_bytes(c, "-e", arg, 1, (size_t)1 << 36,
				    &r->nccl.max_bytes);
	case 'f':
		r->nexample = "--step-factor";
		return eg_cli_real(c, "-f", arg, 1, 1024, &r->nccl.factor);
	case 'd':
		r->nexample = "--datatype";
		if ((i = eg_cli_choice(c, "-d", arg, dtypes)) >= 0)
			r->nccl.bf16 = i;
		return i;
	default:
		r->nexample = "--impl";
		if ((i = eg_cli_choice(c, "--impl", arg, impls)) >= 0)
			r->nccl.sendrecv = i;
		return i;
	}
}

static int eg__raw_opt(eg_cli_t *c, int id, const char *arg)
{
	eg__raw_t *r = c->ctx;

	switch (id) {
	case O_JSON:
		r->fab.json = r->nccl.json = arg;
		return 0;
	case O_SIZE:
		r->given |= G_FABRIC;
		r->example = "--size";
		return eg_cli_bytes(c, "--size", arg, 1, (size_t)1 << 34,
				    &r->fab.size);
	case O_MSG_SIZE:
		r->given |= G_FABRIC;
		r->example = "--msg-size";
		return eg_cli_bytes(c, "--msg-size", arg, 1, (size_t)1 << 20,
				    &r->fab.msg_size);
	case O_MSGS:
		r->given |= G_FABRIC;
		r->example = "--msgs";
		return eg_cli_uint(c, "--msgs", arg, 1, 1u << 20, &r->fab.msgs);
	default:
		return eg__raw_nccl_opt(c, r, id, arg);
	}
}

/* The benchmark the arguments name, and options of the other one. */
static int eg__raw_check(const eg_cli_t *c, const eg__raw_t *r)
{
	const eg_xport_cli_t *x = &r->fab.xport;
	int nccl = c->n_args || !strcmp(x->transport, "nccl");

	if (c->n_args && !eg_nccl_coll_find(c->arg[0]))
		return eg_cli_error(c,
				    "unknown collective \"%s\": want alltoall, "
				    "allgather or reducescatter",
				    c->arg[0]);
	if (nccl && !c->n_args)
		return eg_cli_error(c, "--transport nccl needs a collective "
				       "(alltoall, allgather, reducescatter)");
	if (c->n_args && (x->given & EG_XP_TRANSPORT) &&
	    strcmp(x->transport, "nccl"))
		return eg_cli_error(c, "%s runs over NCCL: --transport nccl",
				    c->arg[0]);
	if (nccl && (x->given & EG_XP_NUM_COMMS))
		return eg_cli_error(c, "--num-comms: the raw collectives run "
				       "on one communicator");
	if (nccl && ((r->given & G_FABRIC) || (x->given & EG_XP_PROVIDER)))
		return eg_cli_error(c,
				    "%s goes with the fabric benchmark (no "
				    "collective)",
				    r->given & G_FABRIC ? r->example
							: "--provider");
	if (!nccl && ((r->given & G_NCCL) ||
		      (x->given & EG_XP_NCCL & ~(unsigned)EG_XP_NUM_COMMS)))
		return eg_cli_error(c,
				    "%s goes with a collective (--transport "
				    "nccl)",
				    r->given & G_NCCL	     ? r->nexample
				    : x->given & EG_XP_PATH  ? "--path"
				    : x->given & EG_XP_XNODE ? "--xnode-mode"
							     : "--device");
	if (nccl && r->nccl.min_bytes > r->nccl.max_bytes)
		return eg_cli_error(c, "-b is above -e");
	return 0;
}

int eg_cmd_bench_raw(int argc, char **argv)
{
	static const eg_cli_opt_t own[] = {
	    {"size", .id = O_SIZE},	{"msg-size", .id = O_MSG_SIZE},
	    {"msgs", .id = O_MSGS},	{"json", .id = O_JSON},
	    {"min-bytes", .id = 'b'},	{"max-bytes", .id = 'e'},
	    {"step-factor", .id = 'f'}, {"datatype", .id = 'd'},
	    {"impl", .id = O_IMPL},	{NULL}};
	eg__raw_t r = {.fab = {.job = eg_cli_bench_job,
			       .xport.keys = EG_XP_ALL,
			       .msgs = 512,
			       .size = (size_t)1 << 20,
			       .msg_size = 8},
		       .nccl = {.size = sizeof(r.nccl),
				.min_bytes = 8,
				.max_bytes = (size_t)1 << 30,
				.factor = 2}};
	eg_cli_t cl = {.own = own,
		       .parse = eg__raw_opt,
		       .ctx = &r,
		       .usage = eg__raw_usage,
		       .job = &r.fab.job,
		       .xport = &r.fab.xport,
		       .max_args = 1};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	if (eg__raw_check(&cl, &r))
		return EG_EXIT_HARD;
	if (!cl.n_args) {
		r.fab.job.warmup = eg_cli_bench_warmup(&r.fab.job, 0);
		return eg_bench_raw(&r.fab);
	}
	/* the collectives take the same groups */
	r.nccl.coll = cl.arg[0];
	r.nccl.job = r.fab.job;
	r.nccl.job.warmup = eg_cli_bench_warmup(&r.fab.job, 1);
	r.nccl.xport = r.fab.xport;
	return eg_nccl_raw_sweep(&r.nccl);
}
