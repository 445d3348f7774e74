/* `epgate stress`: a case's instance opened, its failures kept, the error
 * that ends it said (lib/stress/stress_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stress/stress_int.h"

double eg_stress_timeout(void)
{
	const char *t = getenv("EPGATE_TIMEOUT");

	return t && atof(t) > 0 ? atof(t) : 60.0;
}

int eg_stress_open(eg_stress_case_t *c, const eg_engine_ops_t *ops,
		   eg_step_t **st)
{
	eg_step_opts_t so = {
	    .size = sizeof(so),
	    .w = c->w,
	    .engine = ops,
	    .ctx = {.size = sizeof(eg_engine_ctx_t), .n_ranks = c->w->world},
	    .space = &eg_space_host,
	    .budget = 1,
	    .deadline_s = eg_stress_timeout()};
	eg_rank_verdict_t v;
	int rc;

	eg_rank_verdict_init(&v);
	rc = eg_step_open(st, &so, &v);
	if (rc >= 0)
		return EG_OK;
	if (v.engine_err == EG_ENOSYS && !strcmp(v.stage, "create")) {
		const char *m = eg_engine_error(ops, NULL);

		c->skipped = 1;
		snprintf(c->skip_why, sizeof(c->skip_why), "%.250s",
			 m && *m	   ? m
			 : v.engine_msg[0] ? v.engine_msg
					   : "not supported");
		return rc;
	}
	eg_stress_end(c, ops, NULL, &v, rc, c->w->iter, "setup");
	return rc;
}

/* "3 wrong: combine 2, x 1", or the error. */
static void eg__what(const eg_rank_verdict_t *v, const char *msg, char *out,
		     size_t len)
{
	size_t o;

	if (v->engine_err || v->harness_err) {
		int e = v->engine_err ? v->engine_err : v->harness_err;

		snprintf(out, len, "%s%s%s%.160s",
			 v->harness_err ? "harness: " : "", eg_err_name(e),
			 msg && *msg ? ": " : "", msg ? msg : "");
		return;
	}
	o = (size_t)snprintf(out, len, "%llu wrong:",
			     (unsigned long long)eg_verdict_total_wrong(&v->v));
	for (int f = 0, n = 0; f < EG_FIELD__COUNT && o < len; f++)
		if (v->v.wrong[f])
			o += (size_t)snprintf(
			    out + o, len - o, "%s %s %llu", n++ ? "," : "",
			    eg_field_name((eg_field_t)f),
			    (unsigned long long)v->v.wrong[f]);
}

void eg_stress_record(eg_stress_case_t *c, const eg_step_t *st,
		      const eg_rank_verdict_t *v, uint64_t call, uint32_t iter,
		      int mode, int instance, int replay)
{
	eg_stress_fail_t *f;
	const char *m = v->engine_msg[0] ? v->engine_msg
			: st		 ? eg_step_engine_error(st)
					 : NULL;

	if (c->n_fails == c->cap_fails) {
		size_t cap = c->cap_fails ? 2 * c->cap_fails : 64;
		eg_stress_fail_t *g;

		if (cap > EG_STRESS_FAILS_MAX ||
		    !(g = realloc(c->fails, cap * sizeof(*g)))) {
			c->dropped++;
			return;
		}
		c->fails = g, c->cap_fails = cap;
	}
	if (!c->n_fails) /* the call itself was counted already */
		c->checked_before = c->checked ? c->checked - 1 : 0;
	f = &c->fails[c->n_fails++];
	memset(f, 0, sizeof(*f));
	f->call = call;
	f->iter = iter;
	f->mode = (uint8_t)mode;
	f->instance = (uint8_t)instance;
	f->replay = (int8_t)replay;
	f->error = v->engine_err || v->harness_err;
	snprintf(f->stage, sizeof(f->stage), "%s", v->stage);
	eg__what(v, m, f->what, sizeof(f->what));
}

/* The ranks a call ran on: a world-1 plugin's one rank in its own
 * process, or every rank of the workload in this one. */
static void eg__ranks(const eg_engine_ops_t *ops, const eg_workload_t *w,
		      char *out, size_t len)
{
	if (ops && (ops->flags & EG_ENGINE_WORLD1))
		snprintf(out, len,
			 "rank 0 (world 1, the instance's own "
			 "process)");
	else if (w->world == 1)
		snprintf(out, len, "rank 0 (world 1)");
	else
		snprintf(out, len, "ranks 0-%u (all in this process)",
			 w->world - 1);
}

void eg_stress_end(eg_stress_case_t *c, const eg_engine_ops_t *ops,
		   const eg_step_t *st, const eg_rank_verdict_t *v, int rc,
		   uint32_t iter, const char *where)
{
	const char *m = v->engine_msg[0] ? v->engine_msg
			: st		 ? eg_step_engine_error(st)
					 : eg_engine_error(ops, NULL);
	char ranks[96];

	if (c->ended)
		return;
	c->ended = 1;
	c->hard = v->harness_err != 0 && !v->engine_err;
	eg__ranks(ops, c->w, ranks, sizeof(ranks));
	snprintf(c->end, sizeof(c->end),
		 "call %llu (iteration %u, %.20s): %.24s on %.60s: %s%s%.400s",
		 (unsigned long long)(c->calls ? c->calls - 1 : 0), iter, where,
		 v->stage[0] ? v->stage : "call", ranks, eg_err_name(rc),
		 m && *m ? ": " : "", m ? m : "");
}

void eg_stress_end_unchecked(eg_stress_case_t *c, const eg_engine_ops_t *ops,
			     const eg_step_t *st, int rc, uint32_t iter)
{
	eg_rank_verdict_t v;

	eg_rank_verdict_init(&v);
	v.engine_err = rc;
	snprintf(v.stage, sizeof(v.stage), "unchecked call");
	/* an outcome like a checked call's: it counts in the rate */
	c->checked++;
	c->mode_checked[EG_STRESS_BURST]++;
	c->failures++;
	c->mode_failed[EG_STRESS_BURST]++;
	eg_stress_record(c, st, &v, c->calls - 1, iter, EG_STRESS_BURST, 0, -1);
	eg_stress_end(c, ops, st, &v, rc, iter, "burst");
}
