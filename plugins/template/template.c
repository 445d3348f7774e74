/* The epgate plugin template: a complete EP engine on host memory that
 * needs nothing but the bootstrap epgate hands it. Dispatch allgathers
 * every rank's input and keeps the tokens routed here; combine allgathers
 * every rank's expert outputs and sums each of its tokens' rows. Slow,
 * simple and right: the starting point for an adapter (docs/plugins.md)
 * and, built with -D flags (faults.h), the planted-fault plugins.
 *
 * Options: layout=flat|rank|expert (the native layout; default flat),
 * keys=given|content (return the source of each row, or let epgate find
 * it by content; default given), capture=safe|no (declare
 * EG_PLUGIN_CAPTURE_SAFE for epgate's host model of a graph replay, the
 * call made again; default no).
 *
 * It also holds epgate to what docs/plugins.md promises about
 * routing_epoch, as a library that builds a collective handle per epoch
 * (NCCL EP's high-throughput mode) needs it: every rank sees a new epoch
 * together, and the routing never changes within one. Either broken is
 * the template's failure, on every rank alike. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/plugin.h"

typedef struct tpl {
	eg_plugin_env_t env;
	uint32_t layout, G, S; /* native layout: G groups of S rows */
	int content_keys;
	size_t xb, sb, cb;   /* row bytes: payload, fp8 scales, expert output */
	size_t ib;	     /* a row's ids: after x and scales, 4-aligned */
	size_t inb, outb;    /* one rank's blob in dispatch, in combine */
	uint8_t *blob, *all; /* mine, everyone's */
	int32_t *count, *src, *tok, *idx;
	int32_t *ecount; /* row layouts: slots naming each local expert */
	int32_t prev_s, prev_i; /* the token kept last */
	/* the routing of the current epoch (this rank's input) */
	uint32_t epoch, ep_tokens;
	int32_t *ep_idx;
	float *ep_w;
	uint64_t own_epoch, own_hash; /* planted faults only (faults.h) */
	const void *memo_x, *memo_y;  /* and the replay faults' */
	uint32_t memo_epoch;
	uint8_t *x2;
	uint8_t *hit; /* combine: a token with rows somewhere */
	uint8_t *x;
	float *scales, *w, *acc;
	char err[256];
} tpl_t;

/* dispatch's blob starts with tokens, routing_epoch, a stale flag */
#define BLOB_HDR 16

#include "faults.h"
#include "intermittent.h"

static int options(const eg_plugin_opts_t *o, uint32_t *layout, int *content,
		   int *capture, char *err, size_t len)
{
	*layout = EG_PLUGIN_LAYOUT_FLAT;
	*content = 0;
	*capture = 0;
	for (uint32_t i = 0; i < o->n; i++) {
		const char *k = o->key[i], *v = o->value[i];
		if (!strcmp(k, "layout") && !strcmp(v, "flat"))
			*layout = EG_PLUGIN_LAYOUT_FLAT;
		else if (!strcmp(k, "layout") && !strcmp(v, "rank"))
			*layout = EG_PLUGIN_LAYOUT_RANK_MAJOR;
		else if (!strcmp(k, "layout") && !strcmp(v, "expert"))
			*layout = EG_PLUGIN_LAYOUT_EXPERT_MAJOR;
		else if (!strcmp(k, "keys") && !strcmp(v, "given"))
			*content = 0;
		else if (!strcmp(k, "keys") && !strcmp(v, "content"))
			*content = 1;
		else if (!strcmp(k, "capture") && !strcmp(v, "safe"))
			*capture = 1;
		else if (!strcmp(k, "capture") && !strcmp(v, "no"))
			*capture = 0;
		else {
			snprintf(err, len,
				 "option %s=%s: want layout=flat|"
				 "rank|expert, keys=given|content or "
				 "capture=safe|no",
				 k, v);
			return EG_PLUGIN_EFAIL;
		}
	}
	return EG_PLUGIN_OK;
}

static int query(const eg_plugin_opts_t *o, eg_plugin_caps_t *c, char *err,
		 size_t len)
{
	int content, capture;

	if (options(o, &c->layout, &content, &capture, err, len))
		return EG_PLUGIN_EFAIL;
	c->memory = EG_PLUGIN_MEM_HOST;
	c->dtypes = EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_BF16) |
		    EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_FP32) |
		    EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_FP8);
	/* combine sums destination ranks in ascending order in fp32 */
	if (c->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
		c->flags = EG_PLUGIN_CANONICAL_ORDER;
	if (capture)
		c->flags |= EG_PLUGIN_CAPTURE_SAFE;
	if (TPL_V2 && EG_PLUGIN_HAS(c, eg_plugin_caps_t, options)) {
		/* expert-major: the weights applied in slot order, every
		 * call the same */
		c->order = c->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR
			       ? EG_PLUGIN_ORDER_FIXED
			       : EG_PLUGIN_ORDER_CANONICAL;
		c->lib_name = "epgate-template";
		c->lib_version = "1.0";
		c->lib_build = "built with the epgate tree (" __DATE__ ")";
		c->options = "layout=flat|rank|expert  the native receive "
			     "layout (default flat)\n"
			     "keys=given|content  return each row's source, "
			     "or let epgate find it by content (default "
			     "given)\n"
			     "capture=safe|no  declare itself capture-safe, "
			     "for epgate's host model of a graph replay "
			     "(default no)";
	}
	return EG_PLUGIN_OK;
}

static void destroy(void *inst)
{
	tpl_t *t = inst;

	TPL_DESTROY(t);
	free(t->blob), free(t->all), free(t->count), free(t->ecount);
	free(t->src), free(t->tok), free(t->idx), free(t->x), free(t->scales);
	free(t->w), free(t->x2);
	free(t->ep_idx), free(t->ep_w), free(t->hit), free(t->acc), free(t);
}

static int create(const eg_plugin_env_t *e, void **inst, char *err, size_t len)
{
	tpl_t *t = calloc(1, sizeof(*t));
	size_t slots, K = e->topk;

	*inst = NULL;
	if (!t)
		return EG_PLUGIN_EFAIL;
	t->env = *e;
	int capture;

	if (options(&e->opts, &t->layout, &t->content_keys, &capture, err, len))
		return destroy(t), EG_PLUGIN_EFAIL;
	/* groups and rows per group, as the layout defines them */
	t->G = t->layout == EG_PLUGIN_LAYOUT_FLAT	  ? 1
	       : t->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR ? e->world
							  : e->local_experts;
	t->S = t->layout == EG_PLUGIN_LAYOUT_FLAT ? (uint32_t)e->total_tokens
	       : t->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR
		   ? e->max_tokens
		   : e->world * e->max_tokens;
	t->xb = e->hidden * (e->dtype == EG_PLUGIN_DTYPE_FP32	? 4
			     : e->dtype == EG_PLUGIN_DTYPE_BF16 ? 2
								: 1);
	t->sb = e->dtype == EG_PLUGIN_DTYPE_FP8 ? e->hidden / 128 * 4 : 0;
	t->cb = e->hidden * (e->combine_dtype == EG_PLUGIN_DTYPE_FP32 ? 4 : 2);
	slots = (size_t)t->G * t->S + 1;
	/* dispatch: tokens, epoch, a stale flag, then max_tokens rows of
	 * x | scales | ids | w */
	t->ib = (t->xb + t->sb + 3) & ~(size_t)3; /* int32 ids aligned */
	t->inb = BLOB_HDR + e->max_tokens * (t->ib + 8 * K);
	/* combine: counters, then per slot source rank, token, output;
	 * 4-aligned, so each rank's counters in t->all are (int32 loads),
	 * the pad zeroed once (calloc) as it is sent */
	t->outb = (4 * t->G + slots * (8 + t->cb) + 3) & ~(size_t)3;
	t->blob = calloc(1, t->inb > t->outb ? t->inb : t->outb);
	t->all = malloc(e->world * (t->inb > t->outb ? t->inb : t->outb));
	t->count = calloc(t->G, 4);
	t->ecount = calloc(e->local_experts + 1, 4);
	t->src = malloc(slots * 4), t->tok = malloc(slots * 4);
	t->idx = malloc(slots * K * 4), t->w = malloc(slots * K * 4);
	t->x = malloc(slots * t->xb), t->scales = malloc(slots * t->sb + 4);
	t->acc = malloc((e->tokens * (size_t)e->hidden + 1) * 4);
	t->ep_idx = malloc((e->tokens * K + 1) * 4);
	t->ep_w = malloc((e->tokens * K + 1) * 4);
	t->hit = malloc(e->tokens + 1);
	if (t->blob && t->all && t->count && t->ecount && t->src && t->tok &&
	    t->idx && t->w && t->x && t->scales && t->acc && t->ep_idx &&
	    t->ep_w && t->hit) {
		*inst = t;
		return EG_PLUGIN_OK;
	}
	snprintf(err, len, "out of memory");
	destroy(t);
	return EG_PLUGIN_EFAIL;
}

/* Rank s's input row of token i: x | scales | K ids | K weights (the
 * ids at ib, 4-aligned: int32 loads). */
static const uint8_t *row(const tpl_t *t, uint32_t s, uint32_t i)
{
	return t->all + s * t->inb + BLOB_HDR +
	       i * (t->ib + 8 * (size_t)t->env.topk);
}

/* This rank's routing against its epoch's (a new epoch keeps it): 1 if
 * it changed without a new epoch. */
static uint32_t stale(tpl_t *t, const eg_plugin_input_t *in)
{
	size_t nk = (size_t)in->tokens * t->env.topk;

	if (in->routing_epoch != t->epoch) {
		t->epoch = in->routing_epoch;
		t->ep_tokens = in->tokens;
		memcpy(t->ep_idx, in->topk_idx, nk * 4);
		memcpy(t->ep_w, in->topk_w, nk * 4);
		return 0;
	}
	return in->tokens != t->ep_tokens ||
	       memcmp(t->ep_idx, in->topk_idx, nk * 4) ||
	       memcmp(t->ep_w, in->topk_w, nk * 4);
}

/* After the allgather: every rank at one epoch, none of them stale; the
 * same verdict on every rank (a handle update is collective). */
static int epochs_agree(tpl_t *t)
{
	uint32_t e0, e, st;

	memcpy(&e0, t->all + 4, 4);
	for (uint32_t s = 0; s < t->env.world; s++) {
		memcpy(&e, t->all + s * t->inb + 4, 4);
		memcpy(&st, t->all + s * t->inb + 8, 4);
		if (e != e0) {
			snprintf(t->err, sizeof(t->err),
				 "ranks disagree about routing_epoch: rank 0 "
				 "has %u, rank %u has %u (docs/plugins.md: "
				 "every rank sees a new epoch together)",
				 e0, s, e);
			return EG_PLUGIN_EFAIL;
		}
		if (st) {
			snprintf(t->err, sizeof(t->err),
				 "rank %u: the routing changed within "
				 "routing_epoch %u (docs/plugins.md: it "
				 "changes only with a new epoch)",
				 s, e);
			return EG_PLUGIN_EFAIL;
		}
	}
	return EG_PLUGIN_OK;
}

/* Slot k's expert is also an earlier slot's. */
static int chosen_before(const int32_t *id, uint32_t k)
{
	for (uint32_t j = 0; j < k; j++)
		if (id[j] == id[k])
			return 1;
	return 0;
}

/* Token i of rank s into group g (its local top-k slots for row layouts;
 * a copy for expert-major ones). */
static void keep(tpl_t *t, uint32_t g, uint32_t s, uint32_t i)
{
	uint32_t K = t->env.topk, L = t->env.local_experts, me = t->env.rank;
	size_t n = (size_t)g * t->S + (size_t)t->count[g]++;
	const uint8_t *r = row(t, s, i);
	const int32_t *id = (const int32_t *)(r + t->ib);
	const float *w = (const float *)(id + K);

	FAULT_SLOT(t, n);
	memcpy(t->x + n * t->xb, r, t->xb);
	memcpy((uint8_t *)t->scales + n * t->sb, r + t->xb, t->sb);
	t->src[n] = (int32_t)s;
	t->tok[n] = (int32_t)i;
	for (uint32_t k = 0; k < K; k++) {
		int here = id[k] >= 0 && (uint32_t)id[k] / L == me;
		t->idx[n * K + k] = here ? id[k] - (int32_t)(me * L) : -1;
		t->w[n * K + k] = here ? w[k] : 0.0f;
	}
	FAULT_KEEP(t, s, i, n);
	/* expert_count: every slot, so a row naming an expert twice counts
	 * 2 (docs/semantics.md) */
	for (uint32_t k = 0;
	     t->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR && k < K; k++) {
		if (t->idx[n * K + k] < 0)
			continue;
		if (!FAULT_UNCOUNTED(t, n, k))
			t->ecount[t->idx[n * K + k]]++;
	}
	t->prev_s = (int32_t)s;
	t->prev_i = (int32_t)i;
}

/* What dispatch received, as the native layout's arrays. */
static int received(tpl_t *t, eg_plugin_recv_t *out)
{
	out->stride = t->S;
	out->count = t->count;
	out->x = t->x;
	out->scales = t->sb ? t->scales : NULL;
	if (!t->content_keys) {
		/* rank-major rows need no source rank: it is their group */
		out->src_rank = t->G == t->env.world &&
					t->layout == EG_PLUGIN_LAYOUT_RANK_MAJOR
				    ? NULL
				    : t->src;
		out->src_token = t->tok;
	}
	if (t->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR) {
		out->topk_idx = t->idx;
		out->topk_w = t->w;
		out->expert_count = t->ecount;
	}
	FAULT_RECV(t, out);
	return EG_PLUGIN_OK;
}

static int dispatch(void *inst, const eg_plugin_input_t *in,
		    eg_plugin_recv_t *out)
{
	tpl_t *t = inst;
	uint32_t K = t->env.topk, L = t->env.local_experts, me = t->env.rank;

	uint32_t epoch = TPL_EPOCH(t, in), old = stale(t, in);

	FAULT_DISPATCH(t);
	FAULT_DISPATCH_AGAIN(t, in, out);
	/* everyone's input to everyone */
	memcpy(t->blob, &in->tokens, 4);
	memcpy(t->blob + 4, &epoch, 4);
	memcpy(t->blob + 8, &old, 4);
	for (uint32_t i = 0; i < in->tokens; i++) {
		uint8_t *r = t->blob + BLOB_HDR + i * (t->ib + 8 * (size_t)K);
		memcpy(r, (const uint8_t *)in->x + i * t->xb, t->xb);
		if (t->sb)
			memcpy(r + t->xb,
			       (const uint8_t *)in->scales + i * t->sb, t->sb);
		memcpy(r + t->ib, (const int32_t *)in->topk_idx + i * K, 4 * K);
		memcpy(r + t->ib + 4 * K, in->topk_w + i * K, 4 * K);
		FAULT_ROW(t, in, i, r);
	}
	TPL_MARK(t, 0);
	if (t->env.boot->allgather(t->env.boot->ctx, t->blob, t->inb, t->all)) {
		snprintf(t->err, sizeof(t->err), "allgather: %s",
			 t->env.boot->error(t->env.boot->ctx));
		return EG_PLUGIN_EFAIL;
	}
	TPL_MARK(t, 1);
	if (epochs_agree(t))
		return EG_PLUGIN_EFAIL;
	FAULT_GATHERED(t);
	/* keep what is routed here */
	memset(t->count, 0, t->G * 4);
	memset(t->ecount, 0, L * 4);
	t->prev_s = -1;
	for (uint32_t s = 0; s < t->env.world; s++) {
		uint32_t n;
		memcpy(&n, t->all + s * t->inb, 4);
		for (uint32_t i = 0; i < n; i++) {
			const int32_t *id =
			    (const int32_t *)(row(t, s, i) + t->ib);
			int on = 0;
			for (uint32_t k = 0; k < K; k++) {
				if (id[k] < 0 || (uint32_t)id[k] / L != me)
					continue;
				/* one copy per expert, however many of
				 * the token's slots chose it */
				if (t->layout ==
					EG_PLUGIN_LAYOUT_EXPERT_MAJOR &&
				    !chosen_before(id, k))
					keep(t, (uint32_t)id[k] - me * L, s, i);
				on = 1;
			}
			if (on && t->layout != EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
				keep(t, t->G == 1 ? 0 : s, s, i);
		}
	}
	return received(t, out);
}

/* Element i of an expert output or combine result (bf16 or fp32). */
static float load(const tpl_t *t, const void *p, size_t i)
{
	uint32_t u;
	float f;

	if (t->env.combine_dtype == EG_PLUGIN_DTYPE_FP32)
		return ((const float *)p)[i];
	u = (uint32_t)((const uint16_t *)p)[i] << 16;
	memcpy(&f, &u, 4);
	return f;
}

static void store(const tpl_t *t, void *p, size_t i, float f)
{
	uint32_t u;

	if (t->env.combine_dtype == EG_PLUGIN_DTYPE_FP32) {
		((float *)p)[i] = f;
		return;
	}
	memcpy(&u, &f, 4);
	u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
	((uint16_t *)p)[i] = (uint16_t)(u >> 16);
}

/* Expert-major: the weight applied to the copy of token i in expert e,
 * the sum of the weights of every slot of i that chose e. */
static float copy_weight(const tpl_t *t, const eg_plugin_input_t *in, int32_t i,
			 uint32_t e)
{
	const int32_t *id = (const int32_t *)in->topk_idx + i * t->env.topk;
	const float *w = in->topk_w + i * t->env.topk;
	float sum = 0.0f;

	for (uint32_t k = 0; k < t->env.topk; k++)
		if (id[k] == (int32_t)e)
			sum += w[k];
	return sum;
}

static int combine(void *inst, const eg_plugin_input_t *in, const void *y,
		   void *out)
{
	tpl_t *t = inst;
	uint32_t H = t->env.hidden, L = t->env.local_experts;
	size_t slots = (size_t)t->G * t->S;

	FAULT_COMBINE_AGAIN(t, in, y);
	/* everyone's rows, with their keys, to everyone */
	memcpy(t->blob, t->count, 4 * t->G);
	memcpy(t->blob + 4 * t->G, t->src, 4 * slots);
	memcpy(t->blob + 4 * t->G + 4 * slots, t->tok, 4 * slots);
	memcpy(t->blob + 4 * t->G + 8 * slots, y, slots * t->cb);
	TPL_MARK(t, 0);
	if (t->env.boot->allgather(t->env.boot->ctx, t->blob, t->outb,
				   t->all)) {
		snprintf(t->err, sizeof(t->err), "allgather: %s",
			 t->env.boot->error(t->env.boot->ctx));
		return EG_PLUGIN_EFAIL;
	}
	TPL_MARK(t, 1);
	TPL_INTERMITTENT(t, in);
	memset(t->acc, 0, in->tokens * (size_t)H * 4);
	memset(t->hit, 0, in->tokens);
	for (uint32_t d = 0; d < t->env.world; d++) { /* ascending */
		const uint8_t *b = t->all + d * t->outb;
		const int32_t *cnt = (const int32_t *)b;
		const int32_t *src = cnt + t->G, *tok = src + slots;
		const uint8_t *yd = b + 4 * t->G + 8 * slots;
		for (uint32_t g = 0; g < t->G; g++)
			for (int32_t c = 0; c < cnt[g]; c++) {
				size_t n = (size_t)g * t->S + (size_t)c;
				float w = 1.0f;
				if (src[n] != (int32_t)t->env.rank)
					continue;
				if (t->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
					w = copy_weight(t, in, tok[n],
							d * L + g);
				t->hit[tok[n]] = 1;
				for (uint32_t h = 0; h < H; h++)
					t->acc[(size_t)tok[n] * H + h] +=
					    w * load(t, yd + n * t->cb, h);
			}
		FAULT_AFTER_RANK(t, in, d);
	}
	for (size_t i = 0; i < in->tokens * (size_t)H; i++)
		if (!FAULT_UNSTORED(t, in, i))
			store(t, out, i, t->acc[i]);
	FAULT_COMBINE(t, in, out);
	return EG_PLUGIN_OK;
}

static const char *error(void *inst)
{
	return ((tpl_t *)inst)->err;
}

#ifndef TPL_WRAPPED /* cuda.c wraps this engine in a table of its own */

static const eg_plugin_t tpl_plugin = {
    .size = TPL_SIZE,
    .abi_version = TPL_ABI,
    .name = "template",
    .version = "1.0",
    .query = query,
    .create = create,
    .dispatch = dispatch,
    .combine = combine,
    .destroy = destroy,
    .error = error,
};

const eg_plugin_t *TPL_ENTRY(uint32_t host_abi)
{
	(void)host_abi;
	return &tpl_plugin;
}
#endif
