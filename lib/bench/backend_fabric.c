/* The "fabric" measurement backend: host memory, one rank per process,
 * the multi-process engines (a2a, dense) over the libfabric transport.
 * A step is dispatch, the expert stage and combine, each timed with the
 * monotonic clock; verification is one step checked bit for bit against
 * the dense reference.  Payload bytes are counted from the routing
 * (docs/metrics.md), operations from the transport's counters. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifdef HAVE_LIBFABRIC
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>

#include "epgate/bench_driver.h"
#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/reference.h"
#include "epgate/transport.h"
#include "epgate/verify.h"

typedef struct eg__fab {
	const eg_engine_ops_t *ops;
	void *eng;
	const eg_xport_ops_t *x;
	void *xs;
	eg_world_t world;
	eg_workload_t w;
	eg_gen_t g;
	eg_rank_input_t in;
	eg_recv_t recv;
	void *y, *out;
	eg_perf_bytes_t bytes; /* this rank, one step */
	uint64_t steps;	       /* since counters_reset */
	eg_xport_stats_t s0;
} eg__fab_t;

static void eg__fab_teardown(void *state)
{
	eg__fab_t *f = state;

	if (!f)
		return;
	if (f->eng)
		f->ops->destroy(f->eng);
	if (f->xs)
		f->x->destroy(f->xs);
	eg_recv_free(&f->recv);
	eg_rank_input_free(&f->in);
	eg_gen_fini(&f->g);
	eg_workload_fini(&f->w);
	free(f->y);
	free(f->out);
	free(f);
}

static int eg__fab_setup(const eg_world_t *world, eg_boot_t *boot,
			 const eg_bench_setup_t *s, const eg_workload_t *w,
			 void **state, char *err, size_t errlen)
{
	eg__fab_t *f;
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = s->provider,
			      .num_comms = s->num_comms ? s->num_comms : 1,
			      .timeout_s = s->timeout_s};
	int rc;

	*state = NULL;
	if (s->size < sizeof(*s) || w->world != world->size) {
		snprintf(err, errlen,
			 "fabric: the workload's world %u is not "
			 "the job's %u",
			 w->world, world->size);
		return EG_EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return EG_ENOMEM;
	f->world = *world;
	f->x = &eg_xport_fabric;
	f->ops = eg_engine_find(s->engine);
	if (!f->ops || !(f->ops->flags & EG_ENGINE_MULTI_PROCESS)) {
		snprintf(err, errlen,
			 "fabric: \"%s\" is not a multi-process engine "
			 "(a2a, dense)",
			 s->engine);
		rc = EG_EINVAL;
		goto fail;
	}
	if ((rc = eg_workload_copy(&f->w, w)) < 0)
		goto fail_mem;
	rc = f->x->create(world, boot, &xo, &f->xs, err, errlen);
	if (rc < 0) {
		f->xs = NULL;
		goto fail;
	}
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .first_rank = world->rank,
			       .n_ranks = 1,
			       .world = &f->world,
			       .xport = f->x,
			       .xport_state = f->xs,
			       .boot = boot,
			       .flags = EG_ENGINE_CTX_BENCH};
	uint32_t cap = eg_recv_max_rows(&f->w);
	size_t csz = eg_perf_combine_row_bytes(&f->w);

	if ((rc = eg_gen_init(&f->g, &f->w)) < 0 ||
	    (rc = eg_gen_rank_input(&f->g, &f->w, world->rank, &f->in)) < 0 ||
	    (rc = eg_recv_alloc(&f->recv, &f->w, world->rank, cap)) < 0)
		goto fail_mem;
	f->y = malloc((size_t)(cap + 1) * csz);
	f->out = malloc(eg_combine_bytes(&f->w, world->rank) + 1);
	if (!f->y || !f->out) {
		rc = EG_ENOMEM;
		goto fail_mem;
	}
	rc = eg_perf_rank_bytes(&f->w, s->engine, world->rank,
				world->ranks_per_node, &f->bytes);
	if (rc < 0 && rc != EG_ENOSYS)
		goto fail_mem;
	if ((rc = f->ops->create(&f->w, &ctx, &f->eng)) < 0) {
		f->eng = NULL;
		snprintf(err, errlen, "fabric: engine %s: %s", s->engine,
			 eg_strerror(rc));
		goto fail;
	}
	*state = f;
	return EG_OK;
fail_mem:
	snprintf(err, errlen, "fabric: setup on rank %u: %s", world->rank,
		 eg_strerror(rc));
fail:
	eg__fab_teardown(f);
	return rc;
}

static int eg__fab_step(void *state, eg_bench_times_t *t)
{
	eg__fab_t *f = state;
	double t0 = eg_now(), t1, t2;
	int rc = f->ops->dispatch(f->eng, &f->in, &f->recv);

	if (rc < 0)
		return rc;
	t1 = eg_now();
	if ((rc = eg_expert_stage(&f->g, &f->recv, f->y)) < 0)
		return rc;
	t2 = eg_now();
	rc = f->ops->combine(f->eng, &f->recv, (const void *const *)&f->y,
			     (void *const *)&f->out);
	t->dispatch_s = t1 - t0;
	t->expert_s = t2 - t1;
	t->combine_s = eg_now() - t2;
	f->steps++;
	return rc;
}

static int eg__fab_verify(void *state, char *err, size_t errlen)
{
	eg__fab_t *f = state;
	eg_bench_times_t t;
	eg_recv_t exp = {0};
	eg_verdict_t v;
	void *cexp = NULL;
	uint32_t r = f->world.rank;
	int rc = eg__fab_step(f, &t);

	if (rc < 0) {
		snprintf(err, errlen, "rank %u: step failed: %s", r,
			 f->x->error(f->xs) ? f->x->error(f->xs)
					    : eg_strerror(rc));
		return rc;
	}
	eg_verdict_init(&v);
	cexp = malloc(eg_combine_bytes(&f->w, r) + 1);
	rc = EG_ENOMEM;
	if (!cexp || (rc = eg_ref_dispatch(&f->w, &f->g, r, &exp)) < 0 ||
	    (rc = eg_ref_combine(&f->w, &f->g, r, cexp, NULL, NULL)) < 0) {
		snprintf(err, errlen, "rank %u: reference: %s", r,
			 eg_strerror(rc));
		goto out;
	}
	eg_verify_dispatch(&f->w, &exp, &f->recv, &v);
	eg_verify_combine(&f->w, r, EG_COMPARE_BITS, cexp, NULL, NULL, f->out,
			  &v);
	rc = EG_OK;
	if (eg_verdict_total_wrong(&v)) {
		uint64_t wrong = eg_verdict_total_wrong(&v);

		snprintf(err, errlen,
			 "rank %u: %llu wrong value(s) against the reference "
			 "(first in %s)",
			 r, (unsigned long long)wrong,
			 v.n_first ? eg_field_name(v.first[0].field) : "?");
		rc = EG_EMISMATCH;
	}
out:
	eg_recv_free(&exp);
	free(cexp);
	return rc;
}

static void eg__fab_reset(void *state)
{
	eg__fab_t *f = state;

	f->x->stats(f->xs, &f->s0);
	f->steps = 0;
}

static int eg__fab_counters(void *state, eg_bench_counters_t *c)
{
	eg__fab_t *f = state;
	eg_xport_stats_t s;
	int rc = f->x->stats(f->xs, &s);

	memset(c, 0, sizeof(*c));
	if (rc < 0)
		return rc;
	c->num_comms = s.num_comms;
	for (uint32_t k = 0; k < s.num_comms && k < 16; k++)
		c->ops_posted[k] = s.ops_posted[k] - f->s0.ops_posted[k];
	c->bytes_so = f->steps * f->bytes.disp_so;
	c->bytes_su = f->steps * f->bytes.disp_su;
	snprintf(c->transport_evidence, sizeof(c->transport_evidence),
		 "fabric %s/%s", s.provider_intra[0] ? s.provider_intra : "-",
		 s.provider_inter[0] ? s.provider_inter : "-");
	snprintf(c->versions, sizeof(c->versions), "libfabric %u.%u",
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	return EG_OK;
}

const eg_bench_backend_ops_t eg_bench_backend_fabric = {
    .size = sizeof(eg_bench_backend_ops_t),
    .name = "fabric",
    .setup = eg__fab_setup,
    .verify = eg__fab_verify,
    .step = eg__fab_step,
    .counters_reset = eg__fab_reset,
    .counters = eg__fab_counters,
    .teardown = eg__fab_teardown,
};
#else
/* Built without libfabric: no fabric backend. */
typedef int eg__backend_fabric_unused;
#endif
