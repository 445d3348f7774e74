/* The L2 rank program on host memory: the multi-process host engines
 * (a2a, dense and the planted faults that run one rank per process) over
 * the libfabric transport; rank 0 names the providers used. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "lib/suite/rank_int.h"

static int eg__built(const eg_rank_opts_t *o)
{
#ifdef HAVE_LIBFABRIC
	(void)o;
	return 0;
#else
	fprintf(stderr, "%s: built without libfabric\n", o->prog);
	return EG_EXIT_SKIP;
#endif
}

static int eg__open(eg_rank_job_t *J)
{
#ifdef HAVE_LIBFABRIC
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = J->o->xport.provider,
			      .num_comms = J->o->xport.num_comms,
			      .timeout_s = J->world.timeout_s};
	char err[512];
	int rc;

	J->xops = &eg_xport_fabric;
	rc = J->xops->create(&J->world, J->boot, &xo, &J->xstate, err,
			     sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "%s: rank %u: transport: %s\n", J->o->prog,
			J->world.rank, err);
		J->xstate = NULL;
		return EG_EXIT_HARD;
	}
	return 0;
#else
	(void)J;
	return EG_EXIT_SKIP;
#endif
}

static void eg__repro(const eg_rank_job_t *J, char *buf, size_t len)
{
	if (J->o->xport.provider)
		snprintf(buf, len, " --provider %s", J->o->xport.provider);
}

static int eg__finish(eg_rank_job_t *J, int rc)
{
	eg_xport_stats_t st;

	memset(&st, 0, sizeof(st));
	if (J->world.rank == 0 && J->xops->stats(J->xstate, &st) == EG_OK)
		printf("l2: %d workloads, engine %s, providers intra=%s "
		       "inter=%s, %u comms\n",
		       J->ran, J->o->engine, st.provider_intra,
		       st.provider_inter, st.num_comms);
	return rc;
}

static void eg__close(eg_rank_job_t *J)
{
	if (J->xstate)
		J->xops->destroy(J->xstate);
	J->xstate = NULL;
}

const eg_rank_memory_t eg_rank_memory_host = {
    .size = sizeof(eg_rank_memory_t),
    .name = "host",
    .engines = &eg_step_engines_host,
    .built = eg__built,
    .open = eg__open,
    .repro = eg__repro,
    .finish = eg__finish,
    .close = eg__close,
};
