/* epgate bench engine: one point of a multi-process engine, one rank per
 * process under `epgate launch`, built from the options and measured by
 * the same driver and backend as the profile sweeps (lib/bench/driver.c,
 * the "fabric" or "nccl" backend): the first step verified against the
 * reference (a benchmark of a wrong engine measures nothing), warm-up,
 * timed steps each after a bootstrap barrier, the slowest rank per step.
 * Rank 0 prints every metric of the point (docs/metrics.md); the same
 * point in a profile gives the same metrics. With vs_alltoall it then
 * measures NCCL's alltoall of the same bytes per rank (bench_vs.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/engine.h"
#include "lib/campaign/bench_run.h"
#include "lib/campaign/bench_vs.h"
#include "lib/campaign/sweep.h"

#define EG__PROG "epgate bench engine"

static void eg__row(const eg_metric_t *m)
{
	eg_summary_t s = m->s;

	if (m->n_samples)
		eg_stats_summarize(m->samples, m->n_samples, 1, &s);
	if (m->n_samples)
		printf("  %-26s %14.4g %14.4g %14.4g %8.3f\n", m->name,
		       s.median, s.p10, s.p90, s.cv);
	else
		printf("  %-26s %14.4g %14s %14s %8s\n", m->name, s.median, "",
		       "", "");
}

static void eg__print(const eg_bench_engine_opts_t *o, const eg_world_t *world,
		      const eg_workload_t *w, const eg_point_t *out)
{
	const json_t *tr = json_object_get(out->evidence, "transport");
	char sum[256];

	eg_workload_summary(w, sum, sizeof(sum));
	printf("epgate bench engine %s: %s; %s, %u node(s), %u comm(s), %u "
	       "steps after %u warm-up (first step verified)\n",
	       o->engine, sum, tr ? json_string_value(tr) : "?", world->nodes,
	       o->xport.num_comms, o->job.iters, o->job.warmup);
	printf("  %-26s %14s %14s %14s %8s\n", "metric", "median", "p10", "p90",
	       "cv");
	for (size_t i = 0; i < out->n_metrics; i++)
		eg__row(&out->metrics[i]);
	printf("  times: slowest rank per step; so/su bytes: payload per rank "
	       "per step; wire: what dispatch handed the transport, busiest "
	       "rank; post_rate: busiest endpoint (docs/metrics.md)\n");
	eg_bench_print_boundary(out->evidence);
	fflush(stdout);
}

/* The point: this workload, as the profile axes would say it. */
static void eg__point(const eg_bench_engine_opts_t *o, const eg_world_t *world,
		      const eg_workload_t *w, eg_bench_point_t *pt)
{
	memset(pt, 0, sizeof(*pt));
	snprintf(pt->id, sizeof(pt->id), "bench/%s", o->engine);
	pt->suite = "bench";
	pt->arm = o->engine;
	pt->warmup = o->job.warmup;
	pt->iters = o->job.iters;
	pt->v[EG_AXIS_CONCURRENCY].num = w->tokens;
	pt->v[EG_AXIS_WORLD].num = world->size;
	pt->v[EG_AXIS_NODES].num = world->nodes;
	pt->v[EG_AXIS_EXPERTS].num = w->experts;
	pt->v[EG_AXIS_NUM_COMMS].num = o->xport.num_comms;
	pt->v[EG_AXIS_HIDDEN].num = w->hidden;
	pt->v[EG_AXIS_TOPK].num = w->topk;
	snprintf(pt->v[EG_AXIS_DTYPE].str, sizeof(pt->v[0].str), "%s",
		 eg_dtype_name(w->dtype));
	snprintf(pt->v[EG_AXIS_ROUTING].str, sizeof(pt->v[0].str), "%s",
		 eg_routing_name(w->routing));
}

/* The options an engine point needs: a backend built in, a
 * multi-process engine. Returns -1 to go on, else the exit code. */
static int eg__check(const eg_bench_engine_opts_t *o,
		     const eg_bench_backend_ops_t **be)
{
	const eg_engine_ops_t *e = eg_engine_find(o->engine);

	if (!e || !(e->flags & EG_ENGINE_MULTI_PROCESS)) {
		fprintf(stderr,
			EG__PROG ": \"%s\" is not a multi-process engine "
				 "(a2a, dense)\n",
			o->engine);
		return EG_EXIT_HARD;
	}
	if (o->vs_alltoall && strcmp(o->xport.transport, "nccl")) {
		fprintf(stderr, EG__PROG ": --vs-alltoall compares with NCCL's "
					 "alltoall: give --transport nccl\n");
		return EG_EXIT_HARD;
	}
	*be = eg_bench_backend_find(o->xport.transport);
	if (!*be) {
		fprintf(stderr,
			EG__PROG ": transport %s is not built into this epgate "
				 "(%s)\n",
			o->xport.transport,
			strcmp(o->xport.transport, "nccl") ? "libfabric"
							   : "CUDA and NCCL");
		return EG_EXIT_SKIP;
	}
	return -1;
}

/* World, workload (world = the ranks launched), bootstrap. */
static int eg__open(const eg_bench_engine_opts_t *o, eg_world_t *world,
		    eg_workload_t *w, eg_boot_t **b)
{
	char err[1024], ws[32];
	int rc;

	if (eg_world_from_env(world, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EINVAL;
	}
	snprintf(ws, sizeof(ws), "%u", world->size);
	snprintf(w->name, EG_NAME_MAX, "bench");
	if (eg_workload_set(w, "world", ws, err) < 0 ||
	    eg_overrides_apply(&o->workload, w, EG__PROG) < 0)
		return EG_EINVAL;
	if (w->world != world->size) {
		fprintf(stderr, EG__PROG ": --world must be the job's %u\n",
			world->size);
		return EG_EINVAL;
	}
	if ((rc = eg_boot_open(b, world, o->job.timeout_s)) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n",
			world->rank, *b ? eg_boot_error(*b) : eg_strerror(rc));
		return rc;
	}
	return EG_OK;
}

/* Measures the point through the driver; rank 0 prints it. */
static int eg__measure(const eg_bench_engine_opts_t *o,
		       const eg_bench_backend_ops_t *be,
		       const eg_world_t *world, eg_boot_t *b,
		       const eg_workload_t *w, eg_point_t *out)
{
	eg_bench_point_t pt;
	eg_bench_ctx_t c = {.world = world,
			    .boot = b,
			    .backend = be,
			    .provider = o->xport.provider,
			    .timeout_s = o->job.timeout_s,
			    .device = o->xport.device,
			    /* "auto" leaves the environment's */
			    .nccl_path =
				o->xport.path && strcmp(o->xport.path, "auto")
				    ? o->xport.path
				    : NULL,
			    .nccl_xnode = o->xport.xnode_mode,
			    /* beside nccl-tests' alltoall: its phases, and
			     * blocking communicators as the alltoall's */
			    .phases = o->phases || o->vs_alltoall,
			    .nccl_blocking = o->vs_alltoall};
	char err[1024];
	int rc;

	eg__point(o, world, w, &pt);
	rc = eg_bench_measure(&c, &pt, w, NULL, out, err, sizeof(err));
	if (rc == EG_EMISMATCH) {
		fprintf(stderr,
			EG__PROG ": rank %u: the engine's result is wrong; not "
				 "measuring it: %s\n",
			world->rank, err);
		return EG_EXIT_FAIL;
	}
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: %s\n", world->rank, err);
		/* bad input (an EPGATE_BOUNDARY or EPGATE_HOLD_US value, an
		 * option the engine refuses) is a hard error, as in the
		 * arguments */
		return rc == EG_ENOSYS	 ? EG_EXIT_SKIP
		       : rc == EG_EINVAL ? EG_EXIT_HARD
					 : EG_EXIT_FAIL;
	}
	if (!world->rank)
		eg__print(o, world, w, out);
	if (!world->rank && o->overhead)
		eg_bench_overhead_boundaries(o->engine, out);
	return EG_EXIT_PASS;
}

int eg_bench_engine(const eg_bench_engine_opts_t *o)
{
	const eg_bench_backend_ops_t *be = NULL;
	eg_world_t world;
	eg_boot_t *b = NULL;
	eg_workload_t w;
	eg_point_t out;
	int ex = eg__check(o, &be);

	if (ex >= 0)
		return ex;
	eg_workload_init(&w);
	memset(&out, 0, sizeof(out));
	ex = EG_EXIT_HARD;
	if (eg__open(o, &world, &w, &b) < 0)
		goto out;
	/* an alltoall needs peers: said before anything is measured */
	if (o->vs_alltoall && world.size < 2) {
		if (!world.rank)
			fprintf(stderr,
				EG__PROG ": --vs-alltoall needs 2 ranks or "
					 "more (epgate launch -n 2 -- ...)\n");
		goto out;
	}
	ex = eg__measure(o, be, &world, b, &w, &out);
	if (ex == EG_EXIT_PASS && o->vs_alltoall)
		ex = eg_bench_vs_alltoall(o, &world, b, &out);
out:
	eg_point_fini(&out);
	if (b) {
		if (ex != EG_EXIT_HARD)
			eg_boot_barrier(b, o->job.timeout_s);
		eg_boot_close(b);
	}
	eg_workload_fini(&w);
	return ex;
}
