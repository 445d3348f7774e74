/* The "fabric" measurement backend: host memory, one rank per process,
 * the multi-process host engines (a2a, dense) over the libfabric
 * transport, as the engine backend (lib/bench/backend_engine.c) runs
 * them. Its transport evidence is the providers used within and across
 * nodes. Built with libfabric only (Makefile.am). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "lib/bench/backend_engine.h"

static int eg__fab_open(const eg_world_t *world, eg_boot_t *boot,
			const eg_bench_setup_t *s, const eg_xport_ops_t **x,
			void **xs, void **stream, char *err, size_t errlen)
{
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = s->provider,
			      .num_comms = s->num_comms ? s->num_comms : 1,
			      .timeout_s = s->timeout_s};

	*x = &eg_xport_fabric;
	*stream = NULL;
	return eg_xport_fabric.create(world, boot, &xo, xs, err, errlen);
}

static void eg__fab_describe(const eg_xport_ops_t *x, void *xs,
			     eg_bench_counters_t *c)
{
	eg_xport_stats_t s;

	memset(&s, 0, sizeof(s));
	x->stats(xs, &s);
	snprintf(c->transport_evidence, sizeof(c->transport_evidence),
		 "fabric %s/%s", s.provider_intra[0] ? s.provider_intra : "-",
		 s.provider_inter[0] ? s.provider_inter : "-");
	snprintf(c->versions, sizeof(c->versions), "libfabric %u.%u",
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
}

static const eg_engine_backend_t eg__fabric = {
    .size = sizeof(eg_engine_backend_t),
    .name = "fabric",
    .engines = &eg_step_engines_host,
    .open = eg__fab_open,
    .describe = eg__fab_describe,
};

static int eg__fab_setup(const eg_world_t *world, eg_boot_t *boot,
			 const eg_bench_setup_t *s, const eg_workload_t *w,
			 void **state, char *err, size_t errlen)
{
	return eg_engine_backend_setup(&eg__fabric, world, boot, s, w, state,
				       err, errlen);
}

const eg_bench_backend_ops_t eg_bench_backend_fabric = {
    .size = sizeof(eg_bench_backend_ops_t),
    .name = "fabric",
    .setup = eg__fab_setup,
    .verify = eg_engine_backend_verify,
    .step = eg_engine_backend_step,
    .counters_reset = eg_engine_backend_reset,
    .counters = eg_engine_backend_counters,
    .teardown = eg_engine_backend_teardown,
};
