/* A plugin instance's dispatch and combine: the inputs into the plugin's
 * space, its call, the wait for its stream, then (verification steps
 * only) a host copy of its native receive layout, checked and mapped onto
 * the canonical one; combine gets the expert outputs in the native
 * layout and its result comes back to the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/sized.h"
#include "lib/base/watch.h"
#include "plugin_int.h"

/* A multi-step case: the routes to map by are the step's, and this
 * rank's tokens (at most the instance's, so the buffers fit). Every rank
 * regenerates every rank's routing from the step, so a new routing epoch
 * is decided here, by all of them alike: a rank with no tokens (whose own
 * routing is empty in both steps) sees the new epoch with the others. */
static int eg__follow_step(eg_plug_run_t *r, const eg_workload_t *step)
{
	eg_plug_routes_t old = r->rt;
	int rc;

	if (!step || (step->seed == r->w.seed &&
		      eg_workload_tokens(step, r->me) == r->T &&
		      eg_workload_total_tokens(step) == r->rt.total))
		return EG_OK;
	eg_workload_fini(&r->w);
	eg_gen_fini(&r->g);
	memset(&r->rt, 0, sizeof(r->rt));
	if ((rc = eg_workload_copy(&r->w, step)) < 0 ||
	    (rc = eg_gen_init(&r->g, &r->w)) < 0 ||
	    (rc = eg_plug_routes_build(&r->rt, &r->w, &r->g)) < 0) {
		eg_plug_routes_free(&old);
		return eg_plug_run_err(r, rc, "step: %s", eg_strerror(rc));
	}
	if (r->epoch && !eg_plug_routes_equal(&old, &r->rt))
		r->epoch++;
	eg_plug_routes_free(&old);
	r->T = eg_workload_tokens(&r->w, r->me);
	return EG_OK;
}

/* epgate's input, copied into the plugin's space with guards after each
 * array (the plugin never sees epgate's own). */
static int eg__stage_input(eg_plug_run_t *r, const eg_rank_input_t *in)
{
	size_t T = r->T, H = r->H, K = r->K, nk = T * K;
	size_t xb = T * H * eg_dtype_size(r->w.dtype);
	size_t sb = r->w.dtype == EG_DTYPE_FP8 ? T * (H / EG_FP8_BLOCK) * 4 : 0;
	const void *ids = in->topk_idx;
	int rc;

	if (in->tokens != r->T || in->hidden != r->H || in->topk != r->K ||
	    in->dtype != r->w.dtype)
		return eg_plug_run_err(r, EG_EINVAL,
				       "input of %u tokens does not fit the "
				       "instance's shape",
				       in->tokens);
	if (!r->epoch)
		r->epoch = 1;
	if (r->ib == 8) {
		for (size_t i = 0; i < nk; i++)
			((int64_t *)r->h_idx)[i] = in->topk_idx[i];
		ids = r->h_idx;
	}
	if ((rc = eg_plug_buf_put(r, EG_PLUG_B_X, in->x, xb)) < 0 ||
	    (rc = eg_plug_buf_put(r, EG_PLUG_B_SCALES, sb ? in->scales : NULL,
				  sb)) < 0 ||
	    (rc = eg_plug_buf_put(r, EG_PLUG_B_IDX, ids, nk * r->ib)) < 0 ||
	    (rc = eg_plug_buf_put(r, EG_PLUG_B_W, in->topk_w, nk * 4)) < 0)
		return rc;
	r->pin = (eg_plugin_input_t){.size = sizeof(r->pin),
				     .tokens = r->T,
				     .routing_epoch = r->epoch,
				     .x = r->buf[EG_PLUG_B_X].p,
				     .scales = r->w.dtype == EG_DTYPE_FP8
						   ? r->buf[EG_PLUG_B_SCALES].p
						   : NULL,
				     .topk_idx = r->buf[EG_PLUG_B_IDX].p,
				     .topk_w = r->buf[EG_PLUG_B_W].p};
	return EG_OK;
}

/* n bytes at src (plugin space) + off into dst + off, if src is given. */
static int eg__get(eg_plug_run_t *r, void *dst, const void *src, size_t off,
		   size_t n)
{
	if (!src || !n)
		return EG_OK;
	return r->mem->copy(r->ms, (uint8_t *)dst + off,
			    (const uint8_t *)src + off, n);
}

/* w-byte integers (4 or 8) at src into int64 dst, n of them from off. */
static int eg__get_ints(eg_plug_run_t *r, int64_t *dst, const void *src,
			uint32_t w, size_t off, size_t n)
{
	void *tmp;
	int rc;

	if (!src || !n)
		return EG_OK;
	tmp = malloc(n * w);
	if (!tmp)
		return EG_ENOMEM;
	rc = r->mem->copy(r->ms, tmp, (const uint8_t *)src + off * w, n * w);
	for (size_t i = 0; rc == EG_OK && i < n; i++)
		dst[off + i] =
		    w == 8 ? ((int64_t *)tmp)[i] : ((int32_t *)tmp)[i];
	free(tmp);
	return rc;
}

/* What the plugin must have returned for its layout to be read at all. */
static int eg__shape(eg_plug_run_t *r, uint32_t *cb, uint32_t *ib)
{
	const eg_plugin_recv_t *p = &r->prc;
	uint32_t lay = r->pl->caps.layout;
	/* room for a receive budget sized by selections (ep_bench sizes
	 * NCCL EP's at tokens x top-k), not beyond */
	uint64_t lim = (4 + (uint64_t)r->K) * r->W * r->env.max_tokens + 256;
	const char *miss = NULL;

	*cb = p->count_bytes ? p->count_bytes : 4;
	*ib = p->idx_bytes ? p->idx_bytes : 4;
	if ((*cb != 4 && *cb != 8) || (*ib != 4 && *ib != 8))
		return eg_plug_run_err(r, EG_EPLUGIN,
				       "plugin %s: dispatch: count_bytes %u, "
				       "idx_bytes %u: want 4 or 8",
				       r->name, p->count_bytes, p->idx_bytes);
	if (p->stride > lim)
		return eg_plug_run_err(
		    r, EG_EPLUGIN,
		    "plugin %s: dispatch: stride of %u rows "
		    "per group, more than (4 + top-k) x world x "
		    "most "
		    "tokens + 256 = %llu",
		    r->name, p->stride, (unsigned long long)lim);
	if (!p->count && lay != EG_PLUGIN_LAYOUT_FLAT)
		miss = "counters (count)";
	else if (p->stride && !p->x)
		miss = "payload (x)";
	else if (p->stride && r->w.dtype == EG_DTYPE_FP8 && !p->scales)
		miss = "fp8 scales (scales)";
	else if (p->stride && lay != EG_PLUGIN_LAYOUT_EXPERT_MAJOR &&
		 (!p->topk_idx || !p->topk_w))
		miss = "top-k slots (topk_idx, topk_w)";
	else if (p->src_rank && !p->src_token)
		miss = "source tokens (src_rank without src_token)";
	else if (p->src_token && !p->src_rank &&
		 lay != EG_PLUGIN_LAYOUT_RANK_MAJOR)
		miss = "source ranks (src_token without src_rank)";
	if (miss)
		return eg_plug_run_err(r, EG_EPLUGIN,
				       "plugin %s: dispatch returned no %s",
				       r->name, miss);
	return EG_OK;
}

/* Counters, clamped to [0, stride]; anything else is a finding. */
static int eg__counts(eg_plug_run_t *r, eg_plug_native_t *n, uint32_t cb,
		      eg_verdict_t *f)
{
	int rc;

	n->count = calloc(n->G, sizeof(int64_t));
	if (!n->count)
		return EG_ENOMEM;
	if (r->prc.count)
		rc = eg__get_ints(r, n->count, r->prc.count, cb, 0, n->G);
	else
		rc = (n->count[0] = r->prc.rows, EG_OK);
	for (uint32_t g = 0; rc == EG_OK && g < n->G; g++) {
		int64_t c = n->count[g];
		int em = n->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR;
		int rm = n->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR;
		eg_mismatch_t m = {.field = EG_FIELD_NATIVE_COUNT,
				   .rank = (int32_t)n->rank,
				   .src_rank = rm ? (int32_t)g : -1,
				   .src_token = -1,
				   .expert =
				       em ? (int32_t)(n->rank * n->L + g) : -1,
				   .row = -1,
				   .col = g,
				   .expected = n->S,
				   .actual = (uint64_t)c};

		if (c >= 0 && c <= (int64_t)n->S)
			continue;
		eg_verdict_wrong(f, &m);
		n->count[g] = c < 0 ? 0 : (int64_t)n->S;
	}
	return rc;
}

/* The valid rows of every group, into host arrays of G * S slots. */
static int eg__rows(eg_plug_run_t *r, eg_plug_native_t *n, uint32_t cb,
		    uint32_t ib)
{
	const eg_plugin_recv_t *p = &r->prc;
	size_t slots = (size_t)n->G * n->S, H = n->H, K = n->K;
	size_t esz = eg_dtype_size(n->dtype), nb = H / EG_FP8_BLOCK;
	int rows = n->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR, rc = EG_OK;

	n->x = calloc(slots * H * esz + 1, 1);
	n->scales = p->scales ? calloc(slots * nb + 1, sizeof(float)) : NULL;
	n->src_rank = p->src_rank ? calloc(slots + 1, 4) : NULL;
	n->src_token = p->src_token ? calloc(slots + 1, 4) : NULL;
	n->topk_idx = rows ? calloc(slots * K + 1, 8) : NULL;
	n->topk_w = rows ? calloc(slots * K + 1, 4) : NULL;
	n->expert_count = rows && p->expert_count ? calloc(n->L + 1, 8) : NULL;
	n->key_src = calloc(slots + 1, 4);
	n->key_tok = calloc(slots + 1, 4);
	n->row = calloc(slots + 1, 4);
	if (!n->x || (p->scales && !n->scales) ||
	    (p->src_rank && !n->src_rank) || (p->src_token && !n->src_token) ||
	    (rows && (!n->topk_idx || !n->topk_w)) || !n->key_src ||
	    !n->key_tok || !n->row)
		return EG_ENOMEM;
	/* no slot has a key until one is found for it */
	memset(n->key_src, 0xff, (slots + 1) * 4);
	memset(n->key_tok, 0xff, (slots + 1) * 4);
	for (uint32_t g = 0; rc == EG_OK && g < n->G; g++) {
		size_t o = (size_t)g * n->S, c = (size_t)n->count[g];

		if ((rc = eg__get(r, n->x, p->x, o * H * esz, c * H * esz)) ||
		    (rc = eg__get(r, n->scales, p->scales, o * nb * 4,
				  c * nb * 4)) ||
		    (rc = eg__get(r, n->src_rank, p->src_rank, o * 4, c * 4)) ||
		    (rc = eg__get(r, n->src_token, p->src_token, o * 4, c * 4)))
			break;
		if (rows && ((rc = eg__get_ints(r, n->topk_idx, p->topk_idx, ib,
						o * K, c * K)) ||
			     (rc = eg__get(r, n->topk_w, p->topk_w, o * K * 4,
					   c * K * 4))))
			break;
	}
	if (rc == EG_OK && n->expert_count)
		rc = eg__get_ints(r, n->expert_count, p->expert_count, cb, 0,
				  n->L);
	return rc;
}

/* Every slot's key: the plugin's source info, or by content against the
 * reference of iteration iter. */
static int eg__keys(eg_plug_run_t *r, eg_plug_native_t *n, uint32_t iter,
		    eg_verdict_t *f)
{
	eg_workload_t wi;
	eg_gen_t gi = {0};
	int rc;

	if (n->src_token) {
		eg_plug_keys_given(n, &r->rt, f);
		return EG_OK;
	}
	if ((rc = eg_workload_copy(&wi, &r->w)) < 0)
		return rc;
	wi.iter = iter;
	rc = eg_gen_init(&gi, &wi);
	if (rc == EG_OK)
		rc = eg_plug_keys_content(n, &wi, &gi, f);
	eg_gen_fini(&gi);
	eg_workload_fini(&wi);
	if (rc < 0)
		return eg_plug_run_err(r, rc, "keys by content: %s",
				       eg_strerror(rc));
	return EG_OK;
}

/* The native layout, copied, checked and mapped into out (through a host
 * copy for a caller with device buffers). */
static int eg__map(eg_plug_run_t *r, uint32_t iter, eg_recv_t *dst)
{
	eg_plug_native_t *n = &r->nat;
	eg_recv_t *out;
	eg_verdict_t f;
	uint32_t cb, ib;
	int rc;

	eg_verdict_init(&f);
	/* what the plugin did to the buffers it was handed, first */
	eg_verdict_merge(&f, &r->found);
	eg_plug_native_free(n);
	r->mapped = 0;
	*n = (eg_plug_native_t){
	    .layout = r->pl->caps.layout,
	    .G = r->G,
	    .S = r->prc.stride,
	    .W = r->W,
	    .L = r->L,
	    .K = r->K,
	    .H = r->H,
	    .rank = r->me,
	    .dtype = r->w.dtype,
	    .slots_any = (r->pl->caps.flags & EG_PLUGIN_SLOTS_ANY_ORDER) != 0};
	if ((rc = eg__shape(r, &cb, &ib)) < 0 ||
	    (rc = eg_plug_dev_recv(r, dst, &out)) < 0)
		return rc;
	if (out->capacity < r->rt.total)
		return eg_plug_run_err(
		    r, EG_ERANGE, "receive capacity %u < %llu", out->capacity,
		    (unsigned long long)r->rt.total);
	if ((rc = eg__counts(r, n, cb, &f)) < 0 ||
	    (rc = eg__rows(r, n, cb, ib)) < 0)
		return eg_plug_run_err(r, rc, "reading the native layout: %s",
				       eg_strerror(rc));
	if ((rc = eg__keys(r, n, iter, &f)) < 0 ||
	    (rc = eg_plug_slots_canon(n, &r->rt)) < 0 ||
	    (rc = eg_plug_project(n, &r->rt, out, &f)) < 0)
		return rc;
	if (!out->findings && !(out->findings = malloc(sizeof(f))))
		return EG_ENOMEM;
	*out->findings = f;
	if ((rc = eg_plug_dev_recv_put(r, dst)) < 0)
		return rc;
	r->mapped = 1;
	return EG_OK;
}

/* Mark m before (m = 0) or after (m = 1) the plugin's dispatch, or its
 * combine (2, 3), in a timed step; after the wait for its stream, the
 * phase from its pair (m = 1, 3). In the device window, a hold is queued
 * before the start mark, and when the call has returned, whether the
 * stream had passed the start mark already says if the hold was long
 * enough (include/epgate/window.h). */
static int eg__time(eg_plug_run_t *r, int timed, unsigned m, int done)
{
	int win = r->boundary == EG_BOUNDARY_WINDOW ||
		  r->boundary == EG_BOUNDARY_REPLAY,
	    passed = 0;
	/* the span timed: the library's own marks (4, 5) when the plugin
	 * gave both, else epgate's around the call */
	int own = (r->pm & 3) == 3;
	unsigned a = own ? 4 : m - 1, b = own ? 5 : m;
	int rc = EG_OK;

	if (!timed)
		return EG_OK;
	if (!done && m % 2 == 0) {
		if (win)
			rc = r->mem->hold(r->ms, r->win.hold_us);
		if (rc == EG_OK)
			rc = r->mem->mark(r->ms, m);
		r->pm = 0;
		r->in_call = rc == EG_OK;
		return rc < 0 ? eg_plug_run_err(r, rc,
						"timing the plugin's calls: %s",
						eg_strerror(rc))
			      : EG_OK;
	}
	if (!done) {
		r->in_call = 0;
		if (r->pm & 4 || (r->pm & 3) == 1)
			return eg_plug_run_err(
			    r, EG_EPLUGIN,
			    "plugin %s: its marks of the library's call were "
			    "out of order (env.mark: %s)",
			    r->name,
			    r->pm & 4 ? "an end without a start, or one twice"
				      : "a start without an end");
		if (win && (rc = r->mem->passed(r->ms, a, &passed)) == EG_OK)
			eg_window_after(&r->win, passed);
		if (rc == EG_OK)
			rc = r->mem->mark(r->ms, m);
	} else if ((rc = r->mem->span_ms(r->ms, a, b, &r->ph_ms[m / 2])) ==
		   EG_OK) {
		r->ph_have |= 1 << (m / 2);
		r->outer_have &= ~(1 << (m / 2));
		if (own && (rc = r->mem->span_ms(r->ms, m - 1, m,
						 &r->outer_ms[m / 2])) == EG_OK)
			r->outer_have |= 1 << (m / 2);
	}
	return rc < 0 ? eg_plug_run_err(r, rc, "timing the plugin's calls: %s",
					eg_strerror(rc))
		      : EG_OK;
}

int eg_plug_run_mark(void *ctx, int end)
{
	eg_plug_run_t *r = ctx;
	unsigned bit = end ? 2 : 1;

	if (!r || !r->in_call)
		return EG_PLUGIN_OK;
	if ((r->pm & bit) || (end && !(r->pm & 1))) {
		r->pm |= 4;
		return EG_PLUGIN_EFAIL;
	}
	if (r->mem->mark(r->ms, end ? 5 : 4) < 0) {
		r->pm |= 4;
		return EG_PLUGIN_EFAIL;
	}
	/* the kernel boundary: what is queued in between is the library's */
	if (r->lib_mark)
		r->lib_mark(end);
	r->pm |= bit;
	return EG_PLUGIN_OK;
}

/* After the plugin's stage call (dispatch: mark m = 1, combine: 3) that
 * returned prc: its failure, or the mark after it, the wait for its stream
 * and the phase. */
static int eg__called(eg_plug_run_t *r, int prc, const char *stage, int timed,
		      unsigned m)
{
	int rc;

	if (prc != EG_PLUGIN_OK)
		return eg_plug_run_fail(r, prc, stage);
	if ((rc = eg__time(r, timed, m, 0)) < 0)
		return rc;
	if ((rc = r->mem->sync(r->ms)) < 0)
		return eg_plug_run_err(r, rc, "plugin %s: %s: its stream: %s",
				       r->name, stage, eg_strerror(rc));
	return eg__time(r, timed, m, 1);
}

/* The replay boundary: the call n of a stage is a replay of its capture
 * (every call after the first, verified and direct, of the instance). */
static int eg__replaying(const eg_plug_run_t *r, uint64_t n)
{
	return r->timing && r->boundary == EG_BOUNDARY_REPLAY && n > 0;
}

/* The call of a stage (comb: combine) captured, once, on the inputs of
 * the call before: on the device a CUDA graph of what it queued (nothing
 * runs), on the host the call itself (its model). A replay that then
 * writes nothing leaves that call's rows behind, which the verified
 * replays on new data find. */
static int eg__capture(eg_plug_run_t *r, int comb)
{
	const char *stage = comb ? "combine" : "dispatch";
	int dev = EG_HAS(r->mem, eg_space_ops_t, capture) && r->mem->capture;
	eg_plugin_recv_t cap = {.size = sizeof(cap)};
	const void *ys = r->prc.y ? r->prc.y : r->buf[EG_PLUG_B_Y].p;
	void *dst = r->buf[EG_PLUG_B_OUT].p;
	int prc, rc, erc = EG_OK;
	char why[256] = "";

	if (dev && (rc = r->mem->capture(r->ms, 0, NULL, why, sizeof(why))) < 0)
		return eg_plug_run_err(r, rc, "plugin %s: %s: capture: %s",
				       r->name, stage, why);
	eg_watch_enter(r->name,
		       comb ? "combine (capture)" : "dispatch (capture)");
	prc = comb ? r->pl->p->combine(r->inst, &r->pin, ys, dst)
		   : r->pl->p->dispatch(r->inst, &r->pin, &cap);
	eg_watch_leave();
	if (dev)
		erc = r->mem->capture(r->ms, 1, &r->graph[comb], why,
				      sizeof(why));
	if (prc != EG_PLUGIN_OK) {
		rc = eg_plug_run_fail(r, prc,
				      comb ? "combine (captured)"
					   : "dispatch (captured)");
		if (erc < 0) {
			size_t n = strlen(r->err);

			snprintf(r->err + n, sizeof(r->err) - n,
				 " (the capture: %s)", why);
		}
		return rc;
	}
	if (erc < 0)
		return eg_plug_run_err(
		    r, EG_EPLUGIN,
		    "plugin %s declares itself capture-safe, but its %s "
		    "could not be captured into a CUDA graph on its stream: "
		    "%s",
		    r->name, stage, why);
	if (!comb) {
		r->prc_cap = cap;
		r->pin_cap = r->pin;
		r->cap_epoch = r->epoch;
	} else {
		r->ys_cap = ys;
	}
	r->captured[comb] = 1;
	return EG_OK;
}

/* A replay reads the buffers the capture did: the staged input must not
 * have moved, nor the routing changed (one capture per instance). */
static int eg__same_input(eg_plug_run_t *r)
{
	const eg_plugin_input_t *a = &r->pin, *b = &r->pin_cap;

	if (r->epoch != r->cap_epoch)
		return eg_plug_run_err(r, EG_ENOSYS,
				       "replay: the routing changed after the "
				       "capture (the replay boundary takes one "
				       "routing per instance)");
	if (a->x != b->x || a->scales != b->scales ||
	    a->topk_idx != b->topk_idx || a->topk_w != b->topk_w ||
	    a->tokens != b->tokens)
		return eg_plug_run_err(r, EG_EINVAL,
				       "replay: the staged input moved after "
				       "the capture");
	return EG_OK;
}

/* The host model's replay of a dispatch returned recv d: where a graph
 * would write is where the capture's recv points, so a plugin whose
 * arrays move between calls is not capture-safe (and its captured
 * arrays may be gone). */
static int eg__recv_stayed(eg_plug_run_t *r, const eg_plugin_recv_t *d)
{
	const eg_plugin_recv_t *c = &r->prc_cap;
	const char *moved = d->x != c->x		   ? "x"
			    : d->count != c->count	   ? "count"
			    : d->scales != c->scales	   ? "scales"
			    : d->src_rank != c->src_rank   ? "src_rank"
			    : d->src_token != c->src_token ? "src_token"
			    : d->topk_idx != c->topk_idx   ? "topk_idx"
			    : d->topk_w != c->topk_w	   ? "topk_w"
			    : d->expert_count != c->expert_count
				? "expert_count"
			    : d->y != c->y	     ? "y"
			    : d->stride != c->stride ? "stride"
						     : NULL;

	if (!moved)
		return EG_OK;
	return eg_plug_run_err(r, EG_EPLUGIN,
			       "plugin %s declares itself capture-safe, but "
			       "its dispatch returned another recv.%s than at "
			       "the capture: a replay would write where the "
			       "captured recv does not point",
			       r->name, moved);
}

/* The call of a stage: the plugin's own or, replaying, its graph
 * launched (device) or the call again with the captured arguments (the
 * host model; what it returns in recv must be what the capture did, as
 * a graph returns nothing). *prc: the plugin's return; < 0: the graph's
 * launch failed, or the host model's recv moved. */
static int eg__stage_call(eg_plug_run_t *r, int replay, int comb,
			  const void *ys, void *dst, int *prc)
{
	eg_plugin_recv_t drop = {.size = sizeof(drop)};
	int rc = EG_OK;

	*prc = EG_PLUGIN_OK;
	eg_watch_enter(r->name, comb ? "combine" : "dispatch");
	if (replay && r->graph[comb])
		rc = r->mem->replay(r->ms, r->graph[comb]);
	else if (comb)
		*prc = r->pl->p->combine(r->inst, &r->pin, ys, dst);
	else
		*prc = r->pl->p->dispatch(r->inst, &r->pin,
					  replay ? &drop : &r->prc);
	eg_watch_leave();
	if (rc < 0)
		return eg_plug_run_err(r, rc,
				       "plugin %s: %s: launching its captured "
				       "graph: %s",
				       r->name, comb ? "combine" : "dispatch",
				       eg_strerror(rc));
	if (replay && !comb && !r->graph[0] && *prc == EG_PLUGIN_OK)
		return eg__recv_stayed(r, &drop);
	return EG_OK;
}

int eg_plug_run_phases(const eg_plug_run_t *r, eg_engine_phase_t *p, size_t max)
{
	int n = 2;

	if (!r || r->ph_have != 3 || max < 2)
		return 0;
	p[0] =
	    (eg_engine_phase_t){.name = "plugin_dispatch", .ms = r->ph_ms[0]};
	p[1] = (eg_engine_phase_t){.name = "plugin_combine", .ms = r->ph_ms[1]};
	/* what the plugin did around its library's call (its own marks) */
	if (r->outer_have == 3 && max >= 4) {
		p[n++] =
		    (eg_engine_phase_t){.name = "plugin_dispatch_around",
					.ms = r->outer_ms[0] - r->ph_ms[0]};
		p[n++] =
		    (eg_engine_phase_t){.name = "plugin_combine_around",
					.ms = r->outer_ms[1] - r->ph_ms[1]};
	}
	return n;
}

int eg_plug_run_dispatch(eg_plug_run_t *r, const eg_rank_input_t *in,
			 eg_recv_t *out)
{
	int replay = eg__replaying(r, r->n_disp);
	/* the replay boundary also verifies the first replays, on new data */
	int verified = !r->bench || r->n_disp == 0 ||
		       (replay && r->n_disp <= EG_REPLAY_CHECKS);
	int timed = r->timing && !verified;
	const eg_rank_input_t *use;
	int rc, prc;

	r->err[0] = '\0';
	r->boot_lost = 0;
	r->ph_have = 0;
	if ((rc = eg__follow_step(r, in->step)) < 0 ||
	    (rc = eg_plug_dev_probe(r, in)) < 0)
		return rc;
	/* captured on the input of the call before, then new input */
	if (replay && !r->captured[0] && (rc = eg__capture(r, 0)) < 0)
		return rc;
	if (verified && ((rc = eg_plug_dev_input(r, in, &use)) < 0 ||
			 (rc = eg__stage_input(r, use)) < 0))
		return rc;
	if (replay && (rc = eg__same_input(r)) < 0)
		return rc;
	memset(&r->prc, 0, sizeof(r->prc));
	r->prc.size = sizeof(r->prc);
	if ((rc = eg__time(r, timed, 0, 0)) < 0)
		return rc;
	if ((rc = eg__stage_call(r, replay, 0, NULL, NULL, &prc)) < 0 ||
	    (rc = eg__called(r, prc, "dispatch", timed, 1)) < 0)
		return rc;
	/* a replay's rows are where the capture said they would be */
	if (replay)
		r->prc = r->prc_cap;
	r->n_disp++;
	r->last_mapped = verified;
	if (!verified)
		return EG_OK;
	if ((rc = eg_plug_bufs_check(r, EG_PLUG_B_INPUTS, "dispatch")) < 0)
		return rc;
	return eg__map(r, in->iter, out);
}

/* The expert outputs in the native layout (on the host), then in the
 * plugin's space: its own recv.y, or a buffer of epgate's with a guard. */
static int eg__native_y(eg_plug_run_t *r, const void *y)
{
	size_t yb = (size_t)r->nat.G * r->nat.S * r->H *
		    eg_dtype_size(eg_combine_dtype(r->w.dtype));
	int rc;

	if (!r->mapped)
		return eg_plug_run_err(r, EG_EINVAL,
				       "combine without a mapped dispatch");
	if (yb + 1 > r->ynat_cap) {
		free(r->ynat);
		r->ynat_cap = 0;
		if (!(r->ynat = malloc(yb + 1)))
			return EG_ENOMEM;
		r->ynat_cap = yb + 1;
	}
	if ((rc = eg_plug_native_y(&r->nat, &r->g, y, r->ynat)) < 0)
		return eg_plug_run_err(r, rc, "expert stage: %s",
				       eg_strerror(rc));
	r->y_ours = !r->prc.y;
	if (r->y_ours) {
		rc = eg_plug_buf_put(r, EG_PLUG_B_Y, r->ynat, yb);
		r->ysel = r->buf[EG_PLUG_B_Y].p;
		return rc;
	}
	r->ysel = r->prc.y;
	if ((rc = r->mem->copy(r->ms, r->prc.y, r->ynat, yb)) < 0)
		return eg_plug_run_err(r, rc, "expert outputs to %s memory: %s",
				       r->mem->name, eg_strerror(rc));
	return EG_OK;
}

/* A verified combine's output: poisoned before the call; after it, the
 * buffers checked and the output given to the caller. */
static int eg__combined(eg_plug_run_t *r, void *out, size_t ob)
{
	unsigned mask = EG_PLUG_B_INPUTS | 1u << EG_PLUG_B_OUT;
	int rc;

	if (r->y_ours)
		mask |= 1u << EG_PLUG_B_Y;
	if ((rc = eg_plug_bufs_check(r, mask, "combine")) < 0)
		return rc;
	if ((rc = r->mem->copy(r->ms, out, r->buf[EG_PLUG_B_OUT].p, ob)) < 0)
		return eg_plug_run_err(r, rc, "combine output from %s: %s",
				       r->mem->name, eg_strerror(rc));
	return EG_OK;
}

int eg_plug_run_combine(eg_plug_run_t *r, const void *y, void *out)
{
	int replay = eg__replaying(r, r->n_comb);
	int verified = !r->bench || r->n_comb == 0 ||
		       (replay && r->n_comb <= EG_REPLAY_CHECKS);
	int timed = r->timing && !verified;
	size_t ob =
	    (size_t)r->T * r->H * eg_dtype_size(eg_combine_dtype(r->w.dtype));
	const void *ys;
	void *dst = out;
	int rc, prc;

	r->err[0] = '\0';
	r->boot_lost = 0;
	if (replay && !r->captured[1] && (rc = eg__capture(r, 1)) < 0)
		return rc;
	if (verified && ((rc = eg_plug_dev_y(r, y, &y)) < 0 ||
			 (rc = eg__native_y(r, y)) < 0 ||
			 (rc = eg_plug_buf_poison(r, EG_PLUG_B_OUT, ob)) < 0))
		return rc;
	if (replay && verified && r->ysel != r->ys_cap)
		return eg_plug_run_err(r, EG_EINVAL,
				       "replay: the expert outputs moved after "
				       "the capture");
	ys = !verified && r->prc.y ? r->prc.y : r->ysel;
	/* after the expert stage, as in any step: a GPU caller's runs on a
	 * stream of its own (the plugin's call then runs alone on the
	 * device, as ep_bench times it) */
	if (!verified && r->dev_caller &&
	    (rc = eg_plug_dev_copy(NULL, NULL, 0)) < 0)
		return eg_plug_run_err(r, rc, "waiting for the device: %s",
				       eg_strerror(rc));
	if ((rc = eg__time(r, timed, 2, 0)) < 0)
		return rc;
	/* a timed step of a host plugin writes the caller's buffer itself,
	 * unchecked; a CUDA one the buffer of the verified step */
	if (verified || replay || r->pl->caps.memory == EG_PLUGIN_MEM_CUDA)
		dst = r->buf[EG_PLUG_B_OUT].p;
	if (replay)
		ys = r->ys_cap;
	if ((rc = eg__stage_call(r, replay, 1, ys, dst, &prc)) < 0 ||
	    (rc = eg__called(r, prc, "combine", timed, 3)) < 0)
		return rc;
	r->n_comb++;
	if (!verified)
		return EG_OK;
	if ((rc = eg__combined(r, out, ob)) == EG_OK && replay)
		r->replays_ok++;
	return rc;
}

const eg_verdict_t *eg_plug_run_found(const eg_plug_run_t *r)
{
	return &r->found;
}
