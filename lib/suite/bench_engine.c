/* epgate bench --engine: one point of a multi-process engine over the
 * fabric transport, one rank per process under `epgate launch`, through
 * the same driver as the profile sweeps (lib/bench/driver.c): the first
 * step verified against the reference (a benchmark of a wrong engine
 * measures nothing), warm-up, timed steps each after a bootstrap barrier,
 * the slowest rank per step.  Rank 0 prints every metric
 * (docs/metrics.md). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"
#include "epgate/bench_driver.h"

#ifdef HAVE_LIBFABRIC
static void eg__row(const eg_metric_t *m)
{
	eg_summary_t s = m->s;

	if (m->n_samples)
		eg_stats_summarize(m->samples, m->n_samples, 1, &s);
	if (m->n_samples)
		printf("  %-20s %14.4g %14.4g %14.4g %8.3f\n", m->name,
		       s.median, s.p10, s.p90, s.cv);
	else
		printf("  %-20s %14.4g %14s %14s %8s\n", m->name, s.median, "",
		       "", "");
}

int eg_bench_engine(const eg_bench_engine_opts_t *o)
{
	eg_world_t world;
	eg_boot_t *b = NULL;
	eg_workload_t w;
	eg_perf_point_t pt = {0};
	eg_point_t out;
	char err[1024], ws[32];
	int rc, ex = EG_EXIT_HARD;

	const eg_engine_ops_t *ops = eg_engine_find(o->engine);

	eg_workload_init(&w);
	if (!ops || !(ops->flags & EG_ENGINE_MULTI_PROCESS)) {
		fprintf(stderr,
			"epgate bench: --engine: \"%s\" is not a "
			"multi-process engine (a2a, dense)\n",
			o->engine);
		return EG_EXIT_HARD;
	}
	if (eg_world_from_env(&world, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate bench: %s\n", err);
		return EG_EXIT_HARD;
	}
	snprintf(ws, sizeof(ws), "%u", world.size);
	snprintf(w.name, EG_NAME_MAX, "bench");
	if (eg_workload_set(&w, "world", ws, err) < 0 ||
	    eg_overrides_apply(o->workload, &w, "epgate bench") < 0)
		goto out;
	if ((rc = eg_boot_open(&b, &world, o->timeout_s)) < 0) {
		fprintf(stderr, "epgate bench: rank %u: bootstrap: %s\n",
			world.rank, b ? eg_boot_error(b) : eg_strerror(rc));
		goto out;
	}
	/* the point: this workload, as the profile axes would say it */
	snprintf(pt.id, sizeof(pt.id), "bench/%s", o->engine);
	pt.suite = "bench";
	pt.arm = o->engine;
	pt.warmup = o->warmup;
	pt.iters = o->iters;
	pt.v[EG_AXIS_CONCURRENCY].num = w.tokens;
	pt.v[EG_AXIS_WORLD].num = world.size;
	pt.v[EG_AXIS_NODES].num = world.nodes;
	pt.v[EG_AXIS_EXPERTS].num = w.experts;
	pt.v[EG_AXIS_NUM_COMMS].num = o->num_comms;
	pt.v[EG_AXIS_HIDDEN].num = w.hidden;
	pt.v[EG_AXIS_TOPK].num = w.topk;
	snprintf(pt.v[EG_AXIS_DTYPE].str, sizeof(pt.v[0].str), "%s",
		 eg_dtype_name(w.dtype));
	snprintf(pt.v[EG_AXIS_ROUTING].str, sizeof(pt.v[0].str), "%s",
		 eg_routing_name(w.routing));
	eg_perf_ctx_t c = {.world = &world,
			   .boot = b,
			   .backend = &eg_bench_backend_fabric,
			   .provider = o->provider,
			   .timeout_s = o->timeout_s,
			   .device = -1};
	rc = eg_perf_measure(&c, &pt, &w, NULL, &out, err, sizeof(err));
	if (rc == EG_EMISMATCH) {
		fprintf(stderr,
			"epgate bench: rank %u: the engine's result is wrong; "
			"not measuring it: %s\n",
			world.rank, err);
		ex = EG_EXIT_FAIL;
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "epgate bench: rank %u: %s\n", world.rank, err);
		ex = EG_EXIT_FAIL;
		goto out;
	}
	ex = EG_EXIT_PASS;
	if (world.rank)
		goto out;
	char sum[256];
	const json_t *tr = json_object_get(out.evidence, "transport");

	eg_workload_summary(&w, sum, sizeof(sum));
	printf("epgate bench --engine %s: %s; %s, %u node(s), %u comm(s), "
	       "%u steps after %u warm-up (first step verified)\n",
	       o->engine, sum, tr ? json_string_value(tr) : "?", world.nodes,
	       o->num_comms, o->iters, o->warmup);
	printf("  %-20s %14s %14s %14s %8s\n", "metric", "median", "p10", "p90",
	       "cv");
	for (size_t i = 0; i < out.n_metrics; i++)
		eg__row(&out.metrics[i]);
	printf("  times: slowest rank per step; bytes: payload per rank per "
	       "step; post_rate: busiest endpoint (docs/metrics.md)\n");
	eg_point_fini(&out);
out:
	if (b) {
		if (ex != EG_EXIT_HARD)
			eg_boot_barrier(b, o->timeout_s);
		eg_boot_close(b);
	}
	eg_workload_fini(&w);
	return ex;
}
#else
int eg_bench_engine(const eg_bench_engine_opts_t *o)
{
	(void)o;
	fputs("epgate bench: built without libfabric\n", stderr);
	return EG_EXIT_SKIP;
}
#endif
