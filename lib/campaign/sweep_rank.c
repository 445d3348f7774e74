/* epgate bench-rank: one rank of a sweep job.  Every rank of the job
 * (under `epgate launch`, or srun under Slurm) parses the same profile,
 * keeps the points whose world and node count are this job's (and, with
 * --sweep, of that sweep), and measures them in order through the driver
 * (lib/bench/driver.c).  Rank 0 writes each point as soon as it is
 * measured: into a results file (--results, under Slurm) or one JSON
 * line per point into a spool file the orchestrator reads (--spool). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "lib/suite/suite.h"
#include "lib/campaign/sweep.h"

#define EG__PROG "epgate bench-rank"

/* Points of this job: same world and nodes, and a chosen sweep. */
static int eg__mine(const eg_bench_rank_opts_t *o, const eg_bench_point_t *pt,
		    const eg_world_t *w)
{
	int ok = !o->n_sweeps;

	for (unsigned i = 0; i < o->n_sweeps; i++)
		ok |= !strcmp(o->sweeps[i], pt->suite);
	return ok && pt->v[EG_AXIS_WORLD].num == w->size &&
	       pt->v[EG_AXIS_NODES].num == w->nodes;
}

/* Where rank 0 puts the points. */
typedef struct eg__sink {
	eg_results_writer_t *wr;
	FILE *spool;
} eg__sink_t;

static int eg__sink_point(eg__sink_t *s, const eg_point_t *p)
{
	char err[EG_RESULTS_ERR_MAX];

	if (s->wr) {
		if (eg_results_append(s->wr, p, err, sizeof(err)) < 0) {
			fprintf(stderr, EG__PROG ": %s\n", err);
			return EG_EIO;
		}
		return EG_OK;
	}
	/* serialised once, here; parsed once, by the orchestrator */
	char *line;
	int rc = eg_point_line(p, &line, "spool", err, sizeof(err));

	if (rc) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return rc;
	}
	rc = fprintf(s->spool, "%s\n", line) > 0 && fflush(s->spool) == 0
		 ? EG_OK
		 : EG_EIO;
	free(line);
	if (rc)
		fprintf(stderr, EG__PROG ": cannot write the spool file\n");
	return rc;
}

/* A point that failed ("failed") or whose arm cannot run here
 * ("skipped": its plugin or adapter absent, a library the adapter cannot
 * import), with its reason; under Slurm (a results file) the reason is
 * the rank's log line alone. */
static void eg__sink_mark(eg__sink_t *s, const char *what, const char *id,
			  const char *why)
{
	json_t *j;
	char *line;

	if (!s->spool)
		return;
	j = json_pack("{s:s, s:s}", what, id, "why", why);
	line = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (line) {
		fprintf(s->spool, "%s\n", line);
		fflush(s->spool);
	}
	free(line);
	json_decref(j);
}

/* Hosts of the job (each rank's name, once). */
static json_t *eg__hosts(eg_boot_t *b, const eg_world_t *w, double tmo)
{
	char me[64] = "", *all = calloc(w->size, 64);
	json_t *arr = json_array();

	if (!all || !arr)
		goto fail;
	gethostname(me, sizeof(me) - 1);
	if (eg_boot_allgather(b, me, 64, all, tmo) < 0)
		goto fail;
	for (uint32_t r = 0; r < w->size; r++) {
		const char *h = all + (size_t)r * 64;
		int seen = 0;
		size_t i;
		json_t *v;

		json_array_foreach(arr, i, v) seen |=
		    !strcmp(json_string_value(v), h);
		if (!seen && json_array_append_new(arr, json_string(h)))
			goto fail;
	}
	free(all);
	return arr;
fail:
	free(all);
	json_decref(arr);
	return NULL;
}

/* The raw numbers behind the model for K comms: the profile's, or a raw
 * phase measured once per K in this job. */
static const eg_bench_model_t *eg__raw_for(eg_bench_model_t *cache,
					   const eg_profile_t *p,
					   const eg_world_t *w, eg_boot_t *b,
					   uint32_t K)
{
	eg_bench_model_t *r = &cache[K];
	char err[512];

	if (r->src != EG_BENCH_MODEL_NONE || r->n == (size_t)-1)
		return r;
	if (p->model_bw_gbps > 0) {
		r->src = EG_BENCH_MODEL_PROFILE;
		r->bw_gbps = p->model_bw_gbps;
		r->post_rate = p->model_post_rate;
		return r;
	}
	if (strcmp(p->transport, "fabric") || w->size < 2 ||
	    eg_bench_model_fabric(w, b, p->provider, K, p, r, err,
				  sizeof(err)) < 0) {
		if (!strcmp(p->transport, "fabric") && w->size >= 2 && !w->rank)
			fprintf(stderr, EG__PROG ": %s; no model line\n", err);
		memset(r, 0, sizeof(*r));
		r->n = (size_t)-1; /* tried: do not try again */
		return r;
	}
	if (!w->rank)
		printf("bench: raw phase, %u comm(s), %s: %.3g GB/s per rank, "
		       "%.0f ops/s per endpoint\n",
		       K, r->provider, r->bw_gbps, r->post_rate);
	return r;
}

/* One entry of the orchestrator's plan: a point of the profile, the
 * engine that runs it and the arm it is written as; with_next: measured
 * together with the next entry, step by step (an A/B pair). */
typedef struct eg__entry {
	size_t idx;
	const char *engine, *label;
	int with_next;
} eg__entry_t;

/* One job's state on this rank. */
typedef struct eg__rank {
	const eg_bench_rank_opts_t *o;
	eg_world_t w;
	eg_boot_t *b;
	eg_profile_t p;
	const eg_bench_backend_ops_t *be;
	eg_bench_point_t *pts;
	size_t n, mine, done;
	unsigned failed, skipped, measured;
	eg_bench_model_t raw[EG_COMMS_MAX + 1];
	eg__sink_t sink;
	/* EPGATE_BENCH_PLAN: the points of this launch, in order */
	char *plan_text;
	eg__entry_t *plan;
	size_t n_plan;
} eg__rank_t;

/* The plan the orchestrator gives a launch (EPGATE_BENCH_PLAN): one line
 * per point, "INDEX<TAB>ENGINE<TAB>ARM[<TAB>+]", INDEX into the profile's
 * points; "+": measured together with the next line's point, step by
 * step, when it is the same point but for the arm (the two arms of an
 * A/B pair; with interleave: steps, the arms of one shape).
 * Returns 0, or an error after a message. */
static int eg__plan(eg__rank_t *r)
{
	const char *env = getenv("EPGATE_BENCH_PLAN");
	char *line, *save = NULL;

	if (!env || !*env)
		return 0;
	if (!(r->plan_text = strdup(env)) ||
	    !(r->plan = calloc(strlen(env) / 4 + 1, sizeof(*r->plan))))
		return EG_ENOMEM;
	for (line = strtok_r(r->plan_text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t1 = strchr(line, '\t'),
		     *t2 = t1 ? strchr(t1 + 1, '\t') : NULL, *end;
		unsigned long i = strtoul(line, &end, 10);
		eg__entry_t *e = &r->plan[r->n_plan];

		if (!t2 || end != t1 || i >= r->n || t2 == t1 + 1 || !t2[1] ||
		    r->pts[i].v[EG_AXIS_WORLD].num != r->w.size ||
		    r->pts[i].v[EG_AXIS_NODES].num != r->w.nodes) {
			fprintf(stderr,
				EG__PROG ": EPGATE_BENCH_PLAN: bad "
					 "entry \"%s\"\n",
				line);
			return EG_EINVAL;
		}
		char *t3 = strchr(t2 + 1, '\t');

		if (t3 && (t3 == t2 + 1 || strcmp(t3 + 1, "+"))) {
			fprintf(stderr,
				EG__PROG ": EPGATE_BENCH_PLAN: bad entry "
					 "\"%s\" (a fourth field is +)\n",
				line);
			return EG_EINVAL;
		}
		*t1 = *t2 = 0;
		if (t3)
			*t3 = 0;
		*e = (eg__entry_t){i, t1 + 1, t2 + 1, t3 != NULL};
		r->n_plan++;
	}
	r->mine = r->n_plan;
	return 0;
}

/* Rank 0's sink: the results file (with the job's context) or the
 * spool. */
static int eg__sink_open(eg__rank_t *r)
{
	char err[EG_PROFILE_ERR_MAX];
	json_t *hosts =
	    r->o->results ? eg__hosts(r->b, &r->w, r->p.timeout_s) : NULL;
	int rc = EG_OK;

	if (!r->w.rank && r->o->results) {
		json_t *ctx = eg_bench_context(&r->p, hosts);

		rc = ctx ? eg_results_create(&r->sink.wr, r->o->results, 0, ctx,
					     err, sizeof(err))
			 : EG_ENOMEM;
		json_decref(ctx);
		if (rc < 0)
			fprintf(stderr, EG__PROG ": %s\n",
				rc == EG_ENOMEM ? "out of memory" : err);
	} else if (!r->w.rank && !(r->sink.spool = fopen(r->o->spool, "a"))) {
		fprintf(stderr, EG__PROG ": cannot open %s\n", r->o->spool);
		rc = EG_EIO;
	}
	json_decref(hosts);
	return rc;
}

/* World, profile, backend, this job's points, bootstrap, sink. Returns
 * EG_EXIT_PASS to go on, else the exit code. */
static int eg__rank_open(eg__rank_t *r)
{
	char err[EG_PROFILE_ERR_MAX];
	int rc;

	if (eg_world_from_env(&r->w, err, sizeof(err)) < 0 ||
	    eg_profile_load(&r->p, r->o->profile, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	/* the profile's knobs, unless the environment sets them already */
	for (size_t i = 0; i < r->p.n_env; i++)
		setenv(r->p.env_keys[i], r->p.env_vals[i], 0);
	/* the bridge's interpreter (python:), as the environment's own */
	{
		char py[4096];
		const char *v = eg_profile_python(&r->p, py, sizeof(py));

		if (v)
			setenv("EPGATE_PYTHON", v, 0);
	}
	if (!(r->be = eg_bench_backend_find(r->p.transport))) {
		if (!r->w.rank)
			fprintf(stderr,
				EG__PROG ": transport \"%s\" is not built "
					 "into this epgate\n",
				r->p.transport);
		return EG_EXIT_SKIP;
	}
	if (eg_profile_points(&r->p, &r->pts, &r->n, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s\n", err);
		return EG_EXIT_HARD;
	}
	if (eg__plan(r) < 0)
		return EG_EXIT_HARD;
	for (size_t i = 0; !r->plan && i < r->n; i++)
		r->mine += eg__mine(r->o, &r->pts[i], &r->w);
	if (!r->mine) {
		if (!r->w.rank)
			fprintf(stderr,
				EG__PROG ": no point of profile %s has world "
					 "%u on %u node(s)\n",
				r->p.name, r->w.size, r->w.nodes);
		return EG_EXIT_SKIP;
	}
	if ((rc = eg_boot_open(&r->b, &r->w, r->p.timeout_s)) < 0) {
		fprintf(stderr, EG__PROG ": rank %u: bootstrap: %s\n",
			r->w.rank,
			r->b ? eg_boot_error(r->b) : eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	return eg__sink_open(r) < 0 ? EG_EXIT_HARD : EG_EXIT_PASS;
}

/* A point that failed verification: not measured, the job goes on. */
static void eg__point_wrong(eg__rank_t *r, const eg_bench_point_t *pt,
			    const char *err)
{
	r->failed++;
	if (r->w.rank)
		return;
	fprintf(stderr, EG__PROG ": %s: %s\n", pt->id, err);
	eg__sink_mark(&r->sink, "failed", pt->id, err);
	printf("bench: point %zu/%zu %s: FAILED verification\n", r->done,
	       r->mine, pt->id);
	fflush(stdout);
}

/* Rank 0: the measured point into the sink, and its line. */
static int eg__point_done(eg__rank_t *r, const eg_bench_point_t *pt,
			  eg_point_t *out)
{
	const json_t *bd = json_object_get(out->evidence, "bound");
	int rc = eg__sink_point(&r->sink, out);

	printf("bench: point %zu/%zu %s: step %.1f us (dispatch %.1f, combine "
	       "%.1f), %.0f tok/s%s%s\n",
	       r->done, r->mine, pt->id, eg_bench_point_median(out, "step_us"),
	       eg_bench_point_median(out, "dispatch_us"),
	       eg_bench_point_median(out, "combine_us"),
	       eg_bench_point_median(out, "tok_s"), bd ? ", bound " : "",
	       bd ? json_string_value(bd) : "");
	fflush(stdout);
	eg_point_fini(out);
	return rc;
}

/* The measured point written as arm label (a planted engine keeps the
 * arm it stands in for). */
static int eg__relabel(const eg__rank_t *r, const eg_bench_point_t *pt,
		       const char *label, eg_point_t *out)
{
	eg_bench_point_t q = *pt;
	char *id, *arm;

	if (!label || !strcmp(label, pt->arm))
		return EG_OK;
	eg_bench_point_set_arm(&r->p, &q, label);
	id = strdup(q.id);
	arm = strdup(label);
	if (!id || !arm) {
		free(id);
		free(arm);
		return EG_ENOMEM;
	}
	free(out->id);
	free(out->arm);
	out->id = id;
	out->arm = arm;
	return EG_OK;
}

/* A point whose arm cannot run here: a skip saying why; the job goes
 * on with its other points. */
static void eg__point_skipped(eg__rank_t *r, const eg_bench_point_t *pt,
			      const char *why)
{
	r->skipped++;
	if (r->w.rank)
		return;
	fprintf(stderr, EG__PROG ": %s: skipped: %s\n", pt->id, why);
	eg__sink_mark(&r->sink, "skipped", pt->id, why);
	printf("bench: point %zu/%zu %s: skipped, not runnable here\n", r->done,
	       r->mine, pt->id);
	fflush(stdout);
}

/* One point of this job in k arms measured together (one arm: a plain
 * point; two or more: an A/B pair or the arms of one shape, interleaved
 * step by step), each written as its label (NULL: its arm).  A named arm
 * (arms: of the profile) runs its engine spec.  Returns EG_OK (measured,
 * or wrong or not runnable here, and counted) or an error that ends the
 * job. */
static int eg__rank_point(eg__rank_t *r, const eg_bench_ctx_t *ctx,
			  const eg_bench_point_t *const *pt,
			  const char *const *label, size_t k)
{
	char err[EG_PROFILE_ERR_MAX], eng[EG_BENCH_ARMS_MAX][1024];
	eg_bench_arm_t arm[EG_BENCH_ARMS_MAX];
	eg_bench_point_t run[EG_BENCH_ARMS_MAX], as[EG_BENCH_ARMS_MAX];
	const char *name[EG_BENCH_ARMS_MAX];
	eg_point_t out[EG_BENCH_ARMS_MAX];
	eg_workload_t wl;
	int rc;

	for (size_t j = 0; j < k; j++) {
		/* as: the point as written; run: what runs it */
		name[j] = label[j] ? label[j] : pt[j]->arm;
		as[j] = run[j] = *pt[j];
		eg_bench_point_set_arm(&r->p, &as[j], name[j]);
		if (eg_profile_arm_engine(&r->p, pt[j], eng[j],
					  sizeof(eng[j])) < 0) {
			fprintf(stderr, EG__PROG ": %s: engine too long\n",
				as[j].id);
			return EG_EINVAL;
		}
		eg_bench_point_set_arm(&r->p, &run[j], eng[j]);
		arm[j] = (eg_bench_arm_t){.pt = &run[j], .out = &out[j]};
	}
	if (eg_bench_point_workload(&r->p, pt[0], &wl, err, sizeof(err)) < 0) {
		fprintf(stderr, EG__PROG ": %s: %s\n", as[0].id, err);
		return EG_EINVAL;
	}
	const eg_bench_model_t *raw = eg__raw_for(
	    r->raw, &r->p, &r->w, r->b, pt[0]->v[EG_AXIS_NUM_COMMS].num);
	rc = eg_bench_measure_arms(ctx, arm, k, &wl, raw, err, sizeof(err));
	eg_workload_fini(&wl);
	if (rc == EG_ENOSYS) {
		/* not measurable here (no CUDA device, a plugin absent) */
		arm[0].rc = rc;
		snprintf(arm[0].err, sizeof(arm[0].err), "%.*s",
			 (int)sizeof(arm[0].err) - 1, err);
		rc = EG_OK;
	}
	if (rc < 0) {
		/* the job's collectives are in an unknown state */
		fprintf(stderr, EG__PROG ": rank %u: %s: %s\n", r->w.rank,
			as[0].id, err);
		for (size_t j = 0; !r->w.rank && j < k; j++)
			eg__sink_mark(&r->sink, "failed", as[j].id, err);
		return rc;
	}
	/* rank 0 writes each measured arm (eg__point_done frees it) */
	for (size_t j = 0; j < k; j++) {
		r->done++;
		if (arm[j].rc == EG_ENOSYS)
			eg__point_skipped(r, &as[j], arm[j].err);
		else if (arm[j].rc == EG_EMISMATCH)
			eg__point_wrong(r, &as[j], arm[j].err);
		else if (r->measured++, r->w.rank)
			continue;
		else if (rc == EG_OK &&
			 (rc = eg__relabel(r, &run[j], name[j], &out[j])) == 0)
			rc = eg__point_done(r, &as[j], &out[j]);
		else
			eg_point_fini(&out[j]);
	}
	return rc;
}

/* A point's outcome as the job's exit code so far. */
static int eg__exit(int rc)
{
	return rc == EG_ENOSYS ? EG_EXIT_SKIP
	       : rc < 0	       ? EG_EXIT_HARD
			       : EG_EXIT_PASS;
}

/* The plan's entry *i and, when it is measured with them, the entries
 * after it of the same point; *i moves past them. */
static int eg__rank_planned(eg__rank_t *r, const eg_bench_ctx_t *ctx, size_t *i)
{
	eg_bench_point_t q[EG_BENCH_ARMS_MAX];
	const eg_bench_point_t *pt[EG_BENCH_ARMS_MAX];
	const char *label[EG_BENCH_ARMS_MAX];
	size_t k = 0;

	do {
		const eg__entry_t *e = &r->plan[*i];

		q[k] = r->pts[e->idx];
		eg_bench_point_set_arm(&r->p, &q[k], e->engine);
		pt[k] = &q[k];
		label[k++] = e->label;
	} while (r->plan[(*i)++].with_next && *i < r->n_plan &&
		 eg_bench_point_same_shape(&r->pts[r->plan[*i].idx],
					   &r->pts[r->plan[*i - 1].idx]) &&
		 k < EG_BENCH_ARMS_MAX);
	if (k > 1 && !r->w.rank) {
		printf("bench: %zu points together, step by step:", k);
		for (size_t j = 0; j < k; j++)
			printf(" %s", pt[j]->id);
		printf("\n");
	}
	return eg__rank_point(r, ctx, pt, label, k);
}

static void eg__rank_close(eg__rank_t *r, int ex)
{
	for (unsigned k = 0; k <= EG_COMMS_MAX; k++)
		if (r->raw[k].n != (size_t)-1)
			eg_bench_model_fini(&r->raw[k]);
	if (r->b) {
		/* nobody tears down while a peer may still be in a step */
		if (ex != EG_EXIT_HARD)
			eg_boot_barrier(r->b, r->p.timeout_s);
		eg_boot_close(r->b);
	}
	if (r->sink.wr)
		eg_results_close(r->sink.wr);
	if (r->sink.spool)
		fclose(r->sink.spool);
	free(r->pts);
	free(r->plan);
	free(r->plan_text);
	eg_profile_free(&r->p);
}

static int eg__rank_run(const eg_bench_rank_opts_t *o)
{
	eg__rank_t r;
	int ex;

	memset(&r, 0, sizeof(r));
	r.o = o;
	ex = eg__rank_open(&r);
	if (ex == EG_EXIT_PASS) {
		eg_bench_ctx_t ctx = {.world = &r.w,
				      .boot = r.b,
				      .backend = r.be,
				      .provider = r.p.provider,
				      .timeout_s = r.p.timeout_s,
				      .device = -1};

		if (!r.w.rank)
			printf("bench: profile %s, %zu point(s) on %u rank(s), "
			       "%u node(s), transport %s\n",
			       r.p.name, r.mine, r.w.size, r.w.nodes,
			       r.p.transport);
		fflush(stdout);
		for (size_t i = 0; !r.plan && i < r.n && ex == EG_EXIT_PASS;
		     i++) {
			const eg_bench_point_t *pt = &r.pts[i];
			const char *none = NULL;

			if (eg__mine(o, pt, &r.w))
				ex = eg__exit(
				    eg__rank_point(&r, &ctx, &pt, &none, 1));
		}
		for (size_t i = 0; i < r.n_plan && ex == EG_EXIT_PASS;)
			ex = eg__exit(eg__rank_planned(&r, &ctx, &i));
		if (ex == EG_EXIT_PASS && r.failed)
			ex = EG_EXIT_FAIL;
		/* nothing measured, nothing wrong: nothing runs here */
		else if (ex == EG_EXIT_PASS && r.skipped && !r.measured)
			ex = EG_EXIT_SKIP;
	}
	eg__rank_close(&r, ex);
	return ex;
}

int eg_bench_rank_run(const eg_bench_rank_opts_t *o)
{
	eg_bench_rank_opts_t c = *o;
	char path[4096];

	if (!o->profile || !o->results == !o->spool) {
		fputs(EG__PROG ": give a profile and one of --results or "
			       "--spool; see --help\n",
		      stderr);
		return EG_EXIT_HARD;
	}
	if (eg_bench_find_profile(o->profile, path, sizeof(path)) < 0) {
		fprintf(stderr, EG__PROG ": no profile \"%s\"\n", o->profile);
		return EG_EXIT_HARD;
	}
	c.profile = path;
	return eg__rank_run(&c);
}
