/* L1: each workload through an in-process engine (all ranks in this
 * process), dispatch and combine verified against the dense reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/suite/suite.h"

#define EG__DETAIL_MAX 4096

typedef struct eg__case {
	const eg_workload_t *w;
	const eg_engine_ops_t *ops;
	eg_gen_t gen;
	void *engine;
	eg_rank_input_t *in;
	eg_recv_t *recv;
	void **y, **out;
	eg_verdict_t v;
	const char *stage; /* where it failed */
	unsigned iter;
	int harness_err, engine_err;
	char emsg[1024]; /* the engine's own message (plugins) */
} eg__case_t;

static void eg__engine_err(eg__case_t *c, int rc, const char *stage)
{
	const char *m = eg_engine_error(c->ops, c->engine);

	c->engine_err = rc;
	c->stage = stage;
	snprintf(c->emsg, sizeof(c->emsg), "%s", m ? m : "");
}

static double eg__now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void eg__case_free(eg__case_t *c)
{
	uint32_t W = c->w->world;
	for (uint32_t r = 0; r < W; r++) {
		if (c->in)
			eg_rank_input_free(&c->in[r]);
		if (c->recv)
			eg_recv_free(&c->recv[r]);
		if (c->y)
			free(c->y[r]);
		if (c->out)
			free(c->out[r]);
	}
	free(c->in);
	free(c->recv);
	free(c->y);
	free(c->out);
	if (c->engine)
		c->ops->destroy(c->engine);
	eg_gen_fini(&c->gen);
}

static int eg__case_setup(eg__case_t *c)
{
	const eg_workload_t *w = c->w;
	uint32_t W = w->world, cap = eg_recv_max_rows(w);
	size_t csz = eg_dtype_size(eg_combine_dtype(w->dtype));
	int rc;

	c->in = calloc(W, sizeof(*c->in));
	c->recv = calloc(W, sizeof(*c->recv));
	c->y = calloc(W, sizeof(*c->y));
	c->out = calloc(W, sizeof(*c->out));
	if (!c->in || !c->recv || !c->y || !c->out)
		return EG_ENOMEM;
	for (uint32_t r = 0; r < W; r++) {
		rc = eg_recv_alloc(&c->recv[r], w, r, cap);
		if (rc < 0)
			return rc;
		c->y[r] = malloc((size_t)(cap ? cap : 1) * w->hidden * csz);
		c->out[r] = malloc(eg_combine_bytes(w, r) + 1);
		if (!c->y[r] || !c->out[r])
			return EG_ENOMEM;
	}
	eg_engine_ctx_t ctx = {.size = sizeof(ctx), .n_ranks = W};
	rc = c->ops->create(w, &ctx, &c->engine);
	if (rc < 0) {
		c->engine = NULL;
		eg__engine_err(c, rc, "create");
	}
	return EG_OK;
}

/* One iteration: generate, dispatch, verify, expert stage, combine,
 * verify. Returns <0 on a harness error; engine errors and mismatches
 * are recorded in c. */
static int eg__case_iter(eg__case_t *c, eg_workload_t *wi)
{
	uint32_t W = wi->world;
	int rc;

	eg_gen_fini(&c->gen);
	rc = eg_gen_init(&c->gen, wi);
	if (rc < 0)
		return rc;
	for (uint32_t r = 0; r < W; r++) {
		eg_rank_input_free(&c->in[r]);
		rc = eg_gen_rank_input(&c->gen, wi, r, &c->in[r]);
		if (rc < 0)
			return rc;
	}
	rc = c->ops->dispatch(c->engine, c->in, c->recv);
	if (rc < 0) {
		eg__engine_err(c, rc, "dispatch");
		return EG_OK;
	}
	for (uint32_t d = 0; d < W; d++) {
		eg_recv_t exp;
		eg_verdict_t v;
		rc = eg_ref_dispatch(wi, &c->gen, d, &exp);
		if (rc < 0)
			return rc;
		eg_verdict_init(&v);
		rc = eg_verify_dispatch(wi, &exp, &c->recv[d], &v);
		eg_recv_free(&exp);
		eg_verdict_merge(&c->v, &v);
		if (rc < 0 && rc != EG_EMISMATCH)
			return rc;
	}
	if (eg_verdict_total_wrong(&c->v)) {
		c->stage = "dispatch";
		return EG_OK; /* combine on a wrong dispatch says nothing new */
	}
	for (uint32_t d = 0; d < W; d++) {
		rc = eg_expert_stage(&c->gen, &c->recv[d], c->y[d]);
		if (rc < 0)
			return rc;
	}
	rc = c->ops->combine(c->engine, c->recv, (const void *const *)c->y,
			     (void *const *)c->out);
	if (rc < 0) {
		eg__engine_err(c, rc, "combine");
		return EG_OK;
	}
	int bits = wi->data == EG_DATA_EXACT ||
		   (c->ops->flags & EG_ENGINE_CANONICAL_ORDER);
	for (uint32_t s = 0; s < W; s++) {
		size_t n = (size_t)eg_workload_tokens(wi, s) * wi->hidden;
		void *exp = malloc(eg_combine_bytes(wi, s) + 1);
		double *r64 = malloc((n ? n : 1) * sizeof(double));
		double *m64 = malloc((n ? n : 1) * sizeof(double));
		eg_verdict_t v;
		if (!exp || !r64 || !m64) {
			free(exp);
			free(r64);
			free(m64);
			return EG_ENOMEM;
		}
		rc = eg_ref_combine(wi, &c->gen, s, exp, r64, m64);
		eg_verdict_init(&v);
		if (rc == EG_OK && bits)
			rc = eg_verify_combine(wi, s, EG_COMPARE_BITS, exp,
					       NULL, NULL, c->out[s], &v);
		/* random data: the fp64 bound holds for any engine (and
		 * cross-checks the reference itself) */
		if ((rc == EG_OK || rc == EG_EMISMATCH) &&
		    wi->data == EG_DATA_RANDOM) {
			int rb =
			    eg_verify_combine(wi, s, EG_COMPARE_BOUNDED, NULL,
					      r64, m64, c->out[s], &v);
			if (rb < 0 && rb != EG_EMISMATCH)
				rc = rb;
		}
		free(exp);
		free(r64);
		free(m64);
		eg_verdict_merge(&c->v, &v);
		if (rc < 0 && rc != EG_EMISMATCH)
			return rc;
	}
	if (eg_verdict_total_wrong(&c->v))
		c->stage = "combine";
	return EG_OK;
}

int eg_l1_run(const eg_l1_opts_t *o, const eg_workload_list_t *wl,
	      eg_l1_totals_t *tot)
{
	const eg_engine_ops_t *ops = eg_engine_find(o->engine);
	eg_tap_t *tap = NULL;
	eg_junit_t *junit = NULL;
	char classname[96];
	int rc, hard = 0;

	memset(tot, 0, sizeof(*tot));
	if (!ops) {
		fprintf(stderr,
			"epgate check: --engine: unknown engine \"%s\"\n",
			o->engine);
		return EG_EXIT_HARD;
	}
	if ((ops->flags & EG_ENGINE_MULTI_PROCESS) &&
	    !(ops->flags & EG_ENGINE_WORLD1)) {
		fprintf(stderr,
			"epgate check: --engine %s runs one rank per process: "
			"use 'epgate check --l2' (or epgate launch ... "
			"epgate l2-rank)\n",
			o->engine);
		return EG_EXIT_HARD;
	}
	if (ops->size < sizeof(eg_engine_ops_t)) {
		fprintf(stderr, "epgate check: engine %s: ops table too old\n",
			o->engine);
		return EG_EXIT_HARD;
	}
	rc = eg_tap_open(&tap, o->tap_path, (int)wl->n);
	if (rc < 0) {
		fprintf(stderr, "epgate check: --tap %s: %s\n", o->tap_path,
			eg_strerror(rc));
		return EG_EXIT_HARD;
	}
	snprintf(classname, sizeof(classname), "epgate.l1.%s", ops->name);
	rc = eg_junit_open(&junit, o->junit_path, "epgate-l1");
	if (rc < 0) {
		fprintf(stderr, "epgate check: --junit %s: %s\n", o->junit_path,
			eg_strerror(rc));
		eg_tap_close(tap);
		return EG_EXIT_HARD;
	}
	for (size_t i = 0; i < wl->n; i++) {
		const eg_workload_t *w = &wl->items[i];
		eg__case_t c;
		eg_workload_t wi;
		char sum[256], desc[384], repro[1024];
		double t0 = eg__now();

		memset(&c, 0, sizeof(c));
		c.w = w;
		c.ops = ops;
		eg_verdict_init(&c.v);
		eg_workload_summary(w, sum, sizeof(sum));
		snprintf(desc, sizeof(desc), "%s: %s", w->name, sum);
		rc = eg_workload_copy(&wi, w);
		if (rc == EG_OK)
			rc = eg__case_setup(&c);
		for (unsigned it = 0; rc == EG_OK && !c.engine_err &&
				      it < (o->iters ? o->iters : 1);
		     it++) {
			wi.iter = w->iter + it;
			c.iter = wi.iter;
			rc = eg__case_iter(&c, &wi);
			if (rc == EG_OK && eg_verdict_total_wrong(&c.v))
				break;
		}
		eg_workload_to_args(&wi, repro, sizeof(repro));
		double dt = eg__now() - t0;
		tot->run++;
		if (rc < 0) {
			json_t *d = json_object();
			char msg[256];
			snprintf(msg, sizeof(msg), "harness error: %s",
				 eg_strerror(rc));
			json_object_set_new(d, "error", json_string(msg));
			json_object_set_new(d, "repro", json_string(repro));
			eg_tap_point(tap, EG_STATUS_FAIL, desc, NULL, d);
			eg_junit_case(junit, classname, w->name, dt,
				      EG_STATUS_ERROR, msg, repro);
			json_decref(d);
			tot->errors++;
			hard = 1;
		} else if (c.engine_err == EG_ENOSYS && c.stage &&
			   !strcmp(c.stage, "create")) {
			/* the engine does not take this workload (a
			 * plugin's declared limits): a skip, with why */
			eg_tap_point(tap, EG_STATUS_SKIP, desc,
				     c.emsg[0] ? c.emsg : "not supported",
				     NULL);
			eg_junit_case(junit, classname, w->name, dt,
				      EG_STATUS_SKIP, c.emsg, NULL);
			tot->skipped++;
		} else if (c.engine_err || eg_verdict_total_wrong(&c.v)) {
			json_t *d = eg_case_diag(c.w, &c.v, c.stage, c.iter,
						 c.engine_err, repro);
			char *detail = malloc(EG__DETAIL_MAX);
			char msg[1400];
			if (c.emsg[0])
				json_object_set_new(d, "engine_message",
						    json_string(c.emsg));
			if (c.engine_err)
				snprintf(msg, sizeof(msg),
					 "%s returned %s (iteration %u)%s%s",
					 c.stage, eg_err_name(c.engine_err),
					 c.iter, c.emsg[0] ? ": " : "", c.emsg);
			else
				snprintf(
				    msg, sizeof(msg),
				    "%s: %llu wrong (iteration %u)", c.stage,
				    (unsigned long long)eg_verdict_total_wrong(
					&c.v),
				    c.iter);
			if (detail) {
				int n = eg_verdict_format(&c.v, detail,
							  EG__DETAIL_MAX);
				if (n >= 0 && n < EG__DETAIL_MAX)
					snprintf(detail + n,
						 (size_t)(EG__DETAIL_MAX - n),
						 "\nrepro: %s\n", repro);
			}
			eg_tap_point(tap, EG_STATUS_FAIL, desc, NULL, d);
			eg_junit_case(junit, classname, w->name, dt,
				      EG_STATUS_FAIL, msg, detail);
			if (o->verbose && detail)
				fprintf(stderr, "%s: %s\n%s", w->name, msg,
					detail);
			free(detail);
			json_decref(d);
			tot->failed++;
		} else {
			eg_tap_point(tap, EG_STATUS_PASS, desc, NULL, NULL);
			eg_junit_case(junit, classname, w->name, dt,
				      EG_STATUS_PASS, NULL, NULL);
			tot->passed++;
		}
		eg__case_free(&c);
		eg_workload_fini(&wi);
	}
	eg_tap_close(tap);
	eg_junit_close(junit);
	if (hard)
		return EG_EXIT_HARD;
	if (tot->failed)
		return EG_EXIT_FAIL;
	if (tot->run == 0 || tot->skipped == tot->run)
		return EG_EXIT_SKIP;
	return EG_EXIT_PASS;
}
