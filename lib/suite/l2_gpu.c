/* epgate l2-gpu-rank: one rank of a GPU L2 job (under `epgate launch` or
 * srun). Like l2-rank, but on GPU memory over NCCL: each rank takes a GPU,
 * generates its input there (eg_gen_tokens_cuda / eg_gen_routing_cuda),
 * runs the nccl-a2a or nccl-dense engine, and checks its outputs with the
 * device verifier against the expected ones (computed on the host by the
 * dense reference and copied over). Verdicts meet at rank 0 over the
 * bootstrap; rank 0 appends one JSON line per workload to --results, then
 * a "transport" line (which path NCCL took, asked vs got) and a
 * "fabric-hmem" line (libfabric on GPU memory: why it is skipped). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/num.h"
#include "lib/suite/suite.h"
#include "lib/suite/cmd_gpu.h"
#include "epgate/cuda_ep.h"
#include "epgate/nccl.h"

#define EG__PROG "epgate l2-gpu-rank"

static void eg__l2g_usage(FILE *f)
{
	fputs("usage: epgate launch -n N [--ranks-per-node M] -- \\\n"
	      "         epgate l2-gpu-rank [options]\n"
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
	      "  -h, --help        this text\n"
	      "\n"
	      "Exit status: 0 all bit-exact on the path asked for, 1 a\n"
	      "mismatch, an engine error or another path, 77 no GPU or\n"
	      "built without CUDA and NCCL, 99 bad input.\n",
	      f);
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)

#include <cuda_runtime_api.h>

typedef eg_rank_verdict_t eg__l2g_msg_t;

typedef struct eg__l2g {
	const eg_world_t *world;
	const eg_engine_ops_t *ops;
	eg_nccl_t *n;
	unsigned iters;
} eg__l2g_t;

static void eg__stage(eg__l2g_msg_t *m, const char *s)
{
	snprintf(m->stage, sizeof(m->stage), "%s", s);
}

static void *eg__dmalloc(size_t n)
{
	void *p = NULL;

	if (cudaMalloc(&p, n + 16) != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	return p;
}

/* Device copies of the host's expected combine (and fp64 reference). */
typedef struct eg__bufs {
	void *x, *y, *out, *cexp;
	float *scales, *w;
	int32_t *idx;
	double *r64, *m64;
} eg__bufs_t;

static void eg__bufs_free(eg__bufs_t *b)
{
	cudaFree(b->x);
	cudaFree(b->y);
	cudaFree(b->out);
	cudaFree(b->cexp);
	cudaFree(b->scales);
	cudaFree(b->w);
	cudaFree(b->idx);
	cudaFree(b->r64);
	cudaFree(b->m64);
	memset(b, 0, sizeof(*b));
}

static int eg__h2d(void *d, const void *h, size_t n)
{
	return !n || cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) == cudaSuccess
		   ? EG_OK
		   : EG_ECUDA;
}

static void eg__say(const eg__l2g_t *R, const eg_workload_t *w,
		    const eg__l2g_msg_t *m)
{
	fprintf(stderr, EG__PROG ": rank %u: %s: %s: %s: %s\n", R->world->rank,
		w->name, m->stage, eg_strerror(m->engine_err),
		eg_nccl_error(R->n));
	fflush(stderr);
}

/* One workload on this rank's GPU; fills m. */
static void eg__l2g_case(const eg__l2g_t *R, const eg_workload_t *w,
			 eg__l2g_msg_t *m)
{
	uint32_t me = R->world->rank, T = eg_workload_tokens(w, me);
	size_t n = (size_t)T * w->hidden, K = w->topk;
	size_t xb = (size_t)w->hidden * eg_dtype_size(w->dtype);
	size_t nb = w->dtype == EG_DTYPE_FP8 ? w->hidden / EG_FP8_BLOCK : 0;
	size_t cb = eg_combine_bytes(w, me);
	size_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	void *s0 = eg_nccl_stream(R->n, 0);
	eg_engine_ctx_t ctx = {.size = sizeof(ctx),
			       .first_rank = me,
			       .n_ranks = 1,
			       .world = R->world,
			       .xport = &eg_xport_nccl,
			       .xport_state = R->n};
	int canonical = !!(R->ops->flags & EG_ENGINE_CANONICAL_ORDER);
	eg_workload_t wi;
	eg_gen_t g = {0};
	eg_recv_t recv = {0}, exp = {0}, dexp = {0};
	eg_rank_input_t in = {0};
	eg__bufs_t b = {0};
	void *engine = NULL, *cexp = NULL;
	double *r64 = NULL, *m64 = NULL;
	uint32_t cap = eg_recv_max_rows(w);
	int rc;

	memset(m, 0, sizeof(*m));
	eg_verdict_init(&m->v);
	if (eg_workload_copy(&wi, w) < 0) {
		m->harness_err = EG_ENOMEM;
		return;
	}
	cexp = malloc(cb + 1);
	r64 = malloc((n + 1) * sizeof(double));
	m64 = malloc((n + 1) * sizeof(double));
	b.x = eg__dmalloc(T * xb);
	b.scales = eg__dmalloc(T * nb * 4);
	b.idx = eg__dmalloc(T * K * 4);
	b.w = eg__dmalloc(T * K * 4);
	b.y = eg__dmalloc((size_t)cap * w->hidden * csz);
	b.out = eg__dmalloc(cb);
	b.cexp = eg__dmalloc(cb);
	b.r64 = eg__dmalloc(n * 8);
	b.m64 = eg__dmalloc(n * 8);
	rc = eg_recv_alloc_cuda(&recv, w, me, cap);
	if (rc < 0 || !cexp || !r64 || !m64 || !b.x || !b.scales || !b.idx ||
	    !b.w || !b.y || !b.out || !b.cexp || !b.r64 || !b.m64) {
		m->harness_err = rc < 0 ? rc : EG_ENOMEM;
		goto done;
	}
	rc = R->ops->create(w, &ctx, &engine);
	if (rc < 0) {
		engine = NULL;
		m->engine_err = rc;
		eg__stage(m, "create");
		goto done;
	}
	in.rank = me;
	in.tokens = T;
	in.dtype = w->dtype;
	in.hidden = w->hidden;
	in.topk = w->topk;
	in.x = b.x;
	in.scales = nb ? b.scales : NULL;
	in.topk_idx = b.idx;
	in.topk_w = b.w;
	for (unsigned it = 0; it < R->iters; it++) {
		wi.iter = w->iter + it;
		m->iter = wi.iter;
		eg_gen_fini(&g);
		if ((rc = eg_gen_init(&g, &wi)) < 0 ||
		    (rc = eg_gen_tokens_cuda(&g, me, T, b.x, b.scales, s0)) <
			0 ||
		    (rc = eg_gen_routing_cuda(&g, me, T, b.idx, b.w, s0)) < 0) {
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
		eg_recv_free_cuda(&dexp);
		if ((rc = eg_ref_dispatch(&wi, &g, me, &exp)) < 0 ||
		    (rc = eg_recv_alloc_cuda(&dexp, w, me, exp.capacity)) < 0 ||
		    (rc = eg_recv_copy_cuda(&dexp, &exp, 1)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc = eg_verify_dispatch_cuda(&wi, &dexp, &recv, &m->v);
		if (rc < 0 && rc != EG_EMISMATCH) {
			m->harness_err = rc;
			goto done;
		}
		if (eg_verdict_total_wrong(&m->v))
			eg__stage(m, "dispatch"); /* peers still combine */
		rc = eg_ep_expert_cuda(&g, &recv, b.y, s0);
		if (rc < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc = R->ops->combine(engine, &recv, (const void *const *)&b.y,
				     (void *const *)&b.out);
		if (rc < 0) {
			m->engine_err = rc;
			eg__stage(m, "combine");
			eg__say(R, w, m);
			goto done;
		}
		if (eg_verdict_total_wrong(&m->v))
			goto done;
		if ((rc = eg_ref_combine(&wi, &g, me, cexp, r64, m64)) < 0 ||
		    (rc = eg__h2d(b.cexp, cexp, cb)) < 0 ||
		    (rc = eg__h2d(b.r64, r64, n * 8)) < 0 ||
		    (rc = eg__h2d(b.m64, m64, n * 8)) < 0) {
			m->harness_err = rc;
			goto done;
		}
		rc = EG_OK;
		/* bits where any order gives them (exact) or the engine
		 * promises the canonical order; the bound in random mode */
		if (wi.data == EG_DATA_EXACT || canonical)
			rc = eg_verify_combine_cuda(&wi, me, EG_COMPARE_BITS,
						    b.cexp, NULL, NULL, b.out,
						    &m->v);
		if ((rc == EG_OK || rc == EG_EMISMATCH) &&
		    wi.data == EG_DATA_RANDOM)
			rc = eg_verify_combine_cuda(&wi, me, EG_COMPARE_BOUNDED,
						    NULL, b.r64, b.m64, b.out,
						    &m->v);
		if (rc < 0 && rc != EG_EMISMATCH) {
			m->harness_err = rc;
			goto done;
		}
		if (eg_verdict_total_wrong(&m->v)) {
			eg__stage(m, "combine");
			goto done;
		}
	}
done:
	if (engine)
		R->ops->destroy(engine);
	eg_recv_free_cuda(&recv);
	eg_recv_free_cuda(&dexp);
	eg_recv_free(&exp);
	eg__bufs_free(&b);
	eg_gen_fini(&g);
	free(cexp);
	free(r64);
	free(m64);
	eg_workload_fini(&wi);
}

typedef struct eg__l2g_opts {
	const char *engine, *file, *filter, *results, *xnode, *log_dir;
	eg_nccl_path_t path;
	unsigned comms, iters;
	int device;
} eg__l2g_opts_t;

/* What NCCL took, at every rank; rank 0 says whether it was asked for. */
typedef struct eg__ev_msg {
	int32_t rc;
	char summary[96], why[256];
} eg__ev_msg_t;

static int eg__l2g_run(const eg__l2g_opts_t *o, eg_world_t *world,
		       eg_boot_t *boot, const eg_workload_list_t *wl)
{
	eg_nccl_opts_t no = {.size = sizeof(no),
			     .num_comms = o->comms,
			     .timeout_s = world->timeout_s,
			     .device = o->device,
			     .path = o->path,
			     .xnode_mode = o->xnode,
			     .log_dir = o->log_dir};
	eg__l2g_t R = {.world = world, .iters = o->iters};
	eg__l2g_msg_t *all = NULL;
	eg__ev_msg_t ev, *evs = NULL;
	eg_nccl_evidence_t e;
	FILE *rf = NULL;
	char err[512], transport[96] = "none";
	int rc, failed = 0, ran = 0, skip = 0;

	R.ops = eg_engine_nccl_find(o->engine);
	rc = eg_nccl_open(&R.n, world, boot, &no, err, sizeof(err));
	/* every rank learns whether all of them have a GPU */
	int32_t mine = rc, *rcs = calloc(world->size, sizeof(*rcs));
	if (!rcs ||
	    eg_boot_allgather(boot, &mine, 4, rcs, world->timeout_s) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n",
			world->rank, eg_boot_error(boot));
		free(rcs);
		eg_nccl_close(R.n);
		return EG_EXIT_HARD;
	}
	for (uint32_t r = 0; r < world->size; r++)
		skip |= rcs[r] == EG_ENOSYS;
	free(rcs);
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: NCCL: %s\n", world->rank,
			err);
		return skip ? EG_EXIT_SKIP : EG_EXIT_HARD;
	}
	if (world->rank == 0 && o->results && !(rf = fopen(o->results, "a"))) {
		fprintf(stderr, EG__PROG ": --results %s: cannot open\n",
			o->results);
		eg_nccl_close(R.n);
		return EG_EXIT_HARD;
	}
	all = calloc(world->size, sizeof(*all));
	evs = calloc(world->size, sizeof(*evs));
	if (!all || !evs) {
		rc = EG_EXIT_HARD;
		goto out;
	}
	for (size_t i = 0; i < wl->n; i++) {
		const eg_workload_t *w = &wl->items[i];
		eg__l2g_msg_t m;
		char repro[4600];

		if (w->world != world->size ||
		    (o->filter && !strstr(w->name, o->filter)))
			continue;
		eg__l2g_case(&R, w, &m);
		rc = eg_boot_allgather(boot, &m, sizeof(m), all,
				       world->timeout_s);
		if (rc < 0) {
			fprintf(stderr, EG__PROG ": rank %u: %s: %s\n",
				world->rank, w->name, eg_boot_error(boot));
			rc = EG_EXIT_HARD;
			goto out;
		}
		ran++;
		for (uint32_t r = 0; r < world->size; r++)
			if (all[r].harness_err || all[r].engine_err ||
			    eg_verdict_total_wrong(&all[r].v))
				failed = 1;
		if (ran == 1 && eg_nccl_evidence(R.n, &e) == EG_OK)
			eg_nccl_evidence_summary(&e, transport,
						 sizeof(transport));
		if (world->rank == 0) {
			snprintf(repro, sizeof(repro),
				 "epgate launch -n %u --ranks-per-node %u -- "
				 "epgate l2-gpu-rank --engine %s --num-comms "
				 "%u --path %s --workload %s --filter %s "
				 "--iters %u",
				 world->size, world->ranks_per_node, o->engine,
				 o->comms, eg_nccl_path_name(o->path), o->file,
				 w->name, o->iters);
			eg_put_json_line(
			    rf, eg_rank_results_line(
				    w, all, world->size, repro,
				    json_pack("{s:s, s:s}", "memory", "gpu",
					      "transport", transport)));
		}
		if (eg_nccl_broken(R.n))
			break; /* aborted communicators run nothing more */
	}

	/* the evidence: every rank reads its own log */
	memset(&ev, 0, sizeof(ev));
	memset(&e, 0, sizeof(e));
	ev.rc = eg_nccl_evidence(R.n, &e);
	if (ev.rc == EG_OK)
		ev.rc = eg_nccl_evidence_check(&e, o->path, world, ev.why,
					       sizeof(ev.why));
	else
		snprintf(ev.why, sizeof(ev.why),
			 "cannot read NCCL's log %.200s", e.log);
	eg_nccl_evidence_summary(&e, ev.summary, sizeof(ev.summary));
	if (world->size == 1 && ev.rc == EG_ENOENT) {
		ev.rc = EG_OK; /* one rank has no peer to connect */
		snprintf(ev.why, sizeof(ev.why), "one rank: no peers");
	}
	rc = eg_boot_allgather(boot, &ev, sizeof(ev), evs, world->timeout_s);
	if (rc < 0) {
		rc = EG_EXIT_HARD;
		goto out;
	}
	int path_bad = 0;
	for (uint32_t r = 0; r < world->size; r++)
		path_bad |= evs[r].rc != EG_OK;
	if (world->rank == 0) {
		json_t *line = json_object(), *ranks = json_array();
		char hm[256];
		int hrc = eg_fabric_hmem_probe(hm, sizeof(hm));

		for (uint32_t r = 0; r < world->size; r++)
			json_array_append_new(
			    ranks,
			    json_pack("{s:i, s:s, s:s}", "rank", (int)r, "via",
				      evs[r].summary, "why", evs[r].why));
		json_object_set_new(line, "workload", json_string("transport"));
		json_object_set_new(line, "status",
				    json_string(path_bad ? "fail" : "pass"));
		json_object_set_new(line, "asked",
				    json_string(eg_nccl_path_name(o->path)));
		json_object_set_new(line, "nccl",
				    json_string(eg_nccl_version(R.n)));
		json_object_set_new(line, "net", json_string(e.net));
		json_object_set_new(line, "ranks", ranks);
		json_object_set_new(line, "log", json_string(e.log));
		eg_put_json_line(rf, line);
		/* the fabric transport on GPU memory: never silently absent */
		line =
		    json_pack("{s:s, s:s, s:s}", "workload", "fabric-hmem",
			      "status", "skip", "why", hrc == EG_OK ? "" : hm);
		if (hrc == EG_OK) {
			char why[320];
			snprintf(why, sizeof(why),
				 "%s, but epgate's fabric transport moves host "
				 "memory only",
				 hm);
			json_object_set_new(line, "why", json_string(why));
		}
		eg_put_json_line(rf, line);
		printf("l2-gpu: %d workloads, engine nccl-%s, %u comms, %s; "
		       "transport %s (asked %s)%s%s\n",
		       ran, o->engine, o->comms, eg_nccl_version(R.n),
		       ev.summary, eg_nccl_path_name(o->path),
		       path_bad ? ": " : "", path_bad ? evs[0].why : "");
		for (uint32_t r = 0; path_bad && r < world->size; r++)
			if (evs[r].rc != EG_OK)
				fprintf(stderr, EG__PROG ": rank %u: %s\n", r,
					evs[r].why);
	}
	rc = failed || path_bad ? EG_EXIT_FAIL
				: (ran ? EG_EXIT_PASS : EG_EXIT_SKIP);
out:
	/* leave together: nobody tears down what a peer still reads */
	if (rc != EG_EXIT_HARD && !eg_nccl_broken(R.n))
		eg_boot_barrier(boot, world->timeout_s);
	eg_nccl_close(R.n);
	if (rf)
		fclose(rf);
	free(all);
	free(evs);
	return rc;
}

#endif

int eg_cmd_l2_gpu_rank(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"engine", required_argument, NULL, 'e'},
	    {"num-comms", required_argument, NULL, 'k'},
	    {"path", required_argument, NULL, 'P'},
	    {"xnode-mode", required_argument, NULL, 'x'},
	    {"device", required_argument, NULL, 'd'},
	    {"workload", required_argument, NULL, 'w'},
	    {"filter", required_argument, NULL, 'f'},
	    {"iters", required_argument, NULL, 'i'},
	    {"results", required_argument, NULL, 'r'},
	    {"log-dir", required_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *engine = "a2a", *file = NULL, *filter = NULL;
	const char *results = NULL, *xnode = NULL, *log_dir = NULL;
	const char *path = "auto";
	unsigned comms = 1, iters = 2;
	int device = -1, c;
	char msg[256];

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		unsigned v;

		switch (c) {
		case 'e':
			engine = optarg;
			break;
		case 'k':
		case 'i':
		case 'd':
			if (eg_parse_uint(c == 'k'   ? "--num-comms"
					  : c == 'i' ? "--iters"
						     : "--device",
					  optarg, c != 'd',
					  c == 'k' ? EG_COMMS_MAX : 100000, &v,
					  msg, sizeof(msg)) < 0) {
				fprintf(stderr, EG__PROG ": %s\n", msg);
				return EG_EXIT_HARD;
			}
			if (c == 'k')
				comms = (unsigned)v;
			else if (c == 'i')
				iters = (unsigned)v;
			else
				device = (int)v;
			break;
		case 'P':
			path = optarg;
			break;
		case 'x':
			xnode = optarg;
			break;
		case 'w':
			file = optarg;
			break;
		case 'f':
			filter = optarg;
			break;
		case 'r':
			results = optarg;
			break;
		case 'L':
			log_dir = optarg;
			break;
		case 'h':
			eg__l2g_usage(stdout);
			return EG_EXIT_PASS;
		default:
			fputs(EG__PROG ": see 'epgate l2-gpu-rank --help'\n",
			      stderr);
			return EG_EXIT_HARD;
		}
	}
	if (strcmp(engine, "a2a") && strcmp(engine, "dense")) {
		fprintf(stderr,
			EG__PROG ": --engine: \"%s\": want a2a or "
				 "dense\n",
			engine);
		return EG_EXIT_HARD;
	}
	if (xnode && strcmp(xnode, "hostid") && strcmp(xnode, "nop2p")) {
		fprintf(stderr, EG__PROG ": --xnode-mode: want hostid or "
					 "nop2p\n");
		return EG_EXIT_HARD;
	}
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
	eg__l2g_opts_t o = {.engine = engine,
			    .filter = filter,
			    .results = results,
			    .xnode = xnode,
			    .log_dir = log_dir,
			    .comms = comms,
			    .iters = iters,
			    .device = device};
	eg_world_t world;
	eg_boot_t *boot = NULL;
	eg_workload_list_t wl = {0};
	eg_overrides_t ov = {0};
	char err[512], dpath[4096];
	int rc;

	if (eg_nccl_path_parse(path, &o.path) < 0) {
		fprintf(stderr, EG__PROG ": --path: want auto, nvlink or "
					 "xnode\n");
		return EG_EXIT_HARD;
	}
	if (eg_world_from_env(&world, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	if (!file) {
		if (eg_find_data("fixtures/workloads/l2-matrix.ini", dpath,
				 sizeof(dpath)) < 0) {
			fprintf(stderr,
				EG__PROG ": cannot find "
					 "fixtures/workloads/l2-matrix.ini\n");
			return EG_EXIT_HARD;
		}
		file = dpath;
	}
	o.file = file;
	if (eg_cli_load_workloads(EG__PROG, file, &ov, &wl) < 0)
		return EG_EXIT_HARD;
	rc = eg_boot_open(&boot, &world, world.timeout_s);
	if (rc < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n",
			world.rank,
			boot ? eg_boot_error(boot) : eg_strerror(rc));
		eg_workload_list_free(&wl);
		return EG_EXIT_HARD;
	}
	rc = eg__l2g_run(&o, &world, boot, &wl);
	eg_boot_close(boot);
	eg_workload_list_free(&wl);
	return rc;
#else
	(void)file, (void)filter, (void)results, (void)log_dir, (void)path;
	(void)comms, (void)iters, (void)device;
	fputs(EG__PROG ": built without CUDA and NCCL\n", stderr);
	return EG_EXIT_SKIP;
#endif
}
