/* epgate l2-rank: one rank of an L2 job (run under `epgate launch` or
 * srun). Each rank generates its own input, runs the engine over the
 * transport, verifies its own outputs against the reference (which needs
 * no communication), and the verdicts meet at rank 0 over the bootstrap.
 * Rank 0 appends one JSON line per workload to --results as it goes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/suite/suite.h"

typedef eg_rank_verdict_t eg__l2_msg_t;

typedef struct eg__l2_rank {
	const eg_world_t *world;
	const eg_engine_ops_t *ops;
	const eg_xport_ops_t *xops;
	void *xstate;
	unsigned iters;
	eg_boot_t *boot;
} eg__l2_rank_t;

static void eg__stage(eg__l2_msg_t *m, const char *s)
{
	snprintf(m->stage, sizeof(m->stage), "%s", s);
}

/* An engine error, said where it happens (the transport names the peer):
 * if the job is then stopped, this line is the diagnosis. */
static void eg__say(const eg__l2_rank_t *R, const eg_workload_t *w,
		    const eg__l2_msg_t *m)
{
	const char *x = R->xops->error ? R->xops->error(R->xstate) : NULL;
	fprintf(stderr, "epgate l2-rank: rank %u: %s: %s: %s%s%s\n",
		R->world->rank, w->name, m->stage, eg_strerror(m->engine_err),
		x && *x ? ": " : "", x && *x ? x : "");
	fflush(stderr);
}

/* One workload on this rank; fills m. */
static void eg__l2_case(const eg__l2_rank_t *R, const eg_workload_t *w,
			eg__l2_msg_t *m)
{
	uint32_t me = R->world->rank, T = eg_workload_tokens(w, me);
	size_t n = (size_t)T * w->hidden;
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .first_rank = me,
			       .n_ranks = 1,
			       .world = R->world,
			       .xport = R->xops,
			       .xport_state = R->xstate,
			       .boot = R->boot};
	eg_workload_t wi;
	eg_gen_t g = {0};
	eg_rank_input_t in = {0};
	eg_recv_t recv = {0}, exp = {0};
	void *engine = NULL, *y = NULL, *out = NULL, *cexp = NULL;
	double *r64 = NULL, *m64 = NULL;
	int rc;

	memset(m, 0, sizeof(*m));
	eg_verdict_init(&m->v);
	if (eg_workload_copy(&wi, w) < 0) {
		m->harness_err = EG_ENOMEM;
		return;
	}
	uint32_t cap = eg_recv_max_rows(w);
	size_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	rc = eg_recv_alloc(&recv, w, me, cap);
	y = malloc((size_t)(cap + 1) * w->hidden * csz);
	out = malloc(eg_combine_bytes(w, me) + 1);
	cexp = malloc(eg_combine_bytes(w, me) + 1);
	r64 = malloc((n + 1) * sizeof(double));
	m64 = malloc((n + 1) * sizeof(double));
	if (rc < 0 || !y || !out || !cexp || !r64 || !m64) {
		m->harness_err = EG_ENOMEM;
		goto done;
	}
	rc = R->ops->create(w, &ctx, &engine);
	if (rc < 0) {
		engine = NULL;
		m->engine_err = rc;
		eg__stage(m, "create");
		goto done;
	}
	for (unsigned it = 0; it < R->iters; it++) {
		/* once wrong, the remaining iterations only keep the
		 * engine's collectives in step with the peers' */
		int check = !eg_verdict_total_wrong(&m->v);
		wi.iter = w->iter + it;
		if (check)
			m->iter = wi.iter;
		eg_gen_fini(&g);
		eg_rank_input_free(&in);
		if ((rc = eg_gen_init(&g, &wi)) < 0 ||
		    (rc = eg_gen_rank_input(&g, &wi, me, &in)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc = R->ops->dispatch(engine, &in, &recv);
		if (rc < 0) {
			m->engine_err = rc;
			eg__stage(m, "dispatch");
			eg__say(R, w, m);
			goto done;
		}
		eg_recv_free(&exp);
		if (check && (rc = eg_ref_dispatch(&wi, &g, me, &exp)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc =
		    check ? eg_verify_dispatch(&wi, &exp, &recv, &m->v) : EG_OK;
		if (rc < 0 && rc != EG_EMISMATCH) {
			m->harness_err = rc;
			goto done;
		}
		if (check && eg_verdict_total_wrong(&m->v)) {
			eg__stage(m, "dispatch");
			/* keep the collective in step: peers still combine */
		}
		if ((rc = eg_expert_stage(&g, &recv, y)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc = R->ops->combine(engine, &recv, (const void *const *)&y,
				     (void *const *)&out);
		if (rc < 0) {
			m->engine_err = rc;
			eg__stage(m, "combine");
			eg__say(R, w, m);
			goto done;
		}
		if (eg_verdict_total_wrong(&m->v))
			continue;
		if ((rc = eg_ref_combine(&wi, &g, me, cexp, r64, m64)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		/* bits where any order gives them or the engine promises
		 * the canonical order (as l2_gpu.c); the bound on random */
		if (wi.data == EG_DATA_EXACT ||
		    (R->ops->flags & EG_ENGINE_CANONICAL_ORDER))
			rc = eg_verify_combine(&wi, me, EG_COMPARE_BITS, cexp,
					       NULL, NULL, out, &m->v);
		if (rc == EG_OK || rc == EG_EMISMATCH)
			if (wi.data == EG_DATA_RANDOM)
				rc = eg_verify_combine(&wi, me,
						       EG_COMPARE_BOUNDED, NULL,
						       r64, m64, out, &m->v);
		if (rc < 0 && rc != EG_EMISMATCH) {
			m->harness_err = rc;
			goto done;
		}
		if (eg_verdict_total_wrong(&m->v))
			eg__stage(m, "combine");
	}
done:
	if (engine)
		R->ops->destroy(engine);
	eg_recv_free(&recv);
	eg_recv_free(&exp);
	eg_rank_input_free(&in);
	eg_gen_fini(&g);
	free(y);
	free(out);
	free(cexp);
	free(r64);
	free(m64);
	eg_workload_fini(&wi);
}

static void eg__l2_rank_usage(FILE *f)
{
	fputs("usage: epgate launch -n N -- epgate l2-rank [options]\n"
	      "\n"
	      "One rank of an L2 job: every workload of the file whose world\n"
	      "equals the job's size, through a multi-process engine over a\n"
	      "transport, verified on every rank; rank 0 writes results.\n"
	      "\n"
	      "  --engine NAME     a2a (default), dense or plugin:PATH[,k=v]\n"
	      "  --provider P      libfabric provider: shm, tcp (default: shm\n"
	      "                    within a node, tcp across nodes)\n"
	      "  --num-comms K     endpoints, each with a progress thread (1)\n"
	      "  --workload FILE   workloads (default: the L2 matrix)\n"
	      "  --filter TEXT     only workloads whose name contains TEXT\n"
	      "  --iters N         iterations per workload (default: 2)\n"
	      "  --results FILE    rank 0 appends one JSON line per workload\n"
	      "  -h, --help        this text\n",
	      f);
}

int eg_cmd_l2_rank(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"engine", required_argument, NULL, 'e'},
	    {"provider", required_argument, NULL, 'p'},
	    {"num-comms", required_argument, NULL, 'k'},
	    {"workload", required_argument, NULL, 'w'},
	    {"filter", required_argument, NULL, 'f'},
	    {"iters", required_argument, NULL, 'i'},
	    {"results", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *engine = "a2a", *provider = NULL, *file = NULL;
	const char *filter = NULL, *results = NULL;
	unsigned comms = 1, iters = 2;
	eg_world_t world;
	eg_boot_t *boot = NULL;
	eg_workload_list_t wl = {0};
	eg_overrides_t ov = {0};
	eg__l2_rank_t R = {0};
	eg__l2_msg_t *all = NULL;
	FILE *rf = NULL;
	char err[512], path[4096];
	int c, rc = EG_EXIT_HARD;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			engine = optarg;
			break;
		case 'p':
			provider = optarg;
			break;
		case 'k':
		case 'i': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || v == 0 ||
			    v > (c == 'k' ? EG_COMMS_MAX : 100000)) {
				fprintf(stderr,
					"epgate l2-rank: --%s: \"%s\" is out "
					"of range\n",
					c == 'k' ? "num-comms" : "iters",
					optarg);
				return EG_EXIT_HARD;
			}
			if (c == 'k')
				comms = (unsigned)v;
			else
				iters = (unsigned)v;
			break;
		}
		case 'w':
			file = optarg;
			break;
		case 'f':
			filter = optarg;
			break;
		case 'r':
			results = optarg;
			break;
		case 'h':
			eg__l2_rank_usage(stdout);
			return EG_EXIT_PASS;
		default:
			fputs("epgate l2-rank: see 'epgate l2-rank --help'\n",
			      stderr);
			return EG_EXIT_HARD;
		}
	}
	R.ops = eg_engine_find(engine);
	if (!R.ops || !(R.ops->flags & EG_ENGINE_MULTI_PROCESS)) {
		fprintf(stderr,
			"epgate l2-rank: --engine: \"%s\" is not a "
			"multi-process engine (a2a, dense)\n",
			engine);
		return EG_EXIT_HARD;
	}
	if (eg_world_from_env(&world, err, sizeof(err)) < 0) {
		fprintf(stderr, "epgate l2-rank: %s\n", err);
		return EG_EXIT_HARD;
	}
	if (!file) {
		if (eg_find_data("fixtures/workloads/l2-matrix.ini", path,
				 sizeof(path)) < 0) {
			fprintf(stderr, "epgate l2-rank: cannot find "
					"fixtures/workloads/l2-matrix.ini\n");
			return EG_EXIT_HARD;
		}
		file = path;
	}
	if (eg_cli_load_workloads("epgate l2-rank", file, &ov, &wl) < 0)
		goto out;
	R.world = &world;
	R.iters = iters;
	rc = eg_boot_open(&boot, &world, world.timeout_s);
	if (rc < 0) {
		fprintf(stderr, "epgate l2-rank: rank %u: bootstrap: %s\n",
			world.rank,
			boot ? eg_boot_error(boot) : eg_strerror(rc));
		rc = EG_EXIT_HARD;
		goto out;
	}
	R.boot = boot;
#ifdef HAVE_LIBFABRIC
	R.xops = &eg_xport_fabric;
#endif
	if (!R.xops) {
		fprintf(stderr, "epgate l2-rank: built without libfabric\n");
		rc = EG_EXIT_SKIP;
		goto out;
	}
	eg_xport_opts_t xo = {.size = sizeof(xo),
			      .provider = provider,
			      .num_comms = comms,
			      .timeout_s = world.timeout_s};
	rc = R.xops->create(&world, boot, &xo, &R.xstate, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "epgate l2-rank: rank %u: transport: %s\n",
			world.rank, err);
		R.xstate = NULL;
		rc = EG_EXIT_HARD;
		goto out;
	}
	if (world.rank == 0 && results) {
		rf = fopen(results, "a");
		if (!rf) {
			fprintf(stderr,
				"epgate l2-rank: --results %s: cannot "
				"open\n",
				results);
			rc = EG_EXIT_HARD;
			goto out;
		}
	}
	all = calloc(world.size, sizeof(*all));
	if (!all) {
		rc = EG_EXIT_HARD;
		goto out;
	}
	int failed = 0, ran = 0;
	for (size_t i = 0; i < wl.n; i++) {
		const eg_workload_t *w = &wl.items[i];
		eg__l2_msg_t mine;
		char repro[4600];
		if (w->world != world.size ||
		    (filter && !strstr(w->name, filter)))
			continue;
		eg__l2_case(&R, w, &mine);
		rc = eg_boot_allgather(boot, &mine, sizeof(mine), all,
				       world.timeout_s);
		if (rc < 0) {
			fprintf(stderr, "epgate l2-rank: rank %u: %s: %s\n",
				world.rank, w->name, eg_boot_error(boot));
			rc = EG_EXIT_HARD;
			goto out;
		}
		ran++;
		for (uint32_t r = 0; r < world.size; r++)
			if (all[r].harness_err || all[r].engine_err ||
			    eg_verdict_total_wrong(&all[r].v))
				failed = 1;
		if (world.rank == 0) {
			snprintf(repro, sizeof(repro),
				 "epgate launch -n %u --ranks-per-node %u -- "
				 "epgate l2-rank --engine %s%s%s --num-comms "
				 "%u --workload %s --filter %s --iters %u",
				 world.size, world.ranks_per_node, engine,
				 provider ? " --provider " : "",
				 provider ? provider : "", comms, file, w->name,
				 iters);
			if (rf)
				eg_put_json_line(
				    rf, eg_rank_results_line(w, all, world.size,
							     repro, NULL));
		}
	}
	if (world.rank == 0) {
		eg_xport_stats_t st;
		memset(&st, 0, sizeof(st));
		if (R.xops->stats(R.xstate, &st) == EG_OK)
			printf("l2: %d workloads, engine %s, providers "
			       "intra=%s inter=%s, %u comms\n",
			       ran, engine, st.provider_intra,
			       st.provider_inter, st.num_comms);
	}
	rc = failed ? EG_EXIT_FAIL : (ran ? EG_EXIT_PASS : EG_EXIT_SKIP);
out:
	/* leave together: nobody tears down endpoints a peer still reads */
	if (boot && R.xstate && rc != EG_EXIT_HARD)
		eg_boot_barrier(boot, world.timeout_s);
	if (R.xstate)
		R.xops->destroy(R.xstate);
	if (boot)
		eg_boot_close(boot);
	if (rf)
		fclose(rf);
	free(all);
	eg_workload_list_free(&wl);
	return rc;
}
