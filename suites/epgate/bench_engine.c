/* epgate bench --engine: a multi-process engine's dispatch and combine
 * over the fabric transport, one rank per process under `epgate launch`.
 * The first step is verified against the reference (a benchmark of a
 * wrong engine measures nothing); then warm-up, then timed steps, each
 * started after a bootstrap barrier, its time the slowest rank's. The
 * transport's operation counters give the achieved post rate per
 * endpoint, to set beside `epgate bench --raw`. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef HAVE_LIBFABRIC
static int eg__cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median, p10, p90 of n values (sorted in place) */
static void eg__pct(double *v, unsigned n, double out[3])
{
	qsort(v, n, sizeof(*v), eg__cmpd);
	out[0] = v[n / 2];
	out[1] = v[(n - 1) / 10];
	out[2] = v[(9 * (n - 1) + 9) / 10];
}

/* One step; times (s) of dispatch and combine into td/tc. */
static int eg__step(const eg_engine_ops_t *ops, void *eng, eg_gen_t *g,
		    eg_rank_input_t *in, eg_recv_t *recv, void *y, void *out,
		    double *td, double *tc)
{
	double t0 = eg_now();
	int rc = ops->dispatch(eng, in, recv);
	if (rc < 0)
		return rc;
	double t1 = eg_now();
	if ((rc = eg_expert_stage(g, recv, y)) < 0)
		return rc;
	double t2 = eg_now();
	rc = ops->combine(eng, recv, (const void *const *)&y,
			  (void *const *)&out);
	*td = t1 - t0;
	*tc = eg_now() - t2;
	return rc;
}

int eg_bench_engine(const eg_bench_engine_opts_t *o)
{
	const eg_engine_ops_t *ops = eg_engine_find(o->engine);
	const eg_xport_ops_t *x = &eg_xport_fabric;
	eg_world_t world;
	eg_boot_t *b = NULL;
	eg_workload_t w;
	eg_gen_t g = {0};
	eg_rank_input_t in = {0};
	eg_recv_t recv = {0}, exp = {0};
	eg_xport_stats_t s0, s1;
	void *xs = NULL, *eng = NULL, *y = NULL, *out = NULL;
	double *mine = NULL, *all = NULL, *td = NULL, *tc = NULL;
	char err[512], ws[32];
	int rc, ex = EG_EXIT_HARD;
	unsigned n = o->iters;

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
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = o->provider,
			      .num_comms = o->num_comms,
			      .timeout_s = o->timeout_s};
	if (x->create(&world, b, &xo, &xs, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate bench: rank %u: %s\n", world.rank, err);
		xs = NULL;
		goto out;
	}
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .first_rank = world.rank,
			       .n_ranks = 1,
			       .world = &world,
			       .xport = x,
			       .xport_state = xs};
	uint32_t cap = eg_recv_max_rows(&w);
	size_t csz = eg_dtype_size(eg_combine_dtype(w.dtype));
	if (eg_gen_init(&g, &w) < 0 ||
	    eg_gen_rank_input(&g, &w, world.rank, &in) < 0 ||
	    eg_recv_alloc(&recv, &w, world.rank, cap) < 0 ||
	    !(y = malloc((size_t)(cap + 1) * w.hidden * csz)) ||
	    !(out = malloc(eg_combine_bytes(&w, world.rank) + 1)) ||
	    !(td = calloc(n, sizeof(double))) ||
	    !(tc = calloc(n, sizeof(double))) ||
	    !(mine = calloc(2 * (size_t)n, sizeof(double))) ||
	    !(all = calloc(2 * (size_t)n * world.size, sizeof(double))) ||
	    ops->create(&w, &ctx, &eng) < 0) {
		fprintf(stderr, "epgate bench: rank %u: setup failed\n",
			world.rank);
		eng = NULL;
		goto out;
	}
	/* verify the first step: dispatch exactly, combine bit for bit */
	double a, c;
	eg_verdict_t v;
	eg_verdict_init(&v);
	if (eg__step(ops, eng, &g, &in, &recv, y, out, &a, &c) < 0 ||
	    eg_ref_dispatch(&w, &g, world.rank, &exp) < 0)
		goto fail;
	eg_verify_dispatch(&w, &exp, &recv, &v);
	void *cexp = malloc(eg_combine_bytes(&w, world.rank) + 1);
	if (!cexp || eg_ref_combine(&w, &g, world.rank, cexp, NULL, NULL) < 0) {
		free(cexp);
		goto fail;
	}
	eg_verify_combine(&w, world.rank, EG_COMPARE_BITS, cexp, NULL, NULL,
			  out, &v);
	free(cexp);
	if (eg_verdict_total_wrong(&v)) {
		fprintf(stderr,
			"epgate bench: rank %u: the engine's result is "
			"wrong; not measuring it\n",
			world.rank);
		ex = EG_EXIT_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < o->warmup; i++)
		if (eg__step(ops, eng, &g, &in, &recv, y, out, &a, &c) < 0)
			goto fail;
	x->stats(xs, &s0);
	for (unsigned i = 0; i < n; i++) {
		if (eg_boot_barrier(b, o->timeout_s) < 0)
			goto fail;
		if (eg__step(ops, eng, &g, &in, &recv, y, out, &td[i], &tc[i]) <
		    0)
			goto fail;
		mine[i] = td[i];
		mine[n + i] = tc[i];
	}
	x->stats(xs, &s1);
	if (eg_boot_allgather(b, mine, 2 * n * sizeof(double), all,
			      o->timeout_s) < 0)
		goto fail;
	if (world.rank == 0) {
		double busy = 0, d[3], cb[3], st[3];
		uint64_t ops_total = 0;
		for (unsigned i = 0; i < n; i++) {
			td[i] = tc[i] = 0;
			for (uint32_t r = 0; r < world.size; r++) {
				const double *t = all + (size_t)r * 2 * n;
				if (t[i] > td[i])
					td[i] = t[i];
				if (t[n + i] > tc[i])
					tc[i] = t[n + i];
			}
			busy += mine[i] + mine[n + i];
			mine[i] = (td[i] + tc[i]) * 1e6;
		}
		for (unsigned k = 0; k < s1.num_comms; k++)
			ops_total += s1.ops_posted[k] - s0.ops_posted[k];
		for (unsigned i = 0; i < n; i++) {
			td[i] *= 1e6;
			tc[i] *= 1e6;
		}
		eg__pct(td, n, d);
		eg__pct(tc, n, cb);
		eg__pct(mine, n, st);
		char sum[256];
		eg_workload_summary(&w, sum, sizeof(sum));
		printf("epgate bench --engine %s: %s; providers intra=%s "
		       "inter=%s, %u comm(s), %u steps after %u warm-up "
		       "(first step verified)\n",
		       o->engine, sum,
		       s1.provider_intra[0] ? s1.provider_intra : "-",
		       s1.provider_inter[0] ? s1.provider_inter : "-",
		       s1.num_comms, n, o->warmup);
		printf("  %-28s %12s %12s %12s\n", "", "median", "p10", "p90");
		printf("  %-28s %12.1f %12.1f %12.1f\n", "dispatch_us", d[0],
		       d[1], d[2]);
		printf("  %-28s %12.1f %12.1f %12.1f\n", "combine_us", cb[0],
		       cb[1], cb[2]);
		printf("  %-28s %12.1f %12.1f %12.1f\n", "dispatch+combine_us",
		       st[0], st[1], st[2]);
		printf("  transport ops posted by rank 0 per step: %.1f; "
		       "achieved post rate %.0f ops/s per endpoint (rank 0, "
		       "ops / its own dispatch+combine time)\n",
		       (double)ops_total / n,
		       busy > 0 ? (double)ops_total / s1.num_comms / busy : 0);
	}
	ex = EG_EXIT_PASS;
	goto out;
fail:
	fprintf(stderr, "epgate bench: rank %u: %s\n", world.rank,
		x->error ? x->error(xs) : "step failed");
	ex = EG_EXIT_FAIL;
out:
	if (eng)
		ops->destroy(eng);
	if (b && xs && ex != EG_EXIT_HARD)
		eg_boot_barrier(b, o->timeout_s);
	if (xs)
		x->destroy(xs);
	if (b)
		eg_boot_close(b);
	eg_recv_free(&recv);
	eg_recv_free(&exp);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	eg_workload_fini(&w);
	free(y);
	free(out);
	free(td);
	free(tc);
	free(mine);
	free(all);
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
