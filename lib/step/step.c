/* The verified step (include/epgate/step.h): one engine on one workload
 * for the ranks this process holds, checked against the dense reference
 * in whichever memory space the buffers live. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/reference.h"
#include "epgate/step.h"
#include "epgate/sized.h"
#include "lib/step/where.h"
#include "lib/step/step_int.h"

unsigned eg_combine_checks(const eg_workload_t *w, uint32_t engine_flags)
{
	unsigned c = 0;

	if (w->data == EG_DATA_EXACT ||
	    (engine_flags & EG_ENGINE_CANONICAL_ORDER))
		c |= EG_CHECK_BITS;
	if (w->data == EG_DATA_RANDOM)
		c |= EG_CHECK_BOUND;
	if (w->data == EG_DATA_RANDOM && (engine_flags & EG_ENGINE_FIXED_ORDER))
		c |= EG_CHECK_REPEAT;
	return c;
}

void eg_rank_verdict_init(eg_rank_verdict_t *v)
{
	memset(v, 0, sizeof(*v));
	eg_verdict_init(&v->v);
}

int eg_rank_verdict_failed(const eg_rank_verdict_t *v)
{
	return v->harness_err || v->engine_err ||
	       eg_verdict_total_wrong(&v->v) != 0;
}

/* ---- failures, recorded once ------------------------------------------ */

static void eg__where(eg_rank_verdict_t *v, const char *stage, uint32_t iter)
{
	snprintf(v->stage, sizeof(v->stage), "%s", stage);
	v->iter = iter;
}

static int eg__harness(eg_rank_verdict_t *v, int rc, const char *stage,
		       uint32_t iter)
{
	if (!eg_rank_verdict_failed(v))
		eg__where(v, stage, iter);
	if (!v->harness_err)
		v->harness_err = rc;
	return rc;
}

/* An engine error, said where it happens (the transport names the peer):
 * if the job is then stopped, that line is the diagnosis. */
static int eg__engine(const eg_step_t *st, eg_rank_verdict_t *v, int rc,
		      const char *stage, uint32_t iter)
{
	if (st->say) {
		const eg_xport_ops_t *x = st->ctx.xport;
		const char *e =
		    x && x->error ? x->error(st->ctx.xport_state) : NULL;

		char at[48] = "";

		if (st->w.steps > 1)
			snprintf(at, sizeof(at), "step %u of %u, ",
				 st->step + 1, st->w.steps);
		fprintf(stderr,
			"%s: rank %u: %s: %s: %s%s%s (%siteration %u)\n",
			st->say, st->first, st->w.name, stage, eg_strerror(rc),
			e && *e ? ": " : "", e && *e ? e : "", at, iter);
		fflush(stderr);
	}
	if (!eg_rank_verdict_failed(v)) {
		const char *m = eg_engine_error(st->ops, st->engine);

		eg__where(v, stage, iter);
		v->engine_err = rc;
		snprintf(v->engine_msg, sizeof(v->engine_msg), "%s",
			 m ? m : "");
	}
	return rc;
}

static int eg__mismatch(eg_rank_verdict_t *v, const eg_verdict_t *it,
			const char *stage, uint32_t iter)
{
	eg_verdict_merge(&v->v, it);
	eg__where(v, stage, iter);
	return EG_EMISMATCH;
}

/* ---- open, close ------------------------------------------------------ */

void eg_step_close(eg_step_t *st)
{
	if (!st)
		return;
	if (st->engine) {
		eg_where_at(st->step, st->cur.iter, "destroy");
		st->ops->destroy(st->engine);
	}
	eg_kern_close(st->kern);
	if (st->ss) {
		eg__step_free(st);
		st->sp->close(st->ss);
	}
	eg_gen_fini(&st->g);
	eg_workload_fini(&st->cur);
	eg_workload_fini(&st->w);
	free(st);
}

#define EG__PROGRESS_OPS                                                       \
	((uint64_t)1 << 28) /* a workload that takes a while                   \
			     */

/* The budgets and deadline of o (appended fields), checked up front. */
static int eg__budget(eg_step_t *st, const eg_step_opts_t *o,
		      eg_rank_verdict_t *v)
{
	size_t end = offsetof(eg_step_opts_t, deadline_s) + sizeof(double);
	eg_workload_cost_t c;
	char err[512];

	if (o->size < end)
		return EG_OK;
	st->deadline_s = o->deadline_s;
	eg_workload_cost(o->w, st->first, st->n, &c);
	st->progress = o->deadline_s > 0 && c.ops > EG__PROGRESS_OPS;
	if (!o->budget)
		return EG_OK;
	int rc = eg_workload_budget(o->w, st->first, st->n, err, sizeof(err));
	if (rc == EG_OK)
		return EG_OK;
	fprintf(stderr, "%s: refused: %s\n", o->say ? o->say : "epgate", err);
	return eg__harness(v, rc, "budget", o->w->iter);
}

/* The engine's own timing (a plugin's), when it has one */
static int eg__engine_timing(const eg_step_t *st, eg_timing_sum_t *t, int reset)
{
	const eg_engine_ops_t *o = st->ops;

	if (!EG_HAS(o, eg_engine_ops_t, timing) || !o->timing || !st->engine)
		return 0;
	return o->timing(st->engine, t, reset) == EG_OK;
}

/* A measurement's boundary (EPGATE_BOUNDARY) and, for the kernel
 * boundary or EPGATE_CUPTI=1, the kernel-time collector. An engine that
 * times its own calls (a plugin's) holds its window itself; epgate's own
 * engines wait for their stream inside each call, so for them a window
 * is the call (docs/metrics.md, "Boundaries"). */
static int eg__timing_open(eg_step_t *st)
{
	const char *cu = getenv("EPGATE_CUPTI");
	eg_boundary_t b;
	eg_timing_sum_t et;
	char err[256] = "";
	int rc;

	if (!(st->ctx.flags & EG_ENGINE_CTX_BENCH))
		return EG_OK;
	if ((rc = eg_boundary_env(EG_BOUNDARY_CALL, &b, err, sizeof(err))) < 0)
		goto fail;
	/* the engine applied EPGATE_BOUNDARY itself, with its own default */
	if (eg__engine_timing(st, &et, 0))
		st->boundary = (eg_boundary_t)et.boundary;
	else
		st->boundary = EG_BOUNDARY_CALL;
	if (b == EG_BOUNDARY_REPLAY && st->boundary != EG_BOUNDARY_REPLAY) {
		snprintf(err, sizeof(err),
			 "EPGATE_BOUNDARY=replay: engine %s does not declare "
			 "itself capture-safe (a plugin declares it: "
			 "EG_PLUGIN_CAPTURE_SAFE, docs/plugins.md)",
			 st->ops->name);
		rc = EG_ENOSYS;
		goto fail;
	}
	if (b == EG_BOUNDARY_KERNEL)
		st->boundary = EG_BOUNDARY_KERNEL;
	else if (!(cu && !strcmp(cu, "1")))
		return EG_OK;
	/* the API tracing that narrows a call to its library's span
	 * lengthens the host's side: only where kernels are the gated time */
	if ((rc = eg_kern_open(&st->kern, st->boundary == EG_BOUNDARY_KERNEL,
			       err, sizeof(err))) == EG_OK)
		return EG_OK;
fail:
	fprintf(stderr, "%s: %s\n", st->say ? st->say : "epgate", err);
	return rc;
}

int eg_step_timing(eg_step_t *st, eg_timing_sum_t *t, int reset)
{
	memset(t, 0, sizeof(*t));
	eg__engine_timing(st, t, reset);
	t->boundary = (int32_t)st->boundary;
	if (st->kern) {
		t->kernel = 1;
		eg_kern_table(st->kern, t->kernels, sizeof(t->kernels),
			      &t->kern_dropped);
		t->kern_spanned = eg_kern_spanned(st->kern);
		if (reset)
			eg_kern_reset(st->kern);
	}
	return EG_OK;
}

int eg_step_open(eg_step_t **out, const eg_step_opts_t *o, eg_rank_verdict_t *v)
{
	eg_step_t *st;
	int rc;

	*out = NULL;
	if (o->size < sizeof(*o) || !o->w || !o->engine || !o->space ||
	    o->space->size < sizeof(eg_space_ops_t) || !o->ctx.n_ranks ||
	    o->ctx.first_rank + o->ctx.n_ranks > o->w->world)
		return eg__harness(v, EG_EINVAL, "setup",
				   o->w ? o->w->iter : 0);
	st = calloc(1, sizeof(*st));
	if (!st)
		return eg__harness(v, EG_ENOMEM, "setup", o->w->iter);
	st->ops = o->engine;
	st->ctx = o->ctx;
	st->ctx.size = sizeof(st->ctx);
	/* the kernel boundary's library span (lib/step/kern.c) */
	st->ctx.lib_mark = eg_kern_mark;
	st->sp = o->space;
	st->say = o->say;
	st->count_wire = EG_HAS(o, eg_step_opts_t, count_wire) && o->count_wire;
	st->first = o->ctx.first_rank;
	st->n = o->ctx.n_ranks;
	st->iter0 = o->w->iter;
	st->bound = eg_engine_combine_bound(o->engine);
	if ((rc = eg__budget(st, o, v)) < 0) {
		free(st);
		return rc;
	}
	if ((rc = eg_workload_copy(&st->w, o->w)) < 0 ||
	    (rc = eg_workload_step(&st->w, 0, &st->cur)) < 0 ||
	    (rc = st->sp->open(&st->ss, o->stream)) < 0 ||
	    (rc = eg__step_alloc(st)) < 0) {
		eg_step_close(st);
		return eg__harness(v, rc, "setup", o->w->iter);
	}
	eg_where_at(0, st->iter0, "create");
	rc = st->ops->create(&st->w, &st->ctx, &st->engine);
	if (rc < 0) {
		st->engine = NULL;
		eg__engine(st, v, rc, "create", st->iter0);
		eg_step_close(st);
		return rc;
	}
	if ((rc = eg__timing_open(st)) < 0) {
		eg_step_close(st);
		return eg__harness(v, rc, "setup", o->w->iter);
	}
	*out = st;
	return EG_OK;
}

/* ---- one iteration ---------------------------------------------------- */

/* Peers may run this step's collectives with it (a multi-process
 * engine): it must stay in step with them, whatever it found. None in a
 * world of one, nor for a world-1 engine run in process (a plugin in L1,
 * no world given). */
static int eg__has_peers(const eg_step_t *st)
{
	const eg_world_t *w = st->ctx.world;

	if (!(st->ops->flags & EG_ENGINE_MULTI_PROCESS))
		return 0;
	if (w)
		return w->size > 1;
	return !(st->ops->flags & EG_ENGINE_WORLD1);
}

int eg_step_select(eg_step_t *st, uint32_t step)
{
	eg_workload_t next;
	int rc = eg_workload_step(&st->w, step, &next);

	if (rc < 0)
		return rc;
	eg_workload_fini(&st->cur);
	st->cur = next;
	st->step = step;
	return EG_OK;
}

int eg_step_reseed(eg_step_t *st, uint64_t seed)
{
	eg_workload_t next;
	int rc = eg_workload_copy(&next, &st->w);

	if (rc < 0)
		return rc;
	next.seed = seed;
	eg_workload_fini(&st->cur);
	st->cur = next;
	return EG_OK;
}

int eg_step_output(const eg_step_t *st, uint32_t i, const void **p,
		   size_t *bytes)
{
	if (i >= st->n || strcmp(st->sp->name, "host"))
		return EG_ENOSYS;
	*p = st->out[i];
	*bytes = eg_combine_bytes(&st->cur, st->first + i);
	return EG_OK;
}

int eg_step_generate(eg_step_t *st, uint32_t iter)
{
	int rc;

	eg_gen_fini(&st->g);
	st->cur.iter = iter;
	if ((rc = eg_gen_init(&st->g, &st->cur)) < 0)
		return rc;
	for (uint32_t i = 0; i < st->n; i++) {
		/* this step's tokens, within the buffers made for w's */
		st->in[i].tokens = eg_workload_tokens(&st->cur, st->in[i].rank);
		if ((rc = st->sp->generate(st->ss, &st->g, &st->in[i])) < 0)
			return rc;
		st->in[i].iter = iter; /* what a plugin keys its rows by */
		st->in[i].step = &st->cur;
	}
	return EG_OK;
}

static int eg__check_dispatch(eg_step_t *st, eg_verdict_t *v)
{
	for (uint32_t i = 0; i < st->n; i++) {
		eg_recv_t exp;
		int rc = eg_ref_dispatch(&st->cur, &st->g, st->first + i, &exp);

		if (rc < 0)
			return rc;
		rc = st->sp->verify_dispatch(st->ss, &st->cur, &exp,
					     &st->recv[i], v);
		eg_recv_free(&exp);
		if (rc < 0 && rc != EG_EMISMATCH)
			return rc;
	}
	return EG_OK;
}

/* Rank first+i's two combines of the same inputs, byte for byte (their
 * host copies: the space may be a device's). */
static int eg__check_repeat(eg_step_t *st, uint32_t i, eg_verdict_t *v)
{
	uint32_t s = st->first + i;
	size_t n = eg_combine_bytes(&st->cur, s);
	int rc;

	if ((rc = st->sp->copy(st->ss, st->h_first, st->out[i], n)) < 0 ||
	    (rc = st->sp->copy(st->ss, st->h_again, st->again[i], n)) < 0)
		return rc;
	return eg_verify_combine_repeat(&st->cur, s, st->h_first, st->h_again,
					v);
}

static int eg__check_combine(eg_step_t *st, eg_verdict_t *v)
{
	unsigned checks = eg_combine_checks(&st->cur, st->ops->flags);
	int bound = !!(checks & EG_CHECK_BOUND);
	/* the engine's own bound, where it does not promise the bits */
	double f = checks & EG_CHECK_BITS ? 1.0 : st->bound;

	for (uint32_t i = 0; i < st->n; i++) {
		uint32_t s = st->first + i;
		int rc = eg_ref_combine(&st->cur, &st->g, s, st->cexp,
					bound ? st->r64 : NULL,
					bound ? st->m64 : NULL);

		if (rc == EG_OK && bound && f != 1.0)
			eg_verify_bound_scale(
			    st->r64, st->m64,
			    (size_t)eg_workload_tokens(&st->cur, s) *
				st->cur.hidden,
			    f);
		if (rc == EG_OK && (checks & EG_CHECK_BITS))
			rc = st->sp->verify_combine(st->ss, &st->cur, s,
						    EG_COMPARE_BITS, st->cexp,
						    NULL, NULL, st->out[i], v);
		if ((rc == EG_OK || rc == EG_EMISMATCH) && bound)
			rc = st->sp->verify_combine(
			    st->ss, &st->cur, s, EG_COMPARE_BOUNDED, NULL,
			    st->r64, st->m64, st->out[i], v);
		if ((rc == EG_OK || rc == EG_EMISMATCH) && st->repeated)
			rc = eg__check_repeat(st, i, v);
		if (rc < 0 && rc != EG_EMISMATCH)
			return rc;
	}
	return EG_OK;
}

/* What the engine found wrong in its own combine (a plugin's guard
 * bytes, its inputs, output it left unwritten: eg_recv_t.findings after
 * combine), the diagnosis ahead of the comparison. */
static void eg__combine_findings(const eg_step_t *st, eg_verdict_t *v)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (st->recv[i].findings)
			eg_verdict_merge(v, st->recv[i].findings);
}

/* The expert stage of every held rank. After a wrong (or unchecked)
 * dispatch its rows may hold any ids: an error there only means the
 * combine that follows carries garbage, which nobody checks. */
static int eg__expert(eg_step_t *st)
{
	for (uint32_t i = 0; i < st->n; i++) {
		int rc = st->sp->expert(st->ss, &st->g, &st->recv[i], st->y[i]);

		if (rc < 0)
			return rc;
	}
	return EG_OK;
}

/* A fixed-order engine on random data: dispatch, the expert stage and
 * combine again on the inputs in place, into st->again (every rank, so
 * the collective stays in step; not in a measurement, whose later calls
 * are unverified by design). */
static int eg__repeat(eg_step_t *st, eg_rank_verdict_t *v, uint32_t iter)
{
	int rc;

	st->repeated = 0;
	if (!st->again || (st->ctx.flags & EG_ENGINE_CTX_BENCH) ||
	    !(eg_combine_checks(&st->cur, st->ops->flags) & EG_CHECK_REPEAT))
		return EG_OK;
	if ((rc = st->ops->dispatch(st->engine, st->in, st->recv)) < 0)
		return eg__engine(st, v, rc, "dispatch (repeat)", iter);
	if ((rc = eg__expert(st)) < 0)
		return eg__harness(v, rc, "expert (repeat)", iter);
	rc = st->ops->combine(st->engine, st->recv, (const void *const *)st->y,
			      (void *const *)st->again);
	if (rc < 0)
		return eg__engine(st, v, rc, "combine (repeat)", iter);
	st->repeated = 1;
	return EG_OK;
}

/* Every rank's word on its dispatch, before any of them combines: a
 * multi-process engine whose ranks hold the job's bootstrap, one rank
 * per process. An odd size and a tag, so that a peer still inside a
 * collective of the engine's own (a plugin's allgather over the same
 * bootstrap) is told apart, never paired with this one. */
#define EG__AGREE_TAG 0x76644745u /* "EGdv" */
typedef struct eg__agree {
	uint32_t tag, bad, rank, step, iter;
} eg__agree_t;

static int eg__agrees(const eg_step_t *st)
{
	const eg_world_t *w = st->ctx.world;

	return eg__has_peers(st) && st->ctx.boot && w && w->size > 1 &&
	       st->n == 1;
}

/* bad: this rank's dispatch failed or was wrong; *any: some rank's
 * was. <0 when the bootstrap failed (a peer lost, or out of step). */
static int eg__agree(eg_step_t *st, int bad, uint32_t iter, int *any)
{
	const eg_world_t *w = st->ctx.world;
	eg__agree_t mine = {EG__AGREE_TAG, (uint32_t)bad, st->first, st->step,
			    iter};
	eg__agree_t *all = calloc(w->size, sizeof(*all));
	int rc;

	*any = bad;
	if (!all)
		return EG_ENOMEM;
	eg_where_at(st->step, iter, "dispatch verdicts");
	rc = eg_boot_allgather(st->ctx.boot, &mine, sizeof(mine), all,
			       w->timeout_s);
	for (uint32_t r = 0; rc == EG_OK && r < w->size; r++) {
		if (all[r].tag != EG__AGREE_TAG || all[r].rank != r ||
		    all[r].step != st->step || all[r].iter != iter)
			rc = EG_EPEER;
		else if (all[r].bad)
			*any = 1;
	}
	free(all);
	return rc;
}

/* The ranks' word could not be had: epgate's bootstrap lost a peer (or
 * a peer was elsewhere). Said; this rank's verdict, unless it has one. */
static int eg__peer_lost(const eg_step_t *st, eg_rank_verdict_t *v, int rc,
			 uint32_t iter)
{
	const char *e = eg_boot_error(st->ctx.boot);

	if (!e || !*e)
		e = rc == EG_EPEER ? "a peer's dispatch verdict is out of step"
				   : eg_strerror(rc);
	if (st->say) {
		fprintf(stderr,
			"%s: rank %u: %s: dispatch verdicts: a peer was lost: "
			"%s (iteration %u)\n",
			st->say, st->first, st->w.name, e, iter);
		fflush(stderr);
	}
	if (!eg_rank_verdict_failed(v)) {
		eg__where(v, "dispatch", iter);
		v->engine_err = EG_EPEER;
		snprintf(v->engine_msg, sizeof(v->engine_msg),
			 "a peer was lost before the ranks' dispatch verdicts: "
			 "%s",
			 e);
	}
	return EG_EPEER;
}

int eg_step_verify_dispatch(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v)
{
	int rc, crc = EG_OK, arc, any = 0, agree = eg__agrees(st);

	st->vchecked = !eg_rank_verdict_failed(v);
	st->vwrong = st->vpending = 0;
	st->viter = iter;
	eg_verdict_init(&st->vit);
	if (st->vchecked) {
		v->iter = iter;
		v->step = st->step;
	}
	eg_where_at(st->step, iter, "generate");
	if ((rc = eg_step_generate(st, iter)) < 0)
		return eg__harness(v, rc, "generate", iter);
	eg_where_at(st->step, iter, "dispatch");
	rc = st->ops->dispatch(st->engine, st->in, st->recv);
	if (rc < 0) {
		eg__engine(st, v, rc, "dispatch", iter);
		/* the peers hear it where they can: their combine is off */
		if (agree) {
			st->halted = 1;
			eg__agree(st, 1, iter, &any);
		}
		return rc;
	}
	if (st->vchecked) {
		eg_where_at(st->step, iter, "dispatch check");
		if ((crc = eg__check_dispatch(st, &st->vit)) == EG_OK)
			st->vwrong = eg_verdict_total_wrong(&st->vit) != 0;
	}
	/* a combine on a wrong dispatch says nothing new, and may crash a
	 * library (a counter past its buffer), losing the finding: in
	 * process it is not run; over a transport no rank runs it once any
	 * rank's dispatch was wrong (agreed over the bootstrap, where the
	 * ranks have one), and the workload ends there */
	if (agree) {
		arc = eg__agree(st, crc < 0 || st->vwrong, iter, &any);
		st->halted = arc < 0 || any;
		if (arc < 0 && crc == EG_OK && !st->vwrong)
			return eg__peer_lost(st, v, arc, iter);
	}
	if (crc < 0)
		return eg__harness(v, crc, "dispatch", iter);
	if (st->vwrong && (!eg__has_peers(st) || st->halted))
		return eg__mismatch(v, &st->vit, "dispatch", iter);
	if (st->halted)
		return EG_OK; /* a peer's dispatch was wrong: it says so */
	st->vpending = 1;
	return EG_OK;
}

int eg_step_verify_combine(eg_step_t *st, eg_rank_verdict_t *v)
{
	uint32_t iter = st->viter;
	int rc;

	if (!st->vpending)
		return eg__harness(v, EG_EINVAL, "combine", iter);
	st->vpending = 0;
	eg_where_at(st->step, iter, "expert stage");
	rc = eg__expert(st);
	if (rc < 0 && st->vchecked && !st->vwrong)
		return eg__harness(v, rc, "expert", iter);
	eg_where_at(st->step, iter, "combine");
	rc = st->ops->combine(st->engine, st->recv, (const void *const *)st->y,
			      (void *const *)st->out);
	if (rc < 0)
		return eg__engine(st, v, rc, "combine", iter);
	if (st->vchecked && !st->vwrong) /* before a repeat replaces them */
		eg__combine_findings(st, &st->vit);
	if ((rc = eg__repeat(st, v, iter)) < 0)
		return rc;
	if (st->vwrong)
		return eg__mismatch(v, &st->vit, "dispatch", iter);
	if (!st->vchecked)
		return EG_OK;
	eg_where_at(st->step, iter, "combine check");
	if ((rc = eg__check_combine(st, &st->vit)) < 0)
		return eg__harness(v, rc, "combine", iter);
	if (eg_verdict_total_wrong(&st->vit))
		return eg__mismatch(v, &st->vit, "combine", iter);
	eg_verdict_merge(&v->v, &st->vit);
	return EG_OK;
}

int eg_step_verify(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v)
{
	int rc = eg_step_verify_dispatch(st, iter, v);

	return rc < 0 || st->halted ? rc : eg_step_verify_combine(st, v);
}

/* The engine counts its calls: the replays it verifies are the ones
 * right after the first verified call (lib/engines/plugin_step.c). */
int eg_step_verify_replays(eg_step_t *st, uint32_t iter, eg_rank_verdict_t *v)
{
	int rc = EG_OK;

	if (st->boundary != EG_BOUNDARY_REPLAY || st->replays_verified)
		return EG_OK;
	for (uint32_t j = 1;
	     rc == EG_OK && !st->halted && j <= EG_REPLAY_CHECKS; j++)
		rc = eg_step_verify(st, iter + j, v);
	if (rc == EG_OK && !st->halted)
		st->replays_verified = 1;
	return rc;
}

/* After an iteration that began at t0: past the deadline is a failure
 * (said on stderr); a long workload says how far it got. */
static int eg__after(eg_step_t *st, double t0, uint32_t s, uint32_t steps,
		     unsigned it, unsigned iters, eg_rank_verdict_t *v)
{
	double dt = eg_now() - t0;
	const char *who = st->say ? st->say : "epgate";

	if (st->progress)
		fprintf(stderr,
			"%s: %s: step %u of %u, iteration %u of %u "
			"verified in %.1f s\n",
			who, st->w.name, s + 1, steps, it + 1, iters, dt);
	if (st->deadline_s <= 0 || dt <= st->deadline_s)
		return EG_OK;
	fprintf(stderr,
		"%s: %s: step %u, iteration %u took %.1f s, past the deadline "
		"of %.1f s (EPGATE_TIMEOUT)\n",
		who, st->w.name, s + 1, it + 1, dt, st->deadline_s);
	return eg__harness(v, EG_ETIMEDOUT, "deadline", st->iter0 + it);
}

int eg_step_verify_iters(eg_step_t *st, unsigned iters, eg_rank_verdict_t *v)
{
	int lockstep = eg__has_peers(st);
	uint32_t steps = st->w.steps > 1 ? st->w.steps : 1;

	for (uint32_t s = 0; s < steps; s++) {
		int rc = eg_step_select(st, s);

		if (rc < 0)
			return eg__harness(v, rc, "generate", st->iter0);
		for (unsigned it = 0; it < iters; it++) {
			double t0 = eg_now();

			rc = eg_step_verify(st, st->iter0 + it, v);
			if (rc < 0 && rc != EG_EMISMATCH)
				return rc;
			if (st->halted) /* every rank ends the workload here */
				return eg_rank_verdict_failed(v) ? EG_EMISMATCH
								 : EG_OK;
			if ((rc = eg__after(st, t0, s, steps, it, iters, v)) <
			    0)
				return rc;
			/* after a mismatch the peers go on: so does this
			 * rank; in process, that was the end */
			if (eg_rank_verdict_failed(v) && !lockstep)
				return EG_EMISMATCH;
		}
	}
	return eg_rank_verdict_failed(v) ? EG_EMISMATCH : EG_OK;
}

/* Bytes the transport has sent to other ranks so far (0: not counted).
 * Read inside the dispatch interval: the transport's own counter where it
 * has one (NCCL's stats parse its log: 0.5-2 ms a read on two H200s). */
static uint64_t eg__sent(const eg_step_t *st)
{
	const eg_xport_ops_t *x = st->ctx.xport;
	eg_xport_stats_t s;
	uint64_t b = 0;

	if (!st->count_wire || !x)
		return 0;
	if (EG_HAS(x, eg_xport_ops_t, sent) && x->sent)
		return x->sent(st->ctx.xport_state, &b) < 0 ? 0 : b;
	if (!x->stats)
		return 0;
	memset(&s, 0, sizeof(s));
	return st->ctx.xport->stats(st->ctx.xport_state, &s) < 0 ? 0
								 : s.bytes_sent;
}

/* The engine's own calls, when it times them (a plugin engine's marks
 * around the plugin's calls, lib/engines/plugin_step.c): the boundary of
 * the gated times (docs/metrics.md, "Boundaries"). */
static void eg__call_times(eg_step_t *st, eg_bench_times_t *t)
{
	eg_engine_phase_t p[EG_BENCH_PHASES_MAX];
	int n = eg_step_phases(st, p, EG_BENCH_PHASES_MAX), have = 0;

	for (int i = 0; i < n; i++) {
		if (!strcmp(p[i].name, "plugin_dispatch"))
			t->call_dispatch_s = p[i].ms * 1e-3, have |= 1;
		else if (!strcmp(p[i].name, "plugin_combine"))
			t->call_combine_s = p[i].ms * 1e-3, have |= 2;
	}
	t->call_timed = have == 3;
}

/* the step's marks: before dispatch, after it, after the expert stage,
 * after combine */
#define EG__STEP_MARKS 4

int eg_step_run(eg_step_t *st, eg_bench_times_t *t)
{
	double s[EG__STEP_MARKS - 1];
	eg_kern_t *k = st->kern;
	uint64_t sent0 = 0;
	int rc;

	if (st->boundary == EG_BOUNDARY_REPLAY && !st->replays_verified)
		return EG_EINVAL; /* no replay is timed before one is checked */
	/* kernel time: the records before each call are dropped, those of
	 * its work read after its mark (the engine's call has returned
	 * with its work done, docs/metrics.md); the flushes fall outside
	 * the dispatch and combine intervals, in the expert stage's */
	if ((k && (rc = eg_kern_begin(k)) < 0) ||
	    (rc = st->sp->mark(st->ss, 0)) < 0)
		return rc;
	sent0 = eg__sent(st);
	if ((rc = st->ops->dispatch(st->engine, st->in, st->recv)) < 0)
		return rc;
	t->wire_dispatch = eg__sent(st) - sent0;
	if ((rc = st->sp->mark(st->ss, 1)) < 0 ||
	    (k && (rc = eg_kern_end(k, &t->kern_dispatch_s)) < 0) ||
	    (rc = eg__expert(st)) < 0 ||
	    (k && ((rc = st->sp->sync(st->ss)) < 0 ||
		   (rc = eg_kern_begin(k)) < 0)) ||
	    (rc = st->sp->mark(st->ss, 2)) < 0 ||
	    (rc = st->ops->combine(st->engine, st->recv,
				   (const void *const *)st->y,
				   (void *const *)st->out)) < 0 ||
	    (rc = st->sp->mark(st->ss, 3)) < 0 ||
	    (rc = st->sp->elapsed(st->ss, EG__STEP_MARKS, s)) < 0 ||
	    (k && (rc = eg_kern_end(k, &t->kern_combine_s)) < 0))
		return rc;
	t->dispatch_s = s[0];
	t->expert_s = s[1];
	t->combine_s = s[2];
	t->have_kernel = k != NULL;
	eg__call_times(st, t);
	t->boundary = (int)st->boundary;
	return EG_OK;
}

const char *eg_step_engine_error(const eg_step_t *st)
{
	return eg_engine_error(st->ops, st->engine);
}

int eg_step_phases(eg_step_t *st, eg_engine_phase_t *p, size_t max)
{
	const eg_engine_ops_t *o = st->ops;

	if (!EG_HAS(o, eg_engine_ops_t, phases) || !o->phases || !st->engine)
		return 0;
	return o->phases(st->engine, p, max);
}
