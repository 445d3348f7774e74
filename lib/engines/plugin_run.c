/* One plugin instance in this process: the bootstrap callbacks, the
 * plugin's memory space, its calls, and around them (in verification
 * steps only) the copies into its space and the mapping of its native
 * layout. In a measurement (EG_ENGINE_CTX_BENCH) every step after the
 * first, verified one is only the plugin's dispatch or combine and the
 * wait for its stream: the combine then gets the expert outputs mapped in
 * the verified step (same inputs, so the same values). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/mem.h"
#include "epgate/nccl.h"
#include "epgate/sized.h"
#include "lib/base/watch.h"
#include "plugin_int.h"

int eg_plug_run_err(eg_plug_run_t *r, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* A plugin call that failed (any return but EG_PLUGIN_OK): its own
 * message, verbatim; a code that is not the ABI's said with it. */
int eg_plug_run_fail(eg_plug_run_t *r, int prc, const char *stage)
{
	const char *m = EG_PLUG_HAS(r->pl, error) && r->inst
			    ? r->pl->p->error(r->inst)
			    : NULL;
	char code[64] = "";

	if (prc > 0)
		snprintf(code, sizeof(code),
			 " (returned %d, taken as a failure)", prc);
	if (r->boot_lost && prc != EG_PLUGIN_ENOTSUP) {
		/* not the library's own failure: epgate lost a peer under
		 * it (a rank that died, hung or left the collective) */
		const char *b = r->boot ? eg_boot_error(r->boot) : NULL;

		eg_plug_run_err(r, 0,
				"plugin %s: %s: a peer was lost: epgate's "
				"bootstrap: %s (the plugin: %s%s)",
				r->name, stage, b && *b ? b : "failed",
				m && *m ? m : "no message", code);
		return EG_EPEER;
	}
	eg_plug_run_err(r, 0, "plugin %s: %s: %s%s", r->name, stage,
			m && *m ? m : "failed (the plugin gave no message)",
			code);
	return prc == EG_PLUGIN_ENOTSUP ? EG_ENOSYS : EG_EPLUGIN;
}

/* The marks around the plugin's own calls in timed steps: the boundary
 * every arm's gated times have (docs/metrics.md, "Boundaries"), so on
 * unless EPGATE_PLUGIN_PHASES=0 (to measure what the marks cost). */
static int eg__phases_wanted(void)
{
	const char *a = getenv("EPGATE_PLUGIN_PHASES");

	return !(a && !strcmp(a, "0"));
}

/* The boundary of the marks: the device window for a plugin on the
 * device (the library's host work runs while a hold keeps the stream
 * busy), the call for a host plugin (no device; EPGATE_BOUNDARY=window
 * holds the space's modelled stream, as the tests do). */
static int eg__boundary(eg_plug_run_t *r)
{
	eg_boundary_t dflt = r->pl->caps.memory == EG_PLUGIN_MEM_CUDA
				 ? EG_BOUNDARY_WINDOW
				 : EG_BOUNDARY_CALL;
	int rc;

	if ((rc = eg_boundary_env(dflt, &r->boundary, r->err, sizeof(r->err))) <
		0 ||
	    (rc = eg_window_init(&r->win, r->err, sizeof(r->err))) < 0)
		return rc;
	if (r->boundary == EG_BOUNDARY_REPLAY &&
	    !(r->pl->caps.flags & EG_PLUGIN_CAPTURE_SAFE)) {
		snprintf(r->err, sizeof(r->err),
			 "EPGATE_BOUNDARY=replay: plugin %s does not declare "
			 "itself capture-safe (EG_PLUGIN_CAPTURE_SAFE, "
			 "docs/plugins.md)",
			 r->name);
		return EG_ENOSYS;
	}
	/* a replay is held as a window is: its launch drops out too */
	if ((r->boundary == EG_BOUNDARY_WINDOW ||
	     r->boundary == EG_BOUNDARY_REPLAY) &&
	    (!EG_HAS(r->mem, eg_space_ops_t, passed) || !r->mem->hold)) {
		snprintf(r->err, sizeof(r->err),
			 "EPGATE_BOUNDARY=%s: %s memory cannot hold its "
			 "stream",
			 eg_boundary_name(r->boundary), r->mem->name);
		return EG_ENOSYS;
	}
	return EG_OK;
}

int eg_plug_run_timing(eg_plug_run_t *r, eg_timing_sum_t *t, int reset)
{
	if (!r || !r->timing)
		return EG_ENOSYS;
	t->boundary = (int32_t)r->boundary;
	t->own_marks = r->outer_have == 3;
	t->replays_verified = r->replays_ok;
	if (r->boundary == EG_BOUNDARY_WINDOW ||
	    r->boundary == EG_BOUNDARY_REPLAY) {
		t->window = 1;
		t->samples = r->win.samples;
		t->short_n = r->win.short_n;
		t->synced = r->win.synced;
		t->hold_us = r->win.hold_us;
	}
	if (reset)
		eg_window_reset(&r->win);
	return EG_OK;
}

double eg_plug_timeout(void)
{
	const char *s = getenv("EPGATE_TIMEOUT");
	double v = s ? atof(s) : 0;

	return v > 0 && v <= 1e6 ? v : 60.0;
}

/* ---- the bootstrap, as the plugin sees it ---- */
/* rc of a bootstrap collective, noted when it failed */
static int eg__b_noted(eg_plug_run_t *r, int rc)
{
	if (rc < 0)
		r->boot_lost = 1;
	return rc;
}

static int eg__b_allgather(void *ctx, const void *mine, size_t len, void *all)
{
	eg_plug_run_t *r = ctx;

	return eg__b_noted(
	    r, eg_boot_allgather(r->boot, mine, len, all, r->world.timeout_s));
}

static int eg__b_bcast(void *ctx, void *buf, size_t len, uint32_t root)
{
	eg_plug_run_t *r = ctx;

	return eg__b_noted(
	    r, eg_boot_bcast(r->boot, buf, len, root, r->world.timeout_s));
}

static int eg__b_barrier(void *ctx)
{
	eg_plug_run_t *r = ctx;

	return eg__b_noted(r, eg_boot_barrier(r->boot, r->world.timeout_s));
}

static const char *eg__b_error(void *ctx)
{
	return eg_boot_error(((eg_plug_run_t *)ctx)->boot);
}

/* The job's world and bootstrap, or a world of one of our own. */
static int eg__world(eg_plug_run_t *r, const eg_engine_ctx_t *ctx)
{
	int has_boot = EG_HAS(ctx, eg_engine_ctx_t, boot) && ctx->boot;
	int rc;

	r->lib_mark =
	    EG_HAS(ctx, eg_engine_ctx_t, lib_mark) ? ctx->lib_mark : NULL;
	if (ctx->world) {
		r->world = *ctx->world;
		if (r->world.size != r->W || ctx->first_rank != r->world.rank)
			return eg_plug_run_err(
			    r, EG_EINVAL,
			    "the workload's world %u is not the "
			    "job's %u",
			    r->W, r->world.size);
		if (has_boot) {
			r->boot = ctx->boot;
			return EG_OK;
		}
		if (r->W > 1)
			return eg_plug_run_err(
			    r, EG_ENOSYS,
			    "plugin %s needs the job's bootstrap "
			    "(this suite gives its engines none)",
			    r->name);
	} else {
		memset(&r->world, 0, sizeof(r->world));
		r->world.size = r->world.local_size = r->world.nodes = 1;
		r->world.ranks_per_node = 1;
		r->world.boot_fd = -1;
		r->world.timeout_s = eg_plug_timeout();
	}
	rc = eg_boot_open(&r->own_boot, &r->world, r->world.timeout_s);
	if (rc < 0)
		return eg_plug_run_err(r, rc, "bootstrap: %s",
				       r->own_boot ? eg_boot_error(r->own_boot)
						   : eg_strerror(rc));
	r->boot = r->own_boot;
	return EG_OK;
}

/* The workload against what the plugin declared: a skip, not a failure. */
static int eg__supported(eg_plug_run_t *r)
{
	const eg_plugin_caps_t *c = &r->pl->caps;
	const eg_workload_t *w = &r->w;
	uint32_t maxT = 0;
	const char *what = NULL;
	uint32_t val = 0, lim = 0;

	for (uint32_t s = 0; s < r->W; s++)
		if (eg_workload_tokens(w, s) > maxT)
			maxT = eg_workload_tokens(w, s);
	if (!(c->dtypes & EG_PLUGIN_DTYPE_BIT(w->dtype)))
		return eg_plug_run_err(r, EG_ENOSYS,
				       "plugin %s does not take dtype %s",
				       r->name, eg_dtype_name(w->dtype));
#define EG__LIMIT(field, v, label)                                             \
	if (!what && c->field && (v) > c->field) {                             \
		what = label;                                                  \
		val = (v);                                                     \
		lim = c->field;                                                \
	}
	EG__LIMIT(max_world, r->W, "world")
	EG__LIMIT(max_tokens, maxT, "tokens per rank")
	EG__LIMIT(max_hidden, r->H, "hidden")
	EG__LIMIT(max_experts, w->experts, "experts")
	EG__LIMIT(max_topk, r->K, "top-k")
#undef EG__LIMIT
	if (what)
		return eg_plug_run_err(r, EG_ENOSYS,
				       "plugin %s: %s %u above its limit %u",
				       r->name, what, val, lim);
	if (c->hidden_multiple > 1 && r->H % c->hidden_multiple)
		return eg_plug_run_err(
		    r, EG_ENOSYS,
		    "plugin %s: hidden %u is not a multiple of %u", r->name,
		    r->H, c->hidden_multiple);
	r->env.max_tokens = maxT;
	return EG_OK;
}

/* Host memory, or CUDA (with NCCL's device and stream when it wants a
 * communicator). */
static int eg__space(eg_plug_run_t *r)
{
	int cuda = r->pl->caps.memory == EG_PLUGIN_MEM_CUDA;
	void *stream = NULL;
	int dev = -1, rc;

	r->mem = eg_space_find(cuda ? "cuda" : "host");
	if (!r->mem)
		return eg_plug_run_err(
		    r, EG_ENOSYS,
		    "plugin %s works on CUDA memory; this epgate "
		    "was built without CUDA",
		    r->name);
	if (cuda && (r->pl->caps.flags & EG_PLUGIN_WANTS_NCCL)) {
		/* blocking: a library written for NCCL's default
		 * communicators takes ncclInProgress as a failure (NCCL EP
		 * exits on it) */
		eg_nccl_opts_t o = {.size = sizeof(o),
				    .num_comms = 1,
				    .timeout_s = r->world.timeout_s,
				    .device = -1,
				    .blocking = 1};

		rc = eg_nccl_open(&r->nccl, &r->world, r->boot, &o, r->err,
				  sizeof(r->err));
		if (rc < 0) {
			r->nccl = NULL;
			return rc;
		}
		dev = eg_nccl_device(r->nccl);
		stream = eg_nccl_stream(r->nccl, 0);
		r->env.nccl_comm = eg_nccl_comm(r->nccl, 0);
	}
	rc = r->mem->open_on(&r->ms, &dev, r->world.local_rank, &stream, r->err,
			     sizeof(r->err));
	if (rc < 0)
		return rc;
	r->env.cuda_device = dev;
	r->env.cuda_stream = stream;
	return EG_OK;
}

/* The ids as the plugin takes them; every buffer it is handed is made
 * at its first use (plugin_guard.c). */
static int eg__buffers(eg_plug_run_t *r)
{
	r->ib = (r->pl->caps.flags & EG_PLUGIN_INPUT_IDX64) ? 8 : 4;
	r->h_idx = calloc((size_t)r->T * r->K + 1, r->ib);
	return r->h_idx ? EG_OK : EG_ENOMEM;
}

static void eg__env(eg_plug_run_t *r)
{
	eg_plugin_env_t *e = &r->env;
	const eg_plug_t *pl = r->pl;

	r->pboot = (eg_plugin_boot_t){.ctx = r,
				      .allgather = eg__b_allgather,
				      .bcast = eg__b_bcast,
				      .barrier = eg__b_barrier,
				      .error = eg__b_error};
	e->size = sizeof(*e);
	e->rank = r->me;
	e->world = r->W;
	e->local_rank = r->world.local_rank;
	e->local_size = r->world.local_size ? r->world.local_size : 1;
	e->experts = r->w.experts;
	e->local_experts = r->L;
	e->topk = r->K;
	e->hidden = r->H;
	e->dtype = (uint32_t)r->w.dtype;
	e->combine_dtype = (uint32_t)eg_combine_dtype(r->w.dtype);
	e->tokens = r->T;
	e->total_tokens = eg_workload_total_tokens(&r->w);
	e->boot = &r->pboot;
	e->opts = (eg_plugin_opts_t){
	    .n = pl->nopts, .key = pl->key, .value = pl->val};
	e->timeout_s = r->world.timeout_s;
	e->mark = eg_plug_run_mark;
	e->mark_ctx = r;
}

static int eg__setup(eg_plug_run_t *r, const eg_engine_ctx_t *ctx)
{
	char perr[EG_PLUG_ERR_MAX] = "";
	int rc;

	if ((rc = eg__world(r, ctx)) < 0 || (rc = eg__supported(r)) < 0 ||
	    (rc = eg__space(r)) < 0)
		return rc;
	if ((rc = eg_gen_init(&r->g, &r->w)) < 0 ||
	    (rc = eg_plug_routes_build(&r->rt, &r->w, &r->g)) < 0 ||
	    (rc = eg__buffers(r)) < 0)
		return eg_plug_run_err(r, rc, "setup: %s", eg_strerror(rc));
	eg__env(r);
	r->boot_lost = 0;
	eg_watch_enter(r->name, "create");
	rc = r->pl->p->create(&r->env, &r->inst, perr, sizeof(perr));
	eg_watch_leave();
	if (rc != EG_PLUGIN_OK) {
		const char *b = r->boot ? eg_boot_error(r->boot) : NULL;

		r->inst = NULL;
		if (r->boot_lost && rc != EG_PLUGIN_ENOTSUP) {
			eg_plug_run_err(r, 0,
					"plugin %s: create: a peer was lost: "
					"epgate's bootstrap: %s (the plugin: "
					"%s)",
					r->name, b && *b ? b : "failed",
					perr[0] ? perr : "no message");
			return EG_EPEER;
		}
		eg_plug_run_err(
		    r, 0, "plugin %s: create: %s", r->name,
		    perr[0] ? perr : "failed (the plugin gave no message)");
		return rc == EG_PLUGIN_ENOTSUP ? EG_ENOSYS : EG_EPLUGIN;
	}
	return EG_OK;
}

int eg_plug_run_create(eg_plug_run_t **out, const eg_plug_t *pl,
		       const eg_workload_t *w, const eg_engine_ctx_t *ctx,
		       char *err, size_t errlen)
{
	eg_plug_run_t *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r || eg_workload_copy(&r->w, w) < 0) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return EG_ENOMEM;
	}
	r->pl = pl;
	r->name = pl->p->name ? pl->p->name : pl->path;
	r->W = w->world;
	r->me = ctx->world ? ctx->first_rank : 0;
	r->L = eg_workload_local_experts(w);
	r->K = w->topk;
	r->H = w->hidden;
	r->T = eg_workload_tokens(w, r->me);
	r->G = pl->caps.layout == EG_PLUGIN_LAYOUT_FLAT		? 1
	       : pl->caps.layout == EG_PLUGIN_LAYOUT_RANK_MAJOR ? r->W
								: r->L;
	r->bench = EG_HAS(ctx, eg_engine_ctx_t, flags) &&
		   (ctx->flags & EG_ENGINE_CTX_BENCH);
	r->timing = r->bench && eg__phases_wanted();
	r->env.cuda_device = -1;
	rc = eg__setup(r, ctx);
	if (rc == EG_OK && r->timing)
		rc = eg__boundary(r);
	if (rc < 0) {
		snprintf(err, errlen, "%s",
			 r->err[0] ? r->err : eg_strerror(rc));
		eg_plug_run_destroy(r);
		return rc;
	}
	*out = r;
	return EG_OK;
}

void eg_plug_run_destroy(eg_plug_run_t *r)
{
	if (!r)
		return;
	/* the graphs hold the plugin's buffers: gone before it is */
	for (int i = 0; i < 2 && r->mem; i++)
		if (r->graph[i] && EG_HAS(r->mem, eg_space_ops_t, graph_free))
			r->mem->graph_free(r->ms, r->graph[i]);
	if (r->inst) {
		eg_watch_enter(r->name, "destroy");
		r->pl->p->destroy(r->inst);
		eg_watch_leave();
	}
	eg_plug_bufs_free(r);
	if (r->mem)
		r->mem->close(r->ms);
	if (r->nccl)
		eg_nccl_close(r->nccl);
	if (r->own_boot)
		eg_boot_close(r->own_boot);
	eg_plug_native_free(&r->nat);
	eg_plug_dev_free(r);
	eg_plug_routes_free(&r->rt);
	eg_gen_fini(&r->g);
	eg_workload_fini(&r->w);
	EG_FREE(r->h_idx, r->ynat);
	free(r);
}

const char *eg_plug_run_error(const eg_plug_run_t *r)
{
	return r && r->err[0] ? r->err : NULL;
}
